"""The Kafka oracle binding of ``streams_probing`` (KIP-268 version probing): the reference's wire decisions put to
Kafka Streams' own ``SubscriptionInfo`` / ``AssignmentInfo`` / ``StreamsConfig`` (kafka_oracle/streams_probing/).

What a row stands for (:meth:`StreamsProbingOracle.config_for`): the row's Kafka release ``R`` stands for the
model release of its epoch (:data:`EPOCHS`: the metadata version it speaks, probing or not); if the config names
that model release, ``R`` stands for it there; otherwise the config is re-targeted at ``R`` (the upgrade onto
``R``: ``to_release`` becomes ``R``'s epoch when it is not older than ``from_release``, else ``from_release``
does: the upgrade from ``R``). Every other model release of the config stands for its default Kafka release
(:data:`PARTNER`), whose JVM answers for its members (a mixed-release group: ``Question.release``). The profile is
``kafka`` (Kafka's code, today's rules).

The model's release ``3.9`` speaks version 11 as a number only (versions above 4 have no layout in the model):
a row release of the same epoch speaking another number above 4 (2.4.1: 5, 4.x) stands for it with the model's
11 read as that release's latest version, an order-preserving renaming (no other version above 4 occurs).

The questions at a state (:meth:`StreamsProbingOracle.questions`), codec-level at every row and, at the rows whose
adapter runs Kafka's ``StreamsPartitionAssignor`` (``streams-3.8``: 3.9.2, 4.4.0), the assignor's own decisions:

* ``subscription.encode``: where a rebalance may happen, each member's subscription at its used version, by its
  own release's classes (bytes equal to ``api.encode_subscription``; above version 4, the version and supported
  version the bytes start with);
* ``subscription.decode``: those bytes read by each member's release (any member may lead);
* ``assignment.encode``: each delivered assignment, by the last leader's release;
* ``assignment.decode``: those bytes read by the receiving member's release;
* ``config.upgradeFrom``: each instance's ``upgrade.from`` accepted by its release's ``StreamsConfig`` (and,
  when set, defined there: KAFKA-6054's back-port).
* ``assignor.assign``: where a rebalance may happen with a leader of the row's release, Kafka's ``assign`` over the
  members' subscriptions (their used and supported versions) and one task more than members: each member's version,
  commonly supported version and error code, the task counts, and whether it asks for a follow-up rebalance, against
  the reference's ``assign``;
* ``assignor.onAssignment``: each delivered assignment a member of the row's release has yet to process, Kafka's
  ``onAssignment`` with the member's used version: the version it uses next, whether it rebalances at once, the
  error it stores (or what it throws), against the reference's ``on_assignment``.

Each member ``i`` carries fixed content (process id ``i + 1``, previous task 0_i, standby task 1_i, endpoint
``host<i>:8080``; its assignment active task 0_i, standby 1_i on partition t-i, host ``host<i>`` with partition
t-i): one entry per set, so that no hash order is compared that Kafka's collections may build otherwise.
"""

from __future__ import annotations

import dataclasses
import struct
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from reference_impl.streams_probing.api import (
    MAX_ENCODED_VERSION,
    AssignmentInfo,
    AssignorError,
    HostInfo,
    SubscriptionInfo,
    TaskId,
    TopicPartition,
    assign,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
    on_assignment,
)
from reference_impl.streams_probing.config import StreamsProbingConfig
from reference_impl.streams_probing.releases import (
    KAFKA,
    KAFKA_20,
    UNKNOWN,
    StreamsRelease,
    release,
    upgrade_from_values,
)
from reference_impl.streams_probing.state import StreamsGroupState
from reference_impl.streams_probing.system import assignment_over_the_wire, subscription_over_the_wire
from rollcheck.oracle.binding import Adapter, KafkaBug, OracleRelease, Question

_HANDLER = "rollcheck.streams.StreamsHandler"
_INTERNALS = "org.apache.kafka.streams.processor.internals.assignment."
_CLASSES = (_INTERNALS + "SubscriptionInfo", _INTERNALS + "AssignmentInfo", "org.apache.kafka.streams.StreamsConfig",
            "org.apache.kafka.streams.processor.TaskId", "org.apache.kafka.common.TopicPartition")

