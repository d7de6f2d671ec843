"""The ``metadata_version`` runbooks on a real KRaft cluster (``rollcheck runbook FILE --cluster``; the engine is
rollcheck/cluster/runbook.py, the scenarios and figures docs/runbooks.md).

The runbook's config is on KIP-778's example catalog with two softwares, ``old`` (V1..V3) and ``new`` (V1..V5). A
run maps it onto two Kafka releases ``OLD:NEW`` as the oracle maps a config onto one release
(``MetadataVersionOracle.config_for``): example level k is Kafka level ``base + k``, where V5 is NEW's latest
production level; the mapping fits when OLD's latest production level is V3's (3.7.2:3.9.2: V1..V5 are 17..21,
3.7-IV2 .. 3.9-IV0). The model is the runbook's own system (operator actions only as the runbook's next step)
over the mapped config, under the ``kafka`` profile and NEW's rules.

On the cluster, voter ``i`` is the controller with node id ``i + 1`` and broker ``j`` the broker with node id
``voters + j + 1`` (separate processes: the model has no combined nodes), formatted at the config's initial level
with the initial software's storage tool. ``RestartNode`` stops the node and starts it on the other release's jars
(the same properties and data); ``UpdateFeatures`` is ``Admin.updateFeatures`` of metadata.version with the
request's ``UpgradeType`` and ``validateOnly``; the wait ``cluster_healthy`` waits until every node runs, a leader
is elected and every node's log has reached the leader's high watermark. Every read and command goes through
Kafka's own Admin client of NEW (``bootstrap.controllers``, KIP-919: both releases 3.7 or later), in one JVM for
the run (kafka_oracle/cluster/admin-3.7).

What an observation holds (the projection of a model state it is matched against): each voter's and broker's
software and status (RUNNING, DOWN when killed or paused, TERMINATED when it exited on start), the active
controller (``describeMetadataQuorum``'s leader, as a voter index), the finalized metadata.version the controllers
answer (``describeFeatures``, read once every running node has reached the leader's high watermark), whether each
running broker is fenced (``describeCluster`` through the brokers lists the unfenced ones; a crashed broker's is not
observed: the controller fences it when its session times out, the model at the crash) and the runbook steps done.
Not observed: a broker's registration and each node's own level; the model's internal transitions stand for them.
"""

from __future__ import annotations

import dataclasses
import signal
import time
from collections.abc import Callable, Sequence
from typing import Any

from reference_impl.metadata_version.catalog import from_feature_level
from reference_impl.metadata_version.config import MetadataVersionConfig
from reference_impl.metadata_version.oracle import _BY_NAME, MetadataVersionOracle
from reference_impl.metadata_version.state import MetadataVersionState
from rollcheck.cluster.admin import FEATURE_METADATA, FIRST_RELEASE, ClusterAdmin
from rollcheck.cluster.cluster import LOOPBACK, Cluster
from rollcheck.cluster.dist import Distribution, ensure_distribution
from rollcheck.cluster.kafka import KafkaNode, metadata_records, restart_kafka, start_kraft
from rollcheck.cluster.node import NodeFailed
from rollcheck.cluster.runbook import PAUSE_SECONDS, START, ClusterPlan, Fault, check_steps, node_index
from rollcheck.core.errors import UserError
from rollcheck.oracle.binding import OracleRelease
from rollcheck.runbook import ConditionRef, Runbook, RunbookState, RunbookStep, build_runbook_system

ACTIONS = ("RestartNode", "UpdateFeatures")
WAITS = ("cluster_healthy",)
UPGRADE_TYPES = {"NONE": "UPGRADE", "SAFE": "SAFE_DOWNGRADE", "UNSAFE": "UNSAFE_DOWNGRADE"}
SETTLE_SECONDS = 60.0  # a leader elected and every node caught up, after a step (a restart takes ~10 s on 2 cores)
METADATA_LOG = "metadata_log"  # the leader's log as its dump tool decodes it: recorded, not matched
INTERNAL = 4  # a restarted leader's election, a broker's registration and catch-up between two observations


def _version(release: str) -> tuple[int, ...]:
    return tuple(int(x) for x in release.split(".")[:2])


