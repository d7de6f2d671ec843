"""The state of the ``zk_migration`` reference (reference_impl/zk_migration/system.py): ZooKeeper, the brokers, the
KRaft quorum and the metadata log.

Its own module, so that the properties and the Z3 model read the state without importing the rules
(the layering test, tests/test_layers.py)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

# The driver's and the log's migration states are Kafka's enums (api.py); the state module hands them on.
from reference_impl.zk_migration.api import MigrationDriverState, ZkMigrationState

__all__ = ["BrokerMode", "MigrationDriverState", "Shutdown", "Voter", "ZkBroker", "ZkMigrationState",
           "ZkMigrationSystemState", "ZooKeeper"]


class BrokerMode(enum.Enum):
    ZK = 0
    KRAFT = 1


class Shutdown(enum.Enum):
    NONE = 0
    CLEAN = 1
    UNCLEAN = 2


@dataclass(frozen=True)
class ZooKeeper:
    available: bool
    controller: int  # /controller: a ZK broker id, KRAFT_ID + voter, or -1 when absent
    kraft_epoch: int  # the Raft epoch recorded in /controller by a KRaft controller, -1 otherwise
    controller_epoch: int  # /controller_epoch, -1 when absent
    epoch_version: int  # its znode version, -1 when absent
    migration_version: int  # /migration znode version, -1 when absent
    migrated: bool  # /migration says the initial copy finished
    data: tuple[int, ...]  # the metadata ZooKeeper holds
    epoch_high: int  # the highest /controller_epoch ever written (history, for the epoch properties)


@dataclass(frozen=True)
class ZkBroker:
    mode: BrokerMode
    migration: bool  # zookeeper.metadata.migration.enable and the quorum connection settings
    ibp: int  # inter.broker.protocol.version as a metadata.version level
    registered: bool  # with the KRaft quorum (BrokerRegistration with ZkMigrationReady)
    kraft_rpcs: bool  # has received UpdateMetadata / LeaderAndIsr from the KRaft controller
    # Was restarted at a wrong IBP (IncompatibleBrokerJoins): once per broker, so that runs stay finite,
    # as every other fault has its budget (each restart of the ZK controller's broker bumps its epoch).
    ibp_fault: bool


@dataclass(frozen=True)
class Voter:
    running: bool
    migration: bool  # zookeeper.metadata.migration.enable on this controller
    driver: MigrationDriverState
    zk_version: int  # the /migration version its driver holds (-1 unknown)
    zk_epoch: int  # the ZK controller epoch its driver claimed (-1 none)
    epoch_version: int  # the /controller_epoch znode version its claim got (zkControllerEpochZkVersion, -1 none)
    synced: int  # how many KRaft records its driver believes ZooKeeper holds


@dataclass(frozen=True)
class ZkMigrationSystemState:
    zk: ZooKeeper
    brokers: tuple[ZkBroker, ...]
    voters: tuple[Voter, ...]
    leader: int  # the active KRaft controller, -1 when none
    raft_epoch: int
    migration: ZkMigrationState  # persisted in the metadata log
    log: tuple[int, ...]  # committed KRaft metadata records
    txn: bool  # the migration transaction is open (copy begun, not committed)
    zk_controller_epoch: int  # the epoch the ZK-mode controller was elected with, -1 when none
    next_id: int  # the id of the next metadata change
    shutdown: Shutdown  # rollback: how the quorum was shut down
