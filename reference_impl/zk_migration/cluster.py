"""The ``zk_migration`` runbooks on a real cluster: ZooKeeper, ZooKeeper-mode brokers and a KRaft controller quorum
of one Kafka release (``rollcheck runbook FILE --cluster``; the engine is rollcheck/cluster/runbook.py, the
scenarios docs/runbooks.md). Follows Apache Kafka 3.9's docs, docs/ops.html#kraft_zk_migration.

The model's initial state is a ZooKeeper cluster whose broker 0 is the controller beside a KRaft quorum already
provisioned with ``zookeeper.metadata.migration.enable``: the run starts ZooKeeper, the config's brokers in
ZooKeeper mode at the config's IBP (ids 1..n: model broker ``b`` is broker id ``b + 1``, the first one the ZK
controller), reads the cluster id ZooKeeper holds, and formats and starts the controllers with it at the config's
quorum metadata.version (node ids 3000..: model voter ``v``, ``/controller`` naming the model's ``KRAFT_ID + v``),
with the migration settings of the docs. The operator's steps, as the docs give them:

- ``EnableMigrationOnBroker``: restart the broker with ``zookeeper.metadata.migration.enable`` and the quorum's
  connection settings;
- ``RestartBrokerAsKRaft``: restart it as a KRaft broker (``process.roles=broker``, ``node.id``, no ZooKeeper
  settings, no IBP);
- ``RollbackBrokerToZk``: restart it in ZooKeeper mode again (``broker.id``, ``zookeeper.connect``, the migration
  flag still on);
- ``RestartVoter(migration)``: restart the controller with (or without) the migration settings;
- ``ShutdownQuorum(clean)``: stop every controller (SIGTERM; ``clean = false``: SIGKILL);
- ``DeleteControllerZNodes``: ZooKeeper's shell, ``deleteall /controller`` and ``/migration`` (the 3.9 docs' revert);
- the wait ``migration_state``: the state the controllers log as they replay it ("Replayed a ZkMigrationStateRecord
  changing the migration state from A to B", Kafka 3.9's ``FeatureControlManager``).

What an observation holds (the projection of a model state it is matched against): the runbook steps done;
``/controller`` (the ZK broker or the KRaft voter named there, -1 when absent), how far ``/controller_epoch`` and
its znode version rose since the first observation (the model's starting epoch is a config value: the projection
shows its rises too), and whether ``/migration`` records the finished copy (``kraft_metadata_offset > 0``: Kafka's
``ZkMigrationLeadershipState.initialZkMigrationComplete``);
each broker's mode and migration flag and each controller's running and migration flag (what the run did); the
active controller (``describeMetadataQuorum``, Kafka's Admin client in one JVM) and the persisted migration state
its log shows; how the quorum was shut down. Not observed: ``/migration``'s version, the drivers' states, the
records: the model's internal transitions stand for them (up to ``INTERNAL`` between observations).
"""

from __future__ import annotations

import dataclasses
import json
import re
import signal
import time
from collections.abc import Callable, Sequence
from typing import Any

from reference_impl.metadata_version.catalog import from_feature_level
from reference_impl.zk_migration.config import KRAFT_ID, ZkMigrationConfig
from reference_impl.zk_migration.state import BrokerMode, ZkMigrationSystemState
from rollcheck.cluster.admin import ClusterAdmin
from rollcheck.cluster.cluster import LOOPBACK, Cluster
from rollcheck.cluster.dist import Distribution, ensure_distribution
from rollcheck.cluster.kafka import (
    ONE_BROKER_IS_A_CLUSTER,
    READY,
    ZK_READY,
    KafkaNode,
    ZkBroker,
    run_tool,
    start_kraft,
    start_zk_brokers,
    start_zookeeper,
    znode_data,
    znode_versioned,
)
from rollcheck.cluster.node import NodeFailed
from rollcheck.cluster.runbook import PAUSE_SECONDS, ClusterPlan, Fault, check_steps, node_index
from rollcheck.core.errors import UserError
from rollcheck.runbook import Runbook, RunbookState, RunbookStep, build_runbook_system

RELEASES = ("3.9.2", "3.9.1", "3.9.0")
MIGRATION_LEVEL = 21  # 3.9-IV0  # the model's kafka_release "3.9"; the Admin JVM needs 3.7+
ACTIONS = ("EnableMigrationOnBroker", "RestartBrokerAsKRaft", "RollbackBrokerToZk", "RestartVoter", "ShutdownQuorum",
           "DeleteControllerZNodes")
