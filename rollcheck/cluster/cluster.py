"""A local cluster: the nodes of one run, each a JVM process on 127.0.0.1, under one run directory, and the promise
that none outlives the run.

:class:`Cluster` is a context manager: leaving it stops every node (at the end, on an exception, on Ctrl-C); SIGTERM
and SIGINT received inside it stop the nodes before the interrupt goes on. Every node's pid is kept in the run
directory's ``pids.json``, so that a run killed with SIGKILL (which no handler sees) leaves a record that
:func:`reap` uses to stop what it left behind; a new cluster on the same directory reaps first.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from rollcheck.cluster.node import Node, NodeFailed
from rollcheck.runtime.rundir import process_alive

LOOPBACK = "127.0.0.1"


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports free on 127.0.0.1 now (held open together while they are chosen, so no two repeat)."""
    socks: list[socket.socket] = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((LOOPBACK, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def port_free(port: int) -> bool:
    """Nothing listens on ``port`` (127.0.0.1). Bound as the JVM binds its listeners, with SO_REUSEADDR: the
    connections a stopped node left in TIME_WAIT do not keep it from restarting on its port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((LOOPBACK, port))
        except OSError:
            return False
        return True



def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", errors="replace")
    except OSError:
        return ""


def reap(run_dir: Path) -> list[int]:
    """Stop the processes an earlier run in ``run_dir`` left behind (its ``pids.json``; a pid is only killed when
    its command line still names the run directory, so a reused pid is never touched); the pids stopped."""
    record = run_dir / "pids.json"
    try:
        pids = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    stopped = []
    for pid in sorted(pids.values(), key=str):
        if isinstance(pid, int) and process_alive(pid) and str(run_dir) in _cmdline(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            stopped.append(pid)
    with contextlib.suppress(OSError):
        record.unlink()
    return stopped


class Cluster:
    """The nodes of one run under ``run_dir`` (see the module docstring). ``progress`` gets one line per node
    started or stopped."""

    def __init__(self, run_dir: Path, *, progress: Callable[[str], None] | None = None) -> None:
        self.run_dir = run_dir.resolve()
        self.nodes: dict[str, Node] = {}
        self._say = progress or (lambda _text: None)
        self._lock = threading.Lock()
        self._old_handlers: dict[int, Any] = {}

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> Cluster:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        left = reap(self.run_dir)
        if left:
            self._say(f"stopped {len(left)} node process(es) an earlier run in {self.run_dir} left running")
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old_handlers[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self.stop_all()
        finally:
            for sig, old in self._old_handlers.items():
                signal.signal(sig, old)
            self._old_handlers.clear()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.stop_all()
        old = self._old_handlers.get(signum)
        if callable(old):
            old(signum, frame)
        raise KeyboardInterrupt

    # ------------------------------------------------------------------ nodes
    def node_dir(self, name: str) -> Path:
        return self.run_dir / name

    def add(self, node: Node) -> Node:
        if node.name in self.nodes:
            raise NodeFailed(f"a node named {node.name} is already part of the cluster")
        self.nodes[node.name] = node
        return node

    def start(self, node: Node, *, timeout: float = 90.0) -> float:
        """Start ``node`` (added if new) and wait for it: the seconds it took. A port it needs that is taken, a
        node that exits or is not up in time: :class:`NodeFailed`, and the caller's ``with`` stops the rest."""
        if node.name not in self.nodes:
            self.add(node)
        for port in node.ports:
            if not port_free(port):
                raise NodeFailed(f"node {node.name} cannot start: port {port} on {LOOPBACK} is taken")
        node.start()
        self._record()
        seconds = node.wait_ready(timeout)
        self._say(f"{node.name} up in {seconds:.1f} s (pid {node.pid}, log {node.log})")
        return seconds

    def start_together(self, nodes: list[Node], *, timeout: float = 90.0) -> None:
        """Start ``nodes`` at once, then wait for each (a quorum of several voters needs a majority up before any
        of them says it is)."""
        for node in nodes:
            if node.name not in self.nodes:
                self.add(node)
            for port in node.ports:
                if not port_free(port):
                    raise NodeFailed(f"node {node.name} cannot start: port {port} on {LOOPBACK} is taken")
        for node in nodes:
            node.start()
        self._record()
        for node in nodes:
            seconds = node.wait_ready(timeout)
            self._say(f"{node.name} up in {seconds:.1f} s (pid {node.pid}, log {node.log})")

    def stop(self, name: str, *, timeout: float = 20.0) -> int | None:
        node = self.nodes[name]
        code = node.stop(timeout)
        self._record()
        return code

    def stop_all(self) -> None:
        """Stop every node, brokers before controllers before the rest (ZooKeeper last)."""
        with self._lock:
            order = {"broker": 0, "streams": 0, "combined": 1, "controller": 1, "zookeeper": 2}
            for node in sorted(self.nodes.values(), key=lambda n: (order.get(n.role, 1), n.name)):
                if node.alive:
                    node.stop()
                    self._say(f"{node.name} stopped")
            self._record()

    def running(self) -> list[str]:
        return [n for n, node in sorted(self.nodes.items()) if node.alive]

    def _record(self) -> None:
        pids = {name: node.pid for name, node in self.nodes.items() if node.alive and node.pid is not None}
        path = self.run_dir / "pids.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(pids, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)


@contextlib.contextmanager
def cluster(run_dir: Path, *, progress: Callable[[str], None] | None = None) -> Iterator[Cluster]:
    with Cluster(run_dir, progress=progress) as c:
        yield c
