"""Registry entry of the ``metadata_version`` protocol (KIP-778): named configs and broken variants."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from reference_impl.metadata_version.config import MetadataVersionConfig, Software
from reference_impl.metadata_version.system import MetadataVersionSystem
from rollcheck.core.transition import ProtocolEntry, Variant, config_mutation

# The KIP's V1..V5 example: the old software reads V1..V3, the new one V1..V5 (V4 changed the format).
# One broker, no crashes: the smallest cluster where every rule of the KIP can matter.
SMALL = MetadataVersionConfig(voters=3, brokers=1, crashes=False, failover=False, max_log=2, record_levels=(4, 5))

# The default: 3 voters, 2 brokers, two software versions, the example catalog (about 222,000
# states per profile). Crashes multiply it by more than ten: they are in ``large``, for the Spark engine.
DEFAULT = MetadataVersionConfig(voters=3, brokers=2, crashes=False, max_log=2, record_levels=(4, 5))

# Kafka's own catalog between 3.6 and 3.7 (levels 12..19 matter), where controller registration
# (3.7-IV0) starts: below it Kafka checks only the active controller's own range.
KAFKA_CATALOG = MetadataVersionConfig(
    catalog="kafka", profile="kafka", voters=3, brokers=1, crashes=False, max_log=2,
    softwares=(Software("3.6", 1, 14), Software("3.7", 1, 19)), initial_software="3.6",
    levels=(11, 13, 14, 15, 17, 19),
    record_levels=(13, 15, 16),  # metadata transactions (3.6-IV1), controller registration, a 3.7 reserved level
)

LARGE = replace(DEFAULT, crashes=True, record_levels=(3, 4, 5))

# Crashes and failovers on the small cluster (58,022 states under kip, 35,648 under kafka): a voter or
# broker restarted after a crash with an old log offset, a new leader elected mid-upgrade. The gate checks
# it beside ``default``, which has no crash.
CRASHES = replace(SMALL, crashes=True, failover=True)

# A lossy downgrade with something to keep: a record the old software's versions represent (introduced at 3)
# beside one they cannot (4) and a tagged field (5). In ``small`` every record is above the old software's
# range, so a snapshot that dropped one record too many went unnoticed (MV-14 checks it here; 30,496 states
# under kip, 10,976 under kafka, which refuses every lossy downgrade). A story config the gate also checks.
LOSSY = replace(SMALL, record_levels=(3, 4, 5))

# Two voters with crashes: a strict majority is both of them, "at least half" only one. With three voters
# the two readings of the quorum rule agree on every state, so a quorum check off by one went unnoticed (MV-15
# checks it here). Two nodes may be down at once: with one, a fault bound counted wrong (each down node counted
# twice, a crash offered to a node already down in place of its recovery) changed nothing (the campaign's
# system.py:182 and :185). 9,388 states under kip, 7,012 under kafka. A story config the gate also checks.
TWO_VOTERS = replace(CRASHES, voters=2, max_down=2)

# A broker two log entries behind: one voter (a single-node quorum, which never lags itself) and three unread
# entries (max_log 3; two in every other config, where a broker lags one entry at most). A broker restarted and
# registered while two entries behind must stay fenced until it reaches the end; with a lag of one, a broker
# unfenced one entry early was unfenced at the end anyway, and nothing told them apart (MV-17; the campaign's
# system.py:273 survivor). 4,068 states under kip, 1,944 under kafka. A story config the gate also checks.
LAGGING = replace(SMALL, voters=1, max_log=3)

# KIP-778 "Initialization", its special case: a "preview" KRaft cluster whose meta.properties has no
# metadata.version (initial_level 0) is initialized at version 1 and upgraded from there; the operator never asks
# for a dry run (dry_run off). Every other config is formatted with a version and offers dry runs, so a reference
# that read the preview cluster's start or the dry-run switch wrongly went unnoticed (the campaign's survivors
# metadata_version system.py:102, :121). A story config the gate also checks.
# Its softwares are listed newest first, the only config where the initial software is not the first one: the
# reference finds it by name (MetadataVersionConfig.software), the Z3 model and the spec read the field, so a
# lookup that took the first software (the campaign's config.py:72 survivor) starts the cluster elsewhere.
PREVIEW = replace(SMALL, initial_level=0, dry_run=False, softwares=tuple(reversed(SMALL.softwares)))


_mutant = partial(config_mutation, MetadataVersionSystem)  # a variant: the reference with one mutation in its config


VARIANTS = (
    Variant("MV-M1", "the controller skips the majority check of the quorum's supported versions",
            _mutant("skip_quorum_check"), expect=("MV-02",), source="KIP-778 Compatibility (majority of the quorum)"),
    Variant("MV-M2", "a lossy downgrade is performed as a SAFE downgrade",
            _mutant("allow_lossy_safe_downgrade"), expect=("MV-04", "MV-12"), source="KIP-778 Downgrades"),
    Variant("MV-M3", "a broker with an old binary registers although it cannot read the finalized version",
            _mutant("register_incompatible"), expect=("MV-11",), source="KIP-778 Compatibility (registration)"),
    Variant("MV-M4", "the controller skips the registered brokers' supported ranges",
            _mutant("skip_broker_check"), expect=("MV-02", "MV-11"),
            source="KIP-584 Validations; KIP-778 Compatibility"),
    Variant("MV-M5", "a broker keeps running on a metadata.version it cannot read",
            _mutant("broker_ignores_unsupported"), expect=("MV-01",),
            source="KIP-778 Compatibility: a broker ... should unregister itself and terminate"),
    Variant("MV-M6", "a lossless downgrade writes its snapshot as if it were lossy",
            _mutant("lossless_drops_records"), expect=("MV-03",), source="KIP-778 Downgrades (lossless)"),
    Variant("MV-M7", "a dry run writes its FeatureLevelRecord", _mutant("dry_run_writes"), expect=("MV-06",),
            source="KIP-778 DryRun"),
    Variant("MV-M8", "a broker uses the RPCs of its binary, not of the finalized version (the static IBP)",
            _mutant("rpc_from_binary"), expect=("MV-05",), source="KIP-778 Upgrades / ApiVersions"),
    Variant("MV-M9", "metadata.version can be set below the minimum or deleted",
            _mutant("skip_floor_check", levels=(0, 1, 2, 3, 4, 5)), expect=("MV-08", "MV-02", "MV-11"),
            source="KIP-778 Rejected Alternatives (KRaft requires a metadata.version)"),
    Variant("MV-M10", "a node restarted on an older binary reads its log without checking the version",
            _mutant("restart_skips_version_check"), expect=("MV-01", "MV-07"),
            source="KIP-778 Compatibility"),
    Variant("MV-M11", "a downgrade goes through with DowngradeType NONE",
            _mutant("allow_downgrade_unchecked"), expect=("MV-09",), source="KIP-584 Validations"),
    Variant("MV-M12", "the controller writes a new record type before the version enables it",
            _mutant("write_record_above_version"), expect=("MV-05", "MV-10"), source="KIP-778 Motivation"),
    # Before the fix (made during 3.3's development; 3.3.0 shipped with it) KRaft controllers answered ApiVersions
    # with an empty feature set, and QuorumFeatures (3.3) required each other quorum node to support the level:
    # "Controller 3001 does not support this feature", so no cluster of more than one controller could
    # change metadata.version (apache/kafka 562c30f, #12294). Here under the KIP's majority rule: the
    # leader alone is no majority.
    Variant("MV-M13", "KAFKA-13990: every other controller advertises no supported feature, so the active "
            "controller refuses every metadata.version change of a multi-controller cluster",
            _mutant("peers_advertise_no_features"), expect=("MV-L1", "MV-W1"),
            source="KAFKA-13990 (apache/kafka #12294)"),
    Variant("MV-M14", "a broker restarted onto another binary keeps its old session: it stays unfenced under "
            "the registration of the binary it no longer runs",
            _mutant("restart_keeps_session"), expect=("MV-16",),
            source="KIP-631 broker registration (a new incarnation starts fenced); KIP-778 Compatibility"),
)


PROTOCOL = ProtocolEntry(
    name="metadata_version",
    summary="KIP-778 metadata.version in KRaft: upgrades, lossless/lossy downgrades, quorum and broker checks",
    config_type=MetadataVersionConfig,
    configs={"small": SMALL, "default": DEFAULT, "large": LARGE, "kafka-catalog": KAFKA_CATALOG, "crashes": CRASHES,
             "lossy": LOSSY, "two-voters": TWO_VOTERS, "preview": PREVIEW, "lagging": LAGGING},
    story_configs=("crashes", "lossy", "two-voters", "preview", "lagging"),
    build=MetadataVersionSystem,
    variants=VARIANTS,
    sources=("KIP-778 (shared/seeds/000_6603b37640297d7b.txt)",
             "Apache Kafka 3.9 metadata/src/main/java/org/apache/kafka/controller/FeatureControlManager.java",
             "Apache Kafka 3.9 server-common/src/main/java/org/apache/kafka/server/common/MetadataVersion.java"),
    spec="specs.metadata_version:BINDING",
    properties="properties.metadata_version:PROPERTIES",
    z3="model.metadata_version:MetadataVersionZ3",
    decisions="model.decisions.metadata_version:DECISIONS",
    oracle="reference_impl.metadata_version.oracle:ORACLE",
    cluster="reference_impl.metadata_version.cluster:BINDING",
    # What only an operator does (runbooks, docs/runbooks.md): restart a node onto a software, run
    # kafka-features. Elections, replication, registration, record writes, crashes: the cluster.
    operator_actions=("RestartNode", "UpdateFeatures"),
    runbook_conditions="runbooks.metadata_version:CONDITIONS",
    order=20,
)
