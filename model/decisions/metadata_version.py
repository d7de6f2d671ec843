"""KIP-778 (metadata.version) decision rules: lossless downgrades, the catalogs' own rules, the active
controller's decision on an update and the request's top-level answers, ``kafka-storage format`` and the
activation's bootstrap record; reference_impl/metadata_version/ is the reference.

Rules (``DECISIONS``, registered through the protocol's ``ProtocolEntry.decisions``):

* ``mv_lossless``: KIP-778's lossless-downgrade rule over each catalog (reference_impl/metadata_version/catalog.py).
* ``mv_catalog``: the catalogs' own rules (reference_impl/metadata_version/catalog.py): Kafka's level numbering,
  KRaft support, ``previous()``, and that printed names and KRaft levels read back to their member, per release;
  ``checkIfMetadataChanged`` / ``isLosslessDowngrade`` over every pair of members, with Kafka's didMetadataChange
  flags restated, their order and FeatureCommand's list between them; ``VersionRange.of`` (the short cast),
  ``intersects``, ``toString``, the constructor's ``0 <= min <= max``; QuorumFeatures' default metadata.version
  range per release, stable or not; and ``UpdateFeaturesResponse``'s readers.
* ``mv_update``: the active controller's decision on a ``metadata.version`` update (api.py QuorumController), per
  profile and Kafka release (3.9 / 4.0), catalog, dry run.
* ``mv_update_forms``: one metadata.version update in each form a request may carry it (an UpgradeType byte,
  known or not; the v0 AllowDowngrade flag; a negative level; an empty name) and during a ZK migration: the
  checks before the version rules, which error and message, and the level written; and (kip) an update of
  another feature, checked against the controller's own range and a broker's that lacks the feature (0-0).
* ``mv_replay``: FeatureControlManager.replay of one FeatureLevelRecord per profile and release (level 0 removes;
  kafka: a level the controller does not support is fatal; 4.0 skips kraft.version).
* ``mv_request``: the answers ControllerApis.handleUpdateFeatures gives before the decision (authorization, not
  the active controller, a feature named twice) and what their messages name; a request of two updates
  (metadata.version and another feature), one refused (``mv_atomic_cases``): all or nothing under kip, the valid
  half written under kafka 3.9, the first refusal answered at the top level under 4.0; the codes on the
  wire (Errors, DowngradeType, UpgradeType) against Kafka's numbers, restated.
* ``format_storage``: ``kafka-storage format --metadata-version`` (reference_impl/metadata_version/api.py
  format_storage): the level a new cluster bootstraps at, or a refusal; per profile and Kafka release.
* ``mv_activation``: KIP-778 "Initialization" (bootstrap_metadata_version, activation_metadata_version): the
  bootstrap record an activating controller writes and the version it runs at, for empty and non-empty logs.
* ``mv_registration``: ClusterControlManager.registerBroker's feature checks on what the system never sends (no
  metadata.version range: assumed, or refused by 4.0; a second feature in either order): the error, the feature
  and numbers the refusal names, the range registered.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import z3

from reference_impl.metadata_version import api as mv_api
from reference_impl.metadata_version import catalog as mv_catalog
from reference_impl.metadata_version.api import (
    BrokerRegistration,
    BrokerRegistrationRequest,
    DowngradeType,
    FeatureUpdate,
    MetaProperties,
    QuorumController,
    UpdateFeaturesRequest,
    VersionRange,
    activation_metadata_version,
    bootstrap_metadata_version,
    format_storage,
    request,
)
from reference_impl.metadata_version.catalog import CATALOGS, FEATURE_NAME
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

# --------------------------------------------------------------------------- metadata.version (KIP-778)

INVALID_UPDATE_VERSION, UNSAFE_FEATURE_DOWNGRADE = 95, 10_000
UNSUPPORTED_VERSION, INVALID_REGISTRATION = KAFKA_ERRORS["UNSUPPORTED_VERSION"], 119  # Errors.java
NONE_DT, SAFE_DT, UNSAFE_DT = 0, 1, 2
UPGRADE_TYPE_CODES = {"UNKNOWN": 0, "UPGRADE": 1, "SAFE_DOWNGRADE": 2, "UNSAFE_DOWNGRADE": 3}  # FeatureUpdate.java


def mv_lossless(catalog: Any, source: Any, target: Any) -> Any:
    """KIP-778 "Downgrades": lossless iff no version in (min, max] of the two changed the metadata format."""
    lo, hi = z3.If(source < target, source, target), z3.If(source < target, target, source)
    return z3.Not(z3.Or([z3.And(lo < level, level <= hi) for level, _label, changed in catalog.entries if changed]
                        or [z3.BoolVal(False)]))


def mv_lossless_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Every (source, target) pair of every catalog against ``Catalog.is_lossless``, and one level beyond each
    end: a level the catalog lacks is refused (CATALOG_ERROR), not judged."""
    def build(cat: Any) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            known = z3.And([z3.And(cat.minimum <= x[n], x[n] <= cat.latest) for n in ("source", "target")])
            return {"lossless": z3.If(known, z3.If(mv_lossless(cat, x["source"], x["target"]), 1, 0), CATALOG_ERROR)}
        return outputs

    def reference(cat: Any) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            try:
                return {"lossless": int(cat.is_lossless(x["source"], x["target"]))}
            except ValueError:
                return {"lossless": CATALOG_ERROR}
        return run

    for name, cat in CATALOGS.items():
        levels = range(cat.minimum - 1, cat.latest + 2)
        yield (f"catalog {name}", Formula(["source", "target"], build(cat)),
               [{"source": a, "target": b} for a in levels for b in levels], reference(cat))


# Kafka's MetadataVersion enum (MetadataVersion.java, 3.9 branch): 34 ZooKeeper-era IBPs (0.8.0 .. 3.0-IV0, feature
# level -1, the three-argument constructor), then 3.0-IV1 at level 1, each later member one level up.
FIRST_KRAFT_ORDINAL = 34
CATALOG_ERROR = -2  # the reference raised (an unparsable label, a level no member has)


