"""The successor differential's compiled path (rollcheck/smt/compiled.py, issue #22 item 3).

The Z3 relations are compiled once into guarded assignments and evaluated on each state's values, with no
solver call; the solver stays the control (the first states both ways) and names what differs. These tests
keep what the differential caught: a one-line change planted in a reference successor function, a step
dropped or a step added, is a mismatch naming the action, found by the compiled path alone.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import z3

from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import Action
from rollcheck.smt import core
from rollcheck.smt.checker import COMPILE_FROM, successor_differential
from rollcheck.smt.compiled import CompiledSystem, NotCompiled
from rollcheck.smt.prove import symbolic


def system(protocol: str, config: str = "small", profile: str | None = None) -> Any:
    entry = get_protocol(protocol)
    cfg = entry.configs[config]
    return entry.build(cfg if profile is None else dataclasses.replace(cfg, profile=profile))


@pytest.mark.parametrize(("protocol", "config", "profile"), [
    ("features", "small", "kip"), ("features", "small", "kafka"), ("metadata_version", "small", "kip"),
    ("metadata_version", "small", "kafka"), ("zk_migration", "small", "kip"), ("zk_migration", "faults", "kafka"),
    ("streams_probing", "small", "kafka-2.0"), ("streams_probing", "default", "kip")])
def test_compiled_relations_agree_with_the_solver(protocol: str, config: str, profile: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Every action and parameter sub-relation compiles, and on the first 120 states the compiled successors
    are the solver's (the control runs both ways on every relation and raises where they differ)."""
    monkeypatch.setattr(core, "SOLVER_CONTROL_STATES", 120)
    ts = system(protocol, config, profile)
    sym = symbolic(ts)
    res = core.check_successors(sym, ts, core.bfs_states(ts, 120), sym.parameter_relations())
    assert res.ok, str(res.mismatch)
    assert res.solver_only == {}  # every relation took the compiled path
    assert res.states == min(120, res.states) and res.transitions > 0


def _planted(ts: Any, change: Any) -> Any:
    """``ts`` with its successor function changed by ``change(state, steps) -> steps``: a one-line bug."""
    base = type(ts)

    class Planted(base):  # type: ignore[misc, valid-type]
        def successors(self, s: Any) -> Any:
            return change(s, list(base.successors(self, s)))

    return Planted(ts.config)


