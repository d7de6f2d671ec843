"""The ``features`` runbooks on a real ZooKeeper-mode Kafka cluster (``rollcheck runbook FILE --cluster``; the engine
is rollcheck/cluster/runbook.py, the scenarios and figures docs/runbooks.md).

KIP-584 in the ZooKeeper era as Kafka shipped it: from 2.7 to 3.2 a broker supports no feature
(``BrokerFeatures.createDefault()`` is empty; 3.3 added ``metadata.version``), so what an operator changes there is
the feature versioning system itself, which the IBP turns on (``KafkaController``'s "Feature ZK node status":
``/feature`` disabled below ``KAFKA_2_7_IV0``, enabled at or above it, with nothing finalized on a cluster
upgraded from an old IBP). A run takes a runbook whose releases support no feature, each mapped onto a Kafka
release of 2.8.x (``--release``, one per release of the config, in its order; default 2.8.2), and runs the model
under the ``kafka`` profile (Kafka 2.8's rules) on the config as it is.

On the cluster: ZooKeeper (``ZooKeeperServerMain`` of the release's zookeeper jar) and the config's brokers in
ZooKeeper mode, broker ``i`` with ``broker.id`` ``i + 1``, started at IBP ``2.6`` (the config's ``initial_ibp``
false) or ``2.8`` (true). ``SetIbp`` rolls every running broker, one after the other, onto the other IBP (a static
config: each is stopped, its ``inter.broker.protocol.version`` rewritten, and started); ``RestartBroker`` restarts
one broker on another release's jars; the wait ``cluster_healthy`` waits until the cluster has settled. Faults are
refused: the model's restarts are bounces onto a release, counted by ``max_restarts``.

What an observation holds (matched against the system's own view): ``/feature`` as ZooKeeper's shell prints it
(absent, or its status, its features and its version, the epoch), the active controller (``/controller``'s broker,
as a broker index), each broker's release and status (RUNNING, or EXITED when its process ended), whether the IBP
enables feature versioning, and the runbook steps done. An observation is taken once ``/controller`` names a
running broker and neither node changed over ``QUIET_SECONDS``. Not observed: the brokers' feature caches and the
controller's live set (the model's internal transitions stand for them).
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from reference_impl.features.config import FeaturesConfig
from rollcheck.cluster.cluster import Cluster
from rollcheck.cluster.dist import Distribution, ensure_distribution
from rollcheck.cluster.kafka import (
    ZkBroker,
    restart_kafka,
    start_zk_brokers,
    start_zookeeper,
    znode_data,
    znode_versioned,
)
from rollcheck.cluster.node import NodeFailed
from rollcheck.cluster.runbook import ClusterPlan, Fault, check_steps
from rollcheck.core.errors import UserError
from rollcheck.runbook import Runbook, RunbookState, RunbookStep, build_runbook_system

ACTIONS = ("SetIbp", "RestartBroker")
WAITS = ("cluster_healthy",)
DEFAULT_RELEASE = "2.8.2"
LINES = ("2.8",)  # the releases the model's kafka profile is (kafka_release "2.8"), run on this machine
IBP = {False: "2.6", True: "2.8"}  # below and at or above KAFKA_2_7_IV0, where KIP-584 turns /feature on
SETTLE_SECONDS = 60.0
QUIET_SECONDS = 2.0  # the controller writes /feature in its failover, within a second of its election
# Between two observations: the roll's election, each broker's start, registration and /feature notification.
INTERNAL = 10
_RELEASE = re.compile(r"^\d+\.\d+\.\d+$")


def _line(release: str) -> str:
    return ".".join(release.split(".")[:2])


class FeaturesCluster:
    protocol = "features"
    default_releases = (DEFAULT_RELEASE,)
    # What `rollcheck gate --tier nightly` runs (runbook, releases, faults): feature versioning turned on by the
    # IBP roll of a 2.8.2 cluster.
    scenarios = (("runbooks/features/zk-enable-versioning.toml", (DEFAULT_RELEASE,), ()),)

    def plan(self, book: Runbook, releases: Sequence[str] | None, faults: Sequence[Fault]) -> ClusterPlan:
        config = book.config
        assert isinstance(config, FeaturesConfig)
        featured = [r.name for r in config.releases if r.features]
        if featured or config.kafka_release != "2.8":
            raise UserError(f"runbook {book.id}: a cluster run needs releases that support no feature, as Kafka "
                            f"2.7 ... 3.2 brokers in ZooKeeper mode (BrokerFeatures.createDefault() is empty) and "
                            f"the model's 2.8 rules; "
                            + (f"its releases {', '.join(featured)} support features the brokers do not have"
                               if featured else f"its kafka_release is {config.kafka_release}"))
        if len(config.initial_ibp) != 1:
            raise UserError(f"runbook {book.id}: a cluster starts at one IBP; the config starts at "
                            f"{len(config.initial_ibp)} (initial_ibp)")
        names = tuple(releases) if releases else (DEFAULT_RELEASE,) * len(config.releases)
        if len(names) != len(config.releases):
            raise UserError(f"--release {':'.join(names)}: runbook {book.id} has {len(config.releases)} release(s) "
                            f"({', '.join(r.name for r in config.releases)}): give one Kafka release for each")
        for name in names:
            if not _RELEASE.match(name) or _line(name) not in LINES:
                raise UserError(f"--release {':'.join(names)}: the features cluster runs know Kafka "
                                f"{' / '.join(f'{line}.x' for line in LINES)} (e.g. {DEFAULT_RELEASE}), not {name}")
        if faults:
            raise UserError(f"--fault {faults[0]}: a features run injects no faults: the model's restarts are bounces "
                            f"onto a release (RestartBroker steps, max_restarts)")
        check_steps(book, ACTIONS, WAITS)
        mapped = dataclasses.replace(config, profile="kafka")
        model = build_runbook_system(dataclasses.replace(book, config=mapped), "kafka")
        inner = model.inner

        def project(rs: RunbookState) -> dict[str, object]:
            return {**inner.view(rs.state), "runbook_done": rs.done}

        release_of = tuple(zip((r.name for r in config.releases), names, strict=True))
        return ClusterPlan(names, model, project, INTERNAL, release_of,
                           (f"{config.brokers} ZooKeeper-mode broker(s) at IBP {IBP[config.initial_ibp[0]]}; "
                            + ", ".join(f"{m} = Kafka {k}" for m, k in release_of)
                            + "; the model under the kafka profile and Kafka 2.8's rules",))

    def start(self, cluster: Cluster, book: Runbook, plan: ClusterPlan, say: Callable[[str], None]) -> _Run:
        config = book.config
        assert isinstance(config, FeaturesConfig)
        release_of = dict(plan.detail)
        dists = {k: ensure_distribution(k, progress=say) for k in dict.fromkeys(release_of.values())}
        first = dists[release_of[config.initial_release]]
        _zk, port = start_zookeeper(cluster, first)
        ibp = config.initial_ibp[0]
        brokers = start_zk_brokers(cluster, first, port, brokers=config.brokers, ibp=IBP[ibp])
        return _Run(cluster, dists, release_of, port, brokers, config.initial_release, ibp, say)


class _Run:
    """The started cluster of one run (ClusterRunbook)."""

    def __init__(self, cluster: Cluster, dists: dict[str, Distribution], release_of: dict[str, str], port: int,
                 brokers: list[ZkBroker], release: str, ibp: bool, say: Callable[[str], None]) -> None:
        self.cluster = cluster
        self.dists = dists
        self.release_of = release_of
        self.port = port
        self.brokers = brokers
        self.release = [release] * len(brokers)
        self.exited = [False] * len(brokers)
        self.ibp = ibp
        self.say = say
        self.done = 0
        self.log = cluster.run_dir / "zookeeper" / "tools.log"

    def _dist(self) -> Distribution:
        return self.dists[self.release_of[self.release[0]]]

    # -- reading the cluster ------------------------------------------------------------------------------------
    def _read(self) -> tuple[int, tuple[bytes, int] | None]:
        controller = znode_data(self._dist(), self.port, "/controller", log=self.log)
        index = -1 if controller is None else int(json.loads(controller)["brokerid"]) - 1
        return index, znode_versioned(self._dist(), self.port, "/feature", log=self.log)

    def _settled(self) -> tuple[int, tuple[bytes, int] | None] | None:
        deadline = time.monotonic() + SETTLE_SECONDS
        seen = self._read()
        while time.monotonic() < deadline:
            time.sleep(QUIET_SECONDS)
            now = self._read()
            controller = now[0]
            if now == seen and 0 <= controller < len(self.brokers) and self.brokers[controller].node.alive:
                return now
            seen = now
        return None

    def observe(self) -> dict[str, Any]:
        for i, b in enumerate(self.brokers):
            self.exited[i] = self.exited[i] or (b.node.process is not None and not b.node.alive)
        brokers = [{"release": self.release[i], "status": "EXITED" if self.exited[i] else "RUNNING"}
                   for i in range(len(self.brokers))]
        got = self._settled()
        if got is None:
            raise NodeFailed(f"the cluster did not settle within {SETTLE_SECONDS:g} s (/controller naming a running "
                             f"broker, /controller and /feature unchanged for {QUIET_SECONDS:g} s); logs under "
                             f"{self.cluster.run_dir}")
        controller, feature = got
        if feature is None:
            node: dict[str, Any] = {"status": "ABSENT", "epoch": -1, "features": {}}
        else:
            doc = json.loads(feature[0])
            status = {0: "DISABLED", 1: "ENABLED"}.get(doc.get("status"), f"status {doc.get('status')}")
            features = {name: (r["min_version_level"], r["max_version_level"])
                        for name, r in (doc.get("features") or {}).items()}
            node = {"status": status, "epoch": feature[1], "features": features}
        return {"runbook_done": self.done, "node": node, "controller": controller, "ibp_enabled": self.ibp,
                "brokers": brokers}

    # -- steps ------------------------------------------------------------------------------------------------------
    def node_of(self, step: RunbookStep) -> str | None:
        p = dict(step.params)
        return f"broker:{p['broker']}" if "broker" in p else None

    def _restart(self, i: int, release: str) -> str:
        b = self.brokers[i]
        kafka = self.release_of[release]
        self.release[i] = release
        seconds, exited = restart_kafka(self.cluster, b.node, self.dists[kafka], b.properties)
        # KIP-584: a broker incompatible with the finalized features exits at start-up.
        self.exited[i] = seconds is None
        if seconds is None:
            return f"{b.node.name} started on Kafka {kafka} and exited: {exited}"
        return f"{b.node.name} restarted on Kafka {kafka} ({release}) in {seconds:.1f} s"

    def perform(self, step: RunbookStep) -> tuple[str, bool]:
        p = dict(step.params)
        if step.wait is not None:
            if self._settled() is None:
                return f"waited {SETTLE_SECONDS:g} s for {step.wait.name}: the cluster did not settle", False
            self.done += 1
            return f"waited for {step.wait.name}", True
        if step.action == "RestartBroker":
            did = self._restart(int(p["broker"]), str(p["release"]))
            self.done += 1
            return did, True
        assert step.action == "SetIbp"
        enabled = bool(p.get("enabled", not self.ibp))
        old, new = IBP[self.ibp], IBP[enabled]
        rolled = []
        for i, b in enumerate(self.brokers):
            if not b.node.alive:
                continue  # a stopped or exited broker stays down (the model's roll restarts the running ones)
            text = b.properties.read_text(encoding="utf-8")
            b.properties.write_text(text.replace(f"inter.broker.protocol.version={old}\n",
                                                 f"inter.broker.protocol.version={new}\n"), encoding="utf-8")
            rolled.append(self._restart(i, self.release[i]))
        self.ibp = enabled
        self.done += 1
        return f"IBP rolled from {old} to {new}: " + "; ".join(rolled), True

    def strike(self, kind: str, node: str, phase: int) -> str:
        raise UserError("a features run injects no faults")  # plan() refuses them first

    def close(self) -> None:
        pass


BINDING = FeaturesCluster()
