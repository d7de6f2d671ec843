"""The TLA+ tooling without running TLC: TLC's value and output syntax, the Apalache runner and its ITF
parser (Apalache is not installable here: its output is read from ITF files in tests/data), the drift
check, and the commands' errors."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from rollcheck.cli import main
from rollcheck.core.errors import ToolUnavailable
from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import declared_property_ids
from rollcheck.explore.explorer import reachable_states
from rollcheck.tla import apalache
from rollcheck.tla.binding import SpecBinding, binding_for, spec_protocols
from rollcheck.tla.conformance import replay_spec_trace
from rollcheck.tla.drift import drift
from rollcheck.tla.tlc import parse_error_trace, parse_tlc_output
from rollcheck.tla.value import TlaSyntaxError, canonical_state, canonical_view_tla, parse_state, parse_value, to_tla

DATA = Path(__file__).parent / "data" / "apalache"


def test_tlc_values_and_the_tla_identifications() -> None:
    v = parse_value('<<[a |-> 1, b |-> {"x", "q\\"z"}], (1 :> TRUE @@ 2 :> FALSE), {}, <<>>, -3, m1>>')
    assert v["#tup"][0] == {"a": {"#bigint": "1"}, "b": {"#set": ["x", 'q"z']}}
    assert v["#tup"][5] == {"#modelvalue": "m1"}
    # A function on 1..n is a sequence, a function on strings a record, the empty function <<>>.
    assert canonical_state({"f": parse_value("(1 :> 5 @@ 2 :> 6)")}) == canonical_state({"f": parse_value("<<5, 6>>")})
    assert canonical_state({"r": parse_value('("a" :> 1)')}) == canonical_state({"r": parse_value("[a |-> 1]")})
    assert canonical_state({"e": parse_value("<<>>")}) == canonical_state({"e": {"#map": []}})
    assert canonical_state({"s": parse_value("{2, 1}")}) == canonical_state({"s": parse_value("{1, 2}")})
    assert canonical_view_tla({"x": (1, 2), "y": frozenset({"b", "a"})}) == canonical_state(
        parse_state('/\\ x = <<1, 2>>\n/\\ y = {"a", "b"}'))
    for bad in ("<<1, 2", "[a |-> ]", "{1 2}", "1 1"):
        with pytest.raises(TlaSyntaxError):
            parse_value(bad)
    assert to_tla({"b": 1}) == '("b" :> 1)' and to_tla(frozenset({3, 1})) == "{1, 3}"
    assert to_tla(None).startswith("[tag")


TLC_VIOLATION = """TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)
Starting... (2026-11-23 07:08:13)
Error: Invariant STR_06 is violated.
Error: The behavior up to this point is:
State 1: <Initial predicate>
/\\ x = 0
/\\ y = <<>>

State 2: <Inc line 6, col 8 to line 6, col 47 of module T>
/\\ x = 1
/\\ y = <<[a |-> 1,
  b |-> 2]>>

