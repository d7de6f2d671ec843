"""The Spark engine against the local one: the same counts, verdicts and counterexamples whether every
level, none or some go to the executors; resume; a task that fails once; the one-line error when Java is
missing. (A real standalone cluster with a killed worker: ``test_spark_cluster.py``.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rollcheck.core.registry import get_protocol, protocol_names
from rollcheck.explore.explorer import ExplorationResult, ExploreOptions, explore
from rollcheck.spark.explorer import SparkOptions, explore_system_spark
from tests.terminal import as_from_a_terminal
from tests.toy import PROTOCOL as TOY
from tests.toy import ToyConfig, ToySystem

pytestmark = pytest.mark.spark


def _outcome(r: ExplorationResult) -> tuple[Any, ...]:
    """Everything a run reports that must not depend on the engine or on where a level was expanded."""
    return (r.distinct_states, r.generated_states, r.depth, r.complete, r.terminal_states,
            [(v.property_id, v.kind, [repr(a) for a in v.trace.actions], v.trace.states[-1]) for v in r.violations],
            [(p.id, p.status) for p in r.properties], [lv.frontier for lv in r.levels])


def _same(ts: Any, spark: Any, out: Path, *, spark_min: int = 0, stop_at_first: bool = False) -> ExplorationResult:
    r = explore_system_spark(ts, spark, ExploreOptions(checkpoint_dir=out, stop_at_first=stop_at_first),
                             SparkOptions(spark_min=spark_min))
    local = explore(ts, ExploreOptions(stop_at_first=stop_at_first))
    assert r.engine == "spark"
    assert _outcome(r) == _outcome(local)
    return r


def test_toy_and_its_variant_equal_local(spark: Any, tmp_path: Path) -> None:
    r = _same(ToySystem(ToyConfig(bound=3)), spark, tmp_path / "ok")
    assert r.extra["spark"]["levels_on_spark"] == r.depth + 1  # every level went to the executors
    _same(TOY.variant("TOY-M1").build(ToyConfig(bound=3)), spark, tmp_path / "broken")


@pytest.mark.parametrize("protocol", protocol_names())
def test_registered_protocols_small_configs_equal_local(protocol: str, spark: Any, tmp_path: Path) -> None:
    """Every level on Spark, liveness included: the same counts, verdicts and traces as the local engine."""
    entry = get_protocol(protocol)
    _same(entry.build(entry.configs["small"]), spark, tmp_path)


def test_levels_split_between_driver_and_spark_give_the_same_result(spark: Any, tmp_path: Path) -> None:
    entry = get_protocol("features")
    ts = entry.build(entry.configs["small"])
    r = _same(ts, spark, tmp_path, spark_min=2000)
    assert 0 < r.extra["spark"]["levels_on_spark"] < r.depth + 1


def test_broken_variant_shortest_counterexample(spark: Any, tmp_path: Path) -> None:
    entry = get_protocol("features")
    v = entry.variant("FEAT-M2")
    r = _same(v.build(entry.configs[v.config]), spark, tmp_path, stop_at_first=True)
    assert r.violations and r.violations[0].property_id in v.expect


def test_interrupted_run_resumes_to_the_same_result(spark: Any, tmp_path: Path) -> None:
    ts = ToySystem(ToyConfig(bound=3))
    first = explore_system_spark(ts, spark, ExploreOptions(checkpoint_dir=tmp_path, stop_at_first=False, max_depth=4),
                                 SparkOptions(spark_min=0))
    assert not first.complete and (tmp_path / "manifest.json").exists()
    resumed = explore_system_spark(ts, spark, ExploreOptions(checkpoint_dir=tmp_path, stop_at_first=False,
                                                             resume=True), SparkOptions(spark_min=0))
    assert "resumed from level 4" in " ".join(resumed.extra["notes"])
    fresh = explore(ts, ExploreOptions(stop_at_first=False))
    assert (resumed.distinct_states, resumed.depth, resumed.generated_states, resumed.complete) == \
        (fresh.distinct_states, fresh.depth, fresh.generated_states, True)
    # A checkpoint of another system is refused with a clear message.
    from rollcheck.core.errors import UserError

    with pytest.raises(UserError, match="checkpoint"):
        explore_system_spark(ToySystem(ToyConfig(bound=4)), spark, ExploreOptions(checkpoint_dir=tmp_path, resume=True))


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
    r = explore_system_spark(ts, spark, ExploreOptions(checkpoint_dir=tmp_path / "out", stop_at_first=False),
                             SparkOptions(spark_min=0))
    assert Path(ts.marker).exists()  # the failure did happen
    local = explore(ToySystem(ToyConfig(bound=3)), ExploreOptions(stop_at_first=False))
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


@pytest.mark.parametrize(("master", "message"), [
    ("local[x]", "not a Spark master URL: 'local[x]'"),
    ("spark://nohost", "not a Spark master URL: 'spark://nohost'"),
    ("spark://127.0.0.1:1", "cannot reach the Spark master spark://127.0.0.1:1"),
])
def test_bad_master_is_one_line_and_exit_2_before_spark_starts(master: str, message: str, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "rollcheck", "explore", "features", "--engine", "spark",
                           "--config", "small", "--master", master, "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [proc.stderr.strip()] and message in proc.stderr


def test_ctrl_c_stops_the_run_with_exit_130_and_one_line(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "rollcheck", "explore", "features", "--engine", "spark",
                             "--config", "default", "--master", "local[2]", "--spark-min", "0", "--quiet",
                             "--out", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=as_from_a_terminal)
    manifest = tmp_path / "features-default-kip-spark.checkpoint" / "manifest.json"
    deadline = time.monotonic() + 120
    while not manifest.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # inside a Spark job of a later level
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and len(stderr.strip().splitlines()) == 1
    assert stderr.strip().startswith("rollcheck: interrupted; the checkpoint in ") and "--resume continues" in stderr


def test_a_master_address_that_is_no_spark_master_is_one_line_within_30_s(tmp_path: Path) -> None:
    """Something listens there but never answers as a Spark master: Spark alone retries for a minute and
    ends in a stack trace; rollcheck gives up after ROLLCHECK_SPARK_MASTER_SECONDS (60 by default)."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        env = dict(os.environ, ROLLCHECK_SPARK_MASTER_SECONDS="4")
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "rollcheck", "simulate", "features", "--master",
                               f"spark://127.0.0.1:{port}", "--out", str(tmp_path)], env=env, capture_output=True,
                              text=True, timeout=120, check=False)
        seconds = time.monotonic() - t0
    assert proc.returncode == 2 and seconds < 30, (seconds, proc.stderr[-500:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "did not register this application within 4 s" in lines[0]


def test_the_gates_spark_cell_reproduces_the_explorers_counts(spark: Any, tmp_path: Path) -> None:
    """The gate's Spark adapter end to end (a renamed keyword once broke it while every engine test passed)."""
    from rollcheck.gate import GateConfig, run_gate

    cfg = GateConfig(["streams_probing"], {"streams_probing": ["small"]}, ["kip"], ["explore", "spark"], tmp_path,
                     {"options": {"spark_min": 0}}, mutants=False, parallel=1,
                     ci_configs={"streams_probing": ["small"]})
    result = run_gate(cfg)
    by = {r.checker: r for r in result.reports}
    assert by["spark"].status == "ok", by["spark"].message
    assert by["spark"].counts["distinct_states"] == by["explore"].counts["distinct_states"] > 0
    assert result.exit_code == 0
