"""The Z3 relation against the reference under each broken variant (issue #22): where a variant steps otherwise
than the reference, it leads into code no reference config reaches (a leader whose assignment fails, ...); a
bug planted there is invisible to the reference's own differential and to every property that does not read
it, and the variant's differential sees it."""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reference_impl.streams_probing import system as streams_system
from rollcheck.checkers import CheckContext
from rollcheck.checkers.z3options import DECISIONS, decisions
from rollcheck.cli import main
from rollcheck.core.registry import get_protocol
from rollcheck.gate import GateConfig, plan_cells, run_gate
from rollcheck.gate.tables import variant_differential_line
from rollcheck.smt.checker import check_z3
from rollcheck.smt.core import bfs_states, variant_delta

STREAMS = get_protocol("streams_probing")


def _leader_failure_keeps_a_rebalance(monkeypatch: pytest.MonkeyPatch) -> None:
    """The campaign's survivor at streams system.py:255: the rebalance counter is 1, not 0, once the
    leader's assignment fails. No reference config has the leader fail; STR-M1 and STR-M5 do."""
    original = streams_system.StreamsProbingSystem._rebalance

    def broken(self: Any, s: Any, *args: Any, **kwargs: Any) -> Any:
        action, t = original(self, s, *args, **kwargs)
        if t.leader >= 0 and t.instances[t.leader].failure.startswith("leader:"):
            t = streams_system._with(t, rebalances=1)
        return action, t

    monkeypatch.setattr(streams_system.StreamsProbingSystem, "_rebalance", broken)


@pytest.mark.parametrize("variant", ["STR-M1", "STR-M5", "MV-M13", "MIG-M3", "MIG-M7"])
def test_the_delta_holds_every_state_where_the_variant_steps_otherwise(variant: str) -> None:
    entry = next(get_protocol(p) for p in ("streams_probing", "metadata_version", "zk_migration")
                 if any(v.id == variant for v in get_protocol(p).variants))
    v = entry.variant(variant)
    config = entry.configs[v.config]
    ts, base = v.system(config), entry.build(config)
    delta = variant_delta(ts, base, 0)
    assert delta.complete and delta.states
    everything = bfs_states(ts, 2**62)
    assert delta.visited == len(everything)
    # Outside the delta, the reference is there too and steps the same way: its own differential compares it.
    reference = set(bfs_states(base, 2**62))
    left = set(delta.states)
    for s in everything:
        if s not in left:
            assert s in reference
            assert set(ts.successors(s)) == set(base.successors(s))
    # ... and every state where the two step otherwise is in it, with the actions that do (a state the
    # reference never reaches: every action).
    for s in everything:
        if s in reference and set(ts.successors(s)) != set(base.successors(s)):
            assert delta.actions[s] == {a.name for a, _ in set(ts.successors(s)) ^ set(base.successors(s))}
    assert all(s in reference for s in delta.actions)
    assert variant_delta(ts, base, 0).states == delta.states  # the same on every run
    first = variant_delta(ts, base, 3)
    assert first.states == delta.states[:3] and not first.complete


def _cell(variant: str | None, tmp_path: Path, entry: Any = STREAMS) -> Any:
    name = entry.variant(variant).config if variant else "small"
    ctx = CheckContext(out_dir=tmp_path, variant=variant, differential_only=True, settings={DECISIONS: False})
    return check_z3(entry, name, entry.configs[name], ctx)


# The variants whose cell takes seconds here (the gate's ci tier runs every one: features' and most of
# metadata_version's search 13,000-47,000 states each, 5-25 s a variant).
CHEAP = [("streams_probing", v.id) for v in STREAMS.variants] + [
    ("zk_migration", v) for v in ("MIG-M2", "MIG-M3", "MIG-M5", "MIG-M6", "MIG-M7", "MIG-M8")] + [
    ("metadata_version", "MV-M13")]


