"""Trace replay of ``zk_migration`` on Kafka's own KRaftMigrationDriver (rollcheck/oracle/replay.py,
reference_impl/zk_migration/replay.py, kafka_oracle/zk_migration/driver-3.7)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from reference_impl.zk_migration.oracle import ZkMigrationOracle
from reference_impl.zk_migration.protocol import PROTOCOL, SMALL
from reference_impl.zk_migration.replay import REPLAY
from reference_impl.zk_migration.system import ZkMigrationSystem
from rollcheck.cli import main
from rollcheck.core.traces import Step
from rollcheck.oracle.binding import ReplayContent
from rollcheck.oracle.check import run_check
from rollcheck.oracle.client import find_release
from rollcheck.oracle.compare import Tally
from rollcheck.oracle.replay import ReplayTrace, content_of, replay_binding, replay_client, run_replays, walks
from rollcheck.oracle.tools import java_problem

needs_java = pytest.mark.skipif(java_problem() is not None, reason=str(java_problem()))
BINDING = ZkMigrationOracle()
RELEASE = find_release(BINDING, "3.9.2")
# The happy path of `small`: a broker joins, the driver copies ZooKeeper, syncs, and dual-writes one change.
HAPPY = ("EnableMigrationOnBroker", "RegisterZkBroker", "DriverActivate", "DriverWaitForQuorum",
         "DriverWaitForBrokers", "BecomeZkController", "BeginMigration", "CompleteMigration", "SyncKRaftToZk",
         "SendRpcsToBrokers", "KRaftMetadataChange", "DualWrite")


def _system() -> ZkMigrationSystem:
    return ZkMigrationSystem(BINDING.config_for(SMALL, RELEASE))


def _path(system: ZkMigrationSystem, names: Sequence[str]) -> list[Step]:
    s = next(iter(system.initial_states()))
    steps = [Step(None, s)]
    for name in names:
        a, s = next((a, t) for a, t in system.successors(s) if a.name == name)
        steps.append(Step(a, s))
    return steps


def _pairs(steps: Sequence[Step]) -> list[tuple[Any, Any]]:
    return [(st.action, st.state) for st in steps]


def test_the_binding_has_replay_content() -> None:
    assert isinstance(REPLAY, ReplayContent) and content_of(BINDING) is REPLAY
    rb = replay_binding(BINDING, REPLAY, BINDING.config_for(SMALL, RELEASE))
    assert find_release(rb, "3.9.2").adapter == "driver-3.7"  # type: ignore[arg-type]
    assert REPLAY.plan(SMALL, find_release(BINDING, "3.4.1")) is None  # no 3.4 driver adapter yet


def test_the_mapping_from_reference_actions_to_the_drivers_inputs() -> None:
    system = _system()
    q = REPLAY.question(system, _pairs(_path(system, HAPPY)), RELEASE)
    steps = q.request["steps"]
    assert steps[0] == [{"do": "start", "voter": 0}]
    assert steps[1] == [{"do": "brokers", "ids": [0]}] or steps[1] == []  # EnableMigrationOnBroker: not a driver input
    assert steps[3] == [{"do": "leader", "voter": 0, "leader": 0, "epoch": 1}]
    assert [a["do"] for a in steps[4]] == ["publish"] and steps[4][0]["image"]["migration"] == "PRE_MIGRATION"
    gates = {i: a["gate"] for i, acts in enumerate(steps) for a in acts if a["do"] == "release"}
    assert gates == {5: "brokers", 6: "claim", 7: "begin", 8: "copy", 9: "sync", 10: "rpcs", 12: "dual"}
    # CompleteMigration publishes the migrated image before it releases the copy; the change is published too
    assert [a["do"] for a in steps[8]] == ["publish", "release"] and steps[8][0]["image"]["topics"] == [0]
    assert steps[11][0]["image"]["topics"] == [0, 1]
    # the expectation is the reference's own trace
    assert [e["states"][0] for e in q.expected] == [
        "INACTIVE", "INACTIVE", "INACTIVE", "WAIT_FOR_CONTROLLER_QUORUM", "WAIT_FOR_BROKERS", "BECOME_CONTROLLER",
        "ZK_MIGRATION", "ZK_MIGRATION", "SYNC_KRAFT_TO_ZK", "KRAFT_CONTROLLER_TO_BROKER_COMM", "DUAL_WRITE",
        "DUAL_WRITE", "DUAL_WRITE"]
    assert q.expected[6]["writes"] == [{"op": "claim", "voter": 0}]
    assert q.expected[8]["records"] == [{"op": "acceptBatch", "voter": 0, "records": [0]},
                                        {"op": "completeMigration", "voter": 0}]
    assert q.expected[12]["writes"] == [{"op": "createTopic", "voter": 0, "record": 1}]
    assert q.skipped == ("1: EnableMigrationOnBroker(broker=0)",)


def test_the_walks_are_simulates_own() -> None:
    system = _system()
    a, b = walks(system, 3, 12, 7), walks(system, 3, 12, 7)
    assert [w.source for w in a] == ["walk:0", "walk:1", "walk:2"]
    assert [[repr(s.action) for s in w.steps] for w in a] == [[repr(s.action) for s in w.steps] for w in b]
    assert all(len(w.steps) == 13 for w in a)


class _Echo:
    """A fake replay client: answers each request with the reference's own expectation (found by the trace's
    first request), optionally with one step's driver state planted, or timed out."""

    def __init__(self, expected: Mapping[str, Any], plant: int | None = None, timeouts: int = 0) -> None:
        self.expected = expected
        self.plant = plant
        self.timeouts = timeouts
        self.asked: list[Mapping[str, Any]] = []

    def ask(self, release: str, requests: Sequence[Mapping[str, Any]]) -> list[Any]:
        out = []
        for r in requests:
            self.asked.append(r)
            if self.timeouts:
                self.timeouts -= 1
                out.append({"steps": [], "timed_out": 2})
                continue
            rows = [{"states": {str(v): st for v, st in e["states"].items()}, "writes": e["writes"],
                     "records": e["records"], "blocked": {}, "faults": []} for e in self.expected[json.dumps(
                         r["steps"])]]
            if self.plant is not None:
                rows[self.plant]["states"] = {"0": "INACTIVE"}
            out.append({"steps": rows, "timed_out": None})
        return out

    def stats(self) -> dict[str, Any]:
        return {"round_trips": len(self.asked)}

    def close(self) -> None:
        pass


