"""A gate that checked nothing never says OK: a protocol whose every cell was skipped, a broken variant no
checker ran on, a plan with no cell (issue 61, no false assurance)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rollcheck.core.errors import ExitCode
from rollcheck.gate import GateConfig, run_gate
from tests.toy import PROTOCOL


def _cfg(out: Path, checkers: list[str], mutant_checkers: list[str] | None = None) -> GateConfig:
    cfg = GateConfig(["toy"], {"toy": ["small"]}, ["kip"], checkers, out, {})
    if mutant_checkers is not None:
        cfg.mutants = True
        cfg.mutant_checkers = mutant_checkers
    return cfg


def test_a_gate_whose_only_checker_is_not_installed_exits_tool_unavailable(tmp_path: Path) -> None:
    # Apalache cannot be installed here: every cell is skipped, so nothing was checked (exit 4, not OK).
    proc = subprocess.run([sys.executable, "-m", "rollcheck", "gate", "--checker", "apalache", "--protocol",
                           "features", "--out", str(tmp_path / "g"), "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == ExitCode.TOOL_UNAVAILABLE, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    summary = json.loads((tmp_path / "g" / "summary.json").read_text())
    assert summary["verdict"] == "TOOL_UNAVAILABLE"
    assert any(f["kind"] == "unavailable" and "nothing was checked" in f["message"] for f in summary["findings"])


def test_broken_variants_no_checker_ran_on_are_not_checked_not_ok(tmp_path: Path) -> None:
    result = run_gate(_cfg(tmp_path, ["explore"], ["apalache"]), lookup=lambda _n: PROTOCOL)
    kinds = [f.kind for f in result.findings]
    assert "not_checked" in kinds and "survivor" not in kinds, result.findings
    assert result.exit_code == ExitCode.INCONCLUSIVE


def test_the_reference_checked_and_its_variants_killed_is_ok(tmp_path: Path) -> None:
    result = run_gate(_cfg(tmp_path, ["explore"], ["explore"]), lookup=lambda _n: PROTOCOL)
    assert result.exit_code == ExitCode.OK, result.findings


def test_a_gate_with_no_cell_at_all_checked_nothing(tmp_path: Path) -> None:
    result = run_gate(_cfg(tmp_path, []), lookup=lambda _n: PROTOCOL)
    assert result.exit_code in (ExitCode.INCONCLUSIVE, ExitCode.TOOL_UNAVAILABLE), result.findings
    assert result.exit_code != ExitCode.OK
