"""Kafka Streams decision rules (KIP-268 version probing): the leader's ``assign()`` and its task deal, a member's
``onAssignment()``, and the ``SubscriptionInfo`` / ``AssignmentInfo`` wire formats (round trips and damaged bytes);
reference_impl/streams_probing/api.py is the reference.

Rules (``DECISIONS``, registered through the protocol's ``ProtocolEntry.decisions``):

* ``streams_assign``: the Kafka Streams leader's ``assign()`` (reference_impl/streams_probing/api.py): the
  used version, the supported version it encodes, what a future member gets, the error assignment, the
  follow-up rebalance, when the leader fails and by which exception (a pre-2.0 leader's decode failure or a
  probing leader's), and the refused empty group; per leader release, profile (kafka-2.0's own branch too) and
  assignor mutation (uncapped_adopt: Kafka 2.1.0 / 2.1.1). The Z3 side is the transition relation's own chain
  (model/streams_probing.py ``assign_outcomes``).
* ``streams_on_assignment``: a Kafka Streams member's ``onAssignment()`` (api.py ``on_assignment``) on every
  reply (used, received and supported version, error code), per member release and profile: the member step,
  the version it uses next, whether it rejoins, and the failure it raises; the Z3 side is the transition
  relation's own chain (model/streams_probing.py ``on_assignment_outcomes``); post-2.0 also as Kafka 2.1.1
  (``uncapped_adopt``, KAFKA-8649).
* ``streams_codec``: what each release's ``SubscriptionInfo`` / ``AssignmentInfo`` ``encode()`` writes, its own
  ``decode()`` reads back (the fields each version carries, Kafka's ``equals``, the encoded length), and a version
  above what it speaks is refused; the checked constructors (``of``), what ``encode()`` refuses of an info built
  unchecked, the supported-version word and process id bytes written, task sets in hash-bin order.
* ``streams_decode``: each release's ``decode()`` on damaged bytes (an unknown version word, a buffer cut in any
  field, trailing bytes, a negative length, bad modified UTF-8): which exception, with which message.
* ``streams_tasks``: the tasks the leader deals round robin and each assignment's consumer-level partitions
  (its active tasks' partitions, in task order; none without the grouper's map, a refusal when it lacks a dealt
  task), with a future member in the group (kip deals it nothing, kafka pools it), and kafka-2.0's version
  probing (previous tasks back).
* ``streams_releases``: each release's age and latest metadata version, and the ``upgrade.from`` table (each
  value refused or the version it forces, per release and profile), restated from KIP-268 and Kafka (the
  reference's tables are read by the spec and the Z3 model too, so only this second copy sees an edit to them).
"""

from __future__ import annotations

import dataclasses
import itertools
import struct
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import z3

from reference_impl.streams_probing.api import IllegalStateException, SubscriptionInfo, TaskAssignmentException
from reference_impl.streams_probing.api import assign as ref_assign
from reference_impl.streams_probing.releases import RELEASES
from rollcheck.smt.decisions import CODEC_ERROR, DONT_CARE, DecisionRules, Formula, Inputs, Outputs

# --------------------------------------------------------------------------- Kafka Streams assign()

PROBEABLE = 3
UNKNOWN = -1
ASSIGN_MUTATIONS = ("", "leader_fails_on_future", "assign_at_leader_version", "no_leader_follow_up",
                    "leader_supported_is_used", "commonly_supported_is_max", "uncapped_adopt")
# uncapped_adopt is Kafka 2.1.0 / 2.1.1 (the broken variant STR-M4, KAFKA-8649): a real release, whose leader
# encodes its latest version under kafka-2.0; the other profiles' assign() does not read it.
ASSIGN_MUTATIONS_OF = {"kip": ASSIGN_MUTATIONS[:-1], "kafka": ASSIGN_MUTATIONS[:-1], "kafka-2.0": ASSIGN_MUTATIONS}
# The outcome codes. The two ways a leader fails are told apart, as Kafka throws two classes: a pre-2.0 leader's
# SubscriptionInfo.decode throws a TaskAssignmentException on a version it does not know, a probing leader an
# IllegalStateException on a future subscription beside a pre-2.0 one. An empty group is a caller error.
ASSIGNED, LEADER_FAILS, ERROR_ASSIGNMENT, LEADER_CANNOT_DECODE, REFUSED = 0, 1, 2, 3, 4


