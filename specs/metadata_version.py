"""Binding of ``specs/MetadataVersion.tla`` to ``reference_impl/metadata_version``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reference_impl.metadata_version.catalog import CATALOGS, catalog_named
from reference_impl.metadata_version.config import MetadataVersionConfig, Software
from rollcheck.core.traces import Record
from rollcheck.tla.binding import SpecBinding


def constants(config: MetadataVersionConfig) -> dict[str, Any]:
    catalog = config.version_catalog
    # MV-L2's start predicate as properties/metadata_version.py has it by default: the KIP's claim (every
    # settled new-software cluster) under kip, only where Kafka allows the downgrade under kafka.
    downgrade_from_any = config.profile == "kip"
    names = [s.name for s in config.softwares]
    if len(set(names)) != len(names):
        raise ValueError("the spec's Softwares is a function: a software named twice has no constant")
    return {
        "Profile": config.profile,
        "KafkaRelease": config.kafka_release,
        "CatalogLevels": frozenset(catalog.levels),
        "FormatChanges": frozenset(lvl for lvl in catalog.levels if catalog.did_metadata_change(lvl)),
        "BootstrapFloor": catalog.bootstrap_floor,
        "ControllerRegistrationLevel": catalog.controller_registration_level,
        "Softwares": {s.name: Record(min=s.min_level, max=s.max_level) for s in config.softwares},
        "OldSoftware": config.initial_software,  # the field itself, as the Z3 model reads it
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


def domain_values(config: MetadataVersionConfig) -> dict[str, tuple[Any, ...]]:
    """What conform (d) probes with beyond the generic values: each profile, release and catalog, the bounds
    of voters, the softwares broken one way each, each start level, and requested, downgrade and record
    levels just inside and just outside what the catalog allows."""
    catalog = catalog_named(config.catalog) if config.catalog in CATALOGS else catalog_named("example")
    lo, hi = catalog.minimum, catalog.latest
    first = config.softwares[0] if config.softwares else Software("s", lo, hi)
    rest = config.softwares[1:]
    # The last software broken too, not only the first: a first (initial) software with a bad range is refused
    # again further on (its range cannot hold the start level), so only another one's shows whether validate
    # itself reads each bound (the campaign's config.py:109 survivors).
    last = config.softwares[-1] if config.softwares else first
    head = config.softwares[:-1]
    softwares = ((), (*config.softwares, first), (Software(first.name, hi, lo), *rest),
                 (Software(first.name, lo - 1, hi), *rest), (Software(first.name, lo, hi + 1), *rest),
                 (Software(first.name, lo, lo), *rest), (*config.softwares, Software("newest", lo, hi)),
                 (*head, Software(last.name, hi, lo)), (*head, Software(last.name, lo - 1, hi)),
                 (*head, Software(last.name, lo, hi + 1)))
    return {"profile": ("kip", "kafka"), "kafka_release": ("3.9", "4.0"), "catalog": tuple(sorted(CATALOGS)),
            "voters": (5, 6), "softwares": softwares, "initial_software": tuple(s.name for s in config.softwares),
            "initial_level": (None, *range(-1, hi + 2)),
            "levels": ((), (-1,), (0,), (lo,), (hi,), (hi + 1,)),
            "downgrade_types": ((), ("NONE",), ("SAFE", "UNSAFE"), ("NONE", "?")),
            "record_levels": ((), (lo - 1,), (lo,), (hi,), (hi + 1,))}


BINDING = SpecBinding(
    directory=Path(__file__).resolve().parent,  # the .tla file sits beside this module
    protocol="metadata_version",
    module="MetadataVersion",
    constants=constants,
    actions=("UpdateFeatures", "WriteRecord", "ReplicateMetadata", "RegisterBroker", "ElectLeader",
             "LeaderFailover", "RestartNode", "CrashNode", "RecoverNode"),
    domain="ConfigOk",
    domain_values=domain_values,
)
