"""Checkers as the gate sees them: one adapter per checker, one report shape for all.

An adapter takes a protocol entry, a config (label and value) and a :class:`CheckContext`, runs its
checker, and returns a :class:`CheckerReport`: a verdict per property id, counts that other exhaustive
checkers must reproduce, and counterexample traces. The gate compares reports; adapters never do.
"""

from __future__ import annotations

import enum
import importlib
import importlib.util
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.explorer import ExplorationResult, explore
from rollcheck.rundir import run_name
from rollcheck.traces import Trace, format_trace, write_itf
from rollcheck.transition import ProtocolEntry, TransitionSystem, action_coverage


# Verdicts a checker can give a property.
class Verdict(enum.StrEnum):
    """A checker's verdict on one property (a ``str``: reports and JSON carry the value)."""

    HOLDS = "holds"            # exhaustively checked on the bounded config (or to the stated depth)
    PROVED = "proved"          # proved for every depth (induction)
    VIOLATED = "violated"      # a counterexample exists (trace attached)
    NOT_CHECKED = "not checked"
    BOUNDED = "holds up to a depth"  # a bounded (incomplete) search found no violation: the message says the depth
    UNKNOWN = "unknown"
    REACHED = "reached"        # a witness: a reachable state satisfies it (the message says the depth)
    VACUOUS = "vacuous"        # a witness no reachable state satisfies: the config never tells its story


HOLDS, PROVED, VIOLATED = Verdict.HOLDS, Verdict.PROVED, Verdict.VIOLATED
NOT_CHECKED, BOUNDED, UNKNOWN = Verdict.NOT_CHECKED, Verdict.BOUNDED, Verdict.UNKNOWN
REACHED, VACUOUS = Verdict.REACHED, Verdict.VACUOUS


@dataclass
class PropertyVerdict:
    id: str
    status: str
    message: str = ""
    trace: Trace | None = None
    trace_path: str | None = None
    trace_text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status, "message": self.message,
                "trace": self.trace_path}


@dataclass
class CheckerReport:
    checker: str
    protocol: str
    config: str
    profile: str
    # ok, violated, error, skipped; diverged: the checker's own copy of the rules (the TLA+ spec, the Z3
    # relation) and the reference take different steps somewhere (a disagreement, whatever the properties say)
    status: str = "ok"
    exhaustive: bool = False  # its "holds" means: no violation in the whole bounded state space
    properties: dict[str, PropertyVerdict] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)  # compared across exhaustive checkers
    stats: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    elapsed: float = 0.0

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.protocol, self.config, self.profile)

    def to_json(self) -> dict[str, Any]:
        return {
            "checker": self.checker, "protocol": self.protocol, "config": self.config,
            "profile": self.profile, "status": self.status, "exhaustive": self.exhaustive,
            "message": self.message, "elapsed_seconds": round(self.elapsed, 3),
            "counts": self.counts, "stats": self.stats,
            "properties": [v.to_json() for v in self.properties.values()],
        }


@dataclass
class CheckContext:
    out_dir: Path
    spark_master: str = "local[*]"
    spark_partitions: int | None = None
    hypothesis_examples: int = 100
    hypothesis_steps: int = 30
    seed: int = 0
    z3_depth: int = 8
    timeout_seconds: float = 600.0
    options: dict[str, Any] = field(default_factory=dict)
    progress: Callable[[str], None] | None = None
    variant: str | None = None  # check this broken variant instead of the reference (mutation runs)
    # z3 on a ci tier's ci config: the successor differential on every reachable state, no proofs
    differential_only: bool = False
    # z3: also compare the decision rules' Z3 formulas with the reference (SymbolicSystem.decision_differential)
    decisions: bool = True
    # Distinct states of each (protocol, config, profile, variant) the explorer finished in this run, so a
    # later checker that only needs the size (conform's limit) does not explore it again.
    known_sizes: dict[tuple[str, str, str, str | None], int] = field(default_factory=dict)
    # The cores one cell may use (explorer worker processes, TLC -workers): all of them in a sequential run,
    # a share when the gate runs cells in parallel.
    cores: int = field(default_factory=lambda: os.cpu_count() or 1)

    def build(self, entry: ProtocolEntry, config: Any) -> TransitionSystem[Any]:
        """The system every adapter checks: the reference, or the variant under test."""
        return entry.build(config) if self.variant is None else entry.variant(self.variant).system(config)

    def trace_dir(self, report: CheckerReport) -> Path:
        name = f"{report.protocol}-{report.config}-{report.profile}-{report.checker}"
        if self.variant:
            name = f"{self.variant}/{name}"
        return self.out_dir / "traces" / name


