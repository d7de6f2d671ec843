"""Z3 encoding of KIP-866 (model/zk_migration.py) checked against the reference implementation."""

from __future__ import annotations

import dataclasses
import json
import random
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import z3

from model.zk_migration import ZkMigrationZ3
from reference_impl.metadata_version.catalog import MetadataVersion
from rollcheck.checkers import NOT_CHECKED, PROVED, CheckContext
from rollcheck.cli import main
from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import PROFILES
from rollcheck.explore.explorer import ExploreOptions, explore
from rollcheck.smt.checker import check_z3
from rollcheck.smt.core import bfs_states, bmc, check_parameters, check_successors, k_induction, replay

ENTRY = get_protocol("zk_migration")
# The witnesses whose when= accepts small (one voter, no failover, so neither MIG-W3 nor MIG-W5).
SMALL_WITNESSES = ("MIG-W1", "MIG-W2", "MIG-W4", "MIG-W6")
ACTIONS = frozenset({
    "ElectZkController", "ZkMetadataChange", "EnableMigrationOnBroker", "IncompatibleBrokerJoins",
    "RegisterZkBroker", "RestartBrokerAsKRaft", "RollbackBrokerToZk", "ElectLeader", "CrashVoter",
    "LeaderFailover", "RecoverVoter", "RestartVoter", "DriverDeactivate", "DriverActivate", "DriverWaitForQuorum",
    "DriverWaitForBrokers", "BecomeZkController", "BeginMigration", "CompleteMigration", "SyncKRaftToZk",
    "SendRpcsToBrokers", "DualWrite", "KRaftMetadataChange", "ZkUnavailable", "ZkAvailable", "ShutdownQuorum",
    "DeleteControllerZNodes"})
# One profile per broken variant for the successor check on its (mutated) config: the profile where the
# mutation matters (the KIP's finalization and write-behind limit exist only under kip), else alternating.
MUTANT_PROFILE = {"MIG-M1": "kafka", "MIG-M2": "kip", "MIG-M3": "kafka", "MIG-M4": "kip", "MIG-M5": "kip",
                  "MIG-M6": "kafka", "MIG-M7": "kip", "MIG-M8": "kafka", "MIG-M9": "kafka", "MIG-M10": "kip"}


def system(config: str, profile: str, variant: str | None = None) -> Any:
    cfg = dataclasses.replace(ENTRY.configs[config], profile=profile)
    return ENTRY.build(cfg) if variant is None else ENTRY.variant(variant).build(cfg)


@cache
def sample(config: str, profile: str, variant: str | None = None) -> tuple[tuple[Any, ...], frozenset[str]]:
    """The first BFS states plus states from seeded random walks biased to rarely taken actions, keeping a
    state whenever it enables some action (by name and parameters) seen fewer than twice: a few dozen
    states in which every action the walks met is enabled, deep ones (dual write, rollback) included.
    Returns the states and the action names enabled in them."""
    ts = system(config, profile, variant)
    rnd = random.Random(866)
    start = next(iter(ts.initial_states()))
    picked: dict[Any, None] = dict.fromkeys(bfs_states(ts, 6))
    enabled: dict[str, int] = {}
    taken: dict[str, int] = {}
    for _ in range(150):
        s = start
        for _ in range(40):
            succ = ts.successors(s)
            if not succ:
                break
            keys = {repr(a) for a, _ in succ}
            if s not in picked and any(enabled.get(k, 0) < 2 for k in keys):
                picked[s] = None
            for k in keys:
                enabled[k] = enabled.get(k, 0) + (s in picked)
            weights = [1.0 / (1 + taken.get(a.name, 0)) ** 3 for a, _ in succ]
            a, s = rnd.choices(succ, weights=weights)[0]
            taken[a.name] = taken.get(a.name, 0) + 1
    names = frozenset(a.name for s in picked for a, _ in ts.successors(s))
    return tuple(picked), names


# ------------------------------------------------------------------ successor equivalence


@pytest.mark.parametrize("config", ["small", "faults", "default"])
@pytest.mark.parametrize("profile", PROFILES)
def test_successors_equal_on_sampled_states(config: str, profile: str) -> None:
    ts = system(config, profile)
    states, _ = sample(config, profile)
    res = check_successors(ZkMigrationZ3(ts), ts, states)
    assert res.ok, str(res.mismatch)
    assert res.states == len(states) and not res.excluded


