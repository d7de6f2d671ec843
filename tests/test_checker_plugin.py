"""A checker is one module: a third-party package registers one through the ``rollcheck.checkers`` entry points
and the gate lists, plans, runs and reports it with no engine edit; and the gate names no checker."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rollcheck.checkers import GROUP, Checker, checker_names, get_checker

ENGINE = Path(__file__).resolve().parent.parent / "rollcheck"

# A separate package: it imports rollcheck's public checker API and nothing of the engine's insides.
CENSUS = '''
from dataclasses import dataclass

from rollcheck.checkers import (
    NOT_CHECKED, Capabilities, CheckerBase, CheckerOptions, CheckerReport, Key, PropertyVerdict,
)


@dataclass(frozen=True)
class CensusOptions(CheckerOptions):
    KEYS = (Key("census_sample", least=1),)
    census_sample: int = 1


class Census(CheckerBase):
    """Counts the initial states of a config (a stand-in for a real checker)."""

    name = "census"
    description = "initial-state census (a third-party example)"
    order = 500
    # In the ci tier on the ci configs only, as the checkers that cost the most per state.
    capabilities = Capabilities(ci_configs_only=True)
    options = CensusOptions

    def run(self, cell, ctx):
        ts = ctx.build(cell.entry, cell.config)
        report = CheckerReport(self.name, cell.entry.name, cell.label, cell.config.profile)
        report.stats = {"initial_states": len(list(ts.initial_states())),
                        "sample": CensusOptions.read(ctx.options).census_sample}
        for p in ts.properties():
            report.properties[p.id] = PropertyVerdict(p.id, NOT_CHECKED, "a census checks no property")
        return report


CHECKER = Census()
'''

GATE = """[gate]
protocols = ["streams_probing"]
profiles = ["kip"]
checkers = ["census"]
configs = ["default"]
ci_configs = ["small"]
story_configs = []
conform_configs = []
mutants = false
parallel = 1
options = {{ census_sample = {sample} }}
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plugin")
    (root / "census_checker.py").write_text(CENSUS, encoding="utf-8")
    info = root / "census_checker-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: census-checker\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\ncensus = census_checker:CHECKER\n", encoding="utf-8")
    return root


def _rollcheck(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p))
    return subprocess.run([sys.executable, "-m", "rollcheck", *args], env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def _gate_config_flag(site: Path) -> str:
    # The gate config file's flag (``--config`` is its older spelling).
    return "--gate-config" if "--gate-config" in _rollcheck(site, "gate", "--help").stdout else "--config"


def test_a_third_party_checker_is_listed_planned_run_and_reported(site: Path, tmp_path: Path) -> None:
    assert "census" not in checker_names()  # not in rollcheck: only the package's entry point brings it
    help_text = _rollcheck(site, "gate", "--help").stdout
    assert "census" in help_text  # a --checker choice
    config = tmp_path / "gate.toml"
    config.write_text(GATE.format(sample=3), encoding="utf-8")
    flag = _gate_config_flag(site)
    # Planned by its capabilities: the ci tier runs it on the ci config only (small), not on the gate config.
    plan = _rollcheck(site, "gate", flag, str(config), "--out", str(tmp_path / "out"), "--dry-run", "--json")
    assert plan.returncode == 0, plan.stderr
    cells = json.loads(plan.stdout)["cells"]
    assert [(c["config"], c["checker"]) for c in cells] == [("small", "census")]
    run = _rollcheck(site, "gate", flag, str(config), "--out", str(tmp_path / "out"), "--quiet", "--json")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    (report,) = summary["reports"]
    assert report["checker"] == "census" and report["status"] == "ok" and report["config"] == "small"
    assert report["stats"] == {"initial_states": report["stats"]["initial_states"], "sample": 3}
    assert report["stats"]["initial_states"] >= 1
    assert report["rerun"] == "rollcheck gate --protocol streams_probing --profile kip --checker census"
    assert summary["checkers"] == ["census"] and summary["verdict"] == "OK"


def test_a_checker_whose_options_reject_a_value_is_exit_2_in_one_line(site: Path, tmp_path: Path) -> None:
    config = tmp_path / "gate.toml"
    config.write_text(GATE.format(sample=0), encoding="utf-8")
    proc = _rollcheck(site, "gate", _gate_config_flag(site), str(config), "--out", str(tmp_path / "out"))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "options.census_sample must be at least 1, not 0" in lines[0] and "Traceback" not in proc.stderr
    # An option no registered checker reads is an error naming the known ones, the plug-in's among them.
    config.write_text(GATE.format(sample=1).replace("census_sample = 1", "census_sampel = 1"), encoding="utf-8")
    proc = _rollcheck(site, "gate", _gate_config_flag(site), str(config), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "unknown options ['census_sampel']" in proc.stderr
    assert "census_sample" in proc.stderr.split("known:")[1]


def test_every_built_in_checker_is_registered_in_report_order() -> None:
    assert checker_names() == ["explore", "spark", "hypothesis", "z3", "tlc", "conform", "apalache", "kafka", "cluster",
                               "fuzz"]
    for name in checker_names():
        checker = get_checker(name)
        assert isinstance(checker, Checker) and checker.name == name and checker.description


def _gate_modules() -> list[Path]:
    """The gate's modules and the cell runner, wherever the engine keeps them."""
    found = [p for p in ENGINE.rglob("*.py") if "__pycache__" not in p.parts
             and (p.name.startswith("gate") or p.name == "cellrun.py" or "gate" in p.relative_to(ENGINE).parts[:-1])]
    assert any(p.name == "cellrun.py" for p in found) and len(found) >= 3, found
    return sorted(found)


def test_the_gate_names_no_checker() -> None:
    """No string literal in the gate or the cell runner is a checker's name (docstrings may use them): it
    plans by each checker's declarations."""
    names = set(checker_names())
    hits = []
    for module in _gate_modules():
        tree = ast.parse(module.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        hits += [f"{module.relative_to(ENGINE.parent)}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                 and node.value in names]
    assert not hits, hits