Adapter = Callable[[ProtocolEntry, str, Any, CheckContext], CheckerReport]


def save_traces(report: CheckerReport, ts: TransitionSystem[Any], ctx: CheckContext) -> None:
    """Write every counterexample of ``report`` as ITF under the output directory."""
    for verdict in report.properties.values():
        if verdict.trace is None:
            continue
        path = ctx.trace_dir(report) / f"{verdict.id}.itf.json"
        verdict.trace.config = verdict.trace.config or report.config  # so that `rollcheck replay` finds it
        write_itf(path, verdict.trace, ts, root=ctx.out_dir)
        verdict.trace_path = str(path)
        verdict.trace_text = format_trace(verdict.trace, ts)


def from_exploration(checker: str, entry: ProtocolEntry, label: str, config: Any,
                     result: ExplorationResult) -> CheckerReport:
    report = CheckerReport(checker, entry.name, label, config.profile, exhaustive=result.complete)
    by_id = {v.property_id: v for v in result.violations}
    for p in result.properties:
        v = by_id.get(p.id)
        if v:
            status, message = VIOLATED, v.description
        elif p.kind == "witness" and p.status.startswith("reached"):
            status, message = REACHED, p.status
        elif p.kind == "witness" and p.status == "vacuous":
            status, message = VACUOUS, "no reachable state satisfies it: the config never tells this story"
        elif p.kind == "witness":
            status, message = NOT_CHECKED, p.status
        elif p.status == "holds":
            status, message = HOLDS, ""
        elif p.status.startswith("holds up to"):
            status, message = BOUNDED, p.status  # "holds up to depth K": what was checked, never plain holds
        else:
            status = NOT_CHECKED
            message = ("the search stopped at another property's violation" if result.violations
                       else "the search did not cover the whole state space")
        report.properties[p.id] = PropertyVerdict(p.id, status, message, v.trace if v else None)
    report.counts = {"distinct_states": result.distinct_states, "depth": result.depth}
    report.stats = {"generated_states": result.generated_states, "complete": result.complete,
                    "levels": [lv.distinct for lv in result.levels],
                    "states_per_second": round(result.distinct_states / max(result.elapsed, 1e-9), 1),
                    "actions": action_coverage(entry, result.extra.get("action_counts", {}), result.complete)}
    report.status = VIOLATED if result.violations or result.vacuous else "ok"
    report.elapsed = result.elapsed
    return report


# --------------------------------------------------------------------------- adapters


