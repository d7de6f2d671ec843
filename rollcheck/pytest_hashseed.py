"""A pytest plugin (``-p rollcheck.pytest_hashseed``, in pyproject's ``addopts``): run the tests under a
fixed ``PYTHONHASHSEED``, re-executing pytest once when it is unset, as the ``rollcheck`` command does.

State fingerprints are Python hashes. The Spark engine's executors are separate interpreters that PySpark
starts with the driver's ``PYTHONHASHSEED`` ("0" when the driver has none), so a driver with a random seed
would fingerprint states differently from its executors; a fixed seed also makes every run's set order,
and so its reports, reproducible. Loaded with ``-p``, the plugin runs before pytest captures the output.
"""

from __future__ import annotations

import os
import sys


def _started_as_pytest() -> bool:
    argv0 = sys.argv[0] if sys.argv else ""
    return os.path.basename(argv0) in ("pytest", "py.test") or argv0.endswith(os.path.join("pytest", "__main__.py"))


if os.environ.get("PYTHONHASHSEED") is None and _started_as_pytest():
    os.execve(sys.executable, [sys.executable, "-m", "pytest", *sys.argv[1:]], dict(os.environ, PYTHONHASHSEED="0"))
