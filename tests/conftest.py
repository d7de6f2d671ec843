import os

# Hypothesis: deterministic, no example database in the working tree during tests.
from hypothesis import HealthCheck, settings

settings.register_profile(
    "rollcheck-tests", derandomize=True, database=None, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "rollcheck-tests"))
