"""KIP-268 at the system level: the KIP's test matrix as exhaustive explorations of a 3-instance group under
every profile (kip, kafka, kafka-2.0), the single-bounce counterexample, the broken variants (explorer and
Hypothesis), KAFKA-8649 under kafka-2.0, and config errors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from properties.streams_probing import PROPERTIES
from reference_impl.streams_probing.config import OPERATOR_MAX_BOUNCES, StreamsProbingConfig
from reference_impl.streams_probing.releases import release
from reference_impl.streams_probing.system import Delivered, StreamsGroupState, StreamsProbingSystem
from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import Action
from rollcheck.explore.explorer import ExploreOptions, explore, reachable_states
from rollcheck.testing import ContractCase, ProtocolContract
from tests.streams_matrix import matrix_cells

ENTRY = get_protocol("streams_probing")
PROFILES = ENTRY.profiles
assert PROFILES == ("kip", "kafka", "kafka-2.0")


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(("from_release", "to_release"), matrix_cells())
def test_matrix_cell(from_release: str, to_release: str, profile: str) -> None:
    """Every (from, to) cell of KIP-268's test matrix, with one instance crash and restart during the upgrade
    ("this should include failure scenario during the upgrade"), the procedure the KIP prescribes."""
    cfg = StreamsProbingConfig(profile=profile, from_release=from_release, to_release=to_release, max_crashes=1)
    ts = StreamsProbingSystem(cfg)
    r = explore(ts, ExploreOptions(stop_at_first=False))
    assert not r.violations, [(v.property_id, v.description) for v in r.violations]
    assert not r.vacuous, r.vacuous  # every story the cell can tell (the witnesses it applies) happened
    # The exploration reached the end of the upgrade: a stable group on the target version.
    target = release(to_release).latest_supported
    assert r.distinct_states > 100
    assert any(ts.stable(s) and ts.bounces_done(s) and ts.converged(s)
               and all(x.used_version == target for x in s.instances) for s in _reachable(ts))


def _reachable(ts: StreamsProbingSystem) -> set[StreamsGroupState]:
    return reachable_states(ts)[0]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("from_release", ["0.10.1", "1.1"])
def test_single_bounce_without_upgrade_from_fails(from_release: str, profile: str) -> None:
    """KIP-268: a pre-2.0 group bounced once to 2.0 without upgrade.from breaks: the old leader cannot decode
    the new subscription. The model must produce that counterexample."""
    cfg = StreamsProbingConfig(profile=profile, from_release=from_release, to_release="2.0",
                               procedure="single-bounce")
    r = explore(ENTRY.build(cfg))
    assert r.violations and r.violations[0].property_id == "STR-06"
    trace = r.violations[0].trace
    names = [s.action.name for s in trace.steps if s.action is not None]
    assert "RollingBounce" in names and names[-1] == "Rebalance"
    last = trace.steps[-1]
    assert last.action is not None
    assert "unable to decode subscription data: version=3" in last.state.instances[last.action["leader"]].failure


@pytest.mark.parametrize("name", sorted(ENTRY.configs))
def test_named_configs(name: str) -> None:
    for profile in PROFILES:
        cfg = replace(ENTRY.configs[name], profile=profile)
        if cfg.new.name == "3.9" and profile != "kafka":
            continue  # 3.9 exists in the kafka profile only
        if name == "large":
            continue  # 42 k states per profile: explored by the CLI (docs/protocols/streams_probing.md), not here
        r = explore(ENTRY.build(cfg), ExploreOptions(stop_at_first=False))
        violated = {v.property_id for v in r.violations}
        # KIP-268's counterexample by design: a bounce without upgrade.from while a pre-2.0 leader remains
        by_design = name in ("no-upgrade-from", "operator-from-1.1")
        assert violated == ({"STR-06"} if by_design else set()), (profile, violated)
        witnesses = {p.id: p.status for p in r.properties if p.kind == "witness"}
        assert set(witnesses) == set(_witnesses(name, profile)), (profile, witnesses)
        assert all(st.startswith("reached at depth ") for st in witnesses.values()), (profile, witnesses)


# The witnesses each named config applies (their when=): the stories it exists to cover.
_PROBING = ("STR-W1", "STR-W2", "STR-W3", "STR-W5")  # 2.0 -> a higher version: version probing
_TWO_BOUNCES = ("STR-W4", "STR-W5")  # pre-2.0 -> a higher version: upgrade.from, then removed
WITNESSES = {"small": _PROBING, "default": _PROBING, "kafka-latest": _PROBING, "pre20": _TWO_BOUNCES,
             "from-0.10.0": _TWO_BOUNCES, "large": _TWO_BOUNCES, "no-upgrade-from": ("STR-W5",),
             # the operator sets upgrade.from or not, one bounce each (no probing: versions 2 -> 4 at once)
             "operator-from-1.1": _TWO_BOUNCES,
             # a 2.0 group bounced onto 3.9 by the operator: version probing, upgrade.from never set
             "operator-from-2.0": _PROBING,
             # 0.10.1 -> 1.1: version 2 on both sides, and 1.1 refuses upgrade.from "0.10.1": no story applies
             "operator-from-0.10.1": (),
             # post-2.0 probes (W1-W3), the operator may set upgrade.from (W4), and sets it wrong (W6)
             "misconfigured-upgrade-from": (*_PROBING[:3], "STR-W4", "STR-W5", "STR-W6")}


def _witnesses(name: str, profile: str) -> tuple[str, ...]:
    """kafka-2.0 has no leader-side follow-up rebalance (Kafka 2.0, the 2.1 branch): STR-W3 does not apply."""
    return tuple(w for w in WITNESSES[name] if not (profile == "kafka-2.0" and w == "STR-W3"))


def test_the_declared_properties() -> None:
    """Every id, kind and order (the witnesses last); each config applies the witnesses it can reach."""
    assert PROPERTIES.ids == ("STR-01", "STR-02", "STR-03", "STR-04", "STR-05", "STR-06", "STR-07", "STR-08",
                              "STR-09", "STR-10", "STR-L1", "STR-W1", "STR-W2", "STR-W3", "STR-W4", "STR-W5",
                              "STR-W6")
    assert [d.kind.value for d in PROPERTIES] == ["step"] * 4 + ["invariant"] * 6 + ["graph"] + ["witness"] * 6
    assert set(WITNESSES) == set(ENTRY.configs)
    for name, cfg in ENTRY.configs.items():
        ts = ENTRY.build(cfg)
        props = ts.properties()
        # STR-06 (nobody fails) holds only where upgrade.from names the release upgraded from.
        safety = [i for i in PROPERTIES.ids[:11] if not (i == "STR-06" and cfg.misconfigured_upgrade_from)]
        assert [p.id for p in props] == [*safety, *WITNESSES[name]], name
        assert [(p.id, p.description) for p in props] == [(d.id, d.statement) for d in PROPERTIES
                                                          if d.id in {p.id for p in props}]


def test_bad_configs_are_clear() -> None:
    for bad, message in [
        (StreamsProbingConfig(from_release="2.0", to_release="1.1"), "not an upgrade"),
        (StreamsProbingConfig(to_release="3.9"), "kafka profile only"),
        (StreamsProbingConfig(to_release="3.9", profile="kafka-2.0"), "kafka profile only"),
        (StreamsProbingConfig(profile="kafka-2.1"), "profile must be one of kip, kafka, kafka-2.0, not 'kafka-2.1'"),
        (StreamsProbingConfig(from_release="0.9"), "unknown Kafka Streams release '0.9'"),
        (StreamsProbingConfig(procedure="three-bounces"), "procedure must be one of"),
        (StreamsProbingConfig(mutations=frozenset({"nope"})), "unknown mutations"),
        (StreamsProbingConfig(instances=9), "instances must be between 1 and 4"),
    ]:
        with pytest.raises(ValueError, match=message):
            bad.validate()


def _bounces(ts: StreamsProbingSystem, s: StreamsGroupState) -> list[tuple[int, str | None]]:
    return [(a["instance"], a["upgrade_from"]) for a, _ in ts.successors(s) if a.name == "RollingBounce"]


def _settle(ts: StreamsProbingSystem, s: StreamsGroupState, leader: int = 0) -> StreamsGroupState:
    """Run the group until it is stable: rebalances led by ``leader`` (or the first member), members in order."""
    while not ts.stable(s):
        steps = [(a, t) for a, t in ts.successors(s) if a.name != "RollingBounce"]
        pick = [(a, t) for a, t in steps if a.name != "Rebalance" or a["leader"] == leader] or steps
        s = pick[0][1]
    return s


@pytest.mark.parametrize("profile", PROFILES)
def test_operator_procedure_offers_every_bounce(profile: str) -> None:
    """procedure "operator" (the runbooks'): once the group is stable, every instance below the cap may be
    bounced, upgrade.from removed or set to the old release's value, in any order; bounces_done is the
    operator's intent done (every instance on the new release, upgrade.from removed), not a count."""
    cfg = StreamsProbingConfig(profile=profile, from_release="1.1", to_release="2.0", procedure="operator")
    assert (cfg.operator, cfg.two_bounces, cfg.upgrade_from, cfg.upgrade_from_choices, cfg.max_bounces) == (
        True, False, "1.1", (None, "1.1"), OPERATOR_MAX_BOUNCES)
    with pytest.raises(ValueError, match="procedure 'operator' has no rounds"):
        _ = cfg.rounds
    ts = StreamsProbingSystem(cfg)
    s = _settle(ts, next(iter(ts.initial_states())))
    assert _bounces(ts, s) == [(i, uf) for i in range(3) for uf in (None, "1.1")]
    # Instance 2 straight onto 2.0 without upgrade.from, before the others (the rounds would forbid it).
    s = next(t for a, t in ts.successors(s) if a.name == "RollingBounce" and a["instance"] == 2
             and a["upgrade_from"] is None)
    assert not ts.bounces_done(s)
    for i in (0, 1):  # the 2.0 instance leads: it reads version 3 and assigns version 2 meanwhile
        s = next(t for a, t in ts.successors(_settle(ts, s, leader=2)) if a.name == "RollingBounce"
                 and a["instance"] == i and a["upgrade_from"] is None)
    s = _settle(ts, s, leader=2)
    assert ts.bounces_done(s) and ts.converged(s)
    # The cap: an instance bounced OPERATOR_MAX_BOUNCES times is offered no more bounce.
    for _ in range(OPERATOR_MAX_BOUNCES - 1):
        s = _settle(ts, next(t for a, t in ts.successors(s) if a.name == "RollingBounce" and a["instance"] == 0
                             and a["upgrade_from"] is None), leader=2)
    assert s.instances[0].bounces == OPERATOR_MAX_BOUNCES and {i for i, _ in _bounces(ts, s)} == {1, 2}


@pytest.mark.parametrize(("from_release", "to_release", "choices"), [
    ("2.0", "post-2.0", (None,)),  # a probing old release: no upgrade.from needed (version probing)
    ("0.10.0", "1.1", (None, "0.10.0")),  # the KAFKA-6054 back-port
    ("0.10.1", "1.1", (None,)),  # a pre-2.0 release accepts only "0.10.0"
    ("0.10.0", "post-2.0", (None, "0.10.0")),
])
def test_operator_upgrade_from_choices(from_release: str, to_release: str, choices: tuple[str | None, ...]) -> None:
    cfg = StreamsProbingConfig(from_release=from_release, to_release=to_release, procedure="operator")
    cfg.validate()
    assert cfg.upgrade_from_choices == choices


@pytest.mark.parametrize("profile", PROFILES)
def test_operator_procedure_free_of_a_runbook_breaks_only_str06(profile: str) -> None:
    """With nobody to tell it the order, an operator may bounce a 1.1 group's instance onto 2.0 without
    upgrade.from while a 1.1 instance can lead (STR-06); every other property holds and every witness the
    config applies (STR-W4: upgrade.from is one of the operator's choices) is reached."""
    cfg = StreamsProbingConfig(profile=profile, from_release="1.1", to_release="2.0", instances=2,
                               procedure="operator")
    r = explore(ENTRY.build(cfg), ExploreOptions(stop_at_first=False))
    assert {v.property_id for v in r.violations} == {"STR-06"}
    assert {p.id: p.status.startswith("reached") for p in r.properties if p.kind == "witness"} == {
        "STR-W4": True, "STR-W5": True}


# Rules that exist only in the KIP's assignor: under kafka the broken rule is never reached.
KIP_ONLY = {
    # Today's member refuses a commonly supported version above its own before it could adopt it
    # ("Can't upgrade to metadata version greater than we support"): KAFKA-8649 cannot happen there.
    "STR-M4": "KAFKA-8649 is fixed by the member-side check",
    "STR-M6": "a kafka leader encodes the commonly supported version, not its own",
}


ROLLCHECK_CONTRACT = ProtocolContract(
    "streams_probing", counts={"default": 3470, "default/kafka": 3515, "default/kafka-2.0": 3461,
                               "small/kafka-2.0": 71},
    profiles=PROFILES, kafka_survivors=KIP_ONLY,
    hypothesis_examples=500, hypothesis_steps=40, reference_hypothesis=(60, 60), reference_config="large",
    reference_profiles=PROFILES,
    # test_spec_*.py's conformance already compares TLC's whole reachable set on small (stronger)
    tlc_configs=())


def test_kafka_2_0_has_no_leader_follow_up_and_converges(tmp_path: Path) -> None:
    """kafka-2.0: Kafka 2.0's and the 2.1 branch's leaders never ask for a follow-up rebalance (the member that
    changes its version rejoins by itself), and the group still converges: every property holds on default."""
    ts = ENTRY.build(replace(ENTRY.configs["default"], profile="kafka-2.0"))
    states, actions = reachable_states(ts)
    assert len(states) == 3461
    assert all(s.follow_up < 0 for s in states) and "LeaderFollowUpRebalance" not in actions
    assert "STR-W3" not in {p.id for p in ts.properties()}
    assert {"ProbeDowngrade", "AdoptSupportedVersion"} <= actions


def test_kafka_8649_is_the_2_1_1_leader_with_a_2_0_member() -> None:
    """The finding: Kafka 2.0 -> 2.1.0 / 2.1.1 as shipped (STR-M4 under kafka-2.0) breaks on the gate's config.
    A 2.1.1 leader answers version 3 with its own LATEST_SUPPORTED_VERSION, 4; the 2.0 member adopts it uncapped
    (STR-05) and cannot build its next subscription (STR-06). The 2.1 branch's fix, modelled by kafka-2.0, sends
    the commonly supported version, 3."""
    ts = ENTRY.variant("STR-M4").system(replace(ENTRY.configs["default"], profile="kafka-2.0"))
    r = explore(ts, ExploreOptions(stop_at_first=False))
    first = {v.property_id: v.depth for v in r.violations}
    assert (first["STR-05"], first["STR-06"]) == (7, 10)
    trace = next(v.trace for v in r.violations if v.property_id == "STR-06")
    assert [str(st.action) for st in trace.steps[5:]] == [
        "RollingBounce(instance=0, release='post-2.0', upgrade_from=None)", "Rebalance(leader=0)",
        "ProbeDowngrade(instance=0, version=4)", "AdoptSupportedVersion(instance=1, version=4)",
        "AdoptSupportedVersion(instance=2, version=4)", "Rebalance(leader=0)"]
    # The 2.1.1 leader's version 3 assignment carries its own latest supported version, 4.
    assert {x.inbox for x in trace.steps[6].state.instances} == {Delivered(3, 4, 0, False)}
    failed = [x for x in trace.steps[-1].state.instances if x.failure]
    assert [(x.release, x.failure) for x in failed] == [
        ("2.0", "subscription: version must be between 1 and 3; was: 4")]
    reference = explore(ENTRY.build(replace(ENTRY.configs["default"], profile="kafka-2.0")),
                        ExploreOptions(stop_at_first=False))
    assert not reference.violations


def test_hypothesis_finds_kafka_8649_under_kafka_2_0() -> None:
    from hypothesis import HealthCheck, settings
    from hypothesis.stateful import run_state_machine_as_test

    from rollcheck.fuzzing.machine import PropertyViolated, machine_for

    ts = ENTRY.variant("STR-M4").system(replace(ENTRY.configs["small"], profile="kafka-2.0"))
    with pytest.raises(PropertyViolated, match=r"STR-0[56]"):
        run_state_machine_as_test(machine_for(ts), settings=settings(
            max_examples=300, stateful_step_count=30, derandomize=True, deadline=None,
            suppress_health_check=list(HealthCheck)))


def test_the_commands_take_kafka_2_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """list, explore, replay and export-test with kafka-2.0 (KAFKA-8649: STR-M4 under kafka-2.0); the trace's #meta
    names the profile and replay rebuilds that system."""
    import json

    from rollcheck.cli import main

    assert main(["list", "--json"]) == 0
    listing = {p["name"]: p["profiles"] for p in json.loads(capsys.readouterr().out)["protocols"]}
    assert listing["streams_probing"] == ["kip", "kafka", "kafka-2.0"] and listing["features"] == ["kip", "kafka"]
    out = tmp_path / "out"
    assert main(["explore", "streams_probing", "--config", "small", "--profile", "kafka-2.0", "--variant", "STR-M4",
                 "--out", str(out), "--quiet"]) == 1
    (trace,) = out.rglob("counterexamples/STR-05.itf.json")
    assert json.loads(trace.read_text())["#meta"]["profile"] == "kafka-2.0"
    capsys.readouterr()
    assert main(["replay", str(trace), "--json"]) == 1
    (result,) = json.loads(capsys.readouterr().out)["traces"]
    assert (result["profile"], result["variant"], [f["property"] for f in result["failures"]]) == (
        "kafka-2.0", "STR-M4", ["STR-05"])
    # On the reference the 2.1 branch's leader sends supported version 3, not 4: the bad step is not there.
    assert main(["replay", str(trace), "--reference"]) == 3
    said = capsys.readouterr().out
    assert "step 5: no enabled action leads to the recorded state (label Rebalance(leader=0))" in said
    assert main(["export-test", str(trace), "-o", str(tmp_path / "tests")]) == 0
    assert len(list((tmp_path / "tests").glob("test_*.py"))) == 1


def test_protocol_contract(contract_case: ContractCase, tmp_path: Path) -> None:
    """rollcheck.testing's contract: variants killed (explorer, Hypothesis), codec and ITF round trips,
    pinned counts, TLC's count and the spec's names."""
    contract_case.run(tmp_path)


class _BouncesPastTheRounds(StreamsProbingSystem):
    """The bounce loop without its guard (the mutation campaign's `system.py:204` `if False`): an instance is
    bounced again before the round reached everyone, and past the procedure's rounds (an infinite state space)."""

    def _bounces(self, s: StreamsGroupState) -> Any:
        for i, x in enumerate(s.instances):  # the reference's loop, without its guard
            upgrade_from = None if x.bounces + 1 == self.config.rounds else self.config.upgrade_from
            bounced = replace(x, release=self.new.name, upgrade_from=upgrade_from, running=True,
                              used_version=self.configured(self.new.name, upgrade_from), bounces=x.bounces + 1,
                              inbox=None, failure="")
            instances = (*s.instances[:i], bounced, *s.instances[i + 1:])
            yield Action.of("RollingBounce", instance=i, release=self.new.name, upgrade_from=upgrade_from), replace(
                s, instances=instances, rebalance_pending=True, rebalances=0)


@pytest.mark.parametrize("config", ["small", "pre20"])
def test_a_bounce_past_the_procedure_is_caught_by_str10(config: str) -> None:
    """No other property sees it (every bounce is to the new release); STR-10 does at the bounce that breaks the
    round order, long before the unbounded state space would exhaust the explorer."""
    r = explore(_BouncesPastTheRounds(ENTRY.configs[config]), ExploreOptions(max_depth=20))
    assert r.violated_ids == {"STR-10"}, r.violated_ids
    (v,) = r.violations
    assert [a.name for a in v.trace.actions].count("RollingBounce") == 2
