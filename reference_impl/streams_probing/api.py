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

Kafka's sets and maps (``HashSet<TaskId>``, ``Map<TaskId, Set<TopicPartition>>``, ``Map<HostInfo, ...>``) are
written in ``java.util.HashMap`` iteration order (``jvm.hash_order``), each as ``new HashSet<>()`` /
``new HashMap<>()`` filled in the order given (``TaskSet`` keeps it; a plain Python set is taken in
``TaskId`` order). Kafka's own collections may have been built otherwise (``AssignmentInfo.decode``'s
``new HashMap<>(count)`` / ``new HashSet<>(n)``, ``new HashSet<>(collection)``): a table of another size
can order the same keys differently, so bytes match Kafka's for collections built the usual way.
Equality treats them as sets and maps; the active task list keeps its order and duplicates, as Kafka's ``List``.

Errors are Kafka's (Apache Kafka 2.0 / 2.1 ``SubscriptionInfo`` / ``AssignmentInfo``): a subscription is read
from a raw ``ByteBuffer`` (truncated: ``BufferUnderflowException``; a negative task count reads no task; a
negative endpoint length: ``NegativeArraySizeException``; bad UTF-8 is replaced); an assignment through a
``DataInputStream`` (an ``IOException`` becomes ``TaskAssignmentException("Failed to decode AssignmentInfo")``,
its cause kept as ``__cause__``; negative counts fail in ``ArrayList`` / ``HashMap`` constructors).

Versions above 4 (Kafka 2.4 ... 3.9) exist in the system model as numbers only: their fields (task offset
sums, client tags, rack ids...) play no part in version probing, so they have no encoding here.

