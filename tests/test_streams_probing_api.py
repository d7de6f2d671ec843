"""KIP-268 at the API level: byte encodings (checked against layouts written out by hand from Kafka's
``SubscriptionInfo`` / ``AssignmentInfo`` and against bytes and answers of the JVM, tests/data/
streams_probing_jvm.json), Kafka's unit tests (2.0 / 2.1 ``SubscriptionInfoTest``, ``AssignmentInfoTest``),
decoding errors, ``upgrade.from``, the leader's ``assign()`` and the member's ``onAssignment()`` under the three
profiles (``kafka-2.0``: each release's own branch, Kafka 2.0 and the 2.1 branch)."""

from __future__ import annotations

import json
import re
import struct
import uuid
from pathlib import Path
from typing import Any

import pytest

from reference_impl.streams_probing import api, jvm
from reference_impl.streams_probing.api import (
    AssignmentInfo,
    AssignorError,
    BufferUnderflowException,
    HostInfo,
    IllegalArgumentException,
    IllegalStateException,
    MemberOutcome,
    NegativeArraySizeException,
    SubscriptionInfo,
    TaskAssignmentException,
    TaskId,
    TopicPartition,
)
from reference_impl.streams_probing.releases import (
    UNKNOWN,
    ConfigException,
    configured_metadata_version,
    release,
    upgrade_from_values,
)
from rollcheck.core.errors import UserError
from tests.streams_matrix import matrix_cells

PID = uuid.UUID("00000000-0000-0001-0000-000000000002")


def _i(*xs: int) -> bytes:
    return b"".join(struct.pack(">i", x) for x in xs)


def _utf(s: str) -> bytes:
    raw = s.encode("utf-8")
    return struct.pack(">H", len(raw)) + raw


# ---------------------------------------------------------------- SubscriptionInfo
def test_subscription_v3_exact_bytes() -> None:
    info = SubscriptionInfo.of(3, 3, PID, frozenset({TaskId(0, 1)}), frozenset(), "host:9092")
    expected = (_i(3, 3) + struct.pack(">qq", 1, 2) + _i(1, 0, 1) + _i(0) + _i(9) + b"host:9092")
    assert api.encode_subscription(info) == expected
    assert api.decode_subscription(expected) == info


def test_subscription_v1_and_v2_layouts() -> None:
    v1 = SubscriptionInfo.of(1, 1, PID, frozenset(), frozenset({TaskId(2, 3)}))
    assert api.encode_subscription(v1) == _i(1) + struct.pack(">qq", 1, 2) + _i(0) + _i(1, 2, 3)
    v2 = SubscriptionInfo.of(2, 2, PID, user_endpoint=None)
    assert api.encode_subscription(v2) == _i(2) + struct.pack(">qq", 1, 2) + _i(0, 0, 0)
    # Versions 1 and 2 carry no supported version.
    assert api.decode_subscription(api.encode_subscription(v2)).latest_supported == UNKNOWN


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_subscription_round_trip(version: int) -> None:
    pid = uuid.UUID(int=(1 << 127) | 12345)  # a negative most-significant long
    info = SubscriptionInfo.of(version, 4, pid, frozenset({TaskId(0, 0), TaskId(1, 7)}), frozenset({TaskId(3, 1)}),
                               "h\u00e9:1" if version >= 2 else None)
    assert api.decode_subscription(api.encode_subscription(info)) == info


def test_subscription_decode_errors() -> None:
    """``SubscriptionInfo.decode`` reads a raw ``ByteBuffer`` (Kafka 2.0 / 2.1, the JVM's answers)."""
    data = api.encode_subscription(SubscriptionInfo.of(3, 3, PID, frozenset({TaskId(0, 1)})))
    for cut in (0, 3, 9, len(data) - 1):
        with pytest.raises(BufferUnderflowException):
            api.decode_subscription(data[:cut])
    # 2.1 decodes a version 4 subscription in full: two ints are not enough.
    with pytest.raises(BufferUnderflowException):
        api.decode_subscription(_i(4, 7), latest_supported=4)
    head = _i(2) + PID.bytes
    # A negative task count reads no task (a for loop), a negative endpoint length is `new byte[-2]`.
    assert api.decode_subscription(head + _i(-1, -1, 0)) == SubscriptionInfo(2, UNKNOWN, PID)
    with pytest.raises(NegativeArraySizeException, match=r"^-2$"):
        api.decode_subscription(head + _i(0, 0, -2))
    # Malformed UTF-8 in the endpoint is replaced (new String(bytes, UTF_8)), trailing bytes are ignored.
    assert api.decode_subscription(head + _i(0, 0, 2) + b"\xffA").user_endpoint == "\ufffdA"
    assert api.decode_subscription(head + _i(0, 0, 0) + b"\xde\xad").user_endpoint is None
    assert api.decode_subscription(_i(1) + PID.bytes + _i(0, 0, 3) + b"abc").user_endpoint is None
    with pytest.raises(IllegalArgumentException, match=re.escape("version must be between 1 and 3; was: 4")):
        SubscriptionInfo.of(4, 3)


@pytest.mark.parametrize(("data", "latest", "expected"), [
    (_i(0, 255), 3, SubscriptionInfo(0, 255)),
    (_i(-1, 3), 3, SubscriptionInfo(-1, 3)),
    (_i(0, 255), 4, SubscriptionInfo(0, 255)),
    (_i(10, 11), 4, SubscriptionInfo(10, 11)),
])
def test_probing_release_reads_any_unknown_subscription_version_in_its_default_branch(
        data: bytes, latest: int, expected: SubscriptionInfo) -> None:
    """2.0 / 2.1 ``decode``: ``default:`` reads the supported version for any version it has no case for."""
    assert api.decode_subscription(data, latest_supported=latest) == expected


