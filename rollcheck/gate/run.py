"""The CI gate: every configured protocol x config x profile through every configured checker.

Outputs (all under the output directory, written atomically): ``summary.json``, ``junit.xml`` (one test
case per property x checker x config), ``traces/`` (ITF for every counterexample) and ``report.html``.

The gate is where checkers are compared: exhaustive checkers must agree on the counts of a config, and a
property that one checker violates while an exhaustive checker says it holds is a disagreement.

Exit codes (:class:`rollcheck.errors.ExitCode`): 0 everything holds; 3 checkers disagreed; 1 a property
is violated (or a witness is vacuous: no reachable state tells the story it names); 2 the run itself
failed (bad config, missing Java, a checker crashed). When several apply, the first in that order wins: a
disagreement means some checker is wrong, which matters most.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
import stat
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.cellrun import Cell, CellResult, run_cells
from rollcheck.checkers import (
    CHECKERS,
    HOLDS,
    PROVED,
    REACHED,
    VACUOUS,
    VIOLATED,
    CheckContext,
    CheckerReport,
    available_checkers,
)
from rollcheck.configs import resolve_config
from rollcheck.errors import ExitCode, UserError
from rollcheck.gatetables import rerun_command
from rollcheck.mutants import ALL_MUTANT_CHECKERS, disagrees, mutant_cells, outcomes_from, scores
from rollcheck.registry import check_profiles, get_protocol, known_profiles, protocol_names
from rollcheck.regression import export_reports
from rollcheck.rundir import clear_previous_run, record_run, removable_names
from rollcheck.safefs import refuse_link
from rollcheck.spark.session import check_master
from rollcheck.transition import ProtocolEntry, replace_config
from rollcheck.userinput import positive_number, read_text_input, whole_number

DEFAULT_CHECKERS = ("explore", "spark", "hypothesis", "z3", "tlc", "conform", "apalache")

# The tiers. ``ci`` (the default) is the gate a developer waits for: every protocol, each of its profiles, every
# checker kind, every broken variant, in at most 5 minutes on 2 cores. The explorer, Hypothesis and Z3 run
# on the gate configs; TLC, conformance and Spark, which cost the most per state, run on each protocol's
# ``ci_configs`` (``small``: every action and every fault of the protocol, fewer nodes or versions), where
# the explorer also runs so that the exhaustive counts are compared; the broken variants run through the
# explorer, which kills every one (the nightly tier's other checkers add no kill: a test compares them).
# ``nightly`` is the full matrix: every checker on the gate configs, every broken variant through every
# checker, and a fuzzing round per protocol x profile.
TIERS = ("ci", "nightly")
CI_SIZED_CHECKERS = ("spark", "tlc", "conform")
CI_VARIANT_STATES = 2_000
NIGHTLY_EXTRA_CHECKERS = ("fuzz",)


@dataclass
class GateConfig:
    protocols: list[str]
    configs: dict[str, list[str]]  # protocol -> config names or .toml paths
    profiles: list[str]
    checkers: list[str]
    out_dir: Path
    context: dict[str, Any] = field(default_factory=dict)
    mutants: bool = False  # also run every broken variant (the mutation matrix of the report)
    mutant_checkers: list[str] = field(default_factory=lambda: ["explore"])
    tier: str = "ci"
    # The configs the ci tier runs the CI_SIZED_CHECKERS on (protocol -> names or .toml paths).
    ci_configs: dict[str, list[str]] = field(default_factory=dict)
    parallel: int = field(default_factory=lambda: os.cpu_count() or 1)  # cells at once
    # ``--export-tests DIR``: a pytest regression test per counterexample trace (rollcheck.regression)
    export_tests: Path | None = None
    # Configs of stories the gate config does not tell (ProtocolEntry.story_configs): the explorer checks
    # them in the ci tier, every checker that runs on the gate configs in the nightly tier.
    story_configs: dict[str, list[str]] = field(default_factory=dict)
    # Configs only the conformance checker runs on (ProtocolEntry.conform_configs), in every tier.
    conform_configs: dict[str, list[str]] = field(default_factory=dict)


def default_gate_config(out_dir: Path, tier: str = "ci") -> GateConfig:
    if tier not in TIERS:
        raise UserError(f"unknown tier '{tier}'; use {' or '.join(TIERS)}")
    protocols = protocol_names()
    present = available_checkers()
    checkers = [c for c in DEFAULT_CHECKERS if c in present]
    mutant_checkers = ["explore"]
    # BMC to 5 steps: metadata_version's default config takes minutes per profile at 8 (every encoded
    # property is proved by k-induction anyway).
    context: dict[str, Any] = {"z3_depth": 5}
    if tier == "ci":
        # Under each broken variant, the first 2,000 states (breadth-first) where it steps otherwise than the
        # reference: where its failure paths start; all of them (up to 47,792 a variant) cost the gate 406
        # checker-seconds more, the nightly tier's business.
        context["options"] = {"z3_variant_states": CI_VARIANT_STATES}
    if tier == "nightly":
        checkers += [c for c in NIGHTLY_EXTRA_CHECKERS if c in present]
        mutant_checkers = [c for c in ALL_MUTANT_CHECKERS if c in present]
        context["options"] = {"fuzz_minutes": 0.5, "z3_differential_states": 0}  # every reachable state
    gate_configs = {p: [get_protocol(p).gate_config] for p in protocols}  # each protocol's registration says
    return GateConfig(protocols, gate_configs, known_profiles(protocols),
                      checkers, out_dir, context, mutants=True, mutant_checkers=mutant_checkers, tier=tier,
                      ci_configs={p: ["small"] for p in protocols},
                      story_configs={p: list(get_protocol(p).story_configs) for p in protocols},
                      conform_configs={p: list(get_protocol(p).conform_configs) for p in protocols})


GATE_KEYS = frozenset({"protocols", "configs", "profiles", "checkers", "out", "spark_master", "spark_partitions",
                       "hypothesis_examples", "hypothesis_steps", "seed", "z3_depth", "timeout_seconds", "options",
                       "mutants", "mutant_checkers", "tier", "ci_configs", "parallel", "story_configs",
                       "conform_configs"})
_STRUCTURAL = frozenset({"protocols", "configs", "profiles", "checkers", "out", "mutants", "mutant_checkers",
                         "tier", "ci_configs", "parallel", "story_configs", "conform_configs"})


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
    unknown = set(gate) - GATE_KEYS
    if unknown:
        raise UserError(f"{path}: unknown [gate] keys {sorted(unknown)}; known: {', '.join(sorted(GATE_KEYS))}")
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
    for c in checkers:
        if c not in CHECKERS:
            raise UserError(f"{path}: unknown checker '{c}'; known: {', '.join(CHECKERS)}")
    if "out" in gate and not isinstance(gate["out"], str):
        raise UserError(f"{path}: 'out' must be a directory path (a string), not {gate['out']!r}")
    out = out_dir or Path(gate.get("out", str(base.out_dir)))
    mutants = gate.get("mutants", base.mutants)
    if not isinstance(mutants, bool):
        raise UserError(f"{path}: 'mutants' must be true or false")
    mutant_checkers = _str_list(gate, "mutant_checkers", base.mutant_checkers, path)
    for c in mutant_checkers:
        if c not in CHECKERS:
            raise UserError(f"{path}: unknown checker '{c}' in mutant_checkers; known: {', '.join(CHECKERS)}")
    parallel = gate.get("parallel", base.parallel)
    if isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 1:
        raise UserError(f"{path}: 'parallel' must be a positive integer (cells at once)")
    options = gate.get("options", {})
    if not isinstance(options, dict):
        raise UserError(f"{path}: 'options' must be a table (e.g. conform_max_states = 200000)")
    _check_numbers(gate, options, path)
    ctx = dict(base.context)
    ctx.update({k: gate[k] for k in GATE_KEYS - _STRUCTURAL if k in gate})
    if "options" in gate:
        ctx["options"] = {**base.context.get("options", {}), **options}
    if "spark" in checkers or "spark" in mutant_checkers:
        master = ctx.get("spark_master", "local[*]")
        if not isinstance(master, str):
            raise UserError(f"{path}: 'spark_master' must be a string (a Spark master URL)")
        try:
            check_master(master)
        except UserError as exc:
            raise UserError(f"{path}: spark_master: {exc}") from None
    return GateConfig(protocols, configs, profiles, checkers, out, ctx, mutants, mutant_checkers, base.tier,
                      ci_configs, parallel, story_configs=story_configs, conform_configs=conform_configs)


# The numeric [gate] keys and options: (least whole value, or None for a finite number above 0). A bound
# that checks nothing (z3_depth = 0, hypothesis_examples = 0) is an error, never "holds".
_NUMBERS: dict[str, int | None] = {"z3_depth": 1, "hypothesis_examples": 1, "hypothesis_steps": 1,
                                   "spark_partitions": 1, "seed": 0, "timeout_seconds": None}
OPTIONS: dict[str, int | None] = {"conform_max_states": 0, "conform_traces": 1, "conform_depth": 1,
                                  "spark_max_states": 0, "spark_min": 0, "fuzz_minutes": None,
                                  "z3_differential_states": 0, "z3_differential_all_below": 0,
                                  "z3_variant_states": 0}
SWITCHES = ("tlc_witnesses",)  # boolean options (true / false)


def _check_numbers(gate: dict[str, Any], options: dict[str, Any], path: Path) -> None:
    unknown = set(options) - set(OPTIONS) - set(SWITCHES)
    if unknown:
        raise UserError(f"{path}: unknown options {sorted(unknown)}; known: {', '.join(sorted([*OPTIONS, *SWITCHES]))}")
    for key in SWITCHES:
        if key in options and not isinstance(options[key], bool):
            raise UserError(f"{path}: options.{key} must be true or false, not {options[key]!r}")
    for table, rules, prefix in ((gate, _NUMBERS, ""), (options, OPTIONS, "options.")):
        for key, least in rules.items():
            if key in table:
                where = f"{path}: {prefix}{key}"
                if least is None:
                    positive_number(table[key], where)
                else:
                    whole_number(table[key], where, least)


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


@dataclass
class Finding:
    kind: str  # "violation", "vacuous" (a witness never reached), "disagreement", "error", "survivor",
    #            "not_checked" (every cell of a protocol or variant skipped), "unavailable" (a tool missing)
    protocol: str
    config: str
    profile: str
    message: str
    checker: str = ""
    property_id: str = ""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class GateResult:
    reports: list[CheckerReport]
    findings: list[Finding]
    elapsed: float
    config: GateConfig
    skipped: list[dict[str, str]] = field(default_factory=list)
    mutants: dict[str, Any] | None = None  # the mutation run (scores, checkers, one row per mutant)
    plan: dict[str, Any] | None = None  # estimate_plan's, with each cell's actual seconds
    preexisting: set[str] = field(default_factory=set)  # names in the output directory the gate did not write
    exported_tests: list[dict[str, Any]] | None = None  # --export-tests: the test files written

    @property
    def exit_code(self) -> ExitCode:
        kinds = {f.kind for f in self.findings}
        if "disagreement" in kinds:
            return ExitCode.DISAGREEMENT
        if "violation" in kinds or "survivor" in kinds or "vacuous" in kinds:
            return ExitCode.VIOLATION
        if "error" in kinds:
            return ExitCode.RUN_FAILED
        if "not_checked" in kinds:
            return ExitCode.INCONCLUSIVE
        if "unavailable" in kinds:
            return ExitCode.TOOL_UNAVAILABLE
        return ExitCode.OK

    def to_json(self) -> dict[str, Any]:
        return {
            "exit_code": int(self.exit_code),
            "verdict": self.exit_code.name,
            "elapsed_seconds": round(self.elapsed, 2),
            "tier": self.config.tier,
            "protocols": self.config.protocols,
            "profiles": self.config.profiles,
            "checkers": self.config.checkers,
            "skipped_checkers": self.skipped,
            "findings": [f.to_json() for f in self.findings],
            "reports": [{**r.to_json(), "rerun": rerun_command(r, self.config.context.get("z3_depth"))}
                        for r in self.reports],
            "mutants": self.mutants,
            "plan": self.plan,
            **({"exported_tests": self.exported_tests} if self.exported_tests is not None else {}),
        }


def plan_cells(cfg: GateConfig, lookup: Callable[[str], ProtocolEntry] = get_protocol
               ) -> tuple[list[Cell], list[dict[str, str]]]:
    """The cells the gate runs, in order (the reference's cells, then the broken variants'), and the
    checkers it cannot run here (with the reason)."""
    present = set(available_checkers())
    checkers: list[str] = []
    skipped: list[dict[str, str]] = []
    for name in cfg.checkers:
        if name in present:
            checkers.append(name)
        else:
            skipped.append({"checker": name, "reason": f"{CHECKERS[name][2]}: not available here"
                            if name in CHECKERS else "unknown checker"})
    sized = [c for c in checkers if cfg.tier == "ci" and c in CI_SIZED_CHECKERS]
    cells: list[Cell] = []
    for proto in cfg.protocols:
        entry = lookup(proto)
        full = cfg.configs.get(proto, ["default"])
        ci_configs = cfg.ci_configs.get(proto, ["small"]) if cfg.tier == "ci" else []
        small = ci_configs if sized else []
        z3_small = ci_configs if "z3" in checkers else []
        stories = cfg.story_configs.get(proto, [])
        conform_only = cfg.conform_configs.get(proto, []) if "conform" in checkers else []

        def runs_on(checker: str, spec: str, full: list[str] = full, small: list[str] = small,
                    z3_small: list[str] = z3_small, stories: list[str] = stories,
                    conform_only: list[str] = conform_only) -> bool:
            if checker == "conform" and spec in conform_only:
                return True
            if checker in sized:
                return spec in small
            if spec in stories and spec not in full and cfg.tier == "ci":
                # Exhaustive: what a story config is for; and the Z3 relation against the reference on every
                # state of the story, so a change on its path that no property looks at is a disagreement.
                return checker == "explore" or checker == "z3"
            # The explorer also runs where TLC / Spark do, so their exhaustive counts are compared; z3 compares
            # its relation with the reference on every reachable state of the ci configs.
            return (spec in full or spec in stories or (checker == "explore" and spec in small)
                    or (checker == "z3" and spec in z3_small))

        profiles = [p for p in cfg.profiles if p in entry.profiles]  # a profile runs where the protocol has it
        for spec in dict.fromkeys([*full, *small, *z3_small, *stories, *conform_only]):
            label, base_config = resolve_config(entry, spec)
            # A story config runs under the profiles it is valid for (a Kafka-only release: kafka alone).
            valid = entry.config_profiles(base_config) if spec in stories or spec in conform_only else profiles
            for profile in (p for p in profiles if p in valid):
                config = replace_config(base_config, profile=profile)
                # The decision differential depends on the profile alone: with ci configs, their cells run it.
                ci_only = spec not in full and (spec in z3_small or (cfg.tier == "ci" and spec in stories))
                cells.extend(Cell(entry, label, config, name, differential_only=name == "z3" and ci_only,
                                  decisions=not z3_small or spec in z3_small)
                             for name in checkers if runs_on(name, spec))
    if cfg.mutants:
        cells.extend(mutant_cells(cfg.protocols, cfg.mutant_checkers, lookup, subdir="mutants"))
        if "z3" in checkers:
            # The Z3 relation against the reference where each broken variant steps otherwise than the
            # reference (no proof: the variant's kill is the explorer's), under every profile: the failure
            # branches a variant leads into and no reference config reaches are then compared too, so a bug
            # planted there is a disagreement. The nightly tier's z3 variant cells do this beside their proofs
            # under the variant's own profile; its other profiles get a differential-only cell, as here.
            compared = mutant_cells(cfg.protocols, ["z3"], lookup, subdir="mutants")
            own = {c.name for c in compared} if "z3" in cfg.mutant_checkers else set()
            cells.extend(dataclasses.replace(c, differential_only=True, decisions=False)
                         for c in under_every_profile(compared, cfg.profiles) if c.name not in own)
    return cells, skipped


def under_every_profile(cells: Sequence[Cell], profiles: Sequence[str]) -> list[Cell]:
    """Each broken variant's cell, then the same under every other of ``profiles`` its protocol has and its
    config validates under: the reference's code a variant leads into differs per profile (a member that can no
    longer build its subscription is reached under one profile's rules only), and no reference config reaches
    it. A variant that fixes its profile (its build replaces the config's) keeps its own cell alone."""
    out: list[Cell] = []
    for c in cells:
        out.append(c)
        assert c.variant is not None
        variant = c.entry.variant(c.variant)
        if variant.system(c.config).config.profile != c.config.profile:
            continue  # the variant runs under its own profile, whatever the config's
        for profile in c.entry.config_profiles(c.config):
            if profile == c.config.profile or profile not in profiles:
                continue
            config = replace_config(c.config, profile=profile)
            if variant.system(config).config.profile == profile:
                out.append(dataclasses.replace(c, config=config))
    return out


def _cell_id(protocol: str, config: str, profile: str, checker: str, variant: str | None) -> str:
    return "/".join((protocol, config, profile, checker) + ((variant,) if variant else ()))


_SUMMARY_BYTES = 256 << 20  # far above any gate's summary.json; a larger file is not one


def previous_timings(out_dir: Path) -> tuple[dict[str, float], str | None]:
    """Each cell's seconds in the last run's ``summary.json`` under ``out_dir`` (by cell id). A summary that
    is missing, damaged, not a regular file or a link gives no estimates, never an error: it is about to be
    replaced."""
    summary = out_dir / "summary.json"
    doc = _read_json_file(summary, _SUMMARY_BYTES)
    plan = doc.get("plan") if isinstance(doc, dict) else None
    rows = plan.get("cells") if isinstance(plan, dict) else None
    if not isinstance(rows, list):
        return {}, None
    out: dict[str, float] = {}
    for r in rows:
        seconds = r.get("actual_seconds") if isinstance(r, dict) else None
        if (isinstance(r, dict) and isinstance(r.get("id"), str) and isinstance(seconds, (int, float))
                and not isinstance(seconds, bool) and math.isfinite(seconds) and seconds >= 0):
            out[r["id"]] = float(seconds)
    return out, str(summary)


def _read_json_file(path: Path, limit: int) -> Any:
    """The JSON document in the regular file ``path`` (not through a link, not a FIFO or a device, at most
    ``limit`` bytes), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            data = fh.read(limit + 1)
    except OSError:
        return None
    if len(data) > limit:
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def estimate_plan(cfg: GateConfig, cells: Sequence[Cell]) -> dict[str, Any]:
    """Each cell's estimated seconds (its time in the last run under the output directory, None where that
    run had no such cell) and the whole plan's: the sum, and the wall time on ``cfg.parallel`` slots."""
    previous, source = previous_timings(cfg.out_dir)
    rows = []
    for c in cells:
        cid = _cell_id(*c.key, c.variant)
        rows.append({"id": cid, "protocol": c.entry.name, "config": c.label, "profile": c.config.profile,
                     "checker": c.checker, "variant": c.variant,
                     # z3 without proofs: the successor differential alone (under a variant: it must agree)
                     "differential_only": c.differential_only, "estimated_seconds": previous.get(cid)})
    known = [r["estimated_seconds"] for r in rows if r["estimated_seconds"] is not None]
    total = round(sum(known), 1) if known else None
    return {"tier": cfg.tier, "parallel": cfg.parallel, "cells": rows,
            "mutants": cfg.mutants, "mutant_checkers": cfg.mutant_checkers if cfg.mutants else [],
            "estimated_seconds": total,
            "estimated_wall_seconds": _wall(known, cfg.parallel) if known else None,
            "unestimated_cells": len(rows) - len(known), "estimates_from": source}


