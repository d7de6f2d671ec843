"""KIP-866 at the API level: the migration states, the driver's state machine, registration and ZooKeeper writes.

Names follow Kafka 3.9 (the last release with the migration code): ``ZkMigrationState`` (persisted in the
metadata log by ``ZkMigrationStateRecord``), ``MigrationDriverState`` (the in-memory state of
``KRaftMigrationDriver``), ``ActivationRecordsGenerator`` (what a newly active controller writes),
``KafkaZkClient.tryRegisterKRaftControllerAsActiveController`` (the take-over of ``/controller`` and
``/controller_epoch``) and the conditional multi-op writes on ``/migration``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from reference_impl.metadata_version.catalog import (
    LATEST_PRODUCTION_3_9,
    MINIMUM_KRAFT_VERSION,
    MetadataVersion,
    from_feature_level,
    from_version_string,
)


class ZkMigrationState(enum.Enum):
    """The persisted migration state and its byte code in ``ZkMigrationStateRecord`` (Kafka 3.5+).

    Declared in Kafka's order (NONE, PRE_MIGRATION, MIGRATION, POST_MIGRATION, ZK), which is not the
    order of the codes: Kafka 3.4 wrote PRE_MIGRATION as 1 and never wrote MIGRATION; 3.5 swapped the two
    codes so that a 3.4 log reads as MIGRATION (``ZkMigrationState.java``). ZK is never persisted (only a
    metric value), but ``ZkMigrationState.of`` still decodes it.
    """

    NONE = 0
    PRE_MIGRATION = 2
    MIGRATION = 1
    POST_MIGRATION = 3
    ZK = 4

    @property
    def code(self) -> int:
        return self.value

    @staticmethod
    def optional_of(code: int) -> ZkMigrationState | None:
        """``ZkMigrationState.optionalOf``: the state with this code, or None."""
        for s in ZkMigrationState:
            if s.value == code:
                return s
        return None

    @staticmethod
    def from_code(code: int) -> ZkMigrationState:
        """``ZkMigrationState.of``: every code Kafka defines, ZK (4) included; otherwise Kafka's
        IllegalArgumentException (a ValueError here)."""
        s = ZkMigrationState.optional_of(code)
        if s is None:
            raise ValueError(f"Value {code} is not a valid Zk migration state")
        return s

    of = from_code

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
# MetadataVersion.isMetadataTransactionSupported / isControllerRegistrationSupported (3.9).
TRANSACTIONS_MINIMUM = MetadataVersion.IBP_3_6_IV1
CONTROLLER_REGISTRATION_MINIMUM = MetadataVersion.IBP_3_7_IV0

MetadataVersionLike = MetadataVersion | int | str


def to_metadata_version(mv: MetadataVersionLike) -> MetadataVersion:
    """A ``MetadataVersion`` from itself, its feature level or its version string ("3.6-IV1")."""
    if isinstance(mv, MetadataVersion):
        return mv
    if isinstance(mv, str):
        return from_version_string(mv)
    return from_feature_level(mv)


def is_metadata_transaction_supported(mv: MetadataVersion) -> bool:
    return mv.is_at_least(TRANSACTIONS_MINIMUM)


def _label(level: int) -> str:
    # The version string Kafka prints ("3.4-IV0"); a level Kafka does not define stays a number.
    try:
        return str(from_feature_level(level))
    except ValueError:
        return str(level)


class ActivationError(RuntimeError):
    """A controller that cannot activate: ``ActivationRecordsGenerator`` throws (a RuntimeException or
    IllegalStateException) and nothing it generated is written. Kafka's QuorumController then hands the
    error to its fatal fault handler; the system model lets the controller resign."""


# ---------------------------------------------------------------- ActivationRecordsGenerator (Kafka 3.9)
@dataclass(frozen=True)
class MetadataRecord:
    """One record a newly active controller appends, by Kafka's record class and the field that matters
    here: the transaction name or abort reason, the metadata.version level, the ZkMigrationState."""

    name: str
    value: str | int | ZkMigrationState | None = None

    def __str__(self) -> str:
        if self.value is None:
            return self.name
        return f"{self.name}({self.value.name if isinstance(self.value, ZkMigrationState) else self.value})"


def abort_transaction_record() -> MetadataRecord:
    return MetadataRecord("AbortTransactionRecord", "Controller failover")


def begin_transaction_record(name: str) -> MetadataRecord:
    return MetadataRecord("BeginTransactionRecord", name)


def end_transaction_record() -> MetadataRecord:
    return MetadataRecord("EndTransactionRecord")


def zk_migration_state_record(state: ZkMigrationState) -> MetadataRecord:
    return MetadataRecord("ZkMigrationStateRecord", state)


def metadata_version_record(mv: MetadataVersion) -> MetadataRecord:
    """The one bootstrap record of ``BootstrapMetadata.fromVersion``: a FeatureLevelRecord for metadata.version."""
    return MetadataRecord("FeatureLevelRecord", mv.feature_level)


@dataclass(frozen=True)
class ActivationRecords:
    """``ControllerResult<Void>`` of ActivationRecordsGenerator: the records, whether they go in one atomic
    batch, and the activation message Kafka logs (the message consumer's argument)."""

    records: tuple[MetadataRecord, ...]
    atomic: bool
    message: str

    @property
    def is_atomic(self) -> bool:
        return self.atomic

    @property
    def zk_migration_state(self) -> ZkMigrationState | None:
        """The ZkMigrationState written, or None when no ZkMigrationStateRecord is (ActivationRecordsGenerator
        writes at most one per activation)."""
        return next((r.value for r in self.records if r.name == "ZkMigrationStateRecord"
                     and isinstance(r.value, ZkMigrationState)), None)

    @property
    def aborts_transaction(self) -> bool:
        return any(r.name == "AbortTransactionRecord" for r in self.records)


def records_for_empty_log(transaction_start_offset: int, zk_migration_enabled: bool,
                          bootstrap_metadata_version: MetadataVersionLike,
                          bootstrap_source: str = "the default bootstrap",
                          bootstrap_records: Sequence[MetadataRecord] | None = None, *,
                          metadata_version: MetadataVersionLike | None = None) -> ActivationRecords:
    """``ActivationRecordsGenerator.recordsForEmptyLog``: the bootstrap records, in a metadata transaction
    from 3.6-IV1 (an atomic batch below), then PRE_MIGRATION or NONE, which is written only from 3.6-IV1;
    with migration enabled below 3.6-IV1 it throws (Kafka 3.9 moved the empty-log minimum to 3.6-IV1).
    ``transaction_start_offset`` is -1, or where a partial bootstrap transaction began. Raises
    ActivationError with Kafka's message (nothing is written then).

    ``bootstrap_metadata_version`` is ``BootstrapMetadata.metadataVersion()`` (its records default to
    ``BootstrapMetadata.fromVersion``: one FeatureLevelRecord); ``metadata_version`` is Kafka's fifth
    argument, the metadata.version the transaction checks and the log message use (``generate`` passes the
    bootstrap's, the default here). The "does not support ZK migrations" error names the bootstrap's."""
    boot_mv = to_metadata_version(bootstrap_metadata_version)
    mv = boot_mv if metadata_version is None else to_metadata_version(metadata_version)
    boot = tuple(bootstrap_records) if bootstrap_records is not None else (metadata_version_record(boot_mv),)
    txn = is_metadata_transaction_supported(mv)
    msg = ["Performing controller activation. "]
    records: list[MetadataRecord] = []
    if transaction_start_offset != -1:
        if not txn:
            raise ActivationError(f"Detected partial bootstrap records transaction at {transaction_start_offset}, "
                                  f"but the metadata.version {mv} does not support transactions. Cannot continue.")
        msg.append(f"Aborting partial bootstrap records transaction at offset {transaction_start_offset}. "
                   f"Re-appending {len(boot)} bootstrap record(s) in new metadata transaction at metadata.version "
                   f"{mv} from bootstrap source '{bootstrap_source}'. ")
        records += [abort_transaction_record(), begin_transaction_record("Bootstrap records")]
    else:
        msg.append(f"The metadata log appears to be empty. Appending {len(boot)} bootstrap record(s) ")
        if txn:
            records.append(begin_transaction_record("Bootstrap records"))
            msg.append("in metadata transaction ")
        msg.append(f"at metadata.version {mv} from bootstrap source '{bootstrap_source}'. ")
    records += boot
    if txn:
        if zk_migration_enabled:
            msg.append("Putting the controller into pre-migration mode. No metadata updates will be allowed until "
                       "the ZK metadata has been migrated. ")
            records.append(zk_migration_state_record(ZkMigrationState.PRE_MIGRATION))
        else:
            msg.append("Setting the ZK migration state to NONE since this is a de-novo KRaft cluster. ")
            records.append(zk_migration_state_record(ZkMigrationState.NONE))
        records.append(end_transaction_record())
    elif zk_migration_enabled:
        raise ActivationError(f"The bootstrap metadata.version {boot_mv} does not support ZK migrations. "
                              "Cannot continue with ZK migrations enabled.")
    return ActivationRecords(tuple(records), not txn, "".join(msg).strip())


def records_for_non_empty_log(transaction_start_offset: int, zk_migration_enabled: bool,
                              metadata_version: MetadataVersionLike | None,
                              zk_migration_state: ZkMigrationState | None = ZkMigrationState.NONE) -> ActivationRecords:
    """``ActivationRecordsGenerator.recordsForNonEmptyLog``: abort an in-progress transaction (which needs
    3.6-IV1), then check the replayed ZkMigrationState against ``zookeeper.metadata.migration.enable``;
    below 3.4-IV0 the state is not looked at (and migration enabled throws). Always one atomic batch.
    ``metadata_version`` is the replayed one; None when the log holds no FeatureLevelRecord for
    metadata.version (a log bootstrapped by a 3.0 - 3.2 preview cluster): QuorumController's
    FeatureControlManager then starts at, and keeps, ``MINIMUM_KRAFT_VERSION`` (3.0-IV1).
    ``zk_migration_state`` is the replayed state, NONE (FeatureControlManager's initial state) when the
    log has no ZkMigrationStateRecord (None says so too). Raises ActivationError with Kafka's message: the
    abort record generated before the throw is not written."""
    mv = MINIMUM_KRAFT_VERSION if metadata_version is None else to_metadata_version(metadata_version)
    if zk_migration_state is None:
        zk_migration_state = ZkMigrationState.NONE
    msg = ["Performing controller activation. "]
    records: list[MetadataRecord] = []
    if transaction_start_offset != -1:
        if not is_metadata_transaction_supported(mv):
            raise ActivationError(f"Detected in-progress transaction at offset {transaction_start_offset}, but the "
                                  f"metadata.version {mv} does not support transactions. Cannot continue.")
        msg.append(f"Aborting in-progress metadata transaction at offset {transaction_start_offset}. ")
        records.append(abort_transaction_record())
    if mv is MINIMUM_KRAFT_VERSION:
        msg.append("No metadata.version feature level record was found in the log. "
                   f"Treating the log as version {MINIMUM_KRAFT_VERSION}. ")
    if zk_migration_enabled and not mv.is_migration_supported():
        raise ActivationError(f"Should not have ZK migrations enabled on a cluster running metadata.version {mv}")
    if mv.is_migration_supported():
        state = zk_migration_state
        msg.append(f"Loaded ZK migration state of {state.name}. ")
        if state is ZkMigrationState.NONE:
            # NONE is the default state and need not be in the log: nothing is written for it.
            if zk_migration_enabled:
                raise ActivationError("Should not have ZK migrations enabled on a cluster that was created in "
                                      "KRaft mode.")
            msg.append("This is expected because this is a de-novo KRaft cluster.")
        elif state is ZkMigrationState.PRE_MIGRATION:
            if not is_metadata_transaction_supported(mv):
                msg.append("Activating pre-migration controller without empty log. There may be a partial "
                           "migration. ")
        elif state is ZkMigrationState.MIGRATION:
            if not zk_migration_enabled:
                # Leadership moved to a controller whose migration config is off (a rolling restart of the
                # quorum that turns it off): Kafka finalizes here.
                msg.append("Completing the ZK migration since this controller was configured with "
                           "'zookeeper.metadata.migration.enable' set to 'false'. ")
                records.append(zk_migration_state_record(ZkMigrationState.POST_MIGRATION))
            else:
                msg.append("Staying in ZK migration mode since 'zookeeper.metadata.migration.enable' is still "
                           "'true'. ")
        elif state is ZkMigrationState.POST_MIGRATION:
            if zk_migration_enabled:
                msg.append("Ignoring 'zookeeper.metadata.migration.enable' value of 'true' since the ZK migration "
                           "has been completed. ")
        else:
            raise ActivationError(f"Unsupported ZkMigrationState {state.name}")  # IllegalStateException
    return ActivationRecords(tuple(records), True, "".join(msg).strip())


def generate_activation_records(is_empty: bool, transaction_start_offset: int, zk_migration_enabled: bool,
                                metadata_version: MetadataVersionLike | None,
                                zk_migration_state: ZkMigrationState | None = ZkMigrationState.NONE,
                                bootstrap_source: str = "the default bootstrap") -> ActivationRecords:
    """``ActivationRecordsGenerator.generate``: the empty log gets the bootstrap records (at the bootstrap
    metadata.version), a replayed log is checked (at its metadata.version; None: the log holds no
    FeatureLevelRecord, see ``records_for_non_empty_log``). A bootstrap always has a metadata.version:
    None with an empty log is a ValueError."""
    if is_empty:
        if metadata_version is None:
            raise ValueError("an empty log is activated at the bootstrap metadata.version, which is required")
        return records_for_empty_log(transaction_start_offset, zk_migration_enabled, metadata_version,
                                     bootstrap_source)
    return records_for_non_empty_log(transaction_start_offset, zk_migration_enabled, metadata_version,
                                     zk_migration_state)


# ---------------------------------------------------------------- activation as the system model uses it
def bootstrap_migration_state(level: int, migration_enabled: bool, profile: str) -> ZkMigrationState:
    """The migration state of a new quorum after its first controller activated on an empty log: Kafka's
    ``recordsForEmptyLog`` (NONE also when no record is written below 3.6-IV1: it is the default) and the
    KIP's bridge release 3.4-IV0 as the minimum (kip). Raises ActivationError."""
    if profile == "kafka":
        written = records_for_empty_log(-1, migration_enabled, level).zk_migration_state
        return written if written is not None else ZkMigrationState.NONE
    if migration_enabled:
        if level < KIP_MINIMUM_LEVEL:
            raise ActivationError(f"The bootstrap metadata.version {_label(level)} does not support ZK migrations. "
                                  "Cannot continue with ZK migrations enabled.")
        return ZkMigrationState.PRE_MIGRATION
    return ZkMigrationState.NONE


@dataclass(frozen=True)
class Activation:
    """What a newly elected controller does with the persisted state (ActivationRecordsGenerator)."""

    write: ZkMigrationState | None  # a ZkMigrationStateRecord to append, or None
    resign: str | None = None  # the error with which it resigns, or None
    abort_transaction: bool = False  # an AbortTransactionRecord is written (never when it resigns)


def activate(state: ZkMigrationState, migration_enabled: bool, all_voters_disabled: bool, transaction_open: bool,
             profile: str, level: int | None = None) -> Activation:
    """``recordsForNonEmptyLog`` (kafka, at metadata.version ``level``, 3.9-IV0 when None) and KIP-866
    "wrong settings" (kip, which has no metadata.version rule here). A controller that resigns writes
    nothing: in Kafka the generator throws before any record is appended, the abort record included."""
    if profile == "kafka":
        try:
            r = records_for_non_empty_log(0 if transaction_open else -1, migration_enabled,
                                          LATEST_PRODUCTION_3_9 if level is None else level, state)
        except ActivationError as exc:
            return Activation(None, str(exc), False)
        return Activation(r.zk_migration_state, None, r.aborts_transaction)
    abort = transaction_open  # "the next active controller aborts the transaction"
    if state is ZkMigrationState.NONE and migration_enabled:
        return Activation(None, "Should not have ZK migrations enabled on a cluster that was created in KRaft mode.")
    if state is ZkMigrationState.MIGRATION and not migration_enabled:
        if all_voters_disabled:
            # The KIP finalizes only when the operator has turned migration off on the whole quorum.
            return Activation(ZkMigrationState.POST_MIGRATION, None, abort)
        return Activation(None, "A ZK migration is in progress but this controller is not configured for it "
                          "(zookeeper.metadata.migration.enable=false): resigning.")
    if state is ZkMigrationState.PRE_MIGRATION and not migration_enabled:
        return Activation(None, "A ZK migration is pending but this controller is not configured for it: resigning.")
    return Activation(None, None, abort)


# ---------------------------------------------------------------- broker registration
class KafkaApiError(Exception):
    """An ApiException of the controller; ``error`` is Kafka's exception class."""

    error = "ApiException"


class BrokerIdNotRegisteredError(KafkaApiError):
    error = "BrokerIdNotRegisteredException"


class InvalidRegistrationError(KafkaApiError):
    error = "InvalidRegistrationException"


class UnsupportedVersionError(KafkaApiError):
    error = "UnsupportedVersionException"


class ControllerMovedError(KafkaApiError):
    error = "ControllerMovedException"


@dataclass(frozen=True)
class BrokerRegistrationRequest:
    """The parts of ``BrokerRegistrationRequestData`` the migration checks read. A ZK broker in migration
    mode sends IsMigratingZkBroker and its IBP as the metadata.version range (KafkaServer); a broker that
    sends no metadata.version range is taken to support only 3.0-IV1."""

    broker_id: int
    is_migrating_zk_broker: bool
    metadata_version_range: tuple[int, int] | None
    listeners: tuple[str, ...] = ("PLAINTEXT",)

    @staticmethod
    def zk_broker(broker_id: int, ibp: MetadataVersionLike, listeners: tuple[str, ...] = ("PLAINTEXT",)
                  ) -> BrokerRegistrationRequest:
        level = to_metadata_version(ibp).feature_level
        return BrokerRegistrationRequest(broker_id, True, (level, level), listeners)


def register_broker(request: BrokerRegistrationRequest, zk_migration_enabled: bool,
                    metadata_version: MetadataVersionLike,
                    zk_migration_state: ZkMigrationState = ZkMigrationState.NONE,
                    inter_broker_listener_name: str = "PLAINTEXT",
                    finalized_level: int | None = None) -> None:
    """``ClusterControlManager.registerBroker`` (3.9), its migration checks in Kafka's order: a ZK broker
    needs the controller's migration config and a metadata.version that supports the migration; no KRaft
    broker registers in pre-migration mode; a ZK broker must have the inter-broker listener; the broker's
    metadata.version range must hold the finalized level (``finalized_level``, the controller's
    metadata.version when None). Raises the ApiException Kafka throws; returns None when accepted. Not
    modelled: the cluster id, the incarnation / session checks, log directories, features other than
    metadata.version. Kafka has no ZkMigrationReady check for brokers and no rule about ids shared by ZK and
    KRaft brokers (KIP-866 only: zk_broker_registration_error / kraft_broker_registration_error)."""
    mv = to_metadata_version(metadata_version)
    if request.is_migrating_zk_broker and not (zk_migration_enabled and mv.is_migration_supported()):
        raise BrokerIdNotRegisteredError("Controller does not support registering ZK brokers.")
    if not request.is_migrating_zk_broker and zk_migration_state is ZkMigrationState.PRE_MIGRATION:
        raise BrokerIdNotRegisteredError("Controller is in pre-migration mode and cannot register KRaft brokers "
                                         "until the metadata migration is complete.")
    if request.is_migrating_zk_broker and inter_broker_listener_name not in request.listeners:
        raise InvalidRegistrationError(f"Broker does not have the current inter.broker.listener "
                                       f"{inter_broker_listener_name}")
    finalized = mv.feature_level if finalized_level is None else finalized_level
    lo, hi = request.metadata_version_range or (MINIMUM_KRAFT_VERSION.feature_level,) * 2
    if not lo <= finalized <= hi:
        # ClusterControlManager.processRegistrationFeature
        raise UnsupportedVersionError(f"Unable to register because the broker does not support finalized version "
                                      f"{finalized} of metadata.version. The broker wants a version between {lo} "
                                      f"and {hi}, inclusive.")


@dataclass(frozen=True)
class ZkBrokerRegistration:
    """``BrokerRegistrationRequest`` v1+ from a ZK broker: its IBP as the metadata.version range, and
    ``ZkMigrationReady`` (the KIP's flag, present only when it runs with the migration configs; Kafka 3.9
    sends IsMigratingZkBroker instead, and only with the migration configs)."""

    broker_id: int
    ibp: int
    zk_migration_ready: bool


def zk_broker_registration_error(reg: ZkBrokerRegistration, quorum_level: int, migration_enabled: bool,
                                 kraft_broker_ids: frozenset[int] = frozenset(), profile: str = "kip") -> str | None:
    """A ZK broker's registration: the error message, None when accepted.

    kip (KIP-866 "Broker registration"): accepted only when the controller runs with the migration config,
    ZkMigrationReady is set, no KRaft broker has its id and its metadata.version equals the quorum's.
    kafka: ``register_broker`` (``zk_migration_ready`` and ``kraft_broker_ids`` play no part)."""
    if profile == "kafka":
        try:
            register_broker(BrokerRegistrationRequest(reg.broker_id, True, (reg.ibp, reg.ibp)), migration_enabled,
                            quorum_level)
        except KafkaApiError as exc:
            return str(exc)
        return None
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
    """KIP-866 only (kip): a KRaft broker that reuses the id of a ZK broker is rejected ("Broker
    registration"). Kafka 3.9 has no such rule."""
    if broker_id in zk_broker_ids:
        return f"Broker id {broker_id} belongs to a ZK broker taking part in the migration."
    return None


# ---------------------------------------------------------------- the controller quorum
def reason_all_controllers_zk_migration_not_ready(metadata_version: MetadataVersionLike,
                                                  quorum_node_ids: Sequence[int],
                                                  controllers: Mapping[int, bool]) -> str | None:
    """``QuorumFeatures.reasonAllControllersZkMigrationNotReady`` (3.9): why the driver stays in
    WAIT_FOR_CONTROLLER_QUORUM, or None. ``controllers`` maps each registered controller to its
    ZkMigrationReady. Below 3.7-IV0 there are no controller registrations and nothing is checked."""
    mv = to_metadata_version(metadata_version)
    if not mv.is_migration_supported():
        return f"The metadata.version too low at {mv}"
    if not mv.is_at_least(CONTROLLER_REGISTRATION_MINIMUM):
        return None
    for node in quorum_node_ids:
        if node not in controllers:
            return f"No registration found for controller {node}"
        if not controllers[node]:
            return f"Controller {node} has not enabled zookeeper.metadata.migration.enable"
    return None


def reason_all_controllers_zk_migration_not_ready_from_api_versions(node_id: int, quorum_node_ids: Sequence[int],
                                                                   api_versions: Mapping[int, bool]) -> str | None:
    """``QuorumFeatures.reasonAllControllersZkMigrationNotReady()`` of Kafka 3.5.0 - 3.6.x (KAFKA-14909, apache/kafka
    8b33a83 on 3.5): every other voter (the local node is skipped) must have sent ApiVersions with ZkMigrationReady.
    ``api_versions`` maps each voter whose ApiVersions the controller holds (NetworkClient drops them when the
    connection goes) to its ZkMigrationReady; every metadata.version is checked. None when ready."""
    missing: list[str] = []
    not_ready: list[str] = []
    for node in quorum_node_ids:
        if node == node_id:
            continue
        if node not in api_versions:
            missing.append(str(node))
        elif not api_versions[node]:
            not_ready.append(str(node))
    if not missing and not not_ready:
        return None
    first = f"Nodes don't enable `zookeeper.metadata.migration.enable`: [{', '.join(not_ready)}]." if not_ready else ""
    second = f" Missing apiVersion from nodes: [{', '.join(missing)}]" if missing else ""
    return first + second


# ---------------------------------------------------------------- the take-over of /controller
class IllegalStateError(RuntimeError):
    """Kafka's IllegalStateException."""


@dataclass(frozen=True)
class KRaftRegistrationResult:
    """``SuccessfulRegistrationResult``: the /controller_epoch written and its new znode version."""

    controller_epoch: int
    controller_epoch_zk_version: int


def try_register_kraft_controller_as_active_controller(
        kraft_controller_id: int, kraft_controller_epoch: int, controller_epoch: int | None,
        controller_epoch_zk_version: int = 0, kraft_epoch_in_zk: int | None = None) -> KRaftRegistrationResult:
    """``KafkaZkClient.tryRegisterKRaftControllerAsActiveController`` (3.9) without concurrent writers:
    ``controller_epoch`` is /controller_epoch (None when absent), ``kraft_epoch_in_zk`` the KRaft epoch
    /controller holds (None when /controller is absent or names a ZK broker). /controller_epoch becomes its
    value + 1 by a write conditional on its version. The KRaft epoch is checked first. The failed multi-op
    of a concurrent writer (FailedRegistrationResult) is not modelled here."""
    if kraft_epoch_in_zk is not None and kraft_epoch_in_zk >= kraft_controller_epoch:
        raise ControllerMovedError(f"Cannot register KRaft controller {kraft_controller_id} with epoch "
                                   f"{kraft_controller_epoch} as the current controller register in ZK has the same "
                                   f"or newer epoch {kraft_epoch_in_zk}.")
    if controller_epoch is None:
        raise IllegalStateError(f"Cannot register KRaft controller {kraft_controller_id} as the active controller "
                                "since there is no ZK controller epoch present.")
    return KRaftRegistrationResult(controller_epoch + 1, controller_epoch_zk_version + 1)


def claim_controller_epoch(zk_epoch: int | None, kraft_epoch_in_zk: int, kraft_epoch: int) -> int | None:
    """The take-over as the driver sees it: the new /controller_epoch (current + 1), or None when the claim
    fails and the driver stays in BECOME_CONTROLLER to retry: /controller already names a KRaft controller
    with the same or a newer KRaft epoch (ControllerMovedException), or /controller_epoch is absent (None or
    negative: IllegalStateException). Both reach the driver's non-fatal fault handler."""
    try:
        return try_register_kraft_controller_as_active_controller(
            0, kraft_epoch, None if zk_epoch is None or zk_epoch < 0 else zk_epoch,
            kraft_epoch_in_zk=kraft_epoch_in_zk if kraft_epoch_in_zk >= 0 else None).controller_epoch
    except (ControllerMovedError, IllegalStateError):
        return None


# ---------------------------------------------------------------- KRaftMigrationDriver's events (Kafka 3.9)
# What each event of ``KRaftMigrationDriver`` decides, as pure functions of what it reads (the published
# metadata image, the /migration state it holds, what the migration client answers). The driver runs one
# event at a time on its own queue; a PollEvent (re-scheduled after each poll, and appended by every state
# change) enqueues the event of the current state. An event that throws leaves the state as it was, so the
# next poll runs it again (``handle_migration_event_exception`` says what else happens).
DEFAULT_MIN_MIGRATION_BATCH_SIZE = 200  # KRaftMigrationDriver.Builder: minBatchSize when not set


class DriverEvent(enum.Enum):
    """The driver's event classes (``KRaftMigrationDriver.*Event``)."""

    RECOVER_MIGRATION_STATE_FROM_ZK = "RecoverMigrationStateFromZKEvent"
    KRAFT_LEADER = "KRaftLeaderEvent"
    METADATA_CHANGE = "MetadataChangeEvent"
    WAIT_FOR_CONTROLLER_QUORUM = "WaitForControllerQuorumEvent"
    WAIT_FOR_ZK_BROKERS = "WaitForZkBrokersEvent"
    BECOME_ZK_CONTROLLER = "BecomeZkControllerEvent"
    MIGRATE_METADATA = "MigrateMetadataEvent"
    SYNC_KRAFT_METADATA = "SyncKRaftMetadataEvent"
    SEND_RPCS_TO_BROKERS = "SendRPCsToBrokersEvent"
    POLL = "PollEvent"

    @property
    def is_write_event(self) -> bool:
        """``MigrationWriteEvent``: it writes to ZooKeeper or sends RPCs, so it runs only for the KRaft
        leader and epoch seen when it was created."""
        return self in _WRITE_EVENTS

    @property
    def expected_state(self) -> MigrationDriverState | None:
        """The state ``checkDriverState`` requires for the event to run (None: the event does not check)."""
        return _EXPECTED_STATE.get(self)


_E = DriverEvent
_WRITE_EVENTS = frozenset({_E.BECOME_ZK_CONTROLLER, _E.MIGRATE_METADATA, _E.SYNC_KRAFT_METADATA,
                           _E.SEND_RPCS_TO_BROKERS})
# PollEvent: the event each state enqueues (None: nothing, the driver waits for a leader or metadata event).
POLL_EVENTS: dict[MigrationDriverState, DriverEvent | None] = {
    _D.UNINITIALIZED: _E.RECOVER_MIGRATION_STATE_FROM_ZK,
    _D.INACTIVE: None,
    _D.WAIT_FOR_CONTROLLER_QUORUM: _E.WAIT_FOR_CONTROLLER_QUORUM,
    _D.WAIT_FOR_BROKERS: _E.WAIT_FOR_ZK_BROKERS,
    _D.BECOME_CONTROLLER: _E.BECOME_ZK_CONTROLLER,
    _D.ZK_MIGRATION: _E.MIGRATE_METADATA,
    _D.SYNC_KRAFT_TO_ZK: _E.SYNC_KRAFT_METADATA,
    _D.KRAFT_CONTROLLER_TO_BROKER_COMM: _E.SEND_RPCS_TO_BROKERS,
    _D.DUAL_WRITE: None,
}
_EXPECTED_STATE: dict[DriverEvent, MigrationDriverState] = {e: s for s, e in POLL_EVENTS.items() if e is not None}


def poll_event(state: MigrationDriverState) -> DriverEvent | None:
    """``PollEvent.run``: the event enqueued in this state."""
    return POLL_EVENTS[state]


@dataclass(frozen=True, order=True)
class OffsetAndEpoch:
    """``org.apache.kafka.raft.OffsetAndEpoch``, ordered as Kafka compares it: by epoch, then by offset."""

    epoch: int
    offset: int


@dataclass(frozen=True)
class LeaderAndEpoch:
    """``org.apache.kafka.raft.LeaderAndEpoch``: the KRaft leader (None when unknown) and the epoch."""

    leader_id: int | None
    epoch: int

    def is_leader(self, node_id: int) -> bool:
        return self.leader_id is not None and self.leader_id == node_id


def transition_to(current: MigrationDriverState, new: MigrationDriverState) -> MigrationDriverState:
    """``KRaftMigrationDriver.transitionTo``: the new state, or Kafka's IllegalStateException."""
    if not is_valid_state_change(current, new):
        raise IllegalStateError(f"Invalid transition in migration driver from {current.name} to {new.name}")
    return new


def check_driver_state(state: MigrationDriverState, event: DriverEvent,
                       event_leader: LeaderAndEpoch | None = None,
                       current_leader: LeaderAndEpoch | None = None) -> bool:
    """``checkDriverState``: whether ``event`` runs. A write event created for another leader or epoch than
    the current one does nothing; so does any event whose state is no longer the driver's (a second
    MigrateMetadataEvent after the first moved on, for instance)."""
    if event.is_write_event and event_leader != current_leader:
        return False
    return state is event.expected_state


def on_controller_change(state: MigrationDriverState) -> tuple[DriverEvent, ...]:
    """``onControllerChange`` (the metadata loader's thread): the events appended. While UNINITIALIZED the
    recovery from ZooKeeper is appended first, so that the leader event finds the driver INACTIVE."""
    if state is MigrationDriverState.UNINITIALIZED:
        return (DriverEvent.RECOVER_MIGRATION_STATE_FROM_ZK, DriverEvent.KRAFT_LEADER)
    return (DriverEvent.KRAFT_LEADER,)


def recover_migration_state_from_zk_event(state: MigrationDriverState) -> MigrationDriverState:
    """``RecoverMigrationStateFromZKEvent``: read (or create) /migration, install the driver as a metadata
    publisher, go INACTIVE. Only while UNINITIALIZED; a ZooKeeper error leaves it UNINITIALIZED and the next
    poll enqueues the recovery again."""
    if not check_driver_state(state, DriverEvent.RECOVER_MIGRATION_STATE_FROM_ZK):
        return state
    return transition_to(state, MigrationDriverState.INACTIVE)


def kraft_leader_event(state: MigrationDriverState, is_active: bool) -> MigrationDriverState:
    """``KRaftLeaderEvent``: INACTIVE when another node leads (what the driver held of the ZK controller is
    forgotten: ``withUnknownZkController``), WAIT_FOR_CONTROLLER_QUORUM when this node leads (after reading
    /migration again). Raises IllegalStateError where Kafka's transitionTo throws (a leader event while
    UNINITIALIZED, or an active one while already active)."""
    return transition_to(state, MigrationDriverState.WAIT_FOR_CONTROLLER_QUORUM if is_active
                         else MigrationDriverState.INACTIVE)


def wait_for_controller_quorum_event(state: MigrationDriverState, zk_migration_state: ZkMigrationState,
                                     initial_zk_migration_complete: bool,
                                     quorum_not_ready_reason: str | None = None,
                                     first_publish: bool = True) -> MigrationDriverState:
    """``WaitForControllerQuorumEvent`` with the image's ZkMigrationState: NONE and POST_MIGRATION go
    INACTIVE (no migration to drive); PRE_MIGRATION waits for the controller quorum
    (``quorum_not_ready_reason``: ``reason_all_controllers_zk_migration_not_ready``) and then for the ZK
    brokers; MIGRATION skips the brokers when /migration says the initial copy finished (a controller
    restarted or failed over mid-migration), and goes INACTIVE when it does not. Nothing happens before the
    first metadata image was published."""
    if not check_driver_state(state, DriverEvent.WAIT_FOR_CONTROLLER_QUORUM) or not first_publish:
        return state
    if zk_migration_state in (ZkMigrationState.NONE, ZkMigrationState.POST_MIGRATION):
        return transition_to(state, MigrationDriverState.INACTIVE)
    if zk_migration_state is ZkMigrationState.PRE_MIGRATION:
        if quorum_not_ready_reason is not None:
            return state
        return transition_to(state, MigrationDriverState.WAIT_FOR_BROKERS)
    if zk_migration_state is ZkMigrationState.MIGRATION:
        return transition_to(state, MigrationDriverState.BECOME_CONTROLLER if initial_zk_migration_complete
                             else MigrationDriverState.INACTIVE)
    raise IllegalStateError(f"Unsupported ZkMigrationState {zk_migration_state.name}")


def reason_zk_brokers_not_ready_for_migration(first_publish: bool, kraft_brokers: Mapping[int, bool],
                                              zk_broker_ids: Iterable[int],
                                              zk_brokers_with_assignments: Iterable[int] = ()) -> str | None:
    """``areZkBrokersReadyForMigration``: why the driver stays in WAIT_FOR_BROKERS (Kafka's log line), or
    None. ``kraft_brokers`` maps each broker registered with KRaft to its IsMigratingZkBroker;
    ``zk_broker_ids`` are the ids under /brokers, ``zk_brokers_with_assignments`` every broker a topic's
    assignment in ZooKeeper names. Each must be registered with KRaft as a migrating ZK broker."""
    if not first_publish:
        return "Waiting for initial metadata publish before checking if Zk brokers are registered."
    if not kraft_brokers:
        return "No brokers are known to KRaft, waiting for brokers to register."
    migrating = {b for b, zk in kraft_brokers.items() if zk}
    in_zk = set(zk_broker_ids)
    if not in_zk:
        return "No brokers are registered in ZK, waiting for brokers to register."
    if in_zk - migrating:
        return f"Still waiting for ZK brokers {sorted(in_zk - migrating)} to register with KRaft."
    assigned = set(zk_brokers_with_assignments)
    if assigned - migrating:
        return f"Still waiting for ZK brokers {sorted(assigned - migrating)} found in metadata to register with KRaft."
    return None


def wait_for_zk_brokers_event(state: MigrationDriverState, brokers_not_ready_reason: str | None
                              ) -> MigrationDriverState:
    """``WaitForZkBrokersEvent``: BECOME_CONTROLLER once every ZK broker registered (see
    ``reason_zk_brokers_not_ready_for_migration``)."""
    if not check_driver_state(state, DriverEvent.WAIT_FOR_ZK_BROKERS) or brokers_not_ready_reason is not None:
        return state
    return transition_to(state, MigrationDriverState.BECOME_CONTROLLER)


@dataclass(frozen=True)
class DriverStep:
    """What one driver event did: the state after it, the znodes it wrote in order ("metadata" for the
    cluster metadata KRaftMigrationZkWriter writes, each write conditional on /migration's version) and the
    RPCs it sent to the ZK brokers ("image": full UpdateMetadata / LeaderAndIsr from the image, "delta":
    incremental ones, None)."""

    state: MigrationDriverState
    zk_writes: tuple[str, ...] = ()
    rpcs: str | None = None


def become_zk_controller_event(state: MigrationDriverState, claimed: bool, initial_zk_migration_complete: bool,
                               event_leader: LeaderAndEpoch | None = None,
                               current_leader: LeaderAndEpoch | None = None) -> DriverStep:
    """``BecomeZkControllerEvent``: claim /controller and /controller_epoch
    (``try_register_kraft_controller_as_active_controller``); a claim that fails (``claimed`` false: the ZK
    controller epoch version stays unknown) keeps the driver in BECOME_CONTROLLER to retry on the next poll
    (until a new KRaft leader makes the event stale). After a claim /migration is written unconditionally to
    learn its latest version (KAFKA-16171 / KAFKA-16667), then: ZK_MIGRATION for the initial copy, or
    SYNC_KRAFT_TO_ZK when /migration says the copy already finished."""
    if not check_driver_state(state, DriverEvent.BECOME_ZK_CONTROLLER, event_leader, current_leader):
        return DriverStep(state)
    if not claimed:
        return DriverStep(state)  # the conditional multi-op failed as a whole: nothing is written
    nxt = MigrationDriverState.SYNC_KRAFT_TO_ZK if initial_zk_migration_complete else MigrationDriverState.ZK_MIGRATION
    return DriverStep(transition_to(state, nxt), ("/controller", "/controller_epoch", "/migration"))


def coalesce_migration_batches(batch_sizes: Iterable[int],
                               min_batch_size: int = DEFAULT_MIN_MIGRATION_BATCH_SIZE) -> tuple[int, ...]:
    """``BufferingBatchConsumer`` as ``MigrateMetadataEvent`` uses it: the sizes of the record batches handed
    to the controller for the batches read from ZooKeeper. Batches are buffered until at least
    ``min_batch_size`` records are held, then handed over whole; the rest is flushed at the end; an empty
    buffer is never handed over."""
    out: list[int] = []
    held = 0
    for size in batch_sizes:
        held += size
        if held >= min_batch_size and held:
            out.append(held)
            held = 0
    if held:
        out.append(held)
    return tuple(out)


def migrate_metadata_event(state: MigrationDriverState, event_leader: LeaderAndEpoch | None = None,
                           current_leader: LeaderAndEpoch | None = None) -> DriverStep:
    """``MigrateMetadataEvent``: begin the migration transaction, copy ZooKeeper's metadata into it (in the
    batches of ``coalesce_migration_batches``), commit it, record the KRaft offset reached on /migration
    (the initial copy is now complete) and go SYNC_KRAFT_TO_ZK. Runs only in ZK_MIGRATION: of two such
    events enqueued back to back only the first begins a migration. (A failed copy aborts the transaction,
    which stops the controller through its fatal fault handler: not modelled here.)"""
    if not check_driver_state(state, DriverEvent.MIGRATE_METADATA, event_leader, current_leader):
        return DriverStep(state)
    return DriverStep(transition_to(state, MigrationDriverState.SYNC_KRAFT_TO_ZK), ("/migration",))


def sync_kraft_metadata_event(state: MigrationDriverState, image: OffsetAndEpoch, migration: OffsetAndEpoch,
                              event_leader: LeaderAndEpoch | None = None,
                              current_leader: LeaderAndEpoch | None = None) -> DriverStep:
    """``SyncKRaftMetadataEvent`` (KAFKA-15010): a full KRaft -> ZooKeeper sync of the image, once the image
    holds at least what /migration says ZooKeeper holds (``image`` >= ``migration``); then
    KRAFT_CONTROLLER_TO_BROKER_COMM. The sync writes only what differs."""
    if not check_driver_state(state, DriverEvent.SYNC_KRAFT_METADATA, event_leader, current_leader) \
            or image < migration:
        return DriverStep(state)
    return DriverStep(transition_to(state, MigrationDriverState.KRAFT_CONTROLLER_TO_BROKER_COMM), ("metadata",))


def send_rpcs_to_brokers_event(state: MigrationDriverState, image: OffsetAndEpoch, migration: OffsetAndEpoch,
                               event_leader: LeaderAndEpoch | None = None,
                               current_leader: LeaderAndEpoch | None = None) -> DriverStep:
    """``SendRPCsToBrokersEvent``: full RPCs to the ZK brokers from the image (nothing written to
    ZooKeeper), then DUAL_WRITE; it waits while the image is older than /migration's offset."""
    if not check_driver_state(state, DriverEvent.SEND_RPCS_TO_BROKERS, event_leader, current_leader) \
            or image < migration:
        return DriverStep(state)
    return DriverStep(transition_to(state, MigrationDriverState.DUAL_WRITE), (), "image")


@dataclass(frozen=True)
class MetadataChange:
    """``MetadataChangeEvent``'s outcome: whether it was written to ZooKeeper (the delta or snapshot by
    KRaftMigrationZkWriter, then the image's offset on /migration), the RPCs sent ("image", "delta" or None)
    and whether it woke the driver (a broker registration changed before dual write)."""

    zk_writes: tuple[str, ...] = ()
    rpcs: str | None = None
    wakeup: bool = False


def metadata_change_event(state: MigrationDriverState, *, first_publish: bool = True, image_empty: bool = False,
                          is_snapshot: bool = False, topics_changed: bool = False, cluster_changed: bool = False,
                          leader_current: bool = True, initial_zk_migration_complete: bool = True,
                          image: OffsetAndEpoch | None = None,
                          migration: OffsetAndEpoch | None = None) -> MetadataChange:
    """``MetadataChangeEvent`` (the metadata loader published a delta, or a snapshot): ignored before the
    first non-empty image (KAFKA-15389), when UNINITIALIZED or INACTIVE, and before dual write (a change of
    broker registrations then wakes the driver, which may be waiting for brokers); in dual write it is
    ignored when made under another leader or epoch (``leader_current``), before the initial copy
    finished, or when the image is older than what /migration records. Otherwise it is written to
    ZooKeeper and the brokers get the full image (a snapshot) or incremental RPCs (a delta that changes
    topics or brokers; none for other deltas, e.g. configs)."""
    if (not first_publish and image_empty) or state in (MigrationDriverState.UNINITIALIZED,
                                                        MigrationDriverState.INACTIVE):
        return MetadataChange()
    if not state.allow_dual_write:
        return MetadataChange(wakeup=cluster_changed)
    if not leader_current or not initial_zk_migration_complete:
        return MetadataChange()
    if image is not None and migration is not None and image < migration:
        return MetadataChange()
    if is_snapshot:
        rpcs: str | None = "image"
    else:
        rpcs = "delta" if topics_changed or cluster_changed else None
    return MetadataChange(("metadata", "/migration"), rpcs)


def handle_migration_event_exception(error: str) -> str:
    """``MigrationEvent.handleException``: what a driver event's exception (Kafka's class name) leads to.
    "fault": the driver's fault handler (non-fatal in ControllerServer: logged and counted);
    "retry": logged, the state is unchanged, so the next poll runs the event again; "ignore": the queue
    is closing. The state is unchanged in every case."""
    if error == "MigrationClientAuthException":  # a MigrationClientException, checked first
        return "fault"
    if error == "MigrationClientException":
        return "retry"
    if error == "RejectedExecutionException":
        return "ignore"
    return "fault"
