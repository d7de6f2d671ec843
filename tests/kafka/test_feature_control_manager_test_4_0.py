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

import pytest

from reference_impl.metadata_version.api import (
    ALL_FAILED_PREFIX,
    ControllerResult,
    Errors,
    FeatureLevelRecord,
    VersionRange,
)
from reference_impl.metadata_version.catalog import MINIMUM_VERSION_4_X, latest_production, latest_testing
from tests.kafka import _feature_control_manager as shared
from tests.kafka._feature_control_manager import Finalized, Level, Manager, Replay, Update, Version
from tests.kafka._names import INVALID, KRAFT_VERSION, MV, SAFE, TEST_VERSION, TRANSACTION_VERSION, UNSAFE, UPGRADE, M

RELEASE = "4.0"
MINIMUM_VERSION = MINIMUM_VERSION_4_X
ELR_VERSION = "eligible.leader.replicas.version"  # Feature.ELIGIBLE_LEADER_REPLICAS_VERSION.featureName()
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
    return shared.with_ranges(DEFAULT_SUPPORTED_UNSTABLE, overrides)


BUILDER1 = Manager(features(metadata__version=(MINIMUM_VERSION.feature_level, M.IBP_3_6_IV0.feature_level)),
                   M.IBP_3_4_IV0)  # TEST_MANAGER_BUILDER1

CASES = [
    pytest.param(Manager(features(test__feature__version=(0, 2)), MINIMUM_VERSION), (
        Finalized(((MV, MINIMUM_VERSION.feature_level),)),
        *shared.UPDATE_FEATURES,
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
        *shared.UPDATE_FEATURES_ERROR_CASES,
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
        *shared.CREATE_FEATURE_LEVEL_RECORDS,
    ), id="testCreateFeatureLevelRecords"),
    pytest.param(Manager({MV: VersionRange.of(M.IBP_4_0_IV1.feature_level, latest_testing(RELEASE).feature_level),
                          ELR_VERSION: VersionRange.of(0, 1)},
                         M.IBP_4_0_IV1, brokers={1: {ELR_VERSION: VersionRange.of(0, 1)}}), (
        Update(((ELR_VERSION, 1),), ((ELR_VERSION, UPGRADE),), records=(FeatureLevelRecord(ELR_VERSION, 1),),
               replay=True),
        Level(ELR_VERSION, 1),
    ), id="testUpgradeElrFeatureLevel"),
]


def api_error(result: ControllerResult) -> tuple[Errors, str | None]:
    """The manager's ``ApiError``: 4.0 answers it at the top level, behind the controller's prefix."""
    response = result.response
    if response.error is Errors.NONE:
        assert all(r.error is Errors.NONE for r in response.results)
        return Errors.NONE, None
    assert response.results == () and response.message is not None
    assert response.message.startswith(ALL_FAILED_PREFIX)
    return response.error, response.message[len(ALL_FAILED_PREFIX):]


@pytest.mark.parametrize(("manager", "steps"), CASES)
def test_feature_control_manager(manager: Manager, steps: tuple[shared.Step, ...]) -> None:
    shared.run_steps(shared.build(manager, RELEASE, LATEST_PRODUCTION), steps, api_error, refused_writes_nothing=True)
