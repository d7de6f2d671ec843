"""The Spark engine on a real standalone cluster on 127.0.0.1: a master and two workers started with the
launchers pyspark ships (``spark-class``), a run through the ``rollcheck`` command, one worker killed in the
middle of it, and the exact result of the local engine at the end. Everything started is stopped."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rollcheck.explorer import explore
from rollcheck.registry import get_protocol

pytestmark = pytest.mark.spark


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


class Cluster:
    """A standalone master and workers, each in its own process group (so a kill takes its executors)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = _free_port()
        self.ui = _free_port()
        self.procs: list[subprocess.Popen[bytes]] = []
        self.env = dict(os.environ, SPARK_HOME=str(_spark_home()), SPARK_LOCAL_IP="127.0.0.1",
                        SPARK_LOG_DIR=str(root / "logs"), PYSPARK_PYTHON=sys.executable,
                        SPARK_NO_DAEMONIZE="1")

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = open(self.root / f"{name}.log", "wb")
        proc = subprocess.Popen([str(_spark_home() / "bin" / "spark-class"), *args], env=self.env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self.procs.append(proc)
        return proc

    def start(self, workers: int) -> list[subprocess.Popen[bytes]]:
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui))
        started = [self._start(f"worker{i}", "org.apache.spark.deploy.worker.Worker", self.url, "--host",
                               "127.0.0.1", "--cores", "1", "--memory", "2g", "--webui-port", str(_free_port()),
                               "--work-dir", str(self.root / f"work{i}")) for i in range(workers)]
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.alive_workers() == workers:
                return started
            time.sleep(0.5)
        raise AssertionError(f"the cluster did not come up; logs in {self.root}")

    def alive_workers(self) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=2) as resp:
                doc = json.load(resp)
        except OSError:
            return 0
        return sum(1 for w in doc.get("workers", []) if w.get("state") == "ALIVE")

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            proc.wait(10)


@pytest.fixture()
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(tmp_path)
    try:
        yield c
    finally:
        c.stop()


def _manifest_level(path: Path) -> int:
    try:
        return int(json.loads(path.read_text(encoding="utf-8"))["level"])
    except (OSError, ValueError, KeyError):
        return -1


def test_standalone_cluster_with_a_killed_worker_gives_the_exact_result(cluster: Cluster, tmp_path: Path) -> None:
    workers = cluster.start(2)
    out = tmp_path / "out"
    env = dict(cluster.env, PYTHONHASHSEED="0")
    cmd = [sys.executable, "-m", "rollcheck", "explore", "features", "--config", "small", "--engine", "spark",
           "--master", cluster.url, "--spark-min", "0", "--partitions", "4", "--collect-all", "--quiet",
           "--json", "--out", str(out)]
    run = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    manifest = out / "features-small" / "checkpoint" / "manifest.json"
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
    local = explore(entry.build(entry.configs["small"]), stop_at_first=False)
    assert doc["engine"] == "spark" and doc["complete"]
    assert (doc["distinct_states"], doc["generated_states"], doc["depth"]) == \
        (local.distinct_states, local.generated_states, local.depth)
    assert [p["status"] for p in doc["properties"]] == [p.status for p in local.properties]
    assert doc["spark"]["master"] == cluster.url
    assert doc["spark"]["levels_on_spark"] == local.depth + 1
    assert killed_at < local.depth  # the worker died while levels were still to go
    assert cluster.alive_workers() == 1
