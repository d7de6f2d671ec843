"""Registry entry of the ``zk_migration`` protocol (KIP-866): named configs and broken variants."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from reference_impl.metadata_version.catalog import MetadataVersion
from reference_impl.zk_migration.config import ZkMigrationConfig
from reference_impl.zk_migration.system import ZkMigrationSystem
from rollcheck.core.transition import ProtocolEntry, Variant, config_mutation

# One ZK broker, one voter: every phase, rollback and finalization, no faults but ZooKeeper outages. Two
# metadata changes, so that ZooKeeper can lag the log by two records (under kafka; under kip the limit of one
# is then reachable and exceedable): with one, a dual write that sent the log's last record instead of the
# next one ZooKeeper lacks, or a write-behind limit off by one, looked exactly like the reference (MIG-13,
# MIG-04). 1,336 states under kip, 1,440 under kafka.
SMALL = ZkMigrationConfig(zk_brokers=1, voters=1, failover=False, misconfigured_controller=False, max_updates=2)

# The default: 2 ZK brokers, 3 voters, faults on, bounded (592,178 states under kip, 719,376
# under kafka, as docs/protocols/zk_migration.md's table and the TLC equality tests have them).
DEFAULT = ZkMigrationConfig(max_epoch=2, max_updates=1)

# With failover on a single voter too small to matter: the faults config used by most broken variants.
FAULTS = ZkMigrationConfig(zk_brokers=1, voters=3, max_updates=1, max_epoch=2, unclean_shutdown=False,
                           misconfigured_controller=False)

LARGE = replace(DEFAULT, incompatible_broker=True, max_updates=2, max_epoch=3)

# A story config (the ci tier): small with a broker restarted at a wrong IBP (KIP-866 "Incompatible broker"),
# which the operator may put right again, beside finalization, rollback and the quorum's shutdown. No other
# ci config had an incompatible broker: a join after finalization or after the quorum's shutdown, which
# the KIP rules out, was checked by nothing. Its write-behind limit is two records (every other config has
# one, which the copy alone fills), so that under kip the controller serves a change while its driver is not
# yet dual-writing, and how it counts ZooKeeper's lag then is checked (7,264 states under kip, 6,606 under
# kafka, where Kafka has no limit).
INCOMPATIBLE = replace(SMALL, incompatible_broker=True, lag_limit=2)

# A story config (the ci tier): two of three voters down at once, so Raft has no majority and elects no one
# until a voter recovers. Every other config lets one voter be down, and the majority rule (ElectLeader)
# and the bound on voters down (CrashVoter) were checked by nothing. No metadata changes: the story is the
# quorum's (8,598 states under kip, 12,206 under kafka).
QUORUM_LOSS = ZkMigrationConfig(zk_brokers=1, voters=3, max_voters_down=2, max_updates=0, max_epoch=2,
                                zk_outage=False, rollback=False, unclean_shutdown=False,
                                misconfigured_controller=False)

# A story config (the ci tier): small with three voters, some restarted without the migration config before
# the copy or mid-migration (and with it again after the finalization), failover off, no metadata change, and
# an operator who never finalizes. Under kip a misconfigured voter, once elected, resigns (KIP-866: a
# controller with the wrong settings steps down), a fault the Raft epoch bounds, and the migration is finalized
# only if every voter was so restarted. Under kafka the misconfigured voter's election finalizes the migration
# (ActivationRecordsGenerator writes POST_MIGRATION when the migration config is off) although the operator
# never did, and the rest of the quorum keeps its migration config, which Kafka then ignores (MIG-W8). Raft
# epochs up to 3 leave a fault after that election, for the restart with the config again. The configs with
# such restarts in the ci tier had one voter or failover on, and every one finalized, so a resigning
# election's bound, the fault budget with failover off, the finalization rule's `finalize` and a restart with
# the config after the finalization were checked by nothing. No metadata change keeps Z3's every-state
# differential on it cheap (with one, finalization on and epochs up to 2: 26,748 / 16,256 states, which doubled
# the zk ci tier's time); `default` has both in the nightly tier. Before the copy, no other config had a voter
# without the config, so kip's quorum trigger (every controller ready) and its resigning activation in
# PRE_MIGRATION, which leaves the copy's transaction open, were checked by nothing (10,404 states under kip,
# 8,864 under kafka).
MISCONFIGURED = replace(SMALL, voters=3, misconfigured_controller=True, misconfigured_before_migration=True,
                        max_epoch=3, max_updates=0, finalize=False)

# A story config (the ci tier): `faults` with a second fault (Raft epochs up to 3), no ZooKeeper outage, no
# metadata change and no finalization, so that the operator may roll back while no controller is active: a
# voter that dual-wrote everything is deposed or crashes with its driver's state, and the election after it
# has not happened yet. The operator sees ZooKeeperWriteBehindLag only from the active driver, so no clean
# shutdown is offered then (and, with unclean_shutdown off, none at all). Every other config allows one fault
# (max_epoch = 2) or no rollback, and the mutation campaign's system.py "drained" check without its active
# controller (reading voters[-1] when there is no leader) was caught by nothing (35,729 states under kip,
# 39,667 under kafka).
LEADERLESS_ROLLBACK = replace(FAULTS, max_updates=0, max_epoch=3, zk_outage=False, finalize=False)


_mutant = partial(config_mutation, ZkMigrationSystem)  # a variant: the reference with one mutation in its config


VARIANTS = (
    Variant("MIG-M1", "dual writes to ZooKeeper without the version checks on /controller_epoch and /migration "
            "(a stale controller keeps writing after a failover)",
            _mutant("unconditional_zk_writes", rollback=False, zk_outage=False),
            expect=("MIG-02", "MIG-03"),
            source="KIP-866 Dual metadata writes", config="faults"),
    Variant("MIG-M2", "the KRaft controller claims /controller_epoch with its Raft epoch, not above ZooKeeper's",
            _mutant("kraft_epoch_not_above_zk"), expect=("MIG-01",), source="KIP-866 Controller leadership"),
    Variant("MIG-M3", "the initial copy is committed record by record instead of in one transaction",
            _mutant("non_transactional_copy"), expect=("MIG-05", "MIG-06"),
            source="KIP-866 Initial data migration"),
    Variant("MIG-M4", "the migration is finalized when the first voter turns migration off",
            _mutant("finalize_without_every_voter"), expect=("MIG-12",), source="KIP-866 Finalizing",
            config="faults"),
    # One broker, one voter and no other faults: the walks of Hypothesis and Spark then reach an outage in
    # the middle of the dual-write phase in a few steps instead of by luck.
    Variant("MIG-M5", "a dual write that fails because ZooKeeper is unavailable is counted as written",
            _mutant("dual_write_ignores_zk_failure", max_updates=2, rollback=False, failover=False,
                    misconfigured_controller=False, zk_brokers=1, voters=1, finalize=False),
            expect=("MIG-03", "MIG-04", "MIG-11", "MIG-13"),
            source="KIP-866 ZooKeeper unavailable"),
    Variant("MIG-M6", "the KRaft controller serves metadata changes before the copy",
            _mutant("serve_before_copy"), expect=("MIG-09", "MIG-06"), source="KIP-866 KRaft controller soft start"),
    # Under the kip profile (the config's): under kafka a restart leaves the broker's registration, so every
    # ZK broker keeps one once the migration begins, and Kafka sends to every registration (no difference).
    Variant("MIG-M7", "UpdateMetadata and LeaderAndIsr go to a broker that did not register",
            _mutant("rpcs_to_incompatible_broker", incompatible_broker=True, rollback=False), expect=("MIG-10",),
            source="KIP-866 Incompatible broker"),
    Variant("MIG-M8", "the migration starts before every ZK broker registered with the quorum",
            _mutant("start_without_all_brokers", zk_brokers=2), expect=("MIG-07",),
            source="KIP-866 Migration triggers"),
    # Real bugs of Apache Kafka's migration driver, fixed in 3.5 / 3.7 / 3.8: each needs a failover in the
    # dual-write phase, so the faults config with the unrelated faults off.
    Variant("MIG-M9", "KAFKA-15010: a controller that becomes active during dual write resumes after the log's "
            "end without reconciling ZooKeeper, which misses what the previous controller committed",
            _mutant("no_sync_after_failover", zk_outage=False, misconfigured_controller=False),
            expect=("MIG-11", "MIG-03"), source="KAFKA-15010 (apache/kafka #13758, SYNC_KRAFT_TO_ZK)",
            config="faults"),
    # A liveness bug: the deposed controller stays fenced by /controller_epoch, but the new one keeps the
    # /migration version it read when it became active, which the deposed one's last dual write (after that
    # read, before the claim) moved: every ZooKeeper write of the new controller fails (BADVERSION) for as
    # long as it leads. With no fault left (the Raft epoch at max_epoch) only restarting the controllers
    # (RestartVoter, e.g. to finalize) frees it, so MIG-L1 holds and MIG-L3 fails.
    Variant("MIG-M10", "KAFKA-16171 / KAFKA-16667: the take-over does not write /migration, so the new controller "
            "keeps the version it read before its claim, which the deposed controller's last dual write moved: "
            "its writes to ZooKeeper fail forever and dual writes never resume", _mutant(
                "stale_migration_version", zk_outage=False, misconfigured_controller=False, rollback=False),
            expect=("MIG-L3",), source="KAFKA-16171 (apache/kafka #15238), KAFKA-16667 (#15918)",
            config="faults"),
    # Kafka 3.4's driver left WAIT_FOR_CONTROLLER_QUORUM for WAIT_FOR_BROKERS as soon as the migration was
    # PRE_MIGRATION (apache/kafka d796480, #13631 added the check in 3.5): a voter down or without the
    # migration config did not hold the migration back. Under the KIP's rule (kip profile).
    Variant("MIG-M11", "KAFKA-14909: the migration driver starts without checking that every controller is "
            "ready (ZkMigrationReady), so the copy begins while a voter is down or not configured for migration",
            _mutant("no_controller_quorum_check", zk_outage=False, rollback=False),
            expect=("MIG-07",), source="KAFKA-14909 (apache/kafka #13631)", config="faults"),
    # Kafka 3.7.0's ControllerRegistrationRequest did not set ZkMigrationReady (apache/kafka 3771586): at a
    # metadata.version with controller registrations (3.7-IV0) the quorum never looks ready, and the
    # migration never begins. Kafka's rule (kafka profile) at 3.7-IV0, brokers at the same IBP.
    Variant("MIG-M12", "KAFKA-15704: controller registrations never carry ZkMigrationReady, so from 3.7-IV0 the "
            "driver waits for the controller quorum forever and the migration cannot begin",
            _mutant("registration_without_zk_migration_ready", profile="kafka",
                    quorum_level=MetadataVersion.IBP_3_7_IV0.feature_level,
                    broker_ibp=MetadataVersion.IBP_3_7_IV0.feature_level, zk_outage=False, rollback=False),
            expect=("MIG-L1", "MIG-W1"), source="KAFKA-15704 (apache/kafka 3771586, #14654)", config="faults"),
)


PROTOCOL = ProtocolEntry(
    name="zk_migration",
    summary="KIP-866 ZooKeeper to KRaft migration: triggers, copy, take-over, dual writes, rollback, faults",
    config_type=ZkMigrationConfig,
    configs={"small": SMALL, "default": DEFAULT, "large": LARGE, "faults": FAULTS, "incompatible": INCOMPATIBLE,
             "quorum_loss": QUORUM_LOSS, "misconfigured": MISCONFIGURED, "leaderless_rollback": LEADERLESS_ROLLBACK},
    build=ZkMigrationSystem,
    variants=VARIANTS,
    sources=("KIP-866 (shared/seeds/002_8863564d04f41aee.txt)",
             "Apache Kafka 3.9 metadata/src/main/java/org/apache/kafka/metadata/migration/KRaftMigrationDriver.java",
             "Apache Kafka 3.9 metadata/src/main/java/org/apache/kafka/controller/ActivationRecordsGenerator.java",
             "Apache Kafka 3.9 core/src/main/scala/kafka/zk/KafkaZkClient.scala"),
    spec="specs.zk_migration:BINDING",
    properties="properties.zk_migration:PROPERTIES",
    z3="model.zk_migration:ZkMigrationZ3",
    decisions="model.decisions.zk_migration:DECISIONS",
    # The gate's config: three exhaustive engines (local, Spark, TLC) on ``default`` (1.31M states over both
    # profiles) would not fit the nightly tier; ``faults`` (3 voters, failover at every phase, 313K) keeps
    # every fault but the second broker. ``rollcheck explore zk_migration`` still runs ``default``.
    gate_config="faults",
    story_configs=("incompatible", "quorum_loss", "misconfigured", "leaderless_rollback"),
    # What only an operator does (runbooks, docs/runbooks.md): restart a ZK broker with the migration config
    # (or, as a misconfiguration, at another IBP), restart a broker as KRaft or back to ZK, restart a
    # controller with the migration config changed (finalizing), shut the quorum down, delete the controller
    # znodes with zookeeper-shell. Registration, elections, failover, crashes and recoveries, the migration
    # driver, ZooKeeper outages, metadata changes by clients: the cluster.
    operator_actions=("EnableMigrationOnBroker", "IncompatibleBrokerJoins", "RestartBrokerAsKRaft",
                      "RollbackBrokerToZk", "RestartVoter", "ShutdownQuorum", "DeleteControllerZNodes"),
    runbook_conditions="runbooks.zk_migration:CONDITIONS",
    oracle="reference_impl.zk_migration.oracle:ORACLE",
    cluster="reference_impl.zk_migration.cluster:BINDING",
    order=30,
)
