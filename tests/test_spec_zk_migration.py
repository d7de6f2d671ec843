"""specs/ZkMigration.tla under TLC: the same reachable states as the reference (config "small", both
profiles, and under kafka with an incompatible broker, where a restarted broker keeps its registration),
two-way trace conformance, every broken variant caught, and the KIP finding MIG-01R.

A liveness bug (a variant whose expected kills are all graph properties or witnesses: MIG-M10, MIG-M12)
breaks no safety property: TLC, which checks the invariants and step properties, must find none, and the
witnesses it expects vacuous must be vacuous for TLC too (the graph properties are the explorer's).

The TLC runs go two at a time, in two worker processes, to keep the module under 90 s. TLC 2.15 copies
its standard modules (TLC.tla...) into java.io.tmpdir on every run, so TLC runs started together
with one tmpdir can read a half-written module: each worker gets a tmpdir of its own. The runs are small
and dominated by JVM start-up, so the workers' JVMs skip the optimizing JIT (C1 only)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from properties.zk_migration import PROPERTIES
from reference_impl.zk_migration.system import ZkMigrationSystem
from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import AnyProperty
from rollcheck.tla.binding import operator_name, write_model
from rollcheck.tla.conformance import ConformanceReport, conform
from rollcheck.tla.tlc import ModelCheckResult, run_tlc
from rollcheck.tla.witness import WitnessRuns, check_witnesses
from specs.zk_migration import BINDING

pytestmark = pytest.mark.tlc
ENTRY = get_protocol("zk_migration")
PROFILES = ("kip", "kafka")
SMALL_STATES = {"kip": 1336, "kafka": 1440}
# small with an incompatible broker (the ``incompatible`` story config) under kafka, where a restarted broker
# keeps its (fenced) registration, and the operator may restart it at the right IBP again (3,630 before that)
INCOMPATIBLE_STATES = 6606
LIVENESS = frozenset(p.id for p in PROPERTIES if p.kind.value in ("graph", "witness"))


class _KipClaims(ZkMigrationSystem):
    """The reference with the KIP's claims that Kafka does not make (MIG-01R among them)."""

    def properties(self) -> Sequence[AnyProperty]:
        return PROPERTIES.bind(self, kip_claims=True)


def _worker_init(base: str) -> None:
    tmp = Path(base) / f"java-tmp-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    os.environ["JAVA_TOOL_OPTIONS"] = f"-Djava.io.tmpdir={tmp} -XX:TieredStopAtLevel=1"


def _conform(profile: str, directory: Path, incompatible_broker: bool = False) -> ConformanceReport:
    ts = ENTRY.build(replace(ENTRY.configs["small"], profile=profile, incompatible_broker=incompatible_broker))
    return conform(BINDING, ts, ts, directory, config_name="small", traces=30, depth=30)


def _variant(variant: str, directory: Path) -> tuple[ModelCheckResult, WitnessRuns | None]:
    """TLC on the variant's config; for a liveness bug also the witness runs of the witnesses it expects."""
    v = ENTRY.variant(variant)
    ts = v.build(ENTRY.configs[v.config])
    model = write_model(BINDING, ts, directory)
    res = run_tlc(model.directory, model.module, model.cfg, workers=1)
    witnesses = [e for e in v.expect if e in LIVENESS and PROPERTIES[e].kind.value == "witness"]
    if not (set(v.expect) <= LIVENESS and witnesses and res.ok):
        return res, None
    return res, check_witnesses(BINDING, ts, directory / "witnesses", witnesses, timeout=600, workers=1)


def _mig01r(profile: str, directory: Path) -> ModelCheckResult:
    ts = _KipClaims(replace(ENTRY.configs["small"], profile=profile))
    model = write_model(BINDING, ts, directory, only={"MIG-01R": True})
    return run_tlc(model.directory, model.module, model.cfg, workers=1)


def test_conformance_variants_and_findings(tmp_path: Path) -> None:
    with ProcessPoolExecutor(max_workers=2, initializer=_worker_init, initargs=(str(tmp_path),)) as pool:
        reports = {p: pool.submit(_conform, p, tmp_path / f"conform-{p}") for p in PROFILES}
        incompatible = pool.submit(_conform, "kafka", tmp_path / "conform-incompatible", True)
        variants = {v.id: pool.submit(_variant, v.id, tmp_path / v.id) for v in ENTRY.variants}
        # KIP-866's rollback deletes /controller_epoch: the next ZK controller's epoch restarts at 1 (kip only).
        findings = {p: pool.submit(_mig01r, p, tmp_path / f"mig01r-{p}") for p in PROFILES}

        for profile, fut in reports.items():
            r = fut.result()
            assert r.ok, (profile, [str(d) for d in r.divergences], r.error)
            assert r.tlc_states == r.reference_views == r.reference_states == SMALL_STATES[profile]
            assert r.replayed_traces >= 30 and r.validated_traces == 30
        r = incompatible.result()
        assert r.ok, ([str(d) for d in r.divergences], r.error)
        assert r.tlc_states == r.reference_views == r.reference_states == INCOMPATIBLE_STATES

        for vid, vfut in variants.items():
            res, runs = vfut.result()
            expect = ENTRY.variant(vid).expect
            if set(expect) <= LIVENESS:
                assert res.ok and res.violated is None, (vid, res.violated, res.error)
                witnesses = [e for e in expect if PROPERTIES[e].kind.value == "witness"]
                assert (runs.vacuous if runs else []) == witnesses, (vid, runs)
                continue
            assert res.violated in {operator_name(e) for e in expect}, (vid, res.violated, res.error)
            assert res.trace, vid

        kip, kafka = findings["kip"].result(), findings["kafka"].result()
        assert kip.violated == "MIG_01R" and kip.trace, kip.error
        assert kafka.ok and kafka.violated is None, kafka.error
