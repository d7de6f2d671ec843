"""KIP-866 at the API level: the migration states, the driver's state machine, registration and ZooKeeper writes.

Names follow Kafka 3.9 (the last release with the migration code): ``ZkMigrationState`` (persisted in the
metadata log by ``ZkMigrationStateRecord``), ``MigrationDriverState`` (the in-memory state of
``KRaftMigrationDriver``), ``ActivationRecordsGenerator`` (what a newly active controller writes),
``KafkaZkClient.tryRegisterKRaftControllerAsActiveController`` (the take-over of ``/controller`` and
``/controller_epoch``) and the conditional multi-op writes on ``/migration``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from reference_impl.metadata_version.catalog import MetadataVersion


class ZkMigrationState(enum.Enum):
    """The persisted migration state and its byte code in ``ZkMigrationStateRecord`` (Kafka 3.5+).

    Kafka 3.4 wrote PRE_MIGRATION as 1 and never wrote MIGRATION; 3.5 swapped the two codes so that a 3.4
    log reads as MIGRATION (``ZkMigrationState.java``). ZK is never persisted (only a metric value).
    """

    NONE = 0
    MIGRATION = 1
    PRE_MIGRATION = 2
    POST_MIGRATION = 3
    ZK = 4

    @property
    def code(self) -> int:
        return self.value

    @staticmethod
    def from_code(code: int) -> ZkMigrationState:
        for s in ZkMigrationState:
            if s.value == code and s is not ZkMigrationState.ZK:
                return s
        raise ValueError(f"Unsupported ZkMigrationState code {code}")

    def in_progress(self) -> bool:
        # ZkMigrationState.inProgress: metadata.version changes are refused in these states.
        return self in (ZkMigrationState.PRE_MIGRATION, ZkMigrationState.MIGRATION)


class KipMigrationState(enum.Enum):
    """The KIP's four externally visible states (the ``ZkMigrationState`` metric of KIP-866)."""

    MIGRATION_INELIGIBLE = 0
    MIGRATE_ZK_DATA = 1
    DUAL_WRITE = 2
    MIGRATION_FINALIZED = 3


class MigrationDriverState(enum.Enum):
    """``KRaftMigrationDriver``'s in-memory state; ``allow_dual_write`` as in Kafka."""

    UNINITIALIZED = 0
    INACTIVE = 1
    WAIT_FOR_CONTROLLER_QUORUM = 2
    WAIT_FOR_BROKERS = 3
    BECOME_CONTROLLER = 4
    ZK_MIGRATION = 5
    SYNC_KRAFT_TO_ZK = 6
    KRAFT_CONTROLLER_TO_BROKER_COMM = 7
    DUAL_WRITE = 8

    @property
    def allow_dual_write(self) -> bool:
        return self in (MigrationDriverState.KRAFT_CONTROLLER_TO_BROKER_COMM, MigrationDriverState.DUAL_WRITE)


_D = MigrationDriverState
# KRaftMigrationDriver.isValidStateChange (3.9): staying put is always valid, UNINITIALIZED never a target.
VALID_DRIVER_TRANSITIONS: dict[MigrationDriverState, frozenset[MigrationDriverState]] = {
    _D.UNINITIALIZED: frozenset({_D.INACTIVE}),
    _D.DUAL_WRITE: frozenset({_D.INACTIVE}),
    _D.INACTIVE: frozenset({_D.WAIT_FOR_CONTROLLER_QUORUM}),
    _D.WAIT_FOR_CONTROLLER_QUORUM: frozenset({_D.INACTIVE, _D.BECOME_CONTROLLER, _D.WAIT_FOR_BROKERS}),
    _D.WAIT_FOR_BROKERS: frozenset({_D.INACTIVE, _D.BECOME_CONTROLLER}),
    _D.BECOME_CONTROLLER: frozenset({_D.INACTIVE, _D.ZK_MIGRATION, _D.SYNC_KRAFT_TO_ZK}),
    _D.ZK_MIGRATION: frozenset({_D.INACTIVE, _D.SYNC_KRAFT_TO_ZK}),
    _D.SYNC_KRAFT_TO_ZK: frozenset({_D.INACTIVE, _D.KRAFT_CONTROLLER_TO_BROKER_COMM}),
    _D.KRAFT_CONTROLLER_TO_BROKER_COMM: frozenset({_D.INACTIVE, _D.DUAL_WRITE}),
}


def is_valid_state_change(current: MigrationDriverState, new: MigrationDriverState) -> bool:
    if current is new:
        return True
    if new is MigrationDriverState.UNINITIALIZED:
        return False
    return new in VALID_DRIVER_TRANSITIONS[current]


def kip_state(state: ZkMigrationState, driver: MigrationDriverState) -> KipMigrationState:
    """The KIP's metric value for the persisted state and the active driver's state."""
    if state is ZkMigrationState.POST_MIGRATION:
        return KipMigrationState.MIGRATION_FINALIZED
    if state is ZkMigrationState.MIGRATION and driver.allow_dual_write:
        return KipMigrationState.DUAL_WRITE
    if state is ZkMigrationState.PRE_MIGRATION and driver in (
            MigrationDriverState.BECOME_CONTROLLER, MigrationDriverState.ZK_MIGRATION):
        return KipMigrationState.MIGRATE_ZK_DATA
    if state is ZkMigrationState.MIGRATION:
        return KipMigrationState.MIGRATE_ZK_DATA  # copied, not yet writing both ways (after a failover)
    return KipMigrationState.MIGRATION_INELIGIBLE


