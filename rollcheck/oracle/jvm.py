"""One long-lived JVM running the common request loop (kafka_oracle/common/.../Main.java) over one build.

Framing: the first stdout line is the ready line ({"ready": true, ...}); then each batch is one JSON array of
requests a line on stdin, answered by one JSON array a line on stdout, in order. stderr (Kafka's logging, a
stack trace) is drained by a background thread into a bounded deque, so a chatty JVM never blocks on a full
pipe and a death is reported with the last lines it wrote. Every wait on stdout is bounded by ``timeout``: a hung
JVM is killed (its whole process group) and reported; a JVM is never left behind (``close`` on every path, a
``weakref.finalize`` backstop that also runs at interpreter exit).
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import select
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import IO, Any, NoReturn

from rollcheck.core.errors import UserError
from rollcheck.oracle.build import Built

MAIN_CLASS = "rollcheck.oracle.Main"
# Start-up flags: the questions are small and many, so the JIT's top tier (C2) never pays for its compile time,
# while C1 alone starts and warms faster; the serial collector starts no GC threads (2-core machines, several
# JVMs at once); -Xshare:auto maps the JDK's class-data archive when there is one; no hsperfdata file.
JVM_FLAGS = ("-Xshare:auto", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData",
             "-Dfile.encoding=UTF-8")
STDERR_LINES = 40
_TAIL_CHARS = 600
_READ_CHUNK = 1 << 20


class OracleDied(UserError):
    """The oracle's JVM died or hung: "Kafka oracle <release> died (exit N) mid-batch; its stderr ends: ...",
    or "... did not answer within S s ..." (the JVM is then killed)."""


def _reap(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc``'s process group if it still runs and collect it (no zombie): the finalizer's backstop."""
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def _drain(stream: IO[bytes], tail: collections.deque[str]) -> None:
    with contextlib.suppress(OSError, ValueError):
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", errors="replace").rstrip()
            # SLF4J's "no binding" notice opens every adapter's stderr: it would crowd a death's tail out.
            if line and not line.startswith("SLF4J:"):
                tail.append(line)


