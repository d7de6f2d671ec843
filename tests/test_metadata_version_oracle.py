"""The metadata_version Kafka oracle binding against Apache Kafka's released classes (built by Maven on first use,
into the test session's cache): the config a row checks, the questions at a state, a real check that agrees, a
planted reference bug that Kafka's classes refuse, and KAFKA-14316 re-found on 3.3.1 and fixed in 3.3.2."""

from __future__ import annotations

import dataclasses

import pytest

from reference_impl.metadata_version.oracle import ORACLE, controller_view
from reference_impl.metadata_version.protocol import PREVIEW, PROTOCOL, SMALL
from rollcheck.oracle.bugs import run_bugs
from rollcheck.oracle.check import find_release, run_check
from rollcheck.oracle.tools import java_problem

needs_java = pytest.mark.skipif(java_problem() is not None, reason=str(java_problem()))


def test_config_for_maps_the_example_catalog_onto_the_release() -> None:
    c = ORACLE.config_for(SMALL, find_release(ORACLE, "3.9.2"))
    assert (c.profile, c.catalog, c.kafka_release) == ("kafka", "kafka", "3.9")
    # V1..V5 stand for 3.7-IV3 .. 3.9-IV0 (17..21); the old binary reads up to V3 (19), both from 3.0-IV1.
    assert [(s.name, s.min_level, s.max_level) for s in c.softwares] == [("old", 1, 19), ("new", 1, 21)]
    assert c.levels == (17, 18, 19, 20, 21) and c.record_levels == (20, 21)
    four = ORACLE.config_for(SMALL, find_release(ORACLE, "4.0.2"))
    assert four.kafka_release == "4.0" and [s.min_level for s in four.softwares] == [7, 7]
    with pytest.raises(ValueError, match=r"preview cluster .* cannot start on Kafka 4\.0\.2"):
        ORACLE.config_for(PREVIEW, find_release(ORACLE, "4.0.2"))
    with pytest.raises(ValueError, match=r"newer than Kafka 3\.3\.2"):
        ORACLE.config_for(PROTOCOL.configs["kafka-catalog"], find_release(ORACLE, "3.3.2"))


def test_questions_at_the_initial_state() -> None:
    release = find_release(ORACLE, "3.3.2")
    system = PROTOCOL.build(ORACLE.config_for(SMALL, release))
    state = next(iter(system.initial_states()))
    qs = list(ORACLE.questions(system, state, release))
    kinds = [q.kind for q in qs]
    # the catalog and QuorumFeatures' default range once, MetadataVersion's parse of every member, bare release and
    # probe text and its look-up of every level from -2 to 9 (and 999), BootstrapMetadata of each of 3.3.2's seven
    # levels (no ActivationRecordsGenerator before 3.6), the 3.3 snapshot, a registration per software, then one
    # updateFeatures per request the operator may issue
    assert kinds[:2] == ["catalog", "quorumFeatures.default"]
    parses, levels = kinds.count("parseVersion"), kinds.count("fromFeatureLevel")
    assert levels == 13 and parses > 41  # 41 members (0.8.0 .. 3.3-IV3), their bare releases and the probes
    assert kinds[2:2 + parses + levels] == ["parseVersion"] * parses + ["fromFeatureLevel"] * levels
    by_request = {q.request.get("text", q.request.get("level")): q.expected for q in qs[2:2 + parses + levels]}
    assert by_request["3.3.1"] == {"version": "3.3-IV3", "level": 7} and by_request["0.8.0"]["level"] == -1
    assert by_request["3.3-IV9"] == {"error": "Version 3.3-IV9 is not a valid version"}
    assert by_request[999] == {"error": "No MetadataVersion with metadata version 999"}
    rest = kinds[2 + parses + levels:]
    assert rest[:7] == ["bootstrapMetadata"] * 7
    assert rest[7:10] == ["featureSnapshot", "registerBroker", "registerBroker"]
    assert set(rest[10:]) == {"updateFeatures"} and len(rest) - 10 == len(system._requests)
    assert qs[1].expected == {"features": {"metadata.version": [1, 7]}}
    # below 3.3-IV0 (level 4) BootstrapMetadata refuses, in 3.3's words; from it, one FeatureLevelRecord
    boot = qs[2 + parses + levels]
    assert boot.request == {"op": "bootstrapMetadata", "level": 1, "source": "format command"}
    assert boot.expected == {"exception": "java.lang.RuntimeException", "message": (
        "Bootstrap metadata versions before 3.3-IV0 are not supported. Can't load metadata from format command")}
    at = 2 + parses + levels  # where BootstrapMetadata's questions begin
    assert qs[at + 3].expected == {"metadataVersion": 4, "records": [["metadata.version", 4]]}
    # the old binary (V1..V3 of the example: 1..5 on 3.3.2) may register at the initial level 5
    assert qs[at + 9].request["features"] == {"metadata.version": [1, 5]}
    assert qs[at + 9].expected["error"]["code"] == 0
    view = controller_view(system.controller(state))
    assert view["quorum"] == [0, 1, 2] and view["finalized"] == {"metadata.version": 5}
    assert view["brokers"] == {"3": {"metadata.version": [1, 5]}}
    # states that share the controller's view share the Question objects (compared once per batch)
    again = list(ORACLE.questions(system, state, release))
    assert all(a is b for a, b in zip(qs[at + 7:], again[at + 7:], strict=True))


