"""Kafka's ``BrokerFeaturesTest``, transcribed as facts against ``reference_impl/features/api.py``.

Read first-hand: ``core/src/test/scala/unit/kafka/server/BrokerFeaturesTest.scala`` at Apache Kafka tag ``2.8.2``
(commit 3146c6ff4a24cc24d6039037e99edc8930d1958a); the file is the same blob
(c4cc52c27c9c41d2c8873d37436c44fe73ffb326) at tag ``2.8.0`` (commit ebb1d6e21cc9213071ee1c6a15ec3411fc215b81),
and at ``2.7.0`` it has the same five methods (JUnit 4). The class under test,
``core/src/main/scala/kafka/server/BrokerFeatures.scala``, is the same blob (dd84f9e73e70f3a0a01e151ca809eebe6d603838)
at 2.7.0, 2.8.0 and 2.8.2. It was missing from our API as a class (only the name-list
``incompatible_features(supported, finalized, profile)`` existed): :class:`BrokerFeatures` was added to
reference_impl/features/api.py for it, with Kafka's ``incompatibleFeatures`` result shape (the finalized features,
ranges included, that are incompatible), ``defaultFinalizedFeatures`` and the companion's ``hasIncompatibleFeatures``.

Each case id is the Kafka test method's name. Every method starts from ``BrokerFeatures.createDefault()`` and,
except ``testEmpty``, calls ``setSupportedFeatures`` (ours returns the next value). Kafka's ``Features<V>`` is our
sorted tuple of ``(name, range)`` pairs (``supported_features`` / ``finalized_features``); Kafka's
``assertEquals`` on two ``Features`` is map equality, which is tuple equality here since both are sorted.

The "default minimum version level" of 2.8: ``defaultFinalizedFeatures`` finalizes each supported feature at its
whole supported range (min level = supported min), which ``testDefaultFinalizedFeatures`` states. No separate
default-minimum map (KIP-584's ``firstActiveVersion`` / deprecation drafts) exists in any 2.7 or 2.8 release of
``BrokerFeatures.scala``; there is nothing more to transcribe.

Not transcribed: the warning ``incompatibleFeatures`` logs (``Feature incompatibilities seen: ...``), which the
test does not check. Not expressible yet: none.
"""

from __future__ import annotations

import pytest

from reference_impl.features.api import BrokerFeatures, finalized_features, supported_features

Range = tuple[int, int]

_SUPPORTED = {"test_feature_1": (1, 4), "test_feature_2": (1, 3)}


@pytest.mark.parametrize("expected_supported", [pytest.param({}, id="testEmpty")])
def test_create_default(expected_supported: dict[str, Range]) -> None:
    assert BrokerFeatures.create_default().supported_features == supported_features(expected_supported)


@pytest.mark.parametrize(("supported", "compatible", "incompatible"), [
    pytest.param(_SUPPORTED, {"test_feature_1": (2, 3)}, {"test_feature_3": (3, 4)},
                 id="testIncompatibilitiesDueToAbsentFeature"),
    pytest.param(_SUPPORTED, {"test_feature_1": (2, 3)}, {"test_feature_2": (1, 4)},
                 id="testIncompatibilitiesDueToIncompatibleFeature"),
    pytest.param(_SUPPORTED, {"test_feature_1": (2, 3), "test_feature_2": (1, 3)}, {},
                 id="testCompatibleFeatures"),
])
def test_incompatible_features(supported: dict[str, Range], compatible: dict[str, Range],
                               incompatible: dict[str, Range]) -> None:
    supported_fs = supported_features(supported)
    broker = BrokerFeatures.create_default().set_supported_features(supported_fs)
    assert broker.supported_features == supported_fs
    finalized = finalized_features(compatible | incompatible)
    assert broker.incompatible_features(finalized) == finalized_features(incompatible)
    assert BrokerFeatures.has_incompatible_features(supported_fs, finalized) is bool(incompatible)


@pytest.mark.parametrize(("supported", "expected"), [
    pytest.param({"test_feature_1": (1, 4), "test_feature_2": (1, 3), "test_feature_3": (3, 7)},
                 {"test_feature_1": (1, 4), "test_feature_2": (1, 3), "test_feature_3": (3, 7)},
                 id="testDefaultFinalizedFeatures"),
])
def test_default_finalized_features(supported: dict[str, Range], expected: dict[str, Range]) -> None:
    broker = BrokerFeatures.create_default().set_supported_features(supported_features(supported))
    assert broker.default_finalized_features() == finalized_features(expected)
