"""KIP-778 at the API level: ``UpdateFeatures`` on a KRaft ``QuorumController``, broker registration, format.

Two semantics profiles:

* ``kip``: KIP-778 as written, on top of KIP-584 and its all-or-nothing revision: ``DowngradeType``
  NONE / SAFE / UNSAFE, the error ``UNSAFE_FEATURE_DOWNGRADE`` for a lossy SAFE downgrade, a lossy
  UNSAFE downgrade allowed, a version supported by a majority of the controller quorum and by every
  registered broker.
* ``kafka``: Apache Kafka's ``FeatureControlManager.updateFeature`` / ``updateMetadataVersion``,
  ``QuorumFeatures.reasonNotSupported`` and ``ClusterControlManager.processRegistrationFeature``
  (``metadata/src/main/java/org/apache/kafka/controller/``) in 3.9 and in 4.0: ``UpgradeType``, every
  failure as ``INVALID_UPDATE_VERSION`` with Kafka's exact message, Kafka's order of checks, the bootstrap
  floor, no change during a ZK migration, lossy downgrades refused even when UNSAFE, per-feature results in
  3.9 and one top-level error for the whole request in 4.0 (whose minimum is 3.3-IV3 and which has neither
  the ZK-migration nor the 3.3-IV0 floor check).

Everything is immutable: the controller answers with a :class:`ControllerResult` (response + records)
and ``replay`` returns the next controller, as Kafka's controller replays its own records.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from reference_impl.metadata_version.catalog import (
    FEATURE_NAME,
    Catalog,
    from_feature_level,
    from_version_string,
    rules_of,
)
from reference_impl.metadata_version.catalog import KAFKA_RELEASES as _RELEASE_BOUNDS
from reference_impl.metadata_version.catalog import kafka_release as kafka_release_bounds

PROFILES = ("kip", "kafka")
# Release lines whose FeatureControlManager rules differ: "3.3" stands for Kafka 3.3-3.6 (brokers' ranges passed to
# updateFeatures, the other controllers read from ApiVersions; metadata/src/main/java/org/apache/kafka/controller/
# {FeatureControlManager,QuorumFeatures}.java at 3.3.0..3.6.2), "3.9" for 3.7-3.9 (ClusterFeatureSupportDescriber,
# controller registrations), "4.0" for 4.0 and later (one error for the whole request). "4.1" .. "4.4" follow 4.0's
# rules with their own catalog bounds (catalog.KAFKA_RELEASES; catalog.rules_of).
KAFKA_RELEASES = tuple(_RELEASE_BOUNDS)
# Kafka 4.0's QuorumController.updateFeatures: the one error of a refused request follows this sentence.
ALL_FAILED_PREFIX = "The update failed for all features since the following feature had an error: "
KRAFT_VERSION_FEATURE_NAME = "kraft.version"  # KRaftVersion.FEATURE_NAME


class Errors(enum.IntEnum):
    """Error codes (Kafka's ``Errors.java``), plus the KIP's ``UNSAFE_FEATURE_DOWNGRADE``."""

    NONE = 0
    UNSUPPORTED_VERSION = 35
    CLUSTER_AUTHORIZATION_FAILED = 31
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    INVALID_UPDATE_VERSION = 95
    FEATURE_UPDATE_FAILED = 96
    INVALID_REGISTRATION = 119  # Kafka 3.7+ (InvalidRegistrationException)
    # KIP-778 "Public Interfaces" names this code but gives no number, and Kafka never added it (3.9 and
    # 4.0 refuse every lossy downgrade with INVALID_UPDATE_VERSION). The number is ours, outside Kafka's.
    UNSAFE_FEATURE_DOWNGRADE = 10_000


class DowngradeType(enum.IntEnum):
    """KIP-778's ``DowngradeType`` field of ``UpdateFeaturesRequest`` (0 NONE, 1 SAFE, 2 UNSAFE)."""

    NONE = 0
    SAFE = 1
    UNSAFE = 2

    @staticmethod
    def from_allow_downgrade(allow_downgrade: bool) -> DowngradeType:
        # KIP-778 "AdminClient changes": the deprecated boolean maps to SAFE.
        return DowngradeType.SAFE if allow_downgrade else DowngradeType.NONE


class UpgradeType(enum.IntEnum):
    """Kafka's ``FeatureUpdate.UpgradeType`` (the field shipped in UpdateFeaturesRequest v1)."""

    UNKNOWN = 0
    UPGRADE = 1
    SAFE_DOWNGRADE = 2
    UNSAFE_DOWNGRADE = 3

    @staticmethod
    def from_code(code: int) -> UpgradeType:
        # UpgradeType.fromCode: every other code is UNKNOWN, which updateFeature then refuses.
        return UpgradeType(code) if code in (1, 2, 3) else UpgradeType.UNKNOWN

    @staticmethod
    def of(downgrade: DowngradeType) -> UpgradeType:
        return {DowngradeType.NONE: UpgradeType.UPGRADE, DowngradeType.SAFE: UpgradeType.SAFE_DOWNGRADE,
                DowngradeType.UNSAFE: UpgradeType.UNSAFE_DOWNGRADE}[downgrade]


SHORT_MAX = 32767  # Java's Short.MAX_VALUE: feature levels are shorts in Kafka


def _to_short(value: int) -> int:
    # Java's (short) cast: two's-complement wrap to 16 bits.
    return ((value + 0x8000) & 0xFFFF) - 0x8000


@dataclass(frozen=True, order=True)
class VersionRange:
    """Kafka's ``org.apache.kafka.metadata.VersionRange``: an inclusive ``[min, max]``; ``DISABLED`` is 0-0.

    The constructor checks ``0 <= min <= max`` (what every range of a well-formed configuration is);
    :meth:`of` builds any range as Kafka's ``VersionRange.of`` does, which checks nothing (Kafka's own tests
    build ``2-1``, and ``-1-5`` from ``IBP_3_0_IV0.featureLevel()``)."""

    min: int
    max: int

    def __post_init__(self) -> None:
        if not 0 <= self.min <= self.max:
            raise ValueError(f"invalid version range {self.min}-{self.max}: need 0 <= min <= max")

    @classmethod
    def of(cls, min_version: int, max_version: int) -> VersionRange:
        """``VersionRange.of(int, int)``: both values cast to short, no order or sign check."""
        r = object.__new__(cls)
        object.__setattr__(r, "min", _to_short(min_version))
        object.__setattr__(r, "max", _to_short(max_version))
        return r

    def contains(self, version: int) -> bool:
        return self.min <= version <= self.max

    def intersects(self, other: VersionRange) -> bool:
        """``VersionRange.intersects``: the two ranges overlap."""
        return other.min <= self.max and other.max >= self.min

    def __str__(self) -> str:
        # VersionRange.toString: "7" when min == max, "1+" when max is Short.MAX_VALUE, "1-7" otherwise.
        if self.min == self.max:
            return str(self.min)
        if self.max == SHORT_MAX:
            return f"{self.min}+"
        return f"{self.min}-{self.max}"


DISABLED = VersionRange(0, 0)  # QuorumFeatures.DISABLED: what a node that does not know a feature supports


@dataclass(frozen=True)
class FeatureUpdate:
    """One ``FeatureUpdateKey``; ``downgrade_type`` is KIP-778's field (Kafka ships it as UpgradeType).

    ``allow_downgrade`` is set for a v0 entry (its ``AllowDowngrade``), ``upgrade_type_code`` for a v1 entry
    that carries a raw ``UpgradeType`` byte (any value, so an unknown one can be sent)."""

    feature: str
    max_version_level: int
    downgrade_type: DowngradeType = DowngradeType.NONE
    allow_downgrade: bool | None = None
    upgrade_type_code: int | None = None

    @staticmethod
    def legacy(feature: str, max_version_level: int, allow_downgrade: bool) -> FeatureUpdate:
        """The v0 form with ``AllowDowngrade``: KIP-778 maps it to SAFE (``downgrade_type``)."""
        return FeatureUpdate(feature, max_version_level, DowngradeType.from_allow_downgrade(allow_downgrade),
                             allow_downgrade=allow_downgrade)

    @staticmethod
    def with_upgrade_type(feature: str, max_version_level: int, code: int) -> FeatureUpdate:
        """A v1 entry with the raw ``UpgradeType`` byte ``code`` (1 UPGRADE, 2 SAFE, 3 UNSAFE, else unknown)."""
        downgrade = {2: DowngradeType.SAFE, 3: DowngradeType.UNSAFE}.get(code, DowngradeType.NONE)
        return FeatureUpdate(feature, max_version_level, downgrade, upgrade_type_code=code)

    @property
    def upgrade_type(self) -> UpgradeType:
        """What Kafka's KRaft controller reads: QuorumController.updateFeatures takes the ``UpgradeType``
        field, which a v0 request lacks, so its schema default 1 (UPGRADE) applies and ``AllowDowngrade`` is
        ignored (only the ZooKeeper path, UpdateFeaturesRequest.getFeature, maps it to SAFE_DOWNGRADE)."""
        if self.allow_downgrade is not None:
            return UpgradeType.UPGRADE
        if self.upgrade_type_code is not None:
            return UpgradeType.from_code(self.upgrade_type_code)
        return UpgradeType.of(self.downgrade_type)


@dataclass(frozen=True)
class UpdateFeaturesRequest:
    feature_updates: tuple[FeatureUpdate, ...]
    dry_run: bool = False  # KIP-778 "DryRun" (Kafka: ValidateOnly)
    timeout_ms: int = 60000


@dataclass(frozen=True)
class UpdatableFeatureResult:
    feature: str
    error: Errors
    message: str | None = None


@dataclass(frozen=True)
class UpdateFeaturesResponse:
    error: Errors
    message: str | None
    results: tuple[UpdatableFeatureResult, ...] = ()

    def result(self, feature: str) -> UpdatableFeatureResult:
        for r in self.results:
            if r.feature == feature:
                return r
        raise KeyError(feature)

    @property
    def ok(self) -> bool:
        return self.error is Errors.NONE and all(r.error is Errors.NONE for r in self.results)

    def first_error(self) -> tuple[Errors, str | None]:
        if self.error is not Errors.NONE:
            return self.error, self.message
        for r in self.results:
            if r.error is not Errors.NONE:
                return r.error, r.message
        return Errors.NONE, None


@dataclass(frozen=True)
class FeatureLevelRecord:
    """The metadata record that sets a finalized level (KIP-778: no MinFeatureLevel)."""

    name: str
    feature_level: int

    def __str__(self) -> str:
        # The generated message's toString, as Kafka's replay error prints it.
        return f"FeatureLevelRecord(name='{self.name}', featureLevel={self.feature_level})"


@dataclass(frozen=True)
class ControllerResult:
    """Kafka's ``ControllerResult``: the response and the records to append (atomically)."""

    response: UpdateFeaturesResponse
    records: tuple[FeatureLevelRecord, ...] = ()


@dataclass(frozen=True)
class BrokerRegistration:
    """A broker's registration as the controller keeps it: its supported ranges and whether it is fenced."""

    broker_id: int
    features: tuple[tuple[str, VersionRange], ...]
    fenced: bool = True

    def supported(self, feature: str) -> VersionRange:
        return dict(self.features).get(feature, DISABLED)


@dataclass(frozen=True)
class BrokerRegistrationRequest:
    """``BrokerRegistrationRequest``: ``features`` None models a pre-KIP-778 broker that sends no
    metadata.version range (Kafka 3.9 then assumes it supports only ``MINIMUM_KRAFT_VERSION``; 4.0 refuses it)."""

    broker_id: int
    features: tuple[tuple[str, VersionRange], ...] | None


@dataclass(frozen=True)
class BrokerRegistrationReply:
    error: Errors
    message: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is Errors.NONE


# What the controller knows of one voter: None (no controller registration), its metadata.version range
# (a voter on the same software as this controller for every other feature), or its registration's
# supported features (a feature it does not list counts as DISABLED, as in Kafka).
VoterSupport = VersionRange | tuple[tuple[str, VersionRange], ...] | None


@dataclass(frozen=True)
class QuorumFeatures:
    """Kafka's ``org.apache.kafka.controller.QuorumFeatures``: this node's id, the feature ranges its own
    software supports, and the ids of the controller quorum. :attr:`QuorumController.quorum_features` is
    the controller's. ZooKeeper-migration readiness (``reasonAllControllersZkMigrationNotReady``) is
    ``reference_impl.zk_migration.api.reason_all_controllers_zk_migration_not_ready``."""

    node_id: int
    local_supported_features: tuple[tuple[str, VersionRange], ...]
    quorum_node_ids: tuple[int, ...]

    @staticmethod
    def reason_not_supported(new_version: int, what: str, rng: VersionRange) -> str | None:
        """``QuorumFeatures.reasonNotSupported``: why ``what`` cannot take ``new_version`` (None: it can)."""
        return _reason_not_supported(new_version, what, rng)

    @staticmethod
    def default_feature_map(catalog: Catalog, enable_unstable: bool, kafka_release: str = "3.9"
                            ) -> tuple[tuple[str, VersionRange], ...]:
        """``QuorumFeatures.defaultFeatureMap`` (4.0: ``defaultSupportedFeatureMap``), its metadata.version entry
        (the KIP-1022 features kraft.version, group.version, transaction.version and, in 4.0,
        eligible.leader.replicas.version are not modelled)."""
        return ((FEATURE_NAME, default_local_supported(catalog, kafka_release, enable_unstable)),)

    def local_supported_feature(self, name: str) -> VersionRange:
        return dict(self.local_supported_features).get(name, DISABLED)

    def is_controller_id(self, node_id: int) -> bool:
        return node_id in self.quorum_node_ids

    def reason_not_locally_supported(self, feature_name: str, new_version: int) -> str | None:
        return _reason_not_supported(new_version, f"Local controller {self.node_id}",
                                     self.local_supported_feature(feature_name))


@dataclass(frozen=True)
class QuorumController:
    """The active controller's view of the cluster, as far as feature levels go.

    ``voters`` maps each quorum voter id, in quorum order, to what the controller knows of it
    (:data:`VoterSupport`). ``local_supported`` is this controller's own binary, per feature.
    ``active_controller_id`` is the leader a non-active node knows of (None: none known).
    """

    catalog: Catalog
    node_id: int
    local_supported: tuple[tuple[str, VersionRange], ...]
    voters: tuple[tuple[int, VoterSupport], ...]
    brokers: tuple[BrokerRegistration, ...] = ()
    finalized: tuple[tuple[str, int], ...] = ()
    profile: str = "kip"
    kafka_release: str = "3.9"
    zk_migration_in_progress: bool = False
    is_active: bool = True
    mutations: frozenset[str] = field(default_factory=frozenset)  # named bugs, for broken variants
    active_controller_id: int | None = None
    # The bootstrap floor (the lowest level an update may set) of the kafka profile under release 3.9:
    # FeatureControlManager.Builder.setMinimumBootstrapVersion, as a feature level. None is Kafka's default,
    # MINIMUM_BOOTSTRAP_VERSION (the catalog's ``bootstrap_floor``). Kafka's tests lower it (to 3.0-IV0,
    # level -1) to reach the downgrade checks below 3.3-IV0. Not a setting of the kip profile (whose floor is
    # the catalog's minimum) nor of release 4.0 (whose floor is MINIMUM_VERSION, the first level it has).
    minimum_bootstrap_version: int | None = None

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"profile must be one of {PROFILES}, got {self.profile!r}")
        if self.kafka_release not in KAFKA_RELEASES:
            raise ValueError(f"kafka_release must be one of {KAFKA_RELEASES}, got {self.kafka_release!r}")
        if self.minimum_bootstrap_version is not None and (self.profile != "kafka" or self.kafka_release != "3.9"):
            raise ValueError("minimum_bootstrap_version is a setting of the kafka profile under release 3.9 only")

    # ------------------------------------------------------------------ reads
    @property
    def rules(self) -> str:
        """The rules of ``kafka_release``'s line: "3.3", "3.9" or "4.0" (4.1 .. 4.4 follow 4.0's)."""
        return rules_of(self.kafka_release)

    @property
    def registration_rules(self) -> str:
        """The release line of the broker registration checks (:func:`registration_feature_error`): the kafka
        profile's ``kafka_release``; the kip profile keeps 3.9's (the KIP says only that an unsupported broker is
        refused)."""
        return self.rules if self.profile == "kafka" else "3.9"

    @property
    def metadata_version(self) -> int:
        level = dict(self.finalized).get(FEATURE_NAME)
        if level is not None:
            return level
        # None finalized yet (only the API builds such a controller: the system's always has one; only the kafka
        # profile reads it). Kafka 3.x's QuorumController starts FeatureControlManager at MINIMUM_KRAFT_VERSION
        # (3.0-IV1, the catalog's minimum): the pre-production 3.0-3.2 logs that stored no metadata.version "are
        # all treated as 3.0IV1". Kafka 4.0 removed MINIMUM_KRAFT_VERSION and its QuorumController sets no
        # version, so FeatureControlManager.Builder's default stands: latestProduction(), 4.0-IV3 (the 4.0 branch
        # at 4ae681446f18, docs/kafka-tests.md). Only later releases hold none until the log's record.
        if self.rules in ("3.3", "3.9"):
            return self.catalog.minimum
        return self.catalog.latest_production_for(self.kafka_release)

    @property
    def quorum_features(self) -> QuorumFeatures:
        """Kafka's QuorumFeatures of this controller: its id, its own ranges and the voters' ids."""
        return QuorumFeatures(self.node_id, self.local_supported, tuple(v for v, _ in self.voters))

    def finalized_level(self, feature: str) -> int:
        return dict(self.finalized).get(feature, 0)

    def local_range(self, feature: str) -> VersionRange:
        return dict(self.local_supported).get(feature, DISABLED)

    def peer_range(self, voter: int, support: VoterSupport, feature: str) -> VersionRange | None:
        """What this controller learns a voter supports: :meth:`voter_range`, except that with the
        KAFKA-13990 mutation every other controller advertises no feature at all (Kafka 3.3's controllers
        answered ApiVersions with an empty feature set, so QuorumFeatures saw ``DISABLED`` for each peer)."""
        rng = self.voter_range(support, feature)
        if rng is not None and voter != self.node_id and "peers_advertise_no_features" in self.mutations:
            return DISABLED
        return rng

    def voter_range(self, support: VoterSupport, feature: str) -> VersionRange | None:
        """The range a voter supports for ``feature`` (None: it has not registered)."""
        if support is None:
            return None
        if isinstance(support, VersionRange):
            return support if feature == FEATURE_NAME else self.local_range(feature)
        return dict(support).get(feature, DISABLED)

    @property
    def floor(self) -> int:
        """The lowest metadata.version an update may set: the catalog's minimum under ``kip``; under ``kafka``
        3.9 ``minimum_bootstrap_version`` if set, else Kafka's ``MINIMUM_BOOTSTRAP_VERSION`` (3.3-IV0, the first
        with FeatureLevelRecord); and the first version Kafka 4.0 has at all (``MINIMUM_VERSION``, 3.3-IV3)
        under 4.0."""
        if self.profile != "kafka":
            return self.catalog.minimum
        if self.rules == "4.0":
            return self.catalog.minimum_for(self.kafka_release)
        if self.minimum_bootstrap_version is not None:
            return self.minimum_bootstrap_version
        return self.catalog.bootstrap_floor

    # ------------------------------------------------------------------ UpdateFeatures
    def update_features(self, request: UpdateFeaturesRequest, principal_can_alter: bool = True,
                        request_description: str | None = None) -> ControllerResult:
        """Both profiles take Kafka's top-level answers: ControllerApis.handleUpdateFeatures authorizes
        first (AuthHelper: "Request <request> is not authorized.", where Kafka prints the connection's
        RequestChannel.Request; ``request_description``, else the request itself), then a node that is not
        the active controller answers NOT_CONTROLLER (ControllerExceptions.newWrongControllerException)."""
        if not principal_can_alter:
            described = request if request_description is None else request_description
            return _top(Errors.CLUSTER_AUTHORIZATION_FAILED, f"Request {described} is not authorized.")
        if not self.is_active:
            if self.active_controller_id is None:
                return _top(Errors.NOT_CONTROLLER, "No controller appears to be active.")
            return _top(Errors.NOT_CONTROLLER,
                        f"The active controller appears to be node {self.active_controller_id}.")
        if self.profile == "kafka":
            return self._update_kafka(request)
        names = [u.feature for u in request.feature_updates]
        if len(names) != len(set(names)):
            # KIP-584: FeatureUpdates is keyed by name (mapKey in the schema): one update per feature.
            return _top(Errors.INVALID_REQUEST, "A feature may appear only once in a request.")
        return self._update_kip(request)

    def replay(self, record: FeatureLevelRecord) -> QuorumController:
        """Apply a record (FeatureControlManager.replay): level 0 removes a feature. Under ``kafka`` a level
        outside this controller's own range is a fatal error, as in Kafka; and release 4.0, once the range is
        checked, skips a kraft.version record (KAFKA-18979, 4.0 branch commit 4990c970c194: kraft.version lives
        in KRaft's control records, so a FeatureLevelRecord for it changes no finalized feature)."""
        if self.profile == "kafka":
            rng = self.local_range(record.name)
            if not rng.contains(record.feature_level):
                raise RuntimeError(f"Tried to apply FeatureLevelRecord {record}, but this controller only "
                                   f"supports versions {rng}")
            if self.rules == "4.0" and record.name == KRAFT_VERSION_FEATURE_NAME:
                return self
        fin = dict(self.finalized)
        if record.feature_level == 0:
            fin.pop(record.name, None)
        else:
            fin[record.name] = record.feature_level
        return replace(self, finalized=tuple(sorted(fin.items())))

    def apply(self, result: ControllerResult) -> QuorumController:
        out = self
        for r in result.records:
            out = out.replay(r)
        return out

    # ---- kafka profile
    def _update_kafka(self, request: UpdateFeaturesRequest) -> ControllerResult:
        # QuorumController.updateFeatures puts the entries in a HashMap by name: a repeated feature is no
        # error, its last entry wins.
        updates: dict[str, FeatureUpdate] = {}
        for u in request.feature_updates:
            updates[u.feature] = u
        records: list[FeatureLevelRecord] = []
        results: list[UpdatableFeatureResult] = []
        for update in updates.values():
            error = self._kafka_update_feature(update.feature, update.max_version_level, update.upgrade_type, records)
            if self.rules == "4.0" and error is not None:
                # 4.0: FeatureControlManager.updateFeatures stops at the first error and writes nothing; the
                # controller answers it at the top level, behind Kafka's prefix, with no per-feature results.
                # (Kafka iterates a HashMap; we use the request's order.)
                return _top(Errors.INVALID_UPDATE_VERSION, ALL_FAILED_PREFIX + error)
            results.append(UpdatableFeatureResult(update.feature, Errors.NONE if error is None else
                                                  Errors.INVALID_UPDATE_VERSION, error))
        if self.rules == "4.0":
            # 4.0 success: one result per feature, each NONE with the message Errors.NONE.message() ("NONE").
            response = UpdateFeaturesResponse(Errors.NONE, None, tuple(
                UpdatableFeatureResult(r.feature, Errors.NONE, "NONE") for r in results))
        else:
            # 3.9: FeatureControlManager returns a TreeMap: the results come sorted by feature name.
            response = UpdateFeaturesResponse(Errors.NONE, None, tuple(sorted(results, key=lambda r: r.feature)))
        if request.dry_run and "dry_run_writes" not in self.mutations:
            return ControllerResult(response)
        # 3.9: ControllerResult.atomicOf(records, results): the records of the updates that passed are
        # written even when another update of the same request failed.
        return ControllerResult(response, tuple(records))

    def _kafka_update_feature(self, feature: str, new: int, upgrade: UpgradeType,
                              records: list[FeatureLevelRecord]) -> str | None:
        """FeatureControlManager.updateFeature (3.9 / 4.0), in Kafka's order; the error message or None."""

        def invalid(message: str) -> str:
            return f"Invalid update version {new} for feature {feature}. {message}"

        if upgrade is UpgradeType.UNKNOWN:
            return invalid("The controller does not support the given upgrade type.")
        current = self.metadata_version if feature == FEATURE_NAME else self.finalized_level(feature)
        if new < 0:
            return invalid("A feature version cannot be less than 0.")
        reason = self._kafka_reason_not_supported(feature, new)
        if reason is not None:
            return invalid(reason)
        if new < current:
            if upgrade is UpgradeType.UPGRADE and "allow_downgrade_unchecked" not in self.mutations:
                return invalid("Can't downgrade the version of this feature without setting the "
                               "upgrade type to either safe or unsafe downgrade.")
        elif new > current and upgrade is not UpgradeType.UPGRADE:
            return invalid("Can't downgrade to a newer version.")
        if feature == FEATURE_NAME:
            return self._kafka_update_metadata_version(new, current, upgrade, records)
        records.append(FeatureLevelRecord(feature, new))
        return None

    def _kafka_reason_not_supported(self, feature: str, new: int) -> str | None:
        # FeatureControlManager.reasonNotSupported: QuorumFeatures.reasonNotLocallySupported, then every
        # registered broker (fenced or not), then, once controller registration exists (3.7-IV0), every
        # registered controller (by id, as Kafka's map iterates), and only then the voters that have not
        # registered, in quorum order.
        reason = _reason_not_supported(new, f"Local controller {self.node_id}", self.local_range(feature))
        if reason is not None:
            return reason
        if self.rules == "3.3":
            return self._kafka_3_3_reason_not_supported(feature, new)
        if "skip_broker_check" not in self.mutations:
            for b in sorted(self.brokers, key=lambda b: b.broker_id):
                reason = _reason_not_supported(new, f"Broker {b.broker_id}", b.supported(feature))
                if reason is not None:
                    return reason
        if self.catalog.controller_registration_supported(self.metadata_version) \
                and "skip_quorum_check" not in self.mutations:
            for voter, support in sorted(self.voters, key=lambda v: v[0]):
                rng = self.peer_range(voter, support, feature)
                if voter == self.node_id or rng is None:
                    continue  # the local controller was checked above; unregistered voters come last
                reason = _reason_not_supported(new, f"Controller {voter}", rng)
                if reason is not None:
                    return reason
            for voter, support in self.voters:
                if voter != self.node_id and support is None:
                    return f"controller {voter} has not registered, and may not support this feature"
        # Below 3.7-IV0 Kafka cannot see the other controllers' ranges and logs "unable to verify
        # controller support in the current MetadataVersion": only the local controller is checked.
        return None

    def _kafka_3_3_reason_not_supported(self, feature: str, new: int) -> str | None:
        """Kafka 3.3-3.6, after the local check: QuorumFeatures.reasonNotSupported asks every other quorum node, in
        quorum order, for the range its ApiVersions advertise (whatever the metadata.version: there are no controller
        registrations yet; a node not heard from is skipped), then FeatureControlManager.updateFeature checks every
        registered broker with its own wording (FeatureControlManager.java and QuorumFeatures.java at 3.3.2)."""
        if "skip_quorum_check" not in self.mutations:
            for voter, support in self.voters:
                rng = self.peer_range(voter, support, feature)
                if voter == self.node_id or rng is None:
                    continue
                reason = _reason_not_supported(new, f"Controller {voter}", rng)
                if reason is not None:
                    return reason
        if "skip_broker_check" not in self.mutations:
            for b in sorted(self.brokers, key=lambda b: b.broker_id):
                offered = dict(b.features).get(feature)
                if offered is None:
                    return f"Broker {b.broker_id} does not support this feature."
                if not offered.contains(new):
                    return (f"Broker {b.broker_id} does not support the given version. It supports "
                            f"{offered.min} to {offered.max}.")
        return None

    def _kafka_update_metadata_version(self, new: int, current: int, upgrade: UpgradeType,
                                       records: list[FeatureLevelRecord]) -> str | None:
        def invalid(message: str) -> str:
            return f"Invalid metadata.version {new}. {message}"

        def refused_downgrade(message: str) -> str:
            if kafka_release_bounds(self.kafka_release).downgrade_words:
                return f"Unsupported metadata.version downgrade from {current} to {new}. {message}"
            return invalid(message)

        if self.rules == "4.0":
            # Kafka 4.0 on: a level outside the release's enum (fromFeatureLevel fails on it) is refused naming the
            # valid range, MINIMUM_VERSION to latestTesting() (FeatureControlManager.updateMetadataVersion in the
            # kafka-metadata 4.0.0 .. 4.4.0 jars); the ZK-migration and "less than 3.3-IV0" checks are gone.
            # A level above latestTesting() that the catalog has (and a binary of the config claims) passes here, as
            # the spec and the Z3 rules have it: no Kafka 4.x binary supports a level its enum lacks.
            low = self.catalog.minimum_for(self.kafka_release)
            high = self.catalog.latest_testing_for(self.kafka_release)
            if new not in self.catalog.levels or (new < self.floor and "skip_floor_check" not in self.mutations):
                return invalid(f"Valid versions are from {low} to {high}.")
        else:
            if new not in self.catalog.levels:
                return invalid("Unknown metadata.version.")
            if self.zk_migration_in_progress:
                return invalid("Unable to modify metadata.version while a ZK migration is in progress.")
            if new < self.floor and "skip_floor_check" not in self.mutations:
                return invalid(f"Unable to set a metadata.version less than {self.catalog.label(self.floor)}")
        if new < current:
            lossless = self.catalog.is_lossless(current, new)
            if not lossless and "allow_lossy_safe_downgrade" not in self.mutations:
                if upgrade is UpgradeType.UNSAFE_DOWNGRADE:
                    return refused_downgrade("Unsafe metadata downgrade is not supported in this version.")
                if self.rules == "3.3":
                    # 3.3-3.6 say how to force it (FeatureControlManager.updateMetadataVersion at 3.3.2 .. 3.6.2,
                    # found by the Kafka oracle: docs/kafka-oracle.md); 3.7 dropped the sentence.
                    return invalid("Refusing to perform the requested downgrade because it might delete "
                                   "metadata information. Retry using UNSAFE_DOWNGRADE if you want to force the "
                                   "downgrade to proceed.")
                return refused_downgrade("Refusing to perform the requested downgrade because it might delete "
                                         "metadata information.")
        records.append(FeatureLevelRecord(FEATURE_NAME, new))
        return None

    # ---- kip profile
    def _update_kip(self, request: UpdateFeaturesRequest) -> ControllerResult:
        records: list[FeatureLevelRecord] = []
        results: list[UpdatableFeatureResult] = []
        for update in request.feature_updates:
            failure = self._kip_validate(update)
            if failure is not None:
                results.append(UpdatableFeatureResult(update.feature, failure[0], failure[1]))
                continue
            results.append(UpdatableFeatureResult(update.feature, Errors.NONE))
            if update.max_version_level != self.finalized_level(update.feature):
                records.append(FeatureLevelRecord(update.feature, max(update.max_version_level, 0)))
        if any(r.error is not Errors.NONE for r in results):
            # KIP-584's revision: if one update cannot be applied, none is. The valid ones say so.
            results = [r if r.error is not Errors.NONE else UpdatableFeatureResult(
                r.feature, Errors.FEATURE_UPDATE_FAILED, "Not applied: another update in the same request failed.")
                for r in results]
            records = []
        response = UpdateFeaturesResponse(Errors.NONE, None, tuple(results))
        if request.dry_run and "dry_run_writes" not in self.mutations:
            return ControllerResult(response)
        return ControllerResult(response, tuple(records))

    def _kip_validate(self, update: FeatureUpdate) -> tuple[Errors, str] | None:
        y = update.max_version_level
        x = self.finalized_level(update.feature)
        downgrade = update.downgrade_type
        is_mv = update.feature == FEATURE_NAME
        if not update.feature:
            return Errors.INVALID_REQUEST, "Feature name can not be empty."
        if update.upgrade_type_code is not None and update.upgrade_type_code not in (1, 2, 3):
            return Errors.INVALID_REQUEST, f"Unknown DowngradeType code {update.upgrade_type_code}."
        if is_mv and y < self.floor and "skip_floor_check" not in self.mutations:
            # KIP-778: KRaft requires metadata.version ("simply require that KRaft requires a
            # metadata.version to be set"); it cannot be deleted or set below the first version.
            return Errors.INVALID_REQUEST, (f"metadata.version can not be deleted or set below "
                                            f"{self.catalog.label(self.floor)}; asked for level {y}.")
        if is_mv and y not in self.catalog.levels and y >= 1:
            return Errors.INVALID_REQUEST, f"Unknown metadata.version level {y}."
        if y == x:
            return Errors.INVALID_REQUEST, (f"Can not {'upgrade' if downgrade is DowngradeType.NONE else 'downgrade'} "
                                            f"{update.feature} from existing level {x} to the same value.")
        if y < x and downgrade is DowngradeType.NONE and "allow_downgrade_unchecked" not in self.mutations:
            return Errors.INVALID_REQUEST, (f"Can not downgrade {update.feature} from {x} to {y} without "
                                            "DowngradeType SAFE or UNSAFE.")
        if y > x and downgrade is not DowngradeType.NONE:
            # KIP-584: "The downgrade request will fail if the new maximum version level is a value that's
            # not lower than the existing maximum finalized version level."
            return Errors.INVALID_REQUEST, (f"A downgrade of {update.feature} must lower its level: "
                                            f"{y} is not lower than {x}.")
        if y < 1:
            return None  # deletion of a non-MV feature: KIP-584 applies no range checks
        if "skip_broker_check" not in self.mutations:
            for b in sorted(self.brokers, key=lambda b: b.broker_id):
                if not b.supported(update.feature).contains(y):
                    return Errors.FEATURE_UPDATE_FAILED, (
                        f"Broker {b.broker_id} only supports {update.feature} versions "
                        f"{b.supported(update.feature)}, not {y}.")
        if is_mv:
            if not self.local_range(FEATURE_NAME).contains(y):
                # The active controller must itself read the version it commits (KIP-778 Compatibility:
                # an active controller that meets an unsupported version resigns and terminates).
                return Errors.FEATURE_UPDATE_FAILED, (
                    f"Local controller {self.node_id} only supports {FEATURE_NAME} versions "
                    f"{self.local_range(FEATURE_NAME)}, not {y}.")
            if "skip_quorum_check" not in self.mutations:
                supporting = sum(1 for voter, support in self.voters
                                 if (rng := self.peer_range(voter, support, FEATURE_NAME)) is not None
                                 and rng.contains(y))
                # KIP-778 Compatibility: "compatible with at least a majority of the quorum".
                if supporting <= len(self.voters) // 2:
                    return Errors.FEATURE_UPDATE_FAILED, (
                        f"Only {supporting} of {len(self.voters)} controller quorum voters support "
                        f"{FEATURE_NAME} {y}; a majority is required.")
            if y < x and not self.catalog.is_lossless(x, y) and downgrade is not DowngradeType.UNSAFE \
                    and "allow_lossy_safe_downgrade" not in self.mutations:
                return Errors.UNSAFE_FEATURE_DOWNGRADE, (
                    f"Downgrading {FEATURE_NAME} from {self.catalog.label(x)} to {self.catalog.label(y)} "
                    "would lose metadata; retry with DowngradeType UNSAFE to force it.")
        elif not self.local_range(update.feature).contains(y):
            return Errors.FEATURE_UPDATE_FAILED, (
                f"Local controller {self.node_id} only supports {update.feature} versions "
                f"{self.local_range(update.feature)}, not {y}.")
        return None

    # ------------------------------------------------------------------ broker registration
    def register_broker(self, request: BrokerRegistrationRequest) -> tuple[BrokerRegistrationReply, QuorumController]:
        """ClusterControlManager.registerBroker's feature check (both profiles: KIP-778 Compatibility
        says registration is refused when the broker cannot support the finalized features; Kafka's
        processRegistrationFeature is that rule). A refused broker stays fenced."""
        offered = dict(request.features or ())
        if FEATURE_NAME not in offered:
            if self.profile == "kafka" and self.rules == "4.0":
                # Kafka 4.0's registerBroker, which has no MINIMUM_KRAFT_VERSION left to assume (4.0 branch at
                # 4ae6814, read first-hand, docs/kafka-tests.md). The KIP is silent: kip keeps 3.9's assumption.
                return BrokerRegistrationReply(
                    Errors.INVALID_REGISTRATION, f"Request features do not contain '{FEATURE_NAME}'"), self
            # Brokers that send no metadata.version range "are assumed to only support the original
            # metadata.version" (ClusterControlManager, 3.9).
            offered[FEATURE_NAME] = VersionRange(self.catalog.minimum, self.catalog.minimum)
        if "register_incompatible" not in self.mutations:
            # ClusterControlManager.registerBroker's order: the request's features as sent, then the assumed
            # metadata.version, then every finalized feature (level != 0) the broker does not list, as 0-0.
            finalized = {n: lvl for n, lvl in self.finalized if lvl != 0}
            reply = registration_feature_error(offered, finalized, self.registration_rules)
            if reply is not None:
                return reply, self
        reg = BrokerRegistration(request.broker_id, tuple(sorted(offered.items())), fenced=True)
        brokers = (*(b for b in self.brokers if b.broker_id != request.broker_id), reg)
        return BrokerRegistrationReply(Errors.NONE), replace(self, brokers=tuple(sorted(brokers, key=_bid)))