def _wall(seconds: Sequence[float], slots: int) -> float:
    """The wall time of running these cells longest first on ``slots`` slots (the scheduler's order)."""
    loads = [0.0] * max(1, slots)
    for s in sorted(seconds, reverse=True):
        loads[loads.index(min(loads))] += s
    return round(max(loads), 1)


def run_gate(cfg: GateConfig, progress: Callable[[str], None] | None = None,
             lookup: Callable[[str], ProtocolEntry] = get_protocol) -> GateResult:
    """Run the gate; ``lookup`` finds a protocol by name (the registry; tests pass their own)."""
    t0 = time.perf_counter()
    ctx = CheckContext(out_dir=cfg.out_dir, **cfg.context)
    cells, skipped = plan_cells(cfg, lookup)
    keep = kept_names(cfg)
    plan = estimate_plan(cfg, cells)  # from the last run's timings: read before that run is cleared
    cfg.out_dir.mkdir(parents=True, exist_ok=True)
    check_outputs(cfg.out_dir, set(removable_names(cfg.out_dir, keep)))  # before anything is removed or run
    _removed, preexisting = clear_previous_run(cfg.out_dir, keep)
    estimates = {i: r["estimated_seconds"] for i, r in enumerate(plan["cells"]) if r["estimated_seconds"]}
    try:
        results = run_cells(cells, ctx, parallel=cfg.parallel, progress=progress, estimates=estimates)
    except BaseException:
        # Interrupted or failed: what the cells wrote goes into the manifest, so the next gate removes it.
        record_run(cfg.out_dir, preexisting, keep)
        raise
    for row, res in zip(plan["cells"], results, strict=True):
        row["actual_seconds"] = round(res.seconds, 3)
    reference = [r for r in results if r.cell.variant is None]
    reports = [r.report for r in reference]
    findings = _findings(reports) + _unchecked(cfg, reports, skipped, any_cell=bool(results))
    mutants = None
    if cfg.mutants:
        # A variant's differential-only cell expects agreement (a disagreement is a finding like the
        # reference's); every other variant cell must catch the variant.
        variant_results = [r for r in results if r.cell.variant is not None]
        for r in variant_results:
            if r.cell.differential_only:
                found = _findings([r.report])
            elif disagrees(r.report):  # a killer's own copy of the rules differs under the variant
                found = [Finding("disagreement", *r.report.key, f"{r.report.checker}: {r.report.message}",
                                 r.report.checker)]
            else:
                found = []
            findings += [dataclasses.replace(f, message=f"under broken variant {r.cell.variant}: {f.message}")
                         for f in found]
        compared = [r for r in variant_results
                    if r.cell.differential_only or isinstance(r.report.stats.get("differential"), dict)]
        killers = [r for r in variant_results if not r.cell.differential_only]
        outcomes = outcomes_from(killers)
        names = list(dict.fromkeys(r.cell.checker for r in killers))
        mutants = {"scores": scores(outcomes), "checkers": names, "mutants": [o.to_json() for o in outcomes],
                   "differentials": [_variant_differential(r) for r in compared]}
        for o in outcomes:
            if not o.checked:  # every cell of the variant was skipped: it neither died nor survived
                findings.append(Finding("not_checked", o.protocol, o.config, "", f"mutant {o.variant} was not "
                                        f"checked: every cell of it was skipped ({', '.join(names)})",
                                        ",".join(names)))
            elif not o.killed:
                findings.append(Finding("survivor", o.protocol, o.config, "", f"mutant {o.variant} survived "
                                        f"every checker ({', '.join(names)}): {o.story}", ",".join(names)))
    exported = None
    if cfg.export_tests is not None:  # the reference's counterexamples, then the broken variants'
        exported = _export_tests([r.report for r in results], cfg.export_tests, findings)
    elapsed = time.perf_counter() - t0
    plan["actual_seconds"] = round(elapsed, 1)
    return GateResult(reports, findings, elapsed, cfg, skipped, mutants, plan, preexisting, exported)