def test_pre_2_0_releases_encode_one_layout() -> None:
    """0.10.1 ... 1.1 ``SubscriptionInfo.encode`` writes the endpoint whatever the version; 0.10.0 encodes only
    version 1 (``TaskAssignmentException("unable to encode subscription data: version=2")``)."""
    info = SubscriptionInfo.of(1, 2, PID, user_endpoint="host:1")
    data = api.encode_subscription(info, latest_supported=2)
    assert data == _i(1) + PID.bytes + _i(0, 0, 6) + b"host:1"
    # 0.10.0 and 2.0 read the version 1 fields and ignore the endpoint after them.
    assert api.decode_subscription(data, latest_supported=1) == SubscriptionInfo.of(1, 1, PID)
    assert api.decode_subscription(data, latest_supported=3) == SubscriptionInfo.of(1, 3, PID)
    with pytest.raises(TaskAssignmentException, match=r"^unable to encode subscription data: version=2$"):
        api.encode_subscription(SubscriptionInfo(2, UNKNOWN, PID), latest_supported=1)


def test_pre_2_0_subscription_decode_keeps_its_error() -> None:
    for version in (0, -1, 3):
        with pytest.raises(TaskAssignmentException, match=f"^unable to decode subscription data: version={version}$"):
            api.decode_subscription(_i(version, 3), latest_supported=2)
    with pytest.raises(TaskAssignmentException, match="version=2"):
        api.decode_subscription(_i(2) + PID.bytes + _i(0, 0, 0), latest_supported=1)  # 0.10.0 reads only 1


def test_future_subscription_decodes_as_versions_only_on_a_probing_release() -> None:
    v4 = api.encode_subscription(SubscriptionInfo.of(4, 4, PID))
    # 2.0 (speaks 3) reads the used and the supported version of a version 4 subscription, nothing else.
    assert api.decode_subscription(v4, latest_supported=3) == SubscriptionInfo(4, 4)
    # A pre-2.0 release (speaks 2) fails on it: the reason KIP-268 needs upgrade.from.
    with pytest.raises(TaskAssignmentException, match="unable to decode subscription data: version=4"):
        api.decode_subscription(v4, latest_supported=2)
    v3 = api.encode_subscription(SubscriptionInfo.of(3, 3, PID))
    with pytest.raises(TaskAssignmentException, match="version=3"):
        api.decode_subscription(v3, latest_supported=2)


# ---------------------------------------------------------------- AssignmentInfo
def test_assignment_v4_exact_bytes() -> None:
    info = AssignmentInfo(4, 4, (TaskId(0, 0),), ((TaskId(1, 2), (TopicPartition("t", 2),)),),
                          ((HostInfo("h", 80), (TopicPartition("t", 0),)),), AssignorError.VERSION_PROBING)
    expected = (_i(4, 4) + _i(1, 0, 0) + _i(1, 1, 2) + _i(1) + _utf("t") + _i(2)
                + _i(1) + _utf("h") + _i(80) + _i(1) + _utf("t") + _i(0) + _i(2))
    assert api.encode_assignment(info) == expected
    assert api.decode_assignment(expected) == info


def test_assignment_v1_v2_v3_layouts() -> None:
    assert api.encode_assignment(AssignmentInfo(1, UNKNOWN, (TaskId(0, 1),))) == _i(1, 1, 0, 1, 0)
    assert api.encode_assignment(AssignmentInfo(2, UNKNOWN)) == _i(2, 0, 0, 0)
    assert api.encode_assignment(AssignmentInfo(3, 3)) == _i(3, 3, 0, 0, 0)
    # The KIP's probing reply: an empty assignment carrying the leader's version twice.
    assert api.decode_assignment(api.encode_assignment(AssignmentInfo(3, 3))).is_empty


def test_assignment_writes_topics_as_java_modified_utf8() -> None:
    info = AssignmentInfo(1, UNKNOWN, (), ((TaskId(0, 0), (TopicPartition("a\x00\U0001f600", 1),)),))
    data = api.encode_assignment(info)
    assert b"\xc0\x80" in data and b"\xed\xa0\xbd\xed\xb8\x80" in data  # NUL and a surrogate pair
    assert api.decode_assignment(data) == info


def test_assignment_decode_errors() -> None:
    data = api.encode_assignment(AssignmentInfo(4, 4, (TaskId(0, 0),)))
    with pytest.raises(TaskAssignmentException, match=r"^Failed to decode AssignmentInfo$") as exc:
        api.decode_assignment(data[:-1])
    assert isinstance(exc.value.__cause__, jvm.EOFException)  # the IOException, as Kafka's cause
    with pytest.raises(TaskAssignmentException, match="used version: 4; latest supported version: 3"):
        api.decode_assignment(data, latest_supported=3)
    with pytest.raises(TaskAssignmentException, match="used version: 9"):
        api.decode_assignment(_i(9, 9))
    # Before 2.0: "Unknown assignment data version".
    with pytest.raises(TaskAssignmentException, match=r"^Unknown assignment data version: 3$"):
        api.decode_assignment(_i(3, 3, 0, 0, 0), latest_supported=2)
    # Kafka's constructors reject a version their release does not speak (not the encoder's IllegalStateException).
    with pytest.raises(IllegalArgumentException, match=re.escape("version must be between 1 and 4; was: 5")):
        api.encode_assignment(AssignmentInfo(5, 5))


@pytest.mark.parametrize(("data", "error", "message"), [
    (_i(1, -1, 0), IllegalArgumentException, "Illegal Capacity: -1"),  # new ArrayList<>(count)
    (_i(1, 0, -1), IllegalArgumentException, "Illegal initial capacity: -1"),  # new HashMap<>(count)
    (_i(1, 0, 1, 1, 1, -1), IllegalArgumentException, "Illegal initial capacity: -1"),  # new HashSet<>(n)
    (_i(4, 4), TaskAssignmentException, "Failed to decode AssignmentInfo"),
    (_i(4, 4, 0, 0, 0), TaskAssignmentException, "Failed to decode AssignmentInfo"),
    (_i(2, 0, 0, 1) + bytes.fromhex("0004f09f9880") + _i(1, 0), TaskAssignmentException,
     "Failed to decode AssignmentInfo"),  # 4-byte UTF-8 is malformed for readUTF
])
def test_assignment_decode_failures_are_kafkas(data: bytes, error: type[Exception], message: str) -> None:
    """Kafka 2.1 ``AssignmentInfo.decode`` on the JVM (the auditor's run): only an ``IOException`` is wrapped."""
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        api.decode_assignment(data)


