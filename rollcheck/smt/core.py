"""A small Z3 engine over symbolic transition systems: BMC, k-induction, successor equivalence.

A :class:`SymbolicSystem` is a second, independent formalization of one reference transition system
(one protocol, one config, its mutations). Its state is a flat record of Z3 Ints and Bools named by
``fields()``; ``values(ref_state)`` / ``from_values(dict)`` map reference states to and from it, so a
Z3 model decodes into a real reference state that ``ts.successors`` can replay and ``write_itf`` can
write. Actions are keyed by the reference's action names, invariants by the property ids of
``properties/<protocol>.py``.

The reference stays the single source of truth: every counterexample is replayed on it
(:func:`replay`), and :func:`check_successors` compares both relations state by state.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import z3

from rollcheck.core.registry import find_protocol
from rollcheck.core.traces import Step, Trace
from rollcheck.core.transition import Invariant, StepProperty, TransitionSystem
from rollcheck.smt.compiled import CompiledSystem, NotCompiled, Successors, Vals
from rollcheck.smt.decisions import protocol_differential

V = dict[str, z3.ExprRef]  # one symbolic state: field name -> Z3 constant
Value = int | bool
Relation = Callable[[V, V], z3.BoolRef]
Predicate = Callable[[V], z3.BoolRef]
# A step property (an action invariant, ``StepProperty`` in properties/): holds on one transition v -> v2.
# It names the actions it constrains through ``sym.actions[name](v, v2)``.
StepRelation = Callable[[V, V], z3.BoolRef]


class SymbolicSystem:
    """Base class of the per-protocol encodings. Subclasses fill the hooks below."""

    name: str = ""

    def __init__(self, ts: TransitionSystem[Any]) -> None:
        self.ts = ts
        self.config = ts.config
        self.actions: dict[str, Relation] = {}
        self.invariants: dict[str, Predicate] = {}
        # Step properties (the StepProperty ids of properties/): checked on every transition of a path.
        self.step_properties: dict[str, StepRelation] = {}
        # Auxiliary invariants k-induction may add to the property it proves (proved together with it).
        self.strengthening: dict[str, Predicate] = {}
        self.excluded_actions: dict[str, str] = {}  # reference action name -> why it is not encoded

    # ---- hooks
    def fields(self) -> list[tuple[str, str]]:
        """(name, "int" | "bool") for every state variable."""
        raise NotImplementedError

    def init(self, v: V) -> z3.BoolRef:
        raise NotImplementedError

    def wellformed(self, v: V) -> z3.BoolRef:
        """Domain bounds and canonical forms (absent option fields are 0): makes states one-to-one with
        assignments, so enumerating successors terminates and decoding is total."""
        return z3.BoolVal(True)

    def values(self, s: Any) -> dict[str, Value]:
        raise NotImplementedError

    def from_values(self, vals: Mapping[str, Value]) -> Any:
        raise NotImplementedError

    # ---- generic
    def declare(self, tag: str) -> V:
        return {n: (z3.Int(f"{n}@{tag}") if sort == "int" else z3.Bool(f"{n}@{tag}")) for n, sort in self.fields()}

    def encode_state(self, s: Any, v: V) -> list[z3.BoolRef]:
        return [v[k] == (z3.BoolVal(x) if isinstance(x, bool) else z3.IntVal(x)) for k, x in self.values(s).items()]

    def decode_state(self, model: z3.ModelRef, v: V) -> Any:
        return self.from_values(_model_values(model, v))

    def trans(self, v: V, v2: V) -> z3.BoolRef:
        return z3.Or([rel(v, v2) for rel in self.actions.values()])

    def parameter_relations(self) -> list[tuple[str, dict[str, Any], Relation]]:
        """The sub-relations the encoding splits actions into, one per value of the action's parameters
        (step properties read the parameters through them): (action name, the reference action's
        parameters it stands for, relation). :func:`check_parameters` compares them with the reference."""
        return []

    def state_predicates(self) -> list[tuple[str, Predicate, Callable[[Any], bool]]]:
        """Terms over one state that the properties read (a group is stable, every bounce is done, ...), each
        with the reference's own function of the state: (name, the encoding's predicate, the reference's).
        The successor differential compares their values on every state it compares, so a reference whose
        property terms drift from the model's is a disagreement even where no property's verdict moves (a
        weakened term under a property that holds anyway)."""
        return []

    def decision_differential(self) -> list[dict[str, Any]]:
        """The encoding's decision rules (Z3 formulas of a single decision: an UpdateFeatures update, a
        metadata.version change, an assignment) against the reference on every input of a bounded domain,
        for this config's profile: one JSON-ready row a rule (``rule``, ``cases``, ``inputs``, ``seconds``,
        ``disagreement``: None or the first input where they differ). Unlike the successor differential,
        this reaches every input of the domain, whether or not a config's states ever ask it. The rules are
        the ones the protocol's entry registers (``ProtocolEntry.decisions``); none: no row."""
        entry = find_protocol(self.ts.name)
        return [] if entry is None else protocol_differential(entry, self.config.profile)

    def encoded(self) -> list[str]:
        """Every property id this encoding can check: invariants, then step properties."""
        return [*self.invariants, *self.step_properties]


