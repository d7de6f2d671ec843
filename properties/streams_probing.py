"""Properties of the ``streams_probing`` protocol (KIP-268), ids ``STR-01``...

Each predicate restates the KIP sentence it cites over the state and the step; none calls the assignor.
The only facts shared with the model are the releases' version numbers (``releases.py``, read from Kafka).
The context the predicates take first is the built system itself: its ``stable`` / ``bounces_done`` /
``converged`` (the group-level notions the properties are stated in) and its config. The witnesses
(``STR-W*``) name the stories the configs exist for: a run that never reaches one is vacuous.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reference_impl.streams_probing.releases import EARLIEST_PROBEABLE_VERSION, KAFKA_20, UNKNOWN, release
from rollcheck.core.declare import PropertySet, graph_property, invariant, step_property, witness
from rollcheck.core.transition import Action

if TYPE_CHECKING:  # the context properties are bound to (PropertySet.bind): annotations only
    from reference_impl.streams_probing.system import StreamsProbingSystem

KIP = "KIP-268"
MEMBER_STEPS = ("OnAssignment", "ProbeDowngrade", "AdoptSupportedVersion", "LeaderFollowUpRebalance")


def _members(s: Any) -> list[int]:
    return [i for i, x in enumerate(s.instances) if x.running and not x.failure]


# ---------------------------------------------------------------- step properties

@step_property("STR-01", "a 2.0+ leader never fails on a subscription newer than it understands (all others "
               "version 3+)", source=f"{KIP} Future upgrades: instead of failing, the leader will send an empty "
               "assignment back encoding its supported version")
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


@step_property("STR-02", "every member can decode every assignment it receives",
               source=f"{KIP} Upgrading to 2.0, 2b: instances will receive a corresponding version 1 or 2 "
               "Assignment")
def every_assignment_decodable(s: Any, a: Action, t: Any) -> bool:
    if a.name != "Rebalance":
        return True
    for x in t.instances:
        if x.inbox is not None and not release(x.release).can_decode(x.inbox.version):
            return False
    return True


@step_property("STR-03", "while any member sends version X, the leader assigns at version X",
               source=f"{KIP} Detailed upgrade protocol: as long as the leader receives at least one old version "
               "X Subscription it always sends version Assignment X back")
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


@step_property("STR-04", "a member never uses a version above the leader's supported one after a probe",
               source=f"{KIP} Detailed upgrade protocol: it can downgrade to X and resends a Subscription with "
               "old version X")
def not_above_leader_after_probe(s: Any, a: Action, t: Any) -> bool:
    if a.name not in MEMBER_STEPS:
        return True
    i = a["instance"]
    before, after = s.instances[i], t.instances[i]
    d = before.inbox
    if d is None or d.supported == UNKNOWN or d.version >= before.used_version:
        return True
    return bool(after.used_version <= d.supported)


# ---------------------------------------------------------------- invariants

@invariant("STR-05", "no member uses a subscription version above its own latest supported version",
           source=f"{KIP} Detailed upgrade protocol: update its downgraded used-version if possible")
def speaks_its_version(s: Any) -> bool:
    return all(x.used_version <= release(x.release).latest_supported for x in s.instances)


def _configured_as_the_kip_says(ctx: StreamsProbingSystem) -> bool:
    """upgrade.from names the release upgraded from, as KIP-268 prescribes (no operator's mistake)."""
    return ctx.config.misconfigured_upgrade_from is None


@invariant("STR-06", "no instance fails during the upgrade procedure (assignor exception or error assignment)",
           source=f"{KIP} Motivation: zero downtime; rolling bounces work", when=_configured_as_the_kip_says)
def nobody_fails(s: Any) -> bool:
    return all(not x.failure for x in s.instances)


@invariant("STR-07", "once every bounce is done and the group is stable, every member uses the highest version "
           "all members support", source=f"{KIP} Future upgrades: all other instances can switch back to the "
           "highest supported metadata version")
def converges(ctx: StreamsProbingSystem, s: Any) -> bool:
    if not ctx.bounces_done(s) or not ctx.stable(s):
        return True
    return bool(ctx.converged(s))


@invariant("STR-08", "after the last bounce the group converges within at most one extra rebalance",
           source=f"{KIP} Detailed upgrade protocol: if the leader is bounced last, the metadata upgrade only "
           "finishes after one more rebalance")
def one_extra_rebalance(ctx: StreamsProbingSystem, s: Any) -> bool:
    if not ctx.bounces_done(s) or s.rebalances < 2 or any(x.failure or not x.running for x in s.instances):
        return True  # a member is away: its return is a new join, which starts the count again
    if any(x.inbox is not None for x in s.instances) or s.follow_up >= 0:
        return True  # the second rebalance is still being processed
    return bool(ctx.converged(s))


@invariant("STR-09", "an instance that failed has stopped for good: it does not run and holds no assignment",
           source="Kafka StreamsRebalanceListener.onPartitionsAssigned: an error code in the assignment shuts the "
           "client down (SHUTDOWN_REQUESTED) or kills its thread (MissingSourceTopicException, "
           "TaskAssignmentException); an assignor exception kills the thread")
def failed_stays_down(s: Any) -> bool:
    # Without it a member that shut down on the leader's error assignment could go on running, or keep the
    # assignment it stopped on, and no other property would notice (the failed are out of the group).
    return all(not x.running and x.inbox is None for x in s.instances if x.failure)



@invariant("STR-10", "the rolling bounces follow the upgrade procedure: no instance goes through more bounces than "
           "it prescribes (one, or two with upgrade.from; an operator's cap), and a second rolling bounce starts "
           "only once the first has reached every instance (bounce counts differ by at most one)",
           source=f"{KIP} Upgrading from 0.10.0.x / 0.10.1.x ... to 2.0 (the first rolling bounce with "
           "upgrade.from on every instance, then a second one removing it) and Upgrading from 2.0 to 2.x "
           "(one rolling bounce)")
def bounces_follow_the_procedure(ctx: StreamsProbingSystem, s: Any) -> bool:
    # Without it a bounce loop that ignored the procedure's rounds (the mutation campaign's system.py:204
    # `if False`) made the state space infinite: the explorer ran out of time instead of finding a violation.
    counts = [x.bounces for x in s.instances]
    if max(counts) > ctx.config.max_bounces:
        return False
    return bool(ctx.config.operator or max(counts) - min(counts) <= 1)


# ---------------------------------------------------------------- liveness

@graph_property("STR-L1", "the group can always settle (no endless rebalancing)",
                source=f"{KIP} Detailed upgrade protocol (liveness: no rebalance storm)")
def settled(ctx: StreamsProbingSystem, s: Any) -> bool:
    return bool(ctx.stable(s) or any(x.failure for x in s.instances))


# ---------------------------------------------------------------- witnesses: the stories the configs cover

def _probing_upgrade(ctx: StreamsProbingSystem) -> bool:
    """The old release probes (2.0+) and the new one speaks a higher version: a bounced instance's first
    subscription is newer than an old leader understands (KIP-268's "future upgrades")."""
    return ctx.old.probing and ctx.new.latest_supported > ctx.old.latest_supported


def _version_changes(ctx: StreamsProbingSystem) -> bool:
    """The new release speaks a higher metadata version than the old one: the group has a version to move to."""
    return ctx.new.latest_supported > ctx.old.latest_supported


@witness("STR-W1", "a leader answered a member whose subscription is newer than it understands with an "
         "assignment (version probing) instead of failing",
         source=f"{KIP} Future upgrades with version probing: instead of failing, the leader will send an empty "
         "assignment back encoding its supported version", when=_probing_upgrade)
def future_subscription_answered(s: Any) -> bool:
    if s.leader < 0:
        return False
    latest = release(s.instances[s.leader].release).latest_supported
    return any(x.inbox is not None and not x.inbox.error and x.used_version > latest for x in s.instances)


@witness("STR-W2", "a member probed down: without upgrade.from, it subscribes below its own latest version",
         source=f"{KIP} Detailed upgrade protocol: it can downgrade to X (in-memory flag) and resends a new "
         "Subscription with old version X", when=_probing_upgrade)
def probed_down(s: Any) -> bool:
    return any(x.upgrade_from is None and x.used_version < release(x.release).latest_supported
               for x in s.instances)


def _leader_follow_up(ctx: StreamsProbingSystem) -> bool:
    """As ``_probing_upgrade``, under a profile whose leader triggers a follow-up rebalance: the KIP's, and
    today's assignor (``kafka``). Kafka 2.0 and the 2.1 branch have none (``kafka-2.0``): the member that
    changes its version rejoins by itself, so the story cannot happen there."""
    return _probing_upgrade(ctx) and ctx.config.profile != KAFKA_20


@witness("STR-W3", "the leader of a rebalance has a follow-up rebalance to trigger",
         source=f"{KIP} Detailed upgrade protocol: the leader should be responsible to trigger this final "
         "rebalance", when=_leader_follow_up)
def follow_up_scheduled(s: Any) -> bool:
    return bool(s.follow_up >= 0)


def _upgrade_from_used(ctx: StreamsProbingSystem) -> bool:
    """A bounce sets upgrade.from: the first of KIP-268's two bounces, or one an operator may choose
    (procedure "operator", a pre-2.0 group whose new release accepts the old one's value)."""
    return ctx.config.upgrade_from is not None


@witness("STR-W4", "an old-release leader assigned to a new-release member subscribing with upgrade.from "
         "(first of two rolling bounces)",
         source=f"{KIP} Upgrading to 2.0, 2a: upgrade.from tells the application to send Subscription using old "
         "encoding, to be compatible with potential version 1 or 2 leader", when=_upgrade_from_used)
def old_leader_answered_upgrade_from(ctx: StreamsProbingSystem, s: Any) -> bool:
    if s.leader < 0 or s.instances[s.leader].release != ctx.old.name:
        return False
    return any(x.inbox is not None and not x.inbox.error and x.upgrade_from is not None for x in s.instances)


@witness("STR-W5", "every bounce is done, the group is stable and every member uses the new release's version",
         source=f"{KIP} Upgrading to 2.0, 4c: the upgrade is completed; Future upgrades: all other instances can "
         "switch back to the highest supported metadata version", when=_version_changes)
def upgrade_completed(ctx: StreamsProbingSystem, s: Any) -> bool:
    return bool(ctx.stable(s) and ctx.bounces_done(s) and ctx.converged(s))


def _misconfiguration_refused(ctx: StreamsProbingSystem) -> bool:
    """A leader can meet a pre-2.0 and a future subscription at once and answers with an error assignment:
    today's assignor (kafka) in a 2.1+ leader, an operator's wrong upgrade.from sending the pre-2.0 version from
    a new member while another new member subscribes above the leader's version (three instances at least)."""
    c = ctx.config
    return (c.misconfigured_upgrade_from is not None and c.profile == "kafka" and ctx.old.latest_supported >= 4
            and ctx.new.latest_supported > ctx.old.latest_supported and c.instances >= 3)


@witness("STR-W6", "an operator's wrong upgrade.from stopped the group: the leader met a pre-2.0 and a future "
         "subscription at once and every instance shut down on its error assignment",
         source="Kafka StreamsPartitionAssignor.assign: \"Received a future (version probing) subscription ... and "
         "an incompatible pre Kafka 2.0 subscription ... at the same time\" is a TaskAssignmentException the "
         "leader answers with errorAssignment (ASSIGNMENT_ERROR) to every member",
         when=_misconfiguration_refused)
def misconfiguration_stopped_the_group(s: Any) -> bool:
    return all(x.failure.startswith("shutdown") for x in s.instances)


PROPERTIES = PropertySet.of(globals())
