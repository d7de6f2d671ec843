"""The Kafka oracle binding of streams_probing (reference_impl/streams_probing/oracle.py): the questions' shape at a
few states (no Java), one real check against Kafka 2.0.1's jars, and KAFKA-8649 re-found on the jars (2.3.0
disagrees, 2.3.1 agrees). The adapters build through the engine on first use (Maven Central), into the user's
cache (~/.cache/rollcheck, or $ROLLCHECK_CACHE): about 15 s per release the first time, nothing afterwards."""

from __future__ import annotations

import dataclasses

import pytest

from reference_impl.streams_probing.oracle import ORACLE, release_epoch
from reference_impl.streams_probing.protocol import PROTOCOL, SMALL
from rollcheck.oracle.binding import OracleBinding
from rollcheck.oracle.check import find_release, run_check
from rollcheck.oracle.tools import java_problem

_NO_JAVA = java_problem()
needs_java = pytest.mark.skipif(_NO_JAVA is not None, reason=f"Kafka oracle: {_NO_JAVA}")


def test_binding_shape() -> None:
    assert isinstance(ORACLE, OracleBinding)
    names = [r.name for r in ORACLE.releases]
    for must in ("0.10.1.1", "1.1.1", "2.0.1", "2.1.1", "2.3.1", "2.4.1", "4.4.0"):
        assert must in names
    adapters = {a.name for a in ORACLE.adapters}
    assert {r.adapter for r in ORACLE.releases} <= adapters
    assert {b.id for b in ORACLE.bugs} >= {"KAFKA-6054", "KAFKA-8649"}
    assert all(b.story and b.source for b in ORACLE.bugs)


def test_config_for_retargets_the_upgrade() -> None:
    small = dataclasses.replace(SMALL)
    assert ORACLE.config_for(small, find_release(ORACLE, "2.0.1")).profile == "kafka"
    c = ORACLE.config_for(small, find_release(ORACLE, "1.1.1"))  # the upgrade from 1.1 (two bounces)
    assert (c.from_release, c.to_release, c.two_bounces) == ("1.1", "post-2.0", True)
    c = ORACLE.config_for(small, find_release(ORACLE, "4.4.0"))
    assert (c.from_release, c.to_release) == ("2.0", "3.9")
    assert release_epoch("2.4.1").name == "3.9"
    with pytest.raises(ValueError):
        ORACLE.config_for(dataclasses.replace(SMALL, profile="kafka-2.0"), find_release(ORACLE, "2.0.1"))


def test_questions_at_states() -> None:
    rel = find_release(ORACLE, "2.3.1")
    system = PROTOCOL.build(ORACLE.config_for(SMALL, rel))
    (initial,) = list(system.initial_states())
    qs = list(ORACLE.questions(system, initial, rel))
    kinds = [q.kind for q in qs]
    # two 2.0 members before the first rebalance: each one's subscription, read by a 2.0 leader; upgrade.from
    assert kinds.count("subscription.encode") == 2 and kinds.count("subscription.decode") == 2
    assert kinds.count("config.upgradeFrom") == 2
    enc = next(q for q in qs if q.kind == "subscription.encode")
    assert enc.release == "2.0.1"  # the 2.0 member's own classes: not the row's (2.3.1 stands for post-2.0)
    assert enc.request["op"] == "subscription.encode" and enc.request["version"] == 3
    assert isinstance(enc.expected, str) and enc.expected.startswith("00000003" "00000003")
    assert ORACLE.compare(enc, enc.expected) is None
    assert ORACLE.compare(enc, "00") is not None
    # a state with assignments delivered: their encode by the leader's release and decode by the member's
    _, after = next(iter(system.successors(initial)))
    qs2 = list(ORACLE.questions(system, after, rel))
    assert {"assignment.encode", "assignment.decode"} <= {q.kind for q in qs2}
    # cheap: the same Question objects are handed out again for the same decision
    again = list(ORACLE.questions(system, initial, rel))
    assert all(a is b for a, b in zip(qs, again, strict=True))
    exc = next(q for q in qs if q.kind == "config.upgradeFrom")
    assert ORACLE.compare(exc, {"defined": True, "accepted": True}) is None
    assert ORACLE.compare(exc, {"exception": "java.lang.NoSuchFieldError", "message": "x"}) is not None


@needs_java
def test_real_check_agrees_at_2_0_1() -> None:
    result = run_check("streams_probing", "2.0.1", "small")
    assert result.verdict == "agree", [f.difference for f in result.disagreements]
    assert result.states > 50 and result.decisions > 300
    assert set(result.kinds) == {"subscription.encode", "subscription.decode", "assignment.encode",
                                 "assignment.decode", "config.upgradeFrom"}


