"""Issue 61, for runbooks, config files, the gate's outputs and export-test: no false assurance from a cut
runbook exploration, a mistyped step parameter or a mutation-switching config file refused in one line,
output paths checked before the work, nothing stale kept and nothing of the user's removed by the gate,
nothing written through a planted link, and no file named inside a trace copied into an exported test."""

from __future__ import annotations

import dataclasses
import json
import os
import runpy
from pathlib import Path
from typing import Any

import pytest

from rollcheck.cli import main
from rollcheck.core.errors import UserError
from rollcheck.core.registry import get_protocol
from rollcheck.core.traces import write_itf
from rollcheck.core.transition import ProtocolEntry, replace_config
from rollcheck.explore.regression import check_regression, export_test
from rollcheck.gate import GateConfig, run_gate
from rollcheck.gate.reports import write_outputs
from rollcheck.runbook import check, deviations, load_runbook
from rollcheck.runtime.rundir import MANIFEST, clear_previous_run, publish, record_run, staged_run
from tests.toy import PROTOCOL

ROOT = Path(__file__).resolve().parent.parent
RUNBOOKS = ROOT / "runbooks"
UPGRADE = RUNBOOKS / "metadata_version" / "kraft-upgrade.toml"


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    return lines[0]


def _link(at: Path, target: Path) -> Path:
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(target)
    return target


def _secret(tmp_path: Path, name: str = "secret.txt") -> Path:
    target = tmp_path / "elsewhere" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("the user's, untouched\n")
    return target


# --------------------------------------------------------------------------- 1. a cut runbook is inconclusive


