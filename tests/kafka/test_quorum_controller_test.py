"""Kafka's ``QuorumControllerTest``, its bootstrap and metadata.version cases, transcribed as facts against
``reference_impl/metadata_version/api.py`` (bootstrap, ``QuorumController``) and, for the activation records,
``generate_activation_records`` in ``reference_impl/zk_migration/api.py``.

Read first-hand: ``metadata/src/test/java/org/apache/kafka/controller/QuorumControllerTest.java`` at Apache Kafka
trunk commit 1eb7644349cb07139d6a3c1ad1986979647cac99 (2024-10-25), with ``ActivationRecordsGenerator.java``,
``QuorumController.java`` (its ``FeatureControlManager`` starts at ``MINIMUM_KRAFT_VERSION``) and
``ClusterControlManager.java`` of the same commit. Each case id is the Kafka test method's name; a
``@CsvSource`` method's rows are its sub-cases.

How Kafka's fixture maps to ours: a ``BootstrapMetadata`` is the ``MetaProperties`` metadata.version our format
leaves (``COMPLEX_BOOTSTRAP``: 3.3-IV1; ``SIMPLE_BOOTSTRAP``: 3.7-IV0); an initial snapshot of records with no
``FeatureLevelRecord`` (``PRE_PRODUCTION_RECORDS``) is a non-empty log without levels (``log_is_empty=False``);
the activation records' ``FeatureLevelRecord`` is replayed into a ``QuorumController`` whose local range is the
``FeatureControlManager.Builder`` default (``MINIMUM_KRAFT_VERSION..latestProduction()``, release 3.9's here) and
their ``ZkMigrationStateRecord`` sets the migration state (NONE when none is written, the manager's default).

At this commit ``ActivationRecordsGenerator`` no longer takes ``zookeeper.metadata.migration.enable`` and, on an
empty log, writes ``ZkMigrationStateRecord(NONE)`` from 3.4-IV0 on; the zk_migration model is release 3.9's, which
writes it from 3.6-IV1 on (with migration disabled). The states these cases assert (the metadata.version, and
``ZkMigrationState.NONE``) are the same either way.

Not expressible yet:

* ``testUpgradeFromPreProductionVersion``, ``testInsertBootstrapRecordsToEmptyLog``: only their metadata.version
  facts. Bootstrap records other than the ``FeatureLevelRecord`` (the ``ConfigRecord`` ``foo=bar``), the records
  of the log (topics, broker registrations) and the image checks (``testToImages``) are not modelled.
* ``testRegisterBrokerKRaftVersions``: the broker epoch of a successful registration (``reply.epoch() >= 5``);
  broker epochs are not modelled.

Not transcribed (neither bootstrap nor metadata.version; ``testActivationRecordsPartial*`` are metadata
transactions, the zk_migration model's): every other method of the class.

The class as Kafka's 4.0 release has it, run under release 4.0: ``test_quorum_controller_test_4_0.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest

from reference_impl.metadata_version.api import FeatureLevelRecord, MetaProperties, QuorumController, VersionRange
from reference_impl.metadata_version.catalog import MINIMUM_KRAFT_VERSION, MetadataVersion, latest_testing
from reference_impl.zk_migration.api import ZkMigrationState, generate_activation_records
from tests.kafka import _quorum_controller as shared
from tests.kafka._names import MV, M

RELEASE = "3.9"  # whose FeatureControlManager.Builder default range starts at MINIMUM_KRAFT_VERSION, as here
COMPLEX_BOOTSTRAP = MetaProperties("test bootstrap", M.IBP_3_3_IV1.feature_level)


# ---------------------------------------------------------------- bootstrap
def _upgrade_from_pre_production_version() -> None:
    # A log that already holds records but no FeatureLevelRecord: no bootstrap record is written, and the
    # controller runs at 3.0-IV1.
    shared.check_bootstrap(COMPLEX_BOOTSTRAP, False, None, M.IBP_3_0_IV1)
    # what the newly active controller writes to that log: nothing (the bootstrap records are not applied)
    activation = generate_activation_records(False, -1, False, MINIMUM_KRAFT_VERSION)
    assert activation.records == ()


def _insert_bootstrap_records_to_empty_log() -> None:
    shared.check_bootstrap(COMPLEX_BOOTSTRAP, True, FeatureLevelRecord(MV, M.IBP_3_3_IV1.feature_level), M.IBP_3_3_IV1)


@pytest.mark.parametrize("check", [
    pytest.param(_upgrade_from_pre_production_version, id="testUpgradeFromPreProductionVersion"),
    pytest.param(_insert_bootstrap_records_to_empty_log, id="testInsertBootstrapRecordsToEmptyLog"),
])
def test_bootstrap(check: Callable[[], None]) -> None:
    check()


# ---------------------------------------------------------------- activation records (getActivationRecords)
def activated(metadata_version: MetadataVersion, state_in_log: ZkMigrationState | None
              ) -> tuple[QuorumController, ZkMigrationState]:
    """Kafka's ``getActivationRecords``: a manager at ``metadata_version``; the log counts as empty when it holds
    no migration state; the activation records are replayed."""
    c = shared.controller(RELEASE, metadata_version)
    state = ZkMigrationState.NONE
    activation = generate_activation_records(state_in_log is None, -1, False, metadata_version,
                                             state_in_log or ZkMigrationState.NONE)
    for record in activation.records:
        if record.name == "FeatureLevelRecord":
            assert isinstance(record.value, int)
            c = c.replay(FeatureLevelRecord(MV, record.value))
        elif isinstance(record.value, ZkMigrationState):
            state = record.value
    return c, state


@pytest.mark.parametrize("runs", [
    pytest.param(((M.IBP_3_3_IV0, None), (M.IBP_3_3_IV0, ZkMigrationState.NONE)), id="testActivationRecords33"),
    pytest.param(((M.IBP_3_4_IV0, None), (M.IBP_3_4_IV0, ZkMigrationState.NONE)), id="testActivationRecords34"),
    # Despite its name, Kafka's case passes no migration state, so getActivationRecords takes the log as empty.
    pytest.param(((M.IBP_3_9_IV0, None),), id="testActivationRecordsNonEmptyLog"),
])
def test_activation_records(runs: tuple[tuple[MetadataVersion, ZkMigrationState | None], ...]) -> None:
    for metadata_version, state_in_log in runs:
        c, state = activated(metadata_version, state_in_log)
        assert c.metadata_version == metadata_version.feature_level
        assert state is ZkMigrationState.NONE


# ---------------------------------------------------------------- broker registration: kraft.version
# (finalized kraft.version, the broker's max supported kraft.version): refused when the max is below the finalized
KRAFT_VERSIONS = ((0, 0), (0, 1), (1, 0), (1, 1))


@pytest.mark.parametrize("rows", [pytest.param(KRAFT_VERSIONS, id="testRegisterBrokerKRaftVersions")])
def test_register_broker_kraft_versions(rows: tuple[tuple[int, int], ...]) -> None:
    shared.check_register_broker_kraft_versions(
        rows, partial(shared.controller, RELEASE, shared.SIMPLE_BOOTSTRAP),
        VersionRange.of(M.IBP_3_0_IV1.feature_level, latest_testing().feature_level))
