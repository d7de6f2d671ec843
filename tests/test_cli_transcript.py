"""Every ``rollcheck`` command's output shape and exit codes, pinned by a transcript.

For each command a few fast invocations (small configs, low bounds) and at least one user mistake run through
:func:`rollcheck.cli.main`; what each gives is its exit code, the shape of its stdout (the JSON document's keys,
one level down; or the first line and every table's header row) and its stderr lines that rollcheck wrote
(``rollcheck...``: errors, warnings, verdicts without one). Numbers, the temporary directory and the checkout's
path are normalised away, so timings, counts and seeds do not matter; a changed column, key, first line, exit
code or error text does. The expected transcripts are ``tests/transcripts/<command>.txt``.

A user mistake is one line on stderr and exit 2 (checked here beside the transcript). ``--quiet`` silences
progress alone, so the results still show.

After a deliberate change to a command's output, regenerate the transcripts and review their diff::

    ROLLCHECK_UPDATE_TRANSCRIPTS=1 python -m pytest -q -n 0 tests/test_cli_transcript.py
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from rollcheck.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = Path(__file__).resolve().parent / "transcripts"
UPDATE = os.environ.get("ROLLCHECK_UPDATE_TRANSCRIPTS") == "1"
RUNBOOK = "runbooks/streams_probing/single-bounce.toml"

# A gate of one cell: the explorer on streams_probing's small config under kip.
GATE_TOML = """[gate]
protocols = ["streams_probing"]
profiles = ["kip"]
checkers = ["explore"]
mutants = false
parallel = 1
configs = {streams_probing = ["small"]}
ci_configs = {streams_probing = []}
story_configs = {streams_probing = []}
conform_configs = {streams_probing = []}
"""


@dataclass(frozen=True)
class Case:
    argv: tuple[str, ...]  # {tmp}: the module's directory, {gate}: GATE_TOML's file, {trace}: a counterexample
    mistake: bool = False  # a user mistake: exit 2, one line on stderr
    no_apalache: bool = False  # run with no Apalache to be found, whatever this machine has
    env: dict[str, str] = field(default_factory=dict)


def _c(line: str, **kw: Any) -> Case:
    return Case(tuple(line.split()), **kw)


CASES: dict[str, list[Case]] = {
    "rollcheck": [_c("nosuch", mistake=True)],
    "gate": [
        _c("gate --gate-config {gate} --quiet --out {tmp}/gate"),
        _c("gate --gate-config {gate} --dry-run --json --out {tmp}/gate"),
        _c("gate --config {gate} --dry-run --out {tmp}/gate"),  # the old spelling: a warning, then as before
        _c("gate --gate-config {tmp}/missing.toml", mistake=True),
        _c("gate --config {gate} --gate-config {gate}", mistake=True),
        _c("gate --tier weekly", mistake=True),
    ],
    "list": [_c("list"), _c("list --json"), _c("list --nope", mistake=True)],
    "explore": [
        _c("explore streams_probing --config small --max-depth 2 --quiet --out {tmp}/explore"),
        _c("explore streams_probing --config small --max-depth 2 --json --quiet --out {tmp}/explore"),
        _c("explore streams_probing --config small --variant STR-M1 --quiet --out {tmp}/explore"),
        _c("explore nosuch --out {tmp}/explore", mistake=True),
        _c("explore streams_probing --profile nope --out {tmp}/explore", mistake=True),
        _c("explore streams_probing --config huge --out {tmp}/explore", mistake=True),
    ],
    "simulate": [
        _c("simulate streams_probing --config small --traces 5 --depth 5 --seed 7 --quiet --out {tmp}/simulate"),
        _c("simulate streams_probing --seed -1 --out {tmp}/simulate", mistake=True),
    ],
    "tlc": [
        _c("tlc streams_probing --config small --profile kip --no-witnesses --quiet --out {tmp}/tlc"),
        _c("tlc streams_probing --variant STR-M99 --out {tmp}/tlc", mistake=True),
    ],
    "apalache": [
        _c("apalache streams_probing --config small --out {tmp}/apalache", no_apalache=True),
        _c("apalache streams_probing --mode fast", mistake=True),
    ],
    "conform": [
        _c("conform streams_probing --profile kip --domain-only --quiet --out {tmp}/conform"),
        _c("conform streams_probing --domain-only --engine spark --out {tmp}/conform", mistake=True),
        _c("conform streams_probing --seed x --out {tmp}/conform", mistake=True),
    ],
    "prove": [
        _c("prove streams_probing --config small --property STR-02 --depth 1 --no-differential --quiet "
           "--out {tmp}/prove"),
        _c("prove streams_probing --config small --property STR-02 --depth 1 --no-differential --json "
           "--out {tmp}/prove"),
        _c("prove streams_probing --config small --property NOPE --out {tmp}/prove", mistake=True),
    ],
    "mutants": [
        _c("mutants --protocol streams_probing --checker explore --parallel 1 --quiet --out {tmp}/mutants"),
        _c("mutants --protocol nosuch --out {tmp}/mutants", mistake=True),
    ],
    # No campaign step is fast (even --list enumerates for minutes): the flags' checks alone.
    "mutate": [
        _c("mutate --latest --summary benchmarks/results/mutation-campaign-20261201-mv19.json.gz"),
        _c("mutate --json --summary benchmarks/results/mutation-campaign-20261201-mv19.json.gz"),
        _c("mutate --offset 2 --protocol streams_probing", mistake=True),
        _c("mutate --summary README.md", mistake=True),
        _c("mutate --protocol nosuch", mistake=True),
    ],
    "fuzz": [
        _c("fuzz streams_probing --config small --minutes 0.05 --spark-walks 0 --examples 5 --steps 5 --seed 3 "
           "--quiet --out {tmp}/fuzz"),
        _c("fuzz streams_probing --out {tmp}/fuzz", mistake=True),
    ],
    "replay": [
        _c("replay {trace}"),
        _c("replay {trace} --json"),
        _c("replay {tmp}/none.itf.json", mistake=True),
    ],
    "export-test": [
        _c("export-test {trace} -o {tmp}/regressions"),
        _c("export-test {trace} --config {tmp}/missing.toml -o {tmp}/regressions", mistake=True),
    ],
    "runbook": [
        _c(f"runbook {RUNBOOK} --profile kip --quiet --out {{tmp}}/runbook"),
        # the old spelling of --parallel: a warning, then as before (cut short: inconclusive, exit 5)
        _c(f"runbook {RUNBOOK} --profile kip --jobs 1 --max-states 20 --quiet --out {{tmp}}/runbook"),
        _c("runbook {tmp}/none.toml --out {tmp}/runbook", mistake=True),
    ],
    "kafka": [
        _c("kafka list"),
        # Kafka 3.3.2's classes against the small config (built by Maven on first use, then from the cache)
        _c("kafka metadata_version --release 3.3.2 --config small --quiet --out {tmp}/kafka"),
        _c("kafka metadata_version --release 9.9.9 --config small --out {tmp}/kafka", mistake=True),
    ],
}


def test_every_command_has_a_transcript() -> None:
    """A command added without cases here fails this test: its output is pinned too."""
    import argparse

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert sorted(CASES) == sorted(["rollcheck", *sub.choices])


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("transcript")
    (tmp / "gate.toml").write_text(GATE_TOML, encoding="utf-8")
    return {"tmp": str(tmp), "gate": str(tmp / "gate.toml")}


@pytest.fixture(scope="module")
def trace(work: dict[str, str]) -> str:
    """A counterexample for replay and export-test: STR-M1's on the small config."""
    out = Path(work["tmp"]) / "trace-source"
    assert main(["explore", "streams_probing", "--config", "small", "--variant", "STR-M1", "--quiet",
                 "--out", str(out)]) == 1
    found = sorted(out.rglob("counterexamples/*.itf.json"))
    assert found
    return str(found[0])


