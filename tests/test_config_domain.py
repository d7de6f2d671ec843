"""conform's (d): the configs the reference accepts are those its spec's ConfigOk is written for.

A bound of the config's validation off by one (a cluster the reference refuses that the docs promise, or
one it runs on that nobody checked) is a divergence, as a rule of the system would be."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import TransitionSystem
from rollcheck.tla.domain import domain_probes
from specs.zk_migration import BINDING

pytestmark = pytest.mark.tlc
ENTRY = get_protocol("zk_migration")


def _compare_on(protocol: str, base: str, build: Any, tmp_path: Path) -> Any:
    """conform (d) around one named config of ``protocol`` (no other bases), ``build`` as the reference."""
    from rollcheck.tla.binding import binding_for
    from rollcheck.tla.domain import compare_domain

    entry = get_protocol(protocol)
    return compare_domain(binding_for(protocol), entry.build(entry.configs[base]), build, tmp_path, timeout=300)


def _rows(res: Any) -> list[tuple[str, Any, bool, bool]]:
    return [(p.field, p.value, accepted, in_domain) for p, accepted, in_domain, _ in res.mismatches]


def _compare(build: Any, tmp_path: Path) -> Any:
    return _compare_on("zk_migration", "small", build, tmp_path)


def test_probes_change_one_field_around_the_base() -> None:
    base = ENTRY.configs["small"]
    probes = domain_probes(base)
    assert {(p.field, p.value) for p in probes} >= {("zk_brokers", 0), ("zk_brokers", 4), ("voters", 2),
                                                    ("lag_limit", 0), ("profile", "?")}
    assert all(p.config == replace(base, **{p.field: p.value}) for p in probes)
    assert not any(p.field in ("failover", "rollback") for p in probes)  # switches are valid both ways
    assert ("mutations", frozenset({"?"})) in {(p.field, p.value) for p in probes}


def test_the_reference_and_the_spec_accept_the_same_configs(tmp_path: Path) -> None:
    res = _compare(ENTRY.build, tmp_path)
    assert not res.error and not res.mismatches, res.mismatches
    assert res.probes >= 40


def test_a_bound_off_by_one_in_the_validation_is_a_divergence(tmp_path: Path) -> None:
    """A reference that refuses three ZK brokers (``<= 3`` written ``< 3``) and one that runs on four."""

    def refuses_three(config: Any) -> TransitionSystem[Any]:
        if config.zk_brokers == 3:
            raise ValueError("zk_brokers must be between 1 and 2")
        return ENTRY.build(config)

    def runs_on_four(config: Any) -> TransitionSystem[Any]:
        return ENTRY.build(replace(config, zk_brokers=min(config.zk_brokers, 3)))

    res = _compare(refuses_three, tmp_path / "three")
    assert [(p.field, p.value, accepted, in_domain) for p, accepted, in_domain, _ in res.mismatches] \
        == [("zk_brokers", 3, False, True)]
    res = _compare(runs_on_four, tmp_path / "four")
    assert ("zk_brokers", 4, True, False) in {(p.field, p.value, a, d) for p, a, d, _ in res.mismatches}


def test_conform_reports_the_domain(tmp_path: Path) -> None:
    from rollcheck.tla.conformance import conform

    ts = ENTRY.build(ENTRY.configs["small"])

    def runs_on_four(config: Any) -> TransitionSystem[Any]:
        return ENTRY.build(replace(config, zk_brokers=min(config.zk_brokers, 3)))

    rep = conform(BINDING, ts, ts, tmp_path, config_name="small", traces=2, depth=5, build=runs_on_four)
    assert not rep.ok and rep.domain_probes and rep.by_check("domain")
    assert rep.to_json()["domain"]["divergences"][0]["message"].startswith("zk_brokers = 4: the reference accepts")



def test_conform_domain_only_runs_d_alone_and_finds_the_same_divergence(tmp_path: Path) -> None:
    """``--domain-only`` (the mutation campaign's first step for a config module's edit): one TLC run, no
    reachable set, no traces; the same divergence as the whole check; refused with the Spark engine, and for a
    spec with no domain, in one line."""
    import json
    import subprocess
    import sys

    from rollcheck.core.errors import UserError
    from rollcheck.tla.conformance import conform

    ts = ENTRY.build(ENTRY.configs["small"])

    def runs_on_four(config: Any) -> TransitionSystem[Any]:
        return ENTRY.build(replace(config, zk_brokers=min(config.zk_brokers, 3)))

    rep = conform(BINDING, ts, ts, tmp_path, config_name="small", build=runs_on_four, domain_only=True)
    assert rep.tlc_states is None and rep.replayed_traces == rep.validated_traces == 0
    assert not rep.ok and rep.by_check("domain")[0].message.startswith("zk_brokers = 4: the reference accepts")
    with pytest.raises(UserError, match="nothing to check"):
        conform(BINDING, ts, ts, tmp_path, domain_only=True)
    ok = subprocess.run([sys.executable, "-m", "rollcheck", "conform", "zk_migration", "--profile", "kip",
                         "--domain-only", "--json", "--quiet", "--out", str(tmp_path / "cli")],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    report = json.loads(ok.stdout)["reports"][0]
    assert report["domain"]["probes"] > 0 and report["reachable"]["tlc_states"] is None
    spark = subprocess.run([sys.executable, "-m", "rollcheck", "conform", "zk_migration", "--domain-only",
                            "--engine", "spark"], capture_output=True, text=True)
    assert spark.returncode == 2 and spark.stderr.strip().count("\n") == 0 and "--domain-only" in spark.stderr


STREAMS = get_protocol("streams_probing")


def _streams_compare(build: Any, base: str, tmp_path: Path) -> list[tuple[str, Any, bool, bool]]:
    res = _compare_on("streams_probing", base, build, tmp_path)
    assert not res.error
    return _rows(res)


def test_streams_probing_an_upgrade_to_the_same_release_refused_is_a_divergence(tmp_path: Path) -> None:
    """``new < old`` written ``new <= old``: the binding's release names reach the probes from 2.0 to 2.0 and
    from post-2.0 to post-2.0 around small (2.0 to post-2.0)."""

    def refuses_same(config: Any) -> TransitionSystem[Any]:
        if config.old == config.new:
            raise ValueError(f"to_release {config.new} is not newer than from_release {config.old}")
        return STREAMS.build(config)

    assert sorted(_streams_compare(refuses_same, "small", tmp_path)) == [
        ("from_release", "post-2.0", False, True), ("to_release", "2.0", False, True)]
    assert _streams_compare(STREAMS.build, "small", tmp_path / "reference") == []


def test_streams_probing_a_mistaken_upgrade_from_that_is_no_mistake_is_a_divergence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The misconfiguration's check dropped: around the operator's story, upgrade.from "2.0" leaves 3.9 at
    version 11, which the post-2.0 group cannot read, so it is no mistake and the spec is not written for it."""
    from reference_impl.streams_probing.config import StreamsProbingConfig

    checked = StreamsProbingConfig._validate_misconfiguration

    def dropped(self: StreamsProbingConfig, *args: Any) -> None:
        try:
            checked(self, *args)
        except ValueError as exc:
            if "is no mistake" not in str(exc):
                raise

    monkeypatch.setattr(StreamsProbingConfig, "_validate_misconfiguration", dropped)
    assert ("misconfigured_upgrade_from", "2.0", True, False) in _streams_compare(
        STREAMS.build, "misconfigured-upgrade-from", tmp_path)


@pytest.mark.parametrize(("protocol", "field", "bound"), [
    ("features", "brokers", 6),  # 1 <= brokers <= 6 written < 6
    ("metadata_version", "voters", 5),  # 1 <= voters <= 5 written < 5
    ("streams_probing", "instances", 4),  # 1 <= instances <= 4 written < 4
])
def test_each_spec_states_its_domain_and_a_bound_one_below_is_a_divergence(
        protocol: str, field: str, bound: int, tmp_path: Path) -> None:
    """Every protocol's spec has a ConfigOk that agrees with the reference around small, and its upper bound is
    probed (the binding's values reach bounds above the generic -1..5)."""
    entry = get_protocol(protocol)
    res = _compare_on(protocol, "small", entry.build, tmp_path / "reference")
    assert not res.error and not res.mismatches and res.probes >= 30, res.mismatches

    def one_below(config: Any) -> TransitionSystem[Any]:
        if getattr(config, field) == bound:
            raise ValueError(f"{field} must be below {bound}")
        return entry.build(config)

    assert _rows(_compare_on(protocol, "small", one_below, tmp_path / "mutated")) == [(field, bound, False, True)]
