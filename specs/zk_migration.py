"""Binding of ``specs/ZkMigration.tla`` to ``reference_impl/zk_migration``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reference_impl.metadata_version.catalog import KAFKA_CATALOG
from reference_impl.zk_migration.api import (
    CONTROLLER_REGISTRATION_MINIMUM,
    KAFKA_EMPTY_LOG_MINIMUM_LEVEL,
    KIP_MINIMUM_LEVEL,
)
from reference_impl.zk_migration.config import ZkMigrationConfig
from reference_impl.zk_migration.system import KRAFT_ID
from rollcheck.tla.binding import SpecBinding


def constants(config: ZkMigrationConfig) -> dict[str, Any]:
    return {
        "Profile": config.profile,
        "KafkaRelease": config.kafka_release,
        "NBrokers": config.zk_brokers,
        "NVoters": config.voters,
        "QuorumLevel": config.quorum_level,
        "BrokerIbp": config.broker_ibp,
        "KipMinimumLevel": KIP_MINIMUM_LEVEL,
        "KafkaEmptyLogMinimumLevel": KAFKA_EMPTY_LOG_MINIMUM_LEVEL,
        "ControllerRegistrationLevel": CONTROLLER_REGISTRATION_MINIMUM.feature_level,
        "ZkEpoch": config.zk_epoch,
        "MaxUpdates": config.max_updates,
        "LagLimit": config.lag_limit,
        "MaxEpoch": config.max_epoch,
        "Failover": config.failover,
        "MaxVotersDown": config.max_voters_down,
        "ZkOutage": config.zk_outage,
        "IncompatibleBroker": config.incompatible_broker,
        "MisconfiguredController": config.misconfigured_controller,
        "MisconfiguredBeforeMigration": config.misconfigured_before_migration,
        "Rollback": config.rollback,
        "UncleanShutdown": config.unclean_shutdown,
        "Finalize": config.finalize,
        "KRaftId": KRAFT_ID,
        "Mutations": frozenset(config.mutations),
        "Levels": frozenset(KAFKA_CATALOG.levels),
    }


BINDING = SpecBinding(
    directory=Path(__file__).resolve().parent,  # the .tla file sits beside this module
    protocol="zk_migration",
    module="ZkMigration",
    constants=constants,
    actions=("ElectZkController", "ZkMetadataChange", "EnableMigrationOnBroker", "IncompatibleBrokerJoins",
             "RegisterZkBroker", "RestartBrokerAsKRaft", "RollbackBrokerToZk", "ElectLeader", "CrashVoter",
             "LeaderFailover", "RecoverVoter", "RestartVoter", "DriverDeactivate", "DriverActivate",
             "DriverWaitForQuorum", "DriverWaitForBrokers", "BecomeZkController", "BeginMigration",
             "CompleteMigration", "SyncKRaftToZk", "SendRpcsToBrokers", "DualWrite", "KRaftMetadataChange",
             "ZkUnavailable", "ZkAvailable", "ShutdownQuorum", "DeleteControllerZNodes"),
    claims=("MIG-01R",),
    domain="ConfigOk",
)
