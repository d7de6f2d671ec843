"""KIP-268 at the API level: byte encodings (checked against layouts written out by hand from Kafka's
``SubscriptionInfo`` / ``AssignmentInfo``), decoding errors, ``upgrade.from``, the leader's ``assign()`` and
the member's ``onAssignment()`` under both profiles."""

from __future__ import annotations

import re
import struct
import uuid

import pytest

from reference_impl.streams_probing import api
from reference_impl.streams_probing.api import (
    AssignmentInfo,
    AssignorError,
    HostInfo,
    IllegalStateException,
    MemberOutcome,
    SubscriptionInfo,
    TaskAssignmentException,
    TaskId,
    TopicPartition,
)
from reference_impl.streams_probing.releases import (
    UNKNOWN,
    ConfigException,
    configured_metadata_version,
    matrix_cells,
    release,
    upgrade_from_values,
)
from rollcheck.errors import UserError

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
    data = api.encode_subscription(SubscriptionInfo.of(3, 3, PID, frozenset({TaskId(0, 1)})))
    for cut in (0, 3, 9, len(data) - 1):
        with pytest.raises(TaskAssignmentException, match="truncated"):
            api.decode_subscription(data[:cut])
    with pytest.raises(TaskAssignmentException, match="version=0"):
        api.decode_subscription(_i(0))
    bad_count = _i(3, 3) + struct.pack(">qq", 1, 2) + _i(-1)
    with pytest.raises(TaskAssignmentException, match="negative count -1"):
        api.decode_subscription(bad_count)
    with pytest.raises(IllegalStateException, match="between 1 and 3"):
        SubscriptionInfo.of(4, 3)


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
    with pytest.raises(TaskAssignmentException, match="truncated"):
        api.decode_assignment(data[:-1])
    with pytest.raises(TaskAssignmentException, match="used version: 4; latest supported version: 3"):
        api.decode_assignment(data, latest_supported=3)
    with pytest.raises(TaskAssignmentException, match="used version: 9"):
        api.decode_assignment(_i(9, 9))
    with pytest.raises(TaskAssignmentException, match="unknown error code 77"):
        api.decode_assignment(_i(4, 4, 0, 0, 0, 77))
    with pytest.raises(IllegalStateException, match="Unknown metadata version: 5"):
        api.encode_assignment(AssignmentInfo(5, 5))


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
    unknown = re.escape("Unknown configuration value for parameter 'upgrade.from': 1.1")
    with pytest.raises(ConfigException, match=unknown):
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
