"""Where benchmark rows go: ``benchmarks/results/<name>-<UTC time>-<commit>.json``, each file carrying the
machine (cores, memory, Python, Java) and the commit, so that figures from different days and machines
are never compared blindly. Ratios measured side by side in one run are the figures that count."""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def _run(cmd: list[str]) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=RESULTS.parent)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (proc.stdout + proc.stderr).strip()


def machine() -> dict[str, Any]:
    mem = 0
    try:
        with open("/proc/meminfo") as fh:
            mem = int(fh.readline().split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    java = _run(["java", "-version"]).splitlines() if shutil.which("java") else []
    return {
        "cores": os.cpu_count(),
        "memory_gib": round(mem / 2**30, 1),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "java": java[0] if java else None,
        "platform": platform.platform(),
        "load_average_at_start": list(os.getloadavg()),
    }


def commit() -> str:
    rev = _run(["git", "rev-parse", "--short=12", "HEAD"])
    dirty = _run(["git", "status", "--porcelain", "--untracked-files=no"])
    return f"{rev}{'+dirty' if dirty else ''}" if rev else "unknown"


def write(name: str, rows: list[dict[str, Any]], params: dict[str, Any], path: Path | None = None) -> Path:
    """Write the rows with the machine and the commit; returns the file written."""
    now = datetime.datetime.now(datetime.UTC)
    rev = commit()
    if path is None:
        RESULTS.mkdir(parents=True, exist_ok=True)
        path = RESULTS / f"{name}-{now:%Y%m%dT%H%M%SZ}-{rev.replace('+', '-')}.json"
    doc = {"benchmark": name, "time": now.isoformat(timespec="seconds"), "commit": rev, "machine": machine(),
           "params": params, "rows": rows}
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return path
