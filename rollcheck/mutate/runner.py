"""Running one check on a mutated copy: each ``rollcheck`` command in its own process and session, from a copy
of the snapshot with the mutated module written in (``PYTHONPATH`` first, so the copy wins over the editable
install), and what its exit and JSON summary say."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.core.registry import get_protocol
from rollcheck.mutate.generate import MUTATED_MODULES, Mutant
from rollcheck.mutate.steps import Cell, conform_argv, decisions_argv, explore_argv, variants_argv, z3_argv
from rollcheck.mutate.tree import SourceTree, protocol_dir


@dataclass
class CellResult:
    config: str
    profile: str
    outcome: str  # "holds", "violated", "crash", "timeout", "incomplete" (stopped at the memory budget)
    exit: int | None
    seconds: float
    distinct_states: int | None = None
    transitions: int | None = None
    violated: list[str] = field(default_factory=list)
    detail: str = ""


class Stopped(Exception):
    """The campaign is being stopped (Ctrl-C): a mutant in progress is not recorded."""


class Runner:
    """Copies the snapshot's packages, writes a mutated module and runs each check from the copy."""

    def __init__(self, tree: SourceTree, scratch: Path, snapshot: Path, max_memory: float,
                 collect_all: bool = False) -> None:
        self.tree = tree
        self.scratch = scratch
        self.snapshot = snapshot
        self.max_memory = max_memory
        self.collect_all = collect_all
        self.stop = threading.Event()
        self._procs: dict[int, subprocess.Popen[str]] = {}
        self._lock = threading.Lock()
        self._count = 0

    def workdir(self, mutant: Mutant | None) -> Path:
        with self._lock:
            self._count += 1
            n = self._count
        work = self.scratch / f"m{n:05d}"
        for pkg in self.tree.packages:
            shutil.copytree(self.snapshot / pkg, work / pkg)
        if mutant is not None:
            (work / mutant.file).write_text(mutant.source, encoding="utf-8")
        return work

    def env(self, work: Path) -> dict[str, str]:
        # The copy first: rollcheck is installed editable, but its finder comes after the path entries.
        path = os.pathsep.join([str(work), *filter(None, [os.environ.get("PYTHONPATH")])])
        return dict(os.environ, PYTHONPATH=path)

    def import_check(self, work: Path, protocol: str) -> dict[str, str]:
        """Where each package (and the protocol's modules) is imported from, as the explorer runs it."""
        pkg = protocol_dir(protocol)
        dotted = ".".join(pkg.relative_to(self.tree.root).parts)
        names = [*self.tree.packages,
                 *(f"{dotted}.{m.removesuffix('.py')}" for m in MUTATED_MODULES if (pkg / m).is_file())]
        code = ("import importlib, json\n"
                f"print(json.dumps({{n: importlib.import_module(n).__file__ for n in {names!r}}}))\n")
        proc = subprocess.run([sys.executable, "-c", code], cwd=work, env=self.env(work), capture_output=True,
                              text=True, timeout=120, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"import check failed: {proc.stderr.strip()[-2000:]}")
        files: dict[str, str] = json.loads(proc.stdout)
        wrong = {n: f for n, f in files.items() if not Path(f).resolve().is_relative_to(work.resolve())}
        if wrong:
            raise RuntimeError(f"the copy does not win over the installed packages: {wrong}")
        return files

    def run_cell(self, work: Path, protocol: str, cell: Cell, timeout: float) -> CellResult:
        if self.stop.is_set():
            raise Stopped
        if timeout <= 0:
            return CellResult(cell.config, cell.profile, "timeout", None, 0.0, detail="no time left for this run")
        out = work / "out"
        cmd = [sys.executable, "-m", "rollcheck", *explore_argv(protocol, cell, out, self.max_memory, self.collect_all)]
        t0 = time.perf_counter()
        # In its own session (_run_tool): the explorer's processes can be killed as a group, and a terminal's
        # Ctrl-C reaches only this command, which stops them itself.
        ran = self._run_tool(work, cmd, timeout)
        if ran is None:
            return CellResult(cell.config, cell.profile, "timeout", None, time.perf_counter() - t0,
                              detail=f"over the time limit ({timeout:.0f} s left for this run)")
        code, stdout, stderr = ran
        return classify(cell, code, stdout, stderr, time.perf_counter() - t0)

    @staticmethod
    def snapshot_has_spec(protocol: str) -> bool:
        return get_protocol(protocol).spec is not None

    @staticmethod
    def has_z3(protocol: str) -> bool:
        return get_protocol(protocol).z3 is not None

    def _run_tool(self, work: Path, cmd: list[str], timeout: float) -> tuple[int, str, str] | None:
        """One rollcheck command from the mutated copy, in its own session; None when over ``timeout``."""
        if self.stop.is_set():
            raise Stopped
        if timeout <= 0:
            return None
        proc = subprocess.Popen(cmd, cwd=work, env=self.env(work), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        with self._lock:
            self._procs[proc.pid] = proc
        try:
            try:
                stdout, stderr = proc.communicate(timeout=max(timeout, 0.1))
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                proc.communicate()
                return None
        finally:
            with self._lock:
                self._procs.pop(proc.pid, None)
        if self.stop.is_set():
            raise Stopped
        return proc.returncode, stdout, stderr

    def run_z3(self, work: Path, protocol: str, cell: Cell, timeout: float) -> tuple[str, str]:
        """``rollcheck prove --differential-only --differential 0`` on ``cell`` (small or a story config) from
        the mutated copy (the ci tier's z3 cells there): the Z3 relation against the mutated reference on every
        reachable state, and the decision rules on their bounded input domain. ("disagrees" | "agrees" | "error" |
        "timeout", a one-line detail). The encoding is a copy of the rules the mutation did not touch, so a
        disagreement kills a mutant the properties missed; an error (an exception the mutated reference
        raises where the decision differential calls it) is reported as such."""
        cmd = [sys.executable, "-m", "rollcheck", *z3_argv(protocol, cell.profile, work / "prove", cell.config)]
        return self._verdict("z3", f"{cell.config}/{cell.profile}", self._run_tool(work, cmd, timeout), timeout,
                             _prove_disagreement)

    def run_decisions(self, work: Path, protocol: str, profile: str, timeout: float) -> tuple[str, str]:
        """``rollcheck prove --decisions-only`` under ``profile`` from the mutated copy: the decision rules alone
        (the ci tier's z3 cell on small runs them too, after its walk of every state). Same verdicts as
        :meth:`run_z3`."""
        cmd = [sys.executable, "-m", "rollcheck", *decisions_argv(protocol, profile, work / "decisions")]
        return self._verdict("z3", f"decisions/{profile}", self._run_tool(work, cmd, timeout), timeout,
                             _prove_disagreement)

    def run_variants(self, work: Path, protocol: str, timeout: float, z3: bool = True) -> tuple[str, str]:
        """The gate's broken variants from the mutated copy (the gate's variant cells alone, ``variants_argv``):
        each variant is the reference with one bug switched on, so its run takes the reference's code through
        paths no reference config reaches (a failed member, a fenced write ...). A variant no longer caught by
        the explorer ("escaped") would turn the gate red; so would the Z3 relation differing from the mutated
        reference where a variant steps otherwise than the reference ("disagrees", with ``z3``): either kills
        the mutant. ("escaped" | "disagrees" | "caught" | "error" | "timeout", a one-line detail)."""
        argv = variants_argv(protocol, work / "variants", z3 and self.has_z3(protocol))
        ran = self._run_tool(work, [sys.executable, "-m", "rollcheck", *argv], timeout)
        if ran is None:
            return "timeout", f"variants over the time limit ({timeout:.0f} s left)"
        code, stdout, stderr = ran
        try:
            doc = json.loads(stdout)
            rows: list[dict[str, Any]] = doc["mutants"]["mutants"]
            findings: list[dict[str, Any]] = doc["findings"]
        except (ValueError, KeyError, TypeError):
            return "error", f"variants: exit {code}: {stderr.strip()[-300:]}"
        escaped = [f"{r['variant']} ({r.get('config', '?')})" for r in rows if not r.get("killed")]
        if escaped:
            return "escaped", ("no property catches " + ", ".join(escaped))[:300]
        for kind, verdict in (("disagreement", "disagrees"), ("error", "error")):
            first = next((f for f in findings if f.get("kind") == kind), None)
            if first is not None:
                return verdict, str(first.get("message", "")).splitlines()[0][:300]
        return ("caught", "") if code == 0 else ("error", f"variants: exit {code}: {stderr.strip()[-300:]}")

    def run_conform(self, work: Path, protocol: str, cell: Cell, timeout: float, domain_only: bool = False
                    ) -> tuple[str, str]:
        """``rollcheck conform`` on ``cell`` (small or a conformance config) from the mutated copy (the gate's
        TLC conformance: the reference's reachable views against TLC's, both trace directions, and the config
        domain; ``domain_only``: the domain alone): ("disagrees" | "agrees" | "error" | "timeout", a one-line
        detail). A disagreement kills a mutant the properties missed: the spec is the second copy of the rules,
        which the mutation did not touch."""
        cmd = [sys.executable, "-m", "rollcheck",
               *conform_argv(protocol, cell.profile, work / "conform", cell.config, domain_only)]

        def why(doc: dict[str, Any]) -> str:
            reports: list[dict[str, Any]] = doc.get("reports", [])
            bad: dict[str, Any] = next((r for r in reports if not r.get("ok", True)), {})
            parts = [f"{k}: {bad[k]['divergences'][0]}" for k in ("reachable", "replay", "validation", "domain")
                     if isinstance(bad.get(k), dict) and bad[k].get("divergences")]
            return parts[0] if parts else str(bad.get("error") or "")

        return self._verdict("conform", f"{cell.config}/{cell.profile}", self._run_tool(work, cmd, timeout), timeout,
                             why)

    @staticmethod
    def _verdict(step: str, where: str, ran: tuple[int, str, str] | None, timeout: float,
                 why: Callable[[dict[str, Any]], str]) -> tuple[str, str]:
        """A second copy's answer on a mutated copy: exit 3 "disagrees" (with ``why`` of its JSON summary),
        0 "agrees", None (over the limit) "timeout", anything else "error"."""
        if ran is None:
            return "timeout", f"{step} over the time limit ({timeout:.0f} s left)"
        code, stdout, stderr = ran
        if code == 3:
            try:
                reason = why(json.loads(stdout))
            except (ValueError, AttributeError, TypeError, KeyError, IndexError):
                reason = ""
            return "disagrees", f"{where}: {reason or 'exit 3'}"[:300]
        if code == 0:
            return "agrees", ""
        return "error", f"{where}: exit {code}: {stderr.strip()[-300:]}"

    def kill_all(self) -> None:
        self.stop.set()
        with self._lock:
            procs = list(self._procs.values())
        for proc in procs:
            _kill_group(proc)


def _prove_disagreement(doc: dict[str, Any]) -> str:
    """The first line of what a ``rollcheck prove --json`` summary says differs: the successor differential's
    mismatch, else the decision rules' disagreement (``--decisions-only`` has no successor differential)."""
    text = str((doc.get("differential") or {}).get("mismatch") or (doc.get("decisions") or {}).get("disagreement")
               or "")
    return text.splitlines()[0] if text else ""


def _kill_group(proc: subprocess.Popen[str]) -> None:
    # The group of a process this script started (start_new_session: its pid is the group's id).
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def classify(cell: Cell, code: int, stdout: str, stderr: str, seconds: float) -> CellResult:
    """One explorer run: exit 1 with a JSON summary naming violations is a violation; exit 0 with a complete
    clean summary holds; anything else (an uncaught exception also exits 1, but prints no summary) a crash."""
    try:
        doc = json.loads(stdout)
    except ValueError:
        doc = None
    tail = stderr.strip()[-1500:]
    if not isinstance(doc, dict) or code not in (0, 1):
        return CellResult(cell.config, cell.profile, "crash", code, seconds, detail=tail or "no JSON summary")
    # A witness the mutant made vacuous (a story the config no longer tells) kills it as a violation does.
    violated = sorted({v["property"] for v in doc.get("violations", [])}
                      | {f"{w} (vacuous)" for w in doc.get("vacuous", [])})
    res = CellResult(cell.config, cell.profile, "holds", code, seconds, doc.get("distinct_states"),
                     doc.get("generated_states"), violated)
    if (code == 1) != bool(violated):
        res.outcome, res.detail = "crash", f"exit {code} with {len(violated)} violation(s): {tail}"
    elif violated:
        res.outcome = "violated"
    elif not doc.get("complete", False):
        res.outcome, res.detail = "incomplete", "; ".join(doc.get("notes", [])) or "exploration not complete"
    return res
