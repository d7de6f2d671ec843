"""Kafka's ``VersionRangeTest``, transcribed as facts against ``VersionRange`` in
``reference_impl/metadata_version/api.py``.

Read first-hand: ``metadata/src/test/java/org/apache/kafka/metadata/VersionRangeTest.java`` at Apache Kafka trunk
commit 1eb7644349cb07139d6a3c1ad1986979647cac99 (2024-10-25), with ``VersionRange.java`` of the same commit.
Each case id is the Kafka test method's name; a method's several assertions are its sub-cases. The file is
byte-identical on Kafka's 4.0 branch at 4ae681446f18f9a6d7a59f317013ef82379a4ba4 (its last change, 4e846038a6 of
2024-06-16, precedes both), and ``VersionRange`` has no release-dependent behaviour: these cases are Kafka 4.0's too.

Kafka's test builds every range with ``VersionRange.of((short) a, (short) b)``, which checks nothing (it builds
``2-1``); ours is ``VersionRange.of``. The dataclass constructor ``VersionRange(min, max)`` keeps its own check
(``0 <= min <= max``) for the ranges a configuration declares. ``Short.MAX_VALUE`` is ``SHORT_MAX``.

Not expressible yet: none.
"""

from __future__ import annotations

import pytest

from reference_impl.metadata_version.api import SHORT_MAX, VersionRange


def v(a: int, b: int) -> VersionRange:
    # Kafka's helper v(a, b) asserts both fit in a short, then calls VersionRange.of.
    assert -32768 <= a <= SHORT_MAX and -32768 <= b <= SHORT_MAX
    return VersionRange.of(a, b)


# (range, range, equal)
EQUALITY = (
    ((1, 1), (1, 1), True),
    ((1, 2), (1, 1), False),
    ((1, 2), (2, 1), False),
    ((2, 2), (2, 1), False),
)

# (range, version, contained)
CONTAINS = (
    ((1, 1), 1, True),
    ((1, 1), 2, False),
    ((1, 2), 1, True),
    ((4, 10), 3, False),
    ((2, 12), 11, True),
)

# (range, toString)
TO_STRING = (
    ((1, 2), "1-2"),
    ((1, 1), "1"),
    ((1, SHORT_MAX), "1+"),
    ((100, 200), "100-200"),
)


@pytest.mark.parametrize("facts", [pytest.param(EQUALITY, id="testEquality")])
def test_equality(facts: tuple[tuple[tuple[int, int], tuple[int, int], bool], ...]) -> None:
    for a, b, equal in facts:
        assert (v(*a) == v(*b)) is equal, (a, b)
        if equal:
            assert hash(v(*a)) == hash(v(*b))


@pytest.mark.parametrize("facts", [pytest.param(CONTAINS, id="testContains")])
def test_contains(facts: tuple[tuple[tuple[int, int], int, bool], ...]) -> None:
    for rng, version, contained in facts:
        assert v(*rng).contains(version) is contained, (rng, version)


@pytest.mark.parametrize("facts", [pytest.param(TO_STRING, id="testToString")])
def test_to_string(facts: tuple[tuple[tuple[int, int], str], ...]) -> None:
    for rng, text in facts:
        assert str(v(*rng)) == text, rng
