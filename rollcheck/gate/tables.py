"""The gate's result as tables that scan at a glance, shared by the console and ``report.html``.

``verdict_matrix``: one row per protocol x profile, one column per checker (every config of the row
together: the worst status and the summed seconds), and the broken variants' kills. ``run_rows``: one row
per cell with its status, states, depth, seconds, why it did not run, and the command that reruns it.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from rollcheck.checkers import CheckerReport, Status, get_checker
from rollcheck.core.errors import UserError

# Worst first: a row shows its worst cell.
_SEVERITY = (Status.DIVERGED, Status.ERROR, Status.VIOLATED, Status.SKIPPED, Status.OK)


def _worst(statuses: list[str]) -> str:
    return min(statuses, key=lambda s: _SEVERITY.index(s) if s in _SEVERITY else len(_SEVERITY))


def verdict_matrix(reports: list[CheckerReport], mutants: dict[str, Any] | None
                   ) -> tuple[list[str], list[list[str]]]:
    """Header and rows: protocol, profile, then per checker 'status seconds', then the variants killed."""
    checkers = list(dict.fromkeys(r.checker for r in reports))
    cells: dict[tuple[str, str], dict[str, list[CheckerReport]]] = {}
    for r in reports:
        cells.setdefault((r.protocol, r.profile), {}).setdefault(r.checker, []).append(r)
    killed: dict[str, tuple[int, int]] = {}
    for m in (mutants or {}).get("mutants", []):
        k, n = killed.get(m["protocol"], (0, 0))
        killed[m["protocol"]] = (k + int(bool(m["killed"])), n + 1)
    header = ["protocol", "profile", *checkers] + (["variants killed"] if mutants else [])
    rows = []
    for (proto, profile), by_checker in cells.items():
        row = [proto, profile]
        for c in checkers:
            runs = by_checker.get(c, [])
            row.append(f"{_worst([r.status for r in runs])} {sum(r.elapsed for r in runs):.0f}s" if runs else "")
        if mutants:
            k, n = killed.get(proto, (0, 0))
            row.append(f"{k}/{n}")
        rows.append(row)
    return header, rows


def variant_differential_line(mutants: dict[str, Any] | None) -> str:
    """One line on the Z3 relation against the reference under each broken variant (empty: none ran)."""
    rows = (mutants or {}).get("differentials") or []
    if not rows:
        return ""
    agree = [r for r in rows if r["agrees"]]
    other = [f"{r['variant']} {r['status']}" for r in rows if not r["agrees"]]
    compared = sum(r["states"] or 0 for r in agree)
    return (f"Z3 relation vs reference where each broken variant steps otherwise: {len(agree)} of {len(rows)} "
            f"variants agree on {compared} states" + (f"; {', '.join(other)}" if other else ""))


RUN_HEADER = ("protocol", "config", "profile", "checker", "status", "states", "depth", "seconds", "note",
              "rerun")


def rerun_command(r: CheckerReport, values: Mapping[str, Any] | None = None) -> str:
    """The command that runs this one cell again (its checker's, else the gate's for that checker alone);
    ``values``: the gate config's context (its [gate] keys and options), which a checker's command may read."""
    try:
        own = get_checker(r.checker).rerun(r, values or {})
    except UserError:  # a report of a checker not registered here
        own = None
    return own or (f"rollcheck gate --protocol {shlex.quote(r.protocol)} --profile {r.profile} "
                   f"--checker {r.checker}")


def cached_note(r: CheckerReport) -> str:
    """Where a result served from the store came from ("" for a cell that ran)."""
    if r.cached is None:
        return ""
    c = r.cached
    return (f"cached: run {c.get('run')} at {c.get('time')}" + (f", commit {c['commit']}" if c.get("commit") else "")
            + (f", {c['seconds']:.1f} s then" if isinstance(c.get("seconds"), (int, float)) else ""))


def run_rows(reports: list[CheckerReport], values: Mapping[str, Any] | None = None) -> list[list[str]]:
    rows = []
    for r in reports:
        note = r.message if r.status in (Status.SKIPPED, Status.ERROR, Status.DIVERGED) else ""
        dead = (r.stats.get("actions") or {}).get("never_taken")
        if dead and not note:
            note = f"never taken: {', '.join(dead)}"
        note = "; ".join(filter(None, [cached_note(r), note]))
        status = f"{r.status} (cached)" if r.cached is not None else str(r.status)
        rows.append([r.protocol, r.config, r.profile, r.checker, status,
                     f"{r.counts['distinct_states']:,}" if "distinct_states" in r.counts else "",
                     str(r.counts["depth"]) if "depth" in r.counts else "", f"{r.elapsed:.1f}", note,
                     rerun_command(r, values)])
    return rows
