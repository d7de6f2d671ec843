"""Binding of ``specs/Features.tla`` to ``reference_impl/features``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reference_impl.features.config import FeaturesConfig, Release
from rollcheck.tla.binding import SpecBinding


def constants(config: FeaturesConfig) -> dict[str, Any]:
    names = [r.name for r in config.releases]
    if len(set(names)) != len(names) or any(len({f for f, _, _ in r.features}) != len(r.features)
                                            for r in config.releases):
        raise ValueError("the spec's Supported is a function: a release or a release's feature named twice has "
                         "no constant")
    if config.kafka_release != "2.8":  # the 3.9 rules are the reference's alone (the Kafka oracle's 3.9 rows)
        raise ValueError(f"the spec models Kafka's 2.8 rules, not kafka_release {config.kafka_release!r}")
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


def domain_values(config: FeaturesConfig) -> dict[str, tuple[Any, ...]]:
    """What conform (d) probes with beyond the generic values: each profile and semantics, the brokers' bound,
    and the releases broken one way each (none, a name twice, a feature twice, each range bound off)."""
    first = config.releases[0] if config.releases else Release("r", ())
    feature = first.features[0][0] if first.features else "f"

    def with_first(*features: tuple[str, int, int]) -> tuple[Release, ...]:
        return (Release(first.name, features), *config.releases[1:])

    releases = ((), (*config.releases, first), with_first(*first.features, *first.features[:1]),
                with_first((feature, 0, 1)), with_first((feature, 1, 0)), with_first((feature, 2, 1)),
                with_first((feature, 1, 1)), with_first(), (*config.releases, Release("bare", ())))
    return {"profile": ("kip", "kafka"), "semantics": ("partial", "atomic"), "brokers": (6, 7),
            "releases": releases, "initial_release": tuple(r.name for r in config.releases),
            "initial_ibp": ((), (False,), (True,), (True, False))}


BINDING = SpecBinding(
    directory=Path(__file__).resolve().parent,  # the .tla file sits beside this module
    protocol="features",
    module="Features",
    constants=constants,
    actions=("ElectController", "StartBroker", "ProcessBrokerRegistration", "UpdateFeatures",
             "DeliverFeaturesNotification", "ReadApiVersions", "RestartBroker", "DeprecateMinLevel", "SetIbp"),
    domain="ConfigOk",
    domain_values=domain_values,
)
