"""KIP-584 (feature versioning) decision rules: one UpdateFeatures update at the controller and the request's
top-level answers, version ranges, the Admin client's checks, a broker's FinalizedFeatureCache and the /feature
znode's decoder; reference_impl/features/api.py is the reference.

Rules (``DECISIONS``, registered through the protocol's ``ProtocolEntry.decisions``):

* ``version_range``: KIP-584's version ranges (reference_impl/features/api.py): which (min, max) the
  SupportedVersionRange and FinalizedVersionRange constructors accept, a level's membership, and a finalized
  range's incompatibility with a supported one; ``fromMap``, and Kafka 2.8's BrokerFeatures (``createDefault``,
  ``defaultFinalizedFeatures``, ``incompatibleFeatures``).
* ``finalized_cache``: a broker's FinalizedFeatureCache (reference_impl/features/api.py): an update's
  acceptance by epoch and compatibility, the epoch cached after it, and ``waitUntilEpochOrThrow``'s condition;
  ``is_compatible`` on the same node (absent, disabled even with features, enabled) and the epoch refusal's
  quote of the cache.
* ``admin_update``: the Admin client's checks before an UpdateFeatures request is sent (a level below 1
  needs allowDowngrade, no empty map, no feature name that Java's ``String.trim`` empties) and the request it
  sends.
* ``feature_znode``: Kafka 2.8's ``FeatureZNode.decode`` on well-formed and malformed /feature JSON (32-bit
  edges of every int, a missing or mistyped key): the exception class it throws, or the node it decodes; the
  node's defaults; and what an elected controller writes to every node it can find, per IBP
  (``enableFeatureVersioning`` / ``disableFeatureVersioning``).
* ``features_update``: one UpdateFeatures update at the controller (reference_impl/features/api.py): the
  error code and the finalized range written (or the deletion), for the existing range, the level, the
  allowDowngrade flag, the controller's own supported range and the live brokers' ranges; per profile.
* ``features_atomic``: a request with two updates under KIP-584 as written (each on its own) and its revision
  (all or nothing): each result's error code and note, and the ranges after it.
* ``features_texts``: what the ``kafka-features`` tool prints of an error (class and message, the default
  message when there is none), the node's path by profile, and the words of two refusals (the same level: Kafka's,
  naming the direction the flag asked for; a level a broker cannot run with, per profile).
* ``features_unreadable``: what the cluster does with a /feature node no reader can decode (an operator's
  bytes): a broker's startup and watch notification (it runs on with its cache cleared, or exits), the
  controller's election, an UpdateFeatures request and a registration, by the decoder's exception class.
* ``features_request``: Kafka 2.8's answers to an UpdateFeatures request before any update is validated
  (authorization, not the active controller, versioning off, a feature named twice under kip), with their
  messages, and an empty feature name failing alone; the error codes against Kafka's numbers, restated.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from reference_impl.features.api import (
    AdminFeatureUpdate,
    Errors,
    FeatureCacheUpdateException,
    FeatureController,
    FeatureUpdate,
    FeatureZNode,
    FeatureZNodeStatus,
    FinalizedFeatureCache,
    FinalizedFeaturesAndEpoch,
    FinalizedVersionRange,
    JsonMappingException,
    SupportedVersionRange,
    UpdateFeaturesRequest,
    admin_update_features_request,
    finalized_features,
    is_compatible,
    setup_feature_versioning,
    supported_features,
)
from rollcheck.smt.decisions import (
    CODEC_ERROR,
    DONT_CARE,
    DecisionRules,
    Formula,
    Inputs,
    Outputs,
    code_table_case,
)

from .kafka_errors import (
    CLUSTER_AUTHORIZATION_FAILED,
    FEATURE_UPDATE_FAILED,
    INVALID_REQUEST,
    KAFKA_ERRORS,
    NOT_CONTROLLER,
)

# --------------------------------------------------------------------------- features UpdateFeatures


@dataclass(frozen=True)
class UpdateOutcome:
    error: Any  # Int term: 0, INVALID_REQUEST or FEATURE_UPDATE_FAILED
    present: Any  # Bool term: the feature is finalized after the request
    min: Any  # Int terms: its range after the request (0, 0 when absent)
    max: Any


def features_update_rule(profile: str, has_e: Any, emin: Any, emax: Any, y: Any, allow: Any, has_o: Any, olo: Any,
                         brokers: Sequence[tuple[Any, Any, Any, Any]], mutations: frozenset[str] = frozenset()
                         ) -> UpdateOutcome:
    """KIP-584 "Validations" (kip) and KafkaController.validateFeatureUpdate (kafka) for one update of a
    feature: ``has_e`` / ``emin`` / ``emax`` its finalized range (if any), ``y`` the level (< 1: delete),
    ``allow`` the allowDowngrade flag, ``has_o`` / ``olo`` the controller binary's support and minimum,
    ``brokers`` (live, supports, lo, hi) per broker. Shared by the system encoding (model/features.py)."""
    kafka = profile == "kafka"
    unchecked = "allow_downgrade_unchecked" in mutations
    incompatible_code = INVALID_REQUEST if kafka else FEATURE_UPDATE_FAILED
    new_min = z3.If(has_o, olo, 1) if kafka else z3.If(has_e, emin, 1)

    def rejects(live: Any, has: Any, lo: Any, hi: Any) -> Any:
        inside = z3.And(lo <= new_min, y <= hi) if kafka else z3.And(lo <= y, y <= hi)
        return z3.And(live, z3.Or(z3.Not(has), z3.Not(inside)))

    rejected = z3.Or([rejects(*b) for b in brokers] or [z3.BoolVal(False)])
    if "skip_range_check" in mutations:
        rejected = z3.BoolVal(False)
    chain: list[tuple[Any, int]] = [
        (z3.And(y < 1, z3.Not(allow), not unchecked), INVALID_REQUEST),
        (z3.And(y < 1, z3.Not(has_e)), INVALID_REQUEST),  # Kafka: "Can not delete non-existing finalized feature"
        (y < 1, 0),  # deletion "without any guarding checks on feature versions"
        (z3.And(has_e, y == emax), INVALID_REQUEST),
        (z3.And(has_e, y < emax, z3.Not(allow), not unchecked), INVALID_REQUEST),
        (z3.And(has_e, y > emax, allow, kafka), INVALID_REQUEST),  # Kafka only
        (z3.And(has_e, y < emin), INVALID_REQUEST if kafka else FEATURE_UPDATE_FAILED),
    ]
    if kafka:  # the controller's own binary must support the level
        chain += [(z3.Not(has_o), INVALID_REQUEST), (y < olo, INVALID_REQUEST)]
    chain += [(rejected, incompatible_code), (z3.BoolVal(True), 0)]
    err: Any = z3.IntVal(0)
    for cond, code in reversed(chain):
        err = z3.If(cond, code, err)
    ok = err == 0
    present = z3.If(ok, y >= 1, has_e)
    return UpdateOutcome(err, present, z3.If(present, z3.If(ok, new_min, emin), 0),
                         z3.If(present, z3.If(ok, y, emax), 0))


def features_update_formula(profile: str, brokers: int) -> Formula:
    """:func:`features_update_rule` over named Int inputs (flags as 0 / 1)."""
    names = ["has_e", "emin", "emax", "y", "allow", "has_o", "olo", "ohi",
             *(f"{f}{i}" for i in range(brokers) for f in ("has_b", "blo", "bhi"))]

    def build(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        r = features_update_rule(profile, x["has_e"] == 1, x["emin"], x["emax"], x["y"], x["allow"] == 1,
                                 x["has_o"] == 1, x["olo"],
                                 [(z3.BoolVal(True), x[f"has_b{i}"] == 1, x[f"blo{i}"], x[f"bhi{i}"])
                                  for i in range(brokers)])
        return {"error": r.error, "present": r.present, "min": r.min, "max": r.max}

    return Formula(names, build)


def features_update_reference(profile: str, brokers: int) -> Callable[[Inputs], Outputs]:
    def run(x: Inputs) -> Outputs:
        feats = (("f", FinalizedVersionRange(x["emin"], x["emax"])),) if x["has_e"] else ()
        node = FeatureZNode(FeatureZNodeStatus.ENABLED, feats, 1)
        own = (("f", SupportedVersionRange(x["olo"], x["ohi"])),) if x["has_o"] else ()
        live = tuple((i, (("f", SupportedVersionRange(x[f"blo{i}"], x[f"bhi{i}"])),) if x[f"has_b{i}"] else ())
                     for i in range(brokers))
        ctl = FeatureController(node, live, own, profile=profile)
        resp, after = ctl.update_features(UpdateFeaturesRequest((FeatureUpdate("f", x["y"], bool(x["allow"])),)))
        assert after.node is not None
        r = after.node.get("f")
        return {"error": int(resp.results[0].error), "present": int(r is not None),
                "min": r.min_version_level if r else 0, "max": r.max_version_level if r else 0}

    return run


# What a features top-level answer's message is (``names``): Kafka's default message of the error, one per answer.
FEAT_REQUEST_MESSAGES = ("", "Cluster authorization failed.", "This is not the correct controller for this cluster.",
                         "Feature versioning system is disabled.", "A feature may appear only once in a request.")
FEAT_EMPTY_NAME = "Feature name can not be empty."
# The cluster a request meets (``cluster``): 0 IBP below migration_ibp_version, 1 versioning enabled, 2 the node
# disabled, 3 no node.
FEAT_CLUSTERS = 4


# The error codes the features API answers UpdateFeatures with (KIP-584's list, Kafka 2.8's numbers).
FEAT_ERROR_NAMES = ("NONE", "CLUSTER_AUTHORIZATION_FAILED", "NOT_CONTROLLER", "INVALID_REQUEST",
                    "FEATURE_UPDATE_FAILED")


def features_request_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The answers Kafka 2.8's KafkaApis.handleUpdateFeatures / KafkaController give before any update is
    validated, in Kafka's order (the KIP lists the top-level errors without one; both profiles take Kafka's):
    a principal without ALTER on the cluster gets CLUSTER_AUTHORIZATION_FAILED, a broker that is not the active
    controller NOT_CONTROLLER, a cluster whose versioning is off (IBP below migration_ibp_version, a disabled or
    absent node) INVALID_REQUEST; under ``kip`` a request naming a feature twice is INVALID_REQUEST (the schema
    keys FeatureUpdates by name). Past them each feature gets one result (Kafka keys its results by name), and
    an update with an empty feature name fails alone with INVALID_REQUEST. The system's operator sends
    authorized, named requests to the active controller, so only this comparison reaches these answers. The
    error codes are compared with Kafka's numbers too (the rules' own copy)."""
    def build(profile: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            auth, active, cluster, dup, empty = (x[n] for n in ("auth", "active", "cluster", "dup", "empty"))
            duplicate = dup == 1 if profile == "kip" else z3.BoolVal(False)
            top = z3.If(auth == 0, CLUSTER_AUTHORIZATION_FAILED,
                        z3.If(active == 0, NOT_CONTROLLER,
                              z3.If(cluster != 1, INVALID_REQUEST, z3.If(duplicate, INVALID_REQUEST, 0))))
            names = z3.If(auth == 0, 1, z3.If(active == 0, 2, z3.If(cluster != 1, 3, z3.If(duplicate, 4, 0))))
            ok = top == 0
            return {"top": top, "names": names, "results": z3.If(ok, 1 + empty, 0),
                    "ok": z3.If(z3.And(ok, empty == 0), 1, 0),  # UpdateFeaturesResponse.ok
                    "f": z3.If(ok, 0, DONT_CARE),
                    "empty": z3.If(z3.And(ok, empty == 1), INVALID_REQUEST, DONT_CARE)}
        return outputs

    def reference(profile: str) -> Callable[[Inputs], Outputs]:
        sup = (("f", SupportedVersionRange(1, 2)),)

        def run(x: Inputs) -> Outputs:
            cluster = x["cluster"]
            node = (None if cluster == 3 else FeatureZNode(FeatureZNodeStatus.DISABLED, (), 1) if cluster == 2
                    else FeatureZNode(FeatureZNodeStatus.ENABLED, (("f", FinalizedVersionRange(1, 1)),), 1))
            ctl = FeatureController(node, ((0, sup),), sup, versioning_enabled=cluster != 0,
                                    is_active=bool(x["active"]), profile=profile)
            update = FeatureUpdate("f", 2)  # an upgrade every broker supports: accepted once checked
            updates = (update,) * (1 + x["dup"]) + ((FeatureUpdate("", 2),) if x["empty"] else ())
            resp, _after = ctl.update_features(UpdateFeaturesRequest(updates), principal_can_alter=bool(x["auth"]))
            msg = resp.message or ""
            by_name = {r.feature: r for r in resp.results}
            out = {"top": int(resp.error),
                   "names": FEAT_REQUEST_MESSAGES.index(msg) if msg in FEAT_REQUEST_MESSAGES else CODEC_ERROR,
                   "results": len(resp.results), "ok": int(resp.ok),
                   "f": int(by_name["f"].error) if "f" in by_name else DONT_CARE,
                   "empty": DONT_CARE}
            if "" in by_name:
                r = by_name[""]
                out["empty"] = int(r.error) if r.message == FEAT_EMPTY_NAME else CODEC_ERROR
            return out
        return run

    names = ["auth", "active", "cluster", "dup", "empty"]
    for profile in ("kip", "kafka"):
        domain = [dict(zip(names, v, strict=True))
                  for v in itertools.product((0, 1), (0, 1), range(FEAT_CLUSTERS), (0, 1), (0, 1))]
        yield f"handleUpdateFeatures, {profile}", Formula(names, build(profile)), domain, reference(profile)
    yield code_table_case("Errors codes (Errors.java)", {n: KAFKA_ERRORS[n] for n in FEAT_ERROR_NAMES}, Errors)


def features_update_cases(brokers: int = 1, top: int = 3
                          ) -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Ranges 1 <= lo <= hi <= ``top`` (or absent), levels 0 .. top + 1, both flags, both profiles."""
    ranges = [(0, 1, 1)] + [(1, lo, hi) for lo in range(1, top + 1) for hi in range(lo, top + 1)]
    for profile in ("kip", "kafka"):
        def domain() -> Iterable[Inputs]:
            for e, y, allow, o, *bs in itertools.product(ranges, range(0, top + 2), (0, 1), ranges,
                                                         *([ranges] * brokers)):
                x = {"has_e": e[0], "emin": e[1], "emax": e[2], "y": y, "allow": allow,
                     "has_o": o[0], "olo": o[1], "ohi": o[2]}
                for i, b in enumerate(bs):
                    x.update({f"has_b{i}": b[0], f"blo{i}": b[1], f"bhi{i}": b[2]})
                yield x
        yield (f"{profile}, {brokers} live brokers", features_update_formula(profile, brokers), domain(),
               features_update_reference(profile, brokers))


# Kafka's Errors (clients/.../protocol/Errors.java) as the kafka-features tool shows them: the exception's class
# and the default message ``new ApiError(error)`` carries (Kafka 2.8). Restated here, apart from the reference's.
_KAFKA_ERRORS = {KAFKA_ERRORS[name]: shown for name, shown in (
    ("NONE", (None, None)),
    ("CLUSTER_AUTHORIZATION_FAILED", ("org.apache.kafka.common.errors.ClusterAuthorizationException",
                                      "Cluster authorization failed.")),
    ("NOT_CONTROLLER", ("org.apache.kafka.common.errors.NotControllerException",
                        "This is not the correct controller for this cluster.")),
    ("INVALID_REQUEST", ("org.apache.kafka.common.errors.InvalidRequestException",
                         "This most likely occurs because of a request being malformed by the client library or the "
                         "message was sent to an incompatible broker. See the broker logs for more details.")),
    ("FEATURE_UPDATE_FAILED", ("org.apache.kafka.common.errors.FeatureUpdateFailedException",
                               "Unable to update finalized features due to an unexpected server error.")),
)}


def features_texts_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """What an operator reads: ``error.exception(message).toString()`` as the ``kafka-features`` tool prints a
    failed update (the class, then the message, or the error's default message when the response has none; a
    class alone when there is no text), and the node's path by profile (the KIP's ``/features``, Kafka's
    ``/feature``). The system carries error codes, not texts, so only this comparison reads them (the
    campaign's features api.py:52, 53 and 282 ran on no checker)."""
    names = ["error", "message"]
    codes = sorted(_KAFKA_ERRORS)

    def expected(code: int, message: str | None) -> str:
        cls, default = _KAFKA_ERRORS[code]
        text = message if message is not None else default
        return f"{cls}: {text}" if text is not None else str(cls)

    def run(x: Inputs) -> Outputs:
        code, message = codes[x["error"]], ("custom" if x["message"] else None)
        shown = Errors(code).exception_string(message)
        path = FeatureZNode.path("kafka" if x["message"] else "kip")
        return {"shown": int(shown == expected(code, message)),
                "path": int(path == ("/feature" if x["message"] else "/features"))}

    domain = [{"error": e, "message": m} for e in range(len(codes)) for m in (0, 1)]
    yield "exception texts and paths", Formula(names, lambda x: {"shown": 1, "path": 1}), domain, run
    yield from _refusal_words_cases()


def _refusal_words_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """What a refused update is told, restated: an update to the level already finalized in the words of Kafka
    2.8's ``KafkaController.validateFeatureUpdate``, which name the direction the flag asked for (both
    profiles); a level a live broker cannot run with, in Kafka's words under ``kafka`` (no broker named), and
    naming the first such broker under ``kip`` (the KIP gives no text). Inputs: ``kind`` (0 the same level,
    1 a level brokers 0 and 1 lack), the finalized level ``x`` and the flag ``allow``."""
    def run(profile: str) -> Callable[[Inputs], Outputs]:
        def refusal(x: Inputs) -> Outputs:
            node = FeatureZNode(FeatureZNodeStatus.ENABLED, (("f", FinalizedVersionRange(1, x["x"])),), 1)
            sup = (("f", SupportedVersionRange(1, 4)),)
            broker = (("f", SupportedVersionRange(1, x["x"])),) if x["kind"] else sup
            ctl = FeatureController(node, ((0, broker), (1, broker)), sup, profile=profile)
            y = x["x"] + x["kind"]  # kind 1: one above what the brokers support
            allow = bool(x["allow"]) and not x["kind"]
            resp, _after = ctl.update_features(UpdateFeaturesRequest((FeatureUpdate("f", y, allow),)))
            said = resp.results[0].message if len(resp.results) == 1 else None
            if x["kind"]:
                expected = ("Could not apply finalized feature update because brokers were found to have "
                            "incompatible versions for the feature." if profile == "kafka" else
                            "Could not apply finalized feature update because broker 0 has incompatible versions "
                            "for the feature.")
            else:
                word = "downgrade" if allow else "upgrade"
                expected = f"Can not {word} a finalized feature from existing maxVersionLevel:{y} to the same value."
            return {"said": int(said == expected)}
        return refusal

    names = ["kind", "x", "allow"]
    domain = [dict(zip(names, v, strict=True)) for v in itertools.product((0, 1), (1, 2, 3), (0, 1))]
    for profile in ("kip", "kafka"):
        yield f"refusal words, {profile}", Formula(names, lambda x: {"said": 1}), domain, run(profile)


# What an update the revision's all-or-nothing rule leaves unapplied is told (FeatureController.update_features).
FEAT_NOT_APPLIED = "Not applied: another update in the same request failed."
_ATOMIC_RANGES = ((0, 0, 0), (1, 1, 1), (1, 1, 2))  # a feature's finalized range: absent, 1-1, 1-2


def features_atomic_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """A request with two updates (features f and g, one allowDowngrade flag, as the operator's two-update
    requests have) under KIP-584 as written (``partial``: each update on its own) and its revision
    (``atomic``: if one update fails, none is applied; each update that was valid on its own is answered
    FEATURE_UPDATE_FAILED with "Not applied: ...", and the failed one keeps its own error). The response's
    ``ok``; per feature: the
    result's error code, whether its message is the not-applied note, and the range after the request. Every
    broker supports levels 1-2 of both. The system's ``atomic`` story config sends such requests, but compares
    only whether each update succeeded (FEAT-06) and the node: which error a failed update reports is this
    rule's (the campaign's features api.py:602 ``if_false`` answered every update FEATURE_UPDATE_FAILED)."""
    names = ["atomic", "allow", *(f"{n}_{f}" for f in ("f", "g") for n in ("has", "emin", "emax", "y"))]

    def build(profile: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            one, two = z3.IntVal(1), z3.IntVal(2)
            rs = {f: features_update_rule(profile, x[f"has_{f}"] == 1, x[f"emin_{f}"], x[f"emax_{f}"], x[f"y_{f}"],
                                          x["allow"] == 1, z3.BoolVal(True), one,
                                          [(z3.BoolVal(True), z3.BoolVal(True), one, two)]) for f in ("f", "g")}
            failed = z3.Or([r.error != 0 for r in rs.values()])
            atomic = x["atomic"] == 1
            out: dict[str, Any] = {}
            for f, r in rs.items():
                held = z3.And(atomic, failed, r.error == 0)  # valid on its own, not applied
                out[f"{f}_error"] = z3.If(held, FEATURE_UPDATE_FAILED, r.error)
                out[f"{f}_note"] = z3.If(held, 1, 0)
                keep = z3.And(atomic, failed)
                out[f"{f}_present"] = z3.If(z3.If(keep, x[f"has_{f}"] == 1, r.present), 1, 0)
                out[f"{f}_min"] = z3.If(keep, x[f"emin_{f}"], r.min)
                out[f"{f}_max"] = z3.If(keep, x[f"emax_{f}"], r.max)
            out["ok"] = z3.If(failed, 0, 1)  # UpdateFeaturesResponse.ok: no top-level error, every result NONE
            return out
        return outputs

    def reference(profile: str) -> Callable[[Inputs], Outputs]:
        sup = (("f", SupportedVersionRange(1, 2)), ("g", SupportedVersionRange(1, 2)))

        def run(x: Inputs) -> Outputs:
            feats = tuple((f, FinalizedVersionRange(x[f"emin_{f}"], x[f"emax_{f}"])) for f in ("f", "g")
                          if x[f"has_{f}"])
            node = FeatureZNode(FeatureZNodeStatus.ENABLED, feats, 1)
            ctl = FeatureController(node, ((0, sup),), sup, profile=profile,
                                    semantics="atomic" if x["atomic"] else "partial")
            request = UpdateFeaturesRequest(tuple(FeatureUpdate(f, x[f"y_{f}"], bool(x["allow"])) for f in ("f", "g")))
            resp, after = ctl.update_features(request)
            assert after.node is not None
            out: dict[str, int] = {"ok": int(resp.ok)}
            for f in ("f", "g"):
                r, now = resp.result(f), after.node.get(f)
                out.update({f"{f}_error": int(r.error), f"{f}_note": int(r.message == FEAT_NOT_APPLIED),
                            f"{f}_present": int(now is not None), f"{f}_min": now.min_version_level if now else 0,
                            f"{f}_max": now.max_version_level if now else 0})
            return out
        return run

    for profile in ("kip", "kafka"):
        domain = [{"atomic": atomic, "allow": allow, "has_f": ef[0], "emin_f": ef[1], "emax_f": ef[2], "y_f": yf,
                   "has_g": eg[0], "emin_g": eg[1], "emax_g": eg[2], "y_g": yg}
                  for atomic, allow, ef, yf, eg, yg in itertools.product(
                      (0, 1), (0, 1), _ATOMIC_RANGES, range(4), _ATOMIC_RANGES, range(4))]
        yield f"two updates, {profile}", Formula(names, build(profile)), domain, reference(profile)


# --------------------------------------------------------------------------- features: version ranges

RANGE_SPAN = range(-1, 5)  # below, at and above KIP-584's floor of 1, for every min/max/level combination


def _null_refused(make: Callable[[Any], Any]) -> bool:
    """``make(None)`` throws Kafka's NullPointerException, with its message (TypeError here)."""
    try:
        make(None)
    except TypeError as exc:
        return str(exc) == "Provided features can not be null."
    return False


def version_range_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """KIP-584 "Schema" (and Kafka 2.8's BaseVersionRange constructor): a SupportedVersionRange and a
    FinalizedVersionRange exist only for ``1 <= min <= max``; a level is in a supported range iff
    ``min <= level <= max``; a finalized range is incompatible with a supported one iff it does not lie inside
    it (FinalizedVersionRange.isIncompatibleWith). No config builds a bad range (the reference never does), so
    only this comparison sees a constructor that lets one through or refuses a good one."""
    def valid(lo: Any, hi: Any) -> Any:
        return z3.And(lo >= 1, hi >= 1, lo <= hi)

    def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        ok_s, ok_f = valid(x["smin"], x["smax"]), valid(x["fmin"], x["fmax"])
        return {"supported_valid": z3.If(ok_s, 1, 0), "finalized_valid": z3.If(ok_f, 1, 0),
                "level_in_supported": z3.If(z3.And(ok_s, x["smin"] <= x["fmax"], x["fmax"] <= x["smax"]), 1, 0),
                "incompatible": z3.If(z3.And(ok_s, ok_f, z3.Or(x["fmin"] < x["smin"], x["fmax"] > x["smax"])), 1, 0),
                # fromMap (BaseVersionRange.valueOrThrow): the map's two levels make the same range, and a map
                # without one of them is an IllegalArgumentException, whatever the other level is
                "from_map_same": 1, "from_map_missing_refused": 1,
                # a level that is not an int (Java's short) is in no range: never an exception
                "non_int_level_outside": 1,
                # Features' constructor (Objects.requireNonNull): no features at all is Kafka's NullPointerException
                "null_features_refused": 1,
                # Features.supportedFeatures takes a map: the same features from a map as from its pairs
                "features_from_map": 1}

    def reference(x: Inputs) -> Outputs:
        def made(cls: Any, lo: int, hi: int) -> Any:
            try:
                return cls(lo, hi)
            except ValueError:
                return None

        def from_map(cls: Any, values: dict[str, int]) -> Any:
            try:
                return cls.from_map(values)
            except ValueError:
                return None
        sup = made(SupportedVersionRange, x["smin"], x["smax"])
        fin = made(FinalizedVersionRange, x["fmin"], x["fmax"])
        same = all(from_map(cls, {cls.MIN_KEY: lo, cls.MAX_KEY: hi}) == got
                   for cls, lo, hi, got in ((SupportedVersionRange, x["smin"], x["smax"], sup),
                                            (FinalizedVersionRange, x["fmin"], x["fmax"], fin)))
        refused = all(from_map(cls, {key: level}) is None
                      for cls, level in ((SupportedVersionRange, x["smax"]), (FinalizedVersionRange, x["fmax"]))
                      for key in (cls.MIN_KEY, cls.MAX_KEY))
        return {"supported_valid": int(sup is not None), "finalized_valid": int(fin is not None),
                "level_in_supported": int(sup is not None and x["fmax"] in sup),
                "incompatible": int(sup is not None and fin is not None and fin.is_incompatible_with(sup)),
                "from_map_same": int(same), "from_map_missing_refused": int(refused),
                "non_int_level_outside": int(sup is None or not any(
                    v in sup for v in (None, "1", 1.5, float(x["smin"])))),
                "null_features_refused": int(all(_null_refused(make) for make in (supported_features,
                                                                                  finalized_features))),
                "features_from_map": int(sup is None or supported_features({"f": (x["smin"], x["smax"])})
                                         == supported_features([("f", (x["smin"], x["smax"]))]) == (("f", sup),))}

    names = ["smin", "smax", "fmin", "fmax"]
    domain = [dict(zip(names, v, strict=True)) for v in itertools.product(RANGE_SPAN, repeat=4)]
    yield "SupportedVersionRange x FinalizedVersionRange", Formula(names, build), domain, reference
    yield from _broker_features_cases()


def _broker_features_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Kafka 2.8's BrokerFeatures: ``createDefault`` supports nothing; ``defaultFinalizedFeatures`` finalizes
    each supported feature at its whole range (min level = supported min, max level = supported max);
    ``incompatibleFeatures`` is the finalized features the broker does not know or whose range does not lie
    inside the supported one; and Features.fromMap of a map of feature name to {min_version, max_version} is the
    features of its pairs. Read by the Kafka transcriptions (tests/kafka) and no system action: only this
    comparison sees an edit to them."""
    from reference_impl.features.api import BrokerFeatures, supported_features_from_map

    def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        ok_s, ok_f = (z3.And(lo >= 1, lo <= hi) for lo, hi in ((x["smin"], x["smax"]), (x["fmin"], x["fmax"])))
        outside = z3.Or(x["known"] == 0, x["fmin"] < x["smin"], x["fmax"] > x["smax"])
        return {"default_is_whole_range": 1, "create_default_empty": 1, "from_map_same": 1,
                "incompatible": z3.If(z3.And(ok_s, ok_f), z3.If(outside, 1, 0), DONT_CARE)}

    def reference(x: Inputs) -> Outputs:
        try:
            sup = SupportedVersionRange(x["smin"], x["smax"])
            fin = FinalizedVersionRange(x["fmin"], x["fmax"])
        except ValueError:
            return {"default_is_whole_range": 1, "create_default_empty": 1, "from_map_same": 1,
                    "incompatible": DONT_CARE}
        broker = BrokerFeatures.create_default().set_supported_features((("f", sup),))
        finalized = (("f" if x["known"] else "g", fin),)
        bad = broker.incompatible_features(finalized)
        try:
            as_map: Any = supported_features_from_map({"f": {SupportedVersionRange.MIN_KEY: x["smin"],
                                                             SupportedVersionRange.MAX_KEY: x["smax"]}})
        except ValueError:
            as_map = None
        return {"default_is_whole_range": int(broker.default_finalized_features()
                                              == (("f", FinalizedVersionRange(x["smin"], x["smax"])),)),
                "create_default_empty": int(BrokerFeatures.create_default().supported_features == ()),
                "from_map_same": int(as_map == (("f", sup),)),
                "incompatible": 0 if not bad else 1 if bad == finalized else 2}  # 2: some other subset

    names = ["smin", "smax", "fmin", "fmax", "known"]
    domain = [dict(zip(names, v, strict=True)) for v in itertools.product(RANGE_SPAN, RANGE_SPAN, RANGE_SPAN,
                                                                          RANGE_SPAN, (0, 1))]
    yield "BrokerFeatures", Formula(names, build), domain, reference


# --------------------------------------------------------------------------- features: the Admin client

# A name, empty, and ones Java's String.trim empties (every char up to U+0020) or keeps ('!' is U+0021, DEL U+007F).
ADMIN_NAMES = ("f", "", " ", "\t f ", "\x00\x1f ", "!", "\x7f")
ADMIN_NAME_KEPT = (0, 3, 5, 6)  # the names trim leaves non-empty


def admin_update_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """KafkaAdminClient.updateFeatures' checks before it sends anything (Kafka 2.8, and Admin's FeatureUpdate
    constructor): a level below 1 needs allowDowngrade; the map of updates may not be empty; no feature name
    may be empty once trimmed; an accepted call sends each update as it was given. The system's operator
    sends raw requests (the controller's own checks answer them), so only this comparison reaches the
    client's."""
    def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        level, allow, count, name = x["level"], x["allow"], x["count"], x["name"]
        ok = z3.And(z3.Or(level >= 1, allow == 1), count >= 1, z3.Or(*(name == i for i in ADMIN_NAME_KEPT)))
        return {"accepted": z3.If(ok, 1, 0), "sent_level": z3.If(z3.And(ok, count >= 1), level, DONT_CARE_SENT)}

    def reference(x: Inputs) -> Outputs:
        try:
            update = AdminFeatureUpdate(x["level"], bool(x["allow"]))
            req = admin_update_features_request({ADMIN_NAMES[x["name"]]: update} if x["count"] else {})
        except ValueError:
            return {"accepted": 0, "sent_level": DONT_CARE_SENT}
        if x["count"] == 0 or len(req.feature_updates) != 1:
            return {"accepted": 1, "sent_level": DONT_CARE_SENT - 1}  # an empty call accepted, or not one update
        sent = req.feature_updates[0]
        if sent.allow_downgrade != bool(x["allow"]) or sent.feature != ADMIN_NAMES[x["name"]]:
            return {"accepted": 1, "sent_level": DONT_CARE_SENT - 1}  # sent something else than asked
        return {"accepted": 1, "sent_level": sent.max_version_level}

    names = ["level", "allow", "count", "name"]
    domain = [dict(zip(names, v, strict=True))
              for v in itertools.product(range(-2, 4), (0, 1), (0, 1), range(len(ADMIN_NAMES)))]
    yield "AdminFeatureUpdate", Formula(names, build), domain, reference


DONT_CARE_SENT = -1000  # no request sent (a refused call): nothing to compare


# --------------------------------------------------------------------------- features: a broker's cache

CACHE_SUPPORTED = (1, 2)  # the broker supports feature "f" at levels 1..2, and no other feature
ABSENT_NODE, DISABLED_NODE, ENABLED_NODE = 0, 1, 2
CACHE_REFUSED = 2  # reached_epoch's answer to a negative expected epoch (an IllegalArgumentException)


def finalized_cache_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Kafka 2.8's FinalizedFeatureCache, as a broker's FinalizedFeatureChangeListener drives it: an absent or
    disabled /features clears the cache; an enabled one replaces it, unless its epoch is below the cached one
    (an equal epoch is accepted) or a finalized feature is one the broker cannot run with (``kafka``: the
    whole range inside the supported one; ``kip``: the max level; an unknown feature always), when the update
    is refused and the cache kept; ``waitUntilEpochOrThrow`` is satisfied by a cached epoch at or above the
    expected one and refuses a negative one. The system keeps a broker's cache in its state and never reads
    the API's cache class, so only this comparison reaches its epoch rule. ``compatible`` is ``is_compatible``
    on the same node (an absent or disabled one, even with features, constrains nothing); the epoch refusal
    quotes the cached features and epoch, as Kafka's message does."""
    smin, smax = CACHE_SUPPORTED

    def build(profile: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            cached, kind, epoch, unknown, fmin, fmax, want = (x[n] for n in ("cached", "kind", "epoch", "unknown",
                                                                            "fmin", "fmax", "want"))
            fits = (z3.And(smin <= fmin, fmax <= smax) if profile == "kafka"
                    else z3.And(smin <= fmax, fmax <= smax))
            ok = z3.And(z3.Or(cached < 0, cached <= epoch), unknown == 0, fits)
            after = z3.If(kind != ENABLED_NODE, -1, z3.If(ok, epoch, cached))
            return {"accepted": z3.If(z3.Or(kind != ENABLED_NODE, ok), 1, 0), "epoch_after": after,
                    "reached": z3.If(want < 0, CACHE_REFUSED, z3.If(z3.And(after >= 0, after >= want), 1, 0)),
                    "compatible": z3.If(z3.Or(kind != ENABLED_NODE, z3.And(unknown == 0, fits)), 1, 0),
                    "refusal_quotes_cache": 1}
        return outputs

    def reference(profile: str) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            supported = (("f", SupportedVersionRange(smin, smax)),)
            held = FinalizedFeaturesAndEpoch((), x["cached"]) if x["cached"] >= 0 else None  # an earlier update
            cache = FinalizedFeatureCache(supported, held, profile)  # type: ignore[arg-type]
            features = (("g" if x["unknown"] else "f", FinalizedVersionRange(x["fmin"], x["fmax"])),)
            # A disabled node may carry features (FeatureZNode.decode keeps them): Kafka ignores them.
            node = (None if x["kind"] == ABSENT_NODE else
                    FeatureZNode(FeatureZNodeStatus.DISABLED, features, x["epoch"]) if x["kind"] == DISABLED_NODE
                    else FeatureZNode(FeatureZNodeStatus.ENABLED, features, x["epoch"]))
            quotes = 1
            try:
                after, accepted = cache.update_latest_or_throw(node), 1
            except FeatureCacheUpdateException as exc:
                after, accepted = cache, 0
                if held is not None and held.epoch > x["epoch"]:  # the epoch refusal quotes what is cached
                    quotes = int(str(exc).endswith(f"The existing cache contents are {held}."))
            got = after.get()
            try:
                reached = int(after.reached_epoch(x["want"]))
            except ValueError:
                reached = CACHE_REFUSED
            return {"accepted": accepted, "epoch_after": -1 if got is None else got.epoch, "reached": reached,
                    "compatible": int(is_compatible(supported, node, profile)),  # type: ignore[arg-type]
                    "refusal_quotes_cache": quotes}
        return run

    names = ["cached", "kind", "epoch", "unknown", "fmin", "fmax", "want"]
    ranges = [(lo, hi) for lo in range(1, 4) for hi in range(lo, 4)]
    domain = [dict(zip(names, (c, k, e, u, lo, hi, w), strict=True))
              for c in range(-1, 3) for k in (ABSENT_NODE, DISABLED_NODE, ENABLED_NODE) for e in range(3)
              for u in (0, 1) for lo, hi in ranges for w in range(-1, 4)]
    for profile in ("kip", "kafka"):
        yield f"FinalizedFeatureCache, {profile}", Formula(names, build(profile)), domain, reference(profile)


# --------------------------------------------------------------------------- features: the /feature znode's JSON

INT32_EDGES = (-2**31 - 1, -2**31, -2, -1, 0, 1, 2, 2**31 - 1, 2**31)  # each side of Jackson's isInt and of 0/1
ZNODE_DECODED, ZNODE_MAPPING, ZNODE_ILLEGAL = 0, 1, 2  # decoded; JsonMappingException; IllegalArgumentException
# The ways a node's JSON can be malformed, each one at a time (0: well-formed).
(WELL_FORMED, NO_VERSION, NO_FEATURES, NO_STATUS, VERSION_STRING, STATUS_BOOL, LEVEL_FLOAT, FEATURES_LIST,
 NOT_JSON, STATUS_NULL) = range(10)


def feature_znode_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Kafka 2.8's ``FeatureZNode.decode`` (core/.../zk/ZkData.scala) on the JSON a /feature node can hold: each
    check in Kafka's order, and which exception it throws. Jackson's ``to[Int]`` (DecodeJson.IntDecodeJson)
    takes only a 32-bit JSON int and throws JsonMappingException for anything else (a bigger number, a string,
    a boolean, a float) or a missing ``version``; a map that is not an object is a JsonMappingException too.
    Kafka's own checks throw IllegalArgumentException: a version below the schema version (``kip``: the
    KIP's 0, ``kafka``: V1), no ``features`` map, no (or a null) ``status``, a status that is neither 0 nor 1,
    and a range FinalizedVersionRange refuses (``1 <= min <= max``). A decoded node keeps the status and the
    levels. The system writes only nodes the reference encodes, so only this comparison reaches the decoder's
    edges (an int32 bound off by one, a check done in another order)."""
    def build(profile: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        schema = FeatureZNode.schema_version(profile)  # type: ignore[arg-type]

        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            shape, version, status, fmin, fmax = (x[n] for n in ("shape", "version", "status", "fmin", "fmax"))

            def int32(v: Any) -> Any:
                return z3.And(-2**31 <= v, v <= 2**31 - 1)
            # Kafka's checks in its order: the first that fails decides the outcome.
            checks = [(shape == NOT_JSON, ZNODE_ILLEGAL), (shape == NO_VERSION, ZNODE_MAPPING),
                      (shape == VERSION_STRING, ZNODE_MAPPING), (z3.Not(int32(version)), ZNODE_MAPPING),
                      (version < schema, ZNODE_ILLEGAL), (shape == NO_FEATURES, ZNODE_ILLEGAL),
                      (shape == FEATURES_LIST, ZNODE_MAPPING), (shape == LEVEL_FLOAT, ZNODE_MAPPING),
                      (z3.Not(z3.And(int32(fmin), int32(fmax))), ZNODE_MAPPING),
                      (z3.Or(shape == NO_STATUS, shape == STATUS_NULL), ZNODE_ILLEGAL),
                      (shape == STATUS_BOOL, ZNODE_MAPPING), (z3.Not(int32(status)), ZNODE_MAPPING),
                      (z3.And(status != 0, status != 1), ZNODE_ILLEGAL),
                      (z3.Not(z3.And(fmin >= 1, fmax >= 1, fmin <= fmax)), ZNODE_ILLEGAL)]
            outcome: Any = z3.IntVal(ZNODE_DECODED)
            for failed, code in reversed(checks):
                outcome = z3.If(failed, code, outcome)
            decoded = outcome == ZNODE_DECODED
            return {"outcome": outcome, "status": z3.If(decoded, status, DONT_CARE),
                    "min": z3.If(decoded, fmin, DONT_CARE), "max": z3.If(decoded, fmax, DONT_CARE)}
        return outputs

    def reference(profile: str) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            shape = x["shape"]
            level: object = float(x["fmax"]) if shape == LEVEL_FLOAT else x["fmax"]
            ranges = {"min_version_level": x["fmin"], "max_version_level": level}
            node: dict[str, object] = {"version": str(x["version"]) if shape == VERSION_STRING else x["version"],
                                       "status": True if shape == STATUS_BOOL else
                                       None if shape == STATUS_NULL else x["status"],
                                       "features": [ranges] if shape == FEATURES_LIST else {"f": ranges}}
            for gone, key in ((NO_VERSION, "version"), (NO_FEATURES, "features"), (NO_STATUS, "status")):
                if shape == gone:
                    del node[key]
            text = json.dumps(node)[:-1] if shape == NOT_JSON else json.dumps(node)
            try:
                got = FeatureZNode.decode(text.encode("utf-8"), 0, profile)  # type: ignore[arg-type]
            except JsonMappingException:
                return {"outcome": ZNODE_MAPPING, "status": DONT_CARE, "min": DONT_CARE, "max": DONT_CARE}
            except ValueError:
                return {"outcome": ZNODE_ILLEGAL, "status": DONT_CARE, "min": DONT_CARE, "max": DONT_CARE}
            rng = got.get("f")
            if got.epoch != 0 or len(got.features) != 1 or rng is None:  # kept something else than was written
                return {"outcome": ZNODE_DECODED, "status": DONT_CARE - 1, "min": DONT_CARE - 1,
                        "max": DONT_CARE - 1}
            return {"outcome": ZNODE_DECODED, "status": got.status.value, "min": rng.min_version_level,
                    "max": rng.max_version_level}
        return run

    names = ["shape", "version", "status", "fmin", "fmax"]
    well_formed = itertools.product((WELL_FORMED,), INT32_EDGES, INT32_EDGES, INT32_EDGES, INT32_EDGES)
    # Each malformation over values that pass or fail the checks before and after it.
    malformed = itertools.product(range(1, STATUS_NULL + 1), (-1, 0, 1, 2**31), (0, 1, 2), (0, 1), (1, 2**31))
    domain = [dict(zip(names, v, strict=True)) for v in itertools.chain(well_formed, malformed)]
    for profile in ("kip", "kafka"):
        yield f"FeatureZNode.decode, {profile}", Formula(names, build(profile)), domain, reference(profile)
    yield from _feature_znode_value_cases()
    yield from _feature_setup_cases()


# The node a controller finds at election: none, disabled (empty or with features), enabled (empty or not).
SETUP_NODES = ("absent", "disabled", "disabled+features", "enabled", "enabled+features")


def _feature_setup_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """What a newly elected controller writes to the node (Kafka 2.8's ``enableFeatureVersioning`` /
    ``disableFeatureVersioning``, the KIP's "Feature ZK node status"), on every node it can find: with the
    IBP at migration_ibp_version or above, a missing node is created ENABLED with the controller's supported
    ranges finalized, a disabled one (even with features) rewritten ENABLED and empty, an enabled one left as it
    is; below it, a missing node is created DISABLED and empty, and any node that is not already DISABLED and
    empty is rewritten so. Creation is version 0, a rewrite the next version. No config elects a controller
    under an old IBP over a node already disabled and empty (the campaign's api.py:736 survived every config), so
    this comparison is what reaches every branch."""
    def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        ibp, kind, epoch = x["ibp"] == 1, x["kind"], x["epoch"]
        absent, disabled = kind == 0, z3.Or(kind == 1, kind == 2)
        create = absent
        rewrite = z3.If(ibp, disabled, z3.And(z3.Not(absent), kind != 1))
        written = z3.Or(create, rewrite)
        return {"written": z3.If(written, 1, 0), "enabled": z3.If(written, z3.If(ibp, 1, 0), DONT_CARE),
                "epoch": z3.If(create, 0, z3.If(rewrite, epoch + 1, DONT_CARE)),
                "features": z3.If(z3.And(written, ibp, absent), 1, z3.If(written, 0, DONT_CARE))}

    def reference(x: Inputs) -> Outputs:
        kind = SETUP_NODES[x["kind"]]
        feats = (("f", FinalizedVersionRange(1, 1)),) if kind.endswith("+features") else ()
        status = FeatureZNodeStatus.ENABLED if kind.startswith("enabled") else FeatureZNodeStatus.DISABLED
        node = None if kind == "absent" else FeatureZNode(status, feats, x["epoch"])
        new = setup_feature_versioning(node, bool(x["ibp"]), (("g", SupportedVersionRange(1, 2)),))
        if new is None:
            return {"written": 0, "enabled": DONT_CARE, "epoch": DONT_CARE, "features": DONT_CARE}
        return {"written": 1, "enabled": int(new.status is FeatureZNodeStatus.ENABLED), "epoch": new.epoch,
                "features": len(new.features) if new.features in ((), (("g", FinalizedVersionRange(1, 2)),))
                else CODEC_ERROR}

    names = ["ibp", "kind", "epoch"]
    domain = [dict(zip(names, v, strict=True)) for v in itertools.product((0, 1), range(len(SETUP_NODES)), (0, 2))]
    yield "controller election's node setup", Formula(names, build), domain, reference


def _feature_znode_value_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """A node as Kafka's tests build one: without a ZooKeeper version it is ZooKeeper's first, 0 (built, or
    decoded from bytes; its JSON as text decodes alike, and a refusal quotes the bytes as text); ``get`` answers
    a feature's finalized range, or nothing for one the node lacks; a write is the next version. The system
    always passes the version it read, so only this comparison reads the defaults."""
    def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        return {"built_epoch": 0, "decoded_epoch": 0, "got_min": z3.If(x["named"] == 1, x["lo"], DONT_CARE - 1),
                "written_epoch": 1, "text_decodes_alike": 1, "message_quotes_the_text": 1}

    def reference(x: Inputs) -> Outputs:
        feats = (("f", FinalizedVersionRange(x["lo"], x["lo"] + 1)),)
        node = FeatureZNode(FeatureZNodeStatus.ENABLED, feats)
        got = node.get("f" if x["named"] else "g")
        decoded = FeatureZNode.decode(node.encode())
        try:  # the node's JSON given as text, as Kafka's tests give it, decodes as its bytes do
            alike = FeatureZNode.decode(node.encode().decode("utf-8")) == decoded
        except (ValueError, AttributeError):
            alike = False
        # Kafka's refusal quotes the node as text (new String(jsonBytes, UTF_8)), never as bytes
        old = '{"version":0,"status":1,"features":{}}'
        try:
            FeatureZNode.decode(old.encode("utf-8"))
            quotes = False
        except ValueError as exc:
            quotes = str(exc) == f"Unsupported version: 0 of feature information: {old}"
        return {"built_epoch": node.epoch, "decoded_epoch": decoded.epoch, "message_quotes_the_text": int(quotes),
                "got_min": got.min_version_level if got is not None else DONT_CARE - 1,
                "written_epoch": node.write(FeatureZNodeStatus.ENABLED, feats).epoch, "text_decodes_alike": int(alike)}

    yield ("FeatureZNode defaults", Formula(["lo", "named"], build),
           [{"lo": lo, "named": named} for lo in (1, 2) for named in (0, 1)], reference)


# --------------------------------------------------------------------------- a /feature node nobody can decode

# Bytes an operator may leave in /feature (zookeeper-shell): Kafka 2.8's FeatureZNode.decode throws an
# IllegalArgumentException for JSON it cannot parse and for a version below the schema's, and Jackson's
# JsonMappingException for a missing or mistyped version (feature_znode compares each check).
_UNREADABLE_PAYLOADS = (b'{"version": 1', b'{"features": {}, "status": 1}',
                        b'{"version": "1", "features": {}, "status": 1}',
                        b'{"version": -1, "features": {}, "status": 1}')
_MAPPING_PAYLOADS = (1, 2)  # the JsonMappingException ones: the feature listener's FatalExitError
_UNREADABLE_VERSION = 3  # the node's ZooKeeper version (the epoch a broker with no features cached may serve)


def features_unreadable_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """What the cluster does with a /feature node no reader can decode: the reference's system actions
    (reference_impl/features/system.py) on a state holding such bytes, which no config writes (every write is
    ``FeatureZNode.encode``'s), so no explored state reaches them. Apache Kafka 2.8.2:
    FinalizedFeatureChangeListener's ``updateLatestOrThrow`` logs an IllegalArgumentException and clears the
    broker's FinalizedFeatureCache (the broker runs on, serving epoch -1), and any other exception is a
    FatalExitError, at startup (``initOrThrow``) and on a watch notification alike: the broker exits (a
    controller that exits resigns). Below migration_ibp_version no listener runs: the broker decodes nothing
    (serving, with nothing cached, -1 under kafka and the node's version under the KIP's reading). The
    controller: ``onControllerFailover`` decodes the node (enable/disableFeatureVersioning) and ``elect()`` turns
    the failure into a controller move (nothing changes); an UpdateFeatures request is validated against the
    controller's own FinalizedFeatureCache (``processFeatureUpdatesWithActiveController``: ``existingFeatures`` is
    ``featureCache.get``), which the failed decode cleared, so it is answered as against an empty node, and a
    change writes a fresh node over the bytes (some request of the config's does); a broker registration is checked
    against that cache too (``partitionOnFeatureCompatibility``), so it is admitted. Inputs: ``payload`` (an index
    into the bytes above), ``ibp`` (the IBP enables feature versioning), ``ctl`` (broker 0, the reader, is the
    controller)."""
    from reference_impl.features.config import FeaturesConfig
    from reference_impl.features.state import Broker, BrokerStatus, FeaturesState, ZNode
    from reference_impl.features.system import FeaturesSystem

    names = ["payload", "ibp", "ctl"]

    def build(profile: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            fatal = z3.Or([x["payload"] == p for p in _MAPPING_PAYLOADS])
            runs = z3.Or(x["ibp"] == 0, z3.Not(fatal))
            uncached = -1 if profile == "kafka" else _UNREADABLE_VERSION
            served = z3.If(x["ibp"] == 1, -1, uncached)
            return {"start_runs": z3.If(runs, 1, 0), "start_epoch": z3.If(runs, served, 1),
                    "start_cached": z3.If(runs, 0, 1), "start_queued": z3.If(runs, 1, 0),
                    "notify_runs": z3.If(runs, 1, 0), "notify_epoch": z3.If(runs, served, 1),
                    "notify_cached": z3.If(runs, 0, 1),
                    "notify_controller": z3.If(z3.And(z3.Not(runs), x["ctl"] == 1), -1, z3.If(x["ctl"] == 1, 0, 1)),
                    "elect_unchanged": 1, "updates_as_if_empty": 1, "some_update_writes": x["ibp"], "registers": 1,
                    "view_unreadable": 1,
                    "api_without_node": 1, "api_reads_node": 1}
        return outputs

    def reference(profile: str) -> Callable[[Inputs], Outputs]:
        ts = FeaturesSystem(FeaturesConfig(profile=profile))
        old = ts.config.initial_release
        cached = ts.config.releases[0].features[:1]
        cache = tuple((f, FinalizedVersionRange(lo, lo)) for f, lo, _hi in cached)

        def run(x: Inputs) -> Outputs:
            z = ZNode(_UNREADABLE_PAYLOADS[x["payload"]], _UNREADABLE_VERSION)
            ctl = 0 if x["ctl"] else 1
            reader = Broker(old, BrokerStatus.RUNNING, 1, cache, True, False)  # an older node cached, epoch 1
            other = Broker(old, BrokerStatus.RUNNING, 1, cache, True, True)
            s = FeaturesState(z, bool(x["ibp"]), ctl, (reader, other), (), ts.initial_states()[0].client, 0, 0)
            stopped = FeaturesState(z, s.ibp_enabled, 1, (Broker(old, BrokerStatus.STOPPED, 1, cache, False, True),
                                                          other), (), s.client, 0, 0)
            started = ts.start_broker(stopped, 0)
            notified = ts.deliver_notification(s, 0)
            leaderless = FeaturesState(z, s.ibp_enabled, -1, (reader, other), (), s.client, 0, 0)
            queued = FeaturesState(z, s.ibp_enabled, 1, (Broker(old, BrokerStatus.RUNNING, -1, (), False, True),
                                                         other), (0,), s.client, 0, 0)
            readable = FeaturesState(ts.store(FeatureZNode(FeatureZNodeStatus.ENABLED, cache, _UNREADABLE_VERSION)),
                                     s.ibp_enabled, ctl, (reader, other), (), s.client, 0, 0)
            # The same requests against an empty node of the same version: the cleared cache Kafka validates with.
            empty = FeaturesState(ts.store(FeatureZNode(FeatureZNodeStatus.ENABLED, (), _UNREADABLE_VERSION)),
                                  s.ibp_enabled, ctl, (reader, other), (), s.client, 0, 0)
            outcomes, against_empty = ts.operator_outcomes(s), ts.operator_outcomes(empty)
            as_if_empty = len(outcomes) == len(against_empty) > 0 and all(
                a == b and (after == other_after or (after == s.znode and other_after == empty.znode))
                for (a, after), (b, other_after) in zip(outcomes, against_empty, strict=False))
            writes = sum(after != z for _a, after in outcomes)
            shown = ts.view(s)["node"]
            return {"start_runs": int(started.brokers[0].status is BrokerStatus.RUNNING),
                    "start_epoch": started.brokers[0].cache_epoch, "start_cached": len(started.brokers[0].cache),
                    "start_queued": int(0 in started.registration_queue),
                    "notify_runs": int(notified.brokers[0].status is BrokerStatus.RUNNING),
                    "notify_epoch": notified.brokers[0].cache_epoch, "notify_cached": len(notified.brokers[0].cache),
                    "notify_controller": notified.controller,
                    "elect_unchanged": int(ts.elect_controller(leaderless, 0) == leaderless),
                    "updates_as_if_empty": int(as_if_empty), "some_update_writes": int(writes > 0),
                    "registers": int(ts.process_registration(queued).brokers[0].registered),
                    "view_unreadable": int(shown == {"status": "UNREADABLE", "epoch": _UNREADABLE_VERSION,
                                                     "features": {}}),
                    "api_without_node": int(ts.controller_api(s).node is None),
                    # beside it, the same API over a node it can read: the node it decodes
                    "api_reads_node": int(ts.controller_api(readable).node == ts.read(readable.znode))}
        return run

    domain = [{"payload": p, "ibp": i, "ctl": c} for p in range(len(_UNREADABLE_PAYLOADS)) for i in (0, 1)
              for c in (0, 1)]
    for profile in ("kip", "kafka"):
        yield f"unreadable node, {profile}", Formula(names, build(profile)), domain, reference(profile)


# The full domains (benchmarks/prove.py) and the gate's (a z3 cell within seconds: one live broker).
DECISIONS = DecisionRules(
    full={"features_update": features_update_cases, "features_request": features_request_cases,
          "features_atomic": features_atomic_cases, "features_texts": features_texts_cases,
          "features_unreadable": features_unreadable_cases, "version_range": version_range_cases,
          "finalized_cache": finalized_cache_cases, "admin_update": admin_update_cases,
          "feature_znode": feature_znode_cases},
    gate={"features_update": lambda: features_update_cases(brokers=1), "features_request": features_request_cases,
          "features_atomic": features_atomic_cases, "features_texts": features_texts_cases,
          "features_unreadable": features_unreadable_cases, "version_range": version_range_cases,
          "finalized_cache": finalized_cache_cases, "admin_update": admin_update_cases,
          "feature_znode": feature_znode_cases},
)
