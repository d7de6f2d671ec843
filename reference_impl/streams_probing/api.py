"""KIP-268 at the API level: ``SubscriptionInfo`` / ``AssignmentInfo`` byte encodings and the assignor's rules.

Encodings (big-endian, as ``java.nio.ByteBuffer`` and ``DataOutputStream`` write them):

* Subscription v1: version, client UUID (two int64), previous tasks, standby tasks (each a count and
  ``TaskId`` = group id int32 + partition int32). v2 adds the user endpoint (int32 length + UTF-8).
  v3 puts the supported version right after the version. v4 has v3's layout (Kafka 2.1's ``SubscriptionInfo``).
* Assignment v1: version, active tasks, standby tasks (each ``TaskId`` with its partitions, a topic in
  ``writeUTF`` form and an int32 partition). v2 adds the global assignment (host ``writeUTF``, port int32,
  partitions). v3 puts the supported version after the version; v4 appends the error code (Kafka 2.1).
  Kafka encodes standby tasks with their partitions (``AssignmentInfo.encodeActiveAndStandbyTaskAssignment``)
  where the KIP's sketch writes ``[TaskId]``; we follow Kafka.

Versions above 4 (Kafka 2.3 ... 3.9) exist in the system model as numbers only: their fields (task offset
sums, client tags, rack ids...) play no part in version probing, so they have no encoding here.

The assignor's rules come in two profiles. ``kip`` is KIP-268 as written (and Kafka 2.0's
``StreamsPartitionAssignor``); ``kafka`` is today's assignor (after KAFKA-8649): the "commonly supported
version", future members pooled and given tasks, a forced follow-up rebalance, the error assignment.
Pre-2.0 releases behave the same in both (they have no probing).
"""

from __future__ import annotations

import enum
import struct
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reference_impl.streams_probing.releases import EARLIEST_PROBEABLE_VERSION, UNKNOWN, StreamsRelease

MAX_ENCODED_VERSION = 4


class TaskAssignmentException(Exception):
    """Kafka's ``TaskAssignmentException``: data that cannot be decoded, or an assignment that cannot be used."""


class IllegalStateException(Exception):
    """Kafka's ``IllegalStateException`` from the assignor (a fatal error of the StreamThread)."""


class AssignorError(enum.IntEnum):
    """``AssignorError`` codes (Kafka 2.1+: carried by assignments of version 4 and later)."""

    NONE = 0
    INCOMPLETE_SOURCE_TOPIC_METADATA = 1
    VERSION_PROBING = 2
    ASSIGNMENT_ERROR = 3
    SHUTDOWN_REQUESTED = 4


@dataclass(frozen=True, order=True)
class TaskId:
    topic_group_id: int
    partition: int


@dataclass(frozen=True, order=True)
class TopicPartition:
    topic: str
    partition: int


@dataclass(frozen=True, order=True)
class HostInfo:
    host: str
    port: int


@dataclass(frozen=True)
class SubscriptionInfo:
    """A member's rebalance metadata. ``latest_supported`` is ``UNKNOWN`` for versions 1 and 2.

    A probing release decoding a version newer than its own gets only ``version`` and ``latest_supported``
    (Kafka: "Unable to decode subscription data"); ``process_id`` is then ``None``.
    """

    version: int
    latest_supported: int = UNKNOWN
    process_id: uuid.UUID | None = None
    prev_tasks: frozenset[TaskId] = frozenset()
    standby_tasks: frozenset[TaskId] = frozenset()
    user_endpoint: str | None = None

    @staticmethod
    def of(version: int, latest_supported: int, process_id: uuid.UUID | None = None,
           prev_tasks: frozenset[TaskId] = frozenset(), standby_tasks: frozenset[TaskId] = frozenset(),
           user_endpoint: str | None = None) -> SubscriptionInfo:
        """A subscription as a member of a release with ``latest_supported`` builds it (no supported version
        below version 3: it is not encoded)."""
        if version < 1:
            raise ValueError(f"version must be at least 1; was: {version}")
        if version > latest_supported:
            # Kafka's SubscriptionInfo constructor: "version must be between 1 and LATEST_SUPPORTED_VERSION"
            raise IllegalStateException(f"version must be between 1 and {latest_supported}; was: {version}")
        supported = latest_supported if version >= EARLIEST_PROBEABLE_VERSION else UNKNOWN
        return SubscriptionInfo(version, supported, process_id or uuid.UUID(int=0), prev_tasks, standby_tasks,
                                user_endpoint)


