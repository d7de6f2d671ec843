"""KIP-584 at the API level: version ranges, the ``/features`` node, ``UpdateFeatures`` and its rules.

Names follow the KIP and Kafka's ZooKeeper-mode code (``SupportedVersionRange``,
``FinalizedVersionRange``, ``FeatureZNode``, ``KafkaController.processFeatureUpdates``). Everything
here is immutable: the controller returns its next self instead of mutating.

Two semantics profiles (``profile``): ``kip`` follows the KIP text; ``kafka`` follows what Apache Kafka
2.7-3.x shipped in ZooKeeper mode (``core/.../controller/KafkaController.scala`` ``validateFeatureUpdate``
and ``newFinalizedVersionRangeOrIncompatibilityError``, ``core/.../server/BrokerFeatures.scala``).
Two update semantics (``semantics``): ``partial`` (KIP-584 as first written: "The API is not
transactional") and ``atomic`` (the revision: "if a single [update] can not be done, none of feature
updates are done").
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

Profile = str  # "kip" | "kafka"
Semantics = str  # "partial" | "atomic"


class Errors(enum.IntEnum):
    """Kafka's error codes for UpdateFeatures (``clients/.../protocol/Errors.java``)."""

    NONE = 0
    CLUSTER_AUTHORIZATION_FAILED = 31
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    FEATURE_UPDATE_FAILED = 96


class FeatureZNodeStatus(enum.Enum):
    """KIP-584 "Feature ZK node status": Disabled (0) / Enabled (1)."""

    DISABLED = 0
    ENABLED = 1


@dataclass(frozen=True, order=True)
class SupportedVersionRange:
    """What a broker binary supports for one feature: ``1 <= min_version <= max_version``."""

    min_version: int
    max_version: int

    def __post_init__(self) -> None:
        if not 1 <= self.min_version <= self.max_version:
            raise ValueError(f"invalid supported range [{self.min_version}, {self.max_version}]: "
                             "need 1 <= min_version <= max_version")

    def __contains__(self, level: object) -> bool:
        return isinstance(level, int) and self.min_version <= level <= self.max_version

    def __str__(self) -> str:
        return f"[{self.min_version}, {self.max_version}]"


@dataclass(frozen=True, order=True)
class FinalizedVersionRange:
    """Cluster-wide finalized levels of one feature: ``1 <= min_version_level <= max_version_level``."""

    min_version_level: int
    max_version_level: int

    # No check in the constructor: a state holding a bad range must be representable, or the property
    # "1 <= min <= max" could never be seen to fail. Inputs are checked with ``of``.
    @staticmethod
    def of(min_version_level: int, max_version_level: int) -> FinalizedVersionRange:
        if not 1 <= min_version_level <= max_version_level:
            raise ValueError(f"invalid finalized range [{min_version_level}, {max_version_level}]")
        return FinalizedVersionRange(min_version_level, max_version_level)

    def __str__(self) -> str:
        return f"[{self.min_version_level}, {self.max_version_level}]"


# A broker's supported features and the finalized features are kept as sorted tuples of pairs so that
# they are hashable and canonical (states are immutable).
SupportedFeatures = tuple[tuple[str, SupportedVersionRange], ...]
FinalizedFeatures = tuple[tuple[str, FinalizedVersionRange], ...]


def supported_features(items: Mapping[str, tuple[int, int]] | Iterable[tuple[str, tuple[int, int]]]
                       ) -> SupportedFeatures:
    pairs = items.items() if isinstance(items, Mapping) else items
    return tuple(sorted((name, SupportedVersionRange(lo, hi)) for name, (lo, hi) in pairs))


def finalized_features(items: Mapping[str, tuple[int, int]]) -> FinalizedFeatures:
    return tuple(sorted((name, FinalizedVersionRange.of(lo, hi)) for name, (lo, hi) in items.items()))


def lookup(features: tuple[tuple[str, object], ...], name: str) -> object | None:
    for n, r in features:
        if n == name:
            return r
    return None


@dataclass(frozen=True)
class FeatureZNode:
    """The ``/features`` ZooKeeper node.

    ``epoch`` is the ZooKeeper version of the node, which the KIP exposes as ``FinalizedFeaturesEpoch``
    and which rises by one on every write ("Upon successful write, ZK should automatically increment
    the version of the node by 1"). The JSON's own ``version`` key is the schema version, always 0.
    """

    status: FeatureZNodeStatus
    features: FinalizedFeatures
    epoch: int

    def get(self, name: str) -> FinalizedVersionRange | None:
        r = lookup(self.features, name)
        return r if isinstance(r, FinalizedVersionRange) else None

    def write(self, status: FeatureZNodeStatus, features: FinalizedFeatures) -> FeatureZNode:
        return FeatureZNode(status, features, self.epoch + 1)