@pytest.mark.parametrize("profile", PROFILES)
def test_successors_equal_with_a_restarted_incompatible_broker(profile: str) -> None:
    """Where the profiles differ on a restarted ZK broker: kafka keeps its registration (fenced) until it
    registers again, so a broker restarted at a lower IBP after registering still counts for the broker
    trigger and gets the RPCs; kip unregisters it. The first states of small with an incompatible broker,
    and every state of the run from the restart to the RPCs."""
    ts = ENTRY.build(replace(ENTRY.configs["small"], profile=profile, incompatible_broker=True))
    s = next(iter(ts.initial_states()))
    path = [s]
    for label in ["EnableMigrationOnBroker(broker=0)", "RegisterZkBroker(broker=0)",
                  "IncompatibleBrokerJoins(broker=0)", "DriverActivate(voter=0)", "DriverWaitForQuorum(voter=0)",
                  "DriverWaitForBrokers(voter=0)", "BecomeZkController(voter=0)", "BeginMigration(voter=0)",
                  "CompleteMigration(voter=0)", "SyncKRaftToZk(voter=0)", "SendRpcsToBrokers(voter=0)"]:
        nxt = [t for a, t in ts.successors(s) if repr(a) == label]
        if not nxt:
            assert profile == "kip" and label == "DriverWaitForBrokers(voter=0)"  # the KIP's trigger holds it
            break
        s = nxt[0]
        path.append(s)
    states = list(dict.fromkeys([*bfs_states(ts, 60), *path]))
    res = check_successors(ZkMigrationZ3(ts), ts, states)
    assert res.ok, str(res.mismatch)
    assert res.states == len(states) and not res.excluded


@pytest.mark.parametrize("variant", list(MUTANT_PROFILE))
def test_successors_equal_on_mutated_config(variant: str) -> None:
    v = ENTRY.variant(variant)
    profile = MUTANT_PROFILE[variant]
    ts = system(v.config, profile, variant)
    assert ts.config.mutations  # the variant's config, with its mutation
    states, _ = sample(v.config, profile, variant)
    res = check_successors(ZkMigrationZ3(ts), ts, states)
    assert res.ok, str(res.mismatch)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("level", [MetadataVersion.IBP_3_6_IV1, MetadataVersion.IBP_3_7_IV0], ids=str)
def test_successors_equal_on_the_quorum_trigger_with_a_voter_down(profile: str, level: MetadataVersion) -> None:
    """The quorum trigger where the profiles differ: the leader's driver in WAIT_FOR_CONTROLLER_QUORUM before
    the copy with a voter down, its registration ready or not (kip waits for every voter running and ready;
    kafka reads the registrations from 3.7-IV0 only, a down voter's included). The random samples need not
    hold such a state."""
    ts = ENTRY.build(replace(ENTRY.configs["faults"], profile=profile, quorum_level=level.feature_level,
                             broker_ibp=level.feature_level))
    start = next(iter(ts.initial_states()))
    activated = {repr(a): t for a, t in ts.successors(start)}["DriverActivate(voter=0)"]
    states = []
    for down in (1, 2):
        crashed = {repr(a): t for a, t in ts.successors(activated)}[f"CrashVoter(voter={down})"]
        for ready in (True, False):
            voters = list(crashed.voters)
            voters[down] = replace(voters[down], migration=ready)
            states.append(replace(crashed, voters=tuple(voters)))
    res = check_successors(ZkMigrationZ3(ts), ts, states)
    assert res.ok, str(res.mismatch)
    assert res.states == len(states) == 4


@pytest.mark.parametrize(("config", "profile", "variant"), [("faults", "kip", None), ("faults", "kafka", "MIG-M1")])
def test_actions_split_by_parameters_match_the_reference(config: str, profile: str, variant: str | None) -> None:
    """Each broker / voter action per broker / voter (and RestartVoter per migration setting), the
    relations the step properties read ``a["voter"]`` through, makes exactly the steps of the reference
    actions with those parameters (MIG-M1: stale drivers' dual writes without the version check)."""
    ts = system(config, profile, variant)
    sym = ZkMigrationZ3(ts)
    states, _ = sample(config, profile, variant)
    res = check_parameters(sym, ts, states, sym.parameter_relations())
    assert res.ok, str(res.mismatch)