def _model_values(model: z3.ModelRef, v: V) -> dict[str, Value]:
    """The values of ``v`` in ``model``: one pass over the model's assignments (what the solver fixed), then
    model completion only for the variables it left free (evaluating each variable costs far more)."""
    assigned = {d.name(): model[d] for d in model.decls()}
    out: dict[str, Value] = {}
    for k, x in v.items():
        e = assigned.get(str(x))
        if e is None:
            e = model.eval(x, model_completion=True)
        out[k] = z3.is_true(e) if z3.is_bool(x) else e.as_long()
    return out


def frame(v: V, v2: V, changes: Mapping[str, Any]) -> z3.BoolRef:
    """Next state = current state with ``changes`` (field -> Z3 expression or Python value)."""
    return z3.And([v2[k] == changes.get(k, v[k]) for k in v])


# --------------------------------------------------------------------------- results


@dataclass
class ProofResult:
    protocol: str
    property_id: str
    method: str  # "bmc" or "k-induction"
    status: str  # "refuted", "checked", "proved", "unknown", "diverged" (the reference does not replay it)
    depth: int  # BMC: depth checked (or length of the counterexample); k-induction: k
    seconds: float
    trace: Trace | None = None
    strengthening: tuple[str, ...] = ()
    message: str = ""

    @property
    def line(self) -> str:
        if self.status == "proved":
            extra = f" (with {', '.join(self.strengthening)})" if self.strengthening else ""
            return f"proved by {self.depth}-induction{extra}"
        if self.status == "refuted":
            return f"refuted at depth {self.depth}"
        if self.status == "checked":
            return f"checked to depth {self.depth}"
        if self.status == "diverged":
            return f"the Z3 counterexample does not replay on the reference: {self.message.splitlines()[0]}"
        return f"unknown at k={self.depth}" + (f" ({self.message})" if self.message else "")

    def to_json(self) -> dict[str, Any]:
        return {"property": self.property_id, "method": self.method, "status": self.status,
                "depth": self.depth, "seconds": round(self.seconds, 3),
                "strengthening": list(self.strengthening), "message": self.message,
                "actions": [repr(a) for a in self.trace.actions] if self.trace else None}


class ReplayError(AssertionError):
    """A Z3 trace the reference implementation cannot replay: the two formalizations disagree."""


def replay(ts: TransitionSystem[Any], states: Sequence[Any], labels: Sequence[str],
           violates: str | None = None) -> list[Step]:
    """Match each decoded step with an enabled reference action of the same name and the same successor.

    With ``violates`` (a property id of the reference), the reference must agree that the trace violates
    it: an invariant in the last state, a step property on the last step (there any reference action that
    reaches the last state and violates it is taken: two actions may make the same transition, and the
    violation belongs to one of them). Else the two formalizations disagree."""
    initial = list(ts.initial_states())
    if states[0] not in initial:
        raise ReplayError(f"Z3 initial state is not a reference initial state: {states[0]!r}")
    prop = {p.id: p for p in ts.properties()}.get(violates) if violates else None
    if violates and (prop is None or prop.kind not in ("invariant", "step")):
        raise ReplayError(f"{violates}: not an invariant or step property of the reference {ts.name}")
    steps = [Step(None, states[0])]
    for i in range(1, len(states)):
        reaching = [a for a, t in ts.successors(states[i - 1]) if t == states[i]]
        matches = [a for a in reaching if a.name == labels[i - 1]]
        if not matches:
            raise ReplayError(f"step {i} ({labels[i - 1]}) of the Z3 trace is not a reference step from "
                              f"{states[i - 1]!r} to {states[i]!r}")
        found = matches[0]
        if isinstance(prop, StepProperty) and i == len(states) - 1:
            bad = [a for a in reaching if not prop.holds(states[i - 1], a, states[i])]
            if not bad:
                raise ReplayError(f"{violates}: Z3 says step {i} ({labels[i - 1]}) violates it, the reference "
                                  f"says it holds: {states[i - 1]!r} -> {states[i]!r}")
            found = bad[0]
        steps.append(Step(found, states[i]))
    if isinstance(prop, Invariant) and prop.holds(states[-1]):
        raise ReplayError(f"{violates}: Z3 says the last state violates it, the reference says it holds: "
                          f"{states[-1]!r}")
    return steps


def _solver(timeout: float | None) -> z3.Solver:
    s = z3.Solver()
    if timeout:
        s.set("timeout", max(1, int(timeout * 1000)))
    return s


