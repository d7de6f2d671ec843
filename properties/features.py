"""Properties of the ``features`` protocol (KIP-584 and its revision), ids ``FEAT-01``...

Each predicate restates the KIP sentence it cites directly over the state; none calls the reference
implementation's decision functions, so a wrong rule there cannot make its own check pass. The witnesses
(``FEAT-W*``) name the stories the configs exist for: a run that never reaches one is vacuous.

The state holds ``/features`` as ZooKeeper does: the JSON bytes the controller wrote and the node's version
(``s.znode``). The predicates read those bytes with ``json.loads`` here (:func:`node_json`), never with the
reference's ``FeatureZNode.decode``, so a codec bug cannot hide from them behind its own decoder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from reference_impl.features.config import FeaturesConfig
from rollcheck.core.declare import PropertySet, graph_property, invariant, step_property, witness
from rollcheck.core.transition import Action

KIP = "KIP-584"


@dataclass(frozen=True)
class FeaturesContext:
    """What the predicates read besides the state: the profile, the update semantics and the releases'
    supported ranges (release -> feature -> (min, max))."""

    config: FeaturesConfig
    profile: str
    semantics: str
    table: dict[str, dict[str, tuple[int, int]]]

    @staticmethod
    def of(system: Any) -> FeaturesContext:
        c: FeaturesConfig = system.config
        return FeaturesContext(c, c.profile, c.semantics, release_table(c.releases))


def release_table(releases: Any) -> dict[str, dict[str, tuple[int, int]]]:
    return {r.name: {f: (lo, hi) for f, lo, hi in r.features} for r in releases}


# ---------------------------------------------------------------- /features' bytes, read here

# Kafka 2.8's FeatureZNode JSON (core/src/main/scala/kafka/zk/ZkData.scala, FeatureZNode.encode): the schema
# version ("version": FeatureZNode.V1 = 1; the KIP's schema example has "version": 0), the status (KIP-584
# "Feature ZK node status": Enabled (1), Disabled (0)) and the finalized features, each as exactly
# min_version_level and max_version_level (FinalizedVersionRange.toMap). The epoch is the node's ZooKeeper
# version, not in the JSON.
SCHEMA_VERSION = {"kafka": 1, "kip": 0}
ENABLED, DISABLED = 1, 0
_TOP_KEYS = frozenset({"version", "status", "features"})
_LEVEL_KEYS = frozenset({"min_version_level", "max_version_level"})
# Kafka 3.3 and later (the kafka profile's kafka_release "3.9"; Apache Kafka 3.9.0-rc3 ZkData.scala): schema
# version 2 (from IBP 3.3-IV0) holds one level per feature, max_version_level alone; version 1 is written below it.
# A 3.9 row's controller writes Enabled nodes at 2 and Disabled ones (below IBP 2.7-IV0) at 1.
_V2 = 2
_V2_LEVEL_KEYS = frozenset({"max_version_level"})


def schema_version(ctx: FeaturesContext, status: object) -> int:
    """The schema version the modelled Kafka writes a node of this status at."""
    if ctx.profile == "kafka" and ctx.config.kafka_release == "3.9":
        return _V2 if status == ENABLED else SCHEMA_VERSION["kafka"]
    return SCHEMA_VERSION[ctx.profile]


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)  # JSON true is not a number


@dataclass(frozen=True)
class NodeJson:
    """/features' data as the properties read it: ``json.loads``, then what each key holds.

    ``features`` keeps every entry with two integer levels (read-only: one dict per distinct bytes);
    ``problem`` says how the JSON departs from the FeatureZNode shape Kafka writes (the schema version's
    value aside: it depends on the profile), ``None`` when it does not."""

    version: object
    status: object
    features: dict[str, tuple[int, int]]
    problem: str | None

    @property
    def enabled(self) -> bool:
        return _is_int(self.status) and self.status == ENABLED


@lru_cache(maxsize=4096)
def node_json(data: bytes) -> NodeJson:
    """Parse /features' bytes (few distinct ones: one parse each)."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return NodeJson(None, None, {}, f"not UTF-8 JSON: {exc}")
    if not isinstance(doc, dict):
        return NodeJson(None, None, {}, "not a JSON object")
    version, status, raw = doc.get("version"), doc.get("status"), doc.get("features")
    features: dict[str, tuple[int, int]] = {}
    problems = []
    if set(doc) != _TOP_KEYS:
        problems.append(f"keys {sorted(doc)}, not {sorted(_TOP_KEYS)}")
    if not _is_int(version):
        problems.append(f"version {version!r} is not an int")
    if not (_is_int(status) and status in (ENABLED, DISABLED)):
        problems.append(f"status {status!r} is neither 1 (enabled) nor 0 (disabled)")
    if not isinstance(raw, dict):
        problems.append("features is not an object")
    else:
        for name, levels in raw.items():
            if version == _V2 and isinstance(levels, dict) and set(levels) == _V2_LEVEL_KEYS:
                levels = {"min_version_level": levels["max_version_level"], **levels}  # one level: (l, l)
            if not isinstance(levels, dict) or set(levels) != _LEVEL_KEYS:
                problems.append(f"feature {name!r}: {levels!r} is not exactly min_version_level, max_version_level")
                continue
            lo, hi = levels["min_version_level"], levels["max_version_level"]
            if not (_is_int(lo) and _is_int(hi)):
                problems.append(f"feature {name!r}: levels {lo!r}, {hi!r} are not ints")
                continue
            features[name] = (lo, hi)
            if not (name and 1 <= lo <= hi):
                problems.append(f"feature {name!r}: not 1 <= min_version_level {lo} <= max_version_level {hi}")
        if status == DISABLED and _is_int(status) and raw:
            problems.append("a disabled node with finalized features (Kafka writes it empty)")
    return NodeJson(version, status, features, "; ".join(problems) or None)


