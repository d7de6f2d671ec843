"""The Spark engine: the local explorer's breadth-first search with its wide levels expanded on executors.

There is one exploration loop (:class:`rollcheck.explore.explorer.Exploration`) and one expansion
(:class:`rollcheck.explore.expansion.Expander`); this module only decides where a level's chunks are expanded
(``ExploreOptions.distribute``), and takes the same :class:`ExploreOptions` as the local engine plus its own
:class:`SparkOptions`.
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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from rollcheck.core.errors import UserError
from rollcheck.core.fingerprint import FingerprintSet, hash_probe
from rollcheck.core.registry import build_system
from rollcheck.core.transition import TransitionSystem
from rollcheck.explore.expansion import Chunk, ChunkResult, Expander, Segment
from rollcheck.explore.explorer import ExplorationResult, explore
from rollcheck.explore.options import ExploreOptions

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


@dataclass(frozen=True, kw_only=True)
class SparkOptions:
    """The Spark engine's own options, beside the exploration's :class:`ExploreOptions`."""

    master: str = "local[*]"  # the Spark master URL
    partitions: int | None = None  # tasks a wide level is cut into (default: four per executor core)
    spark_min: int = SPARK_MIN  # the narrowest level sent to Spark (0: every level)


def explore_spark(protocol: str, config: Any, options: ExploreOptions | None = None,
                  spark_options: SparkOptions | None = None) -> ExplorationResult:
    """Explore a registered protocol (or ``options.variant`` of it) with the Spark engine on
    ``spark_options.master``."""
    from rollcheck.spark.session import get_session

    options = options or ExploreOptions()
    spark = spark_options or SparkOptions()
    ts = build_system(protocol, config, options.variant)
    return explore_system_spark(ts, get_session(spark.master), options, spark)


def explore_system_spark(ts: TransitionSystem[Any], session: Any, options: ExploreOptions | None = None,
                         spark_options: SparkOptions | None = None) -> ExplorationResult:
    """The engine for any transition system (shipped to the executors in the tasks' closures), on the Spark
    ``session`` (its master is the session's; ``spark_options.master`` is not read).

    ``spark_options.partitions``: tasks a wide level is cut into (default: four per executor core).
    ``options.workers``: the driver's processes for the narrow levels. ``spark_options.spark_min``: the
    narrowest level sent to Spark (0: all). With ``options.checkpoint_dir`` each completed level is
    checkpointed there in the local engine's format (as for :func:`rollcheck.explore.explorer.explore`).
    """
    options = options or ExploreOptions()
    spark = spark_options or SparkOptions()
    sc = session.sparkContext
    levels = SparkLevels(sc, spark.partitions or max(2, sc.defaultParallelism * 4))
    t0 = time.perf_counter()
    result = explore(ts, dataclasses.replace(options, distribute=levels, distribute_min=spark.spark_min,
                                             distribute_slices=levels.slices))
    result.engine = "spark"
    result.extra["spark"] = {"master": sc.master, "default_parallelism": sc.defaultParallelism,
                             "tasks_per_level": levels.slices, "spark_min": spark.spark_min,
                             "levels_on_spark": levels.levels,
                             "spark_seconds": round(levels.seconds, 3),
                             "seconds_with_session": round(time.perf_counter() - t0, 3)}
    return result
