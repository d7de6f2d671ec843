"""Getting a SparkSession that is quiet, UI-less and fails clearly when Java is missing.

PySpark 4 runs on Java 17 or 21. The JVM's own stderr (log4j, "incubator modules" warnings) goes to a
log file under the system temp folder, never to the user's terminal: the gateway JVM inherits the file
descriptor 2 that is in place when it starts, so it is pointed at the log file for that moment.

The JVM ends with this process however it ends (SIGKILL included): PySpark starts it with a pipe as its
stdin and it exits when the pipe closes; its Python workers (``pyspark.daemon``) exit when the JVM
closes theirs. A forked worker of this process holds the pipe too, and dies with it
(:mod:`rollcheck.runtime.forking`).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rollcheck.core.errors import UserError

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = STDERR
appender.console.type = Console
appender.console.name = STDERR
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


def java_executable() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        return str(candidate) if candidate.exists() else None
    return shutil.which("java")


def java_major_version(java: str) -> int | None:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def require_java() -> None:
    """One clear line (exit code 2 through :class:`UserError`) when Spark cannot start for want of Java."""
    java = java_executable()
    if java is None:
        raise UserError("Java is not installed (no JAVA_HOME, no java on PATH): the Spark engine needs Java 17 "
                        "or 21")
    major = java_major_version(java)
    if major is None:
        raise UserError(f"cannot run {java} -version: the Spark engine needs Java 17 or 21")
    if major < 17:
        raise UserError(f"Java {major} found at {java}: the Spark engine (PySpark 4) needs Java 17 or 21")


_LOCAL = re.compile(r"local(\[(\*|[1-9]\d*)(,[1-9]\d*)?\])?")
_LOCAL_CLUSTER = re.compile(r"local-cluster\[[1-9]\d*,[1-9]\d*,[1-9]\d*\]")
_HOST_PORT = re.compile(r"(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})")


def check_master(master: str, timeout: float = 5.0) -> None:
    """One clear line (a :class:`UserError`) for a master URL Spark would not accept, or a standalone
    master that does not answer, before a session is started (which would take a minute to fail)."""
    if _LOCAL.fullmatch(master) or _LOCAL_CLUSTER.fullmatch(master) or master == "yarn":
        return
    if master.startswith("k8s://") and len(master) > len("k8s://"):
        return
    if not master.startswith("spark://"):
        raise UserError(f"not a Spark master URL: {master!r} (expected local, local[N], local[*], local[N,F], "
                        "spark://HOST:PORT, yarn or k8s://URL)")
    hosts = master[len("spark://"):].split(",")
    parsed = [_HOST_PORT.fullmatch(h) for h in hosts]
    if not all(parsed) or not all(0 < int(m.group(2)) < 65536 for m in parsed if m):
        raise UserError(f"not a Spark master URL: {master!r} (expected spark://HOST:PORT[,HOST:PORT...])")
    errors = []
    for m in parsed:
        assert m is not None
        host, port = m.group(1).strip("[]"), int(m.group(2))
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as exc:
            errors.append(f"{host}:{port}: {exc.strerror or exc}")
    raise UserError(f"cannot reach the Spark master {master} ({'; '.join(errors)})")


def spark_log_path() -> Path:
    return Path(tempfile.gettempdir()) / "rollcheck-spark.log"


@contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as fh:
        os.dup2(fh.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def get_session(master: str = "local[*]", app_name: str = "rollcheck", conf: dict[str, str] | None = None) -> Any:
    """The active session if there is one (spark-submit, or a test's), else a new quiet one on ``master``."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    check_master(master)
    require_java()
    log4j = Path(tempfile.gettempdir()) / "rollcheck-log4j2.properties"
    log4j.write_text(_LOG4J, encoding="utf-8")
    # Executors' Python workers must import the project's modules (and a test's) as the driver does.
    paths = [p for p in sys.path if p and Path(p).is_dir()]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([*paths, *os.environ.get("PYTHONPATH", "").split(
        os.pathsep)]).keys()).strip(os.pathsep)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j}"
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.extraJavaOptions", java_opts)
               .config("spark.executor.extraJavaOptions", java_opts)
               .config("spark.sql.shuffle.partitions", "8")
               .config("spark.python.worker.reuse", "true")
               # Python workers start as `python -m pyspark.daemon`, which would put their current directory
               # (this one's, in local mode) first on the import path: a json.py lying there would run.
               .config("spark.executorEnv.PYTHONSAFEPATH", "1"))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    previous = signal.getsignal(signal.SIGINT)
    with _stderr_to(spark_log_path()):
        session = _create(builder, master)
    session.sparkContext.setLogLevel("ERROR")
    if threading.current_thread() is threading.main_thread():
        # PySpark's own handler cancels the jobs with a py4j call made while the main thread is inside
        # another, which fails ("reentrant call") and py4j logs a traceback for each interrupted call.
        # Stopping the driver is enough: its JVM, and the jobs with it, end when this process does.
        signal.signal(signal.SIGINT, functools.partial(_interrupted, previous))
    return session


# A spark:// address that accepts connections but is no Spark master (or a master that never answers)
# keeps Spark's application client retrying for a minute (3 x 20 s, fixed in Spark) before it fails with
# a stack trace; a real master registers the application in well under a second, but the wait also covers
# starting the driver's JVM, which takes tens of seconds on a loaded 2-core machine (CI saw 25 s run out).
# Overridable through ROLLCHECK_SPARK_MASTER_SECONDS (a test uses a few seconds).
MASTER_ANSWER_SECONDS = 60.0


def _create(builder: Any, master: str) -> Any:
    if not master.startswith("spark://"):
        return builder.getOrCreate()
    box: dict[str, Any] = {}

    def create() -> None:
        try:
            box["session"] = builder.getOrCreate()
        except Exception as exc:
            box["error"] = exc

    thread = threading.Thread(target=create, name="rollcheck-spark-session", daemon=True)
    thread.start()
    try:
        wait = float(os.environ.get("ROLLCHECK_SPARK_MASTER_SECONDS", MASTER_ANSWER_SECONDS))
    except ValueError:
        wait = MASTER_ANSWER_SECONDS
    thread.join(wait)
    if thread.is_alive():
        raise UserError(f"the Spark master {master} did not register this application within {wait:.0f} s: "
                        f"is it a Spark standalone master? (ROLLCHECK_SPARK_MASTER_SECONDS sets the wait; "
                        f"log: {spark_log_path()})")
    if "error" in box:
        first = str(box["error"]).strip().splitlines()[0][:200]
        raise UserError(f"Spark could not start on {master}: {first} (log: {spark_log_path()})")
    return box["session"]


def _interrupted(previous: Any, signum: int, frame: Any) -> None:
    logging.disable(logging.CRITICAL)
    if callable(previous) and previous is not signal.default_int_handler:
        previous(signum, frame)  # rollcheck's own handler (it re-sends a swallowed interrupt)
    raise KeyboardInterrupt
