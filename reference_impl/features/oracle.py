"""The ``features`` protocol's Kafka oracle binding (``ProtocolEntry.oracle``): what the reference decides at a state,
put to Apache Kafka's own ZooKeeper-mode classes (kafka_oracle/features, its README).

A row checks the config under the ``kafka`` profile (Kafka in ZooKeeper mode) with the rules of the release's line
(``kafka_release``): "2.8" for 2.8.x and 3.2.x (finalized version ranges, node schema version 1; the zk-2.8 adapter),
"3.9" for 3.9.x (one finalized level per feature, node schema version 2 from IBP 3.3-IV0, ``ZkMetadataCache``,
``UpgradeType``; the zk-3.9 adapter). At every reachable state it asks:

* ``featureZNode.decode``: ``FeatureZNode.decode`` of the bytes ZooKeeper holds in the state (the status and the
  finalized ranges, or the exception's class and message), against ``FeaturesSystem.read``;
* ``featureZNode.encode``: ``FeatureZNode.encode`` of every node the controller writes from the state (an election's
  "Feature ZK node status" write, each operator request's outcome), against the bytes ``FeaturesSystem.store`` left
  in the successor, byte for byte;
* ``finalizedFeatureCache``: every broker that reads the node next (a running broker with a watch notification
  pending, a stopped broker's startup read), its ``FinalizedFeatureCache`` (its release's supported features, what
  it cached before) updated from the node: accepted or refused (the broker runs on or exits in the successor), the
  refusal's message (``api.FinalizedFeatureCache``) and the cache after (the successor's broker);
* ``incompatibleFeatures``: ``BrokerFeatures.incompatibleFeatures`` / ``hasIncompatibleFeatures`` of each release of
  the config against the node's finalized features;
* ``versionRange``: at the initial states, ``SupportedVersionRange`` of every range the config's releases support and
  ``FinalizedVersionRange`` of every range a controller of one of them could finalize for a level the operator asks
  for (constructed: its toString and toMap; or refused with the message); at every state, each finalized range the
  node holds;
* ``admin.updateFeatures``: at the initial states, every operator request of the config as the Admin client takes it
  (``FeatureUpdate``'s check, ``KafkaAdminClient.updateFeatures``' checks, the ``UpdateFeaturesRequestData`` it
  builds), against ``api.AdminFeatureUpdate`` and ``api.admin_update_features_request``. At 2.8.x and 3.2.x the
  operator's dry runs are not asked: that Admin client has no ``validateOnly`` (it came with KIP-778 in 3.3), and
  without it they are the non-dry requests, which are asked; at 3.9.x they are asked with ``validateOnly``.

The controller's own validation (``KafkaController.processFeatureUpdates``) is private inside the ZooKeeper
controller and is not asked here: it runs on a real cluster in the next tier.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from reference_impl.features.api import (
    RELEASE_IBP,
    AdminFeatureUpdate,
    BrokerFeatures,
    FeatureCacheUpdateException,
    FeatureZNode,
    FinalizedFeatures,
    FinalizedFeaturesAndEpoch,
    FinalizedVersionRange,
    JsonMappingException,
    SupportedFeatures,
    SupportedVersionRange,
    admin_update_features_request,
    java_hash_map_order,
)
from reference_impl.features.api import FinalizedFeatureCache as RefCache
from reference_impl.features.config import FeaturesConfig
from reference_impl.features.state import Broker, BrokerStatus, FeaturesState, Unreadable, ZNode
from reference_impl.features.system import FeaturesSystem
from rollcheck.oracle.binding import Adapter, KafkaBug, OracleRelease, Question
from rollcheck.oracle.compare import first_difference, initial_states

_HANDLER = "kafka.server.RollcheckFeatures"
_CLASSES = ("kafka.zk.FeatureZNode", "kafka.server.FinalizedFeatureCache", "kafka.server.BrokerFeatures",
            "org.apache.kafka.common.feature.FinalizedVersionRange",
            "org.apache.kafka.common.feature.SupportedVersionRange", "org.apache.kafka.clients.admin.FeatureUpdate",
            "org.apache.kafka.clients.admin.KafkaAdminClient")
_CLASSES_39 = ("kafka.zk.FeatureZNode", "kafka.server.metadata.ZkMetadataCache", "kafka.server.BrokerFeatures",
               "org.apache.kafka.server.common.FinalizedFeatures",
               "org.apache.kafka.common.feature.SupportedVersionRange", "org.apache.kafka.clients.admin.FeatureUpdate",
               "org.apache.kafka.clients.admin.KafkaAdminClient")
ADAPTERS: tuple[Adapter, ...] = (Adapter("zk-2.8", _HANDLER, _CLASSES), Adapter("zk-3.9", _HANDLER, _CLASSES_39))

_IAE = "java.lang.IllegalArgumentException"
_JSON_MAPPING = "com.fasterxml.jackson.databind.JsonMappingException"

_CI = ("ci", "nightly")
# Every 2.8.x, 3.2.x and 3.9.x release Maven Central serves (kafka_2.13 and kafka-clients, main jars). 2.8.0 .. 3.2.3
# have the same signatures and bodies of the classes asked (ZkData.scala FeatureZNode, BrokerFeatures.scala,
# clients/.../common/feature; FinalizedFeatureCache.scala gained a KRaft-only update(FeaturesDelta) in 3.0): one
# adapter, the reference's "2.8" rules. 3.9.x (3.3 and later): one finalized level per feature, node schema version 2,
# ZkMetadataCache, UpgradeType (kafka_oracle/features/README.md): the zk-3.9 adapter, the reference's "3.9" rules.
RELEASES: tuple[OracleRelease, ...] = (
    OracleRelease("2.8.0", "2.8", "zk-2.8"),
    OracleRelease("2.8.1", "2.8", "zk-2.8"),
    OracleRelease("2.8.2", "2.8", "zk-2.8", _CI),
    OracleRelease("3.2.0", "3.2", "zk-2.8"),
    OracleRelease("3.2.1", "3.2", "zk-2.8"),
    OracleRelease("3.2.2", "3.2", "zk-2.8"),
    OracleRelease("3.2.3", "3.2", "zk-2.8", _CI),
    OracleRelease("3.9.0", "3.9", "zk-3.9"),
    OracleRelease("3.9.1", "3.9", "zk-3.9"),
    OracleRelease("3.9.2", "3.9", "zk-3.9", _CI),
)
_RULES = {"zk-2.8": "2.8", "zk-3.9": "3.9"}  # the reference's kafka_release per adapter epoch
# Below IBP 2.7-IV0 (feature versioning off): what a 3.9 row's controller runs at when the model's IBP is low.
_LOW_IBP = "2.6-IV0"


def ranges(features: Iterable[tuple[str, SupportedVersionRange | FinalizedVersionRange]]) -> dict[str, list[int]]:
    """Features as the adapter takes and answers them: {name: [min, max]}, sorted by name."""
    return {name: [r.min(), r.max()] for name, r in sorted(features)}


def finalized(features: FinalizedFeatures, rules: str) -> dict[str, Any]:
    """Finalized features in the adapter's normal form: 2.8 ranges; 3.9 one level per feature (the reference holds
    (level, level): a range that is not one level is shown as the range, which no 3.9 answer equals)."""
    if rules != "3.9":
        return ranges(features)
    return {name: r.max_version_level if r.min_version_level == r.max_version_level
            else [r.min_version_level, r.max_version_level] for name, r in sorted(features)}


def exception_answer(exc: Exception) -> dict[str, Any]:
    """The reference's refusal as the adapter reports Kafka's: its class (JsonMappingException for Jackson's,
    IllegalArgumentException for the rest of the ValueError family) and message."""
    cls = _JSON_MAPPING if isinstance(exc, JsonMappingException) else _IAE
    return {"exception": cls, "message": str(exc)}


def decode_expected(decoded: FeatureZNode | Unreadable, rules: str = "2.8") -> dict[str, Any]:
    if isinstance(decoded, Unreadable):
        return {"exception": _JSON_MAPPING if decoded.fatal else _IAE, "message": decoded.message}
    return {"status": decoded.status.value, "features": finalized(decoded.features, rules)}


def range_expected(kind: str, lo: int, hi: int) -> dict[str, Any]:
    try:
        r: SupportedVersionRange | FinalizedVersionRange = (
            SupportedVersionRange(lo, hi) if kind == "supported" else FinalizedVersionRange(lo, hi))
    except ValueError as exc:
        return exception_answer(exc)
    return {"string": str(r), "map": dict(sorted(r.to_map().items()))}


def admin_expected(updates: Iterable[tuple[str, int, bool]], rules: str = "2.8", dry_run: bool = False
                   ) -> dict[str, Any]:
    try:
        asked = {f: AdminFeatureUpdate(level, allow, rules) for f, level, allow in updates}
        request = admin_update_features_request(asked, validate_only=dry_run)
    except ValueError as exc:
        return exception_answer(exc)
    if rules == "3.9":
        return {"featureUpdates": [{"feature": u.feature, "maxVersionLevel": u.max_version_level,
                                    "upgradeType": asked[u.feature].upgrade_type} for u in request.feature_updates],
                "validateOnly": request.dry_run}
    return {"featureUpdates": [{"feature": u.feature, "maxVersionLevel": u.max_version_level,
                                "allowDowngrade": u.allow_downgrade} for u in request.feature_updates]}


def _cached(b: Broker, rules: str = "2.8") -> dict[str, Any] | None:
    return None if b.cache_epoch < 0 else {"features": finalized(b.cache, rules), "epoch": b.cache_epoch}


class FeaturesOracle:
    """The binding (see the module docstring)."""

    protocol = "features"
    adapters_dir = "kafka_oracle/features"
    adapters = ADAPTERS
    releases = RELEASES
    bugs: tuple[KafkaBug, ...] = ()

    def config_for(self, config: Any, release: OracleRelease) -> Any:
        if not isinstance(config, FeaturesConfig):
            raise ValueError(f"not a features config: {type(config).__name__}")
        # The kafka profile models ZooKeeper mode: the 2.8 rules for 2.8.x and 3.2.x, the 3.9 rules for 3.9.x.
        return dataclasses.replace(config, profile="kafka", kafka_release=_RULES[release.adapter])

    def questions(self, system: Any, state: Any, release: OracleRelease) -> Iterable[Question]:
        assert isinstance(system, FeaturesSystem) and isinstance(state, FeaturesState)
        out: list[Question] = []
        if state in initial_states(system):
            out.extend(_config_questions(system))
        z = state.znode
        if z is not None:
            out.extend(_memo(system, "_memo_oracle_node", z, lambda: tuple(_node_questions(system, z))))
        out.extend(_write_questions(system, state))
        out.extend(_cache_questions(system, state))
        return out

    def compare(self, question: Question, answer: Any) -> str | None:
        if isinstance(answer, Mapping):
            if "exception" in answer:  # the class and message: Kafka's cause chain is not modelled
                answer = {"exception": answer.get("exception"), "message": answer.get("message")}
            elif question.kind == "featureZNode.decode":
                # the status and features; the node's schema version (3.3+ answers it) is compared byte for byte
                # by featureZNode.encode of every node written
                answer = {k: answer.get(k) for k in ("status", "features")}
            elif isinstance(answer.get("decodeError"), Mapping):
                error = answer["decodeError"]
                answer = {**answer, "decodeError": {"exception": error.get("exception"),
                                                    "message": error.get("message")}}
        if answer == question.expected:
            return None
        return first_difference(question.expected, answer)


def _memo(system: FeaturesSystem, name: str, key: Any, build: Any) -> tuple[Question, ...]:
    memo: dict[Any, tuple[Question, ...]] = system.__dict__.setdefault(name, {})
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = build()
    return hit



def _config_questions(system: FeaturesSystem) -> tuple[Question, ...]:
    """What depends on the config alone: its ranges and the Admin client's take on its requests (asked at the
    initial states; the same Question objects each time)."""
    cached = system.__dict__.get("_memo_oracle_config")
    if cached is not None:
        return tuple(cached)
    c = system.config
    rules = c.kafka_release
    out: list[Question] = []
    seen: set[tuple[str, int, int]] = set()
    for rel in c.releases:
        for _name, lo, hi in rel.features:
            seen.add(("supported", lo, hi))
            if rules != "3.9":  # 3.3+ has no FinalizedVersionRange
                for level in c.levels:  # what a controller on this release finalizes for the level (own min)
                    seen.add(("finalized", lo, level))
    for kind, lo, hi in sorted(seen):
        out.append(Question("versionRange", {"op": "versionRange", "kind": kind, "min": lo, "max": hi},
                            range_expected(kind, lo, hi)))
    for req in c.operator_requests():
        if req.dry_run and rules != "3.9":
            continue  # no validateOnly in the 2.8-3.2 Admin client (the module docstring)
        updates = [(u.feature, u.max_version_level, u.allow_downgrade) for u in req.feature_updates]
        request: dict[str, Any] = {"op": "admin.updateFeatures", "updates": [
            {"feature": f, "level": lvl, "allowDowngrade": allow} for f, lvl, allow in updates]}
        if rules == "3.9":
            request["validateOnly"] = req.dry_run
        out.append(Question("admin.updateFeatures", request, admin_expected(updates, rules, req.dry_run)))
    system.__dict__["_memo_oracle_config"] = tuple(out)
    return tuple(out)


def _node_questions(system: FeaturesSystem, z: ZNode) -> Iterable[Question]:
    """What depends on /features alone: its decoding, every release against its features, its ranges."""
    rules = system.config.kafka_release
    decoded = system.read(z)
    assert decoded is not None
    yield Question("featureZNode.decode", {"op": "featureZNode.decode", "data": z.data.hex()},
                   decode_expected(decoded, rules))
    if not isinstance(decoded, FeatureZNode):
        return
    held = decoded.features
    for name, supported in sorted(system.releases.items()):
        features = BrokerFeatures(supported)
        yield Question("incompatibleFeatures", {"op": "incompatibleFeatures", "supported": ranges(supported),
                                                "finalized": finalized(held, rules)},
                       {"incompatible": finalized(features.incompatible_features(held), rules),
                        "has": BrokerFeatures.has_incompatible_features(supported, held)},
                       action=f"release {name}")
    if rules == "3.9":
        return  # no FinalizedVersionRange in 3.3+
    for _name, r in held:
        lo, hi = r.min_version_level, r.max_version_level
        yield Question("versionRange", {"op": "versionRange", "kind": "finalized", "min": lo, "max": hi},
                       range_expected("finalized", lo, hi))


def _encode_question(system: FeaturesSystem, written: ZNode, label: str, ibp_enabled: bool) -> Question:
    node = _written_node(system, written)
    rules = system.config.kafka_release
    request: dict[str, Any] = {"op": "featureZNode.encode", "status": node.status.value}
    if rules == "3.9":
        # 3.3+: FeatureZNode.apply(the controller's IBP, status, levels) picks the schema version; the levels in
        # the order of the map the reference's controller holds (a java.util.HashMap's, see api._encode_39).
        levels = finalized(node.features, rules)
        request["features"] = {name: levels[name] for name in java_hash_map_order(sorted(levels))}
        request["ibp"] = RELEASE_IBP[rules] if ibp_enabled else _LOW_IBP
    else:
        request["features"] = ranges(node.features)
    return Question("featureZNode.encode", request, {"data": written.data.hex()}, action=label)


def _written_node(system: FeaturesSystem, written: ZNode) -> FeatureZNode:
    """The node whose bytes ``FeaturesSystem.store`` wrote (its memo, read backwards)."""
    inverse: dict[ZNode, FeatureZNode] = system.__dict__.setdefault("_memo_oracle_written", {})
    hit = inverse.get(written)
    if hit is None:
        for node, stored in system._encoded.items():
            inverse[stored] = node
        hit = inverse[written]
    return hit


def _write_questions(system: FeaturesSystem, s: FeaturesState) -> list[Question]:
    """``featureZNode.encode`` of every node the controller writes from ``s``: an election's status write and each
    operator request's outcome (the system's own steps; the node the successor holds)."""
    out: list[Question] = []
    if s.controller < 0:
        for i, b in enumerate(s.brokers):
            if b.status is BrokerStatus.RUNNING:
                # What an election writes reads the node, the IBP and the elected broker's release only
                # (setup_feature_versioning): states that agree on them share the Question objects.
                def elect(i: int = i) -> tuple[Question, ...]:
                    t = system.elect_controller(s, i)
                    if t.znode is not None and t.znode != s.znode:
                        return (_encode_question(system, t.znode, str(system._elect_labels[i]), s.ibp_enabled),)
                    return ()
                out.extend(_memo(system, "_memo_oracle_elect", (i, s.znode, s.ibp_enabled, b.release), elect))
    elif s.znode is not None and s.znode.version < system.config.max_epoch:
        # operator_outcomes' own memo key: the node, the live brokers' releases, the controller's, the IBP.
        key = (s.znode, tuple(b.release for b in s.brokers if b.registered), s.brokers[s.controller].release,
               s.ibp_enabled)
        out.extend(_memo(system, "_memo_oracle_operator", key, lambda: tuple(
            _encode_question(system, after, str(label), s.ibp_enabled) for label, after in system.operator_outcomes(s)
            if after is not None and after != s.znode)))
    return out


def _cache_questions(system: FeaturesSystem, s: FeaturesState) -> list[Question]:
    """Each broker that reads /features next (its feature listener runs only at an IBP of 2.7-IV0 or above):
    its cache update, as the system's step leaves the broker."""
    if not s.ibp_enabled:
        return []
    out: list[Question] = []
    for i, b in enumerate(s.brokers):
        if (b.status is BrokerStatus.RUNNING and not b.notified) or b.status is BrokerStatus.STOPPED:
            # The broker's read depends on the node, the IBP and the broker alone (FeaturesSystem._broker_reads).
            out.extend(_memo(system, "_memo_oracle_cache", (i, s.znode, s.ibp_enabled, b),
                             lambda i=i: (_cache_question(system, s, i),)))
    return out


