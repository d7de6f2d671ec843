"""Declared properties (rollcheck.core.declare) and witnesses: definition-time errors, binding, and vacuity in
the explorer, TLC and the gate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rollcheck.checkers import REACHED, VACUOUS, CheckerReport, PropertyVerdict, from_exploration
from rollcheck.core.declare import (
    PropertyDefinitionError,
    PropertySet,
    graph_property,
    invariant,
    step_property,
    witness,
)
from rollcheck.core.errors import ExitCode
from rollcheck.core.transition import Action, AnyProperty, GraphProperty, Invariant, StepProperty, Witness
from rollcheck.explore.explorer import ExploreOptions, explore
from rollcheck.gate import GateResult, findings_of
from tests.toy import PROTOCOL, ToyConfig, ToySystem


@dataclass(frozen=True)
class ToyContext:
    bound: int
    target: int

    @staticmethod
    def of(system: Any, target: int | None = None) -> ToyContext:
        bound = system.config.bound
        return ToyContext(bound, bound if target is None else target)


@invariant("TOY-01", "a and b are never both odd", source="toy")
def never_both_odd(s: Any) -> bool:
    return not (s.a % 2 and s.b % 2)


@step_property("TOY-02", "a never decreases except by Reset", source="toy")
def a_monotonic(s: Any, a: Action, t: Any) -> bool:
    return bool(t.a >= s.a or a.name == "Reset")


@graph_property("TOY-03", "the origin stays reachable", source="toy")
def origin(s: Any) -> bool:
    return bool(s.a == 0 and s.b == 0)


@witness("TOY-W1", "a reached the target", source="toy")
def a_at_target(ctx: ToyContext, s: Any) -> bool:
    return bool(s.a == ctx.target)


@witness("TOY-W2", "b reached 2 (only where the bound allows it)", source="toy", when=lambda ctx: ctx.bound >= 2)
def b_at_two(s: Any) -> bool:
    return bool(s.b == 2)


TOY_PROPERTIES = PropertySet.of(globals(), context=ToyContext.of)


class DeclaredToy(ToySystem):
    """The toy with its properties declared; ``target`` moves TOY-W1's target (beyond the bound: vacuous)."""

    def __init__(self, config: ToyConfig, target: int | None = None) -> None:
        super().__init__(config)
        self.target = target

    def properties(self) -> Sequence[AnyProperty]:
        return TOY_PROPERTIES.bind(self, target=self.target)


def test_declared_properties_bind_in_order_with_their_kinds() -> None:
    props = DeclaredToy(ToyConfig(bound=3)).properties()
    assert [p.id for p in props] == ["TOY-01", "TOY-02", "TOY-03", "TOY-W1", "TOY-W2"]
    assert [type(p) for p in props] == [Invariant, StepProperty, GraphProperty, Witness, Witness]
    assert [p.kind for p in props] == ["invariant", "step", "graph", "witness", "witness"]
    w1 = props[3]
    assert isinstance(w1, Witness) and w1.source == "toy" and w1.description == "a reached the target"
    # the context is applied: the target is the bound unless the system says otherwise
    state = type(DeclaredToy(ToyConfig()).initial_states()[0])  # type: ignore[index]
    assert w1.holds(state(3, 0, frozenset())) and not w1.holds(state(2, 0, frozenset()))
    # ``when``: TOY-W2 does not apply where b cannot reach 2
    assert [p.id for p in DeclaredToy(ToyConfig(bound=1)).properties()][-1] == "TOY-W1"
    # the decorated functions stay callable as written
    assert a_at_target(ToyContext(3, 3), state(3, 0, frozenset())) is True
    assert TOY_PROPERTIES.ids == ("TOY-01", "TOY-02", "TOY-03", "TOY-W1", "TOY-W2")
    assert TOY_PROPERTIES["TOY-W2"].kind == "witness"


