"""Soundness of the protocols' symmetry reduction (``symmetry_key``, issue #17 item 5).

For each protocol, on its ``small`` config and one more small config with at least two interchangeable
nodes, over the whole reachable graph ``R`` and every allowed permutation ``p`` (the whole group, not
just generators):

1. ``key(p(s)) == key(s)``, ``p(s)`` is in ``R``, and the successors of ``p(s)`` are exactly the
   ``p``-images of the successors of ``s``, as sets of (action name, state): equal states imply equal
   keys, so this is the brief's (action name, key) check and more;
2. the orbits are counted twice, as distinct keys and as distinct sets ``{p(s)}``: the counts agree (the
   key merges exactly the orbits, the "iff" of the contract) and are below the state count whenever a
   group has two or more nodes; the counts are printed (``pytest -s``) and recorded as test properties;
3. every invariant's verdict is the same on ``s`` and ``p(s)``; every step property's verdict on an edge
   is that on its image (compared together with the successors); every graph property's offending set
   is closed under ``p``.

The reachable graph is built once per case (every state's successors are kept), so ``p(s)``'s successors
are looked up, not recomputed.
"""

from __future__ import annotations

import itertools
import pickle
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pytest

from reference_impl.features import symmetry as feat_sym
from reference_impl.metadata_version import symmetry as mv_sym
from reference_impl.node_symmetry import group_permutations
from reference_impl.streams_probing import symmetry as str_sym
from reference_impl.zk_migration import symmetry as zk_sym
from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import Action, GraphProperty, Invariant, StepProperty

StateMap = Callable[[Any], Any]


def _identity(p: tuple[int, ...]) -> bool:
    return all(i == j for i, j in enumerate(p))


def _two_groups(n_a: int, groups_a: Any, n_b: int, groups_b: Any,
                apply: Callable[[Any, Any, Any], Any]) -> list[StateMap]:
    """Every non-identity permutation of a protocol with two kinds of node (voters, brokers)."""
    out: list[StateMap] = []
    for pa, pb in itertools.product(group_permutations(n_a, groups_a), group_permutations(n_b, groups_b)):
        if not (_identity(pa) and _identity(pb)):
            out.append(lambda s, pa=pa, pb=pb: apply(s, pa, pb))
    return out


def _one_group(n: int, groups: Any, apply: Callable[[Any, Any], Any]) -> list[StateMap]:
    return [lambda s, p=p: apply(s, p) for p in group_permutations(n, groups) if not _identity(p)]


def permutations(protocol: str, config: Any) -> list[StateMap]:
    """The non-identity permutations the protocol's symmetry module allows for ``config``, as state maps."""
    if protocol == "features":
        return _one_group(config.brokers, feat_sym.interchangeable(config), feat_sym.permute)
    if protocol == "streams_probing":
        return _one_group(config.instances, str_sym.interchangeable(config), str_sym.permute)
    if protocol == "metadata_version":
        voters, brokers = mv_sym.interchangeable(config)
        return _two_groups(config.voters, voters, config.brokers, brokers, mv_sym.permute)
    if protocol == "zk_migration":
        voters, brokers = zk_sym.interchangeable(config)
        return _two_groups(config.voters, voters, config.zk_brokers, brokers, zk_sym.permute)
    raise AssertionError(protocol)


@dataclass
class Graph:
    """The reachable graph with its states, built here independently of the engine (which keeps no states
    for graph properties)."""

    states: list[Any]
    index: dict[Any, int]
    initial: list[int]
    edges: list[list[tuple[Action, int]]]
    complete: bool = True

    def violators(self, gp: GraphProperty[Any]) -> set[int]:
        """AG (start => E[allowed U goal]), computed here in plain Python (the engine's is NumPy)."""
        ok = self.can_reach(gp.goal, gp.allowed or (lambda a: True))
        return {i for i, s in enumerate(self.states) if not ok[i] and (gp.start is None or gp.start(s))}

    def can_reach(self, goal: Callable[[Any], bool], allowed: Callable[[Action], bool]) -> list[bool]:
        reverse: list[list[int]] = [[] for _ in self.states]
        for i, succ in enumerate(self.edges):
            for a, j in succ:
                if allowed(a):
                    reverse[j].append(i)
        ok = [bool(goal(s)) for s in self.states]
        stack = [i for i, good in enumerate(ok) if good]
        while stack:
            for i in reverse[stack.pop()]:
                if not ok[i]:
                    ok[i] = True
                    stack.append(i)
        return ok


