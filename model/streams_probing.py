"""KIP-268 (Kafka Streams version probing) as a Z3 transition relation.

An independent restatement of ``reference_impl/streams_probing/system.py`` and of the assignor rules it
calls (``assign`` / ``on_assignment`` in ``api.py``): the leader's choice of the used version (the minimum
received, or its own under ``assign_at_leader_version``), the supported version it encodes (its own in
``kip`` and for pre-2.0 leaders, the group's minimum in ``kafka``; under ``kafka-2.0`` a 2.0 leader's own, a
post-2.0 leader's the minimum over the members it understands, the 2.1 branch's), the empty "probing reply" to
a future member, the error assignment, the follow-up rebalance (none under ``kafka-2.0``), and each member's
probe-down / adopt / fail (under ``kafka-2.0`` by its own release's rules).

Per instance the state holds: ``new`` (running the config's ``to_release`` rather than ``from_release``:
no other release ever appears), ``uf`` (``upgrade.from`` set to the config's value), the used version,
running, bounces, the inbox as (present, version, supported, error, probing_reply), the last processed
version and the failure as (kind, a, b): the kind of exception and the numbers its message quotes, so
the reference's failure text is rebuilt exactly (``FAILURES``).

Encoded: every action (RollingBounce, Rebalance, OnAssignment, ProbeDowngrade, AdoptSupportedVersion,
LeaderFollowUpRebalance, AssignmentFailure, ErrorShutdown, Crash, Restart; RollingBounce under every procedure,
"operator" included: any instance, upgrade.from removed or set, up to its cap) and every mutation of
``api.MUTATIONS``. Invariants: STR-05 ... STR-10. Step properties: STR-01 ... STR-04, all of
them; the parameters they read come from sub-relations (``parameter_relations``): Rebalance per leader,
each member step per instance. Not encoded: the graph property STR-L1 (liveness: the explorers only).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import z3

from reference_impl.streams_probing.config import MUTATIONS
from reference_impl.streams_probing.releases import KAFKA, KAFKA_20, StreamsRelease
from reference_impl.streams_probing.state import (
    Delivered,
    StreamsGroupState,
    StreamsInstance,
)
from rollcheck.core.transition import TransitionSystem
from rollcheck.smt.core import Relation, SymbolicSystem, V, Value, frame
from specs.streams_probing import OPERATOR_BOUNCES, first_upgrade_from, two_bounces

PROBEABLE = 3  # EARLIEST_PROBEABLE_VERSION: subscriptions from version 3 on carry the supported version
UNKNOWN = -1
ASSIGNMENT_ERROR = 3
# Rebalances since the last join are counted up to this: the model's own copy, as the spec has its own
# (specs/StreamsProbing.tla), so a reference that counts to another cap differs from both.
REBALANCE_CAP = 3
# The member steps STR-04 constrains (properties/streams_probing.py MEMBER_STEPS), and the other two.
MEMBER_STEPS = ("OnAssignment", "ProbeDowngrade", "AdoptSupportedVersion", "LeaderFollowUpRebalance")
OTHER_STEPS = ("AssignmentFailure", "ErrorShutdown")
ERROR_NAMES = {1: "INCOMPLETE_SOURCE_TOPIC_METADATA", 2: "VERSION_PROBING", 3: "ASSIGNMENT_ERROR",
               4: "SHUTDOWN_REQUESTED"}
# upgrade.from -> the subscription version it forces (KIP-268 "Upgrading to 2.0"; KAFKA-6054 for "0.10.0").
FORCED_VERSION = {"0.10.0": 1, "0.10.1": 2, "0.10.2": 2, "0.11.0": 2, "1.0": 2, "1.1": 2}

# Failure kinds: the failure text of the reference, with {a} / {b} the numbers it quotes.
FAILURES: dict[int, str] = {
    1: "subscription: version must be between 1 and {b}; was: {a}",
    2: "leader: unable to decode subscription data: version={a}",
    3: "leader: Received a future subscription (version: {a})",
    4: "leader: Received a future (version probing) subscription (version: {a}) and an incompatible pre Kafka "
       "2.0 subscription (version: {b}) at the same time.",
    5: "member: Unable to decode assignment data: used version: {a}; latest supported version: {b}",
    6: "member: Sent a version {a} subscription but got an assignment with higher version {b}.",
    7: "member: Can't upgrade to metadata version greater than we support",
    8: "shutdown: {a}",
    # kafka: an error code no AssignorError names (StreamsRebalanceListener.onPartitionsAssigned logs "Received
    # unknown error code" and throws TaskAssignmentException); no leader of the model sends one.
    9: "member: Hit an unrecognized exception during rebalance",
}

# The class a member's failure is thrown as where the releases differ (kind 6); every other member failure is a
# TaskAssignmentException. The system keeps the text only; the streams_on_assignment rule compares the class.
TASK_ASSIGNMENT_EXCEPTION, ILLEGAL_STATE_EXCEPTION = "TaskAssignmentException", "IllegalStateException"


def _pattern(fmt: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[ab]\})", fmt)
    return re.compile("".join(f"(?P<{p[1]}>-?\\d+|[A-Z_]+)" if p in ("{a}", "{b}") else re.escape(p)
                              for p in parts) + "$")


_PATTERNS = {k: _pattern(f) for k, f in FAILURES.items()}


def failure_text(kind: int, a: int, b: int) -> str:
    if kind == 0:
        return ""
    if kind == 8:
        return FAILURES[8].format(a=ERROR_NAMES.get(a, str(a)))
    return FAILURES[kind].format(a=a, b=b)


def parse_failure(text: str) -> tuple[int, int, int]:
    if not text:
        return 0, 0, 0
    for kind, pat in _PATTERNS.items():
        m = pat.match(text)
        if m:
            g = m.groupdict()
            if kind == 8:
                code = {n: c for c, n in ERROR_NAMES.items()}[g["a"]]
                return kind, code, 0
            return kind, int(g.get("a") or 0), int(g.get("b") or 0)
    raise ValueError(f"unknown failure text: {text!r}")


def _min(xs: list[tuple[z3.BoolRef, z3.ArithRef]], start: z3.ArithRef | int) -> z3.ArithRef:
    """min(start, x for (present, x) in xs) over a symbolic subset."""
    acc: Any = z3.IntVal(start) if isinstance(start, int) else start
    for present, x in xs:
        acc = z3.If(z3.And(present, x < acc), x, acc)
    return acc


def _max(xs: list[tuple[z3.BoolRef, z3.ArithRef]], start: z3.ArithRef | int) -> z3.ArithRef:
    acc: Any = z3.IntVal(start) if isinstance(start, int) else start
    for present, x in xs:
        acc = z3.If(z3.And(present, x > acc), x, acc)
    return acc


class StreamsProbingZ3(SymbolicSystem):
    name = "streams_probing"

    def __init__(self, ts: TransitionSystem[Any]) -> None:
        super().__init__(ts)
        cfg = self.config
        self.n: int = cfg.instances
        self.old: StreamsRelease = cfg.old
        self.new: StreamsRelease = cfg.new
        self.profile: str = cfg.profile
        self.muts: frozenset[str] = frozenset(cfg.mutations)
        unknown = self.muts - MUTATIONS
        if unknown:
            raise ValueError(f"mutations not encoded: {sorted(unknown)}")
        # Procedure "operator": the operator chooses each bounce (any instance below max_bounces, upgrade.from
        # removed or set to the config's value); otherwise the rounds of the procedure, in order. Read as the
        # spec reads the procedure (specs/streams_probing.py), not from the reference config's properties: an
        # edit to those (a third round, a bound) is then a disagreement on every state of the story configs.
        self.operator: bool = cfg.procedure == "operator"
        self.rounds: int = 0 if self.operator else (2 if two_bounces(cfg) else 1)
        self.max_bounces: int = OPERATOR_BOUNCES if self.operator else self.rounds
        self.upgrade_from: str | None = first_upgrade_from(cfg)
        self.max_crashes: int = cfg.max_crashes
        self.releases = [(False, self.old)] + ([(True, self.new)] if self.new.name != self.old.name else [])
        self.actions = {
            "RollingBounce": self._bounce, "Rebalance": self._rebalance, "Crash": self._crash,
            "Restart": self._restart,
            **{name: self._member_step(name) for name in (
                "OnAssignment", "ProbeDowngrade", "AdoptSupportedVersion", "LeaderFollowUpRebalance",
                "AssignmentFailure", "ErrorShutdown")},
        }
        self.invariants = {"STR-05": self.str05, "STR-06": self.str06, "STR-07": self.str07, "STR-08": self.str08,
                           "STR-09": self.str09, "STR-10": self.str10}
        self.step_properties = {"STR-01": self.str01, "STR-02": self.str02, "STR-03": self.str03,
                                "STR-04": self.str04}
        # Under kip and kafka STR-05 alone is inductive once versions stay in their domains (wellformed): the
        # member caps what it adopts. Under kafka-2.0 a 2.0 member adopts the leader's supported version
        # uncapped (Kafka 2.0's onAssignment): STR-05 then rests on the leaders, whose assignment never carries
        # a supported version above the receiving member's own (the 2.1 branch's KAFKA-8649 fix).
        self.strengthening = ({"inbox-supported-within-own": self.inbox_supported_within_own}
                              if self.profile == KAFKA_20 else {})

    # ---- state layout
    INST = (("new", "bool"), ("uf", "bool"), ("used", "int"), ("running", "bool"), ("bounces", "int"),
            ("has", "bool"), ("iv", "int"), ("isup", "int"), ("ierr", "int"), ("ipr", "bool"), ("last", "int"),
            ("fk", "int"), ("fa", "int"), ("fb", "int"))

    def fields(self) -> list[tuple[str, str]]:
        out = [(f"x{i}.{f}", s) for i in range(self.n) for f, s in self.INST]
        return [*out, ("pending", "bool"), ("follow", "int"), ("rebs", "int"), ("leader", "int"), ("crashes", "int")]

    @staticmethod
    def x(v: V, i: int, f: str) -> Any:
        return v[f"x{i}.{f}"]

    def lat(self, v: V, i: int) -> z3.ArithRef:
        return z3.If(self.x(v, i, "new"), self.new.latest_supported, self.old.latest_supported)

    def member(self, v: V, i: int) -> z3.BoolRef:
        return z3.And(self.x(v, i, "running"), self.x(v, i, "fk") == 0)

    def wellformed(self, v: V) -> z3.BoolRef:
        top = max(self.old.latest_supported, self.new.latest_supported)
        c: list[Any] = []
        for i in range(self.n):
            def f(name: str, i: int = i) -> Any:
                return self.x(v, i, name)
            c += [f("used") >= 1, f("used") <= top, f("bounces") >= 0, f("bounces") <= self.max_bounces,
                  f("last") >= 0, f("last") <= top, f("fk") >= 0, f("fk") <= 8,
                  z3.Implies(z3.Not(f("has")), z3.And(f("iv") == 0, f("isup") == 0, f("ierr") == 0,
                                                      z3.Not(f("ipr")))),
                  z3.Implies(f("has"), z3.And(f("iv") >= 1, f("iv") <= top, f("isup") >= UNKNOWN,
                                              f("isup") <= top, f("ierr") >= 0, f("ierr") <= 4)),
                  z3.Implies(f("fk") == 0, z3.And(f("fa") == 0, f("fb") == 0)),
                  z3.Implies(f("fk") != 0, z3.Not(f("running"))),
                  z3.Implies(f("uf"), f("new"))]
            if self.upgrade_from is None:
                c.append(z3.Not(f("uf")))
        c += [v["follow"] >= -1, v["follow"] < self.n, v["leader"] >= -1, v["leader"] < self.n,
              v["rebs"] >= 0, v["rebs"] <= REBALANCE_CAP, v["crashes"] >= 0, v["crashes"] <= self.max_crashes]
        return z3.And(c)

    # ---- reference <-> values
    def values(self, s: StreamsGroupState) -> dict[str, Value]:
        out: dict[str, Value] = {}
        for i, x in enumerate(s.instances):
            d = x.inbox
            fk, fa, fb = parse_failure(x.failure)
            row: dict[str, Value] = {
                "new": x.release == self.new.name and self.new.name != self.old.name,
                "uf": x.upgrade_from is not None, "used": x.used_version, "running": x.running,
                "bounces": x.bounces, "has": d is not None, "iv": d.version if d else 0,
                "isup": d.supported if d else 0, "ierr": d.error if d else 0, "ipr": d.probing_reply if d else False,
                "last": x.last_version, "fk": fk, "fa": fa, "fb": fb}
            if x.upgrade_from is not None and x.upgrade_from != self.upgrade_from:
                raise ValueError(f"upgrade.from {x.upgrade_from!r} is not the config's {self.upgrade_from!r}")
            out.update({f"x{i}.{k}": val for k, val in row.items()})
        out.update(pending=s.rebalance_pending, follow=s.follow_up, rebs=s.rebalances, leader=s.leader,
                   crashes=s.crashes)
        return out

    def from_values(self, vals: Mapping[str, Value]) -> StreamsGroupState:
        insts = []
        for i in range(self.n):
            def g(f: str, i: int = i) -> Any:
                return vals[f"x{i}.{f}"]
            inbox = Delivered(int(g("iv")), int(g("isup")), int(g("ierr")), bool(g("ipr"))) if g("has") else None
            insts.append(StreamsInstance(
                self.new.name if g("new") else self.old.name, self.upgrade_from if g("uf") else None, int(g("used")),
                bool(g("running")), int(g("bounces")), inbox, int(g("last")),
                failure_text(int(g("fk")), int(g("fa")), int(g("fb")))))
        return StreamsGroupState(tuple(insts), bool(vals["pending"]), int(vals["follow"]), int(vals["rebs"]),
                                 int(vals["leader"]), int(vals["crashes"]))

    # ---- helpers
    def configured(self, rel: StreamsRelease, uf: bool, restart: bool = False) -> int:
        """usedSubscriptionMetadataVersion at start-up (StreamsPartitionAssignor.configure)."""
        value = self.upgrade_from if uf else None
        if "no_kafka_6054_backport" in self.muts and rel.latest_supported < PROBEABLE:
            value = None
        if restart and "restart_ignores_upgrade_from" in self.muts:
            value = None
        if value is None:
            return rel.latest_supported
        return min(FORCED_VERSION[value], rel.latest_supported)

    def _no_inbox(self, i: int) -> dict[str, Any]:
        return {f"x{i}.has": False, f"x{i}.iv": 0, f"x{i}.isup": 0, f"x{i}.ierr": 0, f"x{i}.ipr": False}

    def _fail(self, i: int, kind: int, a: Any = 0, b: Any = 0) -> dict[str, Any]:
        return {f"x{i}.running": False, f"x{i}.fk": kind, f"x{i}.fa": a, f"x{i}.fb": b}

    def stable(self, v: V) -> z3.BoolRef:
        return z3.And(z3.Not(v["pending"]), v["follow"] < 0,
                      *(z3.And(self.x(v, i, "running"), z3.Not(self.x(v, i, "has")), self.x(v, i, "fk") == 0)
                        for i in range(self.n)))

    # ---- init and actions
    def init(self, v: V) -> z3.BoolRef:
        c: list[Any] = []
        for i in range(self.n):
            c += [z3.Not(self.x(v, i, "new")), z3.Not(self.x(v, i, "uf")),
                  self.x(v, i, "used") == self.old.latest_supported, self.x(v, i, "running"),
                  self.x(v, i, "bounces") == 0, z3.Not(self.x(v, i, "has")), self.x(v, i, "last") == 0,
                  self.x(v, i, "fk") == 0]
        return z3.And(*c, v["pending"], v["follow"] == -1, v["rebs"] == 0, v["leader"] == -1, v["crashes"] == 0)

    def _bounce(self, v: V, v2: V) -> z3.BoolRef:
        """The operator bounces one instance onto the new release once the group is stable, round by round
        (upgrade.from set in every round but the last); under "operator" any instance, either way."""
        if self.operator:
            return z3.And(self.stable(v), self._operator_bounce(v, v2))
        opts = []
        for i in range(self.n):
            b = self.x(v, i, "bounces")
            last_round = b + 1 == self.rounds
            has_uf = self.upgrade_from is not None
            used = z3.If(last_round, self.configured(self.new, False), self.configured(self.new, has_uf))
            ch = {f"x{i}.new": self.new.name != self.old.name, f"x{i}.uf": z3.And(z3.Not(last_round), has_uf),
                  f"x{i}.used": used, f"x{i}.running": True, f"x{i}.bounces": b + 1, **self._no_inbox(i),
                  f"x{i}.fk": 0, f"x{i}.fa": 0, f"x{i}.fb": 0, "pending": True, "rebs": 0}
            opts.append(z3.And(b < self.rounds, *(self.x(v, j, "bounces") >= b for j in range(self.n)),
                               frame(v, v2, ch)))
        return z3.And(self.stable(v), z3.Or(opts))

    def _operator_bounce(self, v: V, v2: V) -> z3.BoolRef:
        opts = []
        for i in range(self.n):
            b = self.x(v, i, "bounces")
            for uf in (False, True) if self.upgrade_from is not None else (False,):
                ch = {f"x{i}.new": self.new.name != self.old.name, f"x{i}.uf": uf,
                      f"x{i}.used": self.configured(self.new, uf), f"x{i}.running": True, f"x{i}.bounces": b + 1,
                      **self._no_inbox(i), f"x{i}.fk": 0, f"x{i}.fa": 0, f"x{i}.fb": 0, "pending": True, "rebs": 0}
                opts.append(z3.And(b < self.max_bounces, frame(v, v2, ch)))
        return z3.Or(opts)

    def _crash(self, v: V, v2: V) -> z3.BoolRef:
        opts = []
        for i in range(self.n):
            others = z3.Or([self.member(v, j) for j in range(self.n) if j != i] or [z3.BoolVal(False)])
            ch = {f"x{i}.running": False, **self._no_inbox(i), "pending": z3.Or(others, v["pending"]),
                  "follow": z3.If(v["follow"] == i, -1, v["follow"]), "rebs": 0, "crashes": v["crashes"] + 1}
            opts.append(z3.And(self.member(v, i), frame(v, v2, ch)))
        return z3.And(v["crashes"] < self.max_crashes, z3.Or(opts))

    def _restart(self, v: V, v2: V) -> z3.BoolRef:
        opts = []
        for i in range(self.n):
            for is_new, rel in self.releases:
                for uf in (False, True):
                    ch = {f"x{i}.running": True, f"x{i}.used": self.configured(rel, uf, restart=True),
                          **self._no_inbox(i), "pending": True, "rebs": 0}
                    opts.append(z3.And(z3.Not(self.x(v, i, "running")), self.x(v, i, "fk") == 0,
                                       self.x(v, i, "new") == is_new, self.x(v, i, "uf") == uf, frame(v, v2, ch)))
        return z3.Or(opts)

    def _rebalance_by(self, leader: int) -> Relation:
        """Rebalance(leader=leader)."""

        def rel_(v: V, v2: V) -> z3.BoolRef:
            n = self.n
            mem = [self.member(v, i) for i in range(n)]
            used = [self.x(v, i, "used") for i in range(n)]
            lat = [self.lat(v, i) for i in range(n)]
            # A member that cannot build its subscription (used version above its latest) fails first.
            bad = [z3.And(mem[i], used[i] > lat[i]) for i in range(n)]
            sub_fail = [z3.And(bad[i], *(z3.Not(bad[j]) for j in range(i)),
                               frame(v, v2, {**self._fail(i, 1, used[i], lat[i]), "rebs": 0})) for i in range(n)]
            ok_subs = z3.And([z3.Not(b) for b in bad])
            sup = [z3.If(used[i] >= PROBEABLE, lat[i], UNKNOWN) for i in range(n)]
            base = z3.And(v["pending"], v["follow"] < 0, mem[leader], *(z3.Not(self.x(v, j, "has")) for j in range(n)))
            opts = [z3.And(self.x(v, leader, "new") == is_new, ok_subs,
                           self._assign(v, v2, leader, rel, mem, used, sup)) for is_new, rel in self.releases]
            return z3.And(base, z3.Or(*opts, *sub_fail))

        return rel_

    def _rebalance(self, v: V, v2: V) -> z3.BoolRef:
        return z3.Or([self._rebalance_by(j)(v, v2) for j in range(self.n)])

    def _assign(self, v: V, v2: V, leader: int, rel: StreamsRelease, mem: list[Any], used: list[Any],
                sup: list[Any]) -> z3.BoolRef:
        """The leader's assign() (release ``rel``) and the delivery of its result."""
        n = self.n

        def leader_fails(kind: int, a: Any, b: Any = 0) -> z3.BoolRef:
            return frame(v, v2, {**self._fail(leader, kind, a, b), "pending": True, "rebs": 0, "leader": leader})

        def deliver(inbox: list[tuple[Any, Any, Any, Any]], follow: Any) -> z3.BoolRef:
            ch: dict[str, Any] = {"pending": False, "follow": follow, "leader": leader,
                                  "rebs": z3.If(v["rebs"] + 1 < REBALANCE_CAP, v["rebs"] + 1, REBALANCE_CAP)}
            c = []
            for i in range(n):
                ver, supported, err, pr = inbox[i]
                c.append(z3.If(mem[i], z3.And(self.x(v2, i, "has"), self.x(v2, i, "iv") == ver,
                                              self.x(v2, i, "isup") == supported, self.x(v2, i, "ierr") == err,
                                              self.x(v2, i, "ipr") == pr),
                               z3.And([self.x(v2, i, f) == self.x(v, i, f) for f in ("has", "iv", "isup", "ierr",
                                                                                     "ipr")])))
            inbox_fields = {f"x{i}.{f}" for i in range(n) for f in ("has", "iv", "isup", "ierr", "ipr")}
            rest = z3.And([v2[k] == ch.get(k, v[k]) for k in v if k not in inbox_fields])
            return z3.And(rest, *c)

        def reply(_used: Any, inbox: list[tuple[Any, Any, Any, Any]], follow: Any) -> z3.BoolRef:
            return deliver(inbox, z3.If(follow, leader, -1))

        return _first_match(assign_outcomes(self.profile, self.muts, rel, mem, used, sup, leader_fails, reply))

    def _member_step_of(self, action: str, i: int) -> Relation:
        """A member step of instance ``i`` (its parameter ``instance``)."""

        def rel_(v: V, v2: V) -> z3.BoolRef:
            opts = []
            for is_new, rel in self.releases:
                for name, cond, eff in self._on_assignment(v, v2, i, rel):
                    if name == action:
                        opts.append(z3.And(self.x(v, i, "has"), self.x(v, i, "new") == is_new, cond, eff))
            return z3.Or(opts) if opts else z3.BoolVal(False)

        return rel_

    def _member_step(self, action: str) -> Any:
        def rel_(v: V, v2: V) -> z3.BoolRef:
            return z3.Or([self._member_step_of(action, i)(v, v2) for i in range(self.n)])
        return rel_

    def _on_assignment(self, v: V, v2: V, i: int, rel: StreamsRelease) -> list[tuple[str, Any, Any]]:
        """A member's onAssignment: (action name, exclusive condition, effect) for each outcome."""
        received, supported, err = self.x(v, i, "iv"), self.x(v, i, "isup"), self.x(v, i, "ierr")
        used = self.x(v, i, "used")
        trigger = v["follow"] == i
        follow = z3.If(trigger, -1, v["follow"])

        def fail(kind: int, a: Any = 0, b: Any = 0, thrown: str = "") -> z3.BoolRef:
            # The state keeps the failure's text, not the class thrown (the member's thread dies either way).
            return frame(v, v2, {**self._fail(i, kind, a, b), **self._no_inbox(i), "follow": follow, "rebs": 0,
                                 "pending": True})

        def done(new_used: Any, rebalance: bool) -> z3.BoolRef:
            return frame(v, v2, {f"x{i}.used": new_used, **self._no_inbox(i), f"x{i}.last": received,
                                 "pending": z3.Or(v["pending"], rebalance, trigger), "follow": follow})

        none = [("LeaderFollowUpRebalance", trigger, done(used, False)),
                ("OnAssignment", z3.Not(trigger), done(used, False))]
        raw = on_assignment_outcomes(self.profile, self.muts, rel, received, supported, err, used, none, trigger,
                                     fail, done)
        out = []
        earlier: list[Any] = []
        for cond, outcomes in raw:
            guard = z3.And(*(z3.Not(e) for e in earlier), cond)
            for name, sub, eff in outcomes:
                out.append((name, z3.And(guard, sub), eff))
            earlier.append(cond)
        return out

    # ---- invariants (properties/streams_probing.py)
    def inbox_supported_within_own(self, v: V) -> z3.BoolRef:
        """Strengthening (kafka-2.0): an assignment waiting in a member's inbox carries a supported version no
        higher than the member's own latest."""
        return z3.And([z3.Implies(self.x(v, i, "has"), self.x(v, i, "isup") <= self.lat(v, i)) for i in range(self.n)])

    def str05(self, v: V) -> z3.BoolRef:
        return z3.And([self.x(v, i, "used") <= self.lat(v, i) for i in range(self.n)])

    def str06(self, v: V) -> z3.BoolRef:
        return z3.And([self.x(v, i, "fk") == 0 for i in range(self.n)])

    def str09(self, v: V) -> z3.BoolRef:
        return z3.And([z3.Implies(self.x(v, i, "fk") != 0, z3.And(z3.Not(self.x(v, i, "running")),
                                                                   z3.Not(self.x(v, i, "has"))))
                       for i in range(self.n)])

    def str10(self, v: V) -> z3.BoolRef:
        """No instance past the procedure's bounces; without the operator, bounce counts at most one apart."""
        b = [self.x(v, i, "bounces") for i in range(self.n)]
        capped = z3.And([x <= self.max_bounces for x in b])
        if self.operator:
            return capped
        return z3.And(capped, *(b[i] - b[j] <= 1 for i in range(self.n) for j in range(self.n) if i != j))

    def _converged(self, v: V) -> z3.BoolRef:
        target = _min([(z3.BoolVal(True), self.lat(v, i)) for i in range(self.n)], self.lat(v, 0))
        return z3.And([z3.And(self.x(v, i, "used") == target, self.x(v, i, "last") == target) for i in range(self.n)])

    def _bounces_done(self, v: V) -> z3.BoolRef:
        if self.operator:  # the operator's intent is complete: every instance new, upgrade.from removed
            on_new = [self.x(v, i, "new") if self.new.name != self.old.name else z3.BoolVal(True)
                      for i in range(self.n)]
            return z3.And([z3.And(on_new[i], z3.Not(self.x(v, i, "uf"))) for i in range(self.n)])
        return z3.And([self.x(v, i, "bounces") >= self.rounds for i in range(self.n)])

    def str07(self, v: V) -> z3.BoolRef:
        return z3.Implies(z3.And(self._bounces_done(v), self.stable(v)), self._converged(v))

    def str08(self, v: V) -> z3.BoolRef:
        settled = z3.And(self._bounces_done(v), v["rebs"] >= 2, v["follow"] < 0,
                         *(z3.And(self.x(v, i, "fk") == 0, self.x(v, i, "running"), z3.Not(self.x(v, i, "has")))
                           for i in range(self.n)))
        return z3.Implies(settled, self._converged(v))

    # ---- step properties (properties/streams_probing.py). The leader of a Rebalance and the instance of a
    # member step are their parameters: one sub-relation each (``_rebalance_by``, ``_member_step_of``).
    def state_predicates(self) -> list[tuple[str, Any, Any]]:
        """The terms STR-07 / STR-08 and the operator's bounces read, against the reference's own."""
        ts = self.ts
        return [("stable", self.stable, ts.stable), ("bounces_done", self._bounces_done, ts.bounces_done),
                ("converged", self._converged, ts.converged)]

    def parameter_relations(self) -> list[tuple[str, dict[str, Any], Relation]]:
        out: list[tuple[str, dict[str, Any], Relation]] = [
            ("Rebalance", {"leader": j}, self._rebalance_by(j)) for j in range(self.n)]
        out += [(name, {"instance": i}, self._member_step_of(name, i)) for name in (*MEMBER_STEPS, *OTHER_STEPS)
                for i in range(self.n)]
        return out

    def _probing_leader(self, v: V, j: int) -> tuple[Any, list[Any], list[Any]]:
        """The leader j's latest version, and per instance: it is a member, its used version."""
        return self.lat(v, j), [self.member(v, i) for i in range(self.n)], [self.x(v, i, "used") for i in range(self.n)]

    def str01(self, v: V, v2: V) -> z3.BoolRef:
        """A probing leader (2.0+) that receives a future subscription, every other one at version 3 or more,
        does not fail."""
        out = []
        for j in range(self.n):
            lat, mem, used = self._probing_leader(v, j)
            future = z3.Or([z3.And(mem[i], used[i] > lat) for i in range(self.n)])
            old = z3.Or([z3.And(mem[i], used[i] <= lat, used[i] < PROBEABLE) for i in range(self.n)])
            must_survive = z3.And(lat >= PROBEABLE, future, z3.Not(old))
            out.append(z3.Implies(z3.And(self._rebalance_by(j)(v, v2), must_survive), self.x(v2, j, "fk") == 0))
        return z3.And(out)

    def str02(self, v: V, v2: V) -> z3.BoolRef:
        """After a Rebalance every instance can decode the assignment in its inbox (1 .. its latest version)."""
        ok = z3.And([z3.Implies(self.x(v2, i, "has"), z3.And(self.x(v2, i, "iv") >= 1,
                                                             self.x(v2, i, "iv") <= self.lat(v2, i)))
                     for i in range(self.n)])
        return z3.Implies(self.actions["Rebalance"](v, v2), ok)

    def str03(self, v: V, v2: V) -> z3.BoolRef:
        """A Rebalance that assigns (no rebalance pending after it) assigns at the oldest version the leader
        understands, to every member but those with an error or a probing reply."""
        out = []
        for j in range(self.n):
            lat, mem, used = self._probing_leader(v, j)
            understood = [(z3.And(mem[i], used[i] <= lat), used[i]) for i in range(self.n)]
            oldest = _min(understood, lat)
            at_oldest = z3.And([z3.Implies(z3.And(self.x(v2, i, "has"), self.x(v2, i, "ierr") == 0,
                                                  z3.Not(self.x(v2, i, "ipr"))), self.x(v2, i, "iv") == oldest)
                                for i in range(self.n)])
            assigned = z3.And(self._rebalance_by(j)(v, v2), z3.Not(v2["pending"]), z3.Or([u for u, _ in understood]))
            out.append(z3.Implies(assigned, at_oldest))
        return z3.And(out)

    def str04(self, v: V, v2: V) -> z3.BoolRef:
        """A member that processes an assignment below its used version, with a known supported version,
        ends at most at that supported version."""
        out = []
        for i in range(self.n):
            probe = z3.And(self.x(v, i, "has"), self.x(v, i, "isup") != UNKNOWN,
                           self.x(v, i, "iv") < self.x(v, i, "used"))
            steps = z3.Or([self._member_step_of(name, i)(v, v2) for name in MEMBER_STEPS])
            out.append(z3.Implies(z3.And(steps, probe), self.x(v2, i, "used") <= self.x(v, i, "isup")))
        return z3.And(out)


