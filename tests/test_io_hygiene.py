"""Processes, locks, signals, stdout and input bounds, tried as a user and as an attacker would (issue 61,
items 2-5): a dead run's lock is taken over, a planted link at a lock or in TLC's model directory is
refused, a module planted in the working directory does not run, a closed stdout ends a command quietly,
a full disk and Ctrl-C during start-up are one line each, JSON on stdout is JSON, and inputs are read
within bounds. The SIGKILL cases are in ``test_orphans.py``."""

from __future__ import annotations

import errno
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rollcheck.cli import main
from rollcheck.core.errors import UserError
from rollcheck.runtime.outlock import LOCK_NAME, output_lock
from rollcheck.runtime.safefs import LinkRefused

ROOT = Path(__file__).resolve().parent.parent
SMALL = ["explore", "streams_probing", "--config", "small", "--quiet"]
SLOWER = ["explore", "metadata_version", "--config", "small", "--quiet"]  # about 6 s


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in err and "Exception ignored" not in err
    return lines[0]


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


def _unseeded_env() -> dict[str, str]:
    """As a user's shell has it: no fixed hash seed, so the command re-executes itself (rollcheck.core.hashenv)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}


# -- locks ---------------------------------------------------------------------------------------------------

def test_a_dead_runs_lock_record_is_taken_over_in_one_line(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    dead = _dead_pid()
    (tmp_path / LOCK_NAME).write_text(f"pid {dead}: rollcheck gate --out {tmp_path}")  # killed: never emptied
    with output_lock(tmp_path):
        assert (tmp_path / LOCK_NAME).read_text().startswith(f"pid {os.getpid()}: ")
    assert _one_line(capsys.readouterr().err) == (f"rollcheck: {tmp_path}: took over the lock of run pid {dead}, "
                                                  "which is no longer running")
    assert (tmp_path / LOCK_NAME).read_text() == ""  # a run that ended leaves no record
    with output_lock(tmp_path):  # so the next one says nothing
        pass
    assert capsys.readouterr().err == ""


_HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0)
os.write(fd, f"pid {sys.argv[2]}: rollcheck explore".encode())
print("held", flush=True)
time.sleep(float(sys.argv[3]))
"""


