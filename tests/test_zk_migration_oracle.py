"""The zk_migration Kafka oracle binding against Apache Kafka's released classes (built by Maven on first use, into
the test session's cache): the config a row checks and the questions at a state (no Java), a real check that agrees,
a planted reference bug that Kafka's classes refuse, the hand-transcribed cases of tests/kafka put to the jars, and
the 3.4 bugs re-found."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from reference_impl.metadata_version.catalog import MetadataVersion as MV
from reference_impl.zk_migration import api
from reference_impl.zk_migration.api import MigrationDriverState as D
from reference_impl.zk_migration.config import ZkMigrationConfig
from reference_impl.zk_migration.oracle import ORACLE, activation_answer
from reference_impl.zk_migration.protocol import INCOMPATIBLE, MISCONFIGURED, PROTOCOL, SMALL
from rollcheck.core.transition import ProtocolEntry
from rollcheck.oracle.binding import Question
from rollcheck.oracle.bugs import run_bugs
from rollcheck.oracle.check import find_release, run_check
from rollcheck.oracle.client import OracleClient
from rollcheck.oracle.tools import java_problem
from tests.kafka.test_activation_records_generator_test import EMPTY_LOG, NON_EMPTY_LOG

needs_java = pytest.mark.skipif(java_problem() is not None, reason=str(java_problem()))


def test_config_for_moves_the_quorum_to_the_release_level() -> None:
    c = ORACLE.config_for(SMALL, find_release(ORACLE, "3.9.2"))
    assert (c.profile, c.quorum_level, c.broker_ibp) == ("kafka", MV.IBP_3_9_IV0.feature_level,
                                                        MV.IBP_3_9_IV0.feature_level)
    assert ORACLE.config_for(SMALL, find_release(ORACLE, "3.6.0")).quorum_level == MV.IBP_3_6_IV2.feature_level
    # 3.4 / 3.5: the reference's 3.9 rules bootstrap a migration only from 3.6-IV1, which stays
    old = ORACLE.config_for(SMALL, find_release(ORACLE, "3.4.1"))
    assert (old.profile, old.quorum_level) == ("kafka", SMALL.quorum_level)
    tiers = {r.name for r in ORACLE.releases if "ci" in r.tiers}
    assert tiers == {"3.5.2", "3.6.2", "3.7.2", "3.8.1", "3.9.2"}  # every 3.4.x disagrees by design


def _questions(release: str, config: ZkMigrationConfig = SMALL) -> Iterator[tuple[Any, list[Question]]]:
    r = find_release(ORACLE, release)
    system = PROTOCOL.build(ORACLE.config_for(config, r))
    seen, frontier = set(), list(system.initial_states())
    while frontier:
        state = frontier.pop()
        if state in seen:
            continue
        seen.add(state)
        yield state, list(ORACLE.questions(system, state, r))
        frontier.extend(nxt for _, nxt in system.successors(state))


def test_questions_at_the_initial_state() -> None:
    _, qs = next(_questions("3.9.2"))
    kinds = [q.kind for q in qs]
    assert kinds.count("driverStates") == 1 and kinds.count("driverStateTable") == len(D) ** 2
    # the empty log twice (migration on and off), the state's log twice
    assert kinds.count("activationRecords") == 4 and kinds.count("zkMigrationState") == 1
    zk = next(q for q in qs if q.kind == "zkMigrationState")
    assert zk.request == {"op": "zkMigrationState", "name": "PRE_MIGRATION"}
    assert zk.expected == {"code": 2, "of": "PRE_MIGRATION"}
    # 3.4 / 3.5 have no ActivationRecordsGenerator: not asked
    _, old = next(_questions("3.5.2"))
    assert "activationRecords" not in {q.kind for q in old}


def test_every_question_kind_is_reached_and_shared() -> None:
    kinds: dict[str, int] = {}
    changes = set()
    for _, qs in _questions("3.9.2"):
        for q in qs:
            kinds[q.kind] = kinds.get(q.kind, 0) + 1
            if q.kind == "driverStateChange":
                changes.add((q.request["from"], q.request["to"], q.action))
    assert set(kinds) == {"driverStates", "driverStateTable", "zkMigrationState", "driverStateChange",
                          "controllerReadiness", "activationRecords", "registerBroker"}
    assert ("ZK_MIGRATION", "SYNC_KRAFT_TO_ZK", "CompleteMigration") in changes
    assert ("WAIT_FOR_CONTROLLER_QUORUM", "WAIT_FOR_BROKERS", "DriverWaitForQuorum") in changes


def test_readiness_follows_the_release_rule() -> None:
    """3.4 - 3.6 rows: the other running voters' ApiVersions (3.5's rule; 3.4's stub gives no reason); 3.7+: the
    controller registrations."""
    for release, reason in (("3.4.1", None), ("3.6.2", "Nodes don't enable"), ("3.7.2", "has not enabled")):
        asked = [q for _, qs in _questions(release, MISCONFIGURED) for q in qs
                 if q.kind == "controllerReadiness"]
        assert {q.expected["ready"] for q in asked} == {True, False}
        reasons = {q.expected.get("reason") for q in asked}
        if reason is None:
            assert all("reason" not in q.expected for q in asked)
        else:
            assert any(r is not None and reason in r for r in reasons), reasons


def test_compare_normal_forms() -> None:
    _, qs = next(_questions("3.9.2"))
    states = next(q for q in qs if q.kind == "driverStates")
    assert ORACLE.compare(states, {"class": "MigrationDriverState", **states.expected}) is None
    table = next(q for q in qs if q.kind == "driverStateTable")
    assert "missing" in str(ORACLE.compare(table, {"missing": ["SYNC_KRAFT_TO_ZK"]}))
    act = next(q for q in qs if q.kind == "activationRecords")
    assert ORACLE.compare(act, {"exception": "java.lang.RuntimeException", "message": "x"}) is not None


@pytest.fixture(scope="module")
def client() -> Iterator[OracleClient]:
    with OracleClient(ORACLE) as c:
        yield c


@needs_java
def test_small_agrees_with_kafka_3_9_2() -> None:
    result = run_check("zk_migration", "3.9.2", "small")
    assert result.verdict == "agree", [f.difference for f in result.disagreements]
    assert result.states == 1440 and result.decisions > 4000
    ours = {"driverStates", "driverStateTable", "zkMigrationState", "driverStateChange", "controllerReadiness",
            "activationRecords", "registerBroker"}
    assert ours <= set(result.kinds)


@needs_java
def test_a_reference_without_the_quorum_check_disagrees_with_kafka() -> None:
    """A planted bug: the reference's driver starts without the controller quorum (KAFKA-14909 as a mutation),
    so where a voter lacks the migration config it says ready and Kafka 3.9's QuorumFeatures does not."""
    mutant = dataclasses.replace(MISCONFIGURED, mutations=frozenset({"no_controller_quorum_check"}))
    entry: ProtocolEntry = dataclasses.replace(PROTOCOL, configs={**PROTOCOL.configs, "mutant": mutant})
    result = run_check(entry, "3.9.2", "mutant")
    assert result.verdict == "disagree" and result.kinds["controllerReadiness"]["disagreements"] > 0
    first = next(f for f in result.disagreements if f.kind == "controllerReadiness")
    assert "has not enabled zookeeper.metadata.migration.enable" in str(first.answer)
    assert first.trace is not None and first.trace["states"]


