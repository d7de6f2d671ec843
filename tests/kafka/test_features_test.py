"""Kafka's ``FeaturesTest``, transcribed as facts against ``reference_impl/features/api.py``.

Read first-hand: ``clients/src/test/java/org/apache/kafka/common/feature/FeaturesTest.java`` at Apache Kafka tag
``2.8.2`` (commit 3146c6ff4a24cc24d6039037e99edc8930d1958a); the file is the same blob
(88b34712089894ca01faec10a0d485d50e594ec2) at tag ``2.8.0`` (commit ebb1d6e21cc9213071ee1c6a15ec3411fc215b81).
Each case id is the Kafka test method's name.

Kafka's ``Features<V>`` (a map of feature name -> version range) is, in our API, a sorted tuple of
``(name, range)`` pairs built by ``supported_features`` / ``finalized_features`` (or ``*_from_map``), with
``features_to_map`` (``toMap``), ``lookup`` (``get``: ``None`` for an absent feature, Kafka's ``null``),
``dict(features)`` (``features()``) and ``features_str`` (``toString``). Kafka's ``toString`` follows its
``HashMap``'s order, which for ``feature_1``, ``feature_2`` is the sorted order ours always uses.
Mapping of exceptions: ``NullPointerException`` -> ``TypeError``, ``IllegalArgumentException`` -> ``ValueError``.

Not expressible yet: none.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from reference_impl.features.api import (
    FinalizedVersionRange,
    SupportedVersionRange,
    features_str,
    features_to_map,
    finalized_features,
    finalized_features_from_map,
    lookup,
    supported_features,
    supported_features_from_map,
)

# kind -> (Features.<kind>Features, Features.from<Kind>FeaturesMap, the range class)
_KINDS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any], type]] = {
    "supported": (supported_features, supported_features_from_map, SupportedVersionRange),
    "finalized": (finalized_features, finalized_features_from_map, FinalizedVersionRange),
}
_TWO = {"feature_1": (1, 2), "feature_2": (3, 4)}


@pytest.mark.parametrize("kinds", [pytest.param(("finalized", "supported"), id="testEmptyFeatures")])
def test_empty_features(kinds: tuple[str, ...]) -> None:
    for kind in kinds:
        build, from_map, _ = _KINDS[kind]
        empty = build({})
        assert dict(empty) == {}
        assert features_to_map(empty) == {}
        assert empty == from_map({})


@pytest.mark.parametrize("kinds", [pytest.param(("finalized", "supported"), id="testNullFeatures")])
def test_null_features(kinds: tuple[str, ...]) -> None:
    for kind in kinds:
        with pytest.raises(TypeError, match=r"^Provided features can not be null\.$"):
            _KINDS[kind][0](None)


@pytest.mark.parametrize(("kind", "features"), [pytest.param("supported", _TWO, id="testGetAllFeaturesAPI")])
def test_get_all_features(kind: str, features: dict[str, tuple[int, int]]) -> None:
    build, _, cls = _KINDS[kind]
    assert dict(build(features)) == {name: cls(lo, hi) for name, (lo, hi) in features.items()}


@pytest.mark.parametrize(("kind", "features", "gets"), [
    pytest.param("supported", _TWO, {"feature_1": (1, 2), "feature_2": (3, 4), "nonexistent_feature": None},
                 id="testGetAPI"),
])
def test_get(kind: str, features: dict[str, tuple[int, int]], gets: dict[str, tuple[int, int] | None]) -> None:
    build, _, cls = _KINDS[kind]
    built = build(features)
    for name, expected in gets.items():
        assert lookup(built, name) == (None if expected is None else cls(*expected)), name


@pytest.mark.parametrize(("kind", "features", "expected_map"), [
    pytest.param("supported", _TWO, {"feature_1": {"min_version": 1, "max_version": 2},
                                     "feature_2": {"min_version": 3, "max_version": 4}},
                 id="testFromFeaturesMapToFeaturesMap"),
    pytest.param("finalized", _TWO, {"feature_1": {"min_version_level": 1, "max_version_level": 2},
                                     "feature_2": {"min_version_level": 3, "max_version_level": 4}},
                 id="testFromToFinalizedFeaturesMap"),
])
def test_from_to_map(kind: str, features: dict[str, tuple[int, int]], expected_map: dict[str, dict[str, int]]) -> None:
    build, from_map, _ = _KINDS[kind]
    built = build(features)
    assert features_to_map(built) == expected_map
    assert from_map(expected_map) == built


@pytest.mark.parametrize(("kind", "features", "text"), [
    pytest.param("finalized", _TWO, "Features{(feature_1 -> FinalizedVersionRange[min_version_level:1, "
                 "max_version_level:2]), (feature_2 -> FinalizedVersionRange[min_version_level:3, "
                 "max_version_level:4])}", id="testToStringFinalizedFeatures"),
    pytest.param("supported", _TWO, "Features{(feature_1 -> SupportedVersionRange[min_version:1, max_version:2]), "
                 "(feature_2 -> SupportedVersionRange[min_version:3, max_version:4])}",
                 id="testToStringSupportedFeatures"),
])
def test_to_string(kind: str, features: dict[str, tuple[int, int]], text: str) -> None:
    assert features_str(_KINDS[kind][0](features)) == text


@pytest.mark.parametrize(("kind", "invalid", "message"), [
    # Kafka's method name is spelt with three p's.
    pytest.param("supported", {"feature_1": {"min_version": 1}}, "max_version absent in [min_version:1]",
                 id="testSuppportedFeaturesFromMapFailureWithInvalidMissingMaxVersion"),
    pytest.param("finalized", {"feature_1": {"min_version_level": 1}},
                 "max_version_level absent in [min_version_level:1]",
                 id="testFinalizedFeaturesFromMapFailureWithInvalidMissingMaxVersionLevel"),
])
def test_from_map_rejects(kind: str, invalid: dict[str, dict[str, int]], message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        _KINDS[kind][1](invalid)


@pytest.mark.parametrize(("kind", "features", "others"), [
    # (other features or None for null, equals?)
    pytest.param("supported", {"feature_1": (1, 2)},
                 (({"feature_1": (1, 2)}, True), ({"feature_1": (1, 3)}, False), (None, False)), id="testEquals"),
])
def test_equals(kind: str, features: dict[str, tuple[int, int]],
                others: tuple[tuple[dict[str, tuple[int, int]] | None, bool], ...]) -> None:
    build = _KINDS[kind][0]
    built = build(features)
    for other, equal in others:
        assert (built == (None if other is None else build(other))) is equal, other
