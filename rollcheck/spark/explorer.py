"""Level-synchronous breadth-first search on Apache Spark (DESIGN.md, "The Spark explorer").

Each state travels as its canonical encoding; its fingerprint (64 bits of BLAKE2b of the bytes) is the
key that hash-partitions the successors and the visited set. One level:

1. ``mapPartitions`` expands the frontier on the executors (Python: the reference implementation): every
   labelled successor, encoded, with its parent's fingerprint, the action's label, the step properties the
   step violates and the invariants the successor violates (memoized per partition).
2. The rest runs in the JVM, as DataFrames: one candidate per successor fingerprint (the smallest
   ``(parent, label)``, so the choice does not depend on scheduling), then a left anti-join with the
   fingerprints of every level written so far (the visited set: a columnar scan of the level files), and
   the new level is written as Parquet (fingerprint, parent, label, state, violated invariants) to a
   temporary folder renamed into place; then a manifest is replaced atomically. A killed run resumed with
   ``resume=True`` starts from the last manifest and ends with the same result.

Only the expansion crosses into Python; deduplication and the visited set never do, which is what makes
a level cheap when the visited set is large.

Counterexamples are rebuilt on the driver by following parent fingerprints back through the level files,
so they are shortest, as with the local explorer. The visited set lives in Spark (memory and disk), not
in the driver. Liveness (graph) properties need the whole graph in one place: the Spark engine reports
them as not checked, and the local engine checks them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcheck.errors import UserError
from rollcheck.explorer import ExplorationResult, LevelStats, PropertyOutcome, Violation
from rollcheck.registry import build_system
from rollcheck.traces import Step, Trace, write_json_atomic
from rollcheck.transition import Invariant, StepProperty, TransitionSystem, properties_by_kind

MANIFEST = "manifest.json"


def fingerprint(data: bytes) -> int:
    """A non-negative 63-bit key: Python hashes ints to themselves, so partitioning is deterministic."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big") >> 1


@dataclass
class _Found:
    property_id: str
    kind: str
    description: str
    level: int  # level of the violating state (the target of the step, for step properties)
    fp: int  # the violating state (invariant) or the source of the violating step (step property)
    label: str = ""
    target: bytes = b""


def explore_spark(protocol: str, config: Any, *, config_name: str, variant: str | None, master: str,
                  partitions: int | None, out_dir: Path, resume: bool, max_depth: int | None,
                  max_states: int | None, stop_at_first: bool,
                  progress: Callable[[LevelStats], None] | None) -> ExplorationResult:
    """Explore a registered protocol (or one of its variants) on Spark; executors get the built system."""
    from rollcheck.spark.session import get_session

    ts = build_system(protocol, config, variant)
    spark = get_session(master)
    run_key = {"protocol": protocol, "config": repr(config), "variant": variant}
    return explore_system_spark(ts, spark, out_dir=Path(out_dir), run_key=run_key, config_name=config_name,
                                variant=variant, partitions=partitions, resume=resume, max_depth=max_depth,
                                max_states=max_states, stop_at_first=stop_at_first, progress=progress)


def explore_system_spark(ts: TransitionSystem[Any], spark: Any, *, out_dir: Path, run_key: dict[str, Any],
                         config_name: str = "", variant: str | None = None, partitions: int | None = None,
                         resume: bool = False, max_depth: int | None = None, max_states: int | None = None,
                         stop_at_first: bool = True, progress: Callable[[LevelStats], None] | None = None,
                         stop_after_level: int | None = None) -> ExplorationResult:
    """The engine, for any transition system (shipped to executors with the tasks' closures).

    ``stop_after_level`` ends the run after that level as if it had been killed (for resume tests).
    """
    sc = spark.sparkContext
    nparts = partitions or max(2, sc.defaultParallelism * 2)
    # The successor shuffle (deduplication and the anti-join with the visited set) uses nparts partitions.
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(nparts))
    try:
        return _explore(ts, spark, nparts, out_dir=out_dir, run_key=run_key, config_name=config_name,
                        variant=variant, resume=resume, max_depth=max_depth, max_states=max_states,
                        stop_at_first=stop_at_first, progress=progress, stop_after_level=stop_after_level)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)