@pytest.mark.parametrize(("protocol", "variant"), CHEAP, ids=[v for _, v in CHEAP])
def test_the_z3_relation_agrees_where_the_variant_steps_otherwise(protocol: str, variant: str,
                                                                   tmp_path: Path) -> None:
    report = _cell(variant, tmp_path, get_protocol(protocol))
    assert report.status == "ok", report.message
    diff = report.stats["differential"]
    assert diff["every_reachable_state"] and diff["states"] > 0 and diff["mismatch"] is None


def test_a_bug_only_a_variant_reaches_is_a_disagreement_under_it(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    assert _cell("STR-M1", tmp_path).status == "ok"
    _leader_failure_keeps_a_rebalance(monkeypatch)
    # The reference's own cell never has a leader fail: it agrees.
    assert _cell(None, tmp_path).status == "ok"
    report = _cell("STR-M1", tmp_path)
    assert report.status == "diverged", report.message
    assert "Rebalance" in report.message
    diff = report.stats["differential"]
    assert diff["scope"] == "variant delta" and diff["states"] < diff["variant_states"]


def _subscription_failure_keeps_a_rebalance(monkeypatch: pytest.MonkeyPatch) -> None:
    """The campaign's survivor at streams system.py:242: the rebalance counter is 1, not 0, once a member cannot
    build its subscription (a version above its own, adopted under KAFKA-8649's uncapped adopt: STR-M4)."""
    original = streams_system.StreamsProbingSystem._rebalance

    def broken(self: Any, s: Any, *args: Any, **kwargs: Any) -> Any:
        action, t = original(self, s, *args, **kwargs)
        if any(x.failure.startswith("subscription:") for x in t.instances) and not any(
                x.failure.startswith("subscription:") for x in s.instances):
            t = streams_system._with(t, rebalances=1)
        return action, t

    monkeypatch.setattr(streams_system.StreamsProbingSystem, "_rebalance", broken)


def test_a_variant_is_compared_under_every_profile_its_config_runs_under(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """STR-M4 (KAFKA-8649) is caught on small under kip, where no member ever fails to build its subscription;
    under kafka-2.0 one does within a few steps. The ci tier compares each variant under every profile (a
    variant that fixes its own profile, STR-M8, under that one alone), so a bug planted on that path is a
    disagreement."""
    cfg = GateConfig(["streams_probing"], {"streams_probing": []}, list(STREAMS.profiles), ["z3"], tmp_path,
                     mutants=True, mutant_checkers=["explore"], tier="ci", ci_configs={"streams_probing": []},
                     story_configs={"streams_probing": []})
    cells, _ = plan_cells(cfg)
    compared = {(c.variant, c.config.profile) for c in cells if c.variant is not None and c.differential_only}
    assert {p for v, p in compared if v == "STR-M4"} == set(STREAMS.profiles)
    assert {p for v, p in compared if v == "STR-M8"} == {"kip"}  # its build runs it under kafka
    assert len([c for c in cells if c.variant is not None and not c.differential_only]) == len(STREAMS.variants)

    def m4(profile: str) -> Any:
        ctx = CheckContext(out_dir=tmp_path / profile, variant="STR-M4", differential_only=True,
                           settings={DECISIONS: False}, options={"z3_variant_states": 2000})
        return check_z3(STREAMS, "small", dataclasses.replace(STREAMS.configs["small"], profile=profile), ctx)

    assert m4("kafka-2.0").status == "ok"
    _subscription_failure_keeps_a_rebalance(monkeypatch)
    assert m4("kip").status == "ok"  # the variant's own profile never goes there
    report = m4("kafka-2.0")
    assert report.status == "diverged" and "Rebalance" in report.message, report.message


def test_the_delta_search_is_bounded_where_the_variant_steps_as_the_reference() -> None:
    """Under kafka, STR-M4's mutation changes no step (today's member caps the version it adopts): the search
    gives up after its bound of the variant's states, not the whole space (zk MIG-M4 under kafka: 184,234)."""
    from rollcheck.smt.core import MIN_VISITED, VISITED_PER_STATE

    config = dataclasses.replace(STREAMS.configs["small"], profile="kafka")
    ts, base = STREAMS.variant("STR-M4").system(config), STREAMS.build(config)
    whole = variant_delta(ts, base, 0)
    assert whole.states == [] and whole.complete and whole.visited == 71
    bounded = variant_delta(ts, base, 1, max_visited=20)
    assert bounded.states == [] and not bounded.complete and bounded.visited == 20
    assert variant_delta(ts, base, 1).complete  # the default bound: MIN_VISITED at least
    assert MIN_VISITED < 2000 * VISITED_PER_STATE  # the ci tier's 2,000 states: 40,000 searched


def test_a_variant_whose_state_space_has_no_end_meets_its_first_disagreement(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The campaign's timeout at zk system.py:195 (IncompatibleBrokerJoins without its IBP check): the broker
    restarts one IBP lower again and again, so MIG-M7's state space (the only one with an incompatible broker
    in the ci tier) has no end. Its cell compares states as the search classifies them and stops at the first
    one the encoding does not take, instead of searching for ever."""
    from reference_impl.zk_migration import system as zk_system

    original = zk_system.ZkMigrationSystem.successors

    def lower_and_lower(self: Any, s: Any) -> Any:
        out = original(self, s)
        if self.config.incompatible_broker and s.shutdown.name == "NONE":
            for b, br in enumerate(s.brokers):
                if br.mode.name == "ZK" and br.ibp != self.config.broker_ibp:
                    out.append((zk_system._label("IncompatibleBrokerJoins", broker=b),
                                self.restart_zk_broker(s, b, True, br.ibp - 1)))
        return out

    monkeypatch.setattr(zk_system.ZkMigrationSystem, "successors", lower_and_lower)
    zk = get_protocol("zk_migration")
    report = _cell("MIG-M7", tmp_path, zk)
    assert report.status == "diverged", report.message
    diff = report.stats["differential"]
    assert diff["scope"] == "variant delta" and diff["every_reachable_state"]
    assert "successors differ for action IncompatibleBrokerJoins" in diff["mismatch"]
    assert diff["variant_states"] < 100  # within a few steps of the first restart at a lower IBP


# The two variants whose leader fails, alone: the gate's variant cells only (no reference cell).
FAILING_LEADER = dataclasses.replace(STREAMS, variants=tuple(v for v in STREAMS.variants
                                                             if v.id in ("STR-M1", "STR-M5")))


def _lookup(name: str) -> Any:
    assert name == "streams_probing"
    return FAILING_LEADER


@pytest.fixture
def gate_cfg(tmp_path: Path) -> Iterator[GateConfig]:
    yield GateConfig(["streams_probing"], {"streams_probing": []}, ["kip"], ["z3"], tmp_path / "gate",
                     {"z3_depth": 2}, mutants=True, mutant_checkers=["explore"], tier="ci",
                     ci_configs={"streams_probing": []}, parallel=1, story_configs={"streams_probing": []})


def test_the_ci_gate_compares_every_variant(tmp_path: Path) -> None:
    cfg = GateConfig(["streams_probing"], {"streams_probing": ["default"]}, ["kip"], ["explore", "z3"], tmp_path,
                     mutants=True, mutant_checkers=["explore"], tier="ci", ci_configs={"streams_probing": ["small"]})
    cells, _ = plan_cells(cfg)
    compared = [c for c in cells if c.variant is not None and c.differential_only]
    assert sorted(c.variant or "" for c in compared) == sorted(v.id for v in STREAMS.variants)
    assert {c.checker for c in compared} == {"z3"} and not any(decisions(c.settings) for c in compared)
    assert {c.label for c in compared} == {v.config for v in STREAMS.variants}
    # Without z3 among the gate's checkers, nothing is compared.
    cells, _ = plan_cells(dataclasses.replace(cfg, checkers=["explore"]))
    assert not any(c.differential_only for c in cells if c.variant is not None)


def test_a_disagreement_under_a_variant_fails_the_gate(gate_cfg: GateConfig,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    clean = run_gate(gate_cfg, lookup=_lookup)
    assert clean.findings == [], [f.message for f in clean.findings]
    assert clean.mutants is not None
    rows = clean.mutants["differentials"]
    assert {r["variant"] for r in rows} == {"STR-M1", "STR-M5"}
    assert all(r["status"] == "ok" and r["agrees"] and r["complete"] and r["states"] > 0 for r in rows)
    # The kill matrix is the explorer's: a cell that only compares does not count as a checker that missed.
    assert clean.mutants["checkers"] == ["explore"] and clean.mutants["scores"]["killed"] == 2
    assert "2 of 2 variants agree" in variant_differential_line(clean.mutants)

    _leader_failure_keeps_a_rebalance(monkeypatch)
    broken = run_gate(gate_cfg, lookup=_lookup)
    found = {f.message.split(":")[0] for f in broken.findings}
    assert found == {"under broken variant STR-M1", "under broken variant STR-M5"}, broken.findings
    assert all(f.kind == "disagreement" and f.checker == "z3" for f in broken.findings)
    assert broken.exit_code.name == "DISAGREEMENT"
    assert "STR-M1 diverged" in variant_differential_line(broken.mutants)


def test_prove_under_a_variant_runs_on_its_config_and_compares_where_it_steps_otherwise(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["prove", "streams_probing", "--variant", "STR-M1", "--differential-only", "--differential", "0",
            "--json", "--quiet", "--out", str(tmp_path)]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"] == "small" and doc["variant"] == "STR-M1"  # the config the variant is caught on
    assert doc["differential"]["scope"] == "variant delta" and doc["differential"]["every_reachable_state"]
    _leader_failure_keeps_a_rebalance(monkeypatch)
    assert main(argv) == 3
    assert "Rebalance" in json.loads(capsys.readouterr().out)["differential"]["mismatch"]
    # An unknown variant is one line naming the known ones, whatever the config.
    assert main(["prove", "streams_probing", "--variant", "STR-M99", "--differential-only"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has no variant 'STR-M99'; known: STR-M1" in err


def test_rollcheck_mutants_with_z3_reports_a_disagreement_under_a_variant(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from rollcheck.cli.commands import mutants_cmd
    from rollcheck.gate.mutants import run_mutants

    # STR-M1 alone (its z3 cell proves: BMC and k-induction), with the bug planted: Z3's counterexample no
    # longer replays on the reference, and the relation differs where STR-M1 steps otherwise.
    one = dataclasses.replace(STREAMS, variants=(STREAMS.variant("STR-M1"),))
    monkeypatch.setattr(mutants_cmd, "run_mutants", functools.partial(run_mutants, lookup=lambda _name: one))
    _leader_failure_keeps_a_rebalance(monkeypatch)
    argv = ["mutants", "--protocol", "streams_probing", "--checker", "z3", "--parallel", "1", "--quiet",
            "--out", str(tmp_path / "m")]
    assert main(argv) == 3
    out = capsys.readouterr().out
    assert "disagreement under broken variant streams_probing:STR-M1 (z3)" in out


def test_prove_names_a_counterexample_the_reference_does_not_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _leader_failure_keeps_a_rebalance(monkeypatch)
    prop = STREAMS.variant("STR-M1").expect[0]
    assert main(["prove", "streams_probing", "--variant", "STR-M1", "--property", prop, "--depth", "6",
                 "--no-differential", "--quiet", "--out", str(tmp_path)]) == 3
    out = capsys.readouterr().out
    assert f"{prop}: the Z3 counterexample does not replay on the reference" in out