The assignor's rules come in three profiles. ``kip`` is KIP-268 as written (its versions are Kafka 2.0's, but
not all its rules: the leader triggers the final rebalance, a member caps the version it adopts, tasks are dealt
round robin during probing); ``kafka`` is today's assignor (after KAFKA-8649) applied to every probing release:
the "commonly supported version", future members pooled and given tasks, a forced follow-up rebalance, the error
assignment; ``kafka-2.0`` runs each probing release's own shipped code: a 2.0 instance Kafka 2.0's assignor, a
post-2.0 instance the 2.1 branch's (with KAFKA-8649's fix), see ``_assign_own_branch`` /
``_on_assignment_own_branch``. Pre-2.0 releases behave the same in all three (they have no probing).
"""

from __future__ import annotations

import enum
import struct
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from reference_impl.streams_probing import jvm
from reference_impl.streams_probing.jvm import (
    BufferUnderflowException,
    EOFException,
    IllegalArgumentException,
    NegativeArraySizeException,
    UTFDataFormatException,
)
from reference_impl.streams_probing.releases import EARLIEST_PROBEABLE_VERSION, KAFKA_20, UNKNOWN, StreamsRelease

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


def _error_code(code: int) -> AssignorError | int:
    """An ``AssignorError`` if the code is one, else the raw int (2.1's ``errCode = in.readInt()`` keeps any)."""
    try:
        return AssignorError(code)
    except ValueError:
        return int(code)


@dataclass(frozen=True, order=True)
class TaskId:
    topic_group_id: int
    partition: int

    def java_hash(self) -> int:
        return jvm.task_id_hash(self.topic_group_id, self.partition)


@dataclass(frozen=True, order=True)
class TopicPartition:
    topic: str
    partition: int

    def java_hash(self) -> int:
        return jvm.topic_partition_hash(self.topic, self.partition)


@dataclass(frozen=True, order=True)
class HostInfo:
    host: str
    port: int

    def java_hash(self) -> int:
        return jvm.host_info_hash(self.host, self.port)


def _compare_task_ids(a: TaskId, b: TaskId) -> int:
    return (a > b) - (a < b)  # TaskId.compareTo: group id, then partition


class TaskSet(frozenset[TaskId]):
    """A ``Set<TaskId>`` that remembers the order its tasks were added in, which a Java ``HashSet``'s iteration
    order depends on (keys in one bin stay in insertion order). It equals and hashes as the plain frozenset of
    its tasks and iterates in that order. Built from a sequence it keeps the sequence's order (a task given
    twice keeps its first place); from an unordered set it takes ``TaskId`` order."""

    _order: tuple[TaskId, ...]

    def __new__(cls, tasks: Iterable[TaskId] = ()) -> TaskSet:
        if isinstance(tasks, TaskSet):
            return tasks
        order = tuple(sorted(tasks)) if isinstance(tasks, (set, frozenset)) else tuple(dict.fromkeys(tasks))
        self = super().__new__(cls, order)
        self._order = order
        return self

    def __iter__(self) -> Iterator[TaskId]:
        return iter(self._order)

    def __repr__(self) -> str:
        return f"TaskSet({list(self._order)!r})"


def _task_set_order(tasks: Iterable[TaskId]) -> list[TaskId]:
    """A ``HashSet<TaskId>``'s iteration order: ``new HashSet<>()`` filled in the set's insertion order."""
    return jvm.hash_order(TaskSet(tasks), TaskId.java_hash, _compare_task_ids)


@dataclass(frozen=True)
class SubscriptionInfo:
    """A member's rebalance metadata. ``latest_supported`` is ``UNKNOWN`` for versions 1 and 2.

    A probing release decoding a version newer than its own gets only ``version`` and ``latest_supported``
    (Kafka: "Unable to decode subscription data"); ``process_id`` is then ``None``. Constructing it directly
    is Kafka's unchecked test constructor; :meth:`of` is the public one.
    """

    version: int
    latest_supported: int = UNKNOWN
    process_id: uuid.UUID | None = None
    prev_tasks: frozenset[TaskId] = frozenset()
    standby_tasks: frozenset[TaskId] = frozenset()
    user_endpoint: str | None = None

    def __post_init__(self) -> None:
        # Kafka's fields are Set<TaskId>: any iterable, duplicates collapse, insertion order kept for encoding.
        object.__setattr__(self, "prev_tasks", TaskSet(self.prev_tasks))
        object.__setattr__(self, "standby_tasks", TaskSet(self.standby_tasks))

    @staticmethod
    def of(version: int, latest_supported: int, process_id: uuid.UUID | None = None,
           prev_tasks: Iterable[TaskId] = frozenset(), standby_tasks: Iterable[TaskId] = frozenset(),
           user_endpoint: str | None = None) -> SubscriptionInfo:
        """A subscription as a member of a release with ``latest_supported`` builds it (no supported version
        below version 3: it is not encoded).

        Kafka 2.0+'s constructor checks the version against its ``LATEST_SUPPORTED_VERSION``. Releases before
        2.0 had no check (their ``encode`` wrote any version); the model applies the same one to them.
        """
        if not 1 <= version <= latest_supported:
            raise IllegalArgumentException(f"version must be between 1 and {latest_supported}; was: {version}")
        supported = latest_supported if version >= EARLIEST_PROBEABLE_VERSION else UNKNOWN
        # the task sets as given: the constructor makes them Set<TaskId>s, for this and for the unchecked one
        return SubscriptionInfo(version, supported, process_id or uuid.UUID(int=0),
                                cast(frozenset[TaskId], prev_tasks), cast(frozenset[TaskId], standby_tasks),
                                user_endpoint)

    @staticmethod
    def at_latest(latest_supported: int, process_id: uuid.UUID | None = None,
                  prev_tasks: Iterable[TaskId] = frozenset(), standby_tasks: Iterable[TaskId] = frozenset(),
                  user_endpoint: str | None = None) -> SubscriptionInfo:
        """Kafka 2.0 / 2.1's ``new SubscriptionInfo(processId, prevTasks, standbyTasks, userEndPoint)``: the
        constructor without a version, which uses the release's ``LATEST_SUPPORTED_VERSION``."""
        return SubscriptionInfo.of(latest_supported, latest_supported, process_id, prev_tasks, standby_tasks,
                                   user_endpoint)


_PartitionMap = tuple[tuple[Any, tuple[TopicPartition, ...]], ...]


def _partition_map(entries: Mapping[Any, Iterable[TopicPartition]] | Iterable[tuple[Any, Iterable[TopicPartition]]]
                   ) -> _PartitionMap:
    """A ``Map<K, Set<TopicPartition>>`` as pairs in insertion order: a key given twice keeps its first place
    and its last value (``HashMap.put``), a partition given twice counts once (``HashSet.add``)."""
    items = entries.items() if isinstance(entries, Mapping) else entries
    out: dict[Any, tuple[TopicPartition, ...]] = {}
    for key, parts in items:
        out[key] = tuple(dict.fromkeys(parts))
    return tuple(out.items())


def _as_map(entries: _PartitionMap) -> frozenset[tuple[Any, frozenset[TopicPartition]]]:
    return frozenset((k, frozenset(v)) for k, v in entries)


@dataclass(frozen=True, eq=False)
class AssignmentInfo:
    """The leader's reply to one member. ``latest_supported`` is the leader's supported version (``kip``) or
    the group's commonly supported version (``kafka``); ``UNKNOWN`` for versions 1 and 2.

    ``standby_tasks`` and ``partitions_by_host`` are maps (given as a ``Mapping`` or as pairs) of partition
    sets; ``error`` is an ``AssignorError`` or, for a code Kafka does not define, the raw int. Every Kafka 2.1
    constructor rejects a version below 1 (``IllegalArgumentException``); the upper bound depends on the
    release that builds it: :meth:`of`, or ``encode_assignment(info, latest_supported)``.
    """

    version: int
    latest_supported: int = UNKNOWN
    active_tasks: tuple[TaskId, ...] = ()
    standby_tasks: _PartitionMap = ()
    partitions_by_host: _PartitionMap = ()
    error: AssignorError | int = AssignorError.NONE
    partitions: tuple[TopicPartition, ...] = field(default=(), compare=False)  # the consumer-level partitions

    def __post_init__(self) -> None:
        if self.version < 1:
            raise IllegalArgumentException(f"version must be between 1 and {MAX_ENCODED_VERSION}; "
                                           f"was: {self.version}")
        object.__setattr__(self, "active_tasks", tuple(self.active_tasks))
        object.__setattr__(self, "standby_tasks", _partition_map(self.standby_tasks))
        object.__setattr__(self, "partitions_by_host", _partition_map(self.partitions_by_host))
        object.__setattr__(self, "error", _error_code(int(self.error)))

    def _key(self) -> tuple[Any, ...]:
        # Kafka's equals: the active List in order, the maps and partition sets as maps and sets.
        return (self.version, self.latest_supported, int(self.error), self.active_tasks,
                _as_map(self.standby_tasks), _as_map(self.partitions_by_host))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AssignmentInfo):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @staticmethod
    def of(version: int, latest_supported: int, active_tasks: Iterable[TaskId] = (),
           standby_tasks: Mapping[TaskId, Iterable[TopicPartition]] | Iterable[tuple[TaskId, Iterable[TopicPartition]]]
           = (), partitions_by_host: Mapping[HostInfo, Iterable[TopicPartition]]
           | Iterable[tuple[HostInfo, Iterable[TopicPartition]]] = (),
           error: AssignorError | int = AssignorError.NONE, commonly_supported: int | None = None) -> AssignmentInfo:
        """An assignment as a release speaking ``latest_supported`` builds it: Kafka 2.0's
        ``AssignmentInfo(version, activeTasks, standbyTasks, hostState)`` and 2.1's ``AssignmentInfo(version,
        activeTasks, standbyTasks, partitionsByHost, errCode)`` check the version and encode their
        ``LATEST_SUPPORTED_VERSION`` as the supported one; 2.1's ``commonlySupportedVersion`` overrides it."""
        if not 1 <= version <= latest_supported:
            raise IllegalArgumentException(f"version must be between 1 and {latest_supported}; was: {version}")
        supported = latest_supported if commonly_supported is None else commonly_supported
        # the tasks and maps as given: the constructor normalizes them, for this and for the unchecked one
        return AssignmentInfo(version, supported if version >= EARLIEST_PROBEABLE_VERSION else UNKNOWN,
                              cast(tuple[TaskId, ...], active_tasks), cast(_PartitionMap, standby_tasks),
                              cast(_PartitionMap, partitions_by_host), error)

    @staticmethod
    def at_latest(latest_supported: int, active_tasks: Iterable[TaskId] = (),
                  standby_tasks: Mapping[TaskId, Iterable[TopicPartition]]
                  | Iterable[tuple[TaskId, Iterable[TopicPartition]]] = (),
                  partitions_by_host: Mapping[HostInfo, Iterable[TopicPartition]]
                  | Iterable[tuple[HostInfo, Iterable[TopicPartition]]] = (),
                  error: AssignorError | int = AssignorError.NONE) -> AssignmentInfo:
        """Kafka 2.0 / 2.1's constructors without a version, ``new AssignmentInfo(activeTasks, standbyTasks,
        hostState)`` and ``new AssignmentInfo()`` (the empty reply to a future member): the release's
        ``LATEST_SUPPORTED_VERSION`` as both the used and the supported version."""
        return AssignmentInfo.of(latest_supported, latest_supported, active_tasks, standby_tasks, partitions_by_host,
                                 error)

    @property
    def is_empty(self) -> bool:
        return not self.active_tasks and not self.standby_tasks and not self.partitions