def _node_features(s: Any) -> dict[str, tuple[int, int]]:
    if s.znode is None:
        return {}
    return node_json(s.znode.data).features


def _fits(profile: str, sup: tuple[int, int] | None, fin: tuple[int, int]) -> bool:
    if sup is None:
        return False
    if profile == "kafka":  # FinalizedVersionRange.isIncompatibleWith: the whole range must fit
        return sup[0] <= fin[0] and fin[1] <= sup[1]
    return sup[0] <= fin[1] <= sup[1]  # KIP Validations: the max level in every live broker's range


def _enabled(s: Any) -> bool:
    return bool(s.ibp_enabled and s.znode is not None and node_json(s.znode.data).enabled)


def _compatible(ctx: FeaturesContext, s: Any, include: Any) -> bool:
    if not _enabled(s):
        return True
    fin = _node_features(s)
    for b in s.brokers:
        if include(b):
            sup = ctx.table[b.release]
            if not all(_fits(ctx.profile, sup.get(f), r) for f, r in fin.items()):
                return False
    return True


# ---------------------------------------------------------------- invariants

@invariant("FEAT-01", "finalized levels lie in the supported range of every live (registered) broker; an "
           "incompatible broker is never in the controller's live set, so never sent metadata",
           source=f"{KIP} Validations; Incompatible broker lifetime race condition")
def live_compatible(ctx: FeaturesContext, s: Any) -> bool:
    return _compatible(ctx, s, lambda b: b.registered and b.status.name == "RUNNING")


@invariant("FEAT-02", "every finalized feature has 1 <= min_version_level <= max_version_level",
           source=f"{KIP} Persistence of finalized feature version levels, Schema")
def ranges_valid(s: Any) -> bool:
    return all(1 <= lo <= hi for lo, hi in _node_features(s).values())


# ---------------------------------------------------------------- step properties

@step_property("FEAT-03", "the /features epoch never decreases and rises by exactly one on every change",
               source=f"{KIP} Changes to Kafka Controller, step 3; ApiVersionsResponse FinalizedFeaturesEpoch")
def epoch_rises_on_change(s: Any, a: Action, t: Any) -> bool:
    if s.znode is t.znode or s.znode == t.znode:  # identity first: most steps keep the node object
        return True
    if t.znode is None:
        return False  # the node is never deleted
    if s.znode is None:
        return bool(t.znode.version == 0)
    return bool(t.znode.version == s.znode.version + 1)


@step_property("FEAT-04", "neither a running broker's cache nor a client ever goes back to an older epoch (a "
               "broker's cleared cache serves none, -1, which is no epoch), and a client changes what it knows "
               "only for a higher epoch",
               source=f"{KIP} Client discovery of finalized feature versions (eventual consistency: the latest "
               "received higher epoch always trumps an older smaller epoch); ApiVersionsResponse "
               "FinalizedFeaturesEpoch (-1: unknown); Apache Kafka 2.8 FinalizedFeatureCache (clear() on a disabled "
               "or undecodable node)")
