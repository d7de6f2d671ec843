"""Terminal output: human output and progress on stderr, machine output (``--json``) alone on stdout."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from rollcheck.explorer import LevelStats


def err_console(wide: bool = False) -> Console:
    """stderr; ``wide``: tables get 140 columns where stderr is not a terminal (a CI log), not rich's 80."""
    console = Console(stderr=True, highlight=False)
    if wide and not console.is_terminal:
        console = Console(stderr=True, highlight=False, width=140)
    return console


# Off a terminal (a pipe, a CI log) rich would fold tables into 80 columns and cut names
# ("metadata_versi…"), so `rollcheck list | grep metadata_version` would find nothing: lines as wide as
# their content instead.
PIPE_WIDTH = 400


def out_console() -> Console:
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=PIPE_WIDTH)
    return console


def print_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")
    sys.stdout.flush()


@contextmanager
def level_progress(title: str, enabled: bool = True) -> Iterator[Any]:
    """A live line for breadth-first levels: level, frontier, distinct states, states/s.

    Yields a callback taking :class:`LevelStats`. On a non-terminal stderr it prints nothing, so CI logs
    stay readable.
    """
    console = err_console()
    if not enabled or not console.is_terminal:
        yield lambda stats: None
        return
    start = time.perf_counter()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task(f"{title}: starting")

        def update(stats: LevelStats) -> None:
            dt = max(time.perf_counter() - start, 1e-9)
            progress.update(task, description=(
                f"{title}: level {stats.level}  frontier {stats.frontier:,}  "
                f"distinct {stats.distinct:,}  {stats.distinct / dt:,.0f} states/s"))

        yield update