ADAPTERS: tuple[Adapter, ...] = (
    Adapter("streams-0.10.0", _HANDLER, _CLASSES),
    Adapter("streams-0.10.1", _HANDLER, (*_CLASSES, "org.apache.kafka.streams.state.HostInfo")),
    Adapter("streams-2.0", _HANDLER, (*_CLASSES, "org.apache.kafka.streams.state.HostInfo")),
    Adapter("streams-2.1", _HANDLER, (*_CLASSES, "org.apache.kafka.streams.state.HostInfo")),
    Adapter("streams-2.2.2", _HANDLER, (*_CLASSES, "org.apache.kafka.streams.state.HostInfo")),
    Adapter("streams-3.8", _HANDLER, (*_CLASSES, "org.apache.kafka.streams.state.HostInfo",
                                      "org.apache.kafka.streams.processor.assignment.ProcessId",
                                      "org.apache.kafka.streams.processor.internals.StreamsPartitionAssignor")),
)
# The adapters that also run Kafka's StreamsPartitionAssignor (assignor.assign, assignor.onAssignment).
_ASSIGNOR_ADAPTERS = frozenset({"streams-3.8"})

_CI = ("ci", "nightly")
_NIGHTLY = ("nightly",)

# (Kafka release, line, adapter, tiers, model release it stands for, its LATEST_SUPPORTED_VERSION). ci: the newest
# served release of each line the reference models (0.10.0 ... 1.1, 2.0, post-2.0 = 2.1 ... 2.3, 3.9).
_TABLE: tuple[tuple[str, str, str, tuple[str, ...], str, int], ...] = (
    ("0.10.0.1", "0.10.0", "streams-0.10.0", _CI, "0.10.0", 1),
    ("0.10.1.1", "0.10.1", "streams-0.10.1", _CI, "0.10.1", 2),
    ("0.10.2.1", "0.10.2", "streams-0.10.1", _NIGHTLY, "0.10.2", 2),
    ("0.10.2.2", "0.10.2", "streams-0.10.1", _CI, "0.10.2", 2),
    ("0.11.0.3", "0.11.0", "streams-0.10.1", _CI, "0.11.0", 2),
    ("1.0.2", "1.0", "streams-0.10.1", _CI, "1.0", 2),
    ("1.1.1", "1.1", "streams-0.10.1", _CI, "1.1", 2),
    ("2.0.1", "2.0", "streams-2.0", _CI, "2.0", 3),
    ("2.1.1", "2.1", "streams-2.1", _NIGHTLY, "post-2.0", 4),
    ("2.2.2", "2.2", "streams-2.2.2", _NIGHTLY, "post-2.0", 4),
    ("2.3.0", "2.3", "streams-2.1", _NIGHTLY, "post-2.0", 4),
    ("2.3.1", "2.3", "streams-2.2.2", _CI, "post-2.0", 4),
    ("2.4.1", "2.4", "streams-2.2.2", _NIGHTLY, "3.9", 5),
    ("3.9.2", "3.9", "streams-3.8", _CI, "3.9", 11),
    ("4.4.0", "4.4", "streams-3.8", _NIGHTLY, "3.9", 11),
)
EPOCHS: dict[str, str] = {name: model for name, _, _, _, model, _ in _TABLE}
LATEST: dict[str, int] = {name: latest for name, _, _, _, _, latest in _TABLE}
# The Kafka release a model release of the config stands for when the row's release does not.
PARTNER: dict[str, str] = {"0.10.0": "0.10.0.1", "0.10.1": "0.10.1.1", "0.10.2": "0.10.2.2", "0.11.0": "0.11.0.3",
                           "1.0": "1.0.2", "1.1": "1.1.1", "2.0": "2.0.1", "post-2.0": "2.3.1", "3.9": "3.9.2"}
_PRE_24 = frozenset({"0.10.0", "0.10.1", "0.10.2", "0.11.0", "1.0", "1.1", "2.0", "2.1", "2.2", "2.3"})
_MODEL_TOP = 11  # the model's one version above MAX_ENCODED_VERSION (release 3.9's)

RELEASES: tuple[OracleRelease, ...] = tuple(OracleRelease(name, line, adapter, tiers)
                                            for name, line, adapter, tiers, _, _ in _TABLE)


