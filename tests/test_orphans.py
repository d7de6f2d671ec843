"""A run killed with SIGKILL leaves nothing running (issue 61, item 4): its forked workers, the gate's cell
workers, TLC's JVM, Spark's JVM and its Python workers end with it (a parent-death signal, or the pipe
PySpark's JVM reads), and the next run into the same --out is not refused by a lock they held.

Each test starts the command, waits until the processes in question are running, SIGKILLs the command
alone (not its process group: as the OOM killer or ``kill -9`` does), then checks every process it had
started has ended (a zombie has: it waits only to be reaped) and that a resumed or repeated run goes
ahead at once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rollcheck.runtime.outlock import output_lock

ROOT = Path(__file__).resolve().parent.parent
needs_java = pytest.mark.skipif(shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
                                reason="Java is not installed")

Tree = dict[int, tuple[int, str]]  # pid -> (start time, command line)


def _processes() -> dict[int, tuple[int, str, int, str]]:
    """pid -> (parent pid, state, start time, command line) of every process."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        found[int(name)] = (int(fields[1]), fields[0], int(fields[19]), cmd)
    return found


def _tree(root: int) -> Tree:
    """The live processes under ``root`` (itself included)."""
    procs = _processes()
    mine = {root}
    grew = True
    while grew:
        grew = False
        for pid, (ppid, _state, _start, _cmd) in procs.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                grew = True
    return {p: (procs[p][2], procs[p][3]) for p in mine if p in procs and procs[p][1] not in "ZX"}


def _running(tree: Tree, out: Path) -> list[str]:
    """Which of ``tree`` (the same process: same start time) still run, and any live process whose command
    line names ``out`` (started after the snapshot)."""
    left = []
    for pid, (ppid, state, start, cmd) in _processes().items():
        if state in "ZX":
            continue
        if (pid in tree and tree[pid][0] == start) or str(out) in cmd:
            left.append(f"{pid} (parent {ppid}): {cmd[:160]}")
    return left


