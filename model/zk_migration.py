"""KIP-866 (ZooKeeper to KRaft migration) as a Z3 transition relation.

An independent restatement of ``reference_impl/zk_migration/system.py`` and of the decision rules it
calls in ``api.py``: the bootstrap of the empty log (``bootstrap_migration_state``, evaluated once in
Python for the initial state), what a newly elected controller does with the persisted state
(``activate``: finalize, resign, abort the open transaction; the same formula as the ``zk_triggers`` rule
of :mod:`model.decisions.zk_migration`), a ZK broker's registration (``zk_broker_registration_error`` with
ZkMigrationReady set and no KRaft broker), the take-over of ``/controller_epoch``
(``claim_controller_epoch``), the quorum trigger (under ``kafka``
``reason_all_controllers_zk_migration_not_ready`` over the voters' registrations) and the driver's state
machine (only valid state changes are written, so ``is_valid_state_change`` needs no formula of its own).

The state is one flat record:

* ZooKeeper: ``zk.avail``, ``zk.ctrl`` (a broker id, ``KRAFT_ID + voter`` or -1), ``zk.kepoch``,
  ``zk.cepoch``, ``zk.ever``, ``zk.mver`` (-1 when absent), ``zk.migrated``, ``zk.ehigh`` and the metadata
  as a length ``zk.dlen`` plus slots ``zk.d0 ..`` (-1 past the length);
* per ZK broker ``b{i}.kraft`` (the mode), ``.mig``, ``.ibp``, ``.reg``, ``.rpcs``, ``.fault`` (ibp_fault);
* per voter ``v{i}.run``, ``.mig``, ``.drv`` (``MigrationDriverState`` code), ``.zkv`` (its /migration
  version), ``.zke`` (the epoch it claimed), ``.zev`` (the /controller_epoch version its claim got), ``.synced``;
* ``leader``, ``repoch`` (the Raft epoch), ``mstate`` (``ZkMigrationState`` code), the KRaft log as
  ``loglen`` plus slots ``l0 ..``, ``txn``, ``zkce`` (the ZK-mode controller's epoch), ``next`` (the next
  record id) and ``shutdown`` (``Shutdown`` code).

Slot bounds. Record ids are created once each (``next`` <= ``max_updates`` + 1), and the log never holds
an id twice, so it has ``max_updates + 1`` slots. ZooKeeper's data holds each id at most once too unless
``unconditional_zk_writes`` lets a stale driver re-append what a newer controller already wrote: every
dual-write life begins with a full KRaft -> ZK sync (data := log) and writes each log index at most once,
so after the last sync at most ``voters`` lives add at most ``max_updates + 1`` records each, and
ZooKeeper-mode writes at most ``max_updates`` more: ``(voters + 2) * (max_updates + 1)`` slots. Appends are
guarded by the slot count; the guard never binds under any single mutation. (Combined with
``no_sync_after_failover`` a life may start without the sync; the same bound is then kept but not proved:
a run that would outgrow it has no Z3 successor, and ``values`` rejects such a state.)

Encoded: every action of the reference (ElectZkController, ZkMetadataChange, EnableMigrationOnBroker,
IncompatibleBrokerJoins, RegisterZkBroker, RestartBrokerAsKRaft, RollbackBrokerToZk, ElectLeader,
CrashVoter, LeaderFailover, RecoverVoter, RestartVoter, DriverDeactivate, DriverActivate,
DriverWaitForQuorum, DriverWaitForBrokers, BecomeZkController, BeginMigration, CompleteMigration,
SyncKRaftToZk, SendRpcsToBrokers, DualWrite, KRaftMetadataChange, ZkUnavailable, ZkAvailable,
ShutdownQuorum, DeleteControllerZNodes), both profiles, every config switch and every mutation of
``config.MUTATIONS``. Each action is a list of branches (a guard over the current state, the fields it
changes) per parameter value (``self.branches``): ``by_voter(name, i)`` is the relation of voter i's step,
so that step properties can say who acted, as the reference's predicates do with ``a["voter"]``. ``trans``
is the disjunction of all branches with one selector each and explanatory frame axioms: BMC to the
depth-15 counterexample of MIG-M1 runs several times faster than with a full frame per branch.

Invariants: MIG-03, MIG-04 (where the reference checks it: the ``kip`` profile), MIG-06, MIG-10, MIG-11,
MIG-15.
Step properties: MIG-01, MIG-02, MIG-05, MIG-07, MIG-08, MIG-09, MIG-13, MIG-16, MIG-17, and MIG-12, MIG-14 (``kip``
only, as in the reference).
Not encoded: the graph properties MIG-L1, MIG-L2, MIG-L3 (liveness over the explored graph; MIG-M10,
KAFKA-16171 / KAFKA-16667, breaks only MIG-L3, so BMC has nothing to refute there) and the ``kip_claims``
extras (MIG-01R), which the registry's property list does not hold.

Strengthening (``strengthening_invariants``): the design's reasons why the properties hold, stated over
drivers, versions and epochs: /controller_epoch is the highest epoch ever written; no driver's /migration
or /controller_epoch version is ahead of ZooKeeper's; the driver holding the current /migration version,
or the current /controller_epoch version, took over with the current /controller_epoch, and the former,
once synced, has counted exactly ZooKeeper's records; synced counts stay within the
log and ZooKeeper; /controller names a KRaft controller from the first take-over on; once the migration is
finalized the leader's driver goes no further than WAIT_FOR_CONTROLLER_QUORUM (MIG-08: an elected voter's
driver starts INACTIVE, as the order of Kafka's KRaftLeaderEvents makes it); plus MIG-03 and MIG-06. With them
every encoded property is proved by 1-induction on the small, faults and default configs under both
profiles. A mutation drops the invariants it breaks (``BROKEN_BY``), so the rest still proves what it leaves
intact.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import z3

from reference_impl.metadata_version.catalog import MetadataVersion
from reference_impl.zk_migration.config import KRAFT_ID, MUTATIONS
from reference_impl.zk_migration.state import (
    BrokerMode,
    MigrationDriverState,
    Shutdown,
    Voter,
    ZkBroker,
    ZkMigrationState,
    ZkMigrationSystemState,
    ZooKeeper,
)
from rollcheck.core.transition import TransitionSystem
from rollcheck.smt.core import Predicate, Relation, SymbolicSystem, V, Value, frame

# ZkMigrationState codes (ZkMigrationStateRecord); ZK (4) is never persisted.
NONE, MIGRATION, PRE_MIGRATION, POST_MIGRATION = 0, 1, 2, 3
# MigrationDriverState codes; UNINITIALIZED (0) never appears: a (re)started driver is modelled INACTIVE.
INACTIVE, WAIT_QUORUM, WAIT_BROKERS, BECOME, ZK_MIG, SYNC, TO_BROKERS, DUAL_WRITE = 1, 2, 3, 4, 5, 6, 7, 8
SD_NONE, SD_CLEAN, SD_UNCLEAN = 0, 1, 2  # Shutdown codes
ABSENT = -1  # slots past a sequence's length, and absent znodes / versions / epochs

# The minimum metadata.version of a quorum bootstrapped in migration mode (api.bootstrap_migration_state):
# the KIP's bridge release 3.4-IV0 and Kafka 3.9's 3.6-IV1 for an empty log (metadata transactions).
BOOTSTRAP_MINIMUM = {"kip": MetadataVersion.IBP_3_4_IV0.feature_level,
                     "kafka": MetadataVersion.IBP_3_6_IV1.feature_level}
# Kafka 3.9 registers controllers (ControllerRegistrationRecord) from 3.7-IV0; below it the driver's quorum
# check (QuorumFeatures.reasonAllControllersZkMigrationNotReady) has nothing to look at and passes.
CONTROLLER_REGISTRATION_LEVEL = MetadataVersion.IBP_3_7_IV0.feature_level

Branch = tuple[Any, dict[str, Any]]  # (guard over the current state, changed fields -> their new values)


# The strengthening invariants each mutation breaks (k-induction would only report them as not inductive).
# ("MIG-15" and "data-prefix-while-up": a maximal 1-inductive subset found by Houdini on small and faults, both
# profiles, when they were added.)
BROKEN_BY: dict[str, tuple[str, ...]] = {
    "kraft_epoch_not_above_zk": ("epoch-is-highest",),
    "dual_write_ignores_zk_failure": ("MIG-03", "synced-le-log", "writer-in-sync", "writers-behind-zk",
                                      "data-prefix-while-up", "MIG-15"),
    "no_sync_after_failover": ("MIG-03", "synced-le-log", "writer-in-sync", "writers-behind-zk",
                               "data-prefix-while-up", "MIG-15"),
    "non_transactional_copy": ("MIG-03", "MIG-06", "synced-le-log", "writers-behind-zk", "data-prefix-while-up",
                               "MIG-15"),
    "serve_before_copy": ("MIG-06",),
    "stale_migration_version": ("MIG-03", "claimed-versions", "holder-has-epoch", "kraft-holds-controller",
                                "writer-in-sync", "data-prefix-while-up", "MIG-15"),
    "unconditional_zk_writes": ("MIG-03", "holder-has-epoch", "writer-in-sync", "data-prefix-while-up", "MIG-15"),
}


def _or(xs: list[Any]) -> z3.BoolRef:
    return z3.Or(xs) if xs else z3.BoolVal(False)


def _and(xs: list[Any]) -> z3.BoolRef:
    return z3.And(xs) if xs else z3.BoolVal(True)


class ZkMigrationZ3(SymbolicSystem):
    name = "zk_migration"

    def __init__(self, ts: TransitionSystem[Any]) -> None:
        super().__init__(ts)
        c = self.config
        c.validate()
        self.muts: frozenset[str] = frozenset(c.mutations)
        unknown = self.muts - MUTATIONS
        if unknown:
            raise ValueError(f"mutations not encoded: {sorted(unknown)}")
        self.profile: str = c.profile
        self.nb: int = c.zk_brokers
        self.nv: int = c.voters
        self.max_updates: int = c.max_updates
        self.ml = c.max_updates + 1  # log slots: each record id at most once
        dup = "unconditional_zk_writes" in self.muts
        self.md = (c.voters + 2) * self.ml if dup else self.ml  # data slots (module docstring)
        # Every action as branches per parameter value: name -> one builder per broker / voter (or one).
        per_broker: dict[str, Callable[[V, int], list[Branch]]] = {
            "ElectZkController": self._elect_zk_controller, "EnableMigrationOnBroker": self._enable_migration,
            "IncompatibleBrokerJoins": self._incompatible_joins, "RegisterZkBroker": self._register,
            "RestartBrokerAsKRaft": self._restart_as_kraft, "RollbackBrokerToZk": self._rollback_broker}
        per_voter: dict[str, Callable[[V, int], list[Branch]]] = {
            "ElectLeader": self._elect_leader, "CrashVoter": self._crash, "LeaderFailover": self._failover,
            "RecoverVoter": self._recover, "RestartVoter": self._restart_voter,
            "DriverDeactivate": self._deactivate, "DriverActivate": self._activate,
            "DriverWaitForQuorum": self._wait_quorum, "DriverWaitForBrokers": self._wait_brokers,
            "BecomeZkController": self._become_controller, "BeginMigration": self._begin_migration,
            "CompleteMigration": self._complete_migration, "SyncKRaftToZk": self._sync,
            "SendRpcsToBrokers": self._send_rpcs, "DualWrite": self._dual_write}
        single: dict[str, Callable[[V], list[Branch]]] = {
            "ZkMetadataChange": self._zk_metadata_change, "KRaftMetadataChange": self._kraft_metadata_change,
            "ZkUnavailable": self._zk_unavailable, "ZkAvailable": self._zk_available,
            "ShutdownQuorum": self._shutdown_quorum, "DeleteControllerZNodes": self._delete_controller_znodes}
        self._voter_names = frozenset(per_voter)
        self._single_names = frozenset(single)
        self.branches: dict[str, list[Callable[[V], list[Branch]]]] = {}
        for name, fb in per_broker.items():
            self.branches[name] = [partial(fb, b=b) for b in range(self.nb)]
        for name, fv in per_voter.items():
            self.branches[name] = [partial(fv, i=i) for i in range(self.nv)]
        for name, f in single.items():
            self.branches[name] = [f]
        self.actions = {name: self._relation(name) for name in self.branches}
        # The property list of the reference for this config: MIG-04, MIG-12 and MIG-14 only under kip.
        ids = {p.id for p in ts.properties()}
        self.invariants = {k: f for k, f in (("MIG-03", self.mig03), ("MIG-04", self.mig04), ("MIG-06", self.mig06),
                                             ("MIG-10", self.mig10), ("MIG-11", self.mig11),
                                             ("MIG-15", self.mig15)) if k in ids}
        self.step_properties = {k: f for k, f in (
            ("MIG-01", self.mig01), ("MIG-02", self.mig02), ("MIG-05", self.mig05), ("MIG-07", self.mig07),
            ("MIG-08", self.mig08), ("MIG-09", self.mig09), ("MIG-12", self.mig12), ("MIG-13", self.mig13),
            ("MIG-14", self.mig14), ("MIG-16", self.mig16), ("MIG-17", self.mig17)) if k in ids}
        # The design's invariants that make the properties inductive (module docstring); together they are
        # 1-inductive on the small, faults and default configs. A mutation breaks some of them: those are not
        # offered (what remains is the maximal inductive subset Houdini finds on those configs, both profiles).
        broken = set().union(*(BROKEN_BY.get(m, ()) for m in self.muts))
        self.strengthening: dict[str, Predicate] = {
            name: pred for name, pred in self.strengthening_invariants().items() if name not in broken}

    # ------------------------------------------------------------------ layout
    def fields(self) -> list[tuple[str, str]]:
        out = [("zk.avail", "bool"), ("zk.ctrl", "int"), ("zk.kepoch", "int"), ("zk.cepoch", "int"),
               ("zk.ever", "int"), ("zk.mver", "int"), ("zk.migrated", "bool"), ("zk.ehigh", "int"),
               ("zk.dlen", "int"), *((f"zk.d{k}", "int") for k in range(self.md))]
        for b in range(self.nb):
            out += [(f"b{b}.kraft", "bool"), (f"b{b}.mig", "bool"), (f"b{b}.ibp", "int"), (f"b{b}.reg", "bool"),
                    (f"b{b}.rpcs", "bool"), (f"b{b}.fault", "bool")]
        for i in range(self.nv):
            out += [(f"v{i}.run", "bool"), (f"v{i}.mig", "bool"), (f"v{i}.drv", "int"), (f"v{i}.zkv", "int"),
                    (f"v{i}.zke", "int"), (f"v{i}.zev", "int"), (f"v{i}.synced", "int")]
        return [*out, ("leader", "int"), ("repoch", "int"), ("mstate", "int"), ("loglen", "int"),
                *((f"l{k}", "int") for k in range(self.ml)), ("txn", "bool"), ("zkce", "int"), ("next", "int"),
                ("shutdown", "int")]

    def wellformed(self, v: V) -> z3.BoolRef:
        """Domains and canonical forms only (slots past a length are -1); no protocol invariant."""
        ctrl = v["zk.ctrl"]
        out: list[Any] = [
            z3.Or(ctrl == ABSENT, z3.And(ctrl >= 0, ctrl < self.nb),
                  z3.And(ctrl >= KRAFT_ID, ctrl < KRAFT_ID + self.nv)),
            v["leader"] >= -1, v["leader"] < self.nv, v["mstate"] >= NONE, v["mstate"] <= POST_MIGRATION,
            v["shutdown"] >= SD_NONE, v["shutdown"] <= SD_UNCLEAN, v["next"] >= 1, v["next"] <= self.max_updates + 1,
            *self._seq_wf(v, "zk.dlen", "zk.d", self.md), *self._seq_wf(v, "loglen", "l", self.ml)]
        for i in range(self.nv):
            out += [v[f"v{i}.drv"] >= INACTIVE, v[f"v{i}.drv"] <= DUAL_WRITE, v[f"v{i}.synced"] >= 0,
                    v[f"v{i}.synced"] <= self.ml]
        return z3.And(out)

    def _seq_wf(self, v: V, length: str, slot: str, n: int) -> list[Any]:
        out: list[Any] = [v[length] >= 0, v[length] <= n]
        for k in range(n):
            x = v[f"{slot}{k}"]
            out.append(z3.If(k < v[length], z3.And(x >= 0, x <= self.max_updates), x == ABSENT))
        return out

    # ------------------------------------------------------------------ reference <-> values
    def values(self, s: ZkMigrationSystemState) -> dict[str, Value]:
        z = s.zk
        if len(z.data) > self.md or len(s.log) > self.ml:
            raise ValueError(f"state outside the encoding's slot bounds ({self.md} data, {self.ml} log): {s!r}")
        out: dict[str, Value] = {
            "zk.avail": z.available, "zk.ctrl": z.controller, "zk.kepoch": z.kraft_epoch,
            "zk.cepoch": z.controller_epoch, "zk.ever": z.epoch_version, "zk.mver": z.migration_version,
            "zk.migrated": z.migrated, "zk.ehigh": z.epoch_high, "zk.dlen": len(z.data)}
        out.update({f"zk.d{k}": z.data[k] if k < len(z.data) else ABSENT for k in range(self.md)})
        for b, br in enumerate(s.brokers):
            out.update({f"b{b}.kraft": br.mode is BrokerMode.KRAFT, f"b{b}.mig": br.migration, f"b{b}.ibp": br.ibp,
                        f"b{b}.reg": br.registered, f"b{b}.rpcs": br.kraft_rpcs, f"b{b}.fault": br.ibp_fault})
        for i, x in enumerate(s.voters):
            out.update({f"v{i}.run": x.running, f"v{i}.mig": x.migration, f"v{i}.drv": x.driver.value,
                        f"v{i}.zkv": x.zk_version, f"v{i}.zke": x.zk_epoch, f"v{i}.zev": x.epoch_version,
                        f"v{i}.synced": x.synced})
        out.update({"leader": s.leader, "repoch": s.raft_epoch, "mstate": s.migration.code, "loglen": len(s.log),
                    "txn": s.txn, "zkce": s.zk_controller_epoch, "next": s.next_id, "shutdown": s.shutdown.value})
        out.update({f"l{k}": s.log[k] if k < len(s.log) else ABSENT for k in range(self.ml)})
        return out

    def from_values(self, vals: Mapping[str, Value]) -> ZkMigrationSystemState:
        def i_(k: str) -> int:
            return int(vals[k])

        def b_(k: str) -> bool:
            return bool(vals[k])

        zk = ZooKeeper(b_("zk.avail"), i_("zk.ctrl"), i_("zk.kepoch"), i_("zk.cepoch"), i_("zk.ever"),
                       i_("zk.mver"), b_("zk.migrated"), tuple(i_(f"zk.d{k}") for k in range(i_("zk.dlen"))),
                       i_("zk.ehigh"))
        brokers = tuple(ZkBroker(BrokerMode.KRAFT if b_(f"b{b}.kraft") else BrokerMode.ZK, b_(f"b{b}.mig"),
                                 i_(f"b{b}.ibp"), b_(f"b{b}.reg"), b_(f"b{b}.rpcs"), b_(f"b{b}.fault"))
                        for b in range(self.nb))
        voters = tuple(Voter(b_(f"v{i}.run"), b_(f"v{i}.mig"), MigrationDriverState(i_(f"v{i}.drv")),
                             i_(f"v{i}.zkv"), i_(f"v{i}.zke"), i_(f"v{i}.zev"), i_(f"v{i}.synced"))
                       for i in range(self.nv))
        return ZkMigrationSystemState(zk, brokers, voters, i_("leader"), i_("repoch"),
                                      ZkMigrationState.from_code(i_("mstate")),
                                      tuple(i_(f"l{k}") for k in range(i_("loglen"))), b_("txn"), i_("zkce"),
                                      i_("next"), Shutdown(i_("shutdown")))

    # ------------------------------------------------------------------ helpers
    def _relation(self, name: str, param: int | None = None) -> Relation:
        """Action ``name`` (taken by broker / voter ``param``, or by any) as a relation."""
        builders = self.branches[name] if param is None else [self.branches[name][param]]

        def rel(v: V, v2: V) -> z3.BoolRef:
            return _or([z3.And(g, frame(v, v2, ch)) for build in builders for g, ch in build(v)])
        return rel

    def by_voter(self, name: str, i: int) -> Relation:
        """The sub-relation of action ``name`` taken by voter ``i`` (for step properties)."""
        return self._relation(name, i)

    def parameter_relations(self) -> list[tuple[str, dict[str, Any], Relation]]:
        """Every broker and voter action per parameter value (``check_parameters`` compares them with the
        reference), and RestartVoter also per migration setting (its first branch turns migration off)."""
        out: list[tuple[str, dict[str, Any], Relation]] = []
        for name, builders in self.branches.items():
            if name not in self._single_names:
                key = "voter" if name in self._voter_names else "broker"
                out += [(name, {key: k}, self._relation(name, k)) for k in range(len(builders))]
        for i in range(self.nv):
            for j, migration in enumerate((False, True)):
                def rel(v: V, v2: V, i: int = i, j: int = j) -> z3.BoolRef:
                    return _or([z3.And(g, frame(v, v2, ch)) for g, ch in self._restart_voter(v, i)[j:j + 1]])
                out.append(("RestartVoter", {"voter": i, "migration": migration}, rel))
        return out

    def branch_list(self, v: V) -> list[Branch]:
        """Every branch of every action and parameter from state ``v``."""
        return [br for builders in self.branches.values() for build in builders for br in build(v)]

    def trans_with(self, v: V, v2: V, picks: list[z3.BoolRef]) -> z3.BoolRef:
        """The transition relation over explicit branch selectors ``picks`` (one per ``branch_list`` entry):
        exactly one is chosen, its guard holds and its fields take their new values, and a field keeps its
        value unless a chosen branch writes it (explanatory frame axioms)."""
        branches = self.branch_list(v)
        cons: list[Any] = [_or(list(picks)), z3.AtMost(*picks, 1)]
        for b, (g, ch) in zip(picks, branches, strict=True):
            cons.append(z3.Implies(b, z3.And(g, *(v2[f] == x for f, x in ch.items()))))
        for f in v:
            cons.append(z3.Or(v2[f] == v[f], *(b for b, (_, ch) in zip(picks, branches, strict=True) if f in ch)))
        return z3.And(cons)

    def trans(self, v: V, v2: V) -> z3.BoolRef:
        """The disjunction of the action relations, written with one fresh selector per branch and one
        frame clause per field instead of a full frame per branch. Equivalent (the selectors are existential;
        tests/test_model_zk_migration.py checks both directions), and BMC unrolls it several times faster:
        the solver propagates one equality per unchanged field and step instead of re-deriving the frame of
        every branch it tries."""
        return self.trans_with(v, v2, [z3.FreshBool("branch") for _ in self.branch_list(v)])

    def sel(self, v: V, field: str, idx: Any) -> Any:
        """``voters[idx].field`` for a symbolic voter index (the leader)."""
        out: Any = v[f"v0.{field}"]
        for i in range(1, self.nv):
            out = z3.If(idx == i, v[f"v{i}.{field}"], out)
        return out

    def at(self, v: V, slot: str, n: int, idx: Any) -> Any:
        """``seq[idx]`` for a symbolic index (``idx`` < length is the caller's guard)."""
        out: Any = z3.IntVal(ABSENT)
        for k in range(n):
            out = z3.If(idx == k, v[f"{slot}{k}"], out)
        return out

    def append(self, v: V, length: str, slot: str, n: int, x: Any) -> tuple[Any, dict[str, Any]]:
        """(guard, changes) of appending ``x``: the guard is the slot bound."""
        ch: dict[str, Any] = {length: v[length] + 1}
        for k in range(n):
            ch[f"{slot}{k}"] = z3.If(v[length] == k, x, v[f"{slot}{k}"])
        return v[length] < n, ch

    def data_to_log(self, v: V) -> tuple[Any, dict[str, Any]]:
        """log := zk.data (the copy). Slots past the length are -1 on both sides, so a slot copy suffices."""
        ch: dict[str, Any] = {"loglen": v["zk.dlen"]}
        for k in range(self.ml):
            ch[f"l{k}"] = v[f"zk.d{k}"]
        return v["zk.dlen"] <= self.ml, ch

    def log_to_data(self, v: V) -> dict[str, Any]:
        """zk.data := log (the KRaft -> ZK sync); ml <= md always."""
        ch: dict[str, Any] = {"zk.dlen": v["loglen"]}
        for k in range(self.md):
            ch[f"zk.d{k}"] = v[f"l{k}"] if k < self.ml else ABSENT
        return ch

    def seq_equal(self, v: V, length: str, slot: str, n: int, w: V, length2: str, slot2: str, n2: int) -> Any:
        return z3.And(v[length] == w[length2],
                      *(z3.Implies(k < v[length], v[f"{slot}{k}"] == w[f"{slot2}{k}"]) for k in range(min(n, n2))))

    def data_is_prefix_of_log(self, v: V) -> Any:
        return z3.And(v["zk.dlen"] <= v["loglen"], *(z3.Implies(k < v["zk.dlen"], v[f"zk.d{k}"] == v[f"l{k}"])
                                                      for k in range(min(self.md, self.ml))))

    def log_is_prefix_of_data(self, v: V) -> Any:
        return z3.And(v["loglen"] <= v["zk.dlen"], *(z3.Implies(k < v["loglen"], v[f"zk.d{k}"] == v[f"l{k}"])
                                                     for k in range(min(self.md, self.ml))))

    def quorum_up(self, v: V) -> Any:
        return v["shutdown"] == SD_NONE

    def leader_ok(self, v: V) -> Any:
        return z3.And(self.quorum_up(v), v["leader"] >= 0, self.sel(v, "run", v["leader"]))

    def faults_left(self, v: V) -> Any:
        return v["repoch"] < self.config.max_epoch

    def running(self, v: V) -> Any:
        return z3.Sum([z3.If(v[f"v{i}.run"], 1, 0) for i in range(self.nv)])

    def pre(self, v: V) -> Any:
        """The migration is pending or under way (the persisted state PRE_MIGRATION or MIGRATION)."""
        return z3.Or(v["mstate"] == PRE_MIGRATION, v["mstate"] == MIGRATION)

    def version_ok(self, v: V, i: int) -> Any:
        """A KRaft controller's metadata write to ZooKeeper (dual write, full sync): a multi-op that checks
        /controller_epoch's version against the one voter i's claim got and /migration's against the one it
        holds (Kafka 3.9's KafkaZkClient.retryMigrationRequestsUntilConnected); ``unconditional_zk_writes``
        drops both checks."""
        if "unconditional_zk_writes" in self.muts:
            return z3.BoolVal(True)
        return z3.And(v[f"v{i}.zev"] == v["zk.ever"], v[f"v{i}.zkv"] == v["zk.mver"])

    # ------------------------------------------------------------------ init
    def init(self, v: V) -> z3.BoolRef:
        c = self.config
        # api.bootstrap_migration_state, restated: a quorum started with migration enabled writes
        # PRE_MIGRATION, and refuses to start below the profile's minimum metadata.version.
        if c.quorum_level < BOOTSTRAP_MINIMUM[c.profile]:
            raise ValueError(f"The bootstrap metadata.version {c.quorum_level} does not support ZK migrations.")
        out: list[Any] = [
            v["zk.avail"], v["zk.ctrl"] == 0, v["zk.kepoch"] == ABSENT, v["zk.cepoch"] == c.zk_epoch,
            v["zk.ever"] == 0, v["zk.mver"] == ABSENT, z3.Not(v["zk.migrated"]), v["zk.ehigh"] == c.zk_epoch,
            v["zk.dlen"] == 1, v["zk.d0"] == 0, *(v[f"zk.d{k}"] == ABSENT for k in range(1, self.md)),
            v["leader"] == 0, v["repoch"] == 1, v["mstate"] == PRE_MIGRATION, v["loglen"] == 0,
            *(v[f"l{k}"] == ABSENT for k in range(self.ml)), z3.Not(v["txn"]), v["zkce"] == c.zk_epoch,
            v["next"] == 1, v["shutdown"] == SD_NONE]
        for b in range(self.nb):
            out += [z3.Not(v[f"b{b}.kraft"]), z3.Not(v[f"b{b}.mig"]), v[f"b{b}.ibp"] == c.broker_ibp,
                    z3.Not(v[f"b{b}.reg"]), z3.Not(v[f"b{b}.rpcs"]), z3.Not(v[f"b{b}.fault"])]
        for i in range(self.nv):
            out += [v[f"v{i}.run"], v[f"v{i}.mig"], v[f"v{i}.drv"] == INACTIVE, v[f"v{i}.zkv"] == ABSENT,
                    v[f"v{i}.zke"] == ABSENT, v[f"v{i}.zev"] == ABSENT, v[f"v{i}.synced"] == 0]
        return z3.And(out)

    # ------------------------------------------------------------------ ZooKeeper mode and brokers
    # Every action is a list of branches (guard over v, changes): its relation is "some guard holds and v2
    # is v with those changes"; a disabled action has no branch.
    def _elect_zk_controller(self, v: V, b: int) -> list[Branch]:
        # KafkaController: a missing /controller_epoch is created at 0, then incremented.
        epoch = z3.If(v["zk.cepoch"] >= 0, v["zk.cepoch"], 0) + 1
        return [(z3.And(v["zk.avail"], v["zk.ctrl"] == ABSENT, z3.Not(v[f"b{b}.kraft"])), {
            "zk.ctrl": b, "zk.kepoch": ABSENT, "zk.cepoch": epoch, "zk.ever": v["zk.ever"] + 1,
            "zk.ehigh": z3.If(epoch > v["zk.ehigh"], epoch, v["zk.ehigh"]), "zkce": epoch})]

    def _zk_metadata_change(self, v: V) -> list[Branch]:
        # The ZK controller's write is conditional on /controller_epoch's version: its epoch must be current,
        # and it must still run in ZK mode.
        ctrl_zk = _or([z3.And(v["zk.ctrl"] == b, z3.Not(v[f"b{b}.kraft"])) for b in range(self.nb)])
        room, ch = self.append(v, "zk.dlen", "zk.d", self.md, v["next"])
        ch["next"] = v["next"] + 1
        return [(z3.And(v["zk.avail"], ctrl_zk, v["next"] <= self.max_updates, v["zkce"] == v["zk.cepoch"], room),
                 ch)]

    def _restart_zk_broker(self, v: V, b: int, ibp: int) -> dict[str, Any]:
        """A rolling restart with the migration configs: it registers again, and if it was the ZK controller
        its ephemeral /controller goes (the rest of the znode stays). kafka: its registration stays in the
        image (fenced) until a new one replaces it."""
        reg: Any = v[f"b{b}.reg"] if self.profile == "kafka" else False
        fault = z3.Or(v[f"b{b}.fault"], z3.BoolVal(ibp != self.config.broker_ibp))
        return {"zk.ctrl": z3.If(v["zk.ctrl"] == b, ABSENT, v["zk.ctrl"]), f"b{b}.mig": True, f"b{b}.ibp": ibp,
                f"b{b}.reg": reg, f"b{b}.rpcs": False, f"b{b}.fault": fault}

    def _enable_migration(self, v: V, b: int) -> list[Branch]:
        ibp = self.config.broker_ibp  # also puts right a broker restarted at a wrong IBP
        return [(z3.And(z3.Not(v[f"b{b}.kraft"]), z3.Or(z3.Not(v[f"b{b}.mig"]), v[f"b{b}.ibp"] != ibp), self.pre(v),
                        self.quorum_up(v)),
                 self._restart_zk_broker(v, b, ibp))]

    def _incompatible_joins(self, v: V, b: int) -> list[Branch]:
        c = self.config
        if not c.incompatible_broker:
            return []
        return [(z3.And(z3.Not(v[f"b{b}.kraft"]), z3.Not(v[f"b{b}.fault"]), self.pre(v), self.quorum_up(v)),
                 self._restart_zk_broker(v, b, c.broker_ibp - 1))]

    def _register(self, v: V, b: int) -> list[Branch]:
        # api.zk_broker_registration_error restated for a ZK broker with ZkMigrationReady set and no KRaft
        # broker: accepted when the active controller runs with migration enabled and the broker's IBP is
        # the quorum's metadata.version (kafka also needs 3.4-IV0, below its 3.6-IV1 bootstrap minimum).
        accepted = z3.And(self.sel(v, "mig", v["leader"]), v[f"b{b}.ibp"] == self.config.quorum_level)
        return [(z3.And(z3.Not(v[f"b{b}.kraft"]), v[f"b{b}.mig"], z3.Not(v[f"b{b}.reg"]), self.leader_ok(v),
                        accepted), {f"b{b}.reg": True})]

    def _restart_as_kraft(self, v: V, b: int) -> list[Branch]:
        return [(z3.And(v["mstate"] == MIGRATION, z3.Not(v[f"b{b}.kraft"]), v[f"b{b}.reg"], self.quorum_up(v)),
                 {f"b{b}.kraft": True, f"b{b}.rpcs": False})]

    def _rollback_broker(self, v: V, b: int) -> list[Branch]:
        if not self.config.rollback:
            return []
        return [(z3.And(v[f"b{b}.kraft"], v["mstate"] == MIGRATION), {f"b{b}.kraft": False})]

    # ------------------------------------------------------------------ the KRaft quorum
    def activation(self, v: V, i: int) -> tuple[Any, Any]:
        """(finalize, resign) of voter i becoming active: ``api.activate`` restated (ActivationRecordsGenerator
        under kafka at the quorum's metadata.version, which is at least 3.6-IV1 there, KIP-866 "wrong settings"
        under kip). The system closes the open transaction also when the controller resigns."""
        st, enabled = v["mstate"], v[f"v{i}.mig"]
        all_off: Any = z3.BoolVal(True) if "finalize_without_every_voter" in self.muts else \
            _and([z3.Not(v[f"v{j}.mig"]) for j in range(self.nv)])
        finalize = z3.And(st == MIGRATION, z3.Not(enabled), z3.Or(self.profile == "kafka", all_off))
        resign = z3.Or(z3.And(st == NONE, enabled), z3.And(st == MIGRATION, z3.Not(enabled), z3.Not(finalize)),
                       z3.And(st == PRE_MIGRATION, z3.Not(enabled), self.profile == "kip"))
        return finalize, resign

    def _elected(self, v: V, i: int, resign: Any, finalize: Any) -> dict[str, Any]:
        # The elected voter's driver saw KRaftLeaderEvent(not leader) first: INACTIVE, nothing held. One that
        # resigns writes nothing, not even the abort: the transaction stays open for the next leader.
        return {"leader": z3.If(resign, -1, i), "repoch": v["repoch"] + 1, "txn": z3.And(resign, v["txn"]),
                "mstate": z3.If(finalize, POST_MIGRATION, v["mstate"]), f"v{i}.drv": INACTIVE,
                f"v{i}.zkv": ABSENT, f"v{i}.zke": ABSENT, f"v{i}.zev": ABSENT, f"v{i}.synced": 0}

    def _elect_leader(self, v: V, i: int) -> list[Branch]:
        finalize, resign = self.activation(v, i)
        # Electing a voter that resigns is a fault: bounded by the epoch budget.
        return [(z3.And(self.quorum_up(v), v["leader"] < 0, self.running(v) * 2 > self.nv, v[f"v{i}.run"],
                        z3.Or(z3.Not(resign), self.faults_left(v))), self._elected(v, i, resign, finalize))]

    def _crash(self, v: V, i: int) -> list[Branch]:
        if not self.config.failover:
            return []
        down = self.nv - self.running(v)
        return [(z3.And(self.quorum_up(v), self.faults_left(v), v[f"v{i}.run"], down < self.config.max_voters_down),
                 {f"v{i}.run": False, "leader": z3.If(v["leader"] == i, -1, v["leader"])})]

    def _failover(self, v: V, i: int) -> list[Branch]:
        if not self.config.failover:
            return []
        finalize, resign = self.activation(v, i)
        return [(z3.And(self.quorum_up(v), self.faults_left(v), v["leader"] >= 0, v["leader"] != i, v[f"v{i}.run"]),
                 self._elected(v, i, resign, finalize))]

    def _restarted(self, v: V, i: int, migration: Any) -> dict[str, Any]:
        # The driver restarts UNINITIALIZED and goes INACTIVE after reading /migration; nothing it reads there
        # is used before it leads again, so (as the reference) it starts INACTIVE with nothing claimed.
        return {f"v{i}.run": True, f"v{i}.mig": migration, f"v{i}.drv": INACTIVE, f"v{i}.zkv": ABSENT,
                f"v{i}.zke": ABSENT, f"v{i}.zev": ABSENT, f"v{i}.synced": 0,
                "leader": z3.If(v["leader"] == i, -1, v["leader"])}

    def _recover(self, v: V, i: int) -> list[Branch]:
        return [(z3.And(self.quorum_up(v), z3.Not(v[f"v{i}.run"])), self._restarted(v, i, v[f"v{i}.mig"]))]

    def _restart_voter(self, v: V, i: int) -> list[Branch]:
        """Restarts that change the migration config: finalization once every broker runs KRaft, a
        misconfigured voter mid-migration (or before the copy), migration turned back on after the end."""
        c = self.config
        all_kraft = _and([v[f"b{b}.kraft"] for b in range(self.nb)])
        up = z3.And(self.quorum_up(v), v[f"v{i}.run"])
        # in POST_MIGRATION: the rest of the finalizing roll (controllers still configured for the migration)
        off = z3.And(up, v[f"v{i}.mig"], z3.Or(
            z3.And(v["mstate"] == MIGRATION,
                   z3.Or(z3.And(c.finalize, all_kraft), z3.And(c.misconfigured_controller, self.faults_left(v)))),
            z3.And(v["mstate"] == PRE_MIGRATION, c.misconfigured_before_migration, self.faults_left(v)),
            z3.And(v["mstate"] == POST_MIGRATION, c.finalize)))
        out: list[Branch] = [(off, self._restarted(v, i, False))]
        if c.misconfigured_controller:
            on = z3.And(up, z3.Not(v[f"v{i}.mig"]), v["mstate"] == POST_MIGRATION, self.faults_left(v))
            out.append((on, self._restarted(v, i, True)))
        return out

    # ------------------------------------------------------------------ KRaftMigrationDriver (per voter)
    def driving(self, v: V, i: int) -> Any:
        """Voter i's driver runs: the quorum is up and i runs with migration enabled."""
        return z3.And(self.quorum_up(v), v[f"v{i}.run"], v[f"v{i}.mig"])

    def leads(self, v: V, i: int, drv: int) -> Any:
        return z3.And(self.driving(v, i), v["leader"] == i, v[f"v{i}.drv"] == drv)

    def _deactivate(self, v: V, i: int) -> list[Branch]:
        # KRaftLeaderEvent: another voter leads; what the driver held of ZooKeeper is forgotten.
        return [(z3.And(self.driving(v, i), v["leader"] != i, v[f"v{i}.drv"] != INACTIVE),
                 {f"v{i}.drv": INACTIVE, f"v{i}.zkv": ABSENT, f"v{i}.zke": ABSENT, f"v{i}.zev": ABSENT,
                  f"v{i}.synced": 0})]

    def _activate(self, v: V, i: int) -> list[Branch]:
        # KRaftLeaderEvent reads /migration (waiting for ZooKeeper); before KAFKA-16171 / KAFKA-16667 the
        # driver kept that version past its claim.
        if "stale_migration_version" in self.muts:
            return [(z3.And(self.leads(v, i, INACTIVE), v["zk.avail"]),
                     {f"v{i}.drv": WAIT_QUORUM, f"v{i}.zkv": v["zk.mver"]})]
        return [(z3.And(self.leads(v, i, INACTIVE), v["zk.avail"]), {f"v{i}.drv": WAIT_QUORUM})]

    def quorum_ready(self, v: V) -> Any:
        """Trigger 5 as the driver checks it before the copy. kip: every voter running with the migration
        config. kafka (QuorumFeatures.reasonAllControllersZkMigrationNotReady): below 3.7-IV0 nothing; from
        3.7-IV0 every voter's controller registration ready, i.e. the migration config it last started with,
        kept while it is down (every voter started, so each has a registration)."""
        if "no_controller_quorum_check" in self.muts:  # KAFKA-14909
            return z3.BoolVal(True)
        if self.profile == "kip":
            return _and([z3.And(v[f"v{j}.run"], v[f"v{j}.mig"]) for j in range(self.nv)])
        if self.config.quorum_level < CONTROLLER_REGISTRATION_LEVEL:
            return z3.BoolVal(True)
        if "registration_without_zk_migration_ready" in self.muts:  # KAFKA-15704
            return z3.BoolVal(False)
        return _and([v[f"v{j}.mig"] for j in range(self.nv)])

    def _wait_quorum(self, v: V, i: int) -> list[Branch]:
        st = v["mstate"]
        to = z3.If(z3.Or(st == NONE, st == POST_MIGRATION), INACTIVE,
                   z3.If(st == PRE_MIGRATION, WAIT_BROKERS, z3.If(v["zk.migrated"], BECOME, INACTIVE)))
        return [(z3.And(self.leads(v, i, WAIT_QUORUM), z3.Implies(st == PRE_MIGRATION, self.quorum_ready(v))),
                 {f"v{i}.drv": to})]

    def brokers_ready(self, v: V) -> Any:
        """Triggers 1-4 over the brokers still in ZK mode (kafka: their registrations, fenced or not)."""
        zk = [z3.Not(v[f"b{b}.kraft"]) for b in range(self.nb)]
        if "start_without_all_brokers" in self.muts:
            return _or([z3.And(zk[b], v[f"b{b}.reg"]) for b in range(self.nb)])
        if self.profile == "kafka":
            return z3.And(_or(zk), _and([z3.Implies(zk[b], v[f"b{b}.reg"]) for b in range(self.nb)]))
        ready = [z3.Implies(zk[b], z3.And(v[f"b{b}.mig"], v[f"b{b}.reg"], v[f"b{b}.ibp"] == self.config.quorum_level))
                 for b in range(self.nb)]
        return z3.And(_or(zk), _and(ready))

    def _wait_brokers(self, v: V, i: int) -> list[Branch]:
        # WaitForZkBrokersEvent reads /brokers (waiting for ZooKeeper).
        return [(z3.And(self.leads(v, i, WAIT_BROKERS), v["zk.avail"], self.brokers_ready(v)), {f"v{i}.drv": BECOME})]

    def _become_controller(self, v: V, i: int) -> list[Branch]:
        """The take-over of /controller and /controller_epoch (api.claim_controller_epoch restated: refused
        when /controller already names a KRaft controller of the same or a newer Raft epoch, or when
        /controller_epoch is absent; the driver keeps the /controller_epoch version its write got), then the
        unconditional write of /migration that learns its version (KAFKA-16171 / KAFKA-16667)."""
        claimable = z3.And(v["zk.kepoch"] < v["repoch"], v["zk.cepoch"] >= 0)
        epoch: Any = v["zk.cepoch"] + 1
        if "kraft_epoch_not_above_zk" in self.muts:
            epoch = v["repoch"]
        ch: dict[str, Any] = {
            "zk.ctrl": KRAFT_ID + i, "zk.kepoch": v["repoch"], "zk.cepoch": epoch, "zk.ever": v["zk.ever"] + 1,
            "zk.mver": v["zk.mver"] + 1, "zk.ehigh": z3.If(epoch > v["zk.ehigh"], epoch, v["zk.ehigh"]),
            f"v{i}.zkv": v["zk.mver"] + 1, f"v{i}.zke": epoch, f"v{i}.zev": v["zk.ever"] + 1,
            f"v{i}.drv": z3.If(v["zk.migrated"], SYNC, ZK_MIG)}
        if "stale_migration_version" in self.muts:
            # /migration is neither written nor re-read: the driver keeps the version it read when it
            # became active (``_activate``).
            del ch["zk.mver"], ch[f"v{i}.zkv"]
        return [(z3.And(self.leads(v, i, BECOME), v["zk.avail"], claimable), ch)]

    def _begin_migration(self, v: V, i: int) -> list[Branch]:
        ch: dict[str, Any] = {"txn": True}
        if "non_transactional_copy" in self.muts:
            # Records committed as they are read: a crash now leaves a partial copy (data[:1]) in the log.
            ch["loglen"] = z3.If(v["zk.dlen"] >= 1, 1, 0)
            ch.update({f"l{k}": v["zk.d0"] if k == 0 else ABSENT for k in range(self.ml)})
        return [(z3.And(self.leads(v, i, ZK_MIG), z3.Not(v["txn"])), ch)]

    def _complete_migration(self, v: V, i: int) -> list[Branch]:
        # Commit the copy with ZkMigrationRecord(MIGRATION), then mark /migration (a conditional write, under
        # every mutation: the copy's write is not one of the dual writes).
        fits, ch = self.data_to_log(v)
        ch.update({"zk.migrated": True, "zk.mver": v["zk.mver"] + 1, "txn": False, "mstate": MIGRATION,
                   f"v{i}.drv": SYNC, f"v{i}.zkv": v["zk.mver"] + 1, f"v{i}.synced": v["zk.dlen"]})
        return [(z3.And(self.leads(v, i, ZK_MIG), v["txn"], v["zk.avail"], v[f"v{i}.zkv"] == v["zk.mver"], fits), ch)]

    def _sync(self, v: V, i: int) -> list[Branch]:
        if "no_sync_after_failover" in self.muts:
            # Before KAFKA-15010: resume after the log's end as if ZooKeeper held all of it.
            ch: dict[str, Any] = {f"v{i}.drv": TO_BROKERS, f"v{i}.synced": v["loglen"]}
        else:
            ch = {**self.log_to_data(v), "zk.mver": v["zk.mver"] + 1, f"v{i}.drv": TO_BROKERS,
                  f"v{i}.zkv": v["zk.mver"] + 1, f"v{i}.synced": v["loglen"]}
        return [(z3.And(self.leads(v, i, SYNC), v["zk.avail"], self.version_ok(v, i)), ch)]

    def gets_rpcs(self, v: V, b: int) -> Any:
        # KIP-866 "Incompatible broker": isolated, no UpdateMetadata or LeaderAndIsr.
        # kafka: to every ZK broker's registration, fenced or not (MigrationPropagator).
        if "rpcs_to_incompatible_broker" in self.muts:
            return z3.Not(v[f"b{b}.kraft"])
        if self.profile == "kafka":
            return z3.And(z3.Not(v[f"b{b}.kraft"]), v[f"b{b}.reg"])
        return z3.And(z3.Not(v[f"b{b}.kraft"]), v[f"b{b}.reg"], v[f"b{b}.ibp"] == self.config.quorum_level)

    def _send_rpcs(self, v: V, i: int) -> list[Branch]:
        ch: dict[str, Any] = {f"v{i}.drv": DUAL_WRITE}
        ch.update({f"b{b}.rpcs": z3.Or(v[f"b{b}.rpcs"], self.gets_rpcs(v, b)) for b in range(self.nb)})
        return [(self.leads(v, i, TO_BROKERS), ch)]

    def _dual_write(self, v: V, i: int) -> list[Branch]:
        """The next committed record to ZooKeeper, conditional on /migration's version. A driver that has not
        yet noticed it lost leadership tries too (the stale-controller window)."""
        synced = v[f"v{i}.synced"]
        # MigrationDriverState.allowDualWrite: KRAFT_CONTROLLER_TO_BROKER_COMM (7) and DUAL_WRITE (8).
        pending = z3.And(self.driving(v, i), v[f"v{i}.drv"] >= TO_BROKERS, synced < v["loglen"])
        room, ch = self.append(v, "zk.dlen", "zk.d", self.md, self.at(v, "l", self.ml, synced))
        ch.update({"zk.mver": v["zk.mver"] + 1, f"v{i}.synced": synced + 1, f"v{i}.zkv": v["zk.mver"] + 1})
        out: list[Branch] = [(z3.And(pending, v["zk.avail"], self.version_ok(v, i), room), ch)]
        if "dual_write_ignores_zk_failure" in self.muts:
            out.append((z3.And(pending, z3.Not(v["zk.avail"])), {f"v{i}.synced": synced + 1}))
        return out

    # ------------------------------------------------------------------ metadata changes, faults, rollback
    def serves_metadata(self, v: V) -> Any:
        """KIP-866 soft start (nothing before the copy) and, under kip, the write-behind limit: the controller
        stops while ZooKeeper is unavailable or lags by ``lag_limit`` as its driver reports it."""
        st = v["mstate"]
        pre: Any = z3.BoolVal("serve_before_copy" in self.muts)
        if self.profile != "kip":
            return z3.If(st == PRE_MIGRATION, pre, True)
        ld = v["leader"]
        synced = z3.If(self.sel(v, "drv", ld) >= TO_BROKERS, self.sel(v, "synced", ld), 0)
        lag_ok = z3.And(v["zk.avail"], v["loglen"] - synced < self.config.lag_limit)
        return z3.If(st == PRE_MIGRATION, pre, z3.If(st == MIGRATION, lag_ok, True))

    def _kraft_metadata_change(self, v: V) -> list[Branch]:
        room, ch = self.append(v, "loglen", "l", self.ml, v["next"])
        ch["next"] = v["next"] + 1
        return [(z3.And(self.leader_ok(v), v["next"] <= self.max_updates, self.serves_metadata(v), room), ch)]

    def _zk_unavailable(self, v: V) -> list[Branch]:
        return [(v["zk.avail"], {"zk.avail": False})] if self.config.zk_outage else []

    def _zk_available(self, v: V) -> list[Branch]:
        return [(z3.Not(v["zk.avail"]), {"zk.avail": True})] if self.config.zk_outage else []

    def _shutdown_quorum(self, v: V) -> list[Branch]:
        """Rollback: every broker back in ZK mode, the quorum stopped; cleanly once the operator saw the
        active driver's ZooKeeperWriteBehindLag at 0, else (a switch) uncleanly."""
        c = self.config
        if not c.rollback:
            return []
        ld = v["leader"]
        drained = z3.Or(v["loglen"] == 0, z3.And(self.leader_ok(v), self.sel(v, "drv", ld) >= TO_BROKERS,
                                                 self.sel(v, "synced", ld) == v["loglen"]))
        ch: dict[str, Any] = {f"v{i}.run": False for i in range(self.nv)}
        ch.update({"leader": -1, "shutdown": z3.If(drained, SD_CLEAN, SD_UNCLEAN)})
        return [(z3.And(self.quorum_up(v), self.pre(v), _and([z3.Not(v[f"b{b}.kraft"]) for b in range(self.nb)]),
                        z3.Or(drained, c.unclean_shutdown)), ch)]

    def _delete_controller_znodes(self, v: V) -> list[Branch]:
        if not self.config.rollback:
            return []
        if self.profile == "kip":
            # KIP-866 "Rollback to ZK": /controller and /controller_epoch go.
            ch: dict[str, Any] = {"zk.ctrl": ABSENT, "zk.kepoch": ABSENT, "zk.cepoch": ABSENT, "zk.ever": ABSENT}
        else:
            # Kafka 3.9 docs: /controller and /migration go; /controller_epoch stays.
            ch = {"zk.ctrl": ABSENT, "zk.kepoch": ABSENT, "zk.mver": ABSENT, "zk.migrated": False}
        return [(z3.And(v["shutdown"] != SD_NONE, v["zk.avail"], v["zk.ctrl"] >= KRAFT_ID), ch)]

    # ------------------------------------------------------------------ invariants (properties/zk_migration.py)
    def migrating(self, v: V) -> Any:
        return z3.And(v["mstate"] == MIGRATION, v["shutdown"] == SD_NONE)

    def mig03(self, v: V) -> z3.BoolRef:
        """During the migration ZooKeeper's metadata is a prefix of the committed log."""
        return z3.Implies(self.migrating(v), self.data_is_prefix_of_log(v))

    def mig04(self, v: V) -> z3.BoolRef:
        """During the migration ZooKeeper lags the log by at most ``lag_limit`` records."""
        return z3.Implies(self.migrating(v), v["loglen"] - v["zk.dlen"] <= self.config.lag_limit)

    def mig06(self, v: V) -> z3.BoolRef:
        """Nothing is committed before the copy."""
        return z3.Implies(v["mstate"] == PRE_MIGRATION, v["loglen"] == 0)

    def mig10(self, v: V) -> z3.BoolRef:
        """Only brokers registered at the quorum's metadata.version got UpdateMetadata / LeaderAndIsr (kafka:
        judged by the registration, which a restart at another IBP leaves)."""
        if self.profile == "kafka":
            return _and([z3.Implies(v[f"b{b}.rpcs"], v[f"b{b}.reg"]) for b in range(self.nb)])
        return _and([z3.Implies(v[f"b{b}.rpcs"], z3.And(v[f"b{b}.reg"], v[f"b{b}.ibp"] == self.config.quorum_level))
                     for b in range(self.nb)])

    def mig11(self, v: V) -> z3.BoolRef:
        """After a clean shutdown ZooKeeper holds every committed record (the log is a prefix of its data)."""
        return z3.Implies(v["shutdown"] == SD_CLEAN, self.log_is_prefix_of_data(v))

    def mig15(self, v: V) -> z3.BoolRef:
        """Every metadata change is a new record: the log and ZooKeeper's data hold ids in creation order, each
        once, all below the next id (whose bound, ``max_updates`` + 1, is a domain constraint here)."""
        def in_order(length: str, slot: str, n: int) -> list[Any]:
            return ([z3.Implies(k + 1 < v[length], v[f"{slot}{k}"] < v[f"{slot}{k + 1}"]) for k in range(n - 1)]
                    + [z3.Implies(k < v[length], v[f"{slot}{k}"] < v["next"]) for k in range(n)])

        return _and([*in_order("loglen", "l", self.ml), *in_order("zk.dlen", "zk.d", self.md)])

    # ------------------------------------------------------------------ strengthening (for k-induction)
    def strengthening_invariants(self) -> dict[str, Predicate]:
        """Invariants of the design that k-induction may conjoin with a property (proved together with it).
        Those about drivers and versions hold while the quorum runs (after the rollback's shutdown no driver
        moves, and the kafka profile deletes /migration)."""
        nv, nb = range(self.nv), range(self.nb)

        def up(v: V, x: Any) -> z3.BoolRef:
            return z3.Implies(self.quorum_up(v), x)

        def per_voter(f: Callable[[V, int], Any]) -> Predicate:
            return lambda v: up(v, _and([f(v, i) for i in nv]))

        def holds_version(v: V, i: int) -> Any:
            return v[f"v{i}.zkv"] == v["zk.mver"]

        return {
            # MIG-01: every writer of /controller_epoch (ZK election, KRaft claim) writes max(current, 0) + 1,
            # so while the quorum runs it is the highest epoch ever written (the rollback may delete it).
            "epoch-is-highest": lambda v: up(v, z3.And(v["zk.cepoch"] >= 0, v["zk.cepoch"] == v["zk.ehigh"])),
            "mver-domain": lambda v: v["zk.mver"] >= ABSENT,
            # Versions only grow, and a driver learns one by writing it: none is ahead of ZooKeeper.
            "versions-not-ahead": per_voter(lambda v, i: v[f"v{i}.zkv"] <= v["zk.mver"]),
            # A driver past BECOME_CONTROLLER has claimed, so it holds a version.
            "claimed-versions": per_voter(lambda v, i: z3.Implies(v[f"v{i}.drv"] >= ZK_MIG, v[f"v{i}.zkv"] >= 0)),
            # /migration gets its first version from a take-over, after which /controller names a KRaft
            # controller (only ZK election and a ZK broker's restart, both excluded then, write it otherwise).
            "kraft-holds-controller": lambda v: up(v, z3.Implies(v["zk.mver"] >= 0, v["zk.ctrl"] >= KRAFT_ID)),
            "migrated-has-version": lambda v: up(v, z3.Implies(
                z3.Or(v["mstate"] == MIGRATION, v["mstate"] == POST_MIGRATION), v["zk.mver"] >= 0)),
            # The driver holding the current version (the only one whose writes pass the check) took over
            # with the current /controller_epoch (MIG-02), and once it syncs it has written exactly what
            # ZooKeeper holds (MIG-03).
            "holder-has-epoch": per_voter(lambda v, i: z3.Implies(
                z3.And(v[f"v{i}.drv"] >= ZK_MIG, holds_version(v, i)), v[f"v{i}.zke"] == v["zk.cepoch"])),
            "writer-in-sync": per_voter(lambda v, i: z3.Implies(
                z3.And(holds_version(v, i), z3.Or(v[f"v{i}.drv"] == TO_BROKERS, v[f"v{i}.drv"] == DUAL_WRITE)),
                v[f"v{i}.synced"] == v["zk.dlen"])),
            # The same for the /controller_epoch version a claim got (the other check of every KRaft write):
            # none ahead of ZooKeeper's, one held past BECOME_CONTROLLER, and the driver holding the current
            # one claimed the current /controller_epoch. This alone fences a deposed controller (MIG-02), also
            # under ``stale_migration_version``, which breaks the /migration-version invariants above.
            "ever-domain": lambda v: up(v, v["zk.ever"] >= 0),
            "epoch-versions-not-ahead": per_voter(lambda v, i: v[f"v{i}.zev"] <= v["zk.ever"]),
            "claimed-epoch-versions": per_voter(lambda v, i: z3.Implies(v[f"v{i}.drv"] >= ZK_MIG,
                                                                        v[f"v{i}.zev"] >= 0)),
            "epoch-holder-has-epoch": per_voter(lambda v, i: z3.Implies(
                z3.And(v[f"v{i}.drv"] >= ZK_MIG, v[f"v{i}.zev"] == v["zk.ever"]), v[f"v{i}.zke"] == v["zk.cepoch"])),
            # What a driver counts as written is in the log and in ZooKeeper (MIG-04, MIG-11); a driver
            # that has not taken over counts nothing.
            "synced-le-log": per_voter(lambda v, i: v[f"v{i}.synced"] <= v["loglen"]),
            "writers-behind-zk": per_voter(lambda v, i: z3.Implies(v[f"v{i}.drv"] >= SYNC,
                                                                   v[f"v{i}.synced"] <= v["zk.dlen"])),
            "idle-drivers-unsynced": lambda v: _and([z3.Implies(v[f"v{i}.drv"] <= ZK_MIG, v[f"v{i}.synced"] == 0)
                                                     for i in nv]),
            # MIG-07 with several brokers: no broker has moved to KRaft before the copy.
            "pre-all-zk": lambda v: z3.Implies(v["mstate"] == PRE_MIGRATION,
                                               _and([z3.Not(v[f"b{b}.kraft"]) for b in nb])),
            # MIG-08: a newly elected voter's driver starts INACTIVE, and after the finalization it goes no
            # further than WAIT_FOR_CONTROLLER_QUORUM (which sends it back): the leader never takes over again.
            "finalized-leader-idle": lambda v: _and([z3.Implies(
                z3.And(v["leader"] == i, v["mstate"] == POST_MIGRATION), v[f"v{i}.drv"] <= WAIT_QUORUM)
                for i in nv]),
            # MIG-15: a dual write appends a newer record, since ZooKeeper's data is a prefix of the log from
            # the copy on (POST_MIGRATION too: a driver that has not noticed the finalization may still flush),
            # and only a driver past the copy dual-writes.
            "data-prefix-while-up": lambda v: up(v, z3.Implies(z3.Or(v["mstate"] == MIGRATION,
                                                                     v["mstate"] == POST_MIGRATION),
                                                               self.data_is_prefix_of_log(v))),
            "migrated-past-copy": lambda v: up(v, z3.Implies(
                v["zk.migrated"], z3.Or(v["mstate"] == MIGRATION, v["mstate"] == POST_MIGRATION))),
            "writers-past-copy": per_voter(lambda v, i: z3.Implies(
                v[f"v{i}.drv"] >= SYNC, z3.Or(v["mstate"] == MIGRATION, v["mstate"] == POST_MIGRATION))),
            # MIG-16: the leader's driver reaches ZK_MIGRATION only while /migration records no finished copy,
            # and /migration records none before the copy commits; the commit moves the driver on.
            "unmigrated-before-copy": lambda v: up(v, z3.Implies(
                z3.Not(v["zk.migrated"]), z3.And(v["mstate"] != MIGRATION, v["mstate"] != POST_MIGRATION))),
            "drivers-have-a-migration": per_voter(lambda v, i: z3.Implies(v[f"v{i}.drv"] >= WAIT_BROKERS,
                                                                          v["mstate"] != NONE)),
            "copier-before-copy": lambda v: up(v, _and([z3.Implies(
                z3.And(v["leader"] == i, v[f"v{i}.drv"] == ZK_MIG),
                z3.And(v["mstate"] == PRE_MIGRATION, z3.Not(v["zk.migrated"]))) for i in nv])),
            "MIG-03": self.mig03,
            "MIG-06": self.mig06,
            "MIG-15": self.mig15,
        }

    # ------------------------------------------------------------------ step properties
    # A transition may be made by several actions (or one action with several parameters); the reference
    # says a step violates a property when some action that makes it does. So each property is "for every
    # action (and parameter) that relates v and v2, its condition holds".
    def mig01(self, v: V, v2: V) -> z3.BoolRef:
        """A KRaft take-over writes a /controller_epoch above every epoch ZooKeeper ever had."""
        return z3.Implies(self.actions["BecomeZkController"](v, v2), v2["zk.cepoch"] > v["zk.ehigh"])

    def mig02(self, v: V, v2: V) -> z3.BoolRef:
        """ZooKeeper's metadata changes only by a writer that holds the current /controller_epoch."""
        changed = z3.Not(self.seq_equal(v, "zk.dlen", "zk.d", self.md, v2, "zk.dlen", "zk.d", self.md))
        ok = [z3.Implies(self.actions["ZkMetadataChange"](v, v2), v["zkce"] == v["zk.cepoch"])]
        for i in range(self.nv):
            by_i = z3.Or(self.by_voter("SyncKRaftToZk", i)(v, v2), self.by_voter("DualWrite", i)(v, v2))
            ok.append(z3.Implies(by_i, v[f"v{i}.zke"] == v["zk.cepoch"]))
        return z3.Implies(changed, z3.And(ok))

    def mig05(self, v: V, v2: V) -> z3.BoolRef:
        """The copy commits all of ZooKeeper's metadata at once."""
        return z3.Implies(self.actions["CompleteMigration"](v, v2),
                          self.seq_equal(v2, "loglen", "l", self.ml, v, "zk.dlen", "zk.d", self.md))

    def mig07(self, v: V, v2: V) -> z3.BoolRef:
        """Trigger 5 when a driver leaves WAIT_FOR_CONTROLLER_QUORUM for the brokers (kip: every voter
        running and ready; kafka: from 3.7-IV0 every voter's registration ready, a down voter's included);
        triggers 1-4 (kip: every broker in ZK mode, configured, registered, at the quorum's version; kafka:
        every broker in ZK mode with a registration) when it stops waiting for them before the copy."""
        if self.profile == "kip":
            quorum_ready = _and([z3.And(v[f"v{j}.run"], v[f"v{j}.mig"]) for j in range(self.nv)])
        else:
            quorum_ready = z3.Or(self.config.quorum_level < CONTROLLER_REGISTRATION_LEVEL,
                                 _and([v[f"v{j}.mig"] for j in range(self.nv)]))
        ok = [z3.Implies(z3.And(self.by_voter("DriverWaitForQuorum", i)(v, v2), v2[f"v{i}.drv"] == WAIT_BROKERS),
                         quorum_ready) for i in range(self.nv)]
        if self.profile == "kip":
            brokers = _and([z3.And(z3.Not(v[f"b{b}.kraft"]), v[f"b{b}.mig"], v[f"b{b}.reg"],
                                   v[f"b{b}.ibp"] == self.config.quorum_level) for b in range(self.nb)])
        else:  # the registrations, a restarted broker's old one included
            brokers = _and([z3.And(z3.Not(v[f"b{b}.kraft"]), v[f"b{b}.reg"]) for b in range(self.nb)])
        ok.append(z3.Implies(z3.And(self.actions["DriverWaitForBrokers"](v, v2), v["mstate"] == PRE_MIGRATION),
                             brokers))
        return z3.And(ok)

    def mig08(self, v: V, v2: V) -> z3.BoolRef:
        """A finalized migration stays finalized: no new take-over, no new copy."""
        restart = z3.Or(self.actions["BecomeZkController"](v, v2), self.actions["BeginMigration"](v, v2),
                        self.actions["CompleteMigration"](v, v2))
        return z3.Implies(v["mstate"] == POST_MIGRATION, z3.And(v2["mstate"] == POST_MIGRATION, z3.Not(restart)))

    def mig13(self, v: V, v2: V) -> z3.BoolRef:
        """A dual write appends to ZooKeeper exactly the log's entry at ZooKeeper's length, and nothing else."""
        n = v["zk.dlen"]
        entry = [z3.And(n == k, v2[f"zk.d{k}"] == v[f"l{k}"]) for k in range(min(self.md, self.ml))]
        kept = [z3.Implies(k < n, v2[f"zk.d{k}"] == v[f"zk.d{k}"]) for k in range(self.md)]
        exact = z3.And(n < v["loglen"], v2["zk.dlen"] == n + 1, z3.Or(entry) if entry else z3.BoolVal(False), *kept)
        return z3.Implies(self.actions["DualWrite"](v, v2), exact)

    def mig16(self, v: V, v2: V) -> z3.BoolRef:
        """The copy starts only while no copy has finished: PRE_MIGRATION, /migration not marked migrated."""
        return z3.Implies(self.actions["BeginMigration"](v, v2),
                          z3.And(v["mstate"] == PRE_MIGRATION, z3.Not(v["zk.migrated"])))

    def mig17(self, v: V, v2: V) -> z3.BoolRef:
        """A new Raft epoch (an election) only while a majority of the voters runs."""
        return z3.Implies(v2["repoch"] != v["repoch"], self.running(v) * 2 > self.nv)

    def mig14(self, v: V, v2: V) -> z3.BoolRef:
        """(kip) No metadata change is committed during the migration while ZooKeeper is unavailable."""
        return z3.Implies(z3.And(self.migrating(v), self.actions["KRaftMetadataChange"](v, v2)), v["zk.avail"])

    def mig09(self, v: V, v2: V) -> z3.BoolRef:
        """No metadata change is served before the copy."""
        return z3.Not(z3.And(v["mstate"] == PRE_MIGRATION, self.actions["KRaftMetadataChange"](v, v2)))

    def mig12(self, v: V, v2: V) -> z3.BoolRef:
        """(kip) The migration is finalized only once every voter has migration turned off."""
        return z3.Implies(z3.And(v["mstate"] != POST_MIGRATION, v2["mstate"] == POST_MIGRATION),
                          _and([z3.Not(v2[f"v{i}.mig"]) for i in range(self.nv)]))