def _label(sym: SymbolicSystem, model: z3.ModelRef, v: V, v2: V) -> str:
    for name, rel in sym.actions.items():
        if z3.is_true(model.eval(rel(v, v2), model_completion=True)):
            return name
    raise ReplayError("no symbolic action holds on a model of the transition relation")


def is_step_property(sym: SymbolicSystem, prop_id: str) -> bool:
    if prop_id in sym.invariants:
        return False
    if prop_id in sym.step_properties:
        return True
    raise KeyError(f"{sym.name}: property {prop_id} is not encoded (encoded: {', '.join(sym.encoded())})")


def bmc(sym: SymbolicSystem, prop_id: str, depth: int, timeout: float | None = None, first: int = 0
        ) -> ProofResult:
    """Bounded model checking: the shortest violation of ``prop_id`` (an invariant: a state that violates
    it; a step property: a transition that violates it) within ``depth`` steps, replayed on the reference,
    or "checked to depth". ``first`` skips the checks of shorter paths (a violation is then the shortest
    only from ``first`` on): for a depth whose shorter paths another checker has already cleared."""
    step = is_step_property(sym, prop_id)
    t0 = time.perf_counter()
    solver = _solver(timeout)
    vs = [sym.declare("0")]
    solver.add(sym.init(vs[0]), sym.wellformed(vs[0]))
    for k in range(depth + 1):
        if k > 0:
            vs.append(sym.declare(str(k)))
            solver.add(sym.wellformed(vs[k]), sym.trans(vs[k - 1], vs[k]))
        if (step and k == 0) or k < first:
            continue  # no transition yet, or a depth left to another checker
        solver.push()
        bad = z3.Not(sym.step_properties[prop_id](vs[k - 1], vs[k])) if step else z3.Not(sym.invariants[prop_id](vs[k]))
        solver.add(bad)
        r = solver.check()
        if r == z3.sat:
            m = solver.model()
            states = [sym.decode_state(m, v) for v in vs]
            labels = [_label(sym, m, vs[i], vs[i + 1]) for i in range(k)]
            steps = replay(sym.ts, states, labels, violates=prop_id)
            trace = Trace(steps, protocol=sym.ts.name, property_id=prop_id, meta={"checker": "z3-bmc"})
            return ProofResult(sym.ts.name, prop_id, "bmc", "refuted", k, time.perf_counter() - t0, trace)
        solver.pop()
        if r == z3.unknown:
            return ProofResult(sym.ts.name, prop_id, "bmc", "checked", max(0, k - 1), time.perf_counter() - t0,
                               message=f"solver: {solver.reason_unknown()}")
    return ProofResult(sym.ts.name, prop_id, "bmc", "checked", depth, time.perf_counter() - t0)


def k_induction(sym: SymbolicSystem, prop_id: str, k: int, timeout: float | None = None,
                strengthen: Iterable[str] | None = None) -> ProofResult:
    """k-induction of ``prop_id`` conjoined with the strengthening invariants (all proved together: the
    base case checks the conjunction on every path of fewer than k steps from an initial state, the step
    case shows k consecutive conjunction states force the next one).

    A step property P is proved the same way over transitions: the strengthening invariants hold on
    states 0 .. k-1 and P on the transitions between them, and then the transition from state k-1 to
    state k satisfies P and state k the strengthening; the base case is BMC of P (and of the
    strengthening) to depth k-1."""
    step = is_step_property(sym, prop_id)
    names = tuple(sym.strengthening if strengthen is None else strengthen)
    aux = [sym.strengthening[n] for n in names]

    def p(v: V) -> z3.BoolRef:
        return z3.And([*([] if step else [sym.invariants[prop_id](v)]), *(a(v) for a in aux)])

    t0 = time.perf_counter()
    base = bmc_conjunction(sym, p, k - 1, timeout)
    res: ProofResult | None = None
    if base == "holds" and step and k > 1:
        res = bmc(sym, prop_id, k - 1, timeout)
        base = "violated" if res.status == "refuted" else ("holds" if res.depth >= k - 1 else "unknown")
    if base == "violated":
        # The property or a strengthening fails within k-1 steps; BMC on the property says which.
        if res is None:
            res = bmc(sym, prop_id, k - 1, timeout)
        if res.status == "refuted":
            return res
        return ProofResult(sym.ts.name, prop_id, "k-induction", "unknown", k, time.perf_counter() - t0,
                           strengthening=names, message="a strengthening invariant does not hold")
    if base == "unknown":
        return ProofResult(sym.ts.name, prop_id, "k-induction", "unknown", k, time.perf_counter() - t0,
                           strengthening=names, message="base case: solver timeout")
    solver = _solver(timeout)
    vs = [sym.declare(f"k{i}") for i in range(k + 1)]
    for i, v in enumerate(vs):
        solver.add(sym.wellformed(v))
        if i > 0:
            solver.add(sym.trans(vs[i - 1], v))
        if i < k:
            solver.add(p(v))
        if step and 0 < i < k:
            solver.add(sym.step_properties[prop_id](vs[i - 1], v))
    if step:
        # The strengthening is proved together with P: it must hold again in state k (else assuming it
        # on states 0 .. k-1 would be unsound).
        solver.add(z3.Not(z3.And(sym.step_properties[prop_id](vs[k - 1], vs[k]), p(vs[k]))))
    else:
        solver.add(z3.Not(p(vs[k])))
    r = solver.check()
    status = "proved" if r == z3.unsat else "unknown"
    msg = "" if r == z3.unsat else ("step case: counterexample to induction" if r == z3.sat
                                    else f"step case: {solver.reason_unknown()}")
    return ProofResult(sym.ts.name, prop_id, "k-induction", status, k, time.perf_counter() - t0,
                       strengthening=names, message=msg)


