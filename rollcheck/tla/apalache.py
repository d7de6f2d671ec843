"""Apalache, run as a subprocess when it is installed (``apalache-mc`` on the PATH or ``APALACHE_HOME``).

Written against Apalache's documented CLI (``check --config --init --next --inv --length --run-dir``,
``simulate --max-run --seed``) and its ITF output: a run writes ``violation*.itf.json`` into its run
directory when it finds a counterexample and prints ``The outcome is: NoError`` / ``Error``. Each
invariant is checked in its own run so that a counterexample names the invariant it violates.
Apalache cannot be installed from the registries this project uses, so the runner is tested on ITF files
and on the command line it builds; ``rollcheck apalache`` says clearly when the tool is absent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rollcheck.core.errors import ToolUnavailable
from rollcheck.core.traces import load_json_bounded
from rollcheck.runtime.forking import die_with_parent
from rollcheck.tla.tlc import ModelCheckResult, TraceStep

INSTALL_HINT = ("Apalache is not installed: put apalache-mc on the PATH or set APALACHE_HOME "
                "(https://apalache-mc.org/docs/apalache/installation/); TLC covers the same specs meanwhile")


def find_apalache() -> Path:
    home = os.environ.get("APALACHE_HOME")
    if home:
        candidate = Path(home) / "bin" / "apalache-mc"
        if candidate.is_file():
            return candidate
    found = shutil.which("apalache-mc")
    if found:
        return Path(found)
    raise ToolUnavailable(INSTALL_HINT)


def apalache_command(binary: Path | str, mode: str, module_file: str, cfg: str, *, invariant: str | None,
                     length: int, run_dir: Path, max_run: int | None = None, seed: int | None = None) -> list[str]:
    if mode not in ("check", "simulate"):
        raise ValueError(f"Apalache mode must be check or simulate, not {mode!r}")
    cmd = [str(binary), mode, f"--config={cfg}", f"--length={length}", f"--run-dir={run_dir}"]
    if invariant:
        cmd.append(f"--inv={invariant}")
    if mode == "simulate" and max_run is not None:
        cmd.append(f"--max-run={max_run}")
    if seed is not None:
        cmd.append(f"--seed={seed}")
    cmd.append(module_file)
    return cmd


def read_itf_trace(path: Path) -> list[TraceStep]:
    """An ITF trace (Apalache's ``violation*.itf.json``, or any ITF file) as spec steps."""
    try:
        doc = load_json_bounded(path, "ITF trace")  # bounded in size and depth
    except ValueError as exc:
        raise ValueError(f"cannot read ITF trace {path}: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("states"), list):
        raise ValueError(f"{path} is not an ITF trace (no 'states' list)")
    variables = doc.get("vars")
    steps: list[TraceStep] = []
    for i, raw in enumerate(doc["states"]):
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: state {i} is not an object")
        values = {k: v for k, v in raw.items() if k != "#meta"}
        if variables is not None and set(values) != set(variables):
            raise ValueError(f"{path}: state {i} has variables {sorted(values)}, 'vars' lists {sorted(variables)}")
        meta = raw.get("#meta", {})
        steps.append(TraceStep(meta.get("action") if isinstance(meta, dict) else None, values))
    return steps


def parse_apalache_run(stdout: str, returncode: int, run_dir: Path, invariant: str | None) -> ModelCheckResult:
    """The outcome of one Apalache run from its output and its run directory."""
    res = ModelCheckResult("apalache", ok=False, output=stdout)
    violations = sorted(run_dir.glob("violation*.itf.json")) if run_dir.is_dir() else []
    if violations:
        res.violated = invariant or "unknown"
        res.trace = read_itf_trace(violations[0])
        res.extra["counterexample_file"] = str(violations[0])
    elif "The outcome is: NoError" in stdout or (returncode == 0 and "EXITCODE: OK" in stdout):
        res.ok = True
    else:
        tail = " | ".join(stdout.strip().splitlines()[-5:])
        res.error = f"Apalache exited with code {returncode}: {tail}"
    return res


def run_apalache(model_dir: Path, module: str, cfg: str, *, mode: str = "check",
                 invariants: Sequence[str] = (), length: int = 10, max_run: int | None = None,
                 seed: int | None = None, timeout: float = 1800.0) -> list[ModelCheckResult]:
    """One Apalache run per invariant (or one run without invariants); raises ToolUnavailable if absent."""
    binary = find_apalache()
    results: list[ModelCheckResult] = []
    runs: list[str | None] = [*invariants] or [None]
    for inv in runs:
        run_dir = model_dir / "apalache" / (inv or "run")
        shutil.rmtree(run_dir, ignore_errors=True)
        cmd = apalache_command(binary, mode, f"{module}.tla", cfg, invariant=inv, length=length, run_dir=run_dir,
                               max_run=max_run, seed=seed)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=model_dir, capture_output=True, text=True, timeout=timeout, check=False,
                                  preexec_fn=die_with_parent())  # its JVM dies with this process
        except subprocess.TimeoutExpired:
            res = ModelCheckResult("apalache", ok=False, error=f"Apalache did not finish within {timeout:.0f} s")
        else:
            res = parse_apalache_run(proc.stdout + proc.stderr, proc.returncode, run_dir, inv)
        res.elapsed = time.perf_counter() - t0
        res.extra["invariant"] = inv
        res.extra["length"] = length
        results.append(res)
    return results


def itf_doc(steps: Sequence[TraceStep]) -> dict[str, Any]:
    """Steps as an ITF document in Apalache's layout (for fixtures and round trips)."""
    variables = sorted(steps[0].values) if steps else []
    return {"#meta": {"format": "ITF", "source": "MC.tla"}, "vars": variables,
            "states": [{"#meta": {"index": i}, **s.values} for i, s in enumerate(steps)]}
