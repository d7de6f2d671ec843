"""The gate's store of cell results: reports round-trip through JSON, a warm rerun serves every cell marked
cached with identical results, each input change reruns exactly the cells that read it, and a damaged, foreign
or unusable store is one line and the cells run."""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rollcheck.checkers import (
    BOUNDED,
    HOLDS,
    UNKNOWN,
    VIOLATED,
    CheckContext,
    CheckerReport,
    PropertyVerdict,
    Status,
    get_checker,
)
from rollcheck.checkers.base import reusable
from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import ProtocolEntry
from rollcheck.gate import GateConfig, load_gate_config, plan_cells, run_gate
from rollcheck.gate import content as content_module
from rollcheck.gate.cellkey import CellKey, KeyBuilder
from rollcheck.gate.reports import write_outputs
from tests.toy import PROTOCOL, ToyConfig, ToySystem

ROOT = Path(__file__).resolve().parent.parent
CHECKERS = ["explore", "hypothesis", "z3", "tlc"]  # z3 and tlc: quick skips on the toy (no encoding, no spec)


def _broken_entry() -> ProtocolEntry:
    return ProtocolEntry("toy", "broken toy", ToyConfig, PROTOCOL.configs,
                         lambda c: ToySystem(ToyConfig(c.profile, c.bound, True)))


def _cfg(out: Path, cache: Path | None, **changes: Any) -> GateConfig:
    cfg = GateConfig(["toy"], {"toy": ["small", "default"]}, ["kip", "kafka"], CHECKERS, out,
                     {"hypothesis_examples": 20, "hypothesis_steps": 10}, cache=cache)
    return dataclasses.replace(cfg, **changes)


def _plain(report: CheckerReport, out: Path) -> dict[str, Any]:
    """A report's result, its output directory written as OUT, without its times and its cached marker."""
    doc = report.to_json(full=True)
    doc.pop("elapsed_seconds")
    doc.pop("cached", None)
    doc["stats"] = {k: v for k, v in doc["stats"].items() if k not in ("states_per_second", "seconds")}
    return json.loads(json.dumps(doc).replace(str(out.resolve()), "OUT").replace(str(out), "OUT"))


def _lookup(entry: ProtocolEntry) -> Callable[[str], ProtocolEntry]:
    return lambda _n: entry


# --------------------------------------------------------------------------- the report's JSON


def test_a_report_round_trips_through_json() -> None:
    r = CheckerReport("explore", "toy", "small", "kip", status=Status.VIOLATED, exhaustive=True,
                      counts={"distinct_states": 12, "depth": 4}, stats={"levels": [1, 2, 3], "complete": True},
                      message="m", elapsed=1.25)
    r.properties["A"] = PropertyVerdict("A", VIOLATED, "a and b odd", trace_path="/o/traces/A.itf.json",
                                        trace_text="0 Init\n1 IncA")
    r.properties["B"] = PropertyVerdict("B", BOUNDED, "holds up to depth 3")
    r.properties["C"] = PropertyVerdict("C", HOLDS)
    back = CheckerReport.from_json(json.loads(json.dumps(r.to_json(full=True))))
    assert back == r
    assert isinstance(back.status, Status) and back.properties["B"].status is BOUNDED
    # Without full, the counterexample's text stays in JUnit; its file's path comes back.
    lean = CheckerReport.from_json(json.loads(json.dumps(r.to_json())))
    assert lean.properties["A"].trace_path == "/o/traces/A.itf.json" and lean.properties["A"].trace_text == ""
    r.cached = {"run": "R", "time": "T", "commit": None, "key": "k", "seconds": 1.0}
    assert CheckerReport.from_json(json.loads(json.dumps(r.to_json(full=True)))) == r


def test_only_reproducible_results_may_be_stored() -> None:
    ok = CheckerReport("z3", "toy", "small", "kip")
    assert reusable(ok)
    assert not reusable(dataclasses.replace(ok, status=Status.ERROR))
    assert not reusable(dataclasses.replace(ok, status=Status.SKIPPED, stats={"unavailable": True}))
    gave_up = dataclasses.replace(ok, properties={"P": PropertyVerdict("P", UNKNOWN, "timeout")})
    assert not reusable(gave_up)
    # A memory budget cut the search short: the machine decided, not the inputs.
    cut = CheckerReport("explore", "toy", "small", "kip", exhaustive=False)
    assert not get_checker("explore").cacheable(cut)
    assert get_checker("explore").cacheable(dataclasses.replace(cut, status=Status.VIOLATED))
    # Kafka: a disagreement (its ITF folders are how it is investigated) and a release offline are run again.
    kafka = get_checker("kafka")
    assert not kafka.cacheable(dataclasses.replace(ok, checker="kafka", status=Status.DIVERGED))
    assert not kafka.cacheable(dataclasses.replace(ok, checker="kafka", stats={"unavailable_releases": ["x"]}))