# The minimum metadata.version for a migration: the KIP's bridge release is 3.4-IV0
# (MetadataVersion.isMigrationSupported). Kafka 3.9 bootstraps a new (empty-log) quorum in migration mode
# only from 3.6-IV1, which has metadata transactions (ActivationRecordsGenerator.recordsForEmptyLog).
KIP_MINIMUM_LEVEL = MetadataVersion.IBP_3_4_IV0.feature_level
KAFKA_EMPTY_LOG_MINIMUM_LEVEL = MetadataVersion.IBP_3_6_IV1.feature_level


class ActivationError(RuntimeError):
    """A controller that cannot activate (Kafka throws and the controller resigns)."""


def bootstrap_migration_state(level: int, migration_enabled: bool, profile: str) -> ZkMigrationState:
    """What the first active controller of an empty log writes (ActivationRecordsGenerator.recordsForEmptyLog)."""
    minimum = KAFKA_EMPTY_LOG_MINIMUM_LEVEL if profile == "kafka" else KIP_MINIMUM_LEVEL
    if migration_enabled:
        if level < minimum:
            raise ActivationError(f"The bootstrap metadata.version {level} does not support ZK migrations. "
                                  "Cannot continue with ZK migrations enabled.")
        return ZkMigrationState.PRE_MIGRATION
    return ZkMigrationState.NONE


@dataclass(frozen=True)
class Activation:
    """What a newly elected controller does with the persisted state (ActivationRecordsGenerator)."""

    write: ZkMigrationState | None  # a ZkMigrationStateRecord to append, or None
    resign: str | None = None  # the error with which it resigns, or None
    abort_transaction: bool = False


def activate(state: ZkMigrationState, migration_enabled: bool, all_voters_disabled: bool, transaction_open: bool,
             profile: str) -> Activation:
    """``recordsForNonEmptyLog`` (kafka) and KIP-866 "wrong settings" (kip)."""
    abort = transaction_open  # "the next active controller aborts the transaction" (both)
    if state is ZkMigrationState.NONE and migration_enabled:
        return Activation(None, "Should not have ZK migrations enabled on a cluster that was created in KRaft mode.",
                          abort)
    if state is ZkMigrationState.MIGRATION and not migration_enabled:
        if profile == "kafka" or all_voters_disabled:
            # Kafka: "Completing the ZK migration since this controller was configured with
            # 'zookeeper.metadata.migration.enable' set to 'false'." The KIP finalizes only when the
            # operator has turned migration off on the whole quorum.
            return Activation(ZkMigrationState.POST_MIGRATION, None, abort)
        return Activation(None, "A ZK migration is in progress but this controller is not configured for it "
                          "(zookeeper.metadata.migration.enable=false): resigning.", abort)
    if state is ZkMigrationState.PRE_MIGRATION and not migration_enabled and profile == "kip":
        return Activation(None, "A ZK migration is pending but this controller is not configured for it: resigning.",
                          abort)
    return Activation(None, None, abort)


@dataclass(frozen=True)
class ZkBrokerRegistration:
    """``BrokerRegistrationRequest`` v1+ from a ZK broker: its IBP as the metadata.version range, and
    ``ZkMigrationReady`` (present only when it runs with the migration configs)."""

    broker_id: int
    ibp: int
    zk_migration_ready: bool


def zk_broker_registration_error(reg: ZkBrokerRegistration, quorum_level: int, migration_enabled: bool,
                                 kraft_broker_ids: frozenset[int] = frozenset()) -> str | None:
    """KIP-866 "Broker registration": accepted only when its metadata.version equals the quorum's and
    ZkMigrationReady is set; a KRaft broker reusing a ZK broker's id is rejected. None when accepted."""
    if not migration_enabled:
        return "The controller is not configured for a ZK migration (zookeeper.metadata.migration.enable=false)."
    if not reg.zk_migration_ready:
        return f"Broker {reg.broker_id} is not ready for the migration (ZkMigrationReady not set)."
    if reg.broker_id in kraft_broker_ids:
        return f"Broker id {reg.broker_id} is already registered by a KRaft broker."
    if reg.ibp != quorum_level:
        return (f"Unable to register because the broker does not support finalized version {quorum_level} of "
                f"metadata.version. The broker wants a version between {reg.ibp} and {reg.ibp}, inclusive.")
    return None


def kraft_broker_registration_error(broker_id: int, zk_broker_ids: frozenset[int]) -> str | None:
    """A KRaft broker that reuses the id of a ZK broker is rejected (KIP-866 "Broker registration")."""
    if broker_id in zk_broker_ids:
        return f"Broker id {broker_id} belongs to a ZK broker taking part in the migration."
    return None


def claim_controller_epoch(zk_epoch: int, kraft_epoch_in_zk: int, kraft_epoch: int) -> int | None:
    """``tryRegisterKRaftControllerAsActiveController``: the new /controller_epoch (current + 1), or None when
    /controller already names a KRaft controller with the same or a newer KRaft epoch."""
    if kraft_epoch_in_zk >= kraft_epoch:
        return None
    return zk_epoch + 1
