"""Conditions the ``zk_migration`` runbooks wait for or reach (docs/runbooks.md).

What an operator can see of the cluster: the controller's ``ZkMigrationState`` metric, which brokers run
in which mode, which controllers run with ``zookeeper.metadata.migration.enable``, ``/controller`` and
``/controller_epoch`` in zookeeper-shell, and whether ZooKeeper holds what the KRaft log committed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reference_impl.zk_migration.api import ZkMigrationState
from reference_impl.zk_migration.config import KRAFT_ID, ZkMigrationConfig
from reference_impl.zk_migration.system import BrokerMode, Shutdown, ZkMigrationSystemState
from rollcheck.runbook import RunbookCondition

Predicate = Callable[[ZkMigrationSystemState], bool]


def migration_state(config: ZkMigrationConfig, state: str) -> Predicate:
    """The ``ZkMigrationState`` metric (the persisted state) is ``state``: MIGRATION once the copy is
    committed ("Completed migration of metadata from Zookeeper to KRaft" on the active controller)."""
    names = [m.name for m in ZkMigrationState]
    if not isinstance(state, str) or state not in names:
        raise ValueError(f"state must be a ZkMigrationState name ({', '.join(names)}), not {state!r}")
    want = ZkMigrationState[state]
    return lambda s: s.migration is want


def finalized(config: ZkMigrationConfig) -> Predicate:
    """POST_MIGRATION, every broker in KRaft mode, every controller running without the migration config,
    a leader elected: the migration is over and the cluster runs on KRaft alone."""
    def pred(s: ZkMigrationSystemState) -> bool:
        return (s.migration is ZkMigrationState.POST_MIGRATION and s.leader >= 0
                and all(b.mode is BrokerMode.KRAFT for b in s.brokers)
                and all(v.running and not v.migration for v in s.voters))
    return pred


def reverted_to_zk(config: ZkMigrationConfig, monotonic_epoch: bool = False) -> Predicate:
    """The cluster back on ZooKeeper: the KRaft quorum shut down, ZooKeeper up, a ZK broker holds
    ``/controller`` with the current ``/controller_epoch`` (its writes succeed), every broker in ZK mode,
    and ZooKeeper holds every record the KRaft log committed (nothing lost by the revert).

    ``monotonic_epoch``: also the ZK controller's epoch is the highest ``/controller_epoch`` ever written
    (brokers that saw the KRaft controller's epoch accept the new controller's requests)."""
    if not isinstance(monotonic_epoch, bool):
        raise ValueError(f"monotonic_epoch must be true or false, not {monotonic_epoch!r}")

    def pred(s: ZkMigrationSystemState) -> bool:
        z = s.zk
        return (s.shutdown is not Shutdown.NONE and not any(v.running for v in s.voters)
                and z.available and 0 <= z.controller < KRAFT_ID and s.zk_controller_epoch == z.controller_epoch
                and all(b.mode is BrokerMode.ZK for b in s.brokers)
                and z.data[:len(s.log)] == s.log
                and (not monotonic_epoch or z.controller_epoch >= z.epoch_high))
    return pred


CONDITIONS: dict[str, RunbookCondition] = {
    "migration_state": RunbookCondition(
        "the controller's ZkMigrationState metric is `state` (MIGRATION: the copy from ZooKeeper is committed)",
        migration_state),
    "finalized": RunbookCondition(
        "POST_MIGRATION, every broker in KRaft mode, every controller running without the migration config, "
        "a leader elected", finalized),
    "reverted_to_zk": RunbookCondition(
        "the KRaft quorum shut down, a ZK broker is the controller with the current /controller_epoch, every "
        "broker in ZK mode, ZooKeeper holds every record the KRaft log committed (with `monotonic_epoch`: the "
        "controller's epoch is the highest ever written)", reverted_to_zk),
}

__all__: list[Any] = ["CONDITIONS"]