@dataclass(frozen=True)
class AssignmentInfo:
    """The leader's reply to one member. ``latest_supported`` is the leader's supported version (``kip``) or
    the group's commonly supported version (``kafka``); ``UNKNOWN`` for versions 1 and 2."""

    version: int
    latest_supported: int = UNKNOWN
    active_tasks: tuple[TaskId, ...] = ()
    standby_tasks: tuple[tuple[TaskId, tuple[TopicPartition, ...]], ...] = ()
    partitions_by_host: tuple[tuple[HostInfo, tuple[TopicPartition, ...]], ...] = ()
    error: AssignorError = AssignorError.NONE
    partitions: tuple[TopicPartition, ...] = field(default=(), compare=False)  # the consumer-level partitions

    @property
    def is_empty(self) -> bool:
        return not self.active_tasks and not self.standby_tasks and not self.partitions


# ------------------------------------------------------------------------------------------ byte encodings


class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int32(self, v: int) -> None:
        self.parts.append(struct.pack(">i", v))

    def int64(self, v: int) -> None:
        self.parts.append(struct.pack(">q", v))

    def utf(self, s: str) -> None:
        data = _modified_utf8(s)
        if len(data) > 0xFFFF:
            raise TaskAssignmentException(f"string too long for writeUTF: {len(data)} bytes")
        self.parts.append(struct.pack(">H", len(data)) + data)

    def bytes(self) -> bytes:
        return b"".join(self.parts)


class _Reader:
    def __init__(self, data: bytes, what: str) -> None:
        self.data = data
        self.pos = 0
        self.what = what

    def _take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise TaskAssignmentException(
                f"Failed to decode {self.what}: truncated at byte {self.pos} (needed {n} more, "
                f"{len(self.data) - self.pos} left)")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def int32(self) -> int:
        return int(struct.unpack(">i", self._take(4))[0])

    def int64(self) -> int:
        return int(struct.unpack(">q", self._take(8))[0])

    def count(self) -> int:
        n = self.int32()
        if n < 0:
            raise TaskAssignmentException(f"Failed to decode {self.what}: negative count {n} at byte {self.pos - 4}")
        return n

    def utf(self) -> str:
        (n,) = struct.unpack(">H", self._take(2))
        raw = self._take(int(n))
        try:
            return _from_modified_utf8(raw)
        except UnicodeDecodeError as exc:
            raise TaskAssignmentException(f"Failed to decode {self.what}: malformed string ({exc.reason})") from None


def _modified_utf8(s: str) -> bytes:
    """Java's modified UTF-8 (``DataOutputStream.writeUTF``): NUL as C0 80, supplementary characters as
    two 3-byte surrogates."""
    out = bytearray()
    for ch in s:
        cp = ord(ch)
        if cp == 0:
            out += b"\xc0\x80"
        elif cp >= 0x10000:
            cp -= 0x10000
            for sur in (0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)):
                out += bytes((0xE0 | (sur >> 12), 0x80 | ((sur >> 6) & 0x3F), 0x80 | (sur & 0x3F)))
        else:
            out += ch.encode("utf-8")
    return bytes(out)


def _from_modified_utf8(raw: bytes) -> str:
    return raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", errors="surrogatepass").encode(
        "utf-16", "surrogatepass").decode("utf-16")


def _write_task_ids(w: _Writer, tasks: Sequence[TaskId]) -> None:
    w.int32(len(tasks))
    for t in tasks:
        w.int32(t.topic_group_id)
        w.int32(t.partition)


def _read_task_ids(r: _Reader) -> list[TaskId]:
    return [TaskId(r.int32(), r.int32()) for _ in range(r.count())]


def encode_subscription(info: SubscriptionInfo) -> bytes:
    """``SubscriptionInfo.encode()`` for versions 1 to 4."""
    if not 1 <= info.version <= MAX_ENCODED_VERSION:
        raise IllegalStateException(f"Unknown metadata version: {info.version}; latest supported version: "
                                    f"{MAX_ENCODED_VERSION}")
    pid = info.process_id or uuid.UUID(int=0)
    w = _Writer()
    w.int32(info.version)
    if info.version >= 3:
        w.int32(info.latest_supported)
    msb, lsb = pid.int >> 64, pid.int & ((1 << 64) - 1)
    w.int64(msb - (1 << 64) if msb >= 1 << 63 else msb)
    w.int64(lsb - (1 << 64) if lsb >= 1 << 63 else lsb)
    _write_task_ids(w, sorted(info.prev_tasks))
    _write_task_ids(w, sorted(info.standby_tasks))
    if info.version >= 2:
        endpoint = (info.user_endpoint or "").encode("utf-8")
        w.int32(len(endpoint))
        w.parts.append(endpoint)
    return w.bytes()