def build_graph(ts: Any) -> Graph:
    states: list[Any] = []
    index: dict[Any, int] = {}
    for s in ts.initial_states():
        if s not in index:
            index[s] = len(states)
            states.append(s)
    initial = list(range(len(states)))
    edges: list[list[tuple[Action, int]]] = []
    i = 0
    while i < len(states):
        out = []
        for a, t in ts.successors(states[i]):
            j = index.get(t)
            if j is None:
                j = index[t] = len(states)
                states.append(t)
            out.append((a, j))
        edges.append(out)
        i += 1
    return Graph(states, index, initial, edges)


@dataclass(frozen=True)
class Case:
    protocol: str
    label: str
    config: Any

    def __str__(self) -> str:
        return f"{self.protocol}-{self.label}"


def _named(protocol: str, name: str, label: str = "", **changes: Any) -> Case:
    config = get_protocol(protocol).configs[name]
    label = label or name + "".join(f"-{k}={v}" for k, v in changes.items())
    return Case(protocol, label, replace(config, **changes) if changes else config)


CASES = [
    _named("features", "small"),  # 2 brokers: S2
    _named("features", "atomic", brokers=3),  # 3 brokers: S3
    _named("metadata_version", "small"),  # 3 voters (S3), 1 broker
    _named("metadata_version", "small", voters=1, brokers=2),  # 2 brokers (S2)
    # One software, no failover, no crashes: leadership never leaves voter 0, which is kept apart (voters 1
    # and 2 never differ here); brokers 0 and 1 permute.
    _named("metadata_version", "small", "small-one-software-brokers=2", brokers=2,
           softwares=get_protocol("metadata_version").configs["small"].softwares[:1]),
    _named("zk_migration", "small"),  # 1 voter, 1 broker: nothing to permute
    _named("zk_migration", "faults", zk_outage=False, rollback=False),  # voters 1, 2 (voter 0 led first)
    _named("zk_migration", "small", zk_brokers=3),  # brokers 1, 2 (broker 0 was the ZK controller)
    _named("streams_probing", "small"),  # 2 instances: S2
    _named("streams_probing", "default"),  # 3 instances with a crash: S3
]


def _verdicts(steps: Sequence[StepProperty[Any]], s: Any, a: Action, t: Any) -> tuple[bool, ...]:
    return tuple(p.holds(s, a, t) for p in steps)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_symmetry_is_sound(case: Case, record_property: Callable[[str, object], None]) -> None:
    ts = get_protocol(case.protocol).build(case.config)
    key: Callable[[Any], Hashable] = ts.symmetry_key
    perms = permutations(case.protocol, case.config)
    g = build_graph(ts)
    props = list(ts.properties())
    invariants = [p for p in props if isinstance(p, Invariant)]
    steps = [p for p in props if isinstance(p, StepProperty)]
    graph_props = [p for p in props if isinstance(p, GraphProperty)]

    # Each state's labelled successors (by index) with the step verdicts, computed once; and each permutation
    # as a map of state indices (p(s) must be reachable), so that the checks below compare ints.
    succ = [frozenset((a.name, j, _verdicts(steps, s, a, g.states[j])) for a, j in g.edges[i])
            for i, s in enumerate(g.states)]
    keys = [key(s) for s in g.states]
    inv = [tuple(p.holds(s) for p in invariants) for s in g.states]
    maps: list[list[int]] = []
    for perm in perms:
        m = []
        for s in g.states:
            j = g.index.get(perm(s))
            assert j is not None, f"{perm(s)} is the image of the reachable {s} but is not reachable"
            m.append(j)
        maps.append(m)

    for i, s in enumerate(g.states):
        k = keys[i]
        assert key(k) == k, f"the key is not canonical for {s}"
        assert k in g.index, "the key is the state with its nodes reordered, a reachable state of the orbit"
        for m in maps:
            j = m[i]
            assert keys[j] == k, f"key differs on {s} and its image {g.states[j]}"
            assert inv[j] == inv[i], f"an invariant's verdict differs on {s} and its image {g.states[j]}"
            assert succ[j] == {(name, m[t], v) for name, t, v in succ[i]}, \
                f"the successors of {g.states[j]} are not the images of those of {s} (with the step verdicts)"

    for gp in graph_props:
        bad = g.violators(gp)
        for m in maps:
            assert {m[b] for b in bad} == bad, f"{gp.id}: its offending states are not closed under a permutation"

    # The orbits, counted by key and by the image sets themselves: equal counts make key(s) == key(t) iff
    # t is an image of s (keys are constant on orbits, checked above).
    orbits_by_key = len(set(keys))
    orbits = len({frozenset([i, *(m[i] for m in maps)]) for i in range(len(g.states))})
    states = len(g.states)
    print(f"\n{case}: {len(perms) + 1} permutations, {states} states, {orbits_by_key} orbits")
    record_property("states", states)
    record_property("orbits", orbits_by_key)
    assert orbits_by_key == orbits
    if perms:
        assert orbits_by_key < states
    else:
        assert orbits_by_key == states and all(k is s for k, s in zip(keys, g.states, strict=True))


