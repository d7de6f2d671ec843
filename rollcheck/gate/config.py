"""The gate config: the tiers, the ``[gate]`` table of ``rollcheck.toml`` and its defaults."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.checkers import (
    all_checkers,
    available_checkers,
    checker_names,
    get_checker,
    tier_checkers,
    variant_checkers,
)
from rollcheck.checkers.registry import gate_keys, validate_options
from rollcheck.core.errors import UserError
from rollcheck.core.registry import check_profiles, get_protocol, known_profiles, protocol_names
from rollcheck.runtime.userinput import positive_number, read_text_input, whole_number

# The tiers. ``ci`` (the default) is the gate a developer waits for: every protocol, each of its profiles, every
# checker kind, every broken variant (its target: 5 minutes on 2 cores). Every checker runs on the gate configs
# but those that cost the most per state (``Capabilities.ci_configs_only``: TLC, conformance, Spark), which run
# on each protocol's ``ci_configs`` (``small``: every action and every fault of the protocol, fewer nodes or
# versions), where the explorer also runs so that the exhaustive counts are compared; the broken variants run
# through the checkers whose ``mutant_tiers`` name the tier (the explorer, which kills every one: the nightly
# tier's other checkers add no kill, a test compares them). ``nightly`` is the full matrix: every checker on
# the gate configs, every broken variant through every checker that kills variants, and the checkers of the
# nightly tier alone (a fuzzing round per protocol x profile). Each checker's ``Capabilities`` say which.
TIERS = ("ci", "nightly")


@dataclass
class GateConfig:
    protocols: list[str]
    configs: dict[str, list[str]]  # protocol -> config names or .toml paths
    profiles: list[str]
    checkers: list[str]
    out_dir: Path
    context: dict[str, Any] = field(default_factory=dict)
    mutants: bool = False  # also run every broken variant (the mutation matrix of the report)
    mutant_checkers: list[str] = field(default_factory=lambda: variant_checkers("ci"))
    tier: str = "ci"
    # The configs the ci tier runs the ci_configs_only checkers (Capabilities) on (protocol -> names or .toml paths).
    ci_configs: dict[str, list[str]] = field(default_factory=dict)
    parallel: int = field(default_factory=lambda: os.cpu_count() or 1)  # cells at once
    # ``--export-tests DIR``: a pytest regression test per counterexample trace (rollcheck.explore.regression)
    export_tests: Path | None = None
    # Configs of stories the gate config does not tell (ProtocolEntry.story_configs): the explorer checks
    # them in the ci tier, every checker that runs on the gate configs in the nightly tier.
    story_configs: dict[str, list[str]] = field(default_factory=dict)
    # Configs only the conformance checker runs on (ProtocolEntry.conform_configs), in every tier.
    conform_configs: dict[str, list[str]] = field(default_factory=dict)
    # The store of cell results (rollcheck.gate.cache: entries under its cells/); None: every cell runs.
    cache: Path | None = None


def default_gate_config(out_dir: Path, tier: str = "ci") -> GateConfig:
    if tier not in TIERS:
        raise UserError(f"unknown tier '{tier}'; use {' or '.join(TIERS)}")
    protocols = protocol_names()
    present = set(available_checkers())
    checkers = tier_checkers(tier)
    mutant_checkers = [c for c in variant_checkers(tier) if c in present]
    context = tier_context(tier)
    gate_configs = {p: [get_protocol(p).gate_config] for p in protocols}  # each protocol's registration says
    return GateConfig(protocols, gate_configs, known_profiles(protocols),
                      checkers, out_dir, context, mutants=True, mutant_checkers=mutant_checkers, tier=tier,
                      ci_configs={p: ["small"] for p in protocols},
                      story_configs={p: list(get_protocol(p).story_configs) for p in protocols},
                      conform_configs={p: list(get_protocol(p).conform_configs) for p in protocols})


def tier_context(tier: str) -> dict[str, Any]:
    """A tier's checker settings (each checker's ``Options.TIER_DEFAULTS``): [gate] keys, then the options table."""
    context: dict[str, Any] = {}
    options: dict[str, Any] = {}
    for checker in all_checkers():
        table = {k.name: k.table for k in checker.options.KEYS}
        for key, value in checker.options.TIER_DEFAULTS.get(tier, {}).items():
            (context if table.get(key) == "gate" else options)[key] = value
    return {**context, "options": options}


_STRUCTURAL = frozenset({"protocols", "configs", "profiles", "checkers", "out", "mutants", "mutant_checkers",
                         "tier", "ci_configs", "parallel", "story_configs", "conform_configs"})
# The run's own keys, which every checker may read (CheckContext.seed, .timeout_seconds), and its options table.
_RUN_KEYS = frozenset({"seed", "timeout_seconds", "options"})


def gate_config_keys() -> frozenset[str]:
    """Every [gate] key: the gate's own and those of the registered checkers (their ``Options``)."""
    return _STRUCTURAL | _RUN_KEYS | gate_keys()


