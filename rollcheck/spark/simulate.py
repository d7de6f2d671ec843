"""Random walks on Spark, each checked against the properties and re-executed against the reference.

Walk ``i`` of a run with seed ``S`` draws from ``random.Random(f"{S}:{i}")``, so a run is reproducible
whatever the partitioning. Along each walk every state invariant and step property is checked; the walk
stops at its first violation or at a state with no successor. Every recorded step is then re-executed
on a freshly built system (the conformance interface of DESIGN.md: the recorded next state must be a
successor of the recorded state under the recorded action label), and a step that does not re-execute
is a *divergence*. Results: one row per walk written as Parquet, plus a JSON summary; violating walks
are returned as traces (the CLI writes them as ITF).
"""

from __future__ import annotations

import hashlib
import random
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.traces import Step, Trace, write_json_atomic
from rollcheck.transition import TransitionSystem, properties_by_kind


def fingerprint(data: bytes) -> int:
    """A state's key for the distinct count: 63 bits of BLAKE2b of its canonical encoding (stable across
    processes and machines, unlike ``hash``)."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big") >> 1


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

    def to_json(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "config": self.config, "seed": self.seed, "traces": self.traces,
                "depth": self.depth, "steps": self.steps, "distinct_states": self.distinct_states,
                "violations": self.violations, "divergences": self.divergences,
                "elapsed_seconds": round(self.elapsed, 2)}


def _walker(ts: TransitionSystem[Any], seed: int, depth: int
            ) -> Callable[[Iterable[int]], Iterator[tuple[int, list[str], list[bytes], str, int]]]:
    inv, step_props, _ = properties_by_kind(ts)

    def walk(indices: Iterable[int]) -> Iterator[tuple[int, list[str], list[bytes], str, int]]:
        initial = list(ts.initial_states())
        for i in indices:
            rng = random.Random(int.from_bytes(hashlib.sha256(f"{seed}:{i}".encode()).digest()[:8], "big"))
            s = initial[rng.randrange(len(initial))]
            labels: list[str] = []
            states = [ts.encode(s)]
            bad = next((p.id for p in inv if not p.holds(s)), "")
            at = 0
            while not bad and len(labels) < depth:
                succ = list(ts.successors(s))
                if not succ:
                    break
                a, t = succ[rng.randrange(len(succ))]
                labels.append(repr(a))
                states.append(ts.encode(t))
                bad = next((p.id for p in step_props if not p.holds(s, a, t)), "") or \
                    next((p.id for p in inv if not p.holds(t)), "")
                s = t
                at = len(labels)
            yield i, labels, states, bad, at if bad else -1

    return walk


def _replayer(ts: TransitionSystem[Any]) -> Callable[[Iterable[Any]], Iterator[tuple[int, int, str]]]:
    def replay(rows: Iterable[Any]) -> Iterator[tuple[int, int, str]]:
        for i, labels, states, _bad, _at in rows:
            for k, label in enumerate(labels):
                before, after = ts.decode(states[k]), ts.decode(states[k + 1])
                if not any(repr(a) == label and t == after for a, t in ts.successors(before)):
                    yield i, k + 1, label
                    break

    return replay


def simulate(ts: TransitionSystem[Any], spark: Any, *, traces: int, depth: int, seed: int, out_dir: Path,
             config_name: str = "", partitions: int | None = None,
             replay_system: TransitionSystem[Any] | None = None) -> SimulationResult:
    """Run the walks, check and re-execute them, write ``walks.parquet`` and ``simulate-summary.json``.

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
    walks = sc.parallelize(range(traces), nparts).mapPartitions(_walker(ts, seed, depth)).persist()
    divergences = walks.mapPartitions(_replayer(replay_system or ts)).collect()
    distinct = walks.flatMap(lambda row: [fingerprint(b) for b in row[2]]).distinct().count()
    rows = walks.map(lambda r: (r[0], len(r[1]), r[1], r[3] or None, r[4])).collect()
    bad_rows = walks.filter(lambda r: bool(r[3])).collect()
    walks.unpersist()
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
    result.steps = sum(r[1] for r in rows)
    result.distinct_states = distinct
    result.divergences = [{"walk": i, "step": k, "action": label} for i, k, label in sorted(divergences)]
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
