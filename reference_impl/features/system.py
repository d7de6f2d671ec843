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


class FeaturesSystem(DataclassSystem):
    name = "features"
    state_type = FeaturesState

    def __init__(self, config: FeaturesConfig) -> None:
        super().__init__(config)
        self.releases = {r.name: r.supported() for r in config.releases}
        self.requests = config.operator_requests()
        self._outcomes: dict[tuple[object, ...], list[tuple[Action, FeatureZNode | None]]] = {}

    def __getstate__(self) -> dict[str, object]:
        d = super().__getstate__()
        d["_outcomes"] = {}  # a memo: rebuilt wherever the system is unpickled
        return d

    # ------------------------------------------------------------------ interface
    def initial_states(self) -> Iterable[FeaturesState]:
        """A cluster on ``initial_release`` before its first controller: a new cluster (IBP at or above
        migration_ibp_version) and/or an upgraded old one (IBP below), as the config asks."""
        c = self.config
        broker = Broker(c.initial_release, BrokerStatus.RUNNING, -1, (), False, True)
        return [FeaturesState(None, ibp, -1, (broker,) * c.brokers, (), Client(-1, ()), 0, 0)
                for ibp in c.initial_ibp]

    def invariants(self) -> Sequence[AnyProperty]:
        from properties.features import features_properties, release_table

        return features_properties(self.config.profile, self.config.semantics, release_table(self.config.releases))

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
        c = self.config
        running = [i for i, b in enumerate(s.brokers) if b.status is BrokerStatus.RUNNING]
        if s.controller < 0:
            for i in running:
                out.append((Action.of("ElectController", broker=i), self.elect_controller(s, i)))
        for i, b in enumerate(s.brokers):
            if b.status is BrokerStatus.STOPPED:
                out.append((Action.of("StartBroker", broker=i), self.start_broker(s, i)))
        if s.registration_queue and s.controller >= 0:
            head = s.registration_queue[0]
            out.append((Action.of("ProcessBrokerRegistration", broker=head), self.process_registration(s)))
        if s.controller >= 0 and s.node is not None and s.node.epoch < c.max_epoch:
            for label, node in self.operator_outcomes(s):
                out.append((label, s if node == s.node else
                            replace(s, node=node, brokers=self._written(s, node))))
        for i in running:
            if not s.brokers[i].notified:
                out.append((Action.of("DeliverFeaturesNotification", broker=i), self.deliver_notification(s, i)))
        if c.client:
            for i in running:
                if s.brokers[i].cache_epoch >= 0:
                    out.append((Action.of("ReadApiVersions", broker=i), self.read_api_versions(s, i)))
        if s.restarts < c.max_restarts:
            for i, b in enumerate(s.brokers):
                if b.status is not BrokerStatus.STOPPED:
                    for r in c.releases:
                        out.append((Action.of("RestartBroker", broker=i, release=r.name),
                                    self.restart_broker(s, i, r.name)))
        if (c.deprecation and c.profile == "kip" and s.controller >= 0 and s.ibp_enabled
                and s.node is not None and s.node.epoch < c.max_epoch):
            nxt = self.deprecate(s)
            if nxt is not None:
                out.append((Action.of("DeprecateMinLevel"), nxt))
        if s.ibp_changes < c.max_ibp_changes:
            out.append((Action.of("SetIbp", enabled=not s.ibp_enabled), self.set_ibp(s)))
        return out

    # ------------------------------------------------------------------ helpers
    def supported(self, b: Broker) -> SupportedFeatures:
        return self.releases[b.release]

    def compatible(self, s: FeaturesState, b: Broker, node: FeatureZNode | None) -> bool:
        if not s.ibp_enabled:  # "each broker will validate that its IBP ... before applying validations"
            return True
        return is_compatible(self.supported(b), node, self.config.profile)

    def _written(self, s: FeaturesState, node: FeatureZNode | None) -> tuple[Broker, ...]:
        """After a write to /features every running broker has a watch notification pending."""
        if node == s.node:
            return s.brokers
        return tuple(replace(b, notified=False) if b.status is BrokerStatus.RUNNING else b for b in s.brokers)

    def controller_api(self, s: FeaturesState) -> FeatureController:
        live = tuple((i, self.supported(b)) for i, b in enumerate(s.brokers) if b.registered)
        own = self.supported(s.brokers[s.controller])
        return FeatureController(s.node, live, own, s.ibp_enabled, True, self.config.profile,
                                 self.config.semantics, self.config.mutations)

    # ------------------------------------------------------------------ actions
    def elect_controller(self, s: FeaturesState, i: int) -> FeaturesState:
        new_node = setup_feature_versioning(s.node, s.ibp_enabled, self.supported(s.brokers[i]))
        node = s.node if new_node is None else new_node
        brokers = self._written(s, node)
        # The new controller reads every BrokerIdZnode and keeps the compatible brokers as live.
        brokers = tuple(replace(b, registered=b.status is BrokerStatus.RUNNING and self._admits(s, b, node))
                        for b in brokers)
        return replace(s, node=node, controller=i, brokers=brokers, registration_queue=())

    def _admits(self, s: FeaturesState, b: Broker, node: FeatureZNode | None) -> bool:
        if "register_incompatible" in self.config.mutations:
            return True
        return self.compatible(s, b, node)

    def start_broker(self, s: FeaturesState, i: int) -> FeaturesState:
        b = s.brokers[i]
        if not self.compatible(s, b, s.node) and "skip_startup_validation" not in self.config.mutations:
            nb = replace(b, status=BrokerStatus.EXITED, registered=False, notified=True)
            return replace(s, brokers=_put(s.brokers, i, nb))
        node = s.node
        cache, epoch = _cached(node, s.ibp_enabled)
        nb = Broker(b.release, BrokerStatus.RUNNING, epoch, cache, False, True)
        queue = (*s.registration_queue, i) if s.controller >= 0 else s.registration_queue
        return replace(s, brokers=_put(s.brokers, i, nb), registration_queue=queue)

    def process_registration(self, s: FeaturesState) -> FeaturesState:
        head, rest = s.registration_queue[0], s.registration_queue[1:]
        b = s.brokers[head]
        admit = b.status is BrokerStatus.RUNNING and self._admits(s, b, s.node)
        return replace(s, brokers=_put(s.brokers, head, replace(b, registered=admit)), registration_queue=rest)

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
        return label, (s if node == s.node else replace(s, node=node, brokers=self._written(s, node)))

    def deliver_notification(self, s: FeaturesState, i: int) -> FeaturesState:
        b = s.brokers[i]
        if not self.compatible(s, b, s.node) and "ignore_incompatible_notification" not in self.config.mutations:
            nb = replace(b, status=BrokerStatus.EXITED, registered=False, notified=True)
            queue = tuple(q for q in s.registration_queue if q != i)
            return replace(s, brokers=_put(s.brokers, i, nb), registration_queue=queue)
        cache, epoch = _cached(s.node, s.ibp_enabled)
        return replace(s, brokers=_put(s.brokers, i, replace(b, cache=cache, cache_epoch=epoch, notified=True)))

    def read_api_versions(self, s: FeaturesState, i: int) -> FeaturesState:
        b = s.brokers[i]
        if b.cache_epoch > s.client.epoch or "client_adopts_stale" in self.config.mutations:
            return replace(s, client=Client(b.cache_epoch, b.cache))
        return s

    def restart_broker(self, s: FeaturesState, i: int, release: str) -> FeaturesState:
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
        return replace(s, node=new, brokers=self._written(s, new))

    def set_ibp(self, s: FeaturesState) -> FeaturesState:
        # The IBP roll ends with a controller election under the new IBP (the status rules run there).
        return replace(s, ibp_enabled=not s.ibp_enabled, controller=-1, registration_queue=(),
                       brokers=tuple(replace(b, registered=False) for b in s.brokers),
                       ibp_changes=s.ibp_changes + 1)

    # ------------------------------------------------------------------ symmetry (issue #17)
    def symmetry_key(self, s: FeaturesState) -> object:
        """A hashable key equal for two states iff one is the other with interchangeable brokers
        renamed (the canonical representative of the orbit); see :mod:`reference_impl.features.symmetry`."""
        key = self.__dict__.get("_symmetry_key")
        if key is None:
            from reference_impl.features.symmetry import symmetry_key

            key = self.__dict__["_symmetry_key"] = symmetry_key(self.config)
        return key(s)


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
