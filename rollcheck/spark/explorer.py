"""Level-synchronous breadth-first search on Apache Spark (DESIGN.md, "The Spark explorer").

Each state travels as its canonical encoding; its fingerprint (64 bits of BLAKE2b of the bytes) is the
key that hash-partitions both the frontier and the visited set. One level:

1. ``mapPartitions`` expands the frontier on the executors: every labelled successor, encoded, with its
   parent's fingerprint, the action's label, and the step properties it violates.
2. ``reduceByKey`` keeps one candidate per successor fingerprint (the smallest ``(parent, label)``, so the
   choice does not depend on scheduling), ``subtractByKey`` removes what is already visited.
3. The new states' invariants are checked on the executors; the level is written as Parquet (fingerprint,
   parent, label, state) and the visited set is rewritten as Parquet, each to a temporary folder renamed
   into place, then a manifest is replaced atomically. A killed run resumed with ``resume=True`` starts
   from the last manifest and ends with the same result.

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


def _identity(key: int) -> int:
    return key


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
        state = _start(ts, inv, out_dir, spark, nparts)
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
        frontier = _read_level(spark, out_dir, level, nparts)
        visited = _read_visited(spark, out_dir, level, nparts)
        expanded = frontier.mapPartitions(_expander(ts, step_props)).persist()
        # One job counts the transitions and brings back the (rare) step-property violations.
        summary = expanded.mapPartitions(_summarize_steps).collect()
        generated += sum(n for n, _ in summary)
        for _fp, (tb, pfp, label, bad) in (row for _, rows in summary for row in rows):
            for pid in bad:
                if pid not in {f.property_id for f in found}:
                    p = next(p for p in step_props if p.id == pid)
                    found.append(_Found(pid, "step", p.description, level + 1, pfp, label, tb))
        candidates = expanded.map(lambda kv: (kv[0], kv[1][:3])).reduceByKey(
            lambda a, b: a if (a[1], a[2]) <= (b[1], b[2]) else b, nparts, _identity)
        new = candidates.subtractByKey(visited, nparts).persist()
        # One job counts the new states and checks their invariants.
        checked = new.mapPartitions(_checker(ts, inv)).collect()
        n_new = sum(n for n, _ in checked)
        expanded.unpersist()
        bad_states = [row for _, rows in checked for row in rows]
        for pid, fp in sorted(bad_states, key=lambda x: (x[0], x[1])):
            if pid not in {f.property_id for f in found}:
                p = next(p for p in inv if p.id == pid)
                found.append(_Found(pid, "invariant", p.description, level + 1, fp))
        frontier_size = n_new
        stopped = bool(found) and stop_at_first
        if not n_new:
            new.unpersist()
            break  # the search is over: the last level found nothing new
        level += 1
        _write_level(spark, out_dir, level, new.map(lambda kv: (kv[0], kv[1][1], kv[1][2], kv[1][0])))
        new.unpersist()
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


def _expander(ts: TransitionSystem[Any], step_props: list[StepProperty[Any]]
              ) -> Callable[[Iterable[tuple[int, bytes]]], Iterator[_StepRow]]:
    def expand(rows: Iterable[tuple[int, bytes]]) -> Iterator[_StepRow]:
        for fp, data in rows:
            s = ts.decode(data)
            for action, t in ts.successors(s):
                tb = ts.encode(t)
                bad = tuple(p.id for p in step_props if not p.holds(s, action, t))
                yield fingerprint(tb), (tb, fp, repr(action), bad)

    return expand


_StepRow = tuple[int, tuple[bytes, int, str, tuple[str, ...]]]


def _summarize_steps(rows: Iterable[_StepRow]) -> Iterator[tuple[int, list[_StepRow]]]:
    n = 0
    bad = []
    for row in rows:
        n += 1
        if row[1][3]:
            bad.append(row)
    yield n, bad


def _checker(ts: TransitionSystem[Any], inv: list[Invariant[Any]]
             ) -> Callable[[Iterable[tuple[int, tuple[bytes, int, str]]]], Iterator[tuple[int, list[tuple[str, int]]]]]:
    def check(rows: Iterable[tuple[int, tuple[bytes, int, str]]]) -> Iterator[tuple[int, list[tuple[str, int]]]]:
        n = 0
        bad = []
        for fp, (data, _pfp, _label) in rows:
            n += 1
            s = ts.decode(data)
            for p in inv:
                if not p.holds(s):
                    bad.append((p.id, fp))
        yield n, bad

    return check


# --------------------------------------------------------------------------- storage


def _schema() -> Any:
    from pyspark.sql.types import BinaryType, LongType, StringType, StructField, StructType

    return StructType([StructField("fp", LongType(), False), StructField("parent", LongType(), False),
                       StructField("action", StringType(), False), StructField("state", BinaryType(), False)])


def _atomic_parquet(df: Any, final: Path) -> None:
    tmp = final.with_name(final.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    df.write.mode("overwrite").parquet(str(tmp))
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)


def _write_level(spark: Any, out_dir: Path, level: int, rows: Any) -> None:
    df = spark.createDataFrame(rows.map(lambda r: (r[0], r[1], r[2], bytearray(r[3]))), _schema())
    _atomic_parquet(df, out_dir / "levels" / f"level={level:05d}")


def _read_level(spark: Any, out_dir: Path, level: int, nparts: int) -> Any:
    df = spark.read.parquet(str(out_dir / "levels" / f"level={level:05d}"))
    return df.rdd.map(lambda r: (r.fp, bytes(r.state))).partitionBy(nparts, _identity)


def _read_visited(spark: Any, out_dir: Path, level: int, nparts: int) -> Any:
    """The visited set: the fingerprints of levels 0..level (only the ``fp`` column is read)."""
    paths = [str(out_dir / "levels" / f"level={k:05d}") for k in range(level + 1)]
    df = spark.read.parquet(*paths).select("fp")
    return df.rdd.map(lambda r: (r.fp, None)).partitionBy(nparts, _identity)


def _start(ts: TransitionSystem[Any], inv: list[Invariant[Any]], out_dir: Path, spark: Any, nparts: int
           ) -> dict[str, Any]:
    sc = spark.sparkContext
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
    init = sc.parallelize([(fp, -1, "Init", data) for fp, data in sorted(rows.items())], 1)
    _write_level(spark, out_dir, 0, init)
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

    rows = spark.read.parquet(str(out_dir / "levels" / f"level={level:05d}")).filter(col("fp") == fp).collect()
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
