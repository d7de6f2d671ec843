"""The gate on the toy protocol: outputs, exit codes, and how checker reports are compared."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rollcheck.checkers import HOLDS, VIOLATED, CheckerReport, PropertyVerdict
from rollcheck.core.errors import ExitCode, UserError
from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import ProtocolEntry
from rollcheck.gate import GateConfig, estimate_plan, findings_of, load_gate_config, plan_cells, run_gate
from rollcheck.gate.reports import write_outputs
from tests.toy import PROTOCOL, ToyConfig, ToySystem


def _broken_entry() -> ProtocolEntry:
    return ProtocolEntry("toy", "broken toy", ToyConfig, PROTOCOL.configs,
                         lambda c: ToySystem(ToyConfig(c.profile, c.bound, True)))


def _cfg(out: Path) -> GateConfig:
    return GateConfig(["toy"], {"toy": ["small"]}, ["kip", "kafka"], ["explore", "hypothesis"], out,
                      {"hypothesis_examples": 50, "hypothesis_steps": 15})


def test_gate_green_writes_all_outputs(tmp_path: Path) -> None:
    result = run_gate(_cfg(tmp_path), lookup=lambda _n: PROTOCOL)
    assert result.exit_code == ExitCode.OK, result.findings
    paths = write_outputs(result, tmp_path)
    summary = json.loads(Path(paths["summary"]).read_text())
    assert summary["verdict"] == "OK" and len(summary["reports"]) == 4
    suites = ET.parse(paths["junit"]).getroot()
    cases = suites.findall(".//testcase")
    # 3 properties x 2 checkers x 2 profiles
    assert len(cases) == 12
    assert not suites.findall(".//failure")
    assert "TOY-01" in Path(paths["html"]).read_text()


def test_dry_run_plan_is_the_run_and_estimates_from_the_last_one(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    cells, skipped = plan_cells(cfg, lambda _n: PROTOCOL)
    before = estimate_plan(cfg, cells)
    assert before["estimates_from"] is None and before["estimated_seconds"] is None
    assert before["unestimated_cells"] == len(cells) == 4 and not skipped
    result = run_gate(cfg, lookup=lambda _n: PROTOCOL)
    # The plan is exactly what the run did, in the same order.
    assert [c.key for c in cells] == [(r.protocol, r.config, r.profile, r.checker) for r in result.reports]
    write_outputs(result, tmp_path)
    after = estimate_plan(cfg, cells)
    assert after["unestimated_cells"] == 0 and after["estimates_from"] == str(tmp_path / "summary.json")
    assert result.plan is not None
    assert [c["estimated_seconds"] for c in after["cells"]] == [c["actual_seconds"] for c in result.plan["cells"]]


def test_gate_dry_run_command_runs_nothing(tmp_path: Path) -> None:
    out = tmp_path / "gate"
    proc = subprocess.run([sys.executable, "-m", "rollcheck", "gate", "--dry-run", "--json", "--out", str(out),
                           "--protocol", "streams_probing", "--checker", "explore", "--checker", "z3"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["tier"] == "ci"
    profiles = ("kip", "kafka", "kafka-2.0")  # streams_probing's own
    assert [(c["config"], c["profile"], c["checker"]) for c in plan["cells"] if c["variant"] is None] == \
        [("default", profile, checker) for profile in profiles for checker in ("explore", "z3")] + \
        [("small", profile, "z3") for profile in profiles] + \
        [(story, profile, checker) for story in ("pre20", "from-0.10.0") for profile in profiles
         for checker in ("explore", "z3")] + \
        [(story, "kafka", checker) for story in ("misconfigured-upgrade-from", "kafka-latest")
         for checker in ("explore", "z3")]  # 3.9: kafka alone
    # z3 on small and on the stories: the successor differential alone, on every reachable state
    assert [c["config"] for c in plan["cells"] if c["variant"] is None and c["differential_only"]] == \
        ["small"] * 3 + ["pre20"] * 3 + ["from-0.10.0"] * 3 + ["misconfigured-upgrade-from", "kafka-latest"]
    # then every broken variant of the protocol through the explorer (to be caught), and through Z3's successor
    # differential alone (to agree where it steps otherwise than the reference)
    n = len(get_protocol("streams_probing").variants)
    assert [c["checker"] for c in plan["cells"] if c["variant"] and not c["differential_only"]] == ["explore"] * n
    # (under every profile: STR-M8 fixes its own, kafka; every other variant's config runs under all three)
    compared = [c for c in plan["cells"] if c["variant"] and c["differential_only"]]
    assert {c["checker"] for c in compared} == {"z3"} and len(compared) == 3 * n - 2
    assert {c["profile"] for c in compared if c["variant"] == "STR-M4"} == set(profiles)
    assert not out.exists()  # nothing ran, nothing written


def test_a_profile_runs_only_on_the_protocols_that_have_it(tmp_path: Path) -> None:
    """Profiles are per protocol (ProtocolEntry.profiles): the gate's profile list is their union, each cell
    under a profile its protocol has; an unknown profile is still an error."""
    import dataclasses

    extra = dataclasses.replace(PROTOCOL, name="toy3", profiles=("kip", "kafka", "extra"))
    entries = {"toy": PROTOCOL, "toy3": extra}
    cfg = GateConfig(["toy", "toy3"], {"toy": ["small"], "toy3": ["small"]}, ["kip", "kafka", "extra"],
                     ["explore"], tmp_path)
    cells, _ = plan_cells(cfg, entries.__getitem__)
    assert [(c.entry.name, c.config.profile) for c in cells if c.variant is None] == [
        ("toy", "kip"), ("toy", "kafka"), ("toy3", "kip"), ("toy3", "kafka"), ("toy3", "extra")]
    with pytest.raises(ValueError, match="profiles must be a non-empty tuple of distinct names"):
        dataclasses.replace(PROTOCOL, profiles=("kip", "kip"))
    assert extra.profile_problem("extra") is None
    assert PROTOCOL.profile_problem("extra") == "protocol toy has no profile 'extra'; its profiles: kip, kafka"


def test_the_default_gate_runs_each_protocol_under_its_own_profiles(tmp_path: Path) -> None:
    cfg = load_gate_config(None, tmp_path)
    cells, _ = plan_cells(cfg)
    for name in cfg.protocols:
        entry = get_protocol(name)
        assert {c.config.profile for c in cells if c.entry.name == name and c.variant is None} == set(entry.profiles)
    assert set(cfg.profiles) == {p for name in cfg.protocols for p in get_protocol(name).profiles}


def test_gate_violation_has_trace_in_junit_and_itf(tmp_path: Path) -> None:
    result = run_gate(_cfg(tmp_path), lookup=lambda _n: _broken_entry())
    assert result.exit_code == ExitCode.VIOLATION
    paths = write_outputs(result, tmp_path)
    failures = ET.parse(paths["junit"]).getroot().findall(".//failure")
    assert failures and all("IncA" in (f.text or "") for f in failures)
    itf = sorted((tmp_path / "traces").rglob("TOY-01.itf.json"))
    assert len(itf) == 4  # explore and hypothesis, both profiles
    doc = json.loads(itf[0].read_text())
    assert doc["#meta"]["property"] == "TOY-01"


def _report(checker: str, status: str, exhaustive: bool, distinct: int) -> CheckerReport:
    r = CheckerReport(checker, "toy", "small", "kip", exhaustive=exhaustive)
    r.properties["TOY-01"] = PropertyVerdict("TOY-01", status)
    r.counts = {"distinct_states": distinct}
    return r


def test_disagreements_are_found() -> None:
    # counts differ between exhaustive checkers
    pair = [_report("explore", HOLDS, True, 10), _report("spark", HOLDS, True, 11)]
    kinds = {f.kind for f in findings_of(pair)}
    assert kinds == {"disagreement"}
    # a violation where an exhaustive checker says it holds
    fs = findings_of([_report("explore", HOLDS, True, 10), _report("hypothesis", VIOLATED, False, 0)])
    assert {f.kind for f in fs} == {"violation", "disagreement"}
    # a violation an incomplete checker missed is not a disagreement
    fs = findings_of([_report("explore", VIOLATED, True, 10), _report("hypothesis", HOLDS, False, 0)])
    assert {f.kind for f in fs} == {"violation"}
    # two engines over the same graph that name different dead actions
    a, b = _report("explore", HOLDS, True, 10), _report("tlc", HOLDS, True, 10)
    a.stats["actions"] = {"never_taken": ["Crash"]}
    b.stats["actions"] = {"never_taken": []}
    (f,) = findings_of([a, b])
    assert f.kind == "disagreement" and "actions never taken: explore says Crash, tlc says none" in f.message
    b.stats["actions"] = {"never_taken": ["Crash"]}
    assert findings_of([a, b]) == []
    # a checker whose own copy of the rules (spec, Z3 relation) steps differently from the reference
    diverged = _report("conform", HOLDS, False, 0)
    diverged.status, diverged.message = "diverged", "spec and reference diverge: ..."
    (f,) = findings_of([diverged])
    assert f.kind == "disagreement" and f.checker == "conform"


def test_gate_config_errors(tmp_path: Path) -> None:
    bad = tmp_path / "g.toml"
    for text, msg in [("[gate]\nprofiles = ['zk']\n", "unknown profile"),
                      ("[gate]\ncheckers = ['nope']\n", "unknown checker"),
                      ("[gate]\nbogus = 1\n", "unknown \\[gate\\] keys"),
                      ("[gate\n", "malformed gate config")]:
        bad.write_text(text)
        with pytest.raises(UserError, match=msg):
            load_gate_config(bad, tmp_path)
    with pytest.raises(UserError, match="not found"):
        load_gate_config(tmp_path / "missing.toml", tmp_path)


def test_mutants_are_killed_and_scored(tmp_path: Path) -> None:
    from rollcheck.checkers import CheckContext
    from rollcheck.gate.mutants import run_mutants, scores

    ctx = CheckContext(out_dir=tmp_path, options={"hypothesis_examples": 100, "hypothesis_steps": 15})
    outcomes = run_mutants(["toy"], ["explore", "hypothesis"], ctx, lookup=lambda _n: PROTOCOL)
    assert [o.variant for o in outcomes] == ["TOY-M1"]
    assert outcomes[0].killed and outcomes[0].first_killer is not None
    s = scores(outcomes)
    assert s["score"] == 1.0 and s["per_checker"]["explore"] == {"run": 1, "killed": 1, "score": 1.0}
    assert {k.checker: k.properties for k in outcomes[0].kills}["explore"] == ["TOY-01"]


def test_fuzz_finds_shrinks_and_replays_from_its_database(tmp_path: Path) -> None:
    from rollcheck.fuzzing.fuzz import fuzz_hypothesis

    broken = PROTOCOL.variant("TOY-M1").build(ToyConfig(bound=3))
    r = fuzz_hypothesis(broken, out_dir=tmp_path, minutes=0.5, seed=7, examples_per_round=100, steps=15)
    assert r.violation is not None and r.violation["property"] == "TOY-01"
    assert r.violation["length"] == 2  # shrunk to the shortest run: IncB, IncA
    assert json.loads((tmp_path / "counterexample.itf.json").read_text())["#meta"]["property"] == "TOY-01"
    assert (tmp_path / "hypothesis-db").is_dir()
    # A second campaign on the same directory replays the saved failure in its first round.
    again = fuzz_hypothesis(broken, out_dir=tmp_path, minutes=0.5, seed=8, examples_per_round=1, steps=15)
    assert again.violation is not None and again.rounds == 1
    ok = fuzz_hypothesis(ToySystem(ToyConfig(bound=3)), out_dir=tmp_path / "ok", minutes=0.01, seed=1,
                         examples_per_round=20, steps=10)
    assert ok.violation is None and ok.rounds >= 1
    assert json.loads((tmp_path / "ok" / "fuzz-summary.json").read_text())["violation"] is None


def test_spark_is_skipped_above_its_limit_once_the_explorer_counted(tmp_path: Path) -> None:
    """The gate's explorer counts a config first; above ``spark_max_states`` the Spark engine is skipped with
    a message saying how to run it (no Spark session is started, so this test needs no Java)."""
    cfg = GateConfig(["toy"], {"toy": ["small"]}, ["kip"], ["explore", "spark"], tmp_path,
                     {"options": {"spark_max_states": 1}})
    result = run_gate(cfg, lookup=lambda _n: PROTOCOL)
    spark = next(r for r in result.reports if r.checker == "spark")
    explored = next(r for r in result.reports if r.checker == "explore")
    assert explored.counts["distinct_states"] > 1
    assert spark.status == "skipped" and "spark_max_states = 1" in spark.message
    assert "--engine spark" in spark.message
    assert result.exit_code == ExitCode.OK
