"""Properties of the ``streams_probing`` protocol (KIP-268), ids ``STR-01``...

Each predicate restates the KIP sentence it cites over the state and the step; none calls the assignor.
The only facts shared with the model are the releases' version numbers (``releases.py``, read from Kafka).
"""

from __future__ import annotations

from typing import Any

from reference_impl.streams_probing.releases import EARLIEST_PROBEABLE_VERSION, UNKNOWN, release
from rollcheck.transition import Action, AnyProperty, GraphProperty, Invariant, StepProperty

KIP = "KIP-268"
MEMBER_STEPS = ("OnAssignment", "ProbeDowngrade", "AdoptSupportedVersion", "LeaderFollowUpRebalance")


def _members(s: Any) -> list[int]:
    return [i for i, x in enumerate(s.instances) if x.running and not x.failure]


def streams_probing_properties(system: Any) -> list[AnyProperty]:
    """The properties for a built system (they use its ``target_version`` / ``stable`` / ``converged``)."""

    def leader_survives_future(s: Any, a: Action, t: Any) -> bool:
        if a.name != "Rebalance":
            return True
        j = a["leader"]
        lrel = release(s.instances[j].release)
        sent = [s.instances[i].used_version for i in _members(s)]
        future = [v for v in sent if v > lrel.latest_supported]
        others = [v for v in sent if v <= lrel.latest_supported]
        if not lrel.probing or not future or any(v < EARLIEST_PROBEABLE_VERSION for v in others):
            return True
        return not t.instances[j].failure

    def every_assignment_decodable(s: Any, a: Action, t: Any) -> bool:
        if a.name != "Rebalance":
            return True
        for x in t.instances:
            if x.inbox is not None and not release(x.release).can_decode(x.inbox.version):
                return False
        return True

    def assigns_at_oldest_version(s: Any, a: Action, t: Any) -> bool:
        if a.name != "Rebalance" or t.rebalance_pending:
            return True  # the leader failed: nothing was assigned
        lrel = release(s.instances[a["leader"]].release)
        understood = [s.instances[i].used_version for i in _members(s)
                      if s.instances[i].used_version <= lrel.latest_supported]
        if not understood:
            return True
        oldest = min(understood)
        for x in t.instances:
            d = x.inbox
            if d is None or d.error or d.probing_reply:
                continue
            if d.version != oldest:
                return False
        return True

    def not_above_leader_after_probe(s: Any, a: Action, t: Any) -> bool:
        if a.name not in MEMBER_STEPS:
            return True
        i = a["instance"]
        before, after = s.instances[i], t.instances[i]
        d = before.inbox
        if d is None or d.supported == UNKNOWN or d.version >= before.used_version:
            return True
        return after.used_version <= d.supported

    def speaks_its_version(s: Any) -> bool:
        return all(x.used_version <= release(x.release).latest_supported for x in s.instances)

    def nobody_fails(s: Any) -> bool:
        return all(not x.failure for x in s.instances)

    def converges(s: Any) -> bool:
        if not system.bounces_done(s) or not system.stable(s):
            return True
        return bool(system.converged(s))

    def one_extra_rebalance(s: Any) -> bool:
        if not system.bounces_done(s) or s.rebalances < 2 or any(x.failure or not x.running for x in s.instances):
            return True  # a member is away: its return is a new join, which starts the count again
        if any(x.inbox is not None for x in s.instances) or s.follow_up >= 0:
            return True  # the second rebalance is still being processed
        return bool(system.converged(s))

    def settled(s: Any) -> bool:
        return bool(system.stable(s) or any(x.failure for x in s.instances))

    src = KIP
    return [
        StepProperty("STR-01", "a 2.0+ leader never fails on a subscription newer than it understands (all others "
                     "version 3+)", f"{src} Future upgrades: instead of failing, the leader will send an empty "
                     "assignment back encoding its supported version", leader_survives_future),
        StepProperty("STR-02", "every member can decode every assignment it receives",
                     f"{src} Upgrading to 2.0, 2b: instances will receive a corresponding version 1 or 2 "
                     "Assignment", every_assignment_decodable),
        StepProperty("STR-03", "while any member sends version X, the leader assigns at version X",
                     f"{src} Detailed upgrade protocol: as long as the leader receives at least one old version X "
                     "Subscription it always sends version Assignment X back", assigns_at_oldest_version),
        StepProperty("STR-04", "a member never uses a version above the leader's supported one after a probe",
                     f"{src} Detailed upgrade protocol: it can downgrade to X and resends a Subscription with "
                     "old version X", not_above_leader_after_probe),
        Invariant("STR-05", "no member uses a subscription version above its own latest supported version",
                  f"{src} Detailed upgrade protocol: update its downgraded used-version if possible",
                  speaks_its_version),
        Invariant("STR-06", "no instance fails during the upgrade procedure (assignor exception or error "
                  "assignment)", f"{src} Motivation: zero downtime; rolling bounces work", nobody_fails),
        Invariant("STR-07", "once every bounce is done and the group is stable, every member uses the highest "
                  "version all members support", f"{src} Future upgrades: all other instances can switch back "
                  "to the highest supported metadata version", converges),
        Invariant("STR-08", "after the last bounce the group converges within at most one extra rebalance",
                  f"{src} Detailed upgrade protocol: if the leader is bounced last, the metadata upgrade only "
                  "finishes after one more rebalance", one_extra_rebalance),
        GraphProperty("STR-L1", "the group can always settle (no endless rebalancing)",
                      f"{src} Detailed upgrade protocol (liveness: no rebalance storm)", settled),
    ]