def streams_assign_formula(leader_latest: int, profile: str, mutation: str, n: int) -> Formula:
    """KIP-268 "Detailed upgrade protocol" / "Future upgrades", today's assignor (``kafka``) and each probing
    release's own (``kafka-2.0``): the transition relation's own chain (``model.streams_probing.assign_outcomes``)
    over ``n`` members, folded into terms."""
    names = [f"{f}{i}" for i in range(n) for f in ("v", "lat")]
    muts = frozenset({mutation} - {""})
    leader = next(r for r in RELEASES if r.latest_supported == leader_latest)

    def build(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        # model.streams_probing imports this module (gate_differential): import it when a formula is built.
        from model.streams_probing import assign_outcomes

        if n == 0:  # the reference says nothing more
            return {"outcome": REFUSED, "used": 0, "follow_up": 0, "version_probing": 0}
        v = [x[f"v{i}"] for i in range(n)]
        sup = [z3.If(v[i] >= PROBEABLE, x[f"lat{i}"], UNKNOWN) for i in range(n)]
        members = [f"{f}{i}" for i in range(n) for f in ("version", "supported", "error")]

        def term(x: Any) -> Any:  # the chain gives plain ints where a value is fixed
            return z3.IntVal(x) if isinstance(x, int) else x

        def fail(kind: int, a: Any, b: Any = 0) -> dict[str, Any]:
            # kind 2: a pre-2.0 leader cannot decode the subscription; 3 and 4: a probing leader's failures.
            return {"outcome": term(LEADER_CANNOT_DECODE if kind == 2 else LEADER_FAILS), "used": term(0),
                    "follow_up": term(0), **{k: term(0) for k in members}}

        def reply(used: Any, inbox: list[tuple[Any, Any, Any, Any]], follow: Any) -> dict[str, Any]:
            errors = [term(e) for _, _, e, _ in inbox]
            out = {"outcome": z3.If(z3.Or([e != 0 for e in errors]), ERROR_ASSIGNMENT, ASSIGNED),
                   "used": term(used), "follow_up": z3.If(follow, 1, 0)}
            for i, (ver, supported, _, _) in enumerate(inbox):
                out.update({f"version{i}": term(ver), f"supported{i}": term(supported), f"error{i}": errors[i]})
            return out

        out: dict[str, Any] = {}
        for cond, eff in reversed(assign_outcomes(profile, muts, leader, [True] * n, v, sup, fail, reply)):
            out = eff if not out else {k: z3.If(cond, eff[k], out[k]) for k in eff}
        out["version_probing"] = z3.Or([v[i] > leader_latest for i in range(n)])
        return out

    return Formula(names, build)


def streams_assign_reference(leader: Any, profile: str, mutation: str, n: int) -> Callable[[Inputs], Outputs]:
    muts = frozenset({mutation} - {""})

    def run(x: Inputs) -> Outputs:
        subs = {str(i): SubscriptionInfo.of(x[f"v{i}"], x[f"lat{i}"]) for i in range(n)}
        try:
            g = ref_assign(leader, profile, subs, mutations=muts)
        except ValueError:
            return {"outcome": REFUSED, "used": DONT_CARE, "follow_up": DONT_CARE, "version_probing": DONT_CARE}
        except (TaskAssignmentException, IllegalStateException) as exc:
            failed = LEADER_CANNOT_DECODE if isinstance(exc, TaskAssignmentException) else LEADER_FAILS
            out = {"outcome": failed, "used": DONT_CARE, "follow_up": DONT_CARE, "version_probing": DONT_CARE}
            for i in range(n):
                out.update({f"version{i}": DONT_CARE, f"supported{i}": DONT_CARE, f"error{i}": DONT_CARE})
            return out
        error = any(int(a.error) for a in g.assignments.values())
        out = {"outcome": ERROR_ASSIGNMENT if error else ASSIGNED, "used": g.used_version,
               "follow_up": int(g.follow_up_rebalance), "version_probing": int(g.version_probing)}
        for i in range(n):
            a = g.assignments[str(i)]
            out.update({f"version{i}": a.version, f"supported{i}": a.latest_supported, f"error{i}": int(a.error)})
        return out

    return run


def streams_assign_cases(max_members: int = 2, mutations: Sequence[str] = ASSIGN_MUTATIONS
                         ) -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Every leader release x profile x mutation (of those the profile reads) x member count; members range over
    every release's latest version and every version it can send. The empty group (no member, the leader not
    even itself) is refused (once per leader and profile: no mutation touches the refusal)."""
    latests = sorted({r.latest_supported for r in RELEASES})
    member = [(v, lat) for lat in latests for v in range(1, lat + 1)]
    for leader in RELEASES:
        for profile in ("kip", "kafka", "kafka-2.0"):
            if leader.name == "3.9" and profile != "kafka":
                continue  # release 3.9 exists in the kafka profile only
            for mutation in (m for m in mutations if m in ASSIGN_MUTATIONS_OF[profile]):
                for n in range(0 if mutation == "" else 1, max_members + 1):
                    domain = ({k: val for i, (v, lat) in enumerate(combo)
                               for k, val in ((f"v{i}", v), (f"lat{i}", lat))}
                              for combo in itertools.product(member, repeat=n))
                    case = f"leader {leader.name}, {profile}, mutation {mutation or '-'}, {n} members"
                    yield (case, streams_assign_formula(leader.latest_supported, profile, mutation, n), domain,
                           streams_assign_reference(leader, profile, mutation, n))


STREAMS_TASKS = 3  # up to this many tasks to deal


def streams_tasks_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The tasks and consumer-level partitions of the leader's assignment (no config deals tasks: the system's
    members carry versions only): ``k`` tasks dealt round robin over the members in id order (the model's
    stand-in for Kafka's task assignor: member ``i`` gets the sorted tasks ``i, i + n, ...``), and with
    ``partitions_for_task`` each assignment lists the partitions of its active tasks, in task order, as Kafka's
    assign() builds ``Assignment.partitions()``. Every profile's leader (kafka-2.0 included), members all at the
    leader's version; and kafka-2.0's version probing, where old members get their previous tasks back."""
    from reference_impl.streams_probing import api as s_api

    # A case's inputs: ``k`` tasks; ``given``: whether the grouper's partitions are passed (without them every
    # partition list stays empty); ``missing``: the grouper lacks the highest task, which the leader deals to a
    # member, so assign() refuses (a ValueError naming the task; Kafka's leader would die of a
    # NullPointerException). With ``future`` a member from a release beyond the leader's joins (sorted last):
    # KIP-268 deals every task to the current members and sends the future one an empty assignment (``kip``),
    # today's assignor pools it with the others and deals it tasks too (``kafka``).
    def build(n: int, per_task: int, future: bool, pooled: bool
              ) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        over = n + 1 if future and pooled else n  # the members the tasks are dealt over

        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            k, given = x["k"], x["given"] == 1
            out: dict[str, Any] = {"refused": z3.If(z3.And(given, x["missing"] == 1, k >= 1), 1, 0)}
            for i in range(n + 1 if future else n):
                dealt = [k > j for j in range(i, STREAMS_TASKS, over)] if i < over else []
                out[f"active{i}"] = z3.Sum([z3.If(d, 1, 0) for d in dealt]) if dealt else 0
                out[f"parts{i}"] = z3.If(given, z3.Sum([z3.If(d, per_task, 0) for d in dealt]), 0) if dealt else 0
                out[f"dealt{i}"] = 1  # the sorted tasks i, i + over, ...
                out[f"ordered{i}"] = 1  # their partitions, task by task
            return out
        return outputs

    def reference(leader: Any, profile: str, n: int, per_task: int, future: bool) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            tasks = [s_api.TaskId(0, j) for j in range(x["k"])][::-1]  # handed over unsorted
            parts = {t: [s_api.TopicPartition(f"t{t.partition}", q) for q in range(per_task)] for t in tasks}
            if x["missing"] and tasks:
                del parts[max(tasks)]
            subs = {f"m{i}": SubscriptionInfo.of(leader.latest_supported, leader.latest_supported)
                    for i in range(n)}
            members = [f"m{i}" for i in range(n)]
            if future:
                newer = leader.latest_supported + 1
                subs["m9"] = SubscriptionInfo.of(newer, newer)
                members.append("m9")
            out: dict[str, int] = {"refused": 0}
            try:
                g = ref_assign(leader, profile, subs, tasks, partitions_for_task=parts if x["given"] else None)
            except ValueError:
                out["refused"] = 1
                for i in range(len(members)):
                    out.update({f"{f}{i}": DONT_CARE for f in ("active", "parts", "dealt", "ordered")})
                return out
            ordered_tasks = sorted(tasks)
            over = len(members) if profile == "kafka" else n
            for i, m in enumerate(members):
                a = g.assignments[m]
                out[f"active{i}"] = len(a.active_tasks)
                out[f"parts{i}"] = len(a.partitions)
                out[f"dealt{i}"] = int(list(a.active_tasks) == (ordered_tasks[i::over] if i < over else []))
                listed = [p for t in a.active_tasks for p in parts.get(t, ())] if x["given"] else []
                out[f"ordered{i}"] = int(list(a.partitions) == listed)
            return out
        return run

    # kafka-2.0's versionProbingAssignment: with a future member in the group, an old member gets its previous
    # active tasks back (prevTasks, handed over unsorted: a HashSet iterates them in TaskId hash order, here
    # ascending) with their partitions when the grouper gives them (``given``: task j owns partitions j and
    # j + k of one topic). Kafka 2.0 hands each consumer its client's tasks (``shared``: a second consumer m2
    # of the same process, with no tasks of its own, gets m0's), listed task by task with their partitions; the
    # 2.1 branch each consumer its own, one entry per partition sorted by topic and partition (so tasks
    # interleave), one per task without partitions. Outputs: the lengths of m0's and m2's active lists and m0's
    # partition list, and whether m0's are in that order. No config reaches this (members carry no tasks, and
    # no kafka-2.0 member is above post-2.0).
    def probing_formula(branch_21: bool, per_task: int) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            k, given = x["k"], x["given"] == 1
            each = z3.Sum([k] * per_task)  # k * per_task (the compiled evaluator adds, it does not multiply)
            active = z3.If(given, each, k) if branch_21 else k
            return {"active": active, "parts": z3.If(given, each, 0), "ordered": 1,
                    "active2": 0 if branch_21 else z3.If(x["shared"] == 1, k, 0)}
        return outputs

    def probing_reference(leader: Any, per_task: int) -> Callable[[Inputs], Outputs]:
        latest = leader.latest_supported

        def run(x: Inputs) -> Outputs:
            k = x["k"]
            prev = [s_api.TaskId(0, j) for j in range(k)][::-1]
            parts = ({t: [s_api.TopicPartition("t", t.partition + q * k) for q in range(per_task)] for t in prev}
                     if x["given"] else None)
            subs = {"m0": SubscriptionInfo.of(latest, latest, uuid.UUID(int=1), prev),
                    "m1": SubscriptionInfo(latest + 1, latest + 1, uuid.UUID(int=2)),  # from a future release
                    "m2": SubscriptionInfo.of(latest, latest, uuid.UUID(int=1 if x["shared"] else 3))}
            g = ref_assign(leader, "kafka-2.0", subs, partitions_for_task=parts)
            a = g.assignments["m0"]
            ordered = sorted(prev)
            if parts is None:
                want_active, want_parts = ordered, []
            elif latest >= 4:  # partition j + q * k: every task's first partition, then every task's second
                want_active = [t for q in range(per_task) for t in ordered]
                want_parts = [s_api.TopicPartition("t", t.partition + q * k) for q in range(per_task) for t in ordered]
            else:
                want_active, want_parts = ordered, [p for t in ordered for p in parts[t]]
            return {"active": len(a.active_tasks), "parts": len(a.partitions),
                    "ordered": int(list(a.active_tasks) == want_active and list(a.partitions) == want_parts),
                    "active2": len(g.assignments["m2"].active_tasks)}
        return run

    domain = [{"k": k, "given": g, "missing": m} for k in range(STREAMS_TASKS + 1) for g, m in ((0, 0), (1, 0), (1, 1))]
    for leader in RELEASES:
        for profile in ("kip", "kafka", "kafka-2.0"):
            if leader.name == "3.9" and profile != "kafka":
                continue  # release 3.9 exists in the kafka profile only
            for n in (1, 2):
                for per_task in (1, 2):
                    yield (f"leader {leader.name}, {profile}, {n} members, {per_task} partitions a task",
                           Formula(["k", "given", "missing"], build(n, per_task, False, False)), domain,
                           reference(leader, profile, n, per_task, False))
                    if leader.probing and profile != "kafka-2.0":  # kafka-2.0's probing leader: below
                        yield (f"leader {leader.name}, {profile}, {n} members and a future one, {per_task} "
                               f"partitions a task",
                               Formula(["k", "given", "missing"], build(n, per_task, True, profile == "kafka")),
                               domain, reference(leader, profile, n, per_task, True))
        if leader.probing and leader.name != "3.9":
            for per_task in (1, 2):
                yield (f"leader {leader.name}, kafka-2.0, version probing, {per_task} partitions a task",
                       Formula(["k", "given", "shared"], probing_formula(leader.latest_supported >= 4, per_task)),
                       [{"k": k, "given": g, "shared": h} for k in range(STREAMS_TASKS + 1) for g in (0, 1)
                        for h in (0, 1)],
                       probing_reference(leader, per_task))


