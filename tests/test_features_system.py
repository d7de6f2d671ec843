"""KIP-584 system level: exhaustive exploration, the broken variants (explorer and Hypothesis), the
incompatible-broker race, traces, and the CLI on this protocol."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from reference_impl.features.system import BrokerStatus, FeaturesState, FeaturesSystem
from rollcheck.cli import main
from rollcheck.explorer import explore
from rollcheck.hypothesis_machine import PropertyViolated, machine_for
from rollcheck.registry import get_protocol
from rollcheck.traces import canonical_view, read_itf, trace_from_itf, write_itf
from rollcheck.transition import Action

ENTRY = get_protocol("features")


@pytest.mark.parametrize("profile", ["kip", "kafka"])
@pytest.mark.parametrize("config", ["small", "atomic"])
def test_exhaustive_exploration_holds(profile: str, config: str) -> None:
    ts = ENTRY.build(replace(ENTRY.configs[config], profile=profile))
    r = explore(ts, stop_at_first=False)
    assert r.complete and r.ok, [(v.property_id, v.trace.actions) for v in r.violations]
    assert all(p.status == "holds" for p in r.properties)
    assert r.distinct_states > 200


def test_small_config_counts_are_stable() -> None:
    # The count other engines (Spark, TLC) must reproduce; a change here is a change of the model.
    r = explore(ENTRY.build(ENTRY.configs["small"]))
    assert (r.distinct_states, r.depth) == (26877, 15)


@pytest.mark.parametrize("variant", [v.id for v in ENTRY.variants])
def test_variant_caught_by_explorer_with_shortest_trace(variant: str, tmp_path: Path) -> None:
    v = ENTRY.variant(variant)
    ts = v.build(ENTRY.configs[v.config])
    r = explore(ts, config_name=v.config)
    assert r.violations, f"{variant} survived the explorer"
    violation = r.violations[0]
    assert violation.property_id in v.expect
    # The counterexample replays step by step on the broken system and round-trips through ITF.
    steps = violation.trace.steps
    for before, after in itertools.pairwise(steps):
        assert (after.action, after.state) in list(ts.successors(before.state))
    back = trace_from_itf(read_itf(write_itf(tmp_path / "cex.itf.json", violation.trace, ts)), ts)
    assert back.states == violation.trace.states


@pytest.mark.parametrize("variant", [v.id for v in ENTRY.variants])
def test_variant_caught_by_hypothesis(variant: str) -> None:
    v = ENTRY.variant(variant)
    ts = v.build(ENTRY.configs[v.config])
    # Catching is what is tested here; shrinking is the fuzz command's job (and slow).
    run = settings(max_examples=400, stateful_step_count=30, derandomize=True, database=None, deadline=None,
                   suppress_health_check=list(HealthCheck), phases=(Phase.generate,))
    with pytest.raises(PropertyViolated) as caught:
        run_state_machine_as_test(machine_for(ts), settings=run)
    assert caught.value.property_id in v.expect


def test_reference_holds_under_hypothesis() -> None:
    ts = ENTRY.build(ENTRY.configs["default"])
    run_state_machine_as_test(machine_for(ts), settings=settings(
        max_examples=60, stateful_step_count=25, derandomize=True, database=None, deadline=None,
        suppress_health_check=list(HealthCheck)))


def _do(ts: FeaturesSystem, s: FeaturesState, label: str) -> FeaturesState:
    for a, t in ts.successors(s):
        if repr(a).startswith(label):
            return t
    raise AssertionError(f"{label} not enabled; enabled: {[repr(a) for a, _ in ts.successors(s)]}")


def test_rolling_upgrade_then_finalize_story() -> None:
    """KIP-584 "Use case": roll both brokers onto the new binary, then finalize group_coordinator v2;
    the brokers learn it through their watches."""
    ts = ENTRY.build(ENTRY.configs["small"])
    s = next(iter(ts.initial_states()))
    s = _do(ts, s, "ElectController(broker=0)")
    s = _do(ts, s, "RestartBroker(broker=0, release='new')")   # the controller bounces onto new
    s = _do(ts, s, "StartBroker(broker=0)")
    s = _do(ts, s, "RestartBroker(broker=1, release='new')")
    s = _do(ts, s, "ElectController(broker=0)")
    s = _do(ts, s, "StartBroker(broker=1)")                    # new binary, registration queued
    assert s.registration_queue == (1,)
    s = _do(ts, s, "ProcessBrokerRegistration(broker=1)")
    s = _do(ts, s, "UpdateFeatures(updates=(('group_coordinator', 2, False),), dry_run=False, result=('NONE', 'NONE')")
    assert s.node is not None and s.node.get("group_coordinator").max_version_level == 2  # type: ignore[union-attr]
    assert all(not b.notified for b in s.brokers)
    s = _do(ts, s, "DeliverFeaturesNotification(broker=1)")
    assert s.brokers[1].status is BrokerStatus.RUNNING and s.brokers[1].cache_epoch == s.node.epoch


def test_race_window_reaches_shutdown() -> None:
    """Some reachable state has a running, unregistered, incompatible broker; from it the notification
    shuts the broker down (the window the KIP describes, and its closing)."""
    ts = ENTRY.build(ENTRY.configs["small"])
    seen: set[FeaturesState] = set(ts.initial_states())
    frontier = list(seen)
    found = False
    while frontier and not found:
        nxt = []
        for s in frontier:
            for a, t in ts.successors(s):
                if (a.name == "DeliverFeaturesNotification" and
                        t.brokers[a["broker"]].status is BrokerStatus.EXITED and
                        s.brokers[a["broker"]].status is BrokerStatus.RUNNING):
                    found = True
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    assert found


def test_states_encode_canonically_and_views_are_itf() -> None:
    ts = ENTRY.build(ENTRY.configs["small"])
    r = explore(ts, max_depth=6)
    assert r.distinct_states > 100
    s = next(iter(ts.initial_states()))
    for a, t in ts.successors(s):
        assert ts.decode(ts.encode(t)) == t
        assert isinstance(a, Action)
        canonical_view(ts.view(t))


def test_config_validation_errors() -> None:
    from rollcheck.configs import override
    from rollcheck.errors import UserError

    for table, msg in [({"semantics": "sometimes"}, "semantics"), ({"initial_release": "nope"}, "initial_release"),
                       ({"brokers": 0}, "brokers"), ({"mutations": ["no_such_bug"]}, "unknown mutations")]:
        with pytest.raises(UserError, match=msg):
            override(ENTRY.configs["small"], table)


def test_cli_explore_json_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "features", "--config", "small", "--json", "--quiet", "--out", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["distinct_states"] == 26877 and doc["violations"] == [] and doc["complete"]
    assert main(["explore", "features", "--config", "small", "--variant", "FEAT-M2", "--quiet",
                 "--out", str(tmp_path)]) == 1
    assert list(tmp_path.rglob("FEAT-05.itf.json"))
    assert main(["explore", "features", "--config", "huge"]) == 2
    assert "unknown config 'huge'" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text("[config]\nbrokers = 'two'\n")
    assert main(["explore", "features", "--config", str(bad)]) == 2
    assert "must be an integer" in capsys.readouterr().err
    assert main(["explore", "nope"]) == 2
    assert main(["list", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert "features" in [p["name"] for p in listing["protocols"]]
