"""Kafka's ``SupportedVersionRangeTest``, transcribed as facts against ``reference_impl/features/api.py``.

Read first-hand: ``clients/src/test/java/org/apache/kafka/common/feature/SupportedVersionRangeTest.java`` at
Apache Kafka tag ``2.8.2`` (commit 3146c6ff4a24cc24d6039037e99edc8930d1958a); the file is the same blob
(acf452d820d8419ec7b01d594fd12c7d6c73b030) at tag ``2.8.0`` (commit ebb1d6e21cc9213071ee1c6a15ec3411fc215b81).
Each case id is the Kafka test method's name; a method's several assertions are its sub-cases.

Kafka asserts ``IllegalArgumentException``; ours is ``ValueError``. The messages checked on top of the exception
type are ``BaseVersionRange``'s (``clients/.../common/feature/BaseVersionRange.java``, same tag), which Kafka's
test does not check. Java ``short`` levels are Python ints here (the test uses no value near a short's bounds).

Not expressible yet: none.
"""

from __future__ import annotations

import re

import pytest

from reference_impl.features.api import SupportedVersionRange

_BAD_RANGE = "Expected minValue >= 1, maxValue >= 1 and maxValue >= minValue, but received minValue: {}, maxValue: {}"


@pytest.mark.parametrize("ranges", [
    pytest.param(((0, 0), (0, 1), (1, 0), (2, 1)), id="testFailDueToInvalidParams"),
])
def test_constructor_rejects(ranges: tuple[tuple[int, int], ...]) -> None:
    for lo, hi in ranges:
        with pytest.raises(ValueError, match=f"^{re.escape(_BAD_RANGE.format(lo, hi))}$"):
            SupportedVersionRange(lo, hi)


@pytest.mark.parametrize(("lo", "hi", "expected_map"), [
    pytest.param(1, 2, {"min_version": 1, "max_version": 2}, id="testFromToMap"),
])
def test_from_to_map(lo: int, hi: int, expected_map: dict[str, int]) -> None:
    r = SupportedVersionRange(lo, hi)
    assert (r.min(), r.max()) == (lo, hi)
    assert r.to_map() == expected_map
    back = SupportedVersionRange.from_map(r.to_map())
    assert (back.min(), back.max()) == (lo, hi)
    assert back == r


@pytest.mark.parametrize("maps", [
    pytest.param((
        ({"min_version": 0, "max_version": 1}, _BAD_RANGE.format(0, 1)),
        ({"min_version": 1, "max_version": 0}, _BAD_RANGE.format(1, 0)),
        ({"min_version": 0, "max_version": 0}, _BAD_RANGE.format(0, 0)),
        ({"min_version": 2, "max_version": 1}, _BAD_RANGE.format(2, 1)),
        ({"max_version": 1}, "min_version absent in [max_version:1]"),
        ({"min_version": 1}, "max_version absent in [min_version:1]"),
    ), id="testFromMapFailure"),
])
def test_from_map_rejects(maps: tuple[tuple[dict[str, int], str], ...]) -> None:
    for values, message in maps:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            SupportedVersionRange.from_map(values)


@pytest.mark.parametrize("cases", [
    pytest.param((((1, 1), "SupportedVersionRange[min_version:1, max_version:1]"),
                  ((1, 2), "SupportedVersionRange[min_version:1, max_version:2]")), id="testToString"),
])
def test_to_string(cases: tuple[tuple[tuple[int, int], str], ...]) -> None:
    for (lo, hi), text in cases:
        assert str(SupportedVersionRange(lo, hi)) == text


@pytest.mark.parametrize(("tested", "others"), [
    # "self" is tested.equals(tested); None is tested.equals(null).
    pytest.param((1, 1), (("self", True), ((1, 2), False), (None, False)), id="testEquals"),
])
def test_equals(tested: tuple[int, int], others: tuple[tuple[tuple[int, int] | str | None, bool], ...]) -> None:
    r = SupportedVersionRange(*tested)
    for other, equal in others:
        against: object = r if other == "self" else other
        if isinstance(other, tuple):
            against = SupportedVersionRange(*other)
        assert (r == against) is equal, other


@pytest.mark.parametrize(("lo", "hi", "expected_min", "expected_max"), [
    pytest.param(1, 2, 1, 2, id="testMinMax"),
])
def test_min_max(lo: int, hi: int, expected_min: int, expected_max: int) -> None:
    r = SupportedVersionRange(lo, hi)
    assert (r.min(), r.max()) == (expected_min, expected_max)
