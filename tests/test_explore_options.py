"""The explorer's one options object, its step-by-step Exploration, and the one fingerprint rule."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from rollcheck.core.fingerprint import fingerprint, fingerprinter
from rollcheck.explore.expansion import Expander
from rollcheck.explore.explorer import Exploration, ExploreOptions, explore, reachable_states
from tests.toy import ToyConfig, ToyState, ToySystem


class _SymmetricToy(ToySystem):
    """The toy with its tags ignored: states that differ only in their tags are one orbit."""

    def symmetry_key(self, s: ToyState) -> Any:
        return (s.a, s.b)


def _counts(r: Any) -> tuple[Any, ...]:
    return (r.distinct_states, r.generated_states, r.depth, r.complete, sorted(r.violated_ids),
            [p.status for p in r.properties], [lv.frontier for lv in r.levels])


def test_options_are_frozen_and_keyword_only() -> None:
    o = ExploreOptions(max_depth=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.max_depth = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        ExploreOptions("small")  # type: ignore[call-arg]
    assert dataclasses.replace(o, workers=2).max_depth == 3


def test_explore_takes_the_options_whole() -> None:
    """One options object, never keywords: a caller cannot pass half of them and forget the rest."""
    ts = ToySystem(ToyConfig(bound=4, broken=True))
    whole = explore(ts, ExploreOptions(stop_at_first=False, max_depth=5, config_name="small"))
    assert whole.violated_ids == {"TOY-01"} and not whole.complete and whole.config == "small"
    with pytest.raises(TypeError):
        explore(ts, max_depth=5)  # type: ignore[call-arg]


def test_the_steps_driven_by_hand_give_what_run_gives() -> None:
    ts = ToySystem(ToyConfig(bound=3))
    by_hand = Exploration(ts, ExploreOptions(stop_at_first=False))
    by_hand.initial_level()
    assert [lv.frontier for lv in by_hand.levels] == [1] and by_hand.level == 0
    for _ in range(2):
        cut = by_hand.cut(by_hand.expand())
        by_hand.close_level(cut, by_hand.merge(cut))
    result = by_hand.finish()
    bounded = explore(ts, ExploreOptions(stop_at_first=False, max_depth=2))
    assert [lv.frontier for lv in result.levels] == [lv.frontier for lv in bounded.levels]
    assert (result.distinct_states, result.generated_states) == (bounded.distinct_states, bounded.generated_states)
    # Nothing told the hand-driven run it was bounded: it reports what a complete run would not.
    assert not result.complete and by_hand.level == 2


def test_one_fingerprint_rule_for_the_explorer_the_expansion_and_symmetry() -> None:
    plain = ToySystem(ToyConfig(bound=3))
    assert fingerprinter(None) is fingerprint
    run = Exploration(plain, ExploreOptions(stop_at_first=False))
    run.run()
    states, _ = reachable_states(plain)
    assert set(run.visited.values().tolist()) == {fingerprint(s) for s in states}
    sym = _SymmetricToy(ToyConfig(bound=3))
    reduced = Exploration(sym, ExploreOptions(stop_at_first=False, symmetry=True))
    reduced.run()
    keyed = fingerprinter(sym.symmetry_key)
    assert set(reduced.visited.values().tolist()) == {keyed(s) for s in states}
    assert len(reduced.visited) == len({(s.a, s.b) for s in states}) < len(states)
    s = next(iter(states))
    assert reduced.expander().fingerprint(s) == keyed(s) == fingerprint((s.a, s.b))
    assert isinstance(run.expander(), Expander) and run.expander().fingerprint(s) == fingerprint(s)


def test_explore_spark_passes_its_two_options_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    import rollcheck.spark.explorer as spark_explorer
    import rollcheck.spark.session as session

    seen: dict[str, Any] = {}
    monkeypatch.setattr(session, "get_session", lambda master: f"session on {master}")
    monkeypatch.setattr(spark_explorer, "build_system", lambda protocol, config, variant: (protocol, variant))

    def fake(ts: Any, spark: Any, options: ExploreOptions, spark_options: Any) -> str:
        seen.update(ts=ts, spark=spark, options=options, spark_options=spark_options)
        return "result"

    monkeypatch.setattr(spark_explorer, "explore_system_spark", fake)
    options = ExploreOptions(config_name="small", variant="TOY-M1", max_depth=2)
    engine = spark_explorer.SparkOptions(master="local[1]", partitions=3, spark_min=0)
    spark_explorer.explore_spark("toy", ToyConfig(), options, engine)
    assert seen["ts"] == ("toy", "TOY-M1") and seen["spark"] == "session on local[1]"
    assert seen["options"] is options and seen["spark_options"] is engine
    spark_explorer.explore_spark("toy", ToyConfig(), ExploreOptions(max_states=7))
    assert seen["spark"] == "session on local[*]" and seen["spark_options"] == spark_explorer.SparkOptions()
    with pytest.raises(TypeError):
        spark_explorer.explore_spark("toy", ToyConfig(), master="local[2]")  # type: ignore[call-arg]
