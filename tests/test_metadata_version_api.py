"""KIP-778 API level: every UpdateFeatures rule with its error under the kip and kafka profiles (Kafka
3.9 and 4.0 messages), broker registration, storage formatting and the kafka-features functions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reference_impl.metadata_version import tool
from reference_impl.metadata_version.api import (
    BrokerRegistration,
    BrokerRegistrationRequest,
    DowngradeType,
    Errors,
    FeatureLevelRecord,
    FeatureUpdate,
    MetaProperties,
    QuorumController,
    UpdateFeaturesRequest,
    UpgradeType,
    VersionRange,
    bootstrap_metadata_version,
    default_local_supported,
    format_storage,
    request,
)
from reference_impl.metadata_version.catalog import EXAMPLE_CATALOG, FEATURE_NAME, KAFKA_CATALOG

MV = FEATURE_NAME
NEW = VersionRange(1, 5)
OLD = VersionRange(1, 3)


def ctl(profile: str = "kip", level: int = 3, voters: tuple[VersionRange | None, ...] = (NEW, NEW, NEW),
        brokers: tuple[VersionRange, ...] = (NEW,), **kw: object) -> QuorumController:
    return QuorumController(
        catalog=kw.pop("catalog", EXAMPLE_CATALOG),  # type: ignore[arg-type]
        node_id=0, local_supported=kw.pop("local_supported", ((MV, voters[0] or NEW),)),  # type: ignore[arg-type]
        voters=tuple(enumerate(voters)),
        brokers=tuple(BrokerRegistration(10 + i, ((MV, r),), fenced=False) for i, r in enumerate(brokers)),
        finalized=((MV, level),), profile=profile, **kw)  # type: ignore[arg-type]


def first(c: QuorumController, req: UpdateFeaturesRequest) -> tuple[Errors, str | None, tuple[FeatureLevelRecord, ...]]:
    result = c.update_features(req)
    error, message = result.response.first_error()
    return error, message, result.records


# ---------------------------------------------------------------- request shapes
def test_downgrade_type_and_legacy_allow_downgrade() -> None:
    assert FeatureUpdate.legacy(MV, 2, True).downgrade_type is DowngradeType.SAFE
    assert FeatureUpdate.legacy(MV, 4, False).downgrade_type is DowngradeType.NONE
    assert [UpgradeType.of(d) for d in DowngradeType] == [UpgradeType.UPGRADE, UpgradeType.SAFE_DOWNGRADE,
                                                          UpgradeType.UNSAFE_DOWNGRADE]
    assert UpgradeType.from_code(7) is UpgradeType.UNKNOWN and UpgradeType.from_code(3) is UpgradeType.UNSAFE_DOWNGRADE
    assert str(VersionRange(1, 5)) == "1-5" and str(VersionRange(4, 4)) == "4"
    with pytest.raises(ValueError, match="invalid version range"):
        VersionRange(3, 1)
    with pytest.raises(ValueError, match="profile"):
        ctl(profile="zk")


# ---------------------------------------------------------------- kip profile
def test_kip_upgrade_writes_a_feature_level_record() -> None:
    c = ctl()
    result = c.update_features(request(MV, 5))
    assert result.response.ok and result.records == (FeatureLevelRecord(MV, 5),)
    assert c.apply(result).metadata_version == 5


@pytest.mark.parametrize(("kw", "req", "error", "fragment"), [
    ({}, request(MV, 2), Errors.INVALID_REQUEST, "without DowngradeType SAFE or UNSAFE"),
    ({}, request(MV, 4, DowngradeType.SAFE), Errors.INVALID_REQUEST, "must lower its level"),
    ({}, request(MV, 3), Errors.INVALID_REQUEST, "to the same value"),
    ({}, request(MV, 0, DowngradeType.UNSAFE), Errors.INVALID_REQUEST, "can not be deleted"),
    ({}, request(MV, 9), Errors.INVALID_REQUEST, "Unknown metadata.version level 9"),
    ({"brokers": (OLD,)}, request(MV, 4), Errors.FEATURE_UPDATE_FAILED, "Broker 10 only supports"),
    ({"voters": (NEW, OLD, OLD)}, request(MV, 4), Errors.FEATURE_UPDATE_FAILED, "a majority is required"),
    ({"voters": (NEW, None, OLD)}, request(MV, 4), Errors.FEATURE_UPDATE_FAILED, "Only 1 of 3"),
    ({"voters": (OLD, NEW, NEW)}, request(MV, 4), Errors.FEATURE_UPDATE_FAILED, "Local controller 0"),
    ({"level": 4}, request(MV, 3, DowngradeType.SAFE), Errors.UNSAFE_FEATURE_DOWNGRADE, "would lose metadata"),
])
def test_kip_rules(kw: dict[str, object], req: UpdateFeaturesRequest, error: Errors, fragment: str) -> None:
    got, message, records = first(ctl(**kw), req)  # type: ignore[arg-type]
    assert got is error and message is not None and fragment in message
    assert records == ()


def test_kip_majority_is_enough_and_lossy_unsafe_is_allowed() -> None:
    assert ctl(voters=(NEW, NEW, OLD)).update_features(request(MV, 5)).response.ok
    lossy = ctl(level=5).update_features(request(MV, 2, DowngradeType.UNSAFE))
    assert lossy.response.ok and lossy.records == (FeatureLevelRecord(MV, 2),)
    # KIP example: 5 -> 4 lossless, 3 -> anything lossless (SAFE suffices), >= 4 -> <= 3 lossy.
    assert ctl(level=5).update_features(request(MV, 4, DowngradeType.SAFE)).response.ok
    assert ctl(level=3).update_features(request(MV, 1, DowngradeType.SAFE)).response.ok
    for source in (4, 5):
        for target in (1, 2, 3):
            err, _, _ = first(ctl(level=source), request(MV, target, DowngradeType.SAFE))
            assert err is Errors.UNSAFE_FEATURE_DOWNGRADE


def test_kip_dry_run_and_all_or_nothing() -> None:
    c = ctl(local_supported=((MV, NEW), ("group.version", VersionRange(0, 1))))  # type: ignore[arg-type]
    dry = c.update_features(request(MV, 5, dry_run=True))
    assert dry.response.ok and dry.records == ()
    both = UpdateFeaturesRequest((FeatureUpdate(MV, 5), FeatureUpdate("group.version", 7)))
    result = c.update_features(both)
    assert result.records == ()  # the revision: one failure, nothing applied
    assert result.response.result(MV).error is Errors.FEATURE_UPDATE_FAILED
    assert "another update" in (result.response.result(MV).message or "")


def test_top_level_errors() -> None:
    c = ctl()
    assert c.update_features(request(MV, 4), principal_can_alter=False).response.error \
        is Errors.CLUSTER_AUTHORIZATION_FAILED
    assert replace(c, is_active=False).update_features(request(MV, 4)).response.error is Errors.NOT_CONTROLLER
    dup = UpdateFeaturesRequest((FeatureUpdate(MV, 4), FeatureUpdate(MV, 5)))
    assert c.update_features(dup).response.error is Errors.INVALID_REQUEST


# ---------------------------------------------------------------- kafka profile (3.9 messages)
@pytest.mark.parametrize(("kw", "req", "message"), [
    ({}, request(MV, 2), "Invalid update version 2 for feature metadata.version. Can't downgrade the version of "
     "this feature without setting the upgrade type to either safe or unsafe downgrade."),
    ({}, request(MV, 4, DowngradeType.SAFE), "Invalid update version 4 for feature metadata.version. "
     "Can't downgrade to a newer version."),
    ({}, request(MV, -1, DowngradeType.SAFE), "Invalid update version -1 for feature metadata.version. "
     "A feature version cannot be less than 0."),
    ({}, request(MV, 0, DowngradeType.SAFE), "Invalid update version 0 for feature metadata.version. "
     "Local controller 0 only supports versions 1-5"),
    ({"brokers": (OLD,)}, request(MV, 4), "Invalid update version 4 for feature metadata.version. "
     "Broker 10 only supports versions 1-3"),
    ({"voters": (NEW, NEW, OLD)}, request(MV, 4), "Invalid update version 4 for feature metadata.version. "
     "Controller 2 only supports versions 1-3"),
    ({"voters": (NEW, None, NEW)}, request(MV, 4), "Invalid update version 4 for feature metadata.version. "
     "controller 1 has not registered, and may not support this feature"),
    ({"level": 5}, request(MV, 3, DowngradeType.SAFE), "Invalid metadata.version 3. Refusing to perform the "
     "requested downgrade because it might delete metadata information."),
    ({"level": 5}, request(MV, 3, DowngradeType.UNSAFE), "Invalid metadata.version 3. Unsafe metadata downgrade "
     "is not supported in this version."),
    ({"zk_migration_in_progress": True}, request(MV, 4), "Invalid metadata.version 4. Unable to modify "
     "metadata.version while a ZK migration is in progress."),
    ({"catalog": KAFKA_CATALOG, "level": 7, "voters": (VersionRange(1, 21),) * 3,
      "brokers": (VersionRange(1, 21),)}, request(MV, 3, DowngradeType.SAFE),
     "Invalid metadata.version 3. Unable to set a metadata.version less than 3.3-IV0"),
])
def test_kafka_rules_and_messages(kw: dict[str, object], req: UpdateFeaturesRequest, message: str) -> None:
    got, text, records = first(ctl(profile="kafka", **kw), req)  # type: ignore[arg-type]
    assert got is Errors.INVALID_UPDATE_VERSION and text == message and records == ()


def test_kafka_same_level_writes_a_record_and_unknown_upgrade_type() -> None:
    c = ctl(profile="kafka")
    assert c.update_features(request(MV, 3)).records == (FeatureLevelRecord(MV, 3),)
    assert c.update_features(request(MV, 3, DowngradeType.SAFE)).response.ok
    lossless = ctl(profile="kafka", level=5).update_features(request(MV, 4, DowngradeType.SAFE))
    assert lossless.response.ok and lossless.records == (FeatureLevelRecord(MV, 4),)


def test_kafka_below_controller_registration_checks_only_itself() -> None:
    # 3.6-IV2 (level 14) is below 3.7-IV0: Kafka cannot verify the other controllers.
    r36, r37 = VersionRange(1, 14), VersionRange(1, 19)
    c = ctl(profile="kafka", catalog=KAFKA_CATALOG, level=14, voters=(r37, r36, r36), brokers=(r37,))
    assert c.update_features(request(MV, 15)).response.ok
    at15 = replace(c, finalized=((MV, 15),))
    assert "Controller 1 only supports versions 1-14" in (at15.update_features(request(MV, 17)).response
                                                         .first_error()[1] or "")


def test_kafka_39_per_feature_results_against_40_all_or_nothing() -> None:
    local = ((MV, NEW), ("group.version", VersionRange(0, 1)))
    req = UpdateFeaturesRequest((FeatureUpdate(MV, 5), FeatureUpdate("group.version", 7)))
    r39 = ctl(profile="kafka", local_supported=local).update_features(req)  # type: ignore[arg-type]
    assert r39.response.error is Errors.NONE
    assert r39.response.result(MV).error is Errors.NONE
    assert r39.response.result("group.version").error is Errors.INVALID_UPDATE_VERSION
    assert r39.records == (FeatureLevelRecord(MV, 5),)  # the valid half is written
    r40 = ctl(profile="kafka", kafka_release="4.0", local_supported=local).update_features(req)  # type: ignore[arg-type]
    assert r40.response.error is Errors.INVALID_UPDATE_VERSION and r40.response.results == () and r40.records == ()
    assert r40.response.message == ("The update failed for all features since the following feature had an "
                                    "error: Invalid update version 7 for feature group.version. Local controller 0 "
                                    "only supports versions 0-1")
    ok40 = ctl(profile="kafka", kafka_release="4.0").update_features(request(MV, 4))
    assert ok40.response.ok and ok40.response.results[0].error is Errors.NONE


# ---------------------------------------------------------------- registration, format, bootstrap
def test_broker_registration_rule() -> None:
    c = ctl(level=5)
    reply, after = c.register_broker(BrokerRegistrationRequest(11, ((MV, OLD),)))
    assert reply.error is Errors.UNSUPPORTED_VERSION and after is c
    assert reply.message == ("Unable to register because the broker does not support finalized version 5 of "
                             "metadata.version. The broker wants a version between 1 and 3, inclusive.")
    reply, after = c.register_broker(BrokerRegistrationRequest(11, ((MV, NEW),)))
    assert reply.ok and [b.broker_id for b in after.brokers] == [10, 11] and after.brokers[1].fenced
    # A broker that sends no metadata.version range is taken to support only the first version.
    legacy, _ = c.register_broker(BrokerRegistrationRequest(12, None))
    assert not legacy.ok and "between 1 and 1" in (legacy.message or "")
    assert ctl(level=1).register_broker(BrokerRegistrationRequest(12, None))[0].ok
    # Kafka 4.0 has no MINIMUM_KRAFT_VERSION to assume: registerBroker refuses the request
    # (InvalidRegistrationException, Errors.INVALID_REGISTRATION); the KIP is silent, kip keeps the assumption.
    k40 = ctl(profile="kafka", level=7, kafka_release="4.0", catalog=KAFKA_CATALOG,
              local_supported=((MV, VersionRange(7, 7)),), voters=(VersionRange(7, 7),), brokers=())
    refused, after = k40.register_broker(BrokerRegistrationRequest(12, None))
    assert refused.error is Errors.INVALID_REGISTRATION and int(refused.error) == 119 and after is k40
    assert refused.message == "Request features do not contain 'metadata.version'"
    assert ctl(profile="kip", level=1, kafka_release="4.0").register_broker(BrokerRegistrationRequest(12, None))[0].ok


def test_format_and_bootstrap() -> None:
    assert format_storage("c1", EXAMPLE_CATALOG, 3).metadata_version == 3  # the binary's default
    assert format_storage("c1", EXAMPLE_CATALOG, 3, "V2").metadata_version == 2
    assert format_storage("c1", KAFKA_CATALOG, 21, "3.3-IV3", profile="kafka").metadata_version == 7
    with pytest.raises(ValueError) as e:
        format_storage("c1", KAFKA_CATALOG, 21, "3.2-IV0", profile="kafka")
    assert str(e.value) == ("Bootstrap metadata.version before 3.3-IV0 are not supported. Can't load metadata "
                            "from format command")
    with pytest.raises(ValueError, match="not valid in catalog"):
        format_storage("c1", EXAMPLE_CATALOG, 3, "V9")
    preview = MetaProperties("c1", None)
    assert bootstrap_metadata_version(preview, EXAMPLE_CATALOG) == FeatureLevelRecord(MV, 1)
    assert bootstrap_metadata_version(MetaProperties("c1", 3), EXAMPLE_CATALOG) == FeatureLevelRecord(MV, 3)
    assert bootstrap_metadata_version(preview, EXAMPLE_CATALOG, log_levels=[2]) is None


def test_kafka_features_tool_functions() -> None:
    c = ctl()
    assert [str(d) for d in tool.describe(c)] == [
        "Feature: metadata.version\tSupportedMinVersion: 1\tSupportedMaxVersion: 5\tFinalizedVersionLevel: 3"]
    resp, dry = tool.upgrade(c, metadata="V5", dry_run=True)
    assert resp.ok and dry.metadata_version == 3
    resp, up = tool.upgrade(c, features=["metadata.version=V5"])
    assert resp.ok and up.metadata_version == 5
    resp, same = tool.downgrade(up, metadata="V2")
    assert resp.first_error()[0] is Errors.UNSAFE_FEATURE_DOWNGRADE and same.metadata_version == 5
    resp, down = tool.downgrade(up, metadata="V2", unsafe=True)
    assert resp.ok and down.metadata_version == 2
    resp, _ = tool.disable(up, features=[MV], unsafe=True)
    assert resp.first_error()[0] is Errors.INVALID_REQUEST
    with pytest.raises(ValueError, match="name=level"):
        tool.upgrade(c, features=["metadata.version"])
    with pytest.raises(ValueError, match="give --metadata"):
        tool.upgrade(c)
    with pytest.raises(ValueError, match="not valid in catalog example"):
        tool.upgrade(c, metadata="3.3-IV3")


# ---------------------------------------------------------------- Kafka fidelity (QuorumController, 3.9 / 4.0)
def test_kafka_repeated_feature_is_no_error_the_last_entry_wins() -> None:
    # QuorumController.updateFeatures puts the entries in a HashMap by name; the KIP profile refuses it.
    dup = UpdateFeaturesRequest((FeatureUpdate(MV, 4), FeatureUpdate(MV, 5)))
    result = ctl(profile="kafka").update_features(dup)
    assert result.response.ok and result.records == (FeatureLevelRecord(MV, 5),)
    assert [r.feature for r in result.response.results] == [MV]
    assert ctl().update_features(dup).response.error is Errors.INVALID_REQUEST


def test_kafka_v0_allow_downgrade_arrives_as_upgrade() -> None:
    # The KRaft controller reads UpgradeType, which v0 lacks: its default 1 (UPGRADE) applies.
    v0 = UpdateFeaturesRequest((FeatureUpdate.legacy(MV, 4, True),))
    got, text, _ = first(ctl(profile="kafka", level=5), v0)
    assert got is Errors.INVALID_UPDATE_VERSION and text == (
        "Invalid update version 4 for feature metadata.version. Can't downgrade the version of this feature "
        "without setting the upgrade type to either safe or unsafe downgrade.")
    assert ctl(level=5).update_features(v0).response.ok  # KIP-778: AllowDowngrade is a SAFE downgrade
    raw = UpdateFeaturesRequest((FeatureUpdate.with_upgrade_type(MV, 4, 7),))
    got, text, _ = first(ctl(profile="kafka"), raw)
    assert text == "Invalid update version 4 for feature metadata.version. The controller does not support the " \
                   "given upgrade type."
    assert ctl(profile="kafka", level=5).update_features(
        UpdateFeaturesRequest((FeatureUpdate.with_upgrade_type(MV, 4, 2),))).response.ok
    assert first(ctl(), raw)[0] is Errors.INVALID_REQUEST


def test_kafka_40_response_shape() -> None:
    local = ((MV, NEW), ("group.version", VersionRange(0, 1)))
    req = UpdateFeaturesRequest((FeatureUpdate("group.version", 1), FeatureUpdate(MV, 5)))
    ok = ctl(profile="kafka", kafka_release="4.0", brokers=(), local_supported=local).update_features(req)  # type: ignore[arg-type]
    assert ok.response.error is Errors.NONE and ok.response.message is None
    assert [(r.feature, r.error, r.message) for r in ok.response.results] == [
        ("group.version", Errors.NONE, "NONE"), (MV, Errors.NONE, "NONE")]


def test_kafka_40_minimum_version_and_no_zk_checks() -> None:
    assert default_local_supported(KAFKA_CATALOG, "4.0") == VersionRange(7, 25)
    assert default_local_supported(KAFKA_CATALOG) == VersionRange(1, 21)
    assert default_local_supported(KAFKA_CATALOG, "3.9", enable_unstable=True) == VersionRange(1, 27)
    r40 = default_local_supported(KAFKA_CATALOG, "4.0")
    kw = {"catalog": KAFKA_CATALOG, "level": 8, "voters": (r40,) * 3, "brokers": (r40,), "kafka_release": "4.0"}
    _, text, _ = first(ctl(profile="kafka", **kw), request(MV, 5, DowngradeType.SAFE))  # type: ignore[arg-type]
    assert text == ("The update failed for all features since the following feature had an error: Invalid update "
                    "version 5 for feature metadata.version. Local controller 0 only supports versions 7-25")
    wide = VersionRange(1, 25)  # even a controller that claimed 1-25 has no 3.3-IV1 in 4.0
    kw.update(voters=(wide,) * 3, brokers=(wide,))
    _, text, _ = first(ctl(profile="kafka", **kw), request(MV, 5, DowngradeType.SAFE))  # type: ignore[arg-type]
    # 4.0's enum has no level 5: refused naming the valid range, MINIMUM_VERSION to latestTesting() (the 4.0.0 jar).
    assert text is not None and text.endswith("Invalid metadata.version 5. Valid versions are from 7 to 26.")
    kw.update(zk_migration_in_progress=True)
    assert ctl(profile="kafka", **kw).update_features(request(MV, 9)).response.ok  # type: ignore[arg-type]


def test_kafka_controller_with_none_finalized_reads_its_releases_default() -> None:
    """3.9's QuorumController sets FeatureControlManager to MINIMUM_KRAFT_VERSION (3.0-IV1); 4.0 sets none, so the
    Builder's latestProduction() (4.0-IV3) stands; the kip controller never reads it (0, none)."""
    def bare(profile: str, release: str) -> QuorumController:
        return QuorumController(catalog=KAFKA_CATALOG, node_id=0, local_supported=((MV, VersionRange(1, 27)),),
                                voters=((0, VersionRange(1, 27)),), profile=profile, kafka_release=release)
    assert bare("kafka", "3.9").metadata_version == 1
    assert bare("kafka", "4.0").metadata_version == 25
    # From 4.0-IV3 a step to 4.0-IV1 is lossless (4.0-IV3 and IV2 kept the format), one to 3.9-IV0 is not.
    assert bare("kafka", "4.0").update_features(request(MV, 23, DowngradeType.SAFE)).response.ok
    refused = bare("kafka", "4.0").update_features(request(MV, 21, DowngradeType.SAFE)).response
    assert refused.message is not None and "Refusing to perform the requested downgrade" in refused.message


