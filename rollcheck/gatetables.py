"""The gate's result as tables that scan at a glance, shared by the console and ``report.html``.

``verdict_matrix``: one row per protocol x profile, one column per checker (every config of the row
together: the worst status and the summed seconds), and the broken variants' kills. ``run_rows``: one row
per cell with its status, states, depth, seconds, why it did not run, and the command that reruns it.
"""

from __future__ import annotations

import shlex
from typing import Any

from rollcheck.checkers import CheckerReport

# Worst first: a row shows its worst cell.
_SEVERITY = ("diverged", "error", "violated", "skipped", "ok")


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


def rerun_command(r: CheckerReport, z3_depth: int | None = None) -> str:
    """The command that runs this one cell again."""
    p = shlex.quote(r.protocol)
    where = f"--config {shlex.quote(r.config)} --profile {r.profile}"
    return {
        "explore": f"rollcheck explore {p} {where}",
        "spark": f"rollcheck explore {p} {where} --engine spark",
        "tlc": f"rollcheck tlc {p} {where}",
        "conform": f"rollcheck conform {p} {where}",
        "z3": f"rollcheck prove {p} {where}" + (f" --depth {z3_depth}" if z3_depth else ""),
        "apalache": f"rollcheck apalache {p} {where}",
        "fuzz": f"rollcheck fuzz {p} {where} --minutes 1",
    }.get(r.checker, f"rollcheck gate --protocol {p} --profile {r.profile} --checker {r.checker}")


def run_rows(reports: list[CheckerReport], z3_depth: int | None = None) -> list[list[str]]:
    rows = []
    for r in reports:
        note = r.message if r.status in ("skipped", "error", "diverged") else ""
        dead = (r.stats.get("actions") or {}).get("never_taken")
        if dead and not note:
            note = f"never taken: {', '.join(dead)}"
        rows.append([r.protocol, r.config, r.profile, r.checker, r.status,
                     f"{r.counts['distinct_states']:,}" if "distinct_states" in r.counts else "",
                     str(r.counts["depth"]) if "depth" in r.counts else "", f"{r.elapsed:.1f}", note,
                     rerun_command(r, z3_depth)])
    return rows
