"""Z3 encoding of KIP-584 (model/features.py) checked against the reference implementation."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from model.features import FeaturesZ3
from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import PROFILES
from rollcheck.explore.explorer import ExploreOptions, explore, reachable_states
from rollcheck.smt.core import bfs_states, bmc, check_parameters, check_successors, k_induction, replay
from tests.z3_checks import assert_shortest_replayed_refutation

ENTRY = get_protocol("features")


def system(config: str, profile: str, variant: str | None = None) -> Any:
    cfg = dataclasses.replace(ENTRY.configs[config], profile=profile)
    return ENTRY.build(cfg) if variant is None else ENTRY.variant(variant).build(cfg)


@pytest.mark.parametrize(("config", "states"), [("small", 60), ("default", 12)])
@pytest.mark.parametrize("profile", PROFILES)
def test_successors_equal_on_sampled_states(config: str, states: int, profile: str) -> None:
    ts = system(config, profile)
    res = check_successors(FeaturesZ3(ts), ts, bfs_states(ts, states))
    assert res.ok, str(res.mismatch)
    assert res.states == states and res.transitions > states


@pytest.mark.parametrize("profile", PROFILES)
def test_multi_update_requests_under_atomic_semantics_match_the_reference(profile: str) -> None:
    """The ``atomic`` config's two-update requests (the revision: one failure and nothing is applied) are
    encoded: the relation per request equals the reference's on every reachable state, and FEAT-06 is proved.
    Until they were, the reference's all-or-nothing branch (features api.py:602) ran on no campaign config."""
    ts = system("atomic", profile)
    sym = FeaturesZ3(ts)
    assert any(len(req.feature_updates) == 2 for req in ts.requests)
    res = check_parameters(sym, ts, bfs_states(ts, 300), sym.parameter_relations())
    assert res.ok, str(res.mismatch)
    assert res.states == 300 or res.states == len(reachable_states(ts)[0])
    assert k_induction(sym, "FEAT-06", 1, timeout=60).status == "proved"


@pytest.mark.parametrize(("variant", "prop"), [("FEAT-M1", "FEAT-01"), ("FEAT-M5", "FEAT-01"),
                                               ("FEAT-M7", "FEAT-08")])
@pytest.mark.parametrize("profile", PROFILES)
def test_bmc_refutes_broken_variant(variant: str, prop: str, profile: str) -> None:
    ts = system("small", profile, variant)
    res = bmc(FeaturesZ3(ts), prop, 6, timeout=60)
    assert res.status == "refuted" and res.trace is not None
    # BMC deepens one step at a time: the explorer finds nothing shorter.
    shortest = {x.property_id: x.depth for x in explore(ts, ExploreOptions(stop_at_first=False,
                                                                           max_depth=res.depth)).violations}
    assert res.depth == shortest[prop] == len(res.trace.actions)
    replay(ts, res.trace.states, [a.name for a in res.trace.actions])
    assert not {p.id: p for p in ts.properties()}[prop].holds(res.trace.states[-1])


@pytest.mark.parametrize("profile", PROFILES)
def test_invariants_proved_by_induction(profile: str) -> None:
    sym = FeaturesZ3(system("small", profile))
    for prop in ("FEAT-01", "FEAT-02", "FEAT-08", "FEAT-09", "FEAT-11"):
        res = k_induction(sym, prop, 1, timeout=60)
        assert res.status == "proved", (prop, res.message)


def test_k_induction_refutes_instead_of_proving_a_false_invariant() -> None:
    res = k_induction(FeaturesZ3(system("small", "kip", "FEAT-M1")), "FEAT-01", 3, timeout=60)
    assert res.status == "refuted" and res.trace is not None


# ---- step properties (FEAT-03 ... FEAT-07)

STEP = ("FEAT-03", "FEAT-04", "FEAT-05", "FEAT-06", "FEAT-07", "FEAT-12", "FEAT-14", "FEAT-15", "FEAT-16")


def test_every_step_property_is_encoded() -> None:
    sym = FeaturesZ3(system("small", "kip"))
    assert set(sym.step_properties) == {p.id for p in sym.ts.properties() if p.kind == "step"} == set(STEP)
    assert sym.encoded() == ["FEAT-01", "FEAT-02", "FEAT-08", "FEAT-09", "FEAT-11", *STEP]


@pytest.mark.parametrize("profile", PROFILES)
def test_update_features_split_by_request_matches_the_reference(profile: str) -> None:
    """UpdateFeatures is split into one relation per request (the action's updates and dry_run)."""
    ts = system("small", profile)
    sym = FeaturesZ3(ts)
    assert len(sym.parameter_relations()) == len(ts.requests)
    res = check_parameters(sym, ts, bfs_states(ts, 40), sym.parameter_relations())
    assert res.ok, str(res.mismatch)


def _step_variants() -> list[Any]:
    return [pytest.param(v.id, profile, id=f"{v.id}-{profile}") for v in ENTRY.variants
            if set(v.expect) & set(STEP) for profile in PROFILES]


def test_every_variant_is_encodable() -> None:
    """FEAT-M3 too: it lives on the multi-update ``atomic`` config, which the encoding once refused."""
    for v in ENTRY.variants:
        FeaturesZ3(system(v.config, "kip", v.id))


@pytest.mark.parametrize(("variant", "profile"), _step_variants())
def test_bmc_refutes_broken_variant_through_a_step_property(variant: str, profile: str) -> None:
    v = ENTRY.variant(variant)
    ts = system(v.config, profile, variant)
    sym = FeaturesZ3(ts)
    for prop in (p for p in v.expect if p in STEP):
        res = bmc(sym, prop, 7, timeout=60)
        shortest = {x.property_id: x.depth for x in explore(ts, ExploreOptions(stop_at_first=False,
                                                                               max_depth=res.depth)).violations}
        assert_shortest_replayed_refutation(ts, res, prop, shortest.get(prop, -1))


@pytest.mark.parametrize("profile", PROFILES)
def test_step_properties_hold_on_the_reference(profile: str) -> None:
    sym = FeaturesZ3(system("small", profile))
    for prop in STEP:
        res = bmc(sym, prop, 3, timeout=60)
        assert res.status == "checked" and res.depth == 3, (prop, res.line)
        # With the strengthening (no cached epoch above the node's, no queue without a controller), all are
        # 1-inductive.
        res = k_induction(sym, prop, 1, timeout=60)
        assert res.status == "proved", (prop, res.message)
        assert res.strengthening == ("caches-behind-node", "queue-needs-controller"), prop


def test_feat14_needs_its_strengthening() -> None:
    sym = FeaturesZ3(system("small", "kip"))
    assert k_induction(sym, "FEAT-14", 1, timeout=60, strengthen=("caches-behind-node",)).status == "unknown"


def test_feat04_needs_its_strengthening() -> None:
    sym = FeaturesZ3(system("small", "kip"))
    assert k_induction(sym, "FEAT-04", 1, timeout=60, strengthen=()).status == "unknown"
