"""KIP-584 API level: every validation rule and error code, both profiles and both semantics, and the
KIP's own examples (kafka-features listings, the group_coordinator v1 -> v2 story)."""

from __future__ import annotations

import json

import pytest

from reference_impl.features import tool
from reference_impl.features.api import (
    AdminFeatureUpdate,
    Errors,
    FeatureController,
    FeatureUpdate,
    FeatureZNode,
    FeatureZNodeStatus,
    FinalizedVersionRange,
    SupportedVersionRange,
    UpdateFeaturesRequest,
    admin_update_features_request,
    deprecate_min_levels,
    features_str,
    features_to_map,
    finalized_features,
    finalized_features_from_map,
    is_compatible,
    setup_feature_versioning,
    supported_features,
    supported_features_from_map,
)

ENABLED = FeatureZNodeStatus.ENABLED

# The KIP's describe example: the broker supports these; the cluster finalized two of them at epoch 1.
NEW_BINARY = supported_features({"consumer_offsets_topic_schema": (1, 1), "group_coordinator": (1, 2),
                                 "transaction_coordinator": (1, 5)})
OLD_TOOL = supported_features({"group_coordinator": (1, 1), "transaction_coordinator": (1, 4)})
NODE = FeatureZNode(ENABLED, finalized_features({"group_coordinator": (1, 1), "transaction_coordinator": (1, 4)}), 1)


def controller(node: FeatureZNode = NODE, profile: str = "kip", semantics: str = "partial",
               brokers: tuple[object, ...] = (NEW_BINARY, NEW_BINARY), **kw: object) -> FeatureController:
    live = tuple((i, b) for i, b in enumerate(brokers))
    return FeatureController(node, live, NEW_BINARY, profile=profile, semantics=semantics, **kw)  # type: ignore[arg-type]


def req(*updates: tuple[str, int, bool], dry_run: bool = False) -> UpdateFeaturesRequest:
    return UpdateFeaturesRequest(tuple(FeatureUpdate(f, v, a) for f, v, a in updates), dry_run=dry_run)


def test_describe_matches_the_kip_listing() -> None:
    assert tool.describe(NEW_BINARY, NODE) == [
        "Feature: consumer_offsets_topic_schema SupportedMinVersion: 1 SupportedMaxVersion: 1 "
        "FinalizedMinVersionLevel: - FinalizedMaxVersionLevel: - Epoch: 1",
        "Feature: group_coordinator SupportedMinVersion: 1 SupportedMaxVersion: 2 "
        "FinalizedMinVersionLevel: 1 FinalizedMaxVersionLevel: 1 Epoch: 1",
        "Feature: transaction_coordinator SupportedMinVersion: 1 SupportedMaxVersion: 5 "
        "FinalizedMinVersionLevel: 1 FinalizedMaxVersionLevel: 4 Epoch: 1",
    ]


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_upgrade_all_then_downgrade_all_with_the_old_tool(profile: str) -> None:
    lines, after = tool.upgrade_all(controller(profile=profile), NEW_BINARY)
    assert lines == [
        "[Add] Feature: consumer_offsets_topic_schema ExistingFinalizedMaxVersion: - NewFinalizedMaxVersion: 1 "
        "Result: OK",
        "[Upgrade] Feature: group_coordinator ExistingFinalizedMaxVersion: 1 NewFinalizedMaxVersion: 2 Result: OK",
        "[Upgrade] Feature: transaction_coordinator ExistingFinalizedMaxVersion: 4 NewFinalizedMaxVersion: 5 "
        "Result: OK",
    ]
    assert after.node is not None and after.node.epoch == 2  # one write for the whole request
    lines, back = tool.downgrade_all(after, OLD_TOOL)
    assert lines == [
        "[Delete] Feature: consumer_offsets_topic_schema ExistingFinalizedMaxVersion: 1 NewFinalizedMaxVersion: - "
        "Result: OK",
        "[Downgrade] Feature: group_coordinator ExistingFinalizedMaxVersion: 2 NewFinalizedMaxVersion: 1 Result: OK",
        "[Downgrade] Feature: transaction_coordinator ExistingFinalizedMaxVersion: 5 NewFinalizedMaxVersion: 4 "
        "Result: OK",
    ]
    assert back.node is not None and back.node.epoch == 3
    assert {n: r.max_version_level for n, r in back.node.features} == {"group_coordinator": 1,
                                                                        "transaction_coordinator": 4}


