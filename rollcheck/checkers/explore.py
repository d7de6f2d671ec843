"""The local explorer: exhaustive on the bounded config, every violation collected, one worker process per core
(the result does not depend on their number). Its complete count sizes the cell for the checkers that read it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollcheck.checkers.base import Capabilities, Cell, CheckerBase, cell_where, reusable
from rollcheck.checkers.inputs import PROPERTIES, REFERENCE, SPEC, CellInputs
from rollcheck.checkers.report import CheckContext, CheckerReport, Status, from_exploration, save_traces
from rollcheck.core.transition import ProtocolEntry


def check_explore(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    from rollcheck.explore.explorer import ExploreOptions, explore

    ts = ctx.build(entry, config)
    # A broken variant needs one counterexample to die: stop there (mutation runs stay fast).
    result = explore(ts, ExploreOptions(config_name=label, stop_at_first=ctx.variant is not None,
                                        variant=ctx.variant, workers=ctx.cores))
    if result.complete:
        ctx.known_sizes[(entry.name, label, config.profile, ctx.variant)] = result.distinct_states
    report = from_exploration("explore", entry, label, config, result)
    save_traces(report, ts, ctx)
    return report


class ExploreChecker(CheckerBase):
    name = "explore"
    description = "exhaustive BFS (worker processes)"
    order = 10
    exhaustive = True
    module = "rollcheck.explore.explorer"
    # On the ci configs beside TLC, conformance and Spark, so that their exhaustive counts are compared; it
    # kills every broken variant, the ci tier's whole mutation run.
    capabilities = Capabilities(beside_ci_configs_only=True, ci_stories=True, sizes_cells=True,
                                mutant_tiers=frozenset({"ci", "nightly"}), mutant_rank=10)

    def rerun(self, report: CheckerReport, values: Mapping[str, Any]) -> str:
        return f"rollcheck explore {cell_where(report)}"

    def run(self, cell: Cell, ctx: CheckContext) -> CheckerReport:
        return check_explore(cell.entry, cell.label, cell.config, ctx)

    deterministic = True  # breadth-first: the same states, counts and shortest traces whatever the workers

    def inputs(self, cell: Cell, ctx: CheckContext) -> CellInputs:
        # The reference and its properties; the spec binding's list of actions (action coverage).
        return self.declare(ctx, reads=EXPLORER_READS)

    def cacheable(self, report: CheckerReport) -> bool:
        return complete_or_violated(report)


EXPLORER_READS = frozenset({REFERENCE, PROPERTIES, SPEC})


def complete_or_violated(report: CheckerReport) -> bool:
    """An exploration's result is reproducible when it searched the whole space or stopped at a violation; one
    a memory budget cut short depends on the machine."""
    return reusable(report) and (report.exhaustive or report.status == Status.VIOLATED)


CHECKER = ExploreChecker()
