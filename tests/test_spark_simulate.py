"""Random walks on Spark: deterministic per seed, violations found and written, divergences reported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rollcheck.spark.simulate import simulate
from tests.toy import PROTOCOL as TOY
from tests.toy import ToyConfig, ToySystem

pytestmark = pytest.mark.spark


def test_walks_are_deterministic_and_written(spark: Any, tmp_path: Path) -> None:
    ts = ToySystem(ToyConfig(bound=3))
    a = simulate(ts, spark, traces=40, depth=12, seed=5, out_dir=tmp_path / "a", partitions=3)
    b = simulate(ts, spark, traces=40, depth=12, seed=5, out_dir=tmp_path / "b", partitions=5)
    assert a.to_json() | {"elapsed_seconds": 0} == b.to_json() | {"elapsed_seconds": 0}
    assert a.steps == 40 * 12 and a.violations == [] and a.divergences == []
    assert 1 < a.distinct_states <= 32
    rows = spark.read.parquet(str(tmp_path / "a" / "walks.parquet")).collect()
    assert sorted(r.walk for r in rows) == list(range(40))
    assert (tmp_path / "a" / "simulate-summary.json").exists()
    # steps per action over every walk (action coverage): the toy's three actions, one count per step
    assert set(a.action_counts) <= {"IncA", "IncB", "Reset"} and sum(a.action_counts.values()) == a.steps


def test_violations_found_with_replayable_traces(spark: Any, tmp_path: Path) -> None:
    ts = TOY.variant("TOY-M1").build(ToyConfig(bound=3))
    r = simulate(ts, spark, traces=50, depth=12, seed=1, out_dir=tmp_path)
    assert r.violations and {v["property"] for v in r.violations} == {"TOY-01"}
    trace = r.violation_traces[0]
    assert trace.property_id == "TOY-01" and len(trace.steps) == r.violations[0]["step"] + 1


def test_divergence_from_another_implementation_is_reported(spark: Any, tmp_path: Path) -> None:
    # Walks of the broken system re-executed on the reference: the broken IncA steps do not re-execute.
    broken = TOY.variant("TOY-M1").build(ToyConfig(bound=3))
    r = simulate(broken, spark, traces=50, depth=12, seed=1, out_dir=tmp_path,
                 replay_system=ToySystem(ToyConfig(bound=3)))
    assert r.divergences and all(d["action"] == "IncA()" for d in r.divergences)


def test_fuzz_campaign_runs_spark_walks_beside_hypothesis(spark: Any, tmp_path: Path) -> None:
    """A fuzzing round whose Hypothesis examples miss the bug (one example of one step) is caught by the
    Spark walks run beside it; the walk's trace comes back shortened and replays on the reference."""
    from rollcheck.fuzzing.fuzz import fuzz_hypothesis, shorten, spark_walker

    ts = TOY.variant("TOY-M1").build(ToyConfig(bound=3))
    walker = spark_walker(ts, spark, walks=40, depth=12, out_dir=tmp_path)
    res = fuzz_hypothesis(ts, out_dir=tmp_path, minutes=1.0, seed=3, examples_per_round=1, steps=1, walker=walker)
    assert res.violation is not None and res.violation["found_by"] == "random walks"
    assert res.trace is not None
    states = [s.state for s in res.trace.steps]
    assert len(states) == len(set(states))  # no cycle left
    for before, after in zip(res.trace.steps, res.trace.steps[1:], strict=False):
        assert (after.action, after.state) in list(ts.successors(before.state))
    assert shorten(res.trace).steps == res.trace.steps
    assert (tmp_path / "counterexample.itf.json").is_file()


def test_guided_swarm_is_deterministic_and_its_traces_are_real(spark: Any, tmp_path: Path) -> None:
    """Guided walks fork from novel states: the same walks for a seed whatever the partitioning, every
    walk takes its full budget of its own steps, and a violating walk's trace starts at an initial state."""
    ts = ToySystem(ToyConfig(bound=3))
    a = simulate(ts, spark, traces=150, depth=6, seed=2, out_dir=tmp_path / "a", partitions=2, guided=True)
    b = simulate(ts, spark, traces=150, depth=6, seed=2, out_dir=tmp_path / "b", partitions=3, guided=True)
    assert a.to_json() | {"elapsed_seconds": 0} == b.to_json() | {"elapsed_seconds": 0}
    assert a.guided and a.steps == 150 * 6 and not a.divergences
    rows = spark.read.parquet(str(tmp_path / "a" / "walks.parquet")).collect()
    assert max(r.steps for r in rows) > 6  # some walks forked: their recorded path includes the prefix
    broken = TOY.variant("TOY-M1").build(ToyConfig(bound=3))
    r = simulate(broken, spark, traces=150, depth=6, seed=2, out_dir=tmp_path / "c", guided=True)
    assert r.violations
    for trace in r.violation_traces:
        assert trace.steps[0].state in set(broken.initial_states())
        for before, after in zip(trace.steps, trace.steps[1:], strict=False):
            assert (after.action, after.state) in list(broken.successors(before.state))
