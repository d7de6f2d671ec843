"""What a gate run writes under its output directory, checked before the run, and the tests it exports."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rollcheck.checkers import (
    CheckerReport,
    all_checkers,
)
from rollcheck.core.errors import UserError
from rollcheck.explore.regression import export_reports
from rollcheck.gate.config import GateConfig
from rollcheck.gate.verdict import Finding, FindingKind
from rollcheck.runtime.safefs import refuse_link

# What a gate run writes under its output directory (top-level names): its reports, and the folders its
# cells write into (the checkers' traces, Spark's, TLC's and Apalache's models, conformance, fuzzing; the broken
# variants' cells the same under mutants/). Each is checked for a planted link before a run.
GATE_REPORTS = ("summary.json", "junit.xml", "report.html")
def gate_dirs() -> tuple[str, ...]:
    """The folders: the traces, the broken variants' cells, and each registered checker's own."""
    return tuple(dict.fromkeys(["traces", "mutants", *(d for c in all_checkers() for d in c.capabilities.out_dirs)]))


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
    if first in GATE_REPORTS or first in gate_dirs() or first in (".", ".."):
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
    for name in gate_dirs():
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


def export_tests(reports: Sequence[CheckerReport], out_dir: Path, findings: list[Finding]) -> list[dict[str, Any]]:
    """``--export-tests``: a regression test per counterexample trace of every cell; a trace that cannot be
    exported is an error finding."""
    written, errors = export_reports(reports, out_dir)
    for report, message in errors:
        findings.append(Finding(FindingKind.ERROR, *report.key, f"--export-tests: {message}", report.checker))
    return [e.to_json() for e in written]
