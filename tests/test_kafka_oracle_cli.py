"""The Kafka oracle's driver and `rollcheck kafka` on a toy binding with a fake client (tests/kafka_toy.py): the
counts, the disagreement with its state, both answers and its ITF trace, the exit codes, the release matrix, the
bug runner, the explorer's visit hook, and the Spark engine's result equal to the local one's."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

import rollcheck.core.registry as registry
import rollcheck.oracle.bugs as bugs
import rollcheck.oracle.check as check
from rollcheck.cli import main
from rollcheck.core.errors import UserError
from rollcheck.core.traces import trace_from_itf
from rollcheck.explore.explorer import ExploreOptions, explore
from rollcheck.oracle.check import run_check
from tests.kafka_toy import (
    BINDING,
    ENTRY,
    KNOWN_BINDING,
    KNOWN_ENTRY,
    PICKY_BINDING,
    PICKY_ENTRY,
    FakeClient,
    WrongEverywhereClient,
)
from tests.toy import ToyConfig, ToySystem


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    """`toy` resolves to the toy entry with its binding, and the check's default client is the fake one."""
    real = registry.get_protocol

    def get(name: str) -> Any:
        if name == "toy-unbound":  # every real protocol has a binding: the toy without one
            return dataclasses.replace(ENTRY, name="toy-unbound", oracle=None)
        return ENTRY if name == "toy" else real(name)

    for module in (registry, check, bugs):
        monkeypatch.setattr(module, "get_protocol", get)
    monkeypatch.setattr(bugs, "all_protocols", lambda: [ENTRY])
    monkeypatch.setattr(registry, "all_protocols", lambda: [ENTRY])
    for module in (check, bugs):
        monkeypatch.setattr(module, "default_client", lambda binding, jars, progress: FakeClient(binding, jars=jars))


def test_the_visit_hook_sees_every_state_once_in_store_order() -> None:
    seen: list[tuple[int, int, Any]] = []
    result = explore(ToySystem(ToyConfig(bound=3)), ExploreOptions(
        stop_at_first=False, visit=lambda level, states: seen.extend((level, i, s) for i, s in enumerate(states))))
    assert len(seen) == result.distinct_states == len({s for _l, _i, s in seen}) == 32
    assert [lv.frontier for lv in result.levels] == [sum(1 for lv2, _i, _s in seen if lv2 == lv.level)
                                                      for lv in result.levels]


def test_an_agreeing_release_counts_every_decision() -> None:
    client = FakeClient(BINDING)
    r = run_check(ENTRY, "1.0", "small", client=client)
    assert (r.verdict, int(r.exit_code), r.states, r.decisions, r.distinct_requests) == ("agree", 0, 32, 48, 15)
    assert r.cache_hits == 33 and r.disagreements == [] and r.disagreement_count == 0
    assert r.kinds == {"double": {"decisions": 16, "disagreements": 0}, "parity": {"decisions": 32, "disagreements": 0}}
    # One round trip per level and release asked; a request asked at an earlier level is the client's cache hit.
    assert client.round_trips == r.round_trips == 10 and client.requests <= r.decisions and not client.closed
    assert client.requests - client.hits == r.distinct_requests


def test_a_disagreement_has_its_state_both_answers_and_a_trace_to_the_state() -> None:
    r = run_check(ENTRY, "2.0", "small", client=FakeClient(BINDING))
    assert (r.verdict, int(r.exit_code), r.disagreement_count) == ("disagree", 3, 2)
    assert r.kinds["parity"] == {"decisions": 32, "disagreements": 2} and r.kinds["double"]["disagreements"] == 0
    first = r.disagreements[0]
    assert (first.kind, first.release, first.expected, first.answer) == ("parity", "2.0", 1, 0)
    assert dict(first.request) == {"op": "parity", "a": 2, "b": 1} and first.difference == "reference 1, Kafka 0"
    assert first.trace is not None
    trace = trace_from_itf(first.trace, ToySystem(ToyConfig(bound=3)))
    last = trace.steps[-1].state
    assert (last.a, last.b) == (2, 1) and len(trace.steps) - 1 == first.level == 3
    assert first.trace["#meta"]["kafka_answer"] == 0


def test_keep_bounds_the_kept_disagreements_not_the_count() -> None:
    r = run_check(ENTRY, "2.0", "small", client=FakeClient(BINDING), keep=1)
    assert r.disagreement_count == 2 and len(r.disagreements) == 1