def assign_outcomes(profile: str, muts: frozenset[str], rel: StreamsRelease, mem: list[Any], used: list[Any],
                    sup: list[Any], fail: Any, reply: Any) -> list[tuple[Any, Any]]:
    """The leader's assign() (``api.assign``, leader release ``rel``) over the members ``mem`` (sending version
    ``used[i]`` with supported version ``sup[i]``) as an if / elif chain of (condition, effect), the first
    condition that holds decides. ``fail(kind, a, b)`` builds a leader failure (kinds of ``FAILURES``) and
    ``reply(used, inbox, follow)`` a delivered assignment: the version used, each member's (version, supported
    version, error code, version-probing flag), and whether the leader triggers a follow-up rebalance. The
    transition relation (``_assign``) and the ``streams_assign`` decision rule (model/decisions/streams.py) read
    these same rules."""
    n, L, kip = len(mem), rel.latest_supported, profile == "kip"
    probing = L >= PROBEABLE
    own = profile == KAFKA_20 and probing  # kafka-2.0: the leader's own branch
    future = [z3.And(mem[i], used[i] > L) for i in range(n)]
    any_future = z3.Or(future) if future else z3.BoolVal(False)
    first_future = [z3.And(future[i], *(z3.Not(future[j]) for j in range(i))) for i in range(n)]
    cases: list[tuple[Any, Any]] = []
    if not probing:
        # A pre-2.0 SubscriptionInfo.decode throws on a version it does not know.
        cases += [(first_future[i], fail(2, used[i])) for i in range(n)]
    min_received = _min(list(zip(mem, used, strict=True)), L)
    # A 2.0 leader (L = 3) has no commonly supported version to get wrong (reference_impl assign()).
    pick = _max if "commonly_supported_is_max" in muts and L >= 4 else _min
    min_supported = pick(list(zip(mem, sup, strict=True)), L)
    if "leader_fails_on_future" in muts:
        cases += [(first_future[i], fail(3, used[i])) for i in range(n)]
    incompatible = z3.And(any_future, min_received < PROBEABLE)
    if profile == "kafka" and L >= 4:
        cases.append((incompatible, reply(L, [(L, L, ASSIGNMENT_ERROR, False)] * n, False)))
    else:
        max_future = _max(list(zip(future, used, strict=True)), 0)
        cases.append((incompatible, fail(4, max_future, min_received)))
    u = L if "assign_at_leader_version" in muts else min_received
    if own:
        # Kafka 2.0 (and 2.1.0 / 2.1.1, the uncapped_adopt variant) encode their latest version; the 2.1
        # branch the minimum supported version over the members it understands. No follow-up rebalance.
        branch21 = L >= 4 and "uncapped_adopt" not in muts
        sup_value: Any = L
        if branch21:
            current = [z3.And(mem[i], z3.Not(future[i])) for i in range(n)]
            pick_current = _max if "commonly_supported_is_max" in muts else _min
            sup_value = pick_current(list(zip(current, sup, strict=True)), L)
        if "leader_supported_is_used" in muts:
            sup_value = u
        own_sup = z3.If(u >= PROBEABLE, sup_value, UNKNOWN)
        empty = (u, own_sup) if branch21 else (L, L)  # the empty reply to a future member
        inbox = [(z3.If(future[i], empty[0], u), z3.If(future[i], empty[1], own_sup), 0, future[i])
                 for i in range(n)]
        cases.append((z3.BoolVal(True), reply(u, inbox, False)))
    elif kip or not probing:
        supported: Any = z3.If(u >= PROBEABLE, L, UNKNOWN)
        if "leader_supported_is_used" in muts:
            supported = z3.If(u >= PROBEABLE, u, UNKNOWN)
        inbox = [(z3.If(future[i], L, u), z3.If(future[i], L, supported), 0, z3.And(future[i], profile != KAFKA))
                 for i in range(n)]
        can_go_higher = z3.And(probing, z3.Not(any_future), L > u,
                               *(z3.Implies(mem[i], z3.And(sup[i] != UNKNOWN, sup[i] > u)) for i in range(n)))
        if "no_leader_follow_up" in muts:
            can_go_higher = z3.BoolVal(False)
        cases.append((z3.BoolVal(True), reply(u, inbox, can_go_higher)))
    else:
        inbox = [(u, z3.If(u >= PROBEABLE, min_supported, UNKNOWN), 0, False)] * n
        cases.append((z3.BoolVal(True), reply(u, inbox, any_future)))
    return cases


