"""Symmetry of the ``streams_probing`` protocol (KIP-268): every Streams instance is interchangeable.

Why all instances form one group:

* ``initial_states`` starts every instance alike (``from_release``, its latest subscription version,
  running, no bounce) with no leader and no follow-up (``-1``).
* The coordinator may elect any member leader (``Rebalance(leader)`` for every member), the operator
  may bounce any instance of the current round (any instance below the cap under procedure
  "operator", with either upgrade.from), and any member may crash and restart. The leader's
  ``assign`` decides from the subscriptions' versions (min / max over the members) and gives every
  member of the same kind the same assignment: the system passes no tasks, so the round-robin task
  split, the one place where member ids are ordered, hands out nothing.
* The properties (``properties/streams_probing.py``) quantify over all instances or look at the
  instance or leader an action names (STR-01, STR-03, STR-04) or the state's ``leader`` (the witnesses
  STR-W1, STR-W4); none names an instance by index.

References renamed with the instances: ``leader`` and ``follow_up``.

Where the symmetry is not declared (:data:`ORDER_DEPENDENT`): ``_rebalance`` stops at the first member,
in index order, that cannot build its subscription (a version above its own latest, i.e. STR-05 already
broken) and fails only that one, so with two such members the step does not commute with the
permutations state for state. Only the mutations that break STR-05 reach it (``uncapped_adopt``,
``commonly_supported_is_max``); in the states the tests walked the two members were identical, so the
orbits still matched, but the rule does not guarantee it. And under ``leader_fails_on_future`` the failed
leader's message quotes the version of the first future member in id order, and lands in ``failure``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from reference_impl.node_symmetry import Groups, Perm, canonical_perm, move, nontrivial, rename
from reference_impl.streams_probing.config import StreamsProbingConfig

if TYPE_CHECKING:  # the system module imports this one (its symmetry_key): annotations only
    from reference_impl.streams_probing.system import StreamsGroupState

ORDER_DEPENDENT = frozenset({"uncapped_adopt", "commonly_supported_is_max", "leader_fails_on_future"})


def interchangeable(config: StreamsProbingConfig) -> Groups:
    """The groups of interchangeable instance indices (with two or more members)."""
    if config.mutations & ORDER_DEPENDENT:
        return ()
    return nontrivial([tuple(range(config.instances))])


def permute(s: StreamsGroupState, p: Perm) -> StreamsGroupState:
    """The state with instance ``i`` renamed ``p[i]`` everywhere (for the tests and the docs)."""
    # The constructor (the state's own class: this module does not import the system's at run time), not
    # dataclasses.replace: this runs for many generated successors. (With keywords: a field added to the
    # state without a default fails here loudly.)
    return type(s)(instances=move(s.instances, p), rebalance_pending=s.rebalance_pending,
                   follow_up=rename(s.follow_up, p), rebalances=s.rebalances, leader=rename(s.leader, p),
                   crashes=s.crashes)


class StreamsProbingSymmetry:
    """``key(s)``: the state with its instances sorted by signature (picklable for Spark)."""

    def __init__(self, config: StreamsProbingConfig) -> None:
        self.groups = interchangeable(config)
        self.n = config.instances

    def __call__(self, s: StreamsGroupState) -> Hashable:
        if not self.groups:
            return s
        instances, follow_up, leader = s.instances, s.follow_up, s.leader

        def sig(i: int) -> tuple[object, ...]:
            x = instances[i]
            d = x.inbox
            inbox = () if d is None else (d.version, d.supported, d.error, d.probing_reply)
            return (x.release, x.upgrade_from is not None, x.upgrade_from or "", x.used_version, x.running,
                    x.bounces, inbox, x.last_version, x.failure, i == follow_up, i == leader)

        p = canonical_perm(self.n, self.groups, sig)
        return s if p is None else permute(s, p)


def symmetry_key(config: StreamsProbingConfig) -> StreamsProbingSymmetry:
    return StreamsProbingSymmetry(config)