# ------------------------------------------------------------------------------------------ SubscriptionInfo bytes


class _ByteBuffer:
    """``java.nio.ByteBuffer`` reads: past the end is a ``BufferUnderflowException`` (no message)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def get(self, n: int) -> bytes:
        if n > len(self.data) - self.pos:
            raise BufferUnderflowException()
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def get_int(self) -> int:
        return int(struct.unpack(">i", self.get(4))[0])

    def get_long(self) -> int:
        return int(struct.unpack(">q", self.get(8))[0])


def _version_range_error(version: int, latest_supported: int) -> IllegalStateException:
    return IllegalStateException(f"Unknown metadata version: {version}; latest supported version: {latest_supported}")


def encode_subscription(info: SubscriptionInfo, latest_supported: int = MAX_ENCODED_VERSION) -> bytes:
    """``SubscriptionInfo.encode()`` of a release speaking ``latest_supported`` (versions 1 to 4).

    Task sets are written in ``HashSet`` order; the endpoint as ``String.getBytes(UTF_8)`` (a lone surrogate
    becomes ``?``). Kafka 2.0 writes its ``LATEST_SUPPORTED_VERSION`` as the supported version, 2.1 the field.
    Before 2.0 there is one layout: 0.10.0 encodes only version 1; 0.10.1 ... 1.1 write any version with the
    endpoint after the tasks, so their version 1 (``upgrade.from="0.10.0"``) carries it too (0.10.0's
    ``decode`` ignores the extra bytes).
    """
    if latest_supported == 1 and info.version != 1:
        raise TaskAssignmentException(f"unable to encode subscription data: version={info.version}")
    if latest_supported != 2 and not 1 <= info.version <= min(latest_supported, MAX_ENCODED_VERSION):
        raise _version_range_error(info.version, latest_supported)
    pid = info.process_id or uuid.UUID(int=0)
    parts = [struct.pack(">i", info.version)]
    if info.version >= 3 and latest_supported != 2:
        parts.append(struct.pack(">i", 3 if latest_supported == 3 else info.latest_supported))
    parts.append(struct.pack(">QQ", pid.int >> 64, pid.int & ((1 << 64) - 1)))
    for tasks in (info.prev_tasks, info.standby_tasks):
        ordered = _task_set_order(tasks)
        parts.append(struct.pack(">i", len(ordered)))
        parts += [struct.pack(">ii", t.topic_group_id, t.partition) for t in ordered]
    if info.version >= 2 or latest_supported == 2:
        endpoint = b"" if info.user_endpoint is None else jvm.utf8_bytes(info.user_endpoint)
        parts.append(struct.pack(">i", len(endpoint)) + endpoint)
    return b"".join(parts)


def _read_task_set(buf: _ByteBuffer) -> TaskSet:
    # for (int i = 0; i < numPrevTasks; i++): a negative count reads nothing; wire order is insertion order
    return TaskSet([TaskId(buf.get_int(), buf.get_int()) for _ in range(buf.get_int())])


def decode_subscription(data: bytes, latest_supported: int = MAX_ENCODED_VERSION) -> SubscriptionInfo:
    """``SubscriptionInfo.decode`` as a release speaking up to ``latest_supported`` does it.

    A release before 2.0 (``latest_supported`` < 3) fails on a version it does not know. A probing release
    takes any other version (a newer one, 0, a negative one) to its ``default:`` branch: it reads the supported
    version and nothing else (version probing needs nothing else).
    """
    buf = _ByteBuffer(data)
    version = buf.get_int()
    if latest_supported < EARLIEST_PROBEABLE_VERSION:
        # 0.10.0 reads version 1; 0.10.1 ... 1.1 read 1 and CURRENT_VERSION (2).
        if not 1 <= version <= latest_supported:
            raise TaskAssignmentException(f"unable to decode subscription data: version={version}")
    elif not 1 <= version <= latest_supported:
        return SubscriptionInfo(version, buf.get_int())
    elif version > MAX_ENCODED_VERSION:
        raise TaskAssignmentException(f"unable to decode subscription data: version={version} has no encoding "
                                      f"in this model (versions 1..{MAX_ENCODED_VERSION})")
    supported = buf.get_int() if version >= 3 else UNKNOWN
    msb, lsb = buf.get_long(), buf.get_long()
    pid = uuid.UUID(int=((msb & ((1 << 64) - 1)) << 64) | (lsb & ((1 << 64) - 1)))
    prev = _read_task_set(buf)
    standby = _read_task_set(buf)
    endpoint = None
    if version >= 2:
        n = buf.get_int()
        if n != 0:
            if n < 0:
                raise NegativeArraySizeException(str(n))  # new byte[bytesLength]
            endpoint = jvm.utf8_string(buf.get(n))
    return SubscriptionInfo(version, supported, pid, prev, standby, endpoint)


# ------------------------------------------------------------------------------------------ AssignmentInfo bytes


class _DataInputStream:
    """``DataInputStream`` over the assignment bytes: past the end is an ``EOFException``."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def read(self, n: int) -> bytes:
        if n > len(self.data) - self.pos:
            raise EOFException()
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def read_int(self) -> int:
        return int(struct.unpack(">i", self.read(4))[0])

    def read_utf(self) -> str:
        (n,) = struct.unpack(">H", self.read(2))
        return jvm.read_utf(self.read(int(n)))