def test_cli_check_writes_the_traces_and_exits_3(toy: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                 ) -> None:
    assert main(["kafka", "toy", "--release", "2.0", "--config", "small", "--out", str(tmp_path), "--json",
                 "--quiet"]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "disagree" and doc["disagreements"]["count"] == 2 and doc["exit_code"] == 3
    kept = doc["disagreements"]["kept"][0]
    assert kept["expected"] == 1 and kept["answer"] == 0 and kept["state"]["a"] == {"#bigint": "2"}
    folder = tmp_path / "toy-2.0-small"
    assert Path(kept["trace"]) == folder / "disagreements" / "parity-1.itf.json"
    assert json.loads(Path(kept["trace"]).read_text())["#meta"]["kafka_release"] == "2.0"
    assert json.loads((folder / "summary.json").read_text())["decisions"] == 48
    assert main(["kafka", "toy", "--release", "1.0", "--config", "small", "--out", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "AGREE" in out and "48 decisions" in out


def test_cli_release_all_prints_the_matrix_and_exits_with_the_worst(toy: None, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kafka", "toy", "--release", "all", "--config", "small", "--out", str(tmp_path), "--quiet"]) == 3
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("release"))
    assert [line.split() for line in lines[header + 1:]] == [["1.0", "1", "32", "48", "0", "agree"],
                                                              ["2.0", "2", "32", "48", "2", "disagree"]]
    assert main(["kafka", "toy", "--release", "all", "--config", "small", "--out", str(tmp_path), "--json",
                 "--quiet"]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert [(r["release"], r["verdict"]) for r in doc["rows"]] == [("1.0", "agree"), ("2.0", "disagree")]


@pytest.mark.parametrize(("argv", "says"), [
    (["kafka", "toy", "--release", "9.9"], "unknown Kafka release '9.9' for toy; known: 1.0, 2.0"),
    (["kafka", "toy", "--release", "1.0", "--engine", "warp"], "unknown engine 'warp'; known: local, spark"),
    (["kafka", "toy", "--release", "1.0", "--config", "huge"], "unknown config 'huge' for protocol 'toy'"),
    (["kafka", "toy", "--release", "1.0", "--config", "large"], "toy/large at Kafka 1.0: bound above 10"),
    (["kafka", "toy", "--release", "1.0", "--profile", "nope"], "has no profile 'nope'"),
    (["kafka", "metadata_version", "--release", "3.9.2", "--profile", "kip"], "runs under profile kafka, not kip"),
    (["kafka", "toy"], "--release R is needed"),
    (["kafka", "toy-unbound", "--release", "1.0"], "protocol toy-unbound has no Kafka oracle binding"),
    (["kafka", "nosuch", "--release", "1.0"], "unknown protocol"),
])
def test_bad_input_is_one_line_and_exit_2(toy: None, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          argv: list[str], says: str) -> None:
    assert main([*argv, "--out", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err


def test_an_oracle_that_dies_is_one_line_and_no_pass(toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    class Dying(FakeClient):
        def ask(self, release: str, requests: Any) -> list[Any]:
            raise UserError(f"Kafka oracle {release} died (exit 3) mid-batch; its stderr ends: boom")

    monkeypatch.setattr(check, "default_client", lambda binding, jars, progress: Dying(binding))
    assert main(["kafka", "toy", "--release", "1.0", "--config", "small", "--out", str(tmp_path), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "died (exit 3) mid-batch" in captured.err and "Traceback" not in captured.err
    assert not (tmp_path / "toy-1.0-small").exists()  # no partial run published


def test_bugs_are_refound_at_the_buggy_release_and_absent_at_the_fixed(toy: None,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    (outcome,) = bugs.run_bugs("toy", make_client=FakeClient)
    assert outcome.refound and outcome.fixed_agree and outcome.ok
    doc = outcome.to_json()
    assert doc["id"] == "toy:TOY-1" and doc["buggy"][0]["first"]["kind"] == "parity"
    assert main(["kafka", "bugs", "--protocol", "toy", "--quiet"]) == 0
    assert "toy:TOY-1 REFOUND" in capsys.readouterr().out
    # A bug whose kinds the buggy release does not show is NOT REFOUND, and the command exits 1.
    wrong = type(BINDING)(bugs=(BINDING.bugs[0].__class__(**{**BINDING.bugs[0].__dict__, "kinds": ("double",)}),))
    assert not bugs.shows_bug(wrong.bugs[0], run_check(ENTRY, "2.0", "small", client=FakeClient(BINDING)))


def test_a_known_bugs_disagreements_are_reported_as_it_and_pass_unless_strict() -> None:
    r = run_check(KNOWN_ENTRY, "2.0", "small", client=FakeClient(KNOWN_BINDING))
    assert (r.verdict, int(r.exit_code), r.disagreement_count, r.unexplained) == ("known-bug", 0, 2, 0)
    assert r.known_bugs == {"TOY-1": 2} and r.kinds["parity"] == {"decisions": 32, "disagreements": 2, "known": 2}
    assert all(f.known == "TOY-1" for f in r.disagreements) and r.disagreements[0].to_json()["known_bug"] == "TOY-1"
    strict = run_check(KNOWN_ENTRY, "2.0", "small", client=FakeClient(KNOWN_BINDING), strict=True)
    assert (strict.verdict, int(strict.exit_code), strict.known_bugs) == ("disagree", 3, {"TOY-1": 2})
    # The same wrong answer at a release the bug does not name is a new finding.
    other = run_check(KNOWN_ENTRY, "1.0", "small", client=WrongEverywhereClient(KNOWN_BINDING))
    assert (other.verdict, other.disagreement_count, other.known_bugs) == ("disagree", 2, {})
    # A bug without a signature, or whose signature does not accept the answer, excuses nothing.
    assert run_check(ENTRY, "2.0", "small", client=FakeClient(BINDING)).verdict == "disagree"
    picky = run_check(PICKY_ENTRY, "2.0", "small", client=FakeClient(PICKY_BINDING))
    assert (picky.verdict, picky.disagreement_count, picky.known_bugs) == ("disagree", 2, {})


def test_cli_known_bug_exits_0_and_strict_exits_3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    for module in (registry, check, bugs):
        monkeypatch.setattr(module, "get_protocol", lambda name: KNOWN_ENTRY)
        monkeypatch.setattr(module, "default_client", lambda binding, jars, progress: FakeClient(binding, jars=jars),
                            raising=False)
    assert main(["kafka", "toy", "--release", "2.0", "--config", "small", "--out", str(tmp_path), "--json",
                 "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "known-bug" and doc["disagreements"]["known_bugs"] == {"TOY-1": 2}
    assert doc["disagreements"]["unexplained"] == 0 and doc["disagreements"]["kept"][0]["known_bug"] == "TOY-1"
    assert main(["kafka", "toy", "--release", "2.0", "--config", "small", "--out", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "KNOWN-BUG" in out and "known Kafka bug TOY-1 of 2.0: 2 disagreements" in out
    assert main(["kafka", "toy", "--release", "2.0", "--config", "small", "--out", str(tmp_path), "--quiet",
                 "--strict"]) == 3
    capsys.readouterr()
    assert main(["kafka", "toy", "--release", "all", "--config", "small", "--out", str(tmp_path)]) == 0
    assert "known-bug (TOY-1)" in capsys.readouterr().out
    # `rollcheck kafka bugs` still sees the bug at its buggy release, and its fixed release agrees.
    (outcome,) = bugs.run_bugs("toy", make_client=FakeClient)
    assert outcome.ok and outcome.buggy[0]["verdict"] == "known-bug" and outcome.buggy[0]["shown"]


def test_list_shows_the_bindings(toy: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kafka", "list", "--json"]) == 0
    (b,) = json.loads(capsys.readouterr().out)["bindings"]
    assert [r["name"] for r in b["releases"]] == ["1.0", "2.0"] and b["bugs"][0]["id"] == "TOY-1"


@pytest.mark.spark
def test_the_spark_engine_gives_the_local_engines_result(spark: Any) -> None:
    local = run_check(ENTRY, "2.0", "small", client=FakeClient(BINDING))
    dist = run_check(ENTRY, "2.0", "small", engine="spark", client=FakeClient(BINDING), spark=spark)
    fields = ("states", "decisions", "distinct_requests", "cache_hits", "kinds", "disagreement_count", "known_bugs",
              "verdict")
    assert {f: getattr(dist, f) for f in fields} == {f: getattr(local, f) for f in fields}
    known = run_check(KNOWN_ENTRY, "2.0", "small", engine="spark", client=FakeClient(KNOWN_BINDING), spark=spark)
    assert (known.verdict, known.known_bugs, known.kinds["parity"]["known"]) == ("known-bug", {"TOY-1": 2}, 2)
    assert [d.to_json(with_trace=True) for d in dist.disagreements] == \
        [d.to_json(with_trace=True) for d in local.disagreements]
    assert dist.engine == "spark" and dist.client["partitions"] >= 2
