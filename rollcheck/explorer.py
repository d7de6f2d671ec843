"""The single-process explorer: breadth-first search over a transition system.

It is the yardstick the Spark explorer must match exactly (same distinct states, depth and violated
property ids) and the engine the tests use on small configs. Breadth-first order makes every
counterexample a shortest one: it is rebuilt from the parent pointers.

Depth follows the BFS distance from an initial state (initial states are at depth 0; TLC counts
them as depth 1).
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rollcheck.errors import UserError
from rollcheck.expansion import Chunk, ChunkResult, Expander, Segment, encode_all, expand_level, plan_chunks
from rollcheck.fingerprint import FingerprintSet, collision_probability
from rollcheck.graphcheck import MarkColumns, violators
from rollcheck.levelstore import Checkpoint, LevelStore
from rollcheck.traces import Step, Trace
from rollcheck.transition import (
    Action,
    GraphProperty,
    Invariant,
    StepProperty,
    TransitionSystem,
    Witness,
    properties_by_kind,
    witnesses_of,
)


@dataclass
class Violation:
    property_id: str
    kind: str  # "invariant", "step" or "graph"
    description: str
    depth: int  # number of transitions in the counterexample
    trace: Trace

    def to_json(self) -> dict[str, Any]:
        return {
            "property": self.property_id,
            "kind": self.kind,
            "description": self.description,
            "length": self.depth,
            "actions": [repr(a) for a in self.trace.actions],
        }


@dataclass
class LevelStats:
    level: int  # BFS level just completed (the depth of the states it found)
    frontier: int  # new states found at this level
    distinct: int  # distinct states so far
    generated: int  # transitions generated so far
    elapsed: float

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "frontier": self.frontier,
            "distinct": self.distinct,
            "generated": self.generated,
            "elapsed": round(self.elapsed, 4),
        }


@dataclass
class PropertyOutcome:
    id: str
    kind: str
    description: str
    source: str
    # "holds", "holds up to depth K" (a bounded run), "violated", "not checked"; a witness: "reached at
    # depth D", "vacuous" (a complete run never reached it), "not reached up to depth K"
    status: str

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ExplorationResult:
    protocol: str
    config: str
    engine: str
    distinct_states: int
    generated_states: int
    depth: int
    complete: bool
    violations: list[Violation]
    levels: list[LevelStats]
    elapsed: float
    properties: list[PropertyOutcome]
    terminal_states: int = 0
    variant: str | None = None
    profile: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    witness_traces: list[Violation] = field(default_factory=list)  # the shortest path to each reached witness

    @property
    def violated_ids(self) -> set[str]:
        return {v.property_id for v in self.violations}

    @property
    def vacuous(self) -> list[str]:
        """The witnesses a complete exploration never reached (the run fails: the story never happened)."""
        return [p.id for p in self.properties if p.kind == "witness" and p.status == "vacuous"]

    @property
    def ok(self) -> bool:
        return not self.violations and not self.vacuous

    def to_json(self) -> dict[str, Any]:
        rate = self.distinct_states / self.elapsed if self.elapsed > 0 else None
        return {
            "protocol": self.protocol,
            "config": self.config,
            "profile": self.profile,
            "variant": self.variant,
            "engine": self.engine,
            "distinct_states": self.distinct_states,
            "generated_states": self.generated_states,
            "depth": self.depth,
            "complete": self.complete,
            "terminal_states": self.terminal_states,
            "violations": [v.to_json() for v in self.violations],
            "properties": [p.to_json() for p in self.properties],
            "vacuous": self.vacuous,
            "levels": [lv.to_json() for lv in self.levels],
            "elapsed_seconds": round(self.elapsed, 3),
            "distinct_states_per_second": round(rate, 1) if rate else None,
            **self.extra,
        }


ProgressFn = Callable[[LevelStats], None]

# Graph (liveness) properties need every edge in memory (12 bytes each while exploring, about 40 at the
# search's peak): above this many states they are reported "not checked" rather than risking the machine
# (``graph_limit`` raises it). 10^7 states of the largest fan-out here (8 edges a state) peak near 3 GB.
GRAPH_LIMIT = 10_000_000
# Levels narrower than this are expanded in the calling process even with several workers.
PARALLEL_MIN = 2_000


@dataclass
class _Found:
    """A violation located in the level store: the state at (level, pos), or its successor k."""

    property_id: str
    kind: str
    description: str
    level: int
    pos: int
    k: int | None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


class _GraphBuilder:
    """What graph properties need of the explored graph, kept without its states: per state the marks
    (each property's ``start`` and ``goal`` verdicts) and its number of successors; per edge the target's
    fingerprint and an action code. About 13 bytes an edge and a few a state."""

    def __init__(self, limit: int, columns: MarkColumns) -> None:
        self.limit = limit
        self.columns = columns
        self.states = 0
        self.marks: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []
        self.dst_fp: list[np.ndarray] = []
        self.code: list[np.ndarray] = []
        self.codes: dict[Action, int] = {}
        self.actions: list[Action] = []
        self.dropped: str | None = None

    def add_states(self, marks: np.ndarray) -> None:
        if self.dropped is None:
            self.marks.append(marks)
            self.states += marks.shape[0]
            if self.states > self.limit:
                self.drop(f"{self.states:,} states exceed the graph limit of {self.limit:,} (--graph-limit)")

    def drop(self, why: str) -> None:
        self.dropped = why
        self.marks, self.counts, self.dst_fp, self.code = [], [], [], []

    def add_edges(self, results: list[ChunkResult]) -> None:
        if self.dropped is not None:
            return
        for r in results:
            assert r.edge_fp is not None and r.edge_code is not None
            self.counts.append(r.counts)
            self.dst_fp.append(r.edge_fp)
            remap = np.fromiter((self._code(a) for a in r.actions), dtype=np.uint32, count=len(r.actions))
            self.code.append(remap[r.edge_code] if len(r.actions) else r.edge_code)

    def _code(self, a: Action) -> int:
        c = self.codes.get(a)
        if c is None:
            c = self.codes[a] = len(self.actions)
            self.actions.append(a)
        return c

    def check(self, props: list[GraphProperty[Any]], all_fps: np.ndarray) -> list[int | None]:
        """For each property, the BFS number of its first violating state (None: it holds)."""
        n = self.states
        counts = np.concatenate(self.counts).astype(np.int64) if self.counts else np.zeros(0, np.int64)
        counts = np.concatenate([counts, np.zeros(n - counts.shape[0], np.int64)])  # the last level: no edges
        index = np.int32 if n < 2**31 else np.int64  # half the memory for the edge arrays below 2^31 states
        src = np.repeat(np.arange(n, dtype=index), counts)
        dst_fp = np.concatenate(self.dst_fp) if self.dst_fp else np.zeros(0, np.uint64)
        self.dst_fp = []
        code = np.concatenate(self.code) if self.code else np.zeros(0, np.uint32)
        self.code = []
        order: np.ndarray[Any, np.dtype[np.signedinteger[Any]]] = np.argsort(all_fps, kind="stable").astype(index)
        dst = order[np.searchsorted(all_fps, dst_fp, sorter=order)]
        del dst_fp, order
        marks = np.concatenate(self.marks) if self.marks else np.zeros((0, len(self.columns.predicates)), bool)
        out: list[int | None] = []
        for i, p in enumerate(props):
            bad = violators(p, marks, self.columns, i, src, dst, code, self.actions)
            out.append(int(bad[0]) if bad.size else None)
        return out


def _roundtrip(state: Any) -> Any:
    """A state as the next level's workers see it (unpickled): replay must follow the same objects, since
    a frozenset's iteration order (and so a successor's index) can depend on how it was built."""
    return pickle.loads(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))


def _symmetry_key(ts: TransitionSystem[Any]) -> Callable[[Any], Hashable]:
    key = getattr(ts, "symmetry_key", None)
    if not callable(key):
        raise UserError(f"protocol '{ts.name}' declares no symmetry (no symmetry_key): drop --symmetry")
    return key  # type: ignore[no-any-return]


def available_memory() -> int:
    """MemAvailable from /proc/meminfo in bytes (0 where it cannot be read)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def _rss() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def explore(
    ts: TransitionSystem[Any],
    *,
    config_name: str = "",
    max_depth: int | None = None,
    max_states: int | None = None,
    stop_at_first: bool = True,
    check_graph: bool = True,
    progress: ProgressFn | None = None,
    variant: str | None = None,
    workers: int = 1,
    symmetry: bool = False,
    checkpoint_dir: Path | None = None,
    checkpoint_root: Path | None = None,
    resume: bool = False,
    graph_limit: int = GRAPH_LIMIT,
    max_memory: int | None = None,
    parallel_min: int = PARALLEL_MIN,
    distribute: Callable[[Expander, list[Chunk]], list[ChunkResult]] | None = None,
    distribute_min: int = 0,
    distribute_slices: int = 8,
) -> ExplorationResult:
    """Explore every state reachable from ``ts.initial_states()`` breadth-first.

    ``stop_at_first`` stops at the first violation; otherwise one (shortest) counterexample is kept per
    violated property and the search goes on. Graph properties (liveness) are checked only when the
    exploration is complete and the graph has at most ``graph_limit`` states. ``workers`` processes expand
    each level (the result does not depend on it). ``symmetry`` keeps one state per orbit of the
    protocol's ``symmetry_key``. With ``checkpoint_dir`` every completed level is checkpointed there (a
    level cut short by ``max_states`` or by a violation is not: a resume expands it again) and ``resume``
    continues from the last one to the result of an uninterrupted run; ``checkpoint_root`` (the user's
    ``--out``, default the checkpoint's parent) is where the directories rollcheck makes for it start, each
    one refused if it is a link. ``max_memory`` (bytes) stops the
    run, resumable, before a level that would not fit. Levels narrower than ``parallel_min`` states are
    expanded in this process.

    ``distribute`` (the Spark engine's) expands the chunks of every level of at least ``distribute_min``
    states, cut into ``distribute_slices`` chunks, elsewhere; its results must be what
    :meth:`Expander.expand` returns for each chunk, so the outcome does not depend on it.
    """
    t0 = time.perf_counter()
    inv, step_props, graph_props = properties_by_kind(ts)
    witnesses = witnesses_of(ts)
    key_fn = _symmetry_key(ts) if symmetry else None
    visited = FingerprintSet()
    store = LevelStore(checkpoint_dir)
    found: list[_Found] = []
    violated: set[str] = set()
    witnessed: list[_Found] = []  # the first state found satisfying each witness
    descriptions = {p.id: p.description for p in ts.properties()}
    generated = terminal = 0
    action_counts: dict[str, int] = {}
    levels: list[LevelStats] = []
    notes: list[str] = []
    elapsed_before = 0.0
    graph = _GraphBuilder(graph_limit, MarkColumns.of(graph_props)) if check_graph and graph_props else None
    ckpt = None
    if checkpoint_dir is not None:
        key = {"protocol": ts.name, "config": config_name, "profile": getattr(ts.config, "profile", None),
               "variant": variant, "symmetry": symmetry, "config_repr": repr(ts.config)}
        ckpt = Checkpoint(checkpoint_dir, key, checkpoint_root)

    def expander() -> Expander:
        return Expander(ts, [p for p in inv if p.id not in violated],
                        [p for p in step_props if p.id not in violated], key_fn, visited, stop_at_first,
                        None if graph is None else graph.columns,
                        [w for w in witnesses if w.id not in {f.property_id for f in witnessed}],
                        encode=ckpt is not None)

    # Level 0: the initial states, deduplicated in order (a resume rebuilds them the same way).
    initial: list[Any] = []
    first_fp: list[int] = []
    seen0: set[int] = set()
    fp_of = expander().fingerprint
    for s in ts.initial_states():
        f = fp_of(s)
        if f not in seen0:
            seen0.add(f)
            initial.append(s)
            first_fp.append(f)

    initial_codes = _encodings(ts, initial) if ckpt is not None else None

    level = 0
    frontier: list[Segment]
    if resume and ckpt is not None and ckpt.exists():
        point = ckpt.load(store, ts.decode, fp_of)
        for lv in range(len(store)):
            fps = np.asarray(store.fps(lv), dtype=np.uint64)
            if (fps == 0).any() or np.unique(fps).shape[0] != fps.shape[0] or visited.contains(fps).any():
                raise ckpt.damaged(f"level {lv} repeats a state of its own or of an earlier level")
            visited.add_new(fps)
        level = point.level
        frontier = point.frontier
        tot = point.totals
        generated, terminal = tot["generated"], tot["terminal"]
        action_counts = dict(tot["action_counts"])
        found = [_Found(**f) for f in tot["found"]]  # each checked by ckpt.load
        violated = {f.property_id for f in found}
        witnessed = [_Found(**f) for f in tot.get("witnessed", [])]
        levels = [LevelStats(**lv) for lv in tot["levels"]]
        elapsed_before = tot["elapsed"]
        if graph is not None:
            graph.drop("the run was resumed (the graph of the levels before the resume is not kept)")
        notes.append(f"resumed from level {level} of the checkpoint in {checkpoint_dir}")
    else:
        if resume:
            notes.append(f"no checkpoint in {checkpoint_dir}: starting fresh")
        if ckpt is not None:
            ckpt.clear()
        fps0 = np.asarray(first_fp, dtype=np.uint64)
        visited.add_new(fps0)
        store.append(fps0, np.zeros(len(initial), np.uint32), np.zeros(len(initial), np.uint32))
        for i, s in enumerate(initial):
            for p in inv:
                if p.id not in violated and not p.predicate(s):
                    violated.add(p.id)
                    found.append(_Found(p.id, "invariant", p.description, 0, i, None))
            for w in witnesses:
                if w.id not in {f.property_id for f in witnessed} and w.predicate(s):
                    witnessed.append(_Found(w.id, "witness", w.description, 0, i, None))
        if graph is not None:
            graph.add_states(graph.columns.evaluate(initial))
        frontier = [Segment(len(initial), blob=pickle.dumps(initial, protocol=pickle.HIGHEST_PROTOCOL))]
        if initial_codes is not None:
            frontier[0].codes, frontier[0].code_ends = initial_codes
        levels.append(LevelStats(0, len(initial), len(visited), 0, time.perf_counter() - t0))
        if progress:
            progress(levels[-1])
        if ckpt is not None:
            ckpt.save(store, 0, frontier, _totals(generated, terminal, action_counts, found, levels,
                                                  time.perf_counter() - t0, witnessed))
    stopped = bool(found) and stop_at_first
    truncated = False
    full_depth = 0  # on a truncated run: every state within this many steps was checked
    phases = dict.fromkeys(("expand", "merge", "graph", "checkpoint", "graph_check"), 0.0)
    rss_before = _rss()
    while sum(seg.size for seg in frontier) and not stopped:
        if max_depth is not None and level >= max_depth:
            truncated = True
            full_depth = level
            break
        rss = _rss()
        if max_memory is not None and rss and rss + 2 * max(rss - rss_before, 0) > max_memory:
            truncated = True
            full_depth = level
            notes.append(f"stopped before level {level + 1}: it would exceed the memory budget of "
                         f"{max_memory / 2**30:.1f} GiB (now {rss / 2**30:.1f} GiB)"
                         + (f"; --resume continues from {checkpoint_dir}" if checkpoint_dir else ""))
            break
        rss_before = rss
        width = sum(seg.size for seg in frontier)
        tick = time.perf_counter()
        if distribute is not None and width >= distribute_min:
            results = distribute(expander(), plan_chunks(frontier, distribute_slices, per_worker=1))
        else:
            # A narrow level is expanded here: forking would cost more than it saves (same result either way).
            n = workers if width >= parallel_min else 1
            results = expand_level(expander(), plan_chunks(frontier, n), n)
        phases["expand"] += time.perf_counter() - tick
        if ckpt is not None:
            bad = next((r.codec_error for r in results if r.codec_error), None)
            if bad is not None:
                raise UserError(f"protocol '{ts.name}': a state of level {level + 1} cannot be written to the "
                                f"checkpoint ({_line(bad)}); its state type's codec cannot encode it")
        tick = time.perf_counter()
        vkey: tuple[int, int, int, int] | None = None
        if stop_at_first:
            for c, r in enumerate(results):
                if r.violations:
                    results = results[: c + 1]
                    vkey = min(v[0] for v in r.violations)
                    break
        counts = np.concatenate([r.counts for r in results]).astype(np.int64)
        cfp = np.concatenate([r.cand_fp for r in results])
        cpos = np.concatenate([r.cand_pos for r in results]).astype(np.int64)
        ck = np.concatenate([r.cand_k for r in results]).astype(np.int64)
        keep = np.zeros(cfp.shape[0], dtype=bool)
        keep[np.unique(cfp, return_index=True)[1]] = True  # a state two chunks found: the first one's
        if vkey is not None:
            keep &= (cpos < vkey[0]) | ((cpos == vkey[0]) & (ck <= vkey[1]))
        p_cut: int | None = None  # a single process checks max_states after each expanded state
        if max_states is not None:
            need = max_states - len(visited)
            newpos = cpos[keep]
            if need <= 0:
                p_cut = 0
            elif need <= newpos.shape[0]:
                p_cut = int(newpos[need - 1])
        if vkey is not None and (p_cut is None or vkey[0] <= p_cut):
            stopped = True
            expanded = counts[: vkey[0]]
            generated += int(expanded.sum()) + vkey[1] + 1
        elif p_cut is not None:
            truncated = True
            full_depth = level  # the next level is only partly there
            vkey = None
            keep &= cpos <= p_cut
            expanded = counts[: p_cut + 1]
            generated += int(expanded.sum())
        else:
            expanded = counts
            generated += int(expanded.sum())
        terminal += int((expanded == 0).sum())
        for r in results:
            for name, n in r.action_counts.items():
                action_counts[name] = action_counts.get(name, 0) + n
        best: dict[str, tuple[tuple[int, int, int, int], str]] = {}
        for r in results:
            for vk, pid, kind in r.violations:
                if p_cut is not None and vk[0] > p_cut:
                    continue
                if pid not in best or vk < best[pid][0]:
                    best[pid] = (vk, kind)
        for pid, (vk, kind) in sorted(best.items(), key=lambda kv: kv[1][0]):
            violated.add(pid)
            found.append(_Found(pid, kind, descriptions[pid], level, vk[0], vk[1]))
        first_seen: dict[str, tuple[int, int]] = {}
        for r in results:
            for wid, wk in r.witnessed.items():
                if p_cut is not None and wk[0] > p_cut:
                    continue
                if vkey is not None and wk > vkey[:2]:
                    continue
                if wid not in first_seen or wk < first_seen[wid]:
                    first_seen[wid] = wk
        for wid, wk in sorted(first_seen.items(), key=lambda kv: kv[1]):
            witnessed.append(_Found(wid, "witness", descriptions[wid], level, wk[0], wk[1]))
        new_fp = cfp[keep]
        visited.add_new(new_fp)
        store.append(new_fp, cpos[keep], ck[keep])
        frontier = []
        at = 0
        for r in results:
            for seg in r.segments:
                frontier.append(Segment(seg.items, keep[at: at + seg.items], seg.blob, seg.codes, seg.code_ends))
                at += seg.items
        phases["merge"] += time.perf_counter() - tick
        tick = time.perf_counter()
        if graph is not None and graph.dropped is None:
            if stopped or truncated:
                graph.drop("the exploration is incomplete")
            else:
                graph.add_edges(results)
                graph.add_states(np.concatenate([r.cand_marks for r in results])[keep])
        phases["graph"] += time.perf_counter() - tick
        level += 1
        levels.append(LevelStats(level, int(new_fp.shape[0]), len(visited), generated,
                                 elapsed_before + time.perf_counter() - t0))
        if progress:
            progress(levels[-1])
        # Only a completed level is checkpointed: a level cut by max_states or by a violation holds part of
        # what its parents reach, and a resume that took it for whole would report too few states.
        if ckpt is not None and not (stopped or truncated):
            tick = time.perf_counter()
            ckpt.save(store, level, frontier, _totals(
                generated, terminal, action_counts, found, levels, elapsed_before + time.perf_counter() - t0,
                witnessed))
            for seg in [*frontier, *(seg for r in results for seg in r.segments)]:
                seg.codes = seg.code_ends = None  # written: the next level's expansion needs the memory
            phases["checkpoint"] += time.perf_counter() - tick
        elif ckpt is not None and truncated:
            notes.append(f"level {level} was cut by the state budget: the checkpoint keeps levels 0 to "
                         f"{level - 1}, and --resume explores level {level} again in full")
        if truncated:
            break
    sizes = store.sizes()
    depth = max((lv for lv, n in enumerate(sizes) if n), default=0)
    complete = not truncated and not stopped and not sum(seg.size for seg in frontier)
    if levels and levels[-1].frontier == 0 and len(levels) > 1:
        levels.pop()

    graph_checked = graph is not None and graph.dropped is None and complete
    tick = time.perf_counter()
    if graph is not None and graph_checked:
        offsets = np.cumsum([0, *sizes])
        for gp, target in zip(graph_props, graph.check(graph_props, store.all_fps()), strict=True):
            if target is not None:
                lv = int(np.searchsorted(offsets, target, side="right")) - 1
                violated.add(gp.id)
                found.append(_Found(gp.id, "graph", gp.description, lv, target - int(offsets[lv]), None))
    elif graph is not None and graph_props:
        why = graph.dropped or ("the exploration is incomplete" if not complete else "")
        notes.append(f"graph properties not checked: {why}")
    phases["graph_check"] = time.perf_counter() - tick
    outcomes: list[PropertyOutcome] = []
    reached = {f.property_id: f.level + (f.k is not None) for f in witnessed}
    for prop in ts.properties():
        if prop.kind == "witness":
            if prop.id in reached:
                status = f"reached at depth {reached[prop.id]}"
            elif complete:
                status = "vacuous"
            elif stopped:
                status = "not checked"
            else:
                status = f"not reached up to depth {full_depth}"
        elif prop.id in violated:
            status = "violated"
        elif prop.kind == "graph" and not graph_checked:
            status = "not checked"
        elif stopped:
            status = "not checked"  # the search stopped early at another property's violation
        elif truncated:
            status = f"holds up to depth {full_depth}"  # a bounded run never says plain "holds"
        else:
            status = "holds"
        outcomes.append(PropertyOutcome(prop.id, prop.kind, prop.description, prop.source, status))

    fp_check = expander().fingerprint
    violations = [_violation(ts, store, initial, f, fp_check, config_name) for f in found]
    # The shortest path into each witnessed story: what a researcher reads to see the config exercise it.
    witness_traces = [_violation(ts, store, initial, f, fp_check, config_name) for f in witnessed]
    elapsed = elapsed_before + time.perf_counter() - t0
    distinct = len(visited)
    return ExplorationResult(
        protocol=ts.name,
        config=config_name,
        engine="local",
        distinct_states=distinct,
        generated_states=generated,
        depth=depth,
        complete=complete,
        violations=violations,
        levels=levels,
        elapsed=elapsed,
        properties=outcomes,
        terminal_states=terminal,
        variant=variant,
        profile=getattr(ts.config, "profile", None),
        witness_traces=witness_traces,
        extra={
            "workers": workers,
            "symmetry": symmetry,
            "visited_set": {
                "bytes": visited.nbytes,
                "bytes_per_state": round(visited.nbytes / max(distinct, 1), 1),
                "fingerprint_bits": 64,
                "collision_probability_optimistic": collision_probability(distinct, generated),
            },
            "action_counts": dict(sorted(action_counts.items())),
            "phase_seconds": {k: round(v, 3) for k, v in phases.items()},
            "notes": notes,
        },
    )