def test_kafka_replay_refuses_a_level_outside_the_local_range() -> None:
    c = ctl(profile="kafka")
    with pytest.raises(RuntimeError) as e:
        c.replay(FeatureLevelRecord(MV, 9))
    assert str(e.value) == ("Tried to apply FeatureLevelRecord FeatureLevelRecord(name='metadata.version', "
                            "featureLevel=9), but this controller only supports versions 1-5")
    assert c.replay(FeatureLevelRecord(MV, 5)).metadata_version == 5


def test_top_level_messages_are_kafkas() -> None:
    c = ctl(profile="kafka")
    denied = c.update_features(request(MV, 4), principal_can_alter=False, request_description="R1").response
    assert (denied.error, denied.message) == (Errors.CLUSTER_AUTHORIZATION_FAILED, "Request R1 is not authorized.")
    follower = replace(c, is_active=False, active_controller_id=2).update_features(request(MV, 4)).response
    assert (follower.error, follower.message) == (Errors.NOT_CONTROLLER, "The active controller appears to be node 2.")
    alone = replace(c, is_active=False).update_features(request(MV, 4)).response
    assert alone.message == "No controller appears to be active."


def test_kafka_reason_order_and_other_voters_features() -> None:
    # Registered controllers are walked first; an unregistered voter is reported only if they all pass.
    _, text, _ = first(ctl(profile="kafka", voters=(NEW, None, OLD)), request(MV, 4))
    assert text == "Invalid update version 4 for feature metadata.version. Controller 2 only supports versions 1-3"
    _, text, _ = first(ctl(profile="kafka", voters=(NEW, None, NEW)), request(MV, 4))
    assert text is not None and text.endswith("controller 1 has not registered, and may not support this feature")
    # A voter known by its metadata.version range runs this controller's software for other features ...
    local = ((MV, NEW), ("group.version", VersionRange(0, 1)))
    c = ctl(profile="kafka", brokers=(), local_supported=local)  # type: ignore[arg-type]
    assert c.update_features(request("group.version", 1)).response.ok
    # ... one known by its registration supports only what it lists.
    listed = replace(c, voters=((0, NEW), (1, ((MV, NEW),)), (2, NEW)))
    assert first(listed, request("group.version", 1))[1] == (
        "Invalid update version 1 for feature group.version. Controller 1 does not support this feature.")


