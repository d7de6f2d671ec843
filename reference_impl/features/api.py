"""KIP-584 at the API level: version ranges, the feature node, ``UpdateFeatures`` and its rules.

Names follow the KIP and Kafka's ZooKeeper-mode code (``SupportedVersionRange``,
``FinalizedVersionRange``, ``FeatureZNode``, ``KafkaController.processFeatureUpdates``). Everything
here is immutable: the controller returns its next self instead of mutating.

Two semantics profiles (``profile``): ``kip`` follows the KIP text; ``kafka`` follows what Apache Kafka
2.7-3.x shipped in ZooKeeper mode (``core/.../controller/KafkaController.scala`` ``validateFeatureUpdate``
and ``newFinalizedVersionRangeOrIncompatibilityError``, ``core/.../server/KafkaApis.scala``
``handleUpdateFeatures``, ``core/.../zk/ZkData.scala`` ``FeatureZNode``, ``core/.../server/BrokerFeatures.scala``,
``core/.../server/FinalizedFeatureCache.scala``: a broker's cache of the finalized features and their epoch).
The version ranges, their maps and strings, and the Admin client's checks are Kafka's
(``clients/.../common/feature/*.java``, ``clients/.../admin/FeatureUpdate.java``) in both profiles.
Two update semantics (``semantics``): ``partial`` (KIP-584 as first written: "The API is not
transactional") and ``atomic`` (the revision: "if a single [update] can not be done, none of feature
updates are done").
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

Profile = str  # "kip" | "kafka"
Semantics = str  # "partial" | "atomic"


class Errors(enum.IntEnum):
    """Kafka's error codes for UpdateFeatures (``clients/.../protocol/Errors.java``)."""

    NONE = 0
    CLUSTER_AUTHORIZATION_FAILED = 31
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    FEATURE_UPDATE_FAILED = 96

    @property
    def default_message(self) -> str | None:
        """``Errors.message()``: what ``new ApiError(error)`` carries when no message is given."""
        return _DEFAULT_MESSAGES.get(self)

    @property
    def exception_class(self) -> str | None:
        """The class of ``Errors.exception()``, as the Admin client's callers see it (``Throwable.toString``)."""
        return _EXCEPTION_CLASSES.get(self)

    def exception_string(self, message: str | None) -> str:
        """``error.exception(message).toString()``: a null message falls back to the default one."""
        text = message if message is not None else self.default_message
        return f"{self.exception_class}: {text}" if text is not None else str(self.exception_class)


_DEFAULT_MESSAGES = {
    Errors.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    Errors.NOT_CONTROLLER: "This is not the correct controller for this cluster.",
    Errors.INVALID_REQUEST: "This most likely occurs because of a request being malformed by the client library or "
                            "the message was sent to an incompatible broker. See the broker logs for more details.",
    Errors.FEATURE_UPDATE_FAILED: "Unable to update finalized features due to an unexpected server error.",
}
_EXCEPTION_CLASSES = {
    Errors.CLUSTER_AUTHORIZATION_FAILED: "org.apache.kafka.common.errors.ClusterAuthorizationException",
    Errors.NOT_CONTROLLER: "org.apache.kafka.common.errors.NotControllerException",
    Errors.INVALID_REQUEST: "org.apache.kafka.common.errors.InvalidRequestException",
    Errors.FEATURE_UPDATE_FAILED: "org.apache.kafka.common.errors.FeatureUpdateFailedException",
}


class FeatureZNodeStatus(enum.Enum):
    """KIP-584 "Feature ZK node status": Disabled (0) / Enabled (1)."""

    DISABLED = 0
    ENABLED = 1


def _check_range(min_value: int, max_value: int) -> None:
    # BaseVersionRange's constructor check, with its message (IllegalArgumentException there).
    if min_value < 1 or max_value < 1 or max_value < min_value:
        raise ValueError("Expected minValue >= 1, maxValue >= 1 and maxValue >= minValue, but received "
                         f"minValue: {min_value}, maxValue: {max_value}")


def _map_string(values: Mapping[str, object]) -> str:
    # BaseVersionRange.mapToString: "key:value" pairs joined by ", ".
    return ", ".join(f"{k}:{v}" for k, v in values.items())


def _value_or_throw(key: str, values: Mapping[str, int]) -> int:
    # BaseVersionRange.valueOrThrow.
    value = values.get(key)
    if value is None:
        raise ValueError(f"{key} absent in [{_map_string(values)}]")
    return value