def _unchecked(cfg: GateConfig, reports: Sequence[CheckerReport], skipped: Sequence[dict[str, str]], *,
               any_cell: bool) -> list[Finding]:
    """A protocol none of whose cells ran (each skipped: a tool not installed, a size limit) was not
    checked, and a gate that ran no cell at all checked nothing: neither may pass as "every property
    holds". Kind ``unavailable`` (exit 4) where only a missing tool is to blame, else ``not_checked`` (5)."""
    out: list[Finding] = []
    for proto in cfg.protocols:
        mine = [r for r in reports if r.protocol == proto]
        if mine and all(r.status == "skipped" for r in mine):
            why = "; ".join(dict.fromkeys(f"{r.checker}: {r.message}" for r in mine))
            kind = "unavailable" if all(r.stats.get("unavailable") for r in mine) else "not_checked"
            out.append(Finding(kind, proto, "", "", f"nothing was checked: every cell was skipped ({why})"))
    if not any_cell:  # (a plan of broken variants alone is judged by its variants: not_checked above)
        why = "; ".join(f"{s['checker']}: {s['reason']}" for s in skipped) or "the plan has no cell"
        out.append(Finding("unavailable" if skipped else "not_checked", ",".join(cfg.protocols), "", "",
                           f"nothing was checked: no cell ran ({why})"))
    return out


