"""Trace validation: an observed run of a real system checked against the model, step by step.

A real cluster is seen only in part: after each step of a runbook, what could be read from it (the finalized
levels, the znodes, who is controller) is an *observation*, a mapping over the keys of the system's ``view``. The
observed trace is valid when there is a run of the model that agrees with every observation in turn: the first
observation is met by an initial state, and each later one by a state reached from a state that met the one
before in one transition or a few more (the steps the real system takes that nothing observes in between,
``internal``). This is trace validation as CCF does it for its implementation against its TLA+ spec; the
candidate set keeps every model state the observations allow, so a hidden difference (a broker's cache, a
pending notification) never makes a valid trace fail.

What it says (:class:`Validation`): the first observation no model state meets, with the observed mapping and
the closest states reached (fewest observed leaves differing, each difference named); the properties the
observed run violates: an invariant is violated at a step when every state that meets the observation there
violates it (whichever the hidden state was), a step property when every transition into the states that meet it
does; and one model run (actions and views) that agrees with every observation met.

An observation's value matches a view's value when they are equal, or, for a mapping, when each observed key
matches the view's under that key (keys not observed are free), for a list or tuple, when both have the same
length and match item by item, and for a set in the view, when the observed items are its items. Nothing here
knows a protocol. ``view`` replaces the system's own view for the matching (what a real system shows of a model
state: a projection a protocol's cluster binding gives).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rollcheck.core.transition import Action, Invariant, StepProperty, TransitionSystem

DEFAULT_INTERNAL = 3  # unobserved transitions allowed between two observations, beyond the one that makes the step
DEFAULT_LIMIT = 200_000  # states kept per step before the validation gives up (a bound, said in the result)
CLOSEST = 3


def differences(observed: Any, view: Any, path: str = "") -> list[str]:
    """The observed leaves ``view`` does not match, each as "path: observed X, model Y" (empty: it matches)."""
    if isinstance(observed, Mapping):
        if not isinstance(view, Mapping):
            return [f"{path or '.'}: observed a mapping, model {view!r}"]
        out: list[str] = []
        for key, value in observed.items():
            where = f"{path}.{key}" if path else str(key)
            if key not in view:
                out.append(f"{where}: observed {value!r}, not in the model's view")
            else:
                out += differences(value, view[key], where)
        return out
    if isinstance(view, frozenset | set) and isinstance(observed, list | tuple | set | frozenset):
        return [] if set(observed) == set(view) else [f"{path or '.'}: observed {observed!r}, model {view!r}"]
    if isinstance(observed, list | tuple):
        if not isinstance(view, list | tuple) or len(view) != len(observed):
            return [f"{path or '.'}: observed {observed!r}, model {view!r}"]
        out = []
        for i, (o, v) in enumerate(zip(observed, view, strict=True)):
            out += differences(o, v, f"{path}[{i}]")
        return out
    return [] if observed == view else [f"{path or '.'}: observed {observed!r}, model {view!r}"]


@dataclass(frozen=True)
class Closest:
    view: Mapping[str, object]
    differences: tuple[str, ...]


@dataclass(frozen=True)
class Violation:
    property_id: str
    description: str
    step: int  # the observation at which it is forced


@dataclass
class Validation:
    """The outcome (see the module docstring). ``failed_step`` None: every observation was met."""

    steps: int  # observations given
    met: int = 0  # observations met, in order
    failed_step: int | None = None
    observed: Mapping[str, Any] | None = None
    closest: list[Closest] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    run: list[tuple[Action | None, Mapping[str, object]]] = field(default_factory=list)  # a model run that agrees
    candidates: list[int] = field(default_factory=list)  # states meeting each observation
    truncated: bool = False  # a step reached more than the limit: the candidates were cut (not a pass)
    last: list[Any] = field(default_factory=list)  # the model states that meet the last observation met

    @property
    def valid(self) -> bool:
        return self.failed_step is None and not self.violations and not self.truncated


def validate(ts: TransitionSystem[Any], observations: Sequence[Mapping[str, Any]], *,
             internal: int = DEFAULT_INTERNAL, limit: int = DEFAULT_LIMIT, stutter: bool = False,
             view: Callable[[Any], Mapping[str, object]] | None = None) -> Validation:
    """Validate ``observations`` (one after each step of the run, the first one before any) against ``ts``."""
    look = ts.view if view is None else view
    if not observations:
        raise ValueError("an observed trace needs at least one observation")
    if internal < 0:
        raise ValueError("internal must be at least 0")
    props = list(ts.properties())
    invariants = [p for p in props if isinstance(p, Invariant)]
    step_props = [p for p in props if isinstance(p, StepProperty)]
    result = Validation(len(observations))
    # Per step, the transition that first reached each state from the states that met the observation before
    # (states are hashable: their own keys); walking them back gives a run that agrees with every observation.
    trees: list[tuple[dict[Any, tuple[Any, Action]], set[Any]]] = []

    def meets(s: Any, obs: Mapping[str, Any]) -> bool:
        return not differences(obs, look(s))

    current = list(dict.fromkeys(ts.initial_states()))
    first = 0
    if not stutter:
        met = [s for s in current if meets(s, observations[0])]
        if not met:
            return _failed(result, look, 0, observations[0], current)
        _check_invariants(result, invariants, met, 0)
        result.candidates.append(len(met))
        result.met = first = 1
    else:
        # A real system is first seen after it started: the first observation too may follow a few transitions
        # (an election) from an initial state.
        met = current
    for index in range(first, len(observations)):
        obs = observations[index]
        reached: dict[Any, None] = {}
        holds_into: dict[Any, set[str]] = {}  # the step properties some transition into the state satisfies
        tree: dict[Any, tuple[Any, Action]] = {}
        roots = set(met)
        if stutter:
            # Zero transitions: a stuttering step satisfies every step property (it changes nothing).
            for s in met:
                reached[s] = None
                holds_into[s] = {p.id for p in step_props}
        frontier = met
        for _depth in range(internal + 1 if index else internal):
            nxt: list[Any] = []
            for s in frontier:
                for action, t in ts.successors(s):
                    ok = {p.id for p in step_props if p.holds(s, action, t)}
                    if t not in reached:
                        reached[t] = None
                        holds_into[t] = ok
                        tree[t] = (s, action)
                        nxt.append(t)
                    else:
                        holds_into[t] |= ok
                if len(reached) > limit:
                    result.truncated = True
                    break
            frontier = nxt
            if result.truncated or not frontier:
                break
        met = [t for t in reached if meets(t, obs)]
        trees.append((tree, roots))
        if not met:
            return _failed(result, look, index, obs, list(reached))
        _check_invariants(result, invariants, met, index)
        for p in step_props:
            if all(p.id not in holds_into[t] for t in met):
                result.violations.append(Violation(p.id, p.description, index))
        result.candidates.append(len(met))
        result.met = index + 1
        if result.truncated:
            break
    result.last = list(met)
    state: Any = met[0]
    run: list[tuple[Action | None, Mapping[str, object]]] = []
    for tree, roots in reversed(trees):
        # back through this step's transitions to a state that met the observation before (the tree's roots)
        while not (stutter and state in roots):
            up, action = tree[state]
            run.append((action, look(state)))
            state = up
            if state in roots:
                break
    run.append((None, look(state)))
    result.run = run[::-1]
    return result


def _check_invariants(result: Validation, invariants: Iterable[Invariant[Any]], met: Sequence[Any],
                      index: int) -> None:
    for p in invariants:
        if all(not p.holds(s) for s in met):
            result.violations.append(Violation(p.id, p.description, index))


def _failed(result: Validation, look: Callable[[Any], Mapping[str, object]], index: int, obs: Mapping[str, Any],
            reached: Sequence[Any]) -> Validation:
    result.failed_step = index
    result.observed = obs
    scored = sorted(((differences(obs, look(s)), i) for i, s in enumerate(reached)),
                    key=lambda d: (len(d[0]), d[1]))
    result.closest = [Closest(look(reached[i]), tuple(d)) for d, i in scored[:CLOSEST]]
    return result