def incompatible_features(supported: SupportedFeatures, finalized: FinalizedFeatures,
                          profile: Profile) -> list[str]:
    """The finalized features a broker with ``supported`` cannot run with.

    ``kip``: the finalized **max** level must lie in the broker's supported range (section Validations:
    "Y falls in the [min_version, max_version] range advertised by each live broker"; Broker protections:
    "the logic for the validations will be exactly the same"). ``kafka``: the whole finalized range must
    lie inside the supported range (``FinalizedVersionRange.isIncompatibleWith``: supported.min > min or
    supported.max < max). A feature the broker does not know is incompatible in both.
    """
    bad = []
    for name, rng in finalized:
        sup = lookup(supported, name)
        if not isinstance(sup, SupportedVersionRange):
            bad.append(name)
        elif profile == "kafka":
            if sup.min_version > rng.min_version_level or sup.max_version < rng.max_version_level:
                bad.append(name)
        elif rng.max_version_level not in sup:
            bad.append(name)
    return bad


def is_compatible(supported: SupportedFeatures, node: FeatureZNode | None, profile: Profile) -> bool:
    """Whether a broker may run against the node (a disabled or absent node constrains nothing)."""
    if node is None or node.status is FeatureZNodeStatus.DISABLED:
        return True
    return not incompatible_features(supported, node.features, profile)


@dataclass(frozen=True)
class FeatureUpdate:
    """One ``FeatureUpdateKey``: a level < 1 asks for deletion."""

    feature: str
    max_version_level: int
    allow_downgrade: bool = False

    @property
    def is_delete(self) -> bool:
        return self.max_version_level < 1


@dataclass(frozen=True)
class UpdateFeaturesRequest:
    feature_updates: tuple[FeatureUpdate, ...]
    timeout_ms: int = 60000
    # The kafka-features tool's --dry-run: validate and report, write nothing. In Kafka this became the
    # request's ValidateOnly field (KIP-778); here it is part of the request so that the controller's
    # own validation answers the dry run.
    dry_run: bool = False


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