def decode_subscription(data: bytes, latest_supported: int = MAX_ENCODED_VERSION) -> SubscriptionInfo:
    """``SubscriptionInfo.decode`` as a release speaking up to ``latest_supported`` does it.

    A release before 2.0 (``latest_supported`` < 3) fails on a version it does not know. A probing release
    reads only the used and supported version of a newer one (version probing needs nothing else).
    """
    r = _Reader(data, "SubscriptionInfo")
    version = r.int32()
    if version < 1:
        raise TaskAssignmentException(f"unable to decode subscription data: version={version}")
    if version > latest_supported:
        if latest_supported < EARLIEST_PROBEABLE_VERSION:
            raise TaskAssignmentException(f"unable to decode subscription data: version={version}")
        return SubscriptionInfo(version, r.int32())
    if version > MAX_ENCODED_VERSION:
        raise TaskAssignmentException(f"unable to decode subscription data: version={version} has no encoding "
                                      f"in this model (versions 1..{MAX_ENCODED_VERSION})")
    supported = r.int32() if version >= 3 else UNKNOWN
    msb, lsb = r.int64(), r.int64()
    pid = uuid.UUID(int=((msb & ((1 << 64) - 1)) << 64) | (lsb & ((1 << 64) - 1)))
    prev = frozenset(_read_task_ids(r))
    standby = frozenset(_read_task_ids(r))
    endpoint = None
    if version >= 2:
        n = r.count()
        raw = r._take(n)
        if n:
            try:
                endpoint = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise TaskAssignmentException("Failed to decode SubscriptionInfo: user endpoint is not UTF-8") from None
    return SubscriptionInfo(version, supported, pid, prev, standby, endpoint)


def _write_partitions(w: _Writer, partitions: Sequence[TopicPartition]) -> None:
    w.int32(len(partitions))
    for p in partitions:
        w.utf(p.topic)
        w.int32(p.partition)


def _read_partitions(r: _Reader) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(r.utf(), r.int32()) for _ in range(r.count()))


def encode_assignment(info: AssignmentInfo) -> bytes:
    """``AssignmentInfo.encode()`` for versions 1 to 4."""
    if not 1 <= info.version <= MAX_ENCODED_VERSION:
        raise IllegalStateException(f"Unknown metadata version: {info.version}; latest supported version: "
                                    f"{MAX_ENCODED_VERSION}")
    w = _Writer()
    w.int32(info.version)
    if info.version >= 3:
        w.int32(info.latest_supported)
    _write_task_ids(w, info.active_tasks)
    w.int32(len(info.standby_tasks))
    for task, parts in info.standby_tasks:
        w.int32(task.topic_group_id)
        w.int32(task.partition)
        _write_partitions(w, parts)
    if info.version >= 2:
        w.int32(len(info.partitions_by_host))
        for host, parts in info.partitions_by_host:
            w.utf(host.host)
            w.int32(host.port)
            _write_partitions(w, parts)
    if info.version >= 4:
        w.int32(int(info.error))
    return w.bytes()


def decode_assignment(data: bytes, latest_supported: int = MAX_ENCODED_VERSION) -> AssignmentInfo:
    """``AssignmentInfo.decode`` as a release speaking up to ``latest_supported`` does it: a version it does
    not know is fatal (Kafka: "Unable to decode assignment data")."""
    r = _Reader(data, "AssignmentInfo")
    version = r.int32()
    if not 1 <= version <= min(latest_supported, MAX_ENCODED_VERSION):
        raise TaskAssignmentException(f"Unable to decode assignment data: used version: {version}; latest "
                                      f"supported version: {latest_supported}")
    supported = r.int32() if version >= 3 else UNKNOWN
    active = tuple(_read_task_ids(r))
    standby = tuple((TaskId(r.int32(), r.int32()), _read_partitions(r)) for _ in range(r.count()))
    by_host: tuple[tuple[HostInfo, tuple[TopicPartition, ...]], ...] = ()
    if version >= 2:
        by_host = tuple((HostInfo(r.utf(), r.int32()), _read_partitions(r)) for _ in range(r.count()))
    error = AssignorError.NONE
    if version >= 4:
        code = r.int32()
        try:
            error = AssignorError(code)
        except ValueError:
            raise TaskAssignmentException(f"Failed to decode AssignmentInfo: unknown error code {code}") from None
    return AssignmentInfo(version, supported, active, standby, by_host, error)


# ------------------------------------------------------------------------------------------ leader: assign()