def _kill_when(cmd: list[str], out: Path, ready: Callable[[Tree], bool], grace: float = 5.0,
               timeout: float = 240.0, cwd: Path = ROOT) -> tuple[int, Tree]:
    """Start ``rollcheck CMD``, SIGKILL it once ``ready(its process tree)``, and return its pid and that tree
    after checking every process in it has ended within ``grace`` seconds (each command's work takes longer
    than that: an orphan does not pass by finishing it)."""
    log = out.parent / f"{out.name}.stderr"
    with open(log, "wb") as err:  # a file, not a pipe: an orphan holding a pipe would hang the test
        proc = subprocess.Popen([sys.executable, "-P", "-m", "rollcheck", *cmd], cwd=cwd,
                                stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + timeout
    tree: Tree = {}
    while time.monotonic() < deadline and proc.poll() is None:
        tree = _tree(proc.pid)
        if ready(tree):
            break
        time.sleep(0.05)
    else:
        proc.kill()
        proc.wait(30)
        pytest.fail(f"the processes to kill never showed up: {sorted(c for _s, c in tree.values())}; "
                    f"{log.read_text(errors='replace')[-2000:]}")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    deadline = time.monotonic() + grace
    while (left := _running(tree, out)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for line in left:  # leave nothing behind for the next test either
        os.kill(int(line.split()[0]), signal.SIGKILL)
    assert not left, f"still running after the command was killed: {left}"
    return proc.pid, tree


def _count(tree: Tree, word: str) -> int:
    return sum(1 for _start, cmd in tree.values() if word in cmd)


def _forked(tree: Tree, root_cmd: str) -> int:
    """The processes of ``tree`` that are forks of rollcheck itself (their command line is the parent's)."""
    return sum(1 for _start, cmd in tree.values() if root_cmd in cmd) - 1


def test_killed_explore_leaves_no_worker_and_resumes_at_once(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = ["explore", "features", "--config", "small", "--workers", "2", "--collect-all", "--quiet", "--json",
           "--out", str(out)]
    killed, tree = _kill_when(cmd, out, lambda t: _forked(t, "explore features") >= 2)
    assert _forked(tree, "explore features") >= 2
    done = subprocess.run([sys.executable, "-m", "rollcheck", *cmd, "--resume"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "in use by another rollcheck run" not in done.stderr
    assert f"took over the lock of run pid {killed}, which is no longer running" in done.stderr
    doc = json.loads(done.stdout)
    assert (doc["distinct_states"], doc["generated_states"], doc["depth"]) == (25073, 178534, 14)


@pytest.mark.tlc
@needs_java
def test_killed_tlc_leaves_no_jvm(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = ["tlc", "features", "--config", "default", "--workers", "1", "--quiet", "--out", str(out)]
    _pid, tree = _kill_when(cmd, out, lambda t: _count(t, "tla2tools") >= 1)  # TLC takes a minute on it
    assert _count(tree, "tla2tools") == 1
    # A rerun (minutes) is not needed to show its lock is free: taking it here is what the rerun does first.
    name = "features-default-kip"
    with output_lock(out, f".{name}.lock", what=str(out / name)):
        pass


@pytest.mark.tlc
@needs_java
def test_killed_gate_leaves_no_cell_worker_nor_jvm_and_runs_again_at_once(tmp_path: Path) -> None:
    out = tmp_path / "out"
    plan = ('[gate]\nprotocols = ["streams_probing"]\nprofiles = ["kip"]\nmutants = false\nparallel = 2\n'
            'configs = {streams_probing = ["small"]}\nci_configs = {streams_probing = ["small"]}\n'
            'story_configs = {streams_probing = []}\nconform_configs = {streams_probing = []}\n')
    (tmp_path / "gate.toml").write_text(plan + 'checkers = ["explore", "tlc"]\n')
    (tmp_path / "again.toml").write_text(plan + 'checkers = ["explore"]\n')
    cmd = ["gate", "--quiet", "--out", str(out), "--config"]
    killed, tree = _kill_when([*cmd, str(tmp_path / "gate.toml")], out, lambda t: _count(t, "tla2tools") >= 1)
    assert _forked(tree, "rollcheck gate") >= 1 and _count(tree, "tla2tools") == 1
    again = subprocess.run([sys.executable, "-m", "rollcheck", *cmd, str(tmp_path / "again.toml")], cwd=ROOT,
                           capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0, again.stderr
    assert "in use by another rollcheck run" not in again.stderr
    assert f"took over the lock of run pid {killed}, which is no longer running" in again.stderr


@pytest.mark.spark
@needs_java
def test_killed_spark_explore_leaves_no_jvm_nor_python_worker(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = ["explore", "streams_probing", "--config", "default", "--engine", "spark", "--master", "local[2]",
           "--spark-min", "0", "--quiet", "--out", str(out)]
    # Spark's Python workers start as `python -m pyspark.daemon` in this directory: without a safe import
    # path, a json.py planted here would run in them (and, raising, end them before any worker forks).
    marker = tmp_path / "ran"
    (tmp_path / "json.py").write_text(f"open({str(marker)!r}, 'a').write('json')\nraise ImportError('planted')\n")
    # the JVM, PySpark's daemon and at least one Python worker it forked (their command line is the daemon's)
    _pid, tree = _kill_when(cmd, out, lambda t: _count(t, "pyspark.daemon") >= 2, grace=20.0,  # JVM shutdown hooks
                            cwd=tmp_path)
    assert _count(tree, "java") >= 1
    assert not marker.exists()
    # Starting Spark again would take as long as the first start: the resumed run's lock, taken here, is
    # what a lingering process of the killed run would have kept from it.
    name = "streams_probing-default-kip-spark"
    with output_lock(out, f".{name}.lock", what=str(out / name)):
        pass
