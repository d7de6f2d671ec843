"""KIP-778 ``metadata.version`` in KRaft as a Z3 transition relation.

An independent restatement of ``reference_impl/metadata_version/system.py``: the unread suffix of the
metadata log as ``loglen`` and slots ``l0 .. l{max_log-1}`` (0 when unused; ``l[loglen-1]`` is the committed
level), the committed image's record features (one Bool per ``record_levels`` entry), the leader, and per
voter (software, status, offset) and per broker (software, status, offset, registration or -1, fenced,
RPC level). Entries every node has read are dropped after each step that can advance the lowest offset
(``_normalize``), symbolically by the lowest offset. An UpdateFeatures request is decided by
:func:`model.decisions.metadata_version.mv_update_rule`, the formula the differential check compares with the
reference's ``QuorumController`` over its bounded domain.

Encoded: every action (UpdateFeatures, WriteRecord, ReplicateMetadata, RegisterBroker, ElectLeader,
LeaderFailover, RestartNode, CrashNode, RecoverNode) and every mutation of the config. Invariants: MV-01,
MV-05, MV-11, MV-13, MV-16. Step properties: MV-02, MV-03, MV-04, MV-06, MV-07, MV-08, MV-09, MV-10, MV-14, MV-15,
MV-17. The parameters they read come from sub-relations (``parameter_relations``): UpdateFeatures per (level,
downgrade, dry_run), WriteRecord per record type, RestartNode per (role, node, software), RecoverNode per
(role, node); a step property fails on a step when some action that makes it (with its parameters) breaks
it. ``actions["UpdateFeatures"]`` and ``actions["RestartNode"]`` are the same relations written with one
commit / one start per node (the level written is the new state's level, the software started is the new
state's software): several times faster for BMC. Not encoded: the graph properties MV-L1, MV-L2 (liveness:
the explorers only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import z3

from model.decisions.metadata_version import mv_lossless, mv_update_rule
from reference_impl.metadata_version.state import Broker, MetadataVersionState, NodeStatus, Voter
from rollcheck.core.transition import TransitionSystem
from rollcheck.smt.core import Relation, SymbolicSystem, V, Value, frame

RUNNING, DOWN, TERMINATED = 0, 1, 2
STATUS = {NodeStatus.RUNNING: RUNNING, NodeStatus.DOWN: DOWN, NodeStatus.TERMINATED: TERMINATED}
DT = {"NONE": 0, "SAFE": 1, "UNSAFE": 2}


class MetadataVersionZ3(SymbolicSystem):
    name = "metadata_version"

    def __init__(self, ts: TransitionSystem[Any]) -> None:
        super().__init__(ts)
        c = self.config
        self.cat = c.version_catalog
        self.sws = list(c.softwares)
        self.nv, self.nb, self.m = c.voters, c.brokers, c.max_log
        self.recs = tuple(sorted(set(c.record_levels)))
        self.muts = frozenset(c.mutations)
        self.actions = {
            "UpdateFeatures": self._update, "WriteRecord": self._write_record, "ReplicateMetadata": self._replicate,
            "RegisterBroker": self._register, "ElectLeader": self._elect, "LeaderFailover": self._failover,
            "RestartNode": self._restart_node, "CrashNode": self._crash, "RecoverNode": self._recover,
        }
        # The actions' parameters, as sub-relations (the step properties need them).
        self.update_reqs = [((y, dt, dry), self._update_req(y, dt, dry)) for y in c.requested_levels
                            for dt in c.downgrade_types for dry in ((False, True) if c.dry_run else (False,))]
        self.write_reqs = [(t, self._write_req(t)) for t in self.recs]
        self.restart_reqs = [((role, p, i, k), self._restart_req(role, p, i, k)) for role, p, i in self._nodes()
                             for k in range(len(self.sws))]
        self.recover_reqs = [((role, p, i), self._recover_req(role, p, i)) for role, p, i in self._nodes()]
        self.invariants = {"MV-01": self.mv01, "MV-11": self.mv11, "MV-05": self.mv05, "MV-13": self.mv13,
                           "MV-16": self.mv16}
        self.step_properties = {"MV-02": self.mv02, "MV-03": self.mv03, "MV-04": self.mv04, "MV-06": self.mv06,
                                "MV-07": self.mv07, "MV-08": self.mv08, "MV-09": self.mv09, "MV-10": self.mv10,
                                "MV-14": self.mv14, "MV-15": self.mv15, "MV-17": self.mv17}
        self.strengthening = {}

    # ---- layout
    def fields(self) -> list[tuple[str, str]]:
        out = [("loglen", "int"), *((f"l{k}", "int") for k in range(self.m)), *((f"r{t}", "bool") for t in self.recs),
               ("leader", "int")]
        for i in range(self.nv):
            out += [(f"v{i}.sw", "int"), (f"v{i}.status", "int"), (f"v{i}.off", "int")]
        for i in range(self.nb):
            out += [(f"b{i}.sw", "int"), (f"b{i}.status", "int"), (f"b{i}.off", "int"), (f"b{i}.reg", "int"),
                    (f"b{i}.fenced", "bool"), (f"b{i}.rpc", "int")]
        return out

    def wellformed(self, v: V) -> z3.BoolRef:
        out: list[Any] = [v["loglen"] >= 1, v["loglen"] <= self.m, v["leader"] >= -1, v["leader"] < self.nv]
        for k in range(self.m):
            out.append(z3.If(k < v["loglen"], z3.And(v[f"l{k}"] >= 0, v[f"l{k}"] <= self.cat.latest), v[f"l{k}"] == 0))
        offs = []
        for p, n in (("v", self.nv), ("b", self.nb)):
            for i in range(n):
                out += [v[f"{p}{i}.sw"] >= 0, v[f"{p}{i}.sw"] < len(self.sws), v[f"{p}{i}.status"] >= 0,
                        v[f"{p}{i}.status"] <= 2, v[f"{p}{i}.off"] >= 0, v[f"{p}{i}.off"] < v["loglen"]]
                offs.append(v[f"{p}{i}.off"])
        for i in range(self.nb):
            out += [v[f"b{i}.reg"] >= -1, v[f"b{i}.reg"] < len(self.sws), v[f"b{i}.rpc"] >= 0,
                    v[f"b{i}.rpc"] <= self.cat.latest]
        out.append(z3.Or([o == 0 for o in offs]))  # normalized: some node has read nothing beyond l0
        return z3.And(out)

    # ---- reference <-> values
    def values(self, s: MetadataVersionState) -> dict[str, Value]:
        names = [sw.name for sw in self.sws]
        out: dict[str, Value] = {"loglen": len(s.log), "leader": s.leader}
        for k in range(self.m):
            out[f"l{k}"] = s.log[k] if k < len(s.log) else 0
        if set(s.records) - set(self.recs) or len(s.log) > self.m:
            raise ValueError(f"state outside the config's bounds: {s!r}")
        for t in self.recs:
            out[f"r{t}"] = t in s.records
        for i, x in enumerate(s.voters):
            out.update({f"v{i}.sw": names.index(x.software), f"v{i}.status": STATUS[x.status], f"v{i}.off": x.offset})
        for i, b in enumerate(s.brokers):
            out.update({f"b{i}.sw": names.index(b.software), f"b{i}.status": STATUS[b.status], f"b{i}.off": b.offset,
                        f"b{i}.reg": names.index(b.registration) if b.registration else -1,
                        f"b{i}.fenced": b.fenced, f"b{i}.rpc": b.rpc_level})
        return out

    def from_values(self, vals: Mapping[str, Value]) -> MetadataVersionState:
        status_of = {x: k for k, x in STATUS.items()}
        names = [sw.name for sw in self.sws]
        voters = tuple(Voter(names[int(vals[f"v{i}.sw"])], status_of[int(vals[f"v{i}.status"])], int(vals[f"v{i}.off"]))
                       for i in range(self.nv))
        brokers = tuple(Broker(names[int(vals[f"b{i}.sw"])], status_of[int(vals[f"b{i}.status"])],
                               int(vals[f"b{i}.off"]), names[int(vals[f"b{i}.reg"])] if int(vals[f"b{i}.reg"]) >= 0
                               else "", bool(vals[f"b{i}.fenced"]), int(vals[f"b{i}.rpc"])) for i in range(self.nb))
        log = tuple(int(vals[f"l{k}"]) for k in range(int(vals["loglen"])))
        return MetadataVersionState(voters, brokers, int(vals["leader"]), log,
                                    frozenset(t for t in self.recs if vals[f"r{t}"]))

    # ---- helpers
    def rng(self, sw: Any) -> tuple[Any, Any]:
        lo: Any = z3.IntVal(0)
        hi: Any = z3.IntVal(0)
        for k, s in enumerate(self.sws):
            lo, hi = z3.If(sw == k, s.min_level, lo), z3.If(sw == k, s.max_level, hi)
        return lo, hi

    def supports(self, sw: Any, level: Any) -> Any:
        lo, hi = self.rng(sw)
        return z3.And(lo <= level, level <= hi)

    def at(self, v: V, k: Any) -> Any:
        """l[k] for a symbolic index."""
        out: Any = z3.IntVal(0)
        for j in range(self.m):
            out = z3.If(k == j, v[f"l{j}"], out)
        return out

    def level(self, v: V) -> Any:
        return self.at(v, v["loglen"] - 1)

    def running_voters(self, v: V) -> Any:
        return z3.Sum([z3.If(v[f"v{i}.status"] == RUNNING, 1, 0) for i in range(self.nv)])

    def has_quorum(self, v: V) -> Any:
        return z3.And(v["leader"] >= 0, self.running_voters(v) * 2 > self.nv)

    def rpc_level(self, sw: Any, level: Any) -> Any:
        return self.rng(sw)[1] if "rpc_from_binary" in self.muts else level

    def step(self, v: V, v2: V, changes: Mapping[str, Any], normalize: bool) -> z3.BoolRef:
        """Next state = ``changes`` applied, then (``normalize``) the log prefix every node has read dropped."""
        if not normalize:
            return frame(v, v2, changes)
        mid = {k: changes.get(k, v[k]) for k in v}
        offs = [f"{p}{i}.off" for p, n in (("v", self.nv), ("b", self.nb)) for i in range(n)]
        low: Any = mid[offs[0]]
        for o in offs[1:]:
            low = z3.If(mid[o] < low, mid[o], low)
        out = dict(mid)
        out["loglen"] = mid["loglen"] - low
        for k in range(self.m):
            e: Any = z3.IntVal(0)
            for d in range(self.m):
                e = z3.If(low == d, mid[f"l{k + d}"] if k + d < self.m else 0, e)
            out[f"l{k}"] = e
        for o in offs:
            out[o] = mid[o] - low
        return z3.And([v2[k] == out[k] for k in v])

    # ---- init and actions
    def init(self, v: V) -> z3.BoolRef:
        c = self.config
        old = [sw.name for sw in self.sws].index(c.initial_software)
        level = c.start_level
        out: list[Any] = [v["loglen"] == 1, v["l0"] == level, v["leader"] == 0,
                          *(z3.Not(v[f"r{t}"]) for t in self.recs)]
        for i in range(self.nv):
            out += [v[f"v{i}.sw"] == old, v[f"v{i}.status"] == RUNNING, v[f"v{i}.off"] == 0]
        for i in range(self.nb):
            out += [v[f"b{i}.sw"] == old, v[f"b{i}.status"] == RUNNING, v[f"b{i}.off"] == 0, v[f"b{i}.reg"] == old,
                    z3.Not(v[f"b{i}.fenced"]), v[f"b{i}.rpc"] == level]
        return z3.And(out)

    def _decide(self, v: V, y: int, dt: str, dry: bool) -> tuple[Any, Any]:
        """The active controller's decision on UpdateFeatures(level=y, downgrade=dt, dry_run=dry): (nothing
        is written, the level written)."""
        c = self.config
        x = self.level(v)
        lsw = z3.IntVal(0)
        for i in range(self.nv):
            lsw = z3.If(v["leader"] == i, v[f"v{i}.sw"], lsw)
        llo, lhi = self.rng(lsw)
        # The voters other than the leader, in order: the k-th is voter k below the leader, k+1 from it on.
        others = [(z3.BoolVal(True), *self.rng(z3.If(v["leader"] <= k, v[f"v{k + 1}.sw"], v[f"v{k}.sw"])))
                  for k in range(self.nv - 1)]
        brokers = [(v[f"b{j}.reg"] >= 0, *self.rng(v[f"b{j}.reg"])) for j in range(self.nb)]
        top, result, written = mv_update_rule(self.cat, c.profile, c.kafka_release, dry, x, z3.IntVal(y),
                                              z3.IntVal(DT[dt]), llo, lhi, others, brokers, self.muts)
        accepted = z3.And(top == 0, z3.Or(result == 0, result == -1))
        return z3.Or(z3.Not(accepted), written == -1, written == x), written

    def _update_req(self, y: int, dt: str, dry: bool) -> Relation:
        """UpdateFeatures(level=y, downgrade=dt, dry_run=dry): one request of the operator."""

        def rel(v: V, v2: V) -> z3.BoolRef:
            noop, written = self._decide(v, y, dt, dry)
            return z3.And(self.has_quorum(v), z3.If(noop, frame(v, v2, {}), z3.And(
                v["loglen"] < self.m, self._commit(v, v2, self.level(v), written))))

        return rel

    def _update(self, v: V, v2: V) -> z3.BoolRef:
        """The disjunction of the requests, with one commit for all: a commit of level w ends the log with w,
        so the level written is the new state's level (one copy of the commit instead of one per request)."""
        decisions = [self._decide(v, *key) for key, _rel in self.update_reqs]
        new = self.level(v2)
        commit = z3.And(v["loglen"] < self.m, z3.Or([z3.And(z3.Not(noop), w == new) for noop, w in decisions]),
                        self._commit(v, v2, self.level(v), new))
        return z3.And(self.has_quorum(v), z3.Or(z3.And(z3.Or([noop for noop, _w in decisions]), frame(v, v2, {})),
                                                 commit))

    def parameter_relations(self) -> list[tuple[str, dict[str, Any], Relation]]:
        names = [sw.name for sw in self.sws]
        out: list[tuple[str, dict[str, Any], Relation]] = [
            ("UpdateFeatures", {"level": y, "downgrade": dt, "dry_run": dry}, rel)
            for (y, dt, dry), rel in self.update_reqs]
        out += [("WriteRecord", {"introduced": t}, rel) for t, rel in self.write_reqs]
        out += [("RestartNode", {"role": role, "node": i, "software": names[k]}, rel)
                for (role, _p, i, k), rel in self.restart_reqs]
        if self.config.crashes:
            out += [("RecoverNode", {"role": role, "node": i}, rel) for (role, _p, i), rel in self.recover_reqs]
        return out

    def _commit(self, v: V, v2: V, x: Any, written: Any) -> z3.BoolRef:
        """A new level committed: the downgrade snapshot drops what it cannot represent, running voters read
        it or terminate (an active one resigns)."""
        in_catalog = z3.And(written >= self.cat.minimum, written <= self.cat.latest)
        lossless = z3.And(in_catalog, mv_lossless(self.cat, x, written))
        drop = z3.And(written < x, z3.Or(z3.Not(lossless), "lossless_drops_records" in self.muts))
        ch: dict[str, Any] = {f"r{t}": z3.And(v[f"r{t}"], z3.Or(z3.Not(drop), t <= written)) for t in self.recs}
        end = v["loglen"]
        ch["loglen"] = end + 1
        for k in range(self.m):
            ch[f"l{k}"] = z3.If(end == k, written, v[f"l{k}"])
        leader: Any = v["leader"]
        for i in range(self.nv):
            run = v[f"v{i}.status"] == RUNNING
            ok = self.supports(v[f"v{i}.sw"], written)
            ch[f"v{i}.off"] = z3.If(z3.And(run, ok), end, v[f"v{i}.off"])
            ch[f"v{i}.status"] = z3.If(z3.And(run, z3.Not(ok)), TERMINATED, v[f"v{i}.status"])
            leader = z3.If(z3.And(run, z3.Not(ok), v["leader"] == i), -1, leader)
        ch["leader"] = leader
        return self.step(v, v2, ch, normalize=True)

    def _write_req(self, t: int) -> Relation:
        """WriteRecord(introduced=t)."""

        def rel(v: V, v2: V) -> z3.BoolRef:
            enabled = z3.BoolVal(True) if "write_record_above_version" in self.muts else t <= self.level(v)
            return z3.And(self.has_quorum(v), z3.Not(v[f"r{t}"]), enabled, frame(v, v2, {f"r{t}": True}))

        return rel

    def _write_record(self, v: V, v2: V) -> z3.BoolRef:
        return z3.Or([rel(v, v2) for _t, rel in self.write_reqs] or [z3.BoolVal(False)])

    def _replicate(self, v: V, v2: V) -> z3.BoolRef:
        opts = []
        for i in range(self.nb):
            sw, off = v[f"b{i}.sw"], v[f"b{i}.off"]
            level = self.at(v, off + 1)
            ok = self.supports(sw, level)
            if "broker_ignores_unsupported" in self.muts:
                ok = z3.BoolVal(True)
            caught_up = off + 1 == v["loglen"] - 1
            read = {f"b{i}.off": off + 1, f"b{i}.rpc": self.rpc_level(sw, level),
                    f"b{i}.fenced": z3.And(v[f"b{i}.fenced"], z3.Not(z3.And(caught_up, v[f"b{i}.reg"] == sw)))}
            terminate = {f"b{i}.status": TERMINATED, f"b{i}.reg": -1, f"b{i}.fenced": True, f"b{i}.rpc": 0}
            opts.append(z3.And(v[f"b{i}.status"] == RUNNING, off < v["loglen"] - 1,
                               z3.If(ok, self.step(v, v2, read, True), self.step(v, v2, terminate, True))))
        return z3.Or(opts or [z3.BoolVal(False)])

    def _register(self, v: V, v2: V) -> z3.BoolRef:
        opts = []
        for i in range(self.nb):
            sw = v[f"b{i}.sw"]
            ok = z3.BoolVal(True) if "register_incompatible" in self.muts else self.supports(sw, self.level(v))
            caught_up = v[f"b{i}.off"] == v["loglen"] - 1
            opts.append(z3.And(v[f"b{i}.status"] == RUNNING, v[f"b{i}.fenced"],
                               z3.If(ok, frame(v, v2, {f"b{i}.reg": sw, f"b{i}.fenced": z3.Not(caught_up)}),
                                     frame(v, v2, {}))))
        return z3.And(self.has_quorum(v), z3.Or(opts or [z3.BoolVal(False)]))

    def _elect(self, v: V, v2: V) -> z3.BoolRef:
        return z3.And(v["leader"] < 0, self.running_voters(v) * 2 > self.nv, z3.Or(
            [z3.And(v[f"v{i}.status"] == RUNNING, frame(v, v2, {"leader": i})) for i in range(self.nv)]))

    def _failover(self, v: V, v2: V) -> z3.BoolRef:
        if not self.config.failover:
            return z3.BoolVal(False)
        return z3.And(v["leader"] >= 0, z3.Or([z3.And(v["leader"] != i, v[f"v{i}.status"] == RUNNING,
                                                      frame(v, v2, {"leader": i})) for i in range(self.nv)]))

    def _start(self, v: V, v2: V, role: str, i: int, sw: Any) -> z3.BoolRef:
        """Stop node i and start it on software ``sw``: it reads its log, or terminates on a version its
        binary cannot read."""
        check = "restart_skips_version_check" not in self.muts
        if role == "voter":
            off = v[f"v{i}.off"]
            readable = z3.And([z3.Implies(z3.And(off <= k, k < v["loglen"]), self.supports(sw, v[f"l{k}"]))
                               for k in range(self.m)])
            if not check:
                readable = z3.BoolVal(True)
            leader = z3.If(v["leader"] == i, -1, v["leader"])
            up = {f"v{i}.sw": sw, f"v{i}.status": RUNNING, f"v{i}.off": v["loglen"] - 1, "leader": leader}
            dead = {f"v{i}.sw": sw, f"v{i}.status": TERMINATED, "leader": leader}
            return z3.If(readable, self.step(v, v2, up, True), self.step(v, v2, dead, True))
        level = self.at(v, v[f"b{i}.off"])
        ok = z3.BoolVal(True) if not check else self.supports(sw, level)
        fenced = v[f"b{i}.fenced"] if "restart_keeps_session" in self.muts else z3.BoolVal(True)
        up = {f"b{i}.sw": sw, f"b{i}.status": RUNNING, f"b{i}.fenced": fenced, f"b{i}.rpc": self.rpc_level(sw, level)}
        dead = {f"b{i}.sw": sw, f"b{i}.status": TERMINATED, f"b{i}.fenced": True, f"b{i}.rpc": 0}
        return z3.If(ok, frame(v, v2, up), frame(v, v2, dead))

    def _nodes(self) -> list[tuple[str, str, int]]:
        return [("voter", "v", i) for i in range(self.nv)] + [("broker", "b", i) for i in range(self.nb)]

    def _restart_req(self, role: str, p: str, i: int, k: int) -> Relation:
        """RestartNode(role, node=i, software=k): onto another software."""

        def rel(v: V, v2: V) -> z3.BoolRef:
            return z3.And(v[f"{p}{i}.sw"] != k, self._start(v, v2, role, i, z3.IntVal(k)))

        return rel

    def _restart_node(self, v: V, v2: V) -> z3.BoolRef:
        """The disjunction of ``restart_reqs``, one copy per node: a start onto software k sets the node's
        software to k, so k is the new state's software."""
        return z3.Or([z3.And(v[f"{p}{i}.sw"] != v2[f"{p}{i}.sw"], self._start(v, v2, role, i, v2[f"{p}{i}.sw"]))
                      for role, p, i in self._nodes()])

    def _crash(self, v: V, v2: V) -> z3.BoolRef:
        if not self.config.crashes:
            return z3.BoolVal(False)
        down = z3.Sum([z3.If(v[f"{p}{i}.status"] != RUNNING, 1, 0) for _, p, i in self._nodes()])
        opts = []
        for role, p, i in self._nodes():
            if role == "voter":
                ch = {f"v{i}.status": DOWN, "leader": z3.If(v["leader"] == i, -1, v["leader"])}
            else:
                ch = {f"b{i}.status": DOWN, f"b{i}.fenced": True, f"b{i}.rpc": 0}
            opts.append(z3.And(v[f"{p}{i}.status"] == RUNNING, frame(v, v2, ch)))
        return z3.And(down < self.config.max_down, z3.Or(opts))

    def _recover_req(self, role: str, p: str, i: int) -> Relation:
        """RecoverNode(role, node=i): a crashed node starts again on its own software."""

        def rel(v: V, v2: V) -> z3.BoolRef:
            return z3.And(v[f"{p}{i}.status"] == DOWN, self._start(v, v2, role, i, v[f"{p}{i}.sw"]))

        return rel

    def _recover(self, v: V, v2: V) -> z3.BoolRef:
        if not self.config.crashes:
            return z3.BoolVal(False)
        return z3.Or([rel(v, v2) for _key, rel in self.recover_reqs])

    # ---- invariants (properties/metadata_version.py)
    def mv01(self, v: V) -> z3.BoolRef:
        return z3.And([z3.Implies(v[f"{p}{i}.status"] == RUNNING, self.supports(v[f"{p}{i}.sw"],
                                                                                self.at(v, v[f"{p}{i}.off"])))
                       for _, p, i in self._nodes()])

    def mv11(self, v: V) -> z3.BoolRef:
        return z3.And([z3.Implies(v[f"b{i}.reg"] >= 0, self.supports(v[f"b{i}.reg"], self.level(v)))
                       for i in range(self.nb)] or [z3.BoolVal(True)])

    def mv16(self, v: V) -> z3.BoolRef:
        """An unfenced broker is running and registered for the binary it runs."""
        return z3.And([z3.Or(v[f"b{i}.fenced"], z3.And(v[f"b{i}.status"] == RUNNING, v[f"b{i}.reg"] == v[f"b{i}.sw"]))
                       for i in range(self.nb)] or [z3.BoolVal(True)])

    def mv13(self, v: V) -> z3.BoolRef:
        """The active controller is a running voter."""
        return z3.Or(v["leader"] < 0, *(z3.And(v["leader"] == i, v[f"v{i}.status"] == RUNNING) for i in range(self.nv)))

    def mv05(self, v: V) -> z3.BoolRef:
        breaking = [t for t in self.recs if t > self.cat.minimum and self.cat.did_metadata_change(t)]
        level = self.level(v)
        return z3.And(*(z3.Implies(v[f"r{t}"], t <= level) for t in breaking),
                      *(z3.Implies(v[f"b{i}.status"] == RUNNING, v[f"b{i}.rpc"] <= self.at(v, v[f"b{i}.off"]))
                        for i in range(self.nb)))

    # ---- step properties (properties/metadata_version.py). An action's parameters come from its
    # sub-relations (``update_reqs``, ``write_reqs``, ``restart_reqs``, ``recover_reqs``); a property fails on
    # a step if some action that makes the step (with its parameters) breaks it, as on the explorer's edges.
    def _changed(self, v: V, v2: V) -> z3.BoolRef:
        """An UpdateFeatures step that changes the committed level."""
        return z3.And(self.actions["UpdateFeatures"](v, v2), self.level(v2) != self.level(v))

    def mv02(self, v: V, v2: V) -> z3.BoolRef:
        """A new level is committed only if a majority of the voters' binaries (any status) and every
        registered broker's support it."""
        new = self.level(v2)
        voters = z3.Sum([z3.If(self.supports(v[f"v{i}.sw"], new), 1, 0) for i in range(self.nv)])
        brokers = [z3.Implies(v[f"b{i}.reg"] >= 0, self.supports(v[f"b{i}.reg"], new)) for i in range(self.nb)]
        return z3.Implies(self._changed(v, v2), z3.And(voters * 2 > self.nv, *brokers))

    def _records_same(self, v: V, v2: V) -> z3.BoolRef:
        return z3.And([v2[f"r{t}"] == v[f"r{t}"] for t in self.recs] or [z3.BoolVal(True)])

    def mv03(self, v: V, v2: V) -> z3.BoolRef:
        """A lossless downgrade (the catalog's rule, over the catalog's pairs of levels) keeps every record."""
        levels = self.cat.levels
        pairs = [z3.And(self.level(v) == x, self.level(v2) == y) for x in levels for y in levels
                 if y < x and self.cat.is_lossless(x, y)]
        lossless = z3.Or(pairs) if pairs else z3.BoolVal(False)
        return z3.Implies(z3.And(self.actions["UpdateFeatures"](v, v2), lossless), self._records_same(v, v2))

    def mv14(self, v: V, v2: V) -> z3.BoolRef:
        """A lossy downgrade (a lower level, not a lossless pair of the catalog) keeps exactly the records
        introduced at or below the new level."""
        levels = self.cat.levels
        lossless = [z3.And(self.level(v) == x, self.level(v2) == y) for x in levels for y in levels
                    if y < x and self.cat.is_lossless(x, y)]
        lossy = z3.And(self.actions["UpdateFeatures"](v, v2), self.level(v2) < self.level(v),
                       z3.Not(z3.Or(lossless)) if lossless else z3.BoolVal(True))
        exact = z3.And([v2[f"r{t}"] == z3.And(v[f"r{t}"], t <= self.level(v2)) for t in self.recs]
                       or [z3.BoolVal(True)])
        return z3.Implies(lossy, exact)

    def mv15(self, v: V, v2: V) -> z3.BoolRef:
        """A step that appends to the metadata log (UpdateFeatures, WriteRecord, RegisterBroker that change the
        state) or elects a leader happens only while a strict majority of the voters runs."""
        commits = z3.Or([self.actions[n](v, v2) for n in ("UpdateFeatures", "WriteRecord", "RegisterBroker",
                                                          "ElectLeader")])
        changed = z3.Or([v2[k] != v[k] for k in v])
        return z3.Implies(z3.And(commits, changed), self.running_voters(v) * 2 > self.nv)

    def mv17(self, v: V, v2: V) -> z3.BoolRef:
        """A broker is unfenced only once it has caught up: a step that unfences it leaves it at the log's end."""
        return z3.And([z3.Implies(z3.And(v[f"b{i}.fenced"], z3.Not(v2[f"b{i}.fenced"])),
                                  v2[f"b{i}.off"] == v2["loglen"] - 1) for i in range(self.nb)] or [z3.BoolVal(True)])

    def mv04(self, v: V, v2: V) -> z3.BoolRef:
        """Records are lost only by an UNSAFE UpdateFeatures: every other action (and request) that makes the
        step keeps them."""
        others = [rel(v, v2) for name, rel in self.actions.items() if name != "UpdateFeatures"]
        others += [rel(v, v2) for (_y, dt, _dry), rel in self.update_reqs if dt != "UNSAFE"]
        kept = z3.And([z3.Implies(v[f"r{t}"], v2[f"r{t}"]) for t in self.recs] or [z3.BoolVal(True)])
        return z3.Implies(z3.Or(others), kept)

    def mv06(self, v: V, v2: V) -> z3.BoolRef:
        """A dry run changes nothing at all."""
        same = z3.And([v2[k] == v[k] for k in v])
        return z3.And([z3.Implies(rel(v, v2), same) for (_y, _dt, dry), rel in self.update_reqs if dry]
                      or [z3.BoolVal(True)])

    def _readable(self, v: V, p: str, i: int, sw: Any) -> Any:
        """Software ``sw`` reads what node i has on disk: a voter its log from its offset on, a broker the
        entry at its offset."""
        off = v[f"{p}{i}.off"]
        if p == "v":
            return z3.And([z3.Implies(z3.And(off <= k, k < v["loglen"]), self.supports(sw, v[f"l{k}"]))
                           for k in range(self.m)])
        return self.supports(sw, self.at(v, off))

    def mv07(self, v: V, v2: V) -> z3.BoolRef:
        """A node restarted (onto a software) or recovered (on its own) that cannot read its log terminates."""
        out = []
        for (_role, p, i, k), rel in self.restart_reqs:
            out.append(z3.Implies(rel(v, v2), z3.Or(self._readable(v, p, i, z3.IntVal(k)),
                                                    v2[f"{p}{i}.status"] == TERMINATED)))
        if self.config.crashes:
            for (_role, p, i), rel in self.recover_reqs:
                out.append(z3.Implies(rel(v, v2), z3.Or(self._readable(v, p, i, v[f"{p}{i}.sw"]),
                                                        v2[f"{p}{i}.status"] == TERMINATED)))
        return z3.And(out)

    def mv08(self, v: V, v2: V) -> z3.BoolRef:
        """A changed level is never below the floor (the catalog's minimum; Kafka: MINIMUM_BOOTSTRAP_VERSION)."""
        floor = self.cat.bootstrap_floor if self.config.profile == "kafka" else self.cat.minimum
        return z3.Implies(self._changed(v, v2), self.level(v2) >= floor)

    def mv09(self, v: V, v2: V) -> z3.BoolRef:
        """A change of level is an increase exactly when the request's DowngradeType is NONE."""
        out = []
        for (_y, dt, _dry), rel in self.update_reqs:
            up = self.level(v2) > self.level(v)
            out.append(z3.Implies(z3.And(rel(v, v2), self.level(v2) != self.level(v)),
                                  up if dt == "NONE" else z3.Not(up)))
        return z3.And(out)

    def mv10(self, v: V, v2: V) -> z3.BoolRef:
        """WriteRecord(introduced=t) only once the committed level is at least t."""
        return z3.And([z3.Implies(rel(v, v2), t <= self.level(v)) for t, rel in self.write_reqs]
                      or [z3.BoolVal(True)])
