"""No false assurance (issue 61): ``fuzz``, ``prove``, ``conform``, ``mutants`` and ``replay`` say "holds",
"ok", "no violation" or exit 0 only when their check ran in full; what was not checked is named, with the
exit code the README's table gives (5 inconclusive, 4 not installed, 3 a trace that does not replay). A fuzz
campaign leaves only its own files and writes none through a planted link; two conform runs into one
``--out`` keep each other's results."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from rollcheck.cli import main
from rollcheck.core.errors import ExitCode
from tests.toy import PROTOCOL, ToyConfig

TINY = "1e-9"  # minutes: a budget that ends before the first round starts
FUZZ = ["fuzz", "streams_probing", "--config", "small", "--spark-walks", "0", "--quiet"]


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    return lines[0]


# --------------------------------------------------------------------------- fuzz


def test_fuzz_with_a_budget_too_small_for_one_round_is_inconclusive(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*FUZZ, "--minutes", TINY, "--out", str(tmp_path)]) == ExitCode.INCONCLUSIVE
    captured = capsys.readouterr()
    line = _one_line(captured.err)
    assert line.startswith("rollcheck: inconclusive: ") and "nothing was checked" in line
    assert "no violation" not in captured.out
    doc = json.loads((tmp_path / "fuzz-summary.json").read_text())
    assert doc["rounds"] == 0 and doc["inconclusive"] is True and doc["violation"] is None
    # --json: the summary on stdout says so too, and the exit code is the same
    assert main([*FUZZ, "--minutes", TINY, "--json", "--out", str(tmp_path)]) == ExitCode.INCONCLUSIVE
    assert json.loads(capsys.readouterr().out)["inconclusive"] is True


def test_a_fuzz_campaign_that_ran_rounds_is_not_inconclusive(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*FUZZ, "--minutes", "0.01", "--examples", "3", "--steps", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no violation (time budget used): " in out and "{result" not in out  # the numbers, not the template
    doc = json.loads((tmp_path / "fuzz-summary.json").read_text())
    assert doc["rounds"] >= 1 and doc["inconclusive"] is False


def test_the_gates_fuzz_round_with_no_round_is_skipped_not_ok(tmp_path: Path) -> None:
    from rollcheck.checkers import NOT_CHECKED, CheckContext
    from rollcheck.fuzzing.fuzz import check_fuzz

    report = check_fuzz(PROTOCOL, "small", ToyConfig(bound=3),
                        CheckContext(out_dir=tmp_path, options={"fuzz_minutes": 1e-9}))
    assert report.status == "skipped" and "nothing was checked" in report.message
    assert {v.status for v in report.properties.values()} == {NOT_CHECKED}


def test_fuzz_leaves_only_its_own_counterexample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "campaign"
    assert main([*FUZZ, "--variant", "STR-M1", "--minutes", "0.3", "--examples", "50", "--steps", "20",
                 "--out", str(out)]) == ExitCode.VIOLATION
    assert (out / "counterexample.itf.json").is_file() and (out / "counterexample.txt").is_file()
    (out / "mine.txt").write_text("the user's")
    assert main([*FUZZ, "--minutes", "0.01", "--examples", "3", "--steps", "3", "--out", str(out)]) == 0
    capsys.readouterr()
    assert not (out / "counterexample.itf.json").exists() and not (out / "counterexample.txt").exists()
    assert json.loads((out / "fuzz-summary.json").read_text())["violation"] is None
    assert (out / "mine.txt").read_text() == "the user's"  # never touched
    assert (out / "hypothesis-db").is_dir()  # kept: the next campaign replays what it holds


def test_a_campaign_directory_without_a_manifest_loses_its_stale_counterexample(tmp_path: Path) -> None:
    """A campaign directory an earlier version wrote (no manifest): its counterexample files sit beside a
    campaign's summary, so they are a campaign's; a directory with no such summary keeps its files."""
    summary = {"protocol": "streams_probing", "rounds": 3, "violation": {"property": "STR-01"}, "rounds_log": []}
    (tmp_path / "fuzz-summary.json").write_text(json.dumps(summary))
    (tmp_path / "counterexample.itf.json").write_text("{}")
    (tmp_path / "counterexample.txt").write_text("old")
    (tmp_path / "notes.txt").write_text("mine")
    assert main([*FUZZ, "--minutes", TINY, "--out", str(tmp_path)]) == ExitCode.INCONCLUSIVE
    assert not (tmp_path / "counterexample.itf.json").exists() and not (tmp_path / "counterexample.txt").exists()
    assert (tmp_path / "notes.txt").read_text() == "mine"
    other = tmp_path / "other"
    other.mkdir()
    (other / "counterexample.txt").write_text("the user's own")
    assert main([*FUZZ, "--minutes", TINY, "--out", str(other)]) == ExitCode.INCONCLUSIVE
    assert (other / "counterexample.txt").read_text() == "the user's own"


def test_a_fuzz_summary_that_is_a_directory_is_one_line_before_the_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "fuzz-summary.json").mkdir()
    assert main([*FUZZ, "--minutes", "0.05", "--out", str(tmp_path)]) == ExitCode.RUN_FAILED
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("rollcheck: error: ") and "fuzz-summary.json is a directory" in line


@pytest.mark.parametrize("name", ["fuzz-summary.json", "counterexample.itf.json", "counterexample.txt",
                                  "hypothesis-db"])
def test_fuzz_writes_nothing_through_a_planted_link(name: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / ("victim-dir" if name == "hypothesis-db" else "victim.txt")
    if name == "hypothesis-db":
        victim.mkdir()
    else:
        victim.write_text("keep me")
    os.symlink(victim, out / name)
    assert main([*FUZZ, "--minutes", "0.05", "--out", str(out)]) == ExitCode.RUN_FAILED
    line = _one_line(capsys.readouterr().err)
    assert "refusing to write through a symbolic link" in line and name in line
    if name == "hypothesis-db":
        assert os.listdir(victim) == []
    else:
        assert victim.read_text() == "keep me"


def test_a_link_planted_during_the_campaign_is_refused_when_the_counterexample_is_written(tmp_path: Path) -> None:
    from rollcheck.fuzzing.fuzz import fuzz_hypothesis
    from rollcheck.runtime.safefs import LinkRefused

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"

    def plant(_result: Any) -> None:
        if not (out / "counterexample.txt").is_symlink():
            os.symlink(victim, out / "counterexample.txt")

    broken = PROTOCOL.variant("TOY-M1").build(ToyConfig(bound=3))
    with pytest.raises(LinkRefused, match=r"counterexample\.txt"):
        fuzz_hypothesis(broken, out_dir=out, minutes=0.5, seed=7, examples_per_round=100, steps=15, progress=plant)
    assert victim.read_text() == "keep me"


# --------------------------------------------------------------------------- prove


PROVE = ["prove", "streams_probing", "--config", "small", "--no-differential", "--json", "--quiet"]


def test_prove_with_every_solver_call_cancelled_is_inconclusive(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*PROVE, "--property", "STR-01", "--timeout", "0.0001", "--out", str(tmp_path)]) == \
        ExitCode.INCONCLUSIVE
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["not_checked"] == ["STR-01"] and doc["inconclusive"] is True
    assert doc["results"][0]["status"] == "unknown" and "gave up" in doc["results"][0]["message"]
    line = _one_line(captured.err)
    assert line.startswith("rollcheck: inconclusive: ") and "STR-01" in line and "not checked" in line


def test_prove_with_some_proved_and_some_cancelled_does_not_exit_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """STR-05 proved, every other property's solver calls cancelled: the proof of one is no verdict on the
    others."""
    import rollcheck.smt.prove as smt_prove

    real, real_symbolic = smt_prove.prove, smt_prove.symbolic

    def cancel_all_but_str05(sym: Any, pid: str, depth: int, timeout: float | None, **kw: Any) -> Any:
        return real(sym, pid, depth, timeout if pid == "STR-05" else 0.0001, **kw)

    def two_properties(ts: Any) -> Any:  # two properties: seconds, not tens of them
        sym = real_symbolic(ts)
        sym.encoded = lambda: ["STR-01", "STR-05"]
        return sym

    monkeypatch.setattr(smt_prove, "prove", cancel_all_but_str05)
    monkeypatch.setattr(smt_prove, "symbolic", two_properties)
    assert main([*PROVE, "--depth", "2", "--out", str(tmp_path)]) == ExitCode.INCONCLUSIVE
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    status = {r["property"]: r["status"] for r in doc["results"]}
    assert status["STR-05"] == "proved" and "refuted" not in status.values()
    assert doc["not_checked"] and "STR-05" not in doc["not_checked"]
    assert doc["not_checked"] == [p for p, s in status.items() if s == "unknown"]
    line = _one_line(captured.err)
    assert all(p in line for p in doc["not_checked"]) and "STR-05" not in line


# --------------------------------------------------------------------------- conform


def test_conform_with_every_pair_skipped_is_not_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """streams_probing's kafka-latest names a release only the kafka profile knows: under kip, no pair is left."""
    argv = ["conform", "streams_probing", "--config", "kafka-latest", "--profile", "kip", "--quiet",
            "--out", str(tmp_path)]
    assert main(argv) == ExitCode.INCONCLUSIVE
    err = capsys.readouterr().err
    assert "rollcheck: inconclusive: every config/profile pair was skipped" in err and "nothing was checked" in err
    [summary] = tmp_path.glob("*-conformance.json")
    doc = json.loads(summary.read_text())
    assert doc["ok"] is False and doc["reports"] == [] and "nothing was checked" in doc["reason"]
    assert [(s["config"], s["profile"]) for s in doc["skipped"]] == [("kafka-latest", "kip")]