def _capacity(n: int, message: str) -> int:
    """``new ArrayList<>(n)`` ("Illegal Capacity: ") / ``new HashMap<>(n)`` ("Illegal initial capacity: ")."""
    if n < 0:
        raise IllegalArgumentException(f"{message}{n}")
    return n


def _read_partition_set(src: _DataInputStream) -> tuple[TopicPartition, ...]:
    n = _capacity(src.read_int(), "Illegal initial capacity: ")  # new HashSet<>(numPartitions)
    return tuple(TopicPartition(src.read_utf(), src.read_int()) for _ in range(n))


def _write_partition_set(parts: Iterable[TopicPartition]) -> list[bytes]:
    ordered = jvm.hash_order(parts, TopicPartition.java_hash)
    out = [struct.pack(">i", len(ordered))]
    for p in ordered:
        out += [jvm.write_utf(p.topic), struct.pack(">i", p.partition)]
    return out


def encode_assignment(info: AssignmentInfo, latest_supported: int = MAX_ENCODED_VERSION) -> bytes:
    """``AssignmentInfo.encode()`` of a release speaking ``latest_supported`` (versions 1 to 4).

    A version outside 1 .. ``latest_supported`` is the constructor's ``IllegalArgumentException`` (Kafka could
    not have built it). Maps and partition sets are written in ``HashMap`` order; a string over 65535 bytes of
    modified UTF-8 fails as ``TaskAssignmentException("Failed to encode AssignmentInfo")``.
    """
    if not 1 <= info.version <= latest_supported:
        raise IllegalArgumentException(f"version must be between 1 and {latest_supported}; was: {info.version}")
    if info.version > MAX_ENCODED_VERSION:
        raise _version_range_error(info.version, MAX_ENCODED_VERSION)  # no layout in this model
    parts = [struct.pack(">i", info.version)]
    if info.version >= 3:
        # Kafka 2.0 writes its LATEST_SUPPORTED_VERSION, 2.1 the commonly supported version field.
        parts.append(struct.pack(">i", 3 if latest_supported == 3 else info.latest_supported))
    try:
        parts.append(struct.pack(">i", len(info.active_tasks)))
        parts += [struct.pack(">ii", t.topic_group_id, t.partition) for t in info.active_tasks]
        standby = dict(info.standby_tasks)
        parts.append(struct.pack(">i", len(standby)))
        for task in jvm.hash_order(standby, TaskId.java_hash, _compare_task_ids):
            parts.append(struct.pack(">ii", task.topic_group_id, task.partition))
            parts += _write_partition_set(standby[task])
        if info.version >= 2 or latest_supported == 2:
            # 0.10.1 ... 1.1 write the global assignment whatever the version (their one layout, as for the
            # subscription's endpoint): a version 1 assignment (upgrade.from="0.10.0") carries it too, and
            # 0.10.0's decode ignores the extra bytes (AssignmentInfo.encode at 1.1.1, KAFKA-6054's back-port).
            hosts = dict(info.partitions_by_host)
            parts.append(struct.pack(">i", len(hosts)))
            for host in jvm.hash_order(hosts, HostInfo.java_hash):
                parts += [jvm.write_utf(host.host), struct.pack(">i", host.port)]
                parts += _write_partition_set(hosts[host])
    except UTFDataFormatException as exc:
        raise TaskAssignmentException("Failed to encode AssignmentInfo") from exc
    if info.version >= 4:
        parts.append(struct.pack(">i", int(info.error)))
    return b"".join(parts)