# What a gate run writes under its output directory (top-level names): its reports, and the folders its
# cells write into (the checkers' traces, Spark's, TLC's and Apalache's models, conformance, fuzzing; the broken
# variants' cells the same under mutants/). Each is checked for a planted link before a run.
GATE_REPORTS = ("summary.json", "junit.xml", "report.html")
GATE_DIRS = ("traces", "mutants", "spark", "tlc", "conform", "apalache", "fuzz")


def kept_names(cfg: GateConfig) -> frozenset[str]:
    """Top-level names under the output directory that the gate never removes nor lists as its own: the
    folder ``--export-tests`` writes into when it lies inside ``--out`` (the user's tests, kept across runs).
    A folder the gate replaces on every run, or ``--out`` itself, is refused."""
    if cfg.export_tests is None:
        return frozenset()
    try:
        rel = Path(os.path.abspath(cfg.export_tests)).relative_to(os.path.abspath(cfg.out_dir))
    except ValueError:
        return frozenset()
    if not rel.parts:
        raise UserError(f"--export-tests {cfg.export_tests}: is the gate's output directory itself, which each run "
                        "clears; give the tests a folder of their own")
    first = rel.parts[0]
    if first in GATE_REPORTS or first in GATE_DIRS or first in (".", ".."):
        raise UserError(f"--export-tests {cfg.export_tests}: lies inside {cfg.out_dir / first}, which each gate run "
                        "replaces; give the tests a folder of their own")
    return frozenset({first})


