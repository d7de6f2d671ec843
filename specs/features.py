"""Binding of ``specs/Features.tla`` to ``reference_impl/features``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reference_impl.features.config import FeaturesConfig
from rollcheck.tla.binding import SpecBinding


def constants(config: FeaturesConfig) -> dict[str, Any]:
    return {
        "Profile": config.profile,
        "Semantics": config.semantics,
        "N": config.brokers,
        "Supported": {r.name: {f: (lo, hi) for f, lo, hi in r.features} for r in config.releases},
        "InitialRelease": config.initial_release,
        "InitialIbp": frozenset(config.initial_ibp),
        "MaxEpoch": config.max_epoch,
        "MaxRestarts": config.max_restarts,
        "MaxIbpChanges": config.max_ibp_changes,
        "Levels": frozenset(config.levels),
        "MultiUpdate": config.multi_update,
        "WithDryRun": config.dry_run,
        "WithDeprecation": config.deprecation,
        "WithClient": config.client,
        "Mutations": frozenset(config.mutations),
    }


BINDING = SpecBinding(
    directory=Path(__file__).resolve().parent,  # the .tla file sits beside this module
    protocol="features",
    module="Features",
    constants=constants,
    actions=("ElectController", "StartBroker", "ProcessBrokerRegistration", "UpdateFeatures",
             "DeliverFeaturesNotification", "ReadApiVersions", "RestartBroker", "DeprecateMinLevel", "SetIbp"),
)