def decode_assignment(data: bytes, latest_supported: int = MAX_ENCODED_VERSION) -> AssignmentInfo:
    """``AssignmentInfo.decode`` as a release speaking up to ``latest_supported`` does it: a version it does
    not know is fatal (2.0+: "Unable to decode assignment data", before 2.0: "Unknown assignment data
    version"); running out of bytes or malformed modified UTF-8 is "Failed to decode AssignmentInfo" (the
    ``IOException`` as ``__cause__``); a negative active / standby / partition count is the
    ``IllegalArgumentException`` of ``new ArrayList<>(n)`` / ``new HashMap<>(n)``; a negative host count
    reads no host. Bytes after the last field are ignored, as Kafka does.
    """
    src = _DataInputStream(data)
    try:
        version = src.read_int()
        if latest_supported < EARLIEST_PROBEABLE_VERSION:
            # 0.10.1 ... 1.1 check `version < 0 || version > CURRENT_VERSION` and would read a version 0 as
            # version 1: the model has no version 0 assignment and rejects it too.
            if not 1 <= version <= latest_supported:
                raise TaskAssignmentException(f"Unknown assignment data version: {version}")
        elif not 1 <= version <= min(latest_supported, MAX_ENCODED_VERSION):
            raise TaskAssignmentException(f"Unable to decode assignment data: used version: {version}; latest "
                                          f"supported version: {latest_supported}")
        supported = src.read_int() if version >= 3 else UNKNOWN
        active = tuple(TaskId(src.read_int(), src.read_int())
                       for _ in range(_capacity(src.read_int(), "Illegal Capacity: ")))
        standby = tuple((TaskId(src.read_int(), src.read_int()), _read_partition_set(src))
                        for _ in range(_capacity(src.read_int(), "Illegal initial capacity: ")))
        by_host: _PartitionMap = ()
        if version >= 2:
            by_host = tuple((HostInfo(src.read_utf(), src.read_int()), _read_partition_set(src))
                            for _ in range(src.read_int()))
        error = src.read_int() if version >= 4 else 0
    except (EOFException, UTFDataFormatException) as exc:
        raise TaskAssignmentException("Failed to decode AssignmentInfo") from exc
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
           tasks: Sequence[TaskId] = (), mutations: frozenset[str] = frozenset(), *,
           partitions_for_task: Mapping[TaskId, Iterable[TopicPartition]] | None = None) -> GroupAssignment:
    """The group leader's ``assign()`` over its members' decoded subscriptions.

    Raises :class:`TaskAssignmentException` or :class:`IllegalStateException` when the leader fails (its
    StreamThread dies): a pre-2.0 leader meeting a version it cannot decode; a probing leader meeting a
    future subscription together with a pre-2.0 one (``kip``, ``kafka-2.0``, and a ``kafka`` leader that has no
    error code to send, i.e. one speaking version 3).

    ``tasks`` are dealt round robin over the members (the model's stand-in for Kafka's task assignor), except
    under ``kafka-2.0`` during version probing, where each old member gets its previous tasks back
    (:func:`_version_probing_assignment`).

    With ``partitions_for_task`` (the partition grouper's ``Map<TaskId, Set<TopicPartition>>``) each
    assignment also carries its consumer-level partitions (``Assignment.partitions()``): the partitions of its
    active tasks in task order, as Kafka builds the list. Without it they stay empty.
    """
    if not subscriptions:
        raise ValueError("assign() needs at least one subscription")
    if profile == KAFKA_20 and leader.probing:
        return _assign_own_branch(leader, subscriptions, tasks, mutations, partitions_for_task)
    result = _assign(leader, profile, subscriptions, tasks, mutations)
    if partitions_for_task is None:
        return result
    with_partitions = {member: _with_partitions(info, partitions_for_task)
                       for member, info in result.assignments.items()}
    return GroupAssignment(with_partitions, result.version_probing, result.follow_up_rebalance, result.used_version)