WAITS = ("migration_state",)
FIRST_CONTROLLER_ID = 3000
INTERNAL = 12  # the migration driver's states from a broker's registration to dual write, an election, a sync
SETTLE_SECONDS = 90.0
ZOOKEEPER_SHELL = "org.apache.zookeeper.ZooKeeperMain"
_STATE_LINE = re.compile(r"Replayed a ZkMigrationStateRecord changing the migration state from (\w+) to (\w+)")
_DONE_LINE = "Completed migration of metadata from ZooKeeper to KRaft"


def projection(zk_epoch: int) -> Callable[[RunbookState], dict[str, object]]:
    """The projection for a config whose ZooKeeper starts at ``/controller_epoch`` ``zk_epoch`` (version 0): the
    epoch and its znode version are shown as their rises since the start, as the run observes them (the model's
    starting epoch is a config value, a real cluster's the count of its elections)."""
    def look(rs: RunbookState) -> dict[str, object]:
        out = project(rs)
        z = rs.state.zk
        out["zk"] = {**out["zk"],  # type: ignore[dict-item]
                     "epoch_rise": z.controller_epoch - zk_epoch if z.controller_epoch >= 0 else -1,
                     "epoch_version_rise": z.epoch_version if z.epoch_version >= 0 else -1}
        return out
    return look


def project(rs: RunbookState) -> dict[str, object]:
    """What a cluster shows of a state of the runbook's system (see the module docstring), but the epochs."""
    s: ZkMigrationSystemState = rs.state
    return {"runbook_done": rs.done,
            "zk": {"controller": s.zk.controller, "migrated": s.zk.migrated},
            # The migration flag is a ZK-mode broker's setting: a KRaft broker's config has no ZooKeeper settings
            # (the model keeps the flag it had).
            "brokers": tuple({"mode": b.mode.name, "migration": b.migration and b.mode is BrokerMode.ZK}
                             for b in s.brokers),
            "voters": tuple({"running": v.running, "migration": v.migration} for v in s.voters),
            "leader": s.leader, "migration": s.migration.name, "shutdown": s.shutdown.name}


class ZkMigrationCluster:
    protocol = "zk_migration"
    default_releases = ("3.9.2",)
    # What `rollcheck gate --tier nightly` runs (runbook, releases, faults): the migration to finalization, and its
    # revert after the brokers moved to KRaft.
    scenarios = (("runbooks/zk_migration/migrate.toml", ("3.9.2",), ()),
                 ("runbooks/zk_migration/revert-after-broker-migration.toml", ("3.9.2",), ()))

    def plan(self, book: Runbook, releases: Sequence[str] | None, faults: Sequence[Fault]) -> ClusterPlan:
        config = book.config
        assert isinstance(config, ZkMigrationConfig)
        names = tuple(releases) if releases else self.default_releases
        if len(names) != 1 or names[0] not in RELEASES:
            raise UserError(f"--release {':'.join(names)}: the zk_migration cluster runs know one release of Kafka "
                            f"{', '.join(RELEASES)} (the model's 3.9 rules)")
        check_steps(book, ACTIONS, WAITS)
        for f in faults:
            if f.kind == "previous":
                raise UserError(f"--fault {f}: the migration runs on one release; its way back is its runbooks' "
                                f"rollback steps (RollbackBrokerToZk, ShutdownQuorum, DeleteControllerZNodes)")
        if faults and not config.failover:
            raise UserError(f"--fault {faults[0]}: runbook {book.id}'s config has no failover (failover = false): "
                            f"the model has no transition for a controller killed or cut off")
        for f in faults:
            if f.node is not None:
                _voter_index(f.node, config, f"--fault {f}")
        if config.quorum_level != config.broker_ibp:
            raise UserError(f"runbook {book.id}: a cluster run needs the brokers' IBP equal to the quorum's "
                            f"metadata.version (the config has {config.broker_ibp} and {config.quorum_level})")
        # The run reads the quorum through bootstrap.controllers, which Kafka serves from 3.7-IV0 on ("Direct-to-
        # controller communication is not supported with the current MetadataVersion" below it): the cluster runs
        # at the release's own level, 3.9-IV0, as the 3.9 docs have a migration run (IBP 3.9).
        mapped = dataclasses.replace(config, profile="kafka", kafka_release="3.9", quorum_level=MIGRATION_LEVEL,
                                     broker_ibp=MIGRATION_LEVEL)
        model = build_runbook_system(dataclasses.replace(book, config=mapped), "kafka")
        return ClusterPlan(names, model, projection(mapped.zk_epoch), INTERNAL, mapped,
                           (f"{config.zk_brokers} ZooKeeper-mode broker(s) at IBP "
                            f"{from_feature_level(MIGRATION_LEVEL).version()} and {config.voters} controller(s) "
                            f"at metadata.version {from_feature_level(MIGRATION_LEVEL).version()}, Kafka "
                            f"{names[0]}; the model under the kafka profile and the 3.9 rules",))

    def start(self, cluster: Cluster, book: Runbook, plan: ClusterPlan, say: Callable[[str], None]) -> _Run:
        c: ZkMigrationConfig = plan.detail
        assert c.quorum_level == MIGRATION_LEVEL
        (release,) = plan.releases
        dist = ensure_distribution(release, progress=say)
        admin = ClusterAdmin(release, say)
        try:
            _zk, port = start_zookeeper(cluster, dist)
            brokers = start_zk_brokers(cluster, dist, port, brokers=c.zk_brokers,
                                       ibp=from_feature_level(c.broker_ibp).version())
            run = _Run(cluster, dist, port, brokers, c, admin, say)
            cluster_id = run.cluster_id()
            say(f"ZooKeeper cluster {cluster_id}: {c.voters} controller(s) provisioned with the migration enabled")
            kc = start_kraft(cluster, dist, controllers=c.voters, combined=False,
                             metadata_version=from_feature_level(c.quorum_level).version(), cluster_id=cluster_id,
                             first_id=FIRST_CONTROLLER_ID, extra=run.controller_settings(True))
            run.voters = kc.nodes
            admin.controllers = ",".join(f"{LOOPBACK}:{kn.controller_port}" for kn in kc.nodes)
            run.wait_zk_controller()
        except BaseException:
            admin.close()
            raise
        return run


