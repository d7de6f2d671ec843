"""The ``kafka-features`` sub-commands of KIP-778 ("KIP-584 CLI Addendum") as functions.

Two forms:

* ``describe`` / ``upgrade`` / ``downgrade`` / ``disable``: each takes the active :class:`QuorumController`
  and returns the response with the controller after the request (unchanged on a dry run or an error), so
  a caller can chain them as an operator would (``metadata.version=V5`` is accepted as a ``--feature``).
* Kafka's output mode, Apache Kafka 3.9's ``tools/src/main/java/org/apache/kafka/tools/FeatureCommand.java``:
  ``handle_describe`` / ``handle_upgrade`` / ``handle_downgrade`` / ``handle_disable`` and ``main_no_exit``
  return a :class:`CommandOutput` with the exit code and the exact lines Kafka prints (``--feature`` levels
  are shorts, ``--metadata`` is parsed by ``fromVersionString``, results are printed by feature name).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from reference_impl.metadata_version.api import (
    DowngradeType,
    Errors,
    FeatureUpdate,
    QuorumController,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
    UpgradeType,
)
from reference_impl.metadata_version.catalog import (
    FEATURE_NAME,
    KAFKA_CATALOG,
    MINIMUM_BOOTSTRAP_VERSION,
    from_version_string,
    kafka_release,
    latest_production,
    metadata_versions_to_string,
)


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


# ---------------------------------------------------------------------- Kafka's FeatureCommand (3.9)
class TerseError(Exception):
    """FeatureCommand's TerseException: its message alone is printed to stderr, exit code 1."""


@dataclass(frozen=True)
class CommandOutput:
    """What ``FeatureCommand.mainNoExit`` returns and prints, and the controller after the command."""

    exit_code: int
    stdout: tuple[str, ...]
    stderr: str | None
    controller: QuorumController

    @property
    def text(self) -> str:
        return "\n".join(self.stdout)


def level_to_string(feature: str, level: int, controller: QuorumController | None = None) -> str:
    """FeatureCommand.levelToString: metadata.version as its version string ("UNKNOWN n" if none)."""
    if feature != FEATURE_NAME:
        return str(level)
    try:
        return (controller.catalog if controller is not None else KAFKA_CATALOG).label(level)
    except ValueError:
        return f"UNKNOWN {level}"


def describe_lines(controller: QuorumController, epoch: int | None = None) -> list[str]:
    """FeatureCommand.handleDescribe: one line per supported feature, by name; ``epoch`` None prints "-"."""
    out = []
    for name in sorted(n for n, _ in controller.local_supported):
        rng = controller.local_range(name)
        out.append(f"Feature: {name}\tSupportedMinVersion: {level_to_string(name, rng.min, controller)}\t"
                   f"SupportedMaxVersion: {level_to_string(name, rng.max, controller)}\t"
                   f"FinalizedVersionLevel: {level_to_string(name, controller.finalized_level(name), controller)}\t"
                   f"Epoch: {'-' if epoch is None else epoch}")
    return out


def parse_name_and_level(text: str) -> tuple[str, str]:
    """FeatureCommand.parseNameAndLevel: split at the first "=", trim both sides, the level a Java short."""
    name, sep, level = text.partition("=")
    if not sep:
        raise ValueError(f"Can't parse feature=level string {text}: equals sign not found.")
    name, level = name.strip(), level.strip()
    if _parse_short(level) is None:
        raise ValueError(f"Can't parse feature=level string {text}: unable to parse {level} as a short.")
    return name, level


def _parse_short(text: str) -> int | None:
    # Short.parseShort: an optional sign, decimal digits, -32768..32767.
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -32768 <= value <= 32767 else None


def _feature_update(level: int, upgrade: UpgradeType) -> tuple[int, UpgradeType]:
    # The admin client's FeatureUpdate constructor checks.
    if level == 0 and upgrade is UpgradeType.UPGRADE:
        raise ValueError("The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the "
                         f"provided maxVersionLevel:{level} is < 1.")
    if level < 0:
        raise ValueError("Cannot specify a negative version level.")
    return level, upgrade


