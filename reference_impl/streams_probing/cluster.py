"""The ``streams_probing`` runbooks on real Kafka Streams instances (``rollcheck runbook FILE --cluster``; the
engine is rollcheck/cluster/runbook.py, the scenarios and figures docs/runbooks.md).

The runbook's group (``instances`` of the config's ``from_release``, bounced onto ``to_release``) runs as that many
JVMs of the released Kafka Streams jars (kafka_oracle/cluster/streams-1.1: a stateless topology of the project's
own, one task per partition of its input topic, one stream thread), on one KRaft broker of Kafka ``BROKER`` (a
broker serves these old clients' protocol versions until 4.0). The model's releases are Kafka's: ``1.1`` is 1.1.x,
``2.0`` 2.0.x and ``post-2.0`` (the KIP's simulated version 4) 2.1.x ... 2.3.x, which speak version 4. The model
runs under the ``kafka-2.0`` profile: every instance runs its own release's code, as on a real cluster.

A ``RollingBounce`` stops the instance (SIGTERM: Kafka Streams closes and leaves the group) and starts it on the
step's release with ``upgrade.from`` set or removed; a ``kill`` fault SIGKILLs an instance and, once the group has
settled without it, starts it again as it was. A cut-off instance (``pause``) has no transition in the model: the
coordinator would drop it and it would rejoin with the version it had, which no model step does.

What an observation holds, read from each instance's own events (the observing assignor of the adapter wraps the
release's ``StreamsPartitionAssignor`` and writes what it was given and answered): per instance its release and
``upgrade.from`` (what the operator started it with), whether it runs, the kind of failure that stopped it (the
member could not build its subscription: "subscription"; the leader's ``assign`` threw: "leader"; ``onAssignment``
threw: "member"; an error code in its assignment: "shutdown"), the subscription version it will send next (the
assignor's ``usedSubscriptionMetadataVersion``) and the version of the last assignment it received; the leader of
the last rebalance (the instance whose assignor ran ``assign``); whether the group is stable; the runbook steps
done. Each member's tasks (its partitions of the input topic) are recorded beside, not matched: the model assigns
no tasks. An observation waits, bounded, until the group has settled: the last rebalance covered every running
instance, each received its assignment after it and has not asked to rejoin since, each is RUNNING, and nothing
happened for ``QUIET_SECONDS``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from reference_impl.streams_probing.config import StreamsProbingConfig
from reference_impl.streams_probing.releases import KAFKA_20
from reference_impl.streams_probing.state import StreamsGroupState
from reference_impl.streams_probing.system import StreamsProbingSystem
from rollcheck.cluster.cluster import Cluster
from rollcheck.cluster.dist import ensure_distribution
from rollcheck.cluster.kafka import run_tool, start_kraft
from rollcheck.cluster.node import Node, NodeFailed
from rollcheck.cluster.runbook import ClusterPlan, Fault, check_steps, node_index
from rollcheck.core.errors import UserError
from rollcheck.oracle.binding import Adapter
from rollcheck.oracle.build import Built, ensure_built, repo_root
from rollcheck.runbook import Runbook, RunbookState, RunbookStep, build_runbook_system

ACTIONS = ("RollingBounce",)
BROKER = "3.9.2"  # the broker every run uses (KRaft, one node): it still serves the 1.1 ... 2.x clients' requests
TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"  # kafka-tools from 3.6
INPUT, OUTPUT, PARTITIONS = "rollcheck-input", "rollcheck-output", 4
APPLICATION_ID = "rollcheck-streams"
APP = Adapter("streams-1.1", "rollcheck.cluster.streams.StreamsInstance",
              ("org.apache.kafka.streams.KafkaStreams",))
# The Kafka release each model release runs as by default, and the lines a --release may name for it: post-2.0
# (metadata version 4) is Kafka 2.1 ... 2.3, by default 2.3.1, whose leader writes the group's commonly supported
# version as KIP-268 and the model have it (KAFKA-8649, fixed in 2.2.2 and 2.3.1; 2.1.x, 2.2.0, 2.2.1 and 2.3.0
# have the bug: STR-RB4 re-finds it).
DEFAULT_KAFKA = {"1.1": "1.1.1", "2.0": "2.0.1", "post-2.0": "2.3.1"}
LINES = {"1.1": ("1.1",), "2.0": ("2.0",), "post-2.0": ("2.1", "2.2", "2.3")}
HEAP = "160m"
_RELEASE = re.compile(r"^\d+\.\d+\.\d+$")
EVENT = "ROLLCHECK-EVENT "
READY = r'ROLLCHECK-EVENT \{"event":"starting"'
# The group: a session of 6 s (the broker's group.min.session.timeout.ms) so that a killed or failed instance
# leaves the group soon, heartbeats every 2 s.
GROUP_SETTINGS = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "2000", "max.poll.interval.ms": "60000",
                  "num.stream.threads": "1"}
SETTLE_SECONDS = 90.0  # a killed member's session (6 s), the rebalances after it, a probing round
QUIET_SECONDS = 4.0  # longer than a heartbeat (2 s): a rejoin another member asked for reaches everyone by then
# Between two observations: a bounce, a rebalance, each member's assignment; a probing member's second round
# (its downgrade, a rebalance, the assignments again); a leader's follow-up; a crash and the rebalance after it.
INTERNAL = 14
TASKS = "tasks"  # each instance's partitions of the input topic: recorded, not matched (the model has no tasks)


def project(rs: RunbookState) -> dict[str, object]:
    """What a cluster shows of a state of the runbook's system (see the module docstring)."""
    s: StreamsGroupState = rs.state
    return {"runbook_done": rs.done, "stable": StreamsProbingSystem.stable(s), "leader": s.leader,
            "instances": tuple({"release": x.release, "upgrade_from": x.upgrade_from or "", "running": x.running,
                                "failure": x.failure.split(":", 1)[0], "used_version": x.used_version,
                                "last_version": x.last_version} for x in s.instances)}