def _cache_question(system: FeaturesSystem, s: FeaturesState, i: int) -> Question:
    z = s.znode
    b = s.brokers[i]
    rules = system.config.kafka_release
    if b.status is BrokerStatus.RUNNING:
        t = system.deliver_notification(s, i)
        label, existing = system._notify_labels[i], _cached(b, rules)
    else:
        t = system.start_broker(s, i)  # a new process: its cache starts empty
        label, existing = system._start_labels[i], None
    supported = system.supported(b)
    after = t.brokers[i]
    accepted = after.status is BrokerStatus.RUNNING
    expected: dict[str, Any] = {"accepted": accepted}
    decoded = system.read(z)
    if isinstance(decoded, Unreadable):
        expected = {"decodeError": decode_expected(decoded, rules), "cache": existing}
    else:
        if not accepted:
            expected["message"] = _refusal(supported, b.cache if existing is not None else None, b.cache_epoch,
                                           decoded, rules)
        expected["cache"] = _cached(after, rules) if accepted else existing
    request = {"op": "finalizedFeatureCache", "supported": ranges(supported), "existing": existing,
               "data": None if z is None else z.data.hex(), "version": -1 if z is None else z.version}
    if rules == "3.9":
        request["ibp"] = RELEASE_IBP[rules]  # the listener runs at 2.7-IV0 and above: the row's IBP
    return Question("finalizedFeatureCache", request, expected, action=str(label))


def _refusal(supported: SupportedFeatures, held: FinalizedFeatures | None, epoch: int, node: FeatureZNode | None,
             rules: str) -> str | None:
    """The reference's FinalizedFeatureCache's message for the update the system refused (None if it accepts):
    the broker's cache holding ``held`` at ``epoch`` (None: empty)."""
    cache = RefCache(supported, release=rules)
    if held is not None:
        cache = dataclasses.replace(cache, features_and_epoch=FinalizedFeaturesAndEpoch(held, epoch))
    try:
        cache.update_latest_or_throw(node)
    except FeatureCacheUpdateException as exc:
        return str(exc)
    return None



ORACLE = FeaturesOracle()
