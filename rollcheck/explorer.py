"""The single-process explorer: breadth-first search over a transition system.

It is the yardstick the Spark explorer must match exactly (same distinct states, depth and violated
property ids) and the engine the tests use on small configs. Breadth-first order makes every
counterexample a shortest one: it is rebuilt from the parent pointers.

Depth follows the BFS distance from an initial state (initial states are at depth 0; TLC counts
them as depth 1).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rollcheck.traces import Step, Trace, path_to
from rollcheck.transition import (
    Action,
    ExploredGraph,
    TransitionSystem,
    properties_by_kind,
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
    status: str  # "holds", "violated", "not checked" (graph property on an incomplete graph)

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

    @property
    def violated_ids(self) -> set[str]:
        return {v.property_id for v in self.violations}

    @property
    def ok(self) -> bool:
        return not self.violations

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
            "levels": [lv.to_json() for lv in self.levels],
            "elapsed_seconds": round(self.elapsed, 3),
            "distinct_states_per_second": round(rate, 1) if rate else None,
            **self.extra,
        }


ProgressFn = Callable[[LevelStats], None]


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
) -> ExplorationResult:
    """Explore every state reachable from ``ts.initial_states()`` breadth-first.

    ``stop_at_first`` stops at the first violation; otherwise one (shortest) counterexample is kept per
    violated property and the search goes on. Graph properties (liveness) are checked only when the
    exploration is complete, and need the edges kept in memory (``check_graph``).
    """
    t0 = time.perf_counter()
    inv, step_props, graph_props = properties_by_kind(ts)
    keep_edges = check_graph and bool(graph_props)

    states: list[Any] = []
    index: dict[Any, int] = {}
    parent: list[int] = []
    act: list[Action | None] = []
    depth_of: list[int] = []
    edges: list[list[tuple[Action, int]]] = []
    violations: list[Violation] = []
    violated: set[str] = set()
    generated = 0
    terminal = 0
    levels: list[LevelStats] = []
    stopped = False

    def record(prop_id: str, kind: str, desc: str, steps: list[Step]) -> None:
        nonlocal stopped
        if prop_id in violated:
            return
        violated.add(prop_id)
        trace = Trace(steps, protocol=ts.name, config=config_name, property_id=prop_id,
                      description=desc)
        violations.append(Violation(prop_id, kind, desc, len(steps) - 1, trace))
        if stop_at_first:
            stopped = True

    def check_state(i: int) -> None:
        s = states[i]
        for p in inv:
            if p.id not in violated and not p.holds(s):
                record(p.id, "invariant", p.description, path_to(states, parent, act, i))

    frontier: list[int] = []
    for s in ts.initial_states():
        if s in index:
            continue
        i = len(states)
        states.append(s)
        index[s] = i
        parent.append(-1)
        act.append(None)
        depth_of.append(0)
        if keep_edges:
            edges.append([])
        frontier.append(i)
        check_state(i)
    levels.append(LevelStats(0, len(frontier), len(states), 0, time.perf_counter() - t0))
    if progress:
        progress(levels[-1])

    level = 0
    truncated = False
    while frontier and not stopped:
        if max_depth is not None and level >= max_depth:
            truncated = True
            break
        nxt: list[int] = []
        for i in frontier:
            s = states[i]
            out = edges[i] if keep_edges else None
            n_succ = 0
            for a, t in ts.successors(s):
                n_succ += 1
                generated += 1
                j = index.get(t)
                if j is None:
                    j = len(states)
                    states.append(t)
                    index[t] = j
                    parent.append(i)
                    act.append(a)
                    depth_of.append(level + 1)
                    if keep_edges:
                        edges.append([])
                    nxt.append(j)
                    check_state(j)
                for p in step_props:
                    if p.id not in violated and not p.holds(s, a, t):
                        steps = [*path_to(states, parent, act, i), Step(a, t)]
                        record(p.id, "step", p.description, steps)
                if out is not None:
                    out.append((a, j))
                if stopped:
                    break
            if n_succ == 0:
                terminal += 1
            if stopped:
                break
            if max_states is not None and len(states) >= max_states:
                truncated = True
                break
        level += 1
        frontier = nxt
        levels.append(LevelStats(level, len(nxt), len(states), generated, time.perf_counter() - t0))
        if progress:
            progress(levels[-1])
        if truncated:
            break
    # The last level may be empty (no new states): depth is that of the deepest state found.
    depth = max(depth_of) if depth_of else 0
    complete = not truncated and not stopped and not frontier
    if levels and levels[-1].frontier == 0 and len(levels) > 1:
        levels.pop()

    outcomes: list[PropertyOutcome] = []
    if keep_edges and complete:
        graph = ExploredGraph(states, index, [i for i, p in enumerate(parent) if p < 0], edges, True)
        for gp in graph_props:
            bad = gp.check(graph)
            if bad:
                target = min((index[b] for b in bad), key=lambda k: depth_of[k])
                record(gp.id, "graph", gp.description, path_to(states, parent, act, target))
    for p in ts.invariants():
        if p.id in violated:
            status = "violated"
        elif p.kind == "graph" and not (keep_edges and complete):
            status = "not checked"
        elif stopped:
            status = "not checked"  # the search stopped early at another property's violation
        else:
            status = "holds"
        outcomes.append(PropertyOutcome(p.id, p.kind, p.description, p.source, status))

    return ExplorationResult(
        protocol=ts.name,
        config=config_name,
        engine="local",
        distinct_states=len(states),
        generated_states=generated,
        depth=depth,
        complete=complete,
        violations=violations,
        levels=levels,
        elapsed=time.perf_counter() - t0,
        properties=outcomes,
        terminal_states=terminal,
        variant=variant,
        profile=getattr(ts.config, "profile", None),
    )


def reachable_states(ts: TransitionSystem[Any], limit: int | None = None) -> tuple[set[Any], set[str]]:
    """Every reachable state and every action name on the way (depth-first, no bookkeeping): for the
    checks that need the whole set at once (conformance, drift). ``limit`` bounds the number of states."""
    seen = set(ts.initial_states())
    names: set[str] = set()
    todo = list(seen)
    while todo:
        for a, t in ts.successors(todo.pop()):
            names.add(a.name)
            if t not in seen:
                seen.add(t)
                if limit is not None and len(seen) > limit:
                    raise ValueError(f"more than {limit} reachable states")
                todo.append(t)
    return seen, names

