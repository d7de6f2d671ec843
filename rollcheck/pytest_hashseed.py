"""A pytest plugin (``-p rollcheck.pytest_hashseed``, in pyproject's ``addopts``): run the tests under the
conditions in which state fingerprints agree between processes (:mod:`rollcheck.core.hashenv`: a fixed
``PYTHONHASHSEED``, no address-space randomization on Python 3.11), re-executing pytest once, as the
``rollcheck`` command does. The Spark engine's executors and a resumed run are separate interpreters;
the fixed seed also makes every run's set order, and so its reports, reproducible. Loaded with ``-p``,
the plugin runs before pytest captures the output.
"""

from __future__ import annotations

import os
import sys

from rollcheck.core.hashenv import reexec_for_stable_hashes


def _started_as_pytest() -> bool:
    argv0 = sys.argv[0] if sys.argv else ""
    return os.path.basename(argv0) in ("pytest", "py.test") or argv0.endswith(os.path.join("pytest", "__main__.py"))


if _started_as_pytest():
    reexec_for_stable_hashes(["-m", "pytest", *sys.argv[1:]])