def test_assignment_decode_accepts_what_kafka_accepts() -> None:
    # A negative host count reads no host (a plain for loop over `new HashMap<>()`); trailing bytes are ignored.
    assert api.decode_assignment(_i(2, 0, 0, -1)) == AssignmentInfo(2)
    assert api.decode_assignment(_i(1, 0, 0) + b"\xde\xad\xbe\xef") == AssignmentInfo(1)
    # An error code Kafka does not define is kept as it is (2.1: errCode = in.readInt()).
    info = api.decode_assignment(_i(4, 4, 0, 0, 0, 7))
    assert info.error == 7 and not isinstance(info.error, AssignorError)
    assert api.encode_assignment(info) == _i(4, 4, 0, 0, 0, 7)
    # readUTF: no check for overlong forms or encoded surrogates.
    host = _i(2, 0, 0, 1)
    for raw, text in (("0002c181", "A"), ("0003eda080", "\ud800"), ("0002c080", "\x00")):
        got = api.decode_assignment(host + bytes.fromhex(raw) + _i(1, 0))
        assert got.partitions_by_host == ((HostInfo(text, 1), ()),)


def test_assignment_encodes_lone_surrogates_and_rejects_long_strings() -> None:
    # writeUTF writes each UTF-16 unit: a lone surrogate is 3 bytes.
    data = api.encode_assignment(AssignmentInfo(2, UNKNOWN, (), (), ((HostInfo("a\ud800", 1), ()),)))
    assert data == _i(2, 0, 0, 1) + bytes.fromhex("000461eda080") + _i(1, 0)
    with pytest.raises(TaskAssignmentException, match=r"^Failed to encode AssignmentInfo$") as exc:
        api.encode_assignment(AssignmentInfo(2, UNKNOWN, (), (), ((HostInfo("a" * 70000, 1), ()),)))
    assert isinstance(exc.value.__cause__, jvm.UTFDataFormatException)
    # A subscription's endpoint is String.getBytes(UTF_8): a lone surrogate becomes "?".
    sub = api.encode_subscription(SubscriptionInfo(2, UNKNOWN, PID, user_endpoint="a\ud800"))
    assert sub.endswith(_i(2) + b"a?")


# ---------------------------------------------------------------- releases and upgrade.from
def test_releases_and_matrix() -> None:
    assert [release(n).latest_supported for n in ("0.10.0", "0.10.1", "1.1", "2.0", "post-2.0", "2.1", "3.9")] == [
        1, 2, 2, 3, 4, 4, 11]
    assert not release("1.1").probing and release("2.0").probing
    cells = matrix_cells()
    assert len(cells) == 28 and cells[0] == ("0.10.0", "0.10.1") and cells[-1] == ("2.0", "post-2.0")
    with pytest.raises(UserError, match=re.escape("unknown Kafka Streams release '0.9'")):
        release("0.9")


def test_upgrade_from_table() -> None:
    two = release("2.0")
    assert configured_metadata_version(two, None, "kip") == 3
    assert configured_metadata_version(two, "0.10.0", "kip") == 1
    assert all(configured_metadata_version(two, v, "kip") == 2 for v in ("0.10.1", "0.10.2", "0.11.0", "1.0", "1.1"))
    # The KAFKA-6054 back-port: pre-2.0 releases 0.10.1 ... 1.1 know only "0.10.0".
    assert upgrade_from_values(release("1.1"), "kip") == ("0.10.0",)
    assert configured_metadata_version(release("1.1"), "0.10.0", "kip") == 1
    assert upgrade_from_values(release("0.10.0"), "kip") == ()
    unknown = re.escape("Invalid value 1.1 for configuration upgrade.from: String must be one of: null, 0.10.0")
    with pytest.raises(ConfigException, match=f"^{unknown}$"):
        configured_metadata_version(release("1.0"), "1.1", "kip")
    # Kafka today: "2.0" ... "3.8" are known and leave the metadata version alone.
    assert configured_metadata_version(release("3.9"), "2.3", "kafka") == 11
    assert configured_metadata_version(release("3.9"), "1.1", "kafka") == 2
    with pytest.raises(ConfigException):
        configured_metadata_version(release("3.9"), "3.9", "kafka")


# ---------------------------------------------------------------- the leader: assign()
TASKS = [TaskId(0, p) for p in range(4)]


def _subs(*pairs: tuple[int, int]) -> dict[str, SubscriptionInfo]:
    return {str(i): SubscriptionInfo.of(v, s) for i, (v, s) in enumerate(pairs)}


def test_kip_leader_sends_empty_assignment_to_a_future_member() -> None:
    r = api.assign(release("2.0"), "kip", _subs((3, 3), (4, 4)), TASKS)
    assert r.version_probing and r.used_version == 3 and not r.follow_up_rebalance
    assert r.assignments["1"] == AssignmentInfo(3, 3) and r.assignments["1"].is_empty
    assert r.assignments["0"].version == 3 and len(r.assignments["0"].active_tasks) == 4


def test_kafka_leader_pools_future_members_and_forces_follow_up() -> None:
    r = api.assign(release("2.0"), "kafka", _subs((3, 3), (4, 4)), TASKS)
    assert r.version_probing and r.follow_up_rebalance
    assert {i.version for i in r.assignments.values()} == {3}
    assert all(i.latest_supported == 3 and i.active_tasks for i in r.assignments.values())


def test_leader_assigns_at_the_lowest_received_version() -> None:
    # An upgraded (post-2.0) leader with one member still on 2.0: version 3 for everyone.
    for profile in ("kip", "kafka"):
        r = api.assign(release("post-2.0"), profile, _subs((4, 4), (3, 3)), TASKS)
        assert r.used_version == 3 and {i.version for i in r.assignments.values()} == {3}
    # kip: the leader encodes its own supported version; kafka: the commonly supported one.
    assert api.assign(release("post-2.0"), "kip", _subs((4, 4), (3, 3))).assignments["1"].latest_supported == 4
    assert api.assign(release("post-2.0"), "kafka", _subs((4, 4), (3, 3))).assignments["1"].latest_supported == 3


