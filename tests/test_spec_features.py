"""specs/Features.tla under TLC: the same reachable states as the reference under both profiles, two-way
trace conformance, and every broken variant caught by one of the properties it is expected to break.

The three checks are independent and mostly single-threaded Python (the reference explorer, parsing TLC's
dumps, replaying traces), so they run side by side in worker processes started by a module fixture
(spawned, not forked: the test process may hold a Spark JVM gateway and its threads); each test waits
for its own result.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from rollcheck.core.registry import get_protocol
from rollcheck.tla.binding import operator_name, write_model
from rollcheck.tla.conformance import ConformanceReport, conform
from rollcheck.tla.tlc import run_tlc
from specs.features import BINDING

pytestmark = pytest.mark.tlc
ENTRY = get_protocol("features")
PROFILES = ("kip", "kafka")


def _conform_small(profile: str, directory: Path) -> ConformanceReport:
    ts = ENTRY.build(replace(ENTRY.configs["small"], profile=profile))
    return conform(BINDING, ts, ts, directory, config_name="small", traces=30, depth=25)


def _check_variants(directory: Path) -> list[tuple[str, tuple[str, ...], str | None, str, int]]:
    """(variant id, expected ids, violated operator, TLC error, counterexample length) of each variant."""
    out = []
    for v in ENTRY.variants:
        model = write_model(BINDING, v.build(ENTRY.configs[v.config]), directory / v.id)
        res = run_tlc(model.directory, model.module, model.cfg, workers=1)
        out.append((v.id, v.expect, res.violated, res.error, len(res.trace)))
    return out


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future[object]]]:
    base = tmp_path_factory.mktemp("spec-features")
    with ProcessPoolExecutor(max_workers=3, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures: dict[str, Future[object]] = {p: pool.submit(_conform_small, p, base / p) for p in PROFILES}
        futures["variants"] = pool.submit(_check_variants, base / "variants")
        yield futures


@pytest.mark.parametrize("profile", PROFILES)
def test_conformance_small(profile: str, jobs: dict[str, Future[object]]) -> None:
    r = jobs[profile].result()
    assert isinstance(r, ConformanceReport)
    assert r.ok, [str(d) for d in r.divergences] + [r.error]
    assert r.tlc_states == r.reference_views == r.reference_states
    assert r.replayed_traces >= 30 and r.validated_traces == 30


def test_tlc_finds_every_variant(jobs: dict[str, Future[object]]) -> None:
    results = jobs["variants"].result()
    assert isinstance(results, list) and len(results) == len(ENTRY.variants) > 0
    for vid, expect, violated, error, trace_len in results:
        assert violated in {operator_name(e) for e in expect}, (vid, violated, error)
        assert trace_len > 0, vid
