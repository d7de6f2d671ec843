"""The Z3 checker's work: BMC to ``options.z3_depth`` plus k-induction, one verdict per property id, and the
successor differential: the Z3 relation against the reference on the config's reachable states.

The Z3 encoding is a second copy of the protocol's rules. Proving properties of it says nothing of a bug
planted in the reference that the encoding does not share; comparing the two relations state by state
does, whatever the properties look at: the encoding's initial states must be the reference's, and on each
checked state every action's Z3 successors must be the reference's (both directions), and so must the
sub-relations per action parameter. A mismatch makes the
report ``diverged``, which the gate counts as a disagreement (exit 3). ``options.z3_differential_states``
bounds the states (breadth-first from the initial states; 0: every reachable state), except that a config
with at most ``options.z3_differential_all_below`` states (1,000) is compared whole; the report says how
many were compared and whether that was every reachable state. In the ``ci`` tier a z3 cell on a ci config
(``ctx.differential_only``: each protocol's ``small``) runs the differential alone, on every reachable
state; the proofs run on the gate config.

The decision differential (``SymbolicSystem.decision_differential``) compares the encoding's decision rules
(one UpdateFeatures update, one metadata.version change, one Streams assignment, KIP-866's triggers) with
the reference on every input of a bounded domain, for the cell's profile; a disagreement is ``diverged``
too. It depends on the profile alone, so the ci tier runs it in the ci config's cell only (the cell setting
``decisions``, :mod:`rollcheck.checkers.z3`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable
from typing import Any

from rollcheck.checkers.report import (
    BOUNDED,
    NOT_CHECKED,
    PROVED,
    UNKNOWN,
    VIOLATED,
    CheckContext,
    CheckerReport,
    PropertyVerdict,
    Status,
    Verdict,
    save_traces,
)
from rollcheck.checkers.z3options import DIFFERENTIAL_ALL_BELOW, Z3Options, decisions
from rollcheck.core.transition import ProtocolEntry
from rollcheck.smt.core import (
    VariantDelta,
    bfs_states,
    check_initial_states,
    check_successors,
    iter_bfs_states,
    iter_variant_delta,
    variant_delta,
)
from rollcheck.smt.prove import prove, symbolic
from rollcheck.smt.z3interrupt import interruptible_z3

# From this many states on the relations are compiled (rollcheck.smt.compiled: 1-3 s a config once, then
# no solver call a state); fewer states go to the solver (15-50 ms a state, nothing to compile).
COMPILE_FROM = 200


def successor_differential(sym: Any, ts: Any, limit: int, whole_below: int = DIFFERENTIAL_ALL_BELOW,
                           reference: Any = None) -> dict[str, Any]:
    """The Z3 relation against the reference on the first ``limit`` states in breadth-first order (0, or a
    config of at most ``whole_below`` states: every reachable state): every action's successors and every
    parameter sub-relation, both directions. The result (JSON-ready) says how many states and transitions
    were compared and the first mismatch, if any.

    ``ts`` a broken variant's system and ``reference`` the reference on the same config: the states where
    the variant steps otherwise (:func:`rollcheck.smt.core.variant_delta`: at a state the reference reaches too,
    the actions whose steps differ; ``limit`` bounds the states, 0: all of them), which the reference's own
    differential never compares; ``every_reachable_state`` then says every such state was compared, and
    ``variant_states`` how many of the variant's states the search visited."""
    t0 = time.perf_counter()
    # The initial states first: the comparison below steps from the reference's own initial states.
    initial = frozenset(ts.initial_states())
    with interruptible_z3():
        init = check_initial_states(sym, initial)
    if init is not None:
        scope = {} if reference is None else {"scope": "variant delta", "variant_states": 0}
        return {"states": 0, "transitions": 0, "every_reachable_state": False, "initial_states": len(initial),
                **scope, "excluded_actions": {}, "solver_only": {}, "seconds": round(time.perf_counter() - t0, 2),
                "mismatch": str(init)}
    extra: dict[str, Any] = {}
    only = None
    states: Iterable[Any]
    delta: VariantDelta | None = None
    if reference is not None:
        if limit > 0:
            delta = variant_delta(ts, reference, limit)
            states, every = delta.states, delta.complete
        else:
            # Compared as the search classifies them, as on every reachable state below: a variant whose state
            # space has no end (the mutated reference lost a bound) meets its first disagreement.
            delta = VariantDelta([], 0, True)
            states, every = iter_variant_delta(ts, reference, delta), True
        only = delta.actions
        # A variant's few states are compiled too: its search already paid for the config, and the solver
        # costs up to 0.2 s a state on the bigger encodings.
        compiled = True
    elif limit > 0:
        probe = max(limit, whole_below) + 1
        states = bfs_states(ts, probe)
        every = len(states) < probe  # the search ran out of states
        if not every:
            states = states[:limit]
        compiled = len(states) >= COMPILE_FROM
    else:
        # Every reachable state, compared as the search finds it: a reference whose state space has no end (a
        # bound lost) still meets its first disagreement instead of a search that never returns.
        stream = iter_bfs_states(ts)
        head = list(itertools.islice(stream, COMPILE_FROM))
        # The scope is every reachable state; a mismatch ends the comparison there, as it always did.
        states, compiled, every = itertools.chain(head, stream), len(head) >= COMPILE_FROM, True
    with interruptible_z3():
        res = check_successors(sym, ts, states, sym.parameter_relations(), compiled=compiled, only=only)
    if delta is not None:
        extra = {"scope": "variant delta", "variant_states": delta.visited}
    return {"states": res.states, "transitions": res.transitions, "every_reachable_state": every,
            "initial_states": len(initial), **extra,
            "state_terms": [name for name, _, _ in sym.state_predicates()],
            "excluded_actions": res.excluded, "solver_only": res.solver_only,
            "seconds": round(time.perf_counter() - t0, 2),
            "mismatch": None if res.mismatch is None else str(res.mismatch)}