def test_kip_leader_triggers_the_final_rebalance_when_bounced_last() -> None:
    # Every member probed down to 3 but supports 4: the leader (now on 4) asks for one more rebalance.
    r = api.assign(release("post-2.0"), "kip", _subs((3, 4), (3, 4)))
    assert r.follow_up_rebalance and r.used_version == 3
    r = api.assign(release("post-2.0"), "kip", _subs((3, 4), (3, 4)), mutations=frozenset({"no_leader_follow_up"}))
    assert not r.follow_up_rebalance


def test_future_and_pre_2_0_subscriptions_together() -> None:
    subs = _subs((2, 2), (4, 4))
    with pytest.raises(IllegalStateException, match=r"future \(version probing\) subscription \(version: 4\) and an "
                       r"incompatible pre Kafka 2.0 subscription \(version: 2\)"):
        api.assign(release("2.0"), "kip", subs)
    # Today's assignor sends an error assignment at its LATEST_SUPPORTED_VERSION to every member.
    r = api.assign(release("post-2.0"), "kafka", _subs((2, 2), (4, 4)))
    assert r.used_version == 2  # post-2.0 understands version 4: no future member, a plain version 2 assignment
    r = api.assign(release("post-2.0"), "kafka", {"0": SubscriptionInfo.of(2, 2), "1": SubscriptionInfo(11, 11)})
    assert {i.error for i in r.assignments.values()} == {AssignorError.ASSIGNMENT_ERROR}
    assert {i.version for i in r.assignments.values()} == {4}
    # ... which the pre-2.0 member cannot even decode.
    with pytest.raises(TaskAssignmentException, match="Unable to decode assignment data"):
        api.on_assignment(release("1.1"), "kafka", 2, r.assignments["0"])


def test_pre_2_0_leader_fails_on_a_newer_subscription() -> None:
    with pytest.raises(TaskAssignmentException, match="version=3"):
        api.assign(release("1.1"), "kip", _subs((2, 2), (3, 3)))
    # With upgrade.from the bounced member sends version 2 and the old leader copes.
    assert api.assign(release("1.1"), "kip", _subs((2, 2), (2, 3))).used_version == 2


def test_mutated_leaders() -> None:
    with pytest.raises(IllegalStateException, match="future subscription"):
        api.assign(release("2.0"), "kip", _subs((3, 3), (4, 4)), mutations=frozenset({"leader_fails_on_future"}))
    r = api.assign(release("2.0"), "kip", _subs((3, 3), (2, 3)), mutations=frozenset({"assign_at_leader_version"}))
    assert r.used_version == 3


# ---------------------------------------------------------------- the member: onAssignment()
def test_member_probes_down_then_adopts_the_higher_version_kip() -> None:
    new = release("post-2.0")
    down = api.on_assignment(new, "kip", 4, AssignmentInfo(3, 3))
    assert (down.outcome, down.used_version, down.rebalance) == (MemberOutcome.PROBE_DOWNGRADE, 3, True)
    # Later the upgraded leader tells it 4 is supported: it goes back up.
    up = api.on_assignment(new, "kip", 3, AssignmentInfo(3, 4))
    assert (up.outcome, up.used_version) == (MemberOutcome.ADOPT_SUPPORTED, 4)
    # "if possible": never above what the member speaks (capped), unless KAFKA-8649's uncapped adopt.
    two = release("2.0")
    assert api.on_assignment(two, "kip", 3, AssignmentInfo(3, 4)).outcome is MemberOutcome.NONE
    assert api.on_assignment(two, "kip", 3, AssignmentInfo(3, 4), frozenset({"uncapped_adopt"})).used_version == 4
    never = frozenset({"member_never_upgrades"})
    assert api.on_assignment(new, "kip", 3, AssignmentInfo(3, 4), never).used_version == 3


def test_member_checks_kafka() -> None:
    new = release("post-2.0")
    higher = re.escape("Sent a version 3 subscription but got an assignment with higher version 4.")
    with pytest.raises(TaskAssignmentException, match=higher):
        api.on_assignment(new, "kafka", 3, AssignmentInfo(4, 4))
    with pytest.raises(IllegalStateException, match="higher version 4"):
        api.on_assignment(new, "kip", 3, AssignmentInfo(4, 4))  # Kafka 2.0's exception type
    with pytest.raises(TaskAssignmentException, match="Can't upgrade to metadata version greater than we support"):
        api.on_assignment(release("2.0"), "kafka", 3, AssignmentInfo(3, 4))
    up = api.on_assignment(new, "kafka", 3, AssignmentInfo(3, 4))
    assert (up.outcome, up.used_version, up.rebalance) == (MemberOutcome.ADOPT_SUPPORTED, 4, True)
    down = api.on_assignment(new, "kafka", 4, AssignmentInfo(3, 3))
    assert (down.outcome, down.used_version, down.rebalance) == (MemberOutcome.PROBE_DOWNGRADE, 3, True)
    err = api.on_assignment(new, "kafka", 4, AssignmentInfo(4, 4, error=AssignorError.ASSIGNMENT_ERROR))
    assert err.outcome is MemberOutcome.ERROR_SHUTDOWN and err.error is AssignorError.ASSIGNMENT_ERROR


def test_pre_2_0_member_ignores_probing_fields() -> None:
    old = release("1.1")
    assert api.on_assignment(old, "kip", 2, AssignmentInfo(2)).outcome is MemberOutcome.NONE
    with pytest.raises(TaskAssignmentException, match="used version: 3; latest supported version: 2"):
        api.on_assignment(old, "kip", 2, AssignmentInfo(3, 3))


