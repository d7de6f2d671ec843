"""The engine type-checks under ``mypy --strict`` (configured in pyproject.toml): it found a call that passed
a renamed keyword to the Spark explorer, which no test exercised (issue #21 item 7)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_engine_is_strictly_typed() -> None:
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