@pytest.mark.parametrize("make, message", [
    (lambda: invariant("toy01", "x", source="s"), "is not of the form PREFIX-NAME"),
    (lambda: invariant("TOY-01", " ", source="s"), "the statement is empty"),
    (lambda: step_property("TOY-01", "x", source=""), "the source is empty"),
    (lambda: invariant("TOY-01", "x", source="s")(lambda a, b, c: True), "takes 3 parameter(s); it must take (state)"),
    (lambda: step_property("TOY-01", "x", source="s")(lambda s: True),
     "it must take (before, action, after) or (context, before, action, after)"),
    (lambda: graph_property("TOY-01", "x", source="s", allowed=lambda a, b, c: True)(lambda s: True), "allowed="),
    (lambda: witness("TOY-01", "x", source="s", when=3), "when= must be a predicate"),  # type: ignore[arg-type]
    (lambda: witness("TOY-02", "x", source="s")(never_both_odd), "TOY-01 is already declared"),
    (lambda: PropertySet.of([never_both_odd, invariant("TOY-01", "again", source="s")(lambda s: True)]),
     "two properties with the id TOY-01"),
    (lambda: PropertySet.of({}), "no property declared"),
])
def test_declaration_mistakes_fail_at_definition(make: Any, message: str) -> None:
    with pytest.raises(PropertyDefinitionError, match=None) as info:
        make()
    assert message in str(info.value)


def test_explorer_reaches_witnesses_and_writes_their_shortest_traces() -> None:
    res = explore(DeclaredToy(ToyConfig(bound=3)), ExploreOptions(config_name="small"))
    status = {p.id: p.status for p in res.properties}
    assert status["TOY-W1"] == "reached at depth 3" and status["TOY-W2"] == "reached at depth 2"
    assert res.ok and res.vacuous == []
    traces = {v.property_id: v for v in res.witness_traces}
    assert traces["TOY-W1"].depth == 3 and traces["TOY-W1"].trace.steps[-1].state.a == 3
    assert traces["TOY-W2"].trace.steps[-1].state.b == 2


def test_a_witness_no_reachable_state_satisfies_fails_a_complete_run_as_vacuous() -> None:
    ts = DeclaredToy(ToyConfig(bound=3), target=4)
    res = explore(ts, ExploreOptions(config_name="small"))
    assert res.complete and res.violations == []
    assert res.vacuous == ["TOY-W1"] and not res.ok
    report = from_exploration("explore", PROTOCOL, "small", ts.config, res)
    assert report.properties["TOY-W1"].status == VACUOUS and report.properties["TOY-W2"].status == REACHED
    assert report.status == "violated"
    # a bounded run cannot say "vacuous": it says how far it looked, and does not fail
    short = explore(ts, ExploreOptions(config_name="small", max_depth=1))
    assert {p.id: p.status for p in short.properties}["TOY-W1"] == "not reached up to depth 1"
    assert short.ok


def test_witnesses_survive_a_resume(tmp_path: Path) -> None:
    ts = DeclaredToy(ToyConfig(bound=3))
    explore(ts, ExploreOptions(config_name="small", max_depth=2, checkpoint_dir=tmp_path))
    res = explore(ts, ExploreOptions(config_name="small", checkpoint_dir=tmp_path, resume=True))
    status = {p.id: p.status for p in res.properties}
    assert status["TOY-W2"] == "reached at depth 2"  # found before the resume, kept in the checkpoint
    assert status["TOY-W1"] == "reached at depth 3"


def _witness_report(checker: str, status: str, exhaustive: bool = True) -> CheckerReport:
    r = CheckerReport(checker, "toy", "small", "kip", exhaustive=exhaustive)
    r.properties["TOY-W1"] = PropertyVerdict("TOY-W1", status, "reached at depth 3" if status == REACHED else "")
    return r


def test_gate_fails_a_vacuous_witness_and_flags_engines_that_disagree_on_it() -> None:
    (f,) = findings_of([_witness_report("explore", VACUOUS)])
    assert f.kind == "vacuous" and f.property_id == "TOY-W1"
    assert GateResult([], [f], 0.0, None).exit_code == ExitCode.VIOLATION  # type: ignore[arg-type]
    fs = findings_of([_witness_report("explore", REACHED), _witness_report("tlc", VACUOUS)])
    assert {f.kind for f in fs} == {"vacuous", "disagreement"}
    assert any("explore reached the witness" in f.message for f in fs)
    # agreement, and a non-exhaustive checker's silence, are no finding
    assert findings_of([_witness_report("explore", REACHED), _witness_report("tlc", REACHED)]) == []


