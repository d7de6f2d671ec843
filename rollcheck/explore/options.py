"""What one exploration is asked to do: the explorer's options, one frozen object every caller passes whole.

The defaults are those of a plain library call (``explore(ts)``): stop at the first violation, check every
property, one process, nothing on disk. The ``rollcheck explore`` command, the gate's checkers, the
runbooks and the benchmarks each build one :class:`ExploreOptions` from their own inputs; the Spark engine
fills in ``distribute`` and its two sizes (:mod:`rollcheck.spark.explorer`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rollcheck.explore.result import ProgressFn

if TYPE_CHECKING:
    from rollcheck.explore.expansion import Chunk, ChunkResult, Expander

# Graph (liveness) properties need every edge in memory (12 bytes each while exploring, about 40 at the
# search's peak): above this many states they are reported "not checked" rather than risking the machine
# (``graph_limit`` raises it). 10^7 states of the largest fan-out here (8 edges a state) peak near 3 GB.
GRAPH_LIMIT = 10_000_000
# Levels narrower than this are expanded in the calling process even with several workers.
PARALLEL_MIN = 2_000

# Sees each level's new states once, as ``(level, states)`` in the level store's order (state ``i`` is at position
# ``i`` of ``level``: what :func:`rollcheck.explore.shortest.replay` rebuilds a path to).
Visit = Callable[[int, Sequence[Any]], None]
# Expands a level's chunks elsewhere; must return, in chunk order, what ``Expander.expand`` returns for each.
Distribute = Callable[["Expander", Sequence["Chunk"]], list["ChunkResult"]]


@dataclass(frozen=True, kw_only=True)
class ExploreOptions:
    """The options of one exploration (see :func:`rollcheck.explore.explorer.explore` for what each does)."""

    config_name: str = ""  # the config's label, in the result, the traces and the checkpoint's key
    variant: str | None = None  # the broken variant explored, if any (result and checkpoint key)
    max_depth: int | None = None  # stop after this BFS level
    max_states: int | None = None  # stop once this many distinct states are found
    stop_at_first: bool = True  # stop at the first violation; else one shortest trace per property
    check_graph: bool = True  # check graph (liveness) properties on a complete run
    graph_limit: int = GRAPH_LIMIT  # ... of at most this many states
    progress: ProgressFn | None = None  # called after every level
    workers: int = 1  # processes that expand a level (the result does not depend on it)
    parallel_min: int = PARALLEL_MIN  # levels narrower than this are expanded in this process
    symmetry: bool = False  # one state per orbit of the protocol's ``symmetry_key``
    checkpoint_dir: Path | None = None  # checkpoint every completed level here
    checkpoint_root: Path | None = None  # the user's directory it lies under (default: its parent)
    resume: bool = False  # continue from the checkpoint in ``checkpoint_dir``
    max_memory: int | None = None  # bytes: stop, resumable, before a level that would not fit
    distribute: Distribute | None = None  # the Spark engine: expands the wide levels' chunks elsewhere
    distribute_min: int = 0  # ... the levels of at least this many states
    distribute_slices: int = 8  # ... each cut into this many chunks
    # Called with every level's new states (level 0: the initial states) as the search finds them, in the driver
    # (the Kafka oracle asks its questions there: rollcheck.oracle.check). Not called for the levels a resume
    # restores from a checkpoint (their states are not kept).
    visit: Visit | None = None