def registration_feature_error(offered: Mapping[str, VersionRange], finalized: Mapping[str, int],
                               rules: str) -> BrokerRegistrationReply | None:
    """ClusterControlManager.registerBroker's feature checks (``processRegistrationFeature``) of the ranges a broker
    ``offered`` against the ``finalized`` levels (level != 0), None when they pass; ``rules`` is the release line of
    the check.

    "3.9" and "4.0" (Kafka 3.9.0 on): the request's features as sent, then every finalized feature the broker does
    not list, as 0-0; a feature the controller has not finalized is checked at its default (metadata.version 1,
    others 0). "3.3" (Kafka 3.3.0 - 3.8.x, metadata/.../controller/ClusterControlManager.java at 3.3.0..3.8.0): only
    the features the broker lists, and only those the controller has finalized ("registered with feature ... that is
    unknown to the controller" is a warning), with the older message."""
    if rules == "3.3":
        for name, rng in offered.items():
            fin = finalized.get(name)
            if fin is not None and not rng.contains(fin):
                return BrokerRegistrationReply(
                    Errors.UNSUPPORTED_VERSION,
                    f"Unable to register because the broker does not support version {fin} of {name}. It wants a "
                    f"version between {rng.min} and {rng.max}, inclusive.")
        return None
    checks = list(offered.items()) + [(n, DISABLED) for n in sorted(finalized) if n not in offered]
    for name, rng in checks:
        # processRegistrationFeature: metadata.version defaults to 1, other features to 0.
        fin = finalized.get(name, 1 if name == FEATURE_NAME else 0)
        if not rng.contains(fin):
            return BrokerRegistrationReply(
                Errors.UNSUPPORTED_VERSION,
                f"Unable to register because the broker does not support finalized version {fin} "
                f"of {name}. The broker wants a version between {rng.min} and {rng.max}, inclusive.")
    return None