def test_tlc_decides_witnesses_as_negated_invariants(tmp_path: Path) -> None:
    """features:atomic has no client, so FEAT-W2 (a client learned the features) is vacuous there: TLC
    reaches FEAT-W1 in one run, then a complete run proves FEAT-W2 unreachable (as the explorer does)."""
    from rollcheck.core.registry import get_protocol
    from rollcheck.tla.binding import binding_for
    from rollcheck.tla.witness import check_witnesses

    entry = get_protocol("features")
    ts = entry.build(entry.configs["atomic"])
    runs = check_witnesses(binding_for("features"), ts, tmp_path, ["FEAT-W1", "FEAT-W2"], timeout=300, workers=1)
    assert runs.error == "" and runs.runs == 2
    assert list(runs.reached) == ["FEAT-W1"] and runs.depth("FEAT-W1") == 3 and runs.vacuous == ["FEAT-W2"]
    explored = explore(ts, ExploreOptions(config_name="atomic"))
    assert {p.id: p.status for p in explored.properties}["FEAT-W1"] == "reached at depth 3"


def test_z3_differential_sees_a_bug_planted_in_the_reference(tmp_path: Path) -> None:
    """The gate's z3 cell compares the Z3 relation with the reference state by state: a reference that drops
    a step (here: a broker never restarts onto the newest release) diverges, whatever the properties say."""
    from rollcheck.checkers import CheckContext
    from rollcheck.core.registry import get_protocol
    from rollcheck.smt.checker import _differential
    from rollcheck.smt.prove import symbolic

    entry = get_protocol("features")
    config = entry.configs["small"]

    class Planted(entry.build):  # type: ignore[misc, name-defined]
        def successors(self, s: Any) -> Any:
            return [(a, t) for a, t in super().successors(s)
                    if not (a.name == "RestartBroker" and a["release"] == "new")]

    for ts, diverges in ((entry.build(config), False), (Planted(config), True)):
        report = CheckerReport("z3", "features", "small", "kip")
        _differential(report, symbolic(ts), ts, CheckContext(tmp_path, options={"z3_differential_states": 20}), "x")
        assert (report.status == "diverged") is diverges, report.message
        assert report.stats["differential"]["states"] == (1 if diverges else 20)  # it stops at the first
    assert "RestartBroker" in report.message and "reference only" not in report.message


def test_the_z3_differential_covers_a_small_config_whole(tmp_path: Path) -> None:
    """Below ``z3_differential_all_below`` states (1,000 by default) the gate's differential compares every
    reachable state, not the first 50 (#22: any change the Z3 copy does not share is a disagreement)."""
    from rollcheck.checkers import CheckContext
    from rollcheck.core.registry import get_protocol
    from rollcheck.explore.explorer import reachable_states
    from rollcheck.smt.checker import _differential
    from rollcheck.smt.prove import symbolic

    ts = get_protocol("streams_probing").build(get_protocol("streams_probing").configs["small"])
    report = CheckerReport("z3", "streams_probing", "small", "kip")
    _differential(report, symbolic(ts), ts, CheckContext(tmp_path), "x")
    diff = report.stats["differential"]
    assert diff["mismatch"] is None and diff["every_reachable_state"] is True
    assert diff["states"] == len(reachable_states(ts)[0]) > 50
    report = CheckerReport("z3", "streams_probing", "small", "kip")
    _differential(report, symbolic(ts), ts, CheckContext(tmp_path, options={"z3_differential_all_below": 0}), "x")
    assert report.stats["differential"]["states"] == 50


def test_itf_carries_quints_mbt_keys_with_each_actions_picks(tmp_path: Path) -> None:
    from rollcheck.core.registry import get_protocol
    from rollcheck.core.traces import read_itf, write_itf
    from rollcheck.explore.replay import replay_itf

    entry = get_protocol("features")
    ts = entry.variant("FEAT-M2").system(entry.configs["small"])
    v = explore(ts, ExploreOptions(config_name="small")).violations[0]
    doc = read_itf(write_itf(tmp_path / "t.itf.json", v.trace, ts))
    last = doc["states"][-1]
    assert last["mbt::actionTaken"] == "UpdateFeatures" == v.trace.actions[-1].name
    picks = last["mbt::nondetPicks"]
    assert set(picks) == {k for k, _ in v.trace.actions[-1].params}
    assert all(p["tag"] == "Some" for p in picks.values())
    assert picks["dry_run"] == {"tag": "Some", "value": False}
    assert doc["states"][0]["mbt::actionTaken"] == "init" and doc["states"][0]["mbt::nondetPicks"] == {}
    assert replay_itf(tmp_path / "t.itf.json").reproduced  # the extra keys change nothing for replay