def test_advanced_update_and_dry_run() -> None:
    node = FeatureZNode(ENABLED, finalized_features({"group_coordinator": (1, 1), "transaction_coordinator": (1, 4),
                                                     "replication_throttling": (1, 2)}), 7)
    binary = supported_features({**{n: (r.min_version, r.max_version) for n, r in NEW_BINARY},
                                 "replication_throttling": (1, 2)})
    c = FeatureController(node, ((0, binary),), binary)
    lines, same = tool.update(c, upgrade=[("group_coordinator", 2), ("consumer_offsets_topic_schema", 1)],
                              downgrade=[("transaction_coordinator", 3)], delete=["replication_throttling"],
                              dry_run=True)
    assert same is c and all(line.endswith("Result: OK (dry run: not applied)") for line in lines)
    lines, after = tool.update(c, upgrade=[("group_coordinator", 2), ("consumer_offsets_topic_schema", 1)],
                               downgrade=[("transaction_coordinator", 3)], delete=["replication_throttling"])
    assert [line.split(" Feature")[0] for line in lines] == ["[Upgrade]", "[Add]", "[Downgrade]", "[Delete]"]
    assert after.node is not None and after.node.epoch == 8
    assert dict(after.node.features) == {"group_coordinator": FinalizedVersionRange(1, 2),
                                         "consumer_offsets_topic_schema": FinalizedVersionRange(1, 1),
                                         "transaction_coordinator": FinalizedVersionRange(1, 3)}


@pytest.mark.parametrize(("can_alter", "kw", "error"), [
    (False, {}, Errors.CLUSTER_AUTHORIZATION_FAILED),
    (True, {"is_active": False}, Errors.NOT_CONTROLLER),
    (True, {"versioning_enabled": False}, Errors.INVALID_REQUEST),
])
def test_top_level_errors_change_nothing(can_alter: bool, kw: dict[str, object], error: Errors) -> None:
    c = controller(**kw)
    response, after = c.update_features(req(("group_coordinator", 2, False)), principal_can_alter=can_alter)
    assert response.error is error and response.results == () and after is c


def test_duplicate_feature_in_one_request_is_invalid() -> None:
    response, after = controller().update_features(req(("group_coordinator", 2, False),
                                                       ("group_coordinator", 2, False)))
    assert response.error is Errors.INVALID_REQUEST and after.node == NODE


@pytest.mark.parametrize("profile", ["kip", "kafka"])
@pytest.mark.parametrize(("update", "error", "fragment"), [
    (("", 1, False), Errors.INVALID_REQUEST, "name can not be empty"),
    (("group_coordinator", 0, False), Errors.INVALID_REQUEST, "without setting the allowDowngrade flag"),
    (("unknown_feature", 0, True), Errors.INVALID_REQUEST, "non-existing finalized feature"),
    (("group_coordinator", 1, False), Errors.INVALID_REQUEST, "to the same value"),
    (("transaction_coordinator", 3, False), Errors.INVALID_REQUEST, "without setting the allowDowngrade"),
])
def test_invalid_updates(profile: str, update: tuple[str, int, bool], error: Errors, fragment: str) -> None:
    response, after = controller(profile=profile).update_features(req(update))
    assert response.error is Errors.NONE
    r = response.results[0]
    assert r.error is error and r.message is not None and fragment in r.message
    assert after.node == NODE  # Guarantees: a failed update is not applied, no epoch bump


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_allowed_downgrade_and_deletion(profile: str) -> None:
    response, after = controller(profile=profile).update_features(
        req(("transaction_coordinator", 3, True), ("group_coordinator", 0, True)))
    assert response.ok
    assert after.node is not None and after.node.epoch == NODE.epoch + 1
    assert dict(after.node.features) == {"transaction_coordinator": FinalizedVersionRange(1, 3)}


def test_incompatible_broker_fails_the_upgrade_with_each_profiles_error() -> None:
    old = supported_features({"group_coordinator": (1, 1), "transaction_coordinator": (1, 4)})
    for profile, error, message in (
        ("kip", Errors.FEATURE_UPDATE_FAILED,
         "Could not apply finalized feature update because broker 1 has incompatible versions for the feature."),
        # KafkaController.newFinalizedVersionRangeOrIncompatibilityError names no broker.
        ("kafka", Errors.INVALID_REQUEST,
         "Could not apply finalized feature update because brokers were found to have incompatible versions "
         "for the feature."),
    ):
        response, after = controller(profile=profile, brokers=(NEW_BINARY, old)).update_features(
            req(("group_coordinator", 2, False)))
        assert (response.results[0].error, response.results[0].message) == (error, message)
        assert after.node == NODE