def _echo(system: ZkMigrationSystem, steps: list[Step], **kw: Any) -> _Echo:
    q = REPLAY.question(system, _pairs(steps), RELEASE)
    return _Echo({json.dumps(q.request["steps"]): q.expected}, **kw)


def test_a_planted_difference_is_reported_with_its_trace() -> None:
    system = _system()
    steps = _path(system, HAPPY)
    tally = Tally()
    run_replays(REPLAY, system, RELEASE, [ReplayTrace("witness:X", steps)], _echo(system, steps, plant=9).ask, tally,
                protocol="zk_migration", config="small")
    assert tally.kinds["replay.driverStates"] == {"decisions": 1, "disagreements": 1}
    assert tally.kinds["replay.zkWrites"] == {"decisions": 1, "disagreements": 0}
    (f,) = tally.found["replay.driverStates"]
    assert f.difference == ("step 9: driver states {0: KRAFT_CONTROLLER_TO_BROKER_COMM} expected, Kafka's drivers "
                            "{0: INACTIVE}")
    assert f.action == "SyncKRaftToZk(voter=0)" and f.trace is not None
    assert len(f.trace["states"]) == len(steps) and f.trace["#meta"]["replay_step"] == 9


def test_the_echo_agrees() -> None:
    system = _system()
    steps = _path(system, HAPPY)
    tally = Tally()
    run_replays(REPLAY, system, RELEASE, [ReplayTrace("witness:X", steps)], _echo(system, steps).ask, tally,
                protocol="zk_migration", config="small")
    assert tally.disagreements == 0 and tally.decisions == 3


def test_a_timeout_is_retried_once_and_then_reported_never_a_pass() -> None:
    system = _system()
    steps = _path(system, HAPPY)
    once = _echo(system, steps, timeouts=1)
    tally = Tally()
    out = run_replays(REPLAY, system, RELEASE, [ReplayTrace("w", steps)], once.ask, tally, protocol="p", config="c")
    assert out.retried == 1 and out.timed_out == 0 and tally.disagreements == 0
    assert [r.get("attempt") for r in once.asked] == [None, 2]  # the retry is a request of its own (no cache hit)
    twice = _echo(system, steps, timeouts=2)
    tally = Tally()
    out = run_replays(REPLAY, system, RELEASE, [ReplayTrace("w", steps)], twice.ask, tally, protocol="p", config="c")
    assert out.retried == 1 and out.timed_out == 1 and len(twice.asked) == 2
    assert tally.kinds == {"replay.timeout": {"decisions": 1, "disagreements": 1}}
    assert "timed out twice" in tally.found["replay.timeout"][0].difference