# ---------------------------------------------------------------- Kafka's unit tests, ported
# SubscriptionInfoTest / AssignmentInfoTest of Apache Kafka 2.0 (LATEST_SUPPORTED_VERSION 3) and 2.1 (4).
ACTIVE = frozenset({TaskId(0, 0), TaskId(0, 1), TaskId(1, 0)})
STANDBY = frozenset({TaskId(1, 1), TaskId(2, 0)})
ACTIVE_LIST = (TaskId(0, 0), TaskId(0, 0), TaskId(0, 1), TaskId(1, 0))
STANDBY_MAP = {TaskId(1, 1): [TopicPartition("t1", 1), TopicPartition("t2", 1)],
               TaskId(2, 0): [TopicPartition("t3", 0), TopicPartition("t3", 0)]}  # Utils.mkSet: one partition
GLOBAL = {HostInfo("localhost", 80): [TopicPartition("t1", 1), TopicPartition("t3", 3)]}
JVM: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "streams_probing_jvm.json").read_text())


@pytest.mark.parametrize("latest", [3, 4])
def test_subscription_should_throw_for_unknown_version(latest: int) -> None:
    for version in (0, latest + 1):
        with pytest.raises(IllegalArgumentException,
                           match=f"^version must be between 1 and {latest}; was: {version}$"):
            SubscriptionInfo.of(version, latest, PID, ACTIVE, STANDBY, "localhost:80")


@pytest.mark.parametrize("latest", [3, 4])
def test_subscription_should_encode_and_decode_every_version(latest: int) -> None:
    for version in range(1, latest + 1):
        info = SubscriptionInfo.of(version, latest, PID, ACTIVE, STANDBY,
                                   "ignoredUserEndpoint:80" if version == 1 else "localhost:80")
        expected = SubscriptionInfo(version, latest if version >= 3 else UNKNOWN, PID, ACTIVE, STANDBY,
                                    None if version == 1 else "localhost:80")
        assert api.decode_subscription(api.encode_subscription(info, latest), latest) == expected


def test_subscription_should_encode_and_decode_smaller_latest_supported_version() -> None:
    info = SubscriptionInfo(3, 3, PID, ACTIVE, STANDBY, "localhost:80")  # 2.1's test: used = supported = 3
    assert api.decode_subscription(api.encode_subscription(info)) == info
    # 2.0's encoder writes its own LATEST_SUPPORTED_VERSION whatever the field says.
    assert api.encode_subscription(SubscriptionInfo(3, 9, PID), latest_supported=3)[4:8] == _i(3)


@pytest.mark.parametrize("latest", [3, 4])
def test_assignment_should_throw_for_unknown_version(latest: int) -> None:
    for version in (0, latest + 1):
        message = f"^version must be between 1 and {latest}; was: {version}$"
        with pytest.raises(IllegalArgumentException, match=message):
            AssignmentInfo.of(version, latest, ACTIVE_LIST, STANDBY_MAP, GLOBAL)
    # Built directly (the model's constructor): below 1 at once, above the release's latest when encoded.
    with pytest.raises(IllegalArgumentException, match=r"was: 0$"):
        AssignmentInfo(0, latest, ACTIVE_LIST)
    message = f"^version must be between 1 and {latest}; was: {latest + 1}$"
    with pytest.raises(IllegalArgumentException, match=message):
        api.encode_assignment(AssignmentInfo(latest + 1, latest, ACTIVE_LIST), latest)


@pytest.mark.parametrize("latest", [3, 4])
def test_assignment_should_encode_and_decode_every_version(latest: int) -> None:
    for version in range(1, latest + 1):
        error = AssignorError.VERSION_PROBING if version >= 4 else AssignorError.NONE
        info = AssignmentInfo.of(version, latest, ACTIVE_LIST, STANDBY_MAP, GLOBAL, error)
        expected = AssignmentInfo(version, latest if version >= 3 else UNKNOWN, ACTIVE_LIST, STANDBY_MAP,
                                  GLOBAL if version >= 2 else {}, error)
        assert api.decode_assignment(api.encode_assignment(info, latest), latest) == expected


def test_assignment_should_encode_and_decode_smaller_commonly_supported_version() -> None:
    info = AssignmentInfo.of(3, 4, ACTIVE_LIST, STANDBY_MAP, GLOBAL, commonly_supported=3)
    assert info.latest_supported == 3
    assert api.decode_assignment(api.encode_assignment(info)) == AssignmentInfo(3, 3, ACTIVE_LIST, STANDBY_MAP, GLOBAL)


def test_sets_and_maps_compare_as_sets_and_maps() -> None:
    # Set<TaskId>: duplicates collapse, order does not matter.
    twice = SubscriptionInfo(1, UNKNOWN, PID, [TaskId(0, 1), TaskId(1, 0), TaskId(0, 1)])
    assert twice == SubscriptionInfo(1, UNKNOWN, PID, {TaskId(1, 0), TaskId(0, 1)})
    assert twice.prev_tasks == frozenset({TaskId(0, 1), TaskId(1, 0)}) and len(twice.prev_tasks) == 2
    # ... but the order tasks were added in is kept: 0_1 and 1_0 share a HashSet bin (hash 1).
    assert list(twice.prev_tasks) == [TaskId(0, 1), TaskId(1, 0)]
    v1 = _i(1) + PID.bytes
    assert api.encode_subscription(twice) == v1 + _i(2, 0, 1, 1, 0, 0)
    other_way = SubscriptionInfo(1, UNKNOWN, PID, [TaskId(1, 0), TaskId(0, 1)])
    assert api.encode_subscription(other_way) == v1 + _i(2, 1, 0, 0, 1, 0)
    # Decoding keeps the wire order, so Kafka's decode-then-encode is reproduced byte for byte.
    assert api.encode_subscription(api.decode_subscription(v1 + _i(2, 1, 0, 0, 1, 0))) == v1 + _i(2, 1, 0, 0, 1, 0)
    a = AssignmentInfo(2, UNKNOWN, (), STANDBY_MAP, GLOBAL)
    b = AssignmentInfo(2, UNKNOWN, (), tuple(reversed(list(STANDBY_MAP.items()))),
                       {HostInfo("localhost", 80): [TopicPartition("t3", 3), TopicPartition("t1", 1)]})
    assert a == b and hash(a) == hash(b)
    assert dict(a.standby_tasks)[TaskId(2, 0)] == (TopicPartition("t3", 0),)
    # The active tasks are a List: order and duplicates count.
    assert AssignmentInfo(1, UNKNOWN, (TaskId(0, 0), TaskId(0, 1))) != AssignmentInfo(1, UNKNOWN, (TaskId(0, 1),
                                                                                                 TaskId(0, 0)))
    assert AssignmentInfo(1, UNKNOWN, (TaskId(0, 0),)) != AssignmentInfo(1, UNKNOWN, (TaskId(0, 0), TaskId(0, 0)))


