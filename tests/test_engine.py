"""The engine on the toy protocol: explorer, codec, ITF traces, configs, Hypothesis machine."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from rollcheck.core.codec import CodecError, StateCodec
from rollcheck.core.configs import config_from_mapping, load_config_file, resolve_config
from rollcheck.core.errors import UserError
from rollcheck.core.traces import canonical_view, read_itf, trace_from_itf, write_itf
from rollcheck.explore.explorer import ExploreOptions, explore
from rollcheck.fuzzing.machine import PropertyViolated, machine_for
from tests.toy import PROTOCOL, ToyConfig, ToyState, ToySystem


def test_explorer_counts_and_holds() -> None:
    r = explore(ToySystem(ToyConfig(bound=3)))
    # states (a, b) in 0..3 x 0..3 minus both-odd, times the tag sets reachable
    assert r.ok and r.complete
    assert r.distinct_states == len({s for s in _reachable(ToySystem(ToyConfig(bound=3)))})
    assert {p.status for p in r.properties} == {"holds"}
    assert r.depth > 0 and r.generated_states > r.distinct_states


def _reachable(ts: ToySystem) -> set[ToyState]:
    seen = set(ts.initial_states())
    stack = list(seen)
    while stack:
        for _, t in ts.successors(stack.pop()):
            if t not in seen:
                seen.add(t)
                stack.append(t)
    return seen


def test_broken_variant_gives_shortest_counterexample(tmp_path: Path) -> None:
    ts = PROTOCOL.variant("TOY-M1").build(ToyConfig(bound=3))
    r = explore(ts, ExploreOptions(config_name="small"))
    assert r.violated_ids == {"TOY-01"}
    v = r.violations[0]
    # IncA, IncB, IncA: (1,0) -> (1,1) is allowed for b? b moves only while a even or b odd: (1,0)->no.
    # shortest: IncB (0,1), IncA (broken) (1,1)
    assert v.depth == 2
    assert [a.name for a in v.trace.actions] == ["IncB", "IncA"]
    path = write_itf(tmp_path / "cex.itf.json", v.trace, ts)
    doc = read_itf(path)
    # the spec's variables, then Quint's model-based-testing keys (`quint run --mbt` writes the same two)
    assert doc["vars"] == ["a", "b", "tags", "mbt::actionTaken", "mbt::nondetPicks"]
    assert doc["states"][2]["a"] == {"#bigint": "1"}
    assert [s["mbt::actionTaken"] for s in doc["states"]] == ["init", "IncB", "IncA"]
    assert all(s["mbt::nondetPicks"] == {} for s in doc["states"])  # the toy's actions have no parameters
    again = trace_from_itf(doc, ts)
    assert again.states == v.trace.states and again.actions == v.trace.actions


def test_collect_all_and_depth_bound() -> None:
    ts = PROTOCOL.variant("TOY-M1").build(ToyConfig(bound=3))
    r = explore(ts, ExploreOptions(stop_at_first=False))
    assert r.violated_ids == {"TOY-01"} and r.complete
    r2 = explore(ToySystem(ToyConfig(bound=3)), ExploreOptions(max_depth=1))
    assert not r2.complete and r2.depth == 1


def test_a_bounded_run_never_says_plain_holds() -> None:
    from rollcheck.checkers import BOUNDED, NOT_CHECKED, from_exploration

    ts = ToySystem(ToyConfig(bound=3))
    by_depth = explore(ts, ExploreOptions(max_depth=2))
    assert {p.id: p.status for p in by_depth.properties} == {
        "TOY-01": "holds up to depth 2", "TOY-02": "holds up to depth 2", "TOY-03": "not checked"}
    by_states = explore(ts, ExploreOptions(max_states=5))  # the level being filled is only partly there
    assert not by_states.complete and by_states.depth >= 1
    assert {p.status for p in by_states.properties if p.kind != "graph"} == {
        f"holds up to depth {by_states.depth - 1}"}
    report = from_exploration("explore", PROTOCOL, "small", ts.config, by_depth)
    verdicts = {pid: (v.status, v.message) for pid, v in report.properties.items()}
    assert verdicts["TOY-01"] == (BOUNDED, "holds up to depth 2") and not report.exhaustive
    assert verdicts["TOY-03"] == (NOT_CHECKED, "the search did not cover the whole state space")


class Color(Enum):
    RED = 1
    BLUE = 2


@dataclass(frozen=True)
class Inner:
    c: Color
    n: int | None


@dataclass(frozen=True)
class Outer:
    xs: tuple[Inner, ...]
    s: frozenset[str]
    pair: tuple[int, str]
    flag: bool


def test_codec_roundtrip_and_canonical() -> None:
    codec = StateCodec(Outer)
    v = Outer((Inner(Color.RED, None), Inner(Color.BLUE, -300)), frozenset({"b", "a", "zz"}), (7, "x"), True)
    b = codec.encode(v)
    assert codec.decode(b) == v
    assert codec.encode(Outer(v.xs, frozenset(["zz", "a", "b"]), v.pair, True)) == b
    with pytest.raises(CodecError):
        codec.decode(b[:-1])
    with pytest.raises(CodecError):
        codec.decode(b + b"\x00")


def test_canonical_view_ignores_set_order() -> None:
    assert canonical_view({"x": frozenset({3, 1})}) == canonical_view({"x": frozenset({1, 3})})
    assert canonical_view({"x": (1, 2)}) != canonical_view({"x": (2, 1)})


def test_config_file_errors(tmp_path: Path) -> None:
    good = tmp_path / "c.toml"
    good.write_text('base = "small"\n[config]\nbound = 5\nprofile = "kafka"\n')
    cfg = load_config_file(PROTOCOL, good)
    assert cfg == ToyConfig(profile="kafka", bound=5)
    for text, msg in [
        ("[config]\nbond = 5\n", "unknown config key 'bond'"),
        ("[config]\nbound = 'five'\n", "must be an integer"),
        ("[config]\nbound = 0\n", "bound must be at least 1"),
        ("[config]\nprofile = 'zk'\n", "profile must be one of"),
        ("[config\n", "malformed config file"),
        ('protocol = "features"\n', "not 'toy'"),
    ]:
        bad = tmp_path / "bad.toml"
        bad.write_text(text)
        with pytest.raises(UserError, match=msg):
            load_config_file(PROTOCOL, bad)
    with pytest.raises(UserError, match="not found"):
        load_config_file(PROTOCOL, tmp_path / "missing.toml")
    assert config_from_mapping(PROTOCOL, {}) == PROTOCOL.configs["default"]
    for blank in ("", " "):  # Path("") is ".", which exists: an empty --config is a name, not the cwd
        with pytest.raises(UserError, match="unknown config"):
            resolve_config(PROTOCOL, blank)


def test_hypothesis_machine_holds_and_catches_variant() -> None:
    run_state_machine_as_test(machine_for(ToySystem(ToyConfig(bound=3))),
                              settings=settings(max_examples=30, stateful_step_count=20))
    broken = PROTOCOL.variant("TOY-M1").build(ToyConfig(bound=3))
    with pytest.raises(PropertyViolated, match="TOY-01"):
        run_state_machine_as_test(machine_for(broken),
                                  settings=settings(max_examples=200, stateful_step_count=20))


def test_summary_json_is_serialisable() -> None:
    r = explore(ToySystem(ToyConfig(bound=2)))
    json.dumps(r.to_json())
