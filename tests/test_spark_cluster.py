"""The Spark engine on a real standalone cluster on 127.0.0.1: a master and two workers started with the
launchers pyspark ships (``spark-class``), a run through the ``rollcheck`` command, one worker killed in the
middle of it, and the exact result of the local engine at the end. Everything started is stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rollcheck.core.registry import get_protocol
from rollcheck.explore.explorer import ExploreOptions, explore
from rollcheck.spark.standalone import StandaloneCluster

pytestmark = pytest.mark.spark


@pytest.fixture()
def cluster(tmp_path: Path) -> Iterator[StandaloneCluster]:
    c = StandaloneCluster(tmp_path)
    # The driver's JVM starts within the registration wait; under the parallel suite it can take long.
    c.env["ROLLCHECK_SPARK_MASTER_SECONDS"] = "300"
    try:
        yield c
    finally:
        c.stop()


def _manifest_level(path: Path) -> int:
    try:
        return int(json.loads(path.read_text(encoding="utf-8"))["level"])
    except (OSError, ValueError, KeyError):
        return -1


def test_standalone_cluster_with_a_killed_worker_gives_the_exact_result(cluster: StandaloneCluster,
                                                                       tmp_path: Path) -> None:
    workers = cluster.start(2)
    out = tmp_path / "out"
    env = dict(cluster.env, PYTHONHASHSEED="0")
    cmd = [sys.executable, "-m", "rollcheck", "explore", "features", "--config", "small", "--engine", "spark",
           "--master", cluster.url, "--spark-min", "0", "--partitions", "4", "--collect-all", "--quiet",
           "--json", "--out", str(out)]
    run = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    manifest = out / "features-small-kip-spark.checkpoint" / "manifest.json"
    try:
        deadline = time.monotonic() + 180
        while _manifest_level(manifest) < 3 and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert run.poll() is None, "the run ended before a worker could be killed: " + run.stderr.read().decode()
        killed_at = _manifest_level(manifest)
        os.killpg(workers[1].pid, signal.SIGKILL)  # the worker, its executor and the executor's Python workers
        stdout, stderr = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 0, stderr.decode()[-3000:]
    doc: dict[str, Any] = json.loads(stdout)
    entry = get_protocol("features")
    local = explore(entry.build(entry.configs["small"]), ExploreOptions(stop_at_first=False))
    assert doc["engine"] == "spark" and doc["complete"]
    assert (doc["distinct_states"], doc["generated_states"], doc["depth"]) == \
        (local.distinct_states, local.generated_states, local.depth)
    assert [p["status"] for p in doc["properties"]] == [p.status for p in local.properties]
    assert doc["spark"]["master"] == cluster.url
    assert doc["spark"]["levels_on_spark"] == local.depth + 1
    assert killed_at < local.depth  # the worker died while levels were still to go
    assert cluster.alive_workers() == 1


def test_local_cluster_master_gives_the_local_result(tmp_path: Path) -> None:
    """``local-cluster[2,1,1024]``: two executor JVMs started by the driver (Spark's own test cluster)."""
    proc = subprocess.run([sys.executable, "-m", "rollcheck", "explore", "streams_probing", "--config", "small",
                           "--engine", "spark", "--master", "local-cluster[2,1,1024]", "--spark-min", "0",
                           "--quiet", "--json", "--out", str(tmp_path)],
                          env=dict(os.environ, PYTHONHASHSEED="0"), capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    entry = get_protocol("streams_probing")
    local = explore(entry.build(entry.configs["small"]), ExploreOptions(stop_at_first=True))
    assert (doc["distinct_states"], doc["generated_states"], doc["depth"]) == \
        (local.distinct_states, local.generated_states, local.depth)
    assert doc["spark"]["master"] == "local-cluster[2,1,1024]"
    assert doc["spark"]["levels_on_spark"] == local.depth + 1
