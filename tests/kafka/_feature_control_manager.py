"""The fixture and steps of Kafka's ``FeatureControlManagerTest`` as transcribed against ``QuorumController``
(``kafka`` profile) in ``reference_impl/metadata_version/api.py``, shared by ``test_feature_control_manager_test.py``
(trunk 1eb7644) and ``test_feature_control_manager_test_4_0.py`` (Kafka 4.0): the Builder's settings, the step types
and their runner, and the step sequences that are the same at both commits. Each of those modules' docstrings says
how Kafka's fixture maps to these; each gives ``build`` its commit's Builder default and ``run`` its ``ApiError``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from reference_impl.metadata_version.api import (
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
from reference_impl.metadata_version.catalog import KAFKA_CATALOG, MetadataVersion
from reference_impl.zk_migration.api import ZkMigrationState
from tests.kafka._names import INVALID, MV, SAFE, TEST_VERSION, TRANSACTION_VERSION, UNSAFE, UPGRADE

# How a commit's test reads its ApiError (error, message) from our UpdateFeaturesResponse.
ApiError = Callable[[ControllerResult], tuple[Errors, str | None]]


def with_ranges(defaults: Mapping[str, VersionRange], overrides: Mapping[str, tuple[int, int]]
                ) -> dict[str, VersionRange]:
    """Kafka's ``features(...)``: the commit's default supported feature map plus the test's ranges ("__" is ".")."""
    local = dict(defaults)
    local.update({name.replace("__", "."): VersionRange.of(lo, hi) for name, (lo, hi) in overrides.items()})
    return local


@dataclass(frozen=True)
class Manager:
    """A ``FeatureControlManager.Builder``'s settings."""

    local: dict[str, VersionRange]
    # None: the Builder's default (latestProduction() at the commit read), which ``build`` is given.
    metadata_version: MetadataVersion | None = None
    brokers: dict[int, dict[str, VersionRange]] = field(default_factory=dict)
    minimum_bootstrap_version: MetadataVersion | None = None  # setMinimumBootstrapVersion (trunk 1eb7644 only)


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
class ReplayMigration:
    """``replay(ZkMigrationStateRecord)``."""

    state: ZkMigrationState


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


Step = Update | Replay | ReplayMigration | Finalized | Level | Version


# ---------------------------------------------------------------- steps the same at trunk 1eb7644 and 4.0
# testUpdateFeatures, after its first read: one update refused by the local range, a two-feature update with one
# refused (nothing is written; release 3.9 would write test.feature.version's record), one accepted.
UPDATE_FEATURES: tuple[Step, ...] = (
    Update(((TEST_VERSION, 3),), ((TEST_VERSION, SAFE),), error=INVALID,
           message="Invalid update version 3 for feature test.feature.version. Local controller 0 only supports "
                   "versions 0-2"),
    Update(((TEST_VERSION, 1), ("bar", 1)), error=INVALID,
           message="Invalid update version 1 for feature bar. Local controller 0 does not support this feature."),
    Update(((TEST_VERSION, 1),), records=(FeatureLevelRecord(TEST_VERSION, 1),)),
)

# testUpdateFeaturesErrorCases (foo 1-5 and transaction.version 0-3 here; broker 5 supports transaction.version 0-2)
UPDATE_FEATURES_ERROR_CASES: tuple[Step, ...] = (
    Update((("foo", 3),), (("foo", SAFE),), error=INVALID,
           message="Invalid update version 3 for feature foo. Broker 5 does not support this feature."),
    Update(((TRANSACTION_VERSION, 2),), records=(FeatureLevelRecord(TRANSACTION_VERSION, 2),), replay=True),
    Update(((TRANSACTION_VERSION, 1),), error=INVALID,
           message="Invalid update version 1 for feature transaction.version. Can't downgrade the version of "
                   "this feature without setting the upgrade type to either safe or unsafe downgrade."),
    Update(((TRANSACTION_VERSION, 1),), ((TRANSACTION_VERSION, SAFE),),
           records=(FeatureLevelRecord(TRANSACTION_VERSION, 1),)),
)

# testCreateFeatureLevelRecords (test.feature.version 0-2 here, 0-3 on broker 1)
CREATE_FEATURE_LEVEL_RECORDS: tuple[Step, ...] = (
    Update(((TEST_VERSION, 1),), ((TEST_VERSION, UPGRADE),), records=(FeatureLevelRecord(TEST_VERSION, 1),),
           replay=True),
    Level(TEST_VERSION, 1),
    Update(((TEST_VERSION, 0),), ((TEST_VERSION, UNSAFE),), records=(FeatureLevelRecord(TEST_VERSION, 0),),
           replay=True),
    Level(TEST_VERSION, None),
)


def build(manager: Manager, release: str, default_metadata_version: MetadataVersion) -> QuorumController:
    """The manager ``manager`` describes, under ``release``; ``default_metadata_version`` is the Builder's default."""
    metadata_version = default_metadata_version if manager.metadata_version is None else manager.metadata_version
    floor = manager.minimum_bootstrap_version
    return QuorumController(
        catalog=KAFKA_CATALOG, node_id=0, local_supported=tuple(sorted(manager.local.items())), voters=(),
        brokers=tuple(BrokerRegistration(b, tuple(sorted(r.items())), fenced=False)
                      for b, r in sorted(manager.brokers.items())),
        finalized=((MV, metadata_version.feature_level),), profile="kafka", kafka_release=release,
        minimum_bootstrap_version=None if floor is None else floor.feature_level)


def run(c: QuorumController, step: Step, api_error: ApiError, *, refused_writes_nothing: bool = False
        ) -> QuorumController:
    """One step on ``c``; ``api_error`` reads the commit's ``ApiError``. With ``refused_writes_nothing``, a refused
    or validate-only update is also checked to return no records (``ControllerResult.of(emptyList(), ...)``)."""
    if isinstance(step, Update):
        types = dict(step.upgrade_types)
        request = UpdateFeaturesRequest(tuple(
            FeatureUpdate.with_upgrade_type(name, level, types.get(name, UPGRADE).value)
            for name, level in step.updates), dry_run=step.validate_only)
        result = c.update_features(request)
        assert api_error(result) == (step.error, step.message)
        if refused_writes_nothing and (step.error is not Errors.NONE or step.validate_only):
            assert result.records == ()
        if step.records is not None:
            assert result.records == step.records
        return c.apply(result) if step.replay else c
    if isinstance(step, Replay):
        return c.replay(step.record)
    if isinstance(step, ReplayMigration):
        return replace(c, zk_migration_in_progress=step.state.in_progress())
    if isinstance(step, Finalized):
        assert dict(c.finalized) == dict(step.features)
    elif isinstance(step, Level):
        assert dict(c.finalized).get(step.feature) == step.level
    else:
        assert c.metadata_version == step.metadata_version.feature_level
    return c


def run_steps(c: QuorumController, steps: tuple[Step, ...], api_error: ApiError, *,
              refused_writes_nothing: bool = False) -> QuorumController:
    """Kafka's test method: its steps in order on one manager."""
    for step in steps:
        c = run(c, step, api_error, refused_writes_nothing=refused_writes_nothing)
    return c