def _parse_metadata(controller: QuorumController, metadata: str) -> int:
    catalog = controller.catalog
    if catalog.name == "kafka":
        release = kafka_release(controller.kafka_release)
        try:
            # From 4.2 FeatureCommand parses with unstable versions on and passes the parse's own words through;
            # before, it names the list from the first version it accepts (3.x MINIMUM_BOOTSTRAP_VERSION, 4.0 and
            # 4.1 MINIMUM_VERSION) to latestProduction() (kafka-tools 4.0.2, 4.1.2, 4.2.2, 4.4.0: FeatureCommand).
            return from_version_string(metadata, controller.kafka_release, unstable=True).feature_level
        except ValueError as exc:
            if release.stable_parse:
                raise TerseError(str(exc)) from None
            first = release.minimum if release.line_rules == "4.0" else MINIMUM_BOOTSTRAP_VERSION
            known = metadata_versions_to_string(first, latest_production(controller.kafka_release))
            raise TerseError(f"Unsupported metadata.version {metadata}. Supported metadata.version are "
                             f"{known}") from None
    try:
        return catalog.parse(metadata)
    except ValueError:
        labels = [catalog.label(lvl) for lvl in catalog.levels if lvl >= catalog.bootstrap_floor]
        raise TerseError(f"Unsupported metadata.version {metadata}. Supported metadata.version are "
                         + ", ".join(labels)) from None


def _downgrade_type(unsafe: bool) -> UpgradeType:
    return UpgradeType.UNSAFE_DOWNGRADE if unsafe else UpgradeType.SAFE_DOWNGRADE


def _upgrade_or_downgrade(controller: QuorumController, op: str, upgrade: UpgradeType, metadata: str | None,
                          features: Sequence[str], dry_run: bool) -> CommandOutput:
    updates: dict[str, tuple[int, UpgradeType]] = {}
    try:
        if metadata is not None:
            updates[FEATURE_NAME] = _feature_update(_parse_metadata(controller, metadata), upgrade)
        for item in features:
            name, level = parse_name_and_level(item)
            update = _feature_update(int(level), upgrade)
            if name in updates:
                raise ValueError(f"Feature {name} was specified more than once.")
            updates[name] = update
        return _update(controller, op, updates, dry_run)
    except (TerseError, ValueError) as e:
        return CommandOutput(1, (), str(e), controller)


def handle_upgrade(controller: QuorumController, metadata: str | None = None, features: Sequence[str] = (),
                   dry_run: bool = False) -> CommandOutput:
    """``kafka-features upgrade [--metadata M] [--feature F=L ...] [--dry-run]`` (Kafka 3.9)."""
    return _upgrade_or_downgrade(controller, "upgrade", UpgradeType.UPGRADE, metadata, features, dry_run)


def handle_downgrade(controller: QuorumController, metadata: str | None = None, features: Sequence[str] = (),
                     unsafe: bool = False, dry_run: bool = False) -> CommandOutput:
    """``kafka-features downgrade [--metadata M] [--feature F=L ...] [--unsafe] [--dry-run]`` (Kafka 3.9)."""
    return _upgrade_or_downgrade(controller, "downgrade", _downgrade_type(unsafe), metadata, features, dry_run)


def handle_disable(controller: QuorumController, features: Sequence[str] = (), unsafe: bool = False,
                   dry_run: bool = False) -> CommandOutput:
    """``kafka-features disable --feature F ... [--unsafe] [--dry-run]`` (Kafka 3.9): level 0 each."""
    updates: dict[str, tuple[int, UpgradeType]] = {}
    try:
        for name in features:
            if name in updates:
                raise ValueError(f"Feature {name} was specified more than once.")
            updates[name] = (0, _downgrade_type(unsafe))
        return _update(controller, "disable", updates, dry_run)
    except (TerseError, ValueError) as e:
        return CommandOutput(1, (), str(e), controller)


