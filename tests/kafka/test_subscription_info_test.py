"""Apache Kafka's ``SubscriptionInfoTest``, as facts against ``SubscriptionInfo`` / ``encode_subscription`` /
``decode_subscription`` (reference_impl/streams_probing/api.py).

Kafka file: ``streams/src/test/java/org/apache/kafka/streams/processor/internals/assignment/SubscriptionInfoTest.java``
(class ``org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfoTest``), read at:

* ``3.9.0``: tag ``3.9.0-rc3``, commit dd5272687e8adf9e79e3e329b1b3d2524afb6020 (the 3.9 branch head, c821449fb7c1,
  has the same ``streams/`` tree). ``LATEST_SUPPORTED_VERSION`` 11: our ``kafka`` profile's release ``3.9``.
* ``2.1.0``: tag ``2.1.0``, commit 809be928f1ae004e11d65c307ea322bef126c834. ``LATEST_SUPPORTED_VERSION`` 4: our
  ``post-2.0`` release, whose version 4 layout is the one our codec writes.
* ``2.0.0``: tag ``2.0.0``, commit 3402a8361b7347326b8a9fdb22300986fbbf9cd0. ``LATEST_SUPPORTED_VERSION`` 3: our
  ``2.0`` release.

Case id: the Kafka method's name, ``-`` the release it was read at, and ``-v<N>`` where the method loops over versions.

How Kafka's calls map to ours. A release's ``LATEST_SUPPORTED_VERSION`` is the ``latest_supported`` argument of
``encode_subscription`` / ``decode_subscription`` / ``SubscriptionInfo.of``. The checked constructor
``new SubscriptionInfo(version, ...)`` is ``SubscriptionInfo.of``; 2.x's test-only unchecked one (which
``expectedInfo`` uses) is ``SubscriptionInfo(...)``; 2.x's version-less one is ``SubscriptionInfo.at_latest`` (added to
the API for ``shouldUseLatestSupportedVersionByDefault``). 2.x draws its ``processId`` from ``UUID.randomUUID()``: any
UUID does, we fix one whose most-significant long is negative; 3.9's ``PID_1`` is ``new UUID(0, 1)``. 3.9's
constructor takes a task offset sum map; below version 7 it turns it into ``prevTasks`` (the tasks at
``Task.LATEST_OFFSET``) and ``standbyTasks`` (the others): we pass those two sets (``ACTIVE_TASKS``, ``STANDBY_TASKS``).

Bytes. The 2.0.0 and 2.1.0 cases also pin the exact bytes of each encoding: the sets in ``java.util.HashSet`` order
under 2.x's ``TaskId.hashCode`` (``(int) (((long) group << 32 | partition) % 0xFFFFFFFFL)``: 0_0 -> 0, 0_1 -> 1,
1_0 -> 1, 1_1 -> 2, 2_0 -> 2, so [0_0, 0_1, 1_0] and [1_1, 2_0]; checked with a JDK 17 ``HashSet``). Kafka's test
compares decoded objects only. 3.9 writes the same layout for versions 1 to 4 (through the generated
``SubscriptionInfoData``) but orders each set by its own ``TaskId.hashCode`` (``Objects.hash(group, partition,
topologyName)``: [1_0, 0_1, 0_0] and [2_0, 1_1]), where our encoder keeps 2.x's order; both decode to the same sets, so
the 3.9 cases compare decoded fields, as Kafka's do. The 3.9 "legacy" cases use a reader and a writer of the
pre-2.6 layout defined in this file, in the role of Kafka's ``LegacySubscriptionInfoSerde``.

Not expressible yet (our codec has layouts for versions 1 to 4 only: ``MAX_ENCODED_VERSION``; versions 5 to 11 are
numbers in the model, and their fields, task offset sums, the unique field, the error code, client tags and named
topologies, are not modelled; adding them is a codec of its own):

* 3.9 ``generatedVersion3To6ShouldDecodeLegacyFormat`` for versions 5 and 6 (the v3 layout under versions 5, 6:
  ``decode_subscription`` refuses them, "no encoding in this model"); versions 3 and 4 are below.
* 3.9 ``shouldEncodeAndDecodeVersion5``, ``shouldEncodeAndDecodeVersion7``, ``shouldEncodeAndDecodeVersion8``,
  ``shouldEncodeAndDecodeVersion9``, ``shouldEncodeAndDecodeVersion10``, ``shouldEncodeAndDecodeVersion11``,
  ``shouldEncodeAndDecodeSmallerLatestSupportedVersion`` (version 10): no layout.
* 3.9 ``shouldConvertTaskOffsetSumMapToTaskSets``, ``shouldReturnTaskOffsetSumsMapForDecodedSubscription``,
  ``shouldConvertTaskSetsToTaskOffsetSumMapWithOlderSubscription``: task offset sums (version 7+) are not modelled.
* 3.9 ``shouldNotErrorAccessingFutureVars`` (the version 9 error code),
  ``shouldEncodeAndDecodeVersion10WithNamedTopologies``, ``shouldThrowIfAttemptingToUseNamedTopologiesWithOlderVersion``
  (named topologies),
  ``shouldReturnEncodeDecodeEmptyClientTagsOnVersion11``, ``shouldReturnEmptyMapOfClientTagsOnOlderVersions``,
  ``shouldReturnMapOfClientTagsOnVersion11`` (client tags): fields the model does not have.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence
from typing import Any

import pytest

from reference_impl.streams_probing.api import (
    SubscriptionInfo,
    TaskId,
    decode_subscription,
    encode_subscription,
)
from reference_impl.streams_probing.jvm import IllegalArgumentException
from reference_impl.streams_probing.releases import UNKNOWN

# ------------------------------------------------------------------------------------------ fixtures

T0_0, T0_1, T1_0, T1_1, T2_0 = TaskId(0, 0), TaskId(0, 1), TaskId(1, 0), TaskId(1, 1), TaskId(2, 0)
ACTIVE_TASKS = [T0_0, T0_1, T1_0]  # new HashSet<>(Arrays.asList(...)) in this insertion order
STANDBY_TASKS = [T1_1, T2_0]
ACTIVE_2X_ORDER = [T0_0, T0_1, T1_0]  # HashSet iteration under 2.x TaskId.hashCode
STANDBY_2X_ORDER = [T1_1, T2_0]
ACTIVE_39_ORDER = [T1_0, T0_1, T0_0]  # HashSet iteration under 3.9 TaskId.hashCode
STANDBY_39_ORDER = [T2_0, T1_1]

PID_2X = uuid.UUID("c0ffee00-0000-4000-8000-0000000000ab")  # stands for 2.x's UUID.randomUUID()
PID_1 = uuid.UUID(int=1)  # 3.9 AssignmentTestUtils.PID_1 = new ProcessId(new UUID(0, 1))
ENDPOINT = "localhost:80"
IGNORED_USER_ENDPOINT = "ignoredUserEndpoint:80"

RELEASES_2X = {"2.0.0": 3, "2.1.0": 4}  # the release read -> its LATEST_SUPPORTED_VERSION
LATEST_39 = 11


# ------------------------------------------------------------------------------------------ the pre-2.6 layout

def _i(*xs: int) -> bytes:
    return b"".join(struct.pack(">i", x) for x in xs)


def _tasks(tasks: Sequence[TaskId]) -> bytes:
    return _i(len(tasks), *(n for t in tasks for n in (t.topic_group_id, t.partition)))


def _layout(version: int, supported: int, pid: uuid.UUID, prev: Sequence[TaskId], standby: Sequence[TaskId],
            endpoint: str | None) -> bytes:
    """The subscription layout of versions 1 to 6 (2.x ``SubscriptionInfo.encode``, 3.9's
    ``LegacySubscriptionInfoSerde.encode``): version, [supported version from 3 on], process id (two longs),
    previous tasks, standby tasks, [endpoint from 2 on: int32 length and UTF-8 bytes, null as length 0]."""
    out = _i(version)
    if version >= 3:
        out += _i(supported)
    out += pid.bytes + _tasks(prev) + _tasks(standby)
    if version >= 2:
        raw = b"" if endpoint is None else endpoint.encode("utf-8")
        out += _i(len(raw)) + raw
    return out


def _read_layout(data: bytes) -> dict[str, Any]:
    """``LegacySubscriptionInfoSerde.decode`` for versions 1 to 6: the fields, the task lists as sets, an empty
    endpoint as None (the legacy constructor coerces it)."""
    pos = 0

    def take(n: int) -> bytes:
        nonlocal pos
        assert pos + n <= len(data), "ran out of bytes"
        pos += n
        return data[pos - n:pos]

    def read_int() -> int:
        return int(struct.unpack(">i", take(4))[0])

    def read_tasks() -> frozenset[TaskId]:
        return frozenset(TaskId(read_int(), read_int()) for _ in range(read_int()))

    version = read_int()
    supported = read_int() if 2 < version < 7 else UNKNOWN
    pid = uuid.UUID(bytes=take(16))
    prev, standby = read_tasks(), read_tasks()
    endpoint = None
    if version >= 2:
        endpoint = take(read_int()).decode("utf-8") or None
    assert pos == len(data), "bytes left after the last field"
    return {"version": version, "latest_supported": supported, "process_id": pid, "prev_tasks": prev,
            "standby_tasks": standby, "user_endpoint": endpoint}


def _fields(info: SubscriptionInfo) -> dict[str, Any]:
    return {"version": info.version, "latest_supported": info.latest_supported, "process_id": info.process_id,
            "prev_tasks": frozenset(info.prev_tasks), "standby_tasks": frozenset(info.standby_tasks),
            "user_endpoint": info.user_endpoint}


# ------------------------------------------------------------------------------------------ 2.0.0 and 2.1.0


@pytest.mark.parametrize("kafka", [pytest.param(k, id=f"shouldUseLatestSupportedVersionByDefault-{k}")
                                   for k in RELEASES_2X])
def test_default_version_2x(kafka: str) -> None:
    latest = RELEASES_2X[kafka]
    info = SubscriptionInfo.at_latest(latest, PID_2X, ACTIVE_TASKS, STANDBY_TASKS, ENDPOINT)
    assert info.version == latest


@pytest.mark.parametrize(("kafka", "version"), [
    pytest.param(k, v, id=f"{name}-{k}") for k in RELEASES_2X
    for name, v in (("shouldThrowForUnknownVersion1", 0), ("shouldThrowForUnknownVersion2", RELEASES_2X[k] + 1))
])
def test_unknown_version_is_rejected_2x(kafka: str, version: int) -> None:
    latest = RELEASES_2X[kafka]
    with pytest.raises(IllegalArgumentException, match=f"^version must be between 1 and {latest}; was: {version}$"):
        SubscriptionInfo.of(version, latest, PID_2X, ACTIVE_TASKS, STANDBY_TASKS, ENDPOINT)


# (method, release read, version, endpoint given to the constructor, endpoint expected after decoding)
_ROUND_TRIPS_2X = [
    ("shouldEncodeAndDecodeVersion1", k, 1, IGNORED_USER_ENDPOINT, None) for k in RELEASES_2X
] + [
    ("shouldEncodeAndDecodeVersion2", k, 2, ENDPOINT, ENDPOINT) for k in RELEASES_2X
] + [
    ("shouldEncodeAndDecodeVersion3", k, 3, ENDPOINT, ENDPOINT) for k in RELEASES_2X
] + [
    ("shouldEncodeAndDecodeVersion4", "2.1.0", 4, ENDPOINT, ENDPOINT),  # not in 2.0.0's test
]


@pytest.mark.parametrize(("kafka", "version", "endpoint", "decoded_endpoint"), [
    pytest.param(k, v, e, d, id=f"{name}-{k}") for name, k, v, e, d in _ROUND_TRIPS_2X
])
def test_encode_and_decode_2x(kafka: str, version: int, endpoint: str, decoded_endpoint: str | None) -> None:
    latest = RELEASES_2X[kafka]
    info = SubscriptionInfo.of(version, latest, PID_2X, ACTIVE_TASKS, STANDBY_TASKS, endpoint)
    data = encode_subscription(info, latest)
    # Version 1 has no endpoint; from version 3 on, 2.0 writes its LATEST_SUPPORTED_VERSION, 2.1 the field
    # (LATEST_SUPPORTED_VERSION too, from the checked constructor).
    assert data == _layout(version, latest, PID_2X, ACTIVE_2X_ORDER, STANDBY_2X_ORDER, endpoint)
    expected = SubscriptionInfo(version, latest if version >= 3 else UNKNOWN, PID_2X, frozenset(ACTIVE_TASKS),
                                frozenset(STANDBY_TASKS), decoded_endpoint)
    assert decode_subscription(data, latest) == expected


@pytest.mark.parametrize("kafka", [pytest.param(k, id=f"shouldAllowToDecodeFutureSupportedVersion-{k}")
                                   for k in RELEASES_2X])
def test_future_version_2x(kafka: str) -> None:
    latest = RELEASES_2X[kafka]
    info = decode_subscription(_i(latest + 1, latest + 1), latest)  # encodeFutureVersion(): two ints
    assert (info.version, info.latest_supported) == (latest + 1, latest + 1)


# ------------------------------------------------------------------------------------------ 3.9.0


@pytest.mark.parametrize("version", [
    pytest.param(0, id="shouldThrowForUnknownVersion1-3.9.0"),
    pytest.param(LATEST_39 + 1, id="shouldThrowForUnknownVersion2-3.9.0"),
])
def test_unknown_version_is_rejected_39(version: int) -> None:
    with pytest.raises(IllegalArgumentException, match=f"^version must be between 1 and 11; was: {version}$"):
        SubscriptionInfo.of(version, LATEST_39, PID_1, ACTIVE_TASKS, STANDBY_TASKS, ENDPOINT)


def _expected_39(version: int, endpoint: str | None) -> dict[str, Any]:
    return {"version": version, "latest_supported": LATEST_39 if version >= 3 else UNKNOWN, "process_id": PID_1,
            "prev_tasks": frozenset(ACTIVE_TASKS), "standby_tasks": frozenset(STANDBY_TASKS),
            "user_endpoint": endpoint}


@pytest.mark.parametrize(("version", "endpoint", "decoded_endpoint"), [
    pytest.param(1, IGNORED_USER_ENDPOINT, None, id="shouldEncodeAndDecodeVersion1-3.9.0"),
    pytest.param(2, ENDPOINT, ENDPOINT, id="shouldEncodeAndDecodeVersion2-3.9.0"),
    pytest.param(3, ENDPOINT, ENDPOINT, id="shouldEncodeAndDecodeVersion3And4-3.9.0-v3"),
    pytest.param(4, ENDPOINT, ENDPOINT, id="shouldEncodeAndDecodeVersion3And4-3.9.0-v4"),
])
def test_encode_and_decode_39(version: int, endpoint: str, decoded_endpoint: str | None) -> None:
    info = SubscriptionInfo.of(version, LATEST_39, PID_1, ACTIVE_TASKS, STANDBY_TASKS, endpoint)
    decoded = decode_subscription(encode_subscription(info, LATEST_39), LATEST_39)
    assert _fields(decoded) == _expected_39(version, decoded_endpoint)


@pytest.mark.parametrize(("version", "supported", "endpoint", "decoded_endpoint"), [
    # 3.9 builds this one with latestSupportedVersion 1234: version 1 does not carry it.
    pytest.param(1, 1234, "ignoreme", None, id="generatedVersion1ShouldBeDecodableByLegacyLogic-3.9.0"),
    pytest.param(2, LATEST_39, ENDPOINT, ENDPOINT, id="generatedVersion2ShouldBeDecodableByLegacyLogic-3.9.0"),
    pytest.param(3, LATEST_39, ENDPOINT, ENDPOINT, id="generatedVersion3And4ShouldBeDecodableByLegacyLogic-3.9.0-v3"),
    pytest.param(4, LATEST_39, ENDPOINT, ENDPOINT, id="generatedVersion3And4ShouldBeDecodableByLegacyLogic-3.9.0-v4"),
])
def test_encoding_reads_as_the_legacy_layout_39(version: int, supported: int, endpoint: str,
                                                decoded_endpoint: str | None) -> None:
    info = SubscriptionInfo.of(version, supported, PID_1, ACTIVE_TASKS, STANDBY_TASKS, endpoint)
    assert _read_layout(encode_subscription(info, LATEST_39)) == _expected_39(version, decoded_endpoint)


@pytest.mark.parametrize("version", [
    pytest.param(1, id="generatedVersion1ShouldDecodeLegacyFormat-3.9.0"),
    pytest.param(2, id="generatedVersion2ShouldDecodeLegacyFormat-3.9.0"),
    pytest.param(3, id="generatedVersion3To6ShouldDecodeLegacyFormat-3.9.0-v3"),
    pytest.param(4, id="generatedVersion3To6ShouldDecodeLegacyFormat-3.9.0-v4"),
])
def test_legacy_layout_decodes_39(version: int) -> None:
    # LegacySubscriptionInfoSerde(version, LATEST_SUPPORTED_VERSION, PID_1, ACTIVE, STANDBY, "localhost:80").encode():
    # version 1 drops the endpoint; versions 3+ write LATEST_SUPPORTED_VERSION (11) as the supported version.
    data = _layout(version, LATEST_39, PID_1, ACTIVE_39_ORDER, STANDBY_39_ORDER, ENDPOINT)
    decoded = decode_subscription(data, LATEST_39)
    assert _fields(decoded) == _expected_39(version, ENDPOINT if version >= 2 else None)


@pytest.mark.parametrize("kafka", [pytest.param("3.9.0", id="shouldAllowToDecodeFutureSupportedVersion-3.9.0")])
def test_future_version_39(kafka: str) -> None:
    info = decode_subscription(_i(LATEST_39 + 1, LATEST_39 + 1), LATEST_39)
    assert (info.version, info.latest_supported) == (12, 12)