# --------------------------------------------------------------------------- warm runs


def test_a_warm_rerun_serves_every_cell_cached_with_identical_results(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    # (Hypothesis shrinks the broken toy's violation for seconds: it runs on the correct toy below.)
    cfg = _cfg(tmp_path / "cold", cache, mutants=True, checkers=["explore", "z3", "tlc"])
    cold = run_gate(cfg, lookup=_lookup(_broken_entry()))
    assert cold.cache is not None and cold.cache["hits"] == 0 and cold.cache["stored"] == len(cold.plan["cells"])
    # Into another output directory: the trace files are written again there, their paths moved.
    warm = run_gate(dataclasses.replace(cfg, out_dir=tmp_path / "warm"), lookup=_lookup(_broken_entry()))
    assert warm.cache is not None and warm.cache["hits"] == len(warm.plan["cells"]) and warm.cache["stored"] == 0
    assert warm.exit_code == cold.exit_code and [f.to_json() for f in warm.findings] == \
        [f.to_json() for f in cold.findings]
    assert [_plain(r, tmp_path / "warm") for r in warm.reports] == [_plain(r, tmp_path / "cold") for r in cold.reports]
    assert [list(r.counts) for r in warm.reports] == [list(r.counts) for r in cold.reports]  # in their own order
    assert warm.mutants is not None and cold.mutants is not None
    assert warm.mutants["scores"] == cold.mutants["scores"]
    assert all(r.cached is not None and r.cached["run"] == cold.cache["run"] and r.cached["key"]
               for r in warm.reports)
    assert all(row["cached"] for row in warm.plan["cells"])
    violated = [v for r in warm.reports for v in r.properties.values() if v.status == VIOLATED]
    assert violated
    for v in violated:  # the files are there again, and the traces (the report's sequence diagrams) rebuilt
        assert v.trace_path and v.trace_path.startswith(str((tmp_path / "warm").resolve()))
        assert Path(v.trace_path).is_file() and v.trace_text
        assert v.trace is not None and v.trace.steps
    paths = write_outputs(warm, tmp_path / "warm")
    summary = json.loads(Path(paths["summary"]).read_text())
    assert summary["cache"]["hits"] == len(summary["plan"]["cells"])
    assert all(r["cached"]["run"] == cold.cache["run"] for r in summary["reports"])
    cases = ET.parse(paths["junit"]).getroot().findall(".//testcase")
    assert cases and all(c.find("properties/property[@name='cached']") is not None for c in cases)
    html = Path(paths["html"]).read_text()
    assert "ok (cached)" in html or "violated (cached)" in html
    assert f"cached: run {cold.cache['run']}" in html


def test_a_parallel_warm_run_is_the_sequential_one(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cold = run_gate(_cfg(tmp_path / "a", cache, parallel=2), lookup=_lookup(PROTOCOL))
    warm = run_gate(_cfg(tmp_path / "b", cache, parallel=2), lookup=_lookup(PROTOCOL))
    assert cold.cache is not None and warm.cache is not None
    assert cold.cache["stored"] == len(cold.reports) and warm.cache["hits"] == len(warm.reports)
    assert [_plain(r, tmp_path / "b") for r in warm.reports] == [_plain(r, tmp_path / "a") for r in cold.reports]


# --------------------------------------------------------------------------- what a change reruns


class Snapshot:
    """Reads each file once (the first read is the content for the whole test, whatever changes on disk), and
    serves the edits a test makes on top."""

    def __init__(self) -> None:
        self.files: dict[Path, bytes] = {}
        self.edits: dict[Path, bytes] = {}

    def read(self, path: Path) -> bytes:
        p = Path(path).resolve()
        if p in self.edits:
            return self.edits[p]
        if p not in self.files:
            self.files[p] = p.read_bytes()
        return self.files[p]

    def edit(self, path: Path, old: bytes, new: bytes) -> None:
        data = self.read(path)
        assert old in data, (path, old)
        self.edits[Path(path).resolve()] = data.replace(old, new, 1)


@pytest.fixture
def snapshot(monkeypatch: pytest.MonkeyPatch) -> Snapshot:
    snap = Snapshot()
    monkeypatch.setattr(content_module, "read_bytes", snap.read)
    return snap


def _keys(cfg: GateConfig, lookup: Callable[[str], ProtocolEntry] = get_protocol) -> dict[str, str]:
    cells, _ = plan_cells(cfg, lookup)
    ctx = CheckContext.for_gate(cfg.out_dir, cfg.context)
    builder = KeyBuilder(cells, ctx)
    out: dict[str, str] = {}
    for c in cells:
        key = builder.key(c, 1)
        name = c.name + (" (compare)" if c.differential_only else "")
        assert name not in out
        out[name] = key.digest if isinstance(key, CellKey) else f"none: {key}"
    return out


@pytest.fixture(scope="module")
def two_protocols(tmp_path_factory: pytest.TempPathFactory) -> GateConfig:
    """The ci tier of two protocols (no broken variants), every checker kind that keys its cells."""
    cfg = load_gate_config(None, tmp_path_factory.mktemp("keys") / "out")
    cfg.protocols = ["features", "streams_probing"]
    cfg.configs = {p: cfg.configs[p] for p in cfg.protocols}
    cfg.checkers = ["explore", "spark", "hypothesis", "z3", "tlc", "conform", "apalache", "kafka"]
    cfg.mutants = False
    return cfg


def _changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    assert before.keys() == after.keys()
    return {n for n in before if before[n] != after[n]}


def _cells(keys: dict[str, str], protocol: str | None = None, checkers: tuple[str, ...] | None = None,
           config: str | None = None) -> set[str]:
    out = set()
    for name in keys:
        proto, label, _profile, checker = name.split(" ")[0].split("/")[:4]
        if ((protocol is None or proto == protocol) and (checkers is None or checker in checkers)
                and (config is None or label == config)):
            out.add(name)
    return out


def test_every_cell_of_the_two_protocols_has_a_key(two_protocols: GateConfig, snapshot: Snapshot) -> None:
    keys = _keys(two_protocols)
    assert not [n for n, k in keys.items() if k.startswith("none")], keys
    assert len(set(keys.values())) == len(keys)  # no two cells share a key
    assert _keys(two_protocols) == keys  # and it is the same on the next computation


def test_a_property_edit_reruns_exactly_that_protocols_cells(two_protocols: GateConfig, snapshot: Snapshot) -> None:
    before = _keys(two_protocols)
    snapshot.edit(ROOT / "properties" / "features.py", b"\n", b"\n# edited\n")
    assert _changed(before, _keys(two_protocols)) == _cells(before, "features")  # every kind reads properties


def test_a_spec_line_reruns_only_that_protocols_tla_cells(two_protocols: GateConfig, snapshot: Snapshot) -> None:
    before = _keys(two_protocols)
    snapshot.edit(ROOT / "specs" / "Features.tla", b"\n", b"\n\\* edited\n")
    assert _changed(before, _keys(two_protocols)) == _cells(before, "features", ("tlc", "conform", "apalache"))


def test_a_decision_rule_edit_reruns_only_that_protocols_z3_cells(two_protocols: GateConfig,
                                                                  snapshot: Snapshot) -> None:
    before = _keys(two_protocols)
    snapshot.edit(ROOT / "model" / "decisions" / "streams.py", b"\n", b"\n# edited\n")
    assert _changed(before, _keys(two_protocols)) == _cells(before, "streams_probing", ("z3",))


def test_the_z3_version_reruns_only_z3_cells(two_protocols: GateConfig, snapshot: Snapshot,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from rollcheck.checkers import inputs

    before = _keys(two_protocols)
    real = inputs.metadata.version
    monkeypatch.setattr(inputs.metadata, "version", lambda d: "0.0.1" if d == "z3-solver" else real(d))
    assert _changed(before, _keys(two_protocols)) == _cells(before, checkers=("z3",))


def test_an_adapter_edit_reruns_only_kafka_cells(two_protocols: GateConfig, snapshot: Snapshot) -> None:
    before = _keys(two_protocols)
    snapshot.edit(ROOT / "kafka_oracle" / "features" / "zk-2.8" / "pom.xml", b"<", b"<!-- edited --><")
    assert _changed(before, _keys(two_protocols)) == _cells(before, "features", ("kafka",))
    loop = sorted((ROOT / "kafka_oracle" / "common").rglob("*.java"))[0]  # every adapter compiles it
    snapshot.edit(loop, b"\n", b"\n// edited\n")
    assert _changed(before, _keys(two_protocols)) == _cells(before, checkers=("kafka",))


def test_an_engine_edit_reruns_every_cell(two_protocols: GateConfig, snapshot: Snapshot) -> None:
    before = _keys(two_protocols)
    snapshot.edit(ROOT / "rollcheck" / "core" / "transition.py", b"\n", b"\n# edited\n")
    assert _changed(before, _keys(two_protocols)) == set(before)


def test_a_config_value_reruns_only_that_configs_cells(two_protocols: GateConfig, snapshot: Snapshot) -> None:
    before = _keys(two_protocols)
    features = get_protocol("features")
    small = features.configs["small"]
    bigger = dataclasses.replace(small, max_epoch=small.max_epoch + 1)
    changed = dataclasses.replace(features, configs={**features.configs, "small": bigger})
    after = _keys(two_protocols, lambda n: changed if n == "features" else get_protocol(n))
    # Conformance probes the spec with every config of its protocol (its domain check): its cells read them all.
    assert _changed(before, after) == (_cells(before, "features", config="small")
                                       | _cells(before, "features", ("conform",)))


def test_a_toy_reference_edit_reruns_its_cells_and_no_others(tmp_path: Path, snapshot: Snapshot) -> None:
    """On a run: the toy's build lives in tests/toy.py; a second protocol whose build lives in this file (which
    imports tests/toy.py) reruns too, a third whose reference does not import it does not."""
    other = dataclasses.replace(PROTOCOL, name="toy2", build=_toy2_build)
    entries = {"toy": PROTOCOL, "toy2": other}
    cfg = _cfg(tmp_path / "a", tmp_path / "cache", protocols=["toy", "toy2"],
               configs={"toy": ["small"], "toy2": ["small"]}, checkers=["explore"])
    first = run_gate(cfg, lookup=entries.__getitem__)
    assert first.cache is not None and first.cache["stored"] == 4
    snapshot.edit(Path(__file__), b"\n", b"\n# edited\n")  # toy2's reference: this module
    second = run_gate(dataclasses.replace(cfg, out_dir=tmp_path / "b"), lookup=entries.__getitem__)
    assert [(r.protocol, r.cached is not None) for r in second.reports] == [
        ("toy", True), ("toy", True), ("toy2", False), ("toy2", False)]
    snapshot.edit(ROOT / "tests" / "toy.py", b"\n", b"\n# edited\n")  # both import it
    third = run_gate(dataclasses.replace(cfg, out_dir=tmp_path / "c"), lookup=entries.__getitem__)
    assert not [r for r in third.reports if r.cached is not None]
    assert [_plain(r, tmp_path / "c") for r in third.reports] == [_plain(r, tmp_path / "a") for r in first.reports]


def _toy2_build(config: Any) -> ToySystem:
    return ToySystem(config)


def test_fuzzing_and_cluster_cells_and_errors_are_never_stored(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, tmp_path / "cache", checkers=["explore"])
    cells, _ = plan_cells(cfg, _lookup(PROTOCOL))
    builder = KeyBuilder(cells, CheckContext.for_gate(tmp_path, {}))
    for checker in ("fuzz", "cluster"):
        assert isinstance(builder.key(dataclasses.replace(cells[0], checker=checker), 1), str)

    def crashing(_config: Any) -> ToySystem:
        raise RuntimeError("boom")

    result = run_gate(cfg, lookup=_lookup(dataclasses.replace(PROTOCOL, build=crashing)))
    assert {r.status for r in result.reports} == {Status.ERROR}
    assert result.cache is not None and result.cache["stored"] == 0


# --------------------------------------------------------------------------- faults


def _entries(cache: Path) -> list[Path]:
    return sorted((cache / "cells").rglob("*.json"))


def test_a_damaged_or_foreign_entry_is_one_line_and_the_cell_runs(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cfg = _cfg(tmp_path / "a", cache, checkers=["explore"])
    first = run_gate(cfg, lookup=_lookup(PROTOCOL))
    files = _entries(cache)
    assert len(files) == len(first.reports) == 4
    files[0].write_bytes(files[0].read_bytes()[:-40] + b"x" * 40)  # damaged
    files[1].write_bytes(files[2].read_bytes())  # another cell's entry under this name
    notes: list[str] = []
    second = run_gate(dataclasses.replace(cfg, out_dir=tmp_path / "b"), lookup=_lookup(PROTOCOL), warn=notes.append)
    assert second.cache is not None and second.cache["hits"] == 2 and second.cache["stored"] == 2
    assert len(notes) == 2 and all("\n" not in n and n.endswith("ignored, the cell runs") for n in notes)
    assert any("damaged" in n for n in notes) and any("foreign" in n for n in notes)
    assert second.cache["notes"] == notes
    assert [_plain(r, tmp_path / "b") for r in second.reports] == [_plain(r, tmp_path / "a") for r in first.reports]
    third = run_gate(dataclasses.replace(cfg, out_dir=tmp_path / "c"), lookup=_lookup(PROTOCOL), warn=notes.append)
    assert third.cache is not None and third.cache["hits"] == 4 and len(notes) == 2  # rewritten whole


def test_an_unusable_store_is_one_line_and_the_gate_runs_without_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    notes: list[str] = []
    result = run_gate(_cfg(tmp_path / "a", blocker, checkers=["explore"]), lookup=_lookup(PROTOCOL),
                      warn=notes.append)
    assert result.exit_code == 0 and result.cache is None and len(result.reports) == 4
    assert len(notes) == 1 and "cannot be used" in notes[0] and "runs without it" in notes[0]

    import rollcheck.gate.cache as store

    def refuse(*_a: Any, **_k: Any) -> Any:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(store.tempfile, "mkstemp", refuse)  # not writable (this test may run as root)
    notes.clear()
    result = run_gate(_cfg(tmp_path / "b", tmp_path / "ro", checkers=["explore"]), lookup=_lookup(PROTOCOL),
                      warn=notes.append)
    assert result.exit_code == 0 and result.cache is None
    assert notes == [f"rollcheck: cache {tmp_path / 'ro'}: cannot be used (Permission denied): the gate runs "
                     "without it"]


def test_a_full_disk_is_one_line_and_the_gate_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rollcheck.gate.cache as store

    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store.os, "fsync", full)
    notes: list[str] = []
    result = run_gate(_cfg(tmp_path / "a", tmp_path / "cache", checkers=["explore"]), lookup=_lookup(PROTOCOL),
                      warn=notes.append)
    assert result.exit_code == 0 and len(result.reports) == 4
    assert result.cache is not None and result.cache["stored"] == 0
    assert len(notes) == 1 and "No space left on device" in notes[0]
    assert _entries(tmp_path / "cache") == [] and not list((tmp_path / "cache" / "cells").rglob(".*.json.*"))


# --------------------------------------------------------------------------- the command line


def _gate(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = tmp / "gate.toml"
    config.write_text('[gate]\nprotocols = ["streams_probing"]\nconfigs = { streams_probing = ["small"] }\n'
                      'story_configs = { streams_probing = [] }\nconform_configs = { streams_probing = [] }\n'
                      'checkers = ["explore"]\nprofiles = ["kip"]\nmutants = false\nparallel = 1\n')
    env = {k: v for k, v in os.environ.items() if k != "ROLLCHECK_GATE_CACHE"}
    return subprocess.run([sys.executable, "-m", "rollcheck", "gate", "--gate-config", str(config), "--quiet",
                           "--out", str(tmp / "out"), *args], capture_output=True, text=True, timeout=300,
                          check=False, env=env)


def test_cache_and_no_cache_on_the_command_line(tmp_path: Path) -> None:
    store = tmp_path / "store"
    cold = _gate(tmp_path, "--cache", str(store))
    assert cold.returncode == 0, cold.stderr
    assert "0 of 1 cells' results reused" in cold.stdout and "(cached)" not in cold.stdout
    warm = _gate(tmp_path, "--cache", str(store))
    assert warm.returncode == 0, warm.stderr
    assert "ok (cached)" in warm.stdout and "1 of 1 cells' results reused" in warm.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["cache"]["hits"] == 1 and summary["reports"][0]["cached"]["run"]
    off = _gate(tmp_path, "--cache", str(store), "--no-cache")
    assert off.returncode == 2 and "not allowed with argument" in off.stderr  # one or the other
    off = _gate(tmp_path, "--no-cache")
    assert off.returncode == 0 and "(cached)" not in off.stdout and "cache " not in off.stdout
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["cache"] is None
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    bad = _gate(tmp_path, "--cache", str(blocker))
    assert bad.returncode == 0 and "Traceback" not in bad.stderr
    assert [ln for ln in bad.stderr.splitlines() if "cannot be used" in ln] == [
        f"rollcheck: cache {blocker}: cannot be used (Not a directory): the gate runs without it"]
