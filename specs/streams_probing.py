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
    ConfigException,
    configured_metadata_version,
)
from rollcheck.tla.binding import SpecBinding

# The first metadata version that implements version probing (2.0's, KIP-268): a release speaking less is pre-2.0.
EARLIEST_PROBEABLE = 3

# The operator's bound on each instance's bounces (procedure "operator"), the spec's own copy of the reference's
# config.OPERATOR_MAX_BOUNCES (the KIP's two bounces plus one repeated): an edit to the reference's bound is a
# reachable-set disagreement, not a larger model that every property also holds on.
OPERATOR_BOUNCES = 3


def two_bounces(config: StreamsProbingConfig) -> bool:
    """The spec's own reading of the procedure (KIP-268 "Upgrading to 2.0"): "auto" takes two bounces where a
    pre-2.0 group's metadata version changes, "two-bounces" always, the others never. Not the reference config's
    property: an edit to that is then a disagreement (the config domain's procedure probes), not a change that
    every copy reads alike."""
    if config.procedure == "auto":
        return config.old.latest_supported < EARLIEST_PROBEABLE and \
            config.new.latest_supported > config.old.latest_supported
    return config.procedure == "two-bounces"


def first_upgrade_from(config: StreamsProbingConfig) -> str | None:
    """The spec's own reading of the ``upgrade.from`` a bounce sets: the release upgraded from (KIP-268), in the
    first of two bounces; under "operator" the operator's mistaken value, or the old release's where the group is
    pre-2.0 and the new release accepts it (its ``StreamsConfig`` lists it), else none."""
    if config.procedure != "operator":
        return config.old.name if two_bounces(config) else None
    if config.misconfigured_upgrade_from is not None:
        return config.misconfigured_upgrade_from
    if config.old.latest_supported >= EARLIEST_PROBEABLE:
        return None
    try:
        configured_metadata_version(config.new, config.old.name, config.profile)
    except ConfigException:
        return None
    return config.old.name


def constants(config: StreamsProbingConfig) -> dict[str, Any]:
    operator, two = config.procedure == "operator", two_bounces(config)
    first = first_upgrade_from(config)
    rounds = 2 if two else 1
    return {
        "Profile": config.profile,
        "N": config.instances,
        "OldRelease": config.old.name,
        "NewRelease": config.new.name,
        "Latest": {r.name: r.latest_supported for r in RELEASES},
        "Rounds": 0 if operator else rounds,  # procedure "operator" has no rounds
        "Operator": operator,
        "MaxBounces": OPERATOR_BOUNCES if operator else rounds,
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