def bmc_conjunction(sym: SymbolicSystem, p: Predicate, depth: int, timeout: float | None) -> str:
    """"holds" / "violated" / "unknown" for ``p`` on every path of at most ``depth`` steps."""
    solver = _solver(timeout)
    vs = [sym.declare("b0")]
    solver.add(sym.init(vs[0]), sym.wellformed(vs[0]))
    for i in range(depth + 1):
        if i > 0:
            vs.append(sym.declare(f"b{i}"))
            solver.add(sym.wellformed(vs[i]), sym.trans(vs[i - 1], vs[i]))
        r = solver.check(z3.Not(p(vs[i])))
        if r == z3.sat:
            return "violated"
        if r == z3.unknown:
            return "unknown"
    return "holds"


# --------------------------------------------------------------------------- successor equivalence


@dataclass
class Mismatch:
    state: Any  # None: the initial states differ (``action`` is "Init")
    action: str
    reference: frozenset[Any]
    z3: frozenset[Any]
    message: str = ""

    def __str__(self) -> str:
        only_ref = self.reference - self.z3
        only_z3 = self.z3 - self.reference
        where = "" if self.state is None else f" for action {self.action} from {self.state!r}"
        return (f"{self.message or 'successors differ'}{where}:\n"
                f"  reference only: {sorted(map(repr, only_ref))}\n  z3 only: {sorted(map(repr, only_z3))}")


@dataclass
class SuccessorCheck:
    states: int = 0
    transitions: int = 0
    excluded: dict[str, str] = field(default_factory=dict)
    mismatch: Mismatch | None = None
    # Relations the solver compared on every state, as the compiled path does not take them (name -> why).
    solver_only: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.mismatch is None


def iter_bfs_states(ts: TransitionSystem[Any]) -> Iterator[Any]:
    """The reference's reachable states in breadth-first order, each as soon as it is found: a consumer that
    stops early (the differential at its first mismatch) never waits for a state space that has no end."""
    seen: dict[Any, None] = {}
    order: list[Any] = []
    for s in ts.initial_states():
        if s not in seen:
            seen[s] = None
            order.append(s)
            yield s
    i = 0
    while i < len(order):
        for _, t in ts.successors(order[i]):
            if t not in seen:
                seen[t] = None
                order.append(t)
                yield t
        i += 1


def bfs_states(ts: TransitionSystem[Any], limit: int) -> list[Any]:
    """The first ``limit`` states of a breadth-first search of the reference."""
    return list(itertools.islice(iter_bfs_states(ts), limit))


# variant_delta's search bound: this many of the variant's states searched per state asked for, and at least
# MIN_VISITED (the gate's ci tier asks for 2,000: a variant that steps as the reference does under a profile is
# searched through 40,000 states, not zk MIG-M4's 184,234 under kafka).
VISITED_PER_STATE = 20
MIN_VISITED = 10_000


@dataclass
class VariantDelta:
    """Where a broken variant's system may step otherwise than the reference's (:func:`variant_delta`)."""

    states: list[Any]  # breadth-first, at most the limit
    visited: int  # the variant's states the search went through
    complete: bool  # every such state of the variant's reachable set is in ``states``
    # state -> the action names whose steps differ there (a state only the variant may reach: absent, every one)
    actions: dict[Any, frozenset[str]] = field(default_factory=dict)


def variant_delta(ts: TransitionSystem[Any], base: TransitionSystem[Any], limit: int,
                  max_visited: int | None = None) -> VariantDelta:
    """The states of the variant's system ``ts`` at which it may take other steps than the reference ``base``
    on the same config: a state whose labelled successors differ from the reference's (there, the actions
    whose steps differ), and a state the search reaches only through such steps (the reference may never be
    there: every action). Every other step of ``ts`` is one the reference takes from a state it reaches, so a
    successor differential of the reference already compares it; comparing the variant's relation on the
    rest sees the reference's code the variant's steps lead into (a failure branch, a state the reference
    configs never reach) at a fraction of the cost of the variant's whole reachable set. A state is taken as
    the reference's only when its first discovery came through a shared step (a safe under-approximation:
    more to compare, never less). ``limit``: at most that many states (0: every one), found among at most
    ``max_visited`` of the variant's states (default: ``VISITED_PER_STATE`` per state asked for, at least
    ``MIN_VISITED``; none without a limit): a variant that steps as the reference does under a config (its bug
    lives in another profile's rules) is not searched to its end to find nothing."""
    if max_visited is None:
        max_visited = max(limit * VISITED_PER_STATE, MIN_VISITED) if limit else 0
    out = VariantDelta([], 0, True)
    for _ in iter_variant_delta(ts, base, out, max_visited):
        if limit and len(out.states) >= limit:
            out.complete = False
            break
    return out


