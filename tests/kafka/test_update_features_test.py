"""Kafka's ``UpdateFeaturesTest`` (an integration test), transcribed as scenarios against the ``kafka`` profile
of ``reference_impl/features/api.py``.

Read first-hand: ``core/src/test/scala/unit/kafka/server/UpdateFeaturesTest.scala`` at Apache Kafka tag ``2.8.2``
(commit 3146c6ff4a24cc24d6039037e99edc8930d1958a); the file is the same blob
(3ede6af097f3886b0c61dc6cc6ed08426d5d9764) at tag ``2.8.0`` (commit ebb1d6e21cc9213071ee1c6a15ec3411fc215b81).
Each case id is the Kafka test method's name (the two cases of its private helper
``testShouldFailRequestDuringBrokerMaxVersionLevelIncompatibility`` are the two public methods that call it).

Kafka's test runs 3 brokers on IBP 2.7-IV0. A scenario here is its facts: each broker's supported features
(broker 0 is the active controller; Kafka makes ``nonControllerServers.head``, broker 1 here, the incompatible
one), the finalized features the test writes to the node before the request, the request (through the Admin
client, with its checks, or raw, as Kafka's test sends it), where it is sent (the controller or not), and
what Kafka expects: the top-level error, each feature's error with Kafka's message pattern (matched like Scala's
``findFirstIn``), the node afterwards and its epoch (``versionBefore`` or ``versionBefore + 1``), and what
``describeFeatures`` reports. The cluster's story is replayed with our API: the controller creates the node
enabled and empty (``setup_feature_versioning``; 2.8's ``BrokerFeatures.createDefault()`` supports nothing), the
test overwrites it (one write), every broker's :class:`FinalizedFeatureCache` follows the node (the
``FinalizedFeatureChangeListener``) and must reach its version, then the request reaches a
:class:`FeatureController` whose live brokers are all three (Kafka's ``liveOrShuttingDownBrokers`` includes the
controller) and whose own binary is the receiving broker's.

``describeFeatures`` goes to a least-loaded broker in Kafka; here it is read from the controller's broker
(broker 0): its cache gives the finalized features and epoch. The supported features Kafka's ``checkFeatures``
also compares are the ones the test gave that broker (a fact of the setup, not of the code under test), so
they are not re-checked.

Not expressible yet: none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

from reference_impl.features.api import (
    AdminFeatureUpdate,
    Errors,
    FeatureController,
    FeatureUpdate,
    FeatureZNode,
    FeatureZNodeStatus,
    FinalizedFeatureCache,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
    admin_update_features_request,
    finalized_features,
    setup_feature_versioning,
    supported_features,
)

Range = tuple[int, int]
Features = dict[str, Range]

INVALID_REQUEST_EXCEPTION = "org.apache.kafka.common.errors.InvalidRequestException"
DEFAULT_SUPPORTED: Features = {"feature_1": (1, 3)}  # defaultSupportedFeatures()
DEFAULT_FINALIZED: Features = {"feature_1": (1, 2)}  # defaultFinalizedFeatures()
TWO_SUPPORTED: Features = {"feature_1": (1, 3), "feature_2": (2, 5)}
TWO_FINALIZED: Features = {"feature_1": (1, 2), "feature_2": (2, 4)}
TWO_TARGET: Features = {"feature_1": (1, 3), "feature_2": (2, 3)}
ALL_DEFAULT = (DEFAULT_SUPPORTED, DEFAULT_SUPPORTED, DEFAULT_SUPPORTED)  # updateSupportedFeaturesInAllBrokers
ALL_TWO = (TWO_SUPPORTED, TWO_SUPPORTED, TWO_SUPPORTED)


@dataclass(frozen=True)
class Scenario:
    brokers: tuple[Features, Features, Features]  # supported features of brokers 0 (controller), 1, 2
    before: Features  # what the test writes to the node before the request
    updates: dict[str, tuple[int, bool]]  # feature -> (maxVersionLevel, allowDowngrade)
    # Per feature: None when the Admin client's future succeeds, else (exception class, message pattern).
    outcomes: dict[str, tuple[str, str] | None]
    after: Features  # the node's finalized features after the request (describeFeatures reports the same)
    writes: int  # 0: epoch stays versionBefore; 1: versionBefore + 1
    raw: bool = False  # sent as a raw UpdateFeaturesRequest instead of through the Admin client
    to_controller: bool = True
    top_level: Errors = Errors.NONE  # raw requests: the response's top-level error
    # raw requests: the response's results, feature -> (error, message pattern)
    raw_results: dict[str, tuple[Errors, str]] = field(default_factory=dict)


def _invalid(feature: str, update: tuple[int, bool], pattern: str) -> Scenario:
    """The helper ``testWithInvalidFeatureUpdate``: default features everywhere, one invalid update, nothing
    changes."""
    return Scenario(ALL_DEFAULT, DEFAULT_FINALIZED,
                    {feature: update}, {feature: (INVALID_REQUEST_EXCEPTION, pattern)}, DEFAULT_FINALIZED, 0)


def _max_level_incompatibility(before: Features) -> Scenario:
    """The helper ``testShouldFailRequestDuringBrokerMaxVersionLevelIncompatibility`` for feature_1: broker 1
    supports up to max - 1 only; the upgrade to the supported max fails and nothing changes."""
    return Scenario((DEFAULT_SUPPORTED, {"feature_1": (1, 2)}, DEFAULT_SUPPORTED), before, {"feature_1": (3, False)},
                    {"feature_1": (INVALID_REQUEST_EXCEPTION, ".*brokers.*incompatible.*")}, before, 0)


SCENARIOS = [
    pytest.param(Scenario(ALL_DEFAULT, DEFAULT_FINALIZED, {"feature_1": (3, False)},
                          {}, DEFAULT_FINALIZED, 0, raw=True, to_controller=False, top_level=Errors.NOT_CONTROLLER),
                 id="testShouldFailRequestIfNotController"),
    pytest.param(_invalid("feature_1", (1, False), ".*Can not downgrade finalized feature.*allowDowngrade.*"),
                 id="testShouldFailRequestWhenDowngradeFlagIsNotSetDuringDowngrade"),
    pytest.param(_invalid("feature_1", (3, True), ".*When the allowDowngrade flag set in the request, the provided "
                          "maxVersionLevel:3.*existing maxVersionLevel:2.*"),
                 id="testShouldFailRequestWhenDowngradeToHigherVersionLevelIsAttempted"),
    pytest.param(Scenario(ALL_DEFAULT, DEFAULT_FINALIZED, {"feature_1": (0, False)},
                          {}, DEFAULT_FINALIZED, 0, raw=True, raw_results={"feature_1": (
                              Errors.INVALID_REQUEST,
                              ".*Can not provide maxVersionLevel: 0 less than 1.*allowDowngrade.*")}),
                 id="testShouldFailRequestInServerWhenDowngradeFlagIsNotSetDuringDeletion"),
    pytest.param(_invalid("feature_non_existing", (3, True),
                          ".*Could not apply finalized feature update because the provided feature is not supported.*"),
                 id="testShouldFailRequestDuringDeletionOfNonExistingFeature"),
    pytest.param(_invalid("feature_1", (2, False), ".*Can not upgrade a finalized feature.*to the same value.*"),
                 id="testShouldFailRequestWhenUpgradingToSameVersionLevel"),
    pytest.param(_max_level_incompatibility(DEFAULT_FINALIZED),
                 id="testShouldFailRequestDuringBrokerMaxVersionLevelIncompatibilityForExistingFinalizedFeature"),
    pytest.param(_max_level_incompatibility({}),
                 id="testShouldFailRequestDuringBrokerMaxVersionLevelIncompatibilityWithNoExistingFinalizedFeature"),
    pytest.param(Scenario(ALL_TWO, {}, {"feature_1": (3, False), "feature_2": (3, False)},
                          {"feature_1": None, "feature_2": None}, TWO_TARGET, 1),
                 id="testSuccessfulFeatureUpgradeAndWithNoExistingFinalizedFeatures"),
    pytest.param(Scenario(ALL_TWO, TWO_FINALIZED, {"feature_1": (3, False), "feature_2": (3, True)},
                          {"feature_1": None, "feature_2": None}, TWO_TARGET, 1),
                 id="testSuccessfulFeatureUpgradeAndDowngrade"),
    pytest.param(Scenario(ALL_TWO, TWO_FINALIZED, {"feature_1": (3, False), "feature_2": (3, False)},
                          {"feature_1": None, "feature_2": (INVALID_REQUEST_EXCEPTION,
                                                            ".*Can not downgrade finalized feature.*allowDowngrade.*")},
                          {"feature_1": (1, 3), "feature_2": (2, 4)}, 1),
                 id="testPartialSuccessDuringValidFeatureUpgradeAndInvalidDowngrade"),
    pytest.param(Scenario((TWO_SUPPORTED, {"feature_1": (1, 2), "feature_2": (2, 5)}, TWO_SUPPORTED), TWO_FINALIZED,
                          {"feature_1": (3, False), "feature_2": (3, True)},
                          {"feature_1": (INVALID_REQUEST_EXCEPTION, ".*brokers.*incompatible.*"), "feature_2": None},
                          {"feature_1": (1, 2), "feature_2": (2, 3)}, 1),
                 id="testPartialSuccessDuringInvalidFeatureUpgradeAndValidDowngrade"),
]


def _client_outcome(response: UpdateFeaturesResponse, feature: str) -> tuple[str, str] | None:
    """What ``result.values().get(feature).get()`` does in the Admin client: None when it succeeds, else the
    cause's (class, message)."""
    if response.error is not Errors.NONE:
        return str(response.error.exception_class), str(response.message or response.error.default_message)
    for r in response.results:
        if r.feature == feature:
            if r.error is Errors.NONE:
                return None
            return str(r.error.exception_class), str(r.message or r.error.default_message)
    return "org.apache.kafka.common.errors.ApiException", (
        f"The controller response did not contain a result for feature {feature}")


