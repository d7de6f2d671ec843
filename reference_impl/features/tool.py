"""The ``kafka-features`` tool of KIP-584 ("Tooling support") as plain functions over the API.

Each function returns the lines the tool prints and, for the update commands, the controller after the
request. The tool knows the features of its own release (``tool_features``): ``upgrade_all`` finalizes
each at the tool's max level, ``downgrade_all`` brings each down to it and deletes finalized features
the tool does not know.

Two output profiles (``profile``):

* ``kip`` (the default): the layout of the KIP's examples, space-separated, ``Result: OK`` or
  ``Result: FAILED (<ERROR>: <message>)``, a dry run sent to the controller and reported per feature.
* ``kafka``: Apache Kafka 2.8's ``core/.../admin/FeatureCommand.scala`` (``FeatureApis``): tab-separated
  fields, the operation padded to 11 characters, lines sorted by feature, failures printed as
  ``Result: FAILED due to <exception class>: <message>``; a dry run prints ``Expected feature updates:``
  and the planned lines without calling the controller. When an update fails, the lines are printed and
  then :class:`UpdateFeaturesException` ("N feature updates failed!") is raised, as in Kafka (where it
  makes the tool exit with 1); the exception carries the lines and the controller after the request.
  Updates go through the Admin client's checks (:func:`admin_update_features_request`). A top-level
  error fails every update with that error's exception (Kafka's Admin client would retry on
  NOT_CONTROLLER until its timeout; here the single controller answers once). Kafka 2.8 has only
  ``--describe``, ``--upgrade-all`` and ``--downgrade-all``: :func:`update` under ``kafka`` prints in
  the same format, as a later tool's ``--upgrade/--downgrade/--delete`` would have to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reference_impl.features.api import (
    AdminFeatureUpdate,
    Errors,
    FeatureController,
    FeatureUpdate,
    FeatureZNode,
    FeatureZNodeStatus,
    Profile,
    SupportedFeatures,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
    admin_update_features_request,
)


class UpdateFeaturesException(RuntimeError):
    """``kafka.admin.UpdateFeaturesException``: at least one update failed (``kafka`` profile only)."""

    def __init__(self, message: str, lines: list[str], controller: FeatureController) -> None:
        super().__init__(message)
        self.lines = lines
        self.controller = controller


def describe(supported: SupportedFeatures, node: FeatureZNode | None, profile: Profile = "kip") -> list[str]:
    """``kafka-features.sh --describe``: one line per feature the broker supports or the cluster finalized.

    Under ``kafka`` the broker answers from its feature cache, which Kafka clears when the node is absent
    or disabled (FinalizedFeatureChangeListener): no finalized levels and epoch -1, printed as "-".
    """
    sup = dict(supported)
    if profile == "kafka":
        cached = node is not None and node.status is FeatureZNodeStatus.ENABLED
        fin = dict(node.features) if cached and node is not None else {}
        epoch = str(node.epoch) if cached and node is not None else "-"
        sep = "\t"
    else:
        fin = dict(node.features) if node is not None else {}
        epoch = str(node.epoch) if node is not None else "-1"
        sep = " "
    lines = []
    for name in sorted(set(sup) | set(fin)):
        s, f = sup.get(name), fin.get(name)
        fields = [f"Feature: {name}",
                  f"SupportedMinVersion: {s.min_version if s else '-'}",
                  f"SupportedMaxVersion: {s.max_version if s else '-'}",
                  f"FinalizedMinVersionLevel: {f.min_version_level if f else '-'}",
                  f"FinalizedMaxVersionLevel: {f.max_version_level if f else '-'}",
                  f"Epoch: {epoch}"]
        lines.append(sep.join(fields))
    return lines


@dataclass(frozen=True)
class Planned:
    kind: str  # Add, Upgrade, Downgrade, Delete
    update: FeatureUpdate
    existing: int | None


def _line(p: Planned, profile: Profile) -> str:
    new = "-" if p.update.is_delete else str(p.update.max_version_level)
    old = "-" if p.existing is None else str(p.existing)
    if profile == "kafka":
        op = f"[{p.kind}]".rjust(11)  # FeatureApis.pad: f"$op%11s"
        return f"{op}\tFeature: {p.update.feature}\tExistingFinalizedMaxVersion: {old}\tNewFinalizedMaxVersion: {new}"
    return f"[{p.kind}] Feature: {p.update.feature} ExistingFinalizedMaxVersion: {old} NewFinalizedMaxVersion: {new}"


def _run(controller: FeatureController, plan: Sequence[Planned], dry_run: bool, profile: Profile
         ) -> tuple[list[str], FeatureController]:
    if profile == "kafka":
        return _run_kafka(controller, plan, dry_run)
    if not plan:
        return [], controller
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
        lines.append(f"{_line(p, profile)} Result: {result}")
    return lines, after


def _run_kafka(controller: FeatureController, plan: Sequence[Planned], dry_run: bool
               ) -> tuple[list[str], FeatureController]:
    """FeatureApis.maybeApplyFeatureUpdates: updates keyed (and printed) by feature name."""
    updates = {p.update.feature: p for p in plan}  # a Map in Kafka: a later plan for a feature replaces
    if not updates:
        return [], controller
    ordered = [updates[f] for f in sorted(updates)]
    if dry_run:
        # One println of "Expected feature updates:" + the lines joined by "\n" (no newline after the colon).
        lines = [_line(p, "kafka") for p in ordered]
        return [f"Expected feature updates:{lines[0]}", *lines[1:]], controller
    request = admin_update_features_request(
        {f: AdminFeatureUpdate(p.update.max_version_level, p.update.allow_downgrade) for f, p in updates.items()})
    response, after = controller.update_features(request)
    lines, failures = [], 0
    for p in ordered:
        failure = _kafka_failure(response, p.update.feature)
        if failure is None:
            lines.append(f"{_line(p, 'kafka')}\tResult: OK")
        else:
            lines.append(f"{_line(p, 'kafka')}\tResult: FAILED due to {failure}")
            failures += 1
    if failures > 0:
        raise UpdateFeaturesException(f"{failures} feature updates failed!", lines, after)
    return lines, after


def _kafka_failure(response: UpdateFeaturesResponse, feature: str) -> str | None:
    """What the Admin client's future for ``feature`` fails with (``Throwable.toString``), None on success."""
    if response.error is not Errors.NONE:
        return response.error.exception_string(response.message)
    try:
        r = response.result(feature)
    except KeyError:
        # KafkaAdminClient.updateFeatures' sanity check (completeUnrealizedFutures with an ApiException).
        return ("org.apache.kafka.common.errors.ApiException: The controller response did not contain a result "
                f"for feature {feature}")
    return None if r.error is Errors.NONE else r.error.exception_string(r.message)