def caches_monotonic(s: Any, a: Action, t: Any) -> bool:
    # A same epoch trumps nothing. Without the second test a client that took another broker's answer at its
    # own epoch broke no property (the mutation campaign's survivor features system.py:480, `>` made `>=`):
    # under kip a broker below migration_ibp_version serves the node's version with nothing cached while
    # another serves the same version with the features it read under the new IBP.
    if t.client.epoch < s.client.epoch or (t.client.epoch == s.client.epoch and t.client != s.client):
        return False
    if s.brokers is t.brokers:  # the same brokers: no cache can have gone back
        return True
    for b, c in zip(s.brokers, t.brokers, strict=True):
        # The integer comparison first: the enum's .name is the costly part and rarely needed.
        if -1 < c.cache_epoch < b.cache_epoch and b.status.name == "RUNNING" and c.status.name == "RUNNING":
            return False
    return True


@step_property("FEAT-05", "no downgrade or deletion of a finalized feature without allowDowngrade",
               source=f"{KIP} Validations, important point 2")
def no_downgrade_without_flag(s: Any, a: Action, t: Any) -> bool:
    if a.name != "UpdateFeatures" or s.znode is t.znode:  # the same node: nothing lowered
        return True
    before, after = _node_features(s), _node_features(t)
    allowed = {f for f, _lvl, allow in a["updates"] if allow}
    for f, (_lo, hi) in before.items():
        lowered = f not in after or after[f][1] < hi
        if lowered and f not in allowed:
            return False
    return True


@step_property("FEAT-06", "a failed update (per update; per request under atomic) changes nothing, and a "
               "successful one is applied", source=f"{KIP} Guarantees (and its revision)")
def failed_changes_nothing(ctx: FeaturesContext, s: Any, a: Action, t: Any) -> bool:
    if a.name != "UpdateFeatures":
        return True
    top, *results = a["result"]
    if top != "NONE":
        return s.znode is t.znode or s.znode == t.znode
    before = _node_features(s)
    after = before if s.znode is t.znode else _node_features(t)  # read-only: one dict serves both
    for (f, lvl, _allow), err in zip(a["updates"], results, strict=True):
        if err != "NONE":
            if before.get(f) != after.get(f):
                return False
        elif not a["dry_run"]:
            # Guarantees: a success means the update was applied (with a bump of the node version).
            if lvl < 1 and f in after:
                return False
            if lvl >= 1 and after.get(f, (0, 0))[1] != lvl:
                return False
    if any(r != "NONE" for r in results) and (ctx.semantics == "atomic" or all(
            after.get(f) == before.get(f) for f, _l, _a in a["updates"])):
        # The revision: one failure and nothing is applied. And whenever nothing is applied, the
        # node itself (its epoch included) is untouched.
        return s.znode is t.znode or s.znode == t.znode
    return True


@step_property("FEAT-07", "a dry run changes nothing", source=f"{KIP} Tooling support (--dry-run)")
def dry_run_changes_nothing(s: Any, a: Action, t: Any) -> bool:
    return not (a.name == "UpdateFeatures" and a["dry_run"]) or s is t or s == t


@invariant("FEAT-08", "a running broker that has read the latest /features is compatible with it (an "
           "incompatible one shut down when notified)",
           source=f"{KIP} Broker protections against race conditions")
def notified_compatible(ctx: FeaturesContext, s: Any) -> bool:
    return _compatible(ctx, s, lambda b: b.status.name == "RUNNING" and b.notified)


@invariant("FEAT-09", "a disabled /features node holds no finalized features", source=f"{KIP} Feature ZK node status")
def disabled_is_empty(s: Any) -> bool:
    return s.znode is None or node_json(s.znode.data).enabled or not _node_features(s)


@invariant("FEAT-11", "the active controller is a running broker, and its event queue holds only registrations of "
           "running brokers not yet in its live set, each once (none without a controller)",
           source="Apache Kafka 2.8 KafkaController (the controller is a live broker: /controller is an ephemeral "
           "znode of its session; onBrokerStartup queues a starting broker's registration); "
           f"{KIP} Incompatible broker lifetime race condition")
def controller_is_live(s: Any) -> bool:
    if s.controller >= 0 and s.brokers[s.controller].status.name != "RUNNING":
        return False
    q = s.registration_queue
    if q and s.controller < 0:
        return False
    return len(set(q)) == len(q) and all(s.brokers[i].status.name == "RUNNING" and not s.brokers[i].registered
                                         for i in q)


