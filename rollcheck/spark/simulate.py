"""Random walks on Spark, each checked against the properties and re-executed against the reference.

Walk ``i`` of a run with seed ``S`` draws from ``random.Random(f"{S}:{i}")``, so a run is reproducible
whatever the partitioning. Along each walk every state invariant and step property is checked; the walk
stops at its first violation or at a state with no successor. Every step is re-executed on a separately
built copy of the system (or on ``replay_system``): the step's action and next state must be among that
system's successors of the state, else the step is a *divergence*. The walks run in batches, one Spark
task a batch and one Spark job in all; each task remembers the successors it computed (walks revisit
the states near the start), so a step is re-executed once per task. Results: one row per walk written as
Parquet, plus a JSON summary; violating walks are returned as traces (the CLI writes them as ITF).
"""

from __future__ import annotations

import hashlib
import pickle
import random
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rollcheck.core.fingerprint import fingerprint
from rollcheck.core.traces import Step, Trace, write_json_atomic
from rollcheck.core.transition import Action, TransitionSystem, properties_by_kind


@dataclass
class SimulationResult:
    protocol: str
    config: str
    seed: int
    traces: int
    depth: int
    steps: int = 0
    distinct_states: int = 0
    violations: list[dict[str, Any]] = field(default_factory=list)
    divergences: list[dict[str, Any]] = field(default_factory=list)
    elapsed: float = 0.0
    violation_traces: list[Trace] = field(default_factory=list)
    guided: bool = False
    action_counts: dict[str, int] = field(default_factory=dict)  # steps per action (guided: copied prefixes too)

    def to_json(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "config": self.config, "seed": self.seed, "traces": self.traces,
                "depth": self.depth, "guided": self.guided, "steps": self.steps,
                "distinct_states": self.distinct_states,
                "violations": self.violations, "divergences": self.divergences,
                "action_counts": dict(sorted(self.action_counts.items())),
                "elapsed_seconds": round(self.elapsed, 2)}


# A walk's row: index, labels (from an initial state), violated property ("" if none), its step (-1),
# divergence (step, label) or None, the encoded states (violating or diverging walks only: the driver
# rebuilds their traces), the steps this walk took itself (a guided walk starts with a copied prefix).
WalkRow = tuple[int, list[str], str, int, tuple[int, str] | None, list[bytes], int]

MEMO_LIMIT = 200_000  # states whose successors a task remembers (walks revisit the states near the start)
SWARM = 512  # walks that share one pool of novel states in guided mode (fixed: results ignore partitioning)
FORK = 0.5  # guided mode: the chance that a walk forks from the pool rather than starting afresh


def walker_of(ts: TransitionSystem[Any], replay_system: TransitionSystem[Any] | None, seed: int, depth: int,
              traces: int, guided: bool) -> Callable[[Iterable[int]], Iterator[tuple[list[WalkRow], np.ndarray]]]:
    """The task: whole swarms of walks, each walk checked step by step and re-executed on a separately
    built system.

    Each task remembers the successors of the states it expanded, in the walking system and in the
    re-executing one separately, so a step is re-executed once per task however many walks take it (the
    check is that the recorded successor is among the re-executing system's successors of the state).
    Guided (a coverage-guided swarm): the states where a walk of the swarm first met a fingerprint the
    swarm had not seen are kept with their path; a later walk of the swarm forks from one of them (with
    probability ``FORK``) and takes ``depth`` steps from there, so the budget goes where there is novelty."""
    inv, step_props, _ = properties_by_kind(ts)

    def walk(swarms: Iterable[int]) -> Iterator[tuple[list[WalkRow], np.ndarray]]:
        # A copy that shares no object or cache with the walking system (the conformance interface).
        replay = pickle.loads(pickle.dumps(replay_system if replay_system is not None else ts))
        initial = list(ts.initial_states())
        succ_memo: dict[Any, list[tuple[Action, Any]]] = {}
        replay_memo: dict[Any, set[tuple[Action, Any]]] = {}
        rows: list[WalkRow] = []
        fps: set[int] = set()
        for swarm in swarms:
            seen: set[int] = set()
            pool: list[tuple[list[Any], list[str]]] = []  # novel states: (path, labels) from an initial state
            for i in range(swarm * SWARM, min((swarm + 1) * SWARM, traces)):
                rng = random.Random(int.from_bytes(hashlib.sha256(f"{seed}:{i}".encode()).digest()[:8], "big"))
                if guided and pool and rng.random() < FORK:
                    # Biased to the newest novel states: the swarm pushes on where it last found something new.
                    prefix, prefix_labels = pool[max(0, len(pool) - 1 - int(rng.expovariate(1 / 32)))]
                    path, labels = list(prefix), list(prefix_labels)
                    bad = ""
                else:
                    path, labels = [initial[rng.randrange(len(initial))]], []
                    bad = next((p.id for p in inv if not p.holds(path[0])), "")
                s = path[-1]
                start = len(labels)
                for f in (fingerprint(x) for x in path):
                    fps.add(f)
                    seen.add(f)
                at = len(labels) if bad else -1
                diverged: tuple[int, str] | None = None
                while not bad and len(labels) - start < depth:
                    succ = succ_memo.get(s)
                    if succ is None:
                        succ = list(ts.successors(s))
                        if len(succ_memo) < MEMO_LIMIT:
                            succ_memo[s] = succ
                    if not succ:
                        break
                    a, t = succ[rng.randrange(len(succ))]
                    labels.append(repr(a))
                    path.append(t)
                    f = fingerprint(t)
                    fps.add(f)
                    novel = f not in seen
                    seen.add(f)
                    again = replay_memo.get(s)
                    if again is None:
                        again = set(replay.successors(s))
                        if len(replay_memo) < MEMO_LIMIT:
                            replay_memo[s] = again
                    if diverged is None and (a, t) not in again:
                        diverged = (len(labels), labels[-1])
                    bad = next((p.id for p in step_props if not p.holds(s, a, t)), "") or \
                        next((p.id for p in inv if not p.holds(t)), "")
                    if bad:
                        at = len(labels)
                    elif novel and guided:
                        pool.append((list(path), list(labels)))
                    s = t
                keep = [ts.encode(x) for x in path] if bad or diverged else []
                rows.append((i, labels, bad, at, diverged, keep, len(labels) - start))
        yield rows, np.fromiter(fps, dtype=np.uint64, count=len(fps))

    return walk


