"""Fuzzing campaigns: the Hypothesis state machine in rounds until a violation or the time budget.

The example database lives under the campaign's output directory, so a campaign started again with the
same directory first replays every failure it saved, then goes on exploring. Each round runs a fresh
batch of examples with its own seed (derived from the campaign seed and the round number), so a run
is reproducible from ``--seed`` while rounds still explore different runs. Interrupting (Ctrl-C) ends
the round in progress and still writes the summary.

The campaign directory is kept from run to run for its example database, and only for it: a campaign
starts by removing what the last one wrote (the names in its manifest, :mod:`rollcheck.runtime.rundir`), so no
earlier run's counterexample is left beside this one's summary, and the user's other files there are never
touched. Every file a campaign writes is created without following a planted link (:mod:`rollcheck.runtime.safefs`).
A campaign whose budget ended before its first round checked nothing: its summary says ``inconclusive``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.checkers.fuzzoptions import FuzzOptions
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
from rollcheck.core.errors import UserError
from rollcheck.core.traces import Trace, format_trace, trace_to_itf, write_json_atomic, write_text_atomic
from rollcheck.core.transition import ProtocolEntry, TransitionSystem
from rollcheck.runtime.rundir import MANIFEST, clear_previous_run
from rollcheck.runtime.safefs import make_dirs, refuse_link

SUMMARY = "fuzz-summary.json"
COUNTEREXAMPLE_ITF = "counterexample.itf.json"
COUNTEREXAMPLE_TXT = "counterexample.txt"
DATABASE = "hypothesis-db"  # kept from run to run: never in the manifest, never removed
WALKS = "walks"  # the Spark random walks' output (rollcheck.spark.simulate)
_FILES = (SUMMARY, COUNTEREXAMPLE_ITF, COUNTEREXAMPLE_TXT)


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

    @property
    def inconclusive(self) -> bool:
        """Not one round ran and nothing was found: the campaign checked nothing."""
        return self.rounds == 0 and self.violation is None

    def to_json(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "config": self.config, "seed": self.seed, "rounds": self.rounds,
                "examples": self.examples, "elapsed_seconds": round(self.elapsed, 2),
                "interrupted": self.interrupted, "violation": self.violation,
                "inconclusive": self.inconclusive, "rounds_log": self.log}


def _fuzz_summary(path: Path) -> bool:
    """Is ``path`` a regular file holding a campaign's summary (as a campaign without a manifest left it)?"""
    if path.is_symlink() or not path.is_file():
        return False
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and "rounds_log" in doc and "violation" in doc


def _record(out_dir: Path, written: set[str], root: Path) -> None:
    # Written before the files it names, so that a run killed at any point leaves them listed.
    write_json_atomic(out_dir / MANIFEST, {"written": sorted(written)}, root=root)


def prepare_campaign_dir(out_dir: Path, root: Path | None = None) -> set[str]:
    """Make ``out_dir`` ready for a campaign, before any work: its directories real ones (``root``, the user's
    ``--out``, may be a link; nothing below it), the last campaign's files removed, and each path a campaign
    writes checked (a directory or a symbolic link there is one line). Returns the names this run writes
    (its manifest)."""
    root = out_dir if root is None else root
    make_dirs(out_dir, root)
    had_manifest = os.path.lexists(out_dir / MANIFEST)
    _removed, left = clear_previous_run(out_dir)
    if not had_manifest and _fuzz_summary(out_dir / SUMMARY):
        # A campaign directory written without a manifest: its counterexample files are a campaign's too.
        for name in (COUNTEREXAMPLE_ITF, COUNTEREXAMPLE_TXT):
            path = out_dir / name
            if path.is_file() or path.is_symlink():
                path.unlink()
                left.discard(name)
        walks = out_dir / WALKS
        if walks.is_dir() and not walks.is_symlink() and (walks / "simulate-summary.json").is_file():
            shutil.rmtree(walks)
            left.discard(WALKS)
    for name in _FILES:
        path = out_dir / name
        refuse_link(path)
        if path.is_dir():
            raise UserError(f"{path} is a directory: a fuzzing campaign writes a file there (remove it, or "
                            "pick another --out)")
    make_dirs(out_dir / DATABASE, root)
    # The summary is rewritten whatever stood there; the other names only when this run made them.
    written = {SUMMARY} | {n for n in (COUNTEREXAMPLE_ITF, COUNTEREXAMPLE_TXT, WALKS) if n not in left}
    _record(out_dir, written, root)
    return written


