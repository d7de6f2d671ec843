"""Shortest traces rebuilt from the level store: where a finding lies, and the path that reaches it.

The explorer keeps no states, only each level's fingerprints and parent pointers
(:mod:`rollcheck.explore.levelstore`). A finding (a violation, or a witness's first state) is located as the
state at ``(level, pos)`` or as its successor ``k``; its trace is rebuilt by following the parent pointers
back to an initial state and replaying forward, every state checked against the fingerprint the
exploration recorded. Breadth-first order makes that path a shortest one.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rollcheck.core.traces import Step, Trace
from rollcheck.core.transition import Action, Invariant, StepProperty, TransitionSystem, Witness
from rollcheck.explore.levelstore import LevelStore
from rollcheck.explore.result import Violation


@dataclass
class Found:
    """A violation or witness located in the level store: the state at (level, pos), or its successor k.
    Its ``to_json`` is what a checkpoint's totals record (:mod:`rollcheck.explore.levelstore` checks the keys)."""

    property_id: str
    kind: str
    description: str
    level: int
    pos: int
    k: int | None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def shortest_trace(ts: TransitionSystem[Any], store: LevelStore, initial: list[Any], f: Found,
                   fp_of: Callable[[Any], int], config_name: str) -> Violation:
    """The finding ``f`` with its shortest trace from one of the ``initial`` states."""
    steps = replay(ts, store, initial, f.level, f.pos, fp_of)
    if f.k is not None:
        prop = next((p for p in ts.properties() if p.id == f.property_id), None)
        a, t = successor(ts, steps[-1].state, f.k, shows(prop))
        steps.append(Step(a, t))
    trace = Trace(steps, protocol=ts.name, config=config_name, property_id=f.property_id,
                  description=f.description)
    return Violation(f.property_id, f.kind, f.description, len(steps) - 1, trace)


def shows(prop: Any) -> Callable[[Any, Action, Any], bool] | None:
    """Does the edge (s, a, t) show ``prop`` failing (a witness: holding)?"""
    if isinstance(prop, Invariant):
        return lambda s, a, t: not prop.predicate(t)
    if isinstance(prop, StepProperty):
        return lambda s, a, t: not prop.predicate(s, a, t)
    if isinstance(prop, Witness):
        return lambda s, a, t: bool(prop.predicate(t))
    return None


def successor(ts: TransitionSystem[Any], s: Any, k: int,
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


def roundtrip(state: Any) -> Any:
    """A state as the next level's workers see it (unpickled): replay must follow the same objects, since
    a frozenset's iteration order (and so a successor's index) can depend on how it was built."""
    return pickle.loads(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))


def replay(ts: TransitionSystem[Any], store: LevelStore, initial: list[Any], level: int, pos: int,
           fp_of: Callable[[Any], int]) -> list[Step]:
    """The shortest path to the state at (level, pos): follow parent pointers back, then replay forward,
    checking every state's fingerprint against the one the exploration recorded."""
    chain: list[tuple[int, int, int]] = []
    while level > 0:
        parent, k = store.parent(level, pos)
        chain.append((level, pos, k))
        level, pos = level - 1, parent
    s = roundtrip(initial[pos])
    steps = [Step(None, s)]
    for lv, p, k in reversed(chain):
        want = int(store.fps(lv)[p])
        succ = list(ts.successors(s))
        pick = succ[k] if k < len(succ) and fp_of(succ[k][1]) == want else None
        if pick is None:  # successor order changed with the objects: match by fingerprint instead
            pick = next(((a, t) for a, t in succ if fp_of(t) == want), None)
        if pick is None:
            raise RuntimeError(f"{ts.name}: trace replay diverged at depth {lv} (successors are not deterministic?)")
        s = roundtrip(pick[1])
        steps.append(Step(pick[0], s))
    return steps