@dataclasses.dataclass(frozen=True)
class _Row:
    """How one row's Kafka releases stand for the model's: model release name -> Kafka release (None: the row's),
    and the renaming of the model's top version."""

    release: str
    kafka: Mapping[str, str]
    top: int  # what the model's version 11 is on the wire of this row

    def target(self, model: str) -> str | None:
        name = self.kafka[model]
        return None if name == self.release else name

    def v(self, version: int) -> int:
        return self.top if version > MAX_ENCODED_VERSION else version

    def latest(self, rel: StreamsRelease) -> int:
        return self.v(rel.latest_supported)


def _row(release_name: str) -> _Row:
    epoch = EPOCHS[release_name]
    kafka = dict(PARTNER)
    kafka[epoch] = release_name
    return _Row(release_name, kafka, LATEST[release_name] if epoch == "3.9" else _MODEL_TOP)


# ---- the members' fixed content, and the normal forms the adapters answer in

def _v_or_unknown(row: _Row, version: int) -> int:
    return UNKNOWN if version == UNKNOWN else row.v(version)


def _pid(i: int) -> uuid.UUID:
    return uuid.UUID(int=i + 1)


def _endpoint(i: int) -> str:
    return f"host{i}:8080"


def _tasks_json(tasks: Iterable[TaskId] | None) -> list[list[int]] | None:
    return None if tasks is None else sorted([t.topic_group_id, t.partition] for t in tasks)


def _parts_json(parts: Iterable[TopicPartition]) -> list[list[Any]]:
    return sorted([p.topic, p.partition] for p in parts)


def exception_json(exc: BaseException) -> dict[str, str]:
    """An exception in the normal form compared: its class's simple name (Kafka's messages vary by release)."""
    return {"exception": type(exc).__name__}


def subscription_json(s: SubscriptionInfo) -> dict[str, Any]:
    future = s.process_id is None  # a probing leader's read of a newer version: version and supported only
    return {"version": s.version, "latestSupported": s.latest_supported,
            "processId": None if future else str(s.process_id),
            "prevTasks": None if future else _tasks_json(s.prev_tasks),
            "standbyTasks": None if future else _tasks_json(s.standby_tasks),
            "userEndPoint": None if future else s.user_endpoint}


def assignment_json(a: AssignmentInfo) -> dict[str, Any]:
    return {"version": a.version, "latestSupported": a.latest_supported,
            "activeTasks": [[t.topic_group_id, t.partition] for t in a.active_tasks],
            "standbyTasks": sorted([[t.topic_group_id, t.partition], _parts_json(ps)] for t, ps in a.standby_tasks),
            "partitionsByHost": sorted([[h.host, h.port], _parts_json(ps)] for h, ps in a.partitions_by_host),
            "error": int(a.error)}


def _prefix(version: int, supported: int) -> str:
    return struct.pack(">ii", version, supported).hex()


def _kafka_6054(kind: str, request: Mapping[str, Any], expected: Any, answer: Any) -> bool:
    """KAFKA-6054's disagreements (no back-port yet): ``upgrade.from`` "0.10.0" accepted but not defined, no
    versioned constructor to encode version 1, and version 1 bytes decoded as the release's own version."""
    if kind == "config.upgradeFrom":
        return request.get("value") == "0.10.0" and isinstance(answer, Mapping) and answer.get("defined") is False
    if kind in ("subscription.encode", "assignment.encode"):
        return (request.get("version") == 1 and isinstance(answer, Mapping)
                and str(answer.get("exception", "")).endswith("NoSuchApi"))
    if kind == "assignment.decode":
        return (isinstance(expected, Mapping) and isinstance(answer, Mapping) and expected.get("version") == 1
                and answer.get("version") == 2 and {**answer, "version": 1} == dict(expected))
    return False


def _kafka_8649(kind: str, request: Mapping[str, Any], expected: Any, answer: Any) -> bool:
    """KAFKA-8649's disagreement: a version 3+ assignment whose bytes are the reference's but for the supported
    version (bytes 4-7), which is the leader's own 4 where the reference writes the group's lower one."""
    if kind != "assignment.encode" or not isinstance(expected, str) or not isinstance(answer, str):
        return False
    version, supported = request.get("version"), request.get("latestSupported")
    return (isinstance(version, int) and version >= 3 and isinstance(supported, int) and supported < 4
            and len(answer) == len(expected) >= 16 and answer[8:16] == _prefix(0, 4)[8:]
            and answer[:8] + expected[8:16] + answer[16:] == expected)


