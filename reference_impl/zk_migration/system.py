"""KIP-866 at the system level: ZooKeeper, ZK brokers and a KRaft quorum migrating with faults.

The model, and why it is shaped so:

* ZooKeeper holds ``/controller`` (a ZK broker, or a KRaft voter with its Raft epoch), ``/controller_epoch``
  with its znode version, ``/migration`` with its version and the cluster metadata as a sequence of record
  ids. A ZK-mode controller's writes are conditional on ``/controller_epoch``'s version; a KRaft
  controller's on both versions, the ``/controller_epoch`` one its claim got and the ``/migration`` one it
  last wrote (``KafkaZkClient.retryMigrationRequestsUntilConnected``).
* Metadata records are ids 0, 1, 2...: id 0 exists before the migration; each metadata change, in ZK
  mode or in KRaft, creates the next id (``max_updates`` bounds them). The KRaft log holds the ids it
  committed, so "ZooKeeper's copy is a prefix of the KRaft log" is a plain sequence comparison.
* Each voter runs its own ``KRaftMigrationDriver`` state: a driver learns that it lost leadership only
  by a separate step, which is the window in which a stale controller tries to write to ZooKeeper.
* Faults are actions (voter crash and recovery, ZooKeeper outage, a misconfigured voter, an
  incompatible broker, an unclean quorum shutdown during rollback), each switched on in the config.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from reference_impl.zk_migration.api import (
    ActivationError,
    MigrationDriverState,
    OffsetAndEpoch,
    ZkBrokerRegistration,
    ZkMigrationState,
    activate,
    become_zk_controller_event,
    bootstrap_migration_state,
    claim_controller_epoch,
    is_valid_state_change,
    kraft_leader_event,
    migrate_metadata_event,
    reason_all_controllers_zk_migration_not_ready,
    reason_all_controllers_zk_migration_not_ready_from_api_versions,
    reason_zk_brokers_not_ready_for_migration,
    send_rpcs_to_brokers_event,
    sync_kraft_metadata_event,
    wait_for_controller_quorum_event,
    wait_for_zk_brokers_event,
    zk_broker_registration_error,
)
from reference_impl.zk_migration.config import KRAFT_ID, ZkMigrationConfig
from reference_impl.zk_migration.state import BrokerMode, Shutdown, Voter, ZkBroker, ZkMigrationSystemState, ZooKeeper
from reference_impl.zk_migration.symmetry import symmetry_key
from rollcheck.core.registry import registered_properties
from rollcheck.core.system import DataclassSystem, fast_replace, shared_label
from rollcheck.core.transition import Action, AnyProperty

D = MigrationDriverState
# The offsets the sync and RPC events compare: the system keeps no offsets, and its leader's image always
# holds what /migration records (see driver_steps), so both sides are one value.
_IMAGE = OffsetAndEpoch(0, 0)
T = TypeVar("T")


class ZkMigrationSystem(DataclassSystem):
    name = "zk_migration"
    state_type = ZkMigrationSystemState

    def __init__(self, config: ZkMigrationConfig) -> None:
        config.validate()
        super().__init__(config)
        self.muts = config.mutations
        # Memos of the API-level decisions, pure functions of a few fields (the config's part is fixed):
        # (broker, ibp, leader's migration flag) -> accepted; (state, migration, all_off, txn) -> Activation;
        # the voters' registered ZkMigrationReady flags -> the quorum ready (kafka).
        self._registration_ok: dict[tuple[int, int, bool], bool] = {}
        self._activation: dict[tuple[ZkMigrationState, bool, bool, bool], Any] = {}
        self._quorum_ok: dict[tuple[bool, ...], bool] = {}
        self._quorum_ok_35: dict[tuple[int, tuple[bool | None, ...]], bool] = {}  # kafka_release "3.5"
        self._brokers_ok: dict[tuple[tuple[bool, bool], ...], bool] = {}

    def __getstate__(self) -> dict[str, object]:
        d = super().__getstate__()
        d["_registration_ok"] = {}  # memos: rebuilt wherever the system is unpickled
        d["_activation"] = {}
        d["_quorum_ok"] = {}
        d["_quorum_ok_35"] = {}
        d["_brokers_ok"] = {}
        return d

    # ------------------------------------------------------------------ interface
    def initial_states(self) -> Iterable[ZkMigrationSystemState]:
        """A ZK cluster (broker 0 its controller) holding record 0, beside a new KRaft quorum started with
        migration enabled: its first leader bootstrapped the empty log into PRE_MIGRATION."""
        c = self.config
        try:
            state = bootstrap_migration_state(c.quorum_level, True, c.profile)
        except ActivationError as exc:
            raise ValueError(str(exc)) from None
        zk = ZooKeeper(True, 0, -1, c.zk_epoch, 0, -1, False, (0,), c.zk_epoch)
        brokers = tuple(ZkBroker(BrokerMode.ZK, False, c.broker_ibp, False, False, False) for _ in range(c.zk_brokers))
        voters = tuple(Voter(True, True, D.INACTIVE, -1, -1, -1, 0) for _ in range(c.voters))
        return [ZkMigrationSystemState(zk, brokers, voters, 0, 1, state, (), False, c.zk_epoch, 1, Shutdown.NONE)]

    def properties(self) -> Sequence[AnyProperty]:
        return registered_properties(self)  # the set its ProtocolEntry names (properties=)

    def view(self, s: ZkMigrationSystemState) -> dict[str, object]:
        z = s.zk
        return {
            "zk": {"available": z.available, "controller": z.controller, "kraft_epoch": z.kraft_epoch,
                   "controller_epoch": z.controller_epoch, "epoch_version": z.epoch_version,
                   "migration_version": z.migration_version, "migrated": z.migrated, "data": z.data,
                   "epoch_high": z.epoch_high},
            "brokers": tuple({"mode": b.mode.name, "migration": b.migration, "ibp": b.ibp,
                              "registered": b.registered, "kraft_rpcs": b.kraft_rpcs, "ibp_fault": b.ibp_fault}
                             for b in s.brokers),
            "voters": tuple({"running": v.running, "migration": v.migration, "driver": v.driver.name,
                             "zk_version": v.zk_version, "zk_epoch": v.zk_epoch, "epoch_version": v.epoch_version,
                             "synced": v.synced}
                            for v in s.voters),
            "leader": s.leader, "raft_epoch": s.raft_epoch, "migration": s.migration.name, "log": s.log,
            "txn": s.txn, "zk_controller_epoch": s.zk_controller_epoch, "next_id": s.next_id,
            "shutdown": s.shutdown.name,
        }

    def successors(self, s: ZkMigrationSystemState) -> list[tuple[Action, ZkMigrationSystemState]]:
        c = self.config
        out: list[tuple[Action, ZkMigrationSystemState]] = []
        quorum_up = s.shutdown is Shutdown.NONE
        # ---- ZooKeeper mode
        if s.zk.available and s.zk.controller == -1:
            for b, br in enumerate(s.brokers):
                if br.mode is BrokerMode.ZK:
                    out.append((_label("ElectZkController", broker=b), self.elect_zk_controller(s, b)))
        if self._zk_controller_can_write(s):
            out.append((_label("ZkMetadataChange"), self.zk_metadata_change(s)))
        # ---- brokers
        pre = s.migration in (ZkMigrationState.PRE_MIGRATION, ZkMigrationState.MIGRATION)
        for b, br in enumerate(s.brokers):
            # The operator's restart with the migration config at the configured IBP: also how a broker that
            # was restarted at a wrong IBP (IncompatibleBrokerJoins) is put right; without it that broker,
            # refused for ever, would hold the migration back for ever (KIP-866: it is only isolated).
            if br.mode is BrokerMode.ZK and (not br.migration or br.ibp != c.broker_ibp) and pre and quorum_up:
                out.append((_label("EnableMigrationOnBroker", broker=b),
                            self.restart_zk_broker(s, b, True, c.broker_ibp)))
            if c.incompatible_broker and br.mode is BrokerMode.ZK and not br.ibp_fault and pre and quorum_up:
                out.append((_label("IncompatibleBrokerJoins", broker=b),
                            self.restart_zk_broker(s, b, True, c.broker_ibp - 1)))
            if (br.mode is BrokerMode.ZK and br.migration and not br.registered and self._leader_ok(s)
                    and self._registration_accepted(b, br.ibp, s.voters[s.leader].migration)):
                out.append((_label("RegisterZkBroker", broker=b), self._put_broker(s, b, registered=True)))
            if s.migration is ZkMigrationState.MIGRATION and br.mode is BrokerMode.ZK and br.registered \
                    and quorum_up:
                out.append((_label("RestartBrokerAsKRaft", broker=b),
                            self._put_broker(s, b, mode=BrokerMode.KRAFT, kraft_rpcs=False)))
            if c.rollback and br.mode is BrokerMode.KRAFT and s.migration is ZkMigrationState.MIGRATION:
                out.append((_label("RollbackBrokerToZk", broker=b), self._put_broker(s, b, mode=BrokerMode.ZK)))
        # ---- the KRaft quorum
        if quorum_up:
            self._quorum_successors(s, out)
        # ---- ZooKeeper faults
        if c.zk_outage:
            out.append((_label("ZkUnavailable" if s.zk.available else "ZkAvailable"),
                        _with(s, zk=_with(s.zk, available=not s.zk.available))))
        # ---- rollback to ZooKeeper
        if c.rollback:
            self._rollback_successors(s, out)
        return out

    def _registration_accepted(self, b: int, ibp: int, migration_enabled: bool) -> bool:
        key = (b, ibp, migration_enabled)
        hit = self._registration_ok.get(key)
        if hit is None:
            c = self.config
            hit = self._registration_ok[key] = zk_broker_registration_error(
                ZkBrokerRegistration(b, ibp, True), c.quorum_level, migration_enabled, profile=c.profile) is None
        return hit

    # ------------------------------------------------------------------ ZooKeeper mode
    def _zk_controller_can_write(self, s: ZkMigrationSystemState) -> bool:
        z = s.zk
        if not (z.available and 0 <= z.controller < KRAFT_ID and s.next_id <= self.config.max_updates):
            return False
        # A ZK controller's writes are multi-ops conditional on /controller_epoch's version: once KRaft (or
        # a newer ZK controller) rewrote it, they fail. Here: its epoch must still be the current one.
        return s.zk_controller_epoch == z.controller_epoch and s.brokers[z.controller].mode is BrokerMode.ZK

    def elect_zk_controller(self, s: ZkMigrationSystemState, b: int) -> ZkMigrationSystemState:
        z = s.zk
        # KafkaController: a missing /controller_epoch is created at 0 and then incremented.
        epoch = (z.controller_epoch if z.controller_epoch >= 0 else 0) + 1
        zk = _with(z, controller=b, kraft_epoch=-1, controller_epoch=epoch, epoch_version=z.epoch_version + 1,
                     epoch_high=max(z.epoch_high, epoch))
        return _with(s, zk=zk, zk_controller_epoch=epoch)

    def zk_metadata_change(self, s: ZkMigrationSystemState) -> ZkMigrationSystemState:
        return _with(s, zk=_with(s.zk, data=(*s.zk.data, s.next_id)), next_id=s.next_id + 1)

    def restart_zk_broker(self, s: ZkMigrationSystemState, b: int, migration: bool, ibp: int
                          ) -> ZkMigrationSystemState:
        """A rolling restart of a ZK broker with new configs: it registers with the quorum again, and if it
        was the ZK controller its ephemeral /controller goes away.

        kip: the registration is the live broker's (KIP-866 triggers 1-4 judge the brokers as they run), so
        the restarted broker is unregistered until it registers with its new configs. kafka: the registration
        is a RegisterBrokerRecord in the metadata image, which a restart does not remove (only an
        UnregisterBrokerRecord does); the old incarnation is fenced, and the record is replaced only when the
        broker registers again (ClusterControlManager.registerBroker / replay(RegisterBrokerRecord), branch 3.9
        at c821449fb7c1e2c0f398eeb5cfc4a8abc210c0a4). A registration is accepted only at the quorum's
        metadata.version with the migration config, so ``registered`` stands for that record; a broker
        restarted at another IBP is refused (UNSUPPORTED_VERSION, BrokerLifecycleManager retries) and keeps
        its old record. The restart itself is one step: no state has the broker down."""
        z = s.zk
        if z.controller == b:
            z = _with(z, controller=-1)
        registered = self.config.profile == "kafka" and s.brokers[b].registered
        br = _with(s.brokers[b], migration=migration, ibp=ibp, registered=registered, kraft_rpcs=False,
                   ibp_fault=s.brokers[b].ibp_fault or ibp != self.config.broker_ibp)
        return _with(s, zk=z, brokers=_put(s.brokers, b, br))

    # ------------------------------------------------------------------ the KRaft quorum
    def _leader_ok(self, s: ZkMigrationSystemState) -> bool:
        return s.shutdown is Shutdown.NONE and s.leader >= 0 and s.voters[s.leader].running

    def _quorum_successors(self, s: ZkMigrationSystemState, out: list[tuple[Action, ZkMigrationSystemState]]
                           ) -> None:
        c = self.config
        running = sum(1 for v in s.voters if v.running)
        if s.leader < 0 and running * 2 > len(s.voters):
            for v, voter in enumerate(s.voters):
                if voter.running:
                    # Electing a voter that will resign (misconfigured) is a fault: bounded by the epoch.
                    nxt = self.elect_leader(s, v)
                    if nxt.leader >= 0 or s.raft_epoch < c.max_epoch:
                        out.append((_label("ElectLeader", voter=v), nxt))
        faults_left = s.raft_epoch < c.max_epoch
        if c.failover and faults_left:
            down = sum(1 for v in s.voters if not v.running)
            for v, voter in enumerate(s.voters):
                if voter.running and down < c.max_voters_down:
                    out.append((_label("CrashVoter", voter=v), self.crash_voter(s, v)))
            if s.leader >= 0:
                # Raft moves leadership while the old leader keeps running (a partition, a slow fetch): its
                # driver learns of it only later, the window in which a stale controller may write.
                for v, voter in enumerate(s.voters):
                    if voter.running and v != s.leader:
                        out.append((_label("LeaderFailover", voter=v), self.elect_leader(s, v)))
        for v, voter in enumerate(s.voters):
            if not voter.running:
                out.append((_label("RecoverVoter", voter=v), self.restart_voter(s, v, voter.migration)))
        # Restarts that change the migration config: finalization (every broker in KRaft mode), a misconfigured
        # voter mid-migration or before the copy, migration turned back on after it finished. Finalizing rolls
        # the controllers (Kafka 3.9 docs/ops.html#kraft_zk_migration): the first one active without the config
        # writes POST_MIGRATION (ActivationRecordsGenerator), and Kafka ignores the rest's ("Ignoring ...").
        all_kraft = all(b.mode is BrokerMode.KRAFT for b in s.brokers)
        for v, voter in enumerate(s.voters):
            if not voter.running:
                continue
            if voter.migration and ((s.migration is ZkMigrationState.MIGRATION and (
                    (c.finalize and all_kraft) or (c.misconfigured_controller and faults_left)))
                    or (s.migration is ZkMigrationState.PRE_MIGRATION and c.misconfigured_before_migration
                        and faults_left)
                    or (s.migration is ZkMigrationState.POST_MIGRATION and c.finalize)):
                out.append((_label("RestartVoter", voter=v, migration=False), self.restart_voter(s, v, False)))
            if not voter.migration and s.migration is ZkMigrationState.POST_MIGRATION and c.misconfigured_controller \
                    and faults_left:
                out.append((_label("RestartVoter", voter=v, migration=True), self.restart_voter(s, v, True)))
        for v, voter in enumerate(s.voters):
            if voter.running and voter.migration:
                for label, nxt in self.driver_steps(s, v):
                    out.append((_label(label, voter=v), nxt))
        if self._leader_ok(s) and s.next_id <= c.max_updates and self._serves_metadata(s):
            out.append((_label("KRaftMetadataChange"),
                        _with(s, log=(*s.log, s.next_id), next_id=s.next_id + 1)))

    def _serves_metadata(self, s: ZkMigrationSystemState) -> bool:
        # KIP-866 "KRaft controller soft start": before the copy only Raft, BrokerRegistration and
        # BrokerHeartbeat are served; the rest gets NOT_CONTROLLER (Kafka: RUNS_IN_PREMIGRATION).
        if s.migration is ZkMigrationState.PRE_MIGRATION:
            return "serve_before_copy" in self.muts
        if s.migration is ZkMigrationState.MIGRATION and self.config.profile == "kip":
            # KIP-866 "ZooKeeper unavailable" / write-behind limit: metadata updates stop while ZooKeeper is
            # unavailable or lags by the limit. Kafka 3.9 has neither (no such check or config).
            # The controller knows the lag only through its driver (ZooKeeperWriteBehindLag).
            driver = s.voters[s.leader]
            synced = driver.synced if driver.driver.allow_dual_write else 0
            return s.zk.available and len(s.log) - synced < self.config.lag_limit
        return True

    def elect_leader(self, s: ZkMigrationSystemState, v: int) -> ZkMigrationSystemState:
        """Raft elects ``v``; it replays the log and activates (ActivationRecordsGenerator / KIP-866 wrong
        settings): an open migration transaction is aborted, a misconfigured controller resigns."""
        voter = s.voters[v]
        all_off = all(not x.migration for x in s.voters)
        if "finalize_without_every_voter" in self.muts:
            all_off = True
        key = (s.migration, voter.migration, all_off, s.txn)
        act = self._activation.get(key)
        if act is None:
            act = self._activation[key] = activate(*key, self.config.profile, self.config.quorum_level)
        # To be elected, v's Raft client left its old state first (candidate, or follower of the epoch
        # between), which fires KRaftLeaderEvent(not leader) before KRaftLeaderEvent(leader): its driver
        # reaches INACTIVE, forgetting what it held of ZooKeeper, before it can act as the new leader
        # (KRaftMigrationDriver.KRaftLeaderEvent; INACTIVE -> WAIT_FOR_CONTROLLER_QUORUM is the only way in).
        # Its stale steps before that are modelled before this election, where they have the same effect.
        fresh = _with(voter, driver=D.INACTIVE, zk_version=-1, zk_epoch=-1, epoch_version=-1, synced=0)
        # A controller that resigns writes nothing, the abort record included (Kafka's generator throws before
        # it is appended, and the fatal fault handler stops the process): the transaction stays open for the
        # next active controller to abort (KIP-866). Reachable under kip only: a voter restarted without the
        # migration config during the copy (misconfigured_before_migration), then elected.
        closed = act.abort_transaction
        nxt = _with(s, voters=_put(s.voters, v, fresh), leader=v, raft_epoch=s.raft_epoch + 1,
                      txn=False if closed else s.txn)
        if act.write is not None:
            nxt = _with(nxt, migration=act.write)
        if act.resign is not None:
            nxt = _with(nxt, leader=-1)
        return nxt

    def crash_voter(self, s: ZkMigrationSystemState, v: int) -> ZkMigrationSystemState:
        voter = _with(s.voters[v], running=False)
        return _with(s, voters=_put(s.voters, v, voter), leader=-1 if s.leader == v else s.leader)

    def restart_voter(self, s: ZkMigrationSystemState, v: int, migration: bool) -> ZkMigrationSystemState:
        # The driver starts UNINITIALIZED and reads /migration (RecoverMigrationStateFromZK) before it goes
        # INACTIVE; nothing it learns there is used before it claims leadership again, so the model starts
        # it INACTIVE.
        voter = Voter(True, migration, D.INACTIVE, -1, -1, -1, 0)
        return _with(s, voters=_put(s.voters, v, voter), leader=-1 if s.leader == v else s.leader)

    # ------------------------------------------------------------------ KRaftMigrationDriver
    def driver_steps(self, s: ZkMigrationSystemState, v: int) -> list[tuple[str, ZkMigrationSystemState]]:
        voter = s.voters[v]
        z = s.zk
        d = voter.driver
        is_leader = s.leader == v
        steps: list[tuple[str, ZkMigrationSystemState]] = []

        def to(new: MigrationDriverState, st: ZkMigrationSystemState | None = None, **changes: object
               ) -> ZkMigrationSystemState:
            assert is_valid_state_change(d, new), (d, new)  # Kafka throws IllegalStateException
            base = st if st is not None else s
            return _with(base, voters=_put(base.voters, v, _with(base.voters[v], driver=new, **changes)))

        # Each driver step's next state is what the API's KRaftMigrationDriver event decides (one copy of the
        # driver's rules: the events reference_impl/zk_migration/api.py transcribes from Kafka, which
        # tests/kafka checks against KRaftMigrationDriverTest); this method decides when an event runs and
        # what else the step changes (ZooKeeper, the log, the brokers).
        if not is_leader:
            if d is not D.INACTIVE:
                # KRaftLeaderEvent: another voter leads; until this step the driver still acts as before.
                # What it held of ZooKeeper is stale from now on; it claims afresh when it leads again.
                steps.append(("DriverDeactivate", to(kraft_leader_event(d, False), zk_version=-1, zk_epoch=-1,
                                                     epoch_version=-1, synced=0)))
            if d.allow_dual_write:
                steps.extend(self._dual_write(s, v))  # a stale driver may still try
            return steps
        if d is D.INACTIVE:
            # KRaftLeaderEvent (active) reads /migration (getOrCreateMigrationRecoveryState, which waits for
            # ZooKeeper): no step while ZooKeeper is away (Kafka's driver replayed, docs/kafka-oracle.md). Before
            # KAFKA-16171 / KAFKA-16667 the driver kept this version past its claim, and until that claim fences
            # the previous controller, the latter's dual writes may still move /migration; with the fix the
            # claim's write supersedes it, so only the mutant records it.
            if z.available and "stale_migration_version" not in self.muts:
                steps.append(("DriverActivate", to(kraft_leader_event(d, True))))
            elif z.available:
                steps.append(("DriverActivate", to(kraft_leader_event(d, True), zk_version=z.migration_version)))
        elif d is D.WAIT_FOR_CONTROLLER_QUORUM:
            # The quorum is asked only before the copy (PRE_MIGRATION), as the event does; a reason is all it
            # needs, so the system's cached verdict stands in for Kafka's log line.
            waiting = (s.migration is ZkMigrationState.PRE_MIGRATION and not self.quorum_ready(s))
            nxt = wait_for_controller_quorum_event(d, s.migration, z.migrated,
                                                   "controller quorum not ready" if waiting else None)
            if nxt is not d:
                steps.append(("DriverWaitForQuorum", to(nxt)))
        elif d is D.WAIT_FOR_BROKERS and z.available:
            # WaitForZkBrokersEvent reads /brokers (zkMigrationClient.readBrokerIds, which waits for ZooKeeper).
            nxt = wait_for_zk_brokers_event(d, None if self.brokers_ready(s) else "ZK brokers not ready")
            if nxt is not d:
                steps.append(("DriverWaitForBrokers", to(nxt)))
        elif d is D.BECOME_CONTROLLER:
            if z.available:
                claimed = self.claim(s, v)
                step = become_zk_controller_event(d, claimed is not None, z.migrated)
                if claimed is not None and step.state is not d:
                    steps.append(("BecomeZkController", to(step.state, claimed)))
        elif d is D.ZK_MIGRATION:
            if not s.txn:
                steps.append(("BeginMigration", self.begin_migration(s)))
            elif z.available and (voter.zk_version == z.migration_version):
                # Commit the transaction with ZkMigrationRecord(MIGRATION), then record on /migration that the
                # copy finished: MigrateMetadataEvent's setMigrationRecoveryState, KafkaZkClient's
                # updateMigrationState, a SetData conditional on /migration's version alone (no
                # /controller_epoch check; only the leader's driver copies, and its claim is the latest).
                zk = _with(z, migrated=True, migration_version=z.migration_version + 1)
                done = _with(s, zk=zk, log=z.data, txn=False, migration=ZkMigrationState.MIGRATION)
                steps.append(("CompleteMigration", to(migrate_metadata_event(d).state, done,
                                                      zk_version=zk.migration_version, synced=len(z.data))))
        elif d is D.SYNC_KRAFT_TO_ZK:
            # The leader's image is its committed log, which holds every record /migration says ZooKeeper has
            # (the copy and every dual write were committed first): the events' "image >= migration" holds.
            synced = sync_kraft_metadata_event(d, _IMAGE, _IMAGE).state
            if synced is d:
                pass
            elif z.available and self._zk_write_ok(voter, z) and "no_sync_after_failover" in self.muts:
                # Before KAFKA-15010 there was no reconciliation: the new controller resumes dual writes
                # after the log's end, as if ZooKeeper held every record the previous one committed.
                steps.append(("SyncKRaftToZk", to(synced, synced=len(s.log))))
            elif z.available and self._zk_write_ok(voter, z):
                # KAFKA-15010: a full KRaft -> ZooKeeper sync after every take-over.
                zk = _with(z, data=s.log, migration_version=z.migration_version + 1)
                steps.append(("SyncKRaftToZk", to(synced, _with(s, zk=zk), zk_version=zk.migration_version,
                                                  synced=len(s.log))))
        elif d is D.KRAFT_CONTROLLER_TO_BROKER_COMM:
            brokers = tuple(_with(b, kraft_rpcs=True) if self._gets_rpcs(b) else b for b in s.brokers)
            sent = send_rpcs_to_brokers_event(d, _IMAGE, _IMAGE).state
            if sent is not d:
                steps.append(("SendRpcsToBrokers", to(sent, _with(s, brokers=brokers))))
            # MigrationDriverState.allowDualWrite: MetadataChangeEvent already writes to ZooKeeper here.
            steps.extend(self._dual_write(s, v))
        elif d is D.DUAL_WRITE:
            steps.extend(self._dual_write(s, v))
        return steps

    def quorum_ready(self, s: ZkMigrationSystemState) -> bool:
        """Trigger 5, as the driver checks it in WAIT_FOR_CONTROLLER_QUORUM before the copy.

        kip: KIP-866 as written, every voter running with ZkMigrationReady.

        kafka: ``QuorumFeatures.reasonAllControllersZkMigrationNotReady`` (KRaftMigrationDriver's
        WaitForControllerQuorumEvent) at the quorum's metadata.version, which never changes in this model
        (the config's ``quorum_level``): nothing is checked below 3.7-IV0; from 3.7-IV0 every voter's
        controller registration must exist and have zkMigrationReady. A voter's registration is what it
        registered at its last start, its ``migration`` flag, and it stays while the voter is down (Kafka
        removes no ControllerRegistrationRecord when a controller stops). Every voter runs in the initial
        state, so each has registered and "No registration found" is unreachable here; a restarted voter's
        new registration is taken as committed at once (Kafka's ControllerRegistrationManager re-registers
        once it has caught up). ``kafka_release`` "3.5" (the oracle's 3.4 - 3.6 rows): QuorumFeatures at 3.5.0,
        every other voter's ApiVersions with ZkMigrationReady at every level; a voter that is down has none."""
        if "no_controller_quorum_check" in self.muts:
            return True  # KAFKA-14909: before 3.5 the driver left PRE_MIGRATION without asking the quorum
        if self.config.profile == "kip":
            return all(x.running and x.migration for x in s.voters)
        if self.config.kafka_release == "3.5":
            # Kafka 3.5 / 3.6: the other voters' ApiVersions, held while they run (connected), at every level.
            view = (s.leader, tuple(x.migration if x.running else None for x in s.voters))
            ok = self._quorum_ok_35.get(view)
            if ok is None:
                ok = self._quorum_ok_35[view] = reason_all_controllers_zk_migration_not_ready_from_api_versions(
                    s.leader, range(len(s.voters)), {v: m for v, m in enumerate(view[1]) if m is not None}) is None
            return ok
        if "registration_without_zk_migration_ready" in self.muts:
            # KAFKA-15704: 3.7's ControllerRegistrationRequest never set ZkMigrationReady, so every
            # registration says false whatever the controller's config.
            key = tuple(False for _ in s.voters)
        else:
            key = tuple(x.migration for x in s.voters)
        hit = self._quorum_ok.get(key)
        if hit is None:
            hit = self._quorum_ok[key] = reason_all_controllers_zk_migration_not_ready(
                self.config.quorum_level, range(len(key)), dict(enumerate(key))) is None
        return hit

    def brokers_ready(self, s: ZkMigrationSystemState) -> bool:
        """Triggers 1-4, as the driver checks them in WAIT_FOR_BROKERS.

        kip: KIP-866 as written, every broker at the migration version, configured, registered, online.

        kafka: ``KRaftMigrationDriver.areZkBrokersReadyForMigration`` (3.9): every broker in ZooKeeper's
        /brokers/ids (and every broker with a replica assigned) has a registration in the metadata image with
        isMigratingZkBroker, fenced or not (``imageDoesNotContainAllBrokers``); the IBP and the migration
        config were checked when the broker registered, not again here. Every broker of the model runs, so
        /brokers/ids lists every ZK broker."""
        zk_brokers = [b for b in s.brokers if b.mode is BrokerMode.ZK]
        if "start_without_all_brokers" in self.muts:
            return any(b.registered for b in zk_brokers)
        if self.config.profile == "kafka":
            # The API's areZkBrokersReadyForMigration decides (one copy of the rule): /brokers/ids lists the
            # ZK-mode brokers, each registered one is in the image as a migrating ZK broker.
            key = tuple((b.mode is BrokerMode.ZK, b.registered) for b in s.brokers)
            hit = self._brokers_ok.get(key)
            if hit is None:
                hit = self._brokers_ok[key] = reason_zk_brokers_not_ready_for_migration(
                    True, {i: True for i, (zk, reg) in enumerate(key) if zk and reg},
                    [i for i, (zk, _) in enumerate(key) if zk]) is None
            return hit
        return bool(zk_brokers) and all(b.migration and b.registered and b.ibp == self.config.quorum_level
                                        for b in zk_brokers)

    def _gets_rpcs(self, b: ZkBroker) -> bool:
        # KIP-866 "Incompatible broker": it is isolated, no UpdateMetadata or LeaderAndIsr is sent to it.
        # kafka: MigrationPropagator.sendRPCsToBrokersFromMetadataImage sends to every registration with
        # isMigratingZkBroker, fenced or not (MigrationControllerChannelContext counts each as live).
        if "rpcs_to_incompatible_broker" in self.muts:
            return b.mode is BrokerMode.ZK
        if self.config.profile == "kafka":
            return b.mode is BrokerMode.ZK and b.registered
        return b.mode is BrokerMode.ZK and b.registered and b.ibp == self.config.quorum_level

    def claim(self, s: ZkMigrationSystemState, v: int) -> ZkMigrationSystemState | None:
        """Take over /controller and /controller_epoch (the driver keeps the new /controller_epoch version:
        ZkMigrationLeadershipState.zkControllerEpochZkVersion, which every later write checks), then write
        /migration unconditionally to learn its latest version (KAFKA-16171 / KAFKA-16667).

        Apache Kafka 3.9 (branch 3.9 at c821449fb7c1e2c0f398eeb5cfc4a8abc210c0a4): ZkMigrationClient's
        claimControllerLeadership keeps the version KafkaZkClient.tryRegisterKRaftControllerAsActiveController
        got from its SetData on /controller_epoch (``state.withZkController(epoch, epochZkVersion)``);
        KRaftMigrationDriver's BecomeZkControllerEvent then calls setMigrationRecoveryState with
        ``withMigrationZkVersion(-1)``, an unconditional SetData on /migration that returns its version."""
        z = s.zk
        # No /controller_epoch: Kafka throws IllegalStateException and the driver retries (unreachable here:
        # only the KIP's rollback deletes it, after the quorum is shut down).
        epoch = claim_controller_epoch(z.controller_epoch if z.controller_epoch >= 0 else None, z.kraft_epoch,
                                       s.raft_epoch)
        if epoch is None:
            return None
        if "kraft_epoch_not_above_zk" in self.muts:
            epoch = s.raft_epoch
        version = z.migration_version + 1
        zk = _with(z, controller=KRAFT_ID + v, kraft_epoch=s.raft_epoch, controller_epoch=epoch,
                     epoch_version=z.epoch_version + 1, migration_version=version,
                     epoch_high=max(z.epoch_high, epoch))
        if "stale_migration_version" in self.muts:
            # Before KAFKA-16171 / KAFKA-16667: /migration is not written (nor re-read linearizably) at the
            # take-over; the driver keeps the version it read when it became active (DriverActivate), which
            # the previous controller may have moved since, until this claim fenced it. Then every write of
            # this driver fails with BADVERSION on /migration, for as long as it leads.
            zk = _with(zk, migration_version=z.migration_version)
            version = s.voters[v].zk_version
        voter = _with(s.voters[v], zk_version=version, zk_epoch=epoch, epoch_version=zk.epoch_version)
        return _with(s, zk=zk, voters=_put(s.voters, v, voter))

    def begin_migration(self, s: ZkMigrationSystemState) -> ZkMigrationSystemState:
        if "non_transactional_copy" in self.muts:
            # Records committed as they are read: a crash now leaves a partial copy in the log.
            return _with(s, log=s.zk.data[:1], txn=True)
        return _with(s, txn=True)

    def _zk_write_ok(self, voter: Voter, z: ZooKeeper) -> bool:
        """A KRaft controller's metadata write to ZooKeeper passes its multi-op's checks.

        Apache Kafka 3.9 (branch 3.9 at c821449fb7c1e2c0f398eeb5cfc4a8abc210c0a4),
        KafkaZkClient.retryMigrationRequestsUntilConnected: every write (create, delete, set data) is wrapped
        in a multi-op with ``CheckOp(ControllerEpochZNode.path, migrationState.zkControllerEpochZkVersion())``
        and, on /migration, ``SetDataOp`` (the batch's last request) or ``CheckOp`` conditional on
        ``migrationState.migrationZkVersion()``; a BADVERSION on /migration throws ("another KRaft controller
        is making writes to ZooKeeper"). The dual writes of ``MetadataChangeEvent`` and the full sync of
        ``SyncKRaftMetadataEvent`` go through it (KRaftMigrationZkWriter). So both versions must still be the
        ones the driver holds: the /controller_epoch version it got at its claim and the /migration version it
        last wrote. ``unconditional_zk_writes`` drops both checks."""
        if "unconditional_zk_writes" in self.muts:
            return True
        return voter.epoch_version == z.epoch_version and voter.zk_version == z.migration_version

    def _dual_write(self, s: ZkMigrationSystemState, v: int) -> list[tuple[str, ZkMigrationSystemState]]:
        """Write the next committed record to ZooKeeper in a multi-op conditional on /controller_epoch's and
        /migration's versions."""
        voter = s.voters[v]
        z = s.zk
        if voter.synced >= len(s.log):
            return []
        if not z.available:
            if "dual_write_ignores_zk_failure" in self.muts:
                skipped = _with(voter, synced=voter.synced + 1)
                return [("DualWrite", _with(s, voters=_put(s.voters, v, skipped)))]
            return []
        if not self._zk_write_ok(voter, z):
            return []  # BADVERSION: another controller claimed or wrote since; this driver's writes are fenced
        zk = _with(z, data=(*z.data, s.log[voter.synced]), migration_version=z.migration_version + 1)
        nv = _with(voter, synced=voter.synced + 1, zk_version=zk.migration_version)
        return [("DualWrite", _with(s, zk=zk, voters=_put(s.voters, v, nv)))]

    # ------------------------------------------------------------------ rollback
    def _rollback_successors(self, s: ZkMigrationSystemState, out: list[tuple[Action, ZkMigrationSystemState]]
                             ) -> None:
        c = self.config
        in_progress = s.migration in (ZkMigrationState.PRE_MIGRATION, ZkMigrationState.MIGRATION)
        if s.shutdown is Shutdown.NONE and in_progress and all(b.mode is BrokerMode.ZK for b in s.brokers):
            # The operator can see only ZooKeeperWriteBehindLag, which the active driver reports.
            drained = not s.log or (self._leader_ok(s) and s.voters[s.leader].driver.allow_dual_write
                                    and s.voters[s.leader].synced == len(s.log))
            down = tuple(_with(v, running=False) for v in s.voters)
            if drained:
                # The operator waits for ZooKeeperWriteBehindLag = 0 and shuts the quorum down cleanly.
                out.append((_label("ShutdownQuorum", clean=True),
                            _with(s, voters=down, leader=-1, shutdown=Shutdown.CLEAN)))
            elif c.unclean_shutdown:
                out.append((_label("ShutdownQuorum", clean=False),
                            _with(s, voters=down, leader=-1, shutdown=Shutdown.UNCLEAN)))
        if s.shutdown is not Shutdown.NONE and s.zk.available and s.zk.controller >= KRAFT_ID:
            z = s.zk
            if c.profile == "kip":
                # KIP-866 "Rollback to ZK": remove /controller and /controller_epoch.
                z = _with(z, controller=-1, kraft_epoch=-1, controller_epoch=-1, epoch_version=-1)
            else:
                # Kafka 3.9 docs ("Reverting to ZooKeeper mode"): remove /controller and /migration; the
                # epoch node stays, so the next ZK controller's epoch continues from it.
                z = _with(z, controller=-1, kraft_epoch=-1, migration_version=-1, migrated=False)
            out.append((_label("DeleteControllerZNodes"), _with(s, zk=z)))

    # ------------------------------------------------------------------ helpers
    def _put_broker(self, s: ZkMigrationSystemState, b: int, **changes: object) -> ZkMigrationSystemState:
        return _with(s, brokers=_put(s.brokers, b, _with(s.brokers[b], **changes)))

    # ------------------------------------------------------------------ symmetry (issue #17)
    def symmetry_key(self, s: ZkMigrationSystemState) -> object:
        """A hashable key equal for two states iff one is the other with interchangeable voters and ZK brokers
        renamed (the canonical representative of the orbit); see :mod:`reference_impl.zk_migration.symmetry`."""
        return self.cached_symmetry_key(symmetry_key, s)


_label = shared_label
_with = fast_replace


def _put(items: tuple[T, ...], i: int, item: T) -> tuple[T, ...]:
    return (*items[:i], item, *items[i + 1:])
