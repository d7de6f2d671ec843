"""TLC model-checks the protocol's TLA+ spec (``specs/``) exhaustively on the same config as the other checkers;
its counterexample is replayed on the reference. A protocol without a spec gives a skipped report."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcheck.checkers.base import Capabilities, Cell, CheckerBase, CheckerOptions, Key, cell_where
from rollcheck.checkers.inputs import CellInputs, java_version
from rollcheck.checkers.report import (
    HOLDS,
    NOT_CHECKED,
    REACHED,
    VACUOUS,
    VIOLATED,
    CheckContext,
    CheckerReport,
    PropertyVerdict,
    Status,
    save_traces,
)
from rollcheck.checkers.specbinding import TLA_READS, binding_or_skip, tla_tools_problem, tlc_jar
from rollcheck.core.transition import ProtocolEntry, action_coverage
from rollcheck.runtime.rundir import run_name


@dataclass(frozen=True)
class TlcOptions(CheckerOptions):
    KEYS = (Key("tlc_witnesses", kind="switch"),)
    tlc_witnesses: bool = True


def check_tlc(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    from rollcheck.tla.binding import operator_name, write_model
    from rollcheck.tla.conformance import replay_spec_trace
    from rollcheck.tla.tlc import run_tlc

    report = CheckerReport("tlc", entry.name, label, config.profile)
    binding = binding_or_skip(entry, report)
    if binding is None:
        return report
    ts = ctx.build(entry, config)
    name = run_name(entry.name, label, config.profile, ctx.variant)
    model = write_model(binding, ts, ctx.out_dir / "tlc" / name, root=ctx.out_dir)
    res = run_tlc(model.directory, model.module, model.cfg, timeout=ctx.timeout_seconds, workers=ctx.cores,
                  coverage=True)
    report.elapsed = res.elapsed
    if res.error:
        report.status = Status.ERROR
        report.message = res.error
        return report
    violated = res.violated
    for pid in (*model.invariants, *model.properties):
        if violated == operator_name(pid):
            trace, div = replay_spec_trace(ts, res.trace, "counterexample", binding.actions)
            if trace is not None:
                trace.property_id, trace.config = pid, label
                report.properties[pid] = PropertyVerdict(pid, VIOLATED, "TLC counterexample", trace)
            else:
                report.properties[pid] = PropertyVerdict(pid, VIOLATED, f"TLC counterexample (does not replay on "
                                                         f"the reference: {div})")
        else:
            report.properties[pid] = PropertyVerdict(
                pid, NOT_CHECKED if violated else HOLDS, "TLC stopped at another violation" if violated else "")
    for pid in model.unchecked:
        report.properties[pid] = PropertyVerdict(pid, NOT_CHECKED, "graph property: explorers only")
    # TLC stops at the first violation: only a complete run is exhaustive and has comparable counts.
    report.exhaustive = violated is None
    if violated is None and res.distinct_states is not None:
        report.counts = {"distinct_states": res.distinct_states}
        # TLC counts the initial state as depth 1. With several workers its search is not level by level and
        # the depth it prints is only an upper bound (metadata_version:small: 21 with 2 workers, 19 with one,
        # as the explorers find): only a one-worker depth is compared.
        if res.depth is not None and ctx.cores == 1:
            report.counts["depth"] = res.depth - 1
        elif res.depth is not None:
            report.stats["depth_upper_bound"] = res.depth - 1
    report.stats.update({"generated_states": res.generated_states, "spec": binding.path.name,
                         "workers": ctx.cores,
                         "actions": action_coverage(entry, res.extra.get("action_counts", {}), violated is None)})
    report.status = Status.VIOLATED if violated else Status.OK
    _tlc_witnesses(report, binding, ts, model.witnesses, ctx, model.directory / "witnesses")
    save_traces(report, ts, ctx)
    return report


def _tlc_witnesses(report: CheckerReport, binding: Any, ts: Any, witnesses: tuple[str, ...], ctx: CheckContext,
                   directory: Path) -> None:
    """Each witness decided by TLC as a negated invariant (:mod:`rollcheck.tla.witness`); a broken variant's
    run checks them only when no property failed (a liveness bug shows as a story no longer reached: that is
    how TLC kills it), and ``options.tlc_witnesses = false`` skips them."""
    from rollcheck.tla.witness import check_witnesses

    if not witnesses:
        return
    killed = ctx.variant is not None and report.status == Status.VIOLATED
    if killed or not TlcOptions.read(ctx.options).tlc_witnesses:
        why = "a broken variant a property already caught" if killed else "tlc_witnesses = false"
        for pid in witnesses:
            report.properties[pid] = PropertyVerdict(pid, NOT_CHECKED, f"witness: not checked ({why})")
        return
    runs = check_witnesses(binding, ts, directory, witnesses,
                           timeout=ctx.timeout_seconds, workers=ctx.cores)
    report.elapsed += runs.elapsed
    report.stats["witness_runs"] = runs.runs
    for pid in witnesses:
        if pid in runs.reached:
            report.properties[pid] = PropertyVerdict(pid, REACHED, f"reached at depth {runs.depth(pid)}")
        elif pid in runs.vacuous:
            report.properties[pid] = PropertyVerdict(
                pid, VACUOUS, "no reachable state satisfies it: the config never tells this story")
        else:
            report.properties[pid] = PropertyVerdict(pid, NOT_CHECKED, f"witness run failed: {runs.error}")
    if runs.vacuous and report.status == Status.OK:
        report.status = Status.VIOLATED


class TlcChecker(CheckerBase):
    name = "tlc"
    description = "TLC on the TLA+ spec (exhaustive)"
    order = 50
    exhaustive = True  # when complete (a run that stops at a violation says it is not)
    module = "rollcheck.tla.tlc"
    capabilities = Capabilities(ci_configs_only=True, mutant_tiers=frozenset({"nightly"}), mutant_rank=40,
                                out_dirs=("tlc",))
    options = TlcOptions

    def tool_problem(self) -> str | None:
        return tla_tools_problem()

    def rerun(self, report: CheckerReport, values: Mapping[str, Any]) -> str:
        return f"rollcheck tlc {cell_where(report)}"

    def run(self, cell: Cell, ctx: CheckContext) -> CheckerReport:
        return check_tlc(cell.entry, cell.label, cell.config, ctx)

    deterministic = True  # a run that times out is an error: never stored

    def inputs(self, cell: Cell, ctx: CheckContext) -> CellInputs:
        # The cores: only a one-worker run's depth is compared (several workers give an upper bound).
        return self.declare(ctx, reads=TLA_READS, timeout=True, cores=True,
                            tools={"tlc": tlc_jar, "java": java_version})


CHECKER = TlcChecker()
