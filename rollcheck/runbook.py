"""Operator runbooks as checked scenarios (docs/runbooks.md).

A runbook is a documented operator procedure (roll every node onto the new software, then raise
``metadata.version``; the ZooKeeper-to-KRaft migration's phases; the Streams double bounce) written as a
list of steps. A step is either one of the protocol's *operator actions* (the actions only an operator
takes, which the protocol declares in ``ProtocolEntry.operator_actions``) with the parameters the step
fixes, or a *wait* for a condition the protocol declares (``ProtocolEntry.runbook_conditions``).

:class:`RunbookSystem` is the product of the protocol's transition system with the runbook: a state is the
number of steps done and the protocol's state. Every non-operator action (elections, replication, crashes,
ZooKeeper outages, as the config switches them on) may happen at any point; an operator action happens only
as the runbook's next step. It is one more transition system, so the ordinary explorer checks it: the
protocol's invariants and step properties at every state and edge, and the runbook's goal as a graph
property (from every reachable state, finishing the remaining steps can still reach the goal).

:func:`deviations` lists every single-step deviation (a step skipped, two adjacent steps swapped, a step
repeated); :func:`check` classifies a run as ``passes`` / ``safe``, ``breaks`` (a property, with the
shortest trace) or ``stalls`` (the goal can become unreachable).
"""

from __future__ import annotations

import dataclasses
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.core.configs import override
from rollcheck.core.errors import UserError
from rollcheck.core.registry import get_protocol, variant_ids_for
from rollcheck.core.traces import Step, Trace
from rollcheck.core.transition import (
    Action,
    AnyProperty,
    GraphProperty,
    Invariant,
    ProtocolEntry,
    StepProperty,
    TransitionSystem,
    load_reference,
    properties_by_kind,
)
from rollcheck.explore.explorer import ExploreOptions, explore
from rollcheck.runtime.userinput import read_text_input

WAIT = "OperatorWaits"  # the label of a wait step taken (the protocol's state does not change)
NOOP = "OperatorNoop"  # a repeated command the cluster does not offer at that point: nothing happens
INCOMPLETE = "incomplete"  # the verdict of an exploration cut short (--max-states): nothing shown either way


@dataclass(frozen=True)
class RunbookCondition:
    """A named state predicate a protocol offers to runbooks (a goal, or a wait step's condition).

    ``build(config, **params)`` returns the predicate over the protocol's states; it raises ``ValueError``
    or ``TypeError`` for parameters it does not accept."""

    description: str
    build: Callable[..., Callable[[Any], bool]] = field(repr=False)


@dataclass(frozen=True)
class ConditionRef:
    name: str
    params: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.params)
        return f"{self.name}({inner})"


@dataclass(frozen=True)
class RunbookStep:
    """One operator step: an operator action whose parameters include ``params``, or a wait."""

    id: str
    says: str
    action: str | None = None
    params: tuple[tuple[str, Any], ...] = ()
    unset: tuple[str, ...] = ()  # parameters that must be None (TOML has no null): "upgrade.from removed"
    wait: ConditionRef | None = None
    noop_if_disabled: bool = False  # a repeated command: where it cannot change anything, nothing happens

    def matches(self, a: Action) -> bool:
        if a.name != self.action:
            return False
        for key, value in self.params:
            if _plain(a.get(key, _MISSING)) != value:
                return False
        return all(a.get(key, _MISSING) is None for key in self.unset)

    def __str__(self) -> str:
        if self.wait is not None:
            return f"wait {self.wait}"
        inner = ", ".join([f"{k}={v!r}" for k, v in self.params] + [f"{k}=None" for k in self.unset])
        return f"{self.action}({inner})"


_MISSING = object()


def _plain(v: Any) -> Any:
    """An action parameter as TOML can write it: tuples and lists alike, enums by name."""
    if isinstance(v, (tuple, list)):
        return tuple(_plain(x) for x in v)
    name = getattr(v, "name", None)
    if isinstance(name, str) and not isinstance(v, (str, int)):
        return name
    return v