def _voter_index(name: str, c: Any, where: str) -> tuple[str, int]:
    return node_index(name, {"voter": c.voters, "broker": c.zk_brokers}, where)


class _Run:
    """The started cluster of one run (ClusterRunbook)."""

    def __init__(self, cluster: Cluster, dist: Distribution, zk_port: int, brokers: list[ZkBroker],
                 config: ZkMigrationConfig, admin: ClusterAdmin, say: Callable[[str], None]) -> None:
        self.cluster = cluster
        self.dist = dist
        self.zk_port = zk_port
        self.brokers = brokers
        self.voters: list[KafkaNode] = []
        self.config = config
        self.admin = admin
        self.say = say
        self.first_epoch: tuple[int, int] | None = None  # /controller_epoch at the first observation
        self.log = cluster.run_dir / "tools.log"
        self.broker_mode = ["ZK"] * len(brokers)
        self.broker_migration = [False] * len(brokers)
        self.voter_migration = [True] * config.voters
        self.shutdown = "NONE"
        self.done = 0
        self.zookeeper = f"{LOOPBACK}:{zk_port}"

    # -- settings -------------------------------------------------------------------------------------------------
    def controller_settings(self, migration: bool) -> dict[str, str]:
        """The docs' controller settings for a migration (and without it: finalization)."""
        out = {"listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
               # The brokers' listener the KRaft controller sends its RPCs to during the migration.
               "inter.broker.listener.name": "PLAINTEXT"}
        if migration:
            out.update({"zookeeper.metadata.migration.enable": "true", "zookeeper.connect": self.zookeeper})
        return out

    def _voters_string(self) -> str:
        return ",".join(f"{kn.node_id}@{LOOPBACK}:{kn.controller_port}" for kn in self.voters)

    def _broker_properties(self, b: ZkBroker, mode: str, migration: bool) -> str:
        port = b.port
        props = {"listeners": f"PLAINTEXT://{LOOPBACK}:{port}", "advertised.listeners": f"PLAINTEXT://{LOOPBACK}:{port}",
                 "log.dirs": str(b.properties.parent / "data"),
                 "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                 "controller.quorum.voters": self._voters_string(), "controller.listener.names": "CONTROLLER",
                 **ONE_BROKER_IS_A_CLUSTER}
        if mode == "ZK":
            props.update({"broker.id": str(b.broker_id), "zookeeper.connect": self.zookeeper,
                          "inter.broker.protocol.version": from_feature_level(self.config.broker_ibp).version()})
            if migration:
                props["zookeeper.metadata.migration.enable"] = "true"
        else:
            props.update({"process.roles": "broker", "node.id": str(b.broker_id)})
        return "".join(f"{k}={v}\n" for k, v in props.items())

    # -- reading the cluster ------------------------------------------------------------------------------------
    def _epoch_rise(self, epoch: tuple[bytes, int] | None) -> dict[str, int]:
        """/controller_epoch's value and znode version as their rises since the first observation (-1: absent)."""
        if epoch is None:
            return {"epoch_rise": -1, "epoch_version_rise": -1}
        value, version = int(epoch[0]), epoch[1]
        if self.first_epoch is None:
            self.first_epoch = (value, version)
        return {"epoch_rise": value - self.first_epoch[0], "epoch_version_rise": version - self.first_epoch[1]}

    def _znode(self, path: str) -> dict[str, Any] | None:
        data = znode_data(self.dist, self.zk_port, path, log=self.log)
        return None if data is None else dict(json.loads(data))

    def cluster_id(self) -> str:
        node = self._znode("/cluster/id")
        if node is None:
            raise NodeFailed(f"ZooKeeper holds no /cluster/id after the brokers started (log {self.log})")
        return str(node["id"])

    def _controller(self) -> int:
        node = self._znode("/controller")
        if node is None:
            return -1
        who = int(node["brokerid"])
        return KRAFT_ID + who - FIRST_CONTROLLER_ID if who >= FIRST_CONTROLLER_ID else who - 1

    def wait_zk_controller(self, timeout: float = 60.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            who = self._controller()
            if who >= 0:
                return who
            time.sleep(0.5)
        raise NodeFailed(f"no controller in ZooKeeper's /controller within {timeout:g} s (logs under "
                         f"{self.cluster.run_dir})")

    def _running_voters(self) -> list[KafkaNode]:
        return [kn for kn in self.voters if kn.node.alive and not kn.node.paused]

    def _migration_state(self, kn: KafkaNode) -> str | None:
        """The persisted migration state the controller's current incarnation last logged replaying."""
        try:
            with open(kn.node.log, "rb") as f:
                f.seek(kn.node.log_start)
                text = f.read().decode("utf-8", errors="replace")
        except OSError:
            return None
        found = _STATE_LINE.findall(text)
        return found[-1][1] if found else None

    def observe(self) -> dict[str, Any]:
        running = self._running_voters()
        leader = -1
        if running:
            d, seen = self.admin.settle({kn.node_id for kn in self.voters}, {kn.node_id for kn in running},
                                        SETTLE_SECONDS, levels=False)
            if d is None:
                raise NodeFailed(f"the controller quorum did not settle within {SETTLE_SECONDS:g} s: {seen}; logs "
                                 f"under {self.cluster.run_dir}")
            leader = d["quorum"]["leaderId"] - FIRST_CONTROLLER_ID
        # ZooKeeper before the leader's log: the active controller logs a ZkMigrationStateRecord as it appends it,
        # before the commit after which its driver writes /migration, so a log read after ZooKeeper is never the
        # older of the two (read the other way round, a copy finished between the reads showed /migration done
        # beside a log still at PRE_MIGRATION, which no state of the model has).
        controller = self._controller()
        epoch = znode_versioned(self.dist, self.zk_port, "/controller_epoch", log=self.log)
        node = self._znode("/migration")
        migration = self._migration_state(self.voters[leader]) if leader >= 0 else None
        out: dict[str, Any] = {
            "runbook_done": self.done,
            "zk": {"controller": controller,
                   "migrated": node is not None and int(node.get("kraft_metadata_offset", -1)) > 0,
                   **self._epoch_rise(epoch)},
            "brokers": [{"mode": m, "migration": f} for m, f in zip(self.broker_mode, self.broker_migration,
                                                                    strict=True)],
            "voters": [{"running": kn.node.alive and not kn.node.paused, "migration": f}
                       for kn, f in zip(self.voters, self.voter_migration, strict=True)],
            "leader": leader, "shutdown": self.shutdown}
        if migration is not None:
            out["migration"] = migration
        return out

    # -- steps ------------------------------------------------------------------------------------------------------
    def node_of(self, step: RunbookStep) -> str | None:
        p = dict(step.params)
        if "broker" in p:
            return f"broker:{p['broker']}"
        if "voter" in p:
            return f"voter:{p['voter']}"
        return None

    def _restart_broker(self, b: int, mode: str, migration: bool) -> str:
        zb = self.brokers[b]
        if zb.node.alive:
            self.cluster.stop(zb.node.name)
        zb.properties.write_text(self._broker_properties(zb, mode, migration), encoding="utf-8")
        zb.node.ready = ZK_READY if mode == "ZK" else READY
        seconds = self.cluster.start(zb.node)
        self.broker_mode[b], self.broker_migration[b] = mode, migration
        return f"{zb.node.name} restarted in {mode} mode" + (" with the migration config" if migration else "") + (
            f" in {seconds:.1f} s")

    def _restart_voter(self, v: int, migration: bool) -> str:
        kn = self.voters[v]
        if kn.node.alive:
            self.cluster.stop(kn.node.name)
        lines = [ln for ln in kn.properties.read_text(encoding="utf-8").splitlines()
                 if not ln.startswith(("zookeeper.metadata.migration.enable=", "zookeeper.connect="))]
        if migration:
            lines += [f"{k}={v}" for k, v in self.controller_settings(True).items() if k.startswith("zookeeper.")]
        kn.properties.write_text("\n".join(lines) + "\n", encoding="utf-8")
        seconds = self.cluster.start(kn.node)
        self.voter_migration[v] = migration
        return f"{kn.node.name} restarted {'with' if migration else 'without'} the migration config in {seconds:.1f} s"

    def perform(self, step: RunbookStep) -> tuple[str, bool]:
        p = dict(step.params)
        if step.wait is not None:
            want = dict(step.wait.params)["state"]
            deadline = time.monotonic() + SETTLE_SECONDS
            while time.monotonic() < deadline:
                running = self._running_voters()
                states = {self._migration_state(kn) for kn in running}
                if want in states and (want != "MIGRATION" or any(
                        _DONE_LINE in kn.node.log.read_text(errors="replace") for kn in running)):
                    self.done += 1
                    return f"the controllers' migration state is {want}", True
                time.sleep(0.5)
            return f"waited {SETTLE_SECONDS:g} s for the migration state {want}: not reached", False
        action = step.action
        if action == "EnableMigrationOnBroker":
            did = self._restart_broker(p["broker"], "ZK", True)
        elif action == "RestartBrokerAsKRaft":
            did = self._restart_broker(p["broker"], "KRAFT", False)
        elif action == "RollbackBrokerToZk":
            did = self._restart_broker(p["broker"], "ZK", True)
        elif action == "RestartVoter":
            did = self._restart_voter(p["voter"], bool(p["migration"]))
        elif action == "ShutdownQuorum":
            clean = bool(p.get("clean", True))
            for kn in self.voters:
                if clean:
                    self.cluster.stop(kn.node.name)
                else:
                    kn.node.kill()
            self.shutdown = "CLEAN" if clean else "UNCLEAN"
            did = f"the controller quorum shut down {'cleanly (SIGTERM)' if clean else 'by SIGKILL'}"
        else:
            assert action == "DeleteControllerZNodes"
            for path in ("/controller", "/migration"):
                run_tool(self.dist, ZOOKEEPER_SHELL, ["-server", self.zookeeper, "deleteall", path], log=self.log,
                         what=f"deleting {path}")
            who = self.wait_zk_controller()
            did = f"deleted /controller and /migration; ZK broker {who} became the controller"
        self.done += 1
        return did, True

    # -- faults -------------------------------------------------------------------------------------------------------
    def strike(self, kind: str, node: str, phase: int) -> str:
        role, index = _voter_index(node, self.config, "--fault")
        if role != "voter":
            raise UserError(f"--fault {node}: the zk_migration model has no broker faults; strike a voter")
        kn = self.voters[index]
        name = kn.node.name
        if kind == "kill":
            if phase == 0:
                kn.node.kill()
                return f"{name} killed (SIGKILL)"
            return self._restart_voter(index, self.voter_migration[index]) + " after the kill"
        if phase == 0:
            kn.node.signal(signal.SIGSTOP)
            time.sleep(PAUSE_SECONDS)
            return f"{name} paused (SIGSTOP) for {PAUSE_SECONDS:g} s"
        kn.node.signal(signal.SIGCONT)
        return f"{name} continued (SIGCONT)"

    def close(self) -> None:
        self.admin.close()


BINDING = ZkMigrationCluster()
