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
    # the catalog once, the 3.3 snapshot, then one updateFeatures per request the operator may issue
    assert kinds[:2] == ["catalog", "featureSnapshot"] and set(kinds[2:]) == {"updateFeatures"}
    assert len(kinds) - 2 == len(system._requests)
    view = controller_view(system.controller(state))
    assert view["quorum"] == [0, 1, 2] and view["finalized"] == {"metadata.version": 5}
    assert view["brokers"] == {"3": {"metadata.version": [1, 5]}}
    # states that share the controller's view share the Question objects (compared once per batch)
    again = list(ORACLE.questions(system, state, release))
    assert all(a is b for a, b in zip(qs[1:], again[1:], strict=True))


@needs_java
def test_small_agrees_with_kafka_3_3_2() -> None:
    result = run_check("metadata_version", "3.3.2", "small")
    assert result.verdict == "agree", [f.difference for f in result.disagreements]
    assert result.states > 1000 and result.decisions > 20_000
    assert set(result.kinds) == {"catalog", "featureSnapshot", "updateFeatures"}


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
