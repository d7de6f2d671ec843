"""The Spark engine: the local explorer's breadth-first search with its wide levels expanded on executors.

There is one exploration loop (:func:`rollcheck.explorer.explore`) and one expansion
(:class:`rollcheck.expansion.Expander`); this module only decides where a level's chunks are expanded.
A level whose frontier has at least ``spark_min`` states is cut into chunks that go to the executors as
one Spark job (each task expands one chunk: the frontier states arrive as the same pickled segments the
local engine keeps, the visited set as of the level's start arrives as a broadcast NumPy table); a
narrower level is expanded in the driver by the local engine's worker processes, where a Spark job
would cost more than it saves. Chunk results do not depend on where a chunk ran, and they are merged in
chunk order by the same code, so the counts, the violations, the counterexamples and the checkpoint are
identical whichever way each level went (tests run every level on Spark, none, and a mix). With a
checkpoint, the tasks also return their new states' canonical encodings (``Expander.encode``), which the
driver writes as the frontier: the pickled segments only ever travel between processes, never to disk.

What this design keeps in the driver: the visited set (about 20 bytes a state), the per-level parent
pointers and the checkpoint (memory-mapped files under ``--out``), as the local engine does; what goes
over the network each wide level: the frontier out, the new candidates back, and the visited set once
per executor (a broadcast). Executors need no shared file system. A lost executor's tasks are retried
by Spark (tasks are deterministic); a lost driver resumes from the checkpoint with ``--resume``.
Liveness (graph) properties are checked as by the local engine: the chunks return the edges.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcheck.errors import UserError
from rollcheck.expansion import Chunk, ChunkResult, Expander, Segment
from rollcheck.explorer import GRAPH_LIMIT, ExplorationResult, LevelStats, explore
from rollcheck.fingerprint import FingerprintSet, hash_probe
from rollcheck.registry import build_system
from rollcheck.transition import TransitionSystem

# Levels with fewer frontier states than this are expanded in the driver (measured on this 2-core machine
# with local[2]: a Spark job costs 0.15-0.3 s, which the local engine's 2 workers spend on ~20,000 states of
# features:default; at 50,000 the job's cost is under a tenth of the level's).
SPARK_MIN = 50_000


@dataclass
class SparkLevels:
    """Expands a level's chunks as one Spark job, one task a chunk; counts what it did."""

    sc: Any
    slices: int  # chunks a level is cut into: tasks for the executors' cores, a few each for balance
    levels: int = 0  # levels that went to Spark
    seconds: float = 0.0

    def __call__(self, expander: Expander, chunks: Sequence[Chunk]) -> list[ChunkResult]:
        t0 = time.perf_counter()
        visited = self.sc.broadcast(expander.visited)
        # The task closure carries the system and the properties (cloudpickle: they close over the config);
        # the visited set travels once per executor as a broadcast, not once per task.
        shell = dataclasses.replace(expander, visited=FingerprintSet(capacity=4))
        payload = [(i, c.base, [(seg.items, seg.keep, seg.raw()) for seg in c.segments])
                   for i, c in enumerate(chunks)]

        def run(rows: Iterator[tuple[int, int, list[tuple[int, Any, bytes]]]]
                ) -> Iterator[tuple[int, int, ChunkResult | None]]:
            probe = hash_probe()
            if probe != driver_probe:  # fingerprints would not match the driver's: do no work
                yield -1, probe, None
                return
            ex = dataclasses.replace(shell, visited=visited.value)
            for i, base, segs in rows:
                states: list[Any] = []
                for items, keep, blob in segs:
                    states.extend(Segment(items, keep, blob).load())
                yield i, probe, ex.expand(states, base)

        driver_probe = hash_probe()
        try:
            out = self.sc.parallelize(payload, len(payload)).mapPartitions(run).collect()
        finally:
            visited.destroy()
        if any(probe != driver_probe for _, probe, _ in out):
            raise UserError("the Spark executors' Python hashes differ from the driver's, so their state "
                            "fingerprints would too: run the driver through the rollcheck command (it fixes "
                            "PYTHONHASHSEED, which PySpark passes on, and turns address randomization off, which "
                            "its executors inherit on this machine); on a cluster, run the workers with "
                            "PYTHONHASHSEED=0 under `setarch -R`, or use Python 3.12+ everywhere")
        self.levels += 1
        self.seconds += time.perf_counter() - t0
        return [r for _, _, r in sorted(out, key=lambda row: row[0]) if r is not None]


