"""One node of a local cluster: a JVM process on 127.0.0.1 with its own folder and log, started, waited for with a
bound that says what it waits for, signalled (the faults: SIGKILL, SIGSTOP / SIGCONT) and stopped.

A node runs in its own process group, so that stopping it stops every process it started; its log is the JVM's
stdout and stderr (Kafka's logger writes there too, ``rollcheck.cluster.dist``).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rollcheck.core.errors import UserError

_TAIL_LINES = 8


class NodeFailed(UserError):
    """A node that did not come up, died, or could not be started: one line naming the node and its log."""

    output: str = ""  # a tool's whole output, where the failure was a tool's


def tail(path: Path, lines: int = _TAIL_LINES) -> str:
    """The last ``lines`` non-empty lines of a log, joined by " | " (for a one-line error)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    kept = [ln.strip() for ln in text.splitlines() if ln.strip()][-lines:]
    return " | ".join(kept)


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


@dataclass
class Node:
    """``argv`` runs the node; ``ready`` is the log line (a regular expression) that says it is up, else its
    first port accepting connections; ``ports`` are the ports it listens on (127.0.0.1)."""

    name: str
    argv: Sequence[str]
    directory: Path
    ports: tuple[int, ...] = ()
    ready: str | None = None
    role: str = ""
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    started_at: float = 0.0
    paused: bool = False
    # Where this start's output begins in the log: a restarted node's earlier ready line does not count.
    log_start: int = 0

    @property
    def log(self) -> Path:
        return self.directory / "node.log"

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        if self.alive:
            raise NodeFailed(f"node {self.name} is already running (pid {self.pid})")
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as out:
            out.write(f"\n# rollcheck: {' '.join(self.argv)}\n".encode())
            out.flush()
            self.log_start = out.tell()
            try:
                self.process = subprocess.Popen(list(self.argv), cwd=self.directory, stdout=out,
                                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                                start_new_session=True)
            except OSError as exc:
                raise NodeFailed(f"node {self.name} did not start: {exc}") from None
        self.started_at = time.monotonic()
        self.paused = False

    def wait_ready(self, timeout: float) -> float:
        """Wait at most ``timeout`` seconds for the node's ready line (or port); the seconds it took. A node that
        exits first, or is not up in time, is a :class:`NodeFailed` naming what was waited for and the log."""
        waiting_for = (f"the log line /{self.ready}/" if self.ready is not None
                       else f"port {self.ports[0]}" if self.ports else "its process")
        rx = re.compile(self.ready) if self.ready is not None else None
        deadline = time.monotonic() + timeout
        offset = self.log_start
        while True:
            if self.process is None:
                raise NodeFailed(f"node {self.name} was never started")
            code = self.process.poll()
            if code is not None:
                raise NodeFailed(f"node {self.name} exited with code {code} while waiting for {waiting_for}; "
                                 f"log {self.log}: {tail(self.log)}")
            if rx is not None:
                with contextlib.suppress(OSError), open(self.log, "rb") as f:
                    f.seek(offset)
                    chunk = f.read().decode("utf-8", errors="replace")
                    if rx.search(chunk):
                        return time.monotonic() - self.started_at
                    offset += max(0, len(chunk.encode("utf-8")) - 4096)  # keep a margin for a line cut in two
            elif not self.ports or port_open(self.ports[0]):
                return time.monotonic() - self.started_at
            if time.monotonic() >= deadline:
                raise NodeFailed(f"node {self.name} was not up within {timeout:g} s (waited for {waiting_for}); "
                                 f"log {self.log}: {tail(self.log)}")
            time.sleep(0.1)

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the node's process group (SIGSTOP / SIGCONT pause and resume it: a node cut off)."""
        if not self.alive:
            raise NodeFailed(f"node {self.name} is not running: it cannot take signal {signal.Signals(sig).name}")
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)
        if sig == signal.SIGSTOP:
            self.paused = True
        elif sig == signal.SIGCONT:
            self.paused = False

    def stop(self, timeout: float = 20.0) -> int | None:
        """Stop the node: SIGTERM (a paused node is resumed first, or it could not act on it), SIGKILL after
        ``timeout`` seconds; its exit code (None if it was never started)."""
        p = self.process
        if p is None:
            return None
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                if self.paused:
                    os.killpg(p.pid, signal.SIGCONT)
                os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
        # Whatever else the node's group started goes too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGKILL)
        self.paused = False
        return p.returncode

    def kill(self) -> None:
        """SIGKILL, the crash fault: the node stops at once, nothing flushed."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        self.paused = False
