"""``rollcheck export-test``: a counterexample becomes a pytest regression test that fails on the bug it came
from (``ROLLCHECK_EXPORT_VARIANT``) and passes on the reference; the gate's ``--export-tests``; bad input in
one line. ``benchmarks/export_roundtrip.py`` runs the round trip on every broken variant."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from rollcheck.cli import build_parser, main
from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import ProtocolEntry
from rollcheck.explore.regression import VARIANT_ENV, check_regression, export_test, exported_name, read_counterexample
from rollcheck.gate import GateConfig, run_gate

# One cheap broken variant per protocol (each caught in a few states on its own config), covering both ways
# a fix passes: the recorded bad step is no longer enabled, or it runs and the property holds.
CASES = {
    "features": ("FEAT-M1", "disabled"),  # UpdateFeatures' recorded result is not what the reference gives
    "metadata_version": ("MV-M1", "holds"),  # the same request runs, and is refused
    "zk_migration": ("MIG-M6", "disabled"),
    "streams_probing": ("STR-M1", "holds"),
}


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    return lines[0]


def _counterexamples(protocol: str, variant: str, out: Path) -> Path:
    """Explore the variant on its own config (the CLI, as a user would); its run directory."""
    config = get_protocol(protocol).variant(variant).config
    code = main(["explore", protocol, "--config", config, "--variant", variant, "--workers", "1", "--quiet",
                 "--out", str(out)])
    assert code == 1
    (run,) = [p for p in out.iterdir() if (p / "counterexamples").is_dir()]
    assert list((run / "counterexamples").glob("*.itf.json"))
    return run


def _pytest(files: list[Path], cwd: Path, variant: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != VARIANT_ENV}
    if variant is not None:
        env[VARIANT_ENV] = variant
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-rs",
                           *map(str, files)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


def test_an_exported_test_fails_on_its_bug_and_passes_on_the_reference(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    tests = tmp_path / "regressions"
    exported: dict[str, list[Path]] = {}
    for protocol, (variant, how) in CASES.items():
        run = _counterexamples(protocol, variant, tmp_path / "explore" / protocol)
        capsys.readouterr()
        # A whole run directory: its counterexamples are exported, its witness traces skipped.
        assert main(["export-test", str(run), "-o", str(tests), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        files = [Path(t["path"]) for t in doc["tests"]]
        assert files and all(f.is_file() and f.parent == tests for f in files), doc
        assert all("witness" in s["reason"] for s in doc["skipped"]), doc["skipped"]
        exported[protocol] = files
        for f in files:
            outcome = check_regression(runpy.run_path(str(f))["TRACE"])
            assert outcome.passed, outcome.message
            assert (outcome.disabled_step is not None) == (how == "disabled"), outcome.message
            assert check_regression(runpy.run_path(str(f))["TRACE"], variant).failure
    every = [f for files in exported.values() for f in files]
    # On the reference (run from outside the repository): every exported test passes.
    ref = _pytest(every, tmp_path)
    assert ref.returncode == 0, ref.stdout[-3000:]
    assert f"{len(every)} passed" in ref.stdout
    # On the bug each came from: each fails, with a line naming the property, the step and the action; the
    # other protocols' tests are skipped (the variant is not theirs).
    for protocol, (variant, _) in CASES.items():
        bug = _pytest(every, tmp_path, variant)
        assert bug.returncode == 1, bug.stdout[-3000:]
        mine = len(exported[protocol])
        assert f"{mine} failed" in bug.stdout and f"{len(every) - mine} skipped" in bug.stdout, bug.stdout[-3000:]
        errors = [ln for ln in bug.stdout.splitlines() if re.match(r"E\s+AssertionError: ", ln)]
        assert len(errors) == mine, bug.stdout[-3000:]
        for line in errors:
            assert "still violated" in line and f"variant {variant}" in line and " at " in line, line


def test_the_file_name_is_stable_and_the_file_tells_the_story(tmp_path: Path) -> None:
    run = _counterexamples("features", "FEAT-M1", tmp_path / "a")
    trace = run / "counterexamples" / "FEAT-01.itf.json"
    first = export_test(trace, tmp_path / "t")
    again = export_test(trace, tmp_path / "t")
    assert first.path == again.path and Path(first.path).name == f"{first.test}.py"
    assert first.test.startswith("test_features_feat_m1_feat_01_")
    # The same trace written by another run has the same name; another trace never takes it.
    other_run = _counterexamples("features", "FEAT-M1", tmp_path / "b")
    assert exported_name(read_counterexample(other_run / "counterexamples" / "FEAT-01.itf.json")) == first.test
    other = export_test(_counterexamples("features", "FEAT-M2", tmp_path / "c") / "counterexamples" /
                        "FEAT-05.itf.json", tmp_path / "t")
    assert other.path != first.path
    assert len(list((tmp_path / "t").glob("*.py"))) == 2
    text = Path(first.path).read_text(encoding="utf-8")
    doc = text.split('"""')[1]
    for part in ("protocol: features", "config: small", "profile: kip", "FEAT-M1", "FEAT-01 (invariant)",
                 " 1. ElectController(broker=0)", " 2. UpdateFeatures(", "rollcheck export-test", VARIANT_ENV,
                 "rollcheck replay", "python -m pytest"):
        assert part in doc, part
    assert f"def {first.test}() -> None:" in text and "check_regression(TRACE" in text
    assert max(len(line) for line in text.splitlines()) <= 120
    ruff = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--line-length", "120", first.path],
                          capture_output=True, text=True, check=False)
    assert ruff.returncode == 0, ruff.stdout


