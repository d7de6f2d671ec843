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
* ``SetIbp(enabled)``: the operator rolls the IBP across ``migration_ibp_version`` (KIP "Deployment", phase 1):
  every running broker restarts with the new IBP and makes its startup read under it, and the next controller
  applies the status rules.

``/features`` is held as ZooKeeper holds it (:class:`ZNode`): the JSON bytes the controller wrote, with
``FeatureZNode.encode`` under the config's profile, and the node's version (its epoch). Every reader decodes
those bytes with ``FeatureZNode.decode``: a broker at startup and on each watch notification, the controller
when it is elected, when it takes a registration, before it validates an update, and when it waits for its
own write (``KafkaController`` waits for its feature cache to reach the new version). The reference's bytes
always decode; a codec that writes what it cannot read, or reads what it did not write, changes what the
cluster does (:meth:`FeaturesSystem.read`, after Kafka's listener and controller) and what FEAT-13 sees.

Bounds (config): node epoch, restarts, IBP changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from reference_impl.features.api import (
    Errors,
    FeatureController,
    FeatureUpdate,
    FeatureZNode,
    FeatureZNodeStatus,
    FinalizedFeatures,
    JsonMappingException,
    SupportedFeatures,
    UpdatableFeatureResult,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
    deprecate_min_levels,
    is_compatible,
    setup_feature_versioning,
)
from reference_impl.features.config import FeaturesConfig
from reference_impl.features.state import Broker, BrokerStatus, Client, Decoded, FeaturesState, Unreadable, ZNode
from reference_impl.features.symmetry import symmetry_key
from rollcheck.core.registry import registered_properties
from rollcheck.core.system import DataclassSystem
from rollcheck.core.traces import Record
from rollcheck.core.transition import Action, AnyProperty

# Module-level aliases: cheaper than the class attribute lookups in the hot paths.
_RUNNING = BrokerStatus.RUNNING
_STOPPED = BrokerStatus.STOPPED
_EXITED = BrokerStatus.EXITED


class FeaturesSystem(DataclassSystem):
    name = "features"
    state_type = FeaturesState

    def __init__(self, config: FeaturesConfig) -> None:
        config.validate()  # as every protocol's system: a config no checker could mean is refused, built in or not
        super().__init__(config)
        self.releases = {r.name: r.supported() for r in config.releases}
        self.requests = config.operator_requests()
        self._outcomes: dict[tuple[object, ...], list[tuple[Action, ZNode | None]]] = {}
        # /features as readers see it: FeatureZNode.decode once per distinct bytes and version (a memo, like
        # _outcomes), and the bytes of each node the controller writes (FeatureZNode.encode, once per node).
        self._decoded: dict[ZNode, Decoded] = {}
        self._encoded: dict[FeatureZNode, ZNode] = {}
        # (release, the node's status and finalized features) -> is_compatible: the same few pairs recur
        # in most states (a memo, like _outcomes).
        self._compat: dict[tuple[str, tuple[FeatureZNodeStatus, FinalizedFeatures] | None], bool] = {}
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
        # The codec is called with the release only for the 3.9 rules (its 2.8 signature is what tests and the
        # mutation campaign replace).
        self._rules_28 = config.kafka_release == "2.8"

    def __getstate__(self) -> dict[str, object]:
        d = super().__getstate__()
        d["_outcomes"] = {}  # a memo: rebuilt wherever the system is unpickled
        d["_compat"] = {}
        d["_decoded"] = {}
        d["_encoded"] = {}
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
        return registered_properties(self)  # the set its ProtocolEntry names (properties=)

    def view(self, s: FeaturesState) -> dict[str, object]:
        # The spec's variables: /features as the reference's decoder reads its bytes (status, epoch, features).
        z = s.znode
        node = self.read(z)
        if z is None:
            shown = Record(status="ABSENT", epoch=-1, features={})
        elif isinstance(node, FeatureZNode):
            shown = Record(status=node.status.name, epoch=node.epoch,
                           features={n: (r.min_version_level, r.max_version_level) for n, r in node.features})
        else:  # bytes the decoder refuses (a codec bug): no spec state has them
            shown = Record(status="UNREADABLE", epoch=z.version, features={})
        return {
            "node": shown,
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
        znode = s.znode
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
        writable = controller >= 0 and znode is not None and znode.version < c.max_epoch
        if writable:
            for label, after in self.operator_outcomes(s):
                append((label, s if after is znode or after == znode else self._with_node(s, after)))
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
                    out.extend(self.restart_broker(s, i))
        if self._deprecation_on and writable and s.ibp_enabled:
            nxt = self.deprecate(s)
            if nxt is not None:
                append((self._deprecate_label, nxt))
        if s.ibp_changes < c.max_ibp_changes:
            append((self._set_ibp_labels[not s.ibp_enabled], self.set_ibp(s)))
        return out

    # ------------------------------------------------------------------ /features: bytes in ZooKeeper
    def read(self, z: ZNode | None) -> Decoded:
        """``FeatureZNode.decode(data, version, profile)`` of the node as ZooKeeper holds it, once per distinct
        bytes and version; what the decoder refuses is :class:`Unreadable`, never an exception.

        What Kafka does with a node it cannot decode (Apache Kafka 2.8.2,
        ``core/src/main/scala/kafka/server/FinalizedFeatureChangeListener.scala``,
        ``FeatureCacheUpdater.updateLatestOrThrow`` and ``ChangeNotificationProcessorThread.doWork``; the decoder
        is ``core/src/main/scala/kafka/zk/ZkData.scala`` ``FeatureZNode.decode``): an
        ``IllegalArgumentException`` from ``decode`` is logged ("Unable to deserialize feature ZK node") and the
        broker's feature cache is cleared (``finalizedFeatureCache.clear()``), and the broker runs on; any other
        exception (Jackson's ``JsonMappingException``, thrown by ``JsonObject.apply`` for a missing ``version``
        and by ``DecodeJson`` for a value of the wrong type) escapes ``updateLatestOrThrow``, and the
        notification thread throws ``FatalExitError``: the broker exits ("Failed to process feature ZK node
        change event. The broker will eventually exit."), at startup too (``initOrThrow`` runs the same updater).
        The controller (``core/src/main/scala/kafka/controller/KafkaController.scala``): ``enableFeatureVersioning``
        and ``disableFeatureVersioning`` decode the node during ``onControllerFailover``; a failure there is
        caught by ``elect()``, which calls ``triggerControllerMove()``: the election fails.
        """
        if z is None:
            return None
        hit = self._decoded.get(z)
        if hit is None:
            try:
                hit = (FeatureZNode.decode(z.data, z.version, self.config.profile) if self._rules_28 else
                       FeatureZNode.decode(z.data, z.version, self.config.profile, self.config.kafka_release))
            except JsonMappingException as exc:  # before ValueError: it is one here
                hit = Unreadable(True, str(exc))
            except ValueError as exc:  # Kafka's IllegalArgumentException family (api.py)
                hit = Unreadable(False, str(exc))
            except Exception as exc:  # any other failure of a (broken) decoder: Kafka's listener exits on
                hit = Unreadable(True, f"{type(exc).__name__}: {exc}")  # every exception but an IAE
            self._decoded[z] = hit
        return hit

    def store(self, node: FeatureZNode) -> ZNode:
        """What the controller's write leaves in ZooKeeper: ``FeatureZNode.encode`` of the node it decided
        (under the config's profile) and the node's version, its epoch."""
        hit = self._encoded.get(node)
        if hit is None:
            data = (node.encode(self.config.profile) if self._rules_28 else
                    node.encode(self.config.profile, self.config.kafka_release))
            hit = self._encoded[node] = ZNode(data, node.epoch)
        return hit

    # ------------------------------------------------------------------ helpers
    def supported(self, b: Broker) -> SupportedFeatures:
        return self.releases[b.release]

    def compatible(self, s: FeaturesState, b: Broker, node: FeatureZNode | None) -> bool:
        """Whether broker ``b`` may run against the decoded node ``node``."""
        if not s.ibp_enabled:  # "each broker will validate that its IBP ... before applying validations"
            return True
        # is_compatible reads only the node's presence and status and the release's supported ranges against
        # the node's features (not its epoch); it owns the rule that an absent or disabled node constrains nothing.
        key = (b.release, None if node is None else (node.status, node.features))
        hit = self._compat.get(key)
        if hit is None:
            hit = self._compat[key] = is_compatible(self.releases[b.release], node, self.config.profile)
        return hit

    def _written(self, s: FeaturesState, znode: ZNode | None) -> tuple[Broker, ...]:
        """After a write to /features every running broker has a watch notification pending."""
        if znode is s.znode or znode == s.znode:
            return s.brokers
        # A broker that already has a notification pending is kept as it is (the same value).
        return tuple(Broker(b.release, b.status, b.cache_epoch, b.cache, b.registered, False)
                     if b.status is _RUNNING and b.notified else b for b in s.brokers)

    def _with_node(self, s: FeaturesState, znode: ZNode | None) -> FeaturesState:
        """``replace(s, znode=znode, brokers=self._written(s, znode))``, by the (cheaper) constructor."""
        return FeaturesState(znode, s.ibp_enabled, s.controller, self._written(s, znode), s.registration_queue,
                             s.client, s.restarts, s.ibp_changes)

    def controller_api(self, s: FeaturesState, node: FeatureZNode | None = None) -> FeatureController:
        """The controller's API over ``node`` (default: /features as the controller decodes it)."""
        if node is None:
            decoded = self.read(s.znode)
            node = decoded if isinstance(decoded, FeatureZNode) else None
        live = tuple((i, self.supported(b)) for i, b in enumerate(s.brokers) if b.registered)
        own = self.supported(s.brokers[s.controller])
        return FeatureController(node, live, own, s.ibp_enabled, True, self.config.profile,
                                 self.config.semantics, self.config.mutations, self.config.kafka_release)

    def _broker_reads(self, s: FeaturesState, b: Broker) -> tuple[bool, FinalizedFeatures, int]:
        """A broker reads /features (at startup or on a watch notification): whether it runs on, and what it
        caches and serves in ApiVersions. It exits on an incompatibility ("Broker protections"; the features
        and epoch are then what it would have cached, which a broken variant that ignores the check keeps) and
        on a fatal decoding failure; bytes the decoder refuses otherwise leave it running with no cache.

        Below migration_ibp_version Kafka runs no feature listener at all: the broker decodes nothing. With no
        features cached (that IBP, or a disabled node) the epoch it serves differs by profile. kafka: none, as
        Kafka 2.8 does (the listener clears its FinalizedFeatureCache on a disabled node and never fills it
        below KAFKA_2_7_IV0, and ApiVersions then carries UNKNOWN_FINALIZED_FEATURES_EPOCH, -1). kip: the
        node's version (the KIP is silent; its epoch is the node's ZooKeeper version whatever the status).
        """
        z = s.znode
        if z is None:
            return True, (), -1
        if not s.ibp_enabled:
            return True, (), self._uncached_epoch(z.version)
        node = self.read(z)
        if isinstance(node, Unreadable):
            return not node.fatal, (), -1  # fatal: FatalExitError; else finalizedFeatureCache.clear()
        assert node is not None
        if node.status is FeatureZNodeStatus.DISABLED:
            return True, (), self._uncached_epoch(node.epoch)
        return self.compatible(s, b, node), node.features, node.epoch

    def _uncached_epoch(self, version: int) -> int:
        """The epoch a broker with no features cached serves for a node of this version (see _broker_reads)."""
        return -1 if self.config.profile == "kafka" else version

    # ------------------------------------------------------------------ actions
    def elect_controller(self, s: FeaturesState, i: int) -> FeaturesState:
        current = self.read(s.znode)
        if isinstance(current, Unreadable):
            # enable/disableFeatureVersioning cannot decode /features: onControllerFailover throws, elect()
            # catches it and triggers a controller move. The broker resigns at once: nothing has changed.
            return s
        new_node = setup_feature_versioning(current, s.ibp_enabled, self.supported(s.brokers[i]),
                                            self.config.kafka_release)
        if new_node is None:
            znode, node = s.znode, current
        else:
            znode = self.store(new_node)
            node = new_node
            if s.ibp_enabled:
                # enableFeatureVersioning waits for the controller's own feature cache to reach the version it
                # wrote (featureCache.waitUntilEpochOrThrow): the controller reads its write back. Bytes it
                # cannot read never get there: the wait times out, the failover fails and the controller
                # moves, its write made (every running broker has the watch notification pending).
                back = self.read(znode)
                if not isinstance(back, FeatureZNode):
                    return FeaturesState(znode, s.ibp_enabled, -1, self._written(s, znode), (), s.client,
                                         s.restarts, s.ibp_changes)
                node = back
        # The new controller reads every BrokerIdZnode and keeps the compatible brokers as live.
        brokers = []
        for b in self._written(s, znode):
            registered = b.status is _RUNNING and self._admits(s, b, node)
            brokers.append(b if b.registered == registered else
                           Broker(b.release, b.status, b.cache_epoch, b.cache, registered, b.notified))
        return FeaturesState(znode, s.ibp_enabled, i, tuple(brokers), (), s.client, s.restarts, s.ibp_changes)

    def _admits(self, s: FeaturesState, b: Broker, node: Decoded) -> bool:
        if self._register_incompatible:
            return True
        # Bytes the controller cannot decode constrain nothing: Kafka's controller checks registrations against
        # its feature cache (partitionOnFeatureCompatibility), which a failed decode has cleared.
        return self.compatible(s, b, node if isinstance(node, FeatureZNode) else None)

    def _started(self, s: FeaturesState, b: Broker) -> Broker:
        """Broker ``b`` after its startup read of /features in state ``s`` (Broker protections, point 1): it
        exits on an incompatibility, else runs with what it read; unregistered either way."""
        runs, cache, epoch = self._broker_reads(s, b)
        if not runs and not self._skip_startup_validation:
            return Broker(b.release, _EXITED, b.cache_epoch, b.cache, False, True)
        return Broker(b.release, _RUNNING, epoch, cache, False, True)

    def start_broker(self, s: FeaturesState, i: int) -> FeaturesState:
        nb = self._started(s, s.brokers[i])
        queue = ((*s.registration_queue, i) if s.controller >= 0 and nb.status is _RUNNING
                 else s.registration_queue)
        return FeaturesState(s.znode, s.ibp_enabled, s.controller, _put(s.brokers, i, nb), queue, s.client,
                             s.restarts, s.ibp_changes)

    def process_registration(self, s: FeaturesState) -> FeaturesState:
        head, rest = s.registration_queue[0], s.registration_queue[1:]
        b = s.brokers[head]
        admit = b.status is _RUNNING and self._admits(s, b, self.read(s.znode))
        nb = Broker(b.release, b.status, b.cache_epoch, b.cache, admit, b.notified)
        return FeaturesState(s.znode, s.ibp_enabled, s.controller, _put(s.brokers, head, nb), rest, s.client,
                             s.restarts, s.ibp_changes)

    def operator_outcomes(self, s: FeaturesState) -> list[tuple[Action, ZNode | None]]:
        """Every operator request against this controller, with /features (bytes and version) after it.

        The outcome depends only on the node, the live brokers' releases, the controller's release and
        the IBP, which many states share: it is computed once per such key (a per-system memo).
        """
        live = tuple(b.release for b in s.brokers if b.registered)
        key = (s.znode, live, s.brokers[s.controller].release, s.ibp_enabled)
        hit = self._outcomes.get(key)
        if hit is None:
            current = self.read(s.znode)
            if isinstance(current, Unreadable):
                # Bytes the controller cannot decode. Kafka 2.8 validates a request against the controller's own
                # FinalizedFeatureCache (processFeatureUpdatesWithActiveController: existingFeatures is
                # featureCache.get, no features when it is empty), which its listener cleared on the
                # IllegalArgumentException (on any other exception the broker exits: no controller reads on). So
                # the updates are validated against no finalized feature, and a change writes a fresh node over
                # the bytes, which the cache then reads. The KIP is silent.
                assert s.znode is not None
                current = FeatureZNode(FeatureZNodeStatus.ENABLED, (), s.znode.version)
            api = self.controller_api(s, current)
            hit = []
            for req in self.requests:
                response, decided = api.update_features(req)
                after = s.znode if decided.node is current else self.store(decided.node)
                if after is not s.znode and not isinstance(self.read(after), FeatureZNode):
                    # processFeatureUpdatesWithActiveController waits for the controller's feature cache to reach
                    # the version it wrote (waitUntilEpochOrThrow); bytes it cannot read never get there, and
                    # every valid update is answered FEATURE_UPDATE_FAILED, the node written all the same.
                    response = _unapplied(response)
                label = Action.of(
                    "UpdateFeatures",
                    updates=tuple((u.feature, u.max_version_level, u.allow_downgrade) for u in req.feature_updates),
                    dry_run=req.dry_run,
                    result=(response.error.name, *(r.error.name for r in response.results)),
                )
                hit.append((label, after))
            self._outcomes[key] = hit
        return hit

    def deliver_notification(self, s: FeaturesState, i: int) -> FeaturesState:
        b = s.brokers[i]
        runs, cache, epoch = self._broker_reads(s, b)
        if not runs and not self._ignore_incompatible_notification:
            nb = Broker(b.release, _EXITED, b.cache_epoch, b.cache, False, True)
            # A controller that exits gives up the controllership (its ZooKeeper session, and with it the
            # ephemeral /controller znode, ends with the process: Kafka's FinalizedFeatureChangeListener
            # calls Exit.exit); the next controller rebuilds its live set from ZooKeeper, as after a restart.
            ctl = -1 if s.controller == i else s.controller
            queue = () if ctl < 0 else tuple(q for q in s.registration_queue if q != i)
            return FeaturesState(s.znode, s.ibp_enabled, ctl, _put(s.brokers, i, nb), queue, s.client,
                                 s.restarts, s.ibp_changes)
        nb = Broker(b.release, b.status, epoch, cache, b.registered, True)
        return FeaturesState(s.znode, s.ibp_enabled, s.controller, _put(s.brokers, i, nb), s.registration_queue,
                             s.client, s.restarts, s.ibp_changes)

    def read_api_versions(self, s: FeaturesState, i: int) -> FeaturesState:
        b = s.brokers[i]
        if b.cache_epoch > s.client.epoch or self._client_adopts_stale:
            return FeaturesState(s.znode, s.ibp_enabled, s.controller, s.brokers, s.registration_queue,
                                 Client(b.cache_epoch, b.cache), s.restarts, s.ibp_changes)
        return s

    def restart_broker(self, s: FeaturesState, i: int) -> list[tuple[Action, FeaturesState]]:
        """``RestartBroker(i, r)`` onto each release ``r`` (upgrade, downgrade or the same binary): the broker
        stops (its restart is a ``StartBroker`` later), its registration leaves the controller's queue, and a
        controller that restarts resigns. The queue and the controller are worked out once for every release,
        the stopped brokers are built once per config (``__init__``)."""
        controller = s.controller
        ctl = -1 if controller == i else controller
        # The next controller rebuilds its live set from ZooKeeper: without one the queue is gone.
        queue = () if ctl < 0 else tuple(q for q in s.registration_queue if q != i)
        restarts = s.restarts + 1
        return [(label, FeaturesState(s.znode, s.ibp_enabled, ctl, _put(s.brokers, i, nb), queue, s.client,
                                      restarts, s.ibp_changes))
                for label, nb in self._restart_labels[i]]

    def deprecate(self, s: FeaturesState) -> FeaturesState | None:
        assert s.znode is not None
        node = self.read(s.znode)
        if not isinstance(node, FeatureZNode) or node.status is not FeatureZNodeStatus.ENABLED:
            return None
        new = deprecate_min_levels(node, [self.supported(b) for b in s.brokers if b.registered])
        if new is None:
            return None
        return self._with_node(s, self.store(new))

    def set_ibp(self, s: FeaturesState) -> FeaturesState:
        """The IBP roll: inter.broker.protocol.version is a static broker config, so Kafka rolls it by restarting
        every running broker with the new value (KIP-584 "Deployment", phase 1; Apache Kafka 2.8 KafkaServer
        starts the FinalizedFeatureChangeListener, whose initOrThrow reads and validates /features, only when
        the IBP is at least KAFKA_2_7_IV0). Each running broker makes its startup read under the new IBP (and
        may exit there), the controller among them: the roll ends with an election under the new IBP (the
        status rules run there). The roll is one step, the restarts outside ``max_restarts`` (those are
        bounces onto a release); a stopped or exited broker stays down."""
        t = FeaturesState(s.znode, not s.ibp_enabled, -1, s.brokers, (), s.client, s.restarts, s.ibp_changes + 1)
        brokers = tuple(self._started(t, b) if b.status is _RUNNING else b for b in s.brokers)
        return FeaturesState(t.znode, t.ibp_enabled, -1, brokers, (), t.client, t.restarts, t.ibp_changes)

    # ------------------------------------------------------------------ symmetry (issue #17)
    def symmetry_key(self, s: FeaturesState) -> object:
        """A hashable key equal for two states iff one is the other with interchangeable brokers
        renamed (the canonical representative of the orbit); see :mod:`reference_impl.features.symmetry`."""
        return self.cached_symmetry_key(symmetry_key, s)


def _unapplied(response: UpdateFeaturesResponse) -> UpdateFeaturesResponse:
    """Kafka's answer when the controller's write cannot be seen through (the catch of
    ``processFeatureUpdatesWithActiveController``): every valid update is FEATURE_UPDATE_FAILED, the others keep
    their error."""
    return UpdateFeaturesResponse(response.error, response.message, tuple(
        r if r.error is not Errors.NONE else UpdatableFeatureResult(r.feature, Errors.FEATURE_UPDATE_FAILED)
        for r in response.results))


def _put(brokers: tuple[Broker, ...], i: int, b: Broker) -> tuple[Broker, ...]:
    return (*brokers[:i], b, *brokers[i + 1:])


def request(*updates: tuple[str, int, bool], dry_run: bool = False) -> UpdateFeaturesRequest:
    return UpdateFeaturesRequest(tuple(FeatureUpdate(f, lvl, allow) for f, lvl, allow in updates),
                                 dry_run=dry_run)
