"""The fixture and checks of Kafka's ``QuorumFeaturesTest`` as transcribed against ``QuorumFeatures`` in
``reference_impl/metadata_version/api.py``, shared by ``test_quorum_features_test.py`` (trunk 1eb7644) and
``test_quorum_features_test_4_0.py`` (Kafka 4.0). The fixture, ``QuorumFeatures(0, {foo: 0-3, bar: 0-4, baz: 2-2},
[0, 1, 2])``, and the methods that only look it up (``testLocalSupportedFeature``, ``testReasonNotSupported``,
``testIsControllerId``) are the same at both commits: their facts are stated here once, and ``lookup_tests`` makes
their pytest functions for a module's controller.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reference_impl.metadata_version.api import QuorumController, QuorumFeatures, VersionRange
from reference_impl.metadata_version.catalog import FEATURE_NAME, KAFKA_CATALOG, MetadataVersion

LOCAL = (("bar", VersionRange.of(0, 4)), ("baz", VersionRange.of(2, 2)), ("foo", VersionRange.of(0, 3)))
QUORUM_FEATURES = QuorumFeatures(0, LOCAL, (0, 1, 2))


def controller(release: str) -> QuorumController:
    """The same node as the controller's view: its QuorumFeatures are its id, its own ranges and its voters' ids."""
    return QuorumController(KAFKA_CATALOG, 0, LOCAL, ((0, None), (1, None), (2, None)), profile="kafka",
                            kafka_release=release)


# ---------------------------------------------------------------- defaultFeatureMap (metadata.version entry)
def check_default_metadata_version_range(enable_unstable: bool, release: str, low: MetadataVersion,
                                         high: MetadataVersion) -> None:
    """``defaultFeatureMap(enableUnstable)`` (4.0: ``defaultSupportedFeatureMap``) is metadata.version low..high."""
    expected = {FEATURE_NAME: VersionRange.of(low.feature_level, high.feature_level)}
    assert dict(QuorumFeatures.default_feature_map(KAFKA_CATALOG, enable_unstable, release)) == expected


def check_default_ranges_max_not_zero(enabled: bool, release: str) -> None:
    for _, rng in QuorumFeatures.default_feature_map(KAFKA_CATALOG, enabled, release):
        assert rng.max != 0, (enabled, release)


# ---------------------------------------------------------------- the fixture's lookups
# (feature, the range the local controller supports)
LOCAL_SUPPORTED = (
    ("foo", VersionRange.of(0, 3)),
    ("bar", VersionRange.of(0, 4)),
    ("baz", VersionRange.of(2, 2)),
    ("quux", VersionRange.of(0, 0)),  # unknown: QuorumFeatures.DISABLED
)

# (new version, who, range, reason; None: supported)
REASON_NOT_SUPPORTED = (
    (10, "Local controller 0", VersionRange.of(0, 3), "Local controller 0 only supports versions 0-3"),
    (3, "Local controller 0", VersionRange.of(0, 3), None),
)

# (node id, is it a controller of the quorum)
IS_CONTROLLER_ID = ((0, True), (1, True), (2, True), (3, False))


def lookup_tests(c: QuorumController) -> tuple[Callable[..., None], Callable[..., None], Callable[..., None]]:
    """The pytest functions of ``testLocalSupportedFeature``, ``testReasonNotSupported`` and ``testIsControllerId``
    on ``c`` (the fixture's node as a controller of the module's release); a module binds them to the names
    ``test_local_supported_feature``, ``test_reason_not_supported`` and ``test_is_controller_id``."""

    @pytest.mark.parametrize("facts", [pytest.param(LOCAL_SUPPORTED, id="testLocalSupportedFeature")])
    def test_local_supported_feature(facts: tuple[tuple[str, VersionRange], ...]) -> None:
        assert c.quorum_features == QUORUM_FEATURES
        for feature, rng in facts:
            assert QUORUM_FEATURES.local_supported_feature(feature) == rng, feature
            assert c.local_range(feature) == rng, feature

    @pytest.mark.parametrize("facts", [pytest.param(REASON_NOT_SUPPORTED, id="testReasonNotSupported")])
    def test_reason_not_supported(facts: tuple[tuple[int, str, VersionRange, str | None], ...]) -> None:
        for version, what, rng, reason in facts:
            assert QuorumFeatures.reason_not_supported(version, what, rng) == reason, version

    @pytest.mark.parametrize("facts", [pytest.param(IS_CONTROLLER_ID, id="testIsControllerId")])
    def test_is_controller_id(facts: tuple[tuple[int, bool], ...]) -> None:
        for node, expected in facts:
            assert QUORUM_FEATURES.is_controller_id(node) is expected, node
            assert c.quorum_features.is_controller_id(node) is expected, node

    return test_local_supported_feature, test_reason_not_supported, test_is_controller_id