def load_gate_config(path: Path | None, out_dir: Path | None, tier: str | None = None) -> GateConfig:
    """Read ``rollcheck.toml`` (``[gate]`` table); missing keys take the tier's defaults. ``tier`` (the
    command line's ``--tier``) wins over the file's ``tier`` key."""
    if path is None:
        return default_gate_config(out_dir or Path("rollcheck-out/gate"), tier or "ci")
    text = read_text_input(Path(path), "gate config")
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"malformed gate config {path}: {exc}") from None
    # A misspelled table ([gaet]) must not silently run the default gate.
    if set(raw) - {"gate"}:
        raise UserError(f"{path}: unknown table or key {sorted(set(raw) - {'gate'})}: the gate config is one "
                        "[gate] table")
    gate = raw.get("gate", {})
    if not isinstance(gate, dict):
        raise UserError(f"{path}: [gate] must be a table")
    known_keys = gate_config_keys()
    unknown = set(gate) - known_keys
    if unknown:
        raise UserError(f"{path}: unknown [gate] keys {sorted(unknown)}; known: {', '.join(sorted(known_keys))}")
    file_tier = gate.get("tier", "ci")
    if not isinstance(file_tier, str) or file_tier not in TIERS:
        raise UserError(f"{path}: 'tier' must be one of {', '.join(TIERS)}")
    base = default_gate_config(out_dir or Path("rollcheck-out/gate"), tier or file_tier)
    protocols = _str_list(gate, "protocols", base.protocols, path)
    for p in protocols:
        get_protocol(p)  # a clear error for an unknown protocol
    configs = _config_table(gate, "configs", {p: base.configs.get(p, ["default"]) for p in protocols}, path)
    ci_configs = _config_table(gate, "ci_configs", {p: ["small"] for p in protocols}, path)
    story_configs = _config_table(gate, "story_configs", {p: base.story_configs.get(p, []) for p in protocols},
                                  path)
    conform_configs = _config_table(gate, "conform_configs",
                                    {p: base.conform_configs.get(p, []) for p in protocols}, path)
    profiles = _str_list(gate, "profiles", known_profiles(protocols), path)
    check_profiles(profiles, protocols, str(path))
    checkers = _str_list(gate, "checkers", base.checkers, path)
    known = checker_names()
    for c in checkers:
        if c not in known:
            raise UserError(f"{path}: unknown checker '{c}'; known: {', '.join(known)}")
    if "out" in gate and not isinstance(gate["out"], str):
        raise UserError(f"{path}: 'out' must be a directory path (a string), not {gate['out']!r}")
    out = out_dir or Path(gate.get("out", str(base.out_dir)))
    mutants = gate.get("mutants", base.mutants)
    if not isinstance(mutants, bool):
        raise UserError(f"{path}: 'mutants' must be true or false")
    mutant_checkers = _str_list(gate, "mutant_checkers", base.mutant_checkers, path)
    for c in mutant_checkers:
        if c not in known:
            raise UserError(f"{path}: unknown checker '{c}' in mutant_checkers; known: {', '.join(known)}")
    parallel = gate.get("parallel", base.parallel)
    if isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 1:
        raise UserError(f"{path}: 'parallel' must be a positive integer (cells at once)")
    options = gate.get("options", {})
    if not isinstance(options, dict):
        raise UserError(f"{path}: 'options' must be a table (e.g. conform_max_states = 200000)")
    validate_options(gate, options, str(path))
    _check_run_keys(gate, path)
    ctx = dict(base.context)
    ctx.update({k: gate[k] for k in known_keys - _STRUCTURAL if k in gate})
    if "options" in gate:
        ctx["options"] = {**base.context.get("options", {}), **options}
    values = {**{k: v for k, v in ctx.items() if k != "options"}, **ctx.get("options", {})}
    for c in dict.fromkeys([*checkers, *mutant_checkers]):  # what a selected checker needs (a Spark master)
        get_checker(c).check_selected(values, str(path))
    return GateConfig(protocols, configs, profiles, checkers, out, ctx, mutants, mutant_checkers, base.tier,
                      ci_configs, parallel, story_configs=story_configs, conform_configs=conform_configs)


def _check_run_keys(gate: dict[str, Any], path: Path) -> None:
    """The run's own numbers (a checker's are its ``Options``'): a seed, a time limit above 0."""
    if "seed" in gate:
        whole_number(gate["seed"], f"{path}: seed", 0)
    if "timeout_seconds" in gate:
        positive_number(gate["timeout_seconds"], f"{path}: timeout_seconds")


def _config_table(gate: dict[str, Any], key: str, default: dict[str, list[str]], path: Path
                  ) -> dict[str, list[str]]:
    raw = gate.get(key)
    if raw is None:
        return default
    if isinstance(raw, list) and all(isinstance(c, str) for c in raw):
        return {p: list(raw) for p in default}
    if isinstance(raw, dict) and all(isinstance(v, list) and all(isinstance(c, str) for c in v)
                                     for v in raw.values()):
        return {p: list(raw.get(p, default[p])) for p in default}
    raise UserError(f"{path}: '{key}' must be a list of config names or a table of such lists")


def _str_list(table: dict[str, Any], key: str, default: list[str], path: Path) -> list[str]:
    value = table.get(key, default)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{path}: '{key}' must be a list of strings")
    return list(value)
