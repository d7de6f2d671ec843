"""The features Kafka oracle binding (reference_impl/features/oracle.py) against Apache Kafka's released ZooKeeper-mode
classes (kafka_oracle/features/zk-2.8, built by Maven on first use): the questions on a tiny config without Java, a
real check that agrees at 2.8.2, planted disagreements that must be reported, and the hand-transcribed cases of
tests/kafka/ put to the jars."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

import tests.kafka.test_broker_features_test as broker_features_t
import tests.kafka.test_feature_znode_test as znode_t
import tests.kafka.test_features_test as features_t
import tests.kafka.test_finalized_feature_cache_test as cache_t
import tests.kafka.test_finalized_version_range_test as finalized_range_t
import tests.kafka.test_supported_version_range_test as supported_range_t
import tests.kafka.test_update_features_test as update_t
from reference_impl.features import api
from reference_impl.features.api import FeatureZNode, FeatureZNodeStatus, finalized_features
from reference_impl.features.config import FeaturesConfig, Release
from reference_impl.features.oracle import ORACLE, admin_expected
from reference_impl.features.protocol import PROTOCOL, SMALL
from reference_impl.features.state import BrokerStatus
from reference_impl.features.system import FeaturesSystem
from rollcheck.oracle.check import find_release, run_check
from rollcheck.oracle.client import OracleClient
from rollcheck.oracle.tools import java_problem

needs_java = pytest.mark.skipif(java_problem() is not None, reason=str(java_problem()))
RELEASE = "2.8.2"

# One broker, old -> new and back (two restarts): a few hundred states, every question kind.
TINY = FeaturesConfig(brokers=1, max_restarts=2, max_epoch=2, levels=(0, 2), client=False,
                      releases=(Release("old", (("group_coordinator", 1, 1),)),
                                Release("new", (("group_coordinator", 1, 2),))))


def _states(system: Any, limit: int = 10_000) -> Iterator[Any]:
    seen: set[Any] = set()
    todo = list(system.initial_states())
    while todo and len(seen) < limit:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        yield s
        todo.extend(t for _, t in system.successors(s))


def test_config_for_runs_the_kafka_profile_at_every_release() -> None:
    assert [r.name for r in ORACLE.releases] == ["2.8.0", "2.8.1", "2.8.2", "3.2.0", "3.2.1", "3.2.2", "3.2.3",
                                                 "3.9.0", "3.9.1", "3.9.2"]
    assert [r.name for r in ORACLE.releases if "ci" in r.tiers] == ["2.8.2", "3.2.3", "3.9.2"]
    c = ORACLE.config_for(SMALL, find_release(ORACLE, "3.2.3"))
    assert (c.profile, c.kafka_release) == ("kafka", "2.8") and dataclasses.replace(c, profile="kip") == SMALL
    assert ORACLE.config_for(SMALL, find_release(ORACLE, "3.9.0")).kafka_release == "3.9"
    with pytest.raises(ValueError, match="not a features config"):
        ORACLE.config_for(object(), find_release(ORACLE, RELEASE))


def test_questions_on_a_tiny_config() -> None:
    release = find_release(ORACLE, RELEASE)
    system = FeaturesSystem(ORACLE.config_for(TINY, release))
    initial = next(iter(system.initial_states()))
    first = list(ORACLE.questions(system, initial, release))
    kinds = {q.kind for q in first}
    # the config's ranges and the Admin client's requests at the initial state; an election's write; the node is
    # still absent, so nothing decodes, and no broker has a read pending.
    assert kinds == {"versionRange", "admin.updateFeatures", "featureZNode.encode"}
    admin = [q for q in first if q.kind == "admin.updateFeatures"]
    assert len(admin) == 4  # levels 0 and 2, each with and without allowDowngrade; the dry runs are not asked
    refused = [q.expected for q in admin if "exception" in q.expected]
    assert refused == [{"exception": "java.lang.IllegalArgumentException", "message": "The allowDowngrade flag "
                        "should be set when the provided maxVersionLevel:0 is < 1."}]
    (encode,) = [q for q in first if q.kind == "featureZNode.encode"]
    assert encode.request == {"op": "featureZNode.encode", "status": 1, "features": {"group_coordinator": [1, 1]}}
    assert bytes.fromhex(encode.expected["data"]) == (
        b'{"features":{"group_coordinator":{"min_version_level":1,"max_version_level":1}},"version":1,"status":1}')
    elected = system.elect_controller(initial, 0)
    asked = list(ORACLE.questions(system, elected, release))
    assert {q.kind for q in asked} >= {"featureZNode.decode", "incompatibleFeatures", "finalizedFeatureCache"}
    (cache,) = [q for q in asked if q.kind == "finalizedFeatureCache"]
    assert cache.expected == {"accepted": True, "cache": {"features": {"group_coordinator": [1, 1]}, "epoch": 0}}
    # states that share /features share its Question objects (compared once per batch)
    again = [q for q in ORACLE.questions(system, elected, release) if q.kind == "featureZNode.decode"]
    assert again[0] is next(q for q in asked if q.kind == "featureZNode.decode")
    every = {q.kind for s in _states(system) for q in ORACLE.questions(system, s, release)}
    assert every == {"versionRange", "admin.updateFeatures", "featureZNode.encode", "featureZNode.decode",
                     "incompatibleFeatures", "finalizedFeatureCache"}


def test_an_incompatible_startup_read_is_a_refused_cache_update() -> None:
    release = find_release(ORACLE, RELEASE)
    system = PROTOCOL.build(ORACLE.config_for(TINY, release))
    refused = [q for s in _states(system) for q in ORACLE.questions(system, s, release)
               if q.kind == "finalizedFeatureCache" and not q.expected.get("accepted", True)]
    assert refused, "the tiny config reaches an old broker starting against level 2"
    assert refused[0].expected["message"].startswith(
        "FinalizedFeatureCache update failed since feature compatibility checks failed! Supported "
        "Features{(group_coordinator -> SupportedVersionRange[min_version:1, max_version:1])}")


def test_the_3_9_rules_hold_one_level_and_write_schema_version_2() -> None:
    release = find_release(ORACLE, "3.9.2")
    system = FeaturesSystem(ORACLE.config_for(TINY, release))
    initial = next(iter(system.initial_states()))
    first = list(ORACLE.questions(system, initial, release))
    assert {q.kind for q in first} == {"versionRange", "admin.updateFeatures", "featureZNode.encode"}
    assert all(q.request["kind"] == "supported" for q in first if q.kind == "versionRange")  # no FinalizedVersionRange
    admin = [q for q in first if q.kind == "admin.updateFeatures"]
    assert len(admin) == 8 and {q.request["validateOnly"] for q in admin} == {False, True}  # dry runs too
    assert {"exception": "java.lang.IllegalArgumentException", "message": "The upgradeType flag should be set to "
            "SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the provided maxVersionLevel:0 is < 1."} in [
        q.expected for q in admin]
    (encode,) = [q for q in first if q.kind == "featureZNode.encode"]
    # 3.9's default finalizes each supported feature at its maximum, one level; the node at schema version 2
    assert encode.request == {"op": "featureZNode.encode", "status": 1, "features": {"group_coordinator": 1},
                              "ibp": "3.9-IV0"}
    assert bytes.fromhex(encode.expected["data"]) == (
        b'{"features":{"group_coordinator":{"max_version_level":1}},"version":2,"status":1}')
    elected = system.elect_controller(initial, 0)
    (decode,) = [q for q in ORACLE.questions(system, elected, release) if q.kind == "featureZNode.decode"]
    assert decode.expected == {"status": 1, "features": {"group_coordinator": 1}}
    assert ORACLE.compare(decode, {**decode.expected, "version": 2}) is None  # the version: by the encode question


def test_compare_reports_one_line() -> None:
    q = next(q for q in _config_questions_at(RELEASE) if q.kind == "versionRange")
    assert "exception" in q.expected  # FinalizedVersionRange(1, 0): refused
    assert ORACLE.compare(q, q.expected) is None
    assert ORACLE.compare(q, {**q.expected, "cause": {"exception": "x"}}) is None  # the cause chain is not compared
    diff = ORACLE.compare(q, {"exception": "java.lang.IllegalArgumentException", "message": "no"})
    assert diff is not None and "\n" not in diff


def _config_questions_at(release_name: str) -> list[Any]:
    release = find_release(ORACLE, release_name)
    system = PROTOCOL.build(ORACLE.config_for(TINY, release))
    return list(ORACLE.questions(system, next(iter(system.initial_states())), release))


# ---------------------------------------------------------------------------------------------- against the jars
@needs_java
def test_small_agrees_with_kafka_2_8_2() -> None:
    result = run_check("features", RELEASE, "small")
    assert result.verdict == "agree", [f.difference for f in result.disagreements]
    assert result.states > 20_000 and result.decisions > 100_000
    assert set(result.kinds) == {"versionRange", "admin.updateFeatures", "featureZNode.encode", "featureZNode.decode",
                                 "incompatibleFeatures", "finalizedFeatureCache"}


@needs_java
def test_small_agrees_with_kafka_3_9_2() -> None:
    result = run_check("features", "3.9.2", "small")
    assert result.verdict == "agree", [f.difference for f in result.disagreements]
    assert result.states > 20_000 and result.kinds["admin.updateFeatures"]["decisions"] == 12


@needs_java
def test_the_2_8_rules_disagree_with_kafka_3_9() -> None:
    # The 3.9 row's config with the 2.8 rules put back: ranges, schema version 1, no validateOnly mapping.
    from reference_impl.features import oracle as features_oracle

    class TwoEightRules(features_oracle.FeaturesOracle):
        def config_for(self, config: Any, release: Any) -> Any:
            return dataclasses.replace(super().config_for(config, release), kafka_release="2.8")

    entry = dataclasses.replace(PROTOCOL, oracle="tests.test_features_oracle:TWO_EIGHT_AT_3_9")
    globals()["TWO_EIGHT_AT_3_9"] = TwoEightRules()
    result = run_check(entry, "3.9.2", "small")
    assert result.verdict == "disagree"
    assert result.kinds["featureZNode.encode"]["disagreements"] > 0
    assert result.kinds["featureZNode.decode"]["disagreements"] > 0  # 3.9 reads one level where 2.8 has a range


@needs_java
def test_a_broker_that_skips_startup_validation_disagrees_with_kafkas_cache() -> None:
    mutant = dataclasses.replace(SMALL, mutations=frozenset({"skip_startup_validation"}))
    entry = dataclasses.replace(PROTOCOL, configs={**PROTOCOL.configs, "mutant": mutant})
    result = run_check(entry, RELEASE, "mutant")
    assert result.verdict == "disagree"
    assert set(result.kinds["finalizedFeatureCache"].keys()) >= {"disagreements"}
    assert result.kinds["finalizedFeatureCache"]["disagreements"] > 0
    first = next(f for f in result.disagreements if f.kind == "finalizedFeatureCache")
    assert first.answer["accepted"] is False and "compatibility checks failed" in first.answer["message"]
    assert first.action.startswith("StartBroker") and first.trace is not None and first.trace["states"]


@needs_java
def test_a_reference_writing_its_own_key_order_disagrees_with_kafkas_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    # The reference's encoder before it learnt Kafka's order: sorted features, "version" first.
    def sorted_encode(self: FeatureZNode, profile: str = "kafka") -> bytes:
        return api._json_str({"version": 1, "status": self.status.value,
                              "features": api.features_to_map(self.features)}).encode("utf-8")

    monkeypatch.setattr(FeatureZNode, "encode", sorted_encode)
    result = run_check("features", RELEASE, "small")
    assert result.verdict == "disagree" and result.kinds["featureZNode.encode"]["disagreements"] > 0
    assert result.kinds["featureZNode.decode"]["disagreements"] == 0  # Kafka reads either order
    first = next(f for f in result.disagreements if f.kind == "featureZNode.encode")
    assert bytes.fromhex(first.answer["data"]).startswith(b'{"features":')


# ------------------------------------------------------------------------- tests/kafka's transcriptions, on the jars
def _cases(fn: Any) -> list[tuple[str, dict[str, Any]]]:
    """The pytest.param cases of a transcribed test function: (id, {argname: value})."""
    out = []
    for mark in getattr(fn, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names = [n.strip() for n in mark.args[0].split(",")] if isinstance(mark.args[0], str) else list(mark.args[0])
        for p in mark.args[1]:
            values = p.values if hasattr(p, "values") else (p,)
            out.append((getattr(p, "id", None) or "", dict(zip(names, values, strict=True))))
    assert out, fn
    return out


def _r(rng: tuple[int, int]) -> list[int]:
    return [rng[0], rng[1]]


def _fs(features: dict[str, tuple[int, int]]) -> dict[str, list[int]]:
    return {k: _r(v) for k, v in sorted(features.items())}


_IAE = "java.lang.IllegalArgumentException"


def _transcribed_cases() -> list[tuple[str, dict[str, Any], Any]]:
    """(case id, request, what the transcription asserts, in the adapter's normal form)."""
    out: list[tuple[str, dict[str, Any], Any]] = []
    # FeatureZNodeTest
    for cid, a in _cases(znode_t.test_encode_decode):
        node = FeatureZNode(a["status"], finalized_features(a["features"]))
        out.append((cid, {"op": "featureZNode.encode", "status": a["status"].value, "features": _fs(a["features"])},
                    {"data": node.encode().hex()}))
        out.append((cid, {"op": "featureZNode.decode", "data": node.encode().hex()},
                    {"status": a["status"].value, "features": _fs(a["features"])}))
    for cid, a in _cases(znode_t.test_decode_success):
        for features_json, status, features in a["cases"]:
            text = znode_t._SUCCESS_TEMPLATE.format(features_json)
            out.append((cid, {"op": "featureZNode.decode", "data": text.encode().hex()},
                        {"status": status.value, "features": _fs(features)}))
    for cid, a in _cases(znode_t.test_decode_fails):
        for text, message in a["cases"]:
            expected = message % text if "%s" in message else message
            out.append((cid, {"op": "featureZNode.decode", "data": text.encode().hex()},
                        {"exception": _IAE, "message": expected}))
    # FinalizedFeatureCacheTest
    for cid, a in _cases(cache_t.test_cache_script):
        steps: list[dict[str, Any]] = []
        after: list[dict[str, Any]] = []
        for step, expected in a["steps"]:
            if step[0] == "clear":
                steps.append({"clear": True})
                answer: dict[str, Any] = {"accepted": True}
            else:
                _, features, epoch, raises = step
                steps.append({"update": _fs(features), "epoch": epoch})
                answer = {"accepted": raises is None} | ({} if raises is None else {"message": raises})
            answer["cache"] = None if expected is None else {"features": _fs(expected[0]), "epoch": expected[1]}
            after.append(answer)
        out.append((cid, {"op": "finalizedFeatureCache.script", "supported": _fs(a["supported"]), "steps": steps},
                    {"empty": True, "steps": after}))
    # BrokerFeaturesTest
    for cid, a in _cases(broker_features_t.test_create_default):
        out.append((cid, {"op": "brokerFeatures.default", "supported": None},
                    {"createDefault": _fs(a["expected_supported"])}))
    for cid, a in _cases(broker_features_t.test_incompatible_features):
        finalized = a["compatible"] | a["incompatible"]
        out.append((cid, {"op": "incompatibleFeatures", "supported": _fs(a["supported"]), "finalized": _fs(finalized)},
                    {"incompatible": _fs(a["incompatible"]), "has": bool(a["incompatible"])}))
    for cid, a in _cases(broker_features_t.test_default_finalized_features):
        out.append((cid, {"op": "brokerFeatures.default", "supported": _fs(a["supported"])},
                    {"createDefault": {}, "defaultFinalized": _fs(a["expected"])}))
    # SupportedVersionRangeTest and FinalizedVersionRangeTest
    for kind, module, prefix in (("supported", supported_range_t, "SupportedVersionRange"),
                                 ("finalized", finalized_range_t, "FinalizedVersionRange")):
        for cid, a in _cases(module.test_from_to_map):
            lo, hi = a["lo"], a["hi"]
            text = f"{prefix}[" + ", ".join(f"{k}:{v}" for k, v in a["expected_map"].items()) + "]"
            out.append((cid, {"op": "versionRange", "kind": kind, "min": lo, "max": hi},
                        {"string": text, "map": dict(sorted(a["expected_map"].items()))}))
            out.append((cid, {"op": "versionRange.fromMap", "kind": kind, "map": a["expected_map"]}, {"string": text}))
        for cid, a in _cases(module.test_to_string):
            for (lo, hi), text in a["cases"]:
                req = {"op": "versionRange", "kind": kind, "min": lo, "max": hi}
                out.append((cid, req, {"string": text, "map": _range_map(kind, lo, hi)}))
        for cid, a in _cases(module.test_min_max):
            out.append((cid, {"op": "versionRange", "kind": kind, "min": a["lo"], "max": a["hi"]},
                        {"string": f"{prefix}[{_range_text(kind, a['expected_min'], a['expected_max'])}]",
                         "map": _range_map(kind, a["expected_min"], a["expected_max"])}))
    for cid, a in _cases(supported_range_t.test_constructor_rejects):
        for lo, hi in a["ranges"]:
            out.append((cid, {"op": "versionRange", "kind": "supported", "min": lo, "max": hi},
                        {"exception": _IAE, "message": supported_range_t._BAD_RANGE.format(lo, hi)}))
    for cid, a in _cases(supported_range_t.test_from_map_rejects):
        for values, message in a["maps"]:
            out.append((cid, {"op": "versionRange.fromMap", "kind": "supported", "map": values},
                        {"exception": _IAE, "message": message}))
    for cid, a in _cases(finalized_range_t.test_is_incompatible_with):
        for finalized, supported, incompatible in a["cases"]:
            out.append((cid, {"op": "versionRange.isIncompatibleWith", "finalized": _r(finalized),
                              "supported": _r(supported)}, {"incompatible": incompatible}))
    # FeaturesTest
    for cid, a in _cases(features_t.test_empty_features):
        for kind in a["kinds"]:
            out.append((cid, {"op": "features", "kind": kind, "features": {}}, {"string": "Features{}", "map": {}}))
            out.append((cid, {"op": "features.fromMap", "kind": kind, "map": {}}, {"string": "Features{}", "map": {}}))
    for cid, a in _cases(features_t.test_from_to_map):
        out.append((cid, {"op": "features", "kind": a["kind"], "features": _fs(a["features"])},
                    {"string": api.features_str(features_t._KINDS[a["kind"]][0](a["features"])),
                     "map": {k: dict(sorted(v.items())) for k, v in sorted(a["expected_map"].items())}}))
        # from*FeaturesMap collects into a java.util.HashMap, whose toString order the transcription does not
        # assert (it asserts the map and equality): the map only.
        out.append((cid, {"op": "features.fromMap", "kind": a["kind"], "map": a["expected_map"]},
                    {"map": {k: dict(sorted(v.items())) for k, v in sorted(a["expected_map"].items())}}))
    for cid, a in _cases(features_t.test_to_string):
        maps = api.features_to_map(features_t._KINDS[a["kind"]][0](a["features"]))
        out.append((cid, {"op": "features", "kind": a["kind"], "features": _fs(a["features"])},
                    {"string": a["text"], "map": {k: dict(sorted(v.items())) for k, v in sorted(maps.items())}}))
    for cid, a in _cases(features_t.test_from_map_rejects):
        out.append((cid, {"op": "features.fromMap", "kind": a["kind"], "map": a["invalid"]},
                    {"exception": _IAE, "message": a["message"]}))
    # UpdateFeaturesTest: the Admin client's side (the scenarios sent through it; a raw request skips it)
    for cid, a in _cases(update_t.test_update_features):
        s = a["s"]
        if s.raw:
            continue
        updates = [(f, level, allow) for f, (level, allow) in s.updates.items()]
        out.append((cid, {"op": "admin.updateFeatures", "updates": [
            {"feature": f, "level": level, "allowDowngrade": allow} for f, level, allow in updates]},
            admin_expected(updates)))
    return out


def _range_text(kind: str, lo: int, hi: int) -> str:
    suffix = "_level" if kind == "finalized" else ""
    return f"min_version{suffix}:{lo}, max_version{suffix}:{hi}"


def _range_map(kind: str, lo: int, hi: int) -> dict[str, int]:
    suffix = "_level" if kind == "finalized" else ""
    return {f"max_version{suffix}": hi, f"min_version{suffix}": lo}


def test_every_transcribed_module_has_cases() -> None:
    ids = {cid for cid, _, _ in _transcribed_cases()}
    for expected in ("testEncodeDecode", "testDecodeFailOnInvalidFeatures", "testUpdateOrThrowFailedDueToInvalidEpoch",
                     "testIncompatibilitiesDueToAbsentFeature", "testDefaultFinalizedFeatures",
                     "testFromMapFailure", "testIsCompatibleWith", "testToStringFinalizedFeatures",
                     "testSuccessfulFeatureUpgradeAndDowngrade"):
        assert expected in ids, expected


@needs_java
def test_tests_kafka_transcriptions_agree_with_the_jars() -> None:
    cases = _transcribed_cases()
    with OracleClient(ORACLE) as client:
        answers = client.ask(RELEASE, [req for _, req, _ in cases])
    differences = []
    for (cid, req, expected), answer in zip(cases, answers, strict=True):
        if isinstance(answer, dict) and "exception" in answer:
            answer = {"exception": answer["exception"], "message": answer.get("message")}
        elif isinstance(answer, dict) and isinstance(expected, dict) and "exception" not in expected:
            answer = {k: answer.get(k) for k in expected}  # what the transcription asserts
        if answer != expected:
            differences.append(f"{cid}: {req} -> Kafka {answer}, transcription {expected}")
    assert not differences, "\n".join(differences)
    assert len(cases) > 60


def test_the_state_status_enum_is_what_the_adapter_reads() -> None:
    # the adapter maps the status by FeatureZNodeStatus.withNameOpt(id): Disabled 0, Enabled 1
    assert [s.value for s in FeatureZNodeStatus] == [0, 1] and BrokerStatus.RUNNING.value == 1
