"""The transcribed ``FeatureZNodeTest`` cases (``test_feature_znode_test.py``), put to Kafka's own ``FeatureZNode`` in
the released 2.8.2 jars (the tag the test was read at) through the ``features`` adapter (kafka_oracle/features/zk-2.8:
``featureZNode.encode`` / ``featureZNode.decode``): the hand transcription is checked against the code it was read
from, as the reference is. The messages checked are ``FeatureZNode.decode``'s own, which Kafka's test does not check
(it asserts ``IllegalArgumentException``): the jars decide them here.

Needs Java and Maven (the adapter is built on first use); skipped with the reason otherwise.
"""

from __future__ import annotations

from typing import Any

import pytest

from reference_impl.features.oracle import ORACLE
from rollcheck.oracle.client import OracleClient
from tests.kafka._on_the_jars import needs_java, oracle_fixture
from tests.kafka.test_feature_znode_test import _SUCCESS_TEMPLATE, _TWO, DECODE_FAILS, DECODE_SUCCESS

RELEASE = "2.8.2"
pytestmark = needs_java


jvm = oracle_fixture(ORACLE)


def _decode(client: OracleClient, text: str) -> dict[str, Any]:
    [answer] = client.ask(RELEASE, [{"op": "featureZNode.decode", "data": text.encode("utf-8").hex()}])
    assert isinstance(answer, dict)
    return answer


def test_testEncodeDecode_on_the_jars(jvm: OracleClient) -> None:
    features = {name: list(r) for name, r in _TWO.items()}
    [written] = jvm.ask(RELEASE, [{"op": "featureZNode.encode", "status": 1, "features": features}])
    [read] = jvm.ask(RELEASE, [{"op": "featureZNode.decode", "data": written["data"]}])
    assert read == {"status": 1, "features": features}


@pytest.mark.parametrize("cases", [pytest.param(c, id=k) for k, c in DECODE_SUCCESS.items()])
def test_decode_success_on_the_jars(jvm: OracleClient, cases: Any) -> None:
    for features_json, status, features in cases:
        answer = _decode(jvm, _SUCCESS_TEMPLATE.format(features_json))
        assert answer == {"status": status.value, "features": {n: list(r) for n, r in features.items()}}


@pytest.mark.parametrize("cases", [pytest.param(c, id=k) for k, c in DECODE_FAILS.items()])
def test_decode_fails_on_the_jars(jvm: OracleClient, cases: Any) -> None:
    for text, message in cases:
        answer = _decode(jvm, text)
        assert answer.get("exception") == "java.lang.IllegalArgumentException", answer
        assert answer["message"] == (message % text if "%s" in message else message)