def _line(release: str) -> str:
    return ".".join(release.split(".")[:2])


@dataclasses.dataclass(frozen=True)
class Detail:
    release_of: tuple[tuple[str, str], ...]  # model release -> Kafka release
    upgrade_from: str | None


class StreamsProbingCluster:
    protocol = "streams_probing"
    default_releases = (DEFAULT_KAFKA["2.0"], DEFAULT_KAFKA["post-2.0"])
    # What `rollcheck gate --tier nightly` runs (runbook, releases, faults): KIP-268's single bounce from 2.0 with
    # version probing, and the two bounces from 1.1 with upgrade.from.
    scenarios = (("runbooks/streams_probing/single-bounce.toml", ("2.0.1", "2.3.1"), ()),
                 ("runbooks/streams_probing/double-bounce.toml", ("1.1.1", "2.0.1"), ()),
                 ("runbooks/streams_probing/single-bounce-leader-last.toml", ("2.0.1", "2.3.1"),
                  ("bounce-1:kill:instance:0",)))

    def plan(self, book: Runbook, releases: Sequence[str] | None, faults: Sequence[Fault]) -> ClusterPlan:
        config = book.config
        assert isinstance(config, StreamsProbingConfig)
        old, new = config.from_release, config.to_release
        if old not in DEFAULT_KAFKA or new not in DEFAULT_KAFKA:
            known = ", ".join(f"{m} (Kafka {' / '.join(lines)})" for m, lines in LINES.items())
            raise UserError(f"runbook {book.id}: a cluster run knows the Kafka Streams releases {known}; the config "
                            f"goes from {old} to {new}")
        if not config.operator:
            raise UserError(f"runbook {book.id}: a cluster run performs the runbook's bounces (procedure "
                            f"'operator'); this config's procedure is {config.procedure!r}")
        names = tuple(releases) if releases else (DEFAULT_KAFKA[old], DEFAULT_KAFKA[new])
        if len(names) != 2:
            raise UserError(f"--release {':'.join(names)}: runbook {book.id} goes from {old} to {new}: give OLD:NEW "
                            f"(e.g. {DEFAULT_KAFKA[old]}:{DEFAULT_KAFKA[new]})")
        for ours, kafka in zip((old, new), names, strict=True):
            if not _RELEASE.match(kafka):
                raise UserError(f"--release {':'.join(names)}: '{kafka}' is not a Kafka release name (e.g. "
                                f"{DEFAULT_KAFKA[ours]})")
            if _line(kafka) not in LINES[ours]:
                raise UserError(f"--release {':'.join(names)}: the runbook's {ours} instances run Kafka "
                                f"{' or '.join(f'{line}.x' for line in LINES[ours])}, not {kafka}")
        check_steps(book, ACTIONS, ())
        kills = [f for f in faults if f.kind == "kill"]
        for f in faults:
            if f.kind == "previous":
                raise UserError(f"--fault {f}: a Kafka Streams run injects kill only: the model's operator bounces "
                                f"onto {new} only, so a bounce back onto the old release is no step of it")
            if f.kind != "kill":
                raise UserError(f"--fault {f}: a Kafka Streams run injects kill only: the model has no transition "
                                f"for an instance cut off ({f.kind}), which the coordinator drops and which rejoins "
                                f"with the version it had")
            if f.node is not None:
                node_index(f.node, {"instance": config.instances}, f"--fault {f}")
        if len(kills) > config.max_crashes:
            raise UserError(f"--fault {kills[0]}: runbook {book.id}'s config allows {config.max_crashes} crash(es) "
                            f"(max_crashes); {len(kills)} kill(s) asked")
        model = build_runbook_system(book, KAFKA_20)
        detail = Detail(((old, names[0]), (new, names[1])), config.upgrade_from)
        return ClusterPlan(names, model, project, INTERNAL, detail, unmodelled=(TASKS,), notes=
                           (f"{config.instances} Kafka Streams instances of Kafka {names[0]} ({old}) bounced onto "
                            f"Kafka {names[1]} ({new}), on one Kafka {BROKER} broker; the model under the "
                            f"{KAFKA_20} profile (each instance runs its own release's code)",))

    def start(self, cluster: Cluster, book: Runbook, plan: ClusterPlan, say: Callable[[str], None]) -> _Run:
        detail: Detail = plan.detail
        config = book.config
        assert isinstance(config, StreamsProbingConfig)
        # Everything is fetched and built before any node starts: a release that is not served stops nothing.
        apps = {kafka: ensure_built(repo_root() / "kafka_oracle" / "cluster", APP, kafka, progress=say)
                for _, kafka in detail.release_of}
        dist = ensure_distribution(BROKER, progress=say)
        kc = start_kraft(cluster, dist, controllers=1, combined=True)
        bootstrap = kc.bootstrap
        folder = cluster.node_dir(kc.nodes[0].node.name)
        for topic in (INPUT, OUTPUT):
            run_tool(dist, TOPIC_COMMAND, ["--bootstrap-server", bootstrap, "--create", "--topic", topic,
                                           "--partitions", str(PARTITIONS), "--replication-factor", "1"],
                     log=folder / "node.log", what=f"creating topic {topic}")
        run = _Run(cluster, dict(detail.release_of), apps, bootstrap, config.instances, say)
        for i in range(config.instances):
            run.launch(i, config.from_release, None)
        return run