class StreamsProbingOracle:
    """The binding (see the module docstring)."""

    protocol = "streams_probing"
    adapters_dir = "kafka_oracle/streams_probing"
    adapters = ADAPTERS
    releases = RELEASES
    bugs: tuple[KafkaBug, ...] = (
        KafkaBug(
            "KAFKA-6054", "streams_probing",
            "a 0.10.1 ... 1.1 instance cannot send a version 1 subscription: upgrading from 0.10.0 kills the 0.10.0 "
            "leader (no upgrade.from before the back-port)",
            buggy=("0.10.1.1", "0.10.2.1"), fixed=("0.10.2.2", "0.11.0.3", "1.0.2", "1.1.1"), config="from-0.10.0",
            kinds=("config.upgradeFrom", "subscription.encode", "assignment.encode", "assignment.decode"),
            profile="kafka", signature=_kafka_6054,
            story="Rolling a 0.10.0 Streams application onto 0.10.1+ fails: the first bounced instance sends a "
                  "version 2 subscription, which the 0.10.0 leader cannot decode (\"unable to decode subscription "
                  "data: version=2\"), and the group cannot rebalance. The fix (KIP-268's first part) added "
                  "upgrade.from=\"0.10.0\" and public versioned SubscriptionInfo / AssignmentInfo constructors so "
                  "that the bounced instances speak version 1 until every instance is upgraded; 0.10.1.x and "
                  "0.10.2.0/.1 have neither (checked with the 0.10.0.1 JVM decoding the row release's bytes).",
            source="KAFKA-6054; apache/kafka PR #4779 (trunk, 0c0d8363e57, in 2.0.0), back-ported as #4773 (1.1.1, "
                   "7c313f4a074), #4768 (1.0.2, 6a24f5b3fa2), #4758 (0.10.2.2, 67b0a94fa28) and to 0.11.0.3"),
        KafkaBug(
            "KAFKA-8649", "streams_probing",
            "a 2.1 ... 2.3.0 leader writes its own LATEST_SUPPORTED_VERSION (4) into every version 3+ assignment, not "
            "the group's commonly supported version: a 2.0 member is told it may use version 4",
            buggy=("2.1.1", "2.3.0"), fixed=("2.2.2", "2.3.1"), config="small", kinds=("assignment.encode",),
            profile="kafka", signature=_kafka_8649,
            story="Rolling a 2.0 Streams application onto 2.1 ... 2.3.0 (version probing): once a 2.1+ instance "
                  "leads a group that still has 2.0 members, its version 3 assignment announces supported version "
                  "4; the 2.0 members adopt it (2.0's onAssignment has no cap) and then throw "
                  "IllegalArgumentException building a version 4 subscription, so the rolling upgrade breaks. The "
                  "fix computes the minimum supported version over all subscriptions (commonlySupportedVersion) "
                  "and writes it on the wire (the AssignmentInfo(int, int, ...) constructor).",
            source="KAFKA-8649; apache/kafka PR #7423 (trunk, 8da69936a7e), back-ported as #7425 (2.3.1, "
                   "188b3666dbe), #7426 (2.2.2, d3bf3cd3d16) and #7427 (2.1 branch, 8784899168c: no 2.1 release)"),
    )

    def __init__(self) -> None:
        self._rows: dict[str, _Row] = {}
        self._memo: dict[tuple[Any, ...], tuple[Question, ...]] = {}

    # ---- the config a row checks
    def config_for(self, config: Any, release: OracleRelease) -> Any:
        if not isinstance(config, StreamsProbingConfig):
            raise ValueError(f"not a streams_probing config: {type(config).__name__}")
        if config.profile == KAFKA_20:
            raise ValueError("the Kafka oracle compares under the kafka profile (each release's wire format), "
                             "not kafka-2.0")
        epoch = release_epoch(release.name)
        c = dataclasses.replace(config, profile=KAFKA)
        names = {c.old.name, c.new.name}
        if epoch.name not in names:
            if epoch >= c.old:
                c = dataclasses.replace(c, to_release=epoch.name)
            else:
                c = dataclasses.replace(c, from_release=epoch.name)
        c.validate()
        if int(release.name.split(".", 1)[0]) >= 4:
            # Kafka 4.0's StreamsConfig lists no upgrade.from below "2.4" (its validator refuses them): an upgrade
            # that sets one cannot run on 4.x in one step (the model's 3.9 accepts them, as 3.9 does).
            old_values = [v for v in (c.upgrade_from,) if v is not None and v in _PRE_24]
            if old_values:
                raise ValueError(f"Kafka {release.name} refuses upgrade.from={old_values[0]} (4.0 dropped the values "
                                 "below 2.4): this upgrade needs a 3.x release in between")
        return c

    # ---- the questions at a state
    def _row(self, release_name: str) -> _Row:
        row = self._rows.get(release_name)
        if row is None:
            row = self._rows[release_name] = _row(release_name)
        return row

    def questions(self, system: Any, state: Any, release: OracleRelease) -> Iterable[Question]:
        s: StreamsGroupState = state
        row = self._row(release.name)
        out: list[Question] = []
        members = [i for i, x in enumerate(s.instances) if x.running and not x.failure]
        inboxes_empty = all(x.inbox is None for x in s.instances)
        if s.rebalance_pending and inboxes_empty and s.follow_up < 0 and members:
            leaders = sorted({s.instances[i].release for i in members})
            for i in members:
                x = s.instances[i]
                out += self._subscription(row, x.release, x.used_version, i, tuple(leaders))
        for i, x in enumerate(s.instances):
            if x.inbox is not None and s.leader >= 0:
                d = x.inbox
                out += self._assignment(row, s.instances[s.leader].release, x.release, d.version, d.supported,
                                        d.error, i)
        for x in s.instances:
            out += self._upgrade_from(row, x.release, x.upgrade_from, system.config.profile)
        if release.adapter in _ASSIGNOR_ADAPTERS:
            out += self._assignor(system, s, row, members, inboxes_empty)
        return out

    # ---- Kafka's StreamsPartitionAssignor, at the row release's own members
    def _assignor(self, system: Any, s: StreamsGroupState, row: _Row, members: list[int], inboxes_empty: bool
                  ) -> list[Question]:
        """``assignor.assign`` for every leader the row's release answers for (a rebalance may happen: the
        reference's ``assign`` over the members' subscriptions as the leader reads them, the config's tasks dealt
        over the members), and ``assignor.onAssignment`` for every delivered assignment such a member has not
        processed yet (the reference's ``on_assignment``)."""
        cfg = system.config
        out: list[Question] = []
        if s.rebalance_pending and inboxes_empty and s.follow_up < 0 and members:
            for leader in members:
                if row.target(s.instances[leader].release) is None:
                    out += self._assign_question(cfg, s, row, leader, members)
        for i, x in enumerate(s.instances):
            if x.inbox is not None and row.target(x.release) is None:
                out += self._on_assignment_question(cfg, s, row, i)
        return out

    def _assign_question(self, cfg: StreamsProbingConfig, s: StreamsGroupState, row: _Row, leader: int,
                         members: list[int]) -> tuple[Question, ...]:
        # the decisions depend on the config's profile and mutations, which the binding's memo outlives
        key = ("assign", row.release, cfg.profile, cfg.mutations, s.instances[leader].release,
               tuple((i, s.instances[i].release, s.instances[i].used_version) for i in members))
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        lrel = release(s.instances[leader].release)
        tasks = [TaskId(0, p) for p in range(len(members) + 1)]  # one more than members: the counts differ
        request: dict[str, Any] = {"op": "assignor.assign", "tasks": len(tasks), "members": []}
        subs: dict[str, SubscriptionInfo] = {}
        expected: Any
        try:
            for i in members:
                x = s.instances[i]
                rel = release(x.release)
                request["members"].append({"id": str(i), "version": row.v(x.used_version),
                                           "latestSupported": row.latest(rel), "processId": str(_pid(i))})
                subs[str(i)] = subscription_over_the_wire(SubscriptionInfo.of(x.used_version, rel.latest_supported),
                                                          rel, lrel)
            result = assign(lrel, cfg.profile, subs, tasks, cfg.mutations)
            expected = {"assignments": {m: {"version": row.v(a.version),
                                            "supported": _v_or_unknown(row, a.latest_supported),
                                            "error": int(a.error)} for m, a in sorted(result.assignments.items())},
                        "taskCounts": sorted(len(a.active_tasks) for a in result.assignments.values()),
                        "stable": not result.follow_up_rebalance}
        except Exception as exc:  # the member cannot build its subscription, or the leader fails
            expected = exception_json(exc)
        hit = self._memo[key] = (Question("assignor.assign", request, expected, "Rebalance"),)
        return hit

    def _on_assignment_question(self, cfg: StreamsProbingConfig, s: StreamsGroupState, row: _Row, i: int
                                ) -> tuple[Question, ...]:
        x = s.instances[i]
        d = x.inbox
        assert d is not None
        leader = s.instances[s.leader].release if s.leader >= 0 else None
        key = ("onAssignment", row.release, cfg.profile, cfg.mutations, x.release, x.used_version, d.version,
               d.supported, d.error, leader)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        request = {"op": "assignor.onAssignment", "used": row.v(x.used_version), "version": row.v(d.version),
                   "supported": _v_or_unknown(row, d.supported), "error": d.error}
        info = AssignmentInfo(d.version, d.supported, error=AssignorError(d.error))
        expected: Any
        try:
            if leader is not None:
                info = assignment_over_the_wire(info, release(leader), release(x.release))
            upd = on_assignment(release(x.release), cfg.profile, x.used_version, info, cfg.mutations)
            expected = {"used": row.v(upd.used_version), "rebalance": upd.rebalance, "error": int(upd.error)}
        except Exception as exc:
            expected = exception_json(exc)
        hit = self._memo[key] = (Question("assignor.onAssignment", request, expected, "OnAssignment"),)
        return hit

    def _subscription(self, row: _Row, member: str, used: int, i: int, leaders: tuple[str, ...]
                      ) -> tuple[Question, ...]:
        key = ("sub", row.release, member, used, i, leaders)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        rel = release(member)
        latest = row.latest(rel)
        version = row.v(used)
        request = {"op": "subscription.encode", "version": version, "latestSupported": latest,
                   "processId": str(_pid(i)), "prevTasks": [[0, i]], "standbyTasks": [[1, i]],
                   "userEndPoint": _endpoint(i)}
        qs: list[Question] = []
        data: bytes | None = None
        try:
            info = SubscriptionInfo.of(version, latest, _pid(i), [TaskId(0, i)], [TaskId(1, i)], _endpoint(i))
            if version > MAX_ENCODED_VERSION:
                expected: Any = {"prefix": _prefix(version, latest)}
                data = bytes.fromhex(expected["prefix"])  # a newer reader reads no further
            else:
                data = encode_subscription(info, latest)
                expected = data.hex()
        except Exception as exc:
            expected = exception_json(exc)
        qs.append(Question("subscription.encode", request, expected, "Rebalance", row.target(member)))
        if data is not None:
            for leader in leaders:
                lrel = release(leader)
                llatest = row.latest(lrel)
                if version > MAX_ENCODED_VERSION and version <= llatest:
                    continue  # a layout the model does not have, read by a release that knows it
                try:
                    dexp: Any = subscription_json(decode_subscription(data, llatest))
                except Exception as exc:
                    dexp = exception_json(exc)
                qs.append(Question("subscription.decode", {"op": "subscription.decode", "bytes": data.hex()}, dexp,
                                   "Rebalance", row.target(leader)))
        hit = self._memo[key] = tuple(qs)
        return hit

    def _assignment(self, row: _Row, leader: str, member: str, version: int, supported: int, error: int, i: int
                    ) -> tuple[Question, ...]:
        key = ("asg", row.release, leader, member, version, supported, error, i)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        lrel, mrel = release(leader), release(member)
        llatest, mlatest = row.latest(lrel), row.latest(mrel)
        v = row.v(version)
        sup = row.v(supported) if supported != UNKNOWN else UNKNOWN
        qs: list[Question] = []
        if v > llatest:  # the model never builds it (the leader could not)
            self._memo[key] = ()
            return ()
        active = (TaskId(0, i),)
        standby: tuple[tuple[Any, tuple[TopicPartition, ...]], ...] = ((TaskId(1, i), (TopicPartition("t", i),)),)
        hosts: tuple[tuple[Any, tuple[TopicPartition, ...]], ...] = (
            (HostInfo(f"host{i}", 8080), (TopicPartition("t", i),)),)
        request = {"op": "assignment.encode", "version": v, "latestSupported": sup, "activeTasks": [[0, i]],
                   "standbyTasks": [[[1, i], [["t", i]]]], "partitionsByHost": [[[f"host{i}", 8080], [["t", i]]]],
                   "error": error}
        data: bytes | None = None
        try:
            info = AssignmentInfo(v, sup, active, standby, hosts, error)
            if v > MAX_ENCODED_VERSION:
                expected: Any = {"prefix": _prefix(v, sup)}
                data = bytes.fromhex(expected["prefix"])
            else:
                data = encode_assignment(info, llatest)
                expected = data.hex()
        except Exception as exc:
            expected = exception_json(exc)
        qs.append(Question("assignment.encode", request, expected, "OnAssignment", row.target(leader)))
        if data is not None and not (v > MAX_ENCODED_VERSION and v <= mlatest):
            try:
                dexp: Any = assignment_json(decode_assignment(data, mlatest))
            except Exception as exc:
                dexp = exception_json(exc)
            qs.append(Question("assignment.decode", {"op": "assignment.decode", "bytes": data.hex()}, dexp,
                               "OnAssignment", row.target(member)))
        hit = self._memo[key] = tuple(qs)
        return hit

    def _upgrade_from(self, row: _Row, member: str, value: str | None, profile: str) -> tuple[Question, ...]:
        key = ("uf", row.release, member, value, profile)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        values = upgrade_from_values(release(member), profile)
        expected: dict[str, Any] = {"accepted": value is None or value in values}
        if value is not None:
            expected["defined"] = bool(values)
        q = Question("config.upgradeFrom", {"op": "config.upgradeFrom", "value": value}, expected, "RollingBounce",
                     row.target(member))
        hit = self._memo[key] = (q,)
        return hit

    # ---- comparing
    def compare(self, question: Question, answer: Any) -> str | None:
        expected = question.expected
        if isinstance(answer, Mapping) and "exception" in answer:
            got = _simple(str(answer["exception"]))
            if isinstance(expected, Mapping) and "exception" in expected:
                return None if got == expected["exception"] else \
                    f"reference throws {expected['exception']}, Kafka throws {got}: {answer.get('message')}"
            return f"Kafka throws {got}: {answer.get('message')}; the reference answers {_short(expected)}"
        if isinstance(expected, Mapping) and "exception" in expected:
            return f"reference throws {expected['exception']}, Kafka answers {_short(answer)}"
        if isinstance(expected, Mapping) and "prefix" in expected:
            if isinstance(answer, str) and answer.startswith(expected["prefix"]):
                return None
            return f"reference starts {expected['prefix']}, Kafka {_short(answer)}"
        if question.kind == "config.upgradeFrom" and isinstance(answer, Mapping):
            answer = {k: answer.get(k) for k in expected}
        if question.kind == "assignor.assign" and isinstance(answer, Mapping) and "assignments" in answer:
            # Which member gets which task is the task assignor's choice, not the protocol's: the counts are compared.
            got = answer["assignments"]
            answer = {"assignments": {m: {k: a[k] for k in ("version", "supported", "error")}
                                      for m, a in sorted(got.items())},
                      "taskCounts": sorted(a["tasks"] for a in got.values()), "stable": answer["stable"]}
        if answer == expected:
            return None
        if isinstance(expected, Mapping) and isinstance(answer, Mapping):
            for k in sorted(set(expected) | set(answer)):
                if expected.get(k) != answer.get(k):
                    return f"{k}: reference {expected.get(k)!r}, Kafka {answer.get(k)!r}"
        if isinstance(expected, str) and isinstance(answer, str):
            n = next((j for j, (a, b) in enumerate(zip(expected, answer, strict=False)) if a != b),
                     min(len(expected), len(answer)))
            return f"bytes differ from byte {n // 2}: reference {_short(expected)}, Kafka {_short(answer)}"
        return f"reference {_short(expected)}, Kafka {_short(answer)}"


def release_epoch(name: str) -> StreamsRelease:
    """The model release a Kafka release stands for."""
    return release(EPOCHS[name])


def _simple(cls: str) -> str:
    return cls.rsplit(".", 1)[-1].rsplit("$", 1)[-1]


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


ORACLE = StreamsProbingOracle()
