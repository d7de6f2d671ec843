"""Apache Kafka's ``AssignmentInfoTest``, as facts against ``AssignmentInfo`` / ``encode_assignment`` /
``decode_assignment`` (reference_impl/streams_probing/api.py).

Kafka file: ``streams/src/test/java/org/apache/kafka/streams/processor/internals/assignment/AssignmentInfoTest.java``
(class ``org.apache.kafka.streams.processor.internals.assignment.AssignmentInfoTest``), read at:

* ``3.9.0``: tag ``3.9.0-rc3``, commit dd5272687e8adf9e79e3e329b1b3d2524afb6020 (the 3.9 branch head, c821449fb7c1,
  has the same ``streams/`` tree). ``LATEST_SUPPORTED_VERSION`` 11: our ``kafka`` profile's release ``3.9``.
* ``2.1.0``: tag ``2.1.0``, commit 809be928f1ae004e11d65c307ea322bef126c834. ``LATEST_SUPPORTED_VERSION`` 4: our
  ``post-2.0`` release (version 4 adds the error code).
* ``2.0.0``: tag ``2.0.0``, commit 3402a8361b7347326b8a9fdb22300986fbbf9cd0. ``LATEST_SUPPORTED_VERSION`` 3: our
  ``2.0`` release.

Case id: the Kafka method's name and ``-`` the release it was read at.

How Kafka's calls map to ours. A release's ``LATEST_SUPPORTED_VERSION`` is the ``latest_supported`` argument of
``encode_assignment`` / ``decode_assignment`` / ``AssignmentInfo.of``. The checked constructor ``new
AssignmentInfo(version, ...)`` is ``AssignmentInfo.of`` (its supported version: ``LATEST_SUPPORTED_VERSION``); the
test-only unchecked one (2.x's ``expectedInfo``) is ``AssignmentInfo(...)``; 2.x's version-less ``new
AssignmentInfo(activeTasks, standbyTasks, hostState)`` is ``AssignmentInfo.at_latest`` (added to the API for
``shouldUseLatestSupportedVersionByDefault``). 3.9's constructors also take ``standbyPartitionsByHost``, a version 6+
field our ``AssignmentInfo`` does not have: versions 1 to 4 never encode it and Kafka's expected values for them have it
empty, so it is left out.

Bytes. The 2.0.0 and 2.1.0 cases also pin the exact bytes of each encoding (``DataOutputStream``: int32 big-endian,
strings by ``writeUTF``), maps and sets in ``java.util.HashMap`` order: standby keys 1_1 and 2_0 share bin 2 under 2.x's
``TaskId.hashCode`` and keep insertion order; ``{t1-1, t2-1}`` sit in bins 13 and 14, ``{t1-1, t3-3}`` share bin 13
(``TopicPartition.hashCode`` = 31 * (31 + partition) + topic.hashCode()); checked with a JDK 17 ``HashSet``. The active
task list keeps its order and its duplicate. Kafka's test compares decoded objects only. The 3.9 cases compare decoded
objects, as Kafka's do (3.9 hashes ``TaskId`` with ``Objects.hash``, so its bytes may order the standby map otherwise
than our 2.x-order encoder; both decode to the same map).

Not expressible yet (our codec has layouts for versions 1 to 4 only: ``MAX_ENCODED_VERSION``; versions 5 to 11 are
numbers in the model; their layouts, the topic dictionary (5+), ``standbyPartitionsByHost`` (6+), ``nextRebalanceMs``
(7+) and named topologies (10+), are a codec of their own):

* 3.9 ``shouldEncodeAndDecodeVersion5`` ... ``shouldEncodeAndDecodeVersion10``,
  ``shouldEncodeAndDecodeSmallerCommonlySupportedVersion`` (version 5 with commonly supported version 5): no layout.
* 3.9 ``shouldEncodeAndDecodeVersion10WithNamedTopologies``,
  ``shouldNotEncodeAndDecodeNamedTopologiesWithOlderVersion``: named topologies are not modelled.
* 3.9 ``nextRebalanceTimeShouldBeMaxValueByDefault``, ``shouldDecodeDefaultNextRebalanceTime``,
  ``shouldEncodeAndDecodeNextRebalanceTime``: ``nextRebalanceMs`` (version 7) is not modelled.
"""