def _hold(path: Path, recorded: int, seconds: float) -> subprocess.Popen[str]:
    """A process holding the lock at ``path`` whose record names ``recorded``: an orphan of a dead run."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), str(recorded), str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_lock_an_orphan_of_a_dead_run_still_holds_is_taken_over_when_it_ends(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dead = _dead_pid()
    holder = _hold(tmp_path / ".r.lock", dead, 1.0)
    try:
        t0 = time.monotonic()
        with output_lock(tmp_path, ".r.lock", what="R"):
            waited = time.monotonic() - t0
    finally:
        holder.kill()
        holder.wait()
    assert waited > 0.3  # it waited for the orphan instead of refusing
    line = _one_line(capsys.readouterr().err)
    assert line == f"rollcheck: R: took over the lock of run pid {dead}, which is no longer running"


def test_a_lock_an_orphan_keeps_is_refused_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rollcheck.runtime.outlock

    monkeypatch.setattr(rollcheck.runtime.outlock, "TAKEOVER_SECONDS", 0.3)
    dead = _dead_pid()
    holder = _hold(tmp_path / ".r.lock", dead, 60.0)
    try:
        with pytest.raises(UserError) as refused, output_lock(tmp_path, ".r.lock", what="R"):
            pass
    finally:
        holder.kill()
        holder.wait()
    assert f"the run pid {dead} started (pid {holder.pid})" in str(refused.value)


def test_a_live_holder_is_refused_at_once(tmp_path: Path) -> None:
    holder = _hold(tmp_path / ".r.lock", os.getpid(), 60.0)  # the record names a live process
    try:
        t0 = time.monotonic()
        with pytest.raises(UserError) as refused, output_lock(tmp_path, ".r.lock", what="R"):
            pass
        assert time.monotonic() - t0 < 0.5
    finally:
        holder.kill()
        holder.wait()
    assert "R is in use by another rollcheck run (pid " in str(refused.value)


@pytest.mark.parametrize("name", [LOCK_NAME, ".streams_probing-small-kip-local.lock"])
def test_a_link_planted_at_a_lock_is_refused_and_its_target_untouched(name: str, tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(target)
    with pytest.raises(LinkRefused) as refused, output_lock(out, name):
        pass
    assert str(out / name) in str(refused.value)
    (out / "dangling").symlink_to(tmp_path / "nothing")  # a dangling one is not created through either
    with pytest.raises(LinkRefused), output_lock(out, "dangling"):
        pass
    assert target.read_text() == "keep me" and not (tmp_path / "nothing").exists()


@pytest.mark.parametrize("argv", [["gate", "--protocol", "streams_probing", "--checker", "explore", "--quiet"],
                                  SMALL])
def test_a_link_planted_at_a_commands_lock_is_one_line(argv: list[str], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "precious"
    target.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    name = LOCK_NAME if argv[0] == "gate" else ".streams_probing-small-kip-local.lock"
    (out / name).symlink_to(target)
    assert main([*argv, "--out", str(out)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("rollcheck: error: refusing to write through a symbolic link: ") and str(out / name) in line
    assert target.read_text() == "keep me"


# -- the re-execution for stable hashes -----------------------------------------------------------------------

def test_a_module_planted_in_the_working_directory_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    for module in ("tomllib", "json"):
        (tmp_path / f"{module}.py").write_text(f"open({str(marker)!r}, 'a').write('{module}')\n"
                                               f"raise ImportError('a planted {module}')\n")
    # -P for the first process too: only the re-executed one is under test (`rollcheck` itself starts so).
    proc = subprocess.run([sys.executable, "-P", "-m", "rollcheck", *SMALL, "--out", str(tmp_path / "out")],
                          cwd=tmp_path, env=_unseeded_env(), capture_output=True, text=True, timeout=300, check=False)
    assert not marker.exists(), marker.read_text()
    assert proc.returncode == 0, proc.stderr


# -- a closed stdout ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["list"], [*SMALL, "--json"], ["explore", "features", "--variant", "FEAT-M1",
                                                                  "--quiet"]],
                         ids=["list", "explore --json", "a violating explore"])
def test_a_closed_stdout_ends_the_command_quietly_with_141(argv: list[str], tmp_path: Path) -> None:
    """`rollcheck list | head -1`, `... --json | true`: the reader has gone before the results are printed."""
    read, write = os.pipe()
    os.close(read)
    out = [] if argv == ["list"] else ["--out", str(tmp_path)]
    try:
        proc = subprocess.run([sys.executable, "-m", "rollcheck", *argv, *out], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=300, check=False)
    finally:
        os.close(write)
    assert proc.stderr == ""
    assert proc.returncode == 141


# -- outputs that cannot be written -----------------------------------------------------------------------------

@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES])
def test_an_output_the_machine_refuses_is_one_line_naming_it(code: int, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    import rollcheck.cli.commands.explore_cmd as explore_cmd

    def refuse(path: Path, doc: Any, root: Path | None = None) -> Path:
        raise OSError(code, os.strerror(code))  # as a failed write() says it: no file name

    monkeypatch.setattr(explore_cmd, "write_json_atomic", refuse)
    assert main([*SMALL, "--out", str(tmp_path)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith(f"rollcheck: error: {tmp_path}") and line.endswith(f"summary.json: {os.strerror(code)}")


@pytest.fixture
def full_disk(tmp_path: Path) -> Any:
    """A 256 KiB tmpfs with 8 KiB left (skipped where mounting is not allowed)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], capture_output=True,
                             check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        (mnt / "fill").write_bytes(b"x" * (248 << 10))
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.parametrize("argv", [SMALL, ["gate", "--protocol", "streams_probing", "--checker", "explore",
                                          "--quiet"]], ids=["explore", "gate"])
