"""Running the gate's cells (one checker on one protocol x config x profile, or on a broken variant),
one after another or several at once up to the machine's cores.

In parallel, every cell runs in a forked worker process (``parallel`` of them, forked once, before the
Spark JVM starts): the checkers are CPU-bound Python (the explorer in one process, Z3, Hypothesis) or their
own JVM (TLC), so threads would share one core under the GIL. The cells of a checker that runs in the driver
(``Capabilities.in_driver``: Spark's, which share the driver's one Spark session) run one at a time in a
thread of this process. A cell whose checker reads the size of its config (``needs_size``) waits for the
cell that counts it (``sizes_cells``) when the plan has one. Each cell gets
``cores // parallel`` cores (explorer workers, TLC ``-workers``). A checker that kills its process (Z3
can abort) becomes that cell's error report, not the end of the run.

The results come back in plan order whatever order the cells finished in, so a parallel run writes the
same report as a sequential one; cells are started longest first when the last run's timings are known.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from rollcheck.checkers import Capabilities, Cell, CheckContext, CheckerReport, Status, get_checker
from rollcheck.core.errors import UserError
from rollcheck.runtime.forking import start_worker, worker_signals

__all__ = ["Cell", "CellResult", "cell_cores", "remember_size", "run_cell", "run_cells"]


@dataclass
class CellResult:
    cell: Cell
    report: CheckerReport
    seconds: float  # wall-clock time of the cell, as the plan's estimates use it


def run_cell(cell: Cell, ctx: CheckContext) -> CellResult:
    """Run one cell; a crashing checker gives an error report (a user mistake still raises)."""
    checker = get_checker(cell.checker)
    t0 = time.perf_counter()
    try:
        out_dir = ctx.out_dir / cell.subdir if cell.subdir else ctx.out_dir
        report = checker.run(cell, dataclasses.replace(ctx, variant=cell.variant, out_dir=out_dir,
                                                       differential_only=cell.differential_only,
                                                       settings=cell.settings))
    except UserError:
        raise
    except Exception as exc:  # a crashed checker is a finding, not the end of the run
        report = CheckerReport(cell.checker, cell.entry.name, cell.label, cell.config.profile,
                               status=Status.ERROR, message=f"{type(exc).__name__}: {exc}",
                               stats={"traceback": traceback.format_exc(limit=8)})
        report.elapsed = time.perf_counter() - t0
    return CellResult(cell, report, time.perf_counter() - t0)


Progress = Callable[[str], None]
Done = Callable[[int, CellResult], None]


def cell_cores(cells: int, parallel: int, cores: int) -> int:
    """The cores each of ``cells`` cells gets when they run ``parallel`` at once (``cores``: a sequential run's)."""
    if parallel <= 1 or cells <= 1:
        return cores
    return max(1, (os.cpu_count() or 1) // parallel)


def run_cells(cells: Sequence[Cell], ctx: CheckContext, *, parallel: int = 1, progress: Progress | None = None,
              estimates: Mapping[int, float] | None = None, done: Done | None = None) -> list[CellResult]:
    """Run every cell; ``parallel`` at most at once (1: in this process, in order). ``estimates`` (cell
    index -> seconds) orders the start longest first; ``done`` is told of each cell as it ends (its index, its
    result). Results are in ``cells``' order."""
    say = progress or (lambda _m: None)
    if parallel <= 1 or len(cells) <= 1:
        out = []
        for i, cell in enumerate(cells):
            say(f"{cell.name}")
            res = run_cell(cell, ctx)
            remember_size(ctx, res)
            if done is not None:
                done(i, res)
            out.append(res)
        return out
    return _Scheduler(cells, ctx, parallel, say, estimates or {}, done).run()


def _caps(cell: Cell) -> Capabilities:
    return get_checker(cell.checker).capabilities


def remember_size(ctx: CheckContext, res: CellResult) -> None:
    """Keep the size a sizing cell counted, for the cells that read it (``needs_size``)."""
    r = res.report
    if _caps(res.cell).sizes_cells and r.exhaustive and "distinct_states" in r.counts:
        ctx.known_sizes[res.cell.size_key] = int(r.counts["distinct_states"])


class _Scheduler:
    def __init__(self, cells: Sequence[Cell], ctx: CheckContext, parallel: int, say: Progress,
                 estimates: Mapping[int, float], done: Done | None = None) -> None:
        self.cells = list(cells)
        self.ctx = ctx
        self.say = say
        self.done = done
        self.cores = cell_cores(len(self.cells), parallel, ctx.cores)
        self.slots = parallel
        sized_at = {c.size_key: i for i, c in enumerate(self.cells) if _caps(c).sizes_cells}
        self.after: dict[int, int] = {i: sized_at[c.size_key] for i, c in enumerate(self.cells)
                                      if _caps(c).needs_size and c.size_key in sized_at}
        # Longest first (a cell waiting for its explore cell keeps its place until that one is done).
        self.pending = sorted(range(len(self.cells)), key=lambda i: (-estimates.get(i, 0.0), i))
        self.results: dict[int, CellResult] = {}

    def run(self) -> list[CellResult]:
        needs_pool = any(not _caps(c).in_driver for c in self.cells)
        workers = [_Worker.fork(self.cells, self.ctx) for _ in range(self.slots)] if needs_pool else []
        driver = _DriverThread(self.cells, self.ctx) if any(_caps(c).in_driver for c in self.cells) else None
        busy: dict[Any, int] = {}  # worker or driver -> cell index
        try:
            while self.pending or busy:
                self._start(workers, driver, busy)
                self._collect(workers, driver, busy)
        except BaseException:  # Ctrl-C or a user mistake found in a cell: stop now, not after the cells
            for w in workers:
                w.process.terminate()
            raise
        finally:
            for w in workers:
                w.stop()
            if driver is not None:
                driver.stop()
        return [self.results[i] for i in range(len(self.cells))]

    def _ready(self, i: int) -> bool:
        dep = self.after.get(i)
        return dep is None or dep in self.results

    def _start(self, workers: list[_Worker], driver: _DriverThread | None, busy: dict[Any, int]) -> None:
        for i in list(self.pending):
            if len(busy) >= self.slots:
                return
            if not self._ready(i):
                continue
            cell = self.cells[i]
            if _caps(cell).in_driver:
                assert driver is not None
                if driver in busy:
                    continue
                target: Any = driver
            else:
                idle = [w for w in workers if w not in busy]
                if not idle:
                    continue
                target = idle[0]
            self.pending.remove(i)
            busy[target] = i
            self.say(f"{cell.name} (started)")
            target.send(i, dict(self.ctx.known_sizes), self.cores)

    def _collect(self, workers: list[_Worker], driver: _DriverThread | None, busy: dict[Any, int]) -> None:
        handles: dict[Any, Any] = {}
        for target in busy:
            handles[target.conn] = target
            if isinstance(target, _Worker):
                handles[target.process.sentinel] = target
        # Wake up every second: a stop signal the kernel delivers to another thread of this process (the
        # progress thread) only sets a flag, and the main thread runs the handler when it next runs Python;
        # blocked in wait() until a cell ends, that was minutes (CI: a parallel gate ignored Ctrl-C).
        for ready in wait(list(handles), timeout=1.0):
            target = handles[ready]
            if target not in busy:
                continue
            i = busy[target]
            cell = self.cells[i]
            answer = _receive(target.conn)
            if answer is not None:
                kind, payload = answer
                if kind == "raise":
                    raise payload
                res = CellResult(cell, *payload)
            else:  # the worker process died mid-cell
                target.process.join(timeout=5)
                code = target.process.exitcode
                report = CheckerReport(cell.checker, cell.entry.name, cell.label, cell.config.profile,
                                       status=Status.ERROR, message=f"the checker's process died (exit code {code})")
                res = CellResult(cell, report, 0.0)
                workers[workers.index(target)] = _Worker.fork(self.cells, self.ctx)
            del busy[target]
            self.results[i] = res
            remember_size(self.ctx, res)
            if self.done is not None:
                self.done(i, res)
            self.say(f"{cell.name}: {res.report.status} ({res.seconds:.1f} s)")


def _receive(conn: Connection) -> tuple[str, Any] | None:
    """The worker's answer, or None when its end of the pipe closed (the process died)."""
    try:
        return conn.recv() if conn.poll() else None
    except (EOFError, OSError):
        return None


def _child_context(ctx: CheckContext, known: dict[Any, int], cores: int) -> CheckContext:
    return dataclasses.replace(ctx, known_sizes=known, cores=cores, progress=None)


class _Slot:
    """Where a cell runs; it is sent (index, known sizes, cores) and answers on ``conn``; None ends it."""

    conn: Connection

    def send(self, index: int, known: dict[Any, int], cores: int) -> None:
        self.conn.send((index, known, cores))

    def _close(self) -> None:
        try:
            self.conn.send(None)
        except OSError:  # the other end is gone already
            pass


class _Worker(_Slot):
    """A forked process that runs the cells it is sent (it inherits the plan at fork: only indexes travel)."""

    def __init__(self, process: Any, conn: Connection) -> None:
        self.process = process
        self.conn = conn

    @classmethod
    def fork(cls, cells: list[Cell], ctx: CheckContext) -> _Worker:
        parent, child = multiprocessing.get_context("fork").Pipe()
        process = multiprocessing.get_context("fork").Process(target=_worker_main, args=(cells, ctx, child),
                                                               daemon=False)
        start_worker(process)
        child.close()
        return cls(process, parent)

    def stop(self) -> None:
        self._close()
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout=5)


def _worker_main(cells: list[Cell], ctx: CheckContext, conn: Connection) -> None:
    # Ctrl-C reaches the whole process group: the parent stops the workers, which must not print tracebacks;
    # the parent's terminate() ends a worker at once.
    worker_signals()
    try:
        while True:
            try:
                msg = conn.recv()
            except EOFError:
                break
            if msg is None:
                break
            index, known, cores = msg
            try:
                res = run_cell(cells[index], _child_context(ctx, known, cores))
            except UserError as exc:
                conn.send(("raise", exc))
                continue
            try:  # only the report travels back (a cell holds the protocol's functions)
                conn.send(("result", (res.report, res.seconds)))
            except Exception as exc:  # a report that does not pickle is still an answer for the cell
                cell = cells[index]
                report = CheckerReport(cell.checker, cell.entry.name, cell.label, cell.config.profile,
                                       status=Status.ERROR, message=f"its report could not be sent back: "
                                                               f"{type(exc).__name__}: {exc}")
                conn.send(("result", (report, res.seconds)))
    finally:
        os._exit(0)  # skip the parent's atexit handlers (pytest, Spark) inherited through fork


class _DriverThread(_Slot):
    """The Spark cells, one at a time, in this process (they share its Spark session)."""

    def __init__(self, cells: list[Cell], ctx: CheckContext) -> None:
        self.conn, self._inner = multiprocessing.Pipe()
        self._thread = threading.Thread(target=self._loop, args=(cells, ctx), daemon=True, name="rollcheck-spark")
        self._thread.start()

    def _loop(self, cells: list[Cell], ctx: CheckContext) -> None:
        while True:
            msg = self._inner.recv()
            if msg is None:
                return
            index, known, cores = msg
            try:
                res = run_cell(cells[index], _child_context(ctx, known, cores))
                self._inner.send(("result", (res.report, res.seconds)))
            except BaseException as exc:
                self._inner.send(("raise", exc))

    def stop(self) -> None:
        self._close()
        self._thread.join(timeout=1)
