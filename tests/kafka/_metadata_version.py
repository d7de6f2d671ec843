"""The checks of Kafka's ``MetadataVersionTest`` as transcribed against ``reference_impl/metadata_version/catalog.py``,
shared by ``test_metadata_version_test.py`` (trunk 1eb7644) and ``test_metadata_version_test_4_0.py`` (Kafka 4.0).
Each check runs over the members a module names (``VERSIONS``: trunk's every member, or Kafka 4.0's enum).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from reference_impl.metadata_version.catalog import (
    DEFAULT_RELEASE,
    KAFKA_CATALOG,
    MetadataVersion,
    check_if_metadata_changed,
    from_version_string,
    is_lossless_downgrade,
)

M = MetadataVersion


def check_previous(versions: tuple[MetadataVersion, ...]) -> None:
    """``testPrevious``: each member's ``previous()`` is the member before it (Kafka's loop stops two short of the
    end)."""
    for i in range(1, len(versions) - 2):
        assert versions[i].previous() is versions[i - 1], versions[i]


def check_from_version_string(facts: tuple[tuple[str, MetadataVersion | None], ...],
                              release: str = DEFAULT_RELEASE) -> None:
    """``testFromVersionString`` under ``release``: (text, the member it parses to; None: IllegalArgumentException)."""
    for text, expected in facts:
        if expected is None:
            message = f"^{re.escape(f'Version {text} is not a valid version')}$"
            with pytest.raises(ValueError, match=message):
                from_version_string(text, release)
            with pytest.raises(ValueError, match=message):
                KAFKA_CATALOG.parse(text, release)
        else:
            assert from_version_string(text, release) is expected, text
            # the catalog's parse gives the feature level (-1 for a ZooKeeper-era member, which callers refuse)
            assert KAFKA_CATALOG.parse(text, release) == expected.feature_level, text


def check_version_strings(accessor: Callable[[MetadataVersion], str], facts: tuple[tuple[MetadataVersion, str], ...],
                          *, every_member_kraft: bool = False) -> None:
    """``testShortVersion`` / ``testVersion``: each member's string; ``toString()`` is ``version()``, and for a KRaft
    member (every member, with ``every_member_kraft``) it is also the kafka catalog's label."""
    for mv, expected in facts:
        assert accessor(mv) == expected, mv.name
    if accessor is MetadataVersion.version:
        for mv, expected in facts:
            assert str(mv) == expected
            if every_member_kraft or mv.is_kraft_supported():
                assert KAFKA_CATALOG.label(mv.feature_level) == expected


def check_metadata_changed(facts: tuple[tuple[MetadataVersion, MetadataVersion, bool], ...], *,
                           every_member_kraft: bool = False) -> None:
    """``testMetadataChanged``: (source, target, did the metadata change between them); between KRaft members (every
    member, with ``every_member_kraft``) the int-level form the API's downgrade check uses agrees."""
    for source, target, changed in facts:
        assert check_if_metadata_changed(source, target) is changed, (source, target)
        assert is_lossless_downgrade(source, target) is (not changed), (source, target)
        if every_member_kraft or (source.is_kraft_supported() and target.is_kraft_supported()):
            assert KAFKA_CATALOG.is_lossless(source.feature_level, target.feature_level) is (not changed)


# ---------------------------------------------------------------- @EnumSource: one run per MetadataVersion
def check_predicate_per_version(predicate: Callable[[MetadataVersion], bool], floor: MetadataVersion,
                                versions: tuple[MetadataVersion, ...], *, is_less_than: bool = False) -> None:
    """``predicate`` holds from ``floor`` on; with ``is_less_than``, ``isLessThan(floor)`` is its negation."""
    for mv in versions:
        assert predicate(mv) is mv.is_at_least(floor), mv
        if is_less_than:
            assert mv.is_less_than(floor) is not mv.is_at_least(floor), mv


def record_version(thresholds: tuple[tuple[MetadataVersion, int], ...]) -> Callable[[MetadataVersion], int]:
    """The version Kafka's test expects: that of the first threshold reached, else 0."""
    def expected(mv: MetadataVersion) -> int:
        for floor, version in thresholds:
            if mv.is_at_least(floor):
                return version
        return 0
    return expected


def elr_then_directories(mv: MetadataVersion) -> int:
    # Kafka's test: 2 if isElrSupported(), else 1 if isDirectoryAssignmentSupported(), else 0.
    if mv.is_elr_supported():
        return 2
    return 1 if mv.is_directory_assignment_supported() else 0


# testPartitionRecordVersion, testPartitionChangeRecordVersion, testRegisterBrokerRecordVersion: the same at trunk
# 1eb7644 and 4.0, over each commit's members.
RECORD_VERSION_CASES = [
    pytest.param(MetadataVersion.partition_record_version, elr_then_directories, id="testPartitionRecordVersion"),
    pytest.param(MetadataVersion.partition_change_record_version, elr_then_directories,
                 id="testPartitionChangeRecordVersion"),
    pytest.param(MetadataVersion.register_broker_record_version,
                 record_version(((M.IBP_3_7_IV2, 3), (M.IBP_3_4_IV0, 2), (M.IBP_3_3_IV3, 1))),
                 id="testRegisterBrokerRecordVersion"),
]


def check_record_version_per_version(actual: Callable[[MetadataVersion], int],
                                     expected: Callable[[MetadataVersion], int],
                                     versions: tuple[MetadataVersion, ...]) -> None:
    for mv in versions:
        assert actual(mv) == expected(mv), mv