def test_conform_on_spark_with_every_pair_skipped_is_inconclusive_before_spark_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import rollcheck.spark.session as session

    def no_spark(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("Spark was started for a run with nothing to check")

    monkeypatch.setattr(session, "get_session", no_spark)
    argv = ["conform", "streams_probing", "--config", "kafka-latest", "--profile", "kip", "--engine", "spark",
            "--quiet", "--out", str(tmp_path)]
    assert main(argv) == ExitCode.INCONCLUSIVE
    assert "every config/profile pair was skipped" in capsys.readouterr().err
    [summary] = tmp_path.glob("*-conformance-spark.json")
    assert json.loads(summary.read_text())["ok"] is False


def test_two_conform_runs_into_one_out_keep_each_others_results(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks themselves (TLC runs, minutes) are replaced: what is tested is where the results go."""
    from rollcheck.cli.commands import conform_cmd
    from rollcheck.tla.conformance import ConformanceReport

    def fake(binding: Any, _spec_ts: Any, ts: Any, directory: Path, *, config_name: str, **_kw: Any) -> Any:
        directory.mkdir(parents=True, exist_ok=True)
        return ConformanceReport(binding.protocol, config_name, ts.config.profile, replayed_traces=1)

    monkeypatch.setattr(conform_cmd, "conform", fake)
    for config in ("small", "default"):
        assert main(["conform", "zk_migration", "--config", config, "--profile", "kip", "--quiet",
                     "--out", str(tmp_path)]) == 0
    small = json.loads((tmp_path / "zk_migration-small-kip-conformance.json").read_text())
    default = json.loads((tmp_path / "zk_migration-default-kip-conformance.json").read_text())
    assert [r["config"] for r in small["reports"]] == ["small"] and small["ok"]
    assert [r["config"] for r in default["reports"]] == ["default"] and default["ok"]
    assert (tmp_path / "zk_migration-small-kip" / "conformance.json").is_file()
    assert (tmp_path / "zk_migration-default-kip" / "conformance.json").is_file()


# --------------------------------------------------------------------------- mutants


def _apalache_installed() -> bool:
    from rollcheck.core.errors import ToolUnavailable
    from rollcheck.tla.apalache import find_apalache

    try:
        find_apalache()
    except ToolUnavailable:
        return False
    return True


@pytest.mark.skipif(_apalache_installed(), reason="Apalache is installed here")
def test_mutants_with_a_checker_not_installed_checks_nothing_and_says_so(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["mutants", "--protocol", "streams_probing", "--checker", "apalache", "--out", str(out)]) == \
        ExitCode.TOOL_UNAVAILABLE
    captured = capsys.readouterr()
    line = _one_line(captured.err)
    assert "Apalache is not installed" in line and "nothing was checked" in line
    assert "SURVIVED" not in captured.out and not (out / "mutants.json").exists()


@pytest.mark.skipif(_apalache_installed(), reason="Apalache is installed here")
def test_mutants_leave_out_a_checker_not_installed_beside_one_that_runs(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", "--protocol", "streams_probing", "--checker", "explore", "--checker", "apalache",
                 "--parallel", "1", "--quiet", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "Apalache is not installed" in err and "not run" in err
    doc = json.loads((tmp_path / "mutants.json").read_text())
    assert doc["checkers"] == ["explore"] and "apalache" in doc["not_run"]
    assert doc["scores"]["survivors"] == [] and doc["scores"]["not_checked"] == []


def test_a_variant_no_checker_ran_on_is_not_checked_not_survived() -> None:
    from rollcheck.gate.mutants import Kill, MutantOutcome, scores

    skipped = MutantOutcome("p", "P-M1", "story", (), "small", [Kill("z3", False, [], 0.0, "skipped", "no encoding")])
    survived = MutantOutcome("p", "P-M2", "story", (), "small", [Kill("explore", False, [], 0.1, "ok"),
                                                                 Kill("z3", False, [], 0.0, "skipped")])
    killed = MutantOutcome("p", "P-M3", "story", (), "small", [Kill("explore", True, ["P-01"], 0.1, "violated")])
    s = scores([skipped, survived, killed])
    assert s["survivors"] == ["p:P-M2"] and s["not_checked"] == ["p:P-M1"]
    assert s["per_checker"]["z3"]["run"] == 0 and s["per_checker"]["explore"] == {"run": 2, "killed": 1,
                                                                                  "score": 0.5}
    assert not skipped.checked and survived.checked and skipped.to_json()["checked"] is False


# --------------------------------------------------------------------------- replay


@pytest.fixture(scope="module")
def counterexample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """FEAT-M1's counterexample on features:small (3 states: Init, ElectController, UpdateFeatures)."""
    out = tmp_path_factory.mktemp("explore")
    assert main(["explore", "features", "--variant", "FEAT-M1", "--config", "small", "--quiet",
                 "--out", str(out)]) == ExitCode.VIOLATION
    return out / "features-small-kip-FEAT-M1-local"


def _edited(src: Path, dest: Path, keep: list[int]) -> Path:
    doc = json.loads(src.read_text())
    assert len(doc["states"]) == 3
    doc["states"] = [doc["states"][i] for i in keep]
    dest.write_text(json.dumps(doc))
    return dest


def test_replay_of_a_trace_that_does_not_start_at_an_initial_state(counterexample: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    cut = _edited(counterexample / "counterexamples" / "FEAT-01.itf.json", tmp_path / "cut.itf.json", [1, 2])
    assert main(["replay", str(cut)]) == ExitCode.DISAGREEMENT
    out = capsys.readouterr().out
    assert str(cut) in out and "does not start at an initial state" in out and "FEAT-01 fails" not in out
    assert main(["replay", str(cut), "--json"]) == ExitCode.DISAGREEMENT
    [doc] = json.loads(capsys.readouterr().out)["traces"]
    assert doc["path"] == str(cut) and doc["reproduced"] is False and doc["replays"] is False
    assert "does not start at an initial state" in doc["divergence"]


def test_replay_of_a_trace_whose_later_step_is_no_transition(counterexample: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    skip = _edited(counterexample / "counterexamples" / "FEAT-01.itf.json", tmp_path / "skip.itf.json", [0, 2])
    assert main(["replay", str(skip)]) == ExitCode.DISAGREEMENT
    out = capsys.readouterr().out
    assert str(skip) in out and "does not replay: step 1: no enabled action leads to the recorded state" in out


def test_replay_does_not_say_every_property_holds_when_one_was_not_checked(
        counterexample: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import rollcheck.explore.replay as replay

    witness = counterexample / "witnesses" / "FEAT-W5.itf.json"
    assert main(["replay", str(witness)]) == 0  # nothing fails, everything checked
    assert "every property holds" in capsys.readouterr().out
    monkeypatch.setattr(replay, "GRAPH_REPLAY_LIMIT", 2)  # the graph property FEAT-10 cannot be decided
    assert main(["replay", str(witness)]) == ExitCode.INCONCLUSIVE
    captured = capsys.readouterr()
    assert "every property holds" not in captured.out and "FEAT-10 not checked" in captured.out
    line = _one_line(captured.err)
    assert line.startswith("rollcheck: inconclusive: ") and "FEAT-10" in line
