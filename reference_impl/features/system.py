"""KIP-584 at the system level: brokers, the ZooKeeper ``/features`` node, the controller, a client.

Every step is one action of :mod:`reference_impl.features.api` or one event the KIP describes:

* ``ElectController(broker)``: a running broker becomes controller, applies the "Feature ZK node status"
  rules and rebuilds its live-broker set from the brokers that are compatible.
* ``StartBroker(broker)``: startup validation against ``/features`` ("Broker protections", point 1);
  an incompatible broker exits, a compatible one registers (its BrokerIdZnode appears) and the
  registration event is queued on the controller's event queue.
* ``ProcessBrokerRegistration(broker)``: the controller takes the queued registration; an incompatible
  broker is skipped, never added to the live set and so never sent metadata ("Incompatible broker
  lifetime race condition": the update and the registration share the ControllerEventThread).
* ``UpdateFeatures(updates, dry_run, result)``: the operator's request, on the same event queue.
* ``DeliverFeaturesNotification(broker)``: a ZooKeeper watch fires on one broker, which reads the latest
  node and caches it, or shuts down on an incompatibility ("Broker protections", point 2).
* ``ReadApiVersions(broker)``: a client reads ApiVersions from one broker and keeps the highest epoch
  ("the epoch can be used to ignore older features metadata ... after newer features metadata was
  returned once").
* ``RestartBroker(broker, release)``: a bounce onto a release (upgrade, downgrade or the same binary).
* ``DeprecateMinLevel()``: the controller raises finalized minimum levels (KIP "Feature version
  deprecation"; ``kip`` profile only: Kafka never shipped it).
* ``SetIbp(enabled)``: the operator rolls the IBP across ``migration_ibp_version``; the controller
  resigns so that the next one applies the status rules (KIP "Deployment", phase 1).

Bounds (config): node epoch, restarts, IBP changes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from properties.features import PROPERTIES
from reference_impl.features.api import (
    FeatureController,
    FeatureUpdate,
    FeatureZNode,
    FeatureZNodeStatus,
    FinalizedFeatures,
    SupportedFeatures,
    UpdateFeaturesRequest,
    deprecate_min_levels,
    is_compatible,
    setup_feature_versioning,
)
from reference_impl.features.config import FeaturesConfig
from reference_impl.features.symmetry import symmetry_key
from rollcheck.system import DataclassSystem
from rollcheck.traces import Record
from rollcheck.transition import Action, AnyProperty


class BrokerStatus(enum.Enum):
    STOPPED = 0
    RUNNING = 1
    EXITED = 2  # shut down on a feature incompatibility (at startup or on a watch notification)


@dataclass(frozen=True)
class Broker:
    release: str
    status: BrokerStatus
    cache_epoch: int  # FinalizedFeaturesEpoch it serves in ApiVersions; -1 when it has none
    cache: FinalizedFeatures
    registered: bool  # in the controller's live-broker set (gets metadata, counts in validations)
    notified: bool  # has read the latest /features write (False: a watch notification is pending)


@dataclass(frozen=True)
class Client:
    epoch: int
    features: FinalizedFeatures


@dataclass(frozen=True)
class FeaturesState:
    node: FeatureZNode | None  # /features in ZooKeeper (None: absent)
    ibp_enabled: bool  # inter.broker.protocol.version >= migration_ibp_version
    controller: int  # broker id of the active controller, -1 when none
    brokers: tuple[Broker, ...]
    registration_queue: tuple[int, ...]  # broker registrations waiting on the controller's event queue
    client: Client
    restarts: int
    ibp_changes: int


# Module-level aliases: cheaper than the class attribute lookups in the hot paths.
_RUNNING = BrokerStatus.RUNNING
_STOPPED = BrokerStatus.STOPPED
_EXITED = BrokerStatus.EXITED


class FeaturesSystem(DataclassSystem):
    name = "features"
    state_type = FeaturesState

    def __init__(self, config: FeaturesConfig) -> None:
        super().__init__(config)
        self.releases = {r.name: r.supported() for r in config.releases}
        self.requests = config.operator_requests()
        self._outcomes: dict[tuple[object, ...], list[tuple[Action, FeatureZNode | None]]] = {}
        # (release, finalized features) -> is_compatible against an ENABLED node: the same few pairs recur
        # in most states (a memo, like _outcomes).
        self._compat: dict[tuple[str, FinalizedFeatures], bool] = {}
        # Labels, restarted brokers and mutation flags are fixed per config: built once, not per successor.
        n = config.brokers
        self._elect_labels = tuple(Action.of("ElectController", broker=i) for i in range(n))
        self._start_labels = tuple(Action.of("StartBroker", broker=i) for i in range(n))
        self._registration_labels = tuple(Action.of("ProcessBrokerRegistration", broker=i) for i in range(n))
        self._notify_labels = tuple(Action.of("DeliverFeaturesNotification", broker=i) for i in range(n))
        self._read_labels = tuple(Action.of("ReadApiVersions", broker=i) for i in range(n))
        self._restart_labels = tuple(
            tuple((Action.of("RestartBroker", broker=i, release=r.name), Broker(r.name, _STOPPED, -1, (), False, True))
                  for r in config.releases)
            for i in range(n))
        self._deprecate_label = Action.of("DeprecateMinLevel")
        self._set_ibp_labels = {e: Action.of("SetIbp", enabled=e) for e in (False, True)}
        self._deprecation_on = config.deprecation and config.profile == "kip"
        mutations = config.mutations
        self._register_incompatible = "register_incompatible" in mutations
        self._skip_startup_validation = "skip_startup_validation" in mutations
        self._ignore_incompatible_notification = "ignore_incompatible_notification" in mutations
        self._client_adopts_stale = "client_adopts_stale" in mutations

    def __getstate__(self) -> dict[str, object]:
        d = super().__getstate__()
        d["_outcomes"] = {}  # a memo: rebuilt wherever the system is unpickled
        d["_compat"] = {}
        return d

    # ------------------------------------------------------------------ interface
    def initial_states(self) -> Iterable[FeaturesState]:
        """A cluster on ``initial_release`` before its first controller: a new cluster (IBP at or above
        migration_ibp_version) and/or an upgraded old one (IBP below), as the config asks."""
        c = self.config
        broker = Broker(c.initial_release, BrokerStatus.RUNNING, -1, (), False, True)
        return [FeaturesState(None, ibp, -1, (broker,) * c.brokers, (), Client(-1, ()), 0, 0)
                for ibp in c.initial_ibp]

    def properties(self) -> Sequence[AnyProperty]:
        return PROPERTIES.bind(self)

    def view(self, s: FeaturesState) -> dict[str, object]:
        node = None if s.node is None else Record(
            status=s.node.status.name, epoch=s.node.epoch,
            features={n: (r.min_version_level, r.max_version_level) for n, r in s.node.features})
        return {
            "node": node if node is not None else Record(status="ABSENT", epoch=-1, features={}),
            "ibp_enabled": s.ibp_enabled,
            "controller": s.controller,
            "brokers": tuple(Record(release=b.release, status=b.status.name, cache_epoch=b.cache_epoch,
                                    cache={n: (r.min_version_level, r.max_version_level) for n, r in b.cache},
                                    registered=b.registered, notified=b.notified) for b in s.brokers),
            "registration_queue": s.registration_queue,
            "client": Record(epoch=s.client.epoch,
                             features={n: (r.min_version_level, r.max_version_level)
                                       for n, r in s.client.features}),
            "restarts": s.restarts,
            "ibp_changes": s.ibp_changes,
        }

    def successors(self, s: FeaturesState) -> list[tuple[Action, FeaturesState]]:
        out: list[tuple[Action, FeaturesState]] = []
        append = out.append
        c = self.config
        brokers = s.brokers
        node = s.node
        controller = s.controller
        running = [i for i, b in enumerate(brokers) if b.status is _RUNNING]
        if controller < 0:
            for i in running:
                append((self._elect_labels[i], self.elect_controller(s, i)))
        for i, b in enumerate(brokers):
            if b.status is _STOPPED:
                append((self._start_labels[i], self.start_broker(s, i)))
        if s.registration_queue and controller >= 0:
            append((self._registration_labels[s.registration_queue[0]], self.process_registration(s)))
        writable = controller >= 0 and node is not None and node.epoch < c.max_epoch
        if writable:
            for label, after in self.operator_outcomes(s):
                append((label, s if after is node or after == node else self._with_node(s, after)))
        for i in running:
            if not brokers[i].notified:
                append((self._notify_labels[i], self.deliver_notification(s, i)))
        if c.client:
            for i in running:
                if brokers[i].cache_epoch >= 0:
                    append((self._read_labels[i], self.read_api_versions(s, i)))
        if s.restarts < c.max_restarts:
            for i, b in enumerate(brokers):
                if b.status is not _STOPPED:
                    # What restart_broker does, with the queue and controller worked out once per broker.
                    queue = tuple(q for q in s.registration_queue if q != i)
                    ctl = -1 if controller == i else controller
                    if ctl < 0:
                        queue = ()  # the next controller rebuilds its live set from ZooKeeper
                    restarts = s.restarts + 1
                    for label, nb in self._restart_labels[i]:
                        append((label, FeaturesState(node, s.ibp_enabled, ctl, _put(brokers, i, nb), queue,
                                                     s.client, restarts, s.ibp_changes)))
        if self._deprecation_on and writable and s.ibp_enabled:
            nxt = self.deprecate(s)
            if nxt is not None:
                append((self._deprecate_label, nxt))
        if s.ibp_changes < c.max_ibp_changes:
            append((self._set_ibp_labels[not s.ibp_enabled], self.set_ibp(s)))
        return out

    # ------------------------------------------------------------------ helpers
    def supported(self, b: Broker) -> SupportedFeatures:
        return self.releases[b.release]

    def compatible(self, s: FeaturesState, b: Broker, node: FeatureZNode | None) -> bool:
        if not s.ibp_enabled:  # "each broker will validate that its IBP ... before applying validations"
            return True
        if node is None or node.status is FeatureZNodeStatus.DISABLED:
            return True  # is_compatible: an absent or disabled node constrains nothing
        # is_compatible reads only the release's supported ranges and the node's features (not its epoch).
        key = (b.release, node.features)
        hit = self._compat.get(key)
        if hit is None:
            hit = self._compat[key] = is_compatible(self.releases[b.release], node, self.config.profile)
        return hit

    def _written(self, s: FeaturesState, node: FeatureZNode | None) -> tuple[Broker, ...]:
        """After a write to /features every running broker has a watch notification pending."""
        if node is s.node or node == s.node:
            return s.brokers
        # A broker that already has a notification pending is kept as it is (the same value).
        return tuple(Broker(b.release, b.status, b.cache_epoch, b.cache, b.registered, False)
                     if b.status is _RUNNING and b.notified else b for b in s.brokers)

    def _with_node(self, s: FeaturesState, node: FeatureZNode | None) -> FeaturesState:
        """``replace(s, node=node, brokers=self._written(s, node))``, by the (cheaper) constructor."""
        return FeaturesState(node, s.ibp_enabled, s.controller, self._written(s, node), s.registration_queue,
                             s.client, s.restarts, s.ibp_changes)

    def controller_api(self, s: FeaturesState) -> FeatureController:
        live = tuple((i, self.supported(b)) for i, b in enumerate(s.brokers) if b.registered)
        own = self.supported(s.brokers[s.controller])
        return FeatureController(s.node, live, own, s.ibp_enabled, True, self.config.profile,
                                 self.config.semantics, self.config.mutations)

    # ------------------------------------------------------------------ actions
    def elect_controller(self, s: FeaturesState, i: int) -> FeaturesState:
        new_node = setup_feature_versioning(s.node, s.ibp_enabled, self.supported(s.brokers[i]))
        node = s.node if new_node is None else new_node
        # The new controller reads every BrokerIdZnode and keeps the compatible brokers as live.
        brokers = []
        for b in self._written(s, node):
            registered = b.status is _RUNNING and self._admits(s, b, node)
            brokers.append(b if b.registered == registered else
                           Broker(b.release, b.status, b.cache_epoch, b.cache, registered, b.notified))
        return FeaturesState(node, s.ibp_enabled, i, tuple(brokers), (), s.client, s.restarts, s.ibp_changes)

    def _admits(self, s: FeaturesState, b: Broker, node: FeatureZNode | None) -> bool:
        if self._register_incompatible:
            return True
        return self.compatible(s, b, node)

    def start_broker(self, s: FeaturesState, i: int) -> FeaturesState:
        b = s.brokers[i]
        if not self.compatible(s, b, s.node) and not self._skip_startup_validation:
            nb = Broker(b.release, _EXITED, b.cache_epoch, b.cache, False, True)
            return FeaturesState(s.node, s.ibp_enabled, s.controller, _put(s.brokers, i, nb), s.registration_queue,
                                 s.client, s.restarts, s.ibp_changes)
        node = s.node
        cache, epoch = _cached(node, s.ibp_enabled)
        nb = Broker(b.release, _RUNNING, epoch, cache, False, True)
        queue = (*s.registration_queue, i) if s.controller >= 0 else s.registration_queue
        return FeaturesState(node, s.ibp_enabled, s.controller, _put(s.brokers, i, nb), queue, s.client, s.restarts,
                             s.ibp_changes)

    def process_registration(self, s: FeaturesState) -> FeaturesState:
        head, rest = s.registration_queue[0], s.registration_queue[1:]
        b = s.brokers[head]
        admit = b.status is _RUNNING and self._admits(s, b, s.node)
        nb = Broker(b.release, b.status, b.cache_epoch, b.cache, admit, b.notified)
        return FeaturesState(s.node, s.ibp_enabled, s.controller, _put(s.brokers, head, nb), rest, s.client,
                             s.restarts, s.ibp_changes)

    def operator_outcomes(self, s: FeaturesState) -> list[tuple[Action, FeatureZNode | None]]:
        """Every operator request against this controller, with the node after it.

        The outcome depends only on the node, the live brokers' releases, the controller's release and
        the IBP, which many states share: it is computed once per such key (a per-system memo).
        """
        live = tuple(b.release for b in s.brokers if b.registered)
        key = (s.node, live, s.brokers[s.controller].release, s.ibp_enabled)
        hit = self._outcomes.get(key)
        if hit is None:
            api = self.controller_api(s)
            hit = []
            for req in self.requests:
                response, after = api.update_features(req)
                label = Action.of(
                    "UpdateFeatures",
                    updates=tuple((u.feature, u.max_version_level, u.allow_downgrade) for u in req.feature_updates),
                    dry_run=req.dry_run,
                    result=(response.error.name, *(r.error.name for r in response.results)),
                )
                hit.append((label, after.node))
            self._outcomes[key] = hit
        return hit

    def update_features(self, s: FeaturesState, req: UpdateFeaturesRequest) -> tuple[Action, FeaturesState]:
        """One operator request (the API-level call the system's UpdateFeatures steps are made of)."""
        i = self.requests.index(req)
        label, node = self.operator_outcomes(s)[i]
        return label, (s if node == s.node else self._with_node(s, node))

    def deliver_notification(self, s: FeaturesState, i: int) -> FeaturesState:
        b = s.brokers[i]
        if not self.compatible(s, b, s.node) and not self._ignore_incompatible_notification:
            nb = Broker(b.release, _EXITED, b.cache_epoch, b.cache, False, True)
            # A controller that exits gives up the controllership (its ZooKeeper session, and with it the
            # ephemeral /controller znode, ends with the process: Kafka's FinalizedFeatureChangeListener
            # calls Exit.exit); the next controller rebuilds its live set from ZooKeeper, as after a restart.
            ctl = -1 if s.controller == i else s.controller
            queue = () if ctl < 0 else tuple(q for q in s.registration_queue if q != i)
            return FeaturesState(s.node, s.ibp_enabled, ctl, _put(s.brokers, i, nb), queue, s.client,
                                 s.restarts, s.ibp_changes)
        cache, epoch = _cached(s.node, s.ibp_enabled)
        nb = Broker(b.release, b.status, epoch, cache, b.registered, True)
        return FeaturesState(s.node, s.ibp_enabled, s.controller, _put(s.brokers, i, nb), s.registration_queue,
                             s.client, s.restarts, s.ibp_changes)

    def read_api_versions(self, s: FeaturesState, i: int) -> FeaturesState:
        b = s.brokers[i]
        if b.cache_epoch > s.client.epoch or self._client_adopts_stale:
            return FeaturesState(s.node, s.ibp_enabled, s.controller, s.brokers, s.registration_queue,
                                 Client(b.cache_epoch, b.cache), s.restarts, s.ibp_changes)
        return s

    def restart_broker(self, s: FeaturesState, i: int, release: str) -> FeaturesState:
        # successors() inlines this (with the restarted brokers built in __init__): keep the two alike.
        nb = Broker(release, BrokerStatus.STOPPED, -1, (), False, True)
        queue = tuple(q for q in s.registration_queue if q != i)
        controller = -1 if s.controller == i else s.controller
        if controller < 0:
            queue = ()  # the next controller rebuilds its live set from ZooKeeper
        return replace(s, brokers=_put(s.brokers, i, nb), controller=controller, registration_queue=queue,
                       restarts=s.restarts + 1)

    def deprecate(self, s: FeaturesState) -> FeaturesState | None:
        assert s.node is not None
        if s.node.status is not FeatureZNodeStatus.ENABLED:
            return None
        new = deprecate_min_levels(s.node, [self.supported(b) for b in s.brokers if b.registered])
        if new is None:
            return None
        return self._with_node(s, new)

    def set_ibp(self, s: FeaturesState) -> FeaturesState:
        # The IBP roll ends with a controller election under the new IBP (the status rules run there).
        brokers = tuple(Broker(b.release, b.status, b.cache_epoch, b.cache, False, b.notified) if b.registered else b
                        for b in s.brokers)
        return FeaturesState(s.node, not s.ibp_enabled, -1, brokers, (), s.client, s.restarts, s.ibp_changes + 1)

    # ------------------------------------------------------------------ symmetry (issue #17)
    def symmetry_key(self, s: FeaturesState) -> object:
        """A hashable key equal for two states iff one is the other with interchangeable brokers
        renamed (the canonical representative of the orbit); see :mod:`reference_impl.features.symmetry`."""
        return self.cached_symmetry_key(symmetry_key, s)


def _put(brokers: tuple[Broker, ...], i: int, b: Broker) -> tuple[Broker, ...]:
    return (*brokers[:i], b, *brokers[i + 1:])


def _cached(node: FeatureZNode | None, ibp_enabled: bool) -> tuple[FinalizedFeatures, int]:
    """What a broker caches from the node: nothing while absent; no features while disabled."""
    if node is None:
        return (), -1
    if node.status is FeatureZNodeStatus.DISABLED or not ibp_enabled:
        return (), node.epoch
    return node.features, node.epoch


def request(*updates: tuple[str, int, bool], dry_run: bool = False) -> UpdateFeaturesRequest:
    return UpdateFeaturesRequest(tuple(FeatureUpdate(f, lvl, allow) for f, lvl, allow in updates),
                                 dry_run=dry_run)
