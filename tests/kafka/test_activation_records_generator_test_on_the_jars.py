"""The transcribed ``ActivationRecordsGeneratorTest`` cases (``test_activation_records_generator_test.py``), put to
Kafka's own ``ActivationRecordsGenerator`` in the released jars: the hand transcription is checked against the code
it was read from, not only against our reference.

Each case whose call ``generate`` can make (an empty log whose bootstrap metadata.version is the one Kafka's test
passes beside it; every non-empty log) is asked of Kafka 3.9.2 (the tests were read at 3.9.0-rc3; the class is the
same at 3.9.0 - 3.9.2) through the ``zk_migration`` adapter's ``activationRecords`` op (kafka_oracle/zk_migration,
``RollcheckActivation``): the records, the batch's atomicity and the activation message, or the exception's
message, must be the case's. The direct ``recordsForEmptyLog`` calls with two different versions are the
reference's only (``generate`` cannot make them).

Needs Java and Maven (the adapter is built on first use); skipped with the reason otherwise.
"""

from __future__ import annotations

from typing import Any

import pytest

from reference_impl.zk_migration.oracle import ORACLE
from rollcheck.oracle.client import OracleClient
from tests.kafka._on_the_jars import needs_java, oracle_fixture
from tests.kafka.test_activation_records_generator_test import (
    EMPTY_LOG,
    NON_EMPTY_LOG,
    SOURCE,
    EmptyLogCase,
    NonEmptyLogCase,
)

RELEASE = "3.9.2"
pytestmark = needs_java


jvm = oracle_fixture(ORACLE)


def _ask(client: OracleClient, request: dict[str, Any]) -> dict[str, Any]:
    [answer] = client.ask(RELEASE, [{"op": "activationRecords", "source": SOURCE, **request}])
    assert isinstance(answer, dict)
    return answer


def _check(answer: dict[str, Any], case: EmptyLogCase | NonEmptyLogCase, atomic: bool | None) -> None:
    if case.error is not None:
        assert answer.get("exception") == "java.lang.RuntimeException", answer
        assert answer["message"] == case.error
        return
    assert "exception" not in answer, answer
    # The adapter's normal form [class, field] printed as the transcription prints a record.
    records = tuple(name if value is None else f"{name}({value})" for name, value in answer["records"])
    assert (answer["message"], answer["atomic"], records) == (case.message, atomic, case.records)


_GENERATED = {k: c for k, c in EMPTY_LOG.items() if c.bootstrap is c.metadata_version}


@pytest.mark.parametrize("case", _GENERATED.values(), ids=_GENERATED.keys())
def test_empty_log_on_the_jars(jvm: OracleClient, case: EmptyLogCase) -> None:
    answer = _ask(jvm, {"empty": True, "transactionStartOffset": case.offset, "zkMigrationEnabled": case.migration,
                          "level": case.bootstrap.feature_level})
    _check(answer, case, case.atomic)


@pytest.mark.parametrize("case", NON_EMPTY_LOG.values(), ids=NON_EMPTY_LOG.keys())
def test_non_empty_log_on_the_jars(jvm: OracleClient, case: NonEmptyLogCase) -> None:
    answer = _ask(jvm, {"empty": False, "transactionStartOffset": case.offset, "zkMigrationEnabled": case.migration,
                          "level": None if case.metadata_version is None else case.metadata_version.feature_level,
                          "state": None if case.state is None else case.state.name})
    _check(answer, case, True)  # recordsForNonEmptyLog always returns an atomic batch


def test_every_generated_case_is_asked() -> None:
    # the two direct calls with a bootstrap other than the version passed beside it are the only ones left out
    assert len(EMPTY_LOG) - len(_GENERATED) == sum(1 for c in EMPTY_LOG.values() if c.bootstrap is not
                                                   c.metadata_version) == 1