@dataclasses.dataclass(frozen=True)
class Detail:
    config: MetadataVersionConfig  # the mapped config (Kafka levels)
    release_of: tuple[tuple[str, str], ...]  # software name -> release
    base: int  # example level k is Kafka level base + k


def project(rs: RunbookState) -> dict[str, object]:
    """What a cluster shows of a state of the runbook's system (see the module docstring)."""
    s: MetadataVersionState = rs.state
    return {"runbook_done": rs.done,
            "voters": tuple({"software": v.software, "status": v.status.name} for v in s.voters),
            "brokers": tuple({"software": b.software, "status": b.status.name, "fenced": b.fenced,
                              "registration": b.registration} for b in s.brokers),
            "leader": s.leader, "level": s.level}


class MetadataVersionCluster:
    protocol = "metadata_version"
    default_releases = ("3.7.2", "3.9.2")
    # What `rollcheck gate --tier nightly` runs (runbook, releases, faults): the upgrade across two releases, and
    # the upgrade with a controller killed midway and a SAFE downgrade after it.
    scenarios = (("runbooks/metadata_version/kraft-upgrade.toml", ("3.7.2", "3.9.2"), ()),
                 ("runbooks/metadata_version/kraft-upgrade-then-safe-downgrade.toml", ("3.7.2", "3.9.2"),
                  ("roll-c1:kill",)))

    def plan(self, book: Runbook, releases: Sequence[str] | None, faults: Sequence[Fault]) -> ClusterPlan:
        config = book.config
        assert isinstance(config, MetadataVersionConfig)
        names = tuple(releases) if releases else self.default_releases
        usable = [r for r in _BY_NAME if _version(r) >= FIRST_RELEASE]
        for r in names:
            if r not in _BY_NAME or _version(r) < FIRST_RELEASE:
                raise UserError(f"--release {r}: the metadata_version cluster runs know Kafka {', '.join(usable)} "
                                f"(3.7 or later: the runs read the cluster through bootstrap.controllers, KIP-919)")
        if config.catalog != "example" or len(config.softwares) != 2:
            raise UserError(f"runbook {book.id}: a cluster run maps a config on KIP-778's example catalog with two "
                            f"softwares onto two releases; this one has catalog {config.catalog!r} and "
                            f"{len(config.softwares)} softwares")
        if len(names) != 2:
            raise UserError(f"--release {':'.join(names)}: runbook {book.id} runs two softwares: give OLD:NEW "
                            f"(e.g. {':'.join(self.default_releases)})")
        old, new = names
        if config.initial_level == 0:
            raise UserError(f"runbook {book.id}: a preview cluster (no metadata.version stored) cannot be formatted "
                            f"by Kafka {old}'s storage tool")
        try:
            mapped = MetadataVersionOracle().config_for(config, OracleRelease(new, _BY_NAME[new].line, ""))
        except ValueError as e:
            raise UserError(f"--release {old}:{new}: {e}") from None
        low, high = sorted(config.softwares, key=lambda s: s.max_level)
        base = mapped.software(high.name).max_level - high.max_level
        want = mapped.software(low.name).max_level
        have = _BY_NAME[old].latest_production
        if want != have:
            raise UserError(f"--release {old}:{new}: on Kafka {new}'s levels the runbook's {low.name} software reads "
                            f"up to level {want} ({from_feature_level(want).version()}), but Kafka {old}'s latest "
                            f"production level is {have} ({from_feature_level(have).version()}); choose an OLD "
                            f"release whose latest production level is {want}")
        crashes = [f for f in faults if f.kind in ("kill", "pause")]
        if crashes and not mapped.crashes:
            raise UserError(f"--fault {crashes[0]}: runbook {book.id}'s config has no crashes (crashes = false): the "
                            f"model has no transition for a node killed or cut off")
        for f in faults:
            if f.node is not None:
                _node_index(f.node, mapped, f"--fault {f}")
        check_steps(book, ACTIONS, WAITS)
        steps = with_roll_backs(book, faults, config.initial_software)
        mapped_book = dataclasses.replace(
            book, config=mapped, steps=tuple(_mapped_step(s, base) for s in steps),
            goal=_mapped_ref(book.goal, base))
        model = build_runbook_system(mapped_book, "kafka")
        detail = Detail(mapped, ((low.name, old), (high.name, new)), base)
        return ClusterPlan((old, new), model, project, INTERNAL, detail, unmodelled=(METADATA_LOG,), notes=
                           (f"example levels V1..V5 are Kafka {new}'s levels {base + 1}..{base + 5} "
                            f"({from_feature_level(base + 1).version()} .. {from_feature_level(base + 5).version()}); "
                            f"{low.name} = Kafka {old}, {high.name} = Kafka {new}; the model under the kafka profile "
                            f"and the {_BY_NAME[new].rules} rules",))

    def start(self, cluster: Cluster, book: Runbook, plan: ClusterPlan, say: Callable[[str], None]) -> _Run:
        detail: Detail = plan.detail
        dists = {r: ensure_distribution(r, progress=say) for r in plan.releases}
        newest = max(plan.releases, key=lambda r: tuple(int(x) for x in r.split(".")))
        c = detail.config
        admin = ClusterAdmin(newest, say)
        try:
            release_of = dict(detail.release_of)
            initial = c.initial_software
            level = c.initial_level if c.initial_level is not None else c.software(initial).max_level
            say(f"formatting {c.voters} controllers and {c.brokers} broker(s) of Kafka {release_of[initial]} at "
                f"metadata.version {from_feature_level(level).version()}")
            kc = start_kraft(cluster, dists[release_of[initial]], controllers=c.voters, brokers=c.brokers,
                             combined=False, metadata_version=from_feature_level(level).version())
            admin.controllers = ",".join(f"{LOOPBACK}:{kn.controller_port}" for kn in kc.nodes[:c.voters])
        except BaseException:
            admin.close()
            raise
        return _Run(cluster, kc.nodes, c, release_of, dists, detail.base, admin, say)