@dataclass(frozen=True)
class FeatureController:
    """The controller's view: the node it last wrote, the live brokers' advertisements, its own binary.

    ``update_features`` applies every rule of KIP-584 "Validations" and "Guarantees" and returns the
    response with the controller after the request (unchanged when nothing was written).
    """

    node: FeatureZNode | None
    live_brokers: tuple[tuple[int, SupportedFeatures], ...]  # broker id -> advertised features
    own_supported: SupportedFeatures  # the controller broker's binary (Kafka's brokerFeatures)
    versioning_enabled: bool = True  # IBP >= migration_ibp_version (KIP "Deployment", phase 1)
    is_active: bool = True
    profile: Profile = "kip"
    semantics: Semantics = "partial"
    mutations: frozenset[str] = field(default_factory=frozenset)  # named bugs, for broken variants

    # -------------------------------------------------------------------- the API
    def update_features(self, request: UpdateFeaturesRequest, principal_can_alter: bool = True
                        ) -> tuple[UpdateFeaturesResponse, FeatureController]:
        top = self._top_level_error(request, principal_can_alter)
        if top is not None:
            return UpdateFeaturesResponse(top[0], top[1], ()), self
        assert self.node is not None
        existing = dict(self.node.features)
        target = dict(existing)
        results: list[UpdatableFeatureResult] = []
        for update in request.feature_updates:
            outcome = self._validate(update, existing.get(update.feature))
            if isinstance(outcome, UpdatableFeatureResult):
                results.append(outcome)
                continue
            if outcome is None:
                target.pop(update.feature, None)
            else:
                target[update.feature] = outcome
            results.append(UpdatableFeatureResult(update.feature, Errors.NONE))
        failed = any(r.error is not Errors.NONE for r in results)
        if failed and self.semantics == "atomic" and "apply_partially_when_atomic" not in self.mutations:
            # The revision: if one update cannot be applied, none is. The updates that were valid on
            # their own are reported as not applied, so that "success means applied" still holds.
            results = [r if r.error is not Errors.NONE else UpdatableFeatureResult(
                r.feature, Errors.FEATURE_UPDATE_FAILED,
                "Not applied: another update in the same request failed.") for r in results]
            target = existing
        response = UpdateFeaturesResponse(Errors.NONE, None, tuple(results))
        if request.dry_run or target == existing:
            if "bump_epoch_on_noop" in self.mutations and not request.dry_run:
                return response, self._with_node(self.node.write(self.node.status, self.node.features))
            return response, self
        new_node = self.node.write(FeatureZNodeStatus.ENABLED, tuple(sorted(target.items())))
        return response, self._with_node(new_node)

    # -------------------------------------------------------------------- rules
    def _top_level_error(self, request: UpdateFeaturesRequest, can_alter: bool
                         ) -> tuple[Errors, str] | None:
        # Kafka checks authorization first (KafkaApis.handleUpdateFeatures), then whether versioning is
        # enabled, then whether this broker is the active controller (KafkaController.processFeatureUpdates).
        # The KIP lists the two top-level errors without an order; the kip profile uses Kafka's order.
        if not can_alter:
            return Errors.CLUSTER_AUTHORIZATION_FAILED, "UpdateFeatures requires ALTER on the CLUSTER resource."
        if not self.versioning_enabled or self.node is None or self.node.status is FeatureZNodeStatus.DISABLED:
            return Errors.INVALID_REQUEST, "Feature versioning system is disabled."
        if not self.is_active:
            return Errors.NOT_CONTROLLER, "This is not the correct controller for this cluster."
        names = [u.feature for u in request.feature_updates]
        if len(names) != len(set(names)):
            # FeatureUpdates is keyed by feature name (mapKey in the schema): one update per feature.
            return Errors.INVALID_REQUEST, "A feature may appear only once in a request."
        return None

    def _fail(self, update: FeatureUpdate, error: Errors, message: str) -> UpdatableFeatureResult:
        return UpdatableFeatureResult(update.feature, error, message)

    def _validate(self, update: FeatureUpdate, existing: FinalizedVersionRange | None
                  ) -> FinalizedVersionRange | UpdatableFeatureResult | None:
        """The new range (None to delete) or the failure, for one update (KIP "Validations")."""
        y = update.max_version_level
        if not update.feature:
            return self._fail(update, Errors.INVALID_REQUEST, "Feature name can not be empty.")
        if update.is_delete:
            if not update.allow_downgrade and "allow_downgrade_unchecked" not in self.mutations:
                return self._fail(update, Errors.INVALID_REQUEST,
                                  f"Can not provide maxVersionLevel: {y} less than 1 without setting the "
                                  "allowDowngrade flag to true in the request.")
            if existing is None:
                # KIP silent; Kafka: "Can not delete non-existing finalized feature."
                return self._fail(update, Errors.INVALID_REQUEST, "Can not delete non-existing finalized feature.")
            return None  # deletion "without any guarding checks on feature versions"
        if existing is not None:
            x = existing.max_version_level
            if y == x:
                return self._fail(update, Errors.INVALID_REQUEST,
                                  f"Can not {'downgrade' if update.allow_downgrade else 'upgrade'} a finalized "
                                  f"feature from existing maxVersionLevel:{x} to the same value.")
            if y < x and not update.allow_downgrade and "allow_downgrade_unchecked" not in self.mutations:
                return self._fail(update, Errors.INVALID_REQUEST,
                                  f"Can not downgrade finalized feature from existing maxVersionLevel:{x} to "
                                  f"provided maxVersionLevel:{y} without setting the allowDowngrade flag in "
                                  "the request.")
            if y > x and update.allow_downgrade and self.profile == "kafka":
                # Kafka only; the KIP's upgrade case does not look at the flag.
                return self._fail(update, Errors.INVALID_REQUEST,
                                  f"When the allowDowngrade flag set in the request, the provided "
                                  f"maxVersionLevel:{y} can not be greater than existing maxVersionLevel:{x}.")
            if y < existing.min_version_level:
                # Kafka: INVALID_REQUEST. KIP: the node's rule min <= max makes it impossible to apply.
                error = Errors.INVALID_REQUEST if self.profile == "kafka" else Errors.FEATURE_UPDATE_FAILED
                return self._fail(update, error,
                                  f"Can not downgrade finalized feature to maxVersionLevel:{y} because it's "
                                  f"lower than the existing minVersionLevel:{existing.min_version_level}.")
        return self._new_range(update, existing)

    def _new_range(self, update: FeatureUpdate, existing: FinalizedVersionRange | None
                   ) -> FinalizedVersionRange | UpdatableFeatureResult:
        y = update.max_version_level
        # KIP: an incompatibility "can not be applied" -> FEATURE_UPDATE_FAILED. Kafka 2.8 reports every
        # validation failure, incompatibility included, as INVALID_REQUEST and keeps FEATURE_UPDATE_FAILED
        # for a failed ZooKeeper write.
        incompatible = Errors.INVALID_REQUEST if self.profile == "kafka" else Errors.FEATURE_UPDATE_FAILED
        if self.profile == "kafka":
            own = lookup(self.own_supported, update.feature)
            if not isinstance(own, SupportedVersionRange):
                return self._fail(update, Errors.INVALID_REQUEST, "Could not apply finalized feature update "
                                  "because the provided feature is not supported.")
            if y < own.min_version:
                return self._fail(update, Errors.INVALID_REQUEST, "Could not apply finalized feature update "
                                  f"because the provided maxVersionLevel:{y} is lower than the supported "
                                  f"minVersion:{own.min_version}.")
            # Kafka always rewrites the minimum as the controller binary's supported minimum.
            new = FinalizedVersionRange(own.min_version, y)
        else:
            # The KIP never changes the minimum through this API ("Changes to cluster-wide finalized
            # minimum feature version level, can not be carried out using this API"); a new feature
            # starts at minimum level 1 (the lowest valid level).
            new = FinalizedVersionRange(existing.min_version_level if existing else 1, y)
        if "skip_range_check" in self.mutations:
            return new
        probe = ((update.feature, new),)
        for broker_id, supported in self.live_brokers:
            if incompatible_features(supported, probe, self.profile):
                return self._fail(update, incompatible,
                                  f"Could not apply finalized feature update because broker {broker_id} has "
                                  "incompatible versions for the feature.")
        return new

    # -------------------------------------------------------------------- controller-side events
    def _with_node(self, node: FeatureZNode | None) -> FeatureController:
        return FeatureController(node, self.live_brokers, self.own_supported, self.versioning_enabled,
                                 self.is_active, self.profile, self.semantics, self.mutations)


