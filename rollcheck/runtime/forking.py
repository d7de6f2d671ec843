"""Forked worker processes, the child processes rollcheck starts (TLC's JVM), and the stop signals.

A command's workers ignore Ctrl-C (the terminal sends it to the whole process group; the parent stops
them) and die at once on the parent's ``terminate()``. A child forked from the parent inherits the
parent's Python handlers until its first line sets its own, so a Ctrl-C arriving in that window ran the
parent's handler in the child. :func:`start_worker` forks with both signals blocked, so the child is born
deaf to them, and :func:`worker_signals` (the child's first call) sets its dispositions, then unblocks;
the parent's signal meanwhile stays pending and is delivered to it when it unblocks, never lost.

A parent killed with SIGKILL runs no clean-up, so its children would go on as orphans: a forked worker
also holds the parent's open files, the output lock among them (``rollcheck.runtime.outlock``), and would keep
the next run out. On Linux every such child asks the kernel for SIGKILL when its parent dies
(``prctl(PR_SET_PDEATHSIG)``): a forked worker in :func:`worker_signals`, a subprocess (TLC's JVM)
through :func:`die_with_parent`, run between fork and exec (the setting survives exec). The kernel sends
it when the *thread* that forked the child ends, so a child is started from a thread that outlives it
(the caller waits for it). A parent that died before the setting took effect is caught by comparing
``getppid()`` with the pid it had.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
PR_SET_PDEATHSIG = 1


def _prctl() -> Any:
    """libc's ``prctl``, or None where there is none (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _end_with(prctl: Any, parent: int) -> None:
    """In the child: SIGKILL when ``parent`` ends, and end now if it already has."""
    if prctl is None or prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        return
    if os.getppid() != parent:  # the parent died before the setting: nobody would send the signal
        os._exit(1)


def start_worker(process: Any) -> None:
    """``process.start()`` (a fork) with the stop signals blocked in the parent for the fork's duration."""
    if threading.current_thread() is not threading.main_thread():
        process.start()
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        process.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def worker_signals() -> None:
    """In a forked worker, first: it dies with its parent (even a SIGKILLed one), Ctrl-C is ignored (the
    parent's to handle), SIGTERM ends it silently."""
    end_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def end_with_parent() -> None:
    """In a forked worker: it is SIGKILLed when its parent ends, however it ends (its other signal
    dispositions are left alone: a pool whose workers stop on Ctrl-C themselves uses this alone)."""
    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid is not None:  # the pid the parent had when it made the Process
        _end_with(_prctl(), parent.pid)


def die_with_parent() -> Callable[[], None]:
    """A ``preexec_fn`` for ``subprocess``: the child is SIGKILLed when this process (the calling thread)
    ends. libc is loaded here, in the parent: the child between fork and exec only makes the call."""
    prctl = _prctl()
    parent = os.getpid()
    return lambda: _end_with(prctl, parent)
