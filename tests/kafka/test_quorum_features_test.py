"""Kafka's ``QuorumFeaturesTest``, transcribed as facts against ``QuorumFeatures`` in
``reference_impl/metadata_version/api.py`` and, for ZooKeeper-migration readiness,
``reason_all_controllers_zk_migration_not_ready`` in ``reference_impl/zk_migration/api.py``.

Read first-hand: ``metadata/src/test/java/org/apache/kafka/controller/QuorumFeaturesTest.java`` at Apache Kafka
trunk commit 1eb7644349cb07139d6a3c1ad1986979647cac99 (2024-10-25), with ``QuorumFeatures.java`` of the same
commit. Each case id is the Kafka test method's name; a method's several assertions are its sub-cases.

Kafka's fixture is ``QuorumFeatures(0, {foo: 0-3, bar: 0-4, baz: 2-2}, [0, 1, 2])``. A ``ControllerRegistration``
enters the migration check only through its ``zkMigrationReady`` flag, so the registrations are a map from
controller id to that flag.

``defaultFeatureMap`` is stated through ``MINIMUM_KRAFT_VERSION``, ``LATEST_PRODUCTION`` and ``latestTesting()``;
at this commit those are 3.0-IV1, 4.0-IV0 and 4.0-IV3, a trunk state between the releases our catalog models.
The relation is checked with release 3.9's constants, the release whose lower bound is ``MINIMUM_KRAFT_VERSION``
(release 4.0's is ``MINIMUM_VERSION``, 3.3-IV3, a later change than this commit).

Not expressible yet:

* ``testDefaultFeatureMap``, ``testDefaultFeatureMapWithUnstable``, ``ensureDefaultSupportedFeaturesRangeMaxNotZero``:
  only their metadata.version entry. The KIP-1022 features (``Features.PRODUCTION_FEATURES``: kraft.version,
  transaction.version, group.version) and their ``defaultValue(MetadataVersion)`` mapping are not modelled;
  adding them is a features catalog of its own, not a change to this one.

The class as Kafka's 4.0 release has it, run under release 4.0: ``test_quorum_features_test_4_0.py``.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from reference_impl.metadata_version.catalog import (
    MINIMUM_KRAFT_VERSION,
    MetadataVersion,
    latest_production,
    latest_testing,
)
from reference_impl.zk_migration.api import reason_all_controllers_zk_migration_not_ready
from tests.kafka import _quorum_features as shared

RELEASE = "3.9"
CONTROLLER = shared.controller(RELEASE)


# ---------------------------------------------------------------- defaultFeatureMap (metadata.version entry)
@pytest.mark.parametrize(("enable_unstable", "high"), [
    pytest.param(False, latest_production(RELEASE), id="testDefaultFeatureMap"),
    pytest.param(True, latest_testing(RELEASE), id="testDefaultFeatureMapWithUnstable"),
])
def test_default_feature_map(enable_unstable: bool, high: MetadataVersion) -> None:
    shared.check_default_metadata_version_range(enable_unstable, RELEASE, MINIMUM_KRAFT_VERSION, high)


@pytest.mark.parametrize("unstable_versions_enabled", [
    pytest.param((True, False), id="ensureDefaultSupportedFeaturesRangeMaxNotZero"),
])
def test_default_ranges_max_not_zero(unstable_versions_enabled: tuple[bool, ...]) -> None:
    for enabled in unstable_versions_enabled:  # Kafka's @ValueSource(booleans = {true, false})
        for release in ("3.9", "4.0"):
            shared.check_default_ranges_max_not_zero(enabled, release)


# ---------------------------------------------------------------- the fixture's lookups
# testLocalSupportedFeature, testReasonNotSupported, testIsControllerId: the same at trunk 1eb7644 and 4.0, their facts
# are stated in _quorum_features.py.
test_local_supported_feature, test_reason_not_supported, test_is_controller_id = shared.lookup_tests(CONTROLLER)


# ---------------------------------------------------------------- reasonAllControllersZkMigrationNotReady
@pytest.mark.parametrize(("metadata_version", "controllers", "reason"), [
    pytest.param(MetadataVersion.IBP_3_0_IV1, {}, "The metadata.version too low at 3.0-IV1",
                 id="testZkMigrationNotReadyIfMetadataVersionTooLow"),
    pytest.param(MetadataVersion.IBP_3_4_IV0, {}, None, id="testZkMigrationReadyIfControllerRegistrationNotSupported"),
    pytest.param(MetadataVersion.IBP_3_7_IV0, {}, "No registration found for controller 0",
                 id="testZkMigrationNotReadyIfNotAllControllersRegistered"),
    pytest.param(MetadataVersion.IBP_3_7_IV0, {0: False},
                 "Controller 0 has not enabled zookeeper.metadata.migration.enable",
                 id="testZkMigrationNotReadyIfControllerNotReady"),
    pytest.param(MetadataVersion.IBP_3_7_IV0, {0: True, 1: True, 2: True}, None,
                 id="testZkMigrationReadyIfAllControllersReady"),
])
def test_zk_migration_readiness(metadata_version: MetadataVersion, controllers: Mapping[int, bool],
                                reason: str | None) -> None:
    got = reason_all_controllers_zk_migration_not_ready(metadata_version, shared.QUORUM_FEATURES.quorum_node_ids,
                                                        controllers)
    assert got == reason
