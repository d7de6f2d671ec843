"""A gate run's use of the store (:mod:`rollcheck.gate.cache`): each cell looked up by its key
(:mod:`rollcheck.gate.cellkey`) before anything runs, a hit served as the stored report marked ``cached`` with the
run it came from (its trace files written again under this run's output directory and its traces rebuilt from
them), and each cell that ran stored as it ends when its checker says its result may be (``cacheable``)."""

from __future__ import annotations

import dataclasses
import os
import secrets
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

import rollcheck
from rollcheck.checkers import Cell, CheckContext, CheckerReport, get_checker
from rollcheck.core.traces import read_itf, trace_from_itf, write_text_atomic
from rollcheck.gate.cache import CellStore, Entry
from rollcheck.gate.cellkey import CellKey, KeyBuilder
from rollcheck.gate.cellrun import CellResult, cell_cores

Warn = Callable[[str], None]


class GateCache:
    """The store as one gate run uses it: lookups, then the cells that ran stored; ``summary`` for the report."""

    def __init__(self, store: CellStore, cells: Sequence[Cell], ctx: CheckContext, out_dir: Path, warn: Warn) -> None:
        self.store = store
        self.cells = list(cells)
        self.ctx = ctx
        self.out_dir = out_dir
        self.warn = warn
        self.keys = KeyBuilder(cells, ctx)
        self.run_id = f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(4)}"
        self._commit: str | bool | None = False  # False: not asked yet
        self.hits = 0
        self.stored = 0
        self.uncached: dict[str, str] = {}  # cell name -> why it has no key

    def lookup(self, parallel: int) -> dict[int, CellResult]:
        """The cells served from the store, by plan index. A cell's key names the cores it runs with where its
        checker says they matter: the share a cell gets beside others, or all of them when it runs alone."""
        beside = cell_cores(len(self.cells), parallel, self.ctx.cores)
        found: dict[int, CellResult] = {}
        for i, cell in enumerate(self.cells):
            t0 = time.perf_counter()
            keys = [self.key(cell, cores) for cores in dict.fromkeys((beside, self.ctx.cores))]
            for key in dict.fromkeys(k.digest for k in keys if isinstance(k, CellKey)):
                entry = self.store.get(key)
                report = None if entry is None else self._serve(entry, cell)
                if report is not None:
                    report.elapsed = time.perf_counter() - t0
                    found[i] = CellResult(cell, report, report.elapsed)
                    self.hits += 1
                    break
        return found

    def key(self, cell: Cell, cores: int) -> CellKey | str:
        key = self.keys.key(cell, cores)
        if isinstance(key, str):
            self.uncached[cell.name] = key
        return key

    def store_result(self, res: CellResult, key: CellKey | str) -> None:
        """Store a cell that ran, when its checker says its result is deterministic and may be kept."""
        if isinstance(key, str) or not self.store.writable:
            return
        report = res.report
        cacheable = getattr(get_checker(res.cell.checker), "cacheable", None)
        if cacheable is None or not cacheable(report):
            return
        entry = self._entry(key, report, res.seconds)
        if entry is not None and self.store.put(entry):
            self.stored += 1

    def summary(self) -> dict[str, Any]:
        return {"dir": str(self.store.root), "run": self.run_id, "hits": self.hits, "stored": self.stored,
                "not_cacheable": len(self.uncached)}

    # ------------------------------------------------------------------ entries

    def _entry(self, key: CellKey, report: CheckerReport, seconds: float) -> Entry | None:
        files: dict[str, str] = {}
        out = self.out_dir.resolve()
        for v in report.properties.values():
            if not v.trace_path:
                continue
            path = Path(v.trace_path).resolve()
            if not path.is_relative_to(out):
                return None  # a file this run cannot write again: not stored
            try:
                files[path.relative_to(out).as_posix()] = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
        origin = {"run": self.run_id, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "commit": self._git_commit(), "key": key.digest, "seconds": round(seconds, 3)}
        traces = [v.id for v in report.properties.values() if v.trace is not None]
        return Entry(key.digest, origin, report.to_json(full=True), files, traces, str(out))

    def _serve(self, entry: Entry, cell: Cell) -> CheckerReport | None:
        """The stored report as this run's: its files written under this run's output directory, its paths
        moved there, its traces rebuilt; None (the cell runs) when that cannot be done."""
        out = self.out_dir.resolve()
        try:
            doc = _moved(entry.report, entry.out_dir, str(out))
            report = CheckerReport.from_json(doc)
            for name, text in entry.files.items():
                rel = PurePosixPath(name)
                if rel.is_absolute() or ".." in rel.parts or not rel.parts:
                    raise ValueError(f"a file outside the output directory: {name}")
                write_text_atomic(out / rel, text, root=out)
            if entry.traces:
                ts = dataclasses.replace(self.ctx, variant=cell.variant).build(cell.entry, cell.config)
                for pid in entry.traces:
                    verdict = report.properties[pid]
                    assert verdict.trace_path is not None
                    verdict.trace = trace_from_itf(read_itf(Path(verdict.trace_path)), ts)
        except (OSError, ValueError, KeyError, TypeError, AssertionError) as exc:
            self.warn(f"rollcheck: cache entry {self.store.path(entry.key)}: cannot be served "
                      f"({type(exc).__name__}: {exc}); ignored, the cell runs")
            return None
        if (report.protocol, report.config, report.profile, report.checker) != cell.key:
            self.warn(f"rollcheck: cache entry {self.store.path(entry.key)}: foreign: another cell's result; "
                      "ignored, the cell runs")
            return None
        report.cached = {**entry.origin, "elapsed_seconds": report.elapsed}
        return report

    def _git_commit(self) -> str | None:
        if self._commit is False:
            self._commit = _commit_of(Path(rollcheck.__file__).resolve().parent.parent)
        return self._commit if isinstance(self._commit, str) else None


def _moved(value: Any, old: str, new: str) -> Any:
    """``value`` with every path under ``old`` (the storing run's output directory) moved under ``new``."""
    if old == new:
        return value
    if isinstance(value, str):
        if value == old:
            return new
        return value.replace(old + os.sep, new + os.sep)
    if isinstance(value, list):
        return [_moved(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _moved(v, old, new) for k, v in value.items()}
    return value


def _commit_of(root: Path) -> str | None:
    """The commit checked out at ``root`` (``-dirty`` when files differ from it), None outside a git checkout."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=False, stdin=subprocess.DEVNULL)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return head.stdout.strip()[:12] + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")
