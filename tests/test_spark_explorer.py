"""The Spark explorer against the local one: same counts, depth, violations and counterexample lengths;
resume after a kill; a task that fails once; the one-line error when Java is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rollcheck.explorer import explore
from rollcheck.registry import get_protocol, protocol_names
from rollcheck.spark.explorer import _Killed, explore_system_spark
from tests.toy import PROTOCOL as TOY
from tests.toy import ToyConfig, ToySystem

pytestmark = pytest.mark.spark


def _same(ts: Any, spark: Any, out: Path) -> None:
    r = explore_system_spark(ts, spark, out_dir=out, run_key={"test": ts.name}, stop_at_first=False)
    local = explore(ts, stop_at_first=False)
    assert (r.distinct_states, r.depth, r.generated_states, r.complete) == \
        (local.distinct_states, local.depth, local.generated_states, local.complete)
    assert r.violated_ids == local.violated_ids
    assert sorted((v.property_id, v.depth) for v in r.violations) == \
        sorted((v.property_id, v.depth) for v in local.violations)
    for v in r.violations:  # each Spark counterexample replays on the system
        for before, after in zip(v.trace.steps, v.trace.steps[1:], strict=False):
            assert (after.action, after.state) in list(ts.successors(before.state))


def test_toy_and_its_variant_equal_local(spark: Any, tmp_path: Path) -> None:
    _same(ToySystem(ToyConfig(bound=3)), spark, tmp_path / "ok")
    _same(TOY.variant("TOY-M1").build(ToyConfig(bound=3)), spark, tmp_path / "broken")


@pytest.mark.parametrize("protocol", protocol_names())
def test_registered_protocols_small_configs_equal_local(protocol: str, spark: Any, tmp_path: Path) -> None:
    entry = get_protocol(protocol)
    _same(entry.build(entry.configs["small"]), spark, tmp_path)


def test_broken_variant_shortest_counterexample_length(spark: Any, tmp_path: Path) -> None:
    entry = get_protocol("features")
    v = entry.variant("FEAT-M2")
    ts = v.build(entry.configs[v.config])
    r = explore_system_spark(ts, spark, out_dir=tmp_path, run_key={"v": v.id}, stop_at_first=True)
    local = explore(ts, stop_at_first=True)
    assert r.violations and r.violations[0].property_id in v.expect
    assert r.violations[0].depth == local.violations[0].depth


def test_killed_run_resumes_to_the_same_result(spark: Any, tmp_path: Path) -> None:
    ts = ToySystem(ToyConfig(bound=3))
    key = {"resume": 1}
    with pytest.raises(_Killed):
        explore_system_spark(ts, spark, out_dir=tmp_path, run_key=key, stop_at_first=False, stop_after_level=4)
    assert (tmp_path / "manifest.json").exists()
    resumed = explore_system_spark(ts, spark, out_dir=tmp_path, run_key=key, stop_at_first=False, resume=True)
    fresh = explore(ts, stop_at_first=False)
    assert (resumed.distinct_states, resumed.depth, resumed.generated_states) == \
        (fresh.distinct_states, fresh.depth, fresh.generated_states)
    # A manifest of another run is refused with a clear message.
    from rollcheck.errors import UserError

    with pytest.raises(UserError, match="other arguments"):
        explore_system_spark(ts, spark, out_dir=tmp_path, run_key={"other": 2}, resume=True)


class FailsOnce(ToySystem):
    """Raises in its first successor call anywhere (a marker file is shared by all Python workers)."""

    marker: str = ""

    def successors(self, s: Any) -> Any:
        if not os.path.exists(self.marker):
            Path(self.marker).write_text("failed once")
            raise RuntimeError("injected task failure")
        return super().successors(s)


def test_a_task_failing_once_gives_the_exact_result(spark: Any, tmp_path: Path) -> None:
    ts = FailsOnce(ToyConfig(bound=3))
    ts.marker = str(tmp_path / "marker")
    r = explore_system_spark(ts, spark, out_dir=tmp_path / "out", run_key={"f": 1}, stop_at_first=False)
    assert Path(ts.marker).exists()  # the failure did happen
    local = explore(ToySystem(ToyConfig(bound=3)), stop_at_first=False)
    assert (r.distinct_states, r.depth, r.generated_states) == \
        (local.distinct_states, local.depth, local.generated_states)


def test_missing_java_is_one_line_and_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java"), "PATH": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "rollcheck", "explore", "features", "--engine", "spark",
                           "--config", "small", "--out", str(tmp_path)], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Java" in lines[0] and "Traceback" not in proc.stderr
