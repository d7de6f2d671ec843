"""Kafka 4.0's ``FeatureControlManagerTest``, transcribed as facts against ``QuorumController`` (``kafka`` profile,
``kafka_release = "4.0"``) in ``reference_impl/metadata_version/api.py``.

Read first-hand: ``metadata/src/test/java/org/apache/kafka/controller/FeatureControlManagerTest.java`` on Apache
Kafka's 4.0 branch at commit 4ae681446f18f9a6d7a59f317013ef82379a4ba4 (2025-03-16, the branch head when 4.0.0 was
released), with ``FeatureControlManager.java``, ``QuorumFeatures.java``, ``Feature.java`` and ``MetadataVersion.java``
of the same commit. Both files last changed in 4990c970c194 (KAFKA-18979, "Report correct kraft.version in
ApiVersions", 2025-03-13). Each case id is the Kafka test method's name; its steps (updates, replays, reads) run in
Kafka's order on one controller.

How Kafka's fixture maps to ours:

* ``FeatureControlManager.Builder``: ``setQuorumFeatures(features(...))`` is ``local_supported`` (node 0, no quorum
  voters: the test's ``QuorumFeatures(0, ..., emptyList())``); ``features(...)`` starts from 4.0's
  ``defaultSupportedFeatureMap(true)``, stated below from ``MetadataVersion.java`` and ``Feature.java`` (each
  feature's ``latestTesting()``): metadata.version 7-26, kraft.version 0-1, transaction.version 0-2, group.version
  0-1, eligible.leader.replicas.version 0-1; ``setMetadataVersion`` is the finalized metadata.version (default
  ``latestProduction()``, 4.0-IV3); the fake ``ClusterFeatureSupportDescriber``'s brokers are ``brokers``.
* ``updateFeatures(updates, upgradeTypes, validateOnly)`` is an ``UpdateFeaturesRequest`` whose entries carry the
  raw ``UpgradeType`` byte (UPGRADE when none is given) and ``dry_run = validateOnly``. Its one ``ApiError`` is our
  response's top-level error, whose message ``QuorumController.updateFeatures`` prefixes with
  ``ALL_FAILED_PREFIX``; the manager's message is the rest.
* ``replay(FeatureLevelRecord)`` is ``QuorumController.replay``.

Differences from trunk 1eb7644 (``test_feature_control_manager_test.py``): versions are stated from
``MINIMUM_VERSION`` (3.3-IV3) up; ``testReplayKraftVersionFeatureLevel`` (KAFKA-18979: a kraft.version record is
skipped) and ``testUpgradeElrFeatureLevel`` are new; ``testCannotDowngradeToVersionBeforeMinimumSupportedKraftVersion``,
``testNoMetadataVersionChangeDuringMigration`` and ``testCannotDowngradeBefore3_3_IV0`` are gone (the last became
``testCannotDowngradeBeforeMinimumKraftVersion``, now refused by the local range check), with
``setMinimumBootstrapVersion`` and the ZooKeeper migration.

Not transcribed: ``testCanUseUnsafeDowngradeIfMetadataChanged`` is ``@Disabled`` at this commit (KAFKA-13896;
``testUnsafeDowngradeIsTemporarilyDisabled`` states what Kafka does instead).

Not expressible yet: none of the enabled cases. (``Feature.validateVersion``, the KIP-1022 dependency check that runs
after the range checks for a feature other than metadata.version, is not modelled; the cases that reach it pass it:
transaction.version and test.feature.version 1 have no dependency, and eligible.leader.replicas.version 1's, on
metadata.version 4.0-IV1, holds in ``testUpgradeElrFeatureLevel``.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from reference_impl.metadata_version.api import (
    ALL_FAILED_PREFIX,
    BrokerRegistration,
    ControllerResult,
    Errors,
    FeatureLevelRecord,
    FeatureUpdate,
    QuorumController,
    UpdateFeaturesRequest,
    UpgradeType,
    VersionRange,
)
from reference_impl.metadata_version.catalog import (
    FEATURE_NAME,
    KAFKA_CATALOG,
    MINIMUM_VERSION_4_X,
    MetadataVersion,
    latest_production,
    latest_testing,
)

M = MetadataVersion
MV = FEATURE_NAME
RELEASE = "4.0"
MINIMUM_VERSION = MINIMUM_VERSION_4_X
TEST_VERSION = "test.feature.version"  # TestFeatureVersion.FEATURE_NAME
TRANSACTION_VERSION = "transaction.version"  # TransactionVersion.FEATURE_NAME
KRAFT_VERSION = "kraft.version"  # KRaftVersion.FEATURE_NAME
ELR_VERSION = "eligible.leader.replicas.version"  # Feature.ELIGIBLE_LEADER_REPLICAS_VERSION.featureName()
UPGRADE, SAFE, UNSAFE = UpgradeType.UPGRADE, UpgradeType.SAFE_DOWNGRADE, UpgradeType.UNSAFE_DOWNGRADE
INVALID = Errors.INVALID_UPDATE_VERSION
LATEST_PRODUCTION = latest_production(RELEASE)  # 4.0-IV3, the Builder's default metadata.version
IBP_3_3_IV2_FEATURE_LEVEL = 6  # MetadataVersionTestUtils.IBP_3_3_IV2_FEATURE_LEVEL: a level Kafka 4.0 no longer has

# QuorumFeatures.defaultSupportedFeatureMap(true) at the commit read.
DEFAULT_SUPPORTED_UNSTABLE = {
    MV: VersionRange.of(MINIMUM_VERSION.feature_level, latest_testing(RELEASE).feature_level),
    KRAFT_VERSION: VersionRange.of(0, 1),  # KRaftVersion: KRAFT_VERSION_0, KRAFT_VERSION_1
    TRANSACTION_VERSION: VersionRange.of(0, 2),  # TransactionVersion: TV_0 .. TV_2
    "group.version": VersionRange.of(0, 1),  # GroupVersion: GV_0, GV_1
    ELR_VERSION: VersionRange.of(0, 1),  # EligibleLeaderReplicasVersion: ELRV_0, ELRV_1
}


def features(**overrides: tuple[int, int]) -> dict[str, VersionRange]:
    """Kafka's ``features(...)``: ``defaultSupportedFeatureMap(true)`` plus the test's ranges ("__" is ".")."""
    local = dict(DEFAULT_SUPPORTED_UNSTABLE)
    local.update({name.replace("__", "."): VersionRange.of(lo, hi) for name, (lo, hi) in overrides.items()})
    return local


@dataclass(frozen=True)
class Manager:
    """A ``FeatureControlManager.Builder``'s settings."""

    local: dict[str, VersionRange]
    metadata_version: MetadataVersion = LATEST_PRODUCTION
    brokers: dict[int, dict[str, VersionRange]] = field(default_factory=dict)