def test_a_feature_some_broker_does_not_know_fails() -> None:
    no_cos = supported_features({"group_coordinator": (1, 2), "transaction_coordinator": (1, 5)})
    response, _ = controller(brokers=(NEW_BINARY, no_cos)).update_features(
        req(("consumer_offsets_topic_schema", 1, False)))
    assert response.results[0].error is Errors.FEATURE_UPDATE_FAILED


def test_profile_differences() -> None:
    # allowDowngrade with a higher level: the KIP's upgrade case ignores the flag; Kafka refuses it.
    up = req(("group_coordinator", 2, True))
    assert controller(profile="kip").update_features(up)[0].ok
    kafka = controller(profile="kafka").update_features(up)[0]
    assert kafka.results[0].error is Errors.INVALID_REQUEST
    # Below the finalized minimum: Kafka INVALID_REQUEST, the KIP cannot apply it.
    node = FeatureZNode(ENABLED, finalized_features({"transaction_coordinator": (3, 4)}), 4)
    down = req(("transaction_coordinator", 2, True))
    assert controller(node, "kafka").update_features(down)[0].results[0].error is Errors.INVALID_REQUEST
    assert controller(node, "kip").update_features(down)[0].results[0].error is Errors.FEATURE_UPDATE_FAILED
    # Kafka rewrites the minimum as the controller binary's supported minimum; the KIP keeps it.
    node = FeatureZNode(ENABLED, finalized_features({"transaction_coordinator": (3, 4)}), 4)
    kip_after = controller(node, "kip").update_features(req(("transaction_coordinator", 5, False)))[1]
    kafka_after = controller(node, "kafka").update_features(req(("transaction_coordinator", 5, False)))[1]
    assert kip_after.node is not None and kip_after.node.get("transaction_coordinator") == FinalizedVersionRange(3, 5)
    assert kafka_after.node is not None
    assert kafka_after.node.get("transaction_coordinator") == FinalizedVersionRange(1, 5)


def test_partial_and_atomic_semantics() -> None:
    mixed = req(("group_coordinator", 2, False), ("transaction_coordinator", 9, False))
    response, after = controller(semantics="partial").update_features(mixed)
    assert [r.error for r in response.results] == [Errors.NONE, Errors.FEATURE_UPDATE_FAILED]
    assert after.node is not None and after.node.epoch == 2 and after.node.get("group_coordinator") == \
        FinalizedVersionRange(1, 2)
    response, after = controller(semantics="atomic").update_features(mixed)
    assert [r.error for r in response.results] == [Errors.FEATURE_UPDATE_FAILED, Errors.FEATURE_UPDATE_FAILED]
    assert "another update" in (response.results[0].message or "")
    assert after.node == NODE


def test_dry_run_reports_without_writing() -> None:
    c = controller()
    response, after = c.update_features(req(("group_coordinator", 2, False), dry_run=True))
    assert response.ok and after is c


def test_compatibility_rule_per_profile() -> None:
    # A release that deprecated v1 (supports [2, 3]) against a finalized [1, 2].
    sup = supported_features({"group_coordinator": (2, 3)})
    node = FeatureZNode(ENABLED, finalized_features({"group_coordinator": (1, 2)}), 3)
    assert is_compatible(sup, node, "kip")  # only the max level must be supported
    assert not is_compatible(sup, node, "kafka")  # the whole range must be
    assert is_compatible(sup, FeatureZNode(FeatureZNodeStatus.DISABLED, (), 3), "kafka")
    assert not is_compatible(supported_features({}), node, "kip")  # an unknown feature


def test_node_status_rules() -> None:
    # New cluster: every supported feature finalized, enabled.
    created = setup_feature_versioning(None, True, NEW_BINARY)
    assert created is not None and created.status is ENABLED and created.epoch == 0
    assert created.get("group_coordinator") == FinalizedVersionRange(1, 2)
    # Upgrade from an old IBP: disabled and empty, then enabled and empty once the IBP is raised.
    disabled = setup_feature_versioning(None, False, NEW_BINARY)
    assert disabled == FeatureZNode(FeatureZNodeStatus.DISABLED, (), 0)
    enabled = setup_feature_versioning(disabled, True, NEW_BINARY)
    assert enabled == FeatureZNode(ENABLED, (), 1)
    assert setup_feature_versioning(enabled, True, NEW_BINARY) is None  # left as it is
    # Downgrade below the IBP: disabled with empty features.
    assert setup_feature_versioning(NODE, False, NEW_BINARY) == FeatureZNode(FeatureZNodeStatus.DISABLED, (), 2)