# ---------------------------------------------------------------- bytes and answers of the JVM
@pytest.mark.parametrize("case", range(len(JVM["hash_order"])))
def test_java_hash_set_iteration_order(case: int) -> None:
    """``new HashSet<>()`` / ``new HashMap<>()`` filled in the given order, as the JDK iterates it (tree bins
    and table resizes included)."""
    c = JVM["hash_order"][case]
    cls = {"TaskId": TaskId, "TopicPartition": TopicPartition, "HostInfo": HostInfo}[c["class"]]
    keys = [cls(*k) for k in c["put"]]
    compare = (lambda x, y: (x > y) - (x < y)) if cls is TaskId else None
    assert jvm.hash_order(keys, cls.java_hash, compare) == [cls(*k) for k in c["iteration"]]


def test_task_sets_are_written_in_hash_set_order() -> None:
    """The auditor's subscription with 62 tasks, encoded by Kafka 2.0 and 2.1 (``sub_enc_big_*``)."""
    pid = uuid.UUID("01234567-89ab-cdef-fedc-ba9876543210")
    # The harness added the tasks to its HashSet in this order: it decides the order inside a bin (5: 0_5,
    # 1_4, 2_3, -1_5). A plain Python set would be taken in TaskId order (-1_5 first).
    big = [TaskId(g, p) for g in range(3) for p in range(20)] + [TaskId(17, 3), TaskId(-1, 5)]
    for rel, latest, version in (("2.0", 3, 3), ("2.1", 4, 3), ("2.1", 4, 4)):
        info = SubscriptionInfo.of(version, latest, pid, big, big, "x:1")
        assert api.encode_subscription(info, latest).hex() == JVM["kafka_bytes"][f"{rel}:sub_enc_big_v{version}"]
        uni = SubscriptionInfo.of(3, latest, pid, ACTIVE, STANDBY, "h\u00f4st\x00\U0001F600:80")
        assert api.encode_subscription(uni, latest).hex() == JVM["kafka_bytes"][f"{rel}:sub_enc_uni_ep_v3"]


def test_assignment_bytes_match_kafka() -> None:
    glob_uni = {HostInfo("h\u00f4st\x00\U0001F600", 9092): [TopicPartition("t\x00\u00e9\U0001F600", 7)]}
    for rel, latest in (("2.0", 3), ("2.1", 4)):
        info = AssignmentInfo.of(3, latest, ACTIVE_LIST, STANDBY_MAP, GLOBAL)
        assert api.encode_assignment(info, latest).hex() == JVM["kafka_bytes"][f"{rel}:asg_enc_v3"]
        assert api.encode_assignment(AssignmentInfo.of(latest, latest), latest).hex() == \
            JVM["kafka_bytes"][f"{rel}:asg_empty_probe"]
    v4 = AssignmentInfo.of(4, 4, ACTIVE_LIST, STANDBY_MAP, GLOBAL, AssignorError.VERSION_PROBING)
    assert api.encode_assignment(v4).hex() == JVM["kafka_bytes"]["2.1:asg_enc_v4"]
    uni = AssignmentInfo.of(4, 4, (), {}, glob_uni, AssignorError.VERSION_PROBING)
    assert api.encode_assignment(uni).hex() == JVM["kafka_bytes"]["2.1:asg_enc_uni_v4"]


def _units(s: str) -> str:
    return "".join(f"{u:04x}" for u in jvm.utf16_units(s))


def _java_string(units: str) -> str:
    return jvm.from_utf16_units([int(units[i:i + 4], 16) for i in range(0, len(units), 4)])


def test_strings_as_the_jvm_reads_and_writes_them() -> None:
    utf = JVM["utf"]
    for raw, want in utf["readUTF"].items():
        try:
            got = _units(jvm.read_utf(bytes.fromhex(raw)))
        except jvm.UTFDataFormatException as exc:
            got = f"EXC UTFDataFormatException: {exc}"
        assert got == want, raw
    for raw, want in utf["newString"].items():
        assert _units(jvm.utf8_string(bytes.fromhex(raw))) == want, raw
    for units, want in utf["getBytes"].items():
        assert jvm.utf8_bytes(_java_string(units)).hex() == want, units
    for units, want in utf["writeUTF"].items():
        assert jvm.write_utf(_java_string(units)).hex() == want, units


# ---------------------------------------------------------------- StreamsConfig: upgrade.from
@pytest.mark.parametrize(("rel", "profile", "accepted"), [
    ("1.1", "kip", "null, 0.10.0"),
    ("0.10.1", "kafka", "null, 0.10.0"),
    ("2.0", "kip", "null, 0.10.0, 0.10.1, 0.10.2, 0.11.0, 1.0, 1.1"),
    ("post-2.0", "kafka", "null, 0.10.0, 0.10.1, 0.10.2, 0.11.0, 1.0, 1.1"),
    ("3.9", "kafka", "null, 0.10.0, 0.10.1, 0.10.2, 0.11.0, 1.0, 1.1, 2.0, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6, 2.7, "
                     "2.8, 3.0, 3.1, 3.2, 3.3, 3.4, 3.5, 3.6, 3.7, 3.8"),
])
def test_invalid_upgrade_from_is_rejected_by_streams_config(rel: str, profile: str, accepted: str) -> None:
    """``ConfigDef.ValidString.in(null, ...)``: ``ConfigException("Invalid value X for configuration
    upgrade.from: String must be one of: ...")`` (StreamsConfig of 0.10.1 ... 1.1, 2.0 / 2.1, 3.9 / trunk)."""
    message = f"Invalid value 9.9 for configuration upgrade.from: String must be one of: {accepted}"
    with pytest.raises(ConfigException, match=f"^{re.escape(message)}$"):
        configured_metadata_version(release(rel), "9.9", profile)