def on_assignment_outcomes(profile: str, muts: frozenset[str], rel: StreamsRelease, received: Any, supported: Any,
                           err: Any, used: Any, none: list[tuple[str, Any, Any]], trigger: Any, fail: Any, done: Any
                           ) -> list[tuple[Any, Any]]:
    """A member's onAssignment (``api.on_assignment``) as an if / elif chain: (condition, [(action name,
    subcondition, effect)]) in order, the first condition that holds decides. ``fail(kind, a, b)`` and
    ``done(new_used, rebalance)`` build the effects and ``none`` is the no-op's outcomes, so the transition
    relation (``_on_assignment``) and the ``streams_on_assignment`` decision rule (model/decisions/streams.py)
    read the same rules."""
    L = rel.latest_supported
    raw: list[tuple[Any, Any]] = [
        (z3.Not(z3.And(received >= 1, received <= L)), [("AssignmentFailure", True, fail(5, received, L))])]
    if profile == KAFKA_20 and L >= PROBEABLE:
        return raw + own_branch_outcomes(muts, rel, received, supported, err, used, none, trigger, fail, done)
    return raw + shared_outcomes(profile, muts, rel, received, supported, err, used, none, fail, done)


def shared_outcomes(profile: str, muts: frozenset[str], rel: StreamsRelease, received: Any, supported: Any, err: Any,
                    used: Any, none: list[tuple[str, Any, Any]], fail: Any, done: Any) -> list[tuple[Any, Any]]:
    """A member's onAssignment under kip and kafka, and of a pre-2.0 member under every profile."""
    kip, L = profile == "kip", rel.latest_supported
    probing = L >= PROBEABLE
    raw: list[tuple[Any, Any]] = []
    if not kip and probing:
        # VERSION_PROBING is only logged (StreamsRebalanceListener); no leader sends it, kept in step.
        raw.append((z3.And(received >= 4, err == 2), none))
        raw.append((z3.And(received >= 4, z3.Or(err < 0, err > max(ERROR_NAMES))),
                    [("AssignmentFailure", True, fail(9))]))
        raw.append((z3.And(received >= 4, err != 0), [("ErrorShutdown", True, fail(8, err))]))
    # Kafka 2.0's onAssignment threw an IllegalStateException, today's validateMetadataVersions a
    # TaskAssignmentException (a pre-2.0 member under kafka-2.0 takes this branch too).
    thrown = TASK_ASSIGNMENT_EXCEPTION if profile == KAFKA else ILLEGAL_STATE_EXCEPTION
    raw.append((received > used, [("AssignmentFailure", True, fail(6, used, received, thrown))]))
    if not probing:
        raw.append((z3.BoolVal(True), none))
        return raw
    raw.append((received < PROBEABLE, none))
    never = "member_never_upgrades" in muts
    if not kip:
        raw.append((supported > L, [("AssignmentFailure", True, fail(7))]))
        if not never:
            raw.append((supported > used, [("AdoptSupportedVersion", True, done(supported, True))]))
        raw.append((received < used, [("ProbeDowngrade", True, done(supported, True))]))
    else:
        raw.append((z3.And(received < used, received == supported),
                    [("ProbeDowngrade", True, done(received, True))]))
        if not never:
            target = supported if "uncapped_adopt" in muts else z3.If(supported < L, supported, L)
            raw.append((z3.And(supported > used, target > used),
                        [("AdoptSupportedVersion", True, done(target, False))]))
    raw.append((z3.BoolVal(True), none))
    return raw