def _partitions_of(task: TaskId, partitions_for_task: Mapping[TaskId, Iterable[TopicPartition]]
                   ) -> tuple[TopicPartition, ...]:
    if task not in partitions_for_task:
        raise ValueError(f"partitions_for_task has no partitions for the assigned task {task}")
    return tuple(partitions_for_task[task])


def _with_partitions(info: AssignmentInfo, partitions_for_task: Mapping[TaskId, Iterable[TopicPartition]]
                     ) -> AssignmentInfo:
    """``info`` with the partitions of its active tasks, in task order, as its consumer-level partitions."""
    parts = [p for task in info.active_tasks for p in _partitions_of(task, partitions_for_task)]
    return AssignmentInfo(info.version, info.latest_supported, info.active_tasks, info.standby_tasks,
                          info.partitions_by_host, info.error, tuple(parts))


def _future_members(leader: StreamsRelease, subscriptions: Mapping[str, SubscriptionInfo]) -> list[str]:
    """The members whose subscription is newer than the leader understands (a pre-2.0 leader fails on one)."""
    latest = leader.latest_supported
    members = sorted(subscriptions)
    for m in members:
        v = subscriptions[m].version
        if v > latest and not leader.probing:
            # Pre-2.0 SubscriptionInfo.decode throws on a version it does not know.
            raise TaskAssignmentException(f"unable to decode subscription data: version={v}")
    return [m for m in members if subscriptions[m].version > latest]


def _incompatible(subscriptions: Mapping[str, SubscriptionInfo], future: Sequence[str], min_received: int) -> str:
    return (f"Received a future (version probing) subscription (version: "
            f"{max(subscriptions[m].version for m in future)}) and an incompatible pre Kafka 2.0 "
            f"subscription (version: {min_received}) at the same time.")


def _assign(leader: StreamsRelease, profile: str, subscriptions: Mapping[str, SubscriptionInfo],
            tasks: Sequence[TaskId], mutations: frozenset[str]) -> GroupAssignment:
    latest = leader.latest_supported
    members = sorted(subscriptions)
    future = _future_members(leader, subscriptions)
    current = [m for m in members if m not in future]
    min_received = min([latest, *(subscriptions[m].version for m in members)])
    min_supported = min([latest, *(subscriptions[m].latest_supported for m in members)])
    if "commonly_supported_is_max" in mutations and latest >= 4:
        # Only a 2.1+ leader has a commonly supported version to get wrong: Kafka 2.0's assignment carries its
        # LATEST_SUPPORTED_VERSION whatever assign() computes (encode_assignment writes 3), so on the wire the
        # mutation would vanish for a 2.0 leader (the system now carries the bytes; the spec and Z3 agree).
        min_supported = max([latest, *(subscriptions[m].latest_supported for m in members)])
    version_probing = bool(future)
    if future and "leader_fails_on_future" in mutations:
        raise IllegalStateException(f"Received a future subscription (version: {subscriptions[future[0]].version})")
    if future and min_received < EARLIEST_PROBEABLE_VERSION:
        message = _incompatible(subscriptions, future, min_received)
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


# ---- kafka-2.0: each probing release's own StreamsPartitionAssignor.assign()
#
# Read at apache/kafka tag 2.0.1 (commit fa14705e51bd; StreamsPartitionAssignor.java blob db94ac0c852b, the same at
# tag 2.0.0 and at the 2.0 branch head 032042afd256: KAFKA-8649's fix was never back-ported to 2.0) and on the 2.1
# branch at 9216968ef6ab (2.1.2-SNAPSHOT, never released), whose assignor is that of 16e3c52f1d8b: KAFKA-8649's
# fix, 8784899168cf (PR #7427, the 2.1 back-port of #7423), plus 16e3c52f1d8b (PR #7545), without which the
# commonly supported version it computes never reached the wire (AssignmentInfo.encode wrote
# LATEST_SUPPORTED_VERSION for versions 3 and 4). Tags 2.1.0 and 2.1.1 (commit 21234bee3116) have neither: the
# ``uncapped_adopt`` mutation (STR-M4, KAFKA-8649) runs post-2.0 as 2.1.1 instead.