def _totals(generated: int, terminal: int, action_counts: dict[str, int], found: list[_Found],
            levels: list[LevelStats], elapsed: float, witnessed: list[_Found]) -> dict[str, Any]:
    return {"generated": generated, "terminal": terminal, "action_counts": action_counts,
            "found": [f.to_json() for f in found], "levels": [lv.to_json() for lv in levels],
            "elapsed": elapsed, "witnessed": [f.to_json() for f in witnessed]}


def _violation(ts: TransitionSystem[Any], store: LevelStore, initial: list[Any], f: _Found,
               fp_of: Callable[[Any], int], config_name: str) -> Violation:
    steps = _replay(ts, store, initial, f.level, f.pos, fp_of)
    if f.k is not None:
        prop = next((p for p in ts.properties() if p.id == f.property_id), None)
        a, t = _nth(ts, steps[-1].state, f.k, _shows(prop))
        steps.append(Step(a, t))
    trace = Trace(steps, protocol=ts.name, config=config_name, property_id=f.property_id,
                  description=f.description)
    return Violation(f.property_id, f.kind, f.description, len(steps) - 1, trace)


def _shows(prop: Any) -> Callable[[Any, Action, Any], bool] | None:
    """Does the edge (s, a, t) show ``prop`` failing (a witness: holding)?"""
    if isinstance(prop, Invariant):
        return lambda s, a, t: not prop.predicate(t)
    if isinstance(prop, StepProperty):
        return lambda s, a, t: not prop.predicate(s, a, t)
    if isinstance(prop, Witness):
        return lambda s, a, t: bool(prop.predicate(t))
    return None