def _step_node(step: RunbookStep) -> tuple[str, int] | None:
    p = dict(step.params)
    return (str(p["role"]), int(p["node"])) if step.action == "RestartNode" else None


def with_roll_backs(book: Runbook, faults: Sequence[Fault], initial: str) -> list[RunbookStep]:
    """The runbook's steps with each ``previous`` fault as the step it is: after its step, a ``RestartNode`` of its
    node (by default the node the step restarted) onto the software the node ran before. A node that has run one
    software only has nothing to go back to: a UserError."""
    software: dict[tuple[str, int], str] = {}
    before: dict[tuple[str, int], str] = {}
    out: list[RunbookStep] = []
    for f in faults:
        if f.kind == "previous" and f.step == START:
            raise UserError(f"--fault {f}: before the first step every node runs its first software: there is no "
                            f"previous release to go back to")
    for step in book.steps:
        out.append(step)
        node = _step_node(step)
        if node is not None:
            before[node] = software.get(node, initial)
            software[node] = str(dict(step.params)["software"])
        for f in faults:
            if f.kind != "previous" or f.step != step.id:
                continue
            at = _step_node(step) if f.node is None else _parse_node(f.node)
            if at is None:
                raise UserError(f"--fault {f}: step {step.id} restarts no node; name one (STEP:previous:NODE)")
            if at not in before:
                raise UserError(f"--fault {f}: {at[0]} {at[1]} has run {software.get(at, initial)} only by then: "
                                f"there is no previous release to go back to")
            back = before[at]
            before[at], software[at] = software[at], back
            out.append(RunbookStep(f"{step.id}+previous", f"the fault: {at[0]} {at[1]} restarted on {back}, the "
                                   "software it ran before", "RestartNode",
                                   (("role", at[0]), ("node", at[1]), ("software", back))))
    return out


def _parse_node(name: str) -> tuple[str, int]:
    role, _, index = name.partition(":")
    return role, int(index)


def _node_index(name: str, c: Any, where: str) -> tuple[str, int]:
    return node_index(name, {"voter": c.voters, "broker": c.brokers}, where)


def _mapped_params(params: tuple[tuple[str, Any], ...], base: int) -> tuple[tuple[str, Any], ...]:
    return tuple((k, base + v if k == "level" and isinstance(v, int) and v > 0 else v) for k, v in params)