# A second engine run after each Hypothesis round: (round seed) -> a violating trace or None.
Walker = Callable[[int], Trace | None]


def fuzz_hypothesis(ts: TransitionSystem[Any], *, out_dir: Path, minutes: float, seed: int,
                    config_name: str = "", examples_per_round: int = 200, steps: int = 50,
                    progress: Callable[[FuzzResult], None] | None = None, walker: Walker | None = None,
                    max_rounds: int | None = None, root: Path | None = None,
                    written: set[str] | None = None) -> FuzzResult:
    """Run the protocol's Hypothesis machine (and, side by side, ``walker``'s random walks, e.g. on Spark)
    until a violation, ``minutes`` elapse, ``max_rounds`` rounds ran, or Ctrl-C. Each round's seed follows
    from ``seed`` and its number, so a run bounded by rounds rather than time gives the same result on any
    machine. ``root``: the user's output directory ``out_dir`` is under (default ``out_dir`` itself);
    ``written``: what :func:`prepare_campaign_dir` returned, when the caller prepared the directory."""
    import hypothesis.core as hcore
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.database import DirectoryBasedExampleDatabase
    from hypothesis.stateful import run_state_machine_as_test

    from rollcheck.fuzzing.machine import PropertyViolated, machine_for

    root = out_dir if root is None else root
    if written is None:
        written = prepare_campaign_dir(out_dir, root)
    result = FuzzResult(ts.name, config_name, seed)
    db = DirectoryBasedExampleDatabase(str(out_dir / DATABASE))
    machine = machine_for(ts)
    t0 = time.perf_counter()
    deadline = t0 + minutes * 60.0
    saved_random = getattr(hcore.threadlocal, "_hypothesis_global_random", None)
    stop: KeyboardInterrupt | None = None
    # A summary from the start (0 rounds), rewritten at the end: a campaign stopped at any point, even by
    # SIGKILL, leaves one that says how far it got.
    write_json_atomic(out_dir / SUMMARY, result.to_json(), root=root)
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
        itf, txt = out_dir / COUNTEREXAMPLE_ITF, out_dir / COUNTEREXAMPLE_TXT
        for path in (itf, txt):
            refuse_link(path)  # one planted during the run: refused, never written through
        written |= {itf.name, txt.name}
        _record(out_dir, written, root)
        write_json_atomic(itf, trace_to_itf(result.trace, ts), root=root)
        write_text_atomic(txt, format_trace(result.trace, ts) + "\n", root=root)
    refuse_link(out_dir / SUMMARY)
    write_json_atomic(out_dir / SUMMARY, result.to_json(), root=root)
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
    minutes = FuzzOptions.read(ctx.options).fuzz_minutes
    ts = ctx.build(entry, config)
    name = f"{entry.name}-{label}-{config.profile}" + (f"-{ctx.variant}" if ctx.variant else "")
    res = fuzz_hypothesis(ts, out_dir=ctx.out_dir / "fuzz" / name, minutes=minutes, seed=ctx.seed,
                          config_name=label, root=ctx.out_dir)
    report = CheckerReport("fuzz", entry.name, label, config.profile, exhaustive=False, elapsed=res.elapsed)
    report.stats = {"rounds": res.rounds, "examples": res.examples, "minutes": minutes}
    if res.inconclusive:  # the budget ended before one round: nothing was checked, nothing holds
        why = f"the budget ({minutes:g} min) ended before the first round: nothing was checked"
        report.status, report.message = Status.SKIPPED, why
        for p in ts.properties():
            report.properties[p.id] = PropertyVerdict(p.id, NOT_CHECKED, why)
        return report
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
    report.status = Status.VIOLATED if found else Status.OK
    save_traces(report, ts, ctx)
    return report
