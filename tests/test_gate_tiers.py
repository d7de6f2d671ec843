"""The gate's tiers (what each plan covers), its parallel cells (same outputs as sequential, a dying checker
process is one error cell) and the fuzzing checker of the nightly tier."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from rollcheck.checkers import (
    CheckContext,
    all_checkers,
    available_checkers,
    get_checker,
    tier_checkers,
    variant_checkers,
)
from rollcheck.checkers.z3options import decisions
from rollcheck.core.errors import ExitCode, UserError
from rollcheck.core.registry import get_protocol, protocol_names
from rollcheck.gate import (
    GateConfig,
    default_gate_config,
    load_gate_config,
    plan_cells,
    run_gate,
)
from rollcheck.gate.cellrun import Cell
from rollcheck.gate.mutants import run_mutants
from rollcheck.gate.reports import write_outputs
from tests.terminal import as_from_a_terminal
from tests.toy import PROTOCOL, ToyConfig, ToySystem


def test_ci_tier_runs_every_protocol_profile_and_checker_kind(tmp_path: Path) -> None:
    cfg = default_gate_config(tmp_path)
    assert cfg.tier == "ci"
    cells, _skipped = plan_cells(cfg)
    reference = [c for c in cells if c.variant is None]
    kinds = {c.checker for c in reference}
    assert kinds == set(tier_checkers("ci"))
    ci_sized = {c.name for c in all_checkers() if c.capabilities.ci_configs_only}
    assert ci_sized == {"spark", "tlc", "conform", "kafka"} & set(available_checkers())
    for proto in protocol_names():
        assert {c.config.profile for c in reference if c.entry.name == proto} == set(get_protocol(proto).profiles)
        for profile in get_protocol(proto).profiles:
            mine = [c for c in reference if c.entry.name == proto and c.config.profile == profile]
            assert {c.checker for c in mine} == kinds, (proto, profile)
            # TLC, conformance and Spark on the small config, where the explorer also runs (counts compared)
            # and Z3 compares its relation with the reference on every reachable state (the differential
            # alone); the explorer, Hypothesis and Z3 on the gate config.
            # The story configs (ProtocolEntry.story_configs) through the explorer, and the Z3 relation compared
            # with the reference on every state of each (the differential alone, as on small).
            entry = get_protocol(proto)
            assert set(entry.story_configs) == set(cfg.story_configs[proto])
            # each story under the profiles it is valid for (streams' 3.9 story: kafka alone)
            stories = {s for s in entry.story_configs if profile in entry.config_profiles(entry.configs[s])}
            # Conformance also on each conformance config (ProtocolEntry.conform_configs), and nothing else there:
            # a view field no other config sets (streams: upgrade.from, a failure's kind).
            conforming = {s for s in entry.conform_configs if profile in entry.config_profiles(entry.configs[s])}
            assert set(entry.conform_configs) == set(cfg.conform_configs[proto])
            assert {c.label for c in mine if c.checker == "conform"} == {"small", *conforming}
            # (a story config may be a conformance config too: conformance beside its explorer and Z3 cells)
            only = conforming - stories
            assert {c.checker for c in mine if c.label in only} == ({"conform"} if only else set())
            rest = [c for c in mine if c.label not in only and not (c.label in conforming and c.checker == "conform")]
            for c in rest:
                assert (c.label == "small") == (c.checker in ci_sized) or c.checker in ("explore", "z3")
                assert c.differential_only == (c.checker == "z3" and c.label in ("small", *stories))
                # the decision rules once per protocol and profile
                assert c.checker != "z3" or decisions(c.settings) == (c.label == "small")
            assert {c.label for c in mine if c.checker == "z3"} == {"small", cfg.configs[proto][0], *stories}
            assert {c.label for c in mine if c.checker == "explore"} == {"small", cfg.configs[proto][0], *stories}
            for story in stories:
                assert {c.checker for c in mine if c.label == story} == {"explore", "z3"} | (
                    {"conform"} if story in conforming else set())
    # Every broken variant through the explorer, and the Z3 relation compared with the reference where each
    # steps otherwise than the reference (no proof, no decision rules: the reference's cells run those).
    variants = {(c.entry.name, c.variant) for c in cells if c.variant}
    assert variants == {(p, v.id) for p in protocol_names() for v in get_protocol(p).variants}
    assert {c.checker for c in cells if c.variant and not c.differential_only} == {"explore"}
    compared = [c for c in cells if c.variant and c.differential_only]
    assert {(c.entry.name, c.variant) for c in compared} == variants
    assert {c.checker for c in compared} == {"z3"} and not any(decisions(c.settings) for c in compared)


def test_ci_tier_kills_every_variant_the_nightly_tier_runs(tmp_path: Path) -> None:
    ci, nightly = default_gate_config(tmp_path, "ci"), default_gate_config(tmp_path, "nightly")
    ci_cells, _ = plan_cells(ci)
    nightly_cells, _ = plan_cells(nightly)
    ci_variants = {(c.entry.name, c.variant) for c in ci_cells if c.variant}
    nightly_variants = {(c.entry.name, c.variant) for c in nightly_cells if c.variant}
    assert ci_variants == nightly_variants
    # (the nightly tier's z3 variant cells prove and compare under the variant's own profile; its other profiles
    # get a differential-only cell each, as in the ci tier, which has them all)
    nightly_compared = {(c.entry.name, c.variant, c.config.profile) for c in nightly_cells
                        if c.variant and c.differential_only}
    nightly_own = {(c.entry.name, c.variant, c.config.profile) for c in nightly_cells
                   if c.variant and c.checker == "z3" and not c.differential_only}
    ci_compared = {(c.entry.name, c.variant, c.config.profile) for c in ci_cells if c.variant and c.differential_only}
    assert nightly_compared | nightly_own == ci_compared and not nightly_compared & nightly_own
    assert {c.checker for c in nightly_cells if c.variant} == {
        c for c in variant_checkers() if c in available_checkers()}
    assert variant_checkers() == ["explore", "hypothesis", "z3", "tlc", "spark"]  # cheapest first
    # The nightly tier's verdict on a variant is "killed" when any checker kills it: the ci tier's checkers
    # alone kill every one, so the fast tier loses no detection.
    outcomes = run_mutants(ci.protocols, ci.mutant_checkers, CheckContext(out_dir=tmp_path), parallel=2)
    assert {(o.protocol, o.variant) for o in outcomes} == ci_variants
    assert [f"{o.protocol}:{o.variant}" for o in outcomes if not o.killed] == []


def test_nightly_tier_is_the_full_matrix_with_a_fuzzing_round(tmp_path: Path) -> None:
    cfg = default_gate_config(tmp_path, "nightly")
    cells, _ = plan_cells(cfg)
    reference = [c for c in cells if c.variant is None]
    # every checker on the gate config and on the story configs; conformance also on the conformance configs
    assert all(c.label in (cfg.configs[c.entry.name][0], *cfg.story_configs[c.entry.name]) for c in reference
               if c.label not in cfg.conform_configs[c.entry.name])
    conform_only = {p: set(cfg.conform_configs[p]) - set(cfg.story_configs[p]) for p in cfg.protocols}
    assert {(c.entry.name, c.label, c.checker) for c in reference if c.label in conform_only[c.entry.name]} \
        == {(p, s, "conform") for p in cfg.protocols for s in conform_only[p]}
    assert {(c.entry.name, c.label) for c in reference if c.checker == "conform"} >= {
        (p, s) for p in cfg.protocols for s in cfg.conform_configs[p]}
    assert {(c.entry.name, c.label, c.checker) for c in reference if c.label in cfg.story_configs[c.entry.name]} \
        == {(c.entry.name, s, c.checker) for c in reference if c.label == cfg.configs[c.entry.name][0]
            and c.checker != "cluster" for s in cfg.story_configs[c.entry.name]}
    assert "fuzz" in {c.checker for c in reference} and cfg.context["options"]["fuzz_minutes"] > 0
    # The cluster scenarios: once per protocol, on its gate config under the kafka profile (they name their own
    # runbooks and releases); the ci tier has none (CI runs one scenario as a test).
    assert sorted((c.entry.name, c.label, c.config.profile) for c in reference if c.checker == "cluster") == sorted(
        (p, cfg.configs[p][0], "kafka") for p in cfg.protocols)
    assert "cluster" not in tier_checkers("ci")


def test_tier_is_a_gate_config_key_and_the_flag_wins(tmp_path: Path) -> None:
    toml = tmp_path / "g.toml"
    toml.write_text("[gate]\ntier = 'nightly'\nprotocols = ['streams_probing']\nparallel = 1\n"
                    "options = { fuzz_minutes = 0.1 }\n")
    cfg = load_gate_config(toml, tmp_path)
    assert cfg.tier == "nightly" and "fuzz" in cfg.checkers and cfg.parallel == 1
    assert cfg.context["options"]["fuzz_minutes"] == 0.1
    assert load_gate_config(toml, tmp_path, "ci").tier == "ci"
    for text, msg in [("[gate]\ntier = 'weekly'\n", "'tier' must be one of"),
                      ("[gate]\nparallel = 0\n", "'parallel' must be a positive integer"),
                      ("[gate]\nci_configs = 3\n", "'ci_configs' must be"),
                      ("[gate]\nconform_configs = 'small'\n", "'conform_configs' must be")]:
        toml.write_text(text)
        with pytest.raises(UserError, match=msg):
            load_gate_config(toml, tmp_path)
    # conform_configs: the registration's by default, a file's table per protocol (an empty list: none)
    toml.write_text("[gate]\nprotocols = ['streams_probing']\n")
    assert load_gate_config(toml, tmp_path).conform_configs == {"streams_probing": [
        "operator-from-1.1", "operator-from-2.0", "operator-from-0.10.1"]}
    toml.write_text("[gate]\nprotocols = ['streams_probing']\nconform_configs = { streams_probing = [] }\n")
    cfg = load_gate_config(toml, tmp_path)
    cells, _ = plan_cells(cfg)
    assert cfg.conform_configs == {"streams_probing": []} and not any(c.label.startswith("operator-from-")
                                                                      for c in cells)


def _toy_cfg(out: Path, parallel: int, checkers: list[str] | None = None) -> GateConfig:
    return GateConfig(["toy"], {"toy": ["small", "default"]}, ["kip", "kafka"], checkers or ["explore", "hypothesis"],
                      out, {"hypothesis_examples": 30, "hypothesis_steps": 10}, mutants=True,
                      mutant_checkers=["explore", "hypothesis"], parallel=parallel)


def _comparable(doc: dict[str, Any]) -> Any:
    """A summary without what depends on timing (seconds, rates)."""
    timing = {"elapsed_seconds", "seconds", "states_per_second", "actual_seconds", "estimated_seconds",
              "estimated_wall_seconds", "parallel", "estimates_from"}
    if isinstance(doc, dict):
        return {k: _comparable(v) for k, v in doc.items() if k not in timing}
    if isinstance(doc, list):
        return [_comparable(v) for v in doc]
    return doc


def test_parallel_cells_give_the_sequential_outputs(tmp_path: Path) -> None:
    docs = []
    for parallel in (1, 2):
        out = tmp_path / f"p{parallel}"
        result = run_gate(_toy_cfg(out, parallel), lookup=lambda _n: PROTOCOL)
        assert result.exit_code == ExitCode.OK, result.findings
        write_outputs(result, out)
        doc = json.loads((out / "summary.json").read_text())
        assert doc["tier"] == "ci" and doc["plan"]["parallel"] == parallel
        docs.append(_comparable(doc))
        assert "id='summary'" in (out / "report.html").read_text() and "tier <b>ci</b>" in (
            out / "report.html").read_text()
    assert docs[0] == docs[1]
    # Every cell's id, in plan order, with its actual time.
    rows = json.loads((tmp_path / "p2" / "summary.json").read_text())["plan"]["cells"]
    assert rows[0]["id"] == "toy/small/kip/explore" and all(r["actual_seconds"] is not None for r in rows)


def test_a_checker_process_that_dies_is_one_error_cell(tmp_path: Path) -> None:
    def build(config: Any) -> ToySystem:
        if config.profile == "kafka":
            os._exit(7)  # what Z3's native abort does to its process
        return ToySystem(config)

    entry = dataclasses.replace(PROTOCOL, build=build)
    cfg = dataclasses.replace(_toy_cfg(tmp_path, 2, ["explore"]), mutants=False)
    result = run_gate(cfg, lookup=lambda _n: entry)
    by_profile = {(r.config, r.profile): r for r in result.reports}
    assert by_profile[("small", "kip")].status == "ok" and by_profile[("default", "kip")].status == "ok"
    dead = by_profile[("small", "kafka")]
    assert dead.status == "error" and "exit code 7" in dead.message
    assert result.exit_code == ExitCode.RUN_FAILED


def test_fuzz_checker_finds_the_broken_variant_and_holds_on_the_reference(tmp_path: Path) -> None:
    fuzz = get_checker("fuzz")
    ctx = CheckContext(out_dir=tmp_path, options={"fuzz_minutes": 0.05})
    cell = Cell(PROTOCOL, "small", ToyConfig(bound=3), "fuzz")
    good = fuzz.run(cell, ctx)
    assert good.status == "ok" and good.properties["TOY-01"].status == "holds"
    bad = fuzz.run(dataclasses.replace(cell, variant="TOY-M1"), dataclasses.replace(ctx, variant="TOY-M1"))
    assert bad.status == "violated" and bad.properties["TOY-01"].trace is not None
    assert list((tmp_path / "traces").rglob("TOY-01.itf.json"))


def test_ctrl_c_stops_a_parallel_gate_with_exit_130_and_leaves_no_worker(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "rollcheck", "gate", "--protocol", "streams_probing",
                             "--checker", "z3", "--checker", "explore", "--parallel", "2", "--out", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=as_from_a_terminal)
    time.sleep(6.0)  # inside the Z3 cells (about 20 s each)
    assert proc.poll() is None
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole process group
    _, stderr = proc.communicate(timeout=90)
    stuck = re.search(r"where it was stuck: (\S+)\)", stderr)  # the hard stop names the main thread's stack
    assert proc.returncode == 130, stderr + (Path(stuck.group(1)).read_text() if stuck else "")
    assert stuck is None, stderr + Path(stuck.group(1)).read_text()
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("rollcheck: interrupted; no report was written") and "Traceback" not in stderr
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True, check=False).stdout
    assert left.strip() == ""
    assert not (tmp_path / "summary.json").exists()  # an interrupted gate writes no report
    # ... and what its cells wrote is in the manifest, so the next gate removes it
    from rollcheck.runtime.rundir import MANIFEST
    assert isinstance(json.loads((tmp_path / MANIFEST).read_text())["written"], list)


def test_sigterm_stops_a_parallel_gate_with_exit_143_and_one_line(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "rollcheck", "gate", "--protocol", "streams_probing",
                             "--checker", "z3", "--parallel", "2", "--quiet", "--out", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=as_from_a_terminal)
    time.sleep(6.0)
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)  # as a CI runner's timeout does: the main process only
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143 and stderr.strip().startswith("rollcheck: terminated; no report was written")
    assert len(stderr.strip().splitlines()) == 1
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True, check=False).stdout
    assert left.strip() == ""


def test_a_second_run_into_the_same_directory_is_refused(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from rollcheck.cli import main
    from rollcheck.runtime.outlock import output_lock

    argv = ["gate", "--protocol", "streams_probing", "--checker", "explore", "--quiet", "--out", str(tmp_path)]
    with output_lock(tmp_path):  # as a gate in another process holds it
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is in use by another rollcheck run (pid " in err[0], err
        assert not (tmp_path / "summary.json").exists()
    # released with the holder (the kernel releases it however the holder ends): the run goes ahead
    assert main(argv) == 0


def test_the_gate_removes_what_it_wrote_before_and_nothing_else(tmp_path: Path) -> None:
    from rollcheck.runtime.rundir import MANIFEST, clear_previous_run

    (tmp_path / "notes.txt").write_text("the user's")
    cfg = dataclasses.replace(_toy_cfg(tmp_path, 1), mutants=False)
    write_outputs(run_gate(cfg, lookup=lambda _n: PROTOCOL), tmp_path)
    written = json.loads((tmp_path / MANIFEST).read_text())["written"]
    assert {"summary.json", "junit.xml", "report.html"} <= set(written) and "notes.txt" not in written
    stale = tmp_path / "traces" / "old-run" / "TOY-01.itf.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    (tmp_path / "summary.json").write_text('{"verdict": "stale"}')
    written_again = set(written) | {"traces"}
    (tmp_path / MANIFEST).write_text(json.dumps({"written": sorted(written_again)}))
    write_outputs(run_gate(cfg, lookup=lambda _n: PROTOCOL), tmp_path)
    assert not stale.exists() and (tmp_path / "notes.txt").read_text() == "the user's"
    assert json.loads((tmp_path / "summary.json").read_text())["verdict"] == "OK"
    # A run interrupted after its start leaves no earlier report that looks current.
    removed, left = clear_previous_run(tmp_path)
    assert "summary.json" in removed and not (tmp_path / "summary.json").exists() and left == {"notes.txt"}