@step_property("FEAT-12", "a broker that starts while a controller is active has its registration queued on the "
               "controller's event queue, behind those already there",
               source="Apache Kafka 2.8 KafkaController (onBrokerStartup: a new broker's BrokerChange is an event "
               f"on the ControllerEventThread); {KIP} Incompatible broker lifetime race condition")
def start_queues_registration(s: Any, a: Action, t: Any) -> bool:
    # Without it a started broker may stay out of the live set with no property noticing (the mutation
    # campaign's survivor: a registration never queued when broker 0 is the controller).
    if a.name != "StartBroker" or s.controller < 0 or t.brokers[a["broker"]].status.name != "RUNNING":
        return True
    return bool(t.registration_queue == (*s.registration_queue, a["broker"]))


@step_property("FEAT-14", "across one step the controller's registration queue changes only as its event queue "
               "can: a broker started under the active controller is appended (FEAT-12), the controller's "
               "ProcessBrokerRegistration takes the head, a broker that restarts or exits on a notification "
               "leaves it, a controller change (election, resignation, IBP roll) empties it; every "
               "other step leaves it as it was",
               source="Apache Kafka 2.8 KafkaController (the ControllerEventThread's queue: onBrokerStartup "
               "enqueues a BrokerChange, the thread processes events in order; onBrokerFailure drops a dead "
               "broker; a new controller starts from an empty queue and reads /brokers/ids); "
               f"{KIP} Incompatible broker lifetime race condition")
def queue_changes_only_as_the_controller_does(s: Any, a: Action, t: Any) -> bool:
    # Without it, restarting another broker while broker 0 was the controller dropped the whole queue (the
    # mutation campaign's survivor `ctl < 1` for `ctl < 0`): FEAT-11 allows an empty queue, and a broker whose
    # registration is lost stays out of the live set with no other property noticing.
    q, r = s.registration_queue, t.registration_queue
    if t.controller < 0 or t.controller != s.controller:
        return r == ()  # the queue is the controller's: a new controller (or none) has an empty one
    name = a.name
    if name == "ProcessBrokerRegistration":
        return bool(q) and q[0] == a["broker"] and r == q[1:]
    if name == "StartBroker" and t.brokers[a["broker"]].status.name == "RUNNING":
        return bool(r == (*q, a["broker"]))
    if name == "RestartBroker" or (name == "DeliverFeaturesNotification"
                                   and t.brokers[a["broker"]].status.name != "RUNNING"):
        return r == tuple(x for x in q if x != a["broker"])  # the broker stopped: its registration is gone
    return bool(r == q)


@step_property("FEAT-15", "a min-level deprecation (the controller's DeprecateMinLevel; kip only, Kafka never shipped "
               "it) rewrites only finalized minimum levels: every finalized feature stays with its max level, and its "
               "min becomes the highest supported minimum among the live brokers that support it (never lowered, "
               "never above the max level)",
               source=f"{KIP} Feature version deprecation (the controller tracks the highest supported feature "
               "minimum version exported by any broker and persists it to ZK as the finalized minimum version "
               "level); Non-goals, 2 (deprecation increases the finalized minimum level X to Y > X)")
def deprecation_raises_to_the_highest_minimum(ctx: FeaturesContext, s: Any, a: Action, t: Any) -> bool:
    # Without it a deprecation past the live brokers' highest minimum, or one that counts brokers outside the
    # live set (stopped, exited, not yet registered), broke no property: under kip a broker's compatibility
    # reads only the max level, so a raised minimum never shows in FEAT-01 or FEAT-08.
    if a.name != "DeprecateMinLevel":
        return True
    if ctx.profile != "kip" or not _enabled(s):
        return False
    before, after = _node_features(s), _node_features(t)
    if set(before) != set(after) or before == after:
        return False
    live = [ctx.table[b.release] for b in s.brokers if b.registered and b.status.name == "RUNNING"]
    for f, (lo, hi) in before.items():
        highest = max((sup[f][0] for sup in live if f in sup), default=lo)
        if after[f] != (min(max(highest, lo), hi), hi):
            return False
    return True


