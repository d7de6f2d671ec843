"""KIP-584 system level: exhaustive exploration, the broken variants (explorer and Hypothesis), the
incompatible-broker race, traces, and the CLI on this protocol."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from reference_impl.features.api import (
    FeatureZNode,
    FinalizedVersionRange,
    SupportedVersionRange,
    deprecate_min_levels,
    lookup,
)
from reference_impl.features.config import Release
from reference_impl.features.system import BrokerStatus, Client, FeaturesState, FeaturesSystem
from rollcheck.cli import main
from rollcheck.core.registry import get_protocol
from rollcheck.core.traces import canonical_view
from rollcheck.core.transition import Action
from rollcheck.explore.explorer import ExploreOptions, explore
from rollcheck.testing import ContractCase, ProtocolContract

ENTRY = get_protocol("features")


@pytest.mark.parametrize("profile", ["kip", "kafka"])
@pytest.mark.parametrize("config", ["small", "atomic"])
def test_exhaustive_exploration_holds(profile: str, config: str) -> None:
    ts = ENTRY.build(replace(ENTRY.configs[config], profile=profile))
    r = explore(ts, ExploreOptions(stop_at_first=False))
    assert r.complete and r.ok, [(v.property_id, v.trace.actions) for v in r.violations]
    assert all(p.status == "holds" for p in r.properties if p.kind != "witness")
    # every story the config is declared to tell happens (FEAT-W2 needs the client, FEAT-W3 an IBP roll)
    witnesses = {p.id: p.status for p in r.properties if p.kind == "witness"}
    assert sorted(witnesses) == (["FEAT-W1", "FEAT-W4"] if config == "atomic" else
                                 ["FEAT-W1", "FEAT-W2", "FEAT-W4", "FEAT-W5"])
    assert all(status.startswith("reached at depth") for status in witnesses.values()), witnesses
    assert r.distinct_states > 200


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
    node = ts.read(s.znode)
    assert isinstance(node, FeatureZNode) and node.get("group_coordinator").max_version_level == 2  # type: ignore[union-attr]
    assert s.znode is not None and s.znode.data == node.encode("kip")  # ZooKeeper holds the JSON bytes
    assert all(not b.notified for b in s.brokers)
    s = _do(ts, s, "DeliverFeaturesNotification(broker=1)")
    assert s.brokers[1].status is BrokerStatus.RUNNING and s.brokers[1].cache_epoch == s.znode.version == node.epoch


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
    r = explore(ts, ExploreOptions(max_depth=6))
    assert r.distinct_states > 100
    s = next(iter(ts.initial_states()))
    for a, t in ts.successors(s):
        assert ts.decode(ts.encode(t)) == t
        assert isinstance(a, Action)
        canonical_view(ts.view(t))


def test_config_validation_errors() -> None:
    from rollcheck.core.configs import override
    from rollcheck.core.errors import UserError

    for table, msg in [({"semantics": "sometimes"}, "semantics"), ({"initial_release": "nope"}, "initial_release"),
                       ({"brokers": 0}, "brokers"), ({"mutations": ["no_such_bug"]}, "unknown mutations")]:
        with pytest.raises(UserError, match=msg):
            override(ENTRY.configs["small"], table)


def test_cli_explore_json_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "features", "--config", "small", "--json", "--quiet", "--out", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["distinct_states"] == 25073 and doc["violations"] == [] and doc["complete"]
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


ROLLCHECK_CONTRACT = ProtocolContract(
    "features", counts={"small": (25073, 14)}, hypothesis_examples=400, hypothesis_steps=30,
    reference_hypothesis=(60, 25), reference_config="default",
    # test_spec_*.py's conformance already compares TLC's whole reachable set on small (stronger)
    tlc_configs=())


def test_protocol_contract(contract_case: ContractCase, tmp_path: Path) -> None:
    """rollcheck.testing's contract: variants killed (explorer, Hypothesis), codec and ITF round trips,
    pinned counts, TLC's count and the spec's names."""
    contract_case.run(tmp_path)


def test_a_registration_never_queued_breaks_feat12() -> None:
    """The mutation campaign's survivor (a started broker's registration not queued when broker 0 is the
    controller: the broker stays out of the live set) is caught by FEAT-12."""
    from reference_impl.features.protocol import PROTOCOL
    from reference_impl.features.system import FeaturesState, FeaturesSystem
    from rollcheck.explore.explorer import ExploreOptions, explore

    class Unqueued(FeaturesSystem):
        def start_broker(self, s: FeaturesState, i: int) -> FeaturesState:
            t = super().start_broker(s, i)
            if s.controller == 0 and t.registration_queue != s.registration_queue:
                return FeaturesState(t.znode, t.ibp_enabled, t.controller, t.brokers, s.registration_queue,
                                     t.client, t.restarts, t.ibp_changes)
            return t

    ts = Unqueued(PROTOCOL.configs["small"])
    result = explore(ts, ExploreOptions(config_name="small"))
    assert "FEAT-12" in result.violated_ids


class _QueueDroppedOnRestart(FeaturesSystem):
    """The mutation campaign's survivor in the restart rule: ``ctl < 1`` for ``ctl < 0``, so restarting another
    broker while broker 0 is the controller drops the whole registration queue."""

    def restart_broker(self, s: FeaturesState, i: int) -> list[tuple[Action, FeaturesState]]:
        out = super().restart_broker(s, i)
        if s.controller == 0:
            out = [(a, replace(t, registration_queue=())) for a, t in out]
        return out


def test_a_queue_dropped_on_restart_breaks_feat14() -> None:
    """FEAT-14 kills the `ctl < 1` survivor. With two brokers it is equivalent (under controller 0 the queue
    can hold only broker 1, whose own restart removes it anyway), so it takes a third broker and two restarts:
    broker 1 restarts and queues its registration, then broker 2's restart drops it."""
    small = ENTRY.configs["small"]
    assert explore(_QueueDroppedOnRestart(small), ExploreOptions(stop_at_first=False)).ok  # equivalent on two brokers
    for profile in ("kip", "kafka"):
        r = explore(_QueueDroppedOnRestart(replace(small, brokers=3, profile=profile)))
        assert r.violated_ids == {"FEAT-14"}, r.violated_ids
        (v,) = r.violations
        assert [a.name for a in v.trace.actions] == ["ElectController", "RestartBroker", "StartBroker",
                                                     "RestartBroker"]
    for profile in ("kip", "kafka"):  # the reference holds it (and, on two brokers, every property)
        ts = ENTRY.build(replace(small, profile=profile))
        r = explore(ts, ExploreOptions(stop_at_first=False))
        assert r.ok and {p.id: p.status for p in r.properties}["FEAT-14"] == "holds"


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_deprecation_story(profile: str) -> None:
    """The story config `deprecation` (a gate story config): under kip the controller deprecates
    group_coordinator v1 once a broker on "next" (2-3) is live (FEAT-W6); under kafka deprecation does not exist
    (FEAT-W6 does not apply, no DeprecateMinLevel step). Every property holds."""
    assert "deprecation" in ENTRY.story_configs
    ts = ENTRY.build(replace(ENTRY.configs["deprecation"], profile=profile))
    r = explore(ts, ExploreOptions(stop_at_first=False))
    assert r.complete and r.ok, r.violated_ids
    assert r.distinct_states == {"kip": 5746, "kafka": 2932}[profile]
    witnesses = {p.id: p.status for p in r.properties if p.kind == "witness"}
    assert sorted(witnesses) == (["FEAT-W1", "FEAT-W4", "FEAT-W6"] if profile == "kip" else ["FEAT-W1", "FEAT-W4"])
    assert all(status.startswith("reached at depth") for status in witnesses.values()), witnesses
    assert (r.extra["action_counts"].get("DeprecateMinLevel", 0) > 0) == (profile == "kip")


