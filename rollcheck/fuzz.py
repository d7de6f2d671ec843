"""Fuzzing campaigns: the Hypothesis state machine in rounds until a violation or the time budget.

The example database lives under the campaign's output directory, so a campaign started again with the
same directory first replays every failure it saved, then goes on exploring. Each round runs a fresh
batch of examples with its own seed (derived from the campaign seed and the round number), so a run
is reproducible from ``--seed`` while rounds still explore different runs. Interrupting (Ctrl-C) ends
the round in progress and still writes the summary.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.checkers import (
    HOLDS,
    NOT_CHECKED,
    VIOLATED,
    CheckContext,
    CheckerReport,
    PropertyVerdict,
    save_traces,
)
from rollcheck.traces import Trace, format_trace, write_itf, write_json_atomic
from rollcheck.transition import ProtocolEntry, TransitionSystem


@dataclass
class FuzzResult:
    protocol: str
    config: str
    seed: int
    rounds: int = 0
    examples: int = 0
    elapsed: float = 0.0
    interrupted: bool = False
    violation: dict[str, Any] | None = None
    trace: Trace | None = None
    log: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "config": self.config, "seed": self.seed, "rounds": self.rounds,
                "examples": self.examples, "elapsed_seconds": round(self.elapsed, 2),
                "interrupted": self.interrupted, "violation": self.violation, "rounds_log": self.log}


# A second engine run after each Hypothesis round: (round seed) -> a violating trace or None.
Walker = Callable[[int], Trace | None]


def fuzz_hypothesis(ts: TransitionSystem[Any], *, out_dir: Path, minutes: float, seed: int,
                    config_name: str = "", examples_per_round: int = 200, steps: int = 50,
                    progress: Callable[[FuzzResult], None] | None = None, walker: Walker | None = None,
                    max_rounds: int | None = None) -> FuzzResult:
    """Run the protocol's Hypothesis machine (and, side by side, ``walker``'s random walks, e.g. on Spark)
    until a violation, ``minutes`` elapse, ``max_rounds`` rounds ran, or Ctrl-C. Each round's seed follows
    from ``seed`` and its number, so a run bounded by rounds rather than time gives the same result on any
    machine."""
    import hypothesis.core as hcore
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.database import DirectoryBasedExampleDatabase
    from hypothesis.stateful import run_state_machine_as_test

    from rollcheck.hypothesis_machine import PropertyViolated, machine_for

    result = FuzzResult(ts.name, config_name, seed)
    db = DirectoryBasedExampleDatabase(str(out_dir / "hypothesis-db"))
    machine = machine_for(ts)
    t0 = time.perf_counter()
    deadline = t0 + minutes * 60.0
    saved_random = getattr(hcore.threadlocal, "_hypothesis_global_random", None)
    stop: KeyboardInterrupt | None = None
    # A summary from the start (0 rounds), rewritten at the end: a campaign stopped at any point, even by
    # SIGKILL, leaves one that says how far it got.
    write_json_atomic(out_dir / "fuzz-summary.json", result.to_json())
    try:
        while time.perf_counter() < deadline and (max_rounds is None or result.rounds < max_rounds):
            round_seed = seed * 1_000_003 + result.rounds
            s = settings(max_examples=examples_per_round, stateful_step_count=steps, deadline=None,
                         database=db, derandomize=False, print_blob=False,
                         suppress_health_check=list(HealthCheck),
                         phases=(Phase.reuse, Phase.generate, Phase.shrink))
            r0 = time.perf_counter()
            _seed_hypothesis(round_seed)
            try:
                run_state_machine_as_test(machine, settings=s)
            except PropertyViolated as exc:
                result.violation = {"property": exc.property_id, "message": str(exc), "found_by": "hypothesis",
                                    "round": result.rounds, "length": max(len(exc.steps) - 1, 0)}
                result.trace = Trace(exc.steps, protocol=ts.name, config=config_name,
                                     property_id=exc.property_id, description=str(exc))
            if result.violation is None and walker is not None:
                found = walker(round_seed)
                if found is not None:
                    found = shorten(found)
                    result.violation = {"property": found.property_id, "message": found.description,
                                        "found_by": "random walks", "round": result.rounds,
                                        "length": len(found.steps) - 1}
                    result.trace = found
            result.rounds += 1
            result.examples += examples_per_round
            result.log.append({"round": result.rounds, "seed": round_seed,
                               "seconds": round(time.perf_counter() - r0, 2)})
            if progress:
                progress(result)
            if result.violation:
                break
    except KeyboardInterrupt as exc:  # Ctrl-C / SIGTERM: the summary is written, then the run ends as asked
        result.interrupted = True
        stop = exc
    finally:
        # Leave Hypothesis's per-thread generator as it was: later runs in this process must not inherit
        # the campaign's seed.
        hcore.threadlocal._hypothesis_global_random = saved_random
    result.elapsed = time.perf_counter() - t0
    if result.trace is not None and result.trace.steps:
        write_itf(out_dir / "counterexample.itf.json", result.trace, ts)
        (out_dir / "counterexample.txt").write_text(format_trace(result.trace, ts) + "\n", encoding="utf-8")
    write_json_atomic(out_dir / "fuzz-summary.json", result.to_json())
    if stop is not None:
        raise stop
    return result


def _seed_hypothesis(round_seed: int) -> None:
    """Make the next non-derandomized Hypothesis run draw from ``round_seed``.

    ``run_state_machine_as_test`` builds its own ``@given`` test, so ``hypothesis.seed`` cannot reach it;
    Hypothesis then seeds from its per-thread generator, which this sets. It is private API: when it is
    gone the campaign still runs, only not reproducibly (said in the summary).
    """
    import random

    import hypothesis.core as hcore

    hcore.threadlocal._hypothesis_global_random = random.Random(round_seed)


def shorten(trace: Trace) -> Trace:
    """Shrink a random walk's counterexample by cutting every cycle (a state visited twice): the result is
    a valid trace of the same system that ends in the same violating state."""
    steps = list(trace.steps)
    out: list[Any] = []
    index: dict[Any, int] = {}
    for step in steps:
        if step.state in index:
            cut = index[step.state]
            for dropped in out[cut + 1:]:
                index.pop(dropped.state, None)
            out = out[:cut + 1]
            continue
        index[step.state] = len(out)
        out.append(step)
    return Trace(out, protocol=trace.protocol, config=trace.config, property_id=trace.property_id,
                 description=trace.description, meta=dict(trace.meta))


def spark_walker(ts: TransitionSystem[Any], spark: Any, *, walks: int, depth: int, out_dir: Path,
                 config_name: str = "") -> Walker:
    """Random walks on Spark (``rollcheck simulate``'s engine) as a fuzzing round's second engine."""
    from rollcheck.spark.simulate import simulate

    def run(round_seed: int) -> Trace | None:
        res = simulate(ts, spark, traces=walks, depth=depth, seed=round_seed, out_dir=out_dir / "walks",
                       config_name=config_name)
        return res.violation_traces[0] if res.violation_traces else None

    return run


def check_fuzz(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    """The gate's fuzzing round (the nightly tier): a Hypothesis campaign of ``options.fuzz_minutes``
    (default 1) with an example database under the output directory, so failures are replayed first."""
    minutes = float(ctx.options.get("fuzz_minutes", 1.0))
    ts = ctx.build(entry, config)
    name = f"{entry.name}-{label}-{config.profile}" + (f"-{ctx.variant}" if ctx.variant else "")
    res = fuzz_hypothesis(ts, out_dir=ctx.out_dir / "fuzz" / name, minutes=minutes, seed=ctx.seed,
                          config_name=label)
    report = CheckerReport("fuzz", entry.name, label, config.profile, exhaustive=False, elapsed=res.elapsed)
    found = res.violation["property"] if res.violation else None
    for p in ts.properties():
        if p.kind in ("graph", "witness"):
            report.properties[p.id] = PropertyVerdict(p.id, NOT_CHECKED, f"{p.kind}: exhaustive checkers only")
        elif p.id == found:
            assert res.violation is not None
            report.properties[p.id] = PropertyVerdict(p.id, VIOLATED, str(res.violation["message"]), res.trace)
        else:
            report.properties[p.id] = PropertyVerdict(
                p.id, NOT_CHECKED if found else HOLDS,
                "the campaign stopped at another property's violation" if found
                else f"{res.examples} runs in {res.rounds} rounds ({minutes:g} min)")
    report.status = VIOLATED if found else "ok"
    report.stats = {"rounds": res.rounds, "examples": res.examples, "minutes": minutes}
    save_traces(report, ts, ctx)
    return report
