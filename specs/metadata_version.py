"""Binding of ``specs/MetadataVersion.tla`` to ``reference_impl/metadata_version``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reference_impl.metadata_version.config import MetadataVersionConfig
from rollcheck.tla.binding import SpecBinding
from rollcheck.traces import Record


def constants(config: MetadataVersionConfig) -> dict[str, Any]:
    catalog = config.version_catalog
    # MV-L2's start predicate as properties/metadata_version.py has it by default: the KIP's claim (every
    # settled new-software cluster) under kip, only where Kafka allows the downgrade under kafka.
    downgrade_from_any = config.profile == "kip"
    return {
        "Profile": config.profile,
        "KafkaRelease": config.kafka_release,
        "CatalogLevels": frozenset(catalog.levels),
        "FormatChanges": frozenset(lvl for lvl in catalog.levels if catalog.did_metadata_change(lvl)),
        "BootstrapFloor": catalog.bootstrap_floor,
        "ControllerRegistrationLevel": catalog.controller_registration_level,
        "Softwares": {s.name: Record(min=s.min_level, max=s.max_level) for s in config.softwares},
        "OldSoftware": config.old.name,
        "NewSoftware": config.new.name,
        "StartLevel": config.start_level,
        "NVoters": config.voters,
        "NBrokers": config.brokers,
        "RequestedLevels": frozenset(config.requested_levels),
        "DowngradeTypes": frozenset(config.downgrade_types),
        "DryRun": config.dry_run,
        "Crashes": config.crashes,
        "Failover": config.failover,
        "MaxDown": config.max_down,
        "MaxLog": config.max_log,
        "RecordLevels": frozenset(config.record_levels),
        "DowngradeFromAny": downgrade_from_any,
        "Mutations": frozenset(config.mutations),
    }


BINDING = SpecBinding(
    directory=Path(__file__).resolve().parent,  # the .tla file sits beside this module
    protocol="metadata_version",
    module="MetadataVersion",
    constants=constants,
    actions=("UpdateFeatures", "WriteRecord", "ReplicateMetadata", "RegisterBroker", "ElectLeader",
             "LeaderFailover", "RestartNode", "CrashNode", "RecoverNode"),
)