@step_property("FEAT-16", "below migration_ibp_version a broker's read of /features (at startup, on a watch "
               "notification, or on the restart the IBP roll down makes) applies no validation and decodes "
               "nothing: the broker runs on and caches no features, serving no epoch (-1) under kafka, the node's "
               "version under kip (-1 without a node)",
               source=f"{KIP} Broker protections against race conditions (each broker will validate that its IBP "
               "version is at least migration_ibp_version before applying validations); Apache Kafka 2.8 "
               "KafkaServer (the FinalizedFeatureChangeListener is started only when "
               "config.isFeatureVersioningSupported, IBP >= KAFKA_2_7_IV0)")
def no_validation_below_the_migration_ibp(ctx: FeaturesContext, s: Any, a: Action, t: Any) -> bool:
    # Without it a broker below the migration IBP that decoded /features and applied the broker protections
    # (exiting on an incompatible node) broke no property: FEAT-13 says nothing of a cache below the IBP, and
    # an exited broker is outside FEAT-08 (the mutation campaign's survivor features system.py:347).
    # The reads are the ones made under the step's resulting IBP: a start, a notification, and on the IBP roll
    # down (SetIbp) the restart of every running broker.
    if t.ibp_enabled:
        return True
    if a.name == "SetIbp":
        readers = [i for i, b in enumerate(s.brokers) if b.status.name == "RUNNING"]
    elif a.name in ("StartBroker", "DeliverFeaturesNotification"):
        readers = [a["broker"]]
    else:
        return True
    epoch = -1 if s.znode is None else s.znode.version
    return all(t.brokers[i].status.name == "RUNNING" and t.brokers[i].cache == ()
               and t.brokers[i].cache_epoch == _uncached_epoch(ctx, epoch) for i in readers)


def _uncached_epoch(ctx: FeaturesContext, version: int) -> int:
    """The epoch a broker with no features cached serves for a node of ``version``: kafka, none (-1: Kafka 2.8's
    ApiVersions carries UNKNOWN_FINALIZED_FEATURES_EPOCH when its FinalizedFeatureCache is empty, which it is
    below KAFKA_2_7_IV0 and after a disabled node cleared it); kip, the node's version (the KIP is silent)."""
    return -1 if ctx.profile == "kafka" else version


@invariant("FEAT-13", "/features as ZooKeeper holds it is Kafka's FeatureZNode JSON (schema version 1, the KIP's 0 "
           "under kip, 2 for an enabled node under the 3.9 rules with max_version_level alone; "
           "status 1 enabled or 0 disabled, a disabled node empty; each feature exactly min_version_level "
           "and max_version_level, ints with 1 <= min <= max), and it is what the cluster acts on: an active "
           "controller has written the status its IBP asks for, and a running broker that has read the latest write "
           "serves its version as epoch and caches exactly its levels (none when disabled, and then, under kafka, "
           "no epoch: -1)",
           source=f"{KIP} Persistence of finalized feature version levels, Schema (JSON); Feature ZK node status; "
           "Apache Kafka 2.8 core/src/main/scala/kafka/zk/ZkData.scala (FeatureZNode.encode: version V1 = 1, "
           "status id, features toMap) and kafka/server/FinalizedFeatureChangeListener.scala (a broker caches "
           "the decoded node's features at the node's version)")
def znode_is_kafkas_json(ctx: FeaturesContext, s: Any) -> bool:
    # Stated over the bytes with json.loads (node_json), never through FeatureZNode.decode: a schema version
    # written wrong, status codes swapped, or a decoder that drops a branch all show here. A mutation campaign
    # found each of them surviving every other property while the node was an object in the state.
    z = s.znode
    if z is None:
        return s.controller < 0 and all(b.cache_epoch == -1 for b in s.brokers
                                        if b.status.name == "RUNNING" and b.notified)
    node = node_json(z.data)
    if node.problem is not None or node.version != schema_version(ctx, node.status):
        return False
    # "Feature ZK node status": Enabled is written only at or above migration_ibp_version, Disabled only below,
    # by the controller when it starts up; the IBP roll ends with an election (no controller in between).
    if s.controller >= 0 and node.status != (ENABLED if s.ibp_enabled else DISABLED):
        return False
    for b in s.brokers:
        if b.status.name != "RUNNING" or not b.notified:
            continue
        uncached = node.status == DISABLED or not s.ibp_enabled
        # FinalizedFeaturesEpoch is the node's ZooKeeper version; under kafka none (-1) with nothing cached.
        # The IBP roll restarts every running broker, so what one serves was read under the IBP it runs at.
        if b.cache_epoch != (_uncached_epoch(ctx, z.version) if uncached else z.version):
            return False
        if uncached:
            # Disabled: the listener clears the cache; below the IBP no listener runs and nothing is cached.
            if b.cache:
                return False
            continue
        cached = {n: (r.min_version_level, r.max_version_level) for n, r in b.cache}
        if cached != node.features:
            return False
    return True