def handle_describe(controller: QuorumController, epoch: int | None = None) -> CommandOutput:
    return CommandOutput(0, tuple(describe_lines(controller, epoch)), None, controller)


def _update(controller: QuorumController, op: str, updates: dict[str, tuple[int, UpgradeType]],
            dry_run: bool) -> CommandOutput:
    """FeatureCommand.update with the admin client's updateFeatures in between."""
    if not updates:
        raise TerseError(f"You must specify at least one feature to {op}")
    if any(not name.strip() for name in updates):
        raise ValueError("Provided feature can not be empty.")  # KafkaAdminClient.updateFeatures
    req = UpdateFeaturesRequest(tuple(FeatureUpdate.with_upgrade_type(name, level, upgrade.value)
                                      for name, (level, upgrade) in updates.items()), dry_run=dry_run)
    result = controller.update_features(req)
    errors = _feature_errors(result.response, list(updates))
    lines: list[str] = []
    failures = 0
    for name in sorted(updates):  # a TreeMap in FeatureCommand
        level = updates[name][0]
        message = errors[name]
        if message is not None:
            what = f"disable {name}" if op == "disable" else f"{op} {name} to {level}"
            lines.append(f"{'Can not' if dry_run else 'Could not'} {what}. {message}")
            failures += 1
        else:
            done = "disabled." if op == "disable" else f"{op}d to {level}."
            lines.append(f"{name}{' can be ' if dry_run else ' was '}{done}")
    after = controller.apply(result)
    if failures:
        return CommandOutput(1, tuple(lines), f"{failures} out of {len(updates)} operation(s) failed.", after)
    return CommandOutput(0, tuple(lines), None, after)


def _feature_errors(response: UpdateFeaturesResponse, names: list[str]) -> dict[str, str | None]:
    # KafkaAdminClient.updateFeatures: a top-level error fails every feature with its message; otherwise
    # each feature's result, and a feature the response does not mention fails.
    if response.error is not Errors.NONE:
        return {n: response.message or response.error.name for n in names}
    out: dict[str, str | None] = {n: f"The controller response did not contain a result for feature {n}"
                                  for n in names}
    for r in response.results:
        if r.feature in out:
            out[r.feature] = None if r.error is Errors.NONE else (r.message or r.error.name)
    return out


def main_no_exit(controller: QuorumController, *args: str, epoch: int | None = None) -> CommandOutput:
    """``kafka-features <command> [options]`` against this controller (no --bootstrap-server needed)."""
    if not args or args[0] not in ("describe", "upgrade", "downgrade", "disable"):
        return CommandOutput(1, (), "Command line error: give describe, upgrade, downgrade or disable.",
                             controller)
    command, rest = args[0], list(args[1:])
    metadata: str | None = None
    features: list[str] = []
    flags = {"--dry-run": False, "--unsafe": False}
    allowed = {"describe": set(), "upgrade": {"--metadata", "--feature", "--dry-run"},
               "downgrade": {"--metadata", "--feature", "--dry-run", "--unsafe"},
               "disable": {"--feature", "--dry-run", "--unsafe"}}[command]
    while rest:
        opt = rest.pop(0)
        if opt not in allowed or (opt in ("--metadata", "--feature") and not rest):
            return CommandOutput(1, (), f"Command line error: unrecognized or incomplete argument {opt}.",
                                 controller)
        if opt == "--metadata":
            metadata = rest.pop(0)
        elif opt == "--feature":
            features.append(rest.pop(0))
        else:
            flags[opt] = True
    if command == "describe":
        return handle_describe(controller, epoch)
    if command == "upgrade":
        return handle_upgrade(controller, metadata, features, flags["--dry-run"])
    if command == "downgrade":
        return handle_downgrade(controller, metadata, features, flags["--unsafe"], flags["--dry-run"])
    return handle_disable(controller, features, flags["--unsafe"], flags["--dry-run"])
