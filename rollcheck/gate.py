"""The CI gate: every configured protocol x config x profile through every configured checker.

Outputs (all under the output directory, written atomically): ``summary.json``, ``junit.xml`` (one test
case per property x checker x config), ``traces/`` (ITF for every counterexample) and ``report.html``.

The gate is where checkers are compared: exhaustive checkers must agree on the counts of a config, and a
property that one checker violates while an exhaustive checker says it holds is a disagreement.

Exit codes (:class:`rollcheck.errors.ExitCode`): 0 everything holds; 3 checkers disagreed; 1 a property
is violated; 2 the run itself failed (bad config, missing Java, a checker crashed). When several apply,
the first in that order wins: a disagreement means some checker is wrong, which matters most.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
import tomllib
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.checkers import (
    CHECKERS,
    HOLDS,
    PROVED,
    VIOLATED,
    CheckContext,
    CheckerReport,
    available_checkers,
)
from rollcheck.configs import resolve_config
from rollcheck.errors import ExitCode, UserError
from rollcheck.registry import get_protocol, protocol_names
from rollcheck.spark.session import check_master
from rollcheck.transition import PROFILES, ProtocolEntry, replace_config

DEFAULT_CHECKERS = ("explore", "spark", "hypothesis", "z3", "tlc", "conform", "apalache")


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


# The config each protocol runs in the default gate: its ``default``, except where three exhaustive engines
# (local, Spark, TLC) on it would not fit the gate's 30 minutes on 2 cores. zk_migration's ``default`` has
# 1.25M states over both profiles; ``faults`` (3 voters, failover at every phase, 295K) keeps every fault
# but the second broker. ``rollcheck explore zk_migration`` and a rollcheck.toml still run ``default``.
GATE_DEFAULT_CONFIGS: dict[str, str] = {"zk_migration": "faults"}


def default_gate_config(out_dir: Path) -> GateConfig:
    protocols = protocol_names()
    return GateConfig(protocols, {p: [GATE_DEFAULT_CONFIGS.get(p, "default")] for p in protocols}, list(PROFILES),
                      [c for c in DEFAULT_CHECKERS if c in available_checkers()], out_dir,
                      # BMC to 5 steps: metadata_version's default config takes minutes per profile at 8.
                      {"z3_depth": 5}, mutants=True)


def load_gate_config(path: Path | None, out_dir: Path | None) -> GateConfig:
    """Read ``rollcheck.toml`` (``[gate]`` table); missing keys take the defaults."""
    base = default_gate_config(out_dir or Path("rollcheck-out/gate"))
    if path is None:
        return base
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"gate config not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"malformed gate config {path}: {exc}") from None
    gate = raw.get("gate", {})
    if not isinstance(gate, dict):
        raise UserError(f"{path}: [gate] must be a table")
    known = {"protocols", "configs", "profiles", "checkers", "out", "spark_master", "spark_partitions",
             "hypothesis_examples", "hypothesis_steps", "seed", "z3_depth", "timeout_seconds", "options",
             "mutants", "mutant_checkers"}
    unknown = set(gate) - known
    if unknown:
        raise UserError(f"{path}: unknown [gate] keys {sorted(unknown)}; known: {', '.join(sorted(known))}")
    protocols = _str_list(gate, "protocols", base.protocols, path)
    for p in protocols:
        get_protocol(p)  # a clear error for an unknown protocol
    configs_raw = gate.get("configs", {})
    if isinstance(configs_raw, list):
        configs = {p: [str(c) for c in configs_raw] for p in protocols}
    elif isinstance(configs_raw, dict):
        configs = {p: [str(c) for c in configs_raw.get(p, base.configs.get(p, ["default"]))] for p in protocols}
    else:
        raise UserError(f"{path}: 'configs' must be a list or a table of lists")
    profiles = _str_list(gate, "profiles", base.profiles, path)
    for pr in profiles:
        if pr not in PROFILES:
            raise UserError(f"{path}: unknown profile '{pr}'; use {', '.join(PROFILES)}")
    checkers = _str_list(gate, "checkers", base.checkers, path)
    for c in checkers:
        if c not in CHECKERS:
            raise UserError(f"{path}: unknown checker '{c}'; known: {', '.join(CHECKERS)}")
    out = out_dir or Path(gate.get("out", str(base.out_dir)))
    mutants = gate.get("mutants", base.mutants)
    if not isinstance(mutants, bool):
        raise UserError(f"{path}: 'mutants' must be true or false")
    mutant_checkers = _str_list(gate, "mutant_checkers", base.mutant_checkers, path)
    for c in mutant_checkers:
        if c not in CHECKERS:
            raise UserError(f"{path}: unknown checker '{c}' in mutant_checkers; known: {', '.join(CHECKERS)}")
    options = gate.get("options", {})
    if not isinstance(options, dict):
        raise UserError(f"{path}: 'options' must be a table (e.g. conform_max_states = 200000)")
    ctx = {k: gate[k] for k in known - {"protocols", "configs", "profiles", "checkers", "out", "mutants",
                                         "mutant_checkers"} if k in gate}
    if "spark" in checkers or "spark" in mutant_checkers:
        master = ctx.get("spark_master", "local[*]")
        if not isinstance(master, str):
            raise UserError(f"{path}: 'spark_master' must be a string (a Spark master URL)")
        try:
            check_master(master)
        except UserError as exc:
            raise UserError(f"{path}: spark_master: {exc}") from None
    return GateConfig(protocols, configs, profiles, checkers, out, ctx, mutants, mutant_checkers)


def _str_list(table: dict[str, Any], key: str, default: list[str], path: Path) -> list[str]:
    value = table.get(key, default)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{path}: '{key}' must be a list of strings")
    return list(value)


@dataclass
class Finding:
    kind: str  # "violation", "disagreement", "error"
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

    @property
    def exit_code(self) -> ExitCode:
        kinds = {f.kind for f in self.findings}
        if "disagreement" in kinds:
            return ExitCode.DISAGREEMENT
        if "violation" in kinds or "survivor" in kinds:
            return ExitCode.VIOLATION
        if "error" in kinds:
            return ExitCode.RUN_FAILED
        return ExitCode.OK

    def to_json(self) -> dict[str, Any]:
        return {
            "exit_code": int(self.exit_code),
            "verdict": self.exit_code.name,
            "elapsed_seconds": round(self.elapsed, 2),
            "protocols": self.config.protocols,
            "profiles": self.config.profiles,
            "checkers": self.config.checkers,
            "skipped_checkers": self.skipped,
            "findings": [f.to_json() for f in self.findings],
            "reports": [r.to_json() for r in self.reports],
            "mutants": self.mutants,
        }


@dataclass(frozen=True)
class Cell:
    """One checker on one protocol x config x profile: what the gate runs, in order."""

    entry: ProtocolEntry
    label: str
    config: Any
    checker: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.entry.name, self.label, self.config.profile, self.checker)


def plan_cells(cfg: GateConfig, lookup: Callable[[str], ProtocolEntry] = get_protocol
               ) -> tuple[list[Cell], list[dict[str, str]]]:
    """The cells the gate runs, in order, and the checkers it cannot run here (with the reason)."""
    present = set(available_checkers())
    checkers: list[str] = []
    skipped: list[dict[str, str]] = []
    for name in cfg.checkers:
        if name in present:
            checkers.append(name)
        else:
            skipped.append({"checker": name, "reason": f"{CHECKERS[name][2]}: not available here"
                            if name in CHECKERS else "unknown checker"})
    cells = []
    for proto in cfg.protocols:
        entry = lookup(proto)
        for spec in cfg.configs.get(proto, ["default"]):
            label, base_config = resolve_config(entry, spec)
            for profile in cfg.profiles:
                config = replace_config(base_config, profile=profile)
                cells.extend(Cell(entry, label, config, name) for name in checkers)
    return cells, skipped


def estimate_plan(cfg: GateConfig, cells: Sequence[Cell]) -> dict[str, Any]:
    """Each cell's estimated seconds: its time in the last run's ``summary.json`` under the output
    directory (None where that run had no such cell), and the mutants' total."""
    previous: dict[tuple[str, str, str, str], float] = {}
    mutants: float | None = None
    summary = cfg.out_dir / "summary.json"
    try:
        doc = json.loads(summary.read_text(encoding="utf-8"))
        for r in doc.get("reports", []):
            previous[(r["protocol"], r["config"], r["profile"], r["checker"])] = float(r["elapsed_seconds"])
        if doc.get("mutants"):
            mutants = sum(float(k["elapsed_seconds"]) for m in doc["mutants"]["mutants"] for k in m["kills"])
    except (OSError, ValueError, KeyError, TypeError):
        doc = None
    rows = [{"protocol": c.entry.name, "config": c.label, "profile": c.config.profile, "checker": c.checker,
             "estimated_seconds": previous.get(c.key)} for c in cells]
    known = [r["estimated_seconds"] for r in rows if r["estimated_seconds"] is not None]
    return {"cells": rows, "mutants": cfg.mutants, "mutant_checkers": cfg.mutant_checkers if cfg.mutants else [],
            "mutants_estimated_seconds": mutants if cfg.mutants else None,
            "estimated_seconds": round(sum(known) + (mutants or 0), 1) if known else None,
            "unestimated_cells": len(rows) - len(known),
            "estimates_from": str(summary) if doc is not None else None}