def explore_spark(protocol: str, config: Any, *, config_name: str, variant: str | None, master: str,
                  partitions: int | None, checkpoint_dir: Path | None, resume: bool, max_depth: int | None,
                  max_states: int | None, stop_at_first: bool,
                  progress: Callable[[LevelStats], None] | None, workers: int = 1, symmetry: bool = False,
                  spark_min: int = SPARK_MIN, graph_limit: int = GRAPH_LIMIT,
                  max_memory: int | None = None, checkpoint_root: Path | None = None) -> ExplorationResult:
    """Explore a registered protocol (or one of its variants) with the Spark engine on ``master``."""
    from rollcheck.spark.session import get_session

    ts = build_system(protocol, config, variant)
    spark = get_session(master)
    return explore_system_spark(ts, spark, checkpoint_dir=checkpoint_dir, config_name=config_name, variant=variant,
                                partitions=partitions, resume=resume, max_depth=max_depth, max_states=max_states,
                                stop_at_first=stop_at_first, progress=progress, workers=workers,
                                symmetry=symmetry, spark_min=spark_min, graph_limit=graph_limit, max_memory=max_memory,
                                checkpoint_root=checkpoint_root)


def explore_system_spark(ts: TransitionSystem[Any], spark: Any, *, checkpoint_dir: Path | None, config_name: str = "",
                         variant: str | None = None, partitions: int | None = None, resume: bool = False,
                         max_depth: int | None = None, max_states: int | None = None, stop_at_first: bool = True,
                         progress: Callable[[LevelStats], None] | None = None, workers: int = 1,
                         symmetry: bool = False, spark_min: int = SPARK_MIN, graph_limit: int = GRAPH_LIMIT,
                         max_memory: int | None = None, checkpoint_root: Path | None = None) -> ExplorationResult:
    """The engine for any transition system (shipped to the executors in the tasks' closures).

    ``partitions``: tasks a wide level is cut into (default: four per executor core). ``workers``: the
    driver's processes for the narrow levels. ``spark_min``: the narrowest level sent to Spark (0: all).
    With ``checkpoint_dir`` each completed level is checkpointed there in the local engine's format
    (``checkpoint_root``: the user's directory it lies under, as for :func:`rollcheck.explorer.explore`).
    """
    sc = spark.sparkContext
    levels = SparkLevels(sc, partitions or max(2, sc.defaultParallelism * 4))
    t0 = time.perf_counter()
    result = explore(ts, config_name=config_name, max_depth=max_depth, max_states=max_states,
                     stop_at_first=stop_at_first, progress=progress, variant=variant, workers=workers,
                     symmetry=symmetry, resume=resume, graph_limit=graph_limit,
                     checkpoint_dir=None if checkpoint_dir is None else Path(checkpoint_dir),
                     checkpoint_root=checkpoint_root,
                     max_memory=max_memory, distribute=levels, distribute_min=spark_min,
                     distribute_slices=levels.slices)
    result.engine = "spark"
    result.extra["spark"] = {"master": sc.master, "default_parallelism": sc.defaultParallelism,
                             "tasks_per_level": levels.slices, "spark_min": spark_min,
                             "levels_on_spark": levels.levels,
                             "spark_seconds": round(levels.seconds, 3),
                             "seconds_with_session": round(time.perf_counter() - t0, 3)}
    return result