def _explore(ts: TransitionSystem[Any], spark: Any, nparts: int, *, out_dir: Path, run_key: dict[str, Any],
             config_name: str, variant: str | None, resume: bool, max_depth: int | None, max_states: int | None,
             stop_at_first: bool, progress: Callable[[LevelStats], None] | None,
             stop_after_level: int | None) -> ExplorationResult:
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    sc = spark.sparkContext
    t0 = time.perf_counter()
    inv, step_props, graph_props = properties_by_kind(ts)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / MANIFEST
    key = {**run_key, "partitions": nparts, "max_depth": max_depth, "max_states": max_states,
           "stop_at_first": stop_at_first}
    state = _load_manifest(manifest_path, key) if resume else None
    if state is None:
        shutil.rmtree(out_dir / "levels", ignore_errors=True)
        manifest_path.unlink(missing_ok=True)
        state = _start(ts, inv, out_dir, spark)
        _save_manifest(manifest_path, key, state)
    levels = [LevelStats(**lv) for lv in state["levels"]]
    found = [_Found(**{**f, "target": bytes.fromhex(f["target"])}) for f in state["found"]]
    if progress:
        for lv in levels:
            progress(lv)

    level = state["level"]
    distinct = state["distinct"]
    generated = state["generated"]
    truncated = False
    stopped = bool(found) and stop_at_first
    frontier_size = levels[-1].frontier if levels else 0
    while frontier_size and not stopped:
        if max_depth is not None and level >= max_depth:
            truncated = True
            break
        if max_states is not None and distinct >= max_states:
            truncated = True
            break
        if stop_after_level is not None and level >= stop_after_level:
            raise _Killed(level)
        frontier = _read_level(spark, out_dir, level)
        generated_df = spark.createDataFrame(frontier.mapPartitions(_expander(ts, step_props, inv)), _gen_schema(),
                                             verifySchema=False)
        generated_df = generated_df.persist(StorageLevel.MEMORY_AND_DISK)
        # One job counts the transitions and brings back the (rare) step-property violations.
        n_gen, bad_steps = _summarize(generated_df)
        generated += n_gen
        for pfp, label, tb, bad in bad_steps:
            for pid in bad:
                if pid not in {f.property_id for f in found}:
                    p = next(p for p in step_props if p.id == pid)
                    found.append(_Found(pid, "step", p.description, level + 1, pfp, label, tb))
        new = _new_states(spark, generated_df, out_dir, level)
        _atomic_parquet(new, _level_path(out_dir, level + 1))
        generated_df.unpersist()
        written = spark.read.parquet(str(_level_path(out_dir, level + 1)))
        n_new = written.count()
        bad_states = [(pid, r.fp) for r in written.filter(F.size("bad") > 0).select("fp", "bad").collect()
                      for pid in r.bad]
        for pid, fp in sorted(bad_states):
            if pid not in {f.property_id for f in found}:
                p = next(p for p in inv if p.id == pid)
                found.append(_Found(pid, "invariant", p.description, level + 1, fp))
        frontier_size = n_new
        stopped = bool(found) and stop_at_first
        if not n_new:
            shutil.rmtree(_level_path(out_dir, level + 1), ignore_errors=True)
            break  # the search is over: the last level found nothing new
        level += 1
        distinct += n_new
        levels.append(LevelStats(level, n_new, distinct, generated, time.perf_counter() - t0))
        if progress:
            progress(levels[-1])
        _save_manifest(manifest_path, key, {
            "level": level, "distinct": distinct, "generated": generated, "levels": [lv.__dict__ for lv in levels],
            "found": [{**f.__dict__, "target": f.target.hex()} for f in found]})

    depth = levels[-1].level if levels else 0
    complete = not truncated and not stopped and frontier_size == 0
    violations = [_violation(ts, spark, out_dir, nparts, f, config_name) for f in found]
    outcomes = []
    violated = {v.property_id for v in violations}
    for p in ts.invariants():
        if p.id in violated:
            status = "violated"
        elif p.kind == "graph":
            status = "not checked"
        elif stopped:
            status = "not checked"
        else:
            status = "holds"
        outcomes.append(PropertyOutcome(p.id, p.kind, p.description, p.source, status))
    return ExplorationResult(
        protocol=ts.name, config=config_name, engine="spark", distinct_states=distinct,
        generated_states=generated, depth=depth, complete=complete, violations=violations, levels=levels,
        elapsed=time.perf_counter() - t0, properties=outcomes, variant=variant,
        profile=getattr(ts.config, "profile", None),
        extra={"partitions": nparts, "master": sc.master, "out_dir": str(out_dir),
               "graph_properties": "not checked by the Spark engine (need the whole graph): "
               + ", ".join(p.id for p in graph_props) if graph_props else "none"},
    )