def own_branch_outcomes(muts: frozenset[str], rel: StreamsRelease, received: Any, supported: Any, err: Any, used: Any,
                         none: list[tuple[str, Any, Any]], trigger: Any, fail: Any, done: Any
                         ) -> list[tuple[Any, Any]]:
    """kafka-2.0: a probing member's onAssignment by its own branch. The 2.1 branch: an error code first
    (1 shuts the thread down, 2 makes it rejoin, others are a no-op), then validateMetadataVersions and
    maybeUpdateSubscriptionVersion (adopt or come down to the commonly supported version, rejoin). Kafka 2.0,
    and 2.1.0 / 2.1.1 under uncapped_adopt: a probe takes the received version when it equals the supported
    one, else the supported one, and rejoins; at the version sent it adopts the supported one, uncapped."""
    L = rel.latest_supported
    never = "member_never_upgrades" in muts
    rejoin = [("LeaderFollowUpRebalance", trigger, done(used, True)),
              ("OnAssignment", z3.Not(trigger), done(used, True))]
    raw: list[tuple[Any, Any]] = []
    if L >= 4:
        raw.append((z3.And(received >= 4, err == 1), [("ErrorShutdown", True, fail(8, err))]))
        raw.append((z3.And(received >= 4, err == 2), rejoin))
        raw.append((z3.And(received >= 4, err != 0), none))
    branch21 = L >= 4 and "uncapped_adopt" not in muts  # validateMetadataVersions: a TaskAssignmentException
    thrown = TASK_ASSIGNMENT_EXCEPTION if branch21 else ILLEGAL_STATE_EXCEPTION
    raw.append((received > used, [("AssignmentFailure", True, fail(6, used, received, thrown))]))
    if branch21:
        raw.append((supported > L, [("AssignmentFailure", True, fail(7))]))
        raw.append((received < PROBEABLE, none))
        if not never:
            raw.append((supported > used, [("AdoptSupportedVersion", True, done(supported, True))]))
        raw.append((received < used, [("ProbeDowngrade", True, done(supported, True))]))
    else:
        raw.append((z3.And(received >= PROBEABLE, received < used),
                    [("ProbeDowngrade", True, done(z3.If(received == supported, received, supported), True))]))
        if not never:
            raw.append((z3.And(received >= PROBEABLE, supported > used),
                        [("AdoptSupportedVersion", True, done(supported, False))]))
    raw.append((z3.BoolVal(True), none))
    return raw


def _first_match(cases: list[tuple[Any, Any]]) -> z3.BoolRef:
    """The effect of the first case whose condition holds (an if / elif chain)."""
    out: Any = z3.BoolVal(False)
    for cond, eff in reversed(cases):
        out = z3.If(cond, eff, out)
    return out