def test_every_action_is_exercised() -> None:
    """Across the samples the two tests above check, every reference action is enabled somewhere (so its
    Z3 relation was compared with the reference on a state where it fires)."""
    seen: set[str] = set()
    for config in ("small", "faults", "default"):
        for profile in PROFILES:
            seen |= sample(config, profile)[1]
    for variant, profile in MUTANT_PROFILE.items():
        seen |= sample(ENTRY.variant(variant).config, profile, variant)[1]
    assert seen == ACTIONS
    assert set(ZkMigrationZ3(system("small", "kip")).actions) == ACTIONS
    # The small config's samples enable every action its whole reachable graph has.
    ts = system("small", "kip")
    assert sample("small", "kip")[1] == {a.name for s in bfs_states(ts, 10_000) for a, _ in ts.successors(s)}


@pytest.mark.parametrize("moved", ["migration_version", "epoch_version"])
def test_successor_check_catches_a_wrong_encoding(moved: str) -> None:
    """An encoding bug on purpose is a mismatch: a KRaft write to ZooKeeper without the /migration version
    check, or without the /controller_epoch one, on sampled states where ZooKeeper's version moved."""

    class Wrong(ZkMigrationZ3):
        def version_ok(self, v: Any, i: int) -> Any:
            if moved == "migration_version":
                return z3.BoolVal(True)
            return v[f"v{i}.zkv"] == v["zk.mver"]  # the /migration check alone

    ts = system("faults", "kip")
    states = [s for s in sample("faults", "kip")[0] if any(a.name == "SyncKRaftToZk" for a, _ in ts.successors(s))]
    states = [replace(s, zk=replace(s.zk, **{moved: getattr(s.zk, moved) + 1})) for s in states]
    assert states
    res = check_successors(Wrong(ts), ts, states)
    assert res.mismatch is not None and res.mismatch.action in ("SyncKRaftToZk", "DualWrite")
    assert res.mismatch.z3 - res.mismatch.reference


@pytest.mark.parametrize(("config", "mutation"), [("faults", None), ("small", "dual_write_ignores_zk_failure"),
                                                  ("faults", "unconditional_zk_writes")])
def test_trans_is_the_disjunction_of_the_actions(config: str, mutation: str | None) -> None:
    """``trans`` (one selector per branch, frame axioms per field) is equivalent to the Or of the action
    relations that check_successors compares with the reference, on every wellformed state."""
    cfg = replace(ENTRY.configs[config], mutations=frozenset({mutation} if mutation else ()))
    sym = ZkMigrationZ3(ENTRY.build(cfg))
    v, v2 = sym.declare("a"), sym.declare("b")
    some_action = z3.Or([rel(v, v2) for rel in sym.actions.values()])
    s = z3.Solver()
    s.add(sym.wellformed(v), sym.wellformed(v2))
    assert s.check(sym.trans(v, v2), z3.Not(some_action)) == z3.unsat
    branches = sym.branch_list(v)
    for k, (g, ch) in enumerate(branches):
        picks = [z3.BoolVal(j == k) for j in range(len(branches))]
        taken = z3.And(g, *(v2[f] == ch.get(f, v[f]) for f in v))
        assert s.check(taken, z3.Not(sym.trans_with(v, v2, picks))) == z3.unsat, k


def test_values_reject_a_state_beyond_the_slot_bounds() -> None:
    ts = system("small", "kip")
    s0 = next(iter(ts.initial_states()))
    with pytest.raises(ValueError, match="slot bounds"):
        ZkMigrationZ3(ts).values(replace(s0, zk=replace(s0.zk, data=(0, 1, 2, 0))))


# ------------------------------------------------------------------ BMC on the broken variants


