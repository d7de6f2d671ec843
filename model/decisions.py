"""Differential checks of decision rules: a Z3 formula per rule against the reference, over a bounded domain.

Each rule is written as Z3 terms over symbolic inputs (an independent restatement of the KIP / Kafka rule).
:func:`differential` enumerates the whole bounded input domain, evaluates the terms on each input
(``substitute`` + ``simplify``: the formula is built once) and compares them with the reference called on
the same input; the first disagreement is reported as a concrete input with both outputs.

Rules:

* ``streams_assign``: the Kafka Streams leader's ``assign()`` (reference_impl/streams_probing/api.py): the
  used version, the supported version it encodes, what a future member gets, the error assignment, the
  follow-up rebalance, and when the leader fails; per leader release, profile and assignor mutation.
* ``streams_on_assignment``: a Kafka Streams member's ``onAssignment()`` (api.py ``on_assignment``) on every
  reply (used, received and supported version, error code), per member release and profile: the member step,
  the version it uses next, whether it rejoins, and the failure it raises; the Z3 side is the transition
  relation's own chain (model/streams_probing.py ``on_assignment_outcomes``).
* ``streams_codec``: what each release's ``SubscriptionInfo`` / ``AssignmentInfo`` ``encode()`` writes, its own
  ``decode()`` reads back (the fields each version carries), and a version above what it speaks is refused.
* ``mv_lossless``: KIP-778's lossless-downgrade rule over each catalog (reference_impl/metadata_version/catalog.py).
* ``mv_catalog``: the catalogs' own rules (reference_impl/metadata_version/catalog.py): Kafka's level numbering,
  KRaft support, ``previous()``, and that printed names and KRaft levels read back to their member, per release.
* ``mv_update``: the active controller's decision on a ``metadata.version`` update (api.py QuorumController), per
  profile and Kafka release (3.9 / 4.0), catalog, dry run.
* ``mv_request``: the answers ControllerApis.handleUpdateFeatures gives before the decision (authorization, not
  the active controller, a feature named twice) and what their messages name.
* ``format_storage``: ``kafka-storage format --metadata-version`` (reference_impl/metadata_version/api.py
  format_storage): the level a new cluster bootstraps at, or a refusal; per profile and Kafka release.
* ``mv_activation``: KIP-778 "Initialization" (bootstrap_metadata_version, activation_metadata_version): the
  bootstrap record an activating controller writes and the version it runs at, for empty and non-empty logs.
* ``zk_triggers``: KIP-866's triggers (reference_impl/zk_migration/api.py): activation, bootstrap, ZK broker
  registration, the /controller_epoch take-over, the driver's valid state changes; and the driver helpers no
  config varies: ``isLeader``, ``onControllerChange`` and ``PollEvent``, the copy's record batches, the two
  image events for an image behind /migration or an event made under another leader, and the KIP's four-valued
  ``ZkMigrationState`` metric.
* ``version_range``: KIP-584's version ranges (reference_impl/features/api.py): which (min, max) the
  SupportedVersionRange and FinalizedVersionRange constructors accept, a level's membership, and a finalized
  range's incompatibility with a supported one.
* ``finalized_cache``: a broker's FinalizedFeatureCache (reference_impl/features/api.py): an update's
  acceptance by epoch and compatibility, the epoch cached after it, and ``waitUntilEpochOrThrow``'s condition.
* ``admin_update``: the Admin client's checks before an UpdateFeatures request is sent (a level below 1
  needs allowDowngrade, no empty map, no empty feature name) and the request it sends.
* ``feature_znode``: Kafka 2.8's ``FeatureZNode.decode`` on well-formed and malformed /feature JSON (32-bit
  edges of every int, a missing or mistyped key): the exception class it throws, or the node it decodes.
* ``features_update``: one UpdateFeatures update at the controller (reference_impl/features/api.py): the
  error code and the finalized range written (or the deletion), for the existing range, the level, the
  allowDowngrade flag, the controller's own supported range and the live brokers' ranges; per profile.
"""

from __future__ import annotations

import itertools
import json
import struct
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from reference_impl.features.api import (
    AdminFeatureUpdate,
    Errors,
    FeatureCacheUpdateException,
    FeatureController,
    FeatureUpdate,
    FeatureZNode,
    FeatureZNodeStatus,
    FinalizedFeatureCache,
    FinalizedFeaturesAndEpoch,
    FinalizedVersionRange,
    JsonMappingException,
    SupportedVersionRange,
    UpdateFeaturesRequest,
    admin_update_features_request,
)
from reference_impl.metadata_version import api as mv_api
from reference_impl.metadata_version import catalog as mv_catalog
from reference_impl.metadata_version.api import (
    BrokerRegistration,
    DowngradeType,
    MetaProperties,
    QuorumController,
    VersionRange,
    activation_metadata_version,
    bootstrap_metadata_version,
    format_storage,
    request,
)
from reference_impl.metadata_version.catalog import CATALOGS, FEATURE_NAME
from reference_impl.streams_probing.api import IllegalStateException, SubscriptionInfo, TaskAssignmentException
from reference_impl.streams_probing.api import assign as ref_assign
from reference_impl.streams_probing.releases import RELEASES
from reference_impl.zk_migration import api as zk_api

Inputs = dict[str, int]
Outputs = dict[str, int]


@dataclass
class Disagreement:
    rule: str
    case: str  # the Python-level parameters (release, profile, mutation ...)
    inputs: Inputs
    reference: Outputs
    formula: Outputs

    def __str__(self) -> str:
        diff = {k: (self.reference.get(k), self.formula.get(k)) for k in sorted(set(self.reference) | set(self.formula))
                if self.reference.get(k) != self.formula.get(k)}
        return (f"{self.rule} [{self.case}] disagrees on {self.inputs}: reference {self.reference}, "
                f"formula {self.formula} (reference, formula) per output: {diff}")


@dataclass
class DifferentialResult:
    rule: str
    cases: int = 0
    inputs: int = 0
    seconds: float = 0.0
    disagreement: Disagreement | None = None

    @property
    def ok(self) -> bool:
        return self.disagreement is None


class Formula:
    """A rule's Z3 terms over named Int inputs. Evaluated on concrete inputs by a closure compiled once from
    the Z3 terms (the same terms a solver would see), which is ~1000 times faster than substitution."""

    def __init__(self, names: Sequence[str], build: Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]) -> None:
        self.vars = {n: z3.Int(n) for n in names}
        self.outputs = {k: (t if isinstance(t, z3.ExprRef) else z3.IntVal(int(t)))
                        for k, t in build(self.vars).items()}
        self.compiled = {k: _compile(t) for k, t in self.outputs.items()}

    def eval(self, inputs: Inputs) -> Outputs:
        return {k: int(f(inputs)) for k, f in self.compiled.items()}


_OPS: dict[int, Callable[[list[Any]], Any]] = {
    z3.Z3_OP_AND: all, z3.Z3_OP_OR: any,
    z3.Z3_OP_NOT: lambda a: not a[0], z3.Z3_OP_EQ: lambda a: a[0] == a[1],
    z3.Z3_OP_DISTINCT: lambda a: len(set(a)) == len(a),
    z3.Z3_OP_LT: lambda a: a[0] < a[1], z3.Z3_OP_LE: lambda a: a[0] <= a[1],
    z3.Z3_OP_GT: lambda a: a[0] > a[1], z3.Z3_OP_GE: lambda a: a[0] >= a[1],
    z3.Z3_OP_ADD: sum, z3.Z3_OP_SUB: lambda a: a[0] - sum(a[1:]), z3.Z3_OP_UMINUS: lambda a: -a[0],
    z3.Z3_OP_IMPLIES: lambda a: (not a[0]) or a[1],
}


def _compile(t: z3.ExprRef) -> Callable[[Inputs], Any]:
    """A Python closure evaluating a quantifier-free Int/Bool Z3 term on named inputs."""
    cache: dict[int, Callable[[Inputs], Any]] = {}

    def go(e: z3.ExprRef) -> Callable[[Inputs], Any]:
        key = e.get_id()
        if key in cache:
            return cache[key]
        k = e.decl().kind()
        f: Callable[[Inputs], Any]
        if z3.is_int_value(e):
            val = e.as_long()
            f = lambda x, val=val: val  # noqa: E731
        elif z3.is_true(e) or z3.is_false(e):
            val_b = z3.is_true(e)
            f = lambda x, val_b=val_b: val_b  # noqa: E731
        elif k == z3.Z3_OP_UNINTERPRETED and e.num_args() == 0:
            name = e.decl().name()
            f = lambda x, name=name: x[name]  # noqa: E731
        elif k == z3.Z3_OP_ITE:
            c, a, b = (go(e.arg(i)) for i in range(3))
            f = lambda x, c=c, a=a, b=b: a(x) if c(x) else b(x)  # noqa: E731
        elif k in _OPS:
            op, args = _OPS[k], [go(e.arg(i)) for i in range(e.num_args())]
            f = lambda x, op=op, args=args: op([g(x) for g in args])  # noqa: E731
        else:
            raise NotImplementedError(f"no evaluator for Z3 operator {e.decl()}")
        cache[key] = f
        return f

    return go(t)


def differential(rule: str, cases: Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]
                 ) -> DifferentialResult:
    """Compare formula and reference on every input of every case; stop at the first disagreement."""
    res = DifferentialResult(rule)
    t0 = time.perf_counter()
    for case, formula, domain, reference in cases:
        res.cases += 1
        for inputs in domain:
            res.inputs += 1
            ref, mine = reference(inputs), formula.eval(inputs)
            # Outputs the reference marks as irrelevant (-99) are not compared (e.g. assignments when the
            # leader fails).
            if any(ref[k] != mine[k] for k in ref if ref[k] != DONT_CARE):
                res.disagreement = Disagreement(rule, case, inputs, ref, mine)
                res.seconds = time.perf_counter() - t0
                return res
    res.seconds = time.perf_counter() - t0
    return res


DONT_CARE = -99


# --------------------------------------------------------------------------- Kafka Streams assign()

PROBEABLE = 3
UNKNOWN = -1
ASSIGN_MUTATIONS = ("", "leader_fails_on_future", "assign_at_leader_version", "no_leader_follow_up",
                    "leader_supported_is_used", "commonly_supported_is_max")
LEADER_FAILS, ASSIGNED, ERROR_ASSIGNMENT = 1, 0, 2