def _existing_max(controller: FeatureController, name: str) -> int | None:
    r = controller.node.get(name) if controller.node is not None else None
    return r.max_version_level if r is not None else None


def upgrade_all(controller: FeatureController, tool_features: SupportedFeatures, dry_run: bool = False,
                profile: Profile = "kip") -> tuple[list[str], FeatureController]:
    """``--upgrade-all``: every feature the tool knows to the tool's max level."""
    plan = []
    for name, rng in tool_features:
        old = _existing_max(controller, name)
        if old is None:
            plan.append(Planned("Add", FeatureUpdate(name, rng.max_version), None))
        elif rng.max_version > old:
            plan.append(Planned("Upgrade", FeatureUpdate(name, rng.max_version), old))
    return _run(controller, plan, dry_run, profile)


def downgrade_all(controller: FeatureController, tool_features: SupportedFeatures, dry_run: bool = False,
                  profile: Profile = "kip") -> tuple[list[str], FeatureController]:
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
    return _run(controller, plan, dry_run, profile)


def update(controller: FeatureController, upgrade: Sequence[tuple[str, int]] = (),
           downgrade: Sequence[tuple[str, int]] = (), delete: Sequence[str] = (), dry_run: bool = False,
           profile: Profile = "kip") -> tuple[list[str], FeatureController]:
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
    return _run(controller, plan, dry_run, profile)