def test_a_trace_from_a_config_file_runs_without_the_file(tmp_path: Path) -> None:
    config = tmp_path / "mine.toml"
    config.write_text('protocol = "features"\nbase = "small"\n\n[config]\nmax_restarts = 1\n', encoding="utf-8")
    assert main(["explore", "features", "--config", str(config), "--variant", "FEAT-M1", "--workers", "1",
                 "--quiet", "--out", str(tmp_path / "out")]) == 1
    (trace,) = (tmp_path / "out").rglob("counterexamples/FEAT-01.itf.json")
    exported = export_test(trace, tmp_path / "t")
    config.unlink()
    text = runpy.run_path(exported.path)["TRACE"]
    assert check_regression(text).passed
    assert check_regression(text, "FEAT-M1").failure


def test_a_changed_config_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _counterexamples("features", "FEAT-M1", tmp_path / "a") / "counterexamples" / "FEAT-01.itf.json"
    doc = json.loads(trace.read_text(encoding="utf-8"))
    doc["#meta"]["config_repr"] = doc["#meta"]["config_repr"].replace("brokers=2", "brokers=3")
    trace.write_text(json.dumps(doc), encoding="utf-8")
    capsys.readouterr()
    assert main(["export-test", str(trace), "-o", str(tmp_path / "t")]) == 2
    assert "no longer the one the trace was made with" in _one_line(capsys.readouterr().err)
    outcome = check_regression(doc)  # an exported test whose config changed since: it fails, it does not pass
    assert outcome.failure and "no longer the one" in outcome.failure


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _counterexamples("features", "FEAT-M1", tmp_path / "e")
    good = run / "counterexamples" / "FEAT-01.itf.json"
    capsys.readouterr()

    def refused(argv: list[str], words: str) -> None:
        assert main(["export-test", *argv]) == 2, argv
        line = _one_line(capsys.readouterr().err)
        assert words in line, line

    refused([str(tmp_path / "nope.itf.json")], "trace not found")
    garbage = tmp_path / "garbage.itf.json"
    garbage.write_text("not json {", encoding="utf-8")
    refused([str(garbage)], "is not JSON")
    no_states = tmp_path / "no-states.itf.json"
    no_states.write_text('{"vars": []}', encoding="utf-8")
    refused([str(no_states)], "not an ITF trace")
    foreign = tmp_path / "foreign.itf.json"
    foreign.write_text(json.dumps({"#meta": {"format": "ITF"}, "vars": ["x"], "states": [{"x": 1}]}),
                       encoding="utf-8")
    refused([str(foreign)], "names no protocol")
    unnamed = tmp_path / "unnamed.itf.json"
    doc = json.loads(good.read_text(encoding="utf-8"))
    del doc["#meta"]["property"]
    unnamed.write_text(json.dumps(doc), encoding="utf-8")
    refused([str(unnamed)], "names no violated property")
    witness = sorted((run / "witnesses").glob("*.itf.json"))[0]
    refused([str(witness)], "a witness trace")
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    refused([str(good), "-o", str(blocker)], "exists and is not a directory")
    refused([str(good), "-o", str(blocker / "under")], "is a file")
    refused([str(run / "witnesses")], "no counterexample to export")
    assert not list(tmp_path.rglob("test_*.py"))


def test_the_gate_exports_a_test_per_counterexample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert build_parser().parse_args(["gate", "--export-tests", "x"]).export_tests == Path("x")
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    assert main(["gate", "--protocol", "features", "--checker", "explore", "--export-tests", str(blocker),
                 "--out", str(tmp_path / "never")]) == 2
    assert "--export-tests" in _one_line(capsys.readouterr().err)
    assert not (tmp_path / "never").exists()

    # A tiny gate: features' small config under one profile, with one broken variant.
    def lookup(name: str) -> ProtocolEntry:
        entry = get_protocol(name)
        return dataclasses.replace(entry, variants=(entry.variant("FEAT-M1"),))

    cfg = GateConfig(["features"], {"features": ["small"]}, ["kip"], ["explore"], tmp_path / "gate",
                     {}, mutants=True, mutant_checkers=["explore"], ci_configs={"features": []}, parallel=1,
                     export_tests=tmp_path / "regressions")
    result = run_gate(cfg, lookup=lookup)
    assert not result.findings, result.findings
    assert result.exported_tests is not None and len(result.exported_tests) == 1, result.exported_tests
    row = result.exported_tests[0]
    assert row["variant"] == "FEAT-M1" and row["property"] == "FEAT-01"
    assert Path(row["path"]).is_file() and Path(row["path"]).parent == tmp_path / "regressions"
    assert "mutants/traces/FEAT-M1" in row["trace"]
    assert result.to_json()["exported_tests"] == result.exported_tests
    text = runpy.run_path(row["path"])["TRACE"]
    assert check_regression(text).passed and check_regression(text, "FEAT-M1").failure
