"""Creating files and directories under an output directory without following a planted symbolic link.

The directory a user names (``--out``) is theirs, a link included. Everything rollcheck creates or
truncates below it is made here: each directory component below the root is created by this process or
must already be a real directory (checked with ``lstat``, never followed), and each file is opened with
``O_NOFOLLOW``. A link found where rollcheck would write is refused with one line naming it, so a link
planted in a shared output directory cannot make a run overwrite a file elsewhere.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO, Any

from rollcheck.core.errors import UserError


class LinkRefused(UserError):
    """A symbolic link stands where rollcheck would create or truncate a file or directory."""


def _refused(path: Path) -> LinkRefused:
    return LinkRefused(f"refusing to write through a symbolic link: {path} (remove it, or pick another --out)")


def refuse_link(path: Path | str) -> None:
    """Raise :class:`LinkRefused` when ``path`` itself is a symbolic link (followed or dangling)."""
    if os.path.islink(path):
        raise _refused(Path(path))


def _below(path: Path, root: Path | None) -> tuple[Path, tuple[str, ...]]:
    """(the part that is the user's, the components rollcheck owns below it)."""
    if root is not None:
        try:
            return root, path.relative_to(root).parts
        except ValueError:
            pass
    return path.parent, (path.name,)


def make_dirs(path: Path | str, root: Path | str | None = None) -> Path:
    """``mkdir -p path`` where every component below ``root`` (default: the leaf only) is a real
    directory: created now, or found as one; a link or a file there is refused, naming it."""
    path = Path(path)
    base, parts = _below(path, None if root is None else Path(root))
    if root is not None:
        Path(root).mkdir(parents=True, exist_ok=True)
    else:
        base.mkdir(parents=True, exist_ok=True)
    cur = base
    for part in parts:
        if part in ("", ".", ".."):
            raise UserError(f"{path}: a path component {part!r} where a directory name is needed")
        cur = cur / part
        try:
            os.mkdir(cur, 0o755)
        except FileExistsError:
            pass
        mode = os.lstat(cur).st_mode
        if stat.S_ISLNK(mode):
            raise _refused(cur)
        if not stat.S_ISDIR(mode):
            raise UserError(f"{cur} exists and is not a directory")
    return path


def open_nofollow(path: Path | str, mode: str = "w", *, exclusive: bool = False,
                  encoding: str | None = "utf-8") -> IO[Any]:
    """Open ``path`` for writing (``w``/``wb``: create or truncate; ``a``/``ab``: append; ``r+b``: update)
    without following a link at its last component. ``exclusive`` refuses an existing file."""
    flags = os.O_CLOEXEC | os.O_NOFOLLOW
    if mode.startswith("r+"):
        flags |= os.O_RDWR
    elif mode.startswith("a"):
        flags |= os.O_WRONLY | os.O_CREAT | os.O_APPEND
    elif mode.startswith("w"):
        flags |= os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    else:
        raise ValueError(f"open_nofollow: mode {mode!r} does not write")
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.EEXIST and os.path.islink(path)):
            raise _refused(Path(path)) from None
        raise
    binary = "b" in mode
    return os.fdopen(fd, mode, encoding=None if binary else encoding)


def write_bytes(path: Path | str, data: bytes, *, sync: bool = False) -> Path:
    """Create or truncate ``path`` (never through a link) and write ``data``."""
    try:
        with open_nofollow(path, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
    except OSError as exc:
        raise _named(exc, path) from None
    return Path(path)


def write_text(path: Path | str, text: str) -> Path:
    """Create or truncate ``path`` (never through a link) and write ``text`` as UTF-8."""
    try:
        with open_nofollow(path, "w") as fh:
            fh.write(text)
    except OSError as exc:
        raise _named(exc, path) from None
    return Path(path)


def _named(exc: OSError, path: Path | str) -> OSError:
    """A write's error (a full disk's ENOSPC names no file) with the file it was writing, for the one line."""
    if exc.filename is None and exc.errno is not None:
        return OSError(exc.errno, exc.strerror, str(path))
    return exc
