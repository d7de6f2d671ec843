"""The Z3 engine's step-property machinery (model/core.py) on the toy protocol of tests/toy.py.

``ToyZ3`` is a hand-written encoding of the toy's two counters. ``SlipSystem`` is a broken toy whose
``Slip`` action lowers ``a`` by one: it violates the toy's step property TOY-02 ("a never decreases except
by Reset"). From (1, 0) ``Slip`` and ``Reset`` make the same transition, so the engine must find the
violating action among the reference actions that reach the last state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pytest
import z3

from rollcheck.core.transition import Action
from rollcheck.explore.explorer import ExploreOptions, explore
from rollcheck.smt.core import (
    ReplayError,
    SymbolicSystem,
    V,
    Value,
    bfs_states,
    bmc,
    check_successors,
    frame,
    is_step_property,
    k_induction,
    replay,
)
from tests.toy import ToyConfig, ToyState, ToySystem


class SlipSystem(ToySystem):
    """The toy plus ``Slip``: ``a`` goes down by one (and a lost tag is not given back)."""

    def successors(self, s: ToyState) -> Iterable[tuple[Action, ToyState]]:
        out = list(super().successors(s))
        if s.a >= 1:
            out.append((Action.of("Slip"), ToyState(s.a - 1, s.b, s.tags)))
        return out


class ToyZ3(SymbolicSystem):
    name = "toy"

    def __init__(self, ts: Any, slip: bool = False) -> None:
        super().__init__(ts)
        self.n = ts.config.bound
        self.actions = {"IncA": self._inc_a, "IncB": self._inc_b, "Reset": self._reset}
        if slip:
            self.actions["Slip"] = self._slip  # after Reset: a label of "Reset" comes first
        self.invariants = {"TOY-01": lambda v: z3.Not(z3.And(v["a"] % 2 == 1, v["b"] % 2 == 1))}
        self.step_properties = {"TOY-02": self.toy02}

    def fields(self) -> list[tuple[str, str]]:
        return [("a", "int"), ("b", "int"), *((f"t{k}", "bool") for k in range(1, self.n + 1))]

    def wellformed(self, v: V) -> z3.BoolRef:
        return z3.And(v["a"] >= 0, v["a"] <= self.n, v["b"] >= 0, v["b"] <= self.n)

    def values(self, s: ToyState) -> dict[str, Value]:
        return {"a": s.a, "b": s.b, **{f"t{k}": f"a{k}" in s.tags for k in range(1, self.n + 1)}}

    def from_values(self, vals: Mapping[str, Value]) -> ToyState:
        return ToyState(int(vals["a"]), int(vals["b"]),
                        frozenset(f"a{k}" for k in range(1, self.n + 1) if vals[f"t{k}"]))

    def init(self, v: V) -> z3.BoolRef:
        return z3.And(v["a"] == 0, v["b"] == 0, *(z3.Not(v[f"t{k}"]) for k in range(1, self.n + 1)))

    def _inc_a(self, v: V, v2: V) -> z3.BoolRef:
        guard = z3.Or(v["b"] % 2 == 0, v["a"] % 2 == 1, bool(self.config.broken))
        tags = {f"t{k}": z3.Or(v[f"t{k}"], v["a"] + 1 == k) for k in range(1, self.n + 1)}
        return z3.And(v["a"] < self.n, guard, frame(v, v2, {"a": v["a"] + 1, **tags}))

    def _inc_b(self, v: V, v2: V) -> z3.BoolRef:
        return z3.And(v["b"] < self.n, z3.Or(v["a"] % 2 == 0, v["b"] % 2 == 1), frame(v, v2, {"b": v["b"] + 1}))

    def _reset(self, v: V, v2: V) -> z3.BoolRef:
        return z3.And(z3.Or(v["a"] != 0, v["b"] != 0), frame(v, v2, {"a": 0, "b": 0}))

    def _slip(self, v: V, v2: V) -> z3.BoolRef:
        return z3.And(v["a"] >= 1, frame(v, v2, {"a": v["a"] - 1}))

    def toy02(self, v: V, v2: V) -> z3.BoolRef:
        """t.a >= s.a or the action is Reset: every other action that makes the step keeps a from falling."""
        others = [rel(v, v2) for name, rel in self.actions.items() if name != "Reset"]
        return z3.Implies(z3.Or(others), v2["a"] >= v["a"])


def toy(bound: int = 3, slip: bool = False) -> tuple[Any, ToyZ3]:
    ts = (SlipSystem if slip else ToySystem)(ToyConfig(bound=bound))
    return ts, ToyZ3(ts, slip)


def test_the_toy_encoding_matches_the_reference() -> None:
    for slip in (False, True):
        ts, sym = toy(slip=slip)
        res = check_successors(sym, ts, bfs_states(ts, 1000))
        assert res.ok, str(res.mismatch)
        assert res.states == explore(ts, ExploreOptions(stop_at_first=False)).distinct_states


def test_encoded_lists_invariants_then_step_properties() -> None:
    _, sym = toy()
    assert sym.encoded() == ["TOY-01", "TOY-02"]
    assert not is_step_property(sym, "TOY-01") and is_step_property(sym, "TOY-02")
    with pytest.raises(KeyError, match="TOY-03 is not encoded"):
        is_step_property(sym, "TOY-03")


def test_bmc_refutes_a_violated_step_property_at_the_shortest_depth() -> None:
    ts, sym = toy(slip=True)
    res = bmc(sym, "TOY-02", 6, timeout=30)
    assert res.status == "refuted" and res.trace is not None
    shortest = {x.property_id: x.depth for x in explore(ts, ExploreOptions(stop_at_first=False)).violations}
    assert res.depth == shortest["TOY-02"] == len(res.trace.actions) == 2
    # Z3 labels the last step with the first action that makes it (Reset, which TOY-02 allows); the
    # replay takes the reference action that violates it.
    assert [a.name for a in res.trace.actions] == ["IncA", "Slip"]
    prop = {p.id: p for p in ts.properties()}["TOY-02"]
    s, t = res.trace.states[-2:]
    assert not prop.holds(s, res.trace.actions[-1], t)
    steps = replay(ts, res.trace.states, ["IncA", "Reset"], violates="TOY-02")
    assert steps[-1].action is not None and steps[-1].action.name == "Slip"


def test_bmc_checks_a_step_property_that_holds() -> None:
    _, sym = toy()
    res = bmc(sym, "TOY-02", 6, timeout=30)
    assert res.status == "checked" and res.depth == 6 and res.trace is None
    assert bmc(sym, "TOY-02", 0, timeout=30).status == "checked"  # no transition at depth 0


def test_k_induction_proves_a_step_property() -> None:
    _, sym = toy()
    res = k_induction(sym, "TOY-02", 1, timeout=30)
    assert res.status == "proved", res.message
    assert res.line == "proved by 1-induction"
    assert k_induction(sym, "TOY-02", 2, timeout=30).status == "proved"


def test_k_induction_refutes_a_violated_step_property() -> None:
    _, sym = toy(slip=True)
    assert k_induction(sym, "TOY-02", 1, timeout=30).status == "unknown"  # not inductive: Slip breaks it
    res = k_induction(sym, "TOY-02", 3, timeout=30)  # the base case (BMC to depth 2) finds the violation
    assert res.status == "refuted" and res.depth == 2


def test_k_induction_proves_the_strengthening_with_a_step_property() -> None:
    """A strengthening that holds initially but is not preserved (a == 0) would rule out every Slip in
    the step case; it must be proved too, else a false step property would be "proved"."""
    _, sym = toy(slip=True)
    sym.strengthening = {"a-zero": lambda v: v["a"] == 0}
    res = k_induction(sym, "TOY-02", 1, timeout=30)
    assert res.status == "unknown", res.line
    # A true and inductive strengthening still works.
    _, sym = toy()
    sym.strengthening = {"a-bound": lambda v: v["a"] <= 3}
    res = k_induction(sym, "TOY-02", 1, timeout=30)
    assert res.status == "proved" and res.strengthening == ("a-bound",)


def test_replay_raises_when_the_reference_disagrees_on_a_step_property() -> None:
    ts, _ = toy()
    s0 = ToyState(0, 0, frozenset())
    s1 = ToyState(1, 0, frozenset({"a1"}))
    assert [a.name for a in (st.action for st in replay(ts, [s0, s1], ["IncA"])[1:])] == ["IncA"]
    with pytest.raises(ReplayError, match="TOY-02: Z3 says step 1"):
        replay(ts, [s0, s1], ["IncA"], violates="TOY-02")
    # Reset lowers a, but TOY-02 allows it.
    with pytest.raises(ReplayError, match="the reference says it holds"):
        replay(ts, [s0, s1, ToyState(0, 0, frozenset({"a1"}))], ["IncA", "Reset"], violates="TOY-02")
    with pytest.raises(ReplayError, match="TOY-01: Z3 says the last state violates it"):
        replay(ts, [s0, s1], ["IncA"], violates="TOY-01")
    with pytest.raises(ReplayError, match="not an invariant or step property"):
        replay(ts, [s0, s1], ["IncA"], violates="TOY-03")  # a graph property
    with pytest.raises(ReplayError, match="is not a reference step"):
        replay(ts, [s0, s0], ["IncA"], violates="TOY-02")


def test_bmc_replays_a_wrong_step_property_and_rejects_it() -> None:
    """An encoding whose TOY-02 is stricter than the reference's (a must grow on every step but Reset)
    is refuted by Z3 at once, and the replay on the reference catches the disagreement."""
    _, sym = toy()
    sym.step_properties["TOY-02"] = lambda v, v2: z3.Implies(sym.actions["IncB"](v, v2), v2["a"] > v["a"])
    with pytest.raises(ReplayError, match="TOY-02"):
        bmc(sym, "TOY-02", 3, timeout=30)
