"""Z3 encoding of KIP-778 (model/metadata_version.py) checked against the reference implementation."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from model.core import bfs_states, bmc, check_successors, replay
from model.metadata_version import MetadataVersionZ3
from rollcheck.explorer import explore
from rollcheck.registry import get_protocol
from rollcheck.transition import PROFILES

ENTRY = get_protocol("metadata_version")


def system(config: str, profile: str, variant: str | None = None) -> Any:
    cfg = dataclasses.replace(ENTRY.configs[config], profile=profile)
    return ENTRY.build(cfg) if variant is None else ENTRY.variant(variant).build(cfg)


# large: crashes and failover; kafka-catalog: Kafka's 27 levels, its floor and controller registration
@pytest.mark.parametrize(("config", "states"), [("small", 40), ("large", 12), ("kafka-catalog", 12)])
@pytest.mark.parametrize("profile", PROFILES)
def test_successors_equal_on_sampled_states(config: str, states: int, profile: str) -> None:
    ts = system(config, profile)
    res = check_successors(MetadataVersionZ3(ts), ts, bfs_states(ts, states))
    assert res.ok, str(res.mismatch)
    assert res.states == states and not res.excluded


@pytest.mark.parametrize(("variant", "profile", "prop"), [
    ("MV-M8", "kip", "MV-05"), ("MV-M8", "kafka", "MV-05"), ("MV-M9", "kip", "MV-11"),
])
def test_bmc_refutes_broken_variant(variant: str, profile: str, prop: str) -> None:
    ts = system(ENTRY.variant(variant).config, profile, variant)
    res = bmc(MetadataVersionZ3(ts), prop, 6, timeout=60)
    assert res.status == "refuted" and res.trace is not None
    shortest = {x.property_id: x.depth for x in explore(ts, stop_at_first=False, max_depth=res.depth).violations}
    assert res.depth == shortest[prop] == len(res.trace.actions)
    replay(ts, res.trace.states, [a.name for a in res.trace.actions])
    assert not {p.id: p for p in ts.invariants()}[prop].holds(res.trace.states[-1])


@pytest.mark.parametrize("profile", PROFILES)
def test_reference_invariants_hold_to_depth(profile: str) -> None:
    sym = MetadataVersionZ3(system("small", profile))
    for prop in ("MV-01", "MV-05", "MV-11"):
        assert bmc(sym, prop, 2, timeout=60).status == "checked"


@pytest.mark.parametrize("profile", PROFILES)
def test_mv11_proved_by_induction(profile: str) -> None:
    from model.core import k_induction

    res = k_induction(MetadataVersionZ3(system("small", profile)), "MV-11", 1, timeout=60)
    assert res.status == "proved", res.message