MUTATIONS = frozenset({
    "leader_fails_on_future",  # a probing leader throws on a subscription newer than it understands
    "assign_at_leader_version",  # the leader assigns at its own version while older members remain
    "member_never_upgrades",  # a member never returns to a higher version after probing down
    "uncapped_adopt",  # KAFKA-8649: a member adopts the leader's supported version even above its own
    "no_leader_follow_up",  # kip: the leader bounced last does not trigger the final rebalance
    "no_kafka_6054_backport",  # KAFKA-6054: a pre-2.0 release without upgrade.from="0.10.0" (system level)
    "leader_supported_is_used",  # kip: the leader encodes the version it uses as its supported version
    "restart_ignores_upgrade_from",  # a restarted instance starts at its latest version despite upgrade.from
    "commonly_supported_is_max",  # kafka: the "commonly supported" version is the maximum, not the minimum
})


@dataclass(frozen=True)
class GroupAssignment:
    """The leader's result: an assignment per member id, and whether it asks for a follow-up rebalance."""

    assignments: Mapping[str, AssignmentInfo]
    version_probing: bool
    follow_up_rebalance: bool
    used_version: int  # the version of the regular assignments (minReceivedMetadataVersion)


def _round_robin(members: Sequence[str], tasks: Sequence[TaskId]) -> dict[str, tuple[TaskId, ...]]:
    out: dict[str, list[TaskId]] = {m: [] for m in members}
    for i, t in enumerate(sorted(tasks)):
        out[members[i % len(members)]].append(t)
    return {m: tuple(ts) for m, ts in out.items()}


def assign(leader: StreamsRelease, profile: str, subscriptions: Mapping[str, SubscriptionInfo],
           tasks: Sequence[TaskId] = (), mutations: frozenset[str] = frozenset()) -> GroupAssignment:
    """The group leader's ``assign()`` over its members' decoded subscriptions.

    Raises :class:`TaskAssignmentException` or :class:`IllegalStateException` when the leader fails (its
    StreamThread dies): a pre-2.0 leader meeting a version it cannot decode; a probing leader meeting a
    future subscription together with a pre-2.0 one (``kip``, and a ``kafka`` leader that has no error code
    to send, i.e. one speaking version 3).
    """
    if not subscriptions:
        raise ValueError("assign() needs at least one subscription")
    latest = leader.latest_supported
    members = sorted(subscriptions)
    for m in members:
        v = subscriptions[m].version
        if v > latest and not leader.probing:
            # Pre-2.0 SubscriptionInfo.decode throws on a version it does not know.
            raise TaskAssignmentException(f"unable to decode subscription data: version={v}")
    future = [m for m in members if subscriptions[m].version > latest]
    current = [m for m in members if m not in future]
    min_received = min([latest, *(subscriptions[m].version for m in members)])
    min_supported = min([latest, *(subscriptions[m].latest_supported for m in members)])
    if "commonly_supported_is_max" in mutations:
        min_supported = max([latest, *(subscriptions[m].latest_supported for m in members)])
    version_probing = bool(future)
    if future and "leader_fails_on_future" in mutations:
        raise IllegalStateException(f"Received a future subscription (version: {subscriptions[future[0]].version})")
    if future and min_received < EARLIEST_PROBEABLE_VERSION:
        message = (f"Received a future (version probing) subscription (version: "
                   f"{max(subscriptions[m].version for m in future)}) and an incompatible pre Kafka 2.0 "
                   f"subscription (version: {min_received}) at the same time.")
        if profile == "kafka" and latest >= 4:
            # Today's assignor catches its TaskAssignmentException and sends every member an error
            # assignment at LATEST_SUPPORTED_VERSION (StreamsPartitionAssignor.errorAssignment).
            err = AssignmentInfo(latest, latest, error=AssignorError.ASSIGNMENT_ERROR)
            return GroupAssignment({m: err for m in members}, True, False, latest)
        raise IllegalStateException(message)
    used = latest if "assign_at_leader_version" in mutations else min_received
    assignments: dict[str, AssignmentInfo] = {}
    if profile == "kip" or not leader.probing:
        # The leader encodes its own supported version ("X before the leader is upgraded and Y after").
        supported = latest if used >= EARLIEST_PROBEABLE_VERSION else UNKNOWN
        if "leader_supported_is_used" in mutations and supported != UNKNOWN:
            supported = used
        share = _round_robin(current or members, tasks)
        for m in current:
            assignments[m] = AssignmentInfo(used, supported, share.get(m, ()))
        for m in future:
            # "Old Leader sends empty Assignment back ... encodes both version numbers as leader's supported
            # version X" (2.0: new AssignmentInfo(), i.e. LATEST_SUPPORTED_VERSION twice).
            assignments[m] = AssignmentInfo(latest, latest)
        # KIP-268: "if the leader is bounced last, the metadata upgrade only finishes after one more
        # rebalance ... the leader should be responsible to trigger this final rebalance". The leader can tell:
        # every member announced a supported version above the one used now.
        known = [subscriptions[m].latest_supported for m in members]
        every_member_can_go_higher = (leader.probing and UNKNOWN not in known and not future
                                      and min(min(known), latest) > used)
        follow_up = every_member_can_go_higher and "no_leader_follow_up" not in mutations
        return GroupAssignment(assignments, version_probing, follow_up, used)
    # kafka: future members are pooled into one "future" client and get tasks like everyone else; every
    # assignment carries the minimum supported version over all subscriptions; probing forces a follow-up.
    share = _round_robin(members, tasks)
    for m in members:
        assignments[m] = AssignmentInfo(used, min_supported if used >= EARLIEST_PROBEABLE_VERSION else UNKNOWN,
                                        share.get(m, ()))
    return GroupAssignment(assignments, version_probing, version_probing, used)