@dataclass(frozen=True)
class Update:
    """``updateFeatures``: the ``ApiError`` it answers and, unless None, the records it returns."""

    updates: tuple[tuple[str, int], ...]
    upgrade_types: tuple[tuple[str, UpgradeType], ...] = ()
    validate_only: bool = False
    error: Errors = Errors.NONE
    message: str | None = None
    records: tuple[FeatureLevelRecord, ...] | None = ()
    replay: bool = False  # then replay the records (manager.replay / RecordTestUtils.replayAll)


@dataclass(frozen=True)
class Replay:
    record: FeatureLevelRecord


@dataclass(frozen=True)
class Finalized:
    """``finalizedFeatures(epoch)``: every finalized feature with its level (metadata.version included)."""

    features: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Level:
    """``finalizedFeatures(...).get(feature)``: the level, or None for ``Optional.empty()``."""

    feature: str
    level: int | None


@dataclass(frozen=True)
class Version:
    """``manager.metadataVersion()``."""

    metadata_version: MetadataVersion


Step = Update | Replay | Finalized | Level | Version

BUILDER1 = Manager(features(metadata__version=(MINIMUM_VERSION.feature_level, M.IBP_3_6_IV0.feature_level)),
                   M.IBP_3_4_IV0)  # TEST_MANAGER_BUILDER1

