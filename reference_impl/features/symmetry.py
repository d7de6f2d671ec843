"""Symmetry of the ``features`` protocol (KIP-584): every broker is interchangeable with every other.

Why all brokers form one group, in every config:

* ``initial_states`` starts every broker alike (``initial_release``, RUNNING, no cache, unregistered)
  and with no controller (``controller = -1``): no broker is singled out by the start.
* Every rule treats a broker only through its own data: any running broker may be elected controller,
  any broker may be restarted onto any release, any running one gets notified or asked by the client.
  The controller's validations read the live brokers' supported ranges as a set (the outcome memo of
  ``FeaturesSystem.operator_outcomes`` already ignores their ids), and the deprecation takes a
  min/max over them.
* The properties (``properties/features.py``) quantify over all brokers or compare each broker with
  itself across a step (FEAT-04); none names a broker by index.
* No mutation changes that: each one alters a rule for every broker alike.

What refers to a broker by index, and so is renamed with it: ``controller`` and the entries of
``registration_queue`` (kept in queue order: the event queue is FIFO). The per-node data is ``Broker``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from reference_impl.features.config import FeaturesConfig
from reference_impl.node_symmetry import Groups, Perm, canonical_perm, move, nontrivial, rename

if TYPE_CHECKING:  # the system module imports this one (its symmetry_key): annotations only
    from reference_impl.features.system import Broker, FeaturesState


def interchangeable(config: FeaturesConfig) -> Groups:
    """The groups of interchangeable broker indices (with two or more members)."""
    return nontrivial([tuple(range(config.brokers))])


def permute(s: FeaturesState, p: Perm) -> FeaturesState:
    """The state with broker ``i`` renamed ``p[i]`` everywhere."""
    # The constructor, not dataclasses.replace: this runs for about half of the generated successors.
    # (With keywords: a field added to the state without a default fails here loudly.)
    return type(s)(znode=s.znode, ibp_enabled=s.ibp_enabled, controller=rename(s.controller, p),
                   brokers=move(s.brokers, p), registration_queue=tuple(p[q] for q in s.registration_queue),
                   client=s.client, restarts=s.restarts, ibp_changes=s.ibp_changes)


class FeaturesSymmetry:
    """``key(s)``: the state with its brokers sorted by signature (a picklable callable: systems travel
    to Spark executors)."""

    def __init__(self, config: FeaturesConfig) -> None:
        self.groups = interchangeable(config)
        self.n = config.brokers
        self._sigs: dict[Broker, tuple[object, ...]] = {}  # a memo: few distinct brokers, many states

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_sigs": {}}

    def _sig(self, b: Broker) -> tuple[object, ...]:
        sig = self._sigs.get(b)
        if sig is None:
            sig = self._sigs[b] = (b.release, b.status.value, b.cache_epoch,
                                   tuple((f, r.min_version_level, r.max_version_level) for f, r in b.cache),
                                   b.registered, b.notified)
        return sig

    def __call__(self, s: FeaturesState) -> Hashable:
        if not self.groups:
            return s
        brokers, controller, queue, node_sig = s.brokers, s.controller, s.registration_queue, self._sig

        def sig(i: int) -> tuple[object, ...]:
            return (node_sig(brokers[i]), i == controller, tuple(k for k, q in enumerate(queue) if q == i))

        p = canonical_perm(self.n, self.groups, sig)
        return s if p is None else permute(s, p)


def symmetry_key(config: FeaturesConfig) -> FeaturesSymmetry:
    return FeaturesSymmetry(config)
