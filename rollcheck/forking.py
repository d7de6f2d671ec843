"""Forked worker processes and the stop signals (Ctrl-C, SIGTERM).

A command's workers ignore Ctrl-C (the terminal sends it to the whole process group; the parent stops
them) and die at once on the parent's ``terminate()``. A child forked from the parent inherits the
parent's Python handlers until its first line sets its own, so a Ctrl-C arriving in that window ran the
parent's handler in the child. :func:`start_worker` forks with both signals blocked, so the child is born
deaf to them, and :func:`worker_signals` (the child's first call) sets its dispositions, then unblocks;
the parent's signal meanwhile stays pending and is delivered to it when it unblocks, never lost.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


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
    """In a forked worker, first: Ctrl-C ignored (the parent's to handle), SIGTERM ends it silently."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