from __future__ import annotations

import struct

import pytest

from reference_impl.streams_probing.api import (
    AssignmentInfo,
    HostInfo,
    TaskId,
    TopicPartition,
    decode_assignment,
    encode_assignment,
)
from reference_impl.streams_probing.jvm import IllegalArgumentException
from reference_impl.streams_probing.releases import UNKNOWN

RELEASES_2X = {"2.0.0": 3, "2.1.0": 4}  # the release read -> its LATEST_SUPPORTED_VERSION
LATEST_39 = 11


def _tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


# ------------------------------------------------------------------------------------------ 2.x fixtures
ACTIVE_2X = [TaskId(0, 0), TaskId(0, 0), TaskId(0, 1), TaskId(1, 0)]  # a List: order and duplicate kept
STANDBY_2X = [  # put(1_1, ...), put(2_0, ...); mkSet(t3-0, t3-0) holds one partition
    (TaskId(1, 1), [_tp("t1", 1), _tp("t2", 1)]),
    (TaskId(2, 0), [_tp("t3", 0), _tp("t3", 0)]),
]
GLOBAL_2X = [(HostInfo("localhost", 80), [_tp("t1", 1), _tp("t3", 3)])]


def _i(*xs: int) -> bytes:
    return b"".join(struct.pack(">i", x) for x in xs)


def _utf(s: str) -> bytes:
    raw = s.encode("utf-8")  # ASCII here: modified UTF-8 is the same bytes
    return struct.pack(">H", len(raw)) + raw


# The fields after the version (and supported version), written out once in HashMap order.
_ACTIVE_BYTES = _i(4, 0, 0, 0, 0, 0, 1, 1, 0)
_STANDBY_BYTES = (_i(2) + _i(1, 1) + _i(2) + _utf("t1") + _i(1) + _utf("t2") + _i(1)
                  + _i(2, 0) + _i(1) + _utf("t3") + _i(0))
_HOSTS_BYTES = _i(1) + _utf("localhost") + _i(80) + _i(2) + _utf("t1") + _i(1) + _utf("t3") + _i(3)


def _expected_bytes_2x(version: int, latest: int, error: int) -> bytes:
    head = _i(version) + (_i(latest) if version >= 3 else b"")
    tail = (_HOSTS_BYTES if version >= 2 else b"") + (_i(error) if version >= 4 else b"")
    return head + _ACTIVE_BYTES + _STANDBY_BYTES + tail


@pytest.mark.parametrize("kafka", [pytest.param(k, id=f"shouldUseLatestSupportedVersionByDefault-{k}")
                                   for k in RELEASES_2X])
def test_default_version_2x(kafka: str) -> None:
    latest = RELEASES_2X[kafka]
    assert AssignmentInfo.at_latest(latest, ACTIVE_2X, STANDBY_2X, GLOBAL_2X).version == latest


@pytest.mark.parametrize(("kafka", "version"), [
    pytest.param(k, v, id=f"{name}-{k}") for k in RELEASES_2X
    for name, v in (("shouldThrowForUnknownVersion1", 0), ("shouldThrowForUnknownVersion2", RELEASES_2X[k] + 1))
])
def test_unknown_version_is_rejected_2x(kafka: str, version: int) -> None:
    latest = RELEASES_2X[kafka]
    with pytest.raises(IllegalArgumentException, match=f"^version must be between 1 and {latest}; was: {version}$"):
        AssignmentInfo.of(version, latest, ACTIVE_2X, STANDBY_2X, GLOBAL_2X, 0)