def check_outputs(out_dir: Path, removable: set[str]) -> None:
    """Refuse, before the run, what would make it write somewhere else or fail at its end: a link at any path
    the gate writes (its reports, its cells' folders and anything below them) and a directory where a report
    goes. ``removable``: names the previous run left, which are removed before this run writes."""
    for name in GATE_REPORTS:
        path = out_dir / name
        if name in removable:
            continue
        refuse_link(path)
        if path.is_dir():
            raise UserError(f"{path} is a directory where the gate writes its {name}: remove it or pick another --out")
    for name in GATE_DIRS:
        path = out_dir / name
        if name in removable:
            continue
        refuse_link(path)
        if os.path.lexists(path) and not path.is_dir():
            raise UserError(f"{path} exists and is not a directory (the gate's {name} go there): remove it or pick "
                            "another --out")
        for root, dirs, files in os.walk(path):  # a folder kept from before: nothing below it may be a link
            for entry in (*dirs, *files):
                refuse_link(Path(root) / entry)


def _export_tests(reports: Sequence[CheckerReport], out_dir: Path, findings: list[Finding]) -> list[dict[str, Any]]:
    """``--export-tests``: a regression test per counterexample trace of every cell; a trace that cannot be
    exported is an error finding."""
    written, errors = export_reports(reports, out_dir)
    for report, message in errors:
        findings.append(Finding("error", *report.key, f"--export-tests: {message}", report.checker))
    return [e.to_json() for e in written]


