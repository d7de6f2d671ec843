"""The gate's plan: the cells a gate config asks for, in order, and their estimated seconds."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rollcheck.checkers import (
    Checker,
    Placement,
    available_checkers,
    checker_names,
    get_checker,
)
from rollcheck.core.configs import resolve_config
from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import ProtocolEntry, replace_config
from rollcheck.gate.cellrun import Cell
from rollcheck.gate.config import GateConfig
from rollcheck.gate.mutants import mutant_cells


def plan_cells(cfg: GateConfig, lookup: Callable[[str], ProtocolEntry] = get_protocol
               ) -> tuple[list[Cell], list[dict[str, str]]]:
    """The cells the gate runs, in order (the reference's cells, then the broken variants'), and the
    checkers it cannot run here (with the reason). Each checker's ``Capabilities`` say which configs it runs
    on, and its ``cell_spec`` the settings of each of its cells."""
    present = set(available_checkers())
    known = set(checker_names())
    checkers: list[Checker] = []
    skipped: list[dict[str, str]] = []
    for name in cfg.checkers:
        if name in present:
            checkers.append(get_checker(name))
        else:
            skipped.append({"checker": name, "reason": f"{get_checker(name).description}: not available here"
                            if name in known else "unknown checker"})
    ci = cfg.tier == "ci"
    sized = [c for c in checkers if ci and c.capabilities.ci_configs_only]
    cells: list[Cell] = []
    for proto in cfg.protocols:
        entry = lookup(proto)
        full = cfg.configs.get(proto, ["default"])
        ci_configs = cfg.ci_configs.get(proto, ["small"]) if ci else []
        small = ci_configs if sized else []
        # (the ci configs of the checkers that run there whether or not a ci_configs_only one does)
        also_small = ci_configs if any(c.capabilities.ci_configs for c in checkers) else []
        stories = cfg.story_configs.get(proto, [])
        conform_only = (cfg.conform_configs.get(proto, [])
                        if any(c.capabilities.conform_configs for c in checkers) else [])

        def runs_on(checker: Checker, spec: str, full: list[str] = full, small: list[str] = small,
                    also_small: list[str] = also_small, stories: list[str] = stories,
                    conform_only: list[str] = conform_only) -> bool:
            caps = checker.capabilities
            if caps.once_per_protocol:
                return bool(full) and spec == full[0]
            if caps.conform_configs and spec in conform_only:
                return True
            if checker in sized:
                return spec in small
            if spec in stories and spec not in full and ci:
                # Exhaustive: what a story config is for; and the Z3 relation against the reference on every
                # state of the story, so a change on its path that no property looks at is a disagreement.
                return caps.ci_stories
            # The explorer also runs where TLC / Spark do, so their exhaustive counts are compared; z3 compares
            # its relation with the reference on every reachable state of the ci configs.
            return (spec in full or spec in stories or (caps.beside_ci_configs_only and spec in small)
                    or (caps.ci_configs and spec in also_small))

        profiles = [p for p in cfg.profiles if p in entry.profiles]  # a profile runs where the protocol has it
        for spec in dict.fromkeys([*full, *small, *also_small, *stories, *conform_only]):
            label, base_config = resolve_config(entry, spec)
            # A story config runs under the profiles it is valid for (a Kafka-only release: kafka alone).
            valid = entry.config_profiles(base_config) if spec in stories or spec in conform_only else profiles
            placement = Placement(cfg.tier, gate_config=spec in full, ci_config=spec in ci_configs,
                                  story=spec in stories, ci_configs_planned=bool(ci_configs))
            specs = [(c.name, c.cell_spec(placement)) for c in checkers if runs_on(c, spec)]
            for profile in (p for p in profiles if p in valid):
                config = replace_config(base_config, profile=profile)
                cells.extend(Cell(entry, label, config, name, differential_only=cs.differential_only,
                                  settings=cs.settings) for name, cs in specs
                             if _runs_under(get_checker(name), profile))
    if cfg.mutants:
        cells.extend(mutant_cells(cfg.protocols, cfg.mutant_checkers, lookup, subdir="mutants"))
        for checker in (c for c in checkers if c.capabilities.compares_under_variants):
            # Its own copy of the rules against the reference where each broken variant steps otherwise than
            # the reference (no proof: the variant's kill is another checker's), under every profile: the
            # failure branches a variant leads into and no reference config reaches are then compared too, so a
            # bug planted there is a disagreement. Where the checker also kills variants (the nightly tier's z3
            # cells do this beside their proofs under the variant's own profile), its other profiles get a
            # compare-only cell, as here.
            compared = mutant_cells(cfg.protocols, [checker.name], lookup, subdir="mutants", compare_only=True)
            own = {c.name for c in compared} if checker.name in cfg.mutant_checkers else set()
            cells.extend(c for c in under_every_profile(compared, cfg.profiles) if c.name not in own)
    return cells, skipped


def _runs_under(checker: Checker, profile: str) -> bool:
    only = checker.capabilities.profiles
    return only is None or profile in only


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


def cell_id(protocol: str, config: str, profile: str, checker: str, variant: str | None) -> str:
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
        cid = cell_id(*c.key, c.variant)
        rows.append({"id": cid, "protocol": c.entry.name, "config": c.label, "profile": c.config.profile,
                     "checker": c.checker, "variant": c.variant,
                     # the checker's own rules against the reference alone, no proofs (under a variant: it must agree)
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