def _differential(report: CheckerReport, sym: Any, ts: Any, ctx: CheckContext, where: str,
                  reference: Any = None) -> None:
    opts = Z3Options.read(ctx.options)
    if reference is not None:  # a broken variant's cell: where it steps otherwise than the reference
        limit = opts.z3_variant_states
        scope = f"{limit or 'every'} state(s) where the variant steps otherwise than the reference"
    else:
        limit = 0 if ctx.differential_only else opts.z3_differential_states
        scope = f"{limit or 'every reachable'} state(s)"
    whole = opts.z3_differential_all_below
    if ctx.progress:
        ctx.progress(f"z3 {where}: successor differential on {scope}")
    diff = report.stats["differential"] = successor_differential(sym, ts, limit, whole, reference)
    if diff["mismatch"] is not None:
        first = str(diff["mismatch"]).splitlines()[0]
        report.status = Status.DIVERGED
        report.message = (f"the Z3 relation and the reference take different steps ({first}; "
                          "full text in the report's stats.differential.mismatch)")


def decision_differential(sym: Any) -> dict[str, Any]:
    """The encoding's decision rules against the reference (``SymbolicSystem.decision_differential``):
    JSON-ready, with the first disagreement (None: every rule agrees on every input)."""
    t0 = time.perf_counter()
    with interruptible_z3():
        rules = sym.decision_differential()
    first = next((f"{r['rule']}: {r['disagreement']}" for r in rules if r["disagreement"] is not None), None)
    return {"rules": rules, "inputs": sum(r["inputs"] for r in rules), "seconds": round(time.perf_counter() - t0, 2),
            "disagreement": first}


def _decisions(report: CheckerReport, sym: Any, ctx: CheckContext, where: str) -> None:
    if ctx.progress:
        ctx.progress(f"z3 {where}: decision differential")
    dec = report.stats["decisions"] = decision_differential(sym)
    if dec["disagreement"] is not None and report.status != Status.DIVERGED:
        report.status = Status.DIVERGED
        report.message = (f"a decision rule's Z3 formula and the reference decide differently "
                          f"({dec['disagreement'].splitlines()[0]}; full text in the report's stats.decisions)")