class OracleJVM:
    """One JVM over ``built``: :meth:`start` it (or let the first :meth:`ask` start it), :meth:`ask` batches,
    :meth:`close` it. ``timeout``: the most seconds one round trip (or the start-up) may take."""

    def __init__(self, built: Built, *, timeout: float = 300.0, java: str = "java") -> None:
        self.built = built
        self.timeout = timeout
        self.java = java
        self.ready: dict[str, Any] = {}
        self.round_trips = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._drainer: threading.Thread | None = None
        self._buf = bytearray()
        self._dead: str | None = None  # why this JVM no longer answers (after a death or a hang)
        self._finalizer: weakref.finalize[Any, Any] | None = None

    @property
    def argv(self) -> list[str]:
        cp = os.pathsep.join(str(p) for p in self.built.classpath)
        return [self.java, *JVM_FLAGS, "-cp", cp, MAIN_CLASS, self.built.handler]

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and self._dead is None

    def stderr_tail(self, lines: int = 8) -> str:
        """The last ``lines`` lines the JVM wrote to stderr, joined into one line."""
        text = " | ".join(list(self._stderr)[-lines:]) or "(nothing)"
        return text if len(text) <= _TAIL_CHARS else "..." + text[-_TAIL_CHARS:]

    def start(self) -> float:
        """Start the JVM and wait for its ready line; the seconds it took."""
        if self._proc is not None:
            raise RuntimeError("OracleJVM.start: already started")
        tick = time.perf_counter()
        try:
            # A session of its own: a hang is ended by killing the group, and Ctrl-C at the terminal reaches
            # this process only, which closes the JVM itself.
            self._proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, start_new_session=True, bufsize=0)
        except OSError as exc:
            raise OracleDied(f"Kafka oracle {self.built.release}: `{self.java}` did not start: {exc}") from None
        self._finalizer = weakref.finalize(self, _reap, self._proc)
        assert self._proc.stderr is not None
        self._drainer = threading.Thread(target=_drain, args=(self._proc.stderr, self._stderr),
                                         name=f"oracle-stderr-{self.built.release}", daemon=True)
        self._drainer.start()
        line = self._readline(time.monotonic() + self.timeout, "before its ready line")
        try:
            ready = json.loads(line)
        except ValueError:
            ready = None
        if not isinstance(ready, dict) or ready.get("ready") is not True:
            self._fail(f"Kafka oracle {self.built.release} printed {line[:200]!r} instead of its ready line; "
                       f"its stderr ends: {self.stderr_tail()}")
        self.ready = ready
        return time.perf_counter() - tick

    def ask(self, requests: Sequence[Mapping[str, Any]]) -> list[Any]:
        """One round trip: ``requests`` sent as one line, their answers (as many, in order) read back."""
        if self._dead is not None:
            raise OracleDied(self._dead)
        if self._proc is None:
            self.start()
        line = json.dumps(list(requests), separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n"
        deadline = time.monotonic() + self.timeout
        what = f"mid-batch ({len(requests)} requests)"
        self._write(line, deadline, what)
        answers = json.loads(self._readline(deadline, what))
        self.round_trips += 1
        if not isinstance(answers, list) or len(answers) != len(requests):
            n = len(answers) if isinstance(answers, list) else "not a list"
            self._fail(f"Kafka oracle {self.built.release} answered {n} for a batch of {len(requests)} requests; "
                       f"its stderr ends: {self.stderr_tail()}")
        return answers

    def _write(self, data: bytes, deadline: float, what: str) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        fd = self._proc.stdin.fileno()
        os.set_blocking(fd, False)
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                self._hung(what)
            _r, w, _x = select.select([], [fd], [], left)
            if not w:
                continue
            try:
                n = os.write(fd, view)
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                self._died(what)
            view = view[n:]

    def _readline(self, deadline: float, what: str) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        scanned = 0  # the buffer holds no newline before this offset
        while True:
            nl = self._buf.find(b"\n", scanned)
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[:nl + 1]
                scanned = 0
                if line.strip():
                    return line.decode("utf-8", errors="replace")
                continue
            scanned = len(self._buf)
            left = deadline - time.monotonic()
            if left <= 0:
                self._hung(what)
            r, _w, _x = select.select([fd], [], [], left)
            if not r:
                continue
            chunk = os.read(fd, _READ_CHUNK)
            if not chunk:
                self._died(what)
            self._buf += chunk

    def _hung(self, what: str) -> NoReturn:
        self._kill()
        self._fail(f"Kafka oracle {self.built.release} did not answer within {self.timeout:g} s {what}; the JVM "
                   f"was killed; its stderr ends: {self.stderr_tail()}")

    def _died(self, what: str) -> NoReturn:
        assert self._proc is not None
        try:
            code: int | str = self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # stdout closed but the process lives on: as good as dead
            self._kill()
            code = "stdout closed"
        if self._drainer is not None:
            self._drainer.join(timeout=5)  # the last stderr lines, written just before the exit
        self._fail(f"Kafka oracle {self.built.release} died (exit {code}) {what}; its stderr ends: "
                   f"{self.stderr_tail()}")

    def _fail(self, message: str) -> NoReturn:
        self._dead = message
        self.close()
        raise OracleDied(message)

    def _kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=10)

    def close(self) -> None:
        """End the JVM: stdin closed (the loop ends at end of input), killed if it has not exited within 5 s."""
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._kill()
        if self._drainer is not None:
            self._drainer.join(timeout=5)  # the JVM has exited: its stderr ends, and so does the drainer
        if self._finalizer is not None:
            self._finalizer()  # reaps and closes the pipes; runs once
        if self._dead is None:
            self._dead = f"Kafka oracle {self.built.release}: the JVM was closed"

    def __enter__(self) -> OracleJVM:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
