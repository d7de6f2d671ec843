"""One mutant through every check, cheapest first, the first kill ending it; its verdict.

Outside the system module the decision rules run first (seconds), then the explorer on ``small``, Z3 against
the mutated reference on ``small`` and on each story config, the explorer on the larger configs, the gate's
broken variant cells, and TLC conformance. A property violated that the baseline does not violate kills the
mutant ("killed"); a broken variant no longer caught, "killed (variant)"; Z3 disagreeing, "killed (z3)"; TLC
disagreeing, "killed (conform)"; a crash (an exit other than 0/1, no JSON summary, an exception the mutated
reference raises under a differential), "killed (crash)"; a time limit or the memory budget, "timeout". A
survivor whose ``small`` distinct-state count differs from the baseline is "survived (count changed)".
"""

from __future__ import annotations

import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rollcheck.mutate.baseline import Baseline
from rollcheck.mutate.generate import CONFIG_MODULE, SYSTEM_MODULE, Mutant
from rollcheck.mutate.runner import CellResult, Runner
from rollcheck.mutate.steps import DECISIONS, Cell, cells_of, conform_cells_of, profiles_of, z3_cells_of

CELL_LIMIT = 20.0  # an explorer run's time limit, in multiples of the same run on the unmutated copy
CONFORM_AFTER_TIMEOUT = 300.0  # a conform run's time limit after an explorer run timed out, in seconds

# The step that killed the same edit at another reference, run first on ``--resume`` (resume.kill_hint).
KillHint = tuple[str, Cell]


