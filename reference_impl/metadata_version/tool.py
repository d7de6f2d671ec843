"""The ``kafka-features`` sub-commands of KIP-778 ("KIP-584 CLI Addendum") as functions.

Each takes the active :class:`QuorumController` and returns the response with the controller after the
request (unchanged on a dry run or an error), so a caller can chain them as an operator would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reference_impl.metadata_version.api import (
    DowngradeType,
    FeatureUpdate,
    QuorumController,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
)
from reference_impl.metadata_version.catalog import FEATURE_NAME


@dataclass(frozen=True)
class FeatureDescription:
    """One line of ``describe``: Kafka's FeatureCommand prints the supported range and the finalized level."""

    feature: str
    supported_min: int
    supported_max: int
    finalized_level: int

    def __str__(self) -> str:
        return (f"Feature: {self.feature}\tSupportedMinVersion: {self.supported_min}\t"
                f"SupportedMaxVersion: {self.supported_max}\tFinalizedVersionLevel: {self.finalized_level}")


def describe(controller: QuorumController) -> list[FeatureDescription]:
    names = sorted({n for n, _ in controller.local_supported} | {n for n, _ in controller.finalized})
    return [FeatureDescription(n, controller.local_range(n).min, controller.local_range(n).max,
                               controller.finalized_level(n)) for n in names]


def _parse_features(controller: QuorumController, metadata: str | None, features: Sequence[str]
                    ) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    if metadata is not None:
        out.append((FEATURE_NAME, controller.catalog.parse(metadata)))
    for item in features:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ValueError(f"--feature expects name=level, got {item!r}")
        if name == FEATURE_NAME and not value.lstrip("-").isdigit():
            out.append((name, controller.catalog.parse(value)))  # metadata.version=3.3-IV3 is allowed
            continue
        try:
            out.append((name, int(value)))
        except ValueError:
            raise ValueError(f"--feature {name}: level must be an integer, got {value!r}") from None
    if not out:
        raise ValueError("give --metadata or at least one --feature")
    return out


def _send(controller: QuorumController, updates: list[tuple[str, int]], downgrade: DowngradeType,
          dry_run: bool) -> tuple[UpdateFeaturesResponse, QuorumController]:
    req = UpdateFeaturesRequest(tuple(FeatureUpdate(n, lvl, downgrade) for n, lvl in updates), dry_run=dry_run)
    result = controller.update_features(req)
    return result.response, controller.apply(result)


def upgrade(controller: QuorumController, metadata: str | None = None, features: Sequence[str] = (),
            dry_run: bool = False) -> tuple[UpdateFeaturesResponse, QuorumController]:
    """``kafka-features upgrade [--metadata M] [--feature F=V ...] [--dry-run]``."""
    return _send(controller, _parse_features(controller, metadata, features), DowngradeType.NONE, dry_run)


def downgrade(controller: QuorumController, metadata: str | None = None, features: Sequence[str] = (),
              unsafe: bool = False, dry_run: bool = False) -> tuple[UpdateFeaturesResponse, QuorumController]:
    """``kafka-features downgrade [--metadata M] [--feature F=V ...] [--unsafe] [--dry-run]``."""
    kind = DowngradeType.UNSAFE if unsafe else DowngradeType.SAFE
    return _send(controller, _parse_features(controller, metadata, features), kind, dry_run)


def disable(controller: QuorumController, features: Sequence[str], unsafe: bool = False,
            dry_run: bool = False) -> tuple[UpdateFeaturesResponse, QuorumController]:
    """``kafka-features disable --feature F [--unsafe] [--dry-run]``: downgrade to level 0."""
    if not features:
        raise ValueError("disable needs at least one --feature")
    kind = DowngradeType.UNSAFE if unsafe else DowngradeType.SAFE
    return _send(controller, [(f, 0) for f in features], kind, dry_run)
