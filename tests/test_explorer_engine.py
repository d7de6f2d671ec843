"""The compact, multi-core explorer: fingerprint table, determinism for any number of workers,
checkpoints that resume to the identical result and refuse damage, the graph limit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rollcheck.core.errors import UserError
from rollcheck.core.fingerprint import FingerprintSet, collision_probability
from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import Action, GraphProperty
from rollcheck.explore.explorer import ExplorationResult, ExploreOptions, explore
from rollcheck.explore.graphcheck import MarkColumns, violators

ROOT = Path(__file__).resolve().parent.parent


def _system(protocol: str, config: str, variant: str | None = None, **changes: Any) -> Any:
    entry = get_protocol(protocol)
    cfg = replace(entry.configs[config], **changes)
    return entry.variant(variant).build(cfg) if variant else entry.build(cfg)


def _outcome(r: ExplorationResult) -> tuple[Any, ...]:
    """Everything a run reports that must not depend on the number of workers."""
    return (r.distinct_states, r.generated_states, r.depth, r.complete, r.terminal_states,
            [(v.property_id, v.kind, [repr(a) for a in v.trace.actions], v.trace.states[-1]) for v in r.violations],
            [(p.id, p.status) for p in r.properties], [lv.frontier for lv in r.levels])


@given(st.lists(st.integers(min_value=1, max_value=2**64 - 1), max_size=3000),
       st.lists(st.integers(min_value=1, max_value=2**64 - 1), max_size=300))
@settings(max_examples=60, deadline=None)
def test_fingerprint_set_is_a_set(values: list[int], probes: list[int]) -> None:
    fs = FingerprintSet(capacity=4)  # tiny on purpose: every example grows it
    model: set[int] = set()
    half = len(values) // 2
    for batch in (values[:half], values[half:]):
        fresh = fs.add(batch)
        expect = []
        for v in batch:
            expect.append(v not in model)
            model.add(v)
        assert fresh.tolist() == expect
    assert len(fs) == len(model)
    both = values + probes
    assert fs.contains(np.asarray(both, dtype=np.uint64)).tolist() == [v in model for v in both]
    assert sorted(fs.values().tolist()) == sorted(model)


@given(st.integers(min_value=1, max_value=40).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(0, 2)), max_size=4 * n),
    st.lists(st.booleans(), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n, max_size=n))))
@settings(max_examples=150, deadline=None)
def test_graph_search_agrees_with_plain_reachability(graph: tuple[int, list[tuple[int, int, int]], list[bool],
                                                                  list[bool]]) -> None:
    """The NumPy search of AG (start => E[allowed U goal]) against a depth-first search in Python, on random
    graphs with self-loops, cycles, parallel edges and an action filter."""
    n, edges, goal, start = graph
    actions = [Action.of("A"), Action.of("B"), Action.of("C")]
    prop = GraphProperty("G", "", "", goal=lambda i: goal[i], start=lambda i: start[i],
                         allowed=lambda a: a.name != "C")
    reverse: dict[int, list[int]] = {}
    for u, v, c in edges:
        if c != 2:
            reverse.setdefault(v, []).append(u)
    ok = set(i for i in range(n) if goal[i])
    todo = list(ok)
    while todo:
        for u in reverse.get(todo.pop(), []):
            if u not in ok:
                ok.add(u)
                todo.append(u)
    cols = MarkColumns.of([prop])
    marks = cols.evaluate(list(range(n)))
    src = np.asarray([u for u, _, _ in edges], dtype=np.int64)
    dst = np.asarray([v for _, v, _ in edges], dtype=np.int64)
    codes = np.asarray([c for _, _, c in edges], dtype=np.uint32)
    got = violators(prop, marks, cols, 0, src, dst, codes, actions).tolist()
    assert got == [i for i in range(n) if start[i] and i not in ok]


def test_visited_set_costs_at_most_40_bytes_a_state() -> None:
    fs = FingerprintSet()
    rng = np.random.default_rng(7)
    for _ in range(10):
        fs.add_new(np.unique(rng.integers(1, 2**63, size=50_000, dtype=np.uint64)))
    assert fs.nbytes / len(fs) <= 40
    assert collision_probability(10**7, 6 * 10**7) == pytest.approx(10**7 * 5 * 10**7 / 2**64)


# One reference config and one broken variant (each on the config it is caught on) per protocol.
CASES = [
    ("features", "small", None), ("features", "small", "FEAT-M1"),
    ("metadata_version", "small", None), ("metadata_version", "small", "MV-M1"),
    ("zk_migration", "small", None), ("zk_migration", "small", "MIG-M6"),
    ("streams_probing", "small", None), ("streams_probing", "default", None), ("streams_probing", "pre20", "STR-M7"),
]


@pytest.mark.parametrize(("protocol", "config", "variant"), CASES, ids=[f"{p}-{c}-{v}" for p, c, v in CASES])
def test_same_result_for_any_number_of_workers(protocol: str, config: str, variant: str | None) -> None:
    ts = _system(protocol, config, variant)
    # Variants stop at the first violation; the reference is explored in full.
    stop = variant is not None
    one = explore(ts, ExploreOptions(stop_at_first=stop, workers=1))
    if variant:
        assert one.violated_ids, "the variant must be caught"
    for n in (2, 3):
        # parallel_min=1: fork workers on every level, even the narrow ones of a small config
        many = explore(ts, ExploreOptions(stop_at_first=stop, workers=n, parallel_min=1))
        assert _outcome(many) == _outcome(one), f"{n} workers"


def test_collect_all_and_max_states_are_deterministic() -> None:
    ts = _system("streams_probing", "pre20", "STR-M7")
    full = [explore(ts, ExploreOptions(stop_at_first=False, workers=n, parallel_min=1)) for n in (1, 3)]
    assert _outcome(full[0]) == _outcome(full[1]) and full[0].violated_ids == {"STR-06"}
    cut = [explore(ts, ExploreOptions(stop_at_first=False, max_states=1_000, workers=n, parallel_min=1))
           for n in (1, 2)]
    assert _outcome(cut[0]) == _outcome(cut[1])
    assert not cut[0].complete and cut[0].distinct_states >= 1_000


def test_counterexample_is_a_real_shortest_trace() -> None:
    ts = _system("metadata_version", "small", "MV-M1")
    r = explore(ts, ExploreOptions(workers=2, parallel_min=1))
    (v,) = r.violations
    states = v.trace.states
    assert states[0] in set(ts.initial_states())
    for before, step in zip(states, v.trace.steps[1:], strict=False):
        assert (step.action, step.state) in set(ts.successors(before))
    assert v.depth == r.depth  # BFS: found on the deepest level explored, so shortest


def test_resume_after_a_bounded_run_gives_the_full_result(tmp_path: Path) -> None:
    ts = _system("features", "small")
    full = explore(ts, ExploreOptions(stop_at_first=False))
    part = explore(ts, ExploreOptions(stop_at_first=False, max_depth=6, checkpoint_dir=tmp_path))
    assert not part.complete
    rest = explore(ts, ExploreOptions(stop_at_first=False, checkpoint_dir=tmp_path, resume=True, workers=2,
                                      parallel_min=1))
    assert (rest.distinct_states, rest.generated_states, rest.depth, rest.terminal_states) == (
        full.distinct_states, full.generated_states, full.depth, full.terminal_states)
    assert any("resumed from level 6" in n for n in rest.extra["notes"])
    # the liveness graph of the levels before the resume is gone: said, not claimed to hold
    assert {p.status for p in rest.properties if p.kind == "graph"} == {"not checked"}


def test_resume_keeps_violations_found_before_the_interruption(tmp_path: Path) -> None:
    ts = _system("zk_migration", "small", "MIG-M6")
    full = explore(ts, ExploreOptions(stop_at_first=False))
    explore(ts, ExploreOptions(stop_at_first=False, max_depth=4, checkpoint_dir=tmp_path))
    rest = explore(ts, ExploreOptions(stop_at_first=False, checkpoint_dir=tmp_path, resume=True))
    assert [(v.property_id, [repr(a) for a in v.trace.actions]) for v in rest.violations] == [
        (v.property_id, [repr(a) for a in v.trace.actions]) for v in full.violations]


def test_resume_refuses_a_damaged_or_foreign_checkpoint(tmp_path: Path) -> None:
    ts = _system("features", "small")
    explore(ts, ExploreOptions(stop_at_first=False, max_depth=5, checkpoint_dir=tmp_path))
    level = tmp_path / "level-00003.parents.npy"
    level.write_bytes(level.read_bytes()[:-8])
    with pytest.raises(UserError, match=r"level 3 is damaged: .*level-00003.parents.npy"):
        explore(ts, ExploreOptions(stop_at_first=False, checkpoint_dir=tmp_path, resume=True))
    (tmp_path / "level-00002.fps.npy").unlink()
    with pytest.raises(UserError, match=r"level 2 is missing"):
        explore(ts, ExploreOptions(stop_at_first=False, checkpoint_dir=tmp_path, resume=True))
    other = tmp_path / "other"
    explore(ts, ExploreOptions(stop_at_first=False, max_depth=2, checkpoint_dir=other))
    kafka = _system("features", "small", profile="kafka")
    with pytest.raises(UserError, match=r"of another run \(it differs in: config_repr, profile\)"):
        explore(kafka, ExploreOptions(stop_at_first=False, checkpoint_dir=other, resume=True))
    fresh = explore(ts, ExploreOptions(stop_at_first=False, checkpoint_dir=tmp_path / "none", resume=True, max_depth=1))
    assert any("starting fresh" in n for n in fresh.extra["notes"])


def test_graph_properties_over_the_limit_are_not_checked() -> None:
    r = explore(_system("zk_migration", "small"), ExploreOptions(stop_at_first=False, graph_limit=100))
    assert {p.status for p in r.properties if p.kind == "graph"} == {"not checked"}
    assert any("graph limit of 100" in n for n in r.extra["notes"])
    assert all(p.status == "holds" for p in r.properties if p.kind not in ("graph", "witness"))
    assert all(p.status.startswith("reached") for p in r.properties if p.kind == "witness")


def test_a_killed_command_resumes_to_the_identical_result(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "rollcheck", "explore", "features", "--config", "small", "--collect-all",
           "--out", str(tmp_path), "--json", "--quiet", "--workers", "2"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}  # the command fixes the seed itself
    manifest = tmp_path / "features-small-kip-local.checkpoint" / "manifest.json"
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if manifest.exists() and json.loads(manifest.read_text())["level"] >= 5:
            break
        time.sleep(0.05)
    killed = proc.poll() is None
    if killed:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    done = subprocess.run([*cmd, "--resume"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert (doc["distinct_states"], doc["generated_states"], doc["depth"]) == (25073, 178534, 14)
    if killed:
        assert any("resumed from level" in n for n in doc["notes"])


def _variants() -> list[tuple[str, str, str]]:
    from rollcheck.core.registry import all_protocols

    return [(e.name, v.config, v.id) for e in all_protocols() for v in e.variants]


@pytest.mark.parametrize(("protocol", "config", "variant"), _variants(), ids=[v[2] for v in _variants()])
def test_symmetry_reduction_kills_every_variant_with_a_real_trace(protocol: str, config: str, variant: str) -> None:
    ts = _system(protocol, config, variant)
    plain = explore(ts)
    reduced = explore(ts, ExploreOptions(symmetry=True))
    assert plain.violated_ids and reduced.violated_ids == plain.violated_ids
    assert reduced.distinct_states <= plain.distinct_states
    # The trace is one of the unreduced system: every step a real transition from a real initial state.
    (v, *_) = reduced.violations
    assert v.trace.states[0] in set(ts.initial_states())
    for before, step in zip(v.trace.states, v.trace.steps[1:], strict=False):
        assert (step.action, step.state) in set(ts.successors(before))
    assert v.depth == plain.violations[0].depth  # orbits keep BFS distances: still a shortest trace


@pytest.mark.parametrize("protocol", ["features", "metadata_version", "zk_migration", "streams_probing"])
def test_symmetry_reduction_keeps_the_reference_verdicts(protocol: str) -> None:
    config = {"streams_probing": "default"}.get(protocol, "small")
    ts = _system(protocol, config)
    plain = explore(ts, ExploreOptions(stop_at_first=False))
    reduced = explore(ts, ExploreOptions(stop_at_first=False, symmetry=True, workers=2, parallel_min=1))
    assert [(p.id, p.status) for p in reduced.properties] == [(p.id, p.status) for p in plain.properties]
    assert reduced.depth == plain.depth
    assert reduced.distinct_states <= plain.distinct_states
