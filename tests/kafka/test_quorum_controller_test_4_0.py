"""Kafka 4.0's ``QuorumControllerTest``, its bootstrap and metadata.version cases, transcribed as facts against
``reference_impl/metadata_version/api.py`` (bootstrap, ``QuorumController`` with ``kafka_release = "4.0"``).

Read first-hand: ``metadata/src/test/java/org/apache/kafka/controller/QuorumControllerTest.java`` on Apache Kafka's
4.0 branch at commit 4ae681446f18f9a6d7a59f317013ef82379a4ba4 (2025-03-16, the branch head when 4.0.0 was released),
with ``ActivationRecordsGenerator.java``, ``QuorumController.java``, ``FeatureControlManager.java`` and
``ClusterControlManager.java`` of the same commit. Each case id is the Kafka test method's name; a ``@CsvSource``
method's rows are its sub-cases.

How Kafka's fixture maps to ours: a ``BootstrapMetadata`` is the ``MetaProperties`` metadata.version our format
leaves (``COMPLEX_BOOTSTRAP``: ``MINIMUM_VERSION``, 3.3-IV3; ``SIMPLE_BOOTSTRAP``: 3.7-IV0); the activation records
of an empty log are :func:`bootstrap_metadata_version`'s ``FeatureLevelRecord``, replayed into a ``QuorumController``
whose local range is the ``FeatureControlManager.Builder`` default (``MINIMUM_VERSION..latestProduction()``, 7-25);
the KRaft layer's kraft.version (``setLastKRaftVersion``), which ``QuorumController`` adds to the finalized features
it hands to broker registration, is in ``finalized``.
Kafka 4.0's ``ActivationRecordsGenerator`` writes no ZooKeeper-migration record; its transaction markers
(``BeginTransactionRecord`` / ``EndTransactionRecord`` from 3.6-IV1) carry no feature level and are not modelled.

Differences from trunk 1eb7644 (``test_quorum_controller_test.py``): ``testUpgradeFromPreProductionVersion`` (a log
without ``FeatureLevelRecord``, run as 3.0-IV1) is gone with the pre-3.3 versions; ``COMPLEX_BOOTSTRAP`` is at
``MINIMUM_VERSION``; ``testActivationRecords33`` bootstraps at 3.3-IV3 (was 3.3-IV0); no activation writes a
``ZkMigrationStateRecord``; the registering broker's range starts at ``MINIMUM_VERSION`` and its epoch is ``>= 4``.

Not expressible yet:

* ``testInsertBootstrapRecordsToEmptyLog``: only its metadata.version fact. The bootstrap ``ConfigRecord``
  (``foo=bar``) and the image checks (``testToImages``) are not modelled.
* ``testRegisterBrokerKRaftVersions``: the broker epoch of a successful registration (``reply.epoch() >= 4``);
  broker epochs are not modelled.

Not transcribed (neither bootstrap nor metadata.version): every other method of the class, among them
``testUncleanShutdownBrokerElrEnabled``, ``testUncleanShutdownElrDisabled`` and ``testMinIsrUpdateWithElr``
(bootstrapped at 4.0-IV1 / 4.0-IV0 to test KIP-966's eligible leader replicas, which the models do not carry) and
``testActivationRecordsPartial*`` (metadata transactions of the bootstrap records).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reference_impl.metadata_version.api import (
    FeatureLevelRecord,
    MetaProperties,
    QuorumController,
    VersionRange,
    bootstrap_metadata_version,
)
from reference_impl.metadata_version.catalog import KAFKA_CATALOG, MINIMUM_VERSION_4_X, MetadataVersion, latest_testing
from tests.kafka import _quorum_controller as shared
from tests.kafka._names import MV, M

RELEASE = "4.0"
MINIMUM_VERSION = MINIMUM_VERSION_4_X
COMPLEX_BOOTSTRAP = MetaProperties("test bootstrap", MINIMUM_VERSION.feature_level)
BUILDER_DEFAULT = VersionRange.of(MINIMUM_VERSION.feature_level, M.IBP_4_0_IV3.feature_level)  # 7-25


def controller(metadata_version: MetadataVersion, *extra: tuple[str, int]) -> QuorumController:
    """A 4.0 controller with the ``FeatureControlManager.Builder``'s default local range (7-25)."""
    return shared.controller(RELEASE, metadata_version, *extra, local=BUILDER_DEFAULT)


# ---------------------------------------------------------------- bootstrap
def _insert_bootstrap_records_to_empty_log() -> None:
    record = FeatureLevelRecord(MV, MINIMUM_VERSION.feature_level)
    shared.check_bootstrap(COMPLEX_BOOTSTRAP, True, record, MINIMUM_VERSION)
    # the active controller's finalized metadata.version, once the bootstrap record is replayed
    assert controller(M.IBP_4_0_IV3).replay(record).finalized_level(MV) == MINIMUM_VERSION.feature_level


@pytest.mark.parametrize("check", [
    pytest.param(_insert_bootstrap_records_to_empty_log, id="testInsertBootstrapRecordsToEmptyLog"),
])
def test_bootstrap(check: Callable[[], None]) -> None:
    check()


# ---------------------------------------------------------------- activation records (getActivationRecords)
def activated(metadata_version: MetadataVersion) -> QuorumController:
    """Kafka's ``getActivationRecords``: a manager at ``metadata_version``; an empty log gets the bootstrap records of
    ``BootstrapMetadata.fromVersion(metadata_version)``, which are replayed."""
    meta = MetaProperties("test", metadata_version.feature_level)
    record = bootstrap_metadata_version(meta, KAFKA_CATALOG, log_is_empty=True)
    assert record is not None
    return controller(metadata_version).replay(record)


@pytest.mark.parametrize("metadata_version", [
    pytest.param(M.IBP_3_3_IV3, id="testActivationRecords33"),
    pytest.param(M.IBP_3_4_IV0, id="testActivationRecords34"),
    # Despite its name, Kafka's case calls getActivationRecords, which takes the log as empty.
    pytest.param(M.IBP_3_9_IV0, id="testActivationRecordsNonEmptyLog"),
])
def test_activation_records(metadata_version: MetadataVersion) -> None:
    assert activated(metadata_version).metadata_version == metadata_version.feature_level


# ---------------------------------------------------------------- broker registration: kraft.version
# (finalized kraft.version, the broker's max supported kraft.version): refused when the max is below the finalized
KRAFT_VERSIONS = ((0, 0), (0, 1), (1, 0), (1, 1))


@pytest.mark.parametrize("rows", [pytest.param(KRAFT_VERSIONS, id="testRegisterBrokerKRaftVersions")])
def test_register_broker_kraft_versions(rows: tuple[tuple[int, int], ...]) -> None:
    shared.check_register_broker_kraft_versions(
        rows, lambda kraft: controller(shared.SIMPLE_BOOTSTRAP, kraft),
        VersionRange.of(MINIMUM_VERSION.feature_level, latest_testing(RELEASE).feature_level))
