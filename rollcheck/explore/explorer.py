"""The single-process explorer: breadth-first search over a transition system.

It is the yardstick the Spark engine must match exactly (same distinct states, depth and violated
property ids; the Spark engine runs this same loop and only expands its wide levels elsewhere) and the
engine the tests use on small configs. Breadth-first order makes every counterexample a shortest one: it
is rebuilt from the parent pointers (:mod:`rollcheck.explore.shortest`).

Depth follows the BFS distance from an initial state (initial states are at depth 0; TLC counts
them as depth 1).

One run is an :class:`Exploration` over one :class:`~rollcheck.explore.options.ExploreOptions`; its steps
are the initial level, then per level expand, cut, merge and close, then finish.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rollcheck.core.errors import UserError
from rollcheck.core.fingerprint import FingerprintSet, collision_probability, fingerprinter
from rollcheck.core.transition import TransitionSystem, properties_by_kind, witnesses_of
from rollcheck.explore.expansion import (
    ChunkResult,
    Expander,
    Segment,
    ViolationKey,
    encode_all,
    expand_level,
    plan_chunks,
)
from rollcheck.explore.graphcheck import GraphBuilder, MarkColumns
from rollcheck.explore.levelstore import Checkpoint, LevelStore
from rollcheck.explore.options import GRAPH_LIMIT, PARALLEL_MIN, ExploreOptions
from rollcheck.explore.result import ExplorationResult, LevelStats, ProgressFn, PropertyOutcome, Violation
from rollcheck.explore.shortest import Found, shortest_trace

__all__ = [
    "GRAPH_LIMIT",
    "PARALLEL_MIN",
    "Exploration",
    "ExplorationResult",
    "ExploreOptions",
    "LevelStats",
    "ProgressFn",
    "PropertyOutcome",
    "Violation",
    "available_memory",
    "explore",
    "reachable_states",
]


def explore(ts: TransitionSystem[Any], options: ExploreOptions | None = None) -> ExplorationResult:
    """Explore every state reachable from ``ts.initial_states()`` breadth-first, as ``options`` say.

    ``stop_at_first`` stops at the first violation; otherwise one (shortest) counterexample is kept per
    violated property and the search goes on. Graph properties (liveness) are checked only when the
    exploration is complete and the graph has at most ``graph_limit`` states. ``workers`` processes expand
    each level (the result does not depend on it). ``symmetry`` keeps one state per orbit of the
    protocol's ``symmetry_key``. With ``checkpoint_dir`` every completed level is checkpointed there (a
    level cut short by ``max_states`` or by a violation is not: a resume expands it again) and ``resume``
    continues from the last one to the result of an uninterrupted run; ``checkpoint_root`` (the user's
    ``--out``, default the checkpoint's parent) is where the directories rollcheck makes for it start, each
    one refused if it is a link. ``max_memory`` (bytes) stops the run, resumable, before a level that would
    not fit. Levels narrower than ``parallel_min`` states are expanded in this process.

    ``distribute`` (the Spark engine's) expands the chunks of every level of at least ``distribute_min``
    states, cut into ``distribute_slices`` chunks, elsewhere; its results must be what
    :meth:`Expander.expand` returns for each chunk, so the outcome does not depend on it.
    """
    return Exploration(ts, options or ExploreOptions()).run()


@dataclass(frozen=True)
class _Cut:
    """An expanded level up to where it ends (:meth:`Exploration.cut`)."""

    results: list[ChunkResult]  # the chunks that count, in chunk order
    cand_fp: np.ndarray  # their candidates, in discovery order: fingerprints,
    cand_pos: np.ndarray  # parent positions
    cand_k: np.ndarray  # and successor indices
    keep: np.ndarray  # which candidates are the level's new states
    expanded: np.ndarray  # the successor count of each frontier state expanded before the end
    generated: int  # the transitions generated before the end
    vkey: ViolationKey | None  # the first violation, where it stops the search
    p_cut: int | None  # the last frontier position within the state budget


class Exploration:
    """One breadth-first exploration of ``ts`` under ``options`` (see :func:`explore`), step by step.

    :meth:`run` is the level loop. Each step keeps its own part of the bookkeeping: :meth:`initial_level`
    (level 0, or every level of a checkpoint), :meth:`expand` (a level's chunks, here, in forked workers or
    on ``distribute``), :meth:`cut` (where a violation or the state budget ends the level), :meth:`merge`
    (the level's counts and findings, its new states into the visited set and the level store, the next
    frontier), :meth:`close_level` (the graph's edges, the level's stats, the checkpoint) and
    :meth:`finish` (graph properties, every property's outcome, the shortest traces)."""

    def __init__(self, ts: TransitionSystem[Any], options: ExploreOptions) -> None:
        self.ts = ts
        self.options = options
        self.t0 = time.perf_counter()
        self.invariants, self.step_properties, self.graph_properties = properties_by_kind(ts)
        self.witnesses = witnesses_of(ts)
        self.key = _symmetry_key(ts) if options.symmetry else None
        self.fingerprint = fingerprinter(self.key)
        self.descriptions = {p.id: p.description for p in ts.properties()}
        self.visited = FingerprintSet()
        self.store = LevelStore(options.checkpoint_dir)
        self.graph = GraphBuilder(options.graph_limit, MarkColumns.of(self.graph_properties)) \
            if options.check_graph and self.graph_properties else None
        self.checkpoint = None if options.checkpoint_dir is None else \
            Checkpoint(options.checkpoint_dir, self._checkpoint_key(), options.checkpoint_root)
        # What the result reports and a checkpoint's totals carry over to a resume.
        self.found: list[Found] = []
        self.violated: set[str] = set()
        self.witnessed: list[Found] = []  # the first state found satisfying each witness
        self.generated = 0
        self.terminal = 0
        self.action_counts: dict[str, int] = {}
        self.levels: list[LevelStats] = []
        self.notes: list[str] = []
        self.elapsed_before = 0.0  # a resumed run's time before the resume
        # Where the search stands.
        self.initial: list[Any] = []
        self.level = 0
        self.frontier: list[Segment] = []
        self.stopped = False  # a violation ended the search (stop_at_first)
        self.truncated = False  # a bound ended it (depth, states, memory)
        self.full_depth = 0  # on a truncated run: every state within this many steps was checked
        self.rss_before = 0
        self.phases = dict.fromkeys(("expand", "merge", "graph", "checkpoint", "graph_check"), 0.0)

    def run(self) -> ExplorationResult:
        self.initial_level()
        self.rss_before = _rss()
        while self._width() and not self.stopped and not self._bounded():
            cut = self.cut(self.expand())
            self.close_level(cut, self.merge(cut))
            if self.truncated:
                break
        return self.finish()

    # ------------------------------------------------------------------------------------------ level 0

    def initial_level(self) -> None:
        """The initial states, deduplicated in order (a resume rebuilds them the same way), checked and
        stored as level 0; or, on a resume, every level of the checkpoint."""
        seen: set[int] = set()
        first_fp: list[int] = []
        for s in self.ts.initial_states():
            f = self.fingerprint(s)
            if f not in seen:
                seen.add(f)
                self.initial.append(s)
                first_fp.append(f)
        codes = _encodings(self.ts, self.initial) if self.checkpoint is not None else None
        if self.options.resume and self.checkpoint is not None and self.checkpoint.exists():
            self._resume(self.checkpoint)
        else:
            self._start(first_fp, codes)
        self.stopped = bool(self.found) and self.options.stop_at_first

    def _start(self, first_fp: list[int], codes: tuple[bytes, np.ndarray] | None) -> None:
        if self.options.resume:
            self.notes.append(f"no checkpoint in {self.options.checkpoint_dir}: starting fresh")
        if self.checkpoint is not None:
            self.checkpoint.clear()
        initial = self.initial
        fps0 = np.asarray(first_fp, dtype=np.uint64)
        self.visited.add_new(fps0)
        self.store.append(fps0, np.zeros(len(initial), np.uint32), np.zeros(len(initial), np.uint32))
        for i, s in enumerate(initial):
            for p in self.invariants:
                if p.id not in self.violated and not p.predicate(s):
                    self.violated.add(p.id)
                    self.found.append(Found(p.id, "invariant", p.description, 0, i, None))
            for w in self.witnesses:
                if w.id not in {f.property_id for f in self.witnessed} and w.predicate(s):
                    self.witnessed.append(Found(w.id, "witness", w.description, 0, i, None))
        if self.graph is not None:
            self.graph.add_states(self.graph.columns.evaluate(initial))
        self.frontier = [Segment(len(initial), blob=pickle.dumps(initial, protocol=pickle.HIGHEST_PROTOCOL))]
        if codes is not None:
            self.frontier[0].codes, self.frontier[0].code_ends = codes
        if self.options.visit is not None:
            self.options.visit(0, initial)
        self.levels.append(LevelStats(0, len(initial), len(self.visited), 0, time.perf_counter() - self.t0))
        if self.options.progress:
            self.options.progress(self.levels[-1])
        if self.checkpoint is not None:
            self.checkpoint.save(self.store, 0, self.frontier, self._totals(time.perf_counter() - self.t0))

    def _resume(self, ckpt: Checkpoint) -> None:
        point = ckpt.load(self.store, self.ts.decode, self.fingerprint)
        for lv in range(len(self.store)):
            fps = np.asarray(self.store.fps(lv), dtype=np.uint64)
            if (fps == 0).any() or np.unique(fps).shape[0] != fps.shape[0] or self.visited.contains(fps).any():
                raise ckpt.damaged(f"level {lv} repeats a state of its own or of an earlier level")
            self.visited.add_new(fps)
        self.level = point.level
        self.frontier = point.frontier
        tot = point.totals
        self.generated, self.terminal = tot["generated"], tot["terminal"]
        self.action_counts = dict(tot["action_counts"])
        self.found = [Found(**f) for f in tot["found"]]  # each checked by ckpt.load
        self.violated = {f.property_id for f in self.found}
        self.witnessed = [Found(**f) for f in tot.get("witnessed", [])]
        self.levels = [LevelStats(**lv) for lv in tot["levels"]]
        self.elapsed_before = tot["elapsed"]
        if self.graph is not None:
            self.graph.drop("the run was resumed (the graph of the levels before the resume is not kept)")
        self.notes.append(f"resumed from level {self.level} of the checkpoint in {self.options.checkpoint_dir}")

    # ------------------------------------------------------------------------------------ one level

    def _bounded(self) -> bool:
        """Does a bound stop the search before the next level: ``max_depth``, or ``max_memory`` (the
        process's size now plus twice what the last level added)?"""
        o = self.options
        if o.max_depth is not None and self.level >= o.max_depth:
            self.truncated = True
            self.full_depth = self.level
            return True
        rss = _rss()
        if o.max_memory is not None and rss and rss + 2 * max(rss - self.rss_before, 0) > o.max_memory:
            self.truncated = True
            self.full_depth = self.level
            self.notes.append(f"stopped before level {self.level + 1}: it would exceed the memory budget of "
                              f"{o.max_memory / 2**30:.1f} GiB (now {rss / 2**30:.1f} GiB)"
                              + (f"; --resume continues from {o.checkpoint_dir}" if o.checkpoint_dir else ""))
            return True
        self.rss_before = rss
        return False

    def expander(self) -> Expander:
        """What the next level's chunks share: the properties not violated yet, the witnesses not reached."""
        reached = {f.property_id for f in self.witnessed}
        return Expander(self.ts, [p for p in self.invariants if p.id not in self.violated],
                        [p for p in self.step_properties if p.id not in self.violated], self.key, self.visited,
                        self.options.stop_at_first, None if self.graph is None else self.graph.columns,
                        [w for w in self.witnesses if w.id not in reached], encode=self.checkpoint is not None)

    def expand(self) -> list[ChunkResult]:
        """The next level's chunk results in chunk order: a wide level's from ``distribute``, any other's
        from this process or forked workers (the results do not depend on where)."""
        o = self.options
        width = self._width()
        tick = time.perf_counter()
        if o.distribute is not None and width >= o.distribute_min:
            results = o.distribute(self.expander(), plan_chunks(self.frontier, o.distribute_slices, per_worker=1))
        else:
            # A narrow level is expanded here: forking would cost more than it saves (same result either way).
            n = o.workers if width >= o.parallel_min else 1
            results = expand_level(self.expander(), plan_chunks(self.frontier, n), n)
        self.phases["expand"] += time.perf_counter() - tick
        if self.checkpoint is not None:
            bad = next((r.codec_error for r in results if r.codec_error), None)
            if bad is not None:
                raise UserError(f"protocol '{self.ts.name}': a state of level {self.level + 1} cannot be written "
                                f"to the checkpoint ({_line(bad)}); its state type's codec cannot encode it")
        return results

    def cut(self, results: list[ChunkResult]) -> _Cut:
        """Where the level ends: at its first violation (``stop_at_first``: later chunks and candidates do
        not count) or where ``max_states`` runs out, whichever a single process would meet first; and which
        candidates are new (a state two chunks found is the first one's)."""
        tick = time.perf_counter()
        vkey: ViolationKey | None = None
        if self.options.stop_at_first:
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
        if self.options.max_states is not None:
            need = self.options.max_states - len(self.visited)
            newpos = cpos[keep]
            if need <= 0:
                p_cut = 0
            elif need <= newpos.shape[0]:
                p_cut = int(newpos[need - 1])
        if vkey is not None and (p_cut is None or vkey[0] <= p_cut):
            self.stopped = True
            expanded = counts[: vkey[0]]
            generated = int(expanded.sum()) + vkey[1] + 1
        elif p_cut is not None:
            self.truncated = True
            self.full_depth = self.level  # the next level is only partly there
            vkey = None
            keep &= cpos <= p_cut
            expanded = counts[: p_cut + 1]
            generated = int(expanded.sum())
        else:
            expanded = counts
            generated = int(expanded.sum())
        self.phases["merge"] += time.perf_counter() - tick
        return _Cut(results, cfp, cpos, ck, keep, expanded, generated, vkey, p_cut)

    def merge(self, cut: _Cut) -> int:
        """The level up to its end into the run: transitions and terminal states counted, each property's
        first violation and each witness's first state recorded, the new states added to the visited set
        and the level store and made the next frontier. Returns the number of new states."""
        tick = time.perf_counter()
        self.generated += cut.generated
        self.terminal += int((cut.expanded == 0).sum())
        for r in cut.results:
            for name, n in r.action_counts.items():
                self.action_counts[name] = self.action_counts.get(name, 0) + n
        best: dict[str, tuple[ViolationKey, str]] = {}
        for r in cut.results:
            for vk, pid, kind in r.violations:
                if cut.p_cut is not None and vk[0] > cut.p_cut:
                    continue
                if pid not in best or vk < best[pid][0]:
                    best[pid] = (vk, kind)
        for pid, (vk, kind) in sorted(best.items(), key=lambda kv: kv[1][0]):
            self.violated.add(pid)
            self.found.append(Found(pid, kind, self.descriptions[pid], self.level, vk[0], vk[1]))
        first_seen: dict[str, tuple[int, int]] = {}
        for r in cut.results:
            for wid, wk in r.witnessed.items():
                if cut.p_cut is not None and wk[0] > cut.p_cut:
                    continue
                if cut.vkey is not None and wk > cut.vkey[:2]:
                    continue
                if wid not in first_seen or wk < first_seen[wid]:
                    first_seen[wid] = wk
        for wid, wk in sorted(first_seen.items(), key=lambda kv: kv[1]):
            self.witnessed.append(Found(wid, "witness", self.descriptions[wid], self.level, wk[0], wk[1]))
        keep = cut.keep
        new_fp = cut.cand_fp[keep]
        self.visited.add_new(new_fp)
        self.store.append(new_fp, cut.cand_pos[keep], cut.cand_k[keep])
        frontier: list[Segment] = []
        at = 0
        for r in cut.results:
            for seg in r.segments:
                frontier.append(Segment(seg.items, keep[at: at + seg.items], seg.blob, seg.codes, seg.code_ends))
                at += seg.items
        self.frontier = frontier
        self.phases["merge"] += time.perf_counter() - tick
        if self.options.visit is not None:  # the new states in store order: the segments' kept items, in turn
            self.options.visit(self.level + 1, [s for seg in frontier for s in seg.load()])
        return int(new_fp.shape[0])

    def close_level(self, cut: _Cut, new: int) -> None:
        """The level done: a whole level's edges and states to the graph, its stats reported, a whole
        level checkpointed."""
        tick = time.perf_counter()
        graph = self.graph
        if graph is not None and graph.dropped is None:
            if self.stopped or self.truncated:
                graph.drop("the exploration is incomplete")
            else:
                graph.add_edges(cut.results)
                graph.add_states(np.concatenate([r.cand_marks for r in cut.results])[cut.keep])
        self.phases["graph"] += time.perf_counter() - tick
        self.level += 1
        self.levels.append(LevelStats(self.level, new, len(self.visited), self.generated, self._elapsed()))
        if self.options.progress:
            self.options.progress(self.levels[-1])
        # Only a completed level is checkpointed: a level cut by max_states or by a violation holds part of
        # what its parents reach, and a resume that took it for whole would report too few states.
        if self.checkpoint is not None and not (self.stopped or self.truncated):
            tick = time.perf_counter()
            self.checkpoint.save(self.store, self.level, self.frontier, self._totals(self._elapsed()))
            for seg in [*self.frontier, *(seg for r in cut.results for seg in r.segments)]:
                seg.codes = seg.code_ends = None  # written: the next level's expansion needs the memory
            self.phases["checkpoint"] += time.perf_counter() - tick
        elif self.checkpoint is not None and self.truncated:
            self.notes.append(f"level {self.level} was cut by the state budget: the checkpoint keeps levels 0 "
                              f"to {self.level - 1}, and --resume explores level {self.level} again in full")

    # ------------------------------------------------------------------------------------------ finish

    def finish(self) -> ExplorationResult:
        """Graph properties on a complete graph, every property's outcome, the shortest traces."""
        sizes = self.store.sizes()
        depth = max((lv for lv, n in enumerate(sizes) if n), default=0)
        complete = not self.truncated and not self.stopped and not self._width()
        if self.levels and self.levels[-1].frontier == 0 and len(self.levels) > 1:
            self.levels.pop()
        graph_checked = self._check_graph(sizes, complete)
        outcomes = self._outcomes(complete, graph_checked)
        ts, name = self.ts, self.options.config_name
        violations = [shortest_trace(ts, self.store, self.initial, f, self.fingerprint, name) for f in self.found]
        # The shortest path into each witnessed story: what a researcher reads to see the config exercise it.
        witness_traces = [shortest_trace(ts, self.store, self.initial, f, self.fingerprint, name)
                          for f in self.witnessed]
        elapsed = self._elapsed()
        distinct = len(self.visited)
        return ExplorationResult(
            protocol=ts.name,
            config=name,
            engine="local",
            distinct_states=distinct,
            generated_states=self.generated,
            depth=depth,
            complete=complete,
            violations=violations,
            levels=self.levels,
            elapsed=elapsed,
            properties=outcomes,
            terminal_states=self.terminal,
            variant=self.options.variant,
            profile=getattr(ts.config, "profile", None),
            witness_traces=witness_traces,
            extra={
                "workers": self.options.workers,
                "symmetry": self.options.symmetry,
                "visited_set": {
                    "bytes": self.visited.nbytes,
                    "bytes_per_state": round(self.visited.nbytes / max(distinct, 1), 1),
                    "fingerprint_bits": 64,
                    "collision_probability_optimistic": collision_probability(distinct, self.generated),
                },
                "action_counts": dict(sorted(self.action_counts.items())),
                "phase_seconds": {k: round(v, 3) for k, v in self.phases.items()},
                "notes": self.notes,
            },
        )

    def _check_graph(self, sizes: list[int], complete: bool) -> bool:
        """Check the graph properties when the whole graph is there; whether they were checked."""
        graph, props = self.graph, self.graph_properties
        checked = graph is not None and graph.dropped is None and complete
        tick = time.perf_counter()
        if graph is not None and checked:
            offsets = np.cumsum([0, *sizes])
            for gp, target in zip(props, graph.check(props, self.store.all_fps()), strict=True):
                if target is not None:
                    lv = int(np.searchsorted(offsets, target, side="right")) - 1
                    self.violated.add(gp.id)
                    self.found.append(Found(gp.id, "graph", gp.description, lv, target - int(offsets[lv]), None))
        elif graph is not None and props:
            why = graph.dropped or ("the exploration is incomplete" if not complete else "")
            self.notes.append(f"graph properties not checked: {why}")
        self.phases["graph_check"] = time.perf_counter() - tick
        return checked

    def _outcomes(self, complete: bool, graph_checked: bool) -> list[PropertyOutcome]:
        outcomes: list[PropertyOutcome] = []
        reached = {f.property_id: f.level + (f.k is not None) for f in self.witnessed}
        for prop in self.ts.properties():
            if prop.kind == "witness":
                if prop.id in reached:
                    status = f"reached at depth {reached[prop.id]}"
                elif complete:
                    status = "vacuous"
                elif self.stopped:
                    status = "not checked"
                else:
                    status = f"not reached up to depth {self.full_depth}"
            elif prop.id in self.violated:
                status = "violated"
            elif prop.kind == "graph" and not graph_checked:
                status = "not checked"
            elif self.stopped:
                status = "not checked"  # the search stopped early at another property's violation
            elif self.truncated:
                status = f"holds up to depth {self.full_depth}"  # a bounded run never says plain "holds"
            else:
                status = "holds"
            outcomes.append(PropertyOutcome(prop.id, prop.kind, prop.description, prop.source, status))
        return outcomes

    # ------------------------------------------------------------------------------------------ helpers

    def _width(self) -> int:
        return sum(seg.size for seg in self.frontier)

    def _elapsed(self) -> float:
        return self.elapsed_before + time.perf_counter() - self.t0

    def _checkpoint_key(self) -> dict[str, Any]:
        """What a checkpoint must have been written by to be resumed (its manifest's ``key``)."""
        o, ts = self.options, self.ts
        return {"protocol": ts.name, "config": o.config_name, "profile": getattr(ts.config, "profile", None),
                "variant": o.variant, "symmetry": o.symmetry, "config_repr": repr(ts.config)}

    def _totals(self, elapsed: float) -> dict[str, Any]:
        """A checkpoint's totals (:mod:`rollcheck.explore.levelstore` checks them against its levels at a resume)."""
        return {"generated": self.generated, "terminal": self.terminal, "action_counts": self.action_counts,
                "found": [f.to_json() for f in self.found], "levels": [lv.to_json() for lv in self.levels],
                "elapsed": elapsed, "witnessed": [f.to_json() for f in self.witnessed]}


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