def test_registration_checks_in_kafkas_order() -> None:
    # Request features as sent, then the assumed metadata.version, then finalized features not listed.
    c = replace(ctl(level=5), finalized=(("a.feature", 1), (MV, 5)))
    reply, _ = c.register_broker(BrokerRegistrationRequest(11, (("z.feature", VersionRange(2, 3)), (MV, NEW))))
    assert reply.message == ("Unable to register because the broker does not support finalized version 0 of "
                             "z.feature. The broker wants a version between 2 and 3, inclusive.")
    reply, _ = c.register_broker(BrokerRegistrationRequest(11, (("z.feature", VersionRange(0, 1)),)))
    assert reply.message is not None and "finalized version 5 of metadata.version" in reply.message
    reply, _ = c.register_broker(BrokerRegistrationRequest(11, ((MV, NEW),)))
    assert reply.message == ("Unable to register because the broker does not support finalized version 1 of "
                             "a.feature. The broker wants a version between 0 and 0, inclusive.")


def test_kafka_format_messages() -> None:
    def fmt(version: str | int, **kw: object) -> int | None:
        return format_storage("c1", KAFKA_CATALOG, 21, version, profile="kafka", **kw).metadata_version  # type: ignore[arg-type]

    assert fmt("3.3") == 7 and fmt("3.3.1") == 7 and fmt("4.0", kafka_release="4.0") == 25
    assert fmt("4.0-IV0", unstable_feature_versions_enabled=True) == 22
    for version, kw, message in [
        ("4.0", {}, "Version 4.0 is not a valid version"),
        ("4.0-IV0", {}, "metadata.version 4.0-IV0 is not yet stable."),
        ("2.8", {}, "metadata.version 2.8-IV1 is too old to be supported."),
        ("3.2-IV0", {}, "Bootstrap metadata.version before 3.3-IV0 are not supported. Can't load metadata from "
                        "format command"),
        (3, {}, "Bootstrap metadata.version before 3.3-IV0 are not supported. Can't load metadata from "
                "format command"),
        ("4.1-IV0", {"kafka_release": "4.0"}, "metadata.version 4.1-IV0 is not yet stable."),
    ]:
        with pytest.raises(ValueError) as e:
            fmt(version, **kw)
        assert str(e.value) == message


