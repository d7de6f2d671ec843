"""The cluster scenarios in the gate (``nightly`` tier): each runbook a protocol's cluster binding lists in
``scenarios`` is performed on a real local cluster of Kafka's released jars and its observed trace validated
against the model (:mod:`rollcheck.cluster.runbook`). One cell per protocol with a cluster binding, on its first
gate config under the ``kafka`` profile (the scenarios name their own runbooks and releases); an invalid trace
fails the gate, a node that fails is an error, Java or Maven missing skips the cell with one line."""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rollcheck.checkers.base import Capabilities, Cell, CellSpec, CheckerBase, Placement
from rollcheck.checkers.inputs import CLUSTER, PROPERTIES, REFERENCE, RUNBOOKS, CellInputs
from rollcheck.checkers.report import (
    HOLDS,
    VIOLATED,
    CheckContext,
    CheckerReport,
    PropertyVerdict,
    Status,
    unavailable,
)
from rollcheck.core.errors import UserError

PROFILE = "kafka"
HEADER = ["scenario", "releases", "faults", "observations", "verdict", "seconds"]


def check_cluster(cell: Cell, ctx: CheckContext) -> CheckerReport:
    from rollcheck.cluster.runbook import binding_for, parse_fault, run_on_cluster
    from rollcheck.oracle.build import repo_root
    from rollcheck.oracle.tools import java_problem
    from rollcheck.runbook import load_runbook

    entry, label, config = cell.entry, cell.label, cell.config
    report = CheckerReport("cluster", entry.name, label, config.profile)
    if entry.cluster is None:
        report.status = Status.SKIPPED
        report.message = f"protocol {entry.name} has no cluster binding"
        return report
    problem = java_problem()
    if problem is not None:
        return unavailable(report, problem)
    try:
        binding = binding_for(entry)
    except UserError as exc:
        report.status = Status.ERROR
        report.message = str(exc)
        return report
    rows: list[list[str]] = []
    failed: list[str] = []
    for runbook, releases, faults in getattr(binding, "scenarios", ()):
        book = load_runbook(repo_root() / runbook)
        parsed = [parse_fault(f, [s.id for s in book.steps]) for f in faults]
        sid = f"{book.id}@{':'.join(releases)}" + (f"+{','.join(faults)}" if faults else "")
        try:
            plan = binding.plan(book, releases, parsed)
            run = run_on_cluster(binding, book, plan, parsed, ctx.out_dir / "cluster" / sid.replace(":", "_"),
                                 ctx.progress or (lambda _t: None))
        except UserError as exc:
            report.status = Status.ERROR
            report.message = f"{sid}: {exc}"
            rows.append([book.id, ":".join(releases), ",".join(faults), "", "error", ""])
            break
        report.elapsed += run.seconds
        ok = run.valid and (run.stalled is None or book.expected(PROFILE)[0] == "stalls")
        rows.append([book.id, ":".join(releases), ",".join(faults), str(len(run.observed)),
                     "valid" if ok else "invalid", f"{run.seconds:.0f}"])
        pid = f"cluster:{sid}"
        if ok:
            report.properties[pid] = PropertyVerdict(pid, HOLDS, f"{book.title} on Kafka {':'.join(releases)}")
        else:
            failed.append(sid)
            report.properties[pid] = PropertyVerdict(pid, VIOLATED, f"{book.title}: the observed trace is not "
                                                     f"the model's", trace_path=str(run.folder / "observed.itf.json"))
    report.stats = {"matrix": {"title": f"{entry.name}: runbooks on real clusters", "header": HEADER, "rows": rows}}
    if report.status == Status.ERROR:
        return report
    if failed:
        report.status = Status.DIVERGED
        report.message = "observed traces the model does not allow: " + ", ".join(failed)
    return report


class ClusterChecker(CheckerBase):
    name = "cluster"
    description = "runbooks performed on real local Kafka clusters, their observed traces validated (Java, Maven)"
    order = 80
    module = "rollcheck.cluster.runbook"
    capabilities = Capabilities(tiers=frozenset({"nightly"}), out_dirs=("cluster",), once_per_protocol=True,
                                profiles=frozenset({PROFILE}))

    def tool_problem(self) -> str | None:
        from rollcheck.oracle.tools import java_problem

        return java_problem()

    def cell_spec(self, placement: Placement) -> CellSpec:
        return CellSpec(settings={"tier": placement.tier or "nightly"})

    def rerun(self, report: CheckerReport, values: Mapping[str, Any]) -> str:
        return f"rollcheck runbook {shlex.quote(str(Path('runbooks') / report.protocol))}/FILE --cluster"

    def run(self, cell: Cell, ctx: CheckContext) -> CheckerReport:
        return check_cluster(cell, ctx)

    def inputs(self, cell: Cell, ctx: CheckContext) -> CellInputs:
        inputs = self.declare(ctx, reads=frozenset({REFERENCE, PROPERTIES, RUNBOOKS, CLUSTER}))
        return dataclasses.replace(inputs, deterministic=False,
                                   why_not="runbooks performed on real processes: timing decides what is observed")


CHECKER = ClusterChecker()
