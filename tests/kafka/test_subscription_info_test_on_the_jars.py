"""The transcribed 2.x ``SubscriptionInfoTest`` cases (``test_subscription_info_test.py``), put to Kafka's own
``SubscriptionInfo`` in the released jars through the ``streams_probing`` adapters (kafka_oracle/streams_probing:
``subscription.encode`` / ``subscription.decode``): the bytes the transcription pins for each version (which
Kafka's test does not compare: it compares decoded objects) must be the bytes Kafka writes, and the unknown versions
must be refused with the transcribed message. The tests were read at the 2.0.0 and 2.1.0 tags; the served releases
of those lines answer (2.0.1 and 2.1.1: ``SubscriptionInfo`` did not change within either line).

Needs Java and Maven (the adapters are built on first use); skipped with the reason otherwise.
"""

from __future__ import annotations

from typing import Any

import pytest

from reference_impl.streams_probing.oracle import ORACLE
from rollcheck.oracle.client import OracleClient
from tests.kafka._on_the_jars import needs_java, oracle_fixture
from tests.kafka.test_subscription_info_test import (
    _ROUND_TRIPS_2X,
    ACTIVE_2X_ORDER,
    ACTIVE_TASKS,
    ENDPOINT,
    PID_2X,
    RELEASES_2X,
    STANDBY_2X_ORDER,
    STANDBY_TASKS,
    _layout,
)

SERVED = {"2.0.0": "2.0.1", "2.1.0": "2.1.1"}  # the tag read -> the served release of its line that answers
pytestmark = needs_java


jvm = oracle_fixture(ORACLE)


def _encode(client: OracleClient, kafka: str, version: int, endpoint: str) -> Any:
    [answer] = client.ask(SERVED[kafka], [{
        "op": "subscription.encode", "version": version, "latestSupported": RELEASES_2X[kafka],
        "processId": str(PID_2X), "prevTasks": [[t.topic_group_id, t.partition] for t in ACTIVE_TASKS],
        "standbyTasks": [[t.topic_group_id, t.partition] for t in STANDBY_TASKS], "userEndPoint": endpoint}])
    return answer


@pytest.mark.parametrize(("kafka", "version", "endpoint"), [
    pytest.param(k, v, e, id=f"{name}-{k}") for name, k, v, e, _ in _ROUND_TRIPS_2X
])
def test_encoding_on_the_jars(jvm: OracleClient, kafka: str, version: int, endpoint: str) -> None:
    expected = _layout(version, RELEASES_2X[kafka], PID_2X, ACTIVE_2X_ORDER, STANDBY_2X_ORDER, endpoint)
    assert _encode(jvm, kafka, version, endpoint) == expected.hex()


@pytest.mark.parametrize(("kafka", "version"), [
    pytest.param(k, v, id=f"{name}-{k}") for k in RELEASES_2X
    for name, v in (("shouldThrowForUnknownVersion1", 0), ("shouldThrowForUnknownVersion2", RELEASES_2X[k] + 1))
])
def test_unknown_version_is_refused_on_the_jars(jvm: OracleClient, kafka: str, version: int) -> None:
    answer = _encode(jvm, kafka, version, ENDPOINT)
    assert isinstance(answer, dict) and answer.get("exception", "").endswith("IllegalArgumentException"), answer
    assert answer.get("message") == f"version must be between 1 and {RELEASES_2X[kafka]}; was: {version}"
