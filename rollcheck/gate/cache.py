"""The gate's store of cell results: one JSON file per key under ``<cache>/cells/<first two hex>/<key>.json``.

``<cache>`` is ``--cache DIR``, else ``$ROLLCHECK_GATE_CACHE`` (``off``: no store), else ``$ROLLCHECK_CACHE``, else
``~/.cache/rollcheck`` (the Kafka oracle's builds live beside, under ``kafka-oracle/``). An entry holds its key, the
run it came from, the report and the trace files it names, and a digest of all of that: one whose digest or key
does not match (damaged, copied from elsewhere, another format) is ignored, said in one line, and its cell runs.
Entries are written to a temporary file in the same folder, synced, then renamed over the name, so a reader (a
second gate at the same time) sees a whole entry or none. A store that cannot be used (not writable, a file
where a folder goes) is one line and the gate runs without it; a write that fails (a full disk) is one line and
the gate stores nothing more.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcheck.core.traces import json_text

FORMAT = "rollcheck-gate-cell/1"
ENV = "ROLLCHECK_GATE_CACHE"
OFF = "off"
ENTRY_BYTES = 256 << 20  # an entry larger than this is neither written nor read
_KEY = re.compile(r"^[0-9a-f]{64}$")

Warn = Callable[[str], None]


def default_cache_dir() -> Path | None:
    """The store's directory when the command line names none: ``$ROLLCHECK_GATE_CACHE`` (None for ``off``),
    else ``$ROLLCHECK_CACHE``, else ``~/.cache/rollcheck``."""
    own = os.environ.get(ENV)
    if own:
        return None if own.strip().lower() == OFF else Path(own).expanduser()
    shared = os.environ.get("ROLLCHECK_CACHE")
    return Path(shared).expanduser() if shared else Path.home() / ".cache" / "rollcheck"


@dataclass(frozen=True)
class Entry:
    key: str
    origin: dict[str, Any]  # the run that stored it: run id, time, commit, seconds
    report: dict[str, Any]  # CheckerReport.to_json(full=True)
    files: dict[str, str]  # path under the run's output directory -> text (its trace files)
    traces: list[str]  # property ids whose trace the report held (rebuilt from their files when served)
    out_dir: str  # the output directory of the run that stored it


def _entry_digest(doc: Mapping[str, Any]) -> str:
    body = {k: v for k, v in doc.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class CellStore:
    """The entries under ``root / "cells"``; :meth:`open` checks that the folder is usable first."""

    def __init__(self, root: Path, warn: Warn) -> None:
        self.root = root
        self.cells = root / "cells"
        self.warn = warn
        self.writable = True

    @classmethod
    def open(cls, root: Path, warn: Warn) -> CellStore | None:
        """The store at ``root``, or None (said in one line) when it cannot hold entries."""
        store = cls(root, warn)
        try:
            store.cells.mkdir(parents=True, exist_ok=True)
            if store.cells.is_symlink() or not store.cells.is_dir():
                raise NotADirectoryError(f"{store.cells} is not a directory")
            fd, probe = tempfile.mkstemp(prefix=".probe-", dir=store.cells)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            warn(f"rollcheck: cache {root}: cannot be used ({_why(exc)}): the gate runs without it")
            return None
        return store

    def path(self, key: str) -> Path:
        return self.cells / key[:2] / f"{key}.json"

    def get(self, key: str) -> Entry | None:
        """The entry stored under ``key``; None when there is none or it is not sound (then said in one line)."""
        path = self.path(key)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return self._ignored(path, f"cannot be read: {_why(exc)}")
        try:
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    return self._ignored(path, "not a regular file")
                data = fh.read(ENTRY_BYTES + 1)
        except OSError as exc:
            return self._ignored(path, f"cannot be read: {_why(exc)}")
        if len(data) > ENTRY_BYTES:
            return self._ignored(path, "larger than any entry")
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError):
            return self._ignored(path, "damaged: not JSON")
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            return self._ignored(path, "another format")
        if doc.get("digest") != _entry_digest(doc):
            return self._ignored(path, "damaged: its content does not match its digest")
        if doc.get("key") != key:
            return self._ignored(path, "foreign: stored under another key")
        try:
            entry = Entry(key, dict(doc["origin"]), dict(doc["report"]),
                          {str(k): str(v) for k, v in dict(doc["files"]).items()},
                          [str(p) for p in doc["traces"]], str(doc["out_dir"]))
        except (KeyError, TypeError, ValueError):
            return self._ignored(path, "damaged: fields missing")
        return entry

    def put(self, entry: Entry) -> bool:
        """Store ``entry`` (a temporary file in its folder, synced, renamed over its name); False when it was not
        (the first failure is said in one line and the store takes no more)."""
        if not self.writable or not _KEY.match(entry.key):
            return False
        doc: dict[str, Any] = {"format": FORMAT, "key": entry.key, "origin": entry.origin, "report": entry.report,
                               "files": entry.files, "traces": entry.traces, "out_dir": entry.out_dir}
        doc["digest"] = _entry_digest(doc)
        # In the report's own order; a NaN or infinite number is null, as in summary.json.
        data = json_text(doc, separators=(",", ":")).encode()
        if len(data) > ENTRY_BYTES:
            return False
        path = self.path(entry.key)
        tmp: str | None = None
        try:
            path.parent.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
            tmp = None
            _sync_dir(path.parent)
        except OSError as exc:
            self.writable = False
            self.warn(f"rollcheck: cache {self.root}: cannot store results ({_why(exc)}): this gate stores no more")
            return False
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
        return True

    def _ignored(self, path: Path, why: str) -> Entry | None:
        """None, said in one line: the entry at ``path`` is not used."""
        self.warn(f"rollcheck: cache entry {path}: {why}; ignored, the cell runs")
        return None


def _sync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return " ".join(str(exc).split()) or type(exc).__name__