@pytest.mark.parametrize("s", SCENARIOS)
def test_update_features(s: Scenario) -> None:
    # The cluster starts on IBP 2.7-IV0 with no supported features: the controller creates the node, enabled.
    node = setup_feature_versioning(None, True, ())
    assert node is not None and node.status is FeatureZNodeStatus.ENABLED and node.features == ()
    supported = tuple(supported_features(b) for b in s.brokers)
    # updateFeatureZNode: one write; every broker's cache follows the node up to its version.
    node = node.write(FeatureZNodeStatus.ENABLED, finalized_features(s.before))
    version_before = node.epoch
    caches = [FinalizedFeatureCache(sup).update_latest_or_throw(node) for sup in supported]
    assert all(c.reached_epoch(version_before) for c in caches)

    if s.raw:
        request = UpdateFeaturesRequest(tuple(FeatureUpdate(f, level, allow)
                                              for f, (level, allow) in s.updates.items()))
    else:
        request = admin_update_features_request({f: AdminFeatureUpdate(level, allow)
                                                 for f, (level, allow) in s.updates.items()})
    receiver = 0 if s.to_controller else 1
    controller = FeatureController(node, tuple(enumerate(supported)), supported[receiver],
                                   is_active=s.to_controller, profile="kafka")
    response, after = controller.update_features(request)

    if s.raw:
        assert response.error is s.top_level
        if s.top_level is not Errors.NONE:
            assert response.message is not None and response.results == ()
        assert len(response.results) == len(s.raw_results)
        for feature, (error, pattern) in s.raw_results.items():
            r = response.result(feature)
            assert r.error is error and r.message, r
            assert re.search(pattern, r.message), r.message
    for feature, expected in s.outcomes.items():
        got = _client_outcome(response, feature)
        if expected is None:
            assert got is None, (feature, got)
        else:
            assert got is not None and got[0] == expected[0], (feature, got)
            assert re.search(expected[1], got[1]), (feature, got)

    # checkFeatures: the node as read back from ZooKeeper (getFeatureZNode decodes it), then describeFeatures:
    # finalized features and epoch from a broker's cache once it has followed the node.
    assert after.node is not None and after.node.epoch == version_before + s.writes
    stored = FeatureZNode.decode(after.node.encode(), after.node.epoch)
    assert (stored.status, stored.features) == (FeatureZNodeStatus.ENABLED, finalized_features(s.after))
    caches = [c.update_latest_or_throw(after.node) for c in caches]
    described = caches[0].get()
    assert described is not None
    assert (described.features, described.epoch) == (finalized_features(s.after), version_before + s.writes)