12 states generated, 9 distinct states found, 3 states left on queue.
The depth of the complete state graph search is 2.
Finished in 00s at (2026-11-23 07:08:13)
"""


def test_tlc_output_parser() -> None:
    res = parse_tlc_output(TLC_VIOLATION)
    assert (res.violated, res.generated_states, res.distinct_states, res.depth, res.ok) == ("STR_06", 12, 9, 2, False)
    assert [s.action for s in res.trace] == [None, "Inc"]
    assert res.trace[1].values["y"] == {"#tup": [{"a": {"#bigint": "1"}, "b": {"#bigint": "2"}}]}
    ok = parse_tlc_output("Model checking completed. No error has been found.\n"
                          "1,234 states generated, 1,000 distinct states found, 0 states left on queue.\n"
                          "The depth of the complete state graph search is 7.\nFinished in 01s at (x)\n")
    assert ok.ok and ok.distinct_states == 1000 and ok.depth == 7
    broken = parse_tlc_output("Error: Parsing or semantic analysis failed.\nUnknown operator Foo\n")
    assert not broken.ok and "Parsing or semantic analysis failed" in broken.error
    assert parse_error_trace("no trace here") == []


def test_apalache_itf_counterexample_replays_on_the_reference() -> None:
    steps = apalache.read_itf_trace(DATA / "violation1.itf.json")
    assert len(steps) == 7
    entry = get_protocol("streams_probing")
    ts = entry.build(entry.configs["no-upgrade-from"])
    trace, div = replay_spec_trace(ts, steps, "apalache", binding_for("streams_probing").actions)
    assert div is None and trace is not None
    assert [s.action.name for s in trace.steps[1:] if s.action] == [
        "Rebalance", "OnAssignment", "OnAssignment", "OnAssignment", "RollingBounce", "Rebalance"]
    assert any(x.failure for x in trace.steps[-1].state.instances)


def test_apalache_itf_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'vars' lists"):
        apalache.read_itf_trace(DATA / "bad-vars.itf.json")
    (tmp_path / "x.itf.json").write_text("{not json")
    with pytest.raises(ValueError, match="cannot read ITF trace"):
        apalache.read_itf_trace(tmp_path / "x.itf.json")
    (tmp_path / "y.itf.json").write_text(json.dumps({"vars": []}))
    with pytest.raises(ValueError, match="no 'states' list"):
        apalache.read_itf_trace(tmp_path / "y.itf.json")


def test_apalache_run_outcomes(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    assert apalache.parse_apalache_run("... The outcome is: NoError\n", 0, run_dir, "STR_05").ok
    failed = apalache.parse_apalache_run("Parsing error in MC.tla\n", 255, run_dir, "STR_05")
    assert not failed.ok and "exited with code 255" in failed.error
    shutil.copyfile(DATA / "violation1.itf.json", run_dir / "violation1.itf.json")
    found = apalache.parse_apalache_run("The outcome is: Error\n", 12, run_dir, "STR_06")
    assert found.violated == "STR_06" and len(found.trace) == 7
    cmd = apalache.apalache_command("apalache-mc", "check", "MC.tla", "MC.cfg", invariant="STR_06", length=8,
                                    run_dir=run_dir)
    assert cmd == ["apalache-mc", "check", "--config=MC.cfg", "--length=8", f"--run-dir={run_dir}",
                   "--inv=STR_06", "MC.tla"]
    sim = apalache.apalache_command("apalache-mc", "simulate", "MC.tla", "MC.cfg", invariant=None, length=5,
                                    run_dir=run_dir, max_run=20, seed=3)
    assert "--max-run=20" in sim and "--seed=3" in sim


def test_apalache_absent_is_a_clear_exit_4(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    monkeypatch.delenv("APALACHE_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolUnavailable, match="Apalache is not installed"):
        apalache.find_apalache()
    assert main(["apalache", "streams_probing"]) == 4
    err = capsys.readouterr().err
    assert "Apalache is not installed" in err and "Traceback" not in err


def test_commands_reject_a_protocol_without_a_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tlc", "no_such_protocol"]) == 2
    assert "unknown protocol" in capsys.readouterr().err.lower()


def test_spec_and_code_cannot_drift(tmp_path: Path) -> None:
    entry = get_protocol("streams_probing")
    binding = binding_for("streams_probing")
    ids = declared_property_ids(entry)
    assert drift(binding, ids) == []
    # A renamed action operator and a renamed property operator are both reported, with both names.
    text = binding.path.read_text().replace("ProbeDowngrade", "ProbeDowngrad").replace("STR_07 ==", "STR_7X ==")
    changed = tmp_path / "StreamsProbing.tla"
    changed.write_text(text)
    problems = drift(_at(binding, changed), ids)
    assert any("reference action ProbeDowngrade" in p for p in problems)
    assert any("ProbeDowngrad of" in p for p in problems)
    assert any("property STR-07 has no operator STR_07" in p for p in problems)
    assert any("operator STR_7X" in p for p in problems)
    # An action the reference emits but the binding does not list.
    assert any("emits action Teleport" in p for p in drift(binding, ids, emitted_actions=["Teleport"]))


def _at(binding: SpecBinding, path: Path) -> SpecBinding:
    class _Moved(SpecBinding):
        @property
        def path(self) -> Path:
            return path

    return _Moved(binding.protocol, binding.module, binding.constants, binding.actions)


@pytest.mark.parametrize("protocol", spec_protocols())
def test_no_spec_drifts_from_its_reference(protocol: str) -> None:
    """Every spec's action and property operators match the reference one to one, and every action the
    reference emits on its small config (under each of the protocol's profiles) is an action of the spec."""
    entry = get_protocol(protocol)
    emitted: set[str] = set()
    for profile in entry.profiles:
        emitted |= reachable_states(entry.build(replace(entry.configs["small"], profile=profile)))[1]
    binding = binding_for(protocol)
    ids = declared_property_ids(entry) + list(binding.claims)
    assert drift(binding, ids, emitted) == []
