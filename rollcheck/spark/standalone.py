"""A Spark standalone cluster on 127.0.0.1, started with the launchers pyspark ships (``spark-class``): a
master and workers, each in its own process group, for the cluster test and ``benchmarks/explore.py
--standalone``. Every process it starts is stopped by :meth:`StandaloneCluster.stop` (also on exit)."""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from rollcheck.runtime.forking import die_with_parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


class StandaloneCluster:
    """A standalone master and workers, each in its own process group (so a kill takes its executors)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = _free_port()
        self.ui = _free_port()
        self.procs: list[subprocess.Popen[bytes]] = []
        atexit.register(self.stop)
        self.env = dict(os.environ, SPARK_HOME=str(_spark_home()), SPARK_LOCAL_IP="127.0.0.1",
                        SPARK_LOG_DIR=str(root / "logs"), PYSPARK_PYTHON=sys.executable,
                        SPARK_NO_DAEMONIZE="1")

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = open(self.root / f"{name}.log", "wb")
        # Each dies with this process even when it is SIGKILLed and stop() never runs (rollcheck.runtime.forking);
        # spark-class execs the JVM, which keeps the setting.
        proc = subprocess.Popen([str(_spark_home() / "bin" / "spark-class"), *args], env=self.env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=die_with_parent())
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