def simulate(ts: TransitionSystem[Any], spark: Any, *, traces: int, depth: int, seed: int, out_dir: Path,
             config_name: str = "", partitions: int | None = None,
             replay_system: TransitionSystem[Any] | None = None, guided: bool = False) -> SimulationResult:
    """Run the walks, check and re-execute them, write ``walks.parquet`` and ``simulate-summary.json``.
    ``guided``: a coverage-guided swarm (see :func:`walker_of`); the same seed gives the same walks either way.

    ``replay_system`` is the system the walks are re-executed on (default: ``ts`` itself, rebuilt on the
    executors); giving a different one compares two implementations walk by walk.
    """
    from pyspark.sql.types import (
        ArrayType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    t0 = time.perf_counter()
    sc = spark.sparkContext
    nparts = partitions or max(2, sc.defaultParallelism * 2)
    # One Spark job: each task walks its batch and returns its rows and the fingerprints it saw.
    swarms = -(-traces // SWARM)
    walker = walker_of(ts, replay_system, seed, depth, traces, guided)
    batches = sc.parallelize(range(swarms), min(nparts, swarms)).mapPartitions(walker).collect()
    walks = sorted((row for rows, _ in batches for row in rows), key=lambda r: r[0])
    distinct = int(np.unique(np.concatenate([f for _, f in batches])).shape[0]) if batches else 0
    rows = [(i, len(labels), labels, bad or None, at) for i, labels, bad, at, _, _, _ in walks]
    schema = StructType([StructField("walk", LongType(), False), StructField("steps", IntegerType(), False),
                         StructField("actions", ArrayType(StringType()), False),
                         StructField("violated", StringType(), True),
                         StructField("violation_step", IntegerType(), False)])
    out_dir.mkdir(parents=True, exist_ok=True)
    df = spark.createDataFrame(rows, schema)
    tmp = out_dir / "walks.parquet.tmp"
    df.write.mode("overwrite").parquet(str(tmp))
    final = out_dir / "walks.parquet"
    if final.exists():
        shutil.rmtree(final)
    tmp.rename(final)
    result = SimulationResult(ts.name, config_name, seed, traces, depth)
    result.steps = sum(r[6] for r in walks)  # checked steps: a guided walk's copied prefix is not counted
    result.distinct_states = distinct
    result.guided = guided
    for _i, labels, *_rest in walks:
        for label in labels:
            name = label.split("(", 1)[0]
            result.action_counts[name] = result.action_counts.get(name, 0) + 1
    result.divergences = [{"walk": i, "step": d[0], "action": d[1]} for i, _, _, _, d, _, _ in walks if d is not None]
    bad_rows = [(i, labels, states, bad, at) for i, labels, bad, at, _, states, _ in walks if bad]
    for i, labels, states, bad, at in sorted(bad_rows, key=lambda r: (len(r[1]), r[0])):
        result.violations.append({"walk": i, "property": bad, "step": at})
        steps = [Step(None, ts.decode(states[0]))]
        for k in range(len(labels)):
            before = steps[-1].state
            after = ts.decode(states[k + 1])
            action = next((a for a, t in ts.successors(before) if repr(a) == labels[k] and t == after), None)
            if action is None:
                break  # a divergence: reported above
            steps.append(Step(action, after))
        result.violation_traces.append(Trace(steps, protocol=ts.name, config=config_name, property_id=bad,
                                             description=f"walk {i} of seed {seed}"))
    result.elapsed = time.perf_counter() - t0
    write_json_atomic(out_dir / "simulate-summary.json", result.to_json())
    return result