def streams_assign_formula(leader_latest: int, profile: str, mutation: str, n: int) -> Formula:
    """KIP-268 "Detailed upgrade protocol" / "Future upgrades" and today's assignor (``kafka``)."""
    names = [f"{f}{i}" for i in range(n) for f in ("v", "lat")]

    def build(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        L, kip, probing = leader_latest, profile == "kip", leader_latest >= PROBEABLE
        v = [x[f"v{i}"] for i in range(n)]
        sup = [z3.If(v[i] >= PROBEABLE, x[f"lat{i}"], UNKNOWN) for i in range(n)]
        future = [v[i] > L for i in range(n)]
        any_future = z3.Or(future)

        def fold(xs: list[Any], start: int, better: Callable[[Any, Any], Any]) -> Any:
            acc: Any = z3.IntVal(start)
            for e in xs:
                acc = z3.If(better(e, acc), e, acc)
            return acc

        min_received = fold(v, L, lambda a, b: a < b)
        if mutation == "commonly_supported_is_max" and L >= 4:  # a 2.0 leader has no such field (see assign)
            min_supported = fold(sup, L, lambda a, b: a > b)
        else:
            min_supported = fold(sup, L, lambda a, b: a < b)
        # A pre-2.0 leader cannot decode a newer subscription; a probing leader fails when it meets a future
        # and a pre-2.0 subscription at once (kafka leaders speaking 4+ send an error assignment instead).
        incompatible = z3.And(any_future, min_received < PROBEABLE)
        fails = z3.Or(z3.And(not probing, any_future), z3.And(mutation == "leader_fails_on_future", any_future),
                      z3.And(incompatible, not (profile == "kafka" and L >= 4)))
        error = z3.And(z3.Not(fails), incompatible)
        used = z3.IntVal(L) if mutation == "assign_at_leader_version" else min_received
        out: dict[str, Any] = {}
        if kip or not probing:
            supported = z3.If(used >= PROBEABLE, used if mutation == "leader_supported_is_used" else L, UNKNOWN)
            for i in range(n):
                out[f"version{i}"] = z3.If(future[i], L, used)
                out[f"supported{i}"] = z3.If(future[i], L, supported)
            follow = z3.And(probing, z3.Not(any_future), L > used, mutation != "no_leader_follow_up",
                            *(z3.And(sup[i] != UNKNOWN, sup[i] > used) for i in range(n)))
        else:
            for i in range(n):
                out[f"version{i}"] = used
                out[f"supported{i}"] = z3.If(used >= PROBEABLE, min_supported, UNKNOWN)
            follow = any_future
        for i in range(n):
            out[f"version{i}"] = z3.If(error, L, out[f"version{i}"])
            out[f"supported{i}"] = z3.If(error, L, out[f"supported{i}"])
            out[f"error{i}"] = z3.If(error, 3, 0)
        return {"outcome": z3.If(fails, LEADER_FAILS, z3.If(error, ERROR_ASSIGNMENT, ASSIGNED)),
                "used": z3.If(error, L, used), "follow_up": z3.And(z3.Not(error), follow),
                "version_probing": any_future, **out}

    return Formula(names, build)


def streams_assign_reference(leader: Any, profile: str, mutation: str, n: int) -> Callable[[Inputs], Outputs]:
    muts = frozenset({mutation} - {""})

    def run(x: Inputs) -> Outputs:
        subs = {str(i): SubscriptionInfo.of(x[f"v{i}"], x[f"lat{i}"]) for i in range(n)}
        try:
            g = ref_assign(leader, profile, subs, mutations=muts)
        except (TaskAssignmentException, IllegalStateException):
            out = {"outcome": LEADER_FAILS, "used": DONT_CARE, "follow_up": DONT_CARE, "version_probing": DONT_CARE}
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
    """Every leader release x profile x mutation x member count; members range over every release's
    latest version and every version it can send."""
    latests = sorted({r.latest_supported for r in RELEASES})
    member = [(v, lat) for lat in latests for v in range(1, lat + 1)]
    for leader in RELEASES:
        for profile in ("kip", "kafka"):
            if leader.name == "3.9" and profile == "kip":
                continue  # release 3.9 exists in the kafka profile only
            for mutation in mutations:
                for n in range(1, max_members + 1):
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
    leader's version."""
    from reference_impl.streams_probing import api as s_api

    def build(n: int, per_task: int) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            k = x["k"]
            out: dict[str, Any] = {}
            for i in range(n):
                dealt = [k > j for j in range(i, STREAMS_TASKS, n)]
                out[f"active{i}"] = z3.Sum([z3.If(d, 1, 0) for d in dealt]) if dealt else 0
                out[f"parts{i}"] = z3.Sum([z3.If(d, per_task, 0) for d in dealt]) if dealt else 0
                out[f"dealt{i}"] = 1  # the sorted tasks i, i + n, ...
                out[f"ordered{i}"] = 1  # their partitions, task by task
            return out
        return outputs

    def reference(leader: Any, profile: str, n: int, per_task: int) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            tasks = [s_api.TaskId(0, j) for j in range(x["k"])][::-1]  # handed over unsorted
            parts = {t: [s_api.TopicPartition(f"t{t.partition}", q) for q in range(per_task)] for t in tasks}
            subs = {f"m{i}": SubscriptionInfo.of(leader.latest_supported, leader.latest_supported)
                    for i in range(n)}
            g = ref_assign(leader, profile, subs, tasks, partitions_for_task=parts)
            out: dict[str, int] = {}
            ordered_tasks = sorted(tasks)
            for i in range(n):
                a = g.assignments[f"m{i}"]
                out[f"active{i}"] = len(a.active_tasks)
                out[f"parts{i}"] = len(a.partitions)
                out[f"dealt{i}"] = int(list(a.active_tasks) == ordered_tasks[i::n])
                out[f"ordered{i}"] = int(list(a.partitions) == [p for t in a.active_tasks for p in parts[t]])
            return out
        return run

    for leader in RELEASES:
        for profile in ("kip", "kafka", "kafka-2.0"):
            if leader.name == "3.9" and profile != "kafka":
                continue  # release 3.9 exists in the kafka profile only
            for n in (1, 2):
                for per_task in (1, 2):
                    yield (f"leader {leader.name}, {profile}, {n} members, {per_task} partitions a task",
                           Formula(["k"], build(n, per_task)), [{"k": k} for k in range(STREAMS_TASKS + 1)],
                           reference(leader, profile, n, per_task))


# --------------------------------------------------------------------------- Kafka Streams onAssignment()

# The member step a reply leads to (the transition system's action names), as an output code.
ON_ASSIGNMENT_STEPS = ("OnAssignment", "ProbeDowngrade", "AdoptSupportedVersion", "AssignmentFailure", "ErrorShutdown",
                       "LeaderFollowUpRebalance")
_STEP_OF_OUTCOME = {"NONE": 0, "PROBE_DOWNGRADE": 1, "ADOPT_SUPPORTED": 2}


def streams_on_assignment_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """A member's ``on_assignment`` on every reply it could be handed: per member release and profile, every
    used version it can send, every received version (one past the newest release's too), every supported version
    (UNKNOWN included) and every error code (and one no ``AssignorError`` names, which today's member refuses with
    "Hit an unrecognized exception during rebalance"). The Z3 side is the transition relation's own chain
    (``model.streams_probing.on_assignment_outcomes``) folded into terms: the rule reaches the branches no config's
    states reach (an assignment above the version sent, a supported version above the member's own, an error code
    the leader of a config never sends)."""
    # model.streams_probing imports this module (gate_differential): import it when the cases are asked for.
    from model.streams_probing import FAILURES, on_assignment_outcomes, parse_failure
    from reference_impl.streams_probing.api import AssignmentInfo, AssignorError, MemberOutcome, on_assignment

    top = max(r.latest_supported for r in RELEASES) + 1
    names = ("used", "received", "supported", "err")

    def build(rel: Any, profile: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            def fail(kind: int, a: Any = 0, b: Any = 0) -> dict[str, Any]:
                return {"used": DONT_CARE, "rejoin": 0, "kind": kind, "a": a, "b": b}

            def done(new_used: Any, rebalance: Any) -> dict[str, Any]:
                return {"used": new_used, "rejoin": z3.If(rebalance, 1, 0), "kind": 0, "a": 0, "b": 0}

            trigger = z3.BoolVal(False)  # the leader's follow-up trigger is the system's, not the member's
            none = [("OnAssignment", True, done(x["used"], False))]
            chain = on_assignment_outcomes(profile, frozenset(), rel, x["received"], x["supported"], x["err"],
                                           x["used"], none, trigger, fail, done)
            out: dict[str, Any] = {k: z3.IntVal(DONT_CARE) for k in ("step", "used", "rejoin", "kind", "a", "b")}
            for cond, outcomes in reversed(chain):
                picked = {k: z3.IntVal(DONT_CARE) for k in out}
                for name, sub, eff in reversed(outcomes):
                    values = {**{k: z3.IntVal(v) if isinstance(v, int) else v for k, v in eff.items()},
                              "step": z3.IntVal(ON_ASSIGNMENT_STEPS.index(name))}
                    picked = {k: z3.If(sub, values[k], picked[k]) for k in out}
                out = {k: z3.If(cond, picked[k], out[k]) for k in out}
            return out
        return outputs

    def reference(rel: Any, profile: str) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            info = AssignmentInfo(x["received"], x["supported"], error=x["err"])  # an unknown code stays an int
            try:
                upd = on_assignment(rel, profile, x["used"], info)
            except (TaskAssignmentException, IllegalStateException) as exc:
                kind, a, b = parse_failure(f"member: {exc}")
                return {"step": ON_ASSIGNMENT_STEPS.index("AssignmentFailure"), "used": DONT_CARE, "rejoin": 0,
                        "kind": kind, "a": a, "b": b}
            if upd.outcome is MemberOutcome.ERROR_SHUTDOWN:
                return {"step": ON_ASSIGNMENT_STEPS.index("ErrorShutdown"), "used": DONT_CARE, "rejoin": 0,
                        "kind": 8, "a": int(upd.error), "b": 0}
            return {"step": _STEP_OF_OUTCOME[upd.outcome.name], "used": upd.used_version, "rejoin": int(upd.rebalance),
                    "kind": 0, "a": 0, "b": 0}
        return run

    assert 5 in FAILURES and 8 in FAILURES  # the failure kinds the reference side maps to
    for rel in RELEASES:
        for profile in ("kip", "kafka", "kafka-2.0"):
            if rel.name == "3.9" and profile != "kafka":
                continue  # release 3.9 exists in the kafka profile only
            domain = ({"used": u, "received": r, "supported": s, "err": e}
                      for u in range(1, rel.latest_supported + 1) for r in range(1, top + 1)
                      for s in (UNKNOWN, *range(1, top + 1)) for e in range(len(AssignorError) + 1))  # + unknown
            yield (f"member {rel.name}, {profile}", Formula(names, build(rel, profile)), domain,
                   reference(rel, profile))


# --------------------------------------------------------------------------- Kafka Streams wire formats

# The layouts Kafka's SubscriptionInfo / AssignmentInfo had up to 2.1 (versions 1 to 4); later versions pass the
# system's fields without bytes (reference_impl/streams_probing/system.py).
CODEC_LAYOUTS = 4
CODEC_ERROR = -5  # the reference raised, or gave back a value that is none of the inputs'
_PIDS = (0, 1, (1 << 64) + 5)  # process ids as UUID ints: zero, low half only, both halves
_TASKS = ((0, 0), (1, 2), (2, 1))
_ENDPOINT = "host:9092"


def streams_codec_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """What a release's ``encode()`` writes its own ``decode()`` reads back (SubscriptionInfoTest and
    AssignmentInfoTest's round trips), per release and version: every field the version carries comes back (the
    supported version from 3 on, the endpoint from 2 on, the error code from 4 on), and a version above what the
    release speaks is refused. The system carries only the version, the supported version and the error code
    between members; a field written at the wrong offset (the process id, the task sets, the endpoint, the
    partitions) is seen here, not only by tests/kafka."""
    from reference_impl.streams_probing import api as s_api

    def tasks(n: int) -> list[Any]:
        return [s_api.TaskId(*t) for t in _TASKS[:n]]

    def sub_formula(latest: int) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            v = x["v"]
            return {"error": v > min(latest, CODEC_LAYOUTS), "version": v,
                    "supported": z3.If(v >= PROBEABLE, latest, UNKNOWN), "pid": x["pid"], "prev": x["prev"],
                    "standby": x["standby"], "endpoint": z3.If(v >= 2, x["endpoint"], 0)}
        return build

    def sub_reference(latest: int) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            try:
                info = s_api.SubscriptionInfo.of(x["v"], latest, uuid.UUID(int=_PIDS[x["pid"]]), tasks(x["prev"]),
                                                 tasks(x["standby"])[::-1], _ENDPOINT if x["endpoint"] else None)
                got = s_api.decode_subscription(s_api.encode_subscription(info, latest), latest)
            except (s_api.TaskAssignmentException, s_api.IllegalArgumentException, s_api.IllegalStateException):
                return {"error": 1, **dict.fromkeys(("version", "supported", "pid", "prev", "standby", "endpoint"),
                                                    DONT_CARE)}
            pid = got.process_id.int if got.process_id is not None else None
            return {"error": 0, "version": got.version, "supported": got.latest_supported,
                    "pid": _PIDS.index(pid) if pid in _PIDS else CODEC_ERROR,
                    "prev": len(got.prev_tasks) if set(got.prev_tasks) == set(tasks(len(got.prev_tasks)))
                    else CODEC_ERROR,
                    "standby": len(got.standby_tasks) if set(got.standby_tasks) == set(tasks(len(got.standby_tasks)))
                    else CODEC_ERROR,
                    "endpoint": {None: 0, _ENDPOINT: 1}.get(got.user_endpoint, CODEC_ERROR)}
        return run

    def asg_formula(latest: int) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            v = x["v"]
            return {"error": v > min(latest, CODEC_LAYOUTS), "version": v,
                    "supported": z3.If(v >= PROBEABLE, latest, UNKNOWN), "active": x["active"],
                    "standby": x["standby"], "hosts": z3.If(v >= 2, x["hosts"], 0),
                    "code": z3.If(v >= 4, x["code"], 0)}
        return build

    partitions = [s_api.TopicPartition("t", 0), s_api.TopicPartition("t", 1)]

    def asg_reference(latest: int) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            try:
                info = s_api.AssignmentInfo.of(
                    x["v"], latest, tasks(x["active"]), [(t, partitions[:1]) for t in tasks(x["standby"])],
                    [(s_api.HostInfo("host", 9092 + i), partitions[i:]) for i in range(x["hosts"])],
                    error=s_api.AssignorError(x["code"]))
                got = s_api.decode_assignment(s_api.encode_assignment(info, latest), latest)
            except (s_api.TaskAssignmentException, s_api.IllegalArgumentException, s_api.IllegalStateException):
                return {"error": 1, **dict.fromkeys(("version", "supported", "active", "standby", "hosts", "code"),
                                                    DONT_CARE)}
            hosts = [(h.host, h.port) for h, _ in got.partitions_by_host]
            return {"error": 0, "version": got.version, "supported": got.latest_supported,
                    "active": len(got.active_tasks) if list(got.active_tasks) == tasks(len(got.active_tasks))
                    else CODEC_ERROR,
                    "standby": len(got.standby_tasks) if [t for t, _ in got.standby_tasks] == tasks(
                        len(got.standby_tasks)) else CODEC_ERROR,
                    "hosts": len(hosts) if sorted(hosts) == [("host", 9092 + i) for i in range(len(hosts))]
                    else CODEC_ERROR,
                    "code": int(got.error)}
        return run

    for rel in RELEASES:
        top = min(rel.latest_supported, CODEC_LAYOUTS) + 1  # one version past what the release encodes
        yield (f"SubscriptionInfo, release {rel.name}",
               Formula(["v", "pid", "prev", "standby", "endpoint"], sub_formula(rel.latest_supported)),
               [dict(zip(("v", "pid", "prev", "standby", "endpoint"), c, strict=True)) for c in itertools.product(
                   range(1, top + 1), range(len(_PIDS)), range(3), range(3), (0, 1))],
               sub_reference(rel.latest_supported))
        yield (f"AssignmentInfo, release {rel.name}",
               Formula(["v", "active", "standby", "hosts", "code"], asg_formula(rel.latest_supported)),
               [dict(zip(("v", "active", "standby", "hosts", "code"), c, strict=True)) for c in itertools.product(
                   range(1, top + 1), range(3), range(2), range(2), (0, 3))],
               asg_reference(rel.latest_supported))


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

    def cut(payload: bytes, keep: int) -> bytes | None:
        """``keep``: -1 cuts the version word itself; from 0, payload bytes kept; past the payload, 3 extra bytes."""
        return None if keep > len(payload) + 3 else payload[:keep] if keep <= len(payload) else payload + b"xyz"

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
            data = struct.pack(">i", w)[:2] if keep < 0 else struct.pack(">i", w) + cut(sub_payload(w, x["damage"]),
                                                                                       keep)  # type: ignore[operator]
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
            data = struct.pack(">i", w)[:2] if keep < 0 else struct.pack(">i", w) + cut(asg_payload(w, x["damage"]),
                                                                                       keep)  # type: ignore[operator]
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


# --------------------------------------------------------------------------- features UpdateFeatures

INVALID_REQUEST, FEATURE_UPDATE_FAILED = 42, 96


@dataclass(frozen=True)
class UpdateOutcome:
    error: Any  # Int term: 0, INVALID_REQUEST or FEATURE_UPDATE_FAILED
    present: Any  # Bool term: the feature is finalized after the request
    min: Any  # Int terms: its range after the request (0, 0 when absent)
    max: Any


def features_update_rule(profile: str, has_e: Any, emin: Any, emax: Any, y: Any, allow: Any, has_o: Any, olo: Any,
                         brokers: Sequence[tuple[Any, Any, Any, Any]], mutations: frozenset[str] = frozenset()
                         ) -> UpdateOutcome:
    """KIP-584 "Validations" (kip) and KafkaController.validateFeatureUpdate (kafka) for one update of a
    feature: ``has_e`` / ``emin`` / ``emax`` its finalized range (if any), ``y`` the level (< 1: delete),
    ``allow`` the allowDowngrade flag, ``has_o`` / ``olo`` the controller binary's support and minimum,
    ``brokers`` (live, supports, lo, hi) per broker. Shared by the system encoding (model/features.py)."""
    kafka = profile == "kafka"
    unchecked = "allow_downgrade_unchecked" in mutations
    incompatible_code = INVALID_REQUEST if kafka else FEATURE_UPDATE_FAILED
    new_min = z3.If(has_o, olo, 1) if kafka else z3.If(has_e, emin, 1)

    def rejects(live: Any, has: Any, lo: Any, hi: Any) -> Any:
        inside = z3.And(lo <= new_min, y <= hi) if kafka else z3.And(lo <= y, y <= hi)
        return z3.And(live, z3.Or(z3.Not(has), z3.Not(inside)))

    rejected = z3.Or([rejects(*b) for b in brokers] or [z3.BoolVal(False)])
    if "skip_range_check" in mutations:
        rejected = z3.BoolVal(False)
    chain: list[tuple[Any, int]] = [
        (z3.And(y < 1, z3.Not(allow), not unchecked), INVALID_REQUEST),
        (z3.And(y < 1, z3.Not(has_e)), INVALID_REQUEST),  # Kafka: "Can not delete non-existing finalized feature"
        (y < 1, 0),  # deletion "without any guarding checks on feature versions"
        (z3.And(has_e, y == emax), INVALID_REQUEST),
        (z3.And(has_e, y < emax, z3.Not(allow), not unchecked), INVALID_REQUEST),
        (z3.And(has_e, y > emax, allow, kafka), INVALID_REQUEST),  # Kafka only
        (z3.And(has_e, y < emin), INVALID_REQUEST if kafka else FEATURE_UPDATE_FAILED),
    ]
    if kafka:  # the controller's own binary must support the level
        chain += [(z3.Not(has_o), INVALID_REQUEST), (y < olo, INVALID_REQUEST)]
    chain += [(rejected, incompatible_code), (z3.BoolVal(True), 0)]
    err: Any = z3.IntVal(0)
    for cond, code in reversed(chain):
        err = z3.If(cond, code, err)
    ok = err == 0
    present = z3.If(ok, y >= 1, has_e)
    return UpdateOutcome(err, present, z3.If(present, z3.If(ok, new_min, emin), 0),
                         z3.If(present, z3.If(ok, y, emax), 0))


def features_update_formula(profile: str, brokers: int) -> Formula:
    """:func:`features_update_rule` over named Int inputs (flags as 0 / 1)."""
    names = ["has_e", "emin", "emax", "y", "allow", "has_o", "olo", "ohi",
             *(f"{f}{i}" for i in range(brokers) for f in ("has_b", "blo", "bhi"))]

    def build(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        r = features_update_rule(profile, x["has_e"] == 1, x["emin"], x["emax"], x["y"], x["allow"] == 1,
                                 x["has_o"] == 1, x["olo"],
                                 [(z3.BoolVal(True), x[f"has_b{i}"] == 1, x[f"blo{i}"], x[f"bhi{i}"])
                                  for i in range(brokers)])
        return {"error": r.error, "present": r.present, "min": r.min, "max": r.max}

    return Formula(names, build)


def features_update_reference(profile: str, brokers: int) -> Callable[[Inputs], Outputs]:
    def run(x: Inputs) -> Outputs:
        feats = (("f", FinalizedVersionRange(x["emin"], x["emax"])),) if x["has_e"] else ()
        node = FeatureZNode(FeatureZNodeStatus.ENABLED, feats, 1)
        own = (("f", SupportedVersionRange(x["olo"], x["ohi"])),) if x["has_o"] else ()
        live = tuple((i, (("f", SupportedVersionRange(x[f"blo{i}"], x[f"bhi{i}"])),) if x[f"has_b{i}"] else ())
                     for i in range(brokers))
        ctl = FeatureController(node, live, own, profile=profile)
        resp, after = ctl.update_features(UpdateFeaturesRequest((FeatureUpdate("f", x["y"], bool(x["allow"])),)))
        assert after.node is not None
        r = after.node.get("f")
        return {"error": int(resp.results[0].error), "present": int(r is not None),
                "min": r.min_version_level if r else 0, "max": r.max_version_level if r else 0}

    return run


# What a features top-level answer's message is (``names``): Kafka's default message of the error, one per answer.
FEAT_REQUEST_MESSAGES = ("", "Cluster authorization failed.", "This is not the correct controller for this cluster.",
                         "Feature versioning system is disabled.", "A feature may appear only once in a request.")
FEAT_EMPTY_NAME = "Feature name can not be empty."
# The cluster a request meets (``cluster``): 0 IBP below migration_ibp_version, 1 versioning enabled, 2 the node
# disabled, 3 no node.
FEAT_CLUSTERS = 4


def features_request_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The answers Kafka 2.8's KafkaApis.handleUpdateFeatures / KafkaController give before any update is
    validated, in Kafka's order (the KIP lists the top-level errors without one; both profiles take Kafka's):
    a principal without ALTER on the cluster gets CLUSTER_AUTHORIZATION_FAILED, a broker that is not the active
    controller NOT_CONTROLLER, a cluster whose versioning is off (IBP below migration_ibp_version, a disabled or
    absent node) INVALID_REQUEST; under ``kip`` a request naming a feature twice is INVALID_REQUEST (the schema
    keys FeatureUpdates by name). Past them each feature gets one result (Kafka keys its results by name), and
    an update with an empty feature name fails alone with INVALID_REQUEST. The system's operator sends
    authorized, named requests to the active controller, so only this comparison reaches these answers."""
    errors = Errors  # the features API's error codes

    def build(profile: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            auth, active, cluster, dup, empty = (x[n] for n in ("auth", "active", "cluster", "dup", "empty"))
            duplicate = dup == 1 if profile == "kip" else z3.BoolVal(False)
            top = z3.If(auth == 0, int(errors.CLUSTER_AUTHORIZATION_FAILED),
                        z3.If(active == 0, int(errors.NOT_CONTROLLER),
                              z3.If(cluster != 1, int(errors.INVALID_REQUEST),
                                    z3.If(duplicate, int(errors.INVALID_REQUEST), int(errors.NONE)))))
            names = z3.If(auth == 0, 1, z3.If(active == 0, 2, z3.If(cluster != 1, 3, z3.If(duplicate, 4, 0))))
            ok = top == int(errors.NONE)
            return {"top": top, "names": names, "results": z3.If(ok, 1 + empty, 0),
                    "f": z3.If(ok, int(errors.NONE), DONT_CARE),
                    "empty": z3.If(z3.And(ok, empty == 1), int(errors.INVALID_REQUEST), DONT_CARE)}
        return outputs

    def reference(profile: str) -> Callable[[Inputs], Outputs]:
        sup = (("f", SupportedVersionRange(1, 2)),)

        def run(x: Inputs) -> Outputs:
            cluster = x["cluster"]
            node = (None if cluster == 3 else FeatureZNode(FeatureZNodeStatus.DISABLED, (), 1) if cluster == 2
                    else FeatureZNode(FeatureZNodeStatus.ENABLED, (("f", FinalizedVersionRange(1, 1)),), 1))
            ctl = FeatureController(node, ((0, sup),), sup, versioning_enabled=cluster != 0,
                                    is_active=bool(x["active"]), profile=profile)
            update = FeatureUpdate("f", 2)  # an upgrade every broker supports: accepted once checked
            updates = (update,) * (1 + x["dup"]) + ((FeatureUpdate("", 2),) if x["empty"] else ())
            resp, _after = ctl.update_features(UpdateFeaturesRequest(updates), principal_can_alter=bool(x["auth"]))
            msg = resp.message or ""
            by_name = {r.feature: r for r in resp.results}
            out = {"top": int(resp.error),
                   "names": FEAT_REQUEST_MESSAGES.index(msg) if msg in FEAT_REQUEST_MESSAGES else CODEC_ERROR,
                   "results": len(resp.results), "f": int(by_name["f"].error) if "f" in by_name else DONT_CARE,
                   "empty": DONT_CARE}
            if "" in by_name:
                r = by_name[""]
                out["empty"] = int(r.error) if r.message == FEAT_EMPTY_NAME else CODEC_ERROR
            return out
        return run

    names = ["auth", "active", "cluster", "dup", "empty"]
    for profile in ("kip", "kafka"):
        domain = [dict(zip(names, v, strict=True))
                  for v in itertools.product((0, 1), (0, 1), range(FEAT_CLUSTERS), (0, 1), (0, 1))]
        yield f"handleUpdateFeatures, {profile}", Formula(names, build(profile)), domain, reference(profile)


def features_update_cases(brokers: int = 1, top: int = 3
                          ) -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Ranges 1 <= lo <= hi <= ``top`` (or absent), levels 0 .. top + 1, both flags, both profiles."""
    ranges = [(0, 1, 1)] + [(1, lo, hi) for lo in range(1, top + 1) for hi in range(lo, top + 1)]
    for profile in ("kip", "kafka"):
        def domain() -> Iterable[Inputs]:
            for e, y, allow, o, *bs in itertools.product(ranges, range(0, top + 2), (0, 1), ranges,
                                                         *([ranges] * brokers)):
                x = {"has_e": e[0], "emin": e[1], "emax": e[2], "y": y, "allow": allow,
                     "has_o": o[0], "olo": o[1], "ohi": o[2]}
                for i, b in enumerate(bs):
                    x.update({f"has_b{i}": b[0], f"blo{i}": b[1], f"bhi{i}": b[2]})
                yield x
        yield (f"{profile}, {brokers} live brokers", features_update_formula(profile, brokers), domain(),
               features_update_reference(profile, brokers))


# --------------------------------------------------------------------------- metadata.version (KIP-778)

INVALID_UPDATE_VERSION, UNSAFE_FEATURE_DOWNGRADE = 95, 10_000
NONE_DT, SAFE_DT, UNSAFE_DT = 0, 1, 2


def mv_lossless(catalog: Any, source: Any, target: Any) -> Any:
    """KIP-778 "Downgrades": lossless iff no version in (min, max] of the two changed the metadata format."""
    lo, hi = z3.If(source < target, source, target), z3.If(source < target, target, source)
    return z3.Not(z3.Or([z3.And(lo < level, level <= hi) for level, _label, changed in catalog.entries if changed]
                        or [z3.BoolVal(False)]))


def mv_lossless_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Every (source, target) pair of every catalog against ``Catalog.is_lossless``."""
    for name, cat in CATALOGS.items():
        formula = Formula(["source", "target"], lambda x, cat=cat: {"lossless": mv_lossless(cat, x["source"],
                                                                                            x["target"])})
        domain = [{"source": a, "target": b} for a in cat.levels for b in cat.levels]
        yield (f"catalog {name}", formula, domain,
               lambda x, cat=cat: {"lossless": int(cat.is_lossless(x["source"], x["target"]))})


# Kafka's MetadataVersion enum (MetadataVersion.java, 3.9 branch): 34 ZooKeeper-era IBPs (0.8.0 .. 3.0-IV0, feature
# level -1, the three-argument constructor), then 3.0-IV1 at level 1, each later member one level up.
FIRST_KRAFT_ORDINAL = 34
CATALOG_ERROR = -2  # the reference raised (an unparsable label, a level no member has)


def mv_catalog_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The catalogs' own rules, for every member / level: Kafka's level numbering (-1 before 3.0-IV1, then one
    per member), KRaft support from 3.0-IV1, ``previous()``, and that every printed name parses back to its
    member (``fromVersionString(version())``, the catalog's ``parse(label)``) and every KRaft level to its member
    (``fromFeatureLevel``), per Kafka release (4.0's enum starts at 3.3-IV3); a level given as a bool or a string
    is refused. The system reads levels as ints and never prints or parses a name, so without this rule only
    ``tests/kafka`` would see a wrong level or name."""
    k = FIRST_KRAFT_ORDINAL

    def formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        o = x["ordinal"]
        return {"level": z3.If(o >= k, o - k + 1, -1), "kraft": o >= k, "previous": o - 1, "parsed": o,
                # fromFeatureLevel(-1) is the first member with that level: 0.8.0.
                "by_level": z3.If(o >= k, o, 0)}

    def reference(release: str) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            mv = mv_catalog.VERSIONS[x["ordinal"]]
            prev = mv.previous()

            def ordinal_of(read: Callable[[], Any]) -> int:
                try:
                    return int(read().ordinal)
                except ValueError:
                    return CATALOG_ERROR

            return {"level": mv.feature_level, "kraft": int(mv.is_kraft_supported()),
                    "previous": -1 if prev is None else prev.ordinal,
                    "parsed": ordinal_of(lambda: mv_catalog.from_version_string(mv.version(), release)),
                    "by_level": ordinal_of(lambda: mv_catalog.from_feature_level(mv.feature_level, release))}
        return run

    for release in mv_catalog.KAFKA_RELEASES:
        members = mv_catalog.versions(release)
        yield (f"MetadataVersion, release {release}", Formula(["ordinal"], formula),
               [{"ordinal": mv.ordinal} for mv in members], reference(release))
    def label_reference(cat: Any) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            # The API's callers are Python: a level given as a bool or a string is refused (ValueError), as
            # Java's types would refuse it, never read as the int it looks like.
            value: Any = (x["level"], x["level"] == 1, str(x["level"]))[x["kind"]]
            try:
                return {"parsed": cat.parse(cat.label(value))}
            except ValueError:
                return {"parsed": CATALOG_ERROR}
        return run

    for name, cat in CATALOGS.items():
        yield (f"catalog {name}, labels", Formula(["level", "kind"], lambda x: {
            "parsed": z3.If(x["kind"] == 0, x["level"], CATALOG_ERROR)}),
               [{"level": level, "kind": kind} for level in cat.levels for kind in range(3)], label_reference(cat))


def mv_update_rule(catalog: Any, profile: str, release: str, dry_run: bool, x: Any, y: Any, dt: Any, llo: Any,
                   lhi: Any, others: Sequence[tuple[Any, Any, Any]], brokers: Sequence[tuple[Any, Any, Any]],
                   mutations: frozenset[str] = frozenset()) -> tuple[Any, Any, Any]:
    """The active controller's decision on one ``metadata.version`` update: KIP-778 (``kip``: floor, catalog,
    downgrade type, every broker, the controller itself, a majority of voters, lossless unless UNSAFE) and
    Kafka 3.9 / 4.0 (``kafka``: FeatureControlManager.updateFeature; every voter once controller
    registration exists; no lossy downgrade at all). ``x`` the finalized level, ``y`` the requested one,
    ``dt`` the DowngradeType code, ``llo`` / ``lhi`` the controller's range, ``others`` (registered, lo, hi)
    for the other voters, ``brokers`` (registered, lo, hi). Returns (top-level error, the update's error or
    -1 when the response has no result, the level written or -1). Shared by model/metadata_version.py."""
    levels = catalog.levels

    def contains(lo: Any, hi: Any) -> Any:
        return z3.And(lo <= y, y <= hi)

    local = contains(llo, lhi)
    brokers_ok = z3.And([z3.Implies(p, contains(lo, hi)) for p, lo, hi in brokers] or [z3.BoolVal(True)])
    if "skip_broker_check" in mutations:
        brokers_ok = z3.BoolVal(True)
    known = z3.And(y >= levels[0], y <= levels[-1])
    lossy = z3.And(y < x, z3.Not(mv_lossless(catalog, x, y)))
    if "allow_lossy_safe_downgrade" in mutations:
        lossy = z3.BoolVal(False)
    unchecked = "allow_downgrade_unchecked" in mutations
    no_floor = "skip_floor_check" in mutations
    no_quorum = "skip_quorum_check" in mutations
    if "peers_advertise_no_features" in mutations:  # KAFKA-13990: no peer seems to support y (DISABLED, 0-0)
        others = [(h, z3.IntVal(0), z3.IntVal(0)) for h, _lo, _hi in others]
    chain: list[tuple[Any, int]]
    if profile == "kip":
        support = [z3.If(local, 1, 0)] + [z3.If(z3.And(h, contains(lo, hi)), 1, 0) for h, lo, hi in others]
        majority = z3.BoolVal(True) if no_quorum else z3.Sum(support) > (len(others) + 1) // 2
        chain = [(z3.And(y < catalog.minimum, not no_floor), INVALID_REQUEST),
                 (z3.And(z3.Not(known), y >= 1), INVALID_REQUEST),
                 (y == x, INVALID_REQUEST), (z3.And(y < x, dt == NONE_DT, not unchecked), INVALID_REQUEST),
                 (z3.And(y > x, dt != NONE_DT), INVALID_REQUEST),
                 (y < 1, 0),  # a deletion (only reachable without the floor check): no range checks
                 (z3.Not(brokers_ok), FEATURE_UPDATE_FAILED),
                 (z3.Not(local), FEATURE_UPDATE_FAILED), (z3.Not(majority), FEATURE_UPDATE_FAILED),
                 (z3.And(lossy, dt != UNSAFE_DT), UNSAFE_FEATURE_DOWNGRADE)]
    else:
        # Kafka 3.9 refuses a level below MINIMUM_BOOTSTRAP_VERSION; 4.0 has no level below MINIMUM_VERSION.
        floor = catalog.minimum_for("4.0") if release == "4.0" else catalog.bootstrap_floor
        registration = x >= catalog.controller_registration_level
        quorum_ok = z3.Or(z3.Not(registration), no_quorum,
                          z3.And([z3.And(h, contains(lo, hi)) for h, lo, hi in others] or [z3.BoolVal(True)]))
        bad = z3.Or(y < 0, z3.Not(local), z3.Not(brokers_ok), z3.Not(quorum_ok),
                    z3.And(y < x, dt == NONE_DT, not unchecked), z3.And(y > x, dt != NONE_DT), z3.Not(known),
                    z3.And(y < floor, not no_floor), lossy)
        chain = [(bad, INVALID_UPDATE_VERSION)]
    err: Any = z3.IntVal(0)
    for cond, code in reversed(chain):
        err = z3.If(cond, code, err)
    if profile == "kafka" and release == "4.0":
        top, result = err, z3.If(err == 0, 0, -1)  # 4.0: the first error for the whole request
    else:
        top, result = z3.IntVal(0), err
    writes = not dry_run or "dry_run_writes" in mutations
    written: Any = z3.IntVal(-1)
    if writes:  # kip writes no record that restates the level; Kafka does
        written = z3.If(z3.And(err == 0, z3.Or(profile == "kafka", y != x)), z3.If(y < 0, 0, y), -1)
    return top, result, written


def mv_update_formula(catalog: Any, profile: str, release: str, dry_run: bool, voters: int, brokers: int) -> Formula:
    """:func:`mv_update_rule` over named inputs: voter 0 is the controller (``llo`` / ``lhi``); ``has_v<i>``
    0 means voter i has not registered; every broker is registered."""
    names = ["x", "y", "dt", "llo", "lhi", *(f"{f}{i}" for i in range(1, voters) for f in ("has_v", "vlo", "vhi")),
             *(f"{f}{i}" for i in range(brokers) for f in ("blo", "bhi"))]

    def build(v: dict[str, z3.ArithRef]) -> dict[str, Any]:
        top, result, written = mv_update_rule(
            catalog, profile, release, dry_run, v["x"], v["y"], v["dt"], v["llo"], v["lhi"],
            [(v[f"has_v{i}"] == 1, v[f"vlo{i}"], v[f"vhi{i}"]) for i in range(1, voters)],
            [(z3.BoolVal(True), v[f"blo{i}"], v[f"bhi{i}"]) for i in range(brokers)])
        return {"top": top, "result": result, "written": written}

    return Formula(names, build)


def mv_update_reference(catalog: Any, profile: str, release: str, dry_run: bool, voters: int, brokers: int
                        ) -> Callable[[Inputs], Outputs]:
    def run(x: Inputs) -> Outputs:
        local = VersionRange(x["llo"], x["lhi"])
        vs = ((0, local), *((i, VersionRange(x[f"vlo{i}"], x[f"vhi{i}"]) if x[f"has_v{i}"] else None)
                            for i in range(1, voters)))
        bs = tuple(BrokerRegistration(voters + i, ((FEATURE_NAME, VersionRange(x[f"blo{i}"], x[f"bhi{i}"])),), False)
                   for i in range(brokers))
        ctl = QuorumController(catalog=catalog, node_id=0, local_supported=((FEATURE_NAME, local),), voters=vs,
                               brokers=bs, finalized=((FEATURE_NAME, x["x"]),), profile=profile,
                               kafka_release=release)
        res = ctl.update_features(request(FEATURE_NAME, x["y"], DowngradeType(x["dt"]), dry_run=dry_run))
        r = res.response
        return {"top": int(r.error), "result": int(r.results[0].error) if r.results else -1,
                "written": res.records[-1].feature_level if res.records else -1}

    return run


def mv_update_cases(catalog_name: str = "example", voters: int = 2, brokers: int = 1, dry_runs: Sequence[bool] = (
        False, True), edge_ranges: bool = False) -> Iterable[tuple[str, Formula, Iterable[Inputs],
                                                                 Callable[[Inputs], Outputs]]]:
    """Current and requested levels over the catalog (and one beyond each end), every downgrade type,
    every supported range of the controller, the other voters (or unregistered) and the brokers
    (``edge_ranges``: only ranges that start at the lowest or end at the highest level)."""
    cat = CATALOGS[catalog_name]
    lv = cat.levels
    ranges = [(lo, hi) for lo in lv for hi in lv if lo <= hi]
    if edge_ranges:
        ranges = [(lo, hi) for lo, hi in ranges if lo == lv[0] or hi == lv[-1]]
    if len(lv) > 6:
        # The kafka catalog (27 levels): the levels around its floors (3.9, 4.0) and controller registration,
        # where the rule changes, and both ends (the lossless rule itself is checked on every pair by mv_lossless).
        floor, reg, m40 = cat.bootstrap_floor, cat.controller_registration_level, cat.minimum_for("4.0")
        lv = tuple(sorted({lv[0], floor - 1, floor, floor + 1, m40 - 1, m40, reg - 1, reg, reg + 1, lv[-1]}
                          & set(lv)))
        ranges = [(cat.minimum, hi) for hi in lv] + [(floor, cat.latest), (m40, cat.latest)]
    voter_opts = [(0, 1, 1)] + [(1, lo, hi) for lo, hi in ranges]
    for profile, release in (("kip", "3.9"), ("kafka", "3.9"), ("kafka", "4.0")):
        for dry in dry_runs:
            def domain() -> Iterable[Inputs]:
                ys = (lv[0] - 1, *lv, lv[-1] + 1)
                for xv, y, dt, local, *rest in itertools.product(lv, ys, (0, 1, 2), ranges,
                                                                 *([voter_opts] * (voters - 1)),
                                                                 *([ranges] * brokers)):
                    d = {"x": xv, "y": y, "dt": dt, "llo": local[0], "lhi": local[1]}
                    for i, (h, lo, hi) in enumerate(rest[:voters - 1], start=1):
                        d.update({f"has_v{i}": h, f"vlo{i}": lo, f"vhi{i}": hi})
                    for i, (lo, hi) in enumerate(rest[voters - 1:]):
                        d.update({f"blo{i}": lo, f"bhi{i}": hi})
                    yield d
            yield (f"{catalog_name} catalog, {profile} {release}, dry_run={dry}",
                   mv_update_formula(cat, profile, release, dry, voters, brokers), domain(),
                   mv_update_reference(cat, profile, release, dry, voters, brokers))


MV_LEADER = 7  # the active controller a non-active node knows of, when it knows one
# What a top-level answer's message names: the request's description, the request, the known leader, another
# node (or none: "node None"), nothing of these.
MV_NAMES_DESCRIPTION, MV_NAMES_REQUEST, MV_NAMES_LEADER, MV_NAMES_OTHER_NODE = 1, 2, 3, 4


def mv_request_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The answers ControllerApis.handleUpdateFeatures gives before any feature is looked at (Kafka 3.9; the
    kip profile takes them too), in Kafka's order: a principal without ALTER on the cluster gets
    CLUSTER_AUTHORIZATION_FAILED naming the request ("Request <request> is not authorized.": the
    RequestChannel.Request's description where there is one); a node that is not the active controller gets
    NOT_CONTROLLER naming the active node when it knows one; under ``kip`` a request naming a feature twice
    is INVALID_REQUEST (FeatureUpdates is keyed by name). A request that passes them gets one result per
    feature. The system sends every update authorized to the active controller, one feature at a time, so
    only this comparison reaches these answers."""
    def build(profile: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            auth, desc, active, known, dup = (x[n] for n in ("auth", "desc", "active", "known", "dup"))
            duplicate = dup == 1 if profile == "kip" else z3.BoolVal(False)
            errors = mv_api.Errors
            top = z3.If(auth == 0, int(errors.CLUSTER_AUTHORIZATION_FAILED),
                        z3.If(active == 0, int(errors.NOT_CONTROLLER),
                              z3.If(duplicate, int(errors.INVALID_REQUEST), int(errors.NONE))))
            names = z3.If(auth == 0, z3.If(desc == 1, MV_NAMES_DESCRIPTION, MV_NAMES_REQUEST),
                          z3.If(z3.And(active == 0, known == 1), MV_NAMES_LEADER, 0))
            return {"top": top, "names": names, "results": z3.If(top == int(errors.NONE), 1 + dup, 0)}
        return outputs

    def reference(profile: str) -> Callable[[Inputs], Outputs]:
        cat = CATALOGS["example"]
        level = cat.levels[-1]

        def run(x: Inputs) -> Outputs:
            ctl = QuorumController(catalog=cat, node_id=0, local_supported=((FEATURE_NAME, VersionRange(
                cat.minimum, level)),), voters=((0, VersionRange(cat.minimum, level)),),
                finalized=((FEATURE_NAME, level),), profile=profile, is_active=bool(x["active"]),
                active_controller_id=MV_LEADER if x["known"] else None)
            update = mv_api.FeatureUpdate(FEATURE_NAME, level, DowngradeType.NONE)  # a no-op: accepted once checked
            req = mv_api.UpdateFeaturesRequest((update, update) if x["dup"] else (update,))
            description = "RequestHeader(clientId=admin-1)" if x["desc"] else None
            r = ctl.update_features(req, principal_can_alter=bool(x["auth"]), request_description=description).response
            msg = r.message or ""
            names = (MV_NAMES_DESCRIPTION if description is not None and description in msg else
                     MV_NAMES_REQUEST if str(req) in msg else
                     MV_NAMES_LEADER if f"node {MV_LEADER}" in msg else
                     MV_NAMES_OTHER_NODE if "node" in msg else 0)
            return {"top": int(r.error), "names": names, "results": len(r.results)}
        return run

    names = ["auth", "desc", "active", "known", "dup"]
    for profile in ("kip", "kafka"):
        # Kafka's FeatureUpdateKeyCollection may hold a feature twice; what its controller then does is not
        # Kafka's documented behaviour, so kafka is compared on single-feature requests only.
        dups = (0, 1) if profile == "kip" else (0,)
        domain = [dict(zip(names, (*v, d), strict=True)) for v in itertools.product((0, 1), repeat=4) for d in dups]
        yield f"handleUpdateFeatures, {profile}", Formula(names, build(profile)), domain, reference(profile)


def format_storage_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """``kafka-storage format --metadata-version N`` (KIP-778 "New kafka-storage argument"): the level a new
    cluster bootstraps at, or a refusal. kip: a level of the catalog at or above its minimum. kafka (Kafka's
    Formatter, 3.9 and 4.0): a level the release knows (fromFeatureLevel: from its minimum), production
    unless unstable feature versions are enabled, and not below MINIMUM_BOOTSTRAP_VERSION. The levels,
    minimums and production bounds are the catalog's data (tests/kafka checks them against
    MetadataVersionTest); this compares the decision built on them, which no config reaches (every config
    starts formatted)."""
    def build(cat: Any, profile: str, release: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            level, unstable = x["level"], x["unstable"]
            known = z3.And(cat.minimum <= level, level <= cat.latest)
            if profile == "kip":
                ok = known
            else:
                ok = z3.And(known, level >= cat.minimum_for(release),
                            z3.Or(unstable == 1, level <= cat.latest_production_for(release)),
                            level >= cat.bootstrap_floor)
            return {"accepted": z3.If(ok, 1, 0), "level": z3.If(ok, level, DONT_CARE)}
        return outputs

    def reference(cat: Any, profile: str, release: str) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            # --metadata-version as the operator types it (the level's name; an unknown one for a level the
            # catalog lacks) or as a number.
            given: str | int = x["level"]
            if x["text"]:
                given = cat.label(x["level"]) if x["level"] in cat.levels else "9.9-IV9"
            try:
                meta = format_storage("cluster", cat, cat.latest, given, profile, kafka_release=release,
                                      unstable_feature_versions_enabled=bool(x["unstable"]))
            except ValueError:
                return {"accepted": 0, "level": DONT_CARE}
            return {"accepted": 1, "level": meta.metadata_version}
        return run

    for name, cat in CATALOGS.items():
        domain = [{"level": lvl, "unstable": u, "text": t}
                  for lvl in range(cat.minimum - 2, cat.latest + 3) for u in (0, 1) for t in (0, 1)]
        for profile, release in (("kip", "3.9"), ("kafka", "3.9"), ("kafka", "4.0")):
            label = f"{name} catalog, {profile}" + (f", kafka {release}" if profile == "kafka" else "")
            yield (label, Formula(["level", "unstable", "text"], build(cat, profile, release)), domain,
                   reference(cat, profile, release))


MV_UNSET = 0  # meta.properties without a metadata.version (a pre-KIP-778 "preview" cluster)
LOG_EMPTY_UNSAID, LOG_EMPTY, LOG_NOT_EMPTY = 0, 1, 2  # log_is_empty: None, True, False


def mv_activation_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """KIP-778 "Initialization" as Kafka's ActivationRecordsGenerator and QuorumController do it: an empty log
    gets a bootstrap FeatureLevelRecord at meta.properties' level (the catalog's minimum for a preview
    cluster without one) and the controller runs at it; a log that already holds FeatureLevelRecords gets
    nothing and runs at the last; a non-empty log without one gets nothing and runs at the minimum
    (MINIMUM_KRAFT_VERSION, "treats the log as version 3.0-IV1"); saying a log with records is empty is an
    error. Every config starts from an empty log, so only this reaches the other cases."""
    def build(cat: Any) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            meta, n, last, empty = x["meta"], x["records"], x["last"], x["empty"]
            error = z3.And(empty == LOG_EMPTY, n > 0)
            writes = z3.And(n == 0, empty != LOG_NOT_EMPTY)
            boot = z3.If(meta == MV_UNSET, cat.minimum, meta)
            level = z3.If(writes, boot, z3.If(n > 0, last, cat.minimum))
            return {"error": z3.If(error, 1, 0),
                    "bootstrap_record": z3.If(error, DONT_CARE, z3.If(writes, boot, -1)),
                    "level": z3.If(error, DONT_CARE, level)}
        return outputs

    def reference(cat: Any) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            meta = MetaProperties("cluster", None if x["meta"] == MV_UNSET else x["meta"])
            levels = tuple([cat.minimum] * (x["records"] - 1) + [x["last"]]) if x["records"] else ()
            empty = {LOG_EMPTY_UNSAID: None, LOG_EMPTY: True, LOG_NOT_EMPTY: False}[x["empty"]]
            try:
                record = bootstrap_metadata_version(meta, cat, levels, log_is_empty=empty)
                level = activation_metadata_version(meta, cat, levels, log_is_empty=empty)
            except ValueError:
                return {"error": 1, "bootstrap_record": DONT_CARE, "level": DONT_CARE}
            return {"error": 0, "bootstrap_record": -1 if record is None else record.feature_level, "level": level}
        return run

    for name, cat in CATALOGS.items():
        levels = [lvl for lvl in cat.levels if lvl <= cat.minimum + 4]
        domain = [{"meta": m, "records": n, "last": last, "empty": e}
                  for m in (MV_UNSET, *levels) for n in (0, 1, 2) for last in (levels if n else levels[:1])
                  for e in (LOG_EMPTY_UNSAID, LOG_EMPTY, LOG_NOT_EMPTY)]
        yield f"{name} catalog", Formula(["meta", "records", "last", "empty"], build(cat)), domain, reference(cat)


# --------------------------------------------------------------------------- ZooKeeper migration (KIP-866)

ZK_NONE, ZK_MIGRATION, ZK_PRE_MIGRATION, ZK_POST_MIGRATION = 0, 1, 2, 3  # ZkMigrationState codes
# metadata.version levels: 3.4-IV0 (isMigrationSupported), 3.6-IV1 (isMetadataTransactionSupported).
ZK_MIGRATION_LEVEL, ZK_TRANSACTION_LEVEL = 8, 13
# KRaftMigrationDriver states by code: UNINITIALIZED 0, INACTIVE 1, WAIT_FOR_CONTROLLER_QUORUM 2,
# WAIT_FOR_BROKERS 3, BECOME_CONTROLLER 4, ZK_MIGRATION 5, SYNC_KRAFT_TO_ZK 6, KRAFT_CONTROLLER_TO_BROKER_COMM 7,
# DUAL_WRITE 8.
DRIVER_EDGES = ((0, 1), (8, 1), (1, 2), (2, 1), (2, 4), (2, 3), (3, 1), (3, 4), (4, 1), (4, 5), (4, 6), (5, 1),
                (5, 6), (6, 1), (6, 7), (7, 1), (7, 8))


def zk_trigger_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The migration's triggers in reference_impl/zk_migration/api.py: what a newly active controller does
    with the persisted state (ActivationRecordsGenerator; KIP-866 "wrong settings"), what the first
    controller of an empty log bootstraps, whether a ZK broker's registration is accepted, the take-over of
    /controller_epoch, and the driver's valid state changes; per profile."""
    act_inputs = ("state", "enabled", "all_voters_disabled", "txn", "level")
    # The quorum's default level (3.6-IV1) first, then the levels where Kafka's rules change: 3.4-IV0 (the
    # migration), 3.6-IV1 (transactions), 3.0-IV1 (no metadata.version record).
    act_levels = (13, 21, 12, 8, 7, 4, 1)
    for profile in ("kip", "kafka"):
        def act_formula(x: dict[str, z3.ArithRef], profile: str = profile) -> dict[str, Any]:
            st, enabled, all_off, txn = x["state"], x["enabled"] == 1, x["all_voters_disabled"] == 1, x["txn"] == 1
            if profile == "kafka":
                # recordsForNonEmptyLog throws for a transaction it cannot abort, for migration enabled below
                # 3.4-IV0 or on a NONE log; below 3.4-IV0 the state is not looked at.
                migration_mv = x["level"] >= ZK_MIGRATION_LEVEL
                resign = z3.Or(z3.And(txn, x["level"] < ZK_TRANSACTION_LEVEL), z3.And(enabled, z3.Not(migration_mv)),
                               z3.And(st == ZK_NONE, enabled))
                finalize = z3.And(z3.Not(resign), migration_mv, st == ZK_MIGRATION, z3.Not(enabled))
            else:
                finalize = z3.And(st == ZK_MIGRATION, z3.Not(enabled), all_off)
                resign = z3.Or(z3.And(st == ZK_NONE, enabled),
                               z3.And(st == ZK_MIGRATION, z3.Not(enabled), z3.Not(finalize)),
                               z3.And(st == ZK_PRE_MIGRATION, z3.Not(enabled)))
            # A controller that resigns writes nothing, not even the abort of the open transaction.
            return {"write": z3.If(finalize, ZK_POST_MIGRATION, -1), "resign": resign,
                    "abort": z3.And(txn, z3.Not(resign))}

        def act_ref(x: Inputs, profile: str = profile) -> Outputs:
            r = zk_api.activate(zk_api.ZkMigrationState.from_code(x["state"]), bool(x["enabled"]),
                             bool(x["all_voters_disabled"]), bool(x["txn"]), profile, x["level"])
            return {"write": r.write.code if r.write else -1, "resign": int(r.resign is not None),
                    "abort": int(r.abort_transaction)}

        yield (f"activate, {profile}", Formula(list(act_inputs), act_formula),
               [dict(zip(act_inputs, (st, e, a, t, lv), strict=True))
                for lv in act_levels for st, e, a, t in itertools.product(range(4), (0, 1), (0, 1), (0, 1))],
               act_ref)

        minimum = zk_api.KAFKA_EMPTY_LOG_MINIMUM_LEVEL if profile == "kafka" else zk_api.KIP_MINIMUM_LEVEL

        def boot_formula(x: dict[str, z3.ArithRef], minimum: int = minimum) -> dict[str, Any]:
            enabled = x["enabled"] == 1
            return {"state": z3.If(enabled, z3.If(x["level"] < minimum, -1, ZK_PRE_MIGRATION), ZK_NONE)}

        def boot_ref(x: Inputs, profile: str = profile) -> Outputs:
            try:
                return {"state": zk_api.bootstrap_migration_state(x["level"], bool(x["enabled"]), profile).code}
            except zk_api.ActivationError:
                return {"state": -1}

        yield (f"bootstrap, {profile}", Formula(["level", "enabled"], boot_formula),
               [{"level": lv, "enabled": e} for lv in range(1, 28) for e in (0, 1)], boot_ref)

        def reg_formula(x: dict[str, z3.ArithRef], profile: str = profile) -> dict[str, Any]:
            if profile == "kafka":
                # ClusterControlManager.registerBroker: migration config and a migration-capable
                # metadata.version, then the IBP range [ibp, ibp] must hold the finalized level.
                return {"accepted": z3.And(x["enabled"] == 1, x["level"] >= ZK_MIGRATION_LEVEL,
                                           x["ibp"] == x["level"])}
            return {"accepted": z3.And(x["enabled"] == 1, x["ready"] == 1, x["kraft_id"] == 0,
                                       x["ibp"] == x["level"])}

        def reg_ref(x: Inputs, profile: str = profile) -> Outputs:
            reg = zk_api.ZkBrokerRegistration(1, x["ibp"], bool(x["ready"]))
            err = zk_api.zk_broker_registration_error(reg, x["level"], bool(x["enabled"]),
                                                   frozenset({1}) if x["kraft_id"] else frozenset(), profile=profile)
            return {"accepted": int(err is None)}

        yield (f"ZK broker registration, {profile}",
               Formula(["ibp", "level", "ready", "enabled", "kraft_id"], reg_formula),
               [dict(zip(("ibp", "level", "ready", "enabled", "kraft_id"), c, strict=True))
                for c in itertools.product(range(5, 13), range(5, 13), (0, 1), (0, 1), (0, 1))], reg_ref)

    def claim_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        # Refused for a same-or-newer KRaft epoch in /controller, and without /controller_epoch (-1).
        return {"epoch": z3.If(z3.Or(x["kraft_in_zk"] >= x["kraft"], x["zk"] < 0), -1, x["zk"] + 1)}

    def claim_ref(x: Inputs) -> Outputs:
        r = zk_api.claim_controller_epoch(x["zk"], x["kraft_in_zk"], x["kraft"])
        return {"epoch": -1 if r is None else r}

    yield ("claim /controller_epoch", Formula(["zk", "kraft_in_zk", "kraft"], claim_formula),
           [{"zk": a, "kraft_in_zk": b, "kraft": c} for a in range(-1, 4) for b in range(-1, 4) for c in range(4)],
           claim_ref)

    drivers = list(zk_api.MigrationDriverState)

    def driver_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        cur, new = x["current"], x["new"]
        edge = z3.Or([z3.And(cur == a, new == b) for a, b in DRIVER_EDGES])
        return {"valid": z3.Or(cur == new, z3.And(new != 0, edge))}

    # KIP-866 "Broker registration" (kip only; Kafka 3.9 has no such rule): a KRaft broker reusing the id of a
    # ZK broker taking part in the migration is rejected. The system's brokers keep their ids when they move
    # to KRaft, so no config registers a new KRaft broker: this is the only place the rule is reached.
    zk_flags = ["zk0", "zk1", "zk2"]  # whether ZK broker 0, 1, 2 takes part in the migration
    yield ("KRaft broker registration, kip", Formula(["broker", *zk_flags], lambda x: {
        "rejected": z3.Or([z3.And(x["broker"] == b, x[f] == 1) for b, f in enumerate(zk_flags)])}),
           [{"broker": b, **dict(zip(zk_flags, bits, strict=True))}
            for b in range(4) for bits in itertools.product((0, 1), repeat=3)],
           lambda x: {"rejected": int(zk_api.kraft_broker_registration_error(
               x["broker"], frozenset(b for b, f in enumerate(zk_flags) if x[f])) is not None)})

    yield ("driver state changes", Formula(["current", "new"], driver_formula),
           [{"current": a, "new": b} for a in range(9) for b in range(9)],
           lambda x: {"valid": int(zk_api.is_valid_state_change(drivers[x["current"]], drivers[x["new"]]))})

    # KIP-866's ZkMigrationState metric ("these four will be exposed"), reported by the active controller from
    # the persisted state and its driver: finalized once POST_MIGRATION; dual write once the data is copied and
    # the driver may write to ZooKeeper (Kafka's allowDualWrite: KRAFT_CONTROLLER_TO_BROKER_COMM, DUAL_WRITE);
    # copying while the driver takes ZooKeeper over and copies it, and after a failover until the new driver
    # writes again; ineligible otherwise. (Kafka 3.5+ reports the persisted state's own code instead.) The
    # system never reads the metric, so only this comparison sees it.
    persisted = list(zk_api.ZkMigrationState)
    kip = zk_api.KipMigrationState
    zs, ds = zk_api.ZkMigrationState, zk_api.MigrationDriverState

    def metric_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        st, drv = x["state"], x["driver"]
        writes = z3.Or([drv == drivers.index(d) for d in (ds.KRAFT_CONTROLLER_TO_BROKER_COMM, ds.DUAL_WRITE)])
        taking_over = z3.Or([drv == drivers.index(d) for d in (ds.BECOME_CONTROLLER, ds.ZK_MIGRATION)])
        copied = st == persisted.index(zs.MIGRATION)
        copying = z3.And(st == persisted.index(zs.PRE_MIGRATION), taking_over)
        return {"metric": z3.If(st == persisted.index(zs.POST_MIGRATION), kip.MIGRATION_FINALIZED.value,
                                z3.If(z3.And(copied, writes), kip.DUAL_WRITE.value,
                                      z3.If(z3.Or(copied, copying), kip.MIGRATE_ZK_DATA.value,
                                            kip.MIGRATION_INELIGIBLE.value)))}

    yield ("ZkMigrationState metric", Formula(["state", "driver"], metric_formula),
           [{"state": a, "driver": b} for a in range(len(persisted)) for b in range(len(drivers))],
           lambda x: {"metric": zk_api.kip_state(persisted[x["state"]], drivers[x["driver"]]).value})

    yield from zk_driver_event_cases()
    yield from zk_activation_records_cases()


# The driver's event classes as codes (their order in zk_api.DriverEvent) and the PollEvent of each state
# (KRaftMigrationDriver.PollEvent.run; -1: nothing, the driver waits for a leader or a metadata event).
# ActivationRecordsGenerator's refusals (``error``), by the start of Kafka's message.
ACTIVATION_ERRORS = ("", "Detected partial bootstrap records transaction", "Detected in-progress transaction",
                     "The bootstrap metadata.version", "Should not have ZK migrations enabled on a cluster running",
                     "Should not have ZK migrations enabled on a cluster that was created in KRaft mode")
NO_BOOTSTRAP_VERSION = len(ACTIVATION_ERRORS)  # generate() on an empty log without a metadata.version
ACTIVATION_LEVELS = (0, 1, 4, 7, 8, 12, 13, 21)  # 0: the log holds no FeatureLevelRecord for metadata.version


def zk_activation_records_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """``ActivationRecordsGenerator.generate`` (Kafka 3.9) on every log a controller may activate on: empty (the
    bootstrap records, in a metadata transaction from 3.6-IV1, re-appended after aborting a partial bootstrap
    transaction; PRE_MIGRATION or NONE written from 3.6-IV1, migration refused below it) or not (an in-progress
    transaction aborted, which needs 3.6-IV1; no metadata.version record: 3.0-IV1; the replayed state against
    ``zookeeper.metadata.migration.enable``). The records (abort, begin, bootstrap, state, end), whether one
    atomic batch, or the refusal. The system's first controller always activates an empty log with no partial
    transaction, so only this comparison reaches the partial bootstrap and the no-record log."""
    names = ["empty", "txn", "enabled", "level", "state"]

    def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        empty, txn, enabled, level, state = (x[n] for n in names)
        eff = z3.If(level == 0, 1, level)  # no FeatureLevelRecord: MINIMUM_KRAFT_VERSION, 3.0-IV1
        txn_ok, mig = eff >= ZK_TRANSACTION_LEVEL, eff >= ZK_MIGRATION_LEVEL
        st = z3.If(state < 0, ZK_NONE, state)  # no ZkMigrationStateRecord replayed: NONE
        empty_error = z3.If(level == 0, NO_BOOTSTRAP_VERSION, z3.If(z3.And(txn == 1, z3.Not(txn_ok)), 1,
                                                                    z3.If(z3.And(enabled == 1, z3.Not(txn_ok)), 3, 0)))
        log_error = z3.If(z3.And(txn == 1, z3.Not(txn_ok)), 2, z3.If(z3.And(enabled == 1, z3.Not(mig)), 4,
                                                                       z3.If(z3.And(mig, st == ZK_NONE, enabled == 1),
                                                                             5, 0)))
        error = z3.If(empty == 1, empty_error, log_error)
        ok = error == 0

        def out(v: Any) -> Any:
            return z3.If(ok, v, DONT_CARE)
        written = z3.If(empty == 1, z3.If(txn_ok, z3.If(enabled == 1, ZK_PRE_MIGRATION, ZK_NONE), -1),
                        z3.If(z3.And(mig, st == ZK_MIGRATION, enabled == 0), ZK_POST_MIGRATION, -1))
        return {"error": error, "abort": out(txn), "begin": out(z3.If(z3.And(empty == 1, txn_ok), 1, 0)),
                "boot": out(empty), "written": out(written), "end": out(z3.If(z3.And(empty == 1, txn_ok), 1, 0)),
                "atomic": out(z3.If(z3.And(empty == 1, txn_ok), 0, 1))}

    def reference(x: Inputs) -> Outputs:
        failed = dict.fromkeys(("abort", "begin", "boot", "written", "end", "atomic"), DONT_CARE)
        state = None if x["state"] < 0 else zk_api.ZkMigrationState.from_code(x["state"])
        try:
            r = zk_api.generate_activation_records(bool(x["empty"]), 7 if x["txn"] else -1, bool(x["enabled"]),
                                                   x["level"] or None, state)
        except zk_api.ActivationError as exc:
            kinds = [i for i, start in enumerate(ACTIVATION_ERRORS) if i and str(exc).startswith(start)]
            return {"error": kinds[0] if len(kinds) == 1 else CODEC_ERROR, **failed}
        except ValueError:
            return {"error": NO_BOOTSTRAP_VERSION, **failed}
        kinds = [rec.name for rec in r.records]
        expected_order = sorted(kinds, key=["AbortTransactionRecord", "BeginTransactionRecord", "FeatureLevelRecord",
                                            "ZkMigrationStateRecord", "EndTransactionRecord"].index)
        written = r.zk_migration_state
        return {"error": 0 if kinds == expected_order else CODEC_ERROR, "abort": kinds.count("AbortTransactionRecord"),
                "begin": kinds.count("BeginTransactionRecord"), "boot": kinds.count("FeatureLevelRecord"),
                "written": -1 if written is None else written.code, "end": kinds.count("EndTransactionRecord"),
                "atomic": int(r.is_atomic)}

    domain = [dict(zip(names, v, strict=True)) for v in itertools.product((0, 1), (0, 1), (0, 1), ACTIVATION_LEVELS,
                                                                          range(-1, 4))
              if v[0] == 0 or v[4] == -1]  # an empty log has replayed no state
    yield "ActivationRecordsGenerator.generate", Formula(names, build), domain, reference


_EVENTS = list(zk_api.DriverEvent)
_EV = {e.name: i for i, e in enumerate(_EVENTS)}
POLL_OF_STATE = {0: _EV["RECOVER_MIGRATION_STATE_FROM_ZK"], 1: -1, 2: _EV["WAIT_FOR_CONTROLLER_QUORUM"],
                 3: _EV["WAIT_FOR_ZK_BROKERS"], 4: _EV["BECOME_ZK_CONTROLLER"], 5: _EV["MIGRATE_METADATA"],
                 6: _EV["SYNC_KRAFT_METADATA"], 7: _EV["SEND_RPCS_TO_BROKERS"], 8: -1}


def zk_driver_event_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The KRaftMigrationDriver helpers the system's one driver step per event does not vary: who leads
    (``LeaderAndEpoch.isLeader``), what the loader's ``onControllerChange`` and ``PollEvent`` enqueue, how
    ``MigrateMetadataEvent`` batches ZooKeeper's records (``BufferingBatchConsumer``), and the two image events
    (``SyncKRaftMetadataEvent``, ``SendRPCsToBrokersEvent``) for an image behind /migration's offset and for an
    event created under another leader: the system's leader image always holds what /migration records and
    its events always run under the leader that made them, so no config reaches those branches."""
    drivers = list(zk_api.MigrationDriverState)
    yield ("LeaderAndEpoch.is_leader", Formula(["leader", "node"], lambda x: {
        "leads": z3.And(x["leader"] >= 0, x["leader"] == x["node"])}),
           [{"leader": a, "node": b} for a in range(-1, 3) for b in range(3)],
           lambda x: {"leads": int(zk_api.LeaderAndEpoch(None if x["leader"] < 0 else x["leader"], 1)
                                   .is_leader(x["node"]))})

    def events_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        # The recovery from ZooKeeper goes first while UNINITIALIZED, so the leader event finds INACTIVE.
        first_boot = x["state"] == 0
        poll: Any = z3.IntVal(-1)
        for st, ev in POLL_OF_STATE.items():
            poll = z3.If(x["state"] == st, ev, poll)
        return {"count": z3.If(first_boot, 2, 1),
                "first": z3.If(first_boot, _EV["RECOVER_MIGRATION_STATE_FROM_ZK"], _EV["KRAFT_LEADER"]),
                "second": z3.If(first_boot, _EV["KRAFT_LEADER"], -1), "poll": poll}

    def events_ref(x: Inputs) -> Outputs:
        st = drivers[x["state"]]
        queued = [_EVENTS.index(e) for e in zk_api.on_controller_change(st)]
        poll = zk_api.poll_event(st)
        return {"count": len(queued), "first": queued[0], "second": queued[1] if len(queued) > 1 else -1,
                "poll": -1 if poll is None else _EVENTS.index(poll)}

    yield ("onControllerChange and PollEvent", Formula(["state"], events_formula),
           [{"state": i} for i in range(len(drivers))], events_ref)

    sizes = ("b0", "b1", "b2")

    def batches_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        # Buffered until at least min records are held, then handed over whole; the rest flushed at the end.
        held: Any = z3.IntVal(0)
        count: Any = z3.IntVal(0)
        out: list[Any] = [z3.IntVal(0)] * len(sizes)
        for b in sizes:
            held = held + x[b]
            emit = z3.And(held >= x["min"], held > 0)
            out = [z3.If(z3.And(emit, count == k), held, o) for k, o in enumerate(out)]
            count = z3.If(emit, count + 1, count)
            held = z3.If(emit, 0, held)
        out = [z3.If(z3.And(held > 0, count == k), held, o) for k, o in enumerate(out)]
        count = z3.If(held > 0, count + 1, count)
        return {"count": count, **{f"out{k}": o for k, o in enumerate(out)}}

    def batches_ref(x: Inputs) -> Outputs:
        got = zk_api.coalesce_migration_batches([x[b] for b in sizes], x["min"])
        return {"count": len(got), **{f"out{k}": got[k] if k < len(got) else 0 for k in range(len(sizes))}}

    yield ("MigrateMetadataEvent batches", Formula(["min", *sizes], batches_formula),
           [{"min": m, **dict(zip(sizes, bs, strict=True))}
            for m in range(1, 5) for bs in itertools.product(range(4), repeat=len(sizes))], batches_ref)

    image_events = (("SYNC_KRAFT_METADATA", zk_api.sync_kraft_metadata_event, 7, ("metadata",), -1),
                    ("SEND_RPCS_TO_BROKERS", zk_api.send_rpcs_to_brokers_event, 8, (), 1))
    names = ["state", "ie", "io", "me", "mo", "same_leader"]
    for event, run, target, writes, rpcs in image_events:
        expected = next(s for s, e in POLL_OF_STATE.items() if e == _EV[event])

        def image_formula(x: dict[str, z3.ArithRef], expected: int = expected, target: int = target,
                          writes: tuple[str, ...] = writes, rpcs: int = rpcs) -> dict[str, Any]:
            # OffsetAndEpoch compares by epoch, then by offset; a write event made under another leader or
            # epoch, or found in another state, does nothing; so does an image behind /migration.
            behind = z3.Or(x["ie"] < x["me"], z3.And(x["ie"] == x["me"], x["io"] < x["mo"]))
            runs = z3.And(x["state"] == expected, x["same_leader"] == 1, z3.Not(behind))
            return {"state": z3.If(runs, target, x["state"]), "writes": z3.If(runs, len(writes), 0),
                    "rpcs": z3.If(runs, rpcs, -1)}

        def image_ref(x: Inputs, run: Callable[..., Any] = run) -> Outputs:
            made, now = zk_api.LeaderAndEpoch(1, 2), zk_api.LeaderAndEpoch(1, 2 if x["same_leader"] else 3)
            step = run(drivers[x["state"]], zk_api.OffsetAndEpoch(x["ie"], x["io"]),
                       zk_api.OffsetAndEpoch(x["me"], x["mo"]), made, now)
            return {"state": step.state.value, "writes": len(step.zk_writes),
                    "rpcs": {None: -1, "image": 1}.get(step.rpcs, 2)}

        yield (f"{_EVENTS[_EV[event]].value}", Formula(names, image_formula),
               [dict(zip(names, c, strict=True)) for c in itertools.product(
                   range(len(drivers)), range(2), range(2), range(2), range(2), (0, 1))], image_ref)


# --------------------------------------------------------------------------- features: version ranges

RANGE_SPAN = range(-1, 5)  # below, at and above KIP-584's floor of 1, for every min/max/level combination


def version_range_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """KIP-584 "Schema" (and Kafka 2.8's BaseVersionRange constructor): a SupportedVersionRange and a
    FinalizedVersionRange exist only for ``1 <= min <= max``; a level is in a supported range iff
    ``min <= level <= max``; a finalized range is incompatible with a supported one iff it does not lie inside
    it (FinalizedVersionRange.isIncompatibleWith). No config builds a bad range (the reference never does), so
    only this comparison sees a constructor that lets one through or refuses a good one."""
    def valid(lo: Any, hi: Any) -> Any:
        return z3.And(lo >= 1, hi >= 1, lo <= hi)

    def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        ok_s, ok_f = valid(x["smin"], x["smax"]), valid(x["fmin"], x["fmax"])
        return {"supported_valid": z3.If(ok_s, 1, 0), "finalized_valid": z3.If(ok_f, 1, 0),
                "level_in_supported": z3.If(z3.And(ok_s, x["smin"] <= x["fmax"], x["fmax"] <= x["smax"]), 1, 0),
                "incompatible": z3.If(z3.And(ok_s, ok_f, z3.Or(x["fmin"] < x["smin"], x["fmax"] > x["smax"])), 1, 0)}

    def reference(x: Inputs) -> Outputs:
        def made(cls: Any, lo: int, hi: int) -> Any:
            try:
                return cls(lo, hi)
            except ValueError:
                return None
        sup = made(SupportedVersionRange, x["smin"], x["smax"])
        fin = made(FinalizedVersionRange, x["fmin"], x["fmax"])
        return {"supported_valid": int(sup is not None), "finalized_valid": int(fin is not None),
                "level_in_supported": int(sup is not None and x["fmax"] in sup),
                "incompatible": int(sup is not None and fin is not None and fin.is_incompatible_with(sup))}

    names = ["smin", "smax", "fmin", "fmax"]
    domain = [dict(zip(names, v, strict=True)) for v in itertools.product(RANGE_SPAN, repeat=4)]
    yield "SupportedVersionRange x FinalizedVersionRange", Formula(names, build), domain, reference


# --------------------------------------------------------------------------- features: the Admin client

ADMIN_NAMES = ("f", "", " ", "\t f ")  # a name, empty, and ones Java's String.trim empties or keeps


def admin_update_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """KafkaAdminClient.updateFeatures' checks before it sends anything (Kafka 2.8, and Admin's FeatureUpdate
    constructor): a level below 1 needs allowDowngrade; the map of updates may not be empty; no feature name
    may be empty once trimmed; an accepted call sends each update as it was given. The system's operator
    sends raw requests (the controller's own checks answer them), so only this comparison reaches the
    client's."""
    def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        level, allow, count, name = x["level"], x["allow"], x["count"], x["name"]
        ok = z3.And(z3.Or(level >= 1, allow == 1), count >= 1, z3.Or(count == 0, z3.Or(name == 0, name == 3)))
        return {"accepted": z3.If(ok, 1, 0), "sent_level": z3.If(z3.And(ok, count >= 1), level, DONT_CARE_SENT)}

    def reference(x: Inputs) -> Outputs:
        try:
            update = AdminFeatureUpdate(x["level"], bool(x["allow"]))
            req = admin_update_features_request({ADMIN_NAMES[x["name"]]: update} if x["count"] else {})
        except ValueError:
            return {"accepted": 0, "sent_level": DONT_CARE_SENT}
        if x["count"] == 0 or len(req.feature_updates) != 1:
            return {"accepted": 1, "sent_level": DONT_CARE_SENT - 1}  # an empty call accepted, or not one update
        sent = req.feature_updates[0]
        if sent.allow_downgrade != bool(x["allow"]) or sent.feature != ADMIN_NAMES[x["name"]]:
            return {"accepted": 1, "sent_level": DONT_CARE_SENT - 1}  # sent something else than asked
        return {"accepted": 1, "sent_level": sent.max_version_level}

    names = ["level", "allow", "count", "name"]
    domain = [dict(zip(names, v, strict=True))
              for v in itertools.product(range(-2, 4), (0, 1), (0, 1), range(len(ADMIN_NAMES)))]
    yield "AdminFeatureUpdate", Formula(names, build), domain, reference


DONT_CARE_SENT = -1000  # no request sent (a refused call): nothing to compare


# --------------------------------------------------------------------------- features: a broker's cache

CACHE_SUPPORTED = (1, 2)  # the broker supports feature "f" at levels 1..2, and no other feature
ABSENT_NODE, DISABLED_NODE, ENABLED_NODE = 0, 1, 2
CACHE_REFUSED = 2  # reached_epoch's answer to a negative expected epoch (an IllegalArgumentException)


def finalized_cache_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Kafka 2.8's FinalizedFeatureCache, as a broker's FinalizedFeatureChangeListener drives it: an absent or
    disabled /features clears the cache; an enabled one replaces it, unless its epoch is below the cached one
    (an equal epoch is accepted) or a finalized feature is one the broker cannot run with (``kafka``: the
    whole range inside the supported one; ``kip``: the max level; an unknown feature always), when the update
    is refused and the cache kept; ``waitUntilEpochOrThrow`` is satisfied by a cached epoch at or above the
    expected one and refuses a negative one. The system keeps a broker's cache in its state and never reads
    the API's cache class, so only this comparison reaches its epoch rule."""
    smin, smax = CACHE_SUPPORTED

    def build(profile: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            cached, kind, epoch, unknown, fmin, fmax, want = (x[n] for n in ("cached", "kind", "epoch", "unknown",
                                                                            "fmin", "fmax", "want"))
            fits = (z3.And(smin <= fmin, fmax <= smax) if profile == "kafka"
                    else z3.And(smin <= fmax, fmax <= smax))
            ok = z3.And(z3.Or(cached < 0, cached <= epoch), unknown == 0, fits)
            after = z3.If(kind != ENABLED_NODE, -1, z3.If(ok, epoch, cached))
            return {"accepted": z3.If(z3.Or(kind != ENABLED_NODE, ok), 1, 0), "epoch_after": after,
                    "reached": z3.If(want < 0, CACHE_REFUSED, z3.If(z3.And(after >= 0, after >= want), 1, 0))}
        return outputs

    def reference(profile: str) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            supported = (("f", SupportedVersionRange(smin, smax)),)
            held = FinalizedFeaturesAndEpoch((), x["cached"]) if x["cached"] >= 0 else None  # an earlier update
            cache = FinalizedFeatureCache(supported, held, profile)  # type: ignore[arg-type]
            features = (("g" if x["unknown"] else "f", FinalizedVersionRange(x["fmin"], x["fmax"])),)
            node = (None if x["kind"] == ABSENT_NODE else
                    FeatureZNode(FeatureZNodeStatus.DISABLED, (), x["epoch"]) if x["kind"] == DISABLED_NODE else
                    FeatureZNode(FeatureZNodeStatus.ENABLED, features, x["epoch"]))
            try:
                after, accepted = cache.update_latest_or_throw(node), 1
            except FeatureCacheUpdateException:
                after, accepted = cache, 0
            got = after.get()
            try:
                reached = int(after.reached_epoch(x["want"]))
            except ValueError:
                reached = CACHE_REFUSED
            return {"accepted": accepted, "epoch_after": -1 if got is None else got.epoch, "reached": reached}
        return run

    names = ["cached", "kind", "epoch", "unknown", "fmin", "fmax", "want"]
    ranges = [(lo, hi) for lo in range(1, 4) for hi in range(lo, 4)]
    domain = [dict(zip(names, (c, k, e, u, lo, hi, w), strict=True))
              for c in range(-1, 3) for k in (ABSENT_NODE, DISABLED_NODE, ENABLED_NODE) for e in range(3)
              for u in (0, 1) for lo, hi in ranges for w in range(-1, 4)]
    for profile in ("kip", "kafka"):
        yield f"FinalizedFeatureCache, {profile}", Formula(names, build(profile)), domain, reference(profile)


# --------------------------------------------------------------------------- features: the /feature znode's JSON

INT32_EDGES = (-2**31 - 1, -2**31, -2, -1, 0, 1, 2, 2**31 - 1, 2**31)  # each side of Jackson's isInt and of 0/1
ZNODE_DECODED, ZNODE_MAPPING, ZNODE_ILLEGAL = 0, 1, 2  # decoded; JsonMappingException; IllegalArgumentException
# The ways a node's JSON can be malformed, each one at a time (0: well-formed).
(WELL_FORMED, NO_VERSION, NO_FEATURES, NO_STATUS, VERSION_STRING, STATUS_BOOL, LEVEL_FLOAT, FEATURES_LIST,
 NOT_JSON, STATUS_NULL) = range(10)


def feature_znode_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Kafka 2.8's ``FeatureZNode.decode`` (core/.../zk/ZkData.scala) on the JSON a /feature node can hold: each
    check in Kafka's order, and which exception it throws. Jackson's ``to[Int]`` (DecodeJson.IntDecodeJson)
    takes only a 32-bit JSON int and throws JsonMappingException for anything else (a bigger number, a string,
    a boolean, a float) or a missing ``version``; a map that is not an object is a JsonMappingException too.
    Kafka's own checks throw IllegalArgumentException: a version below the schema version (``kip``: the
    KIP's 0, ``kafka``: V1), no ``features`` map, no (or a null) ``status``, a status that is neither 0 nor 1,
    and a range FinalizedVersionRange refuses (``1 <= min <= max``). A decoded node keeps the status and the
    levels. The system writes only nodes the reference encodes, so only this comparison reaches the decoder's
    edges (an int32 bound off by one, a check done in another order)."""
    def build(profile: str) -> Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]:
        schema = FeatureZNode.schema_version(profile)  # type: ignore[arg-type]

        def outputs(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
            shape, version, status, fmin, fmax = (x[n] for n in ("shape", "version", "status", "fmin", "fmax"))

            def int32(v: Any) -> Any:
                return z3.And(-2**31 <= v, v <= 2**31 - 1)
            # Kafka's checks in its order: the first that fails decides the outcome.
            checks = [(shape == NOT_JSON, ZNODE_ILLEGAL), (shape == NO_VERSION, ZNODE_MAPPING),
                      (shape == VERSION_STRING, ZNODE_MAPPING), (z3.Not(int32(version)), ZNODE_MAPPING),
                      (version < schema, ZNODE_ILLEGAL), (shape == NO_FEATURES, ZNODE_ILLEGAL),
                      (shape == FEATURES_LIST, ZNODE_MAPPING), (shape == LEVEL_FLOAT, ZNODE_MAPPING),
                      (z3.Not(z3.And(int32(fmin), int32(fmax))), ZNODE_MAPPING),
                      (z3.Or(shape == NO_STATUS, shape == STATUS_NULL), ZNODE_ILLEGAL),
                      (shape == STATUS_BOOL, ZNODE_MAPPING), (z3.Not(int32(status)), ZNODE_MAPPING),
                      (z3.And(status != 0, status != 1), ZNODE_ILLEGAL),
                      (z3.Not(z3.And(fmin >= 1, fmax >= 1, fmin <= fmax)), ZNODE_ILLEGAL)]
            outcome: Any = z3.IntVal(ZNODE_DECODED)
            for failed, code in reversed(checks):
                outcome = z3.If(failed, code, outcome)
            decoded = outcome == ZNODE_DECODED
            return {"outcome": outcome, "status": z3.If(decoded, status, DONT_CARE),
                    "min": z3.If(decoded, fmin, DONT_CARE), "max": z3.If(decoded, fmax, DONT_CARE)}
        return outputs

    def reference(profile: str) -> Callable[[Inputs], Outputs]:
        def run(x: Inputs) -> Outputs:
            shape = x["shape"]
            level: object = float(x["fmax"]) if shape == LEVEL_FLOAT else x["fmax"]
            ranges = {"min_version_level": x["fmin"], "max_version_level": level}
            node: dict[str, object] = {"version": str(x["version"]) if shape == VERSION_STRING else x["version"],
                                       "status": True if shape == STATUS_BOOL else
                                       None if shape == STATUS_NULL else x["status"],
                                       "features": [ranges] if shape == FEATURES_LIST else {"f": ranges}}
            for gone, key in ((NO_VERSION, "version"), (NO_FEATURES, "features"), (NO_STATUS, "status")):
                if shape == gone:
                    del node[key]
            text = json.dumps(node)[:-1] if shape == NOT_JSON else json.dumps(node)
            try:
                got = FeatureZNode.decode(text.encode("utf-8"), 0, profile)  # type: ignore[arg-type]
            except JsonMappingException:
                return {"outcome": ZNODE_MAPPING, "status": DONT_CARE, "min": DONT_CARE, "max": DONT_CARE}
            except ValueError:
                return {"outcome": ZNODE_ILLEGAL, "status": DONT_CARE, "min": DONT_CARE, "max": DONT_CARE}
            rng = got.get("f")
            if got.epoch != 0 or len(got.features) != 1 or rng is None:  # kept something else than was written
                return {"outcome": ZNODE_DECODED, "status": DONT_CARE - 1, "min": DONT_CARE - 1,
                        "max": DONT_CARE - 1}
            return {"outcome": ZNODE_DECODED, "status": got.status.value, "min": rng.min_version_level,
                    "max": rng.max_version_level}
        return run

    names = ["shape", "version", "status", "fmin", "fmax"]
    well_formed = itertools.product((WELL_FORMED,), INT32_EDGES, INT32_EDGES, INT32_EDGES, INT32_EDGES)
    # Each malformation over values that pass or fail the checks before and after it.
    malformed = itertools.product(range(1, STATUS_NULL + 1), (-1, 0, 1, 2**31), (0, 1, 2), (0, 1), (1, 2**31))
    domain = [dict(zip(names, v, strict=True)) for v in itertools.chain(well_formed, malformed)]
    for profile in ("kip", "kafka"):
        yield f"FeatureZNode.decode, {profile}", Formula(names, build(profile)), domain, reference(profile)


RULES: dict[str, Callable[[], Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]]] = {
    "streams_assign": streams_assign_cases,
    "streams_on_assignment": streams_on_assignment_cases,
    "streams_codec": streams_codec_cases,
    "streams_decode": streams_decode_cases,
    "streams_tasks": streams_tasks_cases,
    "features_update": features_update_cases,
    "features_request": features_request_cases,
    "version_range": version_range_cases,
    "finalized_cache": finalized_cache_cases,
    "admin_update": admin_update_cases,
    "feature_znode": feature_znode_cases,
    "mv_lossless": mv_lossless_cases,
    "mv_catalog": mv_catalog_cases,
    "mv_update": mv_update_cases,
    "mv_request": mv_request_cases,
    "format_storage": format_storage_cases,
    "mv_activation": mv_activation_cases,
    "zk_triggers": zk_trigger_cases,
}


# --------------------------------------------------------------------------- the gate's decision differential

# What the gate's z3 cell (and ``rollcheck prove``) compares for a protocol: each rule's cases restricted to the
# profile checked, on domains that keep a cell within seconds (the full domains: RULES, benchmarks/prove.py).
# Unlike the successor differential, this reaches the decision code on every input of its domain, whether or
# not a config's states ever ask it: a wrong error code or a refused deletion that no config reaches is caught.
GATE_RULES: dict[str, Callable[[], Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]]] = {
    "streams_assign": lambda: streams_assign_cases(max_members=2, mutations=("",)),
    "streams_on_assignment": streams_on_assignment_cases,
    "streams_codec": streams_codec_cases,
    "streams_decode": streams_decode_cases,
    "streams_tasks": streams_tasks_cases,
    "features_update": lambda: features_update_cases(brokers=1),
    "features_request": features_request_cases,
    "version_range": version_range_cases,
    "finalized_cache": finalized_cache_cases,
    "admin_update": admin_update_cases,
    "feature_znode": feature_znode_cases,
    "mv_lossless": mv_lossless_cases,
    "mv_catalog": mv_catalog_cases,
    "mv_update": lambda: itertools.chain(
        mv_update_cases("example", voters=2, brokers=0, dry_runs=(False, True), edge_ranges=True),
        mv_update_cases("kafka", voters=1, brokers=0, dry_runs=(False,))),
    "mv_request": mv_request_cases,
    "format_storage": format_storage_cases,
    "mv_activation": mv_activation_cases,
    "zk_triggers": zk_trigger_cases,
}
_PROFILE_WORDS = ("kip", "kafka", "kafka-2.0")


def _for_profile(case: str, profile: str) -> bool:
    """A case whose name names a profile runs for that profile only; one naming none, for all. A name's
    comma-separated parts name a profile as the whole part ("activate, kip") or followed by a release
    ("kafka 3.9"); "kafka catalog" names the catalog, not the profile."""
    named = set()
    for part in case.split(", "):
        word, _, rest = part.partition(" ")
        if word in _PROFILE_WORDS and (not rest or rest[:1].isdigit()):
            named.add(word)
    return not named or profile in named


def gate_differential(rules: Sequence[str], profile: str) -> list[dict[str, Any]]:
    """Each rule's differential on the gate's domains, the cases of ``profile`` only; JSON-ready rows."""
    out: list[dict[str, Any]] = []
    for rule in rules:
        cases = [c for c in GATE_RULES[rule]() if _for_profile(c[0], profile)]
        res = differential(rule, cases)
        out.append({"rule": rule, "cases": res.cases, "inputs": res.inputs, "seconds": round(res.seconds, 2),
                    "disagreement": None if res.ok else str(res.disagreement)})
    return out