def _assign_own_branch(leader: StreamsRelease, subscriptions: Mapping[str, SubscriptionInfo],
                       tasks: Sequence[TaskId], mutations: frozenset[str],
                       partitions_for_task: Mapping[TaskId, Iterable[TopicPartition]] | None) -> GroupAssignment:
    """``assign()`` of a probing leader under ``kafka-2.0``: Kafka 2.0's (``leader`` speaks 3) or the 2.1 branch's
    (speaks 4). The versions are the KIP's: the minimum received over the members the leader understands
    (``minReceivedMetadataVersion``, starting from its latest), an ``IllegalStateException`` for a future
    subscription mixed with a pre-2.0 one, an empty assignment to a future member; there is no follow-up
    rebalance (a member that changes its version rejoins by itself). The supported version a 2.0 leader encodes
    is its latest (3); the 2.1 branch's is the minimum of the supported versions its current members sent
    (``minSupportedMetadataVersion``), and its empty reply to a future member carries the used and that version
    (``new AssignmentInfo(minUserMetadataVersion, minSupportedMetadataVersion)``)."""
    latest = leader.latest_supported
    members = sorted(subscriptions)
    future = _future_members(leader, subscriptions)
    current = [m for m in members if m not in future]
    min_received = min([latest, *(subscriptions[m].version for m in current)])
    if future and "leader_fails_on_future" in mutations:
        raise IllegalStateException(f"Received a future subscription (version: {subscriptions[future[0]].version})")
    if future and min_received < EARLIEST_PROBEABLE_VERSION:
        raise IllegalStateException(_incompatible(subscriptions, future, min_received))
    used = latest if "assign_at_leader_version" in mutations else min_received
    branch_21 = latest >= 4 and "uncapped_adopt" not in mutations  # 2.1.0 / 2.1.1 encode their latest
    if branch_21:
        pick = max if "commonly_supported_is_max" in mutations else min
        supported = pick([latest, *(subscriptions[m].latest_supported for m in current)])
    else:
        supported = latest
    if "leader_supported_is_used" in mutations:
        supported = used
    if used < EARLIEST_PROBEABLE_VERSION:
        supported = UNKNOWN
    assignments: dict[str, AssignmentInfo] = {}
    if not future:
        share = _round_robin(members, tasks)
        for m in members:
            info = AssignmentInfo(used, supported, share.get(m, ()))
            assignments[m] = info if partitions_for_task is None else _with_partitions(info, partitions_for_task)
        return GroupAssignment(assignments, False, False, used)
    assignments.update(_version_probing_assignment(leader, subscriptions, current, used, supported, branch_21,
                                                   partitions_for_task))
    for m in future:
        # 2.0 and 2.1.x: new AssignmentInfo(), the latest version twice; the 2.1 branch: the used and the
        # commonly supported version. No tasks, no partitions.
        assignments[m] = AssignmentInfo(used, supported) if branch_21 else AssignmentInfo(latest, latest)
    return GroupAssignment(assignments, True, False, used)


def _version_probing_assignment(leader: StreamsRelease, subscriptions: Mapping[str, SubscriptionInfo],
                                current: Sequence[str], used: int, supported: int, branch_21: bool,
                                partitions_for_task: Mapping[TaskId, Iterable[TopicPartition]] | None
                                ) -> dict[str, AssignmentInfo]:
    """``versionProbingAssignment``: every old (current) member gets its previous tasks back, unchanged.

    Kafka 2.0 groups members by process id (one client may run several consumers) and gives each consumer
    its client's previous active tasks (``ClientState.prevActiveTasks()``, a ``HashSet``: in its iteration
    order) and standby tasks, the partitions of the active tasks in that order. The 2.1 branch gives each
    consumer the tasks its own subscription claimed (``prevActiveTasksForConsumer``), one entry per partition
    sorted by topic and partition (``buildAssignedActiveTaskAndPartitionsList``). Standby tasks come with their
    partitions (none without ``partitions_for_task``)."""
    clients: dict[object, list[str]] = {}
    for m in current:
        clients.setdefault(subscriptions[m].process_id, []).append(m)
    out: dict[str, AssignmentInfo] = {}
    for m in current:
        owners = [m] if branch_21 else clients[subscriptions[m].process_id]
        active = _task_set_order(t for o in owners for t in subscriptions[o].prev_tasks)
        standby = _task_set_order(t for o in owners for t in subscriptions[o].standby_tasks)

        def parts(task: TaskId) -> tuple[TopicPartition, ...]:
            return () if partitions_for_task is None else _partitions_of(task, partitions_for_task)

        if branch_21:
            pairs = sorted(((p, t) for t in active for p in parts(t)), key=lambda pt: (pt[0].topic, pt[0].partition))
            active_list, partitions = [t for _, t in pairs], [p for p, _ in pairs]
            if partitions_for_task is None:
                active_list = list(active)  # no partitions to order by: one entry per task
        else:
            active_list, partitions = list(active), [p for t in active for p in parts(t)]
        out[m] = AssignmentInfo(used, supported, tuple(active_list), tuple((t, parts(t)) for t in standby),
                                (), AssignorError.NONE, tuple(partitions))
    return out


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
    error: AssignorError | int = AssignorError.NONE