def setup_feature_versioning(node: FeatureZNode | None, versioning_enabled: bool,
                             own_supported: SupportedFeatures) -> FeatureZNode | None:
    """What a newly elected controller writes to ``/features`` (KIP "Feature ZK node status").

    Returns the new node, or ``None`` when the existing node is left as it is. Same in both profiles
    (Kafka's ``enableFeatureVersioning`` / ``disableFeatureVersioning`` implement the KIP's cases):
    new cluster -> ENABLED with every supported feature finalized; old IBP -> DISABLED and empty;
    IBP raised over a disabled node -> ENABLED and empty (the operator finalizes later).
    """
    if versioning_enabled:
        if node is None:
            default = tuple((n, FinalizedVersionRange(r.min_version, r.max_version)) for n, r in own_supported)
            return FeatureZNode(FeatureZNodeStatus.ENABLED, default, 0)
        if node.status is FeatureZNodeStatus.DISABLED:
            return node.write(FeatureZNodeStatus.ENABLED, ())
        return None
    if node is None:
        return FeatureZNode(FeatureZNodeStatus.DISABLED, (), 0)
    if node.status is FeatureZNodeStatus.ENABLED or node.features:
        return node.write(FeatureZNodeStatus.DISABLED, ())
    return None


def deprecate_min_levels(node: FeatureZNode, live_supported: Iterable[SupportedFeatures]
                         ) -> FeatureZNode | None:
    """KIP "Feature version deprecation": raise each finalized minimum to the highest supported minimum.

    KIP only: Apache Kafka never shipped this step (ZooKeeper-mode ``KafkaController`` in 2.7-3.x has no
    deprecation; KIP-778 later removed the finalized minimum altogether). Returns ``None`` when nothing
    changes. A minimum is never raised above the finalized maximum.
    """
    lives = list(live_supported)
    changed = False
    out = []
    for name, rng in node.features:
        mins = [r.min_version for s in lives if isinstance(r := lookup(s, name), SupportedVersionRange)]
        highest = max(mins, default=rng.min_version_level)
        new_min = min(max(highest, rng.min_version_level), rng.max_version_level)
        if new_min != rng.min_version_level:
            changed = True
            out.append((name, FinalizedVersionRange(new_min, rng.max_version_level)))
        else:
            out.append((name, rng))
    return node.write(node.status, tuple(out)) if changed else None