def _nth(ts: TransitionSystem[Any], s: Any, k: int,
         shows: Callable[[Any, Action, Any], bool] | None = None) -> tuple[Action, Any]:
    """Successor ``k`` of ``s``, where the exploration found what ``shows`` tests. Successor order can
    follow how a state's frozensets were built (a state decoded from a checkpoint iterates them in another
    order than the object replayed here): if successor k does not show it, the first successor that does."""
    succ = list(ts.successors(s))
    if k < len(succ) and (shows is None or shows(s, *succ[k])):
        return succ[k]
    if shows is not None:
        for a, t in succ:
            if shows(s, a, t):
                return a, t
    raise RuntimeError(f"{ts.name}: trace replay found no successor {k} (successors are not deterministic?)")


def _encodings(ts: TransitionSystem[Any], initial: list[Any]) -> tuple[bytes, np.ndarray]:
    """The initial states' canonical encodings, for the checkpoint; refused up front, in one line, when the
    system's codec cannot write its states or read them back (a checkpoint never holds a pickle)."""
    try:
        if any(ts.decode(ts.encode(s)) != s for s in initial):
            raise ValueError("a state does not decode to itself")
        return encode_all(ts.encode, initial)
    except Exception as exc:  # whatever the codec raises, the one line names it
        why = _line(f"{type(exc).__name__}: {exc}")
        raise UserError(f"protocol '{ts.name}': its states cannot be written to a checkpoint ({why}); its state "
                        "type's codec cannot encode them") from None


