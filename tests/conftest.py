import os
from collections.abc import Iterator
from typing import Any

import pytest

# Hypothesis: deterministic, no example database in the working tree during tests.
from hypothesis import HealthCheck, settings

settings.register_profile(
    "rollcheck-tests", derandomize=True, database=None, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "rollcheck-tests"))

# A `rollcheck gate` a test starts runs every cell, as it did before the store of cell results: no result of
# another test's run (or of the developer's) is reused. The tests of the store name their own (--cache DIR).
os.environ.setdefault("ROLLCHECK_GATE_CACHE", "off")


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One Spark session for the whole test run (start-up costs seconds). local[2,2]: two cores, and a
    failed task is tried again once, which the fault test relies on."""
    from rollcheck.spark.session import get_session

    session = get_session("local[2,2]")
    yield session
    session.stop()
