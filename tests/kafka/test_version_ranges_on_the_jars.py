"""The transcribed ``SupportedVersionRangeTest``, ``FinalizedVersionRangeTest`` and ``BrokerFeaturesTest`` cases
(``test_supported_version_range_test.py``, ``test_finalized_version_range_test.py``, ``test_broker_features_test.py``,
read at tag 2.8.2), put to Kafka's own classes in the released 2.8.2 jars through the ``features`` adapter
(kafka_oracle/features/zk-2.8: ``versionRange``, ``incompatibleFeatures``): the constructors' refusals and their
messages, ``toString`` and ``toMap``, and ``BrokerFeatures.incompatibleFeatures`` / ``hasIncompatibleFeatures``
must be what the transcription states. Not asked: ``fromMap`` (the adapter constructs ranges only), ``equals``.
"""

from __future__ import annotations

from typing import Any

import pytest

from reference_impl.features.oracle import ORACLE
from rollcheck.oracle.client import OracleClient
from tests.kafka import test_broker_features_test as broker
from tests.kafka import test_finalized_version_range_test as finalized
from tests.kafka import test_supported_version_range_test as supported
from tests.kafka._on_the_jars import cases_of, names_of, needs_java, oracle_fixture

RELEASE = "2.8.2"
pytestmark = needs_java


jvm = oracle_fixture(ORACLE)


def _range(jvm: OracleClient, kind: str, lo: int, hi: int) -> dict[str, Any]:
    [answer] = jvm.ask(RELEASE, [{"op": "versionRange", "kind": kind, "min": lo, "max": hi}])
    assert isinstance(answer, dict)
    return answer


@pytest.mark.parametrize(names_of(supported.test_constructor_rejects), cases_of(supported.test_constructor_rejects))
def test_supported_constructor_rejects(jvm: OracleClient, ranges: Any) -> None:
    for lo, hi in ranges:
        answer = _range(jvm, "supported", lo, hi)
        assert answer.get("exception") == "java.lang.IllegalArgumentException", answer
        assert answer["message"] == supported._BAD_RANGE.format(lo, hi)


@pytest.mark.parametrize(("module", "kind"), [(supported, "supported"), (finalized, "finalized")])
def test_to_map_and_to_string(jvm: OracleClient, module: Any, kind: str) -> None:
    for p in cases_of(module.test_from_to_map):
        lo, hi, expected_map = p.values
        assert _range(jvm, kind, lo, hi)["map"] == expected_map, p.id
    for p in cases_of(module.test_to_string):
        for (lo, hi), text in p.values[0]:
            assert _range(jvm, kind, lo, hi)["string"] == text, p.id


@pytest.mark.parametrize(names_of(finalized.test_is_incompatible_with), cases_of(finalized.test_is_incompatible_with))
def test_is_incompatible_with(jvm: OracleClient, cases: Any) -> None:
    # FinalizedVersionRange.isIncompatibleWith as BrokerFeatures uses it: one feature, supported against finalized
    for fin, sup, incompatible in cases:
        [answer] = jvm.ask(RELEASE, [{"op": "incompatibleFeatures", "supported": {"f": list(sup)},
                                      "finalized": {"f": list(fin)}}])
        assert answer["has"] is incompatible, (fin, sup, answer)
        assert answer["incompatible"] == ({"f": list(fin)} if incompatible else {}), (fin, sup, answer)


@pytest.mark.parametrize(names_of(broker.test_incompatible_features), cases_of(broker.test_incompatible_features))
def test_incompatible_features(jvm: OracleClient, supported: Any, compatible: Any, incompatible: Any) -> None:
    [answer] = jvm.ask(RELEASE, [{"op": "incompatibleFeatures",
                                  "supported": {n: list(r) for n, r in supported.items()},
                                  "finalized": {n: list(r) for n, r in (compatible | incompatible).items()}}])
    assert answer == {"incompatible": {n: list(r) for n, r in incompatible.items()}, "has": bool(incompatible)}
