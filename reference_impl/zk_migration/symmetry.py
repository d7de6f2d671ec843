"""Symmetry of the ``zk_migration`` protocol (KIP-866): voters 1.. among themselves, ZK brokers 1.. too.

The start singles out one voter and one broker, and for good: voter 0 is the KRaft quorum's first
leader (``leader = 0`` at Raft epoch 1) and broker 0 is the ZooKeeper-mode controller (``/controller = 0``
with ``/controller_epoch = zk_epoch``). Every later election raises the Raft epoch (``elect_leader``) or
``/controller_epoch`` (``elect_zk_controller``), so no reachable state shows another voter leading at
epoch 1, or another broker controlling at the start epoch: the start's images under a permutation that
moves voter 0 or broker 0 are unreachable. Those two nodes are kept apart; the rest are interchangeable:

* Voters ``1..voters-1``: they start alike (running, migration enabled, driver INACTIVE, nothing
  claimed) and every rule treats a voter only through its own data and the references below: any
  running voter may be elected, take over, crash, recover or be restarted with another migration
  config; triggers and finalization quantify over all voters ("every voter's ZkMigrationReady"; under
  kafka every voter's controller registration, the migration config it last started with).
* ZK brokers ``1..zk_brokers-1``: they start alike (ZK mode, migration off, the config's IBP,
  unregistered) and any ZK broker may become ZK controller, be restarted with the migration config or
  an incompatible IBP, register, move to KRaft and back; the triggers quantify over all brokers.

References renamed with the nodes: ``leader`` (a voter), ``/controller`` in ``zk.controller`` (a ZK broker
``b``, or voter ``v`` as ``KRAFT_ID + v``). The ZooKeeper data, the logs and the epochs name no node.

The properties (``properties/zk_migration.py``) quantify over all voters or brokers, or look at the voter
an action names (MIG-02, MIG-07, through the action's own ``voter``); none names a node by index. No
mutation singles out a node either. So in ``small`` (one voter, one broker) nothing is permuted; in
``faults`` and ``default``, voters 1 and 2.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import replace
from typing import TYPE_CHECKING

from reference_impl.node_symmetry import Groups, Perm, canonical_perm, move, nontrivial, rename
from reference_impl.zk_migration.config import KRAFT_ID, ZkMigrationConfig

if TYPE_CHECKING:  # the system module imports this one (its symmetry_key): annotations only
    from reference_impl.zk_migration.system import ZkMigrationSystemState


def interchangeable(config: ZkMigrationConfig) -> tuple[Groups, Groups]:
    """(voter groups, broker groups) of interchangeable indices, each group with two or more members."""
    return nontrivial([tuple(range(1, config.voters))]), nontrivial([tuple(range(1, config.zk_brokers))])


def permute(s: ZkMigrationSystemState, voters: Perm | None = None, brokers: Perm | None = None
            ) -> ZkMigrationSystemState:
    """The state with voter ``i`` renamed ``voters[i]`` and broker ``j`` renamed ``brokers[j]`` (None: keep
    them)."""
    z = s.zk
    controller = z.controller
    if voters is not None and controller >= KRAFT_ID:
        controller = KRAFT_ID + voters[controller - KRAFT_ID]
    elif brokers is not None and 0 <= controller < KRAFT_ID:
        controller = brokers[controller]
    # The constructor, not dataclasses.replace: this runs for many generated successors. (With keywords: a
    # field added to the state without a default fails here loudly.)
    return type(s)(
        zk=z if controller == z.controller else replace(z, controller=controller),
        brokers=s.brokers if brokers is None else move(s.brokers, brokers),
        voters=s.voters if voters is None else move(s.voters, voters),
        leader=s.leader if voters is None else rename(s.leader, voters),
        raft_epoch=s.raft_epoch, migration=s.migration, log=s.log, txn=s.txn,
        zk_controller_epoch=s.zk_controller_epoch, next_id=s.next_id, shutdown=s.shutdown)


class ZkMigrationSymmetry:
    """``key(s)``: the state with voters and brokers each sorted by signature (picklable for Spark)."""

    def __init__(self, config: ZkMigrationConfig) -> None:
        self.voter_groups, self.broker_groups = interchangeable(config)
        self.voters, self.brokers = config.voters, config.zk_brokers

    def __call__(self, s: ZkMigrationSystemState) -> Hashable:
        pv = pb = None
        controller = s.zk.controller
        if self.voter_groups:
            voters, leader = s.voters, s.leader

            def voter_sig(i: int) -> tuple[object, ...]:
                v = voters[i]
                return (v.running, v.migration, v.driver.value, v.zk_version, v.zk_epoch, v.epoch_version, v.synced,
                        i == leader, controller == KRAFT_ID + i)

            pv = canonical_perm(self.voters, self.voter_groups, voter_sig)
        if self.broker_groups:
            brokers = s.brokers

            def broker_sig(i: int) -> tuple[object, ...]:
                b = brokers[i]
                return (b.mode.value, b.migration, b.ibp, b.registered, b.kraft_rpcs, b.ibp_fault, controller == i)

            pb = canonical_perm(self.brokers, self.broker_groups, broker_sig)
        if pv is None and pb is None:
            return s
        return permute(s, pv, pb)


def symmetry_key(config: ZkMigrationConfig) -> ZkMigrationSymmetry:
    return ZkMigrationSymmetry(config)
