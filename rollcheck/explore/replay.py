"""Replay an ITF trace that rollcheck wrote on the exact system it came from.

Every ITF file rollcheck writes says in its ``#meta`` the protocol, the config (a name, or the file it was
read from), the profile and the broken variant, if any, and the config's ``repr``. :func:`replay_itf`
rebuilds that system, follows the trace step by step (the first recorded state must be an initial state of
the system, each later one the successor of the previous one by the recorded action) and evaluates every
property along it: invariants at each state, step properties at each transition, graph (liveness)
properties at the last state by exploring what is reachable from it. The result says where the trace
stops replaying, or which properties fail and where, and which could not be checked (``unchecked``: then
"every property holds" is not said).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.core.configs import resolve_config
from rollcheck.core.errors import UserError
from rollcheck.core.registry import build_system, check_profile, get_protocol
from rollcheck.core.traces import Trace, read_itf, trace_from_itf
from rollcheck.core.transition import (
    GraphProperty,
    Invariant,
    StepProperty,
    TransitionSystem,
    replace_config,
    witnesses_of,
)
from rollcheck.explore.explorer import ExploreOptions, explore

# Replaying a graph property explores what is reachable from the trace's last state; beyond this many
# states the property is reported as not checked rather than holding.
GRAPH_REPLAY_LIMIT = 2_000_000


@dataclass
class Failure:
    property_id: str
    kind: str
    step: int  # the state's index (invariants, graph properties) or the transition's target index (steps)
    description: str

    def to_json(self) -> dict[str, Any]:
        return {"property": self.property_id, "kind": self.kind, "step": self.step, "description": self.description}


@dataclass
class ReplayResult:
    path: str
    protocol: str
    config: str
    profile: str
    variant: str | None
    steps: int  # transitions in the trace
    claimed: str | None  # the property the trace was written for
    failures: list[Failure] = field(default_factory=list)
    divergence: str | None = None  # why the trace does not replay on the rebuilt system
    notes: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)  # properties not checked along it (see ``notes``)
    witness: bool | None = None  # a witness's trace: does its last state satisfy the witness (None: not one)

    @property
    def reproduced(self) -> bool:
        """The property the trace was written for fails on it, at its last state or transition (a witness's
        trace: its last state satisfies the witness, the story it names happened)."""
        if self.witness is not None:
            return self.witness
        return any(f.property_id == self.claimed and f.step == self.steps for f in self.failures)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "protocol": self.protocol, "config": self.config, "profile": self.profile,
                "variant": self.variant, "steps": self.steps, "property": self.claimed,
                "replays": self.divergence is None, "divergence": self.divergence,
                "reproduced": self.reproduced, "witness": self.witness,
                "failures": [f.to_json() for f in self.failures],
                "unchecked": self.unchecked, "notes": self.notes}


def system_of(meta: dict[str, Any], path: Path, config_file: Path | None = None,
              on_reference: bool = False) -> tuple[str, TransitionSystem[Any]]:
    """The system a trace's ``#meta`` names: ``(config label, system)``. ``config_file`` replaces a config
    file that is not where the trace says (or was changed since); ``on_reference``: the reference instead
    of the trace's broken variant (does the bad step happen there too?)."""
    protocol = meta.get("protocol")
    if not isinstance(protocol, str) or not protocol:
        raise UserError(f"{path}: #meta names no protocol: not a trace rollcheck wrote, or written before "
                        "traces carried their system")
    entry = get_protocol(protocol)
    label = str(config_file) if config_file is not None else meta.get("config")
    if not isinstance(label, str) or not label:
        raise UserError(f"{path}: #meta names no config; pass --config NAME|FILE")
    if label not in entry.configs and not Path(label).exists():
        raise UserError(f"{path}: the trace was made with config file {label}, which is not there; pass "
                        "--config FILE")
    label, config = resolve_config(entry, label)
    profile = meta.get("profile")
    if profile is not None:
        config = replace_config(config, profile=check_profile(entry, profile, f"{path}: #meta"))
    variant = meta.get("variant")
    if on_reference or not isinstance(variant, str):
        variant = None
    ts = build_system(protocol, config, variant)
    want = meta.get("config_repr")
    # A variant may change its config (a mutation flag): the check is only meaningful on the same system.
    if isinstance(want, str) and want != repr(ts.config) and (variant is not None or meta.get("variant") is None):
        raise UserError(f"{path}: config {label!r} is no longer the one the trace was made with (its fields "
                        "differ); pass --config FILE with the original config")
    return label, ts


