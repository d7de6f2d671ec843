"""The process conditions under which state fingerprints (Python hashes) agree between processes.

Two things make ``hash(state)`` differ between two Python processes that hold equal states:

* the string hash seed (``PYTHONHASHSEED``): strings and enum members hash through it;
* on Python 3.11, ``hash(None)`` is derived from None's address (constant only since 3.12), and with
  address-space layout randomization that address changes from one process start to the next. States
  hold None (an absent ZNode, an empty inbox), so two processes would fingerprint them differently.

Forked workers share both with their parent, so one local run is always consistent; a resumed run, Spark
executors and ``rollcheck`` processes on other machines are not forked from it. :func:`reexec_for_stable_hashes`
re-executes the current program once with the seed fixed to 0 and randomization turned off (Linux
``personality(ADDR_NO_RANDOMIZE)``, inherited by every process it starts: Spark's JVM and its Python
workers), so that the same Python binary gives the same hashes in each of them. Where that cannot be
done, :func:`rollcheck.core.fingerprint.hash_probe` (which hashes None too) tells the processes apart: a
checkpoint or a Spark executor that hashes differently is refused, never merged.

The re-executed interpreter runs with ``-P``: ``python -m`` would otherwise put the current directory
first on the import path, and a ``tomllib.py`` or ``json.py`` lying there would run (``-I`` would do that
too, but it also ignores ``PYTHONHASHSEED`` and the rest of the ``PYTHON*`` variables). Ctrl-C is held
(blocked) across the exec, so that one arriving while the new interpreter starts and imports is
delivered once the command line is ready for it (:func:`release_held_signals`): one line, never a
traceback from the middle of an import.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

ADDR_NO_RANDOMIZE = 0x0040000
# The pid that re-executed itself (execve keeps the pid): that process never tries twice, while the
# processes it starts, which inherit the variable, may still need to (a test that unsets the seed).
_MARK = "ROLLCHECK_STABLE_HASHES_PID"
# The signals this process blocked for the exec (numbers, comma-separated), for the new one to unblock.
_HELD = "ROLLCHECK_HELD_SIGNALS"


def _personality(persona: int) -> int:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.personality(ctypes.c_ulong(persona)))
    except (OSError, AttributeError):
        return -1


def stable_hashes() -> bool:
    """Whether this process hashes as every process started the same way does."""
    if os.environ.get("PYTHONHASHSEED") in (None, "random"):
        return False
    if sys.version_info >= (3, 12) or not sys.platform.startswith("linux"):
        return True
    current = _personality(0xFFFFFFFF)  # query only
    return current != -1 and bool(current & ADDR_NO_RANDOMIZE)


def reexec_for_stable_hashes(argv: Sequence[str], *, hold_interrupts: bool = False) -> None:
    """Replace this process by ``argv`` (the same program) under a fixed seed and, on Linux with Python
    3.11, no address-space randomization. Returns without doing anything when that is already so, when
    it was tried once, or when it cannot be done (the hash probe then guards every comparison).
    ``hold_interrupts``: Ctrl-C stays blocked across the exec until the new program calls
    :func:`release_held_signals`."""
    if stable_hashes() or os.environ.get(_MARK) == str(os.getpid()) or getattr(sys, "frozen", False):
        return
    env = dict(os.environ, **{_MARK: str(os.getpid())})
    if env.get("PYTHONHASHSEED") in (None, "random"):
        env["PYTHONHASHSEED"] = "0"
    if sys.version_info < (3, 12) and sys.platform.startswith("linux"):
        current = _personality(0xFFFFFFFF)
        if current != -1:
            _personality(current | ADDR_NO_RANDOMIZE)  # kept across exec
    # Only on request: a program that does not release them (pytest) must not inherit a blocked Ctrl-C.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT} if hold_interrupts else set())
    if hold_interrupts and signal.SIGINT not in blocked:
        env[_HELD] = str(int(signal.SIGINT))
    try:
        os.execve(sys.executable, [sys.executable, *_path_flags(), *argv], env)
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        # carry on: the hash probe refuses what this process could not share


def _path_flags() -> list[str]:
    """``-P`` (no current directory on the import path), unless rollcheck itself is imported from the
    current directory (a source checkout run from its root, not installed): that is the code's own."""
    root = Path(__file__).resolve().parent.parent
    try:
        here = Path.cwd().resolve()
    except OSError:  # the current directory was removed: nothing can be imported from it
        return ["-P"]
    return [] if root == here else ["-P"]


def release_held_signals() -> None:
    """In the process :func:`reexec_for_stable_hashes` started: unblock the signals held across the exec (a
    Ctrl-C that came meanwhile is raised now). Does nothing in any other process."""
    held = os.environ.pop(_HELD, None)
    if held is None or os.environ.get(_MARK) != str(os.getpid()):
        return
    try:
        signals = {signal.Signals(int(n)) for n in held.split(",") if n}
    except ValueError:
        return
    signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)