def test_system_keys_delegate_and_cover_every_protocol() -> None:
    """Every protocol's system answers ``symmetry_key``, and its canonical form sorts by the module's key."""
    for name, sym in (("features", feat_sym), ("metadata_version", mv_sym), ("zk_migration", zk_sym),
                      ("streams_probing", str_sym)):
        entry = get_protocol(name)
        ts = entry.build(entry.configs["small"])
        direct = sym.symmetry_key(ts.config)
        walked = _walk(ts, 300)
        for s in walked:
            assert ts.symmetry_key(s) == direct(s)
        # Systems travel to Spark executors pickled, with the key object they built.
        clone = pickle.loads(pickle.dumps(ts))
        assert [clone.symmetry_key(s) for s in walked] == [ts.symmetry_key(s) for s in walked]


def _walk(ts: Any, limit: int = 3000) -> Iterable[Any]:
    """The first ``limit`` reachable states, breadth first."""
    seen: dict[Any, None] = dict.fromkeys(ts.initial_states())
    todo = list(seen)
    while todo and len(seen) < limit:
        nxt = []
        for s in todo:
            for _, t in ts.successors(s):
                if t not in seen and len(seen) < limit:
                    seen[t] = None
                    nxt.append(t)
        todo = nxt
    return list(seen)


VARIANTS = [(name, v) for name in ("features", "metadata_version", "zk_migration", "streams_probing")
            for v in get_protocol(name).variants]


@pytest.mark.parametrize(("protocol", "variant"), VARIANTS, ids=[v.id for _, v in VARIANTS])
def test_variants_stay_symmetric(protocol: str, variant: Any) -> None:
    """The broken variants (the same systems with a mutation) keep the symmetry they declare, on the first
    states of their config: the key is constant on orbits and successors map to successors. A partial
    graph: images need not be among the states walked, so successors are compared by key."""
    base = get_protocol(protocol).configs[variant.config]
    ts = variant.build(base)
    perms = permutations(protocol, ts.config)
    key = ts.symmetry_key
    for s in _walk(ts, 1000):
        k = key(s)
        succ = {(a.name, key(t)) for a, t in ts.successors(s)}
        for perm in perms:
            ps = perm(s)
            assert key(ps) == k
            assert {(a.name, key(t)) for a, t in ts.successors(ps)} == succ


def test_uncapped_adopt_breaks_the_symmetry() -> None:
    """Why streams_probing declares no symmetry under the mutations that break STR-05: a rebalance fails
    only the lowest-index member that cannot build its subscription, so with the whole group forced the
    step does not commute with the permutations state for state (KAFKA-8649 variant, four instances).
    In the states walked the members involved were identical, so the orbits still matched, but nothing in
    the rule guarantees that: the key stays the identity there."""
    entry = get_protocol("streams_probing")
    variant = next(v for v in entry.variants if v.id == "STR-M4")
    ts = variant.build(replace(entry.configs[variant.config], instances=4))
    assert "uncapped_adopt" in ts.config.mutations
    assert str_sym.interchangeable(ts.config) == ()
    assert all(ts.symmetry_key(s) is s for s in _walk(ts, 200))
    full = _one_group(4, ((0, 1, 2, 3),), str_sym.permute)

    def commutes(s: Any) -> bool:
        succ = {(a.name, t) for a, t in ts.successors(s)}
        return all({(a.name, t) for a, t in ts.successors(perm(s))} == {(name, perm(t)) for name, t in succ}
                   for perm in full)

    assert not all(commutes(s) for s in _walk(ts, 1000))


def test_zk_migration_first_leader_and_controller_are_not_interchangeable() -> None:
    """Why zk_migration keeps voter 0 and broker 0 apart: the start's image that moves them is unreachable
    (every election raises the Raft epoch or /controller_epoch), so no orbit would hold it."""
    entry = get_protocol("zk_migration")
    for changes, voters, brokers in (({"voters": 3}, (1, 0, 2), None), ({"zk_brokers": 2}, None, (1, 0))):
        ts = entry.build(replace(entry.configs["small"], **changes))
        reachable = set(_walk(ts, 10**6))
        (start,) = ts.initial_states()
        assert zk_sym.permute(start, voters, brokers) not in reachable