@dataclasses.dataclass
class _Instance:
    node: Node
    release: str  # the model's name
    upgrade_from: str | None
    killed: bool = False


def events(node: Node) -> list[dict[str, Any]]:
    """The events of the instance's current process (its log from this start on)."""
    try:
        with open(node.log, "rb") as f:
            f.seek(node.log_start)
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        at = line.find(EVENT)
        if at >= 0:
            try:
                out.append(json.loads(line[at + len(EVENT):]))
            except ValueError:
                continue  # a line cut by a kill
    return out


def failure_kind(evs: Sequence[dict[str, Any]]) -> str:
    """The model's kind of the failure that ended an instance ("" if none): see the module docstring."""
    if not any(e["event"] == "failed" for e in evs):
        return ""
    for e in reversed(evs):
        if e["event"] == "subscription" and "exception" in e:
            return "subscription"
        if e["event"] == "assign" and "exception" in e:
            return "leader"
        if e["event"] == "assignment":
            if "exception" in e:
                return "member"
            if e.get("error"):
                return "shutdown"
    return "unknown"


class _Run:
    """The started group of one run (ClusterRunbook)."""

    def __init__(self, cluster: Cluster, release_of: dict[str, str], apps: dict[str, Built], bootstrap: str,
                 count: int, say: Callable[[str], None]) -> None:
        self.cluster = cluster
        self.release_of = release_of
        self.apps = apps
        self.bootstrap = bootstrap
        self.say = say
        self.instances: list[_Instance] = []
        self.count = count
        self.done = 0
        self.tasks: list[list[str]] = []
        # The version of each instance's last assignment, kept across its restarts (the model keeps last_version).
        self._last_version = [0] * count

    # -- instances ----------------------------------------------------------------------------------------------
    def _argv(self, kafka: str, props: Path) -> list[str]:
        built = self.apps[kafka]
        return ["java", f"-Xmx{HEAP}", "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info", "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-cp", ":".join(str(p) for p in built.classpath), APP.handler, str(props)]

    def launch(self, i: int, release: str, upgrade_from: str | None) -> float:
        """Start instance ``i`` on ``release`` (the model's name) with ``upgrade.from`` (None: removed)."""
        name = f"streams-{i}"
        folder = self.cluster.node_dir(name)
        folder.mkdir(parents=True, exist_ok=True)
        props = {"application.id": APPLICATION_ID, "bootstrap.servers": self.bootstrap, "client.id": name,
                 "state.dir": str(folder / "state"), "rollcheck.input": INPUT, "rollcheck.output": OUTPUT,
                 **GROUP_SETTINGS}
        if upgrade_from is not None:
            props["upgrade.from"] = upgrade_from
        path = folder / "streams.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
        argv = self._argv(self.release_of[release], path)
        if i < len(self.instances):
            inst = self.instances[i]
            inst.node.argv = argv
            inst.release, inst.upgrade_from, inst.killed = release, upgrade_from, False
        else:
            inst = _Instance(Node(name, argv, folder, (), READY, role="streams"), release, upgrade_from)
            self.instances.append(inst)
        return self.cluster.start(inst.node, timeout=60.0)

    # -- reading the group ----------------------------------------------------------------------------------------
    def _look(self) -> tuple[dict[str, Any], str]:
        """What the instances show now, and why the group has not settled ("" when it has)."""
        evs = [events(x.node) for x in self.instances]
        failure = [failure_kind(e) for e in evs]
        running = [x.node.alive and not failure[i] and not x.killed for i, x in enumerate(self.instances)]
        members = [i for i, r in enumerate(running) if r]
        assigns = sorted(((e["ms"], i, e) for i, es in enumerate(evs) for e in es
                          if e["event"] == "assign" and "exception" not in e), key=lambda t: t[0])
        leader, why = -1, ""
        last_ms = 0
        if assigns:
            last_ms, leader, last = assigns[-1]
            covered = len(last.get("members", {}))
            if members and covered != len(members):  # none running: nothing is coming
                why = f"the last rebalance (led by instance {leader}) had {covered} member(s), {len(members)} run"
        elif members:
            why = "no rebalance yet"
        used: list[int | None] = []
        got: list[int] = []
        self.tasks = []
        for i, es in enumerate(evs):
            configured = next((e.get("used") for e in es if e["event"] == "configured"), None)
            mine = [e for e in es if e["event"] in ("subscription", "assignment")]
            done = [e for e in mine if e["event"] == "assignment" and "exception" not in e]
            used.append(done[-1].get("used") if done else configured)
            got.append(done[-1].get("version", 0) if done else 0)
            self.tasks.append(list(done[-1].get("partitions", [])) if done else [])
            if i in members and not why:
                states = [e["to"] for e in es if e["event"] == "state"]
                if not mine or mine[-1]["event"] != "assignment" or mine[-1]["ms"] < last_ms:
                    why = f"instance {i} has not received the last rebalance's assignment"
                elif not states or states[-1] != "RUNNING":
                    why = f"instance {i} is {states[-1] if states else 'not started'}, not RUNNING"
        newest = max((e["ms"] for es in evs for e in es), default=0)
        if not why and members and time.time() * 1000 - newest < QUIET_SECONDS * 1000:
            why = "events in the last few seconds"
        # An instance that never got an assignment in this process carries the version of its last one (the model
        # keeps last_version across a bounce or a restart).
        got = [g or self._last_version[i] for i, g in enumerate(got)]
        self._last_version = got
        view = {"runbook_done": self.done, "leader": leader,
                "stable": not why and len(members) == len(self.instances),
                "instances": [{"release": x.release, "upgrade_from": x.upgrade_from or "", "running": running[i],
                               "failure": failure[i], "used_version": used[i], "last_version": got[i]}
                              for i, x in enumerate(self.instances)]}
        return view, why

    def observe(self) -> dict[str, Any]:
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            view, why = self._look()
            if not why:
                return {**view, TASKS: self.tasks}
            if time.monotonic() >= deadline:
                raise NodeFailed(f"the Kafka Streams group did not settle within {SETTLE_SECONDS:g} s: {why}; logs "
                                 f"under {self.cluster.run_dir}")
            time.sleep(0.5)

    # -- steps --------------------------------------------------------------------------------------------------------
    def node_of(self, step: RunbookStep) -> str | None:
        return f"instance:{dict(step.params)['instance']}"

    def perform(self, step: RunbookStep) -> tuple[str, bool]:
        p = dict(step.params)
        i = int(p["instance"])
        release = str(p["release"])
        upgrade_from = p.get("upgrade_from")
        inst = self.instances[i]
        if inst.node.alive:
            self.cluster.stop(inst.node.name)
        seconds = self.launch(i, release, None if upgrade_from is None else str(upgrade_from))
        self.done += 1
        uf = f"upgrade.from={upgrade_from}" if upgrade_from is not None else "no upgrade.from"
        return f"instance {i} bounced onto Kafka {self.release_of[release]} ({release}), {uf}, up in " \
               f"{seconds:.1f} s", True

    def strike(self, kind: str, node: str, phase: int) -> str:
        _, i = node_index(node, {"instance": self.count}, "--fault")
        inst = self.instances[i]
        assert kind == "kill"
        if phase == 0:
            inst.node.kill()
            inst.killed = True
            return f"instance {i} killed (SIGKILL)"
        seconds = self.launch(i, inst.release, inst.upgrade_from)
        return f"instance {i} started again on Kafka {self.release_of[inst.release]} after the kill, up in " \
               f"{seconds:.1f} s"

    def close(self) -> None:
        pass


BINDING = StreamsProbingCluster()
