"""The ``features`` protocol's config: brokers, releases with their supported ranges, bounds, semantics."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from reference_impl.features.api import (
    FeatureUpdate,
    SupportedFeatures,
    UpdateFeaturesRequest,
    supported_features,
)

MUTATIONS = frozenset({
    "skip_range_check", "allow_downgrade_unchecked", "apply_partially_when_atomic", "bump_epoch_on_noop",
    "register_incompatible", "client_adopts_stale", "ignore_incompatible_notification",
    "skip_min_level_check", "skip_startup_validation",
})


@dataclass(frozen=True)
class Release:
    """A broker binary: the features it supports, as ``(feature, min_version, max_version)``."""

    name: str
    features: tuple[tuple[str, int, int], ...]

    def supported(self) -> SupportedFeatures:
        return supported_features([(f, (lo, hi)) for f, lo, hi in self.features])


@dataclass(frozen=True)
class FeaturesConfig:
    profile: str = "kip"
    semantics: str = "partial"  # "partial" (KIP-584 as written) or "atomic" (its revision)
    brokers: int = 2
    releases: tuple[Release, ...] = (
        Release("old", (("group_coordinator", 1, 1),)),
        Release("new", (("group_coordinator", 1, 2),)),
    )
    initial_release: str = "old"
    initial_ibp: tuple[bool, ...] = (True,)  # one initial state per IBP: True = new cluster bootstrap
    max_epoch: int = 3  # no write once /features reaches this epoch (bounds the state space)
    max_restarts: int = 2
    max_ibp_changes: int = 0
    levels: tuple[int, ...] = (0, 1, 2)  # max version levels the operator asks for (0 asks for deletion)
    multi_update: bool = False  # also send requests with two updates (distinguishes partial / atomic)
    dry_run: bool = True  # the operator also sends dry runs
    deprecation: bool = True  # the controller's min-level deprecation (kip profile only)
    client: bool = True
    mutations: frozenset[str] = field(default_factory=frozenset)
    # The Kafka release line the kafka profile models: "2.8" (2.7 .. 3.2: finalized version ranges, node schema
    # version 1) or "3.9" (3.3 and later in ZooKeeper mode: one finalized level per feature, node schema version 2
    # at IBP 3.3-IV0 and above; reference_impl/features/api.py, ZK_V2). Only the Kafka oracle's 3.9 rows set "3.9"
    # (reference_impl/features/oracle.py); the TLA+ spec, the Z3 model and the decision rules model "2.8".
    kafka_release: str = "2.8"

    def validate(self) -> None:
        if self.profile not in ("kip", "kafka"):
            raise ValueError("profile must be 'kip' or 'kafka'")
        if self.kafka_release not in ("2.8", "3.9"):
            raise ValueError("kafka_release must be '2.8' or '3.9'")
        if self.semantics not in ("partial", "atomic"):
            raise ValueError("semantics must be 'partial' or 'atomic'")
        if not 1 <= self.brokers <= 6:
            raise ValueError("brokers must be between 1 and 6")
        names = [r.name for r in self.releases]
        if not names or len(set(names)) != len(names):
            raise ValueError("releases must be non-empty with distinct names")
        if self.initial_release not in names:
            raise ValueError(f"initial_release '{self.initial_release}' is not one of the releases {names}")
        for r in self.releases:
            named = [f for f, _, _ in r.features]
            if len(set(named)) != len(named):  # Kafka's Features is a map: one range per feature
                raise ValueError(f"release '{r.name}' names a feature twice: {sorted(named)}")
            try:
                r.supported()
            except ValueError as exc:
                raise ValueError(f"release '{r.name}': {exc}") from None
        if not self.initial_ibp:
            raise ValueError("initial_ibp needs at least one value")
        if self.max_epoch < 0 or self.max_restarts < 0 or self.max_ibp_changes < 0:
            raise ValueError("bounds must not be negative")
        unknown = set(self.mutations) - MUTATIONS
        if unknown:
            raise ValueError(f"unknown mutations {sorted(unknown)}")

    @property
    def feature_names(self) -> tuple[str, ...]:
        return tuple(sorted({f for r in self.releases for f, _, _ in r.features}))

    def operator_requests(self) -> tuple[UpdateFeaturesRequest, ...]:
        """Every request the operator may send: one update per feature, level and flag (and dry run),
        plus two-update requests when ``multi_update`` (non-dry, same flag)."""
        singles = [FeatureUpdate(f, lvl, allow) for f in self.feature_names for lvl in self.levels
                   for allow in (False, True)]
        out = [UpdateFeaturesRequest((u,)) for u in singles]
        if self.dry_run:
            out += [UpdateFeaturesRequest((u,), dry_run=True) for u in singles]
        if self.multi_update:
            for a, b in itertools.combinations(singles, 2):
                if a.feature != b.feature and a.allow_downgrade == b.allow_downgrade:
                    out.append(UpdateFeaturesRequest((a, b)))
        return tuple(out)