# ------------------------------------------------------------------------------------------ member: onAssignment()


class MemberOutcome(enum.Enum):
    NONE = "none"  # processed; the used version stays
    PROBE_DOWNGRADE = "probe-downgrade"  # lowered its subscription version, rejoins at once
    ADOPT_SUPPORTED = "adopt-supported"  # raised its subscription version to the leader's (commonly) supported one
    ERROR_SHUTDOWN = "error-shutdown"  # the leader sent an error code: the client shuts down


@dataclass(frozen=True)
class MemberUpdate:
    used_version: int
    rebalance: bool  # the member forces a new rebalance (unsubscribe/subscribe/poll)
    outcome: MemberOutcome
    error: AssignorError = AssignorError.NONE


def on_assignment(member: StreamsRelease, profile: str, used_version: int, info: AssignmentInfo,
                  mutations: frozenset[str] = frozenset()) -> MemberUpdate:
    """A member's ``onAssignment`` after sending a version ``used_version`` subscription.

    Raises :class:`TaskAssignmentException` / :class:`IllegalStateException` when the member fails.
    """
    received, supported = info.version, info.latest_supported
    if not member.can_decode(received):
        raise TaskAssignmentException(f"Unable to decode assignment data: used version: {received}; latest "
                                      f"supported version: {member.latest_supported}")
    if profile == "kafka" and member.probing and received >= 4 and info.error != AssignorError.NONE:
        return MemberUpdate(used_version, False, MemberOutcome.ERROR_SHUTDOWN, info.error)
    if received > used_version:
        # Kafka 2.0 threw IllegalStateException; today's validateMetadataVersions a TaskAssignmentException.
        error_type = TaskAssignmentException if profile == "kafka" else IllegalStateException
        raise error_type(f"Sent a version {used_version} subscription but got an assignment with higher "
                         f"version {received}.")
    if not member.probing or received < EARLIEST_PROBEABLE_VERSION:
        return MemberUpdate(used_version, False, MemberOutcome.NONE)
    if profile == "kafka":
        if supported > member.latest_supported:
            raise TaskAssignmentException("Can't upgrade to metadata version greater than we support")
        if supported > used_version and "member_never_upgrades" not in mutations:
            # "successful version probing and end of rolling upgrade": rejoin with the higher version at once.
            return MemberUpdate(supported, True, MemberOutcome.ADOPT_SUPPORTED)
        if received < used_version:
            return MemberUpdate(supported, True, MemberOutcome.PROBE_DOWNGRADE)
        return MemberUpdate(used_version, False, MemberOutcome.NONE)
    # kip: "If an upgrade follower sends new version number Y Subscription and receives version X Assignment
    # with supported-version = X, it can downgrade to X ... To force an immediate second rebalance, the follower
    # does an unsubscribe()/subscribe()/poll() sequence."
    if received < used_version and received == supported:
        return MemberUpdate(received, True, MemberOutcome.PROBE_DOWNGRADE)
    # "If an upgraded instance receives an Assignment it always checks the leaders supported-version and update
    # its downgraded used-version if possible" ("if possible": not above what it can encode itself; Kafka 2.0
    # did not cap it, which is KAFKA-8649, the uncapped_adopt mutation).
    if supported > used_version and "member_never_upgrades" not in mutations:
        target = supported if "uncapped_adopt" in mutations else min(supported, member.latest_supported)
        if target > used_version:
            return MemberUpdate(target, False, MemberOutcome.ADOPT_SUPPORTED)
    return MemberUpdate(used_version, False, MemberOutcome.NONE)
