"""Checks of what a user hands in (files to read, a directory to write, numbers), each failing with one
:class:`~rollcheck.core.errors.UserError` line that names the input, before any long work starts."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

from rollcheck.core.errors import UserError

# A config, gate config or runbook is a few kilobytes: more than this is not one (``/dev/zero``, a log
# named by mistake), and is refused after reading at most this much.
TEXT_INPUT_MAX_BYTES = 16 << 20


def read_text_input(path: Path, what: str, max_bytes: int = TEXT_INPUT_MAX_BYTES) -> str:
    """The text of a file the user named (a config): missing, a directory, unreadable, not UTF-8 or larger
    than ``max_bytes`` are one-line errors. At most ``max_bytes`` are read, so a device or pipe that
    never ends (``/dev/zero``) is refused too, not read until memory runs out."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:  # a regular file says its size: not read at all
                data = b""
            else:
                data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise UserError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise UserError(f"{what} {path} is a directory, not a file") from None
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if size > max_bytes or len(data) > max_bytes:
        raise UserError(f"{what} {path} is larger than {max_bytes >> 20} MiB: not a {what}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{what} {path} is not UTF-8 text (byte {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # newlines as a file opened as text reads them


def check_output_dir(path: Path, what: str = "--out") -> None:
    """Fail now, not after the run, when ``path`` cannot become a writable directory: it is a file, it is
    under a file, or its nearest existing directory refuses a new entry (permissions, a read-only or
    immutable file system). Probing creates and removes one empty directory; nothing else is left."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UserError(f"{what} {p}: exists and is not a directory")
    existing = p
    while not existing.exists():
        parent = existing.parent
        if parent == existing:
            break
        existing = parent
    if not existing.is_dir():
        raise UserError(f"{what} {p}: {existing} is a file, so no directory can be made under it")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".rollcheck-probe-", dir=existing))
    except OSError as exc:
        raise UserError(f"{what} {p}: cannot write under {existing} ({exc.strerror or exc})") from None


def whole_number(value: object, where: str, least: int) -> int:
    """An integer (not a bool) of at least ``least``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"{where} must be a whole number, not {value!r}")
    if value < least:
        raise UserError(f"{where} must be at least {least}, not {value}")
    return value


def positive_number(value: object, where: str) -> float:
    """A finite number above 0 (NaN and infinity refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(f"{where} must be a number, not {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise UserError(f"{where} must be a finite number above 0, not {value}")
    return float(value)