def test_no_deprecation_conformance_config_reaches_the_switch() -> None:
    """The conformance config `no-deprecation` (conform_configs) switches the controller's deprecation off; the
    same config with it on reaches DeprecateMinLevel under kip, so a reference that ignored the switch steps
    where the spec (WithDeprecation = FALSE) does not: conform's reachable-set equality tells them apart."""
    assert ENTRY.conform_configs == ("no-deprecation", "ibp-roll", "partial-pairs", "atomic")
    assert "no-deprecation" not in ENTRY.story_configs
    off = ENTRY.configs["no-deprecation"]
    assert off.deprecation is False
    counts = {}
    for on in (False, True):
        r = explore(ENTRY.build(replace(off, deprecation=on)), ExploreOptions(stop_at_first=False))
        assert r.complete and r.ok, r.violated_ids
        counts[on] = (r.distinct_states, r.extra["action_counts"].get("DeprecateMinLevel", 0))
    assert counts == {False: (184, 0), True: (214, counts[True][1])} and counts[True][1] > 0
    kafka = explore(ENTRY.build(replace(off, profile="kafka")), ExploreOptions(stop_at_first=False))
    assert kafka.ok and kafka.distinct_states == 164


@pytest.mark.parametrize(("profile", "states"), [("kip", 3196), ("kafka", 2088)])
def test_ibp_roll_conformance_config_rolls_the_ibp_under_a_client(profile: str, states: int) -> None:
    """`ibp-roll` (conform_configs) is the one config beside `default` that rolls the IBP, small enough for TLC in
    every tier: both IBP scenarios, two rolls (there and back), a restart and a client, every property holding.
    Its conformance kills the campaign's survivors features system.py:511 (a roll that keeps the brokers
    registered) and :480 (a client that takes a same-epoch answer), which agreed with every Z3 and TLC cell
    before."""
    assert "ibp-roll" not in ENTRY.story_configs
    r = explore(ENTRY.build(replace(ENTRY.configs["ibp-roll"], profile=profile)), ExploreOptions(stop_at_first=False))
    assert r.complete and r.ok, r.violated_ids
    assert r.distinct_states == states
    counts = r.extra["action_counts"]
    assert counts.get("SetIbp", 0) > 0 and counts.get("ReadApiVersions", 0) > 0 and counts.get("RestartBroker", 0) > 0
    # Two features: two-update requests would reach more states, so a reference that offered them where the
    # config does not (config.py:94) differs from TLC's set.
    assert len(ENTRY.configs["ibp-roll"].feature_names) == 2
    more = explore(ENTRY.build(replace(ENTRY.configs["ibp-roll"], profile=profile, multi_update=True)),
                   ExploreOptions(stop_at_first=False))
    assert more.ok and more.distinct_states > states