def test_kafka_features_command_output() -> None:
    r = VersionRange(1, 21)
    c = replace(ctl(profile="kafka", catalog=KAFKA_CATALOG, level=5, voters=(r,), brokers=()),
                local_supported=((MV, r), ("foo.bar", VersionRange(0, 10))), finalized=(("foo.bar", 5), (MV, 5)))
    assert tool.main_no_exit(c, "describe", epoch=123).stdout == (
        "Feature: foo.bar\tSupportedMinVersion: 0\tSupportedMaxVersion: 10\tFinalizedVersionLevel: 5\tEpoch: 123",
        "Feature: metadata.version\tSupportedMinVersion: 3.0-IV1\tSupportedMaxVersion: 3.9-IV0\t"
        "FinalizedVersionLevel: 3.3-IV1\tEpoch: 123")
    out = tool.main_no_exit(c, "upgrade", "--metadata", "3.3-IV2", "--feature", "foo.bar=6", "--dry-run")
    assert (out.exit_code, out.text) == (0, "foo.bar can be upgraded to 6.\nmetadata.version can be upgraded to 6.")
    assert out.controller.metadata_version == 5
    out = tool.main_no_exit(c, "upgrade", "--metadata", "3.3", "--feature", "foo.bar=4")
    assert out.exit_code == 1 and out.stderr == "1 out of 2 operation(s) failed."
    assert out.stdout == ("Could not upgrade foo.bar to 4. Invalid update version 4 for feature foo.bar. Can't "
                          "downgrade the version of this feature without setting the upgrade type to either safe "
                          "or unsafe downgrade.", "metadata.version was upgraded to 7.")
    assert out.controller.metadata_version == 7  # 3.9 writes the update that passed
    out = tool.main_no_exit(c, "disable", "--feature", "metadata.version", "--dry-run")
    assert out.text == ("Can not disable metadata.version. Invalid update version 0 for feature metadata.version. "
                        "Local controller 0 only supports versions 1-21")
    out = tool.main_no_exit(c, "downgrade", "--unsafe", "--metadata", "3.3-IV0")
    assert out.text == ("Could not downgrade metadata.version to 4. Invalid metadata.version 4. Unsafe metadata "
                        "downgrade is not supported in this version.")
    for args, stderr in [
        (("upgrade",), "You must specify at least one feature to upgrade"),
        (("upgrade", "--feature", "baaz"), "Can't parse feature=level string baaz: equals sign not found."),
        (("upgrade", "--feature", "w=tf"), "Can't parse feature=level string w=tf: unable to parse tf as a short."),
        (("upgrade", "--feature", "foo.bar=0"), "The upgradeType flag should be set to SAFE_DOWNGRADE or "
                                                "UNSAFE_DOWNGRADE when the provided maxVersionLevel:0 is < 1."),
        (("upgrade", "--metadata", "3.3", "--feature", "metadata.version=7"),
         "Feature metadata.version was specified more than once."),
        (("upgrade", "--metadata", "3.10"), "Unsupported metadata.version 3.10. Supported metadata.version are "
                                            "3.3-IV0, 3.3-IV1, 3.3-IV2, 3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, "
                                            "3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, "
                                            "3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0"),
    ]:
        out = tool.main_no_exit(c, *args)
        assert (out.exit_code, out.stdout, out.stderr) == (1, (), stderr)
    assert tool.parse_name_and_level(" quux = 0 ") == ("quux", "0")
    assert tool.level_to_string("foo.bar", 5) == "5" and tool.level_to_string(MV, 4) == "3.3-IV0"
    assert tool.level_to_string(MV, 99) == "UNKNOWN 99"
    # 4.0's controller fails every feature of the request with its one top-level error.
    c40 = replace(c, kafka_release="4.0", local_supported=((MV, VersionRange(7, 25)), ("foo.bar", VersionRange(0, 10))),
                  finalized=(("foo.bar", 5), (MV, 7)))
    out = tool.main_no_exit(c40, "upgrade", "--feature", "foo.bar=11", "--feature", "metadata.version=8")
    prefix = "The update failed for all features since the following feature had an error: "
    assert out.stdout == (f"Could not upgrade foo.bar to 11. {prefix}Invalid update version 11 for feature foo.bar. "
                          "Local controller 0 only supports versions 0-10",
                          f"Could not upgrade metadata.version to 8. {prefix}Invalid update version 11 for feature "
                          "foo.bar. Local controller 0 only supports versions 0-10")
    assert out.stderr == "2 out of 2 operation(s) failed." and out.controller.metadata_version == 7


def test_bootstrap_metadata_refusal_in_each_release_lines_words() -> None:
    # BootstrapMetadata's constructor: "metadata versions" up to 3.7.x, "metadata.version" from 3.8.0
    # (metadata/.../metadata/bootstrap/BootstrapMetadata.java at 3.7.0 and 3.8.0).
    from reference_impl.metadata_version.api import bootstrap_metadata

    for release, noun in (("3.3", "metadata versions"), ("3.9", "metadata.version"), ("4.0", "metadata.version")):
        with pytest.raises(ValueError) as e:
            bootstrap_metadata(3, KAFKA_CATALOG, "format command", release)
        assert str(e.value) == (f"Bootstrap {noun} before 3.3-IV0 are not supported. Can't load metadata from "
                                "format command")
        assert bootstrap_metadata(4, KAFKA_CATALOG, "s", release) == FeatureLevelRecord("metadata.version", 4)
    with pytest.raises(ValueError, match=r"^Bootstrap metadata versions before 3\.3-IV0"):
        format_storage("c1", KAFKA_CATALOG, 7, 3, profile="kafka", kafka_release="3.3")
