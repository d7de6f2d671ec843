"""The transcribed ``FinalizedFeatureCacheTest`` scripts (``test_finalized_feature_cache_test.py``, tag 2.8.2), put
to Kafka's own ``FinalizedFeatureCache`` in the released 2.8.2 jars through the ``features`` adapter
(kafka_oracle/features/zk-2.8: ``finalizedFeatureCache``, each update given as the node's bytes that
``featureZNode.encode`` writes, at the ZooKeeper version that is the update's epoch, as the broker's listener reads
it; a clear as an absent node): each step's acceptance, its ``FeatureCacheUpdateException`` message and the cache
after must be what the transcription states.
"""

from __future__ import annotations

from typing import Any

import pytest

from reference_impl.features.oracle import ORACLE
from rollcheck.oracle.client import OracleClient
from tests.kafka import test_finalized_feature_cache_test as transcribed
from tests.kafka._on_the_jars import cases_of, names_of, needs_java, oracle_fixture

RELEASE = "2.8.2"
pytestmark = needs_java


jvm = oracle_fixture(ORACLE)


def _listed(features: dict[str, tuple[int, int]]) -> dict[str, list[int]]:
    return {n: list(r) for n, r in features.items()}


@pytest.mark.parametrize(names_of(transcribed.test_cache_script), cases_of(transcribed.test_cache_script))
def test_cache_script_on_the_jars(jvm: OracleClient, supported: Any, steps: Any) -> None:
    held: dict[str, Any] | None = None
    for step, expected in steps:
        request: dict[str, Any] = {"op": "finalizedFeatureCache", "supported": _listed(supported), "existing": held}
        if step[0] == "clear":
            request |= {"data": None, "version": -1}
            refusal = None
        else:
            _, features, epoch, refusal = step
            [written] = jvm.ask(RELEASE, [{"op": "featureZNode.encode", "status": 1, "features": _listed(features)}])
            request |= {"data": written["data"], "version": epoch}
        [answer] = jvm.ask(RELEASE, [request])
        assert answer["accepted"] is (refusal is None), (step, answer)
        assert answer.get("message") == refusal, step
        want = None if expected is None else {"features": _listed(expected[0]), "epoch": expected[1]}
        assert answer["cache"] == want, (step, answer)
        held = answer["cache"]
