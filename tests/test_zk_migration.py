"""KIP-866: the API facts (Kafka 3.9's states, codes, transitions, activation, registration, take-over),
explorations under both profiles, the broken variants (explorer and Hypothesis) and the findings."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from properties.machine import PropertyViolated, machine_for
from properties.zk_migration import zk_migration_properties
from reference_impl.zk_migration import api
from reference_impl.zk_migration.api import MigrationDriverState as D
from reference_impl.zk_migration.api import ZkMigrationState as Z
from reference_impl.zk_migration.system import ZkMigrationSystem, ZkMigrationSystemState
from rollcheck.explorer import explore
from rollcheck.registry import get_protocol
from rollcheck.traces import read_itf, trace_from_itf, write_itf

ENTRY = get_protocol("zk_migration")


# ---------------------------------------------------------------- API facts
def test_zk_migration_state_codes_and_the_3_4_swap() -> None:
    assert [(s.name, s.code) for s in Z] == [("NONE", 0), ("MIGRATION", 1), ("PRE_MIGRATION", 2),
                                            ("POST_MIGRATION", 3), ("ZK", 4)]
    # Kafka 3.4 wrote PRE_MIGRATION as 1: a 3.4 log reads as MIGRATION in 3.5+.
    assert api.ZkMigrationState.from_code(1) is Z.MIGRATION
    with pytest.raises(ValueError, match="Unsupported ZkMigrationState code 4"):
        api.ZkMigrationState.from_code(4)
    assert Z.PRE_MIGRATION.in_progress() and Z.MIGRATION.in_progress() and not Z.POST_MIGRATION.in_progress()


def test_driver_transitions_are_kafkas() -> None:
    allowed = {(a, b) for a in D for b in D if a is not b and api.is_valid_state_change(a, b)}
    assert allowed == {
        (D.UNINITIALIZED, D.INACTIVE), (D.DUAL_WRITE, D.INACTIVE), (D.INACTIVE, D.WAIT_FOR_CONTROLLER_QUORUM),
        (D.WAIT_FOR_CONTROLLER_QUORUM, D.INACTIVE), (D.WAIT_FOR_CONTROLLER_QUORUM, D.BECOME_CONTROLLER),
        (D.WAIT_FOR_CONTROLLER_QUORUM, D.WAIT_FOR_BROKERS), (D.WAIT_FOR_BROKERS, D.INACTIVE),
        (D.WAIT_FOR_BROKERS, D.BECOME_CONTROLLER), (D.BECOME_CONTROLLER, D.INACTIVE),
        (D.BECOME_CONTROLLER, D.ZK_MIGRATION), (D.BECOME_CONTROLLER, D.SYNC_KRAFT_TO_ZK),
        (D.ZK_MIGRATION, D.INACTIVE), (D.ZK_MIGRATION, D.SYNC_KRAFT_TO_ZK), (D.SYNC_KRAFT_TO_ZK, D.INACTIVE),
        (D.SYNC_KRAFT_TO_ZK, D.KRAFT_CONTROLLER_TO_BROKER_COMM), (D.KRAFT_CONTROLLER_TO_BROKER_COMM, D.INACTIVE),
        (D.KRAFT_CONTROLLER_TO_BROKER_COMM, D.DUAL_WRITE)}
    assert not api.is_valid_state_change(D.INACTIVE, D.UNINITIALIZED)
    assert [s for s in D if s.allow_dual_write] == [D.KRAFT_CONTROLLER_TO_BROKER_COMM, D.DUAL_WRITE]


def test_bootstrap_and_activation() -> None:
    assert api.bootstrap_migration_state(13, True, "kafka") is Z.PRE_MIGRATION
    assert api.bootstrap_migration_state(8, True, "kip") is Z.PRE_MIGRATION
    with pytest.raises(api.ActivationError, match="does not support ZK migrations"):
        api.bootstrap_migration_state(8, True, "kafka")  # 3.9: an empty log needs 3.6-IV1
    assert api.bootstrap_migration_state(8, False, "kafka") is Z.NONE
    act = api.activate(Z.NONE, True, False, False, "kafka")
    assert act.resign is not None and "created in KRaft mode" in act.resign
    assert api.activate(Z.MIGRATION, False, False, True, "kafka") == api.Activation(Z.POST_MIGRATION, None, True)
    kip = api.activate(Z.MIGRATION, False, False, False, "kip")
    assert kip.write is None and kip.resign is not None
    assert api.activate(Z.MIGRATION, False, True, False, "kip").write is Z.POST_MIGRATION
    assert api.activate(Z.POST_MIGRATION, True, False, False, "kip") == api.Activation(None, None, False)
    # A pre-migration controller without the config: the KIP's "wrong settings" resigns, Kafka carries on.
    assert api.activate(Z.PRE_MIGRATION, False, False, False, "kip").resign is not None
    assert api.activate(Z.PRE_MIGRATION, False, False, False, "kafka") == api.Activation(None, None, False)


def test_registration_and_takeover_rules() -> None:
    ok = api.ZkBrokerRegistration(1, 13, True)
    assert api.zk_broker_registration_error(ok, 13, True) is None
    assert "between 12 and 12" in (api.zk_broker_registration_error(replace(ok, ibp=12), 13, True) or "")
    assert "ZkMigrationReady" in (api.zk_broker_registration_error(replace(ok, zk_migration_ready=False), 13, True)
                                  or "")
    assert "not configured" in (api.zk_broker_registration_error(ok, 13, False) or "")
    assert "already registered by a KRaft broker" in (api.zk_broker_registration_error(ok, 13, True,
                                                                                     frozenset({1})) or "")
    assert api.kraft_broker_registration_error(1, frozenset({1, 2})) is not None
    assert api.kraft_broker_registration_error(3, frozenset({1, 2})) is None
    # tryRegisterKRaftControllerAsActiveController: ZK epoch + 1, refused if /controller has a newer KRaft epoch
    assert api.claim_controller_epoch(5, -1, 1) == 6
    assert api.claim_controller_epoch(6, 3, 3) is None and api.claim_controller_epoch(6, 3, 4) == 7


# ---------------------------------------------------------------- explorations
@pytest.mark.parametrize("profile", ["kip", "kafka"])
@pytest.mark.parametrize("config", ["small", "faults"])
def test_exploration_holds(profile: str, config: str) -> None:
    r = explore(ENTRY.build(replace(ENTRY.configs[config], profile=profile)), stop_at_first=False)
    assert r.complete and r.ok, [(v.property_id, v.trace.actions) for v in r.violations]
    statuses = {p.id: p.status for p in r.properties}
    assert statuses["MIG-L1"] == "holds" and statuses["MIG-L2"] == "holds"


def test_small_counts_are_stable() -> None:
    assert explore(ENTRY.build(ENTRY.configs["small"])).distinct_states == 624
    assert explore(ENTRY.build(replace(ENTRY.configs["small"], profile="kafka"))).distinct_states == 648


def _do(ts: ZkMigrationSystem, s: ZkMigrationSystemState, label: str) -> ZkMigrationSystemState:
    for a, t in ts.successors(s):
        if repr(a) == label:
            return t
    raise AssertionError(f"{label} not enabled; enabled: {[repr(a) for a, _ in ts.successors(s)]}")


HAPPY = ["EnableMigrationOnBroker(broker=0)", "RegisterZkBroker(broker=0)", "DriverActivate(voter=0)",
         "DriverWaitForQuorum(voter=0)", "DriverWaitForBrokers(voter=0)", "BecomeZkController(voter=0)",
         "BeginMigration(voter=0)", "CompleteMigration(voter=0)", "SyncKRaftToZk(voter=0)",
         "SendRpcsToBrokers(voter=0)", "KRaftMetadataChange()", "DualWrite(voter=0)"]


def test_the_migration_story() -> None:
    ts = ENTRY.build(ENTRY.configs["small"])
    s = next(iter(ts.initial_states()))
    assert s.migration is Z.PRE_MIGRATION and s.zk.controller == 0 and s.zk.controller_epoch == 5
    for label in HAPPY[:6]:
        s = _do(ts, s, label)
    assert s.zk.controller == 100 and s.zk.controller_epoch == 6  # above every ZooKeeper epoch
    assert not any(repr(a) == "ZkMetadataChange()" for a, _ in ts.successors(s))  # the ZK controller is fenced
    for label in HAPPY[6:]:
        s = _do(ts, s, label)
    assert s.migration is Z.MIGRATION and s.log == (0, 1) and s.zk.data == (0, 1)
    s = _do(ts, s, "RestartBrokerAsKRaft(broker=0)")
    s = _do(ts, s, "RestartVoter(voter=0, migration=False)")
    s = _do(ts, s, "ElectLeader(voter=0)")
    assert s.migration is Z.POST_MIGRATION


def test_a_reelected_voter_starts_its_driver_afresh() -> None:
    """Voter 0 loses leadership while its driver is in BECOME_CONTROLLER and is elected again before the driver
    noticed: Kafka's driver receives KRaftLeaderEvent(not leader) before KRaftLeaderEvent(leader), so it starts
    again from INACTIVE and never takes ZooKeeper over with what it held in the old epoch."""
    ts = ENTRY.build(replace(ENTRY.configs["faults"], max_epoch=3))  # two failovers
    s = next(iter(ts.initial_states()))
    for label in ["EnableMigrationOnBroker(broker=0)", "RegisterZkBroker(broker=0)", "DriverActivate(voter=0)",
                  "DriverWaitForQuorum(voter=0)", "DriverWaitForBrokers(voter=0)"]:
        s = _do(ts, s, label)
    assert s.voters[0].driver is D.BECOME_CONTROLLER
    s = _do(ts, s, "LeaderFailover(voter=1)")
    assert s.voters[0].driver is D.BECOME_CONTROLLER  # not noticed yet: a stale driver
    s = _do(ts, s, "LeaderFailover(voter=0)")
    assert s.leader == 0 and s.voters[0].driver is D.INACTIVE and s.voters[0].zk_version == -1
    assert not any(repr(a) == "BecomeZkController(voter=0)" for a, _ in ts.successors(s))


def test_unclean_rollback_can_lose_metadata() -> None:
    # KIP-866 "Rollback to ZK": a forced shutdown may lose metadata; the model must show it.
    ts = ENTRY.build(ENTRY.configs["small"])
    s = next(iter(ts.initial_states()))
    for label in HAPPY[:11]:
        s = _do(ts, s, label)
    assert s.log == (0, 1) and s.zk.data == (0,)
    s = _do(ts, s, "ShutdownQuorum(clean=False)")
    s = _do(ts, s, "DeleteControllerZNodes()")
    s = _do(ts, s, "ElectZkController(broker=0)")
    assert s.zk.data == (0,)  # record 1, committed in KRaft, is gone


class _KipClaims(ZkMigrationSystem):
    def invariants(self):  # type: ignore[no-untyped-def]
        return zk_migration_properties(self.config, kip_claims=True)


def _violated(config: Any) -> set[str]:
    return {v.property_id for v in explore(_KipClaims(config), stop_at_first=False).violations}


def test_findings() -> None:
    # Kafka 3.9 has no write-behind limit and keeps committing while ZooKeeper is down.
    assert "MIG-04" in _violated(replace(ENTRY.configs["small"], profile="kafka", max_updates=2))
    assert "MIG-04" not in _violated(replace(ENTRY.configs["small"], max_updates=2))
    # Kafka finalizes as soon as one controller without the migration config becomes active.
    assert "MIG-12" in _violated(replace(ENTRY.configs["faults"], profile="kafka"))
    # The KIP's rollback deletes /controller_epoch: the next ZK controller starts again at epoch 1.
    kip_small = _violated(ENTRY.configs["small"])
    assert "MIG-01R" in kip_small
    assert "MIG-01R" not in _violated(replace(ENTRY.configs["small"], profile="kafka"))


@pytest.mark.parametrize("variant", [v.id for v in ENTRY.variants])
def test_variant_caught_by_explorer(variant: str, tmp_path: Path) -> None:
    v = ENTRY.variant(variant)
    ts = v.build(ENTRY.configs[v.config])
    r = explore(ts, config_name=v.config)
    assert r.violations and r.violations[0].property_id in v.expect
    steps = r.violations[0].trace.steps
    for before, after in itertools.pairwise(steps):
        assert (after.action, after.state) in list(ts.successors(before.state))
    back = trace_from_itf(read_itf(write_itf(tmp_path / "cex.itf.json", r.violations[0].trace, ts)), ts)
    assert back.states == r.violations[0].trace.states


# MIG-M1 and the failover bugs MIG-M9 / MIG-M10 need 13- to 19-step interleavings (a leadership change
# the old leader has not noticed, the new leader's take-over, then a write): the explorer finds them,
# bounded random walks do not.
@pytest.mark.parametrize("variant", [v.id for v in ENTRY.variants if v.id not in ("MIG-M1", "MIG-M9", "MIG-M10")])
def test_variant_caught_by_hypothesis(variant: str) -> None:
    v = ENTRY.variant(variant)
    ts = v.build(ENTRY.configs[v.config])
    run = settings(max_examples=1500, stateful_step_count=40, derandomize=True, database=None, deadline=None,
                   suppress_health_check=list(HealthCheck), phases=(Phase.generate,))
    with pytest.raises(PropertyViolated) as caught:
        run_state_machine_as_test(machine_for(ts), settings=run)
    assert caught.value.property_id in v.expect


def test_reference_holds_under_hypothesis() -> None:
    ts = ENTRY.build(ENTRY.configs["large"])
    run_state_machine_as_test(machine_for(ts), settings=settings(
        max_examples=60, stateful_step_count=40, derandomize=True, database=None, deadline=None,
        suppress_health_check=list(HealthCheck)))