def mv_catalog_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The catalogs' own rules, for every member / level: Kafka's level numbering (-1 before 3.0-IV1, then one
    per member), KRaft support from 3.0-IV1, ``previous()``, and that every printed name parses back to its
    member (``fromVersionString(version())``, the catalog's ``parse(label)``) and every KRaft level to its member
    (``fromFeatureLevel``), per Kafka release (4.0's enum starts at 3.3-IV3); a level given as a bool or a string
    is refused. The system reads levels as ints and never prints or parses a name, so without this rule only
    ``tests/kafka`` would see a wrong level or name."""
    k = FIRST_KRAFT_ORDINAL

    def formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        o = x["ordinal"]
        return {"level": z3.If(o >= k, o - k + 1, -1), "kraft": o >= k, "previous": o - 1, "parsed": o,
                # fromFeatureLevel(-1) is the first member with that level: 0.8.0.
                "by_level": z3.If(o >= k, o, 0)}

    def reference(release: str) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            mv = mv_catalog.VERSIONS[x["ordinal"]]
            prev = mv.previous()

            def ordinal_of(read: Callable[[], Any]) -> int:
                try:
                    return int(read().ordinal)
                except ValueError:
                    return CATALOG_ERROR

            return {"level": mv.feature_level, "kraft": int(mv.is_kraft_supported()),
                    "previous": -1 if prev is None else prev.ordinal,
                    "parsed": ordinal_of(lambda: mv_catalog.from_version_string(mv.version(), release)),
                    "by_level": ordinal_of(lambda: mv_catalog.from_feature_level(mv.feature_level, release))}
        return run

    for release in mv_catalog.KAFKA_RELEASES:
        members = mv_catalog.versions(release)
        yield (f"MetadataVersion, release {release}", Formula(["ordinal"], formula),
               [{"ordinal": mv.ordinal} for mv in members], reference(release))
    def label_reference(cat: Any) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            # The API's callers are Python: a level given as a bool or a string is refused (ValueError), as
            # Java's types would refuse it, never read as the int it looks like.
            value: Any = (x["level"], x["level"] == 1, str(x["level"]))[x["kind"]]
            try:
                return {"parsed": cat.parse(cat.label(value))}
            except ValueError:
                return {"parsed": CATALOG_ERROR}
        return run

    yield from _mv_predicate_cases()
    yield from _mv_name_cases()
    yield from _mv_metadata_changed_cases()
    yield from _mv_api_value_cases()
    for name, cat in CATALOGS.items():
        # a level outside the catalog has no label: refused, never another level's (an index that wraps)
        yield (f"catalog {name}, labels", Formula(["level", "kind"], lambda x, cat=cat: {
            "parsed": z3.If(z3.And(x["kind"] == 0, cat.minimum <= x["level"], x["level"] <= cat.latest),
                            x["level"], CATALOG_ERROR)}),
               [{"level": level, "kind": kind} for level in (cat.minimum - 2, cat.minimum - 1, *cat.levels,
                                                             cat.latest + 1) for kind in range(3)],
               label_reference(cat))
    yield from _catalog_setting_cases()


def _by_index(k: Any, values: Sequence[int]) -> Any:
    """values[k] as a Z3 term over the index k (CATALOG_ERROR outside the table)."""
    out: Any = z3.IntVal(CATALOG_ERROR)
    for i, value in enumerate(values):
        out = z3.If(k == i, value, out)
    return out


# Each catalog's settings, restated: (bootstrap floor, first level with controller registrations, first level,
# last level). kafka: MINIMUM_BOOTSTRAP_VERSION 3.3-IV0 (4), IBP_3_7_IV0 (15), 3.0-IV1 (1) to 4.5-IV0 (34); the
# KIP's example: V1 for both (it has neither history), V1 to V5.
CATALOG_SETTINGS = {"example": (1, 1, 1, 5), "kafka": (4, 15, 1, 34)}
# Catalog(entries) shapes: consecutive levels are taken; none, a gap, a repeat or a descent are refused.
CATALOG_SHAPES = (((1, 2, 3), True), ((7,), True), ((), False), ((1, 3), False), ((1, 1, 2), False),
                  ((2, 1), False))


def _catalog_setting_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The catalogs' own settings (the kafka profile's floor and controller-registration level, the level range)
    against a restated table, and which entry lists a Catalog accepts. The rules read these settings from the
    catalog itself, so only this sees one of them changed."""
    names = sorted(CATALOG_SETTINGS)

    def settings_formula(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        return {key: _by_index(x["k"], [CATALOG_SETTINGS[name][i] for name in names])
                for i, key in enumerate(("floor", "registration", "minimum", "latest"))}

    def settings_reference(x: Inputs) -> Outputs:
        cat = CATALOGS[names[x["k"]]]
        return {"floor": cat.bootstrap_floor, "registration": cat.controller_registration_level,
                "minimum": cat.minimum, "latest": cat.latest}

    yield ("catalog settings", Formula(["k"], settings_formula), [{"k": k} for k in range(len(names))],
           settings_reference)

    def shape_formula(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        return {"accepted": z3.Or([x["k"] == k for k, (_levels, ok) in enumerate(CATALOG_SHAPES) if ok])}

    def shape_reference(x: Inputs) -> Outputs:
        levels, _ok = CATALOG_SHAPES[x["k"]]
        try:
            mv_catalog.Catalog("shape", tuple((lvl, f"L{lvl}", False) for lvl in levels), bootstrap_floor=1,
                               controller_registration_level=1)
        except ValueError:
            return {"accepted": 0}
        return {"accepted": 1}

    yield ("Catalog entries", Formula(["k"], shape_formula), [{"k": k} for k in range(len(CATALOG_SHAPES))],
           shape_reference)

    # The kafka catalog's parse under a release (none: 3.9): the level of the member the text names there, -1
    # for a ZooKeeper-era member (its callers refuse it), refused for a text the release has no member for.
    probes = (("3.0-IV1", None, 1), ("3.0-IV1", "3.9", 1), ("3.0-IV1", "4.0", CATALOG_ERROR),
              ("4.1-IV1", "3.9", 27), ("4.1-IV1", "4.0", CATALOG_ERROR), ("4.0", "4.0", 25),
              ("4.0", "3.9", CATALOG_ERROR), ("3.3", "4.0", 7), ("0.10.0", None, -1))
    kafka = CATALOGS["kafka"]

    def parse_reference(x: Inputs) -> Outputs:
        text, release, _want = probes[x["k"]]
        try:
            return {"level": kafka.parse(text, release)}
        except ValueError:
            return {"level": CATALOG_ERROR}

    def parse_formula(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        return {"level": _by_index(x["k"], [want for _text, _release, want in probes])}

    yield ("catalog kafka, parse per release", Formula(["k"], parse_formula), [{"k": k} for k in range(len(probes))],
           parse_reference)


# The KRaft members whose didMetadataChange is false (every ZooKeeper-era member is constructed with the flag true):
# MetadataVersion.java read first-hand up to 3.7-IV4 (apache/kafka 3ed11f5d7dea898dbd4d7868b8094b53540b9643), and
# for the later members Kafka 4.0's (4ae681446f18f9a6d7a59f317013ef82379a4ba4), whose numbering the catalog keeps.
MV_METADATA_UNCHANGED = ("3.1-IV0", "3.3-IV0", "3.5-IV0", "3.5-IV1", "3.6-IV0", "3.7-IV1", "3.7-IV3", "3.7-IV4",
                         "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV2", "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0",
                         "4.2-IV1", "4.4-IV0", "4.5-IV0")


def _mv_metadata_changed_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """MetadataVersion.checkIfMetadataChanged (and isLosslessDowngrade, its negation) over every pair of members:
    did any member in (lower, higher] by ordinal change the format; and the pair's order (isLessThan, isAtLeast)
    and FeatureCommand's list of the members between them. The system reads the catalog's levels, not
    these functions (tests/kafka do): only this comparison sees an edit to them or to a member's flag."""
    unchanged = {mv.ordinal for mv in mv_catalog.VERSIONS if mv.version() in MV_METADATA_UNCHANGED}
    changed = [mv.ordinal for mv in mv_catalog.VERSIONS if mv.ordinal not in unchanged]

    def formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        a, b = x["source"], x["target"]
        lo, hi = z3.If(a < b, a, b), z3.If(a < b, b, a)
        moved = z3.Or([z3.And(lo < o, o <= hi) for o in changed])
        # isLessThan / isAtLeast compare ordinals; FeatureCommand.metadataVersionsToString lists first .. last
        # (nothing when last is older), each member printed as itself
        return {"changed": moved, "lossless": z3.Not(moved), "less": a < b, "at_least": a >= b,
                "listed": z3.If(a <= b, b - a + 1, 0), "listed_ends": 1}

    def reference(x: Inputs) -> Outputs:
        a, b = mv_catalog.VERSIONS[x["source"]], mv_catalog.VERSIONS[x["target"]]
        text = mv_catalog.metadata_versions_to_string(a, b)
        items = text.split(", ") if text else []
        return {"changed": int(mv_catalog.check_if_metadata_changed(a, b)),
                "lossless": int(mv_catalog.is_lossless_downgrade(a, b)),
                "less": int(a.is_less_than(b)), "at_least": int(a.is_at_least(b)), "listed": len(items),
                "listed_ends": int(not items or (items[0], items[-1]) == (str(a), str(b)))}

    ordinals = [mv.ordinal for mv in mv_catalog.VERSIONS]
    yield ("MetadataVersion.checkIfMetadataChanged", Formula(["source", "target"], formula),
           [{"source": a, "target": b} for a in ordinals for b in ordinals], reference)


# QuorumFeatures.defaultFeatureMap's metadata.version range per Kafka release, restated by version name: 3.9 from
# MINIMUM_KRAFT_VERSION (3.0-IV1) to its LATEST_PRODUCTION (3.9-IV0), with unstable versions enabled to the last
# member the catalog carries (4.1-IV1); 4.0 from MINIMUM_VERSION (3.3-IV3) to 4.0-IV3, unstable to latestTesting()
# 4.1-IV0 (Kafka 4.0's MetadataVersion.java).
MV_DEFAULT_RANGES = {("3.9", False): ("3.0-IV1", "3.9-IV0"), ("3.9", True): ("3.0-IV1", "4.1-IV1"),
                     ("4.0", False): ("3.3-IV3", "4.0-IV3"), ("4.0", True): ("3.3-IV3", "4.1-IV0")}
RANGE_TEXT_ONE, RANGE_TEXT_PLUS, RANGE_TEXT_SPAN = 0, 1, 2  # VersionRange.toString's three forms
SHORT_PROBES = (-32769, -32768, -1, 0, 1, 7, 32767, 32768, 65535, 65536, 70000)


def _constructs(lo: int, hi: int) -> bool:
    try:
        VersionRange(lo, hi)
    except ValueError:
        return False
    return True


def _mv_api_value_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The Kafka values tests/kafka read and no system action does: ``VersionRange.of`` (each bound cast to a Java
    short, no check), ``intersects``, ``contains`` and ``toString``; QuorumFeatures' default metadata.version range
    per release, stable or not; and ``UpdateFeaturesResponse``'s readers (a feature's result, the first error:
    the top-level one before any feature's, ``ok``). ``valid``: the constructor (not Kafka's: ours, for the
    ranges of a configuration) takes exactly ``0 <= min <= max``."""
    def short(v: Any) -> Any:  # (short) v: two's complement, 16 bits; one wrap is enough for |v| < 98304
        return z3.If(v > 32767, v - 65536, z3.If(v < -32768, v + 65536, v))

    def range_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        lo, hi = short(x["lo"]), short(x["hi"])
        # toString: "7" when min == max, "1+" when max is Short.MAX_VALUE, "1-7" otherwise
        text = z3.If(lo == hi, RANGE_TEXT_ONE, z3.If(hi == 32767, RANGE_TEXT_PLUS, RANGE_TEXT_SPAN))
        return {"min": lo, "max": hi, "intersects": z3.And(lo <= x["b"], hi >= x["a"]),
                "contains": z3.And(lo <= x["a"], x["a"] <= hi), "text": text,
                "valid": z3.And(0 <= x["lo"], x["lo"] <= x["hi"])}

    def range_reference(x: Inputs) -> Outputs:
        r = VersionRange.of(x["lo"], x["hi"])
        text = {f"{r.min}": RANGE_TEXT_ONE, f"{r.min}+": RANGE_TEXT_PLUS,
                f"{r.min}-{r.max}": RANGE_TEXT_SPAN}.get(str(r), CODEC_ERROR)
        return {"min": r.min, "max": r.max, "intersects": int(r.intersects(VersionRange.of(x["a"], x["b"]))),
                "contains": int(r.contains(x["a"])), "text": text, "valid": int(_constructs(x["lo"], x["hi"]))}

    domain = [{"lo": lo, "hi": hi, "a": a, "b": b} for lo in SHORT_PROBES for hi in SHORT_PROBES
              for a in (-1, 0, 1, 7, 8) for b in (-1, 0, 1, 7, 8) if a <= b]
    yield "VersionRange.of", Formula(["lo", "hi", "a", "b"], range_formula), domain, range_reference
    yield from _controller_setting_cases()

    cat = CATALOGS["kafka"]
    keys = sorted(MV_DEFAULT_RANGES)

    def default_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        lo: Any = z3.IntVal(0)
        hi: Any = z3.IntVal(0)
        for k, (release, unstable) in enumerate(keys):
            first, last = MV_DEFAULT_RANGES[release, unstable]
            lo, hi = z3.If(x["k"] == k, cat.parse(first), lo), z3.If(x["k"] == k, cat.parse(last), hi)
        return {"min": lo, "max": hi}

    def default_reference(x: Inputs) -> Outputs:
        release, unstable = keys[x["k"]]
        r = mv_api.default_local_supported(cat, release, unstable)
        return {"min": r.min, "max": r.max}

    yield ("QuorumFeatures default metadata.version range", Formula(["k"], default_formula),
           [{"k": k} for k in range(len(keys))], default_reference)

    # A response: a top-level error (none or INVALID_REQUEST) and two features' results (none or
    # FEATURE_UPDATE_FAILED, each with its own message), asked for the first feature, the second, or one it has not.
    invalid, failed = INVALID_REQUEST, FEATURE_UPDATE_FAILED

    def response_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        top, e0, e1 = x["top"], x["e0"], x["e1"]
        return {"ok": z3.And(top == 0, e0 == 0, e1 == 0),
                "first_error": z3.If(top != 0, top, z3.If(e0 != 0, e0, e1)),
                # whose message comes with it: 0 the response's, 1 and 2 a feature's, -1 none
                "first_message": z3.If(top != 0, 0, z3.If(e0 != 0, 1, z3.If(e1 != 0, 2, -1))),
                "asked": z3.If(x["ask"] == 0, e0, z3.If(x["ask"] == 1, e1, -1))}

    def response_reference(x: Inputs) -> Outputs:
        def error(code: int) -> Any:
            return mv_api.Errors(code)

        res = mv_api.UpdateFeaturesResponse(
            error(x["top"]), "top" if x["top"] else None,
            (mv_api.UpdatableFeatureResult("f0", error(x["e0"]), "m0" if x["e0"] else None),
             mv_api.UpdatableFeatureResult("f1", error(x["e1"]), "m1" if x["e1"] else None)))
        first, message = res.first_error()
        try:
            asked = int(res.result(("f0", "f1", "f2")[x["ask"]]).error)
        except KeyError:
            asked = -1
        return {"ok": int(res.ok), "first_error": int(first),
                "first_message": {"top": 0, "m0": 1, "m1": 2, None: -1}.get(message, -2), "asked": asked}

    yield ("UpdateFeaturesResponse readers", Formula(["top", "e0", "e1", "ask"], response_formula),
           [{"top": t, "e0": a, "e1": b, "ask": k} for t in (0, invalid) for a in (0, failed) for b in (0, failed)
            for k in range(3)], response_reference)


SETTING_PROFILES, SETTING_RELEASES = ("kip", "kafka", "zk"), ("3.9", "4.0", "3.8")
SETTING_BOOTSTRAP = (None, -1, 5)  # minimum_bootstrap_version: Kafka's default, 3.0-IV0 (its tests'), 3.3-IV1


def _controller_setting_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """QuorumController's settings: a profile of the two, a release of the two, and a minimum_bootstrap_version
    only under kafka 3.9 (FeatureControlManager.Builder.setMinimumBootstrapVersion; 4.0 has no such setting and
    kip's floor is its catalog's minimum), every other combination refused. ``floor``, the lowest level an update
    may set: kip the catalog's minimum; kafka 4.0 its MINIMUM_VERSION (3.3-IV3); kafka 3.9 the setting, else
    MINIMUM_BOOTSTRAP_VERSION (3.3-IV0)."""
    cat = CATALOGS["kafka"]

    def formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        p, r, m = x["p"], x["r"], x["m"]
        valid = z3.And(p < 2, r < 2, z3.Or(m == 0, z3.And(p == 1, r == 0)))
        floor = z3.If(p == 0, cat.minimum, z3.If(r == 1, cat.parse("3.3-IV3"),
                      z3.If(m == 1, -1, z3.If(m == 2, 5, cat.parse("3.3-IV0")))))
        return {"valid": valid, "floor": z3.If(valid, floor, -99)}

    def reference(x: Inputs) -> Outputs:
        try:
            ctl = QuorumController(catalog=cat, node_id=0, local_supported=(), voters=((0, None),),
                                   profile=SETTING_PROFILES[x["p"]], kafka_release=SETTING_RELEASES[x["r"]],
                                   minimum_bootstrap_version=SETTING_BOOTSTRAP[x["m"]])
        except ValueError:
            return {"valid": 0, "floor": -99}
        return {"valid": 1, "floor": ctl.floor}

    yield ("QuorumController settings", Formula(["p", "r", "m"], formula),
           [{"p": p, "r": r, "m": m} for p in range(3) for r in range(3) for m in range(3)], reference)


# MetadataVersion's feature predicates: the first version each holds from (Kafka 4.0's MetadataVersion.java;
# the same in 3.9 except ELR, which 3.9 put at 4.0-IV0 and 4.0 at 4.0-IV1, Kafka 4.0's numbering kept here).
# Kafka's MetadataVersion members as they print (version()), in ordinal order: MetadataVersion.java, the 3.9
# branch for 0.8.0 .. 3.9-IV0, Kafka 4.0's (4ae681446f18) for the 4.0 and 4.1 members, and the 4.4.0 jar's
# MetadataVersion.VERSIONS for 4.2-IV0 .. 4.5-IV0.
MV_NAMES = (
    "0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0", "0.10.1-IV1", "0.10.1-IV2",
    "0.10.2-IV0", "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2", "1.0-IV0", "1.1-IV0", "2.0-IV0", "2.0-IV1", "2.1-IV0",
    "2.1-IV1", "2.1-IV2", "2.2-IV0", "2.2-IV1", "2.3-IV0", "2.3-IV1", "2.4-IV0", "2.4-IV1", "2.5-IV0", "2.6-IV0",
    "2.7-IV0", "2.7-IV1", "2.7-IV2", "2.8-IV0", "2.8-IV1", "3.0-IV0", "3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0",
    "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2",
    "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2",
    "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0", "4.2-IV1", "4.3-IV0", "4.4-IV0", "4.4-IV1", "4.4-IV2", "4.5-IV0")
# Each release's own enum (first .. last member) and its LATEST_PRODUCTION.
MV_RELEASE_MEMBERS = {"3.9": ("0.8.0", "4.1-IV1", "3.9-IV0"), "4.0": ("3.3-IV3", "4.1-IV0", "4.0-IV3"),
                      "4.1": ("3.3-IV3", "4.2-IV1", "4.1-IV1"), "4.2": ("3.3-IV3", "4.3-IV0", "4.2-IV1"),
                      "4.3": ("3.3-IV3", "4.4-IV0", "4.3-IV0"), "4.4": ("3.3-IV3", "4.5-IV0", "4.4-IV2")}
# The whole list, as latestTesting() / VERSIONS read without a release (and 3.9's LATEST_PRODUCTION).
MV_ALL_MEMBERS = ("0.8.0", "4.5-IV0", "3.9-IV0")
# fromVersionString probes per release: the text and the member it names (None: refused). Only the first two
# dot-separated segments count, three after "0." (Java's split drops trailing empty strings); a bare release
# names its last production member; 4.0 knows no member outside its enum.
MV_TEXT_PROBES = (
    ("3.9", "3.3-IV3", "3.3-IV3"), ("3.9", "3.3", "3.3-IV3"), ("3.9", "3.3.1", "3.3-IV3"),
    ("3.9", "3.3-IV3.1", "3.3-IV3"), ("3.9", "3.0", "3.0-IV1"), ("3.9", "2.8", "2.8-IV1"), ("3.9", "3.9", "3.9-IV0"),
    ("3.9", "4.0", None), ("3.9", "4.0-IV3", "4.0-IV3"), ("3.9", "4.1-IV1", "4.1-IV1"), ("3.9", "1.0", "1.0-IV0"),
    ("3.9", "0.10.0", "0.10.0-IV1"), ("3.9", "0.10.0.1", "0.10.0-IV1"), ("3.9", "0.10.0-IV0", "0.10.0-IV0"),
    ("3.9", "0.8.2", "0.8.2"), ("3.9", "0.8.2.1", "0.8.2"), ("3.9", "0.8", None), ("3.9", "3", None),
    ("3.9", "3.", None), ("3.9", "3.3.", None), ("3.9", "3..3", None), ("3.9", ".3.3", None), ("3.9", "", None),
    ("3.9", "3.3-IV9", None),
    ("4.0", "3.3-IV3", "3.3-IV3"), ("4.0", "3.3", "3.3-IV3"), ("4.0", "3.3.1", "3.3-IV3"), ("4.0", "3.4", "3.4-IV0"),
    ("4.0", "3.9", "3.9-IV0"), ("4.0", "4.0", "4.0-IV3"), ("4.0", "4.0-IV3", "4.0-IV3"), ("4.0", "4.1-IV0", "4.1-IV0"),
    ("4.0", "4.1", None), ("4.0", "4.1-IV1", None), ("4.0", "3.2-IV0", None), ("4.0", "3.0", None),
    ("4.0", "2.8", None), ("4.0", "0.10.0", None), ("4.0", "3.", None),
    # Only dots (Java's split leaves no segment at all), and what Java's types would refuse: not a string.
    ("3.9", ".", None), ("3.9", "..", None), ("3.9", None, None), ("4.0", 3.3, None),
    # 4.1 knows 4.2-IV1 (its latestTesting()); from 4.2 the parse (unstable versions on, as FeatureCommand asks)
    # refuses with the list of what it knows, and a bare release names its last production member only.
    ("4.1", "4.1", "4.1-IV1"), ("4.1", "4.2-IV1", "4.2-IV1"), ("4.1", "4.2", None), ("4.1", "4.3-IV0", None),
    ("4.2", "4.2", "4.2-IV1"), ("4.2", "4.3-IV0", "4.3-IV0"), ("4.2", "4.3", None), ("4.2", "9.9", None),
    ("4.3", "4.3", "4.3-IV0"), ("4.3", "4.4-IV0", "4.4-IV0"), ("4.3", "3.2-IV0", None),
    ("4.4", "4.4", "4.4-IV2"), ("4.4", "4.4-IV2.1", "4.4-IV2"), ("4.4", "4.5-IV0", "4.5-IV0"), ("4.4", "4.5", None),
    ("4.4", "3.3.1", "3.3-IV3"), ("4.4", "", None))


def _mv_refusal(release: str, text: object) -> str:
    """fromVersionString's words for a text the release has no member for (4.0 names its bounds); a value that
    is not a string is refused as its repr, before any release is consulted."""
    if not isinstance(text, str):
        return f"Version {text!r} is not a valid version"
    if release in ("4.0", "4.1"):
        return (f"Version {text} is not a valid version. The minimum version is 3.3-IV3 and the maximum version is "
                f"{MV_RELEASE_MEMBERS[release][1]}")
    if release in MV_RELEASE_MEMBERS and release != "3.9":  # 4.2 on: every member the release knows
        first, last, _production = MV_RELEASE_MEMBERS[release]
        known = MV_NAMES[MV_NAMES.index(first):MV_NAMES.index(last) + 1]
        return f"Unknown metadata.version '{text}'. Supported metadata.version are: {', '.join(known)}"
    return f"Version {text} is not a valid version"


def _mv_name_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """What tests/kafka read and no system action does: every member's printed name (version()) and release
    (shortVersion()), which members each release's enum has (VERSIONS), isProduction per release, and the
    member a bare release names; fromVersionString on texts that probe its segment rule and each release's
    bounds, with Kafka's words for a refusal; fromFeatureLevel on every level around each release's range. The
    names are restated (MV_NAMES), not read from the catalog, so an edit to how a member prints, or to which
    members a release has, disagrees here."""
    shorts = sorted({n.split("-")[0] for n in MV_NAMES})
    ordinal = {n: o for o, n in enumerate(MV_NAMES)}

    def member_formula(release: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        first, last, production = (ordinal[n] for n in MV_RELEASE_MEMBERS[release])

        def bare(o: int) -> int:
            short = MV_NAMES[o].split("-")[0]
            named = [k for k in range(first, production + 1) if MV_NAMES[k].split("-")[0] == short]
            return named[-1] if named else CATALOG_ERROR

        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            o = x["ordinal"]
            return {"member": z3.And(first <= o, o <= last), "name": o, "production": o <= production,
                    "short": _by_index(o, [shorts.index(n.split("-")[0]) for n in MV_NAMES]),
                    "bare": _by_index(o, [bare(k) for k in range(len(MV_NAMES))])}
        return outputs

    def member_reference(release: str) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            mv = mv_catalog.VERSIONS[x["ordinal"]]
            try:
                bare = mv_catalog.from_version_string(mv.short_version(), release).ordinal
            except ValueError:
                bare = CATALOG_ERROR
            short = mv.short_version()
            return {"member": int(mv in mv_catalog.versions(release)), "name": ordinal.get(mv.version(), -3),
                    "production": int(mv.is_production(release)), "bare": bare,
                    "short": shorts.index(short) if short in shorts else -3}
        return run

    def parse_formula(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        return {"parsed": _by_index(x["k"], [CATALOG_ERROR if want is None else ordinal[want]
                                         for _r, _t, want in MV_TEXT_PROBES]), "words": 1}

    def parse_reference(x: Inputs) -> Outputs:
        release, text, _want = MV_TEXT_PROBES[x["k"]]
        try:
            return {"parsed": mv_catalog.from_version_string(text, release).ordinal, "words": 1}
        except ValueError as e:
            return {"parsed": CATALOG_ERROR, "words": int(str(e) == _mv_refusal(release, text))}

    def level_formula(release: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        first, last, _production = (ordinal[n] for n in MV_RELEASE_MEMBERS[release])
        k = FIRST_KRAFT_ORDINAL

        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            level = x["level"]
            # level -1 is the first ZooKeeper-era member, 0.8.0 (only 3.9's enum has one); level n >= 1 is the
            # member n after 3.0-IV0; a bool or a string is no level at all
            o = z3.If(level == -1, 0, level + k - 1)
            known = z3.And(x["kind"] == 0, z3.Or(level == -1, level >= 1), first <= o, o <= last)
            return {"member": z3.If(known, o, CATALOG_ERROR), "words": 1}
        return outputs

    def level_reference(release: str) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            # The API's callers are Python: True or "7" is refused as Java's types would refuse it.
            level: Any = (x["level"], x["level"] == 1, str(x["level"]))[x["kind"]]
            try:
                return {"member": mv_catalog.from_feature_level(level, release).ordinal, "words": 1}
            except ValueError as e:
                # the release's latestTesting() level
                top = MV_NAMES.index(MV_RELEASE_MEMBERS[release][1]) - FIRST_KRAFT_ORDINAL + 1
                words = (f"No MetadataVersion with feature level {level!r}" if x["kind"] else
                         f"No MetadataVersion with feature level {level}"
                         + (f". Valid feature levels are from 7 to {top}." if release != "3.9" else ""))
                return {"member": CATALOG_ERROR, "words": int(str(e) == words)}
        return run

    # latestTesting(), latestProduction() and VERSIONS, bare and per release: the ordinal of the last member,
    # the last production one, and the first and last of the enum (the catalog's whole list without a release).
    bounds = [("testing", None), ("production", None), ("first", None), ("last", None),
              *((kind, r) for r in MV_RELEASE_MEMBERS for kind in ("testing", "production", "first", "last"))]

    def bound_expected(kind: str, release: str | None) -> int:
        first, last, production = MV_ALL_MEMBERS if release is None else MV_RELEASE_MEMBERS[release]
        return ordinal[{"testing": last, "production": production, "first": first, "last": last}[kind]]

    def bound_reference(x: Inputs) -> Outputs:
        kind, release = bounds[x["k"]]
        if kind == "testing":
            return {"ordinal": mv_catalog.latest_testing(release).ordinal}
        if kind == "production":
            mv = mv_catalog.latest_production() if release is None else mv_catalog.latest_production(release)
            return {"ordinal": mv.ordinal}
        members = mv_catalog.versions(release)
        return {"ordinal": (members[0] if kind == "first" else members[-1]).ordinal}

    yield ("MetadataVersion bounds (latestTesting, latestProduction, VERSIONS)", Formula(["k"], lambda x: {
        "ordinal": _by_index(x["k"], [bound_expected(kind, release) for kind, release in bounds])}),
           [{"k": k} for k in range(len(bounds))], bound_reference)
    for release in MV_RELEASE_MEMBERS:
        yield (f"MetadataVersion names and members, release {release}", Formula(["ordinal"], member_formula(release)),
               [{"ordinal": o} for o in range(len(mv_catalog.VERSIONS))], member_reference(release))
        yield (f"MetadataVersion.fromFeatureLevel, release {release}",
               Formula(["level", "kind"], level_formula(release)),
               [{"level": level, "kind": 0} for level in range(-3, 37)]
               + [{"level": level, "kind": kind} for level in (1, 7, 21) for kind in (1, 2)], level_reference(release))
    yield ("MetadataVersion.fromVersionString", Formula(["k"], parse_formula),
           [{"k": k} for k in range(len(MV_TEXT_PROBES))], parse_reference)


MV_PREDICATE_FIRST = (
    ("is_feature_versioning_supported", "2.7-IV0"), ("is_leader_recovery_supported", "3.2-IV0"),
    ("is_no_op_record_supported", "3.3-IV1"), ("is_broker_registration_change_record_supported", "3.3-IV2"),
    ("is_in_controlled_shutdown_state_supported", "3.3-IV3"), ("is_api_forwarding_enabled", "3.4-IV0"),
    ("is_migration_supported", "3.4-IV0"), ("is_scram_supported", "3.5-IV2"),
    ("is_metadata_transaction_supported", "3.6-IV1"), ("is_delegation_token_supported", "3.6-IV2"),
    ("is_controller_registration_supported", "3.7-IV0"), ("is_directory_assignment_supported", "3.7-IV2"),
    ("is_elr_supported", "4.0-IV1"))


def _mv_predicate_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Every MetadataVersion's feature predicates and record versions (MetadataVersionTest's per-version
    tables): each predicate from its first version on; the leader epoch bump on ISR shrink below 3.6-IV0;
    RegisterBrokerRecord 3 from 3.7-IV2 (log dirs), 2 from 3.4-IV0 (isMigratingZkBroker), 1 from 3.3-IV3, else 0;
    PartitionRecord / PartitionChangeRecord 2 with ELR, 1 from 3.7-IV2, else 0; RegisterControllerRecord 0
    from 3.7-IV0, refused before. The system reads only the transaction and migration predicates."""
    first = {name: mv_catalog.from_version_string(v).ordinal for name, v in MV_PREDICATE_FIRST}
    bump_until = mv_catalog.from_version_string("3.6-IV0").ordinal

    def formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        o = x["ordinal"]
        on = {name: o >= ordinal for name, ordinal in first.items()}
        return {**on, "bump_on_isr_shrink": o < bump_until,
                "broker_record": z3.If(on["is_directory_assignment_supported"], 3,
                                       z3.If(on["is_migration_supported"], 2,
                                             z3.If(on["is_in_controlled_shutdown_state_supported"], 1, 0))),
                "partition_record": z3.If(on["is_elr_supported"], 2,
                                          z3.If(on["is_directory_assignment_supported"], 1, 0)),
                "change_record": z3.If(on["is_elr_supported"], 2, z3.If(on["is_directory_assignment_supported"], 1, 0)),
                "controller_record": z3.If(on["is_controller_registration_supported"], 0, CATALOG_ERROR)}

    def reference(x: Inputs) -> Outputs:
        mv = mv_catalog.VERSIONS[x["ordinal"]]
        try:
            controller_record = mv.register_controller_record_version()
        except RuntimeError:
            controller_record = CATALOG_ERROR
        return {**{name: int(getattr(mv, name)()) for name, _ in MV_PREDICATE_FIRST},
                "bump_on_isr_shrink": int(mv.is_leader_epoch_bump_required_on_isr_shrink()),
                "broker_record": mv.register_broker_record_version(),
                "partition_record": mv.partition_record_version(),
                "change_record": mv.partition_change_record_version(), "controller_record": controller_record}

    yield ("MetadataVersion predicates", Formula(["ordinal"], formula),
           [{"ordinal": mv.ordinal} for mv in mv_catalog.VERSIONS], reference)


def mv_update_rule(catalog: Any, profile: str, release: str, dry_run: bool, x: Any, y: Any, dt: Any, llo: Any,
                   lhi: Any, others: Sequence[tuple[Any, Any, Any]], brokers: Sequence[tuple[Any, Any, Any]],
                   mutations: frozenset[str] = frozenset()) -> tuple[Any, Any, Any]:
    """The active controller's decision on one ``metadata.version`` update: KIP-778 (``kip``: floor, catalog,
    downgrade type, every broker, the controller itself, a majority of voters, lossless unless UNSAFE) and
    Kafka 3.9 / 4.0 (``kafka``: FeatureControlManager.updateFeature; every voter once controller
    registration exists; no lossy downgrade at all). ``x`` the finalized level, ``y`` the requested one,
    ``dt`` the DowngradeType code, ``llo`` / ``lhi`` the controller's range, ``others`` (registered, lo, hi)
    for the other voters, ``brokers`` (registered, lo, hi). Returns (top-level error, the update's error or
    -1 when the response has no result, the level written or -1). Shared by model/metadata_version.py."""
    levels = catalog.levels

    def contains(lo: Any, hi: Any) -> Any:
        return z3.And(lo <= y, y <= hi)

    local = contains(llo, lhi)
    brokers_ok = z3.And([z3.Implies(p, contains(lo, hi)) for p, lo, hi in brokers] or [z3.BoolVal(True)])
    if "skip_broker_check" in mutations:
        brokers_ok = z3.BoolVal(True)
    known = z3.And(y >= levels[0], y <= levels[-1])
    lossy = z3.And(y < x, z3.Not(mv_lossless(catalog, x, y)))
    if "allow_lossy_safe_downgrade" in mutations:
        lossy = z3.BoolVal(False)
    unchecked = "allow_downgrade_unchecked" in mutations
    no_floor = "skip_floor_check" in mutations
    no_quorum = "skip_quorum_check" in mutations
    if "peers_advertise_no_features" in mutations:  # KAFKA-13990: no peer seems to support y (DISABLED, 0-0)
        others = [(h, z3.IntVal(0), z3.IntVal(0)) for h, _lo, _hi in others]
    chain: list[tuple[Any, int]]
    if profile == "kip":
        support = [z3.If(local, 1, 0)] + [z3.If(z3.And(h, contains(lo, hi)), 1, 0) for h, lo, hi in others]
        majority = z3.BoolVal(True) if no_quorum else z3.Sum(support) > (len(others) + 1) // 2
        chain = [(z3.And(y < catalog.minimum, not no_floor), INVALID_REQUEST),
                 (z3.And(z3.Not(known), y >= 1), INVALID_REQUEST),
                 (y == x, INVALID_REQUEST), (z3.And(y < x, dt == NONE_DT, not unchecked), INVALID_REQUEST),
                 (z3.And(y > x, dt != NONE_DT), INVALID_REQUEST),
                 (y < 1, 0),  # a deletion (only reachable without the floor check): no range checks
                 (z3.Not(brokers_ok), FEATURE_UPDATE_FAILED),
                 (z3.Not(local), FEATURE_UPDATE_FAILED), (z3.Not(majority), FEATURE_UPDATE_FAILED),
                 (z3.And(lossy, dt != UNSAFE_DT), UNSAFE_FEATURE_DOWNGRADE)]
    else:
        # Kafka 3.9 refuses a level below MINIMUM_BOOTSTRAP_VERSION; 4.0 has no level below MINIMUM_VERSION.
        floor = catalog.minimum_for("4.0") if release == "4.0" else catalog.bootstrap_floor
        registration = x >= catalog.controller_registration_level
        quorum_ok = z3.Or(z3.Not(registration), no_quorum,
                          z3.And([z3.And(h, contains(lo, hi)) for h, lo, hi in others] or [z3.BoolVal(True)]))
        bad = z3.Or(y < 0, z3.Not(local), z3.Not(brokers_ok), z3.Not(quorum_ok),
                    z3.And(y < x, dt == NONE_DT, not unchecked), z3.And(y > x, dt != NONE_DT), z3.Not(known),
                    z3.And(y < floor, not no_floor), lossy)
        chain = [(bad, INVALID_UPDATE_VERSION)]
    err: Any = z3.IntVal(0)
    for cond, code in reversed(chain):
        err = z3.If(cond, code, err)
    if profile == "kafka" and release == "4.0":
        top, result = err, z3.If(err == 0, 0, -1)  # 4.0: the first error for the whole request
    else:
        top, result = z3.IntVal(0), err
    writes = not dry_run or "dry_run_writes" in mutations
    written: Any = z3.IntVal(-1)
    if writes:  # kip writes no record that restates the level; Kafka does
        written = z3.If(z3.And(err == 0, z3.Or(profile == "kafka", y != x)), z3.If(y < 0, 0, y), -1)
    return top, result, written


def mv_update_formula(catalog: Any, profile: str, release: str, dry_run: bool, voters: int, brokers: int,
                      own: bool = False) -> Formula:
    """:func:`mv_update_rule` over named inputs: voter 0 is the controller (``llo`` / ``lhi``); ``has_v<i>``
    0 means voter i has not registered; every broker is registered. ``own``: voter 0's own registration is
    an input too (``has_v0``, ``vlo0``, ``vhi0``), which the rule never reads: Kafka checks the local
    controller by the range its binary supports, and skips its registration among the controllers'."""
    first = 0 if own else 1
    names = ["x", "y", "dt", "llo", "lhi", *(f"{f}{i}" for i in range(first, voters) for f in ("has_v", "vlo", "vhi")),
             *(f"{f}{i}" for i in range(brokers) for f in ("blo", "bhi"))]

    def build(v: dict[str, z3.ArithRef]) -> dict[str, Any]:
        top, result, written = mv_update_rule(
            catalog, profile, release, dry_run, v["x"], v["y"], v["dt"], v["llo"], v["lhi"],
            [(v[f"has_v{i}"] == 1, v[f"vlo{i}"], v[f"vhi{i}"]) for i in range(1, voters)],
            [(z3.BoolVal(True), v[f"blo{i}"], v[f"bhi{i}"]) for i in range(brokers)])
        return {"top": top, "result": result, "written": written}

    return Formula(names, build)


def mv_update_reference(catalog: Any, profile: str, release: str, dry_run: bool, voters: int, brokers: int
                        ) -> Callable[[Inputs], Outputs]:
    def registered(x: Inputs, i: int) -> VersionRange | None:
        return VersionRange(x[f"vlo{i}"], x[f"vhi{i}"]) if x[f"has_v{i}"] else None

    def run(x: Inputs) -> Outputs:
        local = VersionRange(x["llo"], x["lhi"])
        vs = ((0, registered(x, 0) if "has_v0" in x else local), *((i, registered(x, i)) for i in range(1, voters)))
        bs = tuple(BrokerRegistration(voters + i, ((FEATURE_NAME, VersionRange(x[f"blo{i}"], x[f"bhi{i}"])),), False)
                   for i in range(brokers))
        ctl = QuorumController(catalog=catalog, node_id=0, local_supported=((FEATURE_NAME, local),), voters=vs,
                               brokers=bs, finalized=((FEATURE_NAME, x["x"]),), profile=profile,
                               kafka_release=release)
        res = ctl.update_features(request(FEATURE_NAME, x["y"], DowngradeType(x["dt"]), dry_run=dry_run))
        r = res.response
        return {"top": int(r.error), "result": int(r.results[0].error) if r.results else -1,
                "written": res.records[-1].feature_level if res.records else -1}

    return run


def mv_update_cases(catalog_name: str = "example", voters: int = 2, brokers: int = 1, dry_runs: Sequence[bool] = (
        False, True), edge_ranges: bool = False) -> Iterable[tuple[str, Formula, Iterable[Inputs],
                                                                 Callable[[Inputs], Outputs]]]:
    """Current and requested levels over the catalog (and one beyond each end), every downgrade type,
    every supported range of the controller, the other voters (or unregistered) and the brokers
    (``edge_ranges``: only ranges that start at the lowest or end at the highest level)."""
    cat = CATALOGS[catalog_name]
    lv = cat.levels
    ranges = [(lo, hi) for lo in lv for hi in lv if lo <= hi]
    if edge_ranges:
        ranges = [(lo, hi) for lo, hi in ranges if lo == lv[0] or hi == lv[-1]]
    if len(lv) > 6:
        # The kafka catalog (27 levels): the levels around its floors (3.9, 4.0) and controller registration,
        # where the rule changes, and both ends (the lossless rule itself is checked on every pair by mv_lossless).
        floor, reg, m40 = cat.bootstrap_floor, cat.controller_registration_level, cat.minimum_for("4.0")
        lv = tuple(sorted({lv[0], floor - 1, floor, floor + 1, m40 - 1, m40, reg - 1, reg, reg + 1, lv[-1]}
                          & set(lv)))
        ranges = [(cat.minimum, hi) for hi in lv] + [(floor, cat.latest), (m40, cat.latest)]
    voter_opts = [(0, 1, 1)] + [(1, lo, hi) for lo, hi in ranges]
    for profile, release in (("kip", "3.9"), ("kafka", "3.9"), ("kafka", "4.0")):
        for dry in dry_runs:
            def domain() -> Iterable[Inputs]:
                ys = (lv[0] - 1, *lv, lv[-1] + 1)
                for xv, y, dt, local, *rest in itertools.product(lv, ys, (0, 1, 2), ranges,
                                                                 *([voter_opts] * (voters - 1)),
                                                                 *([ranges] * brokers)):
                    d = {"x": xv, "y": y, "dt": dt, "llo": local[0], "lhi": local[1]}
                    for i, (h, lo, hi) in enumerate(rest[:voters - 1], start=1):
                        d.update({f"has_v{i}": h, f"vlo{i}": lo, f"vhi{i}": hi})
                    for i, (lo, hi) in enumerate(rest[voters - 1:]):
                        d.update({f"blo{i}": lo, f"bhi{i}": hi})
                    yield d
            yield (f"{catalog_name} catalog, {profile} {release}, dry_run={dry}",
                   mv_update_formula(cat, profile, release, dry, voters, brokers), domain(),
                   mv_update_reference(cat, profile, release, dry, voters, brokers))


def mv_own_registration_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The active controller's own ControllerRegistration beside the range its binary supports (Kafka 3.9 and
    4.0, the kafka catalog from controller registration on, where FeatureControlManager reads the
    controllers' registrations): its own is never read (QuorumFeatures.reasonNotLocallySupported checks the
    local binary; the controllers' loop skips the local node, registered or not, stale or not). In the
    system every registration names its binary, so only this domain tells a reference that read it (the
    campaign's metadata_version api.py:523 and :529 survivors)."""
    cat = CATALOGS["kafka"]
    reg = cat.controller_registration_level
    lv = cat.levels
    ranges = [(cat.minimum, hi) for hi in lv if hi >= reg - 1] + [(reg, cat.latest)]
    own_opts = [(0, 1, 1)] + [(1, lo, hi) for lo, hi in ranges]
    for release in ("3.9", "4.0"):
        def domain() -> Iterable[Inputs]:
            xs = (reg, reg + 1, cat.latest)
            ys = (reg - 1, reg, reg + 1, cat.latest, cat.latest + 1)
            for xv, y, dt, local, (h, lo, hi) in itertools.product(xs, ys, (0, 1), ranges, own_opts):
                yield {"x": xv, "y": y, "dt": dt, "llo": local[0], "lhi": local[1], "has_v0": h, "vlo0": lo,
                       "vhi0": hi}
        yield (f"kafka catalog, kafka {release}, the controller's own registration",
               mv_update_formula(cat, "kafka", release, False, 1, 0, own=True), domain(),
               mv_update_reference(cat, "kafka", release, False, 1, 0))


MV_LEADER = 7  # the active controller a non-active node knows of, when it knows one
# What a top-level answer's message names: the request's description, the request, the known leader, another
# node (or none: "node None"), nothing of these.
MV_NAMES_DESCRIPTION, MV_NAMES_REQUEST, MV_NAMES_LEADER, MV_NAMES_OTHER_NODE = 1, 2, 3, 4


def mv_request_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The answers ControllerApis.handleUpdateFeatures gives before any feature is looked at (Kafka 3.9; the
    kip profile takes them too), in Kafka's order: a principal without ALTER on the cluster gets
    CLUSTER_AUTHORIZATION_FAILED naming the request ("Request <request> is not authorized.": the
    RequestChannel.Request's description where there is one); a node that is not the active controller gets
    NOT_CONTROLLER naming the active node when it knows one; under ``kip`` a request naming a feature twice
    is INVALID_REQUEST (FeatureUpdates is keyed by name). A request that passes them gets one result per
    feature. The system sends every update authorized to the active controller, one feature at a time, so
    only this comparison reaches these answers."""
    def build(profile: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            auth, desc, active, known, dup = (x[n] for n in ("auth", "desc", "active", "known", "dup"))
            duplicate = dup == 1 if profile == "kip" else z3.BoolVal(False)
            top = z3.If(auth == 0, CLUSTER_AUTHORIZATION_FAILED,
                        z3.If(active == 0, NOT_CONTROLLER, z3.If(duplicate, INVALID_REQUEST, 0)))
            names = z3.If(auth == 0, z3.If(desc == 1, MV_NAMES_DESCRIPTION, MV_NAMES_REQUEST),
                          z3.If(z3.And(active == 0, known == 1), MV_NAMES_LEADER, 0))
            return {"top": top, "names": names, "results": z3.If(top == 0, 1 + dup, 0)}
        return outputs

    def reference(profile: str) -> Callable[[Inputs], Outputs]:
        cat = CATALOGS["example"]
        level = cat.levels[-1]

        def run(x: Inputs) -> Outputs:
            ctl = QuorumController(catalog=cat, node_id=0, local_supported=((FEATURE_NAME, VersionRange(
                cat.minimum, level)),), voters=((0, VersionRange(cat.minimum, level)),),
                finalized=((FEATURE_NAME, level),), profile=profile, is_active=bool(x["active"]),
                active_controller_id=MV_LEADER if x["known"] else None)
            update = mv_api.FeatureUpdate(FEATURE_NAME, level, DowngradeType.NONE)  # a no-op: accepted once checked
            req = mv_api.UpdateFeaturesRequest((update, update) if x["dup"] else (update,))
            description = "RequestHeader(clientId=admin-1)" if x["desc"] else None
            r = ctl.update_features(req, principal_can_alter=bool(x["auth"]), request_description=description).response
            msg = r.message or ""
            names = (MV_NAMES_DESCRIPTION if description is not None and description in msg else
                     MV_NAMES_REQUEST if str(req) in msg else
                     MV_NAMES_LEADER if f"node {MV_LEADER}" in msg else
                     MV_NAMES_OTHER_NODE if "node" in msg else 0)
            return {"top": int(r.error), "names": names, "results": len(r.results)}
        return run

    names = ["auth", "desc", "active", "known", "dup"]
    for profile in ("kip", "kafka"):
        # Kafka's FeatureUpdateKeyCollection may hold a feature twice; what its controller then does is not
        # Kafka's documented behaviour, so kafka is compared on single-feature requests only.
        dups = (0, 1) if profile == "kip" else (0,)
        domain = [dict(zip(names, (*v, d), strict=True)) for v in itertools.product((0, 1), repeat=4) for d in dups]
        yield f"handleUpdateFeatures, {profile}", Formula(names, build(profile)), domain, reference(profile)
    # The codes on the wire: Kafka's Errors.java plus the KIP's UNSAFE_FEATURE_DOWNGRADE (a number of ours), the
    # KIP's DowngradeType and Kafka's FeatureUpdate.UpgradeType.
    yield code_table_case("Errors codes (Errors.java)", {**KAFKA_ERRORS, "INVALID_REGISTRATION": INVALID_REGISTRATION,
                                                         "UNSAFE_FEATURE_DOWNGRADE": UNSAFE_FEATURE_DOWNGRADE},
                          mv_api.Errors)
    yield code_table_case("DowngradeType codes (KIP-778)", {"NONE": NONE_DT, "SAFE": SAFE_DT, "UNSAFE": UNSAFE_DT},
                          DowngradeType)
    yield code_table_case("FeatureUpdate.UpgradeType codes", UPGRADE_TYPE_CODES, mv_api.UpgradeType)
    yield from mv_atomic_cases()


# What a metadata.version update's answer says (``kind``), by a phrase of its message.
MV_UPDATE_MESSAGES = ("", "does not support the given upgrade type", "cannot be less than 0", "",
                      "without setting the upgrade type", "Can't downgrade to a newer version", "",
                      "while a ZK migration is in progress", "", "Feature name can not be empty.",
                      "Unknown DowngradeType code", "can not be deleted or set below", "to the same value",
                      "without DowngradeType SAFE or UNSAFE", "must lower its level")


def mv_update_form_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """One metadata.version update in each form a request may carry it, at the active controller, before the
    version rules: a v1 ``UpgradeType`` byte (1 UPGRADE, 2 SAFE, 3 UNSAFE, anything else unknown) or a v0
    ``AllowDowngrade`` flag, a negative level, the current level, one below (a lossless downgrade) and one
    above, while a ZK migration is in progress or not, and (kip) an empty feature name. kafka (3.9 / 4.0,
    FeatureControlManager.updateFeature): an unknown upgrade type, a level below 0, a downgrade asked as an
    upgrade, an upgrade asked as a downgrade, then (3.9) a migration in progress, each INVALID_UPDATE_VERSION
    (4.0: for the whole request); a v0 request is read as UPGRADE whatever its flag (the KRaft controller takes
    the UpgradeType field's default). kip: an empty name, an unknown DowngradeType code, below the floor, the
    same level, a downgrade without SAFE or UNSAFE, a raise with one, each INVALID_REQUEST. Which error, which
    message, and the level written. The system's operator sends typed, named updates within the catalog, with
    no migration in progress, so only this comparison reaches these answers."""
    cat = CATALOGS["kafka"]

    def build(profile: str, release: str, cur: int) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            form, code, y, migration, empty = (x[n] for n in ("form", "code", "y", "migration", "empty"))
            known_code = z3.And(code >= 1, code <= 3)
            if profile == "kafka":
                up = z3.If(form == 1, 1, z3.If(known_code, code, 0))  # UpgradeType: 0 unknown
                kind = z3.If(up == 0, 1, z3.If(y < 0, 2, z3.If(z3.And(y < cur, up == 1), 4,
                             z3.If(z3.And(y > cur, up != 1), 5,
                                   z3.If(z3.And(migration == 1, release == "3.9"), 7, 0)))))
                error = z3.If(kind == 0, 0, INVALID_UPDATE_VERSION)
                written = z3.If(kind == 0, y, -1)
            else:
                # DowngradeType: the v0 flag is SAFE when set; a v1 byte 2 SAFE, 3 UNSAFE, else NONE.
                downgrade = z3.If(form == 1, code == 2, z3.Or(code == 2, code == 3))
                kind = z3.If(empty == 1, 9, z3.If(z3.And(form == 0, z3.Not(known_code)), 10,
                             z3.If(y < 0, 11, z3.If(y == cur, 12, z3.If(z3.And(y < cur, z3.Not(downgrade)), 13,
                                   z3.If(z3.And(y > cur, downgrade), 14, 0))))))
                error = z3.If(kind == 0, 0, INVALID_REQUEST)
                written = z3.If(kind == 0, y, -1)
            return {"error": error, "kind": kind, "written": written}
        return outputs

    def reference(profile: str, release: str, cur: int) -> Callable[[Inputs], Outputs]:
        lo, hi = cat.minimum_for(release), cat.latest_production_for(release)

        def run(x: Inputs) -> Outputs:
            rng = VersionRange(lo, hi)
            ctl = QuorumController(catalog=cat, node_id=0, local_supported=((FEATURE_NAME, rng),),
                                   voters=((0, rng),), finalized=((FEATURE_NAME, cur),), profile=profile,
                                   kafka_release=release, zk_migration_in_progress=bool(x["migration"]))
            name = "" if x["empty"] else FEATURE_NAME
            update = (mv_api.FeatureUpdate.legacy(name, x["y"], x["code"] == 2) if x["form"] == 1
                      else mv_api.FeatureUpdate.with_upgrade_type(name, x["y"], x["code"]))
            res = ctl.update_features(mv_api.UpdateFeaturesRequest((update,)))
            r = res.response
            error, msg = (int(r.error), r.message or "") if r.error is not mv_api.Errors.NONE else (
                (int(r.results[0].error), r.results[0].message or "") if len(r.results) == 1 else (CODEC_ERROR, ""))
            kinds = [i for i, phrase in enumerate(MV_UPDATE_MESSAGES) if phrase and phrase in msg]
            kind = 0 if error == 0 else kinds[0] if len(kinds) == 1 else CODEC_ERROR
            levels = [rec.feature_level for rec in res.records if rec.name == FEATURE_NAME]
            return {"error": error, "kind": kind, "written": levels[0] if len(levels) == 1 else -1}
        return run

    names = ["form", "code", "y", "migration", "empty"]
    for profile, release in (("kip", "3.9"), ("kafka", "3.9"), ("kafka", "4.0")):
        floor, top = max(cat.minimum_for(release), cat.bootstrap_floor), cat.latest_production_for(release)
        # The current level: one with a lossless step below it and a level above it, all within what the
        # controller supports and above the floors, so only the checks compared here can refuse.
        cur = next(lv for lv in reversed(cat.levels) if floor < lv < top and cat.is_lossless(lv, lv - 1))
        domain = [dict(zip(names, v, strict=True))
                  for v in itertools.product((0, 1), range(5), (-1, cur - 1, cur, cur + 1), (0, 1), (0, 1))
                  if (v[0] == 0 or v[1] in (0, 2)) and (profile == "kip" or v[4] == 0)]
        yield (f"metadata.version update forms, {profile} {release}", Formula(names, build(profile, release, cur)),
               domain, reference(profile, release, cur))
    yield from _other_feature_cases()
    yield from _kafka_mv_edge_cases()
    yield from _unfinalized_mv_cases()


def _mv_update_outcome(ctl: QuorumController, level: int, code: int) -> Outputs:
    """A one-update metadata.version request (``code`` the raw UpgradeType): its error code (3.9: the feature's
    result, 4.0: the top-level error), which of MV_WHY's refusals answered (0 none, -1 another), the level
    written (-1 none)."""
    res = ctl.update_features(mv_api.UpdateFeaturesRequest(
        (mv_api.FeatureUpdate.with_upgrade_type(FEATURE_NAME, level, code),)))
    r = res.response
    error = int(r.error) if r.error is not mv_api.Errors.NONE else (
        int(r.results[0].error) if len(r.results) == 1 else CODEC_ERROR)
    message = r.message if r.error is not mv_api.Errors.NONE else (r.results[0].message if r.results else "")
    why = 0 if not error else next((i + 1 for i, ws in enumerate(MV_WHY) if any(w in (message or "") for w in ws)),
                                   -1)
    written = [rec.feature_level for rec in res.records]
    return {"error": error, "why": why, "written": written[0] if len(written) == 1 else -1}


def _unfinalized_mv_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """kafka: a metadata.version update by a controller with none finalized (only the API builds one). 3.9's
    QuorumController starts FeatureControlManager at MINIMUM_KRAFT_VERSION (3.0-IV1, level 1); 4.0's sets none, so
    the Builder's default latestProduction() (4.0-IV3) stands. The floor is lowered to 3.0-IV0 under 3.9
    (minimum_bootstrap_version -1, as Kafka's tests do) and the controller's own range starts at 0, so that only
    the current level and the catalog decide: level 0 is no version at all, 4.0 knows nothing below 3.3-IV3, and
    a downgrade from 4.0-IV3 is refused when it is lossy (SAFE and UNSAFE alike, each with its own words)."""
    cat = CATALOGS["kafka"]

    def build(release: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        cur, first = ((cat.minimum, cat.minimum) if release == "3.9"
                      else (cat.latest_production_for("4.0"), cat.minimum_for("4.0")))

        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            y, code = x["y"], x["code"]
            lossy = z3.And(y < cur, z3.Not(mv_lossless(cat, z3.IntVal(cur), y)))
            why = z3.If(z3.And(y < cur, code == 1), 3, z3.If(z3.And(y > cur, code != 1), 2,
                        z3.If(z3.Or(y < first, y > cat.latest), 1,
                              z3.If(lossy, z3.If(code == 3, 5, 4), 0))))
            return {"error": z3.If(why == 0, 0, INVALID_UPDATE_VERSION), "why": why,
                    "written": z3.If(why == 0, y, -1)}
        return outputs

    def reference(release: str) -> Callable[[Inputs], Outputs]:
        rng = VersionRange(0, cat.latest)

        def run(x: Inputs) -> Outputs:
            ctl = QuorumController(catalog=cat, node_id=0, local_supported=((FEATURE_NAME, rng),),
                                   voters=((0, rng),), profile="kafka", kafka_release=release,
                                   minimum_bootstrap_version=-1 if release == "3.9" else None)
            return _mv_update_outcome(ctl, x["y"], x["code"])
        return run

    # 4.0: below its minimum, lossy and lossless steps down from 4.0-IV3 (4.0-IV3 and IV2 did not change the
    # format, 4.0-IV1 did), the current level, and the unstable 4.1-IV0 above it.
    levels = {"3.9": (0, 1, 2, 8), "4.0": (0, 1, 8, 21, 23, 24, 25, 26)}
    for release in ("3.9", "4.0"):
        domain = [{"y": y, "code": c} for y in levels[release] for c in (1, 2, 3)]
        yield (f"metadata.version update, none finalized, kafka {release}", Formula(["y", "code"], build(release)),
               domain, reference(release))


# FeatureControlManager's words, MV_WHY[i] is reason i + 1 (any of its texts): an unknown version reads "Unknown
# metadata.version." in 3.x and names the valid range from 4.0 (the kafka-metadata 4.0.0 .. 4.4.0 jars).
MV_WHY = (("Unknown metadata.version", "Valid versions are from"), ("Can't downgrade to a newer version",),
          ("without setting the upgrade type",), ("Refusing to perform the requested downgrade",),
          ("Unsafe metadata downgrade is not supported",), ("Unable to set a metadata.version less than",))


def _kafka_mv_edge_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """kafka, 3.9 and 4.0: a metadata.version update from a level ``cur`` whose step down changes the metadata
    format, by a controller whose own range reaches one level past every version Kafka knows (a binary no
    release has: only the catalog can refuse it): the level below (asked as UPGRADE, SAFE_DOWNGRADE,
    UNSAFE_DOWNGRADE), the same level, the level above, the unknown level, the floor (3.9: 3.3-IV0, 4.0: 3.3-IV3)
    and the level below it (the controller's own range starts at 1). Which of FeatureControlManager's refusals
    answers (MV_WHY: an unknown version, which is also 4.0's answer below its first version; an upgrade asked as
    a downgrade; a downgrade asked as UPGRADE; a lossy SAFE downgrade; a lossy UNSAFE downgrade, which 3.9 and
    4.0 do not support; 3.9's level below MINIMUM_BOOTSTRAP_VERSION), or none."""
    cat = CATALOGS["kafka"]

    def setup(release: str) -> tuple[int, VersionRange]:
        floor = max(cat.minimum_for(release), cat.bootstrap_floor)
        cur = next(lv for lv in reversed(cat.levels)
                   if floor < lv <= cat.latest_production_for(release) and not cat.is_lossless(lv, lv - 1))
        return cur, VersionRange(1, cat.latest + 1)

    def floor(release: str) -> int:
        return max(cat.minimum_for(release), cat.bootstrap_floor)

    def build(release: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        cur, _ = setup(release)

        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            step, code = x["step"], x["code"]  # -1 below, 0 the same, 1 above, 2 unknown, 3 the floor, 4 below it
            below_floor = 1 if release != "3.9" else 6
            # Kafka's order: the upgrade type against the direction first, then the version (updateMetadataVersion)
            why = z3.If(step == 2, z3.If(code == 1, 1, 2), z3.If(step == 1, z3.If(code == 1, 0, 2),
                        z3.If(step == 0, 0, z3.If(code == 1, 3, z3.If(step == 4, below_floor,
                                                                      z3.If(code == 2, 4, 5))))))
            return {"error": z3.If(why == 0, 0, INVALID_UPDATE_VERSION), "why": why,
                    "written": z3.If(why == 0, cur + z3.If(step == 1, 1, 0), -1)}
        assert floor(release) < cur - 1 and not cat.is_lossless(cur, floor(release))  # what the case's words need
        return outputs

    def reference(release: str) -> Callable[[Inputs], Outputs]:
        cur, rng = setup(release)

        def run(x: Inputs) -> Outputs:
            y = {-1: cur - 1, 0: cur, 1: cur + 1, 2: cat.latest + 1, 3: floor(release),
                 4: floor(release) - 1}[x["step"]]
            ctl = QuorumController(catalog=cat, node_id=0, local_supported=((FEATURE_NAME, rng),),
                                   voters=((0, rng),), finalized=((FEATURE_NAME, cur),), profile="kafka",
                                   kafka_release=release)
            return _mv_update_outcome(ctl, y, x["code"])
        return run

    domain = [{"step": st, "code": c} for st in (-1, 0, 1, 2, 3, 4) for c in (1, 2, 3)]
    for release in ("3.9", "4.0", "4.1", "4.2", "4.3", "4.4"):
        yield (f"metadata.version refusals, kafka {release}", Formula(["step", "code"], build(release)), domain,
               reference(release))


OTHER_FEATURE = "group.version"


_SAME_LEVEL_TEXT = re.compile(r"^Can not (upgrade|downgrade) (\S+) from existing level (-?\d+) to the same value\.$")
_SAID_UPGRADE, _SAID_DOWNGRADE = 1, 2


def _other_feature_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """kip: an update of a feature other than metadata.version (finalized at ``cur``, 1 or 2, the controller
    supporting 1-``hi``; with ``lacking`` one registered broker that lists metadata.version alone, so it supports
    the other feature at QuorumFeatures.DISABLED, 0-0): the same level, a downgrade without SAFE or UNSAFE and a
    raise with one are refused (INVALID_REQUEST); a level below 1 deletes it (KIP-584: no range check); any
    other level must lie in every registered broker's range and the controller's own (FEATURE_UPDATE_FAILED
    otherwise); the same-level refusal's words name the request's verb, feature and level (the campaign's survivors
    api.py:603). The system updates metadata.version alone. On Kafka's catalog (levels 1..27) with the feature at
    1-2, and on the KIP's example (V1..V5) with the feature at 1-7: its levels are not metadata.version's, so a
    level the catalog lacks is no "unknown metadata.version" (the campaign's survivor api.py:600)."""
    for cat_name, hi in (("kafka", 2), ("example", 7)):
        cat = CATALOGS[cat_name]
        rng = VersionRange(cat.minimum_for("3.9"), cat.latest_production_for("3.9"))
        mv = cat.latest_production_for("3.9")

        def build(x: dict[str, z3.ArithRef], hi: int = hi) -> Mapping[str, Any]:
            y, safe, cur = x["y"], x["code"] == 2, x["cur"]
            invalid = z3.Or(y == cur, z3.And(y < cur, z3.Not(safe)), z3.And(y > cur, safe))
            # above the controller's own 1-hi, or any level at all for a broker that does not know the feature
            # (a level below 1 is a deletion)
            outside = z3.Or(y > hi, z3.And(x["lacking"] == 1, y >= 1))
            error = z3.If(invalid, INVALID_REQUEST, z3.If(outside, FEATURE_UPDATE_FAILED, 0))
            # the same-level refusal names the request's own verb: "upgrade" for an UPGRADE, "downgrade" otherwise
            return {"error": error, "written": z3.If(error == 0, z3.If(y < 0, 0, y), -1),
                    "same_level": z3.If(y == cur, z3.If(safe, _SAID_DOWNGRADE, _SAID_UPGRADE), DONT_CARE)}

        def reference(x: Inputs, cat: Any = cat, rng: VersionRange = rng, mv: int = mv, hi: int = hi) -> Outputs:
            brokers = (BrokerRegistration(1, ((FEATURE_NAME, rng),), fenced=False),) if x["lacking"] else ()
            ctl = QuorumController(catalog=cat, node_id=0,
                                   local_supported=((FEATURE_NAME, rng), (OTHER_FEATURE, VersionRange(1, hi))),
                                   voters=((0, rng),), finalized=((FEATURE_NAME, mv), (OTHER_FEATURE, x["cur"])),
                                   brokers=brokers, profile="kip", kafka_release="3.9")
            update = mv_api.FeatureUpdate.with_upgrade_type(OTHER_FEATURE, x["y"], x["code"])
            res = ctl.update_features(mv_api.UpdateFeaturesRequest((update,)))
            r = res.response
            error = int(r.error) if r.error is not mv_api.Errors.NONE else (
                int(r.results[0].error) if len(r.results) == 1 else CODEC_ERROR)
            levels = [rec.feature_level for rec in res.records if rec.name == OTHER_FEATURE]
            same = DONT_CARE
            if x["y"] == x["cur"]:
                m = _SAME_LEVEL_TEXT.match((r.results[0].message or "") if len(r.results) == 1 else "")
                same = CODEC_ERROR if m is None or (m.group(2), int(m.group(3))) != (OTHER_FEATURE, x["cur"]) \
                    else {"upgrade": _SAID_UPGRADE, "downgrade": _SAID_DOWNGRADE}[m.group(1)]
            return {"error": error, "written": levels[0] if len(levels) == 1 else -1, "same_level": same}

        names = ["y", "code", "cur", "lacking"]
        # cur 0: the feature is not finalized at all (FeatureControlManager's finalizedVersions.getOrDefault(0))
        domain = [dict(zip(names, v, strict=True))
                  for v in itertools.product(range(-1, hi + 2), (1, 2), (0, 1, 2), (0, 1))]
        label = "" if cat_name == "kafka" else f", catalog {cat_name}"
        yield f"{OTHER_FEATURE} update, kip 3.9{label}", Formula(names, build), domain, reference
    yield from _kafka_other_feature_cases()


# A second voter of the kafka case, as the active controller knows it (QuorumController.voters): none; on the same
# software (a bare metadata.version range: every other feature as the controller's own); registered with the
# feature at 1-1; registered without it (QuorumFeatures.DISABLED, 0-0); not registered.
PEER_NONE, PEER_SAME, PEER_ONE, PEER_LACKS, PEER_UNREGISTERED = range(5)


def _kafka_other_feature_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """kafka, 3.9 and 4.0: FeatureControlManager.updateFeature of a feature other than metadata.version (finalized
    at ``cur``, 0 = not at all; the controller supporting ``llo``-2, where 0 is how Kafka's own features start,
    group.version 0-1; ``lacking``: a registered broker without it;
    ``peer``, ``peer2``: two more voters, PEER_*; ``old``: metadata.version at 3.6-IV2, not the latest production
    level). Kafka's rules: an unknown upgrade type, a level below 0, a level outside
    the controller's own range, a registered broker's or (at metadata.version 3.7-IV0 and above, where controllers
    register) a registered controller's, a voter that has not registered, a downgrade asked as
    UPGRADE and an upgrade asked as a downgrade are each INVALID_UPDATE_VERSION (3.9: the feature's result; 4.0:
    the top-level error); the same level is no error (a record at it); otherwise one FeatureLevelRecord at ``y``,
    and the feature's result carries no message (3.9: ApiError.NONE's) or "NONE" (4.0: Errors.NONE.message()).
    Level 0 is no deletion of its own here: a FeatureLevelRecord at 0, where every range admits it."""
    def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        y, code, cur = x["y"], x["code"], x["cur"]

        def peer_refuses(peer: Any) -> Any:
            return z3.Or(z3.And(peer == PEER_ONE, y != 1), z3.And(peer == PEER_LACKS, y != 0),
                         peer == PEER_UNREGISTERED)

        refused = z3.Or(
            z3.Not(z3.Or(code == 1, code == 2, code == 3)), y < 0, y < x["llo"], y > 2,
            z3.And(x["lacking"] == 1, y != 0),
            # below 3.7-IV0 Kafka cannot see the other controllers' ranges: only its own is checked
            z3.And(x["old"] == 0, z3.Or(peer_refuses(x["peer"]), peer_refuses(x["peer2"]))),
            z3.And(y < cur, code == 1), z3.And(y > cur, code != 1))
        # Which check refused, and its words (FeatureControlManager.reasonNotSupported's order: the local
        # controller, each registered broker, each registered controller by id, then each voter that has not
        # registered): 10 * who (0 the local controller, 1 broker 1, 1 + id controller id) + the phrase (1 "only
        # supports versions lo-hi", 2 "does not support this feature.", 3 "has not registered"), with the range
        # printed; 0 when no reason refused.
        checked = x["old"] == 0

        def registered_refuses(peer: Any) -> Any:
            return z3.And(checked, z3.Or(z3.And(peer == PEER_ONE, y != 1), z3.And(peer == PEER_LACKS, y != 0)))

        def unregistered(peer: Any) -> Any:
            return z3.And(checked, peer == PEER_UNREGISTERED)

        phrase = {p: z3.If(x[p] == PEER_ONE, 1, 2) for p in ("peer", "peer2")}
        local = z3.Or(y < x["llo"], y > 2)
        reason = z3.If(local, 1, z3.If(z3.And(x["lacking"] == 1, y != 0), 12,
                       z3.If(registered_refuses(x["peer"]), 20 + phrase["peer"],
                             z3.If(registered_refuses(x["peer2"]), 30 + phrase["peer2"],
                                   z3.If(unregistered(x["peer"]), 23, z3.If(unregistered(x["peer2"]), 33, 0))))))
        reason = z3.If(z3.Or(z3.Not(z3.Or(code == 1, code == 2, code == 3)), y < 0), DONT_CARE, reason)
        # The range an "only supports" phrase prints: the local controller's llo-2, a PEER_ONE controller's 1-1.
        shown = z3.Or(reason == 1, reason == 21, reason == 31)
        return {"error": z3.If(refused, INVALID_UPDATE_VERSION, 0), "written": z3.If(refused, -1, y),
                "message": z3.If(refused, -1, x["release"]), "reason": reason,
                "lo": z3.If(shown, z3.If(reason == 1, x["llo"], 1), DONT_CARE),
                "hi": z3.If(shown, z3.If(reason == 1, 2, 1), DONT_CARE)}

    def reference(release: str) -> Callable[[Inputs], Outputs]:
        cat = CATALOGS["kafka"]
        rng = VersionRange(cat.minimum_for(release), cat.latest_production_for(release))
        mv_levels = (cat.latest_production_for(release), cat.parse("3.6-IV2"))
        peers: dict[int, Any] = {PEER_SAME: rng, PEER_ONE: ((FEATURE_NAME, rng), (OTHER_FEATURE, VersionRange(1, 1))),
                                 PEER_LACKS: ((FEATURE_NAME, rng),), PEER_UNREGISTERED: None}

        def run(x: Inputs) -> Outputs:
            brokers = (BrokerRegistration(1, ((FEATURE_NAME, rng),), fenced=False),) if x["lacking"] else ()
            voters = ((0, rng), *((i, peers[x[k]]) for i, k in ((1, "peer"), (2, "peer2")) if x[k] != PEER_NONE))
            fin = ((FEATURE_NAME, mv_levels[x["old"]]),) + (((OTHER_FEATURE, x["cur"]),) if x["cur"] else ())
            ctl = QuorumController(catalog=cat, node_id=0,
                                   local_supported=((FEATURE_NAME, rng), (OTHER_FEATURE, VersionRange(x["llo"], 2))),
                                   voters=voters, finalized=fin, brokers=brokers, profile="kafka",
                                   kafka_release=release)
            res = ctl.update_features(
                mv_api.UpdateFeaturesRequest((mv_api.FeatureUpdate.with_upgrade_type(OTHER_FEATURE, x["y"],
                                                                                   x["code"]),)))
            r = res.response
            error = int(r.error) if r.error is not mv_api.Errors.NONE else (
                int(r.results[0].error) if len(r.results) == 1 else CODEC_ERROR)
            levels = [rec.feature_level for rec in res.records if rec.name == OTHER_FEATURE]
            message = -1 if error else {None: 0, "NONE": 1}.get(r.results[0].message if r.results else "?", 2)
            text = (r.message if r.error is not mv_api.Errors.NONE else r.results[0].message if r.results else "") or ""
            if r.error is not mv_api.Errors.NONE:  # 4.0 answers at the top level, behind Kafka's prefix
                text = text[len(mv_api.ALL_FAILED_PREFIX):] if text.startswith(mv_api.ALL_FAILED_PREFIX) else "?"
            return {"error": error, "written": levels[0] if len(levels) == 1 and len(res.records) == 1 else -1,
                    "message": message, **_reason_words(text, x["y"])}
        return run

    names = ["y", "code", "cur", "lacking", "peer", "peer2", "old", "llo", "release"]
    # each kind of voter alone, and behind one that agrees (every voter is checked, not only the first)
    pairs = [(p, PEER_NONE) for p in range(5)] + [(PEER_SAME, PEER_ONE), (PEER_SAME, PEER_UNREGISTERED)]
    for i, release in enumerate(("3.9", "4.0")):
        domain = [dict(zip(names, (y, c, cur, lack, *pair, old, llo, i), strict=True))
                  for y, c, cur, lack, pair, old, llo in itertools.product(range(-1, 4), range(4), (0, 1, 2), (0, 1),
                                                                          pairs, (0, 1), (0, 1))]
        yield f"{OTHER_FEATURE} update, kafka {release}", Formula(names, build), domain, reference(release)


_REASON_TEXT = re.compile(r"^Invalid update version (-?\d+) for feature (\S+)\. "
                          r"(?:(Local controller 0)|Broker (\d+)|Controller (\d+)|controller (\d+))"
                          r"( only supports versions (\d+)(?:-(\d+)|(\+))?| does not support this feature\."
                          r"| has not registered, and may not support this feature)$")


def _reason_words(text: str, y: int) -> dict[str, int]:
    """The kafka refusal's reason, as :func:`_kafka_other_feature_cases`' formula codes it: 10 * who + phrase,
    and the range an "only supports" phrase prints (CODEC_ERROR for words of another shape); 0 when the text is
    not a reasonNotSupported refusal, DONT_CARE for the two refusals checked before the reasons."""
    m = _REASON_TEXT.match(text)
    if m is None:
        # The two refusals checked before the reasons (an unknown upgrade type, a level below 0) say nothing of it.
        before = "the given upgrade type" in text or "cannot be less than 0" in text
        return {"reason": DONT_CARE if before else CODEC_ERROR if "support" in text or "registered" in text else 0,
                "lo": DONT_CARE, "hi": DONT_CARE}
    level, feature, local, broker, ctl, unreg, tail, lo, hi, plus = m.groups()
    # Kafka's VersionRange.toString: "lo" when lo == hi, "lo+" up to Short.MAX_VALUE, else "lo-hi".
    hi = "32767" if plus else hi if hi is not None else lo
    if int(level) != y or feature != OTHER_FEATURE:
        return {"reason": CODEC_ERROR, "lo": DONT_CARE, "hi": DONT_CARE}
    who = 0 if local else 1 if broker else 1 + int(ctl or unreg)
    if (broker and int(broker) != 1) or (unreg is not None and "registered" not in tail) \
            or (unreg is None and "registered" in tail):
        return {"reason": CODEC_ERROR, "lo": DONT_CARE, "hi": DONT_CARE}
    phrase = 1 if lo is not None else 2 if "does not" in tail else 3
    return {"reason": 10 * who + phrase, "lo": int(lo) if lo is not None else DONT_CARE,
            "hi": int(hi) if hi is not None else DONT_CARE}


REPLAY_FEATURES = (FEATURE_NAME, mv_api.KRAFT_VERSION_FEATURE_NAME, "group.version")
REPLAY_FAILED = -2  # the controller refused the record (a fatal error in Kafka)
REPLAY_ABSENT = -3  # the feature is not in the finalized map after the record


def mv_replay_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """``FeatureControlManager.replay`` of one FeatureLevelRecord, per profile and release: level 0 removes the
    feature, any other sets it; under ``kafka`` a level outside the controller's own supported range is fatal,
    and 4.0 then skips a kraft.version record (KAFKA-18979: kraft.version lives in KRaft's control records).
    The system replays only metadata.version records its own controller wrote."""
    cat = CATALOGS["kafka"]

    def ranges(release: str) -> dict[str, tuple[int, int]]:
        return {FEATURE_NAME: (cat.minimum_for(release), cat.latest_production_for(release)),
                mv_api.KRAFT_VERSION_FEATURE_NAME: (0, 1), "group.version": (0, 1)}

    def before(release: str) -> dict[str, int]:
        return {FEATURE_NAME: cat.latest_production_for(release), mv_api.KRAFT_VERSION_FEATURE_NAME: 1,
                "group.version": 1}

    def build(profile: str, release: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            feature, level = x["feature"], x["level"]
            out: Any = DONT_CARE
            for i, name in enumerate(REPLAY_FEATURES):
                lo, hi = ranges(release)[name]
                refused = z3.Or(level < lo, level > hi) if profile == "kafka" else z3.BoolVal(False)
                skipped = profile == "kafka" and release == "4.0" and name == mv_api.KRAFT_VERSION_FEATURE_NAME
                # level 0 removes the feature from the finalized map (REPLAY_ABSENT), not a 0 kept in it
                after = before(release)[name] if skipped else z3.If(level == 0, REPLAY_ABSENT, level)
                out = z3.If(feature == i, z3.If(refused, REPLAY_FAILED, after), out)
            return {"level": out}
        return outputs

    def reference(profile: str, release: str) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            rng, fin = ranges(release), before(release)
            ctl = QuorumController(catalog=cat, node_id=0,
                                   local_supported=tuple((n, VersionRange(*r)) for n, r in rng.items()),
                                   voters=((0, VersionRange(*rng[FEATURE_NAME])),), finalized=tuple(fin.items()),
                                   profile=profile, kafka_release=release)
            name = REPLAY_FEATURES[x["feature"]]
            try:
                after = ctl.replay(mv_api.FeatureLevelRecord(name, x["level"]))
            except RuntimeError:
                return {"level": REPLAY_FAILED}
            return {"level": dict(after.finalized).get(name, REPLAY_ABSENT)}
        return run

    for profile, release in (("kip", "3.9"), ("kafka", "3.9"), ("kafka", "4.0")):
        top = cat.latest
        domain = [{"feature": f, "level": lv} for f in range(len(REPLAY_FEATURES))
                  for lv in sorted({0, 1, 2, cat.minimum_for(release) - 1, cat.minimum_for(release), top, top + 1})]
        yield (f"FeatureControlManager.replay, {profile} {release}", Formula(["feature", "level"],
                                                                             build(profile, release)),
               domain, reference(profile, release))


# kafka-storage format's refusals, in Formatter's order (0: formatted).
FORMAT_OK, FORMAT_NO_CLUSTER, FORMAT_UNKNOWN, FORMAT_TOO_OLD, FORMAT_UNSTABLE, FORMAT_BELOW_FLOOR = range(6)
# How --metadata-version is given: a level, the level's name, left out (the binary's default), its release alone
# ("3.3", the kafka catalog only) and a ZooKeeper-era release ("2.8", the kafka catalog only).
TEXT_LEVEL, TEXT_NAME, TEXT_DEFAULT, TEXT_RELEASE, TEXT_ZK_ERA = range(5)
ZK_ERA_RELEASE = "2.8"  # 2.8-IV1: feature level -1 in Kafka 3.9's enum, gone from 4.0's


def _format_refusal(text: str) -> int:
    """The refusal's code from its words (Formatter's and MetadataVersion's; an unknown name or level has
    several wordings, one code)."""
    for words, code in (("You must specify the cluster id.", FORMAT_NO_CLUSTER),
                        ("too old to be supported", FORMAT_TOO_OLD), ("is not yet stable", FORMAT_UNSTABLE),
                        ("are not supported. Can't load metadata from", FORMAT_BELOW_FLOOR)):
        if words in text:
            return code
    return FORMAT_UNKNOWN


def _release_of(label: str) -> str:
    return label.split("-")[0]


def _bare_release_levels(cat: Any, release: str) -> dict[int, int]:
    """Per level, the level its bare release ("3.3" for 3.3-IV0) names in a Kafka release: the release's last
    production member of that release (Kafka 3.9 has no "4.0", whose members are not production there; 4.0 no
    "4.1" and no "3.0", below its first member 3.3-IV3); -1 where the bare release names none. From the
    catalog's names and the release's bounds, not from MetadataVersion.fromVersionString."""
    members = [lvl for lvl in cat.levels if cat.minimum_for(release) <= lvl <= cat.latest_production_for(release)]
    out = {}
    for lvl in cat.levels:
        named = [m for m in members if _release_of(cat.label(m)) == _release_of(cat.label(lvl))]
        out[lvl] = max(named) if named else -1
    return out


def format_storage_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """``kafka-storage format --metadata-version N`` (KIP-778 "New kafka-storage argument"): the level a new
    cluster bootstraps at, or which refusal. kip: a level of the catalog (its first level is the minimum);
    the kafka catalog reads a bare release as Kafka 3.9 does. kafka (Kafka's Formatter, 3.9 and 4.0): a
    cluster id first; no version takes the binary's default unchecked (calculateEffectiveReleaseVersion); a
    level or name the release knows (fromFeatureLevel / fromVersionString: its own members, a bare release as
    its last production member), not ZooKeeper-era (3.9: "too old to be supported"; 4.0 has no such member),
    production unless unstable feature versions are enabled, and not below MINIMUM_BOOTSTRAP_VERSION. The
    levels, minimums and production bounds are the catalog's data (tests/kafka checks them against
    MetadataVersionTest); this compares the decision built on them, which no config reaches (every config
    starts formatted)."""
    def build(cat: Any, profile: str, release: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        # kip parses a bare release as the kafka catalog does with no release given: Kafka 3.9's way.
        bare = _bare_release_levels(cat, release if profile == "kafka" else "3.9")

        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            level, unstable, text = x["level"], x["unstable"], x["text"]
            named: Any = z3.IntVal(-1)
            for lvl, target in bare.items():
                named = z3.If(level == lvl, target, named)
            # a ZooKeeper-era member has feature level -1
            given = z3.If(text == TEXT_RELEASE, named,
                          z3.If(text == TEXT_DEFAULT, cat.latest, z3.If(text == TEXT_ZK_ERA, -1, level)))
            known = z3.And(cat.minimum <= given, given <= cat.latest)
            if profile == "kip":
                reason = z3.If(z3.Or(text == TEXT_DEFAULT, known), FORMAT_OK, FORMAT_UNKNOWN)
            else:
                known = z3.And(known, given >= cat.minimum_for(release), given <= cat.latest_testing_for(release))
                reason = z3.If(
                    text == TEXT_DEFAULT, FORMAT_OK,
                    z3.If(text == TEXT_ZK_ERA, FORMAT_TOO_OLD if release == "3.9" else FORMAT_UNKNOWN,
                          z3.If(z3.Not(known), FORMAT_UNKNOWN,
                                z3.If(z3.And(unstable == 0, given > cat.latest_production_for(release)),
                                      FORMAT_UNSTABLE,
                                      z3.If(given < cat.bootstrap_floor, FORMAT_BELOW_FLOOR, FORMAT_OK)))))
            # Formatter.run's first refusal: no cluster id ("You must specify the cluster id.").
            reason = z3.If(x["cluster"] == 1, reason, FORMAT_NO_CLUSTER)
            ok = reason == FORMAT_OK
            return {"accepted": z3.If(ok, 1, 0), "level": z3.If(ok, given, DONT_CARE), "reason": reason}
        return outputs

    def reference(cat: Any, profile: str, release: str) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            # --metadata-version as the operator types it ("" for a cluster id left out).
            given: str | int | None = x["level"]
            known = x["level"] in cat.levels
            if x["text"] == TEXT_NAME:
                given = cat.label(x["level"]) if known else "9.9-IV9"
            elif x["text"] == TEXT_RELEASE:
                given = _release_of(cat.label(x["level"])) if known else "9.9"
            elif x["text"] == TEXT_ZK_ERA:
                given = ZK_ERA_RELEASE
            elif x["text"] == TEXT_DEFAULT:
                given = None
            try:
                meta = format_storage("cluster" if x["cluster"] else "", cat, cat.latest, given, profile,
                                      kafka_release=release, unstable_feature_versions_enabled=bool(x["unstable"]))
            except ValueError as e:
                return {"accepted": 0, "level": DONT_CARE, "reason": _format_refusal(str(e))}
            return {"accepted": 1, "level": meta.metadata_version, "reason": FORMAT_OK}
        return run

    for name, cat in CATALOGS.items():
        texts = (TEXT_LEVEL, TEXT_NAME, TEXT_DEFAULT) + ((TEXT_RELEASE, TEXT_ZK_ERA) if name == "kafka" else ())
        domain = [{"level": lvl, "unstable": u, "text": t, "cluster": c}
                  for t in texts for lvl in range(cat.minimum - 2, cat.latest + 3)
                  if t not in (TEXT_DEFAULT, TEXT_ZK_ERA) or lvl == cat.minimum  # the level is not read
                  for u in (0, 1) for c in (0, 1)]
        for profile, release in (("kip", "3.9"), ("kafka", "3.9"), ("kafka", "4.0")):
            label = f"{name} catalog, {profile}" + (f", kafka {release}" if profile == "kafka" else "")
            yield (label, Formula(["level", "unstable", "text", "cluster"], build(cat, profile, release)), domain,
                   reference(cat, profile, release))


MV_UNSET = 0  # meta.properties without a metadata.version (a pre-KIP-778 "preview" cluster)
LOG_EMPTY_UNSAID, LOG_EMPTY, LOG_NOT_EMPTY = 0, 1, 2  # log_is_empty: None, True, False


def mv_activation_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """KIP-778 "Initialization" as Kafka's ActivationRecordsGenerator and QuorumController do it: an empty log
    gets a bootstrap FeatureLevelRecord at meta.properties' level (the catalog's minimum for a preview
    cluster without one) and the controller runs at it; a log that already holds FeatureLevelRecords gets
    nothing and runs at the last; a non-empty log without one gets nothing and runs at the minimum
    (MINIMUM_KRAFT_VERSION, "treats the log as version 3.0-IV1"); saying a log with records is empty is an
    error. Every config starts from an empty log, so only this reaches the other cases."""
    def build(cat: Any) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            meta, n, last, empty = x["meta"], x["records"], x["last"], x["empty"]
            error = z3.And(empty == LOG_EMPTY, n > 0)
            writes = z3.And(n == 0, empty != LOG_NOT_EMPTY)
            boot = z3.If(meta == MV_UNSET, cat.minimum, meta)
            level = z3.If(writes, boot, z3.If(n > 0, last, cat.minimum))
            return {"error": z3.If(error, 1, 0),
                    "bootstrap_record": z3.If(error, DONT_CARE, z3.If(writes, boot, -1)),
                    "level": z3.If(error, DONT_CARE, level)}
        return outputs

    def reference(cat: Any) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            meta = MetaProperties("cluster", None if x["meta"] == MV_UNSET else x["meta"])
            levels = tuple([cat.minimum] * (x["records"] - 1) + [x["last"]]) if x["records"] else ()
            empty = {LOG_EMPTY_UNSAID: None, LOG_EMPTY: True, LOG_NOT_EMPTY: False}[x["empty"]]
            try:
                record = bootstrap_metadata_version(meta, cat, levels, log_is_empty=empty)
                level = activation_metadata_version(meta, cat, levels, log_is_empty=empty)
            except ValueError:
                return {"error": 1, "bootstrap_record": DONT_CARE, "level": DONT_CARE}
            return {"error": 0, "bootstrap_record": -1 if record is None else record.feature_level, "level": level}
        return run

    for name, cat in CATALOGS.items():
        levels = [lvl for lvl in cat.levels if lvl <= cat.minimum + 4]
        domain = [{"meta": m, "records": n, "last": last, "empty": e}
                  for m in (MV_UNSET, *levels) for n in (0, 1, 2) for last in (levels if n else levels[:1])
                  for e in (LOG_EMPTY_UNSAID, LOG_EMPTY, LOG_NOT_EMPTY)]
        yield f"{name} catalog", Formula(["meta", "records", "last", "empty"], build(cat)), domain, reference(cat)


# --------------------------------------------------------------------------- broker registration

_OTHER = "group.version"  # a second feature beside metadata.version (any name the catalog does not treat apart)
_REGISTRATION_INPUTS = ["mv_lo", "mv_hi", "o_lo", "o_hi", "fin_mv", "fin_o", "other_first", "zeros", "others"]
def _finalized(mv: int, other: int, zeros: bool = False) -> tuple[tuple[str, int], ...]:
    """A controller's finalized levels of metadata.version and ``_OTHER`` (level 0: not finalized; ``zeros``: such
    a feature listed at level 0 all the same, which must mean the same)."""
    return tuple(sorted((n, lvl) for n, lvl in ((FEATURE_NAME, mv), (_OTHER, other)) if lvl != 0 or zeros))


_UNSUPPORTED_TEXT = re.compile(r"^Unable to register because the broker does not support finalized version (-?\d+) "
                               r"of (\S+)\. The broker wants a version between (-?\d+) and (-?\d+), inclusive\.$")


def mv_registration_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """``ClusterControlManager.registerBroker``'s feature checks (KIP-778 Compatibility: a broker that cannot
    support a finalized feature is refused), on requests the system never sends: no metadata.version range
    (3.9 and kip assume the catalog's minimum, 4.0 refuses with INVALID_REGISTRATION), a second feature sent or
    not, finalized or not, in either order. Kafka checks the request's features in the order sent, then the
    assumed metadata.version, then each finalized feature the broker does not list, as 0-0; a finalized level
    missing (or listed at level 0) is 1 for metadata.version, 0 for others (processRegistrationFeature). The
    refusal's numbers and feature name, the range registered and the other brokers' registrations kept (the
    system keeps its own), are outputs: only this rule reads them."""
    # kip under each release too: the KIP's assumed minimum does not depend on which Kafka release a config names.
    for profile, release in (("kip", "3.9"), ("kip", "4.0"), ("kafka", "3.9"), ("kafka", "4.0")):
        cat = CATALOGS["kafka" if profile == "kafka" else "example"]
        refuses_missing = profile == "kafka" and release == "4.0"

        def formula(x: dict[str, z3.ArithRef], cat: Any = cat, refuses_missing: bool = refuses_missing
                    ) -> Mapping[str, Any]:
            missing, o_sent = x["mv_lo"] < 0, x["o_lo"] >= 0
            lo, hi = z3.If(missing, cat.minimum, x["mv_lo"]), z3.If(missing, cat.minimum, x["mv_hi"])
            fin_mv = z3.If(x["fin_mv"] == 0, 1, x["fin_mv"])
            olo, ohi = z3.If(o_sent, x["o_lo"], 0), z3.If(o_sent, x["o_hi"], 0)
            mv_bad = z3.Not(z3.And(lo <= fin_mv, fin_mv <= hi))
            o_bad = z3.Not(z3.And(olo <= x["fin_o"], x["fin_o"] <= ohi))
            # The other feature is checked first when it is sent and either metadata.version is not (the
            # assumed range comes after the request's) or it was sent first.
            o_first = z3.And(o_sent, z3.Or(missing, x["other_first"] == 1))
            refused_o = z3.And(o_bad, z3.Or(o_first, z3.Not(mv_bad)))
            refused = z3.Or(mv_bad, o_bad)
            invalid = z3.And(missing, refuses_missing)

            def shown(a: Any, b: Any) -> Any:
                return z3.If(z3.Or(invalid, z3.Not(refused)), DONT_CARE, z3.If(refused_o, a, b))
            return {"error": z3.If(invalid, INVALID_REGISTRATION, z3.If(refused, UNSUPPORTED_VERSION, 0)),
                    "feature": shown(2, 1), "fin": shown(x["fin_o"], fin_mv), "lo": shown(olo, lo),
                    "hi": shown(ohi, hi),
                    "reg_lo": z3.If(z3.Or(invalid, refused), DONT_CARE, lo),
                    "reg_hi": z3.If(z3.Or(invalid, refused), DONT_CARE, hi),
                    "kept": z3.If(z3.Or(invalid, refused), DONT_CARE, 1)}

        def reference(x: Inputs, cat: Any = cat, profile: str = profile, release: str = release) -> Outputs:
            # others: broker 3 registered before, which a registration of broker 7 must leave as it was.
            prior = (BrokerRegistration(3, ((FEATURE_NAME, VersionRange(cat.minimum, cat.minimum + 2)),), False),)
            ctl = QuorumController(catalog=cat, node_id=0, local_supported=(), voters=((0, None),),
                                   finalized=_finalized(x["fin_mv"], x["fin_o"], bool(x["zeros"])), profile=profile,
                                   kafka_release=release, brokers=prior if x["others"] else ())
            sent = []
            if x["mv_lo"] >= 0:
                sent.append((FEATURE_NAME, VersionRange(x["mv_lo"], x["mv_hi"])))
            if x["o_lo"] >= 0:
                sent.insert(0 if x["other_first"] else len(sent), (_OTHER, VersionRange(x["o_lo"], x["o_hi"])))
            reply, after = ctl.register_broker(BrokerRegistrationRequest(7, tuple(sent) if sent else None))
            out: Outputs = {"error": int(reply.error), "feature": DONT_CARE, "fin": DONT_CARE, "lo": DONT_CARE,
                            "hi": DONT_CARE, "reg_lo": DONT_CARE, "reg_hi": DONT_CARE, "kept": DONT_CARE}
            if reply.error == mv_api.Errors.INVALID_REGISTRATION:
                expected = f"Request features do not contain '{FEATURE_NAME}'"
                return {**out, "error": int(reply.error) if reply.message == expected and after is ctl
                        else CODEC_ERROR}
            if reply.error == mv_api.Errors.UNSUPPORTED_VERSION:
                m = _UNSUPPORTED_TEXT.match(reply.message or "")
                if m is None or after is not ctl:
                    return {**out, "error": CODEC_ERROR}
                name = {FEATURE_NAME: 1, _OTHER: 2}.get(m.group(2), CODEC_ERROR)
                return {**out, "feature": name, "fin": int(m.group(1)), "lo": int(m.group(3)), "hi": int(m.group(4))}
            (reg,) = [b for b in after.brokers if b.broker_id == 7]
            mv = reg.supported(FEATURE_NAME)
            ok = reg.fenced and reply.message is None
            kept = [b.broker_id for b in after.brokers] == ([3, 7] if x["others"] else [7]) and \
                all(b in after.brokers for b in ctl.brokers)
            return {**out, "error": int(reply.error) if ok else CODEC_ERROR, "reg_lo": mv.min, "reg_hi": mv.max,
                    "kept": int(kept)}

        low = cat.minimum
        levels = (0, low, low + 1, low + 2)
        ranges = [(-1, -1), (low, low), (low, low + 1), (low + 1, low + 2)]
        others = [(-1, -1), (0, 0), (0, 1), (1, 2)]
        # zeros: a feature at level 0 listed in the finalized map (Kafka's never holds one: replaying a record
        # at 0 removes the feature) is not finalized, so its default applies (1 for metadata.version).
        domain = [dict(zip(_REGISTRATION_INPUTS, (mlo, mhi, olo, ohi, fm, fo, first, zeros, prior), strict=True))
                  for (mlo, mhi), (olo, ohi), fm, fo, first, zeros, prior in itertools.product(
                      ranges, others, levels, (0, 1, 2), (0, 1), (0, 1), (0, 1))
                  # another broker registered before: on the plainest inputs alone (keeps the cell about as fast)
                  if (not zeros or 0 in (fm, fo)) and (not prior or not (zeros or first))]
        yield f"registerBroker, {profile} {release}", Formula(_REGISTRATION_INPUTS, formula), domain, reference


# --------------------------------------------------------------------------- kip: all or nothing

_ATOMIC_INPUTS = ["m", "g", "mv_ok", "gv_ok", "gv_first", "dry"]


def mv_atomic_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """KIP-584's revision under kip: "if one update cannot be applied, none is". A request of two updates,
    metadata.version and another feature, each valid (one level up, supported everywhere) or refused (its own
    level: INVALID_REQUEST), in either order, dry or not: a refused one keeps its error, a valid one beside it
    answers FEATURE_UPDATE_FAILED, and nothing is written; with both valid both are written (none on a dry run).
    The system sends one update a request, so only this rule meets a request that fails in part."""
    cat = CATALOGS["example"]
    low = cat.minimum

    def formula(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        mv_ok, gv_ok = x["mv_ok"] == 1, x["gv_ok"] == 1
        both = z3.And(mv_ok, gv_ok)
        writes = z3.And(both, x["dry"] == 0)
        return {"top": 0,
                "e_mv": z3.If(mv_ok, z3.If(gv_ok, 0, FEATURE_UPDATE_FAILED), INVALID_REQUEST),
                "e_gv": z3.If(gv_ok, z3.If(mv_ok, 0, FEATURE_UPDATE_FAILED), INVALID_REQUEST),
                "records": z3.If(writes, 2, 0),
                "w_mv": z3.If(writes, x["m"] + 1, -1), "w_gv": z3.If(writes, x["g"] + 1, -1)}

    def reference(x: Inputs) -> Outputs:
        supported = VersionRange(low, low + 2)
        ctl = QuorumController(catalog=cat, node_id=0,
                               local_supported=((FEATURE_NAME, supported), (_OTHER, VersionRange(0, 2))),
                               voters=((0, supported),), finalized=_finalized(x["m"], x["g"]), profile="kip")
        mv = FeatureUpdate(FEATURE_NAME, x["m"] + x["mv_ok"])
        gv = FeatureUpdate(_OTHER, x["g"] + x["gv_ok"])
        result = ctl.update_features(UpdateFeaturesRequest((gv, mv) if x["gv_first"] else (mv, gv),
                                                           dry_run=bool(x["dry"])))
        errors = {r.feature: int(r.error) for r in result.response.results}
        written = {r.name: r.feature_level for r in result.records}
        return {"top": int(result.response.error), "e_mv": errors.get(FEATURE_NAME, CODEC_ERROR),
                "e_gv": errors.get(_OTHER, CODEC_ERROR), "records": len(result.records),
                "w_mv": written.get(FEATURE_NAME, -1), "w_gv": written.get(_OTHER, -1)}

    domain = [dict(zip(_ATOMIC_INPUTS, v, strict=True))
              for v in itertools.product((low, low + 1), (0, 1), (0, 1), (0, 1), (0, 1), (0, 1))]
    yield "two updates, kip", Formula(_ATOMIC_INPUTS, formula), domain, reference
    yield from _kafka_two_update_cases()


_FOR_FEATURE = re.compile(r"for feature (\S+)\. ")


def _kafka_two_update_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The same two-update requests under the kafka profile, where Kafka is not all or nothing. A refused update
    here is a downgrade by one asked as an upgrade (FeatureControlManager.updateFeature: "Can't downgrade the
    version of this feature without setting the upgrade type ..."). Release 3.9 (FeatureControlManager.updateFeatures
    on the 3.9 branch): each update answers for itself (INVALID_UPDATE_VERSION or NONE) and ``atomicOf(records,
    results)`` writes the records of the updates that passed even beside a refused one. Release 4.0 (4.0 branch
    4ae6814): the first refused update ends the request: nothing written, the error at the top level, naming that
    update's feature, and no per-feature results."""
    cat = CATALOGS["kafka"]
    low = 10  # 3.5-IV1: above the bootstrap floor and below controller registrations (only the local check)
    names = {FEATURE_NAME: 1, _OTHER: 2}

    for release in ("3.9", "4.0"):
        def formula(x: dict[str, z3.ArithRef], release: str = release) -> Mapping[str, Any]:
            mv_ok, gv_ok, dry = x["mv_ok"] == 1, x["gv_ok"] == 1, x["dry"] == 1
            mv_up, gv_up = z3.If(mv_ok, x["m"] + 1, x["m"] - 1), z3.If(gv_ok, x["g"] + 1, x["g"] - 1)
            if release == "3.9":
                return {"top": 0, "named": 0,
                        "e_mv": z3.If(mv_ok, 0, INVALID_UPDATE_VERSION),
                        "e_gv": z3.If(gv_ok, 0, INVALID_UPDATE_VERSION),
                        "records": z3.If(dry, 0, z3.If(mv_ok, 1, 0) + z3.If(gv_ok, 1, 0)),
                        "w_mv": z3.If(z3.And(mv_ok, z3.Not(dry)), mv_up, -1),
                        "w_gv": z3.If(z3.And(gv_ok, z3.Not(dry)), gv_up, -1)}
            both = z3.And(mv_ok, gv_ok)
            # the first refused one in the request's order is named
            gv_named = z3.And(z3.Not(gv_ok), z3.Or(x["gv_first"] == 1, mv_ok))
            writes = z3.And(both, z3.Not(dry))
            return {"top": z3.If(both, 0, INVALID_UPDATE_VERSION),
                    "named": z3.If(both, 0, z3.If(gv_named, 2, 1)),
                    "e_mv": z3.If(both, 0, CODEC_ERROR), "e_gv": z3.If(both, 0, CODEC_ERROR),
                    "records": z3.If(writes, 2, 0),
                    "w_mv": z3.If(writes, mv_up, -1), "w_gv": z3.If(writes, gv_up, -1)}

        def reference(x: Inputs, release: str = release) -> Outputs:
            supported = VersionRange(cat.minimum, cat.latest)
            ctl = QuorumController(catalog=cat, node_id=0,
                                   local_supported=((FEATURE_NAME, supported), (_OTHER, VersionRange(0, 3))),
                                   voters=((0, supported),), finalized=_finalized(x["m"], x["g"]),
                                   profile="kafka", kafka_release=release)
            # a refused update is a downgrade by one with the (default) upgrade type UPGRADE
            mv = FeatureUpdate(FEATURE_NAME, x["m"] + (1 if x["mv_ok"] else -1))
            gv = FeatureUpdate(_OTHER, x["g"] + (1 if x["gv_ok"] else -1))
            result = ctl.update_features(UpdateFeaturesRequest((gv, mv) if x["gv_first"] else (mv, gv),
                                                               dry_run=bool(x["dry"])))
            response = result.response
            named = 0
            if response.error is not mv_api.Errors.NONE:
                m = _FOR_FEATURE.search(response.message or "")
                ok = (response.message or "").startswith(mv_api.ALL_FAILED_PREFIX) and m is not None
                named = names.get(m.group(1), CODEC_ERROR) if ok and m is not None else CODEC_ERROR
            errors = {r.feature: int(r.error) for r in response.results}
            written = {r.name: r.feature_level for r in result.records}
            return {"top": int(response.error), "named": named, "e_mv": errors.get(FEATURE_NAME, CODEC_ERROR),
                    "e_gv": errors.get(_OTHER, CODEC_ERROR), "records": len(result.records),
                    "w_mv": written.get(FEATURE_NAME, -1), "w_gv": written.get(_OTHER, -1)}

        domain = [dict(zip(_ATOMIC_INPUTS, v, strict=True))
                  for v in itertools.product((low, low + 1), (1, 2), (0, 1), (0, 1), (0, 1), (0, 1))]
        yield f"two updates, kafka {release}", Formula(_ATOMIC_INPUTS, formula), domain, reference


# The full domains (benchmarks/prove.py) and the gate's (a z3 cell within seconds: mv_update on small quorums).
DECISIONS = DecisionRules(
    full={"mv_lossless": mv_lossless_cases, "mv_catalog": mv_catalog_cases,
          "mv_update": lambda: itertools.chain(mv_update_cases(), mv_own_registration_cases()),
          "mv_request": mv_request_cases, "mv_update_forms": mv_update_form_cases, "mv_replay": mv_replay_cases,
          "format_storage": format_storage_cases, "mv_activation": mv_activation_cases,
          "mv_registration": mv_registration_cases},
    gate={"mv_lossless": mv_lossless_cases, "mv_catalog": mv_catalog_cases,
          "mv_update": lambda: itertools.chain(
              mv_update_cases("example", voters=2, brokers=0, dry_runs=(False, True), edge_ranges=True),
              mv_update_cases("kafka", voters=1, brokers=0, dry_runs=(False,)), mv_own_registration_cases()),
          "mv_request": mv_request_cases, "mv_update_forms": mv_update_form_cases, "mv_replay": mv_replay_cases,
          "format_storage": format_storage_cases, "mv_activation": mv_activation_cases,
          "mv_registration": mv_registration_cases},
)