@needs_java
@pytest.mark.parametrize("release", ["3.6.2", "3.9.2"])
def test_refused_registrations_agree_on_the_jars(client: OracleClient, release: str) -> None:
    """``incompatible``: a broker restarted one IBP below the quorum is refused (UnsupportedVersionException; the
    message compared at 3.9); a controller without the migration config refuses every ZK broker."""
    asked = {q.request["brokerId"]: q for _, qs in _questions(release, INCOMPATIBLE) for q in qs
             if q.kind == "registerBroker" and not q.expected["accepted"]}
    assert asked and {q.expected["error"] for q in asked.values()} == {"UnsupportedVersionException"}
    qs = list(asked.values())
    for q, answer in zip(qs, client.ask(release, [q.request for q in qs]), strict=True):
        assert ORACLE.compare(q, answer) is None, (q.request, answer)
    off = dataclasses.replace(qs[0], request={**qs[0].request, "zkMigrationEnabled": False}, expected={
        "accepted": False, "error": "BrokerIdNotRegisteredException",
        "message": "Controller does not support registering ZK brokers."})
    assert ORACLE.compare(off, client.ask("3.9.2", [off.request])[0]) is None


@needs_java
def test_transcribed_driver_table_on_the_jars(client: OracleClient) -> None:
    pairs = [(a, b) for a in D for b in D]
    answers = client.ask("3.9.2", [{"op": "driverStateChange", "from": a.name, "to": b.name} for a, b in pairs])
    assert [x["valid"] for x in answers] == [api.is_valid_state_change(a, b) for a, b in pairs]


@needs_java
def test_transcribed_quorum_features_cases_on_the_jars(client: OracleClient) -> None:
    # tests/kafka/test_quorum_features_test.py (QuorumFeaturesTest at 3.9): quorum 0, 1, 2, node 0
    cases = [(MV.IBP_3_4_IV0, {}), (MV.IBP_3_7_IV0, {}), (MV.IBP_3_7_IV0, {0: False}),
             (MV.IBP_3_7_IV0, {0: True, 1: True, 2: True})]
    answers = client.ask("3.9.2", [{"op": "controllerReadiness", "nodeId": 0, "quorum": [0, 1, 2],
                                    "level": mv.feature_level, "controllers": {str(k): v for k, v in c.items()}}
                                   for mv, c in cases])
    for (mv, c), answer in zip(cases, answers, strict=True):
        reason = api.reason_all_controllers_zk_migration_not_ready(mv, (0, 1, 2), c)
        assert answer == {"ready": reason is None, "reason": reason}