def test_the_activation_question_from_3_6() -> None:
    for name, config, expected in (
            # an empty log gets the bootstrap record; a preview cluster's log (records, no FeatureLevelRecord) none,
            # and its controller runs at 3.0-IV1
            ("3.6.2", SMALL, None), ("3.9.2", PREVIEW, {"records": [], "metadataVersion": 1})):
        release = find_release(ORACLE, name)
        system = PROTOCOL.build(ORACLE.config_for(config, release))
        state = next(iter(system.initial_states()))
        [q] = [q for q in ORACLE.questions(system, state, release) if q.kind == "activation"]
        level = state.log[0]
        assert q.request["empty"] is (expected is None)
        assert q.expected == (expected or {"records": [["metadata.version", level]], "metadataVersion": level})
    release = find_release(ORACLE, "3.5.2")
    system = PROTOCOL.build(ORACLE.config_for(SMALL, release))
    state = next(iter(system.initial_states()))
    assert not [q for q in ORACLE.questions(system, state, release) if q.kind == "activation"]


def test_the_registration_check_per_release_line() -> None:
    from reference_impl.metadata_version.api import VersionRange, registration_feature_error

    offered = {"metadata.version": VersionRange(1, 5)}
    old = registration_feature_error(offered, {"metadata.version": 6}, "3.3")
    new = registration_feature_error(offered, {"metadata.version": 6}, "3.9")
    assert old is not None and old.message == ("Unable to register because the broker does not support version 6 "
                                               "of metadata.version. It wants a version between 1 and 5, inclusive.")
    assert new is not None and "does not support finalized version 6" in str(new.message)
    # 3.3-3.8 check only what the controller finalized; 3.9 on checks the defaults and every finalized feature
    assert registration_feature_error({"group.version": VersionRange(1, 1)}, {}, "3.3") is None
    assert registration_feature_error({"group.version": VersionRange(1, 1)}, {}, "3.9") is not None
    assert registration_feature_error(offered, {"metadata.version": 3, "group.version": 1}, "3.3") is None
    assert registration_feature_error(offered, {"metadata.version": 3, "group.version": 1}, "3.9") is not None


@needs_java
def test_small_agrees_with_kafka_3_3_2() -> None:
    result = run_check("metadata_version", "3.3.2", "small")
    assert result.verdict == "agree", [f.difference for f in result.disagreements]
    assert result.states > 1000 and result.decisions > 20_000
    assert set(result.kinds) == {"catalog", "quorumFeatures.default", "bootstrapMetadata", "featureSnapshot",
                                 "registerBroker", "updateFeatures", "parseVersion", "fromFeatureLevel"}
    assert result.kinds["registerBroker"]["decisions"] > 1000


@needs_java
def test_a_reference_that_skips_the_broker_check_disagrees_with_kafka() -> None:
    mutant = dataclasses.replace(SMALL, mutations=frozenset({"skip_broker_check"}))
    entry = dataclasses.replace(PROTOCOL, configs={**PROTOCOL.configs, "mutant": mutant})
    result = run_check(entry, "3.3.2", "mutant")
    assert result.verdict == "disagree" and result.kinds["updateFeatures"]["disagreements"] > 0
    first = result.disagreements[0]
    assert "Broker 3 does not support the given version" in str(first.answer)
    assert first.trace is not None and first.trace["states"]


@needs_java
def test_kafka_14316_is_refound_on_3_3_1_and_fixed_in_3_3_2() -> None:
    (outcome,) = [o for o in run_bugs("metadata_version") if o.bug.id == "KAFKA-14316"]
    assert outcome.refound and outcome.fixed_agree, outcome.to_json()
    assert "NoSuchElementException" in str(outcome.buggy[0])


@needs_java
def test_the_4_4_line_agrees_and_its_own_rules_are_what_the_jars_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kafka 4.4.0 agrees on `small` with the 4.4 line's rules (levels up to 4.4-IV2, the 4.2 parse and downgrade
    words); with either rule taken back to 4.1's, its classes disagree: the new questions and words can fail."""
    from reference_impl.metadata_version import catalog as mv_catalog

    result = run_check("metadata_version", "4.4.0", "small")
    assert result.verdict == "agree", [f.difference for f in result.disagreements]
    assert result.kinds["parseVersion"]["decisions"] > 50 and result.kinds["fromFeatureLevel"]["decisions"] > 30
    line = mv_catalog.KAFKA_RELEASES["4.4"]
    monkeypatch.setitem(mv_catalog.KAFKA_RELEASES, "4.4", dataclasses.replace(line, stable_parse=False))
    parse = run_check("metadata_version", "4.4.0", "small")
    assert parse.kinds["parseVersion"]["disagreements"] > 0
    monkeypatch.setitem(mv_catalog.KAFKA_RELEASES, "4.4", dataclasses.replace(line, downgrade_words=False))
    words = run_check("metadata_version", "4.4.0", "small")
    first = next(f for f in words.disagreements if f.kind == "updateFeatures")
    assert "Unsupported metadata.version downgrade from" in str(first.answer)
