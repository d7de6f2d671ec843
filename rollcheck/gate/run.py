"""The CI gate: every configured protocol x config x profile through every configured checker.

Outputs (all under the output directory, written atomically): ``summary.json``, ``junit.xml`` (one test
case per property x checker x config), ``traces/`` (ITF for every counterexample) and ``report.html``.

The gate is where checkers are compared: exhaustive checkers must agree on the counts of a config, and a
property that one checker violates while an exhaustive checker says it holds is a disagreement.

Exit codes (:class:`rollcheck.core.errors.ExitCode`): 0 everything holds; 3 checkers disagreed; 1 a property
is violated (or a witness is vacuous: no reachable state tells the story it names); 2 the run itself
failed (bad config, missing Java, a checker crashed). When several apply, the first in that order wins: a
disagreement means some checker is wrong, which matters most.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from rollcheck.checkers import (
    CheckContext,
)
from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import ProtocolEntry
from rollcheck.gate.cache import CellStore
from rollcheck.gate.cellkey import CellKey
from rollcheck.gate.cellrun import CellResult, cell_cores, remember_size, run_cells
from rollcheck.gate.config import GateConfig
from rollcheck.gate.mutants import disagrees, outcomes_from, scores
from rollcheck.gate.outputs import check_outputs, export_tests, kept_names
from rollcheck.gate.plan import estimate_plan, plan_cells
from rollcheck.gate.reuse import GateCache
from rollcheck.gate.verdict import Finding, FindingKind, GateResult, findings_of, unchecked, variant_differential
from rollcheck.runtime.rundir import clear_previous_run, record_run, removable_names


def run_gate(cfg: GateConfig, progress: Callable[[str], None] | None = None,
             lookup: Callable[[str], ProtocolEntry] = get_protocol,
             warn: Callable[[str], None] | None = None) -> GateResult:
    """Run the gate; ``lookup`` finds a protocol by name (the registry; tests pass their own). With
    ``cfg.cache``, each cell is looked up in the store first (:mod:`rollcheck.gate.reuse`); ``warn`` is told each
    one-line notice about the store (summary.json lists them too)."""
    t0 = time.perf_counter()
    ctx = CheckContext.for_gate(cfg.out_dir, cfg.context)
    cells, skipped = plan_cells(cfg, lookup)
    keep = kept_names(cfg)
    plan = estimate_plan(cfg, cells)  # from the last run's timings: read before that run is cleared
    cfg.out_dir.mkdir(parents=True, exist_ok=True)
    check_outputs(cfg.out_dir, set(removable_names(cfg.out_dir, keep)))  # before anything is removed or run
    _removed, preexisting = clear_previous_run(cfg.out_dir, keep)
    notes: list[str] = []

    def note(line: str) -> None:
        notes.append(line)
        if warn is not None:
            warn(line)

    try:
        cache = _open_cache(cfg, cells, ctx, note)
        results = _run(cfg, cells, ctx, plan, cache, progress)
    except BaseException:
        # Interrupted or failed: what the cells wrote goes into the manifest, so the next gate removes it.
        record_run(cfg.out_dir, preexisting, keep)
        raise
    for row, res in zip(plan["cells"], results, strict=True):
        row["actual_seconds"] = round(res.seconds, 3)
        row["cached"] = res.report.cached is not None
    reference = [r for r in results if r.cell.variant is None]
    reports = [r.report for r in reference]
    findings = findings_of(reports) + unchecked(cfg, reports, skipped, any_cell=bool(results))
    mutants = None
    if cfg.mutants:
        # A variant's differential-only cell expects agreement (a disagreement is a finding like the
        # reference's); every other variant cell must catch the variant.
        variant_results = [r for r in results if r.cell.variant is not None]
        for r in variant_results:
            if r.cell.differential_only:
                found = findings_of([r.report])
            elif disagrees(r.report):  # a killer's own copy of the rules differs under the variant
                found = [Finding(FindingKind.DISAGREEMENT, *r.report.key, f"{r.report.checker}: {r.report.message}",
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
                   "differentials": [variant_differential(r) for r in compared]}
        for o in outcomes:
            if not o.checked:  # every cell of the variant was skipped: it neither died nor survived
                findings.append(Finding(FindingKind.NOT_CHECKED, o.protocol, o.config, "",
                                        f"mutant {o.variant} was not checked: every cell of it was skipped "
                                        f"({', '.join(names)})",
                                        ",".join(names)))
            elif not o.killed:
                findings.append(Finding(FindingKind.SURVIVOR, o.protocol, o.config, "", f"mutant {o.variant} survived "
                                        f"every checker ({', '.join(names)}): {o.story}", ",".join(names)))
    exported = None
    if cfg.export_tests is not None:  # the reference's counterexamples, then the broken variants'
        exported = export_tests([r.report for r in results], cfg.export_tests, findings)
    elapsed = time.perf_counter() - t0
    plan["actual_seconds"] = round(elapsed, 1)
    return GateResult(reports, findings, elapsed, cfg, skipped, mutants, plan, preexisting, exported,
                      cache=None if cache is None else {**cache.summary(), "notes": notes})


def _open_cache(cfg: GateConfig, cells: list[Any], ctx: CheckContext, note: Callable[[str], None]
                ) -> GateCache | None:
    if cfg.cache is None:
        return None
    store = CellStore.open(cfg.cache, note)
    return None if store is None else GateCache(store, cells, ctx, cfg.out_dir, note)


def _run(cfg: GateConfig, cells: list[Any], ctx: CheckContext, plan: dict[str, Any], cache: GateCache | None,
         progress: Callable[[str], None] | None) -> list[CellResult]:
    """Every cell's result in plan order: those the store has, then the others run (and stored as each ends)."""
    estimates = {i: r["estimated_seconds"] for i, r in enumerate(plan["cells"]) if r["estimated_seconds"]}
    if cache is None:
        return run_cells(cells, ctx, parallel=cfg.parallel, progress=progress, estimates=estimates)
    hits = cache.lookup(cfg.parallel)
    for res in (hits[i] for i in sorted(hits)):
        remember_size(ctx, res)  # a cell that reads the size of a cached one finds it
        if progress is not None:
            progress(f"{res.cell.name}: {res.report.status} (cached, run {(res.report.cached or {}).get('run')})")
    todo = [i for i in range(len(cells)) if i not in hits]
    cores = cell_cores(len(todo), cfg.parallel, ctx.cores)
    keys: list[CellKey | str] = [cache.key(cells[i], cores) for i in todo]  # before any cell runs

    def done(j: int, res: CellResult) -> None:
        cache.store_result(res, keys[j])

    ran = run_cells([cells[i] for i in todo], ctx, parallel=cfg.parallel, progress=progress,
                    estimates={j: estimates[i] for j, i in enumerate(todo) if i in estimates}, done=done)
    merged = dict(hits)
    merged.update(zip(todo, ran, strict=True))
    return [merged[i] for i in range(len(cells))]