@dataclass(frozen=True, order=True)
class SupportedVersionRange:
    """What a broker binary supports for one feature: ``1 <= min_version <= max_version``
    (``clients/.../common/feature/SupportedVersionRange.java``)."""

    MIN_KEY: ClassVar[str] = "min_version"
    MAX_KEY: ClassVar[str] = "max_version"

    min_version: int
    max_version: int

    def __post_init__(self) -> None:
        _check_range(self.min_version, self.max_version)

    def __contains__(self, level: object) -> bool:
        return isinstance(level, int) and self.min_version <= level <= self.max_version

    def min(self) -> int:
        return self.min_version

    def max(self) -> int:
        return self.max_version

    def to_map(self) -> dict[str, int]:
        return {self.MIN_KEY: self.min_version, self.MAX_KEY: self.max_version}

    @classmethod
    def from_map(cls, values: Mapping[str, int]) -> SupportedVersionRange:
        return cls(_value_or_throw(cls.MIN_KEY, values), _value_or_throw(cls.MAX_KEY, values))

    def __str__(self) -> str:
        return f"SupportedVersionRange[{_map_string(self.to_map())}]"


@dataclass(frozen=True, order=True)
class FinalizedVersionRange:
    """Cluster-wide finalized levels of one feature: ``1 <= min_version_level <= max_version_level``
    (``clients/.../common/feature/FinalizedVersionRange.java``)."""

    MIN_KEY: ClassVar[str] = "min_version_level"
    MAX_KEY: ClassVar[str] = "max_version_level"

    min_version_level: int
    max_version_level: int

    def __post_init__(self) -> None:
        _check_range(self.min_version_level, self.max_version_level)

    @classmethod
    def unchecked(cls, min_version_level: int, max_version_level: int) -> FinalizedVersionRange:
        """A range without the constructor's check: the symbolic model must be able to build any state,
        a bad range included, or the property "1 <= min <= max" could never be seen to fail there."""
        r = object.__new__(cls)
        object.__setattr__(r, "min_version_level", min_version_level)
        object.__setattr__(r, "max_version_level", max_version_level)
        return r

    @staticmethod
    def of(min_version_level: int, max_version_level: int) -> FinalizedVersionRange:
        return FinalizedVersionRange(min_version_level, max_version_level)

    def min(self) -> int:
        return self.min_version_level

    def max(self) -> int:
        return self.max_version_level

    def is_incompatible_with(self, supported: SupportedVersionRange) -> bool:
        """``isIncompatibleWith``: the finalized range does not lie inside the supported range."""
        return self.min_version_level < supported.min_version or self.max_version_level > supported.max_version

    def to_map(self) -> dict[str, int]:
        return {self.MIN_KEY: self.min_version_level, self.MAX_KEY: self.max_version_level}

    @classmethod
    def from_map(cls, values: Mapping[str, int]) -> FinalizedVersionRange:
        return cls(_value_or_throw(cls.MIN_KEY, values), _value_or_throw(cls.MAX_KEY, values))

    def __str__(self) -> str:
        return f"FinalizedVersionRange[{_map_string(self.to_map())}]"


# A broker's supported features and the finalized features are kept as sorted tuples of pairs so that
# they are hashable and canonical (states are immutable).
SupportedFeatures = tuple[tuple[str, SupportedVersionRange], ...]
FinalizedFeatures = tuple[tuple[str, FinalizedVersionRange], ...]


def _require_features(items: object) -> None:
    # Features' constructor: Objects.requireNonNull(features, ...) (a NullPointerException there).
    if items is None:
        raise TypeError("Provided features can not be null.")


def supported_features(items: Mapping[str, tuple[int, int]] | Iterable[tuple[str, tuple[int, int]]]
                       ) -> SupportedFeatures:
    _require_features(items)
    pairs = items.items() if isinstance(items, Mapping) else items
    return tuple(sorted((name, SupportedVersionRange(lo, hi)) for name, (lo, hi) in pairs))


def finalized_features(items: Mapping[str, tuple[int, int]]) -> FinalizedFeatures:
    _require_features(items)
    return tuple(sorted((name, FinalizedVersionRange(lo, hi)) for name, (lo, hi) in items.items()))


def lookup(features: tuple[tuple[str, object], ...], name: str) -> object | None:
    for n, r in features:
        if n == name:
            return r
    return None


# Kafka's ``Features`` (a map of name -> range) over the tuples above: toMap, from*FeaturesMap, toString.
def features_to_map(features: SupportedFeatures | FinalizedFeatures) -> dict[str, dict[str, int]]:
    return {name: r.to_map() for name, r in features}


def supported_features_from_map(values: Mapping[str, Mapping[str, int]]) -> SupportedFeatures:
    return tuple(sorted((name, SupportedVersionRange.from_map(m)) for name, m in values.items()))