@needs_java
def test_transcribed_activation_cases_on_the_jars(client: OracleClient) -> None:
    """tests/kafka/test_activation_records_generator_test.py's cases that generate() can express (the bootstrap at
    the metadata.version; a log with a metadata.version record), each at 3.9.2."""
    requests, expected = [], []
    for case in EMPTY_LOG.values():
        if case.bootstrap is not case.metadata_version:
            continue
        requests.append({"op": "activationRecords", "empty": True, "transactionStartOffset": case.offset,
                         "zkMigrationEnabled": case.migration, "level": case.bootstrap.feature_level, "state": None,
                         "source": "test"})
        expected.append(activation_answer(True, case.offset, case.migration, case.bootstrap.feature_level, None,
                                          "test"))
    for ne in NON_EMPTY_LOG.values():
        if ne.metadata_version is None:
            continue
        requests.append({"op": "activationRecords", "empty": False, "transactionStartOffset": ne.offset,
                         "zkMigrationEnabled": ne.migration, "level": ne.metadata_version.feature_level,
                         "state": None if ne.state is None else ne.state.name, "source": "test"})
        expected.append(activation_answer(False, ne.offset, ne.migration, ne.metadata_version.feature_level,
                                          ne.state, "test"))
    assert len(requests) >= 20
    q = next(q for _, qs in _questions("3.9.2") for q in qs if q.kind == "activationRecords")
    for request, want, answer in zip(requests, expected, client.ask("3.9.2", requests), strict=True):
        assert ORACLE.compare(dataclasses.replace(q, request=request, expected=want), answer) is None, request


@needs_java
def test_the_3_4_bugs_are_refound_and_fixed_in_3_5() -> None:
    outcomes = {o.bug.id: o for o in run_bugs("zk_migration")}
    assert set(outcomes) == {"KAFKA-14909", "KAFKA-15010", "KAFKA-14805", "KAFKA-16171"}  # 16171: trace replay
    for o in outcomes.values():
        assert o.refound and o.fixed_agree, o.to_json()
    assert "SYNC_KRAFT_TO_ZK" in str(outcomes["KAFKA-15010"].buggy[0])
    assert "ready: reference False, Kafka True" in str(outcomes["KAFKA-14909"].buggy[0])


def test_the_3_4_bugs_signatures_accept_their_disagreements_only() -> None:
    """What lets a 3.4 row pass as its known bugs (KAFKA-14909, -15010, -14805): each signature accepts that bug's
    answer and refuses a neighbouring wrong one."""
    sig = {b.id: b.signature for b in ORACLE.bugs}
    s14909, s15010, s14805 = sig["KAFKA-14909"], sig["KAFKA-15010"], sig["KAFKA-14805"]
    assert s14909 is not None and s15010 is not None and s14805 is not None
    assert s14909("controllerReadiness", {}, {"ready": False}, {"ready": True, "reason": None})
    assert not s14909("controllerReadiness", {}, {"ready": True}, {"ready": False, "reason": "x"})
    states = ["ZK_MIGRATION", "SYNC_KRAFT_TO_ZK", "DUAL_WRITE"]
    assert s15010("driverStates", {}, {"states": states}, {"states": ["ZK_MIGRATION", "DUAL_WRITE"]})
    assert not s15010("driverStates", {}, {"states": states}, {"states": ["DUAL_WRITE"]})
    change = {"from": "ZK_MIGRATION", "to": "SYNC_KRAFT_TO_ZK"}
    assert s15010("driverStateChange", change, {"valid": True}, {"missing": ["SYNC_KRAFT_TO_ZK"]})
    assert not s15010("driverStateChange", change, {"valid": True}, {"missing": ["DUAL_WRITE"]})
    straight = {"from": "ZK_MIGRATION", "to": "KRAFT_CONTROLLER_TO_BROKER_COMM"}
    assert s15010("driverStateTable", straight, {"valid": False}, {"valid": True})
    assert not s15010("driverStateTable", {"from": "DUAL_WRITE", "to": "ZK_MIGRATION"}, {"valid": False},
                      {"valid": True})
    assert s14805("zkMigrationState", {"name": "PRE_MIGRATION"}, {"code": 2}, {"code": 1})
    assert not s14805("zkMigrationState", {"name": "POST_MIGRATION"}, {"code": 3}, {"code": 1})
    assert s14805("driverStateTable", {"from": "WAIT_FOR_CONTROLLER_QUORUM", "to": "BECOME_CONTROLLER"},
                  {"valid": True}, {"valid": False})