@pytest.mark.parametrize(("field", "words"), [("releases", "releases must be non-empty with distinct names"),
                                             ("initial_ibp", "initial_ibp needs at least one value")])
def test_an_empty_release_list_or_ibp_list_is_refused_in_its_own_words(field: str, words: str) -> None:
    """Each is refused further on too (no release can be the initial one; no IBP gives no initial state, which
    every checker refuses), so the campaign's checkers see the same domain without these tests (the equivalent
    entries for features config.py:62 and :74): only the words, pinned here, tell the user which field is empty."""
    with pytest.raises(ValueError) as e:
        FeaturesSystem(replace(ENTRY.configs["small"], **{field: ()}))
    assert str(e.value) == words


def test_a_release_with_an_invalid_range_is_refused_naming_the_release() -> None:
    """The system reads every release's ranges when built and would refuse the range anyway, so the checkers see
    the same domain without the validation's call (the equivalent entry for features config.py:71, drop_call):
    only the words, pinned here, tell the user which release is wrong."""
    bad = (Release("old", (("group_coordinator", 2, 1),)), Release("new", (("group_coordinator", 1, 2),)))
    with pytest.raises(ValueError) as e:
        FeaturesSystem(replace(ENTRY.configs["small"], releases=bad))
    assert str(e.value) == ("release 'old': Expected minValue >= 1, maxValue >= 1 and maxValue >= minValue, but "
                            "received minValue: 2, maxValue: 1")