_NUMBER = re.compile(r"(?<![\w.\-/])\d+(?:[.,]\d+)*(?![\w\-/]|\.\d)")


def _normal(line: str, tmp: str) -> str:
    line = line.replace(tmp, "<tmp>").replace(str(ROOT), "<repo>")
    return _NUMBER.sub("N", " ".join(line.split()))


def _json_shape(doc: Any) -> list[str]:
    if not isinstance(doc, dict):
        return [f"json {type(doc).__name__}"]
    lines = [f"json keys: {', '.join(doc)}"]
    for key, value in doc.items():
        inner = value[0] if isinstance(value, list) and value and isinstance(value[0], dict) else value
        if isinstance(inner, dict) and inner:
            lines.append(f"json {key}{'[0]' if inner is not value else ''} keys: {', '.join(inner)}")
    return lines


def _shape(out: str, err: str, tmp: str) -> list[str]:
    lines: list[str] = []
    text = out.strip()
    if text.startswith("{"):
        lines += _json_shape(json.loads(text))
    elif text:
        rows = text.splitlines()
        # The first line; a table's title as one line (rich wraps it to the table's width, which its cells set).
        border = next((i for i, row in enumerate(rows) if row.startswith("┏")), 1)
        lines.append("stdout: " + " ".join(row.strip() for row in rows[:max(border, 1)]))
        lines += ["table: " + row.strip() for row in rows if row.startswith("┃")]
    else:
        lines.append("stdout: (empty)")
    lines += ["stderr: " + row for row in err.splitlines() if row.startswith("rollcheck")]
    return [_normal(line, tmp) for line in lines]


def _run(case: Case, values: dict[str, str], capsys: pytest.CaptureFixture[str],
         monkeypatch: pytest.MonkeyPatch) -> list[str]:
    argv = [arg.format(**values) for arg in case.argv]
    with monkeypatch.context() as m:
        m.chdir(ROOT)
        if case.no_apalache:
            m.delenv("APALACHE_HOME", raising=False)
            m.setenv("PATH", values["tmp"])  # nothing to be found there
        try:
            code = main(argv)
        except SystemExit as exc:  # a flag argparse refuses: the console script exits with its code
            code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    if case.mistake:
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (argv, code, err)
    command = " ".join(a.replace(values["tmp"], "<tmp>").replace(values.get("trace", "\0"), "<trace>")
                       for a in argv)
    return [f"$ rollcheck {command}", f"exit {code}", *_shape(out, err, values["tmp"]), ""]


@pytest.mark.parametrize("command", sorted(CASES))
def test_transcript(command: str, work: dict[str, str], request: pytest.FixtureRequest,
                    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    values = dict(work)
    if command == "simulate":
        request.getfixturevalue("spark")  # the test run's one Spark session, not a start of its own
    if any("{trace}" in arg for case in CASES[command] for arg in case.argv):
        values["trace"] = request.getfixturevalue("trace")
        capsys.readouterr()  # the trace's own run is not this command's
    got = "\n".join(line for case in CASES[command] for line in _run(case, values, capsys, monkeypatch))
    path = TRANSCRIPTS / f"{command}.txt"
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(got, encoding="utf-8")
    assert path.is_file(), f"no transcript {path}: run with ROLLCHECK_UPDATE_TRANSCRIPTS=1 (see the docstring)"
    assert got == path.read_text(encoding="utf-8"), (
        f"{command}'s output differs from {path}; after a deliberate change regenerate it (see the docstring)")