def _mapped_step(step: RunbookStep, base: int) -> RunbookStep:
    wait = None if step.wait is None else _mapped_ref(step.wait, base)
    return dataclasses.replace(step, params=_mapped_params(step.params, base), wait=wait)


def _mapped_ref(ref: ConditionRef, base: int) -> ConditionRef:
    return dataclasses.replace(ref, params=_mapped_params(ref.params, base))


class _Run:
    """The started cluster of one run (ClusterRunbook)."""

    def __init__(self, cluster: Cluster, nodes: list[KafkaNode], config: MetadataVersionConfig,
                 release_of: dict[str, str], dists: dict[str, Distribution], base: int, admin: ClusterAdmin,
                 say: Callable[[str], None]) -> None:
        self.cluster = cluster
        self.config = config
        self.voters = nodes[:config.voters]
        self.brokers = nodes[config.voters:]
        self.release_of = release_of
        self.dists = dists
        # The newest release's dump tool reads every release's metadata log (records are forward compatible).
        self.newest = max(dists, key=lambda r: tuple(int(x) for x in r.split(".")))
        self.base = base
        self.admin = admin
        self.say = say
        self.software = {kn.node.name: config.initial_software for kn in nodes}
        self.previous = dict(self.software)  # the software each node ran before its last restart
        self.status = {kn.node.name: "RUNNING" for kn in nodes}
        self.done = 0

    # -- reading the cluster ------------------------------------------------------------------------------------
    def _settled(self) -> tuple[dict[str, Any] | None, str]:
        running = {kn.node_id for kn in (*self.voters, *self.brokers) if self.status[kn.node.name] == "RUNNING"}
        return self.admin.settle({kn.node_id for kn in self.voters}, running, SETTLE_SECONDS)

    def observe(self) -> dict[str, Any]:
        nodes: dict[str, Any] = {"runbook_done": self.done,
                 "voters": [{"software": self.software[kn.node.name], "status": self.status[kn.node.name]}
                            for kn in self.voters],
                 "brokers": [{"software": self.software[kn.node.name], "status": self.status[kn.node.name]}
                             for kn in self.brokers]}
        if sum(self.status[kn.node.name] == "RUNNING" for kn in self.voters) * 2 <= len(self.voters):
            # No majority of the controllers runs: no leader can be elected, and nothing answers for the
            # finalized level (what the model has then: leader -1; the level is not observed).
            return {**nodes, "leader": -1}
        d, seen = self._settled()
        if d is None:
            raise NodeFailed(f"the cluster did not settle within {SETTLE_SECONDS:g} s (a leader among the running "
                             f"controllers, every running node caught up): {seen}; logs under "
                             f"{self.cluster.run_dir}")
        leader_id = d["quorum"]["leaderId"]
        ids = [kn.node_id for kn in self.voters]
        level = d[FEATURE_METADATA]["finalized"].get("metadata.version")
        if leader_id in ids:
            self._read_metadata_log(self.voters[ids.index(leader_id)], nodes)
        running = [kn for kn in self.brokers if self.status[kn.node.name] == "RUNNING"]
        if running:
            unfenced = self.admin.unfenced(",".join(f"{LOOPBACK}:{kn.broker_port}" for kn in running))
            if unfenced is not None:
                # Only a running broker's fencing is observed: the controller fences a crashed one when its session
                # times out (broker.session.timeout.ms), where the model fences it at the crash.
                for j, kn in enumerate(self.brokers):
                    if kn in running:
                        nodes["brokers"][j]["fenced"] = kn.node_id not in unfenced
        return {**nodes, "leader": ids.index(leader_id) if leader_id in ids else -1, "level": level}

    def _read_metadata_log(self, leader: KafkaNode, nodes: dict[str, Any]) -> None:
        """Each broker's registration as the active controller's metadata log holds it (its last
        RegisterBrokerRecord, named by the software whose metadata.version range it carries; "" for none), and
        the log's FeatureLevelRecords of metadata.version, recorded beside (METADATA_LOG)."""
        records = metadata_records(self.dists[self.newest], leader, log=self.cluster.run_dir / "tools.log")
        levels = [r["data"]["featureLevel"] for r in records if r.get("type") == "FEATURE_LEVEL_RECORD"
                  and r["data"].get("name") == "metadata.version"]
        registered: dict[int, int] = {}
        for r in records:
            if r.get("type") == "REGISTER_BROKER_RECORD":
                ranges = {f["name"]: f["maxSupportedVersion"] for f in r["data"].get("features", [])}
                registered[r["data"]["brokerId"]] = ranges.get("metadata.version", 0)
            elif r.get("type") == "UNREGISTER_BROKER_RECORD":
                registered.pop(r["data"]["brokerId"], None)
        by_max = {s.max_level: s.name for s in self.config.softwares}
        for j, kn in enumerate(self.brokers):
            top = registered.get(kn.node_id)
            nodes["brokers"][j]["registration"] = "" if top is None else by_max.get(top, f"a range up to {top}")
        nodes[METADATA_LOG] = {"metadata_version_records": levels,
                               "registered_max_levels": {str(k): v for k, v in sorted(registered.items())}}

    # -- steps ------------------------------------------------------------------------------------------------------
    def _node(self, role: str, index: int) -> KafkaNode:
        return (self.voters if role == "voter" else self.brokers)[index]

    def node_of(self, step: RunbookStep) -> str | None:
        p = dict(step.params)
        if step.action == "RestartNode":
            return f"{p['role']}:{p['node']}"
        return None

    def _restart(self, kn: KafkaNode, software: str) -> str:
        name = kn.node.name
        release = self.release_of[software]
        self.previous[name] = self.software[name]
        self.software[name] = software
        seconds, exited = restart_kafka(self.cluster, kn.node, self.dists[release], kn.properties)
        if seconds is None:
            # It exited on start: KIP-778's "a binary that cannot read the metadata.version stops".
            self.status[name] = "TERMINATED"
            return f"{name} started on Kafka {release} and exited: {exited}"
        self.status[name] = "RUNNING"
        return f"{name} restarted on Kafka {release} ({software}) in {seconds:.1f} s"

    def perform(self, step: RunbookStep) -> tuple[str, bool]:
        p = dict(step.params)
        if step.wait is not None:
            settled, seen = self._settled()
            if settled is None:
                return f"waited {SETTLE_SECONDS:g} s for {step.wait.name}: the cluster did not settle ({seen})", False
            self.done += 1
            return f"waited for {step.wait.name}", True
        if step.action == "RestartNode":
            did = self._restart(self._node(p["role"], p["node"]), p["software"])
            self.done += 1
            return did, True
        assert step.action == "UpdateFeatures"
        level = self.base + p["level"]
        downgrade = p.get("downgrade", "NONE")
        kind = UPGRADE_TYPES[getattr(downgrade, "name", downgrade)]
        validate_only = bool(p.get("dry_run", False))
        error = self.admin.update_feature("metadata.version", level, kind, validate_only)
        what = f"updateFeatures metadata.version {level} ({from_feature_level(level).version()}) {kind}" + (
            " validateOnly" if validate_only else "")
        if error is not None:
            return f"{what}: refused: {error['exception'].rsplit('.', 1)[-1]}: {error['message']}", False
        self.done += 1
        return f"{what}: accepted", True

    # -- faults -------------------------------------------------------------------------------------------------------
    def strike(self, kind: str, node: str, phase: int) -> str:
        role, index = _node_index(node, self.config, "--fault")
        kn = self._node(role, index)
        name = kn.node.name
        if kind == "previous":
            # The step the plan added to the model's runbook (with_roll_backs): a runbook step done here too.
            did = self._restart(kn, self.previous[name]) + " (the fault: back on the software it ran before)"
            self.done += 1
            return did
        if kind == "kill":
            if phase == 0:
                kn.node.kill()
                self.status[name] = "DOWN"
                return f"{name} killed (SIGKILL)"
            return self._restart(kn, self.software[name]) + " after the kill"
        if phase == 0:
            kn.node.signal(signal.SIGSTOP)
            self.status[name] = "DOWN"
            time.sleep(PAUSE_SECONDS)
            return f"{name} paused (SIGSTOP) for {PAUSE_SECONDS:g} s"
        kn.node.signal(signal.SIGCONT)
        self.status[name] = "RUNNING"
        return f"{name} continued (SIGCONT)"

    def close(self) -> None:
        self.admin.close()


BINDING = MetadataVersionCluster()