def _bid(b: BrokerRegistration) -> int:
    return b.broker_id


def _top(error: Errors, message: str) -> ControllerResult:
    return ControllerResult(UpdateFeaturesResponse(error, message, ()))


def _reason_not_supported(version: int, what: str, rng: VersionRange) -> str | None:
    """QuorumFeatures.reasonNotSupported, with Kafka's wording."""
    if not rng.contains(version):
        if rng.max == 0:
            return f"{what} does not support this feature."
        return f"{what} only supports versions {rng}"
    return None


def request(feature: str, level: int, downgrade: DowngradeType = DowngradeType.NONE, *,
            dry_run: bool = False) -> UpdateFeaturesRequest:
    return UpdateFeaturesRequest((FeatureUpdate(feature, level, downgrade),), dry_run=dry_run)


# ---------------------------------------------------------------------- storage formatting / bootstrap
@dataclass(frozen=True)
class MetaProperties:
    """What ``kafka-storage format`` leaves on disk: the cluster id and, since KIP-778, the initial
    metadata.version (None for a pre-KIP-778 "preview" cluster)."""

    cluster_id: str
    metadata_version: int | None


def format_storage(cluster_id: str, catalog: Catalog, binary_default: int,
                   metadata_version: str | int | None = None, profile: str = "kip", *,
                   kafka_release: str = "3.9", unstable_feature_versions_enabled: bool = False) -> MetaProperties:
    """``kafka-storage format --metadata-version``: None takes the binary's default (KIP-778 "New
    kafka-storage argument"). Under ``kafka``, Kafka's Formatter: the version is parsed as
    ``fromVersionString`` (a level as ``fromFeatureLevel``), a ZooKeeper-era one "is too old to be
    supported", one above the release's LATEST_PRODUCTION "is not yet stable" unless unstable feature
    versions are enabled, and BootstrapMetadata refuses one below ``MINIMUM_BOOTSTRAP_VERSION``."""
    if not cluster_id:
        raise ValueError("You must specify the cluster id.")  # Formatter.run
    if profile == "kafka":
        return _format_kafka(cluster_id, catalog, binary_default, metadata_version, kafka_release,
                             unstable_feature_versions_enabled)
    level = binary_default if metadata_version is None else (
        catalog.parse(metadata_version) if isinstance(metadata_version, str) else metadata_version)
    # A catalog's first level is its minimum: "not in the catalog" is also every level below the minimum.
    if level not in catalog.levels:
        raise ValueError(f"metadata.version level {level} is not in catalog {catalog.name} "
                         f"({catalog.label(catalog.minimum)} is the minimum bootstrap version)")
    return MetaProperties(cluster_id, level)


