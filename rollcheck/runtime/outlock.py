"""One run at a time per output directory: a second run into the same directory would interleave its
files with the first's. ``output_lock`` holds an advisory lock (``flock``) on ``DIR/.rollcheck.lock``
for the run; the kernel releases it when the last holder of the open file ends, however it ends. The
file records the holder's pid and command for the refusal message, and is emptied when the run ends.

A run killed with SIGKILL leaves its record behind, and for a moment the lock too: the processes it forked
share the open file and end only as the kernel delivers their parent-death signal
(:mod:`rollcheck.runtime.forking`). A lock whose recorded holder is no longer running is therefore waited for a
few seconds and taken over, with one line on stderr saying so. The lock file is opened without following
a link (``O_NOFOLLOW``): a link planted at its name is refused, its target untouched.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rollcheck.core.errors import UserError
from rollcheck.runtime.safefs import refuse_link

LOCK_NAME = ".rollcheck.lock"
# How long a lock whose recorded holder is dead is waited for: the dead run's forked workers get SIGKILL
# from the kernel when it dies, and release the lock within milliseconds of it.
TAKEOVER_SECONDS = 5.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _recorded_pid(text: str) -> int | None:
    m = re.match(r"pid (\d+):", text)
    return int(m.group(1)) if m else None


def _open(path: Path) -> int:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_link(path)  # one line naming it
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UserError(f"{path} is not a regular file: rollcheck keeps its lock there (remove it, or pick "
                        "another --out)")
    return fd


def _take(fd: int, what: str) -> int | None:
    """Lock ``fd``; returns the pid of a dead run whose lock this took over (None: nobody's)."""
    holder = ""
    waited_until = None
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            holder = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
            pid = _recorded_pid(holder)
            if pid is None or _alive(pid):
                raise UserError(f"{what} is in use by another rollcheck run ({holder or 'another process'}); "
                                "wait for it to end or pick another --out") from None
            waited_until = waited_until or time.monotonic() + TAKEOVER_SECONDS
            if time.monotonic() >= waited_until:
                held = ", ".join(str(p) for p in _holders(fd)) or "unknown"
                raise UserError(f"{what} is still locked by processes the run pid {pid} started (pid {held}), "
                                f"{TAKEOVER_SECONDS:.0f} s after that run ended: end them or pick another "
                                "--out") from None
            time.sleep(0.05)
    if not holder:  # free at once: a record left behind is a killed run's (a run empties it as it ends)
        holder = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
    pid = _recorded_pid(holder)
    return pid if pid is not None and pid != os.getpid() and not _alive(pid) else None


def _holders(fd: int) -> list[int]:
    """The other processes that have the lock file open (Linux ``/proc``; empty elsewhere)."""
    st = os.fstat(fd)
    found = []
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
    except OSError:
        return []
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            for name in fds:
                other = os.stat(f"/proc/{pid}/fd/{name}")
                if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                    found.append(pid)
                    break
        except OSError:  # gone, or another user's
            continue
    return found


@contextmanager
def output_lock(out_dir: Path, lock_name: str = LOCK_NAME, what: str | None = None) -> Iterator[None]:
    """Hold ``out_dir/lock_name`` for the block; ``what`` names the thing in use in the refusal (default
    ``out_dir``)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / lock_name
    fd = _open(path)
    try:
        dead = _take(fd, str(what or out_dir))
        if dead is not None:
            print(f"rollcheck: {what or out_dir}: took over the lock of run pid {dead}, which is no longer "
                  "running", file=sys.stderr, flush=True)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()}: rollcheck {' '.join(sys.argv[1:])}"[:500].encode(), 0)
        except OSError as exc:  # a full disk: the error of a write to a descriptor names no file
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        try:
            yield
        finally:
            try:  # a run that ended leaves no record; a killed one's is what the next run reports
                os.ftruncate(fd, 0)
            except OSError:
                pass
    finally:
        os.close(fd)  # releases the lock