def test_min_level_deprecation() -> None:
    node = FeatureZNode(ENABLED, finalized_features({"group_coordinator": (1, 3)}), 5)
    raised = deprecate_min_levels(node, [supported_features({"group_coordinator": (2, 3)}),
                                         supported_features({"group_coordinator": (1, 3)})])
    assert raised == FeatureZNode(ENABLED, finalized_features({"group_coordinator": (2, 3)}), 6)
    assert deprecate_min_levels(raised, [supported_features({"group_coordinator": (2, 3)})]) is None


def test_range_validation() -> None:
    with pytest.raises(ValueError):
        SupportedVersionRange(0, 1)
    with pytest.raises(ValueError):
        FinalizedVersionRange.of(2, 1)


def test_group_coordinator_story() -> None:
    """KIP "Use case": v2 is refused while an old broker lives, finalized once all brokers are new."""
    old = supported_features({"group_coordinator": (1, 1)})
    new = supported_features({"group_coordinator": (1, 2)})
    node = FeatureZNode(ENABLED, finalized_features({"group_coordinator": (1, 1)}), 0)
    mid_roll = FeatureController(node, ((0, new), (1, old)), new)
    response, same = mid_roll.update_features(req(("group_coordinator", 2, False)))
    assert not response.ok and same.node == node
    rolled = FeatureController(node, ((0, new), (1, new)), new)
    response, after = rolled.update_features(req(("group_coordinator", 2, False)))
    assert response.ok and after.node is not None and after.node.get("group_coordinator") == \
        FinalizedVersionRange(1, 2)
    # A broker restarted on the old binary is now incompatible (it must not start).
    assert not is_compatible(old, after.node, "kip") and not is_compatible(old, after.node, "kafka")


# ------------------------------------------------------------------ Kafka 2.8's own unit tests, mirrored
# SupportedVersionRangeTest, FinalizedVersionRangeTest, FeaturesTest (clients/.../common/feature/).

@pytest.mark.parametrize("cls", [SupportedVersionRange, FinalizedVersionRange])
@pytest.mark.parametrize(("lo", "hi"), [(0, 0), (0, 1), (1, 0), (2, 1)])
def test_version_range_rejects_invalid_bounds_with_kafkas_message(cls: type, lo: int, hi: int) -> None:
    # BaseVersionRange's constructor; FinalizedVersionRange checks in its constructor too.
    with pytest.raises(ValueError) as e:
        cls(lo, hi)
    assert str(e.value) == ("Expected minValue >= 1, maxValue >= 1 and maxValue >= minValue, but received "
                            f"minValue: {lo}, maxValue: {hi}")


def test_unchecked_finalized_range_for_the_symbolic_model() -> None:
    bad = FinalizedVersionRange.unchecked(2, 1)
    assert (bad.min_version_level, bad.max_version_level) == (2, 1)
    assert bad == FinalizedVersionRange.unchecked(2, 1) and bad != FinalizedVersionRange(1, 2)


def test_version_range_to_string() -> None:
    assert str(SupportedVersionRange(1, 1)) == "SupportedVersionRange[min_version:1, max_version:1]"
    assert str(SupportedVersionRange(1, 2)) == "SupportedVersionRange[min_version:1, max_version:2]"
    assert str(FinalizedVersionRange(1, 1)) == "FinalizedVersionRange[min_version_level:1, max_version_level:1]"
    assert str(FinalizedVersionRange(1, 2)) == "FinalizedVersionRange[min_version_level:1, max_version_level:2]"


def test_version_range_from_to_map() -> None:
    s = SupportedVersionRange(1, 2)
    assert (s.min(), s.max()) == (1, 2)
    assert s.to_map() == {"min_version": 1, "max_version": 2}
    assert SupportedVersionRange.from_map(s.to_map()) == s
    f = FinalizedVersionRange(1, 2)
    assert (f.min(), f.max()) == (1, 2)
    assert f.to_map() == {"min_version_level": 1, "max_version_level": 2}
    assert FinalizedVersionRange.from_map(f.to_map()) == f
    assert s != f and SupportedVersionRange(1, 1) != SupportedVersionRange(1, 2)