# ---------------------------------------------------------------- today's member: error codes
def test_kafka_member_handles_error_codes_as_streams_rebalance_listener() -> None:
    new = release("post-2.0")
    # VERSION_PROBING is logged only; onAssignment returned before the versions, so nothing changes.
    upd = api.on_assignment(new, "kafka", 3, AssignmentInfo(4, 4, error=AssignorError.VERSION_PROBING))
    assert (upd.outcome, upd.used_version, upd.rebalance) == (MemberOutcome.NONE, 3, False)
    with pytest.raises(TaskAssignmentException, match=r"^Hit an unrecognized exception during rebalance$"):
        api.on_assignment(new, "kafka", 4, AssignmentInfo(4, 4, error=7))
    for code in (AssignorError.INCOMPLETE_SOURCE_TOPIC_METADATA, AssignorError.SHUTDOWN_REQUESTED):
        assert api.on_assignment(new, "kafka", 4, AssignmentInfo(4, 4, error=code)).outcome is \
            MemberOutcome.ERROR_SHUTDOWN


# ---------------------------------------------------------------- kafka-2.0: each release's own branch
K20 = "kafka-2.0"
UNCAPPED = frozenset({"uncapped_adopt"})  # STR-M4: post-2.0 as 2.1.0 / 2.1.1 shipped (KAFKA-8649 unfixed)


def test_kafka_2_0_leader_2_0_probes_without_a_follow_up() -> None:
    """Kafka 2.0 (tag 2.0.1): the versions of the KIP (old members at the minimum received version, the future
    member's empty new AssignmentInfo(), its LATEST_SUPPORTED_VERSION twice), no leader-side follow-up."""
    r = api.assign(release("2.0"), K20, _subs((3, 3), (4, 4)), TASKS)
    assert r.version_probing and r.used_version == 3 and not r.follow_up_rebalance
    assert r.assignments["1"] == AssignmentInfo(3, 3) and r.assignments["1"].is_empty
    assert r.assignments["0"] == AssignmentInfo(3, 3)  # previous tasks back: it announced none
    # Every member supports more than is used: the kip leader would ask for a final rebalance, Kafka 2.0 does not.
    assert not api.assign(release("2.0"), K20, _subs((3, 3), (3, 3))).follow_up_rebalance
    with pytest.raises(IllegalStateException, match=r"incompatible pre Kafka 2.0 subscription \(version: 2\)"):
        api.assign(release("2.0"), K20, _subs((2, 2), (4, 4)))


def test_kafka_2_0_post_2_0_leader_sends_the_commonly_supported_version() -> None:
    """The 2.1 branch (KAFKA-8649 fixed, 8784899168cf + 16e3c52f1d8b): the minimum supported version over the
    members it understands; 2.1.0 / 2.1.1 (the uncapped_adopt variant) their LATEST_SUPPORTED_VERSION, 4."""
    leader = release("post-2.0")
    r = api.assign(leader, K20, _subs((4, 4), (3, 3)), TASKS)
    assert r.used_version == 3 and not r.follow_up_rebalance
    assert {(i.version, i.latest_supported) for i in r.assignments.values()} == {(3, 3)}
    # Every member back on post-2.0, one still on version 3: the commonly supported version is 4, no follow-up.
    r = api.assign(leader, K20, _subs((4, 4), (3, 4)))
    assert {(i.version, i.latest_supported) for i in r.assignments.values()} == {(3, 4)} and not r.follow_up_rebalance
    assert {i.latest_supported for i in api.assign(leader, K20, _subs((4, 4), (3, 3)), mutations=UNCAPPED)
            .assignments.values()} == {4}
    # Below version 3 no supported version is encoded; the mutations that change it.
    assert api.assign(leader, K20, _subs((4, 4), (2, 4))).assignments["0"] == AssignmentInfo(2)
    assert api.assign(leader, K20, _subs((4, 4), (3, 4)), mutations=frozenset({"leader_supported_is_used"})
                      ).assignments["0"].latest_supported == 3
    assert api.assign(leader, K20, _subs((4, 4), (3, 3)), mutations=frozenset({"commonly_supported_is_max"})
                      ).assignments["0"].latest_supported == 4


def test_kafka_2_0_future_member_reply_of_the_2_1_branch() -> None:
    """The 2.1 branch answers a future member new AssignmentInfo(minUserMetadataVersion,
    minSupportedMetadataVersion); 2.1.0 / 2.1.1 new AssignmentInfo(), its latest twice."""
    subs = {"0": SubscriptionInfo.of(3, 4), "1": SubscriptionInfo(5, 5)}
    r = api.assign(release("post-2.0"), K20, subs)
    assert r.version_probing and r.assignments["1"] == r.assignments["0"] == AssignmentInfo(3, 4)
    assert api.assign(release("post-2.0"), K20, subs, mutations=UNCAPPED).assignments["1"] == AssignmentInfo(4, 4)