def check_explore(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    """The local explorer: exhaustive on the bounded config, all violations collected, one worker process
    per core (the result does not depend on their number)."""
    ts = ctx.build(entry, config)
    # A broken variant needs one counterexample to die: stop there (mutation runs stay fast).
    result = explore(ts, config_name=label, stop_at_first=ctx.variant is not None, variant=ctx.variant,
                     workers=ctx.cores)
    if result.complete:
        ctx.known_sizes[(entry.name, label, config.profile, ctx.variant)] = result.distinct_states
    report = from_exploration("explore", entry, label, config, result)
    save_traces(report, ts, ctx)
    return report


# Above this many states (when the local explorer of the same run has counted them) the Spark engine is
# skipped: the gate sends every level to Spark (``options.spark_min``, default 0) to exercise the executors'
# path, which costs the local engine's time plus ~0.15 s a level on 2 cores; every gate config fits.
# ``options.spark_max_states`` changes it (0: no limit).
SPARK_MAX_STATES = 250_000


def check_spark(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    """The Spark explorer (embedded local mode by default): must reproduce the local counts exactly."""
    from rollcheck.spark.explorer import explore_spark

    limit = int(ctx.options.get("spark_max_states", SPARK_MAX_STATES))
    size = ctx.known_sizes.get((entry.name, label, config.profile, ctx.variant))
    if limit > 0 and size is not None and size > limit:
        return CheckerReport("spark", entry.name, label, config.profile, status="skipped",
                             message=f"{size} states, more than spark_max_states = {limit}: run `rollcheck explore "
                                     f"{entry.name} --config {label} --engine spark` (or raise spark_max_states)")
    name = run_name(entry.name, label, config.profile, ctx.variant)
    out = ctx.out_dir / "spark" / name
    result = explore_spark(entry.name, config, config_name=label, variant=ctx.variant,
                           master=ctx.spark_master,
                           partitions=ctx.spark_partitions, checkpoint_dir=out,
                           checkpoint_root=ctx.out_dir, resume=False, max_depth=None,
                           max_states=None, stop_at_first=ctx.variant is not None, progress=None,
                           workers=ctx.cores, spark_min=int(ctx.options.get("spark_min", 0)))
    report = from_exploration("spark", entry, label, config, result)
    save_traces(report, ctx.build(entry, config), ctx)
    return report


def check_hypothesis(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    """The Hypothesis state machine over the reference implementation (random, so never exhaustive)."""
    from hypothesis import HealthCheck, settings
    from hypothesis.stateful import run_state_machine_as_test

    from rollcheck.hypothesis_machine import PropertyViolated, machine_for

    ts = ctx.build(entry, config)
    t0 = time.perf_counter()
    report = CheckerReport("hypothesis", entry.name, label, config.profile)
    # The gate must give the same verdict on every run: derandomized, with no example database
    # (Hypothesis refuses both at once). Fuzzing campaigns use a database and a seed instead.
    run_settings = settings(max_examples=ctx.hypothesis_examples, stateful_step_count=ctx.hypothesis_steps,
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
                f"{ctx.hypothesis_examples} runs of up to {ctx.hypothesis_steps} steps" if violated is None
                else "the run stopped at another property's violation")
    report.status = VIOLATED if violated else "ok"
    report.stats = {"examples": ctx.hypothesis_examples, "steps": ctx.hypothesis_steps}
    report.elapsed = time.perf_counter() - t0
    save_traces(report, ts, ctx)
    return report


def _present(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


# name -> (adapter, module whose presence makes the checker available, one-line description)
CHECKERS: dict[str, tuple[Adapter, str, str]] = {
    "explore": (check_explore, "rollcheck.explorer", "exhaustive BFS, single process"),
    "spark": (check_spark, "rollcheck.spark.explorer", "exhaustive BFS on Apache Spark"),
    "hypothesis": (check_hypothesis, "hypothesis", "Hypothesis RuleBasedStateMachine"),
}


def _lazy(module: str, name: str) -> Adapter:
    """An adapter imported on first use: the TLA+ and Z3 adapters import this module's report types."""

    def adapter(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
        run: Adapter = getattr(importlib.import_module(module), name)
        return run(entry, label, config, ctx)

    adapter.__name__ = name
    return adapter


CHECKERS["tlc"] = (_lazy("rollcheck.checkers_tla", "check_tlc"), "rollcheck.tla.tlc",
                   "TLC on the TLA+ spec (exhaustive)")
CHECKERS["conform"] = (_lazy("rollcheck.checkers_tla", "check_conform"), "rollcheck.conformance",
                       "spec <-> reference trace conformance")
CHECKERS["apalache"] = (_lazy("rollcheck.checkers_tla", "check_apalache"), "rollcheck.tla.apalache",
                        "Apalache bounded model checking (when installed)")
CHECKERS["z3"] = (_lazy("rollcheck.smt.checker", "check_z3"), "z3", "Z3: bounded model checking and k-induction")
CHECKERS["fuzz"] = (_lazy("rollcheck.fuzz", "check_fuzz"), "hypothesis", "a fuzzing round (Hypothesis campaign)")


def available_checkers() -> list[str]:
    return [name for name, (_, module, _) in CHECKERS.items() if _present(module)]