def _format_kafka(cluster_id: str, catalog: Catalog, binary_default: int, metadata_version: str | int | None,
                  release: str, unstable: bool) -> MetaProperties:
    if metadata_version is None:
        # calculateEffectiveReleaseVersion: the default needs no stability check.
        return MetaProperties(cluster_id, binary_default)
    is_kafka = catalog.name == "kafka"
    if isinstance(metadata_version, str):
        if is_kafka:
            # From 4.2 StorageTool parses with the node's unstable.feature.versions.enable: a testing member is
            # unknown there before the stability check below is reached (kafka_2.13 4.4.0, StorageTool$).
            mv = from_version_string(metadata_version, release, unstable)
            if not mv.is_kraft_supported():
                raise ValueError(f"{FEATURE_NAME} {mv} is too old to be supported.")
            level = mv.feature_level
        else:
            level = catalog.parse(metadata_version, release)
    else:
        level = from_feature_level(metadata_version, release).feature_level if is_kafka else metadata_version
    # Only a level of the catalog gets past this: fromFeatureLevel and fromVersionString know the release's
    # own members (4.0: from MINIMUM_VERSION), and the KIP's example catalog refuses a level it lacks here.
    label = catalog.label(level)
    if not unstable and not catalog.is_production(level, release):
        raise ValueError(f"{FEATURE_NAME} {label} is not yet stable.")  # Formatter.verifyReleaseVersion
    bootstrap_metadata(level, catalog, "format command", release)  # StorageTool's BootstrapMetadata.fromVersion
    return MetaProperties(cluster_id, level)