CASES = [
    pytest.param(Manager(features(test__feature__version=(0, 2)), MINIMUM_VERSION), (
        Finalized(((MV, MINIMUM_VERSION.feature_level),)),
        Update(((TEST_VERSION, 3),), ((TEST_VERSION, SAFE),), error=INVALID,
               message="Invalid update version 3 for feature test.feature.version. Local controller 0 only supports "
                       "versions 0-2"),
        # Two features, one refused: nothing is written.
        Update(((TEST_VERSION, 1), ("bar", 1)), error=INVALID,
               message="Invalid update version 1 for feature bar. Local controller 0 does not support this feature."),
        Update(((TEST_VERSION, 1),), records=(FeatureLevelRecord(TEST_VERSION, 1),)),
    ), id="testUpdateFeatures"),
    pytest.param(Manager(features(foo=(1, 2)), MINIMUM_VERSION), (
        Replay(FeatureLevelRecord("foo", 2)),
        Finalized(((MV, MINIMUM_VERSION.feature_level), ("foo", 2))),
    ), id="testReplay"),
    pytest.param(Manager(features(foo=(1, 2))), (
        Replay(FeatureLevelRecord(MV, MINIMUM_VERSION.feature_level)),
        Replay(FeatureLevelRecord(KRAFT_VERSION, 1)),  # KRaftVersion.LATEST_PRODUCTION: skipped
        Finalized(((MV, MINIMUM_VERSION.feature_level),)),
    ), id="testReplayKraftVersionFeatureLevel"),
    pytest.param(Manager(features(foo=(1, 5), transaction__version=(0, 3)),
                         brokers={5: {TRANSACTION_VERSION: VersionRange.of(0, 2)}}), (
        Update((("foo", 3),), (("foo", SAFE),), error=INVALID,
               message="Invalid update version 3 for feature foo. Broker 5 does not support this feature."),
        Update(((TRANSACTION_VERSION, 2),), records=(FeatureLevelRecord(TRANSACTION_VERSION, 2),), replay=True),
        Update(((TRANSACTION_VERSION, 1),), error=INVALID,
               message="Invalid update version 1 for feature transaction.version. Can't downgrade the version of "
                       "this feature without setting the upgrade type to either safe or unsafe downgrade."),
        Update(((TRANSACTION_VERSION, 1),), ((TRANSACTION_VERSION, SAFE),),
               records=(FeatureLevelRecord(TRANSACTION_VERSION, 1),)),
    ), id="testUpdateFeaturesErrorCases"),
    pytest.param(Manager(features(test__feature__version=(0, 5), transaction__version=(0, 2)), MINIMUM_VERSION), (
        Update(((TEST_VERSION, 1), (TRANSACTION_VERSION, 2)), records=None, replay=True),
        Version(MINIMUM_VERSION),
        Level(TEST_VERSION, 1),
        Level(TRANSACTION_VERSION, 2),
        Finalized(((MV, MINIMUM_VERSION.feature_level), (TEST_VERSION, 1), (TRANSACTION_VERSION, 2))),
    ), id="testReplayRecords"),
    pytest.param(BUILDER1, (
        Replay(FeatureLevelRecord(MV, M.IBP_3_4_IV0.feature_level + 1)),
        Version(M.IBP_3_5_IV0),
    ), id="testApplyMetadataVersionChangeRecord"),
    pytest.param(BUILDER1, (
        Update(((MV, M.IBP_3_5_IV0.feature_level),), ((MV, SAFE),), validate_only=True, error=INVALID,
               message="Invalid update version 9 for feature metadata.version. Can't downgrade to a newer version."),
    ), id="testCannotDowngradeToHigherVersion"),
    pytest.param(BUILDER1, (
        Update(((MV, M.IBP_3_5_IV0.feature_level),), ((MV, UNSAFE),), validate_only=True, error=INVALID,
               message="Invalid update version 9 for feature metadata.version. Can't downgrade to a newer version."),
    ), id="testCannotUnsafeDowngradeToHigherVersion"),
    pytest.param(Manager(features(metadata__version=(MINIMUM_VERSION.feature_level, M.IBP_3_6_IV0.feature_level)),
                         M.IBP_3_5_IV1), (
        Update(((MV, M.IBP_3_5_IV0.feature_level),), ((MV, UPGRADE),), validate_only=True, error=INVALID,
               message="Invalid update version 9 for feature metadata.version. Can't downgrade the version of this "
                       "feature without setting the upgrade type to either safe or unsafe downgrade."),
    ), id="testCannotUpgradeToLowerVersion"),
    pytest.param(BUILDER1, (
        Update(((MV, M.IBP_3_5_IV0.feature_level),), ((MV, UPGRADE),), validate_only=True),
    ), id="testCanUpgradeToHigherVersion"),
    pytest.param(BUILDER1, (
        Update(((MV, M.IBP_3_3_IV3.feature_level),), ((MV, SAFE),), validate_only=True, error=INVALID,
               message="Invalid metadata.version 7. Refusing to perform the requested downgrade because it might "
                       "delete metadata information."),
    ), id="testCannotUseSafeDowngradeIfMetadataChanged"),
    pytest.param(BUILDER1, (
        Update(((MV, M.IBP_3_3_IV3.feature_level),), ((MV, UNSAFE),), validate_only=True, error=INVALID,
               message="Invalid metadata.version 7. Unsafe metadata downgrade is not supported in this version."),
    ), id="testUnsafeDowngradeIsTemporarilyDisabled"),
    pytest.param(Manager(features(metadata__version=(MINIMUM_VERSION.feature_level, M.IBP_3_6_IV0.feature_level)),
                         M.IBP_3_5_IV0), (
        Update(((MV, M.IBP_3_4_IV0.feature_level),), ((MV, SAFE),), validate_only=True),
    ), id="testCanUseSafeDowngradeIfMetadataDidNotChange"),
    pytest.param(Manager(features(metadata__version=(MINIMUM_VERSION.feature_level,
                                                     latest_testing(RELEASE).feature_level)), MINIMUM_VERSION), (
        Update(((MV, IBP_3_3_IV2_FEATURE_LEVEL),), ((MV, UNSAFE),), validate_only=True, error=INVALID,
               message="Invalid update version 6 for feature metadata.version. Local controller 0 only supports "
                       "versions 7-26"),
    ), id="testCannotDowngradeBeforeMinimumKraftVersion"),
    pytest.param(Manager({MV: VersionRange.of(MINIMUM_VERSION.feature_level, latest_testing(RELEASE).feature_level),
                          TEST_VERSION: VersionRange.of(0, 2)},
                         brokers={1: {TEST_VERSION: VersionRange.of(0, 3)}}), (
        Update(((TEST_VERSION, 1),), ((TEST_VERSION, UPGRADE),), records=(FeatureLevelRecord(TEST_VERSION, 1),),
               replay=True),
        Level(TEST_VERSION, 1),
        Update(((TEST_VERSION, 0),), ((TEST_VERSION, UNSAFE),), records=(FeatureLevelRecord(TEST_VERSION, 0),),
               replay=True),
        Level(TEST_VERSION, None),
    ), id="testCreateFeatureLevelRecords"),
    pytest.param(Manager({MV: VersionRange.of(M.IBP_4_0_IV1.feature_level, latest_testing(RELEASE).feature_level),
                          ELR_VERSION: VersionRange.of(0, 1)},
                         M.IBP_4_0_IV1, brokers={1: {ELR_VERSION: VersionRange.of(0, 1)}}), (
        Update(((ELR_VERSION, 1),), ((ELR_VERSION, UPGRADE),), records=(FeatureLevelRecord(ELR_VERSION, 1),),
               replay=True),
        Level(ELR_VERSION, 1),
    ), id="testUpgradeElrFeatureLevel"),
]


