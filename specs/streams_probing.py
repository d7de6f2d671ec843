"""Binding of ``specs/StreamsProbing.tla`` to ``reference_impl/streams_probing``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reference_impl.streams_probing.config import PROCEDURES, StreamsProbingConfig
from reference_impl.streams_probing.releases import (
    PROFILES,
    RELEASES,
    UPGRADE_FROM_NEUTRAL,
    UPGRADE_FROM_VERSION,
    configured_metadata_version,
)
from rollcheck.tla.binding import SpecBinding

# The operator's bound on each instance's bounces (procedure "operator"), the spec's own copy of the reference's
# config.OPERATOR_MAX_BOUNCES (the KIP's two bounces plus one repeated): an edit to the reference's bound is a
# reachable-set disagreement, not a larger model that every property also holds on.
OPERATOR_BOUNCES = 3


def constants(config: StreamsProbingConfig) -> dict[str, Any]:
    first = config.upgrade_from
    return {
        "Profile": config.profile,
        "N": config.instances,
        "OldRelease": config.old.name,
        "NewRelease": config.new.name,
        "Latest": {r.name: r.latest_supported for r in RELEASES},
        "Rounds": 0 if config.operator else config.rounds,  # procedure "operator" has no rounds
        "Operator": config.operator,
        "MaxBounces": OPERATOR_BOUNCES if config.operator else config.rounds,
        "FirstUpgradeFrom": first or "",
        # KAFKA-6054's variant: a pre-2.0 release without the back-port has no upgrade.from at all.
        "FirstUsedVersion": (config.new.latest_supported
                             if "no_kafka_6054_backport" in config.mutations and not config.new.probing
                             else configured_metadata_version(config.new, first, config.profile)),
        "MaxCrashes": config.max_crashes,
        "Mutations": frozenset(config.mutations),
        "Age": {r.name: r.order for r in RELEASES},
        "Procedure": config.procedure,
        "Misconfigured": config.misconfigured_upgrade_from is not None,
    }


def domain_values(config: StreamsProbingConfig) -> dict[str, tuple[Any, ...]]:
    """What conform (d) probes the text fields with: every profile, release, procedure and upgrade.from value
    (one that forces each version, and one that leaves it alone)."""
    releases = tuple(r.name for r in RELEASES)
    return {"profile": PROFILES, "from_release": releases, "to_release": releases, "procedure": PROCEDURES,
            "misconfigured_upgrade_from": (None, *UPGRADE_FROM_VERSION, UPGRADE_FROM_NEUTRAL[0])}


BINDING = SpecBinding(
    directory=Path(__file__).resolve().parent,  # the .tla file sits beside this module
    protocol="streams_probing",
    module="StreamsProbing",
    constants=constants,
    actions=("RollingBounce", "Rebalance", "OnAssignment", "ProbeDowngrade", "AdoptSupportedVersion",
             "LeaderFollowUpRebalance", "AssignmentFailure", "ErrorShutdown", "Crash", "Restart"),
    domain="ConfigOk",
    domain_values=domain_values,
)