def iter_variant_delta(ts: TransitionSystem[Any], base: TransitionSystem[Any], out: VariantDelta,
                       max_visited: int = 0) -> Iterator[Any]:
    """:func:`variant_delta`'s states, each as soon as the search classifies it (``out`` filled as it goes:
    ``out.actions`` names a state's differing actions before the state is yielded). A consumer that stops at
    its first disagreement never waits for a variant whose state space has no end (a bound the mutated
    reference lost). ``max_visited`` (0: no bound): the search stops, ``out.complete`` False, after searching
    from that many states."""
    initial = set(base.initial_states())
    shared: dict[Any, bool] = {}  # state -> reached through the reference's own steps
    for s in ts.initial_states():
        shared.setdefault(s, s in initial)
    order = list(shared)
    position = {s: k for k, s in enumerate(order)}
    i = 0
    while i < len(order):
        if max_visited and i >= max_visited:
            out.complete = False
            return
        s = order[i]
        i += 1
        out.visited = i
        steps = list(ts.successors(s))  # in the system's order: the same delta on every run
        reference = list(base.successors(s)) if shared[s] else None
        same = steps == reference  # the common case, told without hashing a state (states hash deep)
        theirs: set[Any] | None = None
        if not same:
            out.states.append(s)
            if reference is not None:
                theirs = set(reference)
                out.actions[s] = frozenset(a.name for a, _ in set(steps) ^ theirs)
            yield s
        for a, t in steps:
            ours = same or (theirs is not None and (a, t) in theirs)
            if t not in shared:
                shared[t] = ours
                position[t] = len(order)
                order.append(t)
            elif ours and not shared[t] and position[t] >= i:  # not searched from yet: the reference's after all
                shared[t] = True
    out.visited = len(order)


class _ActionSolver:
    """One incremental solver per action: the relation is built once, each state is pushed and popped."""

    def __init__(self, sym: SymbolicSystem, action: str, relation: Relation | None = None) -> None:
        self.sym = sym
        self.v, self.v2 = sym.declare("s"), sym.declare("t")
        self.solver = z3.Solver()
        rel = sym.actions[action] if relation is None else relation
        self.solver.add(sym.wellformed(self.v2), rel(self.v, self.v2))
        self.action = action

    def successors(self, s: Any, cap: int = 1000, fixed: Sequence[z3.BoolRef] | None = None) -> frozenset[Any]:
        """``fixed``: ``s`` already encoded over this solver's current-state variables (every solver of one
        symbolic system shares them: encode once per state, not once per action)."""
        sym, solver = self.sym, self.solver
        solver.push()
        try:
            solver.add(*(sym.encode_state(s, self.v) if fixed is None else fixed))
            out: set[Any] = set()
            while solver.check() == z3.sat:
                vals = _model_values(solver.model(), self.v2)
                out.add(sym.from_values(vals))
                if len(out) > cap:
                    raise ReplayError(f"more than {cap} successors under {self.action}: the encoding is not "
                                      "functional")
                solver.add(_block(self.v2, vals))
            return frozenset(out)
        finally:
            solver.pop()


    def matches(self, s: Any, theirs: frozenset[Any], fixed: Sequence[z3.BoolRef] | None = None,
                encode: Callable[[Any], list[z3.BoolRef]] | None = None) -> bool:
        """Are ``theirs`` exactly the successors of ``s`` under this action? Each one is checked as an
        assumption, then all are blocked at once and nothing else may remain: as many solver calls as
        :meth:`successors`, but no model is read back (reading a model is several times dearer than
        encoding a state), so the differential runs on every reachable state. On ``False`` the caller
        enumerates with :meth:`successors` to say what differs."""
        sym, solver = self.sym, self.solver
        solver.push()
        try:
            solver.add(*(sym.encode_state(s, self.v) if fixed is None else fixed))
            encoded = [sym.encode_state(t, self.v2) if encode is None else encode(t) for t in theirs]
            for enc in encoded:
                if solver.check(*enc) != z3.sat:
                    return False
            for enc in encoded:
                solver.add(z3.Not(z3.And(enc)))
            return bool(solver.check() == z3.unsat)
        finally:
            solver.pop()


_int = lru_cache(maxsize=4096)(z3.IntVal)  # small integers recur in every blocking clause