def build(manager: Manager) -> QuorumController:
    return QuorumController(
        catalog=KAFKA_CATALOG, node_id=0, local_supported=tuple(sorted(manager.local.items())), voters=(),
        brokers=tuple(BrokerRegistration(b, tuple(sorted(r.items())), fenced=False)
                      for b, r in sorted(manager.brokers.items())),
        finalized=((MV, manager.metadata_version.feature_level),), profile="kafka", kafka_release=RELEASE)


def api_error(result: ControllerResult) -> tuple[Errors, str | None]:
    """The manager's ``ApiError``: 4.0 answers it at the top level, behind the controller's prefix."""
    response = result.response
    if response.error is Errors.NONE:
        assert all(r.error is Errors.NONE for r in response.results)
        return Errors.NONE, None
    assert response.results == () and response.message is not None
    assert response.message.startswith(ALL_FAILED_PREFIX)
    return response.error, response.message[len(ALL_FAILED_PREFIX):]


def run(c: QuorumController, step: Step) -> QuorumController:
    if isinstance(step, Update):
        types = dict(step.upgrade_types)
        request = UpdateFeaturesRequest(tuple(
            FeatureUpdate.with_upgrade_type(name, level, types.get(name, UPGRADE).value)
            for name, level in step.updates), dry_run=step.validate_only)
        result = c.update_features(request)
        assert api_error(result) == (step.error, step.message)
        if step.error is not Errors.NONE or step.validate_only:
            assert result.records == ()  # ControllerResult.of(emptyList(), ...)
        if step.records is not None:
            assert result.records == step.records
        return c.apply(result) if step.replay else c
    if isinstance(step, Replay):
        return c.replay(step.record)
    if isinstance(step, Finalized):
        assert dict(c.finalized) == dict(step.features)
    elif isinstance(step, Level):
        assert dict(c.finalized).get(step.feature) == step.level
    else:
        assert c.metadata_version == step.metadata_version.feature_level
    return c


@pytest.mark.parametrize(("manager", "steps"), CASES)
def test_feature_control_manager(manager: Manager, steps: tuple[Step, ...]) -> None:
    c = build(manager)
    for step in steps:
        c = run(c, step)
