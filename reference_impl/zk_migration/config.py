"""The ``zk_migration`` protocol's config: cluster shape, versions, bounds and fault switches."""

from __future__ import annotations

from dataclasses import dataclass, field

from reference_impl.metadata_version.catalog import KAFKA_CATALOG, MetadataVersion

KRAFT_ID = 100  # /controller names a KRaft voter v as 100 + v (Kafka: the voter's node id, e.g. 3000)

MUTATIONS = frozenset({
    "unconditional_zk_writes",  # KRaft writes to ZooKeeper without the /controller_epoch and /migration checks
    "kraft_epoch_not_above_zk",  # the KRaft controller claims /controller_epoch with its Raft epoch
    "non_transactional_copy",  # the initial copy is committed record by record, not as one transaction
    "finalize_without_every_voter",  # the KIP profile finalizes when the first voter turns migration off
    "dual_write_ignores_zk_failure",  # a failed ZooKeeper write is counted as written
    "serve_before_copy",  # the controller serves metadata changes in pre-migration mode
    "rpcs_to_incompatible_broker",  # UpdateMetadata / LeaderAndIsr sent to a broker that did not register
    "start_without_all_brokers",  # the migration starts before every ZK broker registered
    "no_sync_after_failover",  # KAFKA-15010: a new active controller skips the full KRaft -> ZK sync
    "stale_migration_version",  # KAFKA-16171 / KAFKA-16667: the take-over keeps the /migration version read before it
    "no_controller_quorum_check",  # KAFKA-14909: the driver starts without checking the controller quorum
    "registration_without_zk_migration_ready",  # KAFKA-15704: controller registrations lack ZkMigrationReady
})


@dataclass(frozen=True)
class ZkMigrationConfig:
    profile: str = "kip"
    zk_brokers: int = 2
    voters: int = 3
    # The quorum's metadata.version and the ZK brokers' IBP (feature levels): 3.6-IV1 by default, the
    # minimum for a new quorum in migration mode in Kafka 3.9 (the KIP's bridge release is 3.4-IV0).
    quorum_level: int = MetadataVersion.IBP_3_6_IV1.feature_level
    broker_ibp: int = MetadataVersion.IBP_3_6_IV1.feature_level
    zk_epoch: int = 5  # /controller_epoch of the ZK cluster before the migration (a cluster with history)
    max_updates: int = 2  # metadata changes in a run (ZK mode or KRaft), records 1..max_updates
    lag_limit: int = 1  # kip: records KRaft may commit ahead of ZooKeeper during dual write
    max_epoch: int = 3  # crashes and restarts of voters stop once the Raft epoch reaches this
    failover: bool = True  # voter crash and recovery (controller failover at every phase)
    # Voters that may be down at once (crashed, not yet recovered). One keeps the quorum's majority; two of
    # three lose it, and Raft elects no one until a voter recovers (the majority rule then matters).
    max_voters_down: int = 1
    zk_outage: bool = True  # ZooKeeper unavailable and back
    incompatible_broker: bool = False  # a broker restarted with an IBP other than the quorum's
    misconfigured_controller: bool = True  # a voter restarted without the migration config mid-migration
    # ... and before the copy (PRE_MIGRATION): the controller quorum is then not ready (trigger 5), and the
    # misconfigured voter, once elected, resigns (kip) or leads without a migration driver (kafka).
    misconfigured_before_migration: bool = False
    rollback: bool = True  # brokers back to ZK mode, quorum shutdown, controller znodes deleted
    unclean_shutdown: bool = True  # the quorum shut down while ZooKeeper lags (may lose metadata)
    finalize: bool = True  # turning migration off on the quorum
    mutations: frozenset[str] = field(default_factory=frozenset)
    # The Kafka rules under the kafka profile: "3.9", or "3.5" (Kafka 3.5.x - 3.6.x: the controller quorum's
    # readiness read from the other voters' ApiVersions, QuorumFeatures at 3.5.0). Only the Kafka oracle's rows
    # of 3.4 - 3.6 set "3.5" (reference_impl/zk_migration/oracle.py); the spec and the Z3 model are 3.9's.
    kafka_release: str = "3.9"

    def validate(self) -> None:
        if self.profile not in ("kip", "kafka"):
            raise ValueError("profile must be 'kip' or 'kafka'")
        if not 1 <= self.zk_brokers <= 3:
            raise ValueError("zk_brokers must be between 1 and 3")
        if self.voters not in (1, 3):
            raise ValueError("voters must be 1 or 3")
        for name in ("quorum_level", "broker_ibp"):
            level = getattr(self, name)
            if level not in KAFKA_CATALOG.levels:
                raise ValueError(f"{name} {level} is not a metadata.version feature level "
                                 f"({KAFKA_CATALOG.minimum}..{KAFKA_CATALOG.latest})")
        if not 0 <= self.max_voters_down <= self.voters:
            raise ValueError(f"max_voters_down must be between 0 and voters ({self.voters})")
        if self.zk_epoch < 1 or self.max_updates < 0 or self.lag_limit < 1 or self.max_epoch < 1:
            raise ValueError("zk_epoch >= 1, max_updates >= 0, lag_limit >= 1 and max_epoch >= 1 are required")
        if self.kafka_release not in ("3.5", "3.9"):
            raise ValueError("kafka_release must be '3.5' or '3.9'")
        unknown = set(self.mutations) - MUTATIONS
        if unknown:
            raise ValueError(f"unknown mutations {sorted(unknown)}")