class _Killed(Exception):
    """Raised by ``stop_after_level`` to simulate a run killed between levels."""

    def __init__(self, level: int) -> None:
        super().__init__(f"stopped after level {level}")
        self.level = level


# --------------------------------------------------------------------------- executor-side functions


def _expander(ts: TransitionSystem[Any], step_props: list[StepProperty[Any]], inv: list[Invariant[Any]]
              ) -> Callable[[Iterable[tuple[int, bytes]]], Iterator[_GenRow]]:
    def expand(rows: Iterable[tuple[int, bytes]]) -> Iterator[_GenRow]:
        # A successor reached from several parents is checked once per partition.
        checked: dict[bytes, list[str]] = {}
        for fp, data in rows:
            s = ts.decode(data)
            for action, t in ts.successors(s):
                tb = ts.encode(t)
                bad_steps = [p.id for p in step_props if not p.holds(s, action, t)]
                bad = checked.get(tb)
                if bad is None:
                    bad = checked[tb] = [p.id for p in inv if not p.holds(t)]
                yield fingerprint(tb), fp, repr(action), bytearray(tb), bad_steps, bad

    return expand


# (fingerprint, parent fingerprint, action label, encoded state, violated step properties, violated invariants)
_GenRow = tuple[int, int, str, bytearray, list[str], list[str]]


# --------------------------------------------------------------------------- the JVM side


def _gen_schema() -> Any:
    from pyspark.sql.types import ArrayType, BinaryType, LongType, StringType, StructField, StructType

    return StructType([StructField("fp", LongType(), False), StructField("parent", LongType(), False),
                       StructField("action", StringType(), False), StructField("state", BinaryType(), False),
                       StructField("bad_steps", ArrayType(StringType(), False), False),
                       StructField("bad", ArrayType(StringType(), False), False)])


def _summarize(generated: Any) -> tuple[int, list[tuple[int, str, bytes, list[str]]]]:
    """The number of transitions and the rows of those that violate a step property, in one job."""
    from pyspark.sql import functions as F

    row = generated.agg(
        F.count(F.lit(1)).alias("n"),
        F.collect_list(F.when(F.size("bad_steps") > 0, F.struct("parent", "action", "state", "bad_steps")))
        .alias("bad")).collect()[0]
    bad = sorted((r.parent, r.action, bytes(r.state), list(r.bad_steps)) for r in (row.bad or []))
    return int(row.n), bad


def _new_states(spark: Any, generated: Any, out_dir: Path, level: int) -> Any:
    """One row per successor fingerprint (its smallest ``(parent, label)``) not in any level 0..level."""
    from pyspark.sql import functions as F

    best = generated.groupBy("fp").agg(F.min(F.struct("parent", "action", "state", "bad")).alias("b"))
    best = best.select("fp", "b.parent", "b.action", "b.state", "b.bad")
    visited = spark.read.parquet(*(str(_level_path(out_dir, k)) for k in range(level + 1))).select("fp")
    return best.join(visited, "fp", "left_anti")


# --------------------------------------------------------------------------- storage