def _block(v: V, vals: Mapping[str, Value]) -> z3.BoolRef:
    """The clause that excludes the assignment ``vals`` of ``v`` (wellformed states are one-to-one with
    assignments, so enumerating models this way lists states)."""
    return z3.Or([z3.Not(v[k]) if x is True else v[k] if x is False else v[k] != _int(x) for k, x in vals.items()])


def z3_initial_states(sym: SymbolicSystem, cap: int = 1000) -> frozenset[Any]:
    """Every state of the encoding's ``init`` (wellformed), enumerated by blocking clauses."""
    v = sym.declare("init")
    solver = z3.Solver()
    solver.add(sym.wellformed(v), sym.init(v))
    out: set[Any] = set()
    while solver.check() == z3.sat:
        vals = _model_values(solver.model(), v)
        out.add(sym.from_values(vals))
        if len(out) > cap:
            raise ReplayError(f"more than {cap} initial states: the encoding's init is not a finite set")
        solver.add(_block(v, vals))
    return frozenset(out)


def check_initial_states(sym: SymbolicSystem, ref: frozenset[Any]) -> Mismatch | None:
    """The encoding's initial states against ``ref``, the reference's (both directions). The successor
    differential starts from the reference's own initial states, so without this a constant changed in one
    copy's initial state would be seen only by a property that happens to look at it."""
    got = z3_initial_states(sym, max(1000, 2 * len(ref)))
    return None if got == ref else Mismatch(None, "Init", ref, got, "initial states differ")


class _Encoder:
    """``encode_state`` over one set of variables, memoized: each (field, value) atom is built once and each
    state's list once (the last ``keep`` states). Every solver of a symbolic system names its next-state
    variables alike, so one encoder serves them all; building Z3 terms from Python was most of the solver
    path's time."""

    def __init__(self, sym: SymbolicSystem, v: V, keep: int = 10_000) -> None:
        self.sym, self.v, self.keep = sym, v, keep
        self.atoms: dict[tuple[str, Value], z3.BoolRef] = {}
        self.states: dict[Any, list[z3.BoolRef]] = {}

    def __call__(self, s: Any) -> list[z3.BoolRef]:
        hit = self.states.get(s)
        if hit is None:
            hit = []
            for k, x in self.sym.values(s).items():
                atom = self.atoms.get((k, x))
                if atom is None:
                    atom = self.atoms[(k, x)] = self.v[k] == (z3.BoolVal(x) if isinstance(x, bool) else _int(x))
                hit.append(atom)
            if len(self.states) >= self.keep:
                self.states.clear()
            self.states[s] = hit
        return hit


def z3_successors(sym: SymbolicSystem, s: Any, action: str, cap: int = 1000) -> frozenset[Any]:
    """Every successor of reference state ``s`` under the symbolic ``action`` (blocking clauses)."""
    return _ActionSolver(sym, action).successors(s, cap)


# The first states of every comparison also go through the solver, whatever the compiled path says: its
# control (a difference between the two is an error of rollcheck.smt.compiled, raised).
SOLVER_CONTROL_STATES = 3

RefStep = tuple[Any, "Vals | None"]  # a reference successor and its values (None: ``values`` misses a field)