def _variant_differential(res: CellResult) -> dict[str, Any]:
    """The Z3 relation against the reference under one variant, as the report's mutation section lists it:
    ``agrees`` when compared without a difference (a skipped cell, an encoding that does not cover the
    variant's config, compared nothing)."""
    r, diff = res.report, res.report.stats.get("differential") or {}
    agrees = bool(diff) and diff.get("mismatch") is None and r.status not in ("error", "diverged")
    return {"protocol": r.protocol, "variant": res.cell.variant, "config": r.config, "profile": r.profile,
            "checker": r.checker, "status": r.status, "agrees": agrees, "message": r.message,
            "states": diff.get("states"),
            "variant_states": diff.get("variant_states"), "complete": diff.get("every_reachable_state"),
            "seconds": round(res.seconds, 2)}


def _findings(reports: Sequence[CheckerReport]) -> list[Finding]:
    out: list[Finding] = []
    groups: dict[tuple[str, str, str], list[CheckerReport]] = {}
    for r in reports:
        groups.setdefault(r.key, []).append(r)
        if r.status == "error":
            out.append(Finding("error", *r.key, f"{r.checker} failed: {r.message}", r.checker))
        elif r.status == "diverged":
            out.append(Finding("disagreement", *r.key, f"{r.checker}: {r.message}", r.checker))
        elif r.status == "skipped":
            continue
        for v in r.properties.values():
            if v.status == VIOLATED:
                out.append(Finding("violation", *r.key, f"{v.id} violated ({r.checker}): {v.message}",
                                   r.checker, v.id))
            elif v.status == VACUOUS:
                out.append(Finding("vacuous", *r.key, f"{v.id} never reached ({r.checker}): {v.message}",
                                   r.checker, v.id))
    for (proto, conf, prof), group in groups.items():
        exhaustive = [r for r in group if r.exhaustive and r.status != "error"]
        # Exhaustive checkers must find the same counts.
        for a, b in itertools.pairwise(exhaustive):
            for k in set(a.counts) & set(b.counts):
                if a.counts[k] != b.counts[k]:
                    out.append(Finding("disagreement", proto, conf, prof,
                                       f"{k}: {a.checker} found {a.counts[k]}, "
                                       f"{b.checker} found {b.counts[k]}",
                                       f"{a.checker}/{b.checker}"))
        # The same reachable graph has the same dead actions (declared, never taken), whichever engine walked it.
        dead: list[tuple[str, list[str]]] = [
            (r.checker, r.stats["actions"]["never_taken"]) for r in exhaustive
            if isinstance(r.stats.get("actions"), dict) and r.stats["actions"].get("never_taken") is not None]
        for (first, first_dead), (second, second_dead) in itertools.pairwise(dead):
            if sorted(first_dead) != sorted(second_dead):
                out.append(Finding("disagreement", proto, conf, prof,
                                   f"actions never taken: {first} says {', '.join(first_dead) or 'none'}, "
                                   f"{second} says {', '.join(second_dead) or 'none'}", f"{first}/{second}"))
        # A witness one exhaustive checker reached and another says no reachable state satisfies.
        for r in exhaustive:
            for v in r.properties.values():
                if v.status != VACUOUS:
                    continue
                for e in exhaustive:
                    ev = e.properties.get(v.id)
                    if ev is not None and ev.status == REACHED:
                        out.append(Finding("disagreement", proto, conf, prof,
                                           f"{v.id}: {e.checker} reached the witness ({ev.message}), {r.checker} "
                                           "says no reachable state satisfies it", f"{e.checker}/{r.checker}", v.id))
        # A violation that an exhaustive (or proving) checker says cannot happen.
        for r in group:
            for v in r.properties.values():
                if v.status != VIOLATED:
                    continue
                for e in group:
                    ev = e.properties.get(v.id)
                    if ev is None or e is r:
                        continue
                    if (e.exhaustive and ev.status == HOLDS) or ev.status == PROVED:
                        out.append(Finding("disagreement", proto, conf, prof,
                                           f"{v.id}: {r.checker} found a violation, {e.checker} says "
                                           f"{ev.status}", f"{r.checker}/{e.checker}", v.id))
    return out