# --------------------------------------------------------------------------- Kafka Streams onAssignment()

# The member step a reply leads to (the transition system's action names), as an output code.
ON_ASSIGNMENT_STEPS = ("OnAssignment", "ProbeDowngrade", "AdoptSupportedVersion", "AssignmentFailure", "ErrorShutdown",
                       "LeaderFollowUpRebalance")
_STEP_OF_OUTCOME = {"NONE": 0, "PROBE_DOWNGRADE": 1, "ADOPT_SUPPORTED": 2}
# The class a member's failure is thrown as (model.streams_probing names it), as an output code.
_THROWN = {"TaskAssignmentException": 1, "IllegalStateException": 2}


def streams_on_assignment_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """A member's ``on_assignment`` on every reply it could be handed: per member release and profile, every
    used version it can send, every received version (one past the newest release's too), every supported version
    (UNKNOWN included) and every error code (and one no ``AssignorError`` names, which today's member refuses with
    "Hit an unrecognized exception during rebalance"). The Z3 side is the transition relation's own chain
    (``model.streams_probing.on_assignment_outcomes``) folded into terms: the rule reaches the branches no config's
    states reach (an assignment above the version sent, a supported version above the member's own, an error code
    the leader of a config never sends)."""
    # model.streams_probing imports this module (gate_differential): import it when the cases are asked for.
    from model.streams_probing import (
        FAILURES,
        ILLEGAL_STATE_EXCEPTION,
        TASK_ASSIGNMENT_EXCEPTION,
        on_assignment_outcomes,
        parse_failure,
    )
    from reference_impl.streams_probing.api import AssignmentInfo, AssignorError, MemberOutcome, on_assignment

    top = max(r.latest_supported for r in RELEASES) + 1
    names = ("used", "received", "supported", "err")

    def build(rel: Any, profile: str, muts: frozenset[str]) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            def fail(kind: int, a: Any = 0, b: Any = 0, thrown: str = TASK_ASSIGNMENT_EXCEPTION) -> dict[str, Any]:
                # kind 8 is the client shutting down on the leader's error code: nothing is thrown
                return {"used": DONT_CARE, "rejoin": 0, "kind": kind, "a": a, "b": b,
                        "thrown": 0 if kind == 8 else _THROWN[thrown]}

            def done(new_used: Any, rebalance: Any) -> dict[str, Any]:
                return {"used": new_used, "rejoin": z3.If(rebalance, 1, 0), "kind": 0, "a": 0, "b": 0, "thrown": 0}

            trigger = z3.BoolVal(False)  # the leader's follow-up trigger is the system's, not the member's
            none = [("OnAssignment", True, done(x["used"], False))]
            chain = on_assignment_outcomes(profile, muts, rel, x["received"], x["supported"], x["err"],
                                           x["used"], none, trigger, fail, done)
            out: dict[str, Any] = {k: z3.IntVal(DONT_CARE) for k in ("step", "used", "rejoin", "kind", "a", "b",
                                                                      "thrown")}
            for cond, outcomes in reversed(chain):
                picked = {k: z3.IntVal(DONT_CARE) for k in out}
                for name, sub, eff in reversed(outcomes):
                    values = {**{k: z3.IntVal(v) if isinstance(v, int) else v for k, v in eff.items()},
                              "step": z3.IntVal(ON_ASSIGNMENT_STEPS.index(name))}
                    picked = {k: z3.If(sub, values[k], picked[k]) for k in out}
                out = {k: z3.If(cond, picked[k], out[k]) for k in out}
            return out
        return outputs

    def reference(rel: Any, profile: str, muts: frozenset[str]) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            info = AssignmentInfo(x["received"], x["supported"], error=x["err"])  # an unknown code stays an int
            try:
                upd = on_assignment(rel, profile, x["used"], info, muts)
            except (TaskAssignmentException, IllegalStateException) as exc:
                kind, a, b = parse_failure(f"member: {exc}")
                return {"step": ON_ASSIGNMENT_STEPS.index("AssignmentFailure"), "used": DONT_CARE, "rejoin": 0,
                        "kind": kind, "a": a, "b": b, "thrown": _THROWN[type(exc).__name__]}
            if upd.outcome is MemberOutcome.ERROR_SHUTDOWN:
                return {"step": ON_ASSIGNMENT_STEPS.index("ErrorShutdown"), "used": DONT_CARE, "rejoin": 0,
                        "kind": 8, "a": int(upd.error), "b": 0, "thrown": 0}
            return {"step": _STEP_OF_OUTCOME[upd.outcome.name], "used": upd.used_version, "rejoin": int(upd.rebalance),
                    "kind": 0, "a": 0, "b": 0, "thrown": 0}
        return run

    assert 5 in FAILURES and 8 in FAILURES  # the failure kinds the reference side maps to
    assert set(_THROWN) == {TASK_ASSIGNMENT_EXCEPTION, ILLEGAL_STATE_EXCEPTION}  # and the classes
    # uncapped_adopt is Kafka 2.1.0 / 2.1.1's member (KAFKA-8649, the broken variant STR-M4): a real release's
    # rules, whose probe-downgrade branch (the supported version, or the received one when they are equal) no
    # config reaches (the variant's exploration stops at its first violation), so it is compared here too.
    for rel in RELEASES:
        for profile in ("kip", "kafka", "kafka-2.0"):
            if rel.name == "3.9" and profile != "kafka":
                continue  # release 3.9 exists in the kafka profile only
            domain = [{"used": u, "received": r, "supported": s, "err": e}
                      for u in range(1, rel.latest_supported + 1) for r in range(1, top + 1)
                      for s in (UNKNOWN, *range(1, top + 1)) for e in range(len(AssignorError) + 1)]  # + unknown
            yield (f"member {rel.name}, {profile}", Formula(names, build(rel, profile, frozenset())), domain,
                   reference(rel, profile, frozenset()))
            if rel.name == "post-2.0":
                muts = frozenset({"uncapped_adopt"})
                yield (f"member 2.1.1 (post-2.0 under uncapped_adopt), {profile}",
                       Formula(names, build(rel, profile, muts)), domain, reference(rel, profile, muts))
            if rel.probing:
                # The broken variant's member that never takes a higher supported version: its other branches
                # must stay the reference's (what it breaks is the property, not the rest of the member).
                muts = frozenset({"member_never_upgrades"})
                yield (f"member {rel.name} under member_never_upgrades, {profile}",
                       Formula(names, build(rel, profile, muts)), domain, reference(rel, profile, muts))


