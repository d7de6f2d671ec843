"""Binding of ``specs/StreamsProbing.tla`` to ``reference_impl/streams_probing``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reference_impl.streams_probing.config import StreamsProbingConfig
from reference_impl.streams_probing.releases import RELEASES, configured_metadata_version
from rollcheck.tla.binding import SpecBinding


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
        "MaxBounces": config.max_bounces,
        "FirstUpgradeFrom": first or "",
        # KAFKA-6054's variant: a pre-2.0 release without the back-port has no upgrade.from at all.
        "FirstUsedVersion": (config.new.latest_supported
                             if "no_kafka_6054_backport" in config.mutations and not config.new.probing
                             else configured_metadata_version(config.new, first, config.profile)),
        "MaxCrashes": config.max_crashes,
        "Mutations": frozenset(config.mutations),
    }


BINDING = SpecBinding(
    directory=Path(__file__).resolve().parent,  # the .tla file sits beside this module
    protocol="streams_probing",
    module="StreamsProbing",
    constants=constants,
    actions=("RollingBounce", "Rebalance", "OnAssignment", "ProbeDowngrade", "AdoptSupportedVersion",
             "LeaderFollowUpRebalance", "AssignmentFailure", "ErrorShutdown", "Crash", "Restart"),
)
