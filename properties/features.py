"""Properties of the ``features`` protocol (KIP-584 and its revision), ids ``FEAT-01``...

Each predicate restates the KIP sentence it cites directly over the state; none calls the reference
implementation's decision functions, so a wrong rule there cannot make its own check pass.
"""

from __future__ import annotations

from typing import Any

from rollcheck.transition import Action, AnyProperty, Invariant, StepProperty, always_eventually_reachable

KIP = "KIP-584"


def _node_features(s: Any) -> dict[str, tuple[int, int]]:
    if s.node is None:
        return {}
    return {n: (r.min_version_level, r.max_version_level) for n, r in s.node.features}


def _fits(profile: str, sup: tuple[int, int] | None, fin: tuple[int, int]) -> bool:
    if sup is None:
        return False
    if profile == "kafka":  # FinalizedVersionRange.isIncompatibleWith: the whole range must fit
        return sup[0] <= fin[0] and fin[1] <= sup[1]
    return sup[0] <= fin[1] <= sup[1]  # KIP Validations: the max level in every live broker's range


def _enabled(s: Any) -> bool:
    return s.ibp_enabled and s.node is not None and s.node.status.name == "ENABLED"


def features_properties(profile: str, semantics: str, table: dict[str, dict[str, tuple[int, int]]]
                        ) -> list[AnyProperty]:
    """The properties for a profile and update semantics; ``table`` maps release -> feature -> (min, max)
    (the config's releases, see :func:`release_table`)."""

    def live_compatible(s: Any) -> bool:
        if not _enabled(s):
            return True
        fin = _node_features(s)
        for b in s.brokers:
            if b.registered and b.status.name == "RUNNING":
                sup = table[b.release]
                if not all(_fits(profile, sup.get(f), r) for f, r in fin.items()):
                    return False
        return True

    def notified_compatible(s: Any) -> bool:
        if not _enabled(s):
            return True
        fin = _node_features(s)
        for b in s.brokers:
            if b.status.name == "RUNNING" and b.notified:
                sup = table[b.release]
                if not all(_fits(profile, sup.get(f), r) for f, r in fin.items()):
                    return False
        return True

    def ranges_valid(s: Any) -> bool:
        return all(1 <= lo <= hi for lo, hi in _node_features(s).values())

    def disabled_is_empty(s: Any) -> bool:
        return s.node is None or s.node.status.name == "ENABLED" or not s.node.features

    def epoch_rises_on_change(s: Any, a: Action, t: Any) -> bool:
        if s.node is t.node or s.node == t.node:  # identity first: most steps keep the node object
            return True
        if t.node is None:
            return False  # the node is never deleted
        if s.node is None:
            return t.node.epoch == 0
        return t.node.epoch == s.node.epoch + 1

    def caches_monotonic(s: Any, a: Action, t: Any) -> bool:
        if t.client.epoch < s.client.epoch:
            return False
        if s.brokers is t.brokers:  # the same brokers: no cache can have gone back
            return True
        for b, c in zip(s.brokers, t.brokers, strict=True):
            # The integer comparison first: the enum's .name is the costly part and rarely needed.
            if c.cache_epoch < b.cache_epoch and b.status.name == "RUNNING" and c.status.name == "RUNNING":
                return False
        return True

    def no_downgrade_without_flag(s: Any, a: Action, t: Any) -> bool:
        if a.name != "UpdateFeatures" or s.node is t.node:  # the same node: nothing lowered
            return True
        before, after = _node_features(s), _node_features(t)
        allowed = {f for f, _lvl, allow in a["updates"] if allow}
        for f, (_lo, hi) in before.items():
            lowered = f not in after or after[f][1] < hi
            if lowered and f not in allowed:
                return False
        return True

    def failed_changes_nothing(s: Any, a: Action, t: Any) -> bool:
        if a.name != "UpdateFeatures":
            return True
        top, *results = a["result"]
        if top != "NONE":
            return s.node is t.node or s.node == t.node
        before = _node_features(s)
        after = before if s.node is t.node else _node_features(t)  # read-only: one dict serves both
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
        if any(r != "NONE" for r in results) and (semantics == "atomic" or all(
                after.get(f) == before.get(f) for f, _l, _a in a["updates"])):
            # The revision: one failure and nothing is applied. And whenever nothing is applied, the
            # node itself (its epoch included) is untouched.
            return s.node is t.node or s.node == t.node
        return True

    def dry_run_changes_nothing(s: Any, a: Action, t: Any) -> bool:
        return not (a.name == "UpdateFeatures" and a["dry_run"]) or s is t or s == t

    def everyone_caught_up(s: Any) -> bool:
        return all(b.notified for b in s.brokers if b.status.name == "RUNNING")

    props: list[AnyProperty] = [
        Invariant("FEAT-01", "finalized levels lie in the supported range of every live (registered) broker; "
                  "an incompatible broker is never in the controller's live set, so never sent metadata",
                  f"{KIP} Validations; Incompatible broker lifetime race condition", live_compatible),
        Invariant("FEAT-02", "every finalized feature has 1 <= min_version_level <= max_version_level",
                  f"{KIP} Persistence of finalized feature version levels, Schema", ranges_valid),
        StepProperty("FEAT-03", "the /features epoch never decreases and rises by exactly one on every change",
                     f"{KIP} Changes to Kafka Controller, step 3; ApiVersionsResponse FinalizedFeaturesEpoch",
                     epoch_rises_on_change),
        StepProperty("FEAT-04", "neither a running broker's cache nor a client ever goes back to an older epoch",
                     f"{KIP} Client discovery of finalized feature versions (eventual consistency)",
                     caches_monotonic),
        StepProperty("FEAT-05", "no downgrade or deletion of a finalized feature without allowDowngrade",
                     f"{KIP} Validations, important point 2", no_downgrade_without_flag),
        StepProperty("FEAT-06", "a failed update (per update; per request under atomic) changes nothing, "
                     "and a successful one is applied", f"{KIP} Guarantees (and its revision)",
                     failed_changes_nothing),
        StepProperty("FEAT-07", "a dry run changes nothing", f"{KIP} Tooling support (--dry-run)",
                     dry_run_changes_nothing),
        Invariant("FEAT-08", "a running broker that has read the latest /features is compatible with it "
                  "(an incompatible one shut down when notified)",
                  f"{KIP} Broker protections against race conditions", notified_compatible),
        Invariant("FEAT-09", "a disabled /features node holds no finalized features",
                  f"{KIP} Feature ZK node status", disabled_is_empty),
        always_eventually_reachable("FEAT-10", "every running broker can always catch up with /features",
                                    f"{KIP} Guarantees: brokers gradually receive notifications",
                                    everyone_caught_up),
    ]
    return props


def release_table(releases: Any) -> dict[str, dict[str, tuple[int, int]]]:
    return {r.name: {f: (lo, hi) for f, lo, hi in r.features} for r in releases}
