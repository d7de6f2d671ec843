"""Properties of the ``zk_migration`` protocol (KIP-866), ids ``MIG-01``...

Each predicate restates the KIP sentence it cites over the state; none calls the model's decision code.
"""

from __future__ import annotations

from typing import Any

from reference_impl.zk_migration.config import ZkMigrationConfig
from rollcheck.transition import Action, AnyProperty, GraphProperty, Invariant, StepProperty

KIP = "KIP-866"
KRAFT_ID = 100
ZK_WRITERS = ("ZkMetadataChange", "SyncKRaftToZk", "DualWrite")


def zk_migration_properties(config: ZkMigrationConfig, *, kip_claims: bool = False) -> list[AnyProperty]:
    """The properties for a config. ``kip_claims`` adds, under any profile, the KIP's claims that Kafka
    does not make (the write-behind limit; monotonic epochs across the rollback), to show the findings."""
    quorum_level = config.quorum_level
    check_lag = config.profile == "kip" or kip_claims

    def migrating(s: Any) -> bool:
        return s.migration.name == "MIGRATION" and s.shutdown.name == "NONE"

    # ---- step properties
    def claim_above_zk(s: Any, a: Action, t: Any) -> bool:
        if a.name != "BecomeZkController":
            return True
        return bool(t.zk.controller_epoch > s.zk.epoch_high)

    def epochs_monotonic_everywhere(s: Any, a: Action, t: Any) -> bool:
        if t.zk.controller_epoch == s.zk.controller_epoch or t.zk.controller_epoch < 0:
            return True
        return bool(t.zk.controller_epoch > s.zk.epoch_high)

    def one_writer(s: Any, a: Action, t: Any) -> bool:
        if t.zk.data == s.zk.data:
            return True
        if a.name == "ZkMetadataChange":
            writer = s.zk_controller_epoch
        elif a.name in ZK_WRITERS:
            writer = s.voters[a["voter"]].zk_epoch
        else:
            return True
        return bool(writer == s.zk.controller_epoch)

    def copy_is_whole(s: Any, a: Action, t: Any) -> bool:
        if a.name != "CompleteMigration":
            return True
        return bool(t.log == s.zk.data)

    def start_when_triggered(s: Any, a: Action, t: Any) -> bool:
        # Trigger 5 (the whole quorum ready) is judged when the driver checks the quorum, triggers 1-4 (the
        # brokers) when it stops waiting for them: as KRaftMigrationDriver does, and the KIP orders them so
        # (an incompatible broker may join at any time later: it is then isolated, see MIG-10).
        if a.name == "DriverWaitForQuorum" and t.voters[a["voter"]].driver.name == "WAIT_FOR_BROKERS":
            return all(v.running and v.migration for v in s.voters)
        if a.name != "DriverWaitForBrokers" or s.migration.name != "PRE_MIGRATION":
            return True
        brokers_ready = all(b.mode.name == "ZK" and b.migration and b.registered and b.ibp == quorum_level
                            for b in s.brokers)
        return brokers_ready

    def finished_stays_finished(s: Any, a: Action, t: Any) -> bool:
        if s.migration.name != "POST_MIGRATION":
            return True
        # A driver that had not yet noticed the finalization may still flush a committed record to
        # ZooKeeper (harmless: the data is the log's); what must never happen is a new take-over or copy.
        return t.migration.name == "POST_MIGRATION" and a.name not in (
            "BecomeZkController", "BeginMigration", "CompleteMigration")

    def soft_start(s: Any, a: Action, t: Any) -> bool:
        return not (a.name == "KRaftMetadataChange" and s.migration.name == "PRE_MIGRATION")

    def finalize_with_every_voter(s: Any, a: Action, t: Any) -> bool:
        # An unchanged migration state is either still or already POST_MIGRATION: no finalization here (and
        # the identity test spares the enum's costly .name on almost every step).
        if s.migration is t.migration or s.migration.name == "POST_MIGRATION" or t.migration.name != "POST_MIGRATION":
            return True
        return all(not v.migration for v in t.voters)

    # ---- invariants
    def zk_prefix_of_log(s: Any) -> bool:
        if not migrating(s):
            return True
        return bool(s.zk.data == s.log[:len(s.zk.data)])

    def lag_bounded(s: Any) -> bool:
        return not migrating(s) or len(s.log) - len(s.zk.data) <= config.lag_limit

    def nothing_before_copy(s: Any) -> bool:
        return s.migration.name != "PRE_MIGRATION" or s.log == ()

    def incompatible_isolated(s: Any) -> bool:
        return all(not b.kraft_rpcs or (b.registered and b.ibp == quorum_level) for b in s.brokers)

    def clean_rollback_keeps_all(s: Any) -> bool:
        return s.shutdown.name != "CLEAN" or s.zk.data[:len(s.log)] == s.log

    # ---- liveness
    def finished(s: Any) -> bool:
        return bool(s.migration.name == "POST_MIGRATION")

    def working_zk(s: Any) -> bool:
        return bool(0 <= s.zk.controller < KRAFT_ID and all(b.mode.name == "ZK" for b in s.brokers)
                    and s.zk.available)

    def quorum_runs(s: Any) -> bool:
        return bool(s.shutdown.name == "NONE")

    def quorum_shut_down(s: Any) -> bool:
        return bool(s.shutdown.name != "NONE")

    src = KIP
    props: list[AnyProperty] = [
        StepProperty("MIG-01", "a KRaft controller takes over /controller_epoch with an epoch above every "
                     "ZooKeeper epoch", f"{src} Controller leadership: the first epoch generated by the KRaft "
                     "quorum must be greater than the last epoch of ZK", claim_above_zk),
        StepProperty("MIG-02", "ZooKeeper accepts metadata writes only from the controller that holds "
                     "/controller_epoch", f"{src} Dual metadata writes: conditional updates on /migration avoid "
                     "contention between KRaft controllers during a failover", one_writer),
        Invariant("MIG-03", "during the migration ZooKeeper's metadata is a prefix of the committed KRaft log",
                  f"{src} Dual metadata writes: ensure consistency between the metadata log and ZooKeeper",
                  zk_prefix_of_log),
        StepProperty("MIG-05", "the initial copy commits all of ZooKeeper's metadata at once",
                     f"{src} Initial data migration: all ZK metadata in a single transaction", copy_is_whole),
        Invariant("MIG-06", "nothing is committed to the KRaft log before the copy",
                  f"{src} Initial data migration; KRaft controller soft start", nothing_before_copy),
        StepProperty("MIG-07", "the migration starts only when every trigger holds",
                     f"{src} Migration triggers 1-5 (version, config, quorum settings, no broker offline, quorum "
                     "ready)", start_when_triggered),
        StepProperty("MIG-08", "a finished migration never restarts: no new take-over of ZooKeeper, no new copy",
                     f"{src} Misconfigurations: after the second ZkMigrationRecord the driver must not enter "
                     "migration mode again", finished_stays_finished),
        StepProperty("MIG-09", "no metadata change is served before the copy completes",
                     f"{src} KRaft controller soft start: other RPCs are rejected with NOT_CONTROLLER",
                     soft_start),
        Invariant("MIG-10", "no UpdateMetadata or LeaderAndIsr reaches a broker that did not register with the "
                  "quorum's metadata.version", f"{src} Incompatible broker: it is effectively isolated",
                  incompatible_isolated),
        Invariant("MIG-11", "after a clean rollback ZooKeeper holds every committed record",
                  f"{src} Rollback to ZK: a clean shutdown of the KRaft quorum is important", clean_rollback_keeps_all),
        GraphProperty("MIG-L1", "while the quorum runs, the migration can always still finish",
                      f"{src} Finalizing the migration (liveness under fair scheduling, faults that stop)",
                      goal=finished, start=quorum_runs),
        GraphProperty("MIG-L2", "after the quorum is shut down for a rollback, a working ZooKeeper cluster is "
                      "always reachable", f"{src} Rollback to ZK", goal=working_zk, start=quorum_shut_down),
    ]
    if check_lag:
        props.append(Invariant("MIG-04", "during dual write ZooKeeper never lags the KRaft log by more than the "
                               "limit", f"{src} Dual metadata writes: a limit on the records not yet written to "
                               "ZooKeeper; ZooKeeper unavailable: stop metadata updates", lag_bounded))
    if config.profile == "kip" and not kip_claims:
        props.append(StepProperty("MIG-12", "the migration is finalized only once every voter turned it off",
                                  f"{src} Finalizing: take the KRaft controllers out of migration mode",
                                  finalize_with_every_voter))
    if kip_claims:
        props.append(StepProperty("MIG-01R", "every new /controller_epoch, including after a rollback, is above "
                                  "every earlier one", f"{src} Controller leadership (monotonic epoch invariant)",
                                  epochs_monotonic_everywhere))
        props.append(StepProperty("MIG-12", "the migration is finalized only once every voter turned it off",
                                  f"{src} Finalizing", finalize_with_every_voter))
    return props