def check_z3(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    """Z3 on the encoded invariants and step properties; every other property of the protocol is NOT_CHECKED.
    Never exhaustive: "holds" means no violation within ``options.z3_depth`` steps; ``ctx.differential_only``:
    the successor differential alone; ``ctx.settings``' ``decisions`` (default true): the decision differential
    too."""
    t0 = time.perf_counter()
    depth = Z3Options.read(ctx.options).z3_depth
    ts = ctx.build(entry, config)
    report = CheckerReport("z3", entry.name, label, config.profile, exhaustive=False)
    if entry.z3 is None:
        report.status = Status.SKIPPED
        report.message = f"no Z3 encoding for {entry.name}"
        for p in ts.properties():
            report.properties[p.id] = PropertyVerdict(p.id, NOT_CHECKED, "no Z3 encoding")
        return report
    try:
        sym = symbolic(ts)
    except ValueError as exc:  # a config the encoding does not cover (e.g. features with multi_update)
        report.status = Status.SKIPPED
        report.message = f"Z3: {exc}"
        for p in ts.properties():
            report.properties[p.id] = PropertyVerdict(p.id, NOT_CHECKED, str(exc))
        return report
    encoded = sym.encoded()
    budget = max(1.0, ctx.timeout_seconds / max(1, len(encoded)))
    diverged = ""
    for p in ts.properties():
        if ctx.differential_only:
            report.properties[p.id] = PropertyVerdict(p.id, NOT_CHECKED, "this cell compares the Z3 relation with "
                                                      "the reference (the ci tier proves on the gate config)")
            continue
        if p.id not in encoded:
            report.properties[p.id] = PropertyVerdict(p.id, NOT_CHECKED, f"{p.kind} property: not encoded in Z3")
            continue
        if ctx.progress:
            ctx.progress(f"z3 {entry.name}/{label}/{config.profile}: {p.id}")
        with interruptible_z3():  # Ctrl-C during a long query ends the run now, not when Z3 returns
            res = prove(sym, p.id, depth, budget)
        if res.status == "diverged":
            # Z3's counterexample is not a run of the reference: the two copies of the rules step otherwise,
            # a disagreement (the differential below names the first state where they do, when it reaches it).
            report.properties[p.id] = PropertyVerdict(p.id, UNKNOWN, res.line)
            diverged = diverged or f"{p.id}: the Z3 counterexample does not replay on the reference ({res.message})"
            continue
        if res.status == "refuted":
            assert res.trace is not None
            res.trace.config = label
            res.trace.description = p.description
            verdict = PropertyVerdict(p.id, VIOLATED, f"{p.description} ({res.line})", res.trace)
        elif res.status == "proved":
            verdict = PropertyVerdict(p.id, PROVED, res.line)
        elif res.status == "checked":  # BMC found nothing but induction did not close: bounded, not "holds"
            verdict = PropertyVerdict(p.id, BOUNDED, f"holds up to depth {res.depth} ({res.line}; not proved)")
        else:
            verdict = PropertyVerdict(p.id, Verdict.UNKNOWN, res.line)
        report.properties[p.id] = verdict
        report.stats[p.id] = res.to_json()
    report.status = Status.VIOLATED if any(v.status == VIOLATED for v in report.properties.values()) else Status.OK
    gave_up = [v.id for v in report.properties.values() if v.status == UNKNOWN]
    if gave_up:  # "ok" is the cell's run, not these properties: the report names what Z3 did not decide
        report.message = f"not checked (the solver gave up): {', '.join(gave_up)}"
    if diverged:
        report.status = Status.DIVERGED
        report.message = diverged.splitlines()[0]
    if ctx.differential_only:
        report.message = "the successor differential alone (the ci tier proves on the gate config)"
    else:
        report.stats["depth"] = depth
    _differential(report, sym, ts, ctx, f"{entry.name}/{label}/{config.profile}",
                  None if ctx.variant is None else entry.build(config))
    if decisions(ctx.settings):
        _decisions(report, sym, ctx, f"{entry.name}/{config.profile}")
    report.elapsed = time.perf_counter() - t0
    save_traces(report, ts, ctx)
    return report
