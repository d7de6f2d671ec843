"""Apache Kafka's ``StreamsPartitionAssignorTest``, its version probing and ``upgrade.from`` cases, as facts against
``assign`` / the subscription codec (reference_impl/streams_probing/api.py) and ``configured_metadata_version``
(reference_impl/streams_probing/releases.py).

Kafka file: ``streams/src/test/java/org/apache/kafka/streams/processor/internals/StreamsPartitionAssignorTest.java``
(class ``org.apache.kafka.streams.processor.internals.StreamsPartitionAssignorTest``), read at:

* ``3.9.0``: tag ``3.9.0-rc3``, commit dd5272687e8adf9e79e3e329b1b3d2524afb6020 (the 3.9 branch head, c821449fb7c1,
  has the same ``streams/`` tree). Today's assignor, ``LATEST_SUPPORTED_VERSION`` 11: our ``kafka`` profile with a
  ``3.9`` leader.
* ``2.1.0``: tag ``2.1.0``, commit 809be928f1ae004e11d65c307ea322bef126c834, and ``2.0.0``: tag ``2.0.0``, commit
  3402a8361b7347326b8a9fdb22300986fbbf9cd0. The KIP-268 assignor (``versionProbingAssignment``, an
  ``IllegalStateException`` on a future subscription mixed with a pre-2.0 one): our ``kip`` profile with a ``post-2.0``
  (``LATEST_SUPPORTED_VERSION`` 4) and a ``2.0`` (3) leader. The version probing cases are the same text in both.
* The same cases under our ``kafka-2.0`` profile (each release its own branch's assignor), case ids ending
  ``-kafka-2.0``: ``2.0.0-kafka-2.0`` (the test is unchanged on the 2.0 branch up to its head, 032042afd256) with a
  ``2.0`` leader, and ``2.1-kafka-2.0``: the 2.1 branch head, 9216968ef6ab (2.1.2-SNAPSHOT, with KAFKA-8649's fix),
  with a ``post-2.0`` leader. There the test differs from 2.1.0 in one line: the future consumer's assignment is
  ``new AssignmentInfo(LATEST_SUPPORTED_VERSION, LATEST_SUPPORTED_VERSION)`` (the same value).

Case id: the Kafka method's name, ``-`` the release it was read at, and a suffix where one Kafka case is split.
3.9's cases run once per task assignor configuration (``@MethodSource("parameter")``: nine combinations of task
assignor class and rack-aware strategy); our ``assign`` has no choice of task assignor and the assertions transcribed
do not depend on it, so each is one case here.

How Kafka's flow maps to ours. A subscription's ``userData`` is ``encode_subscription`` by the member's release (the
same release as the leader in these tests); the leader reads it with ``decode_subscription`` at its own
``LATEST_SUPPORTED_VERSION`` (so a future subscription, Kafka's ``encodeFutureSubscription()``, two ints
``LATEST_SUPPORTED_VERSION + 1``, reaches ``assign`` as version and supported version only) and the assignment's
``userData`` is ``encode_assignment`` / ``decode_assignment``. Our codec has no layout above version 4, so the
assignments of version 11 (3.9's version probing and error assignments) are compared as the ``AssignmentInfo`` that
``assign`` returns. A member's subscription version under ``upgrade.from`` (``partitionAssignor.subscription`` /
``subscriptionUserData``) is ``configured_metadata_version``. Topology: a source ``topic1`` with 3 partitions, the
tasks ``0_0 .. 0_2`` and ``partitions_for_task`` (the partition grouper's map, an ``assign`` argument added for the
consumer-level partitions Kafka checks); no source, no tasks. 2.x's random process ids and 3.9's ``PID_1``, ``PID_2``
are fixed UUIDs.

Not expressible yet:

* 2.0.0 ``shouldThrowKafkaExceptionVersionProbingFlagNotConfigured``,
  ``shouldThrowKafkaExceptionIfVersionProbingFlagConfigIsNotAtomicBoolean``; 2.1.0
  ``shouldThrowKafkaExceptionAssignmentErrorCodeNotConfigured``,
  ``shouldThrowKafkaExceptionIfVersionProbingFlagConfigIsNotAtomicInteger``: they check the ``configure()`` plumbing
  of the shared ``AtomicBoolean`` / ``AtomicInteger`` through which the assignor tells the StreamThread about version
  probing; our ``assign`` / ``on_assignment`` return that decision, there is no configuration object to get wrong.
* 3.9.0 ``shouldUseEagerRebalancingProtocol`` (``upgrade.from`` "2.3" leaves only EAGER): the rebalance protocol
  (eager / cooperative) is not modelled. 3.9.0 ``testEagerSubscription`` (``upgrade.from`` "2.3"): it compares the
  whole version 11 subscription (task offset sums, unique field), which has no layout in our codec; that "2.3" keeps
  version 11 is checked in tests/test_streams_probing_api.py.

Finding, resolved by the ``kafka-2.0`` profile (it was a strict xfail under ``kip``):
``shouldReturnUnchangedAssignmentForOldInstancesAndEmptyAssignmentForFutureInstances``, the old member's half. During
version probing Kafka 2.0 / 2.1 give each old member its previous tasks back, active and standby, unchanged
(``versionProbingAssignment``). Our ``kip`` ``assign`` still deals ``tasks`` round robin over the old members (the KIP
says nothing of tasks; tests/test_streams_probing_api.py relies on it); ``kafka-2.0``'s gives them back, and the case
passes there. The system model carries no tasks, so either changes no explored state.
"""