def finalized_features_from_map(values: Mapping[str, Mapping[str, int]]) -> FinalizedFeatures:
    return tuple(sorted((name, FinalizedVersionRange.from_map(m)) for name, m in values.items()))


def features_str(features: SupportedFeatures | FinalizedFeatures) -> str:
    return "Features{" + ", ".join(f"({name} -> {r})" for name, r in features) + "}"


class JsonMappingException(ValueError):
    """Jackson's ``JsonMappingException`` as Kafka's JSON helpers raise it (a missing field, a value of the
    wrong type). A ``ValueError`` here so that every decoding failure is one type for callers."""


def _json_str(value: object) -> str:
    # Jackson's JsonNode.toString: compact JSON.
    return json.dumps(value, separators=(",", ":"))


def _json_int(value: object) -> int:
    # kafka.utils.json.DecodeJson.IntDecodeJson: only a JSON int (Jackson's isInt: 32-bit) decodes.
    if isinstance(value, bool) or not isinstance(value, int) or not -2**31 <= value < 2**31:
        raise JsonMappingException(f"Expected `Int` value, received {_json_str(value)}")
    return value


def _json_object(value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise JsonMappingException(f"Expected JSON object, received {_json_str(value)}")
    return value


def _java_map_str(values: Mapping[str, Mapping[str, int]]) -> str:
    # java.util.AbstractMap.toString of the nested map Kafka builds while decoding.
    inner = (k + "={" + ", ".join(f"{lk}={lv}" for lk, lv in v.items()) + "}" for k, v in values.items())
    return "{" + ", ".join(inner) + "}"


def _java_string_hash(text: str) -> int:
    # java.lang.String.hashCode over UTF-16 code units, as a signed 32-bit value's bits.
    h = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h


def java_hash_map_order(keys: list[str]) -> list[str]:
    """The iteration order of a ``java.util.HashMap`` filled with ``keys`` in this order: bucket by bucket
    (``hash ^ hash >>> 16`` masked by the table size, 16 doubled while the size exceeds 3/4 of it), each bucket in
    insertion order (a bucket is a list until it holds 8 entries, which a feature map never does)."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str) -> int:
        h = _java_string_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(keys, key=bucket)  # sorted() is stable: insertion order within a bucket


@dataclass(frozen=True)
class FeatureZNode:
    """The feature ZooKeeper node (``core/.../zk/ZkData.scala`` ``FeatureZNode``).

    ``epoch`` is the ZooKeeper version of the node, which the KIP exposes as ``FinalizedFeaturesEpoch``
    and which rises by one on every write ("Upon successful write, ZK should automatically increment
    the version of the node by 1"). It lives in the node's Stat, not in its JSON: ``encode`` leaves it out
    and ``decode`` takes it as an argument. The JSON's own ``version`` key is the schema version; it and
    the node's path differ by profile (``schema_version``, ``path``).

    ``encode`` / ``decode`` are Kafka's functions with Kafka's error messages, so their profile defaults to
    ``kafka``; under ``kip`` they write and accept the KIP's schema version 0.
    """

    V1: ClassVar[int] = 1  # Kafka: "V1 contains 'version', 'status' and 'features' keys"
    CURRENT_VERSION: ClassVar[int] = 1
    KIP_VERSION: ClassVar[int] = 0  # the KIP's schema example: "version": 0

    status: FeatureZNodeStatus
    features: FinalizedFeatures
    epoch: int = 0

    @staticmethod
    def path(profile: Profile = "kafka") -> str:
        # The KIP proposes '/features'; Kafka shipped '/feature'.
        return "/feature" if profile == "kafka" else "/features"

    @staticmethod
    def schema_version(profile: Profile = "kafka") -> int:
        return FeatureZNode.CURRENT_VERSION if profile == "kafka" else FeatureZNode.KIP_VERSION

    def get(self, name: str) -> FinalizedVersionRange | None:
        r = lookup(self.features, name)
        return r if isinstance(r, FinalizedVersionRange) else None

    def write(self, status: FeatureZNodeStatus, features: FinalizedFeatures) -> FeatureZNode:
        return FeatureZNode(status, features, self.epoch + 1)

    def encode(self, profile: Profile = "kafka", release: str = "2.8") -> bytes:
        """``FeatureZNode.encode``: ``{"version":..,"status":0|1,"features":{f:{"min_version_level":..,
        "max_version_level":..}}}``. ``release`` "3.9" (kafka profile): Kafka 3.3 and later (:func:`_encode_39`)."""
        if profile == "kafka" and release == "3.9":
            return _encode_39(self)
        if profile != "kafka":
            return _json_str({"version": FeatureZNode.schema_version(profile), "status": self.status.value,
                              "features": features_to_map(self.features)}).encode("utf-8")
        # Kafka's bytes (Apache Kafka 2.8.2 / 3.2.3 core/src/main/scala/kafka/zk/ZkData.scala FeatureZNode.encode):
        # Jackson writes the maps in their iteration order, the three keys in a scala.collection.mutable.HashMap's
        # ("features", "version", "status") and the features in a java.util.HashMap's (Features.toMap collects
        # into one), each range as BaseVersionRange.toMap's min then max (checked against the jars by the oracle:
        # reference_impl/features/oracle.py, featureZNode.encode).
        features = features_to_map(self.features)
        ordered = {name: features[name] for name in java_hash_map_order(list(features))}
        return ('{"features":' + _json_str(ordered) + ',"version":' + str(FeatureZNode.schema_version(profile))
                + ',"status":' + str(self.status.value) + "}").encode("utf-8")

    @staticmethod
    def decode(data: bytes | str, epoch: int = 0, profile: Profile = "kafka", release: str = "2.8") -> FeatureZNode:
        """``FeatureZNode.decode``: its checks in Kafka's order, with its messages. Every failure is a
        ``ValueError`` (Kafka: IllegalArgumentException, or Jackson's JsonMappingException for a missing
        ``version`` or a value of the wrong type). ``release`` "3.9" (kafka profile): :func:`_decode_39`."""
        text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
        if profile == "kafka" and release == "3.9":
            return _decode_39(text, epoch)
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"Failed to parse feature information: {text}") from exc
        info = _json_object(parsed)
        if "version" not in info:
            raise JsonMappingException("No such field exists: `version`")
        version = _json_int(info["version"])
        if version < FeatureZNode.schema_version(profile):
            raise ValueError(f"Unsupported version: {version} of feature information: {text}")
        raw = info.get("features")
        if raw is None:
            raise ValueError(f"Features map can not be absent in: {text}")
        features_map = {name: {k: _json_int(v) for k, v in _json_object(m).items()}
                        for name, m in _json_object(raw).items()}
        raw_status = info.get("status")
        if raw_status is None:
            raise ValueError(f"Status can not be absent in feature information: {text}")
        status_id = _json_int(raw_status)
        status = next((st for st in FeatureZNodeStatus if st.value == status_id), None)
        if status is None:
            # Kafka formats the Option it holds: "Some(2)".
            raise ValueError(f"Malformed status: Some({status_id}) found in feature information: {text}")
        try:
            features = finalized_features_from_map(features_map)
        except ValueError as exc:
            raise ValueError("Unable to convert to finalized features from map: "
                             f"{_java_map_str(features_map)}") from exc
        return FeatureZNode(status, features, epoch)


# Kafka 3.3 and later in ZooKeeper mode (``kafka_release`` "3.9"; Apache Kafka 3.9.0-rc3
# core/src/main/scala/kafka/zk/ZkData.scala FeatureZNode): a finalized feature is one level, here the range
# (level, level) so that the rest of the model keeps one shape; the node's schema version is 2 from IBP 3.3-IV0
# (FeatureZNode.apply) and 1 below. A 3.9 row's two IBPs are 3.9-IV0 (versioning enabled, the nodes written
# Enabled) and one below 2.7-IV0 (the nodes written Disabled), so version 2 is exactly the Enabled nodes.
ZK_V1 = 1
ZK_V2 = 2
RELEASE_IBP = {"3.9": "3.9-IV0"}  # the inter.broker.protocol.version a row of the release runs at


def zk_node_version(status: FeatureZNodeStatus) -> int:
    """The schema version a 3.9 controller writes the node at (see above)."""
    return ZK_V2 if status is FeatureZNodeStatus.ENABLED else ZK_V1


def _encode_39(node: FeatureZNode) -> bytes:
    # FeatureZNode.encode at 3.9: V1 writes each level as max then min (a scala Map(max -> l, min -> l)), V2 the max
    # only; the keys as 2.8's (a scala mutable.HashMap: features, version, status). The features follow the map the
    # node holds: the controller's (a scala mutable.HashMap, whose order for these keys is java.util.HashMap's).
    version = zk_node_version(node.status)
    levels = {name: r.max_version_level for name, r in node.features}
    out = {}
    for name in java_hash_map_order(list(levels)):
        out[name] = ({"max_version_level": levels[name], "min_version_level": levels[name]} if version == ZK_V1
                     else {"max_version_level": levels[name]})
    return ('{"features":' + _json_str(out) + ',"version":' + str(version) + ',"status":' + str(node.status.value)
            + "}").encode("utf-8")


def _decode_39(text: str, epoch: int) -> FeatureZNode:
    # FeatureZNode.decode / decodeFeature at 3.9, their checks in order and their messages.
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"Failed to parse feature information: {text}") from exc
    info = _json_object(parsed)
    if "version" not in info:
        raise JsonMappingException("No such field exists: `version`")
    version = _json_int(info["version"])
    if version < ZK_V1 or version > ZK_V2:
        raise ValueError(f"Unsupported version: {version} of feature information: {text}")
    raw_status = info.get("status")
    if raw_status is None:
        raise ValueError(f"Status can not be absent in feature information: {text}")
    status_id = _json_int(raw_status)
    status = next((st for st in FeatureZNodeStatus if st.value == status_id), None)
    if status is None:
        raise ValueError(f"Malformed status: Some({status_id}) found in feature information: {text}")
    raw = info.get("features")
    if raw is None:
        raise ValueError(f"Features map can not be absent in: {text}")
    features_map = {name: {k: _json_int(v) for k, v in _json_object(m).items()}
                    for name, m in _json_object(raw).items()}
    levels = {}
    for name, info_map in features_map.items():
        shown = "Map(" + ", ".join(f"{k} -> {v}" for k, v in info_map.items()) + ")"
        if version == ZK_V1 and "min_version_level" not in info_map:
            raise ValueError(f"min_version_level absent in [{shown}]")
        if "max_version_level" not in info_map:
            raise ValueError(f"max_version_level absent in [{shown}]")
        high = info_map["max_version_level"]
        if version == ZK_V1:
            low = info_map["min_version_level"]
            if low < 1 or high < low:
                raise ValueError("Expected minValue >= 1, maxValue >= 1 and maxValue >= minValue, but received "
                                 f"minValue: {low}, maxValue: {high}")
        if high < 1:
            raise ValueError(f"Expected maxValue >= 1, but received maxValue: {high}")
        levels[name] = high
    return FeatureZNode(status, tuple(sorted((n, FinalizedVersionRange(v, v)) for n, v in levels.items())), epoch)


def _java_map_levels(features: FinalizedFeatures) -> str:
    # java.util.HashMap<String, Short>.toString of the levels, in that map's order.
    levels = {name: r.max_version_level for name, r in features}
    return "{" + ", ".join(f"{n}={levels[n]}" for n in java_hash_map_order(list(levels))) + "}"


def finalized_features_39_str(features: FinalizedFeatures, epoch: int, release: str) -> str:
    """``org.apache.kafka.server.common.FinalizedFeatures.toString`` (3.9, ZooKeeper mode: no metadata.version in
    the map), at the release's IBP."""
    return (f"Features(metadataVersion={RELEASE_IBP[release]}, finalizedFeatures={_java_map_levels(features)}, "
            f"finalizedFeaturesEpoch={epoch})")


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
            if rng.is_incompatible_with(sup):
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
class BrokerFeatures:
    """The features a broker binary supports, and its checks against finalized features
    (``core/src/main/scala/kafka/server/BrokerFeatures.scala``, Kafka 2.7-2.8).

    Kafka's class holds a mutable ``supportedFeatures`` that only tests set (``setSupportedFeatures``); this one
    is immutable and :meth:`set_supported_features` returns the next value. The compatibility rule is Kafka's
    (the ``kafka`` profile of :func:`incompatible_features`): a finalized feature is incompatible when the broker
    does not know it or when its range does not lie inside the supported range (``isIncompatibleWith``).
    """

    supported_features: SupportedFeatures = ()

    @staticmethod
    def create_default() -> BrokerFeatures:
        """``BrokerFeatures.createDefault()``: no supported features in 2.7-2.8 (``emptySupportedFeatures``)."""
        return BrokerFeatures(())

    def set_supported_features(self, new_features: SupportedFeatures) -> BrokerFeatures:
        """``setSupportedFeatures`` (Kafka: for testing only), as a new value."""
        return BrokerFeatures(new_features)

    def default_finalized_features(self) -> FinalizedFeatures:
        """``defaultFinalizedFeatures``: what a new cluster (IBP >= 2.7-IV0) is bootstrapped with, every supported
        feature finalized at its whole supported range (min level = supported min, max level = supported max)."""
        return tuple((name, FinalizedVersionRange(r.min_version, r.max_version)) for name, r in self.supported_features)

    def incompatible_features(self, finalized: FinalizedFeatures) -> FinalizedFeatures:
        """``incompatibleFeatures``: the subset of ``finalized`` (features with their finalized ranges) this
        broker cannot run with; empty when there is no incompatibility."""
        bad = set(incompatible_features(self.supported_features, finalized, "kafka"))
        return tuple((name, r) for name, r in finalized if name in bad)

    @staticmethod
    def has_incompatible_features(supported: SupportedFeatures, finalized: FinalizedFeatures) -> bool:
        """``BrokerFeatures.hasIncompatibleFeatures`` (the companion object's): any incompatibility at all."""
        return bool(incompatible_features(supported, finalized, "kafka"))


class FeatureCacheUpdateException(RuntimeError):
    """``kafka.server.FeatureCacheUpdateException``: a refused :meth:`FinalizedFeatureCache.update_or_throw`."""


@dataclass(frozen=True)
class FinalizedFeaturesAndEpoch:
    """``kafka.server.FinalizedFeaturesAndEpoch``: finalized features with the epoch (node version) they came at."""

    features: FinalizedFeatures
    epoch: int

    def __str__(self) -> str:
        # The cache holds what FeatureZNode.decode built (Features.fromFinalizedFeaturesMap collects into a
        # java.util.HashMap), so Kafka prints the features in that map's order (Apache Kafka 2.8.2 / 3.2.3
        # clients/src/main/java/org/apache/kafka/common/feature/Features.java; checked against the jars by the oracle,
        # finalizedFeatureCache).
        by_name = dict(self.features)
        ordered = tuple((name, by_name[name]) for name in java_hash_map_order(list(by_name)))
        return f"FinalizedFeaturesAndEpoch(features={features_str(ordered)}, epoch={self.epoch})"


@dataclass(frozen=True)
class FinalizedFeatureCache:
    """A broker's cache of the finalized features and their epoch (``core/.../server/FinalizedFeatureCache.scala``),
    the source of the features and ``FinalizedFeaturesEpoch`` a broker serves in ApiVersions.

    Kafka's cache is mutable; this one returns its next self (like the rest of this module). Its rules are
    Kafka's: empty until first updated; an update whose epoch is *lower* than the cached one is refused (an
    equal epoch is accepted); an update with a feature the broker's ``supported`` features cannot run with is
    refused (``BrokerFeatures.incompatibleFeatures``, the ``kafka`` compatibility rule unless ``profile`` says
    otherwise); a refused update raises :class:`FeatureCacheUpdateException` and leaves the cache as it was.
    ``supported`` defaults to none, as ``BrokerFeatures.createDefault()`` in 2.8.
    """

    supported: SupportedFeatures = ()
    features_and_epoch: FinalizedFeaturesAndEpoch | None = None
    profile: Profile = "kafka"
    # "3.9": the cache is ZkMetadataCache.updateFeaturesOrThrow (Apache Kafka 3.9.0-rc3
    # core/src/main/scala/kafka/server/metadata/ZkMetadataCache.scala): the same rules, its messages print
    # FinalizedFeatures (finalized_features_39_str) and the existing contents as a scala Option.
    release: str = "2.8"

    def get(self) -> FinalizedFeaturesAndEpoch | None:
        return self.features_and_epoch

    def is_empty(self) -> bool:
        return self.features_and_epoch is None

    def clear(self) -> FinalizedFeatureCache:
        return FinalizedFeatureCache(self.supported, None, self.profile, self.release)

    def _shown(self, f: FinalizedFeaturesAndEpoch) -> str:
        return str(f) if self.release != "3.9" else finalized_features_39_str(f.features, f.epoch, self.release)

    def update_or_throw(self, latest_features: FinalizedFeatures, latest_epoch: int) -> FinalizedFeatureCache:
        latest = FinalizedFeaturesAndEpoch(latest_features, latest_epoch)
        if self.features_and_epoch is not None and self.features_and_epoch.epoch > latest_epoch:
            # Kafka's ``existing`` is "<empty>" for an empty cache, but only its success log line (not kept
            # here) can print that: this refusal needs a cached epoch, so it always quotes the cache.
            held = self._shown(self.features_and_epoch)
            raise FeatureCacheUpdateException(f"FinalizedFeatureCache update failed due to invalid epoch in new "
                                              f"{self._shown(latest)}. The existing cache contents are "
                                              f"{held if self.release != '3.9' else f'Some({held})'}.")
        if incompatible_features(self.supported, latest_features, self.profile):
            supported = self.supported
            if self.release == "3.9":  # BrokerFeatures holds its supported features in a java.util.HashMap (3.9)
                by_name = dict(supported)
                supported = tuple((n, by_name[n]) for n in java_hash_map_order(list(by_name)))
            raise FeatureCacheUpdateException("FinalizedFeatureCache update failed since feature compatibility "
                                              f"checks failed! Supported {features_str(supported)} has "
                                              f"incompatibilities with the latest {self._shown(latest)}.")
        return FinalizedFeatureCache(self.supported, latest, self.profile, self.release)

    def update_latest_or_throw(self, node: FeatureZNode | None) -> FinalizedFeatureCache:
        """``FinalizedFeatureChangeListener``'s ``updateLatestOrThrow`` once the node is read: an absent or
        disabled node clears the cache, an enabled one updates it with its features at its epoch (version)."""
        if node is None or node.status is FeatureZNodeStatus.DISABLED:
            return self.clear()
        return self.update_or_throw(node.features, node.epoch)

    def reached_epoch(self, min_expected_epoch: int) -> bool:
        """The condition ``waitUntilEpochOrThrow`` waits for: the cache holds an epoch >= ``min_expected_epoch``."""
        if min_expected_epoch < 0:
            raise ValueError(f"Expected minExpectedEpoch >= 0, but {min_expected_epoch} was provided.")
        return self.features_and_epoch is not None and self.features_and_epoch.epoch >= min_expected_epoch


@dataclass(frozen=True)
class FeatureUpdate:
    """One ``FeatureUpdateKey`` of the request as it reaches the controller: a level < 1 asks for deletion.

    Unchecked on purpose: a raw request may carry a level < 1 without ``allowDowngrade`` (the controller's
    own check answers it). The Admin client's checks are in :class:`AdminFeatureUpdate` and
    :func:`admin_update_features_request`.
    """

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
class AdminFeatureUpdate:
    """The Admin client's ``org.apache.kafka.clients.admin.FeatureUpdate`` (the feature name is its map key)."""

    max_version_level: int
    allow_downgrade: bool = False
    # "3.9": FeatureUpdate(short, boolean) maps the flag to SAFE_DOWNGRADE / UPGRADE and the (short, UpgradeType)
    # constructor checks it (Apache Kafka 3.9.0-rc3 clients/.../admin/FeatureUpdate.java).
    release: str = "2.8"

    @property
    def upgrade_type(self) -> int:
        """``FeatureUpdate.UpgradeType`` code (3.3 and later): SAFE_DOWNGRADE 2 with the flag, else UPGRADE 1."""
        return 2 if self.allow_downgrade else 1

    def __post_init__(self) -> None:
        if self.release == "3.9":
            if self.max_version_level == 0 and not self.allow_downgrade:
                raise ValueError("The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the "
                                 f"provided maxVersionLevel:{self.max_version_level} is < 1.")
            if self.max_version_level < 0:
                raise ValueError("Cannot specify a negative version level.")
            return
        if self.max_version_level < 1 and not self.allow_downgrade:
            raise ValueError("The allowDowngrade flag should be set when the provided "
                             f"maxVersionLevel:{self.max_version_level} is < 1.")

    def __str__(self) -> str:
        return (f"FeatureUpdate{{maxVersionLevel:{self.max_version_level}, "
                f"allowDowngrade:{str(self.allow_downgrade).lower()}}}")


def admin_update_features_request(updates: Mapping[str, AdminFeatureUpdate], timeout_ms: int = 60000,
                                  validate_only: bool = False) -> UpdateFeaturesRequest:
    """``KafkaAdminClient.updateFeatures``' checks before it sends anything, then the request it builds.
    Being a map, the Admin client can never send two updates for one feature. ``validate_only``:
    ``UpdateFeaturesOptions.validateOnly`` (3.3 and later), the request's ``dry_run``."""
    if not updates:
        raise ValueError("Feature updates can not be null or empty.")
    for feature in updates:
        # Java's String.trim: strips every char <= ' '.
        if not feature.strip("".join(map(chr, range(33)))):
            raise ValueError("Provided feature can not be empty.")
    return UpdateFeaturesRequest(tuple(FeatureUpdate(f, u.max_version_level, u.allow_downgrade)
                                       for f, u in updates.items()), timeout_ms, dry_run=validate_only)


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
    # "3.9" (kafka profile): Kafka 3.3+'s ZooKeeper controller (3.9.0-rc3 KafkaController.validateFeatureUpdate,
    # newFinalizedVersionOrIncompatibilityError): one level per feature (the range (y, y)), no minimum to check,
    # the controller's own supported range checked both ways. The error codes are 2.8's; the messages 2.8's too
    # (3.9 says "versionLevel" and "downgradeType"): nothing here compares them with Kafka's.
    kafka_release: str = "2.8"

    # -------------------------------------------------------------------- the API
    def update_features(self, request: UpdateFeaturesRequest, principal_can_alter: bool = True
                        ) -> tuple[UpdateFeaturesResponse, FeatureController]:
        top = self._top_level_error(request, principal_can_alter)
        if top is not None:
            return UpdateFeaturesResponse(top[0], top[1], ()), self
        assert self.node is not None
        existing = dict(self.node.features)
        target = dict(existing)
        # One result per feature. Kafka 2.8 keys its errors by feature name and does not reject a feature
        # named twice (only the kip profile does, in _top_level_error): each update is validated against
        # the existing node, a valid one overwrites the target, and the last update's result is reported.
        by_feature: dict[str, UpdatableFeatureResult] = {}
        for update in request.feature_updates:
            outcome = self._validate(update, existing.get(update.feature))
            if isinstance(outcome, UpdatableFeatureResult):
                by_feature[update.feature] = outcome
                continue
            if outcome is None:
                target.pop(update.feature, None)
            else:
                target[update.feature] = outcome
            by_feature[update.feature] = UpdatableFeatureResult(update.feature, Errors.NONE)
        results = list(by_feature.values())
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
        # KafkaApis.handleUpdateFeatures: authorization, then NOT_CONTROLLER, then "versioning disabled".
        # The KIP lists the top-level errors without an order, so both profiles use Kafka's. Messages are
        # Kafka's: ApiError(error) carries the error's default message.
        if not can_alter:
            return Errors.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."
        if not self.is_active:
            return Errors.NOT_CONTROLLER, "This is not the correct controller for this cluster."
        if not self.versioning_enabled or self.node is None or self.node.status is FeatureZNodeStatus.DISABLED:
            return Errors.INVALID_REQUEST, "Feature versioning system is disabled."
        names = [u.feature for u in request.feature_updates]
        if self.profile == "kip" and len(names) != len(set(names)):
            # KIP silent; the schema keys FeatureUpdates by feature name (mapKey), so one update per feature.
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
            if y < existing.min_version_level and self.kafka_release != "3.9":
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
            if y < own.min_version or (self.kafka_release == "3.9" and y > own.max_version):
                return self._fail(update, Errors.INVALID_REQUEST, "Could not apply finalized feature update "
                                  f"because the provided maxVersionLevel:{y} is lower than the supported "
                                  f"minVersion:{own.min_version}.")
            # Kafka 2.8 always rewrites the minimum as the controller binary's supported minimum; 3.9 keeps a level.
            new = FinalizedVersionRange(y, y) if self.kafka_release == "3.9" else FinalizedVersionRange(
                own.min_version, y)
        else:
            # The KIP never changes the minimum through this API ("Changes to cluster-wide finalized
            # minimum feature version level, can not be carried out using this API"); a new feature
            # starts at minimum level 1 (the lowest valid level).
            new = FinalizedVersionRange(existing.min_version_level if existing else 1, y)
        if "skip_range_check" in self.mutations:
            return new
        probe = ((update.feature, new),)
        bad = [broker_id for broker_id, supported in self.live_brokers
               if incompatible_features(supported, probe, self.profile)]
        if bad and self.profile == "kafka":
            return self._fail(update, incompatible, "Could not apply finalized feature update because brokers were "
                              "found to have incompatible versions for the feature.")
        if bad:
            return self._fail(update, incompatible, f"Could not apply finalized feature update because broker "
                              f"{bad[0]} has incompatible versions for the feature.")
        return new

    # -------------------------------------------------------------------- controller-side events
    def _with_node(self, node: FeatureZNode | None) -> FeatureController:
        return FeatureController(node, self.live_brokers, self.own_supported, self.versioning_enabled,
                                 self.is_active, self.profile, self.semantics, self.mutations, self.kafka_release)


def setup_feature_versioning(node: FeatureZNode | None, versioning_enabled: bool,
                             own_supported: SupportedFeatures, release: str = "2.8") -> FeatureZNode | None:
    """What a newly elected controller writes to ``/features`` (KIP "Feature ZK node status").

    Returns the new node, or ``None`` when the existing node is left as it is. Same in both profiles
    (Kafka's ``enableFeatureVersioning`` / ``disableFeatureVersioning`` implement the KIP's cases):
    new cluster -> ENABLED with every supported feature finalized; old IBP -> DISABLED and empty;
    IBP raised over a disabled node -> ENABLED and empty (the operator finalizes later).
    """
    if versioning_enabled:
        if node is None:
            # 3.9's BrokerFeatures.defaultFinalizedFeatures: each supported feature at its maximum level.
            default = tuple((n, FinalizedVersionRange(r.max_version if release == "3.9" else r.min_version,
                                                      r.max_version)) for n, r in own_supported)
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
