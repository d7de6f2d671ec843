"""One run at a time per output directory: a second run into the same directory would interleave its
files with the first's. ``output_lock`` holds an advisory lock (``flock``) on ``DIR/.rollcheck.lock``
for the run; the kernel releases it when the process ends, however it ends, so a killed run never
leaves a stale lock behind. The file records the holder's pid and command for the refusal message."""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rollcheck.errors import UserError

LOCK_NAME = ".rollcheck.lock"


@contextmanager
def output_lock(out_dir: Path, lock_name: str = LOCK_NAME, what: str | None = None) -> Iterator[None]:
    """Hold ``out_dir/lock_name`` for the block; ``what`` names the thing in use in the refusal (default
    ``out_dir``)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / lock_name
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 512, 0).decode("utf-8", "replace").strip() or "another process"
            raise UserError(f"{what or out_dir} is in use by another rollcheck run ({holder}); wait for it "
                            "to end or pick another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}: rollcheck {' '.join(sys.argv[1:])}"[:500].encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock
