"""Trace validation (rollcheck/explore/validate.py) on the engine's toy protocol: an observed run, seen in part,
is met by a run of the model, with unobserved transitions between observations up to a bound; the first
observation nothing meets is reported with the closest model states; a property the observations force to fail is
reported, and one that some hidden state satisfies is not."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise
from typing import Any

import pytest

from rollcheck.explore.validate import differences, validate
from tests.toy import ToyConfig, ToySystem

TOY = ToySystem(ToyConfig(bound=4))


def test_differences_name_each_observed_leaf() -> None:
    view = {"a": 1, "b": 2, "nodes": ({"id": 0, "up": True}, {"id": 1, "up": False}), "tags": frozenset({"x"})}
    assert differences({"a": 1}, view) == []
    assert differences({"nodes": [{"up": True}, {"up": False}]}, view) == []
    assert differences({"tags": ["x"]}, view) == []
    assert differences({"a": 2, "nodes": [{"up": False}, {}], "c": 0}, view) == [
        "a: observed 2, model 1", "nodes[0].up: observed False, model True", "c: observed 0, not in the model's view"]
    assert differences({"nodes": [{}]}, view) == ["nodes: observed [{}], model " + repr(view["nodes"])]


def _is_a_run(result_run: list[tuple[Any, Mapping[str, object]]], observed: list[dict[str, int]]) -> bool:
    """The run is the model's (each step a transition of the toy) and meets the observations in order."""
    views = [v for _, v in result_run]
    for (_, before), (action, after) in pairwise(result_run):
        state = next(s for s in _states() if TOY.view(s) == before)
        if (action, TOY.view(next(t for a, t in TOY.successors(state) if a == action))) != (action, after):
            return False
    at = 0
    for o in observed:
        while at < len(views) and differences(o, views[at]):
            at += 1
        if at == len(views):
            return False
    return differences(observed[-1], views[-1]) == []


def _states() -> list[Any]:
    from rollcheck.explore.explorer import reachable_states

    return list(reachable_states(TOY)[0])


def test_a_run_seen_in_part_is_met_and_an_agreeing_run_is_given() -> None:
    observed = [{"a": 0, "b": 0}, {"a": 1}, {"b": 1}, {"a": 0, "b": 0}]
    result = validate(TOY, observed)
    assert result.valid and result.met == 4 and result.failed_step is None
    assert result.run[0][0] is None and _is_a_run(result.run, observed)
    assert len(result.candidates) == 4 and all(n >= 1 for n in result.candidates)


def test_unobserved_transitions_between_observations_are_bounded() -> None:
    observed = [{"a": 0, "b": 0}, {"a": 2, "b": 0}]  # two IncA between the observations
    assert validate(TOY, observed, internal=0).failed_step == 1
    result = validate(TOY, observed, internal=1)
    assert result.valid and [str(a) for a, _ in result.run] == ["None", "IncA()", "IncA()"]


def test_the_first_observation_nothing_meets_is_reported_with_the_closest_states() -> None:
    result = validate(TOY, [{"a": 0, "b": 0}, {"a": 1}, {"a": 4, "b": 0}], internal=1)
    assert not result.valid and result.failed_step == 2 and result.met == 2
    assert result.observed == {"a": 4, "b": 0}
    # the closest states differ in one observed leaf (a); the nearest the model gets is a = 3
    assert all(len(c.differences) == 1 and c.differences[0].startswith("a: observed 4") for c in result.closest)
    assert any(c.view["a"] == 3 for c in result.closest)
    assert validate(TOY, [{"a": 1}]).failed_step == 0  # no initial state meets it


def test_a_property_the_observations_force_to_fail_is_reported() -> None:
    broken = ToySystem(ToyConfig(bound=4, broken=True))  # a may move while b is odd (TOY-M1)
    forced = validate(broken, [{"a": 0, "b": 0}, {"b": 1}, {"a": 1, "b": 1}])
    assert forced.failed_step is None and [v.property_id for v in forced.violations] == ["TOY-01"]
    assert forced.violations[0].step == 2 and not forced.valid
    # the correct model never gets there: the same observations do not validate
    assert validate(TOY, [{"a": 0, "b": 0}, {"b": 1}, {"a": 1, "b": 1}]).failed_step == 2


def test_a_hidden_state_that_satisfies_the_property_is_not_a_violation() -> None:
    # After {"b": 1} the hidden a may be 0 or 1 (internal steps); TOY-01 holds for a = 0: no violation is forced.
    broken = ToySystem(ToyConfig(bound=4, broken=True))
    result = validate(broken, [{"a": 0, "b": 0}, {"b": 1}], internal=2)
    assert result.valid and result.candidates[-1] > 1


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one observation"):
        validate(TOY, [])
    with pytest.raises(ValueError, match="internal must be at least 0"):
        validate(TOY, [{}], internal=-1)


def test_stuttering_steps_and_a_projected_view() -> None:
    # A step the model sees as nothing (a refused request): met by zero transitions only with stutter.
    observed = [{"a": 0, "b": 0}, {"a": 0, "b": 0}]
    assert validate(TOY, observed, internal=0).failed_step == 1
    result = validate(TOY, observed, internal=0, stutter=True)
    assert result.valid and [a for a, _ in result.run] == [None]
    # What a real system shows of a state: here only a + b.
    total = validate(TOY, [{"sum": 0}, {"sum": 2}], internal=1, view=lambda s: {"sum": TOY.view(s)["a"] +
                                                                               TOY.view(s)["b"]})
    assert total.valid and total.run[-1][1] == {"sum": 2}
    assert validate(TOY, [{"sum": 0}, {"sum": 3}], internal=1,
                    view=lambda s: {"sum": TOY.view(s)["a"] + TOY.view(s)["b"]}).failed_step == 1


def test_with_stuttering_the_first_observation_may_follow_the_start() -> None:
    # A real system is seen once started: one IncA may precede the first look.
    assert validate(TOY, [{"a": 1, "b": 0}], internal=1).failed_step == 0
    result = validate(TOY, [{"a": 1, "b": 0}, {"a": 1, "b": 0}], internal=1, stutter=True)
    assert result.valid and [str(a) for a, _ in result.run] == ["None", "IncA()"]
    assert validate(TOY, [{"a": 2, "b": 0}], internal=1, stutter=True).failed_step == 0