def test_a_check_counts_replay_disagreements_with_the_states(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through run_check (the states' questions left out): a planted difference makes the verdict disagree, exit 3."""

    class Planted(_Echo):
        def ask(self, release: str, requests: Sequence[Mapping[str, Any]]) -> list[Any]:
            return [{"steps": [{"states": {"0": "DUAL_WRITE"}, "writes": [], "records": [], "blocked": {},
                                "faults": []} for _ in r["steps"]], "timed_out": None} for r in requests]

    monkeypatch.setattr(ZkMigrationOracle, "questions", lambda self, system, state, release: [])
    result = run_check("zk_migration", "3.9.2", "small", traces=2, replay_client=Planted({}))
    assert result.kinds["replay.driverStates"]["disagreements"] > 0 and int(result.exit_code) == 3
    assert result.client["replay"]["sources"]["walk"] == 2
    kept = [f for f in result.disagreements if f.kind == "replay.driverStates"]
    assert kept and kept[0].trace is not None and kept[0].difference.startswith("step 0: driver states")


@needs_java
def test_a_real_replay_on_kafka_3_9_2_agrees() -> None:
    system = _system()
    steps = _path(system, HAPPY)
    rb = replay_binding(BINDING, REPLAY, system.config)
    client = replay_client(rb, None, None)
    try:
        tally = Tally()
        run_replays(REPLAY, system, RELEASE, [ReplayTrace("witness:happy", steps)], client.ask, tally,
                    protocol="zk_migration", config="small")
        answer = client.ask("3.9.2", [REPLAY.question(system, _pairs(steps), RELEASE).request])[0]
    finally:
        client.close()
    assert tally.disagreements == 0, [f.difference for fs in tally.found.values() for f in fs]
    assert [r["states"]["0"] for r in answer["steps"]][-4:] == ["KRAFT_CONTROLLER_TO_BROKER_COMM", "DUAL_WRITE",
                                                                "DUAL_WRITE", "DUAL_WRITE"]
    assert answer["steps"][12]["writes"][0] == {"op": "createTopic", "voter": 0, "record": 1, "sync": False}
    assert answer["steps"][6]["blocked"] == {"0": "begin"}  # held at the metadata layer's beginMigration


@needs_java
def test_a_dying_replay_jvm_is_one_line_with_its_stderr_tail_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay's JVM (only it) is started with a handler class that is not there: it dies before its ready
    line, and the check says so in one line with the JVM's stderr tail, no summary written."""
    from rollcheck.oracle import jvm

    real = jvm.OracleJVM.argv

    def argv(self: jvm.OracleJVM) -> list[str]:
        args = real.fget(self)  # type: ignore[attr-defined]
        return [*args[:-1], "org.apache.kafka.metadata.migration.Gone"] if self.built.adapter == "driver-3.7" \
            else args

    monkeypatch.setattr(jvm.OracleJVM, "argv", property(argv))
    assert main(["kafka", "zk_migration", "--release", "3.9.2", "--config", "small", "--traces", "1",
                 "--out", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "stderr ends" in err[0] and "Gone" in err[0], err
    assert not (tmp_path / "zk_migration-3.9.2-small" / "summary.json").exists()  # no partial verdict


@needs_java
@pytest.mark.spark
def test_spark_replays_give_the_local_result(spark: Any) -> None:
    local = run_check("zk_migration", "3.9.2", "small", traces=3)
    dist = run_check("zk_migration", "3.9.2", "small", traces=3, engine="spark", spark=spark)
    assert {k: v for k, v in dist.kinds.items() if k.startswith("replay")} == \
        {k: v for k, v in local.kinds.items() if k.startswith("replay")}
    assert local.client["replay"]["traces"] == dist.client["replay"]["traces"] > 3
    assert [f.difference for f in dist.disagreements] == [f.difference for f in local.disagreements]


def test_protocol_entry_names_the_binding() -> None:
    assert PROTOCOL.oracle is not None and "zk_migration.oracle" in PROTOCOL.oracle


def test_the_kafka_16171_story_is_a_trace_of_the_reference() -> None:
    from rollcheck.oracle.replay import follow

    config, actions = REPLAY.story("KAFKA-16171")  # type: ignore[misc]
    system = ZkMigrationSystem(BINDING.config_for(config, find_release(BINDING, "3.6.1")))
    steps = follow(system, actions)
    stale = steps[14]  # the deposed controller's dual write, after the new one's activation
    assert repr(stale.action) == "DualWrite(voter=0)" and stale.state.leader == 1
    assert REPLAY.question(system, _pairs(steps), RELEASE).expected[-1]["writes"] == [
        {"op": "createTopic", "voter": 1, "record": 2}]
    assert REPLAY.story("nope") is None
    assert any(b.id == "KAFKA-16171" and b.extra["replay_story"] == "KAFKA-16171" for b in BINDING.bugs)


@needs_java
def test_kafka_16171_is_refound_on_3_6_1_and_fixed_in_3_6_2() -> None:
    from rollcheck.oracle.bugs import run_story

    buggy = run_story("zk_migration", "KAFKA-16171", "3.6.1")
    assert buggy.verdict == "disagree" and buggy.kinds["replay.zkWrites"]["disagreements"] == 1
    (f,) = buggy.disagreements
    assert f.difference == "step 20: ZooKeeper writes ['createTopic@1 r2'] expected, Kafka's []"
    assert f.trace is not None and f.trace["#meta"]["replay_source"] == "story:KAFKA-16171"
    assert run_story("zk_migration", "KAFKA-16171", "3.6.2").verdict == "agree"
