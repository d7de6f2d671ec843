"""``rollcheck prove`` and the gate adapter ``rollcheck.smt.checker.check_z3``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rollcheck.checkers import BOUNDED, NOT_CHECKED, PROVED, VIOLATED, CheckContext
from rollcheck.cli import main
from rollcheck.core.registry import get_protocol
from rollcheck.core.traces import read_itf, trace_from_itf
from rollcheck.smt.checker import check_z3


def test_prove_json_proves_str05(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["prove", "streams_probing", "--config", "small", "--property", "STR-05", "--depth", "3",
               "--json", "--out", str(tmp_path)])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["protocol"] == "streams_probing" and doc["profile"] == "kip"
    assert [r["property"] for r in doc["results"]] == ["STR-05"]
    assert doc["results"][0]["status"] == "proved"
    assert (tmp_path / "streams_probing-small-kip" / "summary.json").exists()


def test_prove_sees_a_bug_planted_in_the_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The proofs are about the Z3 model; the successor differential compares it with the reference, so a
    reference that drops a step (here: the second instance is never bounced) is a disagreement, exit 3."""
    from reference_impl.streams_probing.system import StreamsProbingSystem

    honest = StreamsProbingSystem.successors

    def planted(self: StreamsProbingSystem, s: object) -> object:
        return [(a, t) for a, t in honest(self, s) if not (a.name == "RollingBounce" and a["instance"] == 1)]

    argv = ["prove", "streams_probing", "--config", "small", "--property", "STR-05", "--depth", "2", "--json",
            "--differential", "0"]
    assert main([*argv, "--out", str(tmp_path / "honest")]) == 0
    assert json.loads(capsys.readouterr().out)["differential"]["every_reachable_state"] is True
    monkeypatch.setattr(StreamsProbingSystem, "successors", planted)
    assert main([*argv, "--out", str(tmp_path / "planted")]) == 3
    diff = json.loads(capsys.readouterr().out)["differential"]
    assert "RollingBounce" in diff["mismatch"]


def test_prove_variant_refuted_writes_replayable_itf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["prove", "streams_probing", "--config", "small", "--profile", "kafka", "--variant", "STR-M5",
               "--property", "STR-06", "--depth", "6", "--out", str(tmp_path)])
    assert rc == 1
    out = capsys.readouterr().out  # results on stdout, progress on stderr
    path = tmp_path / "streams_probing-small-kafka-STR-M5" / "counterexamples" / "STR-06.itf.json"
    assert f"STR-06: refuted (trace at {path})" in out  # the published path, not the staging one
    ts = get_protocol("streams_probing").variant("STR-M5").build(
        get_protocol("streams_probing").configs["small"].__class__(profile="kafka", instances=2))
    trace = trace_from_itf(read_itf(path), ts)
    assert len(trace.actions) == 5
    assert trace.states[-1].instances[0].failure or trace.states[-1].instances[1].failure


@pytest.mark.parametrize("argv", [
    ["prove", "no_such_protocol"],
    ["prove", "zk_migration", "--config", "small", "--property", "MIG-L1"],  # a graph property: not encoded
    ["prove", "streams_probing", "--config", "small", "--property", "STR-L1"],  # a graph property: not encoded
    ["prove", "streams_probing", "--config", "small", "--property", "NOPE-01"],
])
def test_prove_user_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("rollcheck: error: ") and len(err.strip().splitlines()) == 1


def test_gate_adapter_verdicts(tmp_path: Path) -> None:
    entry = get_protocol("streams_probing")
    ctx = CheckContext(out_dir=tmp_path, options={"z3_depth": 2})
    report = check_z3(entry, "small", entry.configs["small"], ctx)
    assert report.status == "ok" and not report.exhaustive
    assert report.properties["STR-05"].status == PROVED
    assert report.properties["STR-06"].status == BOUNDED  # never plain "holds" for a bounded check
    assert report.properties["STR-06"].message.startswith("holds up to depth 2 (checked to depth 2")
    assert report.properties["STR-01"].status == BOUNDED  # a step property: checked to depth 2
    assert report.properties["STR-L1"].status == NOT_CHECKED
    entry = get_protocol("features")
    ctx = CheckContext(out_dir=tmp_path, options={"z3_depth": 3}, variant="FEAT-M1")
    report = check_z3(entry, "small", entry.configs["small"], ctx)
    assert report.status == VIOLATED
    v = report.properties["FEAT-01"]
    assert v.status == VIOLATED and v.trace is not None and v.trace_path and Path(v.trace_path).exists()
    assert report.properties["FEAT-05"].status == PROVED  # a step property the mutant does not touch
    assert report.properties["FEAT-10"].status == NOT_CHECKED


def test_gate_adapter_without_encoding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A config the encoding refuses (the constructor's ValueError: today a mutation no encoding honours, or zk's
    bootstrap level without migration support; features' two-update requests were one until 2026-11-29) is a
    skipped cell with every property not checked, not a crash."""
    import rollcheck.smt.checker as checker

    def refuse(ts: object) -> object:
        raise ValueError("features: requests with several updates are not encoded")
    monkeypatch.setattr(checker, "symbolic", refuse)
    entry = get_protocol("features")
    report = check_z3(entry, "atomic", entry.configs["atomic"], CheckContext(out_dir=tmp_path))
    assert report.status == "skipped" and report.message.startswith("Z3: features: requests")
    assert report.properties and all(v.status == NOT_CHECKED for v in report.properties.values())