@pytest.mark.parametrize(("profile", "states"), [("kip", 260), ("kafka", 252)])
def test_partial_pairs_sends_two_update_requests_under_partial_semantics(profile: str, states: int) -> None:
    """`partial-pairs` (conform_configs): `atomic`'s two-update requests under the KIP's first semantics, which
    no other config sends; TLC states the pairs on its own, so offering others (config.py:96) is a disagreement."""
    cfg = ENTRY.configs["partial-pairs"]
    assert cfg.semantics == "partial" and cfg.multi_update and "partial-pairs" not in ENTRY.story_configs
    assert any(len(r.feature_updates) == 2 for r in cfg.operator_requests())
    r = explore(ENTRY.build(replace(cfg, profile=profile)), ExploreOptions(stop_at_first=False))
    assert r.complete and r.ok and r.distinct_states == states, r.violated_ids


def test_a_queue_dropped_on_restart_is_caught_on_the_deprecation_story() -> None:
    """The gate's story config has the three brokers and two restarts the `ctl < 1` survivor needs."""
    r = explore(_QueueDroppedOnRestart(ENTRY.configs["deprecation"]))
    assert r.violated_ids == {"FEAT-14"}


def _deprecate_past_the_highest_minimum(node: FeatureZNode, lives: Any) -> FeatureZNode | None:
    """Deprecation one level past the live brokers' highest supported minimum (capped at the max)."""
    out, changed = [], False
    for name, rng in node.features:
        mins = [r.min_version for s in lives if isinstance(r := lookup(s, name), SupportedVersionRange)]
        new_min = min(max(max(mins, default=rng.min_version_level) + 1, rng.min_version_level),
                      rng.max_version_level)
        changed |= new_min != rng.min_version_level
        out.append((name, FinalizedVersionRange(new_min, rng.max_version_level)))
    return node.write(node.status, tuple(out)) if changed else None


class _DeprecatesForEveryBroker(FeaturesSystem):
    """Deprecation counting every broker's supported minimum (stopped, exited, not yet registered ones too),
    not only the live brokers'."""

    def deprecate(self, s: FeaturesState) -> FeaturesState | None:
        node = self.read(s.znode)
        assert isinstance(node, FeatureZNode)
        new = deprecate_min_levels(node, [self.supported(b) for b in s.brokers])
        return None if new is None else self._with_node(s, self.store(new))


