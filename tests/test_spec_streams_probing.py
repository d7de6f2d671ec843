"""specs/StreamsProbing.tla under TLC: the same reachable states as the reference, two-way trace
conformance, the broken variants, and a deliberately divergent reference caught by each check."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from properties.streams_probing import PROPERTIES
from rollcheck.cli import main
from rollcheck.core.registry import get_protocol
from rollcheck.explore.explorer import ExploreOptions, explore, reachable_states
from rollcheck.tla.binding import binding_for, operator_name, write_model
from rollcheck.tla.conformance import conform
from rollcheck.tla.drift import drift
from rollcheck.tla.tlc import run_tlc
from rollcheck.tla.witness import check_witnesses

pytestmark = pytest.mark.tlc
ENTRY = get_protocol("streams_probing")
BINDING = binding_for("streams_probing")
PROFILES = ENTRY.profiles  # kip, kafka, kafka-2.0


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("config", ["small", "default"])
def test_conformance(config: str, profile: str, tmp_path: Path) -> None:
    ts = ENTRY.build(replace(ENTRY.configs[config], profile=profile))
    r = conform(BINDING, ts, ts, tmp_path, config_name=config, traces=25, depth=30)
    assert r.ok, [str(d) for d in r.divergences] + [r.error]
    assert r.tlc_states == r.reference_views == r.reference_states
    assert r.replayed_traces >= 25 and r.validated_traces == 25


@pytest.mark.parametrize("profile", PROFILES)
def test_conformance_under_the_operator_procedure(profile: str, tmp_path: Path) -> None:
    """procedure "operator" (the runbooks': any instance bounced, upgrade.from removed or set, up to the cap):
    the spec's RollingBounce makes the same reachable states and traces, the STR-06 break included."""
    cfg = replace(ENTRY.configs["pre20"], profile=profile, instances=2, procedure="operator")
    ts = ENTRY.build(cfg)
    r = conform(BINDING, ts, ts, tmp_path, config_name="pre20-operator", traces=25, depth=30)
    assert r.ok, [str(d) for d in r.divergences] + [r.error]
    assert r.tlc_states == r.reference_views == r.reference_states == 3060


def test_tlc_finds_the_kip_counterexample_and_every_variant(tmp_path: Path) -> None:
    cases = [("no-upgrade-from", ENTRY.build(ENTRY.configs["no-upgrade-from"]), ("STR-06",))]
    cases += [(v.id, v.build(ENTRY.configs[v.config]), v.expect) for v in ENTRY.variants]
    for name, ts, expect in cases:
        model = write_model(BINDING, ts, tmp_path / name)
        res = run_tlc(model.directory, model.module, model.cfg)
        assert res.violated in {operator_name(e) for e in expect}, (name, res.violated, res.error)
        assert res.trace, name


def test_tlc_finds_kafka_8649_under_kafka_2_0(tmp_path: Path) -> None:
    """STR-M4 under kafka-2.0 (2.0 -> 2.1.1 as shipped): TLC breaks STR-05 at the explorer's depth, and the
    reference (the 2.1 branch's fix) holds on the same config."""
    cfg = replace(ENTRY.configs["small"], profile="kafka-2.0")
    ts = ENTRY.variant("STR-M4").system(cfg)
    depth = {v.property_id: v.depth for v in explore(ts, ExploreOptions(stop_at_first=False)).violations}["STR-05"]
    model = write_model(BINDING, ts, tmp_path / "m4")
    res = run_tlc(model.directory, model.module, model.cfg)
    assert res.violated == "STR_05" and len(res.trace) == depth + 1, (res.violated, res.error)
    model = write_model(BINDING, ENTRY.build(cfg), tmp_path / "reference")
    res = run_tlc(model.directory, model.module, model.cfg)
    assert res.violated is None and not res.error and res.distinct_states == 71, (res.violated, res.error)


def test_a_divergent_reference_is_caught_by_each_check(tmp_path: Path) -> None:
    """The reference with one rule changed (the kip leader no longer asks for the final rebalance) against
    the unchanged spec: (a), (b) and (c) each report it."""
    spec_ts = ENTRY.build(ENTRY.configs["default"])
    divergent = ENTRY.build(replace(ENTRY.configs["default"], mutations=frozenset({"no_leader_follow_up"})))
    r = conform(BINDING, spec_ts, divergent, tmp_path, config_name="default", traces=40, depth=30)
    # The reference's walk stops at its first view outside TLC's (a reference blown up by a bug is seen at once).
    assert r.by_check("reachable") and "only in the reference" in r.by_check("reachable")[0].message
    replay = r.by_check("replay")
    assert replay and any("follow_up" in d.differences for d in replay)
    assert r.by_check("validation"), "TLC accepted every walk of the divergent reference"
    assert all(d.step > 0 and d.action for d in r.by_check("validation"))


def test_cli_tlc_and_conform(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tlc", "streams_probing", "--config", "small", "--out", str(tmp_path), "--quiet"]) == 0
    assert main(["tlc", "streams_probing", "--config", "no-upgrade-from", "--out", str(tmp_path), "--json"]) == 1
    out = capsys.readouterr().out
    assert '"violated_property": "STR-06"' in out and '"replays_on_reference": true' in out
    assert (tmp_path / "streams_probing-no-upgrade-from-kip" / "counterexamples" / "STR-06.itf.json").is_file()
    assert main(["conform", "streams_probing", "--config", "small", "--profile", "kafka", "--traces", "5",
                 "--out", str(tmp_path), "--quiet"]) == 0


def test_cli_tlc_with_a_relative_out_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default --out is relative (rollcheck-out/...) and TLC runs inside the model directory: the paths
    handed to it must not be resolved twice."""
    monkeypatch.chdir(tmp_path)
    assert main(["tlc", "streams_probing", "--config", "small", "--out", "rel/out", "--quiet"]) == 0
    assert (tmp_path / "rel" / "out" / "streams_probing-small-kip" / "model" / "tlc-output.txt").is_file()


def test_no_drift_against_every_emitted_action() -> None:
    emitted: set[str] = set()
    for name in ("default", "kafka-latest", "no-upgrade-from"):
        for profile in PROFILES:
            cfg = replace(ENTRY.configs[name], profile=profile)
            if cfg.new.name == "3.9" and profile != "kafka":
                continue
            emitted |= reachable_states(ENTRY.build(cfg))[1]
    # Every declared id (the witnesses of every config included, not only small's) has its operator.
    ids = list(PROPERTIES.ids)
    assert set(ids) >= {p.id for p in ENTRY.build(ENTRY.configs["small"]).properties()}
    assert drift(BINDING, ids, emitted) == []


@pytest.mark.parametrize(("config", "profile"), [("small", "kip"), ("from-0.10.0", "kip"), ("small", "kafka-2.0")])
def test_tlc_reaches_each_witness_at_the_explorers_depth(config: str, profile: str, tmp_path: Path) -> None:
    """The spec's STR_W* operators are the reference's witnesses: TLC (each as a negated invariant) reaches
    every witness the config applies at the depth the explorer does (small: STR-W1..W3 and W5, under kafka-2.0
    without STR-W3; from-0.10.0: the two-bounce STR-W4 and W5)."""
    ts = ENTRY.build(replace(ENTRY.configs[config], profile=profile))
    ids = [p.id for p in ts.properties() if p.kind == "witness"]
    r = explore(ts, ExploreOptions(stop_at_first=False))
    runs = check_witnesses(BINDING, ts, tmp_path, ids, timeout=600, workers=1)
    assert not runs.error and not runs.vacuous, (runs.error, runs.vacuous)
    assert {w: f"reached at depth {runs.depth(w)}" for w in ids} == {
        p.id: p.status for p in r.properties if p.kind == "witness"}