@pytest.mark.parametrize(("values", "message"), [
    ({"min_version": 0, "max_version": 1}, "received minValue: 0, maxValue: 1"),
    ({"min_version": 1, "max_version": 0}, "received minValue: 1, maxValue: 0"),
    ({"min_version": 0, "max_version": 0}, "received minValue: 0, maxValue: 0"),
    ({"min_version": 2, "max_version": 1}, "received minValue: 2, maxValue: 1"),
    ({"max_version": 1}, "min_version absent in [max_version:1]"),
    ({"min_version": 1}, "max_version absent in [min_version:1]"),
])
def test_supported_range_from_map_failure(values: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError) as e:
        SupportedVersionRange.from_map(values)
    assert str(e.value).endswith(message)


def test_finalized_range_is_incompatible_with() -> None:
    assert not FinalizedVersionRange(1, 1).is_incompatible_with(SupportedVersionRange(1, 1))
    assert not FinalizedVersionRange(2, 3).is_incompatible_with(SupportedVersionRange(1, 4))
    assert not FinalizedVersionRange(1, 4).is_incompatible_with(SupportedVersionRange(1, 4))
    assert FinalizedVersionRange(1, 4).is_incompatible_with(SupportedVersionRange(2, 3))
    assert FinalizedVersionRange(1, 4).is_incompatible_with(SupportedVersionRange(2, 4))
    assert FinalizedVersionRange(2, 4).is_incompatible_with(SupportedVersionRange(2, 3))


def test_features_maps_and_to_string() -> None:
    sup = supported_features({"feature_1": (1, 2), "feature_2": (3, 4)})
    sup_map = {"feature_1": {"min_version": 1, "max_version": 2}, "feature_2": {"min_version": 3, "max_version": 4}}
    assert features_to_map(sup) == sup_map and supported_features_from_map(sup_map) == sup
    fin = finalized_features({"feature_1": (1, 2), "feature_2": (3, 4)})
    fin_map = {"feature_1": {"min_version_level": 1, "max_version_level": 2},
               "feature_2": {"min_version_level": 3, "max_version_level": 4}}
    assert features_to_map(fin) == fin_map and finalized_features_from_map(fin_map) == fin
    assert features_to_map(()) == {} and finalized_features_from_map({}) == () == supported_features_from_map({})
    assert features_str(fin) == ("Features{(feature_1 -> FinalizedVersionRange[min_version_level:1, "
                                 "max_version_level:2]), (feature_2 -> FinalizedVersionRange[min_version_level:3, "
                                 "max_version_level:4])}")
    assert features_str(sup) == ("Features{(feature_1 -> SupportedVersionRange[min_version:1, max_version:2]), "
                                 "(feature_2 -> SupportedVersionRange[min_version:3, max_version:4])}")
    with pytest.raises(ValueError, match="max_version absent"):
        supported_features_from_map({"feature_1": {"min_version": 1}})
    with pytest.raises(ValueError, match="max_version_level absent"):
        finalized_features_from_map({"feature_1": {"min_version_level": 1}})


# ------------------------------------------------------------------ KafkaApis.handleUpdateFeatures