def test_broken_deprecation_is_caught_by_feat15(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither mutant breaks any other property (under kip compatibility reads only the max level, so a raised
    minimum never shows in FEAT-01 or FEAT-08): FEAT-15 restates the KIP's rule and kills both on `deprecation`.
    (A deprecation not capped at the max level is equivalent there: a live broker's minimum is at most the max.)"""
    import reference_impl.features.system as system

    cfg = ENTRY.configs["deprecation"]
    assert explore(_DeprecatesForEveryBroker(cfg), ExploreOptions(stop_at_first=False)).violated_ids == {"FEAT-15"}
    monkeypatch.setattr(system, "deprecate_min_levels", _deprecate_past_the_highest_minimum)
    assert explore(FeaturesSystem(cfg), ExploreOptions(stop_at_first=False)).violated_ids == {"FEAT-15"}


class _ClientTakesASameEpoch(FeaturesSystem):
    """A client that takes a broker's answer at its own epoch too (the mutation campaign's survivor features
    system.py:480, `b.cache_epoch > s.client.epoch` made `>=`)."""

    def read_api_versions(self, s: FeaturesState, i: int) -> FeaturesState:
        b = s.brokers[i]
        if b.cache_epoch == s.client.epoch:
            return replace(s, client=Client(b.cache_epoch, b.cache))
        return super().read_api_versions(s, i)


def test_a_client_that_takes_a_same_epoch_is_caught_by_feat04() -> None:
    """Under kip a broker below migration_ibp_version serves the node's version with nothing cached, while one
    that read the node under the new IBP serves the same version with its features: a client that takes the
    second answer after the first changes what it knows at the same epoch, which trumps nothing (KIP-584: the
    higher epoch trumps). FEAT-04 sees it on `default` (the IBP roll); the reference holds it to that depth."""
    cfg = replace(ENTRY.configs["default"], profile="kip")
    r = explore(_ClientTakesASameEpoch(cfg))
    assert r.violated_ids == {"FEAT-04"}, r.violated_ids
    (v,) = r.violations
    before, after = v.trace.states[-2].client, v.trace.states[-1].client
    assert v.trace.actions[-1].name == "ReadApiVersions" and before.epoch == after.epoch and before != after
    depth = len(v.trace.actions)
    ok = explore(ENTRY.build(cfg), ExploreOptions(stop_at_first=False, max_depth=depth))
    assert ok.ok and {p.id: p.status for p in ok.properties}["FEAT-04"] == f"holds up to depth {depth}"


class _ValidatesBelowTheIbp(FeaturesSystem):
    """A broker below migration_ibp_version that decodes /features and applies the broker protections anyway
    (the mutation campaign's survivor features system.py:347, `if not s.ibp_enabled` -> `if False`)."""

    def _broker_reads(self, s: FeaturesState, b: Any) -> tuple[bool, Any, int]:
        return super()._broker_reads(replace(s, ibp_enabled=True), b)


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_validation_below_the_migration_ibp_is_caught_by_feat16(profile: str) -> None:
    """FEAT-16 sees it on `default`, which starts a cluster below the IBP and rolls it; since the roll restarts
    the brokers FEAT-13 does too (no broker below the IBP holds a cache), and before that no property did (an
    exited broker is outside FEAT-08). The reference holds both there (the whole `default` run is the gate's;
    here, to the violating depth)."""
    cfg = replace(ENTRY.configs["default"], profile=profile)
    r = explore(_ValidatesBelowTheIbp(cfg))
    assert "FEAT-16" in r.violated_ids and r.violated_ids <= {"FEAT-13", "FEAT-16"}, r.violated_ids
    v = next(v for v in r.violations if v.property_id == "FEAT-16")
    assert not v.trace.states[-1].ibp_enabled
    assert v.trace.actions[-1].name in ("StartBroker", "DeliverFeaturesNotification", "SetIbp")
    depth = max(len(v.trace.actions) for v in r.violations)
    ok = explore(ENTRY.build(cfg), ExploreOptions(stop_at_first=False, max_depth=depth))
    holds = {p.id: p.status for p in ok.properties}
    assert ok.ok and holds["FEAT-16"] == holds["FEAT-13"] == f"holds up to depth {depth}"


def test_the_ibp_roll_restarts_every_running_broker_under_the_new_ibp() -> None:
    """The IBP is a static broker config: Kafka rolls it by restarting every broker, and a broker validates
    /features at startup only at or above KAFKA_2_7_IV0 (KafkaServer). So on a roll up an incompatible binary
    exits, and a roll down leaves no broker with features cached. Before, SetIbp only unregistered the brokers:
    with two rolls a broker that had started below the IBP ran on, unvalidated, at the new IBP (FEAT-08
    violated, and FEAT-13 under kafka)."""
    ts = ENTRY.build(replace(ENTRY.configs["ibp-roll"], profile="kafka"))
    s = next(s for s in ts.initial_states() if s.ibp_enabled)  # a new cluster, both brokers on `old`
    s = _do(ts, s, "RestartBroker(broker=0, release='new')")
    s = _do(ts, s, "StartBroker(broker=0)")
    s = _do(ts, s, "ElectController(broker=0)")  # /features ENABLED at `new`'s ranges, which `old` lacks
    s = _do(ts, s, "DeliverFeaturesNotification(broker=0)")
    assert s.brokers[0].cache and s.brokers[0].cache_epoch == s.znode.version
    # Broker 1 (`old`) has its notification pending, on which it would exit: the roll comes first.
    down = _do(ts, s, "SetIbp(enabled=False)")
    assert down.controller == -1 and down.registration_queue == ()
    # Both brokers restarted below the IBP, where nothing validates: running, nothing cached, no epoch (kafka).
    assert all(b.status is BrokerStatus.RUNNING and b.cache == () and b.cache_epoch == -1 and not b.registered
               and b.notified for b in down.brokers), down.brokers
    up = _do(ts, down, "SetIbp(enabled=True)")
    assert up.brokers[1].status is BrokerStatus.EXITED  # its startup validation at the new IBP
    assert up.brokers[0].status is BrokerStatus.RUNNING and up.brokers[0].cache
    assert up.brokers[0].cache_epoch == up.znode.version and up.znode == down.znode == s.znode


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_a_roll_without_restarts_is_caught_on_ibp_roll(profile: str) -> None:
    """The roll as the model had it before (the brokers keep running on what they read under the old IBP) breaks
    FEAT-08 or FEAT-13 on `ibp-roll`, which rolls the IBP there and back."""
    cfg = replace(ENTRY.configs["ibp-roll"], profile=profile)
    r = explore(_RollsWithoutRestarts(cfg))
    assert r.violated_ids & {"FEAT-08", "FEAT-13", "FEAT-16"}, r.violated_ids
    assert any(a.name == "SetIbp" for a in r.violations[0].trace.actions)


class _RollsWithoutRestarts(FeaturesSystem):
    def set_ibp(self, s: FeaturesState) -> FeaturesState:
        brokers = tuple(replace(b, registered=False) for b in s.brokers)
        return FeaturesState(s.znode, not s.ibp_enabled, -1, brokers, (), s.client, s.restarts, s.ibp_changes + 1)


def test_atomic_conformance_kills_requests_pairing_the_downgrade_flags(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`atomic` is also a conform config: a reference whose two-update requests pair an update with the downgrade
    flag and one without (config.py's same-flag condition dropped) reaches 260 states under kafka for 252 and
    moves both features in one write where the spec has no such step; only TLC, which states its own pairs,
    tells them apart (the Z3 model reads the pairs from the config)."""
    import itertools

    from reference_impl.features.api import FeatureUpdate, UpdateFeaturesRequest
    from reference_impl.features.config import FeaturesConfig

    def any_flags(self: FeaturesConfig) -> tuple[UpdateFeaturesRequest, ...]:
        singles = [FeatureUpdate(f, lvl, allow) for f in self.feature_names for lvl in self.levels
                   for allow in (False, True)]
        out = [UpdateFeaturesRequest((u,)) for u in singles]
        if self.dry_run:
            out += [UpdateFeaturesRequest((u,), dry_run=True) for u in singles]
        if self.multi_update:
            out += [UpdateFeaturesRequest((a, b)) for a, b in itertools.combinations(singles, 2)
                    if a.feature != b.feature]
        return tuple(out)

    atomic = replace(ENTRY.configs["atomic"], profile="kafka")
    assert explore(ENTRY.build(atomic), ExploreOptions(stop_at_first=False)).distinct_states == 252
    monkeypatch.setattr(FeaturesConfig, "operator_requests", any_flags)
    assert explore(ENTRY.build(atomic), ExploreOptions(stop_at_first=False)).distinct_states == 260
    code = main(["conform", "features", "--config", "atomic", "--profile", "kafka", "--quiet",
                 "--out", str(tmp_path)])
    assert code == 3
