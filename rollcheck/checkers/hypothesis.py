"""The Hypothesis state machine over the reference implementation (random, so never exhaustive)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rollcheck.checkers.base import Capabilities, Cell, CheckerBase, CheckerOptions, Key
from rollcheck.checkers.inputs import PROPERTIES, REFERENCE, CellInputs, package_version
from rollcheck.checkers.report import (
    HOLDS,
    NOT_CHECKED,
    VIOLATED,
    CheckContext,
    CheckerReport,
    PropertyVerdict,
    Status,
    save_traces,
)
from rollcheck.core.traces import Trace
from rollcheck.core.transition import ProtocolEntry


@dataclass(frozen=True)
class HypothesisOptions(CheckerOptions):
    KEYS = (Key("hypothesis_examples", "gate", least=1), Key("hypothesis_steps", "gate", least=1))
    hypothesis_examples: int = 100
    hypothesis_steps: int = 30


def check_hypothesis(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    from hypothesis import HealthCheck, settings
    from hypothesis.stateful import run_state_machine_as_test

    from rollcheck.fuzzing.machine import PropertyViolated, machine_for

    opts = HypothesisOptions.read(ctx.options)
    examples, steps = opts.hypothesis_examples, opts.hypothesis_steps
    ts = ctx.build(entry, config)
    t0 = time.perf_counter()
    report = CheckerReport("hypothesis", entry.name, label, config.profile)
    # The gate must give the same verdict on every run: derandomized, with no example database
    # (Hypothesis refuses both at once). Fuzzing campaigns use a database and a seed instead.
    run_settings = settings(max_examples=examples, stateful_step_count=steps,
                            deadline=None, database=None, derandomize=True,
                            suppress_health_check=list(HealthCheck), print_blob=False)
    violated: PropertyViolated | None = None
    try:
        run_state_machine_as_test(machine_for(ts), settings=run_settings)
    except PropertyViolated as exc:
        violated = exc
    for p in ts.properties():
        if p.kind in ("graph", "witness"):
            report.properties[p.id] = PropertyVerdict(p.id, NOT_CHECKED, f"{p.kind}: exhaustive checkers only")
        elif violated is not None and violated.property_id == p.id:
            trace = Trace(violated.steps, protocol=entry.name, config=label, property_id=p.id,
                          description=p.description) if violated.steps else None
            report.properties[p.id] = PropertyVerdict(p.id, VIOLATED, str(violated), trace)
        else:
            report.properties[p.id] = PropertyVerdict(
                p.id, HOLDS if violated is None else NOT_CHECKED,
                f"{examples} runs of up to {steps} steps" if violated is None
                else "the run stopped at another property's violation")
    report.status = Status.VIOLATED if violated else Status.OK
    report.stats = {"examples": examples, "steps": steps}
    report.elapsed = time.perf_counter() - t0
    save_traces(report, ts, ctx)
    return report


class HypothesisChecker(CheckerBase):
    name = "hypothesis"
    description = "Hypothesis RuleBasedStateMachine"
    order = 30
    module = "hypothesis"
    capabilities = Capabilities(mutant_tiers=frozenset({"nightly"}), mutant_rank=20)
    options = HypothesisOptions

    def run(self, cell: Cell, ctx: CheckContext) -> CheckerReport:
        return check_hypothesis(cell.entry, cell.label, cell.config, ctx)

    deterministic = True  # derandomized, no example database: the same examples on every run of one version

    def inputs(self, cell: Cell, ctx: CheckContext) -> CellInputs:
        return self.declare(ctx, reads=frozenset({REFERENCE, PROPERTIES}),
                            tools={"hypothesis": package_version("hypothesis")})


CHECKER = HypothesisChecker()
