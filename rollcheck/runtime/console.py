"""Terminal output: results on stdout (``--json``: the JSON document alone), progress and logs on stderr.

Off a terminal (a pipe, a CI log) progress is a plain line at least every :data:`HEARTBEAT` seconds, so a
long run never looks hung; on a terminal it is one live line."""

from __future__ import annotations

import errno
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from rollcheck.core.errors import interruption
from rollcheck.core.traces import json_text
from rollcheck.explore.explorer import LevelStats

HEARTBEAT = 10.0  # seconds between progress lines off a terminal


class _Console(Console):
    """rich's console, except that a closed pipe is an error the command line reports (stdout closed by its
    reader: exit 141), not rich's ``SystemExit(1)``, which is the violation code."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "the output was closed by its reader")


def err_console(wide: bool = False) -> Console:
    """stderr; ``wide``: tables get 140 columns where stderr is not a terminal (a CI log), not rich's 80."""
    console = _Console(stderr=True, highlight=False)
    if wide and not console.is_terminal:
        console = _Console(stderr=True, highlight=False, width=140)
    return console


# Off a terminal (a pipe, a CI log) rich would fold tables into 80 columns and cut names
# ("metadata_versi…"), so `rollcheck list | grep metadata_version` would find nothing: lines as wide as
# their content instead.
PIPE_WIDTH = 400


def out_console() -> Console:
    console = _Console(highlight=False)
    if not console.is_terminal:
        console = _Console(highlight=False, width=PIPE_WIDTH)
    return console


def print_json(doc: Any) -> None:
    """The one way a command prints JSON on stdout: always valid JSON (a non-finite number is ``null``)."""
    sys.stdout.write(json_text(doc, indent=2, default=str) + "\n")
    sys.stdout.flush()


class _Heartbeat(threading.Thread):
    """Prints ``title: <latest status> (N s)`` on stderr every ``every`` seconds until stopped."""

    def __init__(self, title: str, every: float) -> None:
        super().__init__(name="rollcheck-heartbeat", daemon=True)
        self.title, self.every = title, every
        self.status = "starting"
        self.start_time = time.monotonic()
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.every):
            elapsed = time.monotonic() - self.start_time
            print(f"{self.title}: {self.status} ({elapsed:.0f} s)", file=sys.stderr, flush=True)

    def stop(self) -> None:
        self._stop_event.set()


@contextmanager
def status_progress(title: str, enabled: bool = True, every: float = HEARTBEAT) -> Iterator[Callable[[str], None]]:
    """A callback taking the run's current status text: a live line on a terminal, a line every ``every``
    seconds elsewhere (with the latest status), nothing when disabled."""
    console = err_console()
    if not enabled:
        yield lambda text: None
        return
    if not console.is_terminal:
        beat = _Heartbeat(title, every)
        beat.start()
        try:
            yield lambda text: setattr(beat, "status", text)
        finally:
            beat.stop()
        return
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task(f"{title}: starting")
        yield lambda text: progress.update(task, description=f"{title}: {text}")


@contextmanager
def level_progress(title: str, enabled: bool = True) -> Iterator[Any]:
    """A progress callback for breadth-first levels (level, frontier, distinct states, states/s), shown as
    :func:`status_progress` shows its status."""
    start = time.perf_counter()
    with status_progress(title, enabled) as show:
        def update(stats: LevelStats) -> None:
            dt = max(time.perf_counter() - start, 1e-9)
            show(f"level {stats.level}  frontier {stats.frontier:,}  distinct {stats.distinct:,}  "
                 f"{stats.distinct / dt:,.0f} states/s")

        yield update


@contextmanager
def on_interrupt(kept: Callable[[], str]) -> Iterator[None]:
    """If the block is interrupted (Ctrl-C, SIGTERM), attach ``kept()`` (what the run kept, one phrase) to
    the exception for the command line's one-line summary."""
    try:
        yield
    except BaseException as exc:
        stop = interruption(exc)
        if stop is not None and not getattr(exc, "rollcheck_kept", None):
            try:
                note = kept()
            except Exception:  # the summary must never hide the interruption
                note = None
            exc.rollcheck_kept = note  # type: ignore[attr-defined]
            stop.rollcheck_kept = note  # type: ignore[attr-defined]
        raise


def results_line(text: str) -> None:
    """One plain line of results on stdout."""
    print(text, flush=True)
