"""Kafka 4.0's ``MetadataVersionTest``, transcribed as facts against ``reference_impl/metadata_version/catalog.py``
under release 4.0 (``kafka_release = "4.0"``).

Read first-hand: ``server-common/src/test/java/org/apache/kafka/server/common/MetadataVersionTest.java`` on Apache
Kafka's 4.0 branch at commit 4ae681446f18f9a6d7a59f317013ef82379a4ba4 (2025-03-16, the branch head when 4.0.0 was
released: the next commit is "MINOR: Bump to 4.0.1-SNAPSHOT", 16da5a885e6d, 2025-03-18), with ``MetadataVersion.java``
of the same commit. The file last changed in 3fbbd0a3ee88 (KAFKA-18601, "Assume a baseline of 3.3 for server protocol
versions", 2025-02-19). Each case id is the Kafka test method's name; a method's several assertions (or its
``@EnumSource`` runs, one per ``MetadataVersion``) are its sub-cases.

Kafka 4.0's enum holds 3.3-IV3 (``MINIMUM_VERSION``, level 7) .. 4.1-IV0 (``latestTesting()``, level 26), with
``LATEST_PRODUCTION`` 4.0-IV3: ``versions("4.0")``, ``latest_testing("4.0")`` and ``latest_production("4.0")``
here. Facts Kafka states through ``VERSIONS`` or ``latestTesting()`` are checked over those members; facts about
named members are checked as stated, lookups with release 4.0. Every member Kafka 4.0 defines has the same feature
level, release, sub-version and ``didMetadataChange`` in our catalog.

Differences from trunk 1eb7644 (``test_metadata_version_test.py``): the ZooKeeper-era members and 3.0-IV1 .. 3.3-IV2
are gone, so ``testKRaftFeatureLevelsBefore3_0_IV1``, ``testKRaftFeatureLevelsAtAndAfter3_0_IV1`` and
``testKRaftVersions`` became ``testFeatureLevels``; ``testFromVersionString``, ``testShortVersion``, ``testVersion``
and ``testMetadataChanged`` only name members from 3.3-IV3 on; ``testIsInControlledShutdownStateSupported``,
``testMinSupportedVersionFor`` and the group-coordinator record-version tests are gone.

Not expressible yet (the catalog models metadata.version's levels, order and format changes, not the inter-broker
protocol's RPC versions):

* ``testListOffsetsValueVersion``: ``listOffsetRequestVersion()`` is not modelled.
* ``testProductionMetadataDontUseUnstableApiVersion``: ``listOffsetRequestVersion()``, ``fetchRequestVersion()``
  and ``ApiKeys``' stable versions are not modelled.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reference_impl.metadata_version.catalog import (
    KAFKA_CATALOG,
    MINIMUM_VERSION_4_X,
    MetadataVersion,
    latest_production,
    latest_testing,
    versions,
)
from tests.kafka import _metadata_version as shared

M = MetadataVersion
RELEASE = "4.0"
VERSIONS = versions(RELEASE)  # Kafka 4.0's MetadataVersion.VERSIONS
MINIMUM_VERSION = MINIMUM_VERSION_4_X
LATEST_PRODUCTION = latest_production(RELEASE)


# ---------------------------------------------------------------- the enum itself
def _feature_levels() -> None:
    assert VERSIONS[0] is MINIMUM_VERSION and MINIMUM_VERSION.feature_level == 7
    # Kafka's loop starts at MINIMUM_VERSION.ordinal(), which is 0 in 4.0's enum.
    for i in range(VERSIONS.index(MINIMUM_VERSION), len(VERSIONS)):
        assert VERSIONS[i].feature_level == i + MINIMUM_VERSION.feature_level, VERSIONS[i]
    # The int-level catalog gives release 4.0 the same bounds.
    assert KAFKA_CATALOG.minimum_for(RELEASE) == VERSIONS[0].feature_level
    assert KAFKA_CATALOG.latest_testing_for(RELEASE) == VERSIONS[-1].feature_level == 26


def _previous() -> None:
    shared.check_previous(VERSIONS)


def _latest_production_is_less_than_latest() -> None:
    assert LATEST_PRODUCTION.ordinal < latest_testing(RELEASE).ordinal
    assert LATEST_PRODUCTION is M.IBP_4_0_IV3 and latest_testing(RELEASE) is M.IBP_4_1_IV0


def _latest_production_is_production() -> None:
    assert LATEST_PRODUCTION.is_production(RELEASE)
    assert KAFKA_CATALOG.is_production(LATEST_PRODUCTION.feature_level, RELEASE)


def _latest_is_not_production() -> None:
    assert not latest_testing(RELEASE).is_production(RELEASE)
    assert not KAFKA_CATALOG.is_production(latest_testing(RELEASE).feature_level, RELEASE)


@pytest.mark.parametrize("check", [
    pytest.param(_feature_levels, id="testFeatureLevels"),
    pytest.param(_previous, id="testPrevious"),
    pytest.param(_latest_production_is_less_than_latest, id="assertLatestProductionIsLessThanLatest"),
    pytest.param(_latest_production_is_production, id="assertLatestProductionIsProduction"),
    pytest.param(_latest_is_not_production, id="assertLatestIsNotProduction"),
])
def test_invariants(check: Callable[[], None]) -> None:
    check()


# ---------------------------------------------------------------- fromVersionString
# (text, the member it parses to)
FROM_VERSION_STRING: tuple[tuple[str, MetadataVersion], ...] = (
    ("3.3", M.IBP_3_3_IV3), ("3.3-IV3", M.IBP_3_3_IV3),
    ("3.4", M.IBP_3_4_IV0), ("3.4-IV0", M.IBP_3_4_IV0),
    ("3.5", M.IBP_3_5_IV2), ("3.5-IV0", M.IBP_3_5_IV0), ("3.5-IV1", M.IBP_3_5_IV1), ("3.5-IV2", M.IBP_3_5_IV2),
    ("3.6", M.IBP_3_6_IV2), ("3.6-IV0", M.IBP_3_6_IV0), ("3.6-IV1", M.IBP_3_6_IV1), ("3.6-IV2", M.IBP_3_6_IV2),
    ("3.7", M.IBP_3_7_IV4), ("3.7-IV0", M.IBP_3_7_IV0), ("3.7-IV1", M.IBP_3_7_IV1), ("3.7-IV2", M.IBP_3_7_IV2),
    ("3.7-IV3", M.IBP_3_7_IV3), ("3.7-IV4", M.IBP_3_7_IV4),
    ("3.8", M.IBP_3_8_IV0), ("3.8-IV0", M.IBP_3_8_IV0),
    ("3.9", M.IBP_3_9_IV0), ("3.9-IV0", M.IBP_3_9_IV0),
    ("4.0-IV0", M.IBP_4_0_IV0), ("4.0-IV1", M.IBP_4_0_IV1), ("4.0-IV2", M.IBP_4_0_IV2), ("4.0-IV3", M.IBP_4_0_IV3),
    ("4.1-IV0", M.IBP_4_1_IV0),
)


@pytest.mark.parametrize("facts", [pytest.param(FROM_VERSION_STRING, id="testFromVersionString")])
def test_from_version_string(facts: tuple[tuple[str, MetadataVersion], ...]) -> None:
    shared.check_from_version_string(facts, RELEASE)


# ---------------------------------------------------------------- version() and shortVersion()
SHORT_VERSION: tuple[tuple[MetadataVersion, str], ...] = (
    (M.IBP_3_3_IV3, "3.3"), (M.IBP_3_4_IV0, "3.4"), (M.IBP_3_5_IV0, "3.5"), (M.IBP_3_5_IV1, "3.5"),
    (M.IBP_3_5_IV2, "3.5"), (M.IBP_3_6_IV0, "3.6"), (M.IBP_3_6_IV1, "3.6"), (M.IBP_3_6_IV2, "3.6"),
    (M.IBP_3_7_IV0, "3.7"), (M.IBP_3_7_IV1, "3.7"), (M.IBP_3_7_IV2, "3.7"), (M.IBP_3_7_IV3, "3.7"),
    (M.IBP_3_7_IV4, "3.7"), (M.IBP_3_8_IV0, "3.8"), (M.IBP_3_9_IV0, "3.9"), (M.IBP_4_0_IV0, "4.0"),
    (M.IBP_4_0_IV1, "4.0"), (M.IBP_4_0_IV2, "4.0"), (M.IBP_4_0_IV3, "4.0"), (M.IBP_4_1_IV0, "4.1"),
)

VERSION: tuple[tuple[MetadataVersion, str], ...] = (
    (M.IBP_3_3_IV3, "3.3-IV3"), (M.IBP_3_4_IV0, "3.4-IV0"), (M.IBP_3_5_IV0, "3.5-IV0"), (M.IBP_3_5_IV1, "3.5-IV1"),
    (M.IBP_3_5_IV2, "3.5-IV2"), (M.IBP_3_6_IV0, "3.6-IV0"), (M.IBP_3_6_IV1, "3.6-IV1"), (M.IBP_3_6_IV2, "3.6-IV2"),
    (M.IBP_3_7_IV0, "3.7-IV0"), (M.IBP_3_7_IV1, "3.7-IV1"), (M.IBP_3_7_IV2, "3.7-IV2"), (M.IBP_3_7_IV3, "3.7-IV3"),
    (M.IBP_3_7_IV4, "3.7-IV4"), (M.IBP_3_8_IV0, "3.8-IV0"), (M.IBP_3_9_IV0, "3.9-IV0"), (M.IBP_4_0_IV0, "4.0-IV0"),
    (M.IBP_4_0_IV1, "4.0-IV1"), (M.IBP_4_0_IV2, "4.0-IV2"), (M.IBP_4_0_IV3, "4.0-IV3"), (M.IBP_4_1_IV0, "4.1-IV0"),
)


@pytest.mark.parametrize(("accessor", "facts"), [
    pytest.param(MetadataVersion.short_version, SHORT_VERSION, id="testShortVersion"),
    pytest.param(MetadataVersion.version, VERSION, id="testVersion"),
])
def test_version_strings(accessor: Callable[[MetadataVersion], str],
                         facts: tuple[tuple[MetadataVersion, str], ...]) -> None:
    # The two tables name every member of Kafka 4.0's enum, in order.
    assert tuple(mv for mv, _ in facts) == VERSIONS
    shared.check_version_strings(accessor, facts, every_member_kraft=True)


# ---------------------------------------------------------------- checkIfMetadataChanged
# (source, target, did the metadata change between them)
METADATA_CHANGED: tuple[tuple[MetadataVersion, MetadataVersion, bool], ...] = (
    (M.IBP_3_4_IV0, M.IBP_3_3_IV3, True),
    (M.IBP_3_5_IV0, M.IBP_3_4_IV0, False),
    (M.IBP_3_5_IV1, M.IBP_3_5_IV0, False),
    (M.IBP_3_6_IV0, M.IBP_3_5_IV1, True),
    (M.IBP_3_6_IV1, M.IBP_3_6_IV0, True),
    # argument order does not matter
    (M.IBP_3_3_IV3, M.IBP_3_4_IV0, True),
    (M.IBP_3_4_IV0, M.IBP_3_5_IV0, False),
    (M.IBP_3_5_IV0, M.IBP_3_5_IV1, False),
    (M.IBP_3_5_IV1, M.IBP_3_6_IV0, True),
)


@pytest.mark.parametrize("facts", [pytest.param(METADATA_CHANGED, id="testMetadataChanged")])
def test_metadata_changed(facts: tuple[tuple[MetadataVersion, MetadataVersion, bool], ...]) -> None:
    shared.check_metadata_changed(facts, every_member_kraft=True)


# ---------------------------------------------------------------- @EnumSource: one run per MetadataVersion of 4.0
@pytest.mark.parametrize(("predicate", "floor"), [
    pytest.param(MetadataVersion.is_delegation_token_supported, M.IBP_3_6_IV2, id="testIsDelegationTokenSupported"),
    pytest.param(MetadataVersion.is_directory_assignment_supported, M.IBP_3_7_IV2,
                 id="testDirectoryAssignmentSupported"),
    pytest.param(MetadataVersion.is_elr_supported, M.IBP_4_0_IV1, id="testIsElrSupported"),
])
def test_predicate_per_version(predicate: Callable[[MetadataVersion], bool], floor: MetadataVersion) -> None:
    shared.check_predicate_per_version(predicate, floor, VERSIONS)


# testPartitionRecordVersion, testPartitionChangeRecordVersion, testRegisterBrokerRecordVersion: the same at trunk
# 1eb7644 and 4.0, stated in _metadata_version.py; run over Kafka 4.0's members.
@pytest.mark.parametrize(("actual", "expected"), shared.RECORD_VERSION_CASES)
def test_record_version_per_version(actual: Callable[[MetadataVersion], int],
                                    expected: Callable[[MetadataVersion], int]) -> None:
    shared.check_record_version_per_version(actual, expected, VERSIONS)