class _Differential:
    """The comparison of :func:`check_successors`, one relation (an action or a sub-relation) at a time on
    one state at a time (:meth:`at`): the reference's successors against the relation's compiled successors
    (:mod:`rollcheck.smt.compiled`: no solver call), or against the solver (``_ActionSolver``) where a
    relation does not compile and, as a control of the compiled path, on the first
    ``SOLVER_CONTROL_STATES`` states (both ways, which must agree); the solver also names what differs."""

    def __init__(self, sym: SymbolicSystem, relations: Sequence[tuple[str, Relation]], compiled: bool) -> None:
        self.sym = sym
        self.relations = list(relations)
        self.fast = CompiledSystem(sym, compile_wellformed=compiled)
        self.compiled: list[Successors | None] = []
        self.solver_only: dict[str, str] = {}
        for name, rel in self.relations:
            try:
                if not compiled:
                    raise NotCompiled("the solver path was asked for")
                self.compiled.append(self.fast.relation(rel))
            except NotCompiled as exc:
                self.compiled.append(None)
                if compiled:
                    self.solver_only[name] = str(exc)
        if compiled and self.fast.wellformed is None:
            self.solver_only["wellformed"] = "not compiled"
        self.solvers: dict[int, _ActionSolver] = {}
        # The state terms the properties read: compiled where they compile, else asked of the solver.
        # (name, the term over the solvers' current-state variables, the reference's, the compiled term)
        self.terms: list[tuple[str, z3.BoolRef, Callable[[Any], bool], Callable[[Vals], bool] | None]] = []
        for name, pred, ref_term in sym.state_predicates():
            try:
                fast_term: Callable[[Vals], bool] | None = self.fast.predicate(pred(self.fast.v))
            except (NotCompiled, RecursionError):
                fast_term = None
            self.terms.append((name, pred(sym.declare("s")), ref_term, fast_term))
        self.term_solver: z3.Solver | None = None
        self.current = _Encoder(sym, sym.declare("s"))  # the solvers' current-state variables (same names)
        self.encode = _Encoder(sym, sym.declare("t"))  # ... and next-state variables
        self.wf_solver: z3.Solver | None = None
        self.seen = 0
        self.s: Any = None
        self.vals: Vals | None = None
        self.control = False

    def at(self, s: Any, values: Mapping[str, Value]) -> None:
        """Compare from ``s`` (whose ``values`` these are) next."""
        self.s, self.vals = s, self.fast.as_tuple(values)
        self.control = self.seen < SOLVER_CONTROL_STATES
        self.seen += 1

    def step(self, t: Any) -> RefStep:
        return t, self.fast.as_tuple(self.sym.values(t))

    def wellformed(self) -> bool:
        fast = None if self.fast.wellformed is None or self.vals is None else bool(self.fast.wellformed(self.vals))
        if fast is not None and not self.control:
            return fast
        if self.wf_solver is None:
            self.wf_solver = z3.Solver()
            self.wf_solver.add(z3.Not(self.sym.wellformed(self.sym.declare("s"))))
        exact = bool(self.wf_solver.check(*self.current(self.s)) != z3.sat)
        if fast is not None and fast != exact:
            raise RuntimeError(f"{self.sym.name}: the compiled wellformed says {fast}, the solver {exact}, "
                               f"on {self.s!r}")
        return exact

    def predicates_differ(self) -> list[tuple[str, bool, bool]]:
        """The state terms whose value on the current state differs: (name, the reference's, Z3's)."""
        out = []
        for name, term, ref_term, fast_term in self.terms:
            theirs = bool(ref_term(self.s))
            if fast_term is not None and self.vals is not None and not self.control:
                ours = bool(fast_term(self.vals))
            else:
                if self.term_solver is None:
                    self.term_solver = z3.Solver()
                ours = self.term_solver.check(*self.current(self.s), z3.Not(term)) == z3.unsat
                if fast_term is not None and self.vals is not None and bool(fast_term(self.vals)) != ours:
                    raise RuntimeError(f"{self.sym.name}: the compiled state term {name} and the solver disagree "
                                       f"on {self.s!r}")
            if theirs != ours:
                out.append((name, theirs, ours))
        return out

    def matches(self, i: int, theirs: Sequence[RefStep]) -> bool:
        """Are ``theirs`` exactly the successors of the current state under relation ``i``?"""
        fn = self.compiled[i]
        if not theirs and fn is not None and self.vals is not None and not self.control:
            return not fn(self.vals)  # the common case: neither takes a step
        if fn is None or self.vals is None or any(tv is None for _, tv in theirs):
            return self._solver(i).matches(self.s, frozenset(t for t, _ in theirs), fixed=self.current(self.s),
                                           encode=self.encode)
        fast = set(fn(self.vals)) == {tv for _, tv in theirs}
        if self.control and fast != self._solver(i).matches(self.s, frozenset(t for t, _ in theirs),
                                                             fixed=self.current(self.s), encode=self.encode):
            raise RuntimeError(f"{self.sym.name}: the compiled relation {self.relations[i][0]} and the solver "
                               f"disagree on {self.s!r}")
        return fast

    def mismatch(self, i: int, theirs: Sequence[RefStep]) -> Mismatch:
        """What differs under relation ``i``: the solver's successors of the current state beside ``theirs``."""
        ref = frozenset(t for t, _ in theirs)
        got = self._solver(i).successors(self.s, fixed=self.current(self.s))
        if got == ref:
            raise RuntimeError(f"{self.sym.name}: the compiled relation {self.relations[i][0]} differs from the "
                               f"reference on {self.s!r}, the solver does not")
        return Mismatch(self.s, self.relations[i][0], ref, got)

    def _solver(self, i: int) -> _ActionSolver:
        if i not in self.solvers:
            name, rel = self.relations[i]
            self.solvers[i] = _ActionSolver(self.sym, name, rel)
        return self.solvers[i]


SubRelation = tuple[str, Mapping[str, Any], Relation]


