"""Symmetry of the ``metadata_version`` protocol (KIP-778): voters among voters, brokers among brokers.

Two groups, in every config: the KRaft voters, and the brokers. A voter never swaps with a broker (they
play different roles: Raft majority, leadership, offsets that follow the leader at once).

Why the voters are interchangeable:

* ``initial_states`` starts every voter alike (``initial_software``, RUNNING, offset 0). Voter 0 is the
  first leader, but only through ``leader``, which is renamed with the voters; and leadership is not
  sticky: a ``LeaderFailover``, a crash and recovery of the leader, or a restart of the leader onto
  another software and back (any config with two softwares) leads from the start state to the same
  cluster led by any other voter. So the start state's whole orbit is reachable, and every property
  verdict and reachable state is the same whichever voter led first. A config with none of those ways
  (one software, no failover, no crashes) keeps voter 0 apart (:func:`interchangeable`).
* The rules treat a voter only through its own data and ``leader``: any running voter may be elected
  or take over, any voter restarted or crashed; the majority check counts the voters' supported ranges
  (the controller's decision memo, ``MetadataVersionSystem.decide``, keys on the softwares only; the
  node ids the API-level controller receives appear only in error messages, which the system drops).

Why the brokers are interchangeable: all start alike (``initial_software``, RUNNING, registered, unfenced)
and every rule (replicate, register, restart, crash) applies to each broker alike; the controller sees
their registrations as a set of supported ranges.

The properties (``properties/metadata_version.py``) quantify over all voters or brokers, count them, or
look at the node an action names (MV-07, through the action's own ``node``); none names a node by index.
No mutation singles out a node. The log and the record image name no node.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from reference_impl.metadata_version.config import MetadataVersionConfig
from reference_impl.node_symmetry import Groups, Perm, canonical_perm, move, nontrivial, rename

if TYPE_CHECKING:  # the system module imports this one (its symmetry_key): annotations only
    from reference_impl.metadata_version.system import MetadataVersionState


def leadership_moves(config: MetadataVersionConfig) -> bool:
    """Whether the first leader (voter 0) can hand leadership to any other voter and the cluster return
    to its start otherwise unchanged (see the module docstring)."""
    return config.failover or (config.crashes and config.max_down >= 1) or len(config.softwares) >= 2


def interchangeable(config: MetadataVersionConfig) -> tuple[Groups, Groups]:
    """(voter groups, broker groups) of interchangeable indices, each group with two or more members."""
    first = 0 if leadership_moves(config) else 1
    return nontrivial([tuple(range(first, config.voters))]), nontrivial([tuple(range(config.brokers))])


def permute(s: MetadataVersionState, voters: Perm | None = None, brokers: Perm | None = None
            ) -> MetadataVersionState:
    """The state with voter ``i`` renamed ``voters[i]`` and broker ``j`` renamed ``brokers[j]`` (None: keep
    them)."""
    # The constructor (the state's own class), not dataclasses.replace: this runs for many generated
    # successors. (With keywords: a field added to the state without a default fails here loudly.)
    return type(s)(
        voters=s.voters if voters is None else move(s.voters, voters),
        brokers=s.brokers if brokers is None else move(s.brokers, brokers),
        leader=s.leader if voters is None else rename(s.leader, voters), log=s.log, records=s.records)


class MetadataVersionSymmetry:
    """``key(s)``: the state with voters and brokers each sorted by signature (picklable for Spark)."""

    def __init__(self, config: MetadataVersionConfig) -> None:
        self.voter_groups, self.broker_groups = interchangeable(config)
        self.voters, self.brokers = config.voters, config.brokers

    def __call__(self, s: MetadataVersionState) -> Hashable:
        pv = pb = None
        if self.voter_groups:
            voters, leader = s.voters, s.leader
            pv = canonical_perm(self.voters, self.voter_groups,
                                lambda i: (voters[i].software, voters[i].status.value, voters[i].offset, i == leader))
        if self.broker_groups:
            brokers = s.brokers

            def sig(i: int) -> tuple[object, ...]:
                b = brokers[i]
                return (b.software, b.status.value, b.offset, b.registration, b.fenced, b.rpc_level)

            pb = canonical_perm(self.brokers, self.broker_groups, sig)
        if pv is None and pb is None:
            return s
        return permute(s, pv, pb)


def symmetry_key(config: MetadataVersionConfig) -> MetadataVersionSymmetry:
    return MetadataVersionSymmetry(config)
