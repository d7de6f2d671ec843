"""A protocol's baseline: every check a mutant may meet, on the unmutated copy. Each must hold or agree (else
nothing it says of a mutant means anything); their counts are what a mutant's are compared with, and their
total time sets the per-mutant time limit."""

from __future__ import annotations

import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from rollcheck.mutate.runner import CellResult, Runner
from rollcheck.mutate.steps import Cell, cells_of, conform_cells_of, profiles_of, z3_cells_of


@dataclass
class Baseline:
    protocol: str
    cells: list[CellResult]
    seconds: float
    imports: dict[str, str]

    def of(self, cell: Cell) -> CellResult:
        return next(c for c in self.cells if (c.config, c.profile) == (cell.config, cell.profile))


def run_baseline(runner: Runner, protocol: str, timeout: float, conform: bool = True, z3: bool = True,
                 variants: bool = True, explored: list[CellResult] | None = None, jobs: int = 1,
                 screen: bool = False) -> Baseline:
    """Every run a mutant may need, on the unmutated copy: the explorer's cells, the broken variants (each
    caught), then Z3 and TLC under each profile, which must agree with the reference (else nothing they say of
    a mutant means anything). Their total time sets the per-mutant limit, so a survivor that goes through every
    step is not cut short. ``jobs``: the explorer's cells and Z3's run that many at a time (each writes its own
    directory under the copy's ``out``; a baseline took 11 minutes on one core of two while the other idled);
    the variants' gate and TLC, which share the copy's working files, run one at a time. ``screen``: what a
    screen runs (the explorer on small, the decision rules, the config domain), minutes less."""
    work = runner.workdir(None)
    cells = [c for c in cells_of(protocol) if c.config == "small" or not screen]
    try:
        imports = runner.import_check(work, protocol)
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            results = explored if explored is not None else list(pool.map(
                lambda cell: runner.run_cell(work, protocol, cell, timeout), cells))
            bad = [f"{r.config}/{r.profile}: {r.outcome} {r.detail}" for r in results
                   if r.outcome not in ("holds", "violated")]
            if variants and not screen:
                verdict, detail = runner.run_variants(work, protocol, timeout, z3)
                if verdict != "caught":
                    bad.append(f"variants: {verdict} {detail}")
            if screen and z3 and runner.has_z3(protocol):
                for profile in profiles_of(protocol):
                    verdict, detail = runner.run_decisions(work, protocol, profile, timeout)
                    if verdict != "agrees":
                        bad.append(f"decisions {profile}: {verdict} {detail}")
            z3_cells = z3_cells_of(protocol) if z3 and runner.has_z3(protocol) and not screen else []
            for cell, (verdict, detail) in zip(z3_cells, pool.map(
                    lambda cell: runner.run_z3(work, protocol, cell, timeout), z3_cells), strict=True):
                if verdict != "agrees":
                    bad.append(f"z3 {cell.config}/{cell.profile}: {verdict} {detail}")
        conform_cells = conform_cells_of(protocol) if conform and runner.snapshot_has_spec(protocol) else []
        # A screen meets conform only as its config domain (small's first profile, as a config module's mutant does).
        for cell in conform_cells[:1] if screen else conform_cells:
            verdict, detail = runner.run_conform(work, protocol, cell, timeout, domain_only=screen)
            if verdict != "agrees":
                bad.append(f"conform {cell.config}/{cell.profile}: {verdict} {detail}")
        if bad:
            raise RuntimeError(f"baseline of {protocol} failed: " + "; ".join(bad))
        return Baseline(protocol, results, time.perf_counter() - t0, imports)
    finally:
        shutil.rmtree(work, ignore_errors=True)