def run_gate(cfg: GateConfig, progress: Callable[[str], None] | None = None,
             lookup: Callable[[str], ProtocolEntry] = get_protocol) -> GateResult:
    """Run the gate; ``lookup`` finds a protocol by name (the registry; tests pass their own)."""
    t0 = time.perf_counter()
    say = progress or (lambda _m: None)
    ctx = CheckContext(out_dir=cfg.out_dir, **cfg.context)
    reports: list[CheckerReport] = []
    findings: list[Finding] = []
    present = set(available_checkers())
    cells, skipped = plan_cells(cfg, lookup)
    for cell in cells:
        proto, label, profile, name = cell.key
        adapter = CHECKERS[name][0]
        say(f"{proto}/{label}/{profile}: {name}")
        t1 = time.perf_counter()
        try:
            report = adapter(cell.entry, label, cell.config, ctx)
        except UserError:
            raise
        except Exception as exc:  # a crashed checker is a finding, not the end of the gate
            report = CheckerReport(name, proto, label, profile, status="error",
                                   message=f"{type(exc).__name__}: {exc}",
                                   stats={"traceback": traceback.format_exc(limit=8)})
            report.elapsed = time.perf_counter() - t1
        reports.append(report)
    findings.extend(_findings(reports))
    mutants = None
    if cfg.mutants:
        from rollcheck.mutants import run_mutants, scores

        names = [c for c in cfg.mutant_checkers if c in present]
        outcomes = run_mutants(cfg.protocols, names, dataclasses.replace(ctx, out_dir=cfg.out_dir / "mutants"),
                               lambda m: say(f"mutants {m}"), lookup=lookup)
        mutants = {"scores": scores(outcomes), "checkers": names, "mutants": [o.to_json() for o in outcomes]}
        for o in outcomes:
            if not o.killed:
                findings.append(Finding("survivor", o.protocol, o.config, "", f"mutant {o.variant} survived "
                                        f"every checker ({', '.join(names)}): {o.story}", ",".join(names)))
    return GateResult(reports, findings, time.perf_counter() - t0, cfg, skipped, mutants)


def _findings(reports: Sequence[CheckerReport]) -> list[Finding]:
    out: list[Finding] = []
    groups: dict[tuple[str, str, str], list[CheckerReport]] = {}
    for r in reports:
        groups.setdefault(r.key, []).append(r)
        if r.status == "error":
            out.append(Finding("error", *r.key, f"{r.checker} failed: {r.message}", r.checker))
        elif r.status == "skipped":
            continue
        for v in r.properties.values():
            if v.status == VIOLATED:
                out.append(Finding("violation", *r.key, f"{v.id} violated ({r.checker}): {v.message}",
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