def check_successors(sym: SymbolicSystem, ts: TransitionSystem[Any], states: Iterable[Any],
                     subs: Iterable[SubRelation] = (), actions: bool = True, compiled: bool = True,
                     only: Mapping[Any, frozenset[str]] | None = None) -> SuccessorCheck:
    """Per state and per action name, the Z3 successors equal the reference's (both directions); states also
    round-trip through ``values`` / ``from_values`` and are wellformed. With ``subs`` (``parameter_relations()``)
    the sub-relations too, in the same pass (:func:`check_parameters`). Stops at the first mismatch.
    ``compiled=False``: every relation through the solver (no compiling: for a few states, and the
    benchmark's before). ``only``: per state, the action names whose relations are compared there (a state
    it does not name: every one; :func:`variant_delta`)."""
    names = [n for n in sym.actions if n not in sym.excluded_actions] if actions else []
    items = [(name, dict(params), rel) for name, params, rel in subs]
    labels = [_call_text(name, params.items()) for name, params, _ in items]
    diff = _Differential(sym, [*((n, sym.actions[n]) for n in names),
                               *((label, rel) for label, (_, _, rel) in zip(labels, items, strict=True))], compiled)
    first_sub = len(names)
    index = {n: i for i, n in enumerate(names)}
    action_of = [*names, *(name for name, _, _ in items)]  # relation number -> its action's name
    # a sub-relation's action name -> the parameter names it fixes -> their values -> its relation numbers
    by_params: dict[str, dict[tuple[str, ...], dict[tuple[Any, ...], list[int]]]] = {}
    for i, (name, params, _rel) in enumerate(items, start=first_sub):
        keys = tuple(sorted(params))
        by_params.setdefault(name, {}).setdefault(keys, {}).setdefault(tuple(params[k] for k in keys), []).append(i)
    order = [*sorted(range(first_sub), key=names.__getitem__), *range(first_sub, len(diff.relations))]
    res = SuccessorCheck(excluded=dict(sym.excluded_actions) if actions else {}, solver_only=dict(diff.solver_only))
    for s in states:
        res.states += 1
        values = sym.values(s)
        if actions:
            back = sym.from_values(values)
            if back != s:
                res.mismatch = Mismatch(s, "-", frozenset({s}), frozenset({back}), "state does not round-trip")
                return res
        diff.at(s, values)
        if actions and not diff.wellformed():
            res.mismatch = Mismatch(s, "-", frozenset({s}), frozenset(), "reference state is not wellformed")
            return res
        if actions:
            for name, theirs, ours in diff.predicates_differ():
                res.mismatch = Mismatch(s, f"(state term {name})", frozenset(), frozenset(),
                                        f"the state term {name} differs: the reference says {theirs}, Z3 {ours}")
                return res
        ref: list[list[RefStep]] = [[] for _ in diff.relations]
        unencoded: dict[str, set[Any]] = {}
        unlabelled: dict[str, set[Any]] = {}
        for a, t in ts.successors(s):
            step: RefStep | None = None
            k = index.get(a.name) if actions else None
            if k is not None:
                step = diff.step(t)
                ref[k].append(step)
            elif actions and a.name not in sym.excluded_actions:
                unencoded.setdefault(a.name, set()).add(t)
            for keys, by_values in by_params.get(a.name, {}).items():
                given = tuple(a.get(k, _MISSING) for k in keys)
                matched = by_values.get(given)
                if matched is None:
                    # The model splits this action by these parameters and has no relation for the values the
                    # reference used: a step the model cannot take under that label (a request the config does
                    # not offer, say), although its successor state may equal one another label reaches.
                    unlabelled.setdefault(_call_text(a.name, zip(keys, given, strict=True)), set()).add(t)
                    continue
                for j in matched:
                    ref[j].append(step or (step := diff.step(t)))
        for label in sorted(unlabelled):
            res.mismatch = Mismatch(s, label, frozenset(unlabelled[label]), frozenset(),
                                    "the reference takes a step with parameters none of the model's relations has")
            return res
        for name in sorted(unencoded):
            res.mismatch = Mismatch(s, name, frozenset(unencoded[name]), frozenset(), "action not encoded")
            return res
        compare = None if only is None else only.get(s)
        for i in order:
            if compare is not None and action_of[i] not in compare:
                continue
            res.transitions += _distinct(ref[i])
            if not diff.matches(i, ref[i]):
                res.mismatch = diff.mismatch(i, ref[i])
                return res
    return res


def _call_text(name: str, params: Iterable[tuple[str, Any]]) -> str:
    """An action with parameters as the mismatches name it: ``UpdateFeatures(level=1, dry_run=True)``."""
    return f"{name}({', '.join(f'{k}={x!r}' for k, x in params)})"


def _distinct(steps: Sequence[RefStep]) -> int:
    """How many different states (an action may reach one by several parameter values)."""
    if len(steps) < 2:
        return len(steps)
    if any(tv is None for _, tv in steps):
        return len({t for t, _ in steps})
    return len({tv for _, tv in steps})


def check_parameters(sym: SymbolicSystem, ts: TransitionSystem[Any], states: Iterable[Any],
                     subs: Iterable[SubRelation], compiled: bool = True) -> SuccessorCheck:
    """The sub-relations an encoding splits an action into (one per parameter value, for the step
    properties that read an action's parameters): per sampled state, the Z3 successors of each
    ``(action name, parameters, relation)`` equal the successors of the reference actions of that name
    whose parameters include ``parameters``. Stops at the first mismatch."""
    return check_successors(sym, ts, states, subs, actions=False, compiled=compiled)


_MISSING = object()
