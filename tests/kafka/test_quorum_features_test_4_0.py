"""Kafka 4.0's ``QuorumFeaturesTest``, transcribed as facts against ``QuorumFeatures`` in
``reference_impl/metadata_version/api.py`` under release 4.0 (``kafka_release = "4.0"``).

Read first-hand: ``metadata/src/test/java/org/apache/kafka/controller/QuorumFeaturesTest.java`` on Apache Kafka's
4.0 branch at commit 4ae681446f18f9a6d7a59f317013ef82379a4ba4 (2025-03-16, the branch head when 4.0.0 was released),
with ``QuorumFeatures.java`` and ``MetadataVersion.java`` of the same commit. Each case id is the Kafka test method's
name; a method's several assertions are its sub-cases.

Kafka's fixture is ``QuorumFeatures(0, {foo: 0-3, bar: 0-4, baz: 2-2}, [0, 1, 2])``. ``defaultSupportedFeatureMap``
(4.0's name for ``defaultFeatureMap``) gives metadata.version ``MINIMUM_VERSION`` (3.3-IV3) to ``LATEST_PRODUCTION``
(4.0-IV3), or to ``latestTesting()`` (4.1-IV0) with unstable versions enabled: 7-25 and 7-26.

Differences from trunk 1eb7644 (``test_quorum_features_test.py``): the lower bound is ``MINIMUM_VERSION``, not
``MINIMUM_KRAFT_VERSION``; the ZooKeeper-migration readiness cases (``testZkMigration*``) are gone with
``reasonAllControllersZkMigrationNotReady``.

Not expressible yet:

* ``testDefaultFeatureMap``, ``testDefaultFeatureMapWithUnstable``, ``ensureDefaultSupportedFeaturesRangeMaxNotZero``:
  only their metadata.version entry. The KIP-1022 features of ``Feature.PRODUCTION_FEATURES`` (kraft.version,
  transaction.version, group.version, eligible.leader.replicas.version) and their ``latestProduction()`` /
  ``defaultLevel(MetadataVersion)`` are not modelled; adding them is a features catalog of its own.
"""

from __future__ import annotations

import pytest

from reference_impl.metadata_version.api import VersionRange
from reference_impl.metadata_version.catalog import (
    MINIMUM_VERSION_4_X,
    MetadataVersion,
    latest_production,
    latest_testing,
)
from tests.kafka import _quorum_features as shared

RELEASE = "4.0"
CONTROLLER = shared.controller(RELEASE)


# ---------------------------------------------------------------- defaultSupportedFeatureMap (metadata.version)
@pytest.mark.parametrize(("enable_unstable", "high"), [
    pytest.param(False, latest_production(RELEASE), id="testDefaultFeatureMap"),
    pytest.param(True, latest_testing(RELEASE), id="testDefaultFeatureMapWithUnstable"),
])
def test_default_feature_map(enable_unstable: bool, high: MetadataVersion) -> None:
    shared.check_default_metadata_version_range(enable_unstable, RELEASE, MINIMUM_VERSION_4_X, high)
    expected = VersionRange.of(MINIMUM_VERSION_4_X.feature_level, high.feature_level)
    assert expected == VersionRange.of(7, 26 if enable_unstable else 25)


@pytest.mark.parametrize("unstable_versions_enabled", [
    pytest.param((True, False), id="ensureDefaultSupportedFeaturesRangeMaxNotZero"),
])
def test_default_ranges_max_not_zero(unstable_versions_enabled: tuple[bool, ...]) -> None:
    for enabled in unstable_versions_enabled:  # Kafka's @ValueSource(booleans = {true, false})
        shared.check_default_ranges_max_not_zero(enabled, RELEASE)


# ---------------------------------------------------------------- the fixture's lookups
# testLocalSupportedFeature, testReasonNotSupported, testIsControllerId: the same at trunk 1eb7644 and 4.0, their facts
# are stated in _quorum_features.py.
test_local_supported_feature, test_reason_not_supported, test_is_controller_id = shared.lookup_tests(CONTROLLER)