def _level_path(out_dir: Path, level: int) -> Path:
    return out_dir / "levels" / f"level={level:05d}"


def _atomic_parquet(df: Any, final: Path) -> None:
    tmp = final.with_name(final.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    df.write.mode("overwrite").parquet(str(tmp))
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)


def _read_level(spark: Any, out_dir: Path, level: int) -> Any:
    df = spark.read.parquet(str(_level_path(out_dir, level))).select("fp", "state")
    return df.rdd.map(lambda r: (r.fp, bytes(r.state)))


def _start(ts: TransitionSystem[Any], inv: list[Invariant[Any]], out_dir: Path, spark: Any) -> dict[str, Any]:
    rows: dict[int, bytes] = {}
    for s in ts.initial_states():
        data = ts.encode(s)
        rows.setdefault(fingerprint(data), data)
    found = []
    for fp, data in sorted(rows.items()):
        s = ts.decode(data)
        for p in inv:
            if not p.holds(s) and p.id not in {f["property_id"] for f in found}:
                found.append({"property_id": p.id, "kind": "invariant", "description": p.description, "level": 0,
                              "fp": fp, "label": "", "target": ""})
    init = [(fp, -1, "Init", bytearray(data), [], []) for fp, data in sorted(rows.items())]
    _atomic_parquet(spark.createDataFrame(init, _gen_schema()).drop("bad_steps").coalesce(1),
                    _level_path(out_dir, 0))
    stats = LevelStats(0, len(rows), len(rows), 0, 0.0)
    return {"level": 0, "distinct": len(rows), "generated": 0, "levels": [stats.__dict__], "found": found}


def _load_manifest(path: Path, key: dict[str, Any]) -> dict[str, Any] | None:
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"cannot resume: {path} is unreadable ({exc})") from None
    if doc.get("key") != json.loads(json.dumps(key)):
        raise UserError(f"cannot resume from {path.parent}: it holds a run with other arguments "
                        f"({doc.get('key')}); use another --out or drop --resume")
    return doc["state"]


def _save_manifest(path: Path, key: dict[str, Any], state: dict[str, Any]) -> None:
    write_json_atomic(path, {"key": key, "state": state})


def _lookup(spark: Any, out_dir: Path, level: int, fp: int) -> tuple[int, str, bytes]:
    from pyspark.sql.functions import col

    rows = spark.read.parquet(str(_level_path(out_dir, level))).filter(col("fp") == fp).collect()
    if not rows:
        raise RuntimeError(f"state {fp} missing from level {level}")
    r = rows[0]
    return r.parent, r.action, bytes(r.state)


def _path(ts: TransitionSystem[Any], spark: Any, out_dir: Path, level: int, fp: int) -> list[Step]:
    """Follow parent fingerprints from (level, fp) back to an initial state."""
    chain: list[tuple[str, bytes]] = []
    while level >= 0:
        parent, label, data = _lookup(spark, out_dir, level, fp)
        chain.append((label, data))
        fp = parent
        level -= 1
    chain.reverse()
    steps: list[Step] = []
    for i, (label, data) in enumerate(chain):
        state = ts.decode(data)
        action = None
        if i:
            action = next(a for a, t in ts.successors(steps[-1].state) if t == state and repr(a) == label)
        steps.append(Step(action, state))
    return steps


def _violation(ts: TransitionSystem[Any], spark: Any, out_dir: Path, nparts: int, f: _Found,
               config_name: str) -> Violation:
    if f.kind == "invariant":
        steps = _path(ts, spark, out_dir, f.level, f.fp)
    else:
        steps = _path(ts, spark, out_dir, f.level - 1, f.fp)
        target = ts.decode(f.target)
        action = next(a for a, t in ts.successors(steps[-1].state) if t == target and repr(a) == f.label)
        steps.append(Step(action, target))
    trace = Trace(steps, protocol=ts.name, config=config_name, property_id=f.property_id,
                  description=f.description)
    return Violation(f.property_id, f.kind, f.description, len(steps) - 1, trace)