# --------------------------------------------------------------------------- Kafka Streams wire formats

# The layouts Kafka's SubscriptionInfo / AssignmentInfo had up to 2.1 (versions 1 to 4); later versions pass the
# system's fields without bytes (reference_impl/streams_probing/system.py).
CODEC_LAYOUTS = 4
_PIDS = (0, 1, (1 << 64) + 5, (1 << 128) - 1, 1 << 63)  # UUID ints: zero, low half only, both, every bit, a negative
# low half under an even high half (a mask one bit too wide on the low half sets the high half's lowest bit)
_TASKS = ((0, 0), (1, 2), (2, 1))
_ENDPOINT = "host:9092"


def streams_codec_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """What a release's ``encode()`` writes its own ``decode()`` reads back (SubscriptionInfoTest and
    AssignmentInfoTest's round trips), per release and version: every field the version carries comes back (the
    supported version from 3 on, the endpoint from 2 on, the error code from 4 on), and a version above what the
    release speaks is refused; a task set given a task twice is written with it once (a Set), and two tasks of
    one hash bin in the order they were put (an unordered set in TaskId order); ``SubscriptionInfo.of``'s and
    ``AssignmentInfo.of``'s version checks (and the unchecked constructor's), the default process id, Kafka's
    equals on a round trip; an assignment's maps given as Mappings or as pairs; the KIP's empty reply. The
    system carries only the version, the supported version and the error code between members; a field written
    at the wrong offset (the process id, the task sets, the endpoint, the partitions) is seen here, not only by
    tests/kafka."""
    from reference_impl.streams_probing import api as s_api

    def tasks(n: int) -> list[Any]:
        return [s_api.TaskId(*t) for t in _TASKS[:n]]

    def sub_formula(latest: int) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            v = x["v"]
            # The bytes written (SubscriptionInfo.encode's layouts): the version, the supported version from 3 on
            # (not by the one-layout releases before 2.0), the process id (16), each task set as a count and 8
            # bytes a task, the endpoint as a count and its bytes from version 2 on (always before 2.0).
            endpoint = z3.If(x["endpoint"] == 1, len(_ENDPOINT), 0)
            has_endpoint = v >= 2 if latest != 2 else z3.BoolVal(True)
            length = z3.Sum(4, z3.If(v >= PROBEABLE, 4, 0) if latest != 2 else 0, 16, 4, *([x["prev"]] * 8), 4,
                            *([x["standby"]] * 8), z3.If(has_endpoint, 4 + endpoint, 0))
            return {"error": v > min(latest, CODEC_LAYOUTS), "version": v,
                    "supported": z3.If(v >= PROBEABLE, latest, UNKNOWN), "pid": x["pid"], "prev": x["prev"],
                    "standby": x["standby"], "endpoint": z3.If(v >= 2, x["endpoint"], 0), "length": length,
                    # equals, as SubscriptionInfoTest asserts decode(encode(info)) equal to info: the user
                    # endpoint is carried from version 2 on; a task given twice is one task on both sides
                    "equal": z3.If(z3.Or(x["endpoint"] == 0, v >= 2), 1, 0)}
        return build

    def sub_reference(latest: int) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            try:
                # Kafka's task sets are Set<TaskId>: a task given twice (dup) is one task, written once.
                again = (lambda ts: ts + ts[:1]) if x["dup"] else (lambda ts: ts)
                info = s_api.SubscriptionInfo.of(x["v"], latest, uuid.UUID(int=_PIDS[x["pid"]]),
                                                 again(tasks(x["prev"])), again(tasks(x["standby"])[::-1]),
                                                 _ENDPOINT if x["endpoint"] else None)
                data = s_api.encode_subscription(info, latest)
                got = s_api.decode_subscription(data, latest)
            except (s_api.TaskAssignmentException, s_api.IllegalArgumentException, s_api.IllegalStateException):
                return {"error": 1, **dict.fromkeys(("version", "supported", "pid", "prev", "standby", "endpoint",
                                                     "length", "equal"), DONT_CARE)}
            pid = got.process_id.int if got.process_id is not None else None
            return {"error": 0, "version": got.version, "supported": got.latest_supported,
                    "pid": _PIDS.index(pid) if pid in _PIDS else CODEC_ERROR,
                    # Set<TaskId>.equals, as SubscriptionInfoTest asserts the decoded prevTasks / standbyTasks
                    "prev": len(got.prev_tasks) if got.prev_tasks == frozenset(tasks(len(got.prev_tasks)))
                    else CODEC_ERROR,
                    "standby": len(got.standby_tasks) if got.standby_tasks == frozenset(tasks(len(got.standby_tasks)))
                    else CODEC_ERROR,
                    "endpoint": {None: 0, _ENDPOINT: 1}.get(got.user_endpoint, CODEC_ERROR), "length": len(data),
                    "equal": int(got == info)}
        return run

    def asg_formula(latest: int) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            v = x["v"]
            return {"error": v > min(latest, CODEC_LAYOUTS), "version": v,
                    "supported": z3.If(v >= PROBEABLE, latest, UNKNOWN), "active": x["active"],
                    "standby": x["standby"], "hosts": z3.If(v >= 2, x["hosts"], 0),
                    "code": z3.If(v >= 4, x["code"], 0),
                    # The encoded length: version, the supported-version word from 3, the active tasks (8 bytes
                    # each), the standby map (a task and its one partition "t"-0: 8 + 4 + 7), from 2 the hosts
                    # ("host", port, partitions[i:]: host 0 has two partitions, host 1 one; 0.10.1 ... 1.1 write
                    # them at every version, their one layout), from 4 the error.
                    "length": z3.Sum(4, z3.If(v >= 3, 4, 0), 4, *([x["active"]] * 8), 4, *([x["standby"]] * 19),
                                     z3.If(z3.Or(v >= 2, z3.BoolVal(latest == 2)),
                                           4 + z3.If(x["hosts"] >= 1, 28, 0) + z3.If(x["hosts"] >= 2, 21, 0), 0),
                                     z3.If(v >= 4, 4, 0)),
                    # Kafka's equals, as AssignmentInfoTest asserts decode(encode(info)) equal to info: only when
                    # the version carries every field given (partitionsByHost from 2 on, the error code from 4)
                    "equal": z3.And(z3.Or(x["hosts"] == 0, v >= 2), z3.Or(x["code"] == 0, v >= 4)),
                    "foreign": 1,
                    # the KIP's empty reply (no active or standby task, no partition), as the system tells it
                    "empty": z3.And(x["active"] == 0, x["standby"] == 0, x["parts"] == 0)}
        return build

    partitions = [s_api.TopicPartition("t", 0), s_api.TopicPartition("t", 1)]

    def asg_reference(latest: int) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            try:
                # map 1: standbyTasks and partitionsByHost given as Mappings (Kafka's Map<K, Set<...>>), not pairs
                shape: Callable[[list[Any]], Any] = dict if x["map"] else list
                info = s_api.AssignmentInfo.of(
                    x["v"], latest, tasks(x["active"]), shape([(t, partitions[:1]) for t in tasks(x["standby"])]),
                    shape([(s_api.HostInfo("host", 9092 + i), partitions[i:]) for i in range(x["hosts"])]),
                    error=s_api.AssignorError(x["code"]))
                # parts 1: the consumer-level partitions assign() hands the consumer (not encoded)
                info = dataclasses.replace(info, partitions=tuple(partitions[:x["parts"]]))
                data = s_api.encode_assignment(info, latest)
                got = s_api.decode_assignment(data, latest)
            except (s_api.TaskAssignmentException, s_api.IllegalArgumentException, s_api.IllegalStateException):
                return {"error": 1, **dict.fromkeys(("version", "supported", "active", "standby", "hosts", "code",
                                                     "length", "equal", "foreign", "empty"), DONT_CARE)}
            hosts = [(h.host, h.port) for h, _ in got.partitions_by_host]
            # equals on another class answers NotImplemented (Python then says False), never an error
            foreign = int(info.__eq__(object()) is NotImplemented)
            return {"error": 0, "version": got.version, "supported": got.latest_supported,
                    "active": len(got.active_tasks) if list(got.active_tasks) == tasks(len(got.active_tasks))
                    else CODEC_ERROR,
                    "standby": len(got.standby_tasks) if [t for t, _ in got.standby_tasks] == tasks(
                        len(got.standby_tasks)) else CODEC_ERROR,
                    "hosts": len(hosts) if sorted(hosts) == [("host", 9092 + i) for i in range(len(hosts))]
                    else CODEC_ERROR,
                    "code": int(got.error), "length": len(data),
                    "equal": int(got == info and hash(got) == hash(info)),
                    "foreign": foreign, "empty": int(info.is_empty)}
        return run

    # AssignmentInfo.of, the checked constructor: the version between 1 and the release's latest (Kafka 2.0+'s
    # message), the supported version encoded from version 3 on, 2.1's commonlySupportedVersion in its place when
    # given (cs 1: one below the latest). The system builds only versions it may send.
    def asg_of_reference(latest: int) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            # The unchecked constructor (Kafka's AssignmentInfo(version, ...)) refuses a version below 1 only.
            try:
                s_api.AssignmentInfo(x["v"], UNKNOWN)
                direct = 0
            except s_api.IllegalArgumentException as exc:
                direct = 1 if str(exc) == (f"version must be between 1 and {s_api.MAX_ENCODED_VERSION}; "
                                           f"was: {x['v']}") else CODEC_ERROR
            try:
                info = s_api.AssignmentInfo.of(x["v"], latest, commonly_supported=latest - 1 if x["cs"] else None)
            except s_api.IllegalArgumentException as exc:
                named = str(exc) == f"version must be between 1 and {latest}; was: {x['v']}"
                return {"refused": 1 if named else CODEC_ERROR, "supported": DONT_CARE, "direct": direct}
            return {"refused": 0, "supported": info.latest_supported, "direct": direct}
        return run

    def asg_of_formula(latest: int) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            v = x["v"]
            return {"refused": z3.Or(v < 1, v > latest),
                    "supported": z3.If(v >= PROBEABLE, z3.If(x["cs"] == 1, latest - 1, latest), UNKNOWN),
                    "direct": v < 1}
        return build

    # Two tasks of one HashMap bin (equal hashes): a HashSet iterates them in the order they were put, so the
    # order the caller filled prevTasks / standbyTasks in is the order encode() writes them (Kafka keeps the
    # caller's Set as it is). Output: which of the pair comes first on the wire (decoded in wire order).
    pair = [s_api.TaskId(0, 1), s_api.TaskId(1, 0)]

    def order_reference(latest: int) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            # swap 2: an unordered Python set (filled in the reversed order, which is how it iterates here):
            # the model's TaskSet takes TaskId order for it, so the caller's set order never leaks to the wire.
            given = frozenset(pair[::-1]) if x["swap"] == 2 else pair[::-1] if x["swap"] else pair
            info = s_api.SubscriptionInfo.of(x["v"], latest, uuid.UUID(int=1), given, given)
            got = s_api.decode_subscription(s_api.encode_subscription(info, latest), latest)
            first = [next(iter(ts), None) for ts in (got.prev_tasks, got.standby_tasks)]
            return {k: pair.index(t) if t in pair else CODEC_ERROR
                    for k, t in zip(("prev_first", "standby_first"), first, strict=True)}
        return run

    def order_formula(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        first = z3.If(x["swap"] == 1, 1, 0)
        return {"prev_first": first, "standby_first": first}

    # SubscriptionInfo.of, the checked constructor: Kafka 2.0+ refuses a version outside 1..LATEST_SUPPORTED
    # ("version must be between 1 and <latest>; was: <version>"); the supported version is set from version 3
    # on; a subscription built without a process id has the nil UUID (the model's stand-in: Kafka's
    # constructor always takes one). The system builds only versions it may use, so the refusal is seen here.
    def of_reference(latest: int) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            try:
                info = s_api.SubscriptionInfo.of(x["v"], latest, uuid.UUID(int=_PIDS[2]) if x["pid"] else None)
            except s_api.IllegalArgumentException as exc:
                named = str(exc) == f"version must be between 1 and {latest}; was: {x['v']}"
                return {"refused": 1 if named else CODEC_ERROR, "supported": DONT_CARE, "pid": DONT_CARE}
            pid = info.process_id.int if isinstance(info.process_id, uuid.UUID) else None
            return {"refused": 0, "supported": info.latest_supported,
                    "pid": _PIDS.index(pid) if pid in (_PIDS[0], _PIDS[2]) else CODEC_ERROR}
        return run

    def of_formula(latest: int) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            v = x["v"]
            return {"refused": z3.Or(v < 1, v > latest), "supported": z3.If(v >= PROBEABLE, latest, UNKNOWN),
                    "pid": z3.If(x["pid"] == 1, 2, 0)}
        return build

    # What encode() refuses of an info built with the unchecked constructor (Kafka's tests build such infos):
    # 0.10.0 encodes version 1 only (TaskAssignmentException), 0.10.1 ... 1.1 write any version, later releases
    # refuse a version outside 1 .. their latest (IllegalStateException, "Unknown metadata version"); an
    # assignment above the release's latest is the constructor's IllegalArgumentException, one above the model's
    # layouts "Unknown metadata version". Outcome codes: 0 encoded, then each refusal with its message.
    ENCODED, SUB_UNENCODABLE, UNKNOWN_VERSION, ASG_OUT_OF_RANGE = 0, 1, 2, 3
    versions = range(-1, CODEC_LAYOUTS + 4)

    # The info: supported version 7 (none of the releases' own), and no process id (pid 0: the nil UUID the
    # model writes for it) or one with every bit set (pid 1). Outputs when encoded: the supported-version word
    # (-1 when the layout has none: 2.0 writes its own 3, 2.1 the field, the one-layout releases none) and
    # whether the process id's 16 bytes are the id's.
    full_pid = (1 << 128) - 1

    def sub_encode_reference(latest: int) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            v = x["v"]
            pid = uuid.UUID(int=full_pid) if x["pid"] else None
            try:
                data = s_api.encode_subscription(SubscriptionInfo(v, 7, pid), latest)
            except s_api.TaskAssignmentException as exc:
                ok = str(exc) == f"unable to encode subscription data: version={v}"
                return {"outcome": SUB_UNENCODABLE if ok else CODEC_ERROR, "word": DONT_CARE, "pid": DONT_CARE}
            except s_api.IllegalStateException as exc:
                ok = str(exc) == f"Unknown metadata version: {v}; latest supported version: {latest}"
                return {"outcome": UNKNOWN_VERSION if ok else CODEC_ERROR, "word": DONT_CARE, "pid": DONT_CARE}
            has_word = v >= PROBEABLE and latest != 2
            at = 8 if has_word else 4
            return {"outcome": ENCODED, "word": int.from_bytes(data[4:8], "big", signed=True) if has_word else -1,
                    "pid": int(int.from_bytes(data[at:at + 16], "big") == (full_pid if x["pid"] else 0))}
        return run

    def sub_encode_formula(latest: int) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            v = x["v"]
            word = -1 if latest == 2 else z3.If(v >= PROBEABLE, 3 if latest == 3 else 7, -1)
            if latest == 1:
                return {"outcome": z3.If(v == 1, ENCODED, SUB_UNENCODABLE), "word": word, "pid": 1}
            if latest == 2:
                return {"outcome": ENCODED, "word": word, "pid": 1}
            return {"outcome": z3.If(z3.And(v >= 1, v <= min(latest, CODEC_LAYOUTS)), ENCODED, UNKNOWN_VERSION),
                    "word": word, "pid": 1}
        return build

    def asg_encode_reference(latest: int) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            v = x["v"]
            try:
                data = s_api.encode_assignment(s_api.AssignmentInfo(v, 7), latest)
            except s_api.IllegalArgumentException as exc:
                ok = str(exc) == f"version must be between 1 and {latest}; was: {v}"
                return {"outcome": ASG_OUT_OF_RANGE if ok else CODEC_ERROR, "word": DONT_CARE}
            except s_api.IllegalStateException as exc:
                ok = str(exc) == f"Unknown metadata version: {v}; latest supported version: {CODEC_LAYOUTS}"
                return {"outcome": UNKNOWN_VERSION if ok else CODEC_ERROR, "word": DONT_CARE}
            return {"outcome": ENCODED, "word": int.from_bytes(data[4:8], "big", signed=True) if v >= 3 else -1}
        return run

    def asg_encode_formula(latest: int) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        # The info's supported version is 7: Kafka 2.0 (latest 3) writes its own LATEST_SUPPORTED_VERSION, 3,
        # whatever the info holds; later releases write the info's field.
        def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            v = x["v"]
            return {"outcome": z3.If(v > latest, ASG_OUT_OF_RANGE, z3.If(v > CODEC_LAYOUTS, UNKNOWN_VERSION, ENCODED)),
                    "word": z3.If(v >= 3, 3 if latest == 3 else 7, -1)}
        return build

    for rel in RELEASES:
        yield (f"SubscriptionInfo.encode refusals, release {rel.name}",
               Formula(["v", "pid"], sub_encode_formula(rel.latest_supported)),
               [{"v": v, "pid": p} for v in versions for p in (0, 1)],
               sub_encode_reference(rel.latest_supported))
        yield (f"AssignmentInfo.encode refusals, release {rel.name}",
               Formula(["v"], asg_encode_formula(rel.latest_supported)), [{"v": v} for v in versions if v >= 1],
               asg_encode_reference(rel.latest_supported))
        top = min(rel.latest_supported, CODEC_LAYOUTS) + 1  # one version past what the release encodes
        yield (f"SubscriptionInfo task order, release {rel.name}", Formula(["v", "swap"], order_formula),
               [{"v": v, "swap": w} for v in range(1, top) for w in (0, 1, 2)], order_reference(rel.latest_supported))
        yield (f"SubscriptionInfo.of, release {rel.name}", Formula(["v", "pid"], of_formula(rel.latest_supported)),
               [{"v": v, "pid": p} for v in range(-1, rel.latest_supported + 3) for p in (0, 1)],
               of_reference(rel.latest_supported))
        yield (f"SubscriptionInfo, release {rel.name}",
               Formula(["v", "pid", "prev", "standby", "endpoint", "dup"], sub_formula(rel.latest_supported)),
               [dict(zip(("v", "pid", "prev", "standby", "endpoint", "dup"), c, strict=True)) for c in
                itertools.product(range(1, top + 1), range(len(_PIDS)), range(3), range(3), (0, 1), (0, 1))],
               sub_reference(rel.latest_supported))
        yield (f"AssignmentInfo, release {rel.name}",
               Formula(["v", "active", "standby", "hosts", "code", "map", "parts"], asg_formula(rel.latest_supported)),
               [dict(zip(("v", "active", "standby", "hosts", "code", "map", "parts"), c, strict=True)) for c in
                itertools.product(range(1, top + 1), range(3), range(2), range(2), (0, 3), (0, 1), (0, 1))],
               asg_reference(rel.latest_supported))
        yield (f"AssignmentInfo.of, release {rel.name}", Formula(["v", "cs"], asg_of_formula(rel.latest_supported)),
               [{"v": v, "cs": c} for v in range(-1, rel.latest_supported + 3) for c in (0, 1)],
               asg_of_reference(rel.latest_supported))


# What a release's decode() makes of bytes that are no encoding it wrote. Outcomes (``outcome``):
DECODED, PROBED = 0, 1  # every field of the version read; only the version and the supported version (probing)
SUB_UNKNOWN_VERSION, UNDERFLOW, NEGATIVE_ARRAY, NO_LAYOUT = 2, 3, 4, 5  # SubscriptionInfo.decode's refusals
ASG_UNKNOWN_VERSION, ASG_UNDECODABLE_VERSION, ASG_FAILED, ASG_CAPACITY = 6, 7, 8, 9  # AssignmentInfo.decode's
DAMAGE_WORDS = (-1, 0, 1, 2, 3, 4, 5, 12)  # the version word written: unknown below, each layout, unknown above
_SUB_PAYLOAD = {1: 32, 2: 37, 3: 41, 4: 41}  # bytes after the version word (one prev task, endpoint "h")
_ASG_PAYLOAD = {1: 16, 2: 38, 3: 42, 4: 46}  # (one active task, host "h" with partition t-0)


def streams_decode_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """``SubscriptionInfo.decode`` and ``AssignmentInfo.decode`` of each release on damaged bytes: a version word
    it does not know (below 1, above what it speaks, above the model's layouts), a buffer cut inside the version
    word or anywhere in the fields the version carries, bytes after the last field (ignored, as Kafka does), a
    negative array length (the endpoint's byte count; the active task count) and, for an assignment, malformed
    modified UTF-8 in a host name. Which exception, with the message naming the version where Kafka's does; the
    version and supported version read. The system only ever sends encodings a release wrote, so these refusals
    are reached here and in tests/kafka, nowhere else (the coverage map's never-run streams api.py lines)."""
    from reference_impl.streams_probing import api as s_api
    from reference_impl.streams_probing import jvm

    layouts = {w: w if 1 <= w <= CODEC_LAYOUTS else CODEC_LAYOUTS for w in DAMAGE_WORDS}  # unknown: the v4 fields

    def sub_payload(w: int, damage: int) -> bytes:
        info = s_api.SubscriptionInfo.of(layouts[w], CODEC_LAYOUTS, uuid.UUID(int=_PIDS[2]), [s_api.TaskId(0, 0)],
                                         [], "h")
        body = s_api.encode_subscription(info, CODEC_LAYOUTS)[4:]
        # damage 1: the endpoint's byte count -1 (new byte[-1]); the layouts from 2 on end with it and "h".
        return body[:-5] + struct.pack(">i", -1) if damage == 1 and layouts[w] >= 2 else body

    def asg_payload(w: int, damage: int) -> bytes:
        info = s_api.AssignmentInfo.of(layouts[w], CODEC_LAYOUTS, [s_api.TaskId(0, 0)], [],
                                       [(s_api.HostInfo("h", 1), [s_api.TopicPartition("t", 0)])])
        body = s_api.encode_assignment(info, CODEC_LAYOUTS)[4:]
        at = 4 if layouts[w] >= 3 else 0  # the active task count follows the supported version from 3 on
        if damage == 1:
            return body[:at] + struct.pack(">i", -1) + body[at + 4:]
        if damage == 2 and layouts[w] >= 2:  # the host name "h" (after its 2-byte length) made a lone 0xFF
            host = body.index(jvm.write_utf("h"))
            return body[:host + 2] + b"\xff" + body[host + 3:]
        return body

    def damaged(w: int, keep: int, payload: bytes) -> bytes:
        """The version word ``w`` and ``payload``: ``keep`` -1 cuts the version word itself; from 0, the payload
        bytes kept; past the payload, 3 extra bytes after it."""
        head = struct.pack(">i", w)
        if keep < 0:
            return head[:2]
        return head + (payload[:keep] if keep <= len(payload) else payload + b"xyz")

    def sub_formula(latest: int) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            w, keep, damage = x["w"], x["keep"], x["damage"]
            full = z3.If(w == 1, _SUB_PAYLOAD[1], z3.If(w == 2, _SUB_PAYLOAD[2], _SUB_PAYLOAD[3]))
            full = z3.If(z3.And(damage == 1, w >= 2), full - 1, full)
            known = z3.And(w >= 1, w <= latest)
            read = z3.If(keep < full, UNDERFLOW, z3.If(z3.And(damage == 1, w >= 2), NEGATIVE_ARRAY, DECODED))
            if latest < PROBEABLE:  # before 2.0 an unknown version is fatal
                outcome = z3.If(keep < 0, UNDERFLOW, z3.If(z3.Not(known), SUB_UNKNOWN_VERSION, read))
            else:  # a probing release reads an unknown version's supported version and nothing else
                outcome = z3.If(keep < 0, UNDERFLOW, z3.If(z3.Not(known), z3.If(keep < 4, UNDERFLOW, PROBED),
                                                           z3.If(w > CODEC_LAYOUTS, NO_LAYOUT, read)))
            ok = z3.Or(outcome == DECODED, outcome == PROBED)
            return {"outcome": outcome, "version": z3.If(ok, w, DONT_CARE),
                    "supported": z3.If(ok, z3.If(z3.Or(outcome == PROBED, w >= PROBEABLE), CODEC_LAYOUTS, UNKNOWN),
                                       DONT_CARE)}
        return build

    def sub_reference(latest: int) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            w, keep = x["w"], x["keep"]
            data = damaged(w, keep, sub_payload(w, x["damage"]))
            failed = {"version": DONT_CARE, "supported": DONT_CARE}
            try:
                got = s_api.decode_subscription(data, latest)
            except jvm.BufferUnderflowException:
                return {"outcome": UNDERFLOW, **failed}
            except jvm.NegativeArraySizeException as exc:
                return {"outcome": NEGATIVE_ARRAY if str(exc) == "-1" else CODEC_ERROR, **failed}
            except s_api.TaskAssignmentException as exc:
                msg = str(exc)
                if not msg.startswith(f"unable to decode subscription data: version={w}"):
                    return {"outcome": CODEC_ERROR, **failed}
                return {"outcome": NO_LAYOUT if "has no encoding" in msg else SUB_UNKNOWN_VERSION, **failed}
            probed = got.process_id is None and not 1 <= w <= latest
            return {"outcome": PROBED if probed else DECODED, "version": got.version,
                    "supported": got.latest_supported}
        return run

    def asg_formula(latest: int) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            w, keep, damage = x["w"], x["keep"], x["damage"]
            full = z3.If(w == 1, _ASG_PAYLOAD[1], z3.If(w == 2, _ASG_PAYLOAD[2],
                                                        z3.If(w == 3, _ASG_PAYLOAD[3], _ASG_PAYLOAD[4])))
            if latest < PROBEABLE:
                unknown: Any = ASG_UNKNOWN_VERSION
                known = z3.And(w >= 1, w <= latest)
            else:
                unknown, known = ASG_UNDECODABLE_VERSION, z3.And(w >= 1, w <= min(latest, CODEC_LAYOUTS))
            # Fields are read in order: a negative active count fails before a cut past it is noticed, a
            # malformed host name (versions 2 and later) before a cut past the host.
            capacity_at = z3.If(w >= PROBEABLE, 8, 4)
            # The bytes read up to the host name's end: (the supported version,) one active task, no standbys, one
            # host, the name's 2-byte length and "h".
            host_end = z3.If(w >= PROBEABLE, 27, 23)
            read = z3.If(z3.And(damage == 1, keep >= capacity_at), ASG_CAPACITY,
                         z3.If(z3.And(damage == 2, w >= 2, keep >= host_end), ASG_FAILED,
                               z3.If(keep < full, ASG_FAILED, DECODED)))
            outcome = z3.If(keep < 0, ASG_FAILED, z3.If(z3.Not(known), unknown, read))
            ok = outcome == DECODED
            return {"outcome": outcome, "version": z3.If(ok, w, DONT_CARE),
                    "supported": z3.If(ok, z3.If(w >= PROBEABLE, CODEC_LAYOUTS, UNKNOWN), DONT_CARE)}
        return build

    def asg_reference(latest: int) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            w, keep = x["w"], x["keep"]
            data = damaged(w, keep, asg_payload(w, x["damage"]))
            failed = {"version": DONT_CARE, "supported": DONT_CARE}
            try:
                got = s_api.decode_assignment(data, latest)
            except jvm.IllegalArgumentException as exc:
                return {"outcome": ASG_CAPACITY if str(exc) == "Illegal Capacity: -1" else CODEC_ERROR, **failed}
            except s_api.TaskAssignmentException as exc:
                msg = str(exc)
                if msg == "Failed to decode AssignmentInfo" and isinstance(exc.__cause__, jvm.IOException):
                    return {"outcome": ASG_FAILED, **failed}
                if msg == f"Unknown assignment data version: {w}":
                    return {"outcome": ASG_UNKNOWN_VERSION, **failed}
                if msg == f"Unable to decode assignment data: used version: {w}; latest supported version: {latest}":
                    return {"outcome": ASG_UNDECODABLE_VERSION, **failed}
                return {"outcome": CODEC_ERROR, **failed}
            return {"outcome": DECODED, "version": got.version, "supported": got.latest_supported}
        return run

    def domain(payload: Callable[[int, int], bytes], damages: Sequence[int]) -> list[Inputs]:
        out = []
        for w in DAMAGE_WORDS:
            for damage in damages:
                n = len(payload(w, damage))
                for keep in sorted({-1, 0, 2, 4, 7, 12, 20, 28, 29, 32, 33, n - 1, n, n + 3}):
                    if keep <= n + 3 and (damage == 0 or keep >= n - 1):
                        out.append({"w": w, "keep": keep, "damage": damage})
        return out

    for rel in RELEASES:
        latest = rel.latest_supported
        yield (f"SubscriptionInfo.decode of damaged bytes, release {rel.name}",
               Formula(["w", "keep", "damage"], sub_formula(latest)), domain(sub_payload, (0, 1)),
               sub_reference(latest))
        yield (f"AssignmentInfo.decode of damaged bytes, release {rel.name}",
               Formula(["w", "keep", "damage"], asg_formula(latest)), domain(asg_payload, (0, 1, 2)),
               asg_reference(latest))


# Kafka Streams releases by age and the rebalance-metadata version each speaks, restated from KIP-268 ("0.10.0
# ... version 1", "0.10.1 to 1.1 ... version 2", 2.0's version 3), Kafka 2.1's AssignmentInfo version 4 (the
# error code, post-2.0 here) and Kafka 3.9's StreamsAssignmentProtocolVersions.LATEST_SUPPORTED_VERSION (11).
# The reference's table (releases.py) is read by the spec and the Z3 model alike, so an edit to it is an edit to
# every copy: only this second copy, and a config that uses the release, sees one.
_KIP_RELEASES = (("0.10.0", 1), ("0.10.1", 2), ("0.10.2", 2), ("0.11.0", 2), ("1.0", 2), ("1.1", 2),
                 ("2.0", 3), ("post-2.0", 4), ("3.9", 11))


def streams_releases_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Each release (by the KIP's name) against the reference's ``release()``: the latest version it speaks,
    that it is older than the next release and not older than itself, and which versions it decodes (1 up to
    its latest)."""
    from reference_impl.streams_probing.releases import release

    def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        latest: Any = z3.IntVal(0)
        for k, (_name, version) in enumerate(_KIP_RELEASES):
            latest = z3.If(x["i"] == k, version, latest)
        return {"latest": latest, "older_than_next": z3.If(x["i"] < len(_KIP_RELEASES) - 1, 1, 0),
                "older_than_itself": 0, "decodes": z3.If(z3.And(x["v"] >= 1, x["v"] <= latest), 1, 0)}

    def reference(x: Inputs) -> Outputs:
        name = _KIP_RELEASES[x["i"]][0]
        rel = release(name)
        nxt = release(_KIP_RELEASES[x["i"] + 1][0]) if x["i"] + 1 < len(_KIP_RELEASES) else None
        return {"latest": rel.latest_supported, "older_than_next": int(nxt is not None and rel < nxt),
                "older_than_itself": int(rel < release(name)), "decodes": int(rel.can_decode(x["v"]))}

    domain = [{"i": i, "v": v} for i in range(len(_KIP_RELEASES)) for v in range(0, 13)]
    yield "releases", Formula(["i", "v"], build), domain, reference
    yield from _upgrade_from_cases()


# The upgrade.from values and the subscription version each forces, restated from KIP-268 ("upgrade.from"
# "0.10.0" forces version 1, "0.10.1" ... "1.1" force version 2) and Kafka: the KAFKA-6054 back-port gave the
# 0.10.1 ... 1.1 branches "0.10.0" alone (StreamPartitionAssignor.configure on those branches); 0.10.0 has no
# upgrade.from; Kafka 2.4+ (3.9 here, kafka profile) also accepts "2.0" ... "3.8", which leave the version alone
# (AssignorConfiguration.configuredMetadataVersion). None: the config unset (the release's latest version).
_KIP_UPGRADE_FROM = (("0.10.0", 1), ("0.10.1", 2), ("0.10.2", 2), ("0.11.0", 2), ("1.0", 2), ("1.1", 2))
_NEUTRAL_UPGRADE_FROM = tuple(f"2.{m}" for m in range(9)) + tuple(f"3.{m}" for m in range(9))
_PROFILES = ("kip", "kafka", "kafka-2.0")


# The refusals' messages: 0.10.0 has no upgrade.from at all (the model's own, Kafka would log an unknown config),
# and StreamsConfig's validator lists the values it accepts (ConfigDef.ValidString: "String must be one of: null,
# ...", in StreamsConfig's declaration order); OTHER_MESSAGE: neither, word for word.
NO_MESSAGE, NO_SUCH_CONFIG, NOT_ONE_OF, OTHER_MESSAGE = 0, 1, 2, 3


def _upgrade_from_message(rel: Any, value: str | None, profile: str, text: str) -> int:
    if text == f"Kafka Streams {rel.name} has no configuration upgrade.from (set to {value})":
        return NO_SUCH_CONFIG
    valid = (("0.10.0",) if rel.latest_supported < PROBEABLE
             else (*(v for v, _ in _KIP_UPGRADE_FROM),
                   *(_NEUTRAL_UPGRADE_FROM if rel.name == "3.9" and profile == "kafka" else ())))
    if text == (f"Invalid value {value} for configuration upgrade.from: String must be one of: "
                f"{', '.join(('null', *valid))}"):
        return NOT_ONE_OF
    return OTHER_MESSAGE


def _upgrade_from_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Every release x profile x upgrade.from value (unset, the KIP's six, Kafka's neutral eighteen, one nobody
    defines) against the reference's ``configured_metadata_version``: refused (a ``ConfigException``, and which
    message) or the version the instance starts with."""
    from reference_impl.streams_probing.releases import ConfigException, configured_metadata_version, release

    values: tuple[str | None, ...] = (None, *(v for v, _ in _KIP_UPGRADE_FROM), *_NEUTRAL_UPGRADE_FROM, "0.9.0")
    kip_count = len(_KIP_UPGRADE_FROM)
    neutral_end = 1 + kip_count + len(_NEUTRAL_UPGRADE_FROM)

    def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        i, p, u = x["i"], x["p"], x["u"]
        latest: Any = z3.IntVal(0)
        for k, (_name, version) in enumerate(_KIP_RELEASES):
            latest = z3.If(i == k, version, latest)
        forced: Any = latest  # a neutral value forces nothing
        for k, (_value, version) in enumerate(_KIP_UPGRADE_FROM):
            forced = z3.If(u == 1 + k, version, forced)
        probing, pre20 = latest >= PROBEABLE, z3.And(latest > 1, latest < PROBEABLE)
        kip_value = z3.And(u >= 1, u <= kip_count)
        neutral = z3.And(u > kip_count, u < neutral_end)
        three_nine = i == len(_KIP_RELEASES) - 1
        accepted = z3.Or(u == 0, z3.And(pre20, u == 1), z3.And(probing, kip_value),
                         z3.And(three_nine, p == _PROFILES.index("kafka"), neutral))
        return {"accepted": z3.If(accepted, 1, 0),
                "version": z3.If(accepted, z3.If(forced < latest, forced, latest), 0),
                "message": z3.If(accepted, NO_MESSAGE, z3.If(latest == 1, NO_SUCH_CONFIG, NOT_ONE_OF))}

    def reference(x: Inputs) -> Outputs:
        rel, value, profile = release(_KIP_RELEASES[x["i"]][0]), values[x["u"]], _PROFILES[x["p"]]
        try:
            version = configured_metadata_version(rel, value, profile)
        except ConfigException as exc:
            return {"accepted": 0, "version": DONT_CARE, "message": _upgrade_from_message(rel, value, profile,
                                                                                          str(exc))}
        return {"accepted": 1, "version": version, "message": NO_MESSAGE}

    domain = [{"i": i, "p": p, "u": u} for i in range(len(_KIP_RELEASES)) for p in range(len(_PROFILES))
              for u in range(len(values))]
    yield "upgrade.from", Formula(["i", "p", "u"], build), domain, reference


# The full domains (benchmarks/prove.py) and the gate's (a z3 cell within seconds: groups of two). Every assignor
# mutation in both: uncapped_adopt is Kafka 2.1.0 / 2.1.1's leader (STR-M4), and the variants' leaders are only
# as good as the branches no explored state of theirs reaches.
DECISIONS = DecisionRules(
    full={"streams_assign": streams_assign_cases, "streams_on_assignment": streams_on_assignment_cases,
          "streams_codec": streams_codec_cases, "streams_decode": streams_decode_cases,
          "streams_tasks": streams_tasks_cases, "streams_releases": streams_releases_cases},
    gate={"streams_assign": lambda: streams_assign_cases(max_members=2),
          "streams_on_assignment": streams_on_assignment_cases, "streams_codec": streams_codec_cases,
          "streams_decode": streams_decode_cases, "streams_tasks": streams_tasks_cases,
          "streams_releases": streams_releases_cases},
)
