"""KIP-584 API level: every validation rule and error code, both profiles and both semantics, and the
KIP's own examples (kafka-features listings, the group_coordinator v1 -> v2 story)."""

from __future__ import annotations

import pytest

from reference_impl.features import tool
from reference_impl.features.api import (
    Errors,
    FeatureController,
    FeatureUpdate,
    FeatureZNode,
    FeatureZNodeStatus,
    FinalizedVersionRange,
    SupportedVersionRange,
    UpdateFeaturesRequest,
    deprecate_min_levels,
    finalized_features,
    is_compatible,
    setup_feature_versioning,
    supported_features,
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
    for profile, error in (("kip", Errors.FEATURE_UPDATE_FAILED), ("kafka", Errors.INVALID_REQUEST)):
        response, after = controller(profile=profile, brokers=(NEW_BINARY, old)).update_features(
            req(("group_coordinator", 2, False)))
        assert response.results[0].error is error and "broker 1" in (response.results[0].message or "")
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
