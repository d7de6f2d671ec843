"""The ``kafka-features`` tool of KIP-584 ("Tooling support") as plain functions over the API.

Each function returns the lines the tool prints, in the layout of the KIP's examples, and for the
update commands the controller after the request. The tool knows the features of its own release
(``tool_features``): ``upgrade_all`` finalizes each at the tool's max level, ``downgrade_all`` brings
each down to it and deletes finalized features the tool does not know.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reference_impl.features.api import (
    Errors,
    FeatureController,
    FeatureUpdate,
    FeatureZNode,
    SupportedFeatures,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
)


def describe(supported: SupportedFeatures, node: FeatureZNode | None) -> list[str]:
    """``kafka-features.sh --describe``: one line per feature the broker supports or the cluster finalized."""
    sup = dict(supported)
    fin = dict(node.features) if node is not None else {}
    epoch = node.epoch if node is not None else -1
    lines = []
    for name in sorted(set(sup) | set(fin)):
        s, f = sup.get(name), fin.get(name)
        lines.append(
            f"Feature: {name} SupportedMinVersion: {s.min_version if s else '-'} "
            f"SupportedMaxVersion: {s.max_version if s else '-'} "
            f"FinalizedMinVersionLevel: {f.min_version_level if f else '-'} "
            f"FinalizedMaxVersionLevel: {f.max_version_level if f else '-'} Epoch: {epoch}")
    return lines


@dataclass(frozen=True)
class Planned:
    kind: str  # Add, Upgrade, Downgrade, Delete
    update: FeatureUpdate
    existing: int | None


def _line(p: Planned, result: str) -> str:
    new = "-" if p.update.is_delete else str(p.update.max_version_level)
    old = "-" if p.existing is None else str(p.existing)
    return (f"[{p.kind}] Feature: {p.update.feature} ExistingFinalizedMaxVersion: {old} "
            f"NewFinalizedMaxVersion: {new} Result: {result}")


def _run(controller: FeatureController, plan: Sequence[Planned], dry_run: bool
         ) -> tuple[list[str], FeatureController, UpdateFeaturesResponse | None]:
    if not plan:
        return [], controller, None
    request = UpdateFeaturesRequest(tuple(p.update for p in plan), dry_run=dry_run)
    response, after = controller.update_features(request)
    lines = []
    for p in plan:
        if response.error is not Errors.NONE:
            result = f"FAILED ({response.error.name}: {response.message})"
        else:
            r = response.result(p.update.feature)
            result = "OK" if r.error is Errors.NONE else f"FAILED ({r.error.name}: {r.message})"
        if dry_run and result == "OK":
            result = "OK (dry run: not applied)"
        lines.append(_line(p, result))
    return lines, after, response


def _existing_max(controller: FeatureController, name: str) -> int | None:
    r = controller.node.get(name) if controller.node is not None else None
    return r.max_version_level if r is not None else None


def upgrade_all(controller: FeatureController, tool_features: SupportedFeatures, dry_run: bool = False
                ) -> tuple[list[str], FeatureController]:
    """``--upgrade-all``: every feature the tool knows to the tool's max level."""
    plan = []
    for name, rng in tool_features:
        old = _existing_max(controller, name)
        if old is None:
            plan.append(Planned("Add", FeatureUpdate(name, rng.max_version), None))
        elif rng.max_version > old:
            plan.append(Planned("Upgrade", FeatureUpdate(name, rng.max_version), old))
    lines, after, _ = _run(controller, plan, dry_run)
    return lines, after


def downgrade_all(controller: FeatureController, tool_features: SupportedFeatures, dry_run: bool = False
                  ) -> tuple[list[str], FeatureController]:
    """``--downgrade-all``: down to the tool's max levels; delete what the tool does not know."""
    known = dict(tool_features)
    plan = []
    finalized = controller.node.features if controller.node is not None else ()
    for name, rng in finalized:
        if name not in known:
            plan.append(Planned("Delete", FeatureUpdate(name, 0, allow_downgrade=True), rng.max_version_level))
        elif known[name].max_version < rng.max_version_level:
            plan.append(Planned("Downgrade", FeatureUpdate(name, known[name].max_version, allow_downgrade=True),
                                rng.max_version_level))
    lines, after, _ = _run(controller, plan, dry_run)
    return lines, after


def update(controller: FeatureController, upgrade: Sequence[tuple[str, int]] = (),
           downgrade: Sequence[tuple[str, int]] = (), delete: Sequence[str] = (), dry_run: bool = False
           ) -> tuple[list[str], FeatureController]:
    """``kafka-features.sh update --upgrade f:v,... --downgrade f:v,... --delete f,... [--dry-run]``."""
    plan = []
    for name, level in upgrade:
        old = _existing_max(controller, name)
        plan.append(Planned("Add" if old is None else "Upgrade", FeatureUpdate(name, level), old))
    for name, level in downgrade:
        plan.append(Planned("Downgrade", FeatureUpdate(name, level, allow_downgrade=True),
                            _existing_max(controller, name)))
    for name in delete:
        plan.append(Planned("Delete", FeatureUpdate(name, 0, allow_downgrade=True), _existing_max(controller, name)))
    lines, after, _ = _run(controller, plan, dry_run)
    return lines, after
