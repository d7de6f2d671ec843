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
from typing import Any

import numpy as np

from rollcheck.transition import Action, GraphProperty


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