# (method, release read, version, error code)
_ROUND_TRIPS_2X = [
    (f"shouldEncodeAndDecodeVersion{v}", k, v, 0) for v in (1, 2, 3) for k in RELEASES_2X
] + [
    ("shouldEncodeAndDecodeVersion4", "2.1.0", 4, 2),  # not in 2.0.0's test
]


@pytest.mark.parametrize(("kafka", "version", "error"), [
    pytest.param(k, v, e, id=f"{name}-{k}") for name, k, v, e in _ROUND_TRIPS_2X
])
def test_encode_and_decode_2x(kafka: str, version: int, error: int) -> None:
    latest = RELEASES_2X[kafka]
    info = AssignmentInfo.of(version, latest, ACTIVE_2X, STANDBY_2X, GLOBAL_2X, error)
    data = encode_assignment(info, latest)
    assert data == _expected_bytes_2x(version, latest, error)
    # Version 1 carries no partitions by host: they decode empty.
    expected = AssignmentInfo(version, latest if version >= 3 else UNKNOWN, ACTIVE_2X, STANDBY_2X,
                              GLOBAL_2X if version >= 2 else (), error)
    assert decode_assignment(data, latest) == expected


# ------------------------------------------------------------------------------------------ 3.9.0 fixtures
ACTIVE_39 = [TaskId(0, 0), TaskId(0, 1), TaskId(1, 0), TaskId(1, 0)]
STANDBY_39 = {
    TaskId(1, 0): [_tp("t1", 0), _tp("t2", 0)],
    TaskId(1, 1): [_tp("t1", 1), _tp("t2", 1)],
}
ACTIVE_ASSIGNMENT_39 = {
    HostInfo("localhost", 8088): [_tp("t0", 0), _tp("t1", 0), _tp("t2", 0)],
    HostInfo("localhost", 8089): [_tp("t0", 1), _tp("t1", 1), _tp("t2", 1)],
}


@pytest.mark.parametrize("kafka", [pytest.param("3.9.0", id="shouldUseLatestSupportedVersionByDefault-3.9.0")])
def test_default_version_39(kafka: str) -> None:
    # new AssignmentInfo(LATEST_SUPPORTED_VERSION, activeTasks, standbyTasks, activeAssignment, standbyAssignment, 0)
    assert AssignmentInfo.of(LATEST_39, LATEST_39, ACTIVE_39, STANDBY_39, ACTIVE_ASSIGNMENT_39, 0).version == 11


@pytest.mark.parametrize("version", [
    pytest.param(0, id="shouldThrowForUnknownVersion1-3.9.0"),
    pytest.param(LATEST_39 + 1, id="shouldThrowForUnknownVersion2-3.9.0"),
])
def test_unknown_version_is_rejected_39(version: int) -> None:
    with pytest.raises(IllegalArgumentException, match=f"^version must be between 1 and 11; was: {version}$"):
        AssignmentInfo.of(version, LATEST_39, ACTIVE_39, STANDBY_39, ACTIVE_ASSIGNMENT_39, 0)


@pytest.mark.parametrize(("version", "error"), [
    pytest.param(1, 0, id="shouldEncodeAndDecodeVersion1-3.9.0"),
    pytest.param(2, 0, id="shouldEncodeAndDecodeVersion2-3.9.0"),
    pytest.param(3, 0, id="shouldEncodeAndDecodeVersion3-3.9.0"),
    pytest.param(4, 2, id="shouldEncodeAndDecodeVersion4-3.9.0"),
])
def test_encode_and_decode_39(version: int, error: int) -> None:
    info = AssignmentInfo.of(version, LATEST_39, ACTIVE_39, STANDBY_39, ACTIVE_ASSIGNMENT_39, error)
    expected = AssignmentInfo(version, LATEST_39 if version >= 3 else UNKNOWN, ACTIVE_39, STANDBY_39,
                              ACTIVE_ASSIGNMENT_39 if version >= 2 else {}, error)
    assert decode_assignment(encode_assignment(info, LATEST_39), LATEST_39) == expected
