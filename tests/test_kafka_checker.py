"""The `kafka` checker kind of the gate, on the toy binding with a fake client (tests/kafka_toy.py): the tier's
releases, a disagreement as the gate's finding, a missing Java as an unavailable cell, and its cells in the plan."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import rollcheck.checkers.kafka as kafka
import rollcheck.oracle.check as check
from rollcheck.checkers import CheckContext, Status, get_checker
from rollcheck.checkers.base import Cell
from rollcheck.core.transition import replace_config
from tests.kafka_toy import ENTRY, KNOWN_ENTRY, FakeClient
from tests.toy import PROTOCOL as TOY


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kafka, "_java_problem", lambda: None)
    monkeypatch.setattr(check, "default_client", lambda binding, jars, progress: FakeClient(binding, jars=jars))


def _cell(tier: str, profile: str = "kafka", entry: Any = ENTRY) -> Cell:
    return Cell(entry, "small", replace_config(entry.configs["small"], profile=profile), "kafka",
                settings={"tier": tier})


def test_ci_checks_the_ci_releases_and_agrees(fake: None, tmp_path: Path) -> None:
    report = get_checker("kafka").run(_cell("ci"), CheckContext(out_dir=tmp_path))
    assert report.status == Status.OK, report.message
    assert report.stats["matrix"]["rows"] == [["1.0", "1", "32", "48", "0", "agree"]]
    assert "rollcheck kafka toy --release 1.0 --config small --profile kafka" == get_checker("kafka").rerun(report, {})


def test_nightly_checks_every_release_and_a_disagreement_is_a_finding(fake: None, tmp_path: Path) -> None:
    from rollcheck.gate.verdict import findings_of

    report = get_checker("kafka").run(_cell("nightly"), CheckContext(out_dir=tmp_path))
    assert report.status == Status.DIVERGED
    assert [row[0] for row in report.stats["matrix"]["rows"]] == ["1.0", "2.0"]
    assert "Kafka 2.0: 2 disagreements, first parity: reference 1, Kafka 0" in report.message
    assert (tmp_path / "kafka" / "toy-small-2.0" / "disagreements" / "parity-1.itf.json").is_file()
    (finding,) = findings_of([report])
    assert finding.kind == "disagreement" and finding.checker == "kafka"


def test_a_known_kafka_bug_is_said_and_not_a_finding(fake: None, tmp_path: Path) -> None:
    report = get_checker("kafka").run(_cell("nightly", entry=KNOWN_ENTRY), CheckContext(out_dir=tmp_path))
    assert report.status == Status.OK, report.message
    assert report.message == "known Kafka bugs: 2.0: TOY-1 (2 disagreements)"
    assert report.stats["matrix"]["rows"][1][-1] == "known-bug (TOY-1)"


def test_unavailable_java_skips_the_cell_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(kafka, "_java_problem", lambda: "Java is not installed: no `java` on PATH")
    report = get_checker("kafka").run(_cell("ci"), CheckContext(out_dir=tmp_path))
    assert report.status == Status.SKIPPED and report.stats["unavailable"] is True
    assert report.message == "Java is not installed: no `java` on PATH"


def test_no_binding_or_another_profile_skips(fake: None, tmp_path: Path) -> None:
    plain = get_checker("kafka").run(_cell("ci", entry=TOY), CheckContext(out_dir=tmp_path))
    assert plain.status == Status.SKIPPED and "no Kafka oracle binding" in plain.message
    kip = get_checker("kafka").run(_cell("ci", profile="kip"), CheckContext(out_dir=tmp_path))
    assert kip.status == Status.SKIPPED and "profile kafka" in kip.message and not kip.stats.get("unavailable")


def test_the_html_report_shows_a_checkers_matrix(fake: None, tmp_path: Path) -> None:
    from rollcheck.gate.reports import _table

    report = get_checker("kafka").run(_cell("nightly"), CheckContext(out_dir=tmp_path))
    m = report.stats["matrix"]
    html = _table("", m["header"], m["rows"], status_columns=[len(m["header"]) - 1])
    assert "<td class='disagree'>disagree</td>" in html and "<td class='agree'>agree</td>" in html
    assert dataclasses.is_dataclass(report) and json.dumps(report.stats)  # the summary can carry it


def test_the_gate_plans_kafka_cells_on_the_ci_configs(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "rollcheck", "gate", "--dry-run", "--json", "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    cells = [c for c in json.loads(proc.stdout)["cells"] if c["checker"] == "kafka"]
    assert {c["protocol"] for c in cells} >= {"metadata_version", "streams_probing"}
    assert {c["config"] for c in cells} == {"small"} and not any(c["variant"] for c in cells)