@needs_java
def test_kafka_8649_refound() -> None:
    buggy = run_check("streams_probing", "2.3.0", "small")
    assert buggy.kinds["assignment.encode"]["disagreements"] > 0
    first = next(f for f in buggy.disagreements if f.kind == "assignment.encode")
    assert first.expected[8:16] == "00000003" and first.answer[8:16] == "00000004"  # supported version 3 vs 4
    # Every one of them is KAFKA-8649's (its signature): the row passes as that known bug, unless --strict.
    assert (buggy.verdict, int(buggy.exit_code), buggy.known_bugs) == ("known-bug", 0, {"KAFKA-8649": 16})
    assert first.known == "KAFKA-8649" and buggy.unexplained == 0
    fixed = run_check("streams_probing", "2.3.1", "small")
    assert fixed.verdict == "agree", [f.difference for f in fixed.disagreements]


@needs_java
@pytest.mark.parametrize(("mutation", "kind"), [
    ("commonly_supported_is_max", "assignor.assign"),  # the leader's commonly supported version wrong (STR-M9)
    ("assign_at_leader_version", "assignor.assign"),  # the leader assigns at its own version (STR-M2)
    ("member_never_upgrades", "assignor.onAssignment"),  # the member never returns to the higher version
])
def test_kafkas_assignor_catches_a_broken_reference(mutation: str, kind: str) -> None:
    """Kafka's own StreamsPartitionAssignor (3.9.2) agrees with the reference on `small` and disagrees with it
    where the reference's assign() / on_assignment() is broken: the assignor questions can fail."""
    from rollcheck.explore.explorer import reachable_states
    from rollcheck.oracle.client import OracleClient

    release = find_release(ORACLE, "3.9.2")
    config = ORACLE.config_for(SMALL, release)
    with OracleClient(ORACLE) as client:
        for mutations, want in ((frozenset(), 0), (frozenset({mutation}), 1)):
            system = PROTOCOL.build(dataclasses.replace(config, mutations=mutations))
            asked = [q for s in reachable_states(system)[0] for q in ORACLE.questions(system, s, release)
                     if q.kind == kind]
            answers = client.ask(release.name, [q.request for q in asked])
            wrong = sum(ORACLE.compare(q, a) is not None for q, a in zip(asked, answers, strict=True))
            assert asked and (wrong > 0) is bool(want), (mutation, len(asked), wrong)


def test_the_known_bugs_signatures_accept_their_disagreements_only() -> None:
    """KAFKA-8649's and KAFKA-6054's signatures (what makes a buggy row pass as the known bug) accept the bug's
    answer and nothing else: a byte wrong elsewhere, another version, another kind stay new findings."""
    sig = {b.id: b.signature for b in ORACLE.bugs}
    s8649, s6054 = sig["KAFKA-8649"], sig["KAFKA-6054"]
    assert s8649 is not None and s6054 is not None
    ref = "0000000300000003" + "0000000100000000"
    req = {"version": 3, "latestSupported": 3}
    assert s8649("assignment.encode", req, ref, "0000000300000004" + "0000000100000000")
    assert not s8649("assignment.encode", req, ref, "0000000300000004" + "0000000100000001")  # another byte too
    assert not s8649("assignment.encode", req, ref, "0000000300000005" + "0000000100000000")
    assert not s8649("assignment.encode", {"version": 4, "latestSupported": 4}, ref, ref)
    assert not s8649("subscription.encode", req, ref, "0000000300000004" + "0000000100000000")
    assert s6054("config.upgradeFrom", {"value": "0.10.0"}, {"accepted": True, "defined": True},
                 {"accepted": True, "defined": False})
    assert not s6054("config.upgradeFrom", {"value": "1.1"}, {"accepted": True, "defined": True},
                     {"accepted": True, "defined": False})
    no_api = {"exception": "rollcheck.streams.StreamsBase$NoSuchApi", "message": "..."}
    assert s6054("subscription.encode", {"version": 1}, "00", no_api)
    assert not s6054("subscription.encode", {"version": 2}, "00", no_api)
    decoded = {"version": 1, "latestSupported": -1, "activeTasks": [[0, 0]]}
    assert s6054("assignment.decode", {}, decoded, {**decoded, "version": 2})
    assert not s6054("assignment.decode", {}, decoded, {**decoded, "version": 2, "activeTasks": []})