def bootstrap_metadata(level: int, catalog: Catalog, source: str, kafka_release: str = "3.9"
                       ) -> FeatureLevelRecord:
    """``BootstrapMetadata.fromVersion(level, source)`` (metadata/.../metadata/bootstrap/BootstrapMetadata.java): the
    one record an empty log is bootstrapped with, or the constructor's refusal of a level below the catalog's floor
    (``MINIMUM_BOOTSTRAP_VERSION``, 3.3-IV0, printed by its name). Kafka says "metadata versions" up to 3.7.x and
    "metadata.version" from 3.8.0 (the "3.3" rules have the former)."""
    floor = catalog.bootstrap_floor
    if level < floor:
        noun = "metadata versions" if rules_of(kafka_release) == "3.3" else "metadata.version"
        raise ValueError(f"Bootstrap {noun} before {catalog.label(floor)} are not supported. Can't load metadata "
                         f"from {source}")
    return FeatureLevelRecord(FEATURE_NAME, level)


def default_local_supported(catalog: Catalog, kafka_release: str = "3.9", enable_unstable: bool = False
                            ) -> VersionRange:
    """QuorumFeatures.defaultFeatureMap's metadata.version range: the release's minimum (3.9:
    MINIMUM_KRAFT_VERSION; 4.0: MINIMUM_VERSION) to its LATEST_PRODUCTION, or, with unstable feature versions
    enabled, to its ``latestTesting()`` (4.0: 4.1-IV0, the last member of Kafka 4.0's enum; 3.9: the catalog's
    last level)."""
    high = (catalog.latest_testing_for(kafka_release) if enable_unstable
            else catalog.latest_production_for(kafka_release))
    return VersionRange(catalog.minimum_for(kafka_release), high)