# (variant, profile, property, depth): the shortest counterexample of the explorer, which BMC must match.
# MIG-M3's MIG-05 and MIG-M5's MIG-11 are not violated by the reference (the copy is still whole when it
# commits; MIG-M5's config has no rollback), nor MIG-M9's MIG-03 (ZooKeeper only misses the log's tail).
# MIG-M10 breaks only the graph property MIG-L3 (not encoded): see test_stale_migration_version_is_no_safety_bug.
# MIG-M7 under kip: under kafka every ZK broker keeps its registration once the migration begins (a restart
# leaves it), and Kafka sends the RPCs to every registration, so the mutation changes nothing there.
BROKEN = [
    ("MIG-M1", "kip", "MIG-02", 15), ("MIG-M2", "kip", "MIG-01", 6), ("MIG-M3", "kafka", "MIG-06", 7),
    ("MIG-M4", "kip", "MIG-12", 11), ("MIG-M5", "kip", "MIG-04", 14), ("MIG-M6", "kafka", "MIG-09", 1),
    ("MIG-M7", "kip", "MIG-10", 11), ("MIG-M8", "kafka", "MIG-07", 5), ("MIG-M9", "kafka", "MIG-11", 11),
]


@pytest.mark.parametrize(("variant", "profile", "prop", "depth"), BROKEN)
def test_bmc_refutes_broken_variant(variant: str, profile: str, prop: str, depth: int) -> None:
    v = ENTRY.variant(variant)
    assert prop in v.expect
    ts = system(v.config, profile, variant)
    # The deep ones start at the explorer's depth: the unsatisfiable shorter depths cost minutes, and the
    # explorer below already shows none is shorter. (Z3's faster sat.smt core once sped them up, but it
    # aborts the process with "Failed to validate" on this encoding.)
    res = bmc(ZkMigrationZ3(ts), prop, depth, timeout=300, first=depth if depth >= 12 else 0)
    assert res.status == "refuted" and res.trace is not None, res.message
    # BMC deepens one step at a time, so its trace is a shortest one: as long as the explorer's.
    shortest = {x.property_id: x.depth for x in explore(ts, ExploreOptions(stop_at_first=False, max_depth=res.depth,
                                                                           check_graph=False)).violations}
    assert res.depth == shortest[prop] == depth == len(res.trace.actions)
    # The trace replays on the reference, which agrees that it violates the property (on its last step
    # for a step property, in its last state for an invariant).
    replay(ts, res.trace.states, [a.name for a in res.trace.actions], violates=prop)


# ------------------------------------------------------------------ the reference: bounded checks and proofs


@pytest.mark.parametrize("profile", PROFILES)
def test_reference_properties_hold_to_depth(profile: str) -> None:
    ts = system("small", profile)
    sym = ZkMigrationZ3(ts)
    # Graph properties and witnesses ("sometimes": reachability, not safety) are not encoded.
    unencoded = {p.id for p in ts.properties() if p.kind in ("graph", "witness")}
    assert set(sym.encoded()) == {p.id for p in ts.properties()} - unencoded
    for prop in sym.encoded():
        assert bmc(sym, prop, 4, timeout=60).status == "checked", prop


@pytest.mark.parametrize("profile", PROFILES)
def test_invariant_and_step_property_proved_by_induction(profile: str) -> None:
    sym = ZkMigrationZ3(system("small", profile))
    # MIG-10 (an invariant) is inductive on its own: RPCs reach only a registered broker at the quorum's
    # version, and whatever unregisters a broker or changes its IBP also clears its RPC flag.
    res = k_induction(sym, "MIG-10", 1, timeout=60, strengthen=())
    assert res.status == "proved", res.message
    # MIG-01 (a step property) needs one strengthening: a take-over writes max(/controller_epoch, 0) + 1, above
    # every epoch ever written only if /controller_epoch is the highest one while the quorum runs.
    res = k_induction(sym, "MIG-01", 1, timeout=60, strengthen=("epoch-is-highest",))
    assert res.status == "proved", res.message
    assert k_induction(sym, "MIG-01", 1, timeout=60, strengthen=()).status == "unknown"


@pytest.mark.parametrize("profile", PROFILES)
def test_dual_write_properties_proved_with_three_voters(profile: str) -> None:
    """On the faults config (three voters, failover): MIG-03 (ZooKeeper a prefix of the log), MIG-11 (a clean
    rollback keeps every record) and MIG-02 (one writer) by 1-induction with the design's invariants about
    driver versions, epochs and synced counts; none of them is inductive alone."""
    sym = ZkMigrationZ3(system("faults", profile))
    for prop in ("MIG-03", "MIG-11", "MIG-02"):
        res = k_induction(sym, prop, 1, timeout=60)
        assert res.status == "proved", (prop, res.message)
        assert k_induction(sym, prop, 1, timeout=60, strengthen=()).status == "unknown", prop