def _line(text: str) -> str:
    return " ".join(text.split())[:200]


def _replay(ts: TransitionSystem[Any], store: LevelStore, initial: list[Any], level: int, pos: int,
            fp_of: Callable[[Any], int]) -> list[Step]:
    """The shortest path to the state at (level, pos): follow parent pointers back, then replay forward,
    checking every state's fingerprint against the one the exploration recorded."""
    chain: list[tuple[int, int, int]] = []
    while level > 0:
        parent, k = store.parent(level, pos)
        chain.append((level, pos, k))
        level, pos = level - 1, parent
    s = _roundtrip(initial[pos])
    steps = [Step(None, s)]
    for lv, p, k in reversed(chain):
        want = int(store.fps(lv)[p])
        succ = list(ts.successors(s))
        pick = succ[k] if k < len(succ) and fp_of(succ[k][1]) == want else None
        if pick is None:  # successor order changed with the objects: match by fingerprint instead
            pick = next(((a, t) for a, t in succ if fp_of(t) == want), None)
        if pick is None:
            raise RuntimeError(f"{ts.name}: trace replay diverged at depth {lv} (successors are not deterministic?)")
        s = _roundtrip(pick[1])
        steps.append(Step(pick[0], s))
    return steps


def reachable_states(ts: TransitionSystem[Any], limit: int | None = None,
                     admit: Callable[[Any], bool] | None = None) -> tuple[set[Any], set[str]]:
    """Every reachable state and every action name on the way (depth-first, no bookkeeping): for the
    checks that need the whole set at once (conformance, drift). ``limit`` bounds the number of states.
    ``admit`` sees each state as it is first reached; the walk stops at the first one it refuses (the sets
    then hold what was reached so far, that state among them)."""
    seen: set[Any] = set()
    names: set[str] = set()
    todo: list[Any] = []

    def reached(t: Any) -> bool:
        seen.add(t)
        if limit is not None and len(seen) > limit:
            raise ValueError(f"more than {limit} reachable states")
        todo.append(t)
        return admit is None or admit(t)

    for s in ts.initial_states():
        if s not in seen and not reached(s):
            return seen, names
    while todo:
        for a, t in ts.successors(todo.pop()):
            names.add(a.name)
            if t not in seen and not reached(t):
                return seen, names
    return seen, names

