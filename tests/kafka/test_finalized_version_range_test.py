"""Kafka's ``FinalizedVersionRangeTest``, transcribed as facts against ``reference_impl/features/api.py``.

Read first-hand: ``clients/src/test/java/org/apache/kafka/common/feature/FinalizedVersionRangeTest.java`` at
Apache Kafka tag ``2.8.2`` (commit 3146c6ff4a24cc24d6039037e99edc8930d1958a); the file is the same blob
(989c4bd1a543b8ce082382ed05f4d19ce465364e) at tag ``2.8.0`` (commit ebb1d6e21cc9213071ee1c6a15ec3411fc215b81).
Each case id is the Kafka test method's name; a method's several assertions are its sub-cases.

``isIncompatibleWith`` is the ``kafka`` profile's compatibility rule (the whole finalized range inside the
supported range); :func:`incompatible_features` under ``kafka`` is checked to agree with it on the same
inputs, and the ``kip`` profile (finalized max inside the supported range) is left to tests/test_features_api.py.

Not expressible yet: none.
"""

from __future__ import annotations

import pytest

from reference_impl.features.api import (
    FinalizedVersionRange,
    SupportedVersionRange,
    finalized_features,
    incompatible_features,
    supported_features,
)


@pytest.mark.parametrize(("lo", "hi", "expected_map"), [
    pytest.param(1, 2, {"min_version_level": 1, "max_version_level": 2}, id="testFromToMap"),
])
def test_from_to_map(lo: int, hi: int, expected_map: dict[str, int]) -> None:
    r = FinalizedVersionRange(lo, hi)
    assert (r.min(), r.max()) == (lo, hi)
    assert r.to_map() == expected_map
    back = FinalizedVersionRange.from_map(r.to_map())
    assert (back.min(), back.max()) == (lo, hi)
    assert back == r


@pytest.mark.parametrize("cases", [
    pytest.param((((1, 1), "FinalizedVersionRange[min_version_level:1, max_version_level:1]"),
                  ((1, 2), "FinalizedVersionRange[min_version_level:1, max_version_level:2]")), id="testToString"),
])
def test_to_string(cases: tuple[tuple[tuple[int, int], str], ...]) -> None:
    for (lo, hi), text in cases:
        assert str(FinalizedVersionRange(lo, hi)) == text


@pytest.mark.parametrize("cases", [
    # (finalized range, supported range, isIncompatibleWith)
    pytest.param((
        ((1, 1), (1, 1), False),
        ((2, 3), (1, 4), False),
        ((1, 4), (1, 4), False),
        ((1, 4), (2, 3), True),
        ((1, 4), (2, 4), True),
        ((2, 4), (2, 3), True),
    ), id="testIsCompatibleWith"),
])
def test_is_incompatible_with(cases: tuple[tuple[tuple[int, int], tuple[int, int], bool], ...]) -> None:
    for finalized, supported, incompatible in cases:
        assert FinalizedVersionRange(*finalized).is_incompatible_with(SupportedVersionRange(*supported)) \
            is incompatible, (finalized, supported)
        # The broker-level check the kafka profile uses agrees with the range-level one.
        bad = incompatible_features(supported_features({"f": supported}), finalized_features({"f": finalized}),
                                    "kafka")
        assert bad == (["f"] if incompatible else []), (finalized, supported)


@pytest.mark.parametrize(("lo", "hi", "expected_min", "expected_max"), [
    pytest.param(1, 2, 1, 2, id="testMinMax"),
])
def test_min_max(lo: int, hi: int, expected_min: int, expected_max: int) -> None:
    r = FinalizedVersionRange(lo, hi)
    assert (r.min(), r.max()) == (expected_min, expected_max)
