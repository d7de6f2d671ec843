"""Kafka's ``FeatureControlManagerTest``, transcribed as facts against ``QuorumController`` (``kafka`` profile) in
``reference_impl/metadata_version/api.py``.

Read first-hand: ``metadata/src/test/java/org/apache/kafka/controller/FeatureControlManagerTest.java`` at Apache
Kafka trunk commit 1eb7644349cb07139d6a3c1ad1986979647cac99 (2024-10-25), with ``FeatureControlManager.java``,
``QuorumFeatures.java`` and ``QuorumController.updateFeatures`` of the same commit. Each case id is the Kafka
test method's name; its steps (updates, replays, reads) run in Kafka's order on one controller.

How Kafka's fixture maps to ours:

* ``FeatureControlManager.Builder``: ``setQuorumFeatures(features(...))`` is ``local_supported`` (node 0, no
  quorum voters: the test's ``QuorumFeatures(0, ..., emptyList())``); ``features(...)`` starts from
  ``defaultFeatureMap(true)``, whose metadata.version entry is ``MINIMUM_KRAFT_VERSION..latestTesting()``;
  ``setMetadataVersion`` is the finalized metadata.version (default ``latestProduction()``, 4.0-IV0 at this
  commit); ``setMinimumBootstrapVersion`` is ``minimum_bootstrap_version``; the fake
  ``ClusterFeatureSupportDescriber``'s brokers are ``brokers``.
* ``updateFeatures(updates, upgradeTypes, validateOnly)`` is an ``UpdateFeaturesRequest`` whose entries carry
  the raw ``UpgradeType`` byte (what ``QuorumController.updateFeatures`` passes on; UPGRADE when none is
  given) and ``dry_run = validateOnly``. Its ``ApiError`` is our response's first error, where release 4.0's
  top-level message drops the prefix ``QuorumController.updateFeatures`` puts before the manager's message.
* ``replay(FeatureLevelRecord)`` is ``QuorumController.replay``; a replayed ``ZkMigrationStateRecord`` sets
  ``zk_migration_in_progress`` to ``ZkMigrationState.inProgress()`` (``reference_impl/zk_migration/api.py``).

This commit is trunk between 3.9 and 4.0. Its ``updateFeatures`` already answers as our release 4.0 does (it
stops at the first error, writes nothing, and answers one error for the whole request), while its
metadata.version checks are still release 3.9's (no change during a ZK migration, nothing below
``minimumBootstrapVersion``, 3.3-IV0; our release 4.0 has neither, and no level below 3.3-IV3). Each case
runs under every release that agrees with the commit on what it exercises: a multi-feature request only under
4.0, the 3.9-era metadata.version checks only under 3.9, everything else under both.

Not transcribed: ``testCanUseUnsafeDowngradeIfMetadataChanged`` is ``@Disabled`` at this commit (it expects the
UNSAFE downgrade KAFKA-13896 has not implemented; ``testUnsafeDowngradeIsTemporarilyDisabled`` states what
Kafka does instead).

Not expressible yet: none of the enabled cases. (``Features.validateVersion``, the KIP-1022 dependency check
that runs after the range checks for a feature other than metadata.version, is not modelled; no case here
reaches it with a failing dependency.)

The class as Kafka's 4.0 release has it, run under release 4.0: ``test_feature_control_manager_test_4_0.py``.
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
from reference_impl.metadata_version.catalog import MINIMUM_KRAFT_VERSION, latest_testing
from reference_impl.zk_migration.api import ZkMigrationState
from tests.kafka import _feature_control_manager as shared
from tests.kafka._feature_control_manager import Finalized, Level, Manager, Replay, ReplayMigration, Update, Version
from tests.kafka._names import INVALID, MV, SAFE, TEST_VERSION, TRANSACTION_VERSION, UNSAFE, UPGRADE, M

BOTH, R39, R40 = ("3.9", "4.0"), ("3.9",), ("4.0",)
LATEST_PRODUCTION_AT_COMMIT = M.IBP_4_0_IV0  # MetadataVersion.LATEST_PRODUCTION at the commit read


def features(**overrides: tuple[int, int]) -> dict[str, VersionRange]:
    """Kafka's ``features(...)``: ``defaultFeatureMap(true)`` (its metadata.version entry) plus the test's ranges."""
    default = {MV: VersionRange.of(MINIMUM_KRAFT_VERSION.feature_level, latest_testing().feature_level)}
    return shared.with_ranges(default, overrides)


BUILDER1 = Manager(features(metadata__version=(M.IBP_3_3_IV0.feature_level, M.IBP_3_3_IV3.feature_level)),
                   M.IBP_3_3_IV2)  # TEST_MANAGER_BUILDER1

CASES = [
    pytest.param(Manager(features(test__feature__version=(0, 2)), M.IBP_3_3_IV0), R40, (
        Finalized(((MV, 4),)),
        *shared.UPDATE_FEATURES,
    ), id="testUpdateFeatures"),
    pytest.param(Manager(features(foo=(1, 2)), M.IBP_3_3_IV0), BOTH, (
        Replay(FeatureLevelRecord("foo", 2)),
        Finalized(((MV, 4), ("foo", 2))),
    ), id="testReplay"),
    pytest.param(Manager(features(foo=(1, 5), transaction__version=(0, 3)),
                         brokers={5: {TRANSACTION_VERSION: VersionRange.of(0, 2)}}), BOTH, (
        *shared.UPDATE_FEATURES_ERROR_CASES,
    ), id="testUpdateFeaturesErrorCases"),
    pytest.param(Manager(features(test__feature__version=(0, 5), transaction__version=(0, 2)), M.IBP_3_3_IV0), BOTH, (
        Update(((TEST_VERSION, 1), (TRANSACTION_VERSION, 2)), records=None, replay=True),
        Version(M.IBP_3_3_IV0),
        Level(TEST_VERSION, 1),
        Level(TRANSACTION_VERSION, 2),
        Finalized(((MV, 4), (TEST_VERSION, 1), (TRANSACTION_VERSION, 2))),
    ), id="testReplayRecords"),
    pytest.param(BUILDER1, BOTH, (
        Replay(FeatureLevelRecord(MV, M.IBP_3_3_IV3.feature_level)),
        Version(M.IBP_3_3_IV3),
    ), id="testApplyMetadataVersionChangeRecord"),
    pytest.param(BUILDER1, BOTH, (
        Update(((MV, M.IBP_3_2_IV0.feature_level),), ((MV, UNSAFE),), validate_only=True, error=INVALID,
               message="Invalid update version 3 for feature metadata.version. Local controller 0 only supports "
                       "versions 4-7"),
    ), id="testCannotDowngradeToVersionBeforeMinimumSupportedKraftVersion"),
    pytest.param(BUILDER1, BOTH, (
        Update(((MV, M.IBP_3_3_IV3.feature_level),), ((MV, SAFE),), validate_only=True, error=INVALID,
               message="Invalid update version 7 for feature metadata.version. Can't downgrade to a newer version."),
    ), id="testCannotDowngradeToHigherVersion"),
    pytest.param(BUILDER1, BOTH, (
        Update(((MV, M.IBP_3_3_IV3.feature_level),), ((MV, UNSAFE),), validate_only=True, error=INVALID,
               message="Invalid update version 7 for feature metadata.version. Can't downgrade to a newer version."),
    ), id="testCannotUnsafeDowngradeToHigherVersion"),
    pytest.param(BUILDER1, BOTH, (
        Update(((MV, M.IBP_3_3_IV0.feature_level),), ((MV, UPGRADE),), validate_only=True, error=INVALID,
               message="Invalid update version 4 for feature metadata.version. Can't downgrade the version of this "
                       "feature without setting the upgrade type to either safe or unsafe downgrade."),
    ), id="testCannotUpgradeToLowerVersion"),
    pytest.param(BUILDER1, BOTH, (
        Update(((MV, M.IBP_3_3_IV3.feature_level),), ((MV, UPGRADE),), validate_only=True),
    ), id="testCanUpgradeToHigherVersion"),
    pytest.param(BUILDER1, R39, (
        Update(((MV, M.IBP_3_3_IV0.feature_level),), ((MV, SAFE),), validate_only=True, error=INVALID,
               message="Invalid metadata.version 4. Refusing to perform the requested downgrade because it might "
                       "delete metadata information."),
    ), id="testCannotUseSafeDowngradeIfMetadataChanged"),
    pytest.param(BUILDER1, R39, (
        Update(((MV, M.IBP_3_3_IV0.feature_level),), ((MV, UNSAFE),), validate_only=True, error=INVALID,
               message="Invalid metadata.version 4. Unsafe metadata downgrade is not supported in this version."),
    ), id="testUnsafeDowngradeIsTemporarilyDisabled"),
    pytest.param(Manager(features(metadata__version=(M.IBP_3_0_IV0.feature_level, M.IBP_3_3_IV1.feature_level)),
                         M.IBP_3_1_IV0, minimum_bootstrap_version=M.IBP_3_0_IV0), R39, (
        Update(((MV, M.IBP_3_0_IV1.feature_level),), ((MV, SAFE),), validate_only=True),
    ), id="testCanUseSafeDowngradeIfMetadataDidNotChange"),
    pytest.param(Manager(features(metadata__version=(M.IBP_3_0_IV0.feature_level, M.IBP_3_3_IV3.feature_level)),
                         M.IBP_3_3_IV0), R39, (
        Update(((MV, M.IBP_3_2_IV0.feature_level),), ((MV, UNSAFE),), validate_only=True, error=INVALID,
               message="Invalid metadata.version 3. Unable to set a metadata.version less than 3.3-IV0"),
    ), id="testCannotDowngradeBefore3_3_IV0"),
    pytest.param(Manager({MV: VersionRange.of(M.IBP_3_0_IV1.feature_level, latest_testing().feature_level),
                          TEST_VERSION: VersionRange.of(0, 2)},
                         brokers={1: {TEST_VERSION: VersionRange.of(0, 3)}}), BOTH, (
        *shared.CREATE_FEATURE_LEVEL_RECORDS,
    ), id="testCreateFeatureLevelRecords"),
    pytest.param(Manager(features(metadata__version=(M.IBP_3_0_IV0.feature_level, M.IBP_3_5_IV1.feature_level)),
                         M.IBP_3_4_IV0), R39, (
        Replay(FeatureLevelRecord(MV, M.IBP_3_4_IV0.feature_level)),  # BootstrapMetadata.fromVersion(3.4-IV0)
        ReplayMigration(ZkMigrationState.PRE_MIGRATION),
        Update(((MV, M.IBP_3_5_IV1.feature_level),), ((MV, UPGRADE),), validate_only=True, error=INVALID,
               message="Invalid metadata.version 10. Unable to modify metadata.version while a ZK migration is in "
                       "progress."),
        Update(((MV, M.IBP_3_3_IV0.feature_level),), ((MV, SAFE),), validate_only=True, error=INVALID,
               message="Invalid metadata.version 4. Unable to modify metadata.version while a ZK migration is in "
                       "progress."),
        ReplayMigration(ZkMigrationState.POST_MIGRATION),  # the migration completes
        Update(((MV, M.IBP_3_5_IV1.feature_level),), ((MV, UPGRADE),), records=None, replay=True),
        Version(M.IBP_3_5_IV1),
    ), id="testNoMetadataVersionChangeDuringMigration"),
]


def api_error(result: ControllerResult) -> tuple[Errors, str | None]:
    """The manager's ``ApiError``: our response's first error, without 4.0's whole-request prefix."""
    error, message = result.response.first_error()
    if message is not None and message.startswith(ALL_FAILED_PREFIX):
        message = message[len(ALL_FAILED_PREFIX):]
    return error, message


@pytest.mark.parametrize(("manager", "releases", "steps"), CASES)
def test_feature_control_manager(manager: Manager, releases: tuple[str, ...], steps: tuple[shared.Step, ...]) -> None:
    for release in releases:
        shared.run_steps(shared.build(manager, release, LATEST_PRODUCTION_AT_COMMIT), steps, api_error)