from __future__ import annotations

import struct
import uuid

import pytest

from reference_impl.streams_probing.api import (
    AssignmentInfo,
    AssignorError,
    GroupAssignment,
    IllegalStateException,
    SubscriptionInfo,
    TaskId,
    TopicPartition,
    assign,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from reference_impl.streams_probing.releases import (
    StreamsRelease,
    configured_metadata_version,
    release,
)

# The release read (and, for kafka-2.0, the profile) -> (our profile, our leader release).
KAFKA = {"2.0.0": ("kip", "2.0"), "2.1.0": ("kip", "post-2.0"), "3.9.0": ("kafka", "3.9"),
         "2.0.0-kafka-2.0": ("kafka-2.0", "2.0"), "2.1-kafka-2.0": ("kafka-2.0", "post-2.0")}
KAFKA_2X = ("2.0.0", "2.1.0")
KAFKA_OWN = ("2.0.0-kafka-2.0", "2.1-kafka-2.0")  # each release's own branch

PID_1 = uuid.UUID(int=1)  # 3.9 AssignmentTestUtils.PID_1 = new ProcessId(new UUID(0, 1)); 2.x: random
PID_2 = uuid.UUID(int=2)
TASK_0_0, TASK_0_1, TASK_0_2 = TaskId(0, 0), TaskId(0, 1), TaskId(0, 2)
T1P0, T1P1, T1P2 = TopicPartition("topic1", 0), TopicPartition("topic1", 1), TopicPartition("topic1", 2)
ALL_TASKS = [TASK_0_0, TASK_0_1, TASK_0_2]
PARTITIONS_FOR_TASK = {TASK_0_0: [T1P0], TASK_0_1: [T1P1], TASK_0_2: [T1P2]}  # source topic1, 3 partitions


def _leader(kafka: str) -> tuple[str, StreamsRelease]:
    profile, name = KAFKA[kafka]
    return profile, release(name)


def _user_data(kafka: str, info: SubscriptionInfo) -> bytes:
    return encode_subscription(info, _leader(kafka)[1].latest_supported)


def _future_user_data(kafka: str) -> bytes:
    latest = _leader(kafka)[1].latest_supported
    return struct.pack(">ii", latest + 1, latest + 1)  # encodeFutureSubscription()


def _assign(kafka: str, user_data: dict[str, bytes], with_topic1: bool = False) -> GroupAssignment:
    profile, leader = _leader(kafka)
    subscriptions = {m: decode_subscription(data, leader.latest_supported) for m, data in user_data.items()}
    if not with_topic1:
        return assign(leader, profile, subscriptions)
    return assign(leader, profile, subscriptions, ALL_TASKS, partitions_for_task=PARTITIONS_FOR_TASK)


def _decoded(kafka: str, info: AssignmentInfo) -> AssignmentInfo:
    """``AssignmentInfo.decode(assignment.userData())`` (versions 1 to 4)."""
    latest = _leader(kafka)[1].latest_supported
    return decode_assignment(encode_assignment(info, latest), latest)


# ------------------------------------------------------------------------------------------ all three releases


@pytest.mark.parametrize(("kafka", "smallest", "other"), [
    pytest.param(k, s, o, id=f"shouldReturnLowestAssignmentVersionForDifferentSubscriptionVersionsV{s}V{o}-{k}")
    for s, o in ((1, 2), (1, 3), (2, 3)) for k in KAFKA
])
def test_lowest_assignment_version(kafka: str, smallest: int, other: int) -> None:
    latest = _leader(kafka)[1].latest_supported
    # 2.x: new SubscriptionInfo(version, UUID.randomUUID(), emptyTasks, emptyTasks, null);
    # 3.9: getInfoForOlderVersion(version, PID, EMPTY_TASKS, EMPTY_TASKS) (latest supported: LATEST_SUPPORTED_VERSION).
    result = _assign(kafka, {
        "consumer1": _user_data(kafka, SubscriptionInfo.of(smallest, latest, PID_1)),
        "consumer2": _user_data(kafka, SubscriptionInfo.of(other, latest, PID_2)),
    })
    assert len(result.assignments) == 2
    assert _decoded(kafka, result.assignments["consumer1"]).version == smallest
    assert _decoded(kafka, result.assignments["consumer2"]).version == smallest


_UPGRADE_FROM = [
    ("shouldDownGradeSubscriptionToVersion1", "0.10.0", 1),  # StreamsConfig.UPGRADE_FROM_0100
    ("shouldDownGradeSubscriptionToVersion2For0101", "0.10.1", 2),
    ("shouldDownGradeSubscriptionToVersion2For0102", "0.10.2", 2),
    ("shouldDownGradeSubscriptionToVersion2For0110", "0.11.0", 2),
    ("shouldDownGradeSubscriptionToVersion2For10", "1.0", 2),
    ("shouldDownGradeSubscriptionToVersion2For11", "1.1", 2),
]


@pytest.mark.parametrize(("kafka", "upgrade_from", "expected"), [
    pytest.param(k, u, v, id=f"{name}-{k}") for name, u, v in _UPGRADE_FROM for k in KAFKA
])
def test_upgrade_from_downgrades_the_subscription(kafka: str, upgrade_from: str, expected: int) -> None:
    profile, member = _leader(kafka)
    version = configured_metadata_version(member, upgrade_from, profile)
    data = encode_subscription(SubscriptionInfo.of(version, member.latest_supported, PID_1), member.latest_supported)
    assert decode_subscription(data, member.latest_supported).version == expected


# ------------------------------------------------------------------------------ 2.0.0 and 2.1.0 (kip), and kafka-2.0

_UNCHANGED = "shouldReturnUnchangedAssignmentForOldInstancesAndEmptyAssignmentForFutureInstances"


def _unchanged_case(kafka: str) -> GroupAssignment:
    latest = _leader(kafka)[1].latest_supported
    # new SubscriptionInfo(UUID.randomUUID(), activeTasks = {task0, task1}, standbyTasks = {task2}, null)
    old = SubscriptionInfo.at_latest(latest, PID_1, [TASK_0_0, TASK_0_1], [TASK_0_2], None)
    result = _assign(kafka, {"consumer1": _user_data(kafka, old), "future-consumer": _future_user_data(kafka)},
                     with_topic1=True)
    assert len(result.assignments) == 2
    return result


@pytest.mark.parametrize("kafka", [pytest.param(k, id=f"{_UNCHANGED}-{k}-future-consumer")
                                   for k in (*KAFKA_2X, *KAFKA_OWN)])
def test_future_member_gets_an_empty_assignment(kafka: str) -> None:
    latest = _leader(kafka)[1].latest_supported
    future = _unchanged_case(kafka).assignments["future-consumer"]
    assert _decoded(kafka, future) == AssignmentInfo.at_latest(latest)  # new AssignmentInfo()
    assert len(future.partitions) == 0


@pytest.mark.parametrize("kafka", [pytest.param(k, id=f"{_UNCHANGED}-{k}-consumer1") for k in KAFKA_OWN])
def test_old_member_keeps_its_previous_tasks(kafka: str) -> None:
    """During version probing the old member gets its previous tasks back, active and standby (kafka-2.0's
    versionProbingAssignment; kip deals the tasks round robin instead, see the module's docstring)."""
    latest = _leader(kafka)[1].latest_supported
    old = _unchanged_case(kafka).assignments["consumer1"]
    # new AssignmentInfo(new ArrayList<>(activeTasks), standbyTaskMap = {task2: {t1p2}}, emptyMap())
    assert _decoded(kafka, old) == AssignmentInfo.at_latest(latest, [TASK_0_0, TASK_0_1], {TASK_0_2: [T1P2]})
    assert list(old.partitions) == [T1P0, T1P1]


@pytest.mark.parametrize(("kafka", "old_version"), [
    pytest.param(k, v, id=f"shouldThrowIfV{v}SubscriptionAndFutureSubscriptionIsMixed-{k}")
    for v in (1, 2) for k in (*KAFKA_2X, *KAFKA_OWN)
])
def test_pre_2_0_and_future_subscriptions_mixed_throw(kafka: str, old_version: int) -> None:
    latest = _leader(kafka)[1].latest_supported
    user_data = {"consumer1": _user_data(kafka, SubscriptionInfo.of(old_version, latest, PID_1)),
                 "future-consumer": _future_user_data(kafka)}
    with pytest.raises(IllegalStateException):
        _assign(kafka, user_data)


# ------------------------------------------------------------------------------------------ 3.9.0 (kafka)


@pytest.mark.parametrize("kafka", [
    pytest.param("3.9.0", id="shouldReturnInterleavedAssignmentForOnlyFutureInstancesDuringVersionProbing-3.9.0"),
])
def test_only_future_members_are_pooled_and_interleaved(kafka: str) -> None:
    # Both future subscriptions carry no process id: Kafka pools them into one client (FUTURE_ID); with one client
    # the num.standby.replicas = 1 of the test places no standby.
    result = _assign(kafka, {"consumer1": _future_user_data(kafka), "consumer2": _future_user_data(kafka)},
                     with_topic1=True)
    assert len(result.assignments) == 2
    first, second = result.assignments["consumer1"], result.assignments["consumer2"]
    assert list(first.partitions) == [T1P0, T1P2]
    # new AssignmentInfo(LATEST_SUPPORTED_VERSION, asList(TASK_0_0, TASK_0_2), emptyMap(), emptyMap(), emptyMap(), 0)
    assert first == AssignmentInfo.of(11, 11, [TASK_0_0, TASK_0_2])
    assert list(second.partitions) == [T1P1]
    assert second == AssignmentInfo.of(11, 11, [TASK_0_1])


@pytest.mark.parametrize("old_version", [
    pytest.param(v, id=f"shouldEncodeAssignmentErrorIfV{v}SubscriptionAndFutureSubscriptionIsMixed-3.9.0")
    for v in (1, 2)
])
def test_pre_2_0_and_future_subscriptions_mixed_get_the_error_assignment(old_version: int) -> None:
    result = _assign("3.9.0", {"consumer1": _user_data("3.9.0", SubscriptionInfo.of(old_version, 11, PID_1)),
                               "future-consumer": _future_user_data("3.9.0")})
    assert result.assignments["consumer1"].error == AssignorError.ASSIGNMENT_ERROR
    assert result.assignments["future-consumer"].error == AssignorError.ASSIGNMENT_ERROR