def on_assignment(member: StreamsRelease, profile: str, used_version: int, info: AssignmentInfo,
                  mutations: frozenset[str] = frozenset()) -> MemberUpdate:
    """A member's ``onAssignment`` after sending a version ``used_version`` subscription.

    Raises :class:`TaskAssignmentException` / :class:`IllegalStateException` when the member fails.
    """
    received, supported = info.version, info.latest_supported
    if not member.can_decode(received):
        raise TaskAssignmentException(f"Unable to decode assignment data: used version: {received}; latest "
                                      f"supported version: {member.latest_supported}")
    if profile == KAFKA_20 and member.probing:
        return _on_assignment_own_branch(member, used_version, info, mutations)
    if profile == "kafka" and member.probing and received >= 4 and info.error != AssignorError.NONE:
        # Today's onAssignment stores the code and returns before looking at any version; then
        # StreamsRebalanceListener.onPartitionsAssigned decides. VERSION_PROBING is only logged.
        if info.error == AssignorError.VERSION_PROBING:
            return MemberUpdate(used_version, False, MemberOutcome.NONE, info.error)
        if not isinstance(info.error, AssignorError):
            raise TaskAssignmentException("Hit an unrecognized exception during rebalance")
        # INCOMPLETE_SOURCE_TOPIC_METADATA (MissingSourceTopicException) and ASSIGNMENT_ERROR
        # (TaskAssignmentException) kill the thread, SHUTDOWN_REQUESTED shuts the client down: the model
        # takes all three as the client stopping on the leader's word (ERROR_SHUTDOWN).
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


def _on_assignment_own_branch(member: StreamsRelease, used_version: int, info: AssignmentInfo,
                              mutations: frozenset[str]) -> MemberUpdate:
    """``onAssignment`` of a probing member under ``kafka-2.0`` (the refs read: see ``_assign_own_branch``).

    Kafka 2.0 (``member`` speaks 3), and 2.1.0 / 2.1.1 (speaks 4, with the ``uncapped_adopt`` mutation): an
    assignment above the version sent is an ``IllegalStateException``; one below it, at version 3 or more, is a
    successful probe: the member takes the received version if it equals the leader's supported one, else the
    leader's supported version, and rejoins at once (``versionProbingFlag`` / ``VERSION_PROBING``); at the version
    sent it takes the leader's supported version for its next subscription when that is higher, without a cap
    and without a rebalance (KAFKA-8649).

    The 2.1 branch (speaks 4): ``validateMetadataVersions`` (an assignment above the version sent, or a commonly
    supported version above its own, is a ``TaskAssignmentException``), then ``maybeUpdateSubscriptionVersion``:
    from version 3 on, a higher commonly supported version is taken, else an assignment below the version sent
    brings it down to the commonly supported version; either way it rejoins at once.

    2.1 reads an error code first (its ``AssignmentInfo`` version 4): INCOMPLETE_SOURCE_TOPIC_METADATA shuts the
    thread down, VERSION_PROBING makes it rejoin, any other code pauses its partitions until the next rebalance
    (``StreamThread.RebalanceListener``): the model's no-op."""
    received, supported = info.version, info.latest_supported
    if member.latest_supported >= 4 and received >= 4 and info.error != AssignorError.NONE:
        if info.error == AssignorError.INCOMPLETE_SOURCE_TOPIC_METADATA:
            return MemberUpdate(used_version, False, MemberOutcome.ERROR_SHUTDOWN, info.error)
        return MemberUpdate(used_version, info.error == AssignorError.VERSION_PROBING, MemberOutcome.NONE, info.error)
    never = "member_never_upgrades" in mutations
    if member.latest_supported >= 4 and "uncapped_adopt" not in mutations:
        if received > used_version:
            raise TaskAssignmentException(f"Sent a version {used_version} subscription but got an assignment with "
                                          f"higher version {received}.")
        if supported > member.latest_supported:
            raise TaskAssignmentException("Can't upgrade to metadata version greater than we support")
        if received < EARLIEST_PROBEABLE_VERSION:
            return MemberUpdate(used_version, False, MemberOutcome.NONE)
        if supported > used_version and not never:
            return MemberUpdate(supported, True, MemberOutcome.ADOPT_SUPPORTED)
        if received < used_version:
            return MemberUpdate(supported, True, MemberOutcome.PROBE_DOWNGRADE)
        return MemberUpdate(used_version, False, MemberOutcome.NONE)
    if received > used_version:
        raise IllegalStateException(f"Sent a version {used_version} subscription but got an assignment with higher "
                                    f"version {received}.")
    if EARLIEST_PROBEABLE_VERSION <= received < used_version:
        return MemberUpdate(received if received == supported else supported, True, MemberOutcome.PROBE_DOWNGRADE)
    if received >= EARLIEST_PROBEABLE_VERSION and supported > used_version and not never:
        return MemberUpdate(supported, False, MemberOutcome.ADOPT_SUPPORTED)
    return MemberUpdate(used_version, False, MemberOutcome.NONE)
