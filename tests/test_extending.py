"""docs/extending.md followed literally (issue #21): its files written out, the package installed with pip
(offline, into a target folder on PYTHONPATH), and its commands run; the protocol then appears in
`rollcheck list` and passes the gate with no change to this repository."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "extending.md"
FILE_BLOCK = re.compile(r"<!-- file: (?P<path>\S+) -->\n```[a-z]*\n(?P<body>.*?)```", re.DOTALL)
CONSOLE_BLOCK = re.compile(r"```console\n(?P<body>.*?)```", re.DOTALL)

# What each documented command must exit with (the page says why).
EXPECTED = {"--variant ROLL-M1": 1}


def _commands() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    lines = [ln[2:] for block in CONSOLE_BLOCK.findall(text) for ln in block.splitlines() if ln.startswith("$ ")]
    return [ln for ln in lines if ln.startswith("rollcheck ")]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("tutorial")
    files = FILE_BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert len(files) >= 8, "the tutorial's file blocks were not found"
    for rel, body in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    site = root / "site"
    # `pip install ./rollout`, offline: rollcheck (its dependency) is already installed here.
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(site), str(root / "rollout")], check=True, cwd=root,
                   capture_output=True, text=True, timeout=300)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).strip(os.pathsep))
    return {"cwd": str(root), **{f"env:{k}": v for k, v in env.items()}}


def _run(installed: dict[str, str], command: str) -> subprocess.CompletedProcess[str]:
    env = {k[4:]: v for k, v in installed.items() if k.startswith("env:")}
    args = shlex.split(command)
    assert args[0] == "rollcheck"
    return subprocess.run([sys.executable, "-m", "rollcheck", *args[1:]], cwd=installed["cwd"], env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def test_the_plugin_is_listed(installed: dict[str, str]) -> None:
    proc = _run(installed, "rollcheck list")
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^\W*rollout\b", proc.stdout, re.MULTILINE), proc.stdout


@pytest.mark.parametrize("command", _commands()[1:], ids=lambda c: c.removeprefix("rollcheck ")[:60])
def test_every_documented_command_runs(installed: dict[str, str], command: str) -> None:
    want = next((code for key, code in EXPECTED.items() if key in command), 0)
    proc = _run(installed, command)
    assert proc.returncode == want, (command, proc.stdout[-3000:], proc.stderr[-3000:])
    if "gate" in command.split()[1:2]:
        summary = json.loads((Path(installed["cwd"]) / "rollcheck-out" / "gate" / "summary.json").read_text())
        ran = {r["checker"] for r in summary["reports"]}
        assert {"explore", "hypothesis", "z3", "tlc", "conform"} <= ran
        assert summary["mutants"]["scores"]["killed"] == 1


def test_the_variants_trace_replays(installed: dict[str, str]) -> None:
    out = Path(installed["cwd"]) / "replay-out"
    assert _run(installed, f"rollcheck explore rollout --config small --variant ROLL-M1 --quiet --out {out}"
                ).returncode == 1
    proc = _run(installed, f"rollcheck replay {out} --json")
    assert proc.returncode == 1, proc.stderr
    traces = {t["property"]: t for t in json.loads(proc.stdout)["traces"]}
    assert sorted(traces) == ["ROLL-01", "ROLL-W1"]  # the counterexample, and the witness the same step reaches
    trace = traces["ROLL-01"]
    assert trace["variant"] == "ROLL-M1" and trace["reproduced"] and trace["steps"] == 1
    assert traces["ROLL-W1"]["witness"] is True and traces["ROLL-W1"]["reproduced"]


def test_the_plugins_own_tests_meet_the_contract(installed: dict[str, str]) -> None:
    """The page's `pytest -q rollout/tests`: rollcheck.testing's cases run through the pytest plugin."""
    env = {k[4:]: v for k, v in installed.items() if k.startswith("env:")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "rollout/tests"],
                          cwd=installed["cwd"], env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(r"(\d+) passed", proc.stdout) and int(re.search(r"(\d+) passed", proc.stdout).group(1)) >= 7


def test_the_specs_and_code_do_not_drift(installed: dict[str, str]) -> None:
    code = ("from rollcheck.core.registry import get_protocol\n"
            "from rollcheck.tla.drift import drift\n"
            "e = get_protocol('rollout')\n"
            "ts = e.build(e.configs['small'])\n"
            "print(drift(e.spec_binding(), [p.id for p in ts.properties()]))\n")
    env = {k[4:]: v for k, v in installed.items() if k.startswith("env:")}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_the_decision_rule_registered_through_the_entry_runs(installed: dict[str, str]) -> None:
    """``ProtocolEntry.decisions``: ``rollcheck prove`` compares the page's rule with the reference."""
    proc = _run(installed, "rollcheck prove rollout --config small --decisions-only --json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    decisions = json.loads(proc.stdout)["decisions"]
    assert [r["rule"] for r in decisions["rules"]] == ["finalize"] and decisions["disagreement"] is None
    assert decisions["rules"][0]["inputs"] == 2 * 3 ** 2  # two levels above the first, nodes at 1-3