def test_top_level_checks_in_kafkas_order_with_kafkas_messages() -> None:
    for profile in ("kip", "kafka"):
        # authorization, then NOT_CONTROLLER, then "Feature versioning system is disabled."
        both = controller(profile=profile, is_active=False, versioning_enabled=False)
        denied = both.update_features(req(("group_coordinator", 2, False)), principal_can_alter=False)[0]
        assert (denied.error, denied.message) == (Errors.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")
        response = both.update_features(req(("group_coordinator", 2, False)))[0]
        assert (response.error, response.message) == (Errors.NOT_CONTROLLER,
                                                      "This is not the correct controller for this cluster.")
        disabled = controller(profile=profile, versioning_enabled=False).update_features(
            req(("group_coordinator", 2, False)))[0]
        assert (disabled.error, disabled.message) == (Errors.INVALID_REQUEST, "Feature versioning system is disabled.")


def test_duplicate_feature_under_kafka_last_update_wins() -> None:
    # Kafka 2.8 does not check for a feature named twice: each update is validated against the existing
    # node, a valid one overwrites the target, and the errors map keeps the last result.
    response, after = controller(profile="kafka").update_features(
        req(("group_coordinator", 2, False), ("group_coordinator", 1, False)))
    assert response.error is Errors.NONE
    assert [(r.feature, r.error) for r in response.results] == [("group_coordinator", Errors.INVALID_REQUEST)]
    assert after.node is not None and after.node.get("group_coordinator") == FinalizedVersionRange(1, 2)
    response, after = controller(profile="kafka").update_features(
        req(("transaction_coordinator", 5, False), ("transaction_coordinator", 3, True)))
    assert response.ok and after.node is not None
    assert after.node.get("transaction_coordinator") == FinalizedVersionRange(1, 3)


# ------------------------------------------------------------------ FeatureZNode (FeatureZNodeTest)

def test_feature_znode_path_and_schema_version_per_profile() -> None:
    assert (FeatureZNode.path("kafka"), FeatureZNode.path("kip")) == ("/feature", "/features")
    assert FeatureZNode.V1 == FeatureZNode.CURRENT_VERSION == FeatureZNode.schema_version("kafka") == 1
    assert FeatureZNode.schema_version("kip") == 0
    node = FeatureZNode(ENABLED, finalized_features({"f": (1, 2)}), 3)
    assert json.loads(node.encode("kip"))["version"] == 0
    assert FeatureZNode.decode(node.encode("kip"), 3, profile="kip") == node
    with pytest.raises(ValueError, match="Unsupported version: 0"):
        FeatureZNode.decode(node.encode("kip"), 3, profile="kafka")


def test_feature_znode_encode_decode() -> None:
    node = FeatureZNode(ENABLED, finalized_features({"feature1": (1, 2), "feature2": (2, 4)}))
    assert json.loads(FeatureZNode.encode(node)) == {
        "version": 1, "status": 1,
        "features": {"feature1": {"min_version_level": 1, "max_version_level": 2},
                     "feature2": {"min_version_level": 2, "max_version_level": 4}}}
    assert FeatureZNode.decode(FeatureZNode.encode(node)) == node
    # The epoch is the node's ZooKeeper version, outside the JSON.
    later = FeatureZNode(FeatureZNodeStatus.DISABLED, (), 7)
    assert FeatureZNode.decode(later.encode(), epoch=7) == later


ZNODE = '{\n  "version":%s,\n  "status":%s%s\n}'
VALID_FEATURES = (',"features":{"feature1": {"min_version_level": 1, "max_version_level": 2}, '
                  '"feature2": {"min_version_level": 2, "max_version_level": 4}}')


def test_feature_znode_decode_success() -> None:
    node = FeatureZNode.decode((ZNODE % (1, 1, VALID_FEATURES)).encode())
    assert node.status is ENABLED
    assert node.features == finalized_features({"feature1": (1, 2), "feature2": (2, 4)})
    empty = FeatureZNode.decode(ZNODE % (1, 1, ',"features":{}'))
    assert (empty.status, empty.features) == (ENABLED, ())


@pytest.mark.parametrize(("version", "status", "features", "message"), [
    (0, 1, VALID_FEATURES, "Unsupported version: 0 of feature information: "),
    (1, 2, VALID_FEATURES, "Malformed status: Some(2) found in feature information: "),
    (1, 1, "", "Features map can not be absent in: "),
    (1, 1, ',"features":{"feature1": {"min_version_level": 1, "max_version_level": 2}, "partial"}',
     "Failed to parse feature information: "),
    (1, 1, ',"features":{"feature1": {"min_version_level": 0, "max_version_level": 2}}',
     "Unable to convert to finalized features from map: {feature1={min_version_level=0, max_version_level=2}}"),
    (1, 1, ',"features":{"feature1": {"min_version_level": 2, "max_version_level": 1}}',
     "Unable to convert to finalized features from map: {feature1={min_version_level=2, max_version_level=1}}"),
    (1, 1, ',"features":{"feature1": {"max_version_level": 1}}',
     "Unable to convert to finalized features from map: {feature1={max_version_level=1}}"),
    (1, "null", VALID_FEATURES, "Status can not be absent in feature information: "),
    ('"1"', 1, VALID_FEATURES, 'Expected `Int` value, received "1"'),
])
def test_feature_znode_decode_failures(version: object, status: object, features: str, message: str) -> None:
    text = ZNODE % (version, status, features)
    with pytest.raises(ValueError) as e:
        FeatureZNode.decode(text.encode())
    assert str(e.value).startswith(message)
    if message.endswith("information: ") or message.endswith("absent in: "):
        assert str(e.value) == message + text  # Kafka quotes the node's bytes as they were read


def test_feature_znode_decode_needs_a_version() -> None:
    with pytest.raises(ValueError, match="No such field exists: `version`"):
        FeatureZNode.decode('{"status":1,"features":{}}')


# ------------------------------------------------------------------ Admin client (clients/.../admin)

def test_admin_client_checks() -> None:
    with pytest.raises(ValueError) as e:
        AdminFeatureUpdate(0, False)
    assert str(e.value) == "The allowDowngrade flag should be set when the provided maxVersionLevel:0 is < 1."
    assert str(AdminFeatureUpdate(0, True)) == "FeatureUpdate{maxVersionLevel:0, allowDowngrade:true}"
    with pytest.raises(ValueError, match=r"^Feature updates can not be null or empty\.$"):
        admin_update_features_request({})
    for blank in ("", "  ", "\t"):
        with pytest.raises(ValueError, match=r"^Provided feature can not be empty\.$"):
            admin_update_features_request({blank: AdminFeatureUpdate(1)})
    request = admin_update_features_request({"f": AdminFeatureUpdate(2), "g": AdminFeatureUpdate(0, True)})
    assert request.feature_updates == (FeatureUpdate("f", 2, False), FeatureUpdate("g", 0, True))


# ------------------------------------------------------------------ kafka-features (FeatureCommandTest)

DEFAULT_SUPPORTED = supported_features({"feature_1": (1, 3), "feature_2": (1, 5)})


def kafka_cluster(brokers: tuple[object, ...], node: FeatureZNode | None = None) -> FeatureController:
    """A 2.8 cluster on IBP 2.7-IV0: the node was created enabled and (BrokerFeatures.createDefault being
    empty in 2.8) without features, at version 0. The controller is broker 0."""
    live = tuple(enumerate(brokers))
    return FeatureController(node or FeatureZNode(ENABLED, (), 0), live, brokers[0],  # type: ignore[arg-type]
                             profile="kafka")


def test_kafka_describe_features() -> None:
    c = kafka_cluster((DEFAULT_SUPPORTED,) * 3)
    assert tool.describe(DEFAULT_SUPPORTED, c.node, profile="kafka") == [
        "Feature: feature_1\tSupportedMinVersion: 1\tSupportedMaxVersion: 3\tFinalizedMinVersionLevel: -"
        "\tFinalizedMaxVersionLevel: -\tEpoch: 0",
        "Feature: feature_2\tSupportedMinVersion: 1\tSupportedMaxVersion: 5\tFinalizedMinVersionLevel: -"
        "\tFinalizedMaxVersionLevel: -\tEpoch: 0",
    ]
    _, after = tool.upgrade_all(c, DEFAULT_SUPPORTED, profile="kafka")
    assert tool.describe(DEFAULT_SUPPORTED, after.node, profile="kafka") == [
        "Feature: feature_1\tSupportedMinVersion: 1\tSupportedMaxVersion: 3\tFinalizedMinVersionLevel: 1"
        "\tFinalizedMaxVersionLevel: 3\tEpoch: 1",
        "Feature: feature_2\tSupportedMinVersion: 1\tSupportedMaxVersion: 5\tFinalizedMinVersionLevel: 1"
        "\tFinalizedMaxVersionLevel: 5\tEpoch: 1",
    ]
    # No node, or a disabled one: the broker's cache is empty and ApiVersions carries epoch -1.
    for node in (None, FeatureZNode(FeatureZNodeStatus.DISABLED, (), 4)):
        assert tool.describe(DEFAULT_SUPPORTED, node, profile="kafka")[0] == (
            "Feature: feature_1\tSupportedMinVersion: 1\tSupportedMaxVersion: 3\tFinalizedMinVersionLevel: -"
            "\tFinalizedMaxVersionLevel: -\tEpoch: -")


def test_kafka_upgrade_all_features_success() -> None:
    initial = supported_features({"feature_1": (1, 2)})
    lines, c = tool.upgrade_all(kafka_cluster((initial,) * 3), initial, profile="kafka")
    assert lines == ["      [Add]\tFeature: feature_1\tExistingFinalizedMaxVersion: -\tNewFinalizedMaxVersion: 2"
                     "\tResult: OK"]
    c = FeatureController(c.node, tuple((i, DEFAULT_SUPPORTED) for i in range(3)), DEFAULT_SUPPORTED,
                          profile="kafka")
    lines, c = tool.upgrade_all(c, DEFAULT_SUPPORTED, profile="kafka")
    assert lines == [
        "  [Upgrade]\tFeature: feature_1\tExistingFinalizedMaxVersion: 2\tNewFinalizedMaxVersion: 3\tResult: OK",
        "      [Add]\tFeature: feature_2\tExistingFinalizedMaxVersion: -\tNewFinalizedMaxVersion: 5\tResult: OK",
    ]
    assert tool.upgrade_all(c, DEFAULT_SUPPORTED, profile="kafka") == ([], c)


def test_kafka_downgrade_features_success() -> None:
    _, c = tool.upgrade_all(kafka_cluster((DEFAULT_SUPPORTED,) * 3), DEFAULT_SUPPORTED, profile="kafka")
    downgraded = supported_features({"feature_1": (1, 2)})
    lines, c = tool.downgrade_all(c, downgraded, profile="kafka")
    assert lines == [
        "[Downgrade]\tFeature: feature_1\tExistingFinalizedMaxVersion: 3\tNewFinalizedMaxVersion: 2\tResult: OK",
        "   [Delete]\tFeature: feature_2\tExistingFinalizedMaxVersion: 5\tNewFinalizedMaxVersion: -\tResult: OK",
    ]
    assert tool.downgrade_all(c, downgraded, profile="kafka") == ([], c)
    lines, c = tool.downgrade_all(c, (), profile="kafka")
    assert lines == [
        "   [Delete]\tFeature: feature_1\tExistingFinalizedMaxVersion: 2\tNewFinalizedMaxVersion: -\tResult: OK"]
    assert c.node is not None and c.node.features == ()


def test_kafka_upgrade_features_failure() -> None:
    c = kafka_cluster((DEFAULT_SUPPORTED,) * 3)
    target = supported_features({"feature_1": (1, 4), "feature_2": (1, 5), "feature_3": (1, 3)})
    with pytest.raises(tool.UpdateFeaturesException) as e:
        tool.upgrade_all(c, target, profile="kafka")
    assert str(e.value) == "2 feature updates failed!"
    assert e.value.lines == [
        "      [Add]\tFeature: feature_1\tExistingFinalizedMaxVersion: -\tNewFinalizedMaxVersion: 4\tResult: FAILED "
        "due to org.apache.kafka.common.errors.InvalidRequestException: Could not apply finalized feature update "
        "because brokers were found to have incompatible versions for the feature.",
        "      [Add]\tFeature: feature_2\tExistingFinalizedMaxVersion: -\tNewFinalizedMaxVersion: 5\tResult: OK",
        "      [Add]\tFeature: feature_3\tExistingFinalizedMaxVersion: -\tNewFinalizedMaxVersion: 3\tResult: FAILED "
        "due to org.apache.kafka.common.errors.InvalidRequestException: Could not apply finalized feature update "
        "because the provided feature is not supported.",
    ]
    # The valid update was written (Kafka's partial semantics).
    assert e.value.controller.node is not None
    assert e.value.controller.node.features == finalized_features({"feature_2": (1, 5)})


def test_kafka_dry_run_prints_the_plan_without_calling_the_controller() -> None:
    c = kafka_cluster((DEFAULT_SUPPORTED,) * 3, FeatureZNode(ENABLED, finalized_features({"feature_1": (1, 2)}), 3))
    lines, same = tool.upgrade_all(c, DEFAULT_SUPPORTED, dry_run=True, profile="kafka")
    assert same is c
    assert "\n".join(lines) == (
        "Expected feature updates:  [Upgrade]\tFeature: feature_1\tExistingFinalizedMaxVersion: 2"
        "\tNewFinalizedMaxVersion: 3\n"
        "      [Add]\tFeature: feature_2\tExistingFinalizedMaxVersion: -\tNewFinalizedMaxVersion: 5")
    # Nothing is sent, so a controller that would refuse the request changes nothing.
    refusing = FeatureController(c.node, c.live_brokers, c.own_supported, versioning_enabled=False, profile="kafka")
    assert tool.upgrade_all(refusing, DEFAULT_SUPPORTED, dry_run=True, profile="kafka")[0] == lines


def test_kafka_top_level_error_fails_every_update() -> None:
    c = FeatureController(FeatureZNode(ENABLED, (), 0), ((0, DEFAULT_SUPPORTED),), DEFAULT_SUPPORTED,
                          versioning_enabled=False, profile="kafka")
    with pytest.raises(tool.UpdateFeaturesException, match=r"^2 feature updates failed!$") as e:
        tool.upgrade_all(c, DEFAULT_SUPPORTED, profile="kafka")
    assert all(line.endswith("\tResult: FAILED due to org.apache.kafka.common.errors.InvalidRequestException: "
                             "Feature versioning system is disabled.") for line in e.value.lines)
    assert e.value.controller is c


def test_error_exception_strings() -> None:
    assert Errors.FEATURE_UPDATE_FAILED.exception_string(None) == (
        "org.apache.kafka.common.errors.FeatureUpdateFailedException: Unable to update finalized features due to "
        "an unexpected server error.")
    assert Errors.CLUSTER_AUTHORIZATION_FAILED.exception_string(None) == (
        "org.apache.kafka.common.errors.ClusterAuthorizationException: Cluster authorization failed.")