def run_mutant(runner: Runner, mutant: Mutant, base: Baseline, timeout: float, all_cells: bool,
               conform: bool = True, z3: bool = True, variants: bool = True,
               explored: list[CellResult] | None = None, first: KillHint | None = None,
               screen: bool = False) -> dict[str, Any]:
    """One mutant through every step; with ``explored`` (``--recheck``: the explorer's runs of an earlier
    campaign whose explorer inputs are unchanged, so its verdicts stand) the explorer is not run again. With
    ``first`` (``--resume`` from a campaign at another reference, :func:`kill_hints`) the step that killed the
    same edit there runs before the others: a kill is a kill in any order, and the one that killed before
    usually kills again, so the cheaper steps ahead of it need not run. If it does not, the usual order
    follows, without that step again. With ``screen`` only the cheap steps run (a config module's domain, the
    decision rules, the explorer on small): a mutant they do not kill is "screened", no verdict."""
    t0 = time.perf_counter()
    work = runner.workdir(mutant)
    cells: list[CellResult] = []
    broken: dict[str, str] = {}  # the broken variants' verdict
    killed_by: list[dict[str, Any]] = []
    conformance: list[dict[str, str]] = []
    differential: list[dict[str, str]] = []
    protocol = mutant.protocol
    cells += explored or []

    def alive() -> bool:
        """Nothing has killed the mutant yet (and nothing stopped short: a timeout or a crash ends it)."""
        return (not killed_by and all(c.outcome in ("holds", "violated") for c in cells)
                and all(d["verdict"] == "agrees" for d in [*differential, *conformance])
                and broken.get("verdict", "caught") == "caught")

    def timed_out_only() -> bool:
        """Nothing has killed the mutant, and an explorer run stopped at its time limit or memory budget."""
        return (not killed_by and all(c.outcome in ("holds", "violated", "timeout", "incomplete") for c in cells)
                and any(c.outcome in ("timeout", "incomplete") for c in cells)
                and all(d["verdict"] == "agrees" for d in [*differential, *conformance])
                and broken.get("verdict", "caught") == "caught")

    def explore(todo: list[Cell]) -> bool:
        """The explorer on ``todo`` in turn; False once a run times out, or kills the mutant (unless
        ``all_cells``)."""
        for cell in todo:
            # No run may take more than CELL_LIMIT times its baseline (at least a minute): a mutant that blows
            # one config's state space up is a timeout there, not after the whole campaign's share of time.
            limit = max(60.0, CELL_LIMIT * base.of(cell).seconds)
            res = runner.run_cell(work, protocol, cell, min(limit, timeout - (time.perf_counter() - t0)))
            cells.append(res)
            # A property the unmutated reference violates too (none in these configs today) kills nothing.
            new = sorted(set(res.violated) - set(base.of(cell).violated))
            if res.outcome == "violated" and new:
                killed_by.append({"config": cell.config, "profile": cell.profile, "properties": new})
            if res.outcome == "timeout" or (not all_cells and (killed_by or res.outcome == "crash")):
                return False
        return True

    def differ(todo: list[Cell], cap: float | None = None) -> None:
        for cell in todo:
            left = timeout - (time.perf_counter() - t0)
            verdict, detail = runner.run_z3(work, protocol, cell, left if cap is None else min(cap, left))
            differential.append({"config": cell.config, "profile": cell.profile, "verdict": verdict,
                                 "detail": detail})
            if verdict != "agrees":
                return

    # Cheapest first, since the first kill ends a mutant: the explorer on small, then Z3 against the reference
    # on small's every state and on each story config's (seconds each, and together they kill about as many as
    # every larger config does), then the larger configs, the broken variants (minutes) and TLC.
    todo = [] if explored is not None else cells_of(protocol)
    with_z3 = z3 and runner.has_z3(protocol)
    hinted = ""
    full = not screen
    if screen and first is not None and (first[0] != "explore" or first[1].config != "small"):
        first = None  # a hint to a larger config or to Z3's walk is no cheap step

    def fresh(todo: list[Cell]) -> list[Cell]:
        """The explorer's cells not run yet (the hinted one ran first)."""
        return [c for c in todo if not any((r.config, r.profile) == (c.config, c.profile) for r in cells)]

    def unasked(todo: list[Cell]) -> list[Cell]:
        """Z3's cells not run yet."""
        return [c for c in todo if not any((d["config"], d["profile"]) == (c.config, c.profile)
                                           for d in differential)]

    try:
        if conform and Path(mutant.file).name == CONFIG_MODULE and runner.snapshot_has_spec(protocol):
            # A config module's edit is mostly to its validation, which conform's config domain compares with the
            # spec's own statement of it in one TLC run (seconds): first, ahead of minutes of explorer and Z3
            # runs that cannot see a config the named ones never are. The gate's conform cells check it too.
            cell = next(c for c in cells_of(protocol) if c.config == "small")
            verdict, detail = runner.run_conform(work, protocol, cell, timeout, domain_only=True)
            conformance.append({"config": cell.config, "profile": cell.profile, "verdict": verdict,
                                "detail": detail, "domain_only": "yes"})
        if with_z3 and alive() and Path(mutant.file).name != SYSTEM_MODULE:
            # The decision rules call the API level's code (api.py, the catalog, the releases, the config's
            # validation), not the system module: a mutant there that they catch dies in seconds, ahead of the
            # explorer and of Z3's walk of every state (whose cell runs the rules again, after the walk).
            # A resumed kill by one profile's rules runs that profile first (each is a process of seconds).
            said = first[1].profile if first is not None and first[0] == "z3" and first[1].config == DECISIONS else ""
            for profile in sorted(profiles_of(protocol), key=lambda p: p != said):
                verdict, detail = runner.run_decisions(work, protocol, profile, timeout - (time.perf_counter() - t0))
                differential.append({"config": DECISIONS, "profile": profile, "verdict": verdict, "detail": detail})
                if verdict != "agrees":
                    break
        if first is not None and alive():
            step, cell = first
            if step == "explore" and cell in todo:
                hinted = f"explore {cell.config}/{cell.profile}"
                explore([cell])
            elif step == "z3" and with_z3 and cell in z3_cells_of(protocol):
                hinted = f"z3 {cell.config}/{cell.profile}"
                differ([cell])
            elif step == "conform" and conform and runner.snapshot_has_spec(protocol) \
                    and cell in conform_cells_of(protocol):
                # A TLC conformance kill: its one cell (a minute at most) ahead of the minutes of every other step.
                hinted = f"conform {cell.config}/{cell.profile}"
                verdict, detail = runner.run_conform(work, protocol, cell, timeout - (time.perf_counter() - t0))
                conformance.append({"config": cell.config, "profile": cell.profile, "verdict": verdict,
                                    "detail": detail})
        # After a hinted kill nothing else runs (the explorer's other cells too, unless --all-cells); a hinted
        # step that timed out is the mutant's verdict, as when the usual order reaches it.
        going = explore(fresh([c for c in todo if c.config == "small"])) if alive() or all_cells else False
        if screen:
            pass  # the cheap steps alone: what survives them is run in full by --resume
        elif with_z3 and alive():
            differ(unasked([c for c in z3_cells_of(protocol) if c.config == "small"]))
        elif with_z3 and not killed_by and {c.outcome for c in cells} <= {"holds", "violated", "timeout"} and all(
                d["verdict"] == "agrees" for d in [*differential, *conformance]) \
                and broken.get("verdict", "caught") == "caught":
            # small's state space blew up (an alias of two enum members, a bound gone): the differential walks
            # the same states, but stops at the first one where Z3 steps otherwise, or a decision rule may
            # refuse the reference at once; given as long as one small run may take, so a timeout stays cheap.
            differ(unasked([c for c in z3_cells_of(protocol) if c.config == "small"]),
                   max(60.0, CELL_LIMIT * max(base.of(c).seconds for c in cells_of(protocol) if c.config == "small")))
        stories = unasked([c for c in z3_cells_of(protocol) if c.config != "small"])
        if full and with_z3 and alive() and stories:
            # A story's state space may have no end under the mutant (a fault's budget gone): Z3's encoding, which
            # the mutation did not touch, has one, so the walk stops at the first state where the two differ.
            differ(stories)
        if full and going and (alive() or all_cells):
            explore(fresh([c for c in todo if c.config != "small"]))
        if full and variants and alive():
            verdict, detail = runner.run_variants(work, protocol, timeout - (time.perf_counter() - t0), z3)
            broken = {"verdict": verdict, "detail": detail}
        # An explorer run that timed out (a bound the mutation removed: features system.py:521, the IBP roll's
        # count never incremented) ends the explorer and the variants, but not conform: its configs are small,
        # and TLC's reachable set, bounded by the spec, differs from the reference's at once. Each run is capped
        # so a mutant that blows a conformance config up too stays a cheap timeout.
        cap = None if alive() else CONFORM_AFTER_TIMEOUT
        if full and conform and runner.snapshot_has_spec(protocol) and (alive() or timed_out_only()):
            conformance.clear()  # the domain-only step agreed: the whole check runs (its domain again)
            for cell in conform_cells_of(protocol):
                left = timeout - (time.perf_counter() - t0)
                verdict, detail = runner.run_conform(work, protocol, cell, left if cap is None else min(cap, left))
                conformance.append({"config": cell.config, "profile": cell.profile, "verdict": verdict,
                                    "detail": detail})
                if verdict != "agrees":
                    break
    finally:
        shutil.rmtree(work, ignore_errors=True)
    changed = []
    for c in cells:
        before = base.of(Cell(c.config, c.profile)).distinct_states
        if c.distinct_states is not None and c.distinct_states != before:
            changed.append(f"{c.config}/{c.profile}: {before} -> {c.distinct_states}")
    small_changed = any(s.startswith("small/") for s in changed)
    if killed_by:
        status = "killed"
    elif any(c.outcome == "crash" for c in cells):
        status = "killed (crash)"
    elif broken.get("verdict") == "escaped":
        status = "killed (variant)"
    elif broken.get("verdict") == "disagrees":
        status = "killed (z3)"
    elif broken.get("verdict") == "error":
        status = "killed (crash)"
    elif any(d["verdict"] == "disagrees" for d in differential):
        status = "killed (z3)"
    elif any(d["verdict"] == "error" for d in differential):
        status = "killed (crash)"
    elif any(c["verdict"] == "disagrees" for c in conformance):
        status = "killed (conform)"
    elif any(c["verdict"] == "error" for c in conformance):
        # conform failed on the mutated copy where the baseline's agrees (a view TLC's values cannot be): the ci
        # tier's conform cell fails too, as a z3 step's error does
        status = "killed (crash)"
    elif any(c.outcome in ("timeout", "incomplete") for c in cells) or any(
            d["verdict"] == "timeout" for d in [*differential, *conformance]) or broken.get("verdict") == "timeout":
        status = "timeout"
    elif screen:
        status = "screened"
    else:
        status = "survived (count changed)" if small_changed else "survived"
    crash = next((c.detail for c in cells if c.outcome == "crash"),
                 broken["detail"] if broken.get("verdict") == "error" else
                 next((d["detail"] for d in [*differential, *conformance] if d["verdict"] == "error"), None))
    return {
        "id": mutant.id, "protocol": mutant.protocol, "operator": mutant.operator, "file": mutant.file,
        "line": mutant.line, "col": mutant.col, "before": mutant.before, "after": mutant.after,
        "function": mutant.function,
        "status": status, "seconds": round(time.perf_counter() - t0, 2), "killed_by": killed_by,
        "crash": crash, "count_changed": changed, "small_count_changed": small_changed,
        "variants": broken, "z3": differential, "conform": conformance,
        "runs": [asdict(c) | {"seconds": round(c.seconds, 2)} for c in cells],
        **({"first_step": hinted} if hinted else {}),
    }