# ---------------------------------------------------------------- liveness

@graph_property("FEAT-10", "every running broker can always catch up with /features",
                source=f"{KIP} Guarantees: brokers gradually receive notifications")
def everyone_caught_up(s: Any) -> bool:
    return all(b.notified for b in s.brokers if b.status.name == "RUNNING")


# ---------------------------------------------------------------- witnesses: the stories the configs cover

def _upgradable(ctx: FeaturesContext) -> bool:
    """Some release supports a level above 1 that the operator asks for: an upgrade can be finalized."""
    asked = {lvl for lvl in ctx.config.levels if lvl >= 2}
    return any(hi in asked or any(lo <= lvl <= hi for lvl in asked)
               for sup in ctx.table.values() for lo, hi in sup.values())


@witness("FEAT-W1", "a feature is finalized above version level 1 (an upgrade was applied, or a new cluster "
         "bootstrapped on a release that supports more)",
         source=f"{KIP} Use case (group_coordinator v1 -> v2); UpdateFeatures", when=_upgradable)
def upgrade_finalized(s: Any) -> bool:
    return _enabled(s) and any(hi >= 2 for _lo, hi in _node_features(s).values())


@witness("FEAT-W2", "a client learned the finalized features from a broker's ApiVersions",
         source=f"{KIP} Client discovery of finalized feature versions", when=lambda ctx: ctx.config.client)
def client_discovered(s: Any) -> bool:
    return bool(s.client.epoch >= 0)


@witness("FEAT-W3", "a cluster that started below migration_ibp_version finalizes features after the IBP roll",
         source=f"{KIP} Feature ZK node status; Deployment, phase 1",
         when=lambda ctx: ctx.config.max_ibp_changes >= 1 and False in ctx.config.initial_ibp)
def enabled_after_ibp_roll(s: Any) -> bool:
    return s.ibp_changes >= 1 and _enabled(s) and bool(_node_features(s))


@witness("FEAT-W4", "a broker shut down on a feature incompatibility (at startup or on a watch notification)",
         source=f"{KIP} Broker protections against race conditions, points 1 and 2",
         when=lambda ctx: ctx.config.max_restarts >= 1 and len(ctx.config.releases) >= 2)
def broker_protected(s: Any) -> bool:
    return any(b.status.name == "EXITED" for b in s.brokers)


@witness("FEAT-W5", "every finalized feature was deleted (an enabled /features node left empty after a write)",
         source=f"{KIP} Feature version deletion (UpdateFeatures with maxVersionLevel < 1)",
         when=lambda ctx: 0 in ctx.config.levels)
def all_deleted(s: Any) -> bool:
    return _enabled(s) and s.znode.version >= 1 and not _node_features(s)


def _deprecable(ctx: FeaturesContext) -> bool:
    """The controller can deprecate a level with one restart (kip only): a new cluster bootstraps the initial
    release's range [a, b] of some feature, and another release supports it from c > a up to at least b, so a
    broker bounced onto it runs against the bootstrapped node and raises the highest supported minimum."""
    c = ctx.config
    if not (ctx.profile == "kip" and c.deprecation and c.max_restarts >= 1 and True in c.initial_ibp
            and c.max_epoch >= 1):
        return False
    initial = ctx.table[c.initial_release]
    return any(f in sup and a < sup[f][0] <= b <= sup[f][1]
               for f, (a, b) in initial.items() for sup in ctx.table.values())


@witness("FEAT-W6", "the controller deprecated a finalized version level: a finalized minimum lies above the "
         "supported minimum of a live broker (one that still supports the older level)",
         source=f"{KIP} Feature version deprecation (the controller persists the highest supported minimum as the "
         "finalized minimum)", when=_deprecable)
def level_deprecated(ctx: FeaturesContext, s: Any) -> bool:
    if not _enabled(s):
        return False
    fin = _node_features(s)
    for b in s.brokers:
        if b.registered and b.status.name == "RUNNING":
            sup = ctx.table[b.release]
            if any(f in sup and sup[f][0] < lo for f, (lo, _hi) in fin.items()):
                return True
    return False


PROPERTIES = PropertySet.of(globals(), context=FeaturesContext.of)
