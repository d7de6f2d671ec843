"""Z3 encoding of KIP-268 (model/streams_probing.py) checked against the reference implementation."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from model.streams_probing import StreamsProbingZ3, failure_text, parse_failure
from rollcheck.core.registry import get_protocol
from rollcheck.explore.explorer import ExploreOptions, explore
from rollcheck.smt.core import ReplayError, bfs_states, bmc, check_parameters, check_successors, k_induction, replay
from tests.z3_checks import assert_shortest_replayed_refutation

ENTRY = get_protocol("streams_probing")
PROFILES = ENTRY.profiles  # kip, kafka, kafka-2.0


def system(config: str, profile: str, variant: str | None = None) -> Any:
    cfg = dataclasses.replace(ENTRY.configs[config], profile=profile)
    return ENTRY.build(cfg) if variant is None else ENTRY.variant(variant).build(cfg)


@pytest.mark.parametrize("profile", PROFILES)
def test_successors_equal_on_every_small_state(profile: str) -> None:
    ts = system("small", profile)
    states = bfs_states(ts, 10_000)
    res = check_successors(StreamsProbingZ3(ts), ts, states)
    assert res.ok, str(res.mismatch)
    assert res.states == explore(ts).distinct_states  # the whole reachable set, not a sample
    assert not res.excluded


@pytest.mark.parametrize("profile", PROFILES)
def test_successors_equal_on_default_sample(profile: str) -> None:
    ts = system("default", profile)
    res = check_successors(StreamsProbingZ3(ts), ts, bfs_states(ts, 12))
    assert res.ok, str(res.mismatch)
    assert res.states == 12


def test_successor_check_catches_a_wrong_encoding() -> None:
    """A restart that forgets upgrade.from (an encoding bug on purpose) must be reported as a mismatch."""

    class Wrong(StreamsProbingZ3):
        def configured(self, rel: Any, uf: bool, restart: bool = False) -> int:
            return super().configured(rel, False, restart)

    ts = system("pre20", "kip")
    states = [s for s in bfs_states(ts, 400) if any(a.name == "RollingBounce" for a, _ in ts.successors(s))]
    assert states
    res = check_successors(Wrong(ts), ts, states[:3])
    assert res.mismatch is not None
    assert res.mismatch.action == "RollingBounce"
    assert res.mismatch.reference != res.mismatch.z3


def test_failure_texts_round_trip() -> None:
    for text in ("", "subscription: version must be between 1 and 3; was: 4",
                 "leader: Received a future (version probing) subscription (version: 4) and an incompatible pre "
                 "Kafka 2.0 subscription (version: 2) at the same time.", "shutdown: ASSIGNMENT_ERROR",
                 "member: Can't upgrade to metadata version greater than we support"):
        assert failure_text(*parse_failure(text)) == text


@pytest.mark.parametrize(("variant", "profile", "prop"), [
    ("STR-M1", "kip", "STR-06"), ("STR-M4", "kip", "STR-05"),
    ("STR-M5", "kip", "STR-06"), ("STR-M8", "kafka", "STR-06"),
    ("STR-M4", "kafka-2.0", "STR-05"), ("STR-M4", "kafka-2.0", "STR-06"),  # KAFKA-8649: 2.0 with 2.1.1
])
def test_bmc_refutes_broken_variant(variant: str, profile: str, prop: str) -> None:
    v = ENTRY.variant(variant)
    ts = system(v.config, profile, variant)
    res = bmc(StreamsProbingZ3(ts), prop, 8, timeout=60)
    assert res.status == "refuted"
    assert res.trace is not None
    # BMC deepens one step at a time, so its trace is a shortest one: as long as the explorer's.
    shortest = {x.property_id: x.depth for x in explore(ts, ExploreOptions(stop_at_first=False,
                                                                           max_depth=res.depth)).violations}
    assert res.depth == shortest[prop] == len(res.trace.actions)
    # The trace replays on the reference step by step and its last state violates the property there.
    replay(ts, res.trace.states, [a.name for a in res.trace.actions])
    inv = {p.id: p for p in ts.properties()}[prop]
    assert not inv.holds(res.trace.states[-1])


@pytest.mark.parametrize("profile", PROFILES)
def test_reference_holds_to_depth_and_str05_is_inductive(profile: str) -> None:
    sym = StreamsProbingZ3(system("small", profile))
    assert bmc(sym, "STR-06", 4, timeout=60).status == "checked"
    res = k_induction(sym, "STR-05", 1, timeout=60)
    assert res.status == "proved", res.message
    # Under kafka-2.0 a 2.0 member adopts uncapped (Kafka 2.0's onAssignment): STR-05 rests on what the leaders
    # send, the strengthening; without it, it is not inductive there.
    assert res.strengthening == (("inbox-supported-within-own",) if profile == "kafka-2.0" else ())
    if profile == "kafka-2.0":
        assert k_induction(sym, "STR-05", 1, timeout=60, strengthen=()).status == "unknown"
    # STR-06 is not inductive on its own: an induction claim for it would be a bug in the engine.
    assert k_induction(sym, "STR-06", 1, timeout=60).status == "unknown"


def test_replay_rejects_a_step_the_reference_cannot_take() -> None:
    ts = system("small", "kip")
    s0 = next(iter(ts.initial_states()))
    with pytest.raises(ReplayError):
        replay(ts, [s0, s0], ["Rebalance"])


# ---- step properties (STR-01 ... STR-04)

STEP = ("STR-01", "STR-02", "STR-03", "STR-04")


def test_every_step_property_is_encoded() -> None:
    sym = StreamsProbingZ3(system("small", "kip"))
    assert set(sym.step_properties) == {p.id for p in sym.ts.properties() if p.kind == "step"} == set(STEP)


@pytest.mark.parametrize(("config", "states"), [("small", 10_000), ("pre20", 150)])
@pytest.mark.parametrize("profile", PROFILES)
def test_actions_split_by_parameters_match_the_reference(config: str, states: int, profile: str) -> None:
    """Rebalance per leader and each member step per instance make the reference's steps with that
    parameter (on small: every reachable state)."""
    ts = system(config, profile)
    sym = StreamsProbingZ3(ts)
    res = check_parameters(sym, ts, bfs_states(ts, states), sym.parameter_relations())
    assert res.ok, str(res.mismatch)


def _step_variants() -> list[Any]:
    return [pytest.param(v.id, profile, id=f"{v.id}-{profile}") for v in ENTRY.variants
            if set(v.expect) & set(STEP) for profile in PROFILES]


@pytest.mark.parametrize(("variant", "profile"), _step_variants())
def test_bmc_refutes_broken_variant_through_a_step_property(variant: str, profile: str) -> None:
    v = ENTRY.variant(variant)
    ts = system(v.config, profile, variant)
    sym = StreamsProbingZ3(ts)
    found = {x.property_id: x.depth for x in explore(ts, ExploreOptions(stop_at_first=False)).violations}
    for prop in (p for p in v.expect if p in STEP):
        res = bmc(sym, prop, 8, timeout=60)
        if prop not in found:
            # STR-M7 is caught by STR-06 only: no reachable step breaks STR-01, and Z3 agrees.
            assert (variant, prop) == ("STR-M7", "STR-01") and res.status == "checked", (prop, res.line)
            continue
        assert_shortest_replayed_refutation(ts, res, prop, found[prop])


@pytest.mark.parametrize("profile", PROFILES)
def test_step_properties_hold_on_the_reference(profile: str) -> None:
    sym = StreamsProbingZ3(system("small", profile))
    for prop in STEP:
        res = bmc(sym, prop, 6, timeout=60)
        assert res.status == "checked" and res.depth == 6, (prop, res.line)
    for prop in ("STR-02", "STR-03"):
        res = k_induction(sym, prop, 1, timeout=60)
        assert res.status == "proved", (prop, res.message)


# ---- procedure "operator" (the runbooks'): the operator chooses each bounce


@pytest.mark.parametrize("profile", PROFILES)
def test_operator_procedure_encoded(profile: str) -> None:
    """Under procedure "operator" (any instance, upgrade.from removed or set, up to the cap) the Z3 relation
    makes the reference's successors, and BMC finds the shortest STR-06 break the explorer finds: a bounce
    without upgrade.from while a 1.1 instance can lead."""
    cfg = dataclasses.replace(ENTRY.configs["pre20"], profile=profile, instances=2, max_crashes=0,
                              procedure="operator")
    ts = ENTRY.build(cfg)
    sym = StreamsProbingZ3(ts)
    res = check_successors(sym, ts, bfs_states(ts, 120))
    assert res.ok, str(res.mismatch)
    found = {x.property_id: x.depth for x in explore(ts, ExploreOptions(stop_at_first=False)).violations}
    assert set(found) == {"STR-06"}
    refuted = bmc(sym, "STR-06", 6, timeout=60)
    assert refuted.status == "refuted" and refuted.depth == found["STR-06"]
    assert bmc(sym, "STR-07", 6, timeout=60).status == "checked"
