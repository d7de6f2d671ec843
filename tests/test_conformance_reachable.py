"""conform's (c): the reference's reachable views against TLC's, and the walk that stops at the first view
outside TLC's set, so a reference a bug has blown up (a bound no longer counted) is seen at once rather than
after millions of states or never."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from rollcheck.core.errors import UserError
from rollcheck.explore.explorer import reachable_states
from rollcheck.tla.conformance import reference_views
from tests.toy import ToyConfig, ToySystem


def test_every_view_when_nothing_bounds_the_walk() -> None:
    ts = ToySystem(ToyConfig(bound=3))
    views, n = reference_views(ts)
    assert n == len(reachable_states(ts)[0]) and len(views) == n  # the toy's view is its whole state


def test_the_walk_stops_at_the_first_view_outside_the_spec() -> None:
    spec_views, _ = reference_views(ToySystem(ToyConfig(bound=3)))
    blown_up = ToySystem(ToyConfig(bound=10_000))  # far more states than the limit below
    views, n = reference_views(blown_up, limit=5_000, within=spec_views)
    outside = views - spec_views
    assert len(outside) == 1 and n < 5_000  # the one view that stopped it, found within a few states
    # The same reference inside the spec's views walks all of them and reports none outside.
    assert reference_views(ToySystem(ToyConfig(bound=3)), within=spec_views)[0] == spec_views


def test_a_reference_past_the_limit_is_one_clear_error() -> None:
    with pytest.raises(UserError, match="more than 50 reachable states: too large for a conformance check"):
        reference_views(ToySystem(ToyConfig(bound=40)), limit=50)


def test_reachable_states_stops_where_admit_refuses() -> None:
    ts = ToySystem(ToyConfig(bound=3))
    seen, _ = reachable_states(ts, admit=lambda s: s.a + s.b < 2)
    assert any(s.a + s.b == 2 for s in seen) and len(seen) < len(reachable_states(ts)[0])
    assert sum(s.a + s.b >= 2 for s in seen) == 1  # the refused state is the last one reached


@pytest.mark.tlc
def test_a_reference_that_reaches_less_than_the_spec_is_a_divergence(tmp_path: Path) -> None:
    """The other way round: every reference view is among TLC's (the walk goes to its end), and the views only
    TLC reaches are counted. Here the reference may restart no broker where the spec's constants allow one."""
    from rollcheck.core.registry import get_protocol
    from rollcheck.tla.conformance import compare_reachable
    from specs.features import BINDING

    entry = get_protocol("features")
    config = entry.configs["no-deprecation"]
    assert config.max_restarts == 1
    divergences, res, views, states = compare_reachable(
        BINDING, entry.build(config), entry.build(replace(config, max_restarts=0)), tmp_path, 600.0)
    assert not res.error and res.distinct_states is not None and views == states < res.distinct_states
    assert len(divergences) == 1
    assert f"{res.distinct_states - views} only in TLC, 0 only in the reference" in divergences[0].message