def test_a_full_disk_is_one_line_naming_the_file(argv: list[str], full_disk: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "rollcheck", *argv, "--out", str(full_disk / "out")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    line = _one_line(proc.stderr)
    assert proc.returncode == 2
    assert line.startswith(f"rollcheck: error: {full_disk}/out/") and line.endswith(": No space left on device")


# -- JSON on stdout ----------------------------------------------------------------------------------------

def _strict(text: str) -> Any:
    def refuse(word: str) -> None:
        raise AssertionError(f"not JSON: {word}")

    return json.loads(text, parse_constant=refuse)


def test_print_json_writes_json_only(capsys: pytest.CaptureFixture[str]) -> None:
    from rollcheck.runtime.console import print_json

    print_json({"rate": math.nan, "levels": [1.5, math.inf, (-math.inf, 2)], "nested": {"x": {"y": math.nan}}})
    assert _strict(capsys.readouterr().out) == {"rate": None, "levels": [1.5, None, [None, 2]],
                                                "nested": {"x": {"y": None}}}


def test_a_result_with_a_nan_is_printed_as_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import rollcheck.cli.commands.explore_cmd as explore_cmd

    real = explore_cmd.explore

    def no_time(*args: Any, **kwargs: Any) -> Any:  # a clock that did not move: rates over no time
        result = real(*args, **kwargs)
        result.elapsed = math.nan
        return result

    monkeypatch.setattr(explore_cmd, "explore", no_time)
    assert main([*SMALL, "--json", "--out", str(tmp_path)]) == 0
    doc = _strict(capsys.readouterr().out)
    assert doc["elapsed_seconds"] is None
    summary = next(tmp_path.glob("*/summary.json"))
    assert _strict(summary.read_text())["elapsed_seconds"] is None


# -- Ctrl-C during start-up ------------------------------------------------------------------------------------

def test_ctrl_c_during_start_up_is_one_line_never_a_traceback(tmp_path: Path) -> None:
    env = _unseeded_env()  # the command re-executes itself: Ctrl-C across the exec too
    started = []
    # How long the interpreter takes to start and import the command line here; the first run of a clean clone
    # also writes the bytecode caches, so it is a warm-up, not a measurement (it made the signal come too late).
    for _ in range(3):
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-c", "import rollcheck.cli"], env=env, check=True)
        started.append(time.monotonic() - t0)
    started = started[1:]
    reached = 0
    # The delay adapts to how loaded the machine is: a signal that came before rollcheck's code ran (the
    # interpreter's own start-up) comes later next time, one that came after the run ended comes sooner; every
    # attempt the signal reached rollcheck in must end in one line with exit 130.
    delay = max(started) + 0.05
    for attempt in range(12):
        if reached >= 2:
            break
        # A run of several seconds (small streams_probing ends within half a second on a quiet machine, before a
        # late signal came), each in a folder of its own (no checkpoint of an earlier attempt in its way).
        proc = subprocess.Popen([sys.executable, "-m", "rollcheck", *SLOWER, "--out", str(tmp_path / f"a{attempt}")],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        if "<frozen site>" in err:  # the interpreter's own start-up, before any of rollcheck's code runs
            delay += 0.1
            continue
        if proc.returncode == 0 and not err:  # the run ended before the signal came: nothing to judge
            delay = max(0.05, delay * 0.6)
            continue
        line = _one_line(err)
        assert proc.returncode == 130 and line.startswith("rollcheck: interrupted; "), (proc.returncode, err)
        reached += 1
        delay += 0.1  # the next one a little later: another point of the start-up
    assert reached >= 2


# -- bounded reads -------------------------------------------------------------------------------------------

def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as fh:
        fh.truncate(size)
    return path


@pytest.mark.parametrize("kind", ["/dev/zero", "a 17 MiB file"])
@pytest.mark.parametrize("command", ["explore", "gate"])
def test_a_config_that_never_ends_is_one_line(command: str, kind: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = "/dev/zero" if kind == "/dev/zero" else str(_sparse(tmp_path / "big.toml", 17 << 20))
    argv = ["gate", "--gate-config", path] if command == "gate" else ["explore", "streams_probing", "--config", path]
    t0 = time.monotonic()
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert time.monotonic() - t0 < 30
    line = _one_line(capsys.readouterr().err)
    assert path in line and "is larger than 16 MiB" in line


def _nested_trace(path: Path, depth: int) -> Path:
    value = "[" * depth + "]" * depth
    path.write_text('{"#meta": {"source": "rollcheck", "protocol": "streams_probing", "config": "small"}, '
                    f'"states": [{{"x": {value}}}]}}')
    return path


@pytest.mark.parametrize("depth", [500, 200_000])
@pytest.mark.parametrize("command", ["replay", "export-test"])
def test_a_trace_nested_too_deep_is_one_line(command: str, depth: int, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    trace = _nested_trace(tmp_path / "deep.itf.json", depth)
    argv = [command, str(trace)] + (["--out", str(tmp_path / "tests")] if command == "export-test" else [])
    assert main(argv) == 2
    line = _one_line(capsys.readouterr().err)
    assert str(trace) in line and "nested more than 200 deep" in line


def test_a_trace_too_large_is_refused_unread(tmp_path: Path) -> None:
    from rollcheck.core.traces import read_itf

    big = _sparse(tmp_path / "big.itf.json", (256 << 20) + 1)
    with pytest.raises(ValueError, match="is larger than 256 MiB"):
        read_itf(big)


# -- TLC's model directory -------------------------------------------------------------------------------------

def _spec_system() -> tuple[Any, Any]:
    from rollcheck.core.registry import get_protocol
    from rollcheck.tla.binding import binding_for

    entry = get_protocol("streams_probing")
    return binding_for("streams_probing"), entry.build(entry.configs["small"])


def test_a_link_planted_in_a_model_directory_is_refused(tmp_path: Path) -> None:
    from rollcheck.tla.binding import write_model

    binding, ts = _spec_system()
    target = tmp_path / "precious"
    target.write_text("keep me")
    for name in ("MC.tla", "MC.cfg", binding.path.name):
        model = tmp_path / f"model-{name}"
        model.mkdir()
        (model / name).symlink_to(target)
        with pytest.raises(LinkRefused, match=re.escape(str(model / name))):
            write_model(binding, ts, model)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "tlc").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(LinkRefused):  # the model directory itself
        write_model(binding, ts, out / "tlc")
    with pytest.raises(LinkRefused):  # a directory between --out and it
        write_model(binding, ts, out / "tlc" / "model", root=out)
    assert target.read_text() == "keep me" and list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("name", [".tlc-tmp", "states", "tlc-output.txt"])
def test_a_link_planted_where_tlc_writes_is_refused(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rollcheck.tla.tlc as tlc
    from rollcheck.tla.binding import write_model

    binding, ts = _spec_system()
    model = write_model(binding, ts, tmp_path / "model")
    target = tmp_path / "precious"
    target.mkdir() if name != "tlc-output.txt" else target.write_text("keep me")
    (model.directory / name).symlink_to(target)
    ran: list[list[str]] = []

    def fake_tlc(cmd: list[str], **_kwargs: Any) -> subprocess.CompletedProcess[str]:  # no JVM: the writes matter
        ran.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, "Model checking completed. No error has been found.\n", "")

    monkeypatch.setattr(tlc, "tlc_command", lambda *a, **k: ["tlc"])
    monkeypatch.setattr(tlc.subprocess, "run", fake_tlc)
    with pytest.raises(LinkRefused, match=re.escape(name)):
        tlc.run_tlc(model.directory, model.module, model.cfg)
    assert ran == ([["tlc"]] if name == "tlc-output.txt" else [])  # a directory is checked before TLC starts
    assert (target.read_text() == "keep me") if name == "tlc-output.txt" else list(target.iterdir()) == []


def test_an_inconclusive_check_is_one_line_and_exit_5(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import rollcheck.cli.commands.list_cmd as list_cmd
    from rollcheck.core.errors import Inconclusive

    def short(_args: Any) -> int:
        raise Inconclusive("the budget ended before the first round: nothing was checked")

    monkeypatch.setattr(list_cmd, "run", short)
    assert main(["list"]) == 5
    assert _one_line(capsys.readouterr().err) == ("rollcheck: inconclusive: the budget ended before the first "
                                                  "round: nothing was checked")
