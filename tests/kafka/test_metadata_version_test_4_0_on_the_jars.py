"""The transcribed Kafka 4.0 ``MetadataVersionTest`` tables (``test_metadata_version_test_4_0.py``, read on the 4.0
branch), put to the ``MetadataVersion`` enum of the released 4.0.2 jars through the ``metadata_version`` adapter
(kafka_oracle/metadata_version/kraft-4.0: ``catalog``, every member with its feature level, ``version()``,
``didMetadataChange()`` and production flag): the members in order with their levels and names (``testVersion``),
``LATEST_PRODUCTION`` and ``latestTesting()``, and ``checkIfMetadataChanged`` between the pairs of
``testMetadataChanged`` (a change at some member after the lower one, up to the higher one) must be the
transcription's.
"""

from __future__ import annotations

from typing import Any

import pytest

from reference_impl.metadata_version.catalog import latest_production, latest_testing
from reference_impl.metadata_version.oracle import ORACLE
from rollcheck.oracle.client import OracleClient
from tests.kafka import test_metadata_version_test_4_0 as transcribed
from tests.kafka._on_the_jars import needs_java, oracle_fixture

RELEASE = "4.0.2"
pytestmark = needs_java
jvm = oracle_fixture(ORACLE)


@pytest.fixture(scope="module")
def catalog(jvm: OracleClient) -> dict[str, Any]:
    [answer] = jvm.ask(RELEASE, [{"op": "catalog"}])
    assert isinstance(answer, dict) and "versions" in answer, answer
    return answer


def test_testVersion_on_the_jars(catalog: dict[str, Any]) -> None:
    assert [(v["level"], v["version"]) for v in catalog["versions"]] == \
        [(mv.feature_level, text) for mv, text in transcribed.VERSION]


def test_latest_production_and_testing_on_the_jars(catalog: dict[str, Any]) -> None:
    assert catalog["latestProduction"] == latest_production(transcribed.RELEASE).feature_level
    assert catalog["latestTesting"] == latest_testing(transcribed.RELEASE).feature_level
    assert catalog["minimum"] == transcribed.MINIMUM_VERSION.feature_level


def test_testMetadataChanged_on_the_jars(catalog: dict[str, Any]) -> None:
    changed_at = {v["level"]: v["didMetadataChange"] for v in catalog["versions"]}
    for source, target, changed in transcribed.METADATA_CHANGED:
        low, high = sorted((source.feature_level, target.feature_level))
        assert any(changed_at[lvl] for lvl in range(low + 1, high + 1)) is changed, (source, target)