def test_a_runbook_cut_by_max_states_is_inconclusive_not_a_violation(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runbook", str(UPGRADE), "--max-states", "10", "--out", str(tmp_path / "o")]) == 5
    captured = capsys.readouterr()
    assert "NOT as expected" not in captured.out and "inconclusive" in captured.out
    assert "not checked" in captured.out  # the report says what was not checked
    last = captured.err.strip().splitlines()[-1]
    assert last.startswith("rollcheck: inconclusive: 2 of 2 explorations did not run in full")
    assert "goal" in last and "Traceback" not in captured.err
    assert main(["runbook", str(UPGRADE), "--max-states", "10", "--out", str(tmp_path / "o"), "--json",
                 "--quiet"]) == 5
    (book,) = json.loads(capsys.readouterr().out)["runbooks"]
    assert book["verdict"] == "inconclusive" and book["passes"] is False
    assert len(book["not_checked"]) == 2 and all("--max-states 10" in line for line in book["not_checked"])


def test_a_cut_exploration_that_found_a_violation_still_reports_it() -> None:
    """The bound cuts the search, not a finding: a property broken within it is a verdict."""
    plain = load_runbook(UPGRADE)
    book = dataclasses.replace(plain, config=replace_config(plain.config, mutations=frozenset({"skip_broker_check"})))
    dev = next(d for d in deviations(book) if d.id == "skip:roll-b0")
    o = check(book, "kip", dev, max_states=10_000_000)
    assert o.verdict == "breaks"
    cut = check(book, "kip", dev, max_states=5)
    assert cut.verdict == "incomplete" and "not checked" in cut.description


# --------------------------------------------------------------------------- 2. step parameters checked at load

PARAM_CASES = [
    ("metadata_version/kraft-upgrade.toml", 'node = 0, software = "new"', 'nodee = 0, software = "new"',
     "step 1 (roll-c0): RestartNode has no parameter 'nodee'"),
    ("metadata_version/kraft-upgrade.toml", 'node = 0, software = "new"', 'node = "zero", software = "new"',
     "step 1 (roll-c0): parameter 'node' of RestartNode must be an integer"),
    ("metadata_version/kraft-upgrade.toml", "level = 5, downgrade", 'level = "5", downgrade',
     "step 6 (upgrade): parameter 'level' of UpdateFeatures must be an integer"),
    ("metadata_version/kraft-upgrade.toml", "dry_run = false", "dry_run = 0",
     "parameter 'dry_run' of UpdateFeatures must be true or false"),
    ("streams_probing/double-bounce.toml", 'unset = ["upgrade_from"]', 'unset = ["upgradefrom"]',
     "RollingBounce has no parameter 'upgradefrom'"),
    ("streams_probing/double-bounce.toml", 'upgrade_from = "1.1"', "upgrade_from = 11",
     "step 1 (first-0): parameter 'upgrade_from' of RollingBounce must be a string"),
    ("features/downgrade.toml", '[["group_coordinator", 1, true]]', '[["group_coordinator", "1", true]]',
     "parameter 'updates' of UpdateFeatures must be a list of that shape"),
]


@pytest.mark.parametrize(("file", "old", "new", "says"), PARAM_CASES, ids=[c[3][:48] for c in PARAM_CASES])
def test_a_misspelled_or_mistyped_step_parameter_is_one_line_before_any_exploration(
        file: str, old: str, new: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (RUNBOOKS / file).read_text()
    assert old in text
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace(old, new, 1))
    assert main(["runbook", str(bad), "--out", str(tmp_path / "o")]) == 2
    line = _one_line(capsys.readouterr().err)  # one line: no exploration's progress line either
    assert line.startswith(f"rollcheck: error: {bad}: step ") and says in line, line
    assert not (tmp_path / "o" / "runbooks").exists()


def test_every_shipped_runbook_still_loads() -> None:
    for f in sorted(RUNBOOKS.rglob("*.toml")):
        load_runbook(f)


# --------------------------------------------------------------------------- 3. output paths before the work


def test_markdown_that_cannot_be_written_is_refused_before_the_explorations(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("keep me")
    (tmp_path / "a-dir").mkdir()
    for path, says in ((blocker / "tables.md", "is a file, so no file can be made under it"),
                       (tmp_path / "a-dir", "is a directory")):
        assert main(["runbook", str(UPGRADE), "--out", str(tmp_path / "o"), "--markdown", str(path)]) == 2
        line = _one_line(capsys.readouterr().err)  # no progress line: no exploration ran
        assert line.startswith(f"rollcheck: error: --markdown {path}: ") and says in line, line
    assert blocker.read_text() == "keep me" and not (tmp_path / "o" / "runbooks").exists()


def test_a_file_where_the_runbooks_results_go_is_refused_and_kept(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "runbooks").write_text("the user's")
    assert main(["runbook", str(UPGRADE), "--out", str(tmp_path)]) == 2
    assert "runbooks exists and is not a directory" in _one_line(capsys.readouterr().err)
    assert (tmp_path / "runbooks").read_text() == "the user's"


def test_a_directory_where_the_gate_writes_a_report_is_refused_before_any_cell(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "summary.json").mkdir()
    assert main(["gate", "--protocol", "streams_probing", "--checker", "explore", "--out", str(tmp_path)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert f"{tmp_path / 'summary.json'} is a directory where the gate writes" in line
    assert sorted(os.listdir(tmp_path)) == [".rollcheck.lock", "summary.json"]  # no cell ran


# --------------------------------------------------------------------------- 4. configs that switch on a bug


def test_a_config_file_that_switches_on_a_mutation_is_refused(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    mutant = tmp_path / "mutant.toml"
    mutant.write_text('base = "small"\n[config]\nmutations = ["skip_broker_check"]\n')
    assert main(["explore", "metadata_version", "--config", str(mutant), "--out", str(tmp_path / "o")]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "'mutations' (skip_broker_check) switches on a broken variant's bug" in line
    assert "--variant MV-M4" in line
    gate = tmp_path / "gate.toml"
    gate.write_text(f"[gate]\nprotocols = ['metadata_version']\nconfigs = ['{mutant}']\ncheckers = ['explore']\n"
                    "mutants = false\n")
    assert main(["gate", "--gate-config", str(gate), "--out", str(tmp_path / "g")]) == 2
    assert "switches on a broken variant's bug" in _one_line(capsys.readouterr().err)
    assert not (tmp_path / "g" / "summary.json").exists()


def test_a_runbook_config_with_a_mutation_names_the_variant_everywhere(tmp_path: Path) -> None:
    """Runbooks may check a broken cluster (tests/test_runbooks.py does), so its label says so: the console's
    table title, the JSON summary, report.md and each trace's #meta carry it."""
    text = UPGRADE.read_text().replace('base = "crashes"', 'base = "crashes"\nmutations = ["skip_broker_check"]')
    f = tmp_path / "mutant.toml"
    f.write_text(text)
    book = load_runbook(f)
    assert "mutations skip_broker_check, variant MV-M4" in book.config_label
    o = check(book, "kip", next(d for d in deviations(book) if d.id == "skip:roll-b0"))
    assert o.verdict == "breaks" and o.trace is not None
    assert "variant MV-M4" in o.trace.config
    path = write_itf(tmp_path / "t.itf.json", o.trace, get_protocol("metadata_version").build(
        replace_config(book.config, profile="kip")))
    meta = json.loads(path.read_text())["#meta"]
    assert "variant MV-M4" in meta["config"] and "skip_broker_check" in meta["config_repr"]
    from rollcheck.cli.commands.runbook_cmd import _markdown, _write

    doc = _write(book, [o], tmp_path / "staging", lambda p: p)
    assert doc["variants"] == ["MV-M4"] and doc["mutations"] == ["skip_broker_check"]
    assert "variant MV-M4" in doc["config"] and "variant MV-M4" in _markdown(book, [o])


# --------------------------------------------------------------------------- 5. the gate's outputs


def _toy_gate(out: Path, mutants: bool = True) -> GateConfig:
    return GateConfig(["toy"], {"toy": ["small"]}, ["kip"], ["explore"], out, {}, mutants=mutants,
                      mutant_checkers=["explore"], ci_configs={"toy": []}, parallel=1)


def _gate(cfg: GateConfig, lookup: Any = lambda _n: PROTOCOL) -> Any:
    result = run_gate(cfg, lookup=lookup)
    write_outputs(result, cfg.out_dir)
    return result


def test_the_gate_leaves_only_its_own_traces(tmp_path: Path) -> None:
    _gate(_toy_gate(tmp_path))
    mine = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.itf.json"))
    assert mine, "the toy's broken variant leaves a counterexample"
    stale = tmp_path / "mutants" / "traces" / "TOY-M9" / "old-run" / "TOY-01.itf.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    _gate(_toy_gate(tmp_path))
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.itf.json")) == mine


def test_the_gate_never_removes_a_name_the_user_re_created(tmp_path: Path) -> None:
    _gate(_toy_gate(tmp_path))
    assert "mutants" in json.loads((tmp_path / MANIFEST).read_text())["written"]
    # The user replaces the gate's mutants/ by a folder of their own; the next gate writes no mutants/.
    import shutil

    shutil.rmtree(tmp_path / "mutants")
    (tmp_path / "mutants").mkdir()
    (tmp_path / "mutants" / "notes.txt").write_text("the user's")
    _gate(_toy_gate(tmp_path, mutants=False))
    assert (tmp_path / "mutants" / "notes.txt").read_text() == "the user's"


def test_a_re_created_or_rewritten_file_the_manifest_lists_is_kept(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("the run's")
    (tmp_path / "b.txt").write_text("the run's")
    (tmp_path / "c.txt").write_text("the run's")
    record_run(tmp_path, set())
    (tmp_path / "a.txt").unlink()
    (tmp_path / "a.txt").write_text("the user's, re-created")  # another file under the same name
    with (tmp_path / "b.txt").open("a") as fh:  # the same file, written since
        fh.write(" and the user's")
    removed, left = clear_previous_run(tmp_path)
    assert removed == ["c.txt"] and left == {"a.txt", "b.txt"}
    assert (tmp_path / "a.txt").read_text() == "the user's, re-created"


def test_an_export_tests_folder_inside_out_survives_the_next_gate(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    def lookup(name: str) -> ProtocolEntry:
        entry = get_protocol(name)
        return dataclasses.replace(entry, variants=(entry.variant("FEAT-M1"),))

    out = tmp_path / "gate"
    cfg = GateConfig(["features"], {"features": ["small"]}, ["kip"], ["explore"], out, {}, mutants=True,
                     mutant_checkers=["explore"], ci_configs={"features": []}, parallel=1,
                     export_tests=out / "regressions")
    first = _gate(cfg, lookup)
    assert first.exported_tests and "regressions" not in json.loads((out / MANIFEST).read_text())["written"]
    (out / "regressions" / "conftest.py").write_text("# the user's\n")
    _gate(cfg, lookup)
    assert (out / "regressions" / "conftest.py").read_text() == "# the user's\n"
    assert Path(first.exported_tests[0]["path"]).is_file()
    # A folder the gate replaces on every run, or --out itself, is refused in one line before the run.
    for inside in ("traces/tests", "."):
        assert main(["gate", "--protocol", "features", "--checker", "explore", "--out", str(out),
                     "--export-tests", str(out / inside)]) == 2
        assert "--export-tests" in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize("damage", ["not json {", "[1, 2]", '{"plan": {"cells": [1, "x"]}}', "NaN seconds",
                                    '{"plan": {"cells": {"id": 3}}}', "directory"])
def test_a_damaged_summary_beside_a_gate_is_no_traceback(damage: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["gate", "--protocol", "streams_probing", "--checker", "explore", "--out", str(tmp_path)]
    summary = tmp_path / "summary.json"
    if damage == "directory":
        summary.mkdir()
    elif damage == "NaN seconds":  # every cell of the plan, with seconds no JSON reader accepts
        assert main([*argv, "--dry-run", "--json"]) == 0
        ids = [c["id"] for c in json.loads(capsys.readouterr().out)["cells"]]
        summary.write_text(json.dumps({"plan": {"cells": [{"id": i, "actual_seconds": float("nan")} for i in ids]}}))
    else:
        summary.write_text(damage)
    assert main([*argv, "--dry-run", "--json"]) == 0
    captured = capsys.readouterr()

    def no_constant(name: str) -> None:
        raise AssertionError(f"{name} in the JSON on stdout")

    plan = json.loads(captured.out, parse_constant=no_constant)
    assert plan["estimated_seconds"] is None and "Traceback" not in captured.err
    if damage == "directory":
        assert main(argv) == 2
        assert "is a directory where the gate writes its summary.json" in _one_line(capsys.readouterr().err)


# --------------------------------------------------------------------------- 6. planted links


def test_a_link_at_the_runbooks_lock_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = _link(tmp_path / "o" / ".runbooks.lock", _secret(tmp_path))
    assert main(["runbook", str(UPGRADE), "--out", str(tmp_path / "o")]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "refusing to write through a symbolic link" in line and ".runbooks.lock" in line
    assert target.read_text() == "the user's, untouched\n"


def test_links_at_the_runbooks_outputs_are_replaced_never_written_through(tmp_path: Path) -> None:
    out = tmp_path / "o"
    target_dir = tmp_path / "elsewhere-dir"
    target_dir.mkdir()
    (target_dir / "report.md").write_text("the user's, untouched\n")
    _link(out / "runbooks", target_dir)  # the run's directory itself
    md_target = _link(tmp_path / "tables.md", _secret(tmp_path, "tables.md"))
    assert main(["runbook", str(UPGRADE), "--out", str(out), "--profile", "kip", "--quiet",
                 "--markdown", str(tmp_path / "tables.md")]) == 0
    assert (target_dir / "report.md").read_text() == "the user's, untouched\n"
    assert sorted(os.listdir(target_dir)) == ["report.md"]
    assert not (out / "runbooks").is_symlink() and (out / "runbooks" / "report.md").is_file()
    assert md_target.read_text() == "the user's, untouched\n"
    assert not (tmp_path / "tables.md").is_symlink() and "MV-RB1" in (tmp_path / "tables.md").read_text()
    # A link planted inside the last run's directory goes with it.
    inside = _link_replacing(out / "runbooks" / "report.md", _secret(tmp_path, "inside.txt"))
    assert main(["runbook", str(UPGRADE), "--out", str(out), "--profile", "kip", "--quiet"]) == 0
    assert inside.read_text() == "the user's, untouched\n" and not (out / "runbooks" / "report.md").is_symlink()


def _link_replacing(at: Path, target: Path) -> Path:
    at.unlink()
    at.symlink_to(target)
    return target


def test_staged_runs_never_follow_a_planted_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("the user's")
    out = tmp_path / "out"
    out.mkdir()
    # a "partial directory" of a dead run, and the name a publish renames the old run to
    (out / ".r.partial-999999999-x").symlink_to(victim)
    (out / f".r.old-{os.getpid()}").symlink_to(victim)
    (out / "r").mkdir()
    with staged_run(out, "r") as run:
        (run.staging / "result.txt").write_text("new")
    assert (out / "r" / "result.txt").read_text() == "new"
    assert sorted(os.listdir(victim)) == ["keep.txt"] and (victim / "keep.txt").read_text() == "the user's"
    # publishing over a link replaces the link
    staging = out / "staging"
    staging.mkdir()
    (out / "final").symlink_to(victim)
    publish(staging, out / "final")
    assert not (out / "final").is_symlink() and (victim / "keep.txt").exists()


def test_a_linked_manifest_is_not_followed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "precious").write_text("the user's")
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps({"written": ["precious"]}))
    (out / MANIFEST).symlink_to(forged)
    removed, left = clear_previous_run(out)
    assert removed == [] and "precious" in left and (out / "precious").read_text() == "the user's" and forged.exists()


@pytest.mark.parametrize("name", ["traces", "mutants", "summary.json", "junit.xml", "report.html"])
def test_a_link_at_a_gate_output_is_refused(name: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    target = tmp_path / "elsewhere"
    if name.endswith((".json", ".xml", ".html")):
        target = _secret(tmp_path, name)
    else:
        target.mkdir()
    _link(out / name, target)
    with pytest.raises(UserError, match=f"refusing to write through a symbolic link: {out / name}"):
        run_gate(_toy_gate(out), lookup=lambda _n: PROTOCOL)
    if target.is_dir():
        assert os.listdir(target) == []
    else:
        assert target.read_text() == "the user's, untouched\n"


def test_a_link_below_a_kept_gate_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    victim = tmp_path / "victim"
    victim.mkdir()
    _link(out / "mutants" / "traces", victim)  # mutants/ is the user's (no manifest lists it)
    with pytest.raises(UserError, match="refusing to write through a symbolic link"):
        run_gate(_toy_gate(out), lookup=lambda _n: PROTOCOL)
    assert os.listdir(victim) == []


def test_a_link_at_the_gate_lock_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = _link(tmp_path / "out" / ".rollcheck.lock", _secret(tmp_path))
    assert main(["gate", "--protocol", "streams_probing", "--checker", "explore", "--out", str(tmp_path / "out")]) == 2
    assert ".rollcheck.lock" in _one_line(capsys.readouterr().err)
    assert target.read_text() == "the user's, untouched\n"


# --------------------------------------------------------------------------- 7. export-test copies no file


def _feat_trace(tmp_path: Path) -> Path:
    assert main(["explore", "features", "--config", "small", "--variant", "FEAT-M1", "--workers", "1", "--quiet",
                 "--out", str(tmp_path / "explore")]) == 1
    (trace,) = (tmp_path / "explore").rglob("counterexamples/FEAT-01.itf.json")
    return trace


def test_export_test_never_copies_a_file_the_trace_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _feat_trace(tmp_path)
    capsys.readouterr()
    doc = json.loads(trace.read_text())
    # A secret that is also a valid config file (so that reading it would even succeed), and /etc/passwd.
    secret = tmp_path / "secret.toml"
    secret.write_text('# TOKEN=s3cr3t-d0-not-copy\nprotocol = "features"\nbase = "small"\n')
    for named, forbidden in ((secret, "s3cr3t-d0-not-copy"), (Path("/etc/passwd"), "root:")):
        doc["#meta"]["config"] = str(named)
        forged = tmp_path / f"forged-{named.name}.itf.json"
        forged.write_text(json.dumps(doc))
        out = tmp_path / f"tests-{named.name}"
        assert main(["export-test", str(forged), "-o", str(out), "--json"]) == 0, capsys.readouterr().err
        (written,) = json.loads(capsys.readouterr().out)["tests"]
        text = Path(written["path"]).read_text()
        assert forbidden not in text and "config_toml" not in text
        outcome = check_regression(runpy.run_path(written["path"])["TRACE"])  # the config came from the trace
        assert outcome.passed, outcome.message
        assert check_regression(runpy.run_path(written["path"])["TRACE"], "FEAT-M1").failure


def test_export_test_takes_a_config_named_on_the_command_line(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "mine.toml"
    config.write_text('# a comment the test does not need\nprotocol = "features"\nbase = "small"\n')
    assert main(["explore", "features", "--config", str(config), "--variant", "FEAT-M1", "--workers", "1",
                 "--quiet", "--out", str(tmp_path / "explore")]) == 1
    (trace,) = (tmp_path / "explore").rglob("counterexamples/FEAT-01.itf.json")
    capsys.readouterr()
    doc = json.loads(trace.read_text())
    del doc["#meta"]["config_repr"]  # nothing to rebuild the config from: the user names the file
    trace.write_text(json.dumps(doc))
    assert main(["export-test", str(trace), "-o", str(tmp_path / "t")]) == 2
    assert "--config FILE" in _one_line(capsys.readouterr().err)
    assert main(["export-test", str(trace), "-o", str(tmp_path / "t"), "--config", str(config), "--json"]) == 0
    (written,) = json.loads(capsys.readouterr().out)["tests"]
    text = Path(written["path"]).read_text()
    assert "a comment the test does not need" not in text and "config_fields" in text
    config.unlink()
    assert check_regression(runpy.run_path(written["path"])["TRACE"]).passed


def test_a_config_repr_that_is_code_is_refused(tmp_path: Path) -> None:
    trace = _feat_trace(tmp_path)
    doc = json.loads(trace.read_text())
    marker = tmp_path / "ran"
    doc["#meta"]["config"] = str(tmp_path / "gone.toml")
    doc["#meta"]["config_repr"] = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    forged = tmp_path / "code.itf.json"
    forged.write_text(json.dumps(doc))
    with pytest.raises(UserError, match="config_repr is not a FeaturesConfig"):
        export_test(forged, tmp_path / "t")
    assert not marker.exists()
