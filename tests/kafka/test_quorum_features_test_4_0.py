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

from reference_impl.metadata_version.api import QuorumController, QuorumFeatures, VersionRange
from reference_impl.metadata_version.catalog import (
    FEATURE_NAME,
    KAFKA_CATALOG,
    MINIMUM_VERSION_4_X,
    MetadataVersion,
    latest_production,
    latest_testing,
)

RELEASE = "4.0"
LOCAL = (("bar", VersionRange.of(0, 4)), ("baz", VersionRange.of(2, 2)), ("foo", VersionRange.of(0, 3)))
QUORUM_FEATURES = QuorumFeatures(0, LOCAL, (0, 1, 2))
# The same node as the controller's view: its QuorumFeatures are its id, its own ranges and its voters' ids.
CONTROLLER = QuorumController(KAFKA_CATALOG, 0, LOCAL, ((0, None), (1, None), (2, None)), profile="kafka",
                              kafka_release=RELEASE)


# ---------------------------------------------------------------- defaultSupportedFeatureMap (metadata.version)
@pytest.mark.parametrize(("enable_unstable", "high"), [
    pytest.param(False, latest_production(RELEASE), id="testDefaultFeatureMap"),
    pytest.param(True, latest_testing(RELEASE), id="testDefaultFeatureMapWithUnstable"),
])
def test_default_feature_map(enable_unstable: bool, high: MetadataVersion) -> None:
    expected = {FEATURE_NAME: VersionRange.of(MINIMUM_VERSION_4_X.feature_level, high.feature_level)}
    assert dict(QuorumFeatures.default_feature_map(KAFKA_CATALOG, enable_unstable, RELEASE)) == expected
    assert expected[FEATURE_NAME] == VersionRange.of(7, 26 if enable_unstable else 25)


@pytest.mark.parametrize("unstable_versions_enabled", [
    pytest.param((True, False), id="ensureDefaultSupportedFeaturesRangeMaxNotZero"),
])
def test_default_ranges_max_not_zero(unstable_versions_enabled: tuple[bool, ...]) -> None:
    for enabled in unstable_versions_enabled:  # Kafka's @ValueSource(booleans = {true, false})
        for _, rng in QuorumFeatures.default_feature_map(KAFKA_CATALOG, enabled, RELEASE):
            assert rng.max != 0, enabled


# ---------------------------------------------------------------- the fixture's lookups
# (feature, the range the local controller supports)
LOCAL_SUPPORTED = (
    ("foo", VersionRange.of(0, 3)),
    ("bar", VersionRange.of(0, 4)),
    ("baz", VersionRange.of(2, 2)),
    ("quux", VersionRange.of(0, 0)),  # unknown: QuorumFeatures.DISABLED
)


@pytest.mark.parametrize("facts", [pytest.param(LOCAL_SUPPORTED, id="testLocalSupportedFeature")])
def test_local_supported_feature(facts: tuple[tuple[str, VersionRange], ...]) -> None:
    assert CONTROLLER.quorum_features == QUORUM_FEATURES
    for feature, rng in facts:
        assert QUORUM_FEATURES.local_supported_feature(feature) == rng, feature
        assert CONTROLLER.local_range(feature) == rng, feature


# (new version, who, range, reason; None: supported)
REASON_NOT_SUPPORTED = (
    (10, "Local controller 0", VersionRange.of(0, 3), "Local controller 0 only supports versions 0-3"),
    (3, "Local controller 0", VersionRange.of(0, 3), None),
)


@pytest.mark.parametrize("facts", [pytest.param(REASON_NOT_SUPPORTED, id="testReasonNotSupported")])
def test_reason_not_supported(facts: tuple[tuple[int, str, VersionRange, str | None], ...]) -> None:
    for version, what, rng, reason in facts:
        assert QuorumFeatures.reason_not_supported(version, what, rng) == reason, version


# (node id, is it a controller of the quorum)
IS_CONTROLLER_ID = ((0, True), (1, True), (2, True), (3, False))


@pytest.mark.parametrize("facts", [pytest.param(IS_CONTROLLER_ID, id="testIsControllerId")])
def test_is_controller_id(facts: tuple[tuple[int, bool], ...]) -> None:
    for node, expected in facts:
        assert QUORUM_FEATURES.is_controller_id(node) is expected, node
        assert CONTROLLER.quorum_features.is_controller_id(node) is expected, node
