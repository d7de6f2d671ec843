"""Kafka's ``MetadataVersionTest``, transcribed as facts against ``reference_impl/metadata_version/catalog.py``.

Read first-hand: ``server-common/src/test/java/org/apache/kafka/server/common/MetadataVersionTest.java`` at Apache
Kafka trunk commit 1eb7644349cb07139d6a3c1ad1986979647cac99 (2024-10-25, during 4.0's development), with
``MetadataVersion.java`` of the same commit for the exception messages. Each case id is the Kafka test method's
name; a method's several assertions (or its ``@EnumSource`` runs, one per ``MetadataVersion``) are its sub-cases.

At that commit ``MetadataVersion`` ends at 4.0-IV3 and ``LATEST_PRODUCTION`` is 4.0-IV0: neither release our
catalog models (3.9: 3.9-IV0; 4.0: 4.0-IV3), and our catalog goes on to 4.1-IV1. Every member the commit defines
has the same feature level, release, sub-version and ``didMetadataChange`` in our catalog. So:

* facts about named members (lookups, ``version``, ``shortVersion``, ``checkIfMetadataChanged``) are checked as
  stated, under the catalog's default release (3.9, which still has every ZooKeeper-era member);
* facts Kafka states through ``VERSIONS``, ``LATEST_PRODUCTION`` or ``latestTesting()`` (loops, ``@EnumSource``)
  are checked over all our members, and for each release we model with that release's constants.

Kafka asserts ``IllegalArgumentException``; ours is ``ValueError``, with the text of ``MetadataVersion.java``.
Where a fact is about KRaft members, the ``kafka`` catalog (int levels, what the API and system levels use) is
checked as well: ``parse`` for ``fromVersionString`` and ``is_lossless`` for ``checkIfMetadataChanged``.

Not expressible yet (the catalog models metadata.version's levels, order and format changes, not the
inter-broker protocol's RPC and record versions; adding those tables would serve no part of the model):

* ``testMinSupportedVersionFor``: ``RecordVersion`` (message formats) is not modelled.
* ``testGroupMetadataValueVersion``, ``testOffsetCommitValueVersion``,
  ``testOffsetCommitValueVersionWithExpiredTimestamp``: group-coordinator record versions are not modelled.
* ``testListOffsetsValueVersion``, ``testProductionMetadataDontUseUnstableApiVersion``: the ListOffsets, Fetch,
  OffsetForLeaderEpoch and WriteTxnMarkers request versions, and ``ApiKeys``' stable versions, are not modelled.

The class as Kafka's 4.0 release has it, run under release 4.0: ``test_metadata_version_test_4_0.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reference_impl.metadata_version.catalog import (
    KAFKA_CATALOG,
    KAFKA_RELEASES,
    VERSIONS,
    MetadataVersion,
    latest_production,
    latest_testing,
)
from tests.kafka import _metadata_version as shared

M = MetadataVersion
RELEASES = tuple(KAFKA_RELEASES)  # the Kafka releases whose constants the catalog models ("3.9", "4.0")


# ---------------------------------------------------------------- feature levels
def _levels_before_3_0_iv1() -> None:
    for mv in VERSIONS[:M.IBP_3_0_IV1.ordinal]:
        assert mv.feature_level == -1, mv


def _levels_at_and_after_3_0_iv1() -> None:
    first = M.IBP_3_0_IV1.ordinal
    for i in range(first, len(VERSIONS)):
        assert VERSIONS[i].feature_level == i - first + 1, VERSIONS[i]
    # The kafka catalog holds exactly these members, by level, with their labels and flags.
    assert KAFKA_CATALOG.levels == tuple(range(1, len(VERSIONS) - first + 1))
    for mv in VERSIONS[first:]:
        assert KAFKA_CATALOG.label(mv.feature_level) == mv.version()
        assert KAFKA_CATALOG.did_metadata_change(mv.feature_level) is mv.did_metadata_change


def _kraft_versions() -> None:
    for mv in VERSIONS:
        if mv.is_kraft_supported():
            assert mv.feature_level > 0, mv
        else:
            assert mv.feature_level == -1, mv
    for mv in VERSIONS:
        assert mv.is_kraft_supported() is mv.is_at_least(M.IBP_3_0_IV1), mv


def _previous() -> None:
    shared.check_previous(VERSIONS)


def _latest_production_is_less_than_latest() -> None:
    for release in RELEASES:
        assert latest_production(release).ordinal < latest_testing().ordinal, release


def _latest_production_is_production() -> None:
    for release in RELEASES:
        assert latest_production(release).is_production(release), release


def _latest_is_not_production() -> None:
    for release in RELEASES:
        assert not latest_testing().is_production(release), release


@pytest.mark.parametrize("check", [
    pytest.param(_levels_before_3_0_iv1, id="testKRaftFeatureLevelsBefore3_0_IV1"),
    pytest.param(_levels_at_and_after_3_0_iv1, id="testKRaftFeatureLevelsAtAndAfter3_0_IV1"),
    pytest.param(_kraft_versions, id="testKRaftVersions"),
    pytest.param(_previous, id="testPrevious"),
    pytest.param(_latest_production_is_less_than_latest, id="assertLatestProductionIsLessThanLatest"),
    pytest.param(_latest_production_is_production, id="assertLatestProductionIsProduction"),
    pytest.param(_latest_is_not_production, id="assertLatestIsNotProduction"),
])
def test_invariants(check: Callable[[], None]) -> None:
    check()


# ---------------------------------------------------------------- fromVersionString
# (text, the member it parses to; None: IllegalArgumentException)
FROM_VERSION_STRING: tuple[tuple[str, MetadataVersion | None], ...] = (
    ("0.8.0", M.IBP_0_8_0), ("0.8.0.0", M.IBP_0_8_0), ("0.8.0.1", M.IBP_0_8_0),
    ("8.0", None),  # no IBP_8_0_IV0
    ("0.8.1", M.IBP_0_8_1), ("0.8.1.0", M.IBP_0_8_1), ("0.8.1.1", M.IBP_0_8_1),
    ("0.8.2", M.IBP_0_8_2), ("0.8.2.0", M.IBP_0_8_2), ("0.8.2.1", M.IBP_0_8_2),
    ("0.9.0", M.IBP_0_9_0), ("0.9.0.0", M.IBP_0_9_0), ("0.9.0.1", M.IBP_0_9_0),
    ("0.10.0-IV0", M.IBP_0_10_0_IV0),
    ("0.10.0", M.IBP_0_10_0_IV1), ("0.10.0.0", M.IBP_0_10_0_IV1), ("0.10.0.0-IV0", M.IBP_0_10_0_IV1),
    ("0.10.0.1", M.IBP_0_10_0_IV1),
    ("0.10.1-IV0", M.IBP_0_10_1_IV0), ("0.10.1-IV1", M.IBP_0_10_1_IV1),
    ("0.10.1", M.IBP_0_10_1_IV2), ("0.10.1.0", M.IBP_0_10_1_IV2), ("0.10.1-IV2", M.IBP_0_10_1_IV2),
    ("0.10.1.1", M.IBP_0_10_1_IV2),
    ("0.10.2", M.IBP_0_10_2_IV0), ("0.10.2.0", M.IBP_0_10_2_IV0), ("0.10.2-IV0", M.IBP_0_10_2_IV0),
    ("0.10.2.1", M.IBP_0_10_2_IV0),
    ("0.11.0-IV0", M.IBP_0_11_0_IV0), ("0.11.0-IV1", M.IBP_0_11_0_IV1),
    ("0.11.0", M.IBP_0_11_0_IV2), ("0.11.0.0", M.IBP_0_11_0_IV2), ("0.11.0-IV2", M.IBP_0_11_0_IV2),
    ("0.11.0.1", M.IBP_0_11_0_IV2),
    ("1.0", M.IBP_1_0_IV0), ("1.0.0", M.IBP_1_0_IV0), ("1.0.0-IV0", M.IBP_1_0_IV0), ("1.0.1", M.IBP_1_0_IV0),
    ("0.1.0", None), ("0.1.0.0", None), ("0.1.0-IV0", None), ("0.1.0.0-IV0", None),
    ("1.1-IV0", M.IBP_1_1_IV0),
    ("2.0", M.IBP_2_0_IV1), ("2.0-IV0", M.IBP_2_0_IV0), ("2.0-IV1", M.IBP_2_0_IV1),
    ("2.1", M.IBP_2_1_IV2), ("2.1-IV0", M.IBP_2_1_IV0), ("2.1-IV1", M.IBP_2_1_IV1), ("2.1-IV2", M.IBP_2_1_IV2),
    ("2.2", M.IBP_2_2_IV1), ("2.2-IV0", M.IBP_2_2_IV0), ("2.2-IV1", M.IBP_2_2_IV1),
    ("2.3", M.IBP_2_3_IV1), ("2.3-IV0", M.IBP_2_3_IV0), ("2.3-IV1", M.IBP_2_3_IV1),
    ("2.4", M.IBP_2_4_IV1), ("2.4-IV0", M.IBP_2_4_IV0), ("2.4-IV1", M.IBP_2_4_IV1),
    ("2.5", M.IBP_2_5_IV0), ("2.5-IV0", M.IBP_2_5_IV0),
    ("2.6", M.IBP_2_6_IV0), ("2.6-IV0", M.IBP_2_6_IV0),
    ("2.7", M.IBP_2_7_IV2), ("2.7-IV0", M.IBP_2_7_IV0), ("2.7-IV1", M.IBP_2_7_IV1), ("2.7-IV2", M.IBP_2_7_IV2),
    ("2.8", M.IBP_2_8_IV1), ("2.8-IV0", M.IBP_2_8_IV0), ("2.8-IV1", M.IBP_2_8_IV1),
    ("3.0", M.IBP_3_0_IV1), ("3.0-IV0", M.IBP_3_0_IV0), ("3.0-IV1", M.IBP_3_0_IV1),
    ("3.1", M.IBP_3_1_IV0), ("3.1-IV0", M.IBP_3_1_IV0),
    ("3.2", M.IBP_3_2_IV0), ("3.2-IV0", M.IBP_3_2_IV0),
    ("3.3", M.IBP_3_3_IV3), ("3.3-IV0", M.IBP_3_3_IV0), ("3.3-IV1", M.IBP_3_3_IV1), ("3.3-IV2", M.IBP_3_3_IV2),
    ("3.3-IV3", M.IBP_3_3_IV3),
    ("3.4", M.IBP_3_4_IV0), ("3.4-IV0", M.IBP_3_4_IV0),
    ("3.5", M.IBP_3_5_IV2), ("3.5-IV0", M.IBP_3_5_IV0), ("3.5-IV1", M.IBP_3_5_IV1), ("3.5-IV2", M.IBP_3_5_IV2),
    ("3.6", M.IBP_3_6_IV2), ("3.6-IV0", M.IBP_3_6_IV0), ("3.6-IV1", M.IBP_3_6_IV1), ("3.6-IV2", M.IBP_3_6_IV2),
    ("3.7", M.IBP_3_7_IV4), ("3.7-IV0", M.IBP_3_7_IV0), ("3.7-IV1", M.IBP_3_7_IV1), ("3.7-IV2", M.IBP_3_7_IV2),
    ("3.7-IV3", M.IBP_3_7_IV3), ("3.7-IV4", M.IBP_3_7_IV4),
    ("3.8", M.IBP_3_8_IV0), ("3.8-IV0", M.IBP_3_8_IV0),
    ("3.9", M.IBP_3_9_IV0), ("3.9-IV0", M.IBP_3_9_IV0),
    ("4.0-IV0", M.IBP_4_0_IV0), ("4.0-IV1", M.IBP_4_0_IV1), ("4.0-IV2", M.IBP_4_0_IV2), ("4.0-IV3", M.IBP_4_0_IV3),
)


@pytest.mark.parametrize("facts", [pytest.param(FROM_VERSION_STRING, id="testFromVersionString")])
def test_from_version_string(facts: tuple[tuple[str, MetadataVersion | None], ...]) -> None:
    shared.check_from_version_string(facts)


# ---------------------------------------------------------------- version() and shortVersion()
SHORT_VERSION: tuple[tuple[MetadataVersion, str], ...] = (
    (M.IBP_0_8_0, "0.8.0"), (M.IBP_0_10_0_IV0, "0.10.0"), (M.IBP_0_10_0_IV1, "0.10.0"),
    (M.IBP_0_11_0_IV0, "0.11.0"), (M.IBP_0_11_0_IV1, "0.11.0"), (M.IBP_0_11_0_IV2, "0.11.0"),
    (M.IBP_1_0_IV0, "1.0"), (M.IBP_1_1_IV0, "1.1"), (M.IBP_2_0_IV0, "2.0"), (M.IBP_2_0_IV1, "2.0"),
    (M.IBP_2_1_IV0, "2.1"), (M.IBP_2_1_IV1, "2.1"), (M.IBP_2_1_IV2, "2.1"), (M.IBP_2_2_IV0, "2.2"),
    (M.IBP_2_2_IV1, "2.2"), (M.IBP_2_3_IV0, "2.3"), (M.IBP_2_3_IV1, "2.3"), (M.IBP_2_4_IV0, "2.4"),
    (M.IBP_2_5_IV0, "2.5"), (M.IBP_2_6_IV0, "2.6"), (M.IBP_2_7_IV2, "2.7"), (M.IBP_2_8_IV0, "2.8"),
    (M.IBP_2_8_IV1, "2.8"), (M.IBP_3_0_IV0, "3.0"), (M.IBP_3_0_IV1, "3.0"), (M.IBP_3_1_IV0, "3.1"),
    (M.IBP_3_2_IV0, "3.2"), (M.IBP_3_3_IV0, "3.3"), (M.IBP_3_3_IV1, "3.3"), (M.IBP_3_3_IV2, "3.3"),
    (M.IBP_3_3_IV3, "3.3"), (M.IBP_3_4_IV0, "3.4"), (M.IBP_3_5_IV0, "3.5"), (M.IBP_3_5_IV1, "3.5"),
    (M.IBP_3_5_IV2, "3.5"), (M.IBP_3_6_IV0, "3.6"), (M.IBP_3_6_IV1, "3.6"), (M.IBP_3_6_IV2, "3.6"),
    (M.IBP_3_7_IV0, "3.7"), (M.IBP_3_7_IV1, "3.7"), (M.IBP_3_7_IV2, "3.7"), (M.IBP_3_7_IV3, "3.7"),
    (M.IBP_3_7_IV4, "3.7"), (M.IBP_3_8_IV0, "3.8"), (M.IBP_3_9_IV0, "3.9"), (M.IBP_4_0_IV0, "4.0"),
    (M.IBP_4_0_IV1, "4.0"), (M.IBP_4_0_IV2, "4.0"), (M.IBP_4_0_IV3, "4.0"),
)

VERSION: tuple[tuple[MetadataVersion, str], ...] = (
    (M.IBP_0_8_0, "0.8.0"), (M.IBP_0_8_2, "0.8.2"), (M.IBP_0_10_0_IV0, "0.10.0-IV0"),
    (M.IBP_0_10_0_IV1, "0.10.0-IV1"), (M.IBP_0_11_0_IV0, "0.11.0-IV0"), (M.IBP_0_11_0_IV1, "0.11.0-IV1"),
    (M.IBP_0_11_0_IV2, "0.11.0-IV2"), (M.IBP_1_0_IV0, "1.0-IV0"), (M.IBP_1_1_IV0, "1.1-IV0"),
    (M.IBP_2_0_IV0, "2.0-IV0"), (M.IBP_2_0_IV1, "2.0-IV1"), (M.IBP_2_1_IV0, "2.1-IV0"), (M.IBP_2_1_IV1, "2.1-IV1"),
    (M.IBP_2_1_IV2, "2.1-IV2"), (M.IBP_2_2_IV0, "2.2-IV0"), (M.IBP_2_2_IV1, "2.2-IV1"), (M.IBP_2_3_IV0, "2.3-IV0"),
    (M.IBP_2_3_IV1, "2.3-IV1"), (M.IBP_2_4_IV0, "2.4-IV0"), (M.IBP_2_5_IV0, "2.5-IV0"), (M.IBP_2_6_IV0, "2.6-IV0"),
    (M.IBP_2_7_IV2, "2.7-IV2"), (M.IBP_2_8_IV0, "2.8-IV0"), (M.IBP_2_8_IV1, "2.8-IV1"), (M.IBP_3_0_IV0, "3.0-IV0"),
    (M.IBP_3_0_IV1, "3.0-IV1"), (M.IBP_3_1_IV0, "3.1-IV0"), (M.IBP_3_2_IV0, "3.2-IV0"), (M.IBP_3_3_IV0, "3.3-IV0"),
    (M.IBP_3_3_IV1, "3.3-IV1"), (M.IBP_3_3_IV2, "3.3-IV2"), (M.IBP_3_3_IV3, "3.3-IV3"), (M.IBP_3_4_IV0, "3.4-IV0"),
    (M.IBP_3_5_IV0, "3.5-IV0"), (M.IBP_3_5_IV1, "3.5-IV1"), (M.IBP_3_5_IV2, "3.5-IV2"), (M.IBP_3_6_IV0, "3.6-IV0"),
    (M.IBP_3_6_IV1, "3.6-IV1"), (M.IBP_3_6_IV2, "3.6-IV2"), (M.IBP_3_7_IV0, "3.7-IV0"), (M.IBP_3_7_IV1, "3.7-IV1"),
    (M.IBP_3_7_IV2, "3.7-IV2"), (M.IBP_3_7_IV3, "3.7-IV3"), (M.IBP_3_7_IV4, "3.7-IV4"), (M.IBP_3_8_IV0, "3.8-IV0"),
    (M.IBP_3_9_IV0, "3.9-IV0"), (M.IBP_4_0_IV0, "4.0-IV0"), (M.IBP_4_0_IV1, "4.0-IV1"), (M.IBP_4_0_IV2, "4.0-IV2"),
    (M.IBP_4_0_IV3, "4.0-IV3"),
)


@pytest.mark.parametrize(("accessor", "facts"), [
    pytest.param(MetadataVersion.short_version, SHORT_VERSION, id="testShortVersion"),
    pytest.param(MetadataVersion.version, VERSION, id="testVersion"),
])
def test_version_strings(accessor: Callable[[MetadataVersion], str],
                         facts: tuple[tuple[MetadataVersion, str], ...]) -> None:
    shared.check_version_strings(accessor, facts)


# ---------------------------------------------------------------- checkIfMetadataChanged
# (source, target, did the metadata change between them)
METADATA_CHANGED: tuple[tuple[MetadataVersion, MetadataVersion, bool], ...] = (
    (M.IBP_3_2_IV0, M.IBP_3_2_IV0, False),
    (M.IBP_3_2_IV0, M.IBP_3_1_IV0, True),
    (M.IBP_3_2_IV0, M.IBP_3_0_IV1, True),
    (M.IBP_3_2_IV0, M.IBP_3_0_IV0, True),
    (M.IBP_3_2_IV0, M.IBP_2_8_IV1, True),
    (M.IBP_3_3_IV1, M.IBP_3_3_IV0, True),
    # argument order does not matter
    (M.IBP_3_0_IV0, M.IBP_3_2_IV0, True),
    (M.IBP_2_8_IV1, M.IBP_3_2_IV0, True),
)


@pytest.mark.parametrize("facts", [pytest.param(METADATA_CHANGED, id="testMetadataChanged")])
def test_metadata_changed(facts: tuple[tuple[MetadataVersion, MetadataVersion, bool], ...]) -> None:
    shared.check_metadata_changed(facts)


# ---------------------------------------------------------------- @EnumSource: one run per MetadataVersion
@pytest.mark.parametrize(("predicate", "floor"), [
    pytest.param(MetadataVersion.is_in_controlled_shutdown_state_supported, M.IBP_3_3_IV3,
                 id="testIsInControlledShutdownStateSupported"),
    pytest.param(MetadataVersion.is_delegation_token_supported, M.IBP_3_6_IV2, id="testIsDelegationTokenSupported"),
    pytest.param(MetadataVersion.is_directory_assignment_supported, M.IBP_3_7_IV2,
                 id="testDirectoryAssignmentSupported"),
    pytest.param(MetadataVersion.is_elr_supported, M.IBP_4_0_IV1, id="testIsElrSupported"),
])
def test_predicate_per_version(predicate: Callable[[MetadataVersion], bool], floor: MetadataVersion) -> None:
    shared.check_predicate_per_version(predicate, floor, VERSIONS, is_less_than=True)


# testPartitionRecordVersion, testPartitionChangeRecordVersion, testRegisterBrokerRecordVersion: the same at trunk
# 1eb7644 and 4.0, stated in _metadata_version.py; run over every member.
@pytest.mark.parametrize(("actual", "expected"), shared.RECORD_VERSION_CASES)
def test_record_version_per_version(actual: Callable[[MetadataVersion], int],
                                    expected: Callable[[MetadataVersion], int]) -> None:
    shared.check_record_version_per_version(actual, expected, VERSIONS)