def bootstrap_metadata_version(meta: MetaProperties, catalog: Catalog,
                               log_levels: Iterable[int] = (), *,
                               log_is_empty: bool | None = None) -> FeatureLevelRecord | None:
    """What the first active controller writes (KIP-778 "Initialization"): nothing if the log already
    holds a FeatureLevelRecord; else the level from meta.properties; a preview cluster without one
    bootstraps at level 1 (the catalog's minimum).

    ``log_is_empty`` tells a log that holds other records but no FeatureLevelRecord (False) from an empty one
    (True); None, the default, takes a log without FeatureLevelRecord as empty. Kafka's
    ActivationRecordsGenerator writes the bootstrap records only to an empty log: a non-empty log gets
    nothing, and the controller keeps its starting version (see :func:`activation_metadata_version`)."""
    levels = tuple(log_levels)
    if log_is_empty and levels:
        raise ValueError("a log that holds FeatureLevelRecords is not empty")
    if levels or log_is_empty is False:
        return None
    level = meta.metadata_version if meta.metadata_version is not None else catalog.minimum
    return FeatureLevelRecord(FEATURE_NAME, level)


def activation_metadata_version(meta: MetaProperties, catalog: Catalog, log_levels: Iterable[int] = (), *,
                                log_is_empty: bool | None = None) -> int:
    """The metadata.version the active controller runs at once activated: the last FeatureLevelRecord of the
    log; else the bootstrap record it writes to an empty log (:func:`bootstrap_metadata_version`); else,
    for a non-empty log without one, the catalog's minimum: Kafka's QuorumController starts its
    FeatureControlManager at ``MINIMUM_KRAFT_VERSION`` (3.0-IV1) and "treats the log as version 3.0-IV1"."""
    levels = tuple(log_levels)
    record = bootstrap_metadata_version(meta, catalog, levels, log_is_empty=log_is_empty)
    if record is not None:
        return record.feature_level
    return levels[-1] if levels else catalog.minimum



def feature_snapshot_records(finalized: Iterable[tuple[str, int]], metadata_version: int, floor: int
                             ) -> tuple[FeatureLevelRecord, ...]:
    """The FeatureLevelRecords a controller snapshot holds (Kafka 3.3's FeatureControlManager.FeatureControlIterator,
    metadata/src/main/java/org/apache/kafka/controller/FeatureControlManager.java at 3.3.2): metadata.version first,
    unless it is below ``floor`` (MINIMUM_BOOTSTRAP_VERSION, the first version with FeatureLevelRecord: an older
    one is implied by the log), then every other finalized feature. A snapshot at such an old version with no other
    feature holds no feature record at all (KAFKA-14316: 3.3.0 and 3.3.1 threw NoSuchElementException there)."""
    head = (FeatureLevelRecord(FEATURE_NAME, metadata_version),) if metadata_version >= floor else ()
    return head + tuple(FeatureLevelRecord(n, lvl) for n, lvl in finalized if n != FEATURE_NAME)