@pytest.mark.parametrize("direction", ["missing", "extra"])
def test_the_compiled_path_sees_a_bug_planted_in_the_reference(direction: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A reference that drops one step (every DualWrite of zk_migration) or takes one the Z3 relation does not
    have (a DualWrite that changes nothing) is a mismatch naming DualWrite, from the compiled path alone (no
    solver control), on every reachable state of the small config as the gate's ci tier runs it."""
    monkeypatch.setattr(core, "SOLVER_CONTROL_STATES", 0)
    honest = system("zk_migration")

    def change(s: Any, steps: list[Any]) -> list[Any]:
        if direction == "missing":
            return [(a, t) for a, t in steps if a.name != "DualWrite"]
        writes = [a for a, _ in steps if a.name == "DualWrite"]
        return [*steps, (Action.of("DualWrite", voter=writes[0]["voter"]), s)] if writes else steps

    ts = _planted(honest, change)
    diff = successor_differential(symbolic(ts), ts, 0)
    assert diff["every_reachable_state"] and diff["solver_only"] == {}
    assert diff["mismatch"] is not None and "for action DualWrite from" in diff["mismatch"]
    only_ref, only_z3 = diff["mismatch"].splitlines()[1:3]
    if direction == "missing":
        assert only_ref == "  reference only: []" and only_z3 != "  z3 only: []"
    else:
        assert only_ref != "  reference only: []" and only_z3 == "  z3 only: []"
    # ... and the honest reference agrees on every reachable state, compiled (more than COMPILE_FROM states).
    full = successor_differential(symbolic(honest), honest, 0)
    assert full["mismatch"] is None and full["every_reachable_state"] and full["states"] >= COMPILE_FROM


def test_a_drained_check_without_its_active_controller_is_a_mismatch_on_the_leaderless_rollback_story() -> None:
    """The mutation campaign's survivor system.py ``drop_and_operand``: the quorum's "drained" check without
    ``_leader_ok`` reads ``voters[-1]``'s driver when there is no leader, and offers a clean shutdown no operator
    could know to be safe. No property looks at that (ZooKeeper holds the log); the Z3 relation on every state of
    the ``leaderless_rollback`` story (a ci story config) names it, where every older config had one fault."""
    honest = system("zk_migration", "leaderless_rollback", "kip")
    base = type(honest)

    class Planted(base):  # type: ignore[misc, valid-type]
        def _rollback_successors(self, s: Any, out: Any) -> None:
            self._leader_ok = lambda _s: True  # type: ignore[method-assign]  # the dropped operand
            try:
                base._rollback_successors(self, s, out)
            finally:
                del self._leader_ok

    ts = Planted(honest.config)
    diff = successor_differential(symbolic(ts), ts, 0)
    assert diff["mismatch"] is not None and "for action ShutdownQuorum from" in diff["mismatch"]
    assert "leader=-1" in diff["mismatch"].splitlines()[0] and "shutdown=<Shutdown.CLEAN" in diff["mismatch"]


@pytest.mark.parametrize("change", ["next_id", "raft_epoch"])
def test_a_constant_planted_in_the_reference_initial_state_is_a_mismatch(change: str) -> None:
    """A reference whose initial state differs from the encoding's in one constant (the next change id, the
    first raft epoch) is a mismatch at Init, before any step is compared: the successor comparison starts
    from the reference's own initial states and would step on happily from the wrong one."""
    honest = system("zk_migration")
    base = type(honest)

    class Planted(base):  # type: ignore[misc, valid-type]
        def initial_states(self) -> Any:
            return [dataclasses.replace(s, **{change: getattr(s, change) + 1}) for s in base.initial_states(self)]

    ts = Planted(honest.config)
    diff = successor_differential(symbolic(ts), ts, 0)
    assert diff["mismatch"] is not None and diff["states"] == 0 and diff["initial_states"] == 1
    head, only_ref, only_z3 = diff["mismatch"].splitlines()[:3]
    assert head == "initial states differ:"
    assert f"{change}={getattr(next(iter(ts.initial_states())), change)}" in only_ref
    assert f"{change}={getattr(next(iter(honest.initial_states())), change)}" in only_z3
    # ... under a variant too (its cell's report keeps the variant's scope, which `rollcheck prove` prints).
    under = successor_differential(symbolic(ts), ts, 0, reference=honest)
    assert under["mismatch"] == diff["mismatch"] and under["scope"] == "variant delta" and under["variant_states"] == 0
    assert successor_differential(symbolic(honest), honest, 0)["initial_states"] == 1


def test_a_planted_parameter_change_names_the_sub_relation(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reference step relabelled with another parameter (OnAssignment of instance 1 reported as instance 0)
    keeps every action's successors but not the sub-relations per instance."""
    monkeypatch.setattr(core, "SOLVER_CONTROL_STATES", 0)

    def change(s: Any, steps: list[Any]) -> list[Any]:
        return [(Action.of(a.name, **{**dict(a.params), "instance": 0}) if a.name == "OnAssignment" else a, t)
                for a, t in steps]

    ts = _planted(system("streams_probing", "default"), change)
    sym = symbolic(ts)
    states = core.bfs_states(ts, 400)
    assert core.check_successors(sym, ts, states).ok
    res = core.check_parameters(sym, ts, states, sym.parameter_relations())
    assert res.mismatch is not None and res.mismatch.action.startswith("OnAssignment(")
    assert res.solver_only == {}


def test_an_operator_the_compiler_does_not_take_goes_to_the_solver() -> None:
    """A relation dividing by a variable does not compile: the solver compares it on every state (named in
    ``solver_only``), the others stay compiled, and a split over a next-state field's domain compiles a
    relation that reads the next state in a comparison."""
    from tests.test_model_core import ToyZ3, toy

    class Odd(ToyZ3):
        def __init__(self, ts: Any) -> None:
            super().__init__(ts)
            inc_b = self.actions["IncB"]
            # the same steps: 0 * (a div (b + 1)) is 0, but div by a variable is not compiled
            self.actions["IncB"] = lambda v, v2: z3.And(inc_b(v, v2), 0 * (v["a"] / (v["b"] + 1)) == 0)
            reset = self.actions["Reset"]
            # the same steps: t.a <= 0 and t.a >= 0 under wellformed; t.a is split over 0 .. bound
            self.actions["Reset"] = lambda v, v2: z3.And(reset(v, v2), v2["a"] <= 0)

    ts, _ = toy()
    sym = Odd(ts)
    fast = CompiledSystem(sym)
    with pytest.raises(NotCompiled, match="div by"):
        fast.relation(sym.actions["IncB"])
    fast.relation(sym.actions["Reset"])
    res = core.check_successors(sym, ts, core.bfs_states(ts, 1000))
    assert res.ok, str(res.mismatch)
    assert set(res.solver_only) == {"IncB"} and res.states > 3


def test_compiled_successors_are_the_wellformed_assignments() -> None:
    """The compiled function of an action gives exactly the solver's enumeration of its successors on a few
    states of every protocol (the values, as tuples in fields() order)."""
    for protocol in ("zk_migration", "streams_probing", "metadata_version"):
        ts = system(protocol)
        sym = symbolic(ts)
        fast = CompiledSystem(sym)
        for s in core.bfs_states(ts, 8):
            vals = fast.as_tuple(sym.values(s))
            assert vals is not None
            for name, rel in sym.actions.items():
                got = set(fast.relation(rel)(vals))
                want = {fast.as_tuple(sym.values(t)) for t in core.z3_successors(sym, s, name)}
                assert got == want, (protocol, name, s)


def test_a_ci_tier_z3_cell_on_the_small_config_compares_every_reachable_state(tmp_path: Any) -> None:
    """The ci tier's z3 cell on a ci config (``differential_only``) proves nothing (the cell on the gate config
    does) and compares the Z3 relation with the reference on every reachable state, compiled."""
    from rollcheck.checkers import NOT_CHECKED, CheckContext
    from rollcheck.explore.explorer import reachable_states
    from rollcheck.smt.checker import check_z3

    entry = get_protocol("zk_migration")
    ctx = CheckContext(tmp_path, options={"z3_differential_states": 50, "z3_differential_all_below": 0},
                       differential_only=True)
    report = check_z3(entry, "small", entry.configs["small"], ctx)
    diff = report.stats["differential"]
    assert report.status == "ok" and diff["mismatch"] is None and diff["every_reachable_state"] is True
    assert diff["states"] == len(reachable_states(entry.build(entry.configs["small"]))[0])
    assert diff["solver_only"] == {} and "depth" not in report.stats
    assert {v.status for v in report.properties.values()} == {NOT_CHECKED}


@pytest.mark.parametrize("planted", ["converged reads the last version only", "converged reads the used version only",
                                     "the operator's intent without the release"])
def test_a_property_term_drifted_from_the_model_is_a_state_term_mismatch(planted: str) -> None:
    """The campaign's Streams survivors system.py 119-124: a term STR-07 / STR-08 read, weakened under properties
    that hold anyway, leaves every verdict and every successor as it was. The differential compares the terms
    themselves (``SymbolicSystem.state_predicates``) on every state it compares, and names the term."""
    honest = system("streams_probing", "small", "kip")
    diff = successor_differential(symbolic(honest), honest, 0)
    assert diff["mismatch"] is None and diff["state_terms"] == ["stable", "bounces_done", "converged"]
    if planted == "the operator's intent without the release":  # the operator's config (its first state)
        honest = system("streams_probing", "misconfigured-upgrade-from", "kafka")
    base = type(honest)

    class Planted(base):  # type: ignore[misc, valid-type]
        def converged(self, s: Any) -> bool:
            target = self.target_version(s)
            if planted == "converged reads the last version only":
                return all(x.last_version == target for x in s.instances)
            if planted == "converged reads the used version only":
                return all(x.used_version == target for x in s.instances)
            return bool(base.converged(self, s))

        def bounces_done(self, s: Any) -> bool:
            if planted == "the operator's intent without the release":
                return all(x.upgrade_from is None for x in s.instances)
            return bool(base.bounces_done(self, s))

    ts = Planted(honest.config)
    diff = successor_differential(symbolic(ts), ts, 0)
    term = "converged" if "converged" in planted else "bounces_done"
    assert diff["mismatch"] is not None and f"the state term {term} differs" in diff["mismatch"]


def test_a_step_under_a_label_the_model_has_no_relation_for_is_a_mismatch() -> None:
    """A reference that offers dry runs on ``preview`` (whose operator never dry-runs: the campaign's survivor
    metadata_version system.py:102, the config's switch ignored) adds only stutter steps: a dry run changes
    nothing, and a refused request already loops on each state, so every action's successor states stay equal.
    The model splits UpdateFeatures by (level, downgrade, dry_run) and has no relation for a dry run there: the
    reference's step under that label is a mismatch naming it."""
    from reference_impl.metadata_version.api import DowngradeType
    from reference_impl.metadata_version.system import _label

    honest = system("metadata_version", "preview")
    assert not honest.config.dry_run and honest.config.initial_level == 0
    assert successor_differential(symbolic(honest), honest, 0)["mismatch"] is None

    def change(s: Any, steps: list[Any]) -> list[Any]:
        if not any(a.name == "UpdateFeatures" for a, _ in steps):
            return steps
        return [*steps, (_label("UpdateFeatures", level=1, downgrade=DowngradeType.NONE.name, dry_run=True), s)]

    ts = _planted(honest, change)
    diff = successor_differential(symbolic(ts), ts, 0)
    assert diff["mismatch"] is not None
    assert diff["mismatch"].startswith("the reference takes a step with parameters none of the model's relations "
                                       "has for action UpdateFeatures(downgrade='NONE', dry_run=True, level=1) from")