@dataclass(frozen=True)
class Runbook:
    id: str
    title: str
    protocol: str
    source: str
    path: str
    config_label: str
    config: Any  # the protocol's config (its profile is replaced by each of ``profiles``)
    profiles: tuple[str, ...]
    goal: ConditionRef
    steps: tuple[RunbookStep, ...]
    notes: str = ""
    # The as-written verdict a profile is known to give when it is not "passes" (where Kafka and the KIP
    # differ, say): profile -> (verdict, why). The runbook passes when every profile gives what it expects.
    expect: tuple[tuple[str, tuple[str, str]], ...] = ()

    def expected(self, profile: str) -> tuple[str, str]:
        return dict(self.expect).get(profile, ("passes", ""))


# --------------------------------------------------------------------------- loading


def protocol_conditions(entry: ProtocolEntry) -> Mapping[str, RunbookCondition]:
    ref = entry.runbook_conditions
    if ref is None:
        return {}
    conditions, _ = load_reference(ref, f"{entry.name}: runbook_conditions")
    return conditions  # type: ignore[no-any-return]


def load_runbook(path: Path) -> Runbook:
    """Read and check a runbook file; every mistake is one :class:`UserError` naming the file and key."""
    text = read_text_input(path, "runbook")
    origin = str(path)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"malformed runbook {origin}: {exc}") from None
    known = {"id", "title", "protocol", "source", "profiles", "config", "goal", "step", "notes", "expect"}
    extra = sorted(set(raw) - known)
    if extra:
        raise UserError(f"{origin}: unknown keys {extra}; a runbook has {', '.join(sorted(known))}")
    for key in ("id", "title", "protocol", "source"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise UserError(f"{origin}: '{key}' must be a non-empty string")
    try:
        entry = get_protocol(raw["protocol"])
    except UserError as exc:
        raise UserError(f"{origin}: {exc}") from None
    profiles = raw.get("profiles", list(entry.profiles))
    if (not isinstance(profiles, list) or not profiles
            or any(p not in entry.profiles for p in profiles) or len(set(profiles)) != len(profiles)):
        raise UserError(f"{origin}: 'profiles' must be a list of distinct profiles of {entry.name} from "
                        f"{', '.join(entry.profiles)}")
    label, config = _config(entry, raw.get("config", {}), origin)
    conditions = protocol_conditions(entry)
    goal = _condition_ref(raw.get("goal"), conditions, f"{origin}: goal", entry)
    steps_raw = raw.get("step")
    if not isinstance(steps_raw, list) or not steps_raw:
        raise UserError(f"{origin}: a runbook needs at least one [[step]]")
    operator = set(entry.operator_actions)
    steps: list[RunbookStep] = []
    for i, st in enumerate(steps_raw, 1):
        steps.append(_step(st, f"{origin}: step {i}", operator, conditions, entry))
    ids = [s.id for s in steps]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise UserError(f"{origin}: step ids must be unique; repeated: {', '.join(dup)}")
    notes = raw.get("notes", "")
    if not isinstance(notes, str):
        raise UserError(f"{origin}: 'notes' must be a string")
    expect = _expect(raw.get("expect", {}), profiles, origin)
    book = Runbook(raw["id"], raw["title"], entry.name, raw["source"], origin, label, config,
                   tuple(profiles), goal, tuple(steps), notes, expect)
    for profile in book.profiles:  # every condition and config must build under every profile, now
        try:
            build_runbook_system(book, profile)
        except (ValueError, TypeError) as exc:
            raise UserError(f"{origin}: under profile {profile}: {exc}") from None
    _check_step_params(book, origin)
    return book


VERDICTS = ("passes", "breaks", "stalls")


def _expect(raw: Any, profiles: list[str], origin: str) -> tuple[tuple[str, tuple[str, str]], ...]:
    where = f"{origin}: [expect]"
    if not isinstance(raw, dict):
        raise UserError(f"{where} must be a table: profile = {{ verdict = ..., why = ... }}")
    out = []
    for profile, spec in raw.items():
        if profile not in profiles:
            raise UserError(f"{where}: {profile!r} is not one of the runbook's profiles ({', '.join(profiles)})")
        if (not isinstance(spec, dict) or set(spec) != {"verdict", "why"} or spec["verdict"] not in VERDICTS
                or not isinstance(spec["why"], str) or not spec["why"].strip()):
            raise UserError(f"{where}.{profile} must be {{ verdict = one of {', '.join(VERDICTS)}, why = "
                            "a non-empty reason }")
        out.append((profile, (spec["verdict"], spec["why"])))
    return tuple(out)


def _config(entry: ProtocolEntry, table: Any, origin: str) -> tuple[str, Any]:
    if not isinstance(table, dict):
        raise UserError(f"{origin}: [config] must be a table (base = a named config, then fields)")
    table = dict(table)
    base = table.pop("base", "default")
    if base not in entry.configs:
        raise UserError(f"{origin}: unknown base config {base!r}; use one of {', '.join(entry.configs)}")
    if "profile" in table:
        raise UserError(f"{origin}: [config] sets no profile; list them in 'profiles'")
    config = override(entry.configs[base], table, f"{origin}: [config]", entry)
    label = base if not table else f"{base}+{len(table)} field(s)"
    mutations = sorted(getattr(config, "mutations", ()) or ())
    if mutations:
        # A mutation switches on a broken variant's bug: the label carries it into every output (the
        # console's tables, the JSON, report.md, each trace's #meta), so no verdict reads as the reference's.
        variants = variant_ids_for(entry, mutations)
        label += f" (broken: mutations {', '.join(mutations)}" + (
            f", variant {', '.join(variants)})" if variants else ")")
    return label, config


def _params(raw: Any, where: str) -> tuple[tuple[str, Any], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise UserError(f"{where}: 'params' must be a table")
    return tuple((str(k), _plain(v)) for k, v in raw.items())


def _condition_ref(raw: Any, conditions: Mapping[str, RunbookCondition], where: str,
                   entry: ProtocolEntry) -> ConditionRef:
    if not isinstance(raw, dict) or not isinstance(raw.get("condition"), str):
        raise UserError(f"{where}: must be a table with 'condition' (one of the protocol's conditions)")
    name = raw["condition"]
    if name not in conditions:
        known = ", ".join(sorted(conditions)) or "(none: the protocol declares no runbook conditions)"
        raise UserError(f"{where}: protocol '{entry.name}' has no condition {name!r}; known: {known}")
    params = {k: v for k, v in raw.items() if k != "condition"}
    return ConditionRef(name, _params(params, where))


def _step(raw: Any, where: str, operator: set[str], conditions: Mapping[str, RunbookCondition],
          entry: ProtocolEntry) -> RunbookStep:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: must be a table")
    extra = sorted(set(raw) - {"id", "says", "action", "params", "unset", "wait"})
    if extra:
        raise UserError(f"{where}: unknown keys {extra}; a step has id, says, and action (+ params, unset) or wait")
    sid, says = raw.get("id"), raw.get("says")
    if not isinstance(sid, str) or not sid or not isinstance(says, str) or not says:
        raise UserError(f"{where}: 'id' and 'says' must be non-empty strings")
    where = f"{where} ({sid})"
    if ("action" in raw) == ("wait" in raw):
        raise UserError(f"{where}: give exactly one of 'action' (an operator action) or 'wait' (a condition)")
    if "wait" in raw:
        if "params" in raw or "unset" in raw:
            raise UserError(f"{where}: a wait step puts its parameters in the wait table, not in 'params'")
        return RunbookStep(sid, says, wait=_condition_ref(raw["wait"], conditions, f"{where}: wait", entry))
    action = raw["action"]
    if not isinstance(action, str) or action not in operator:
        known = ", ".join(entry.operator_actions) or "(none declared)"
        raise UserError(f"{where}: {action!r} is not an operator action of '{entry.name}' (the cluster takes "
                        f"every other action by itself); operator actions: {known}")
    unset = raw.get("unset", [])
    if not isinstance(unset, list) or not all(isinstance(k, str) and k for k in unset):
        raise UserError(f"{where}: 'unset' must be a list of parameter names (those the action must leave None)")
    params = _params(raw.get("params"), where)
    both = sorted(set(unset) & {k for k, _ in params})
    if both:
        raise UserError(f"{where}: {', '.join(both)} both in 'params' and in 'unset'")
    return RunbookStep(sid, says, action=action, params=params, unset=tuple(unset))


# How many states of the protocol's own system are searched for examples of its operator actions (their
# parameter names and value types); every shipped runbook's actions turn up within a few thousand.
SHAPE_STATES = 5_000


def _action_examples(book: Runbook, profile: str, names: set[str]) -> dict[str, dict[str, list[Any]]]:
    """Per operator action in ``names``: each parameter and the values seen for it, from a breadth-first
    search of the protocol's system (no runbook: every operator action is free there) that stops once every
    one of ``names`` was seen, or after :data:`SHAPE_STATES` states."""
    entry = get_protocol(book.protocol)
    inner = entry.build(dataclasses.replace(book.config, profile=profile))
    seen: dict[str, dict[str, list[Any]]] = {}
    queue = list(inner.initial_states())
    visited = set(queue)
    head = 0
    while head < len(queue) and head < SHAPE_STATES and not names <= set(seen):
        s = queue[head]
        head += 1
        for a, t in inner.successors(s):
            if a.name in names:
                params = seen.setdefault(a.name, {})
                for key, value in a.params:
                    values = params.setdefault(key, [])
                    plain = _plain(value)
                    if len(values) < 32 and plain not in values:
                        values.append(plain)
            if t not in visited:
                visited.add(t)
                queue.append(t)
    return seen


def _fits(value: Any, examples: Sequence[Any]) -> bool:
    """Is ``value`` of a type the examples have (None, which TOML cannot write, tells nothing; a list's
    items are compared with the examples' items)?"""
    known = [e for e in examples if e is not None]
    if not known:
        return True
    if isinstance(value, tuple):
        tuples = [e for e in known if isinstance(e, tuple)]
        if not tuples:
            return False
        if len({len(e) for e in tuples} | {len(value)}) == 1:  # a record of fixed arity: item by item
            return all(_fits(x, [e[i] for e in tuples]) for i, x in enumerate(value))
        items = [x for e in tuples for x in e]
        return not items or all(_fits(x, items) for x in value)
    return any(type(value) is type(e) for e in known)


_KINDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string", tuple: "a list of that shape"}


def _check_step_params(book: Runbook, origin: str) -> None:
    """A step's parameter the action does not have, or of another type than the action's, would match no
    action: the runbook would stall at that step for a typo. Each is one error naming the file, the step
    and the parameter, now. The parameters are learnt from the actions the protocol emits; an action not
    seen in the search (:data:`SHAPE_STATES`) is not checked."""
    names = {s.action for s in book.steps if s.action is not None}
    if not names:
        return
    examples: dict[str, dict[str, list[Any]]] = {}
    for profile in book.profiles:
        examples.update(_action_examples(book, profile, names - set(examples)))
        if names <= set(examples):
            break
    for i, step in enumerate(book.steps, 1):
        if step.action not in examples:
            continue  # not seen in the search: the exploration tells
        params = examples[step.action]
        where = f"{origin}: step {i} ({step.id})"
        known = ", ".join(params) or "(none)"
        for key in [k for k, _ in step.params] + list(step.unset):
            if key not in params:
                raise UserError(f"{where}: {step.action} has no parameter {key!r}; its parameters: {known}")
        for key, value in step.params:
            if not _fits(value, params[key]):
                example = next(e for e in params[key] if e is not None)
                kind = _KINDS.get(type(example), type(example).__name__)
                raise UserError(f"{where}: parameter {key!r} of {step.action} must be {kind} (as in "
                                f"{key} = {_toml(example)}), not {_toml(value)}")


def _toml(value: Any) -> str:
    """A parameter's value as the runbook file writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


# --------------------------------------------------------------------------- the product system


@dataclass(frozen=True)
class RunbookState:
    done: int  # runbook steps done
    state: Any  # the protocol's state


class RunbookSystem:
    """The protocol's system restricted to the runbook's operator steps (see the module docstring)."""

    def __init__(self, inner: TransitionSystem[Any], runbook_id: str, steps: Sequence[RunbookStep],
                 waits: Sequence[Callable[[Any], bool] | None], goal: Callable[[Any], bool], goal_text: str,
                 operator_actions: Iterable[str]) -> None:
        self.inner = inner
        self.name = inner.name
        self.config = inner.config
        self.runbook_id = runbook_id
        self.steps = tuple(steps)
        self.waits = tuple(waits)
        self.goal = goal
        self.goal_text = goal_text
        self.operator = frozenset(operator_actions)
        self._props = self._lift(inner)

    def initial_states(self) -> Iterable[RunbookState]:
        return [RunbookState(0, s) for s in self.inner.initial_states()]

    def successors(self, rs: RunbookState) -> Iterable[tuple[Action, RunbookState]]:
        i, s = rs.done, rs.state
        step = self.steps[i] if i < len(self.steps) else None
        effective = False
        for a, t in self.inner.successors(s):
            if a.name not in self.operator:
                yield a, RunbookState(i, t)
            elif step is not None and step.action is not None and step.matches(a):
                # A command the cluster refuses (the state stays as it was) is not the step done: the
                # operator sees the error and tries again later, as the documented procedures say to.
                if t != s:
                    effective = True
                    yield a, RunbookState(i + 1, t)
        if step is None:
            return
        wait = self.waits[i]
        if wait is not None and wait(s):
            yield Action.of(WAIT, step=step.id), RunbookState(i + 1, s)
        elif step.noop_if_disabled and not effective:
            # A repeated command with nothing left to do (the node is already on that software, the level is
            # already finalized: the tools send nothing, or the cluster answers "no change") is a no-op.
            yield Action.of(NOOP, step=step.id), RunbookState(i + 1, s)

    def _lift(self, inner: TransitionSystem[Any]) -> list[AnyProperty]:
        inv, step_props, _ = properties_by_kind(inner)  # the protocol's own liveness assumes a free operator
        lifted: list[AnyProperty] = [Invariant(p.id, p.description, p.source, _on_state(p.predicate)) for p in inv]
        lifted += [StepProperty(p.id, p.description, p.source, _on_edge(p.predicate)) for p in step_props]
        n = len(self.steps)
        goal = self.goal
        # One property per step (once the steps before it are done, the operator can still take it) so a
        # stall's shortest trace leads to where the runbook is stuck, and the goal once every step is taken.
        for k, st in enumerate(self.steps):
            lifted.append(GraphProperty(
                step_property_id(self.runbook_id, st.id), f"once the steps before it are done, the operator can "
                f"still take step '{st.id}' ({st.says})", "the runbook",
                _done_at_least(k + 1), start=_done_exactly(k)))
        lifted.append(GraphProperty(
            goal_property_id(self.runbook_id), f"once every step is taken, the cluster can reach the goal: "
            f"{self.goal_text}", "the runbook", lambda rs: goal(rs.state), start=_done_exactly(n)))
        return lifted

    def properties(self) -> Sequence[AnyProperty]:
        return self._props

    def encode(self, rs: RunbookState) -> bytes:
        return rs.done.to_bytes(2, "big") + self.inner.encode(rs.state)

    def decode(self, b: bytes) -> RunbookState:
        return RunbookState(int.from_bytes(b[:2], "big"), self.inner.decode(b[2:]))

    def view(self, rs: RunbookState) -> Mapping[str, object]:
        return {"runbook_done": rs.done, **self.inner.view(rs.state)}


def step_property_id(runbook_id: str, step_id: str) -> str:
    return f"{runbook_id}:{step_id}"


def goal_property_id(runbook_id: str) -> str:
    return f"{runbook_id}:goal"


def _done_exactly(k: int) -> Callable[[RunbookState], bool]:
    return lambda rs: rs.done == k


def _done_at_least(k: int) -> Callable[[RunbookState], bool]:
    return lambda rs: rs.done >= k


def _on_state(pred: Callable[[Any], bool]) -> Callable[[RunbookState], bool]:
    return lambda rs: pred(rs.state)


def _on_edge(pred: Callable[[Any, Action, Any], bool]) -> Callable[[RunbookState, Action, RunbookState], bool]:
    # A wait or a no-op leaves the protocol's state as it was: no protocol action happened.
    return lambda a, act, b: act.name in (WAIT, NOOP) or pred(a.state, act, b.state)


def build_runbook_system(book: Runbook, profile: str,
                         steps: Sequence[RunbookStep] | None = None) -> RunbookSystem:
    entry = get_protocol(book.protocol)
    config = dataclasses.replace(book.config, profile=profile)
    inner = entry.build(config)
    conditions = protocol_conditions(entry)
    steps = book.steps if steps is None else steps

    def compile_ref(ref: ConditionRef) -> Callable[[Any], bool]:
        return conditions[ref.name].build(config, **dict(ref.params))

    waits = [compile_ref(s.wait) if s.wait is not None else None for s in steps]
    goal_text = conditions[book.goal.name].description
    return RunbookSystem(inner, book.id, steps, waits, compile_ref(book.goal), f"{book.goal} ({goal_text})",
                         entry.operator_actions)


# --------------------------------------------------------------------------- deviations


@dataclass(frozen=True)
class Deviation:
    id: str  # "as-written", "skip:ID", "swap:ID1/ID2", "repeat:ID"
    says: str
    steps: tuple[RunbookStep, ...]


def deviations(book: Runbook) -> list[Deviation]:
    """The runbook as written, then every single-step deviation: each step skipped, each pair of adjacent
    steps swapped, each step repeated (its copy a no-op where the cluster does not offer it)."""
    steps = list(book.steps)
    out = [Deviation("as-written", "the runbook as written", tuple(steps))]
    for k, s in enumerate(steps):
        out.append(Deviation(f"skip:{s.id}", f"skip '{s.says}'", tuple(steps[:k] + steps[k + 1:])))
    for k in range(len(steps) - 1):
        a, b = steps[k], steps[k + 1]
        if a.action == b.action and a.params == b.params and a.unset == b.unset and a.wait == b.wait:
            continue  # the same command twice: swapping changes nothing
        swapped = [*steps[:k], b, a, *steps[k + 2:]]
        out.append(Deviation(f"swap:{a.id}/{b.id}", f"'{b.says}' before '{a.says}'", tuple(swapped)))
    for k, s in enumerate(steps):
        again = dataclasses.replace(s, id=f"{s.id}#again", noop_if_disabled=True)
        out.append(Deviation(f"repeat:{s.id}", f"'{s.says}' twice", tuple([*steps[:k + 1], again, *steps[k + 1:]])))
    return out


# --------------------------------------------------------------------------- checking


@dataclass
class Outcome:
    """One deviation under one profile."""

    deviation: str
    profile: str
    verdict: str  # "passes" (as written) / "safe", "breaks", "stalls", or "incomplete" (not checked in full)
    property_id: str | None
    description: str
    length: int | None  # steps of the shortest trace (operator waits included)
    states: int
    elapsed: float
    trace: Trace | None = field(default=None, repr=False)  # the protocol-level trace (waits dropped)
    # (trace state index, step id, "action" / "wait" / "no-op"): an action step is the transition into that
    # state; a wait or no-op happened at that state (it changes nothing, so the protocol trace has no step)
    operator_steps: list[tuple[int, str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"deviation": self.deviation, "profile": self.profile, "verdict": self.verdict,
                "property": self.property_id, "description": self.description, "length": self.length,
                "states": self.states, "elapsed_seconds": round(self.elapsed, 3),
                "actions": [repr(a) for a in self.trace.actions] if self.trace else None,
                "operator_steps": [{"index": i, "step": s, "kind": k} for i, s, k in self.operator_steps]}


def check(book: Runbook, profile: str, deviation: Deviation, max_states: int | None = None) -> Outcome:
    """Explore the runbook (or one deviation of it) under one profile."""
    ts = build_runbook_system(book, profile, deviation.steps)
    t0 = time.perf_counter()
    result = explore(ts, ExploreOptions(config_name=book.config_label, max_states=max_states, stop_at_first=True,
                                        workers=1))
    elapsed = time.perf_counter() - t0
    stall_ids = {goal_property_id(book.id): "every step taken, the goal can no longer be reached"}
    for st in deviation.steps:
        stall_ids[step_property_id(book.id, st.id)] = f"step '{st.id}' can never be taken from the trace's last state"
    safe = "passes" if deviation.id == "as-written" else "safe"
    unchecked = [p.id for p in result.properties if p.kind == "graph" and p.status != "holds"]
    if not result.violations and (not result.complete or unchecked):
        # Nothing found, nothing shown: a cut search proves no invariant beyond the states it saw and checks
        # no stall at all (the goal's reachability needs the whole graph).
        bound = f" (--max-states {max_states:,})" if max_states else ""
        why = (f"stopped at {result.distinct_states:,} states{bound}" if not result.complete
               else "the graph of the states was not kept (too many states)")
        return Outcome(deviation.id, profile, INCOMPLETE, None,
                       f"{why}: no violation in the states explored; not checked: the rest of the state space "
                       f"and whether the steps and the goal stay reachable ({', '.join(unchecked)})", None,
                       result.distinct_states, elapsed)
    if not result.violations:
        return Outcome(deviation.id, profile, safe, None, "every property holds and the goal stays reachable",
                       None, result.distinct_states, elapsed)
    # A broken property first (the dangerous outcome), else the shortest stall.
    v = min(result.violations, key=lambda x: (x.property_id in stall_ids, x.depth))
    stalled = v.property_id in stall_ids
    trace, marks = protocol_trace(ts, v.trace, book)
    return Outcome(deviation.id, profile, "stalls" if stalled else "breaks", v.property_id,
                   stall_ids[v.property_id] if stalled else v.description, v.depth, result.distinct_states,
                   elapsed, trace, marks)


def protocol_trace(ts: RunbookSystem, trace: Trace, book: Runbook) -> tuple[Trace, list[tuple[int, str, str]]]:
    """The product trace as a trace of the protocol (waits and no-ops dropped: they change no state), so
    ``rollcheck replay`` replays it; and where each operator step happened in it."""
    steps: list[Step] = []
    marks: list[tuple[int, str, str]] = []
    prev_done = 0
    for st in trace.steps:
        rs: RunbookState = st.state
        if st.action is not None and st.action.name in (WAIT, NOOP):
            marks.append((len(steps) - 1, ts.steps[prev_done].id, "wait" if st.action.name == WAIT else "no-op"))
        else:
            if rs.done > prev_done:
                marks.append((len(steps), ts.steps[prev_done].id, "action"))
            steps.append(Step(st.action, rs.state))
        prev_done = rs.done
    meta = {"runbook": book.id, "runbook_file": book.path,
            "operator_steps": [{"index": i, "step": s, "kind": k} for i, s, k in marks]}
    out = Trace(steps, protocol=book.protocol, config=book.config_label, property_id=trace.property_id,
                description=trace.description, meta=meta)
    return out, marks
