"""``rollcheck conform P --engine spark``: TLC simulation traces replayed on the reference by Spark.

A clean run writes one Parquet row per trace and a summary; a reference with one rule changed (the kip
leader no longer asks for the final rebalance, as in test_spec_streams_probing) yields divergent rows and
exit 3; Ctrl-C keeps a summary marked partial; bad input is one line and exit 2 before Spark starts. The
worker caches (:class:`~rollcheck.spark.conform.Remembering`, :class:`~rollcheck.spark.conform.TraceReader`)
change nothing that is compared."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from rollcheck.cli import main
from rollcheck.cli.commands import conform_cmd
from rollcheck.core.registry import get_protocol
from rollcheck.spark import conform as spark_conform
from rollcheck.spark.conform import Remembering, TraceReader, check_local_master
from rollcheck.tla.binding import binding_for
from rollcheck.tla.conformance import replay_spec_trace, tlc_simulation_files
from rollcheck.tla.tlc import parse_simulation_trace

PROTOCOL = "streams_probing"
ENTRY = get_protocol(PROTOCOL)
MUTATION = frozenset({"no_leader_follow_up"})  # a kip-profile rule of the reference, changed
COLUMNS = ["trace", "file", "length", "ok", "divergent_step", "variables", "message"]
RUN = f"{PROTOCOL}-small-kip-spark"


def _cli(out: Path, *extra: str) -> int:
    return main(["conform", PROTOCOL, "--config", "small", "--profile", "kip", "--engine", "spark",
                 "--out", str(out), "--quiet", *extra])


@pytest.mark.spark
def test_a_clean_run_writes_a_verdict_per_trace(spark: Any, tmp_path: Path) -> None:
    assert _cli(tmp_path, "--traces", "200", "--keep-traces") == 0
    run = tmp_path / RUN
    df = spark.read.parquet(str(run / "verdicts.parquet"))
    assert df.columns == COLUMNS
    rows = df.collect()
    assert sorted(r.trace for r in rows) == list(range(200))
    assert all(r.ok and r.divergent_step is None and r.variables == [] and r.message is None for r in rows)
    assert all(1 <= r.length <= 30 for r in rows)
    doc = json.loads((run / "conform-summary.json").read_text())
    assert doc["ok"] and not doc["partial"] and doc["traces"] == doc["replayed"] == 200 and doc["divergent"] == 0
    assert doc["steps"] == sum(r.length for r in rows)
    assert doc["seconds"]["generation"] > 0 and doc["seconds"]["replay"] > 0
    assert doc["traces_per_second"]["replay"] > 0 and doc["cores"] >= 1
    assert doc["spark"]["master"] == spark.sparkContext.master
    assert "Apalache" in doc["apalache"]
    assert doc["parquet"] == str(run / "verdicts.parquet")
    top = json.loads((tmp_path / f"{PROTOCOL}-small-kip-conformance-spark.json").read_text())
    assert top["ok"] and top["engine"] == "spark" and len(top["reports"]) == 1
    # --keep-traces: TLC's files stay, and the workers' cached reading of them is parse_simulation_trace's
    files = sorted((run / "tlc" / "sim").glob("tr_*"))
    assert len(files) == 200
    reader = TraceReader()
    for f in files[:50]:
        steps, _targets = reader.read(f)
        assert [(s.action, s.values) for s in steps] == [(s.action, s.values) for s in parse_simulation_trace(f)]


@pytest.mark.spark
def test_a_divergent_reference_gives_divergent_rows_and_exit_3(spark: Any, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    real = conform_cmd._conform_spark

    def on_mutated_reference(protocol: str, config: Any, spark_: Any, out: Path, **kwargs: Any) -> Any:
        # The spec is written from the config, the executors build the reference from the mutated one.
        return real(protocol, config, spark_, out, reference_config=replace(config, mutations=MUTATION), **kwargs)

    monkeypatch.setattr(conform_cmd, "_conform_spark", on_mutated_reference)
    assert _cli(tmp_path, "--traces", "200") == 3
    run = tmp_path / RUN
    rows = spark.read.parquet(str(run / "verdicts.parquet")).collect()
    bad = [r for r in rows if not r.ok]
    assert len(rows) == 200 and bad
    assert all(r.divergent_step is not None and r.divergent_step > 0 and "follow_up" in r.variables and r.message
               for r in bad)
    doc = json.loads((run / "conform-summary.json").read_text())
    assert not doc["ok"] and doc["divergent"] == len(bad) and not doc["error"]
    assert doc["divergent_itf"] and all(Path(p).is_file() for p in doc["divergent_itf"])
    assert not (run / "tlc" / "sim").exists() and not (run / "tlc" / "sim").is_symlink()  # no --keep-traces
    if Path("/dev/shm").is_dir():  # written in memory, and removed
        assert doc["trace_files"].startswith("/dev/shm/") and not Path(doc["trace_files"]).exists()


@pytest.mark.spark
def test_ctrl_c_keeps_a_partial_summary(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(spark_conform, "WAVE_MIN", 50)
    monkeypatch.setattr(spark_conform, "WAVES", 4)
    real = spark_conform._count
    calls = []

    def count_then_interrupt(result: Any, got: Any) -> None:
        real(result, got)
        calls.append(len(got))
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(spark_conform, "_count", count_then_interrupt)
    assert _cli(tmp_path, "--traces", "200") == 130
    assert "summary marked partial" in capsys.readouterr().err
    kept = tmp_path / f"{RUN}.partial"
    doc = json.loads((kept / "conform-summary.json").read_text())
    assert doc["partial"] and not doc["ok"] and doc["replayed"] == 100 and doc["generated"] == 200
    lines = [json.loads(line) for line in (kept / "verdicts.partial.jsonl").read_text().splitlines()]
    assert [r["trace"] for r in lines] == list(range(100)) and all(list(r) == COLUMNS and r["ok"] for r in lines)
    assert not (kept / "verdicts.parquet").exists()  # written at the end only
    assert not (tmp_path / RUN).exists()  # no completed run was published
    assert not Path(doc["trace_files"]).exists() and not (kept / "tlc" / "sim").is_symlink()


@pytest.mark.parametrize("args, message", [
    (["--engine", "apalache"], "invalid choice"),
    (["--engine", "spark", "--traces", "0"], "must be at least 1"),
    (["--engine", "spark", "--master", "spark://10.1.2.3:7077"], "loopback"),
    (["--engine", "spark", "--master", "yarn"], "loopback"),
    (["--engine", "spark", "--master", "k8s://https://api:443"], "loopback"),
    (["--master", "local[2]"], "only with --engine spark"),
    (["--keep-traces"], "only with --engine spark"),
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(["conform", PROTOCOL, "--out", str(tmp_path), *args])
    except SystemExit as stop:  # a flag argparse refuses
        code = int(stop.code or 0)
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) == 1
    assert not any(tmp_path.iterdir())  # nothing ran


def test_local_masters_pass() -> None:
    for master in ("local", "local[*]", "local[2]", "local[2,3]", "local-cluster[2,1,1024]",
                   "spark://127.0.0.1:7077", "spark://localhost:7077", "spark://[::1]:7077"):
        check_local_master(master)


def test_the_worker_caches_change_no_verdict(tmp_path: Path) -> None:
    """replay_spec_trace on the reference itself and through the workers' caches (states held once with
    their hash, successors remembered, views and parsed states cached): the same verdicts, and the same
    divergences (step, message, differences) on a reference with one rule changed."""
    config = replace(ENTRY.configs["small"], profile="kip")
    binding = binding_for(PROTOCOL)
    files, res = tlc_simulation_files(binding, ENTRY.build(config), tmp_path, traces=60, depth=30, seed=1,
                                      timeout=300, workers=2)
    assert not res.error and len(files) == 60
    reader = TraceReader()
    for cfg in (config, replace(config, mutations=MUTATION)):
        plain, cached = ENTRY.build(cfg), Remembering(ENTRY.build(cfg), limit=50)  # small: forgets, too
        found = 0
        for f in files:
            steps, targets = reader.read(f)
            _t, a = replay_spec_trace(plain, parse_simulation_trace(f), f.name, binding.actions)
            _u, b = replay_spec_trace(cached, steps, f.name, binding.actions, views=cached.views, targets=targets)
            assert (a is None) == (b is None)
            if a is not None and b is not None:
                found += 1
                assert (a.step, a.action, a.message, a.differences) == (b.step, b.action, b.message, b.differences)
        assert found == 0 if cfg is config else found > 0
