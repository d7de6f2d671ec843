"""Graph properties (AG (start => E[allowed U goal])) checked on the explored graph as flat arrays.

The explorer never keeps the states for them: its workers evaluate each property's ``start`` and ``goal``
on every new state as it is found (one column of booleans each, the "marks"), every edge is kept as a
source index, a target fingerprint and an action code, and the search is a backward breadth-first
propagation in NumPy over the reversed edges (each state enters the frontier once, so O(states + edges)).
States are numbered in BFS order, so "the first offending state" is the one a shortest counterexample
reaches first, whichever number of workers found it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rollcheck.core.transition import Action, GraphProperty

if TYPE_CHECKING:
    from rollcheck.explore.expansion import ChunkResult


@dataclass(frozen=True)
class MarkColumns:
    """Which predicate column holds each graph property's ``goal`` and ``start`` (None: every state)."""

    predicates: tuple[Callable[[Any], bool], ...]
    goal: tuple[int, ...]
    start: tuple[int | None, ...]

    @staticmethod
    def of(props: Sequence[GraphProperty[Any]]) -> MarkColumns:
        predicates: list[Callable[[Any], bool]] = []
        goal: list[int] = []
        start: list[int | None] = []
        for p in props:
            goal.append(len(predicates))
            predicates.append(p.goal)
            if p.start is None:
                start.append(None)
            else:
                start.append(len(predicates))
                predicates.append(p.start)
        return MarkColumns(tuple(predicates), tuple(goal), tuple(start))

    def evaluate(self, states: Sequence[Any]) -> np.ndarray:
        """One row of booleans per state, one column per predicate."""
        out = np.zeros((len(states), len(self.predicates)), dtype=bool)
        for c, pred in enumerate(self.predicates):
            out[:, c] = [bool(pred(s)) for s in states]
        return out


def backward_reachable(n: int, src: np.ndarray, dst: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """For each of ``n`` states, whether a ``seeds`` state is reachable from it along the edges
    ``src[e] -> dst[e]`` (EF seed)."""
    ok = seeds.astype(bool, copy=True)
    if not src.size:
        return ok
    preds = src[np.argsort(dst, kind="stable")]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=offsets[1:])
    frontier = np.flatnonzero(ok)
    while frontier.size:
        lo = offsets[frontier]
        lens = offsets[frontier + 1] - lo
        total = int(lens.sum())
        if not total:
            break
        # The concatenated ranges lo[i] .. lo[i] + lens[i]: one gather for the whole frontier.
        idx = np.repeat(lo - (np.cumsum(lens) - lens), lens) + np.arange(total, dtype=np.int64)
        found = preds[idx]
        found = np.unique(found[~ok[found]])
        ok[found] = True
        frontier = found
    return ok


def violators(prop: GraphProperty[Any], marks: np.ndarray, columns: MarkColumns, index: int,
              src: np.ndarray, dst: np.ndarray, codes: np.ndarray, actions: Sequence[Action]) -> np.ndarray:
    """The states (BFS numbers, ascending) that violate graph property number ``index``: ``start`` states
    from which no ``goal`` state is reachable through ``allowed`` actions."""
    if prop.allowed is not None and src.size:
        allowed = np.fromiter((bool(prop.allowed(a)) for a in actions), dtype=bool, count=len(actions))
        keep = allowed[codes]
        src, dst = src[keep], dst[keep]
    ok = backward_reachable(marks.shape[0], src, dst, marks[:, columns.goal[index]])
    start = columns.start[index]
    bad = ~ok if start is None else marks[:, start] & ~ok
    return np.flatnonzero(bad)


class GraphBuilder:
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