@pytest.mark.parametrize("profile", PROFILES)
def test_stale_migration_version_is_no_safety_bug(profile: str) -> None:
    """MIG-M10 (KAFKA-16171 / KAFKA-16667): the take-over keeps a stale /migration version, so the /migration
    invariants do not hold, but every KRaft write also checks /controller_epoch's version: MIG-02 (one writer)
    is proved by 1-induction with the /controller_epoch-version invariants, and not without the one that ties
    the current version's holder to the current epoch."""
    v = ENTRY.variant("MIG-M10")
    sym = ZkMigrationZ3(system(v.config, profile, "MIG-M10"))
    assert "holder-has-epoch" not in sym.strengthening and "epoch-holder-has-epoch" in sym.strengthening
    assert k_induction(sym, "MIG-02", 1, timeout=60).status == "proved"
    without = tuple(k for k in sym.strengthening if k != "epoch-holder-has-epoch")
    assert k_induction(sym, "MIG-02", 1, timeout=60, strengthen=without).status == "unknown"


def test_mutants_keep_only_the_strengthening_they_do_not_break() -> None:
    """A mutation drops the invariants it breaks, so k-induction does not just report the rest unknown: under
    unconditional dual writes MIG-10 and MIG-01 are still proved, and MIG-03 is not (BMC refutes it)."""
    ts = system("faults", "kip", "MIG-M1")
    sym = ZkMigrationZ3(ts)
    assert "writer-in-sync" not in sym.strengthening and "epoch-is-highest" in sym.strengthening
    assert k_induction(sym, "MIG-10", 1, timeout=60).status == "proved"
    assert k_induction(sym, "MIG-01", 1, timeout=60).status == "proved"
    assert k_induction(sym, "MIG-03", 1, timeout=60).status == "unknown"


@pytest.mark.parametrize("profile", PROFILES)
def test_prove_cli_small_has_no_refutation(profile: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["prove", "zk_migration", "--config", "small", "--profile", profile, "--json", "--out", str(tmp_path)])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert doc["protocol"] == "zk_migration" and doc["profile"] == profile
    # The graph properties and the witnesses that apply on small (reachability, not safety) are not encoded.
    assert doc["not_encoded"] == ["MIG-L1", "MIG-L2", "MIG-L3", *SMALL_WITNESSES]
    statuses = {r["property"]: r["status"] for r in doc["results"]}
    assert "refuted" not in statuses.values() and "unknown" not in statuses.values()
    # Every encoded property is proved by 1-induction (MIG-08 with finalized-leader-idle).
    assert set(statuses.values()) == {"proved"}
    assert ("MIG-04" in statuses) == ("MIG-12" in statuses) == ("MIG-14" in statuses) == (profile == "kip")
    assert "MIG-13" in statuses


def test_gate_adapter_checks_the_encoded_properties(tmp_path: Path) -> None:
    report = check_z3(ENTRY, "small", ENTRY.configs["small"], CheckContext(out_dir=tmp_path, options={"z3_depth": 2}))
    assert report.status == "ok"
    assert report.properties["MIG-10"].status == PROVED
    assert all(report.properties[g].status == NOT_CHECKED for g in ("MIG-L1", "MIG-L2", "MIG-L3"))
    assert all(report.properties[w].status == NOT_CHECKED for w in SMALL_WITNESSES)
    unencoded = ("MIG-L1", "MIG-L2", "MIG-L3", *SMALL_WITNESSES)
    assert all(v.status != NOT_CHECKED for k, v in report.properties.items() if k not in unencoded)


def test_mig08_is_proved_for_any_fault_budget() -> None:
    """Z3 once refuted MIG-08 at max_epoch = 4 with a 16-step trace: a voter re-elected before its driver
    noticed it had lost leadership kept BECOME_CONTROLLER and took /controller over after the finalization.
    Kafka's KRaftLeaderEvent order rules that out (the election resets the driver), and MIG-08 is inductive."""
    ts = ENTRY.build(replace(ENTRY.configs["faults"], profile="kafka", max_epoch=4, zk_outage=False,
                             rollback=False))
    assert k_induction(ZkMigrationZ3(ts), "MIG-08", 1, timeout=120).status == "proved"
