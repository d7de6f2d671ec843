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