def test_kafka_2_0_old_members_keep_their_previous_tasks() -> None:
    """versionProbingAssignment: Kafka 2.0 gives each consumer its client's (process id's) previous tasks; the
    2.1 branch each consumer its own (prevActiveTasksForConsumer), one entry per partition, sorted."""
    t0, t1, t2 = TaskId(0, 0), TaskId(0, 1), TaskId(0, 2)
    p = {t: [TopicPartition("topic1", t.partition)] for t in (t0, t1, t2)}
    pid = uuid.UUID(int=7)
    subs = {"a": SubscriptionInfo.of(3, 3, pid, [t0], [t2]), "b": SubscriptionInfo.of(3, 3, pid, [t1]),
            "f": SubscriptionInfo(4, 4)}
    r = api.assign(release("2.0"), K20, subs, [t0, t1, t2], partitions_for_task=p)
    for m in ("a", "b"):  # one client: both consumers get its tasks
        assert set(r.assignments[m].active_tasks) == {t0, t1}
        assert dict(r.assignments[m].standby_tasks) == {t2: (TopicPartition("topic1", 2),)}
        assert set(r.assignments[m].partitions) == {p[t0][0], p[t1][0]}
    assert r.assignments["f"].is_empty
    sub4 = {"a": SubscriptionInfo.of(4, 4, pid, [t1, t0], [t2]), "b": SubscriptionInfo.of(4, 4, pid, [t2]),
            "f": SubscriptionInfo(5, 5)}
    r = api.assign(release("post-2.0"), K20, sub4, [t0, t1, t2], partitions_for_task=p)
    assert r.assignments["a"].active_tasks == (t0, t1) and r.assignments["a"].partitions == (p[t0][0], p[t1][0])
    assert r.assignments["b"].active_tasks == (t2,) and not r.assignments["b"].standby_tasks
    # Without a probe the tasks are dealt as under kip (the model's stand-in for the task assignor).
    assert api.assign(release("2.0"), K20, _subs((3, 3), (3, 3)), TASKS).assignments == \
        api.assign(release("2.0"), "kip", _subs((3, 3), (3, 3)), TASKS).assignments


def test_kafka_2_0_member_2_0_adopts_uncapped() -> None:
    """Kafka 2.0's onAssignment (tag 2.0.1): at version 3 it takes a higher supported version for its next
    subscription, uncapped and without a rebalance (KAFKA-8649); a higher assignment is an
    IllegalStateException."""
    two = release("2.0")
    up = api.on_assignment(two, K20, 3, AssignmentInfo(3, 4))
    assert (up.outcome, up.used_version, up.rebalance) == (MemberOutcome.ADOPT_SUPPORTED, 4, False)
    assert api.on_assignment(two, K20, 3, AssignmentInfo(3, 3)).outcome is MemberOutcome.NONE
    assert api.on_assignment(two, K20, 3, AssignmentInfo(2)).outcome is MemberOutcome.NONE  # a pre-2.0 leader
    with pytest.raises(IllegalStateException, match="version 2 subscription but got an assignment with higher version"):
        api.on_assignment(two, K20, 2, AssignmentInfo(3, 3))
    assert api.on_assignment(two, K20, 3, AssignmentInfo(3, 4), frozenset({"member_never_upgrades"})).used_version == 3


def test_kafka_2_0_member_2_1_0_probes_to_the_received_or_supported_version() -> None:
    """2.1.0 / 2.1.1 (uncapped_adopt) and Kafka 2.0: below the version sent, from version 3 on, a probe: the
    received version if it is the leader's supported one, else the supported one; then a rejoin."""
    new = release("post-2.0")
    down = api.on_assignment(new, K20, 4, AssignmentInfo(3, 3), UNCAPPED)
    assert (down.outcome, down.used_version, down.rebalance) == (MemberOutcome.PROBE_DOWNGRADE, 3, True)
    stay = api.on_assignment(new, K20, 4, AssignmentInfo(3, 4), UNCAPPED)
    assert (stay.outcome, stay.used_version, stay.rebalance) == (MemberOutcome.PROBE_DOWNGRADE, 4, True)
    assert api.on_assignment(new, K20, 3, AssignmentInfo(3, 5), UNCAPPED).used_version == 5  # uncapped


def test_kafka_2_0_member_of_the_2_1_branch() -> None:
    """The 2.1 branch's validateMetadataVersions and maybeUpdateSubscriptionVersion."""
    new = release("post-2.0")
    with pytest.raises(TaskAssignmentException, match="higher version 4"):
        api.on_assignment(new, K20, 3, AssignmentInfo(4, 4))
    with pytest.raises(TaskAssignmentException, match="Can't upgrade to metadata version greater than we support"):
        api.on_assignment(new, K20, 3, AssignmentInfo(3, 5))
    up = api.on_assignment(new, K20, 3, AssignmentInfo(3, 4))
    assert (up.outcome, up.used_version, up.rebalance) == (MemberOutcome.ADOPT_SUPPORTED, 4, True)
    down = api.on_assignment(new, K20, 4, AssignmentInfo(3, 3))
    assert (down.outcome, down.used_version, down.rebalance) == (MemberOutcome.PROBE_DOWNGRADE, 3, True)
    again = api.on_assignment(new, K20, 4, AssignmentInfo(3, 4))  # the last bounced: rejoins at 4
    assert (again.outcome, again.used_version, again.rebalance) == (MemberOutcome.PROBE_DOWNGRADE, 4, True)
    assert api.on_assignment(new, K20, 4, AssignmentInfo(2)).outcome is MemberOutcome.NONE
    # Error codes (its StreamThread): 1 shuts the thread down, 2 makes it rejoin, others pause it.
    codes = {code: api.on_assignment(new, K20, 4, AssignmentInfo(4, 4, error=code)) for code in (1, 2, 3)}
    assert codes[1].outcome is MemberOutcome.ERROR_SHUTDOWN
    assert (codes[2].outcome, codes[2].rebalance, codes[3].outcome, codes[3].rebalance) == (
        MemberOutcome.NONE, True, MemberOutcome.NONE, False)


def test_kafka_2_0_pre_2_0_releases_as_ever() -> None:
    subs = _subs((2, 2), (2, 3))
    assert api.assign(release("1.1"), K20, subs) == api.assign(release("1.1"), "kip", subs)
    with pytest.raises(TaskAssignmentException, match="version=3"):
        api.assign(release("1.1"), K20, _subs((2, 2), (3, 3)))
    assert api.on_assignment(release("1.1"), K20, 2, AssignmentInfo(2)).outcome is MemberOutcome.NONE