def replay_itf(path: Path, config_file: Path | None = None, on_reference: bool = False) -> ReplayResult:
    try:
        doc = read_itf(path)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    meta = doc.get("#meta") or {}
    if not isinstance(meta, dict):
        raise UserError(f"{path}: '#meta' is not a record")
    label, ts = system_of(meta, path, config_file, on_reference)
    steps = len(doc["states"]) - 1
    result = ReplayResult(str(path), ts.name, label, ts.config.profile, getattr(ts, "variant_id", None), steps,
                          meta.get("property"))
    if meta.get("source") != "rollcheck" or any("encoded" not in (s.get("#meta") or {}) for s in doc["states"]):
        result.divergence = ("the trace carries no reference state encodings: it is a spec trace (TLC's or "
                             "Apalache's) that did not replay on the reference when it was written")
        return result
    try:
        trace = trace_from_itf(doc, ts)
    except ValueError as exc:  # a recorded state that no enabled action reaches, or a foreign encoding
        result.divergence = str(exc)
        return result
    except Exception as exc:
        result.divergence = f"a recorded state does not decode on this system ({type(exc).__name__}: {exc})"
        return result
    if trace.steps[0].state not in set(ts.initial_states()):
        # A run starts at an initial state: a trace that does not is no run of this system, whatever fails on it.
        result.divergence = (f"the trace does not start at an initial state: state 0 is not an initial state of "
                             f"{ts.name}/{label}/{ts.config.profile}")
        return result
    result.failures = check_trace(ts, trace, result.notes, unchecked=result.unchecked)
    for w in witnesses_of(ts):
        if w.id == result.claimed:
            result.witness = w.holds(trace.steps[-1].state)
    return result


def check_trace(ts: TransitionSystem[Any], trace: Trace, notes: list[str],
                only: Collection[str] | None = None, unchecked: list[str] | None = None) -> list[Failure]:
    """The properties that fail along ``trace`` on ``ts``, each at its first failing step: invariants at
    each state, step properties at each transition, graph properties at the last state. ``only``: just
    these property ids (``rollcheck.explore.regression`` checks the one a counterexample was written for). What
    could not be checked is appended to ``notes`` (and its id to ``unchecked``)."""
    failures: list[Failure] = []
    failed: set[str] = set()
    props = [p for p in ts.properties() if only is None or p.id in only]
    for i, step in enumerate(trace.steps):
        for p in props:
            if p.id in failed:
                continue
            bad = False
            if isinstance(p, Invariant):
                bad = not p.holds(step.state)
            elif isinstance(p, StepProperty) and i > 0 and step.action is not None:
                bad = not p.holds(trace.steps[i - 1].state, step.action, step.state)
            if bad:
                failed.add(p.id)
                failures.append(Failure(p.id, p.kind, i, p.description))
    last = trace.steps[-1].state
    for p in props:
        if isinstance(p, GraphProperty) and p.id not in failed:
            verdict = _graph_at(ts, last, p)
            if verdict is None:
                notes.append(f"{p.id}: not checked at the last state (more than {GRAPH_REPLAY_LIMIT:,} states "
                             "reachable from it)")
                if unchecked is not None:
                    unchecked.append(p.id)
            elif not verdict:
                failures.append(Failure(p.id, p.kind, len(trace.steps) - 1, p.description))
    return failures


class _From:
    """``ts`` started from one state: the explorer then checks a graph property at that state only."""

    def __init__(self, ts: TransitionSystem[Any], state: Any, prop: GraphProperty[Any]) -> None:
        self._ts, self._state = ts, state
        self._prop = GraphProperty(prop.id, prop.description, prop.source, prop.goal,
                                   start=lambda s: s == state and (prop.start is None or prop.start(s)),
                                   allowed=prop.allowed)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ts, name)

    def initial_states(self) -> list[Any]:
        return [self._state]

    def properties(self) -> list[GraphProperty[Any]]:
        return [self._prop]


def _graph_at(ts: TransitionSystem[Any], state: Any, prop: GraphProperty[Any]) -> bool | None:
    """Whether ``prop`` holds at ``state`` (None: too many states to tell)."""
    if prop.start is not None and not prop.start(state):
        return True
    res = explore(_From(ts, state, prop), ExploreOptions(stop_at_first=False, max_states=GRAPH_REPLAY_LIMIT,
                                                         graph_limit=GRAPH_REPLAY_LIMIT))
    outcome = next(o for o in res.properties if o.id == prop.id)
    if outcome.status == "violated":
        return False
    return True if outcome.status == "holds" else None
