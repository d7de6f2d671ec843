"""Ctrl-C and SIGTERM during a Z3 query.

Python runs signal handlers only between bytecodes of the main thread, and a Z3 query is one long C
call (ctypes releases the GIL but the main thread does not return until Z3 does), so without help a
Ctrl-C waits for the query to finish, minutes with a large BMC depth. Inside :func:`interruptible_z3`
Z3's own Ctrl-C handling (``ctrl_c``, on by default) is turned off for the block: it takes SIGINT from
Python, cancels the query and swallows the signal, so the run went on with the next query. Instead
the C-level handler's wake-up byte (``signal.set_wakeup_fd``) is read by a helper thread, which calls
``Z3_interrupt`` on the main context (documented as safe from another thread): the query returns
``unknown`` at once and the pending KeyboardInterrupt / Terminated is raised by the main thread. A call
the interrupt cancels that is no query (``push``) raises Z3's "canceled" instead, before the pending
exception: once a stop signal came, that is the signal too. The interrupt leaves the main context
cancelled for good (every later call fails "canceled"): fine for a run the signal ends, not for a process
that goes on (tests send their signals to a child process).
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_STOP_SIGNALS = {int(signal.SIGINT), int(signal.SIGTERM)}


def _signal_in(exc: ctypes.ArgumentError) -> KeyboardInterrupt | None:
    from rollcheck.core.errors import Terminated

    text = str(exc)
    if "Terminated" in text:
        return Terminated()
    if "KeyboardInterrupt" in text:
        return KeyboardInterrupt()
    return None


@contextmanager
def interruptible_z3() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread receives signals
        return
    import z3

    z3.set_param("ctrl_c", False)
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous = signal.set_wakeup_fd(write_fd)
    done = threading.Event()
    stopped: list[int] = []  # the stop signals the watcher saw

    def watch() -> None:
        while True:
            try:
                data = os.read(read_fd, 64)
            except OSError:
                return
            if done.is_set() or not data:
                return
            hit = _STOP_SIGNALS & set(data)
            if hit:
                stopped.append(min(hit))
                z3.main_ctx().interrupt()

    watcher = threading.Thread(target=watch, name="rollcheck-z3-interrupt", daemon=True)
    watcher.start()
    try:
        yield
    except ctypes.ArgumentError as exc:
        # A signal's exception raised while ctypes converted a Z3 call's arguments comes out as ctypes'
        # ArgumentError ("argument 2: KeyboardInterrupt: "), which a caller would take for a crash.
        stop = _signal_in(exc)
        if stop is None:
            raise
        raise stop from None
    except z3.Z3Exception:
        # CI: Ctrl-C during a solver push raised "push canceled" and prove printed a traceback.
        if not stopped:
            raise
        from rollcheck.core.errors import Terminated

        raise (KeyboardInterrupt() if stopped[0] == signal.SIGINT else Terminated()) from None
    finally:
        signal.set_wakeup_fd(previous)
        done.set()
        os.close(write_fd)  # the watcher's read returns b"" and it ends
        watcher.join(timeout=1.0)
        os.close(read_fd)
        z3.set_param("ctrl_c", True)
