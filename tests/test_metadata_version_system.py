"""KIP-778 system level: exhaustive exploration under both profiles, the liveness checks, the broken
variants (explorer and Hypothesis), the kafka-profile findings, and the CLI on this protocol."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from properties.metadata_version import PROPERTIES
from reference_impl.metadata_version.system import MetadataVersionState, MetadataVersionSystem, NodeStatus
from rollcheck.cli import main
from rollcheck.core.registry import get_protocol
from rollcheck.core.traces import canonical_view
from rollcheck.explore.explorer import ExploreOptions, explore
from rollcheck.testing import ContractCase, ProtocolContract

ENTRY = get_protocol("metadata_version")


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_small_exploration_holds_with_liveness(profile: str) -> None:
    ts = ENTRY.build(replace(ENTRY.configs["small"], profile=profile))
    r = explore(ts, ExploreOptions(stop_at_first=False))
    assert r.complete and r.ok, [(v.property_id, v.trace.actions) for v in r.violations]
    statuses = {p.id: p.status for p in r.properties}
    assert statuses["MV-L1"] == "holds" and statuses["MV-L2"] == "holds"
    assert all(p.status == "holds" for p in r.properties if p.kind != "witness")
    # Every story the config exists for happens (MV-W3, the UNSAFE lossy downgrade, only where the KIP allows it).
    witnesses = {p.id: p.status for p in r.properties if p.kind == "witness"}
    expected = ["MV-W1", "MV-W2", "MV-W3", "MV-W4", "MV-W5"] if profile == "kip" else ["MV-W1", "MV-W2", "MV-W4",
                                                                                           "MV-W5"]
    assert list(witnesses) == expected
    assert all(s.startswith("reached at depth ") for s in witnesses.values()), witnesses


class _Widened(MetadataVersionSystem):
    """The kafka profile checked against the KIP's unrestricted downgrade claim (MV-L2 from any cluster)."""

    def properties(self):  # type: ignore[no-untyped-def]
        return PROPERTIES.bind(self, downgrade_from_any=True)


def test_finding_kafka_cannot_roll_back_after_a_lossy_version() -> None:
    # KIP-778 allows an UNSAFE lossy downgrade; Kafka 3.9/4.0 refuse it ("Unsafe metadata downgrade is not
    # supported in this version."), so a cluster at V5 on the new software can never return to the old one.
    kafka = explore(_Widened(replace(ENTRY.configs["small"], profile="kafka")), ExploreOptions(stop_at_first=False))
    assert [v.property_id for v in kafka.violations] == ["MV-L2"]
    stuck = kafka.violations[0].trace.states[-1]
    assert stuck.level in (4, 5)
    kip = explore(_Widened(ENTRY.configs["small"]), ExploreOptions(stop_at_first=False))
    assert kip.ok


def test_finding_kafka_before_controller_registration_checks_only_itself() -> None:
    # Below 3.7-IV0 Kafka cannot see the other voters' ranges: it commits a version that only the active
    # controller supports, and the other voters terminate. The KIP requires a majority.
    cfg = ENTRY.configs["kafka-catalog"]
    kafka = explore(ENTRY.build(cfg), ExploreOptions(stop_at_first=False))
    assert [v.property_id for v in kafka.violations] == ["MV-02"]
    trace = kafka.violations[0].trace
    assert trace.actions[-1].name == "UpdateFeatures"
    assert trace.states[-2].level <= 14 < trace.states[-1].level  # decided below 3.7-IV0 (level 15)
    assert explore(ENTRY.build(replace(cfg, profile="kip")), ExploreOptions(stop_at_first=False)).ok


def _do(ts: MetadataVersionSystem, s: MetadataVersionState, label: str) -> MetadataVersionState:
    for a, t in ts.successors(s):
        if repr(a) == label:
            return t
    raise AssertionError(f"{label} not enabled; enabled: {[repr(a) for a, _ in ts.successors(s)]}")


def test_single_roll_then_online_upgrade_and_a_lossy_unsafe_downgrade() -> None:
    ts = ENTRY.build(replace(ENTRY.configs["small"], max_log=3))
    s = next(iter(ts.initial_states()))
    assert s.level == 3  # the old binary's default (format without --metadata-version)
    refused = _do(ts, s, "UpdateFeatures(level=4, downgrade='NONE', dry_run=False)")
    assert refused == s  # nobody runs a binary that reads V4 yet
    for v in range(3):
        s = _do(ts, s, f"RestartNode(role='voter', node={v}, software='new')")
    s = _do(ts, s, "ElectLeader(voter=0)")
    s = _do(ts, s, "RestartNode(role='broker', node=0, software='new')")
    s = _do(ts, s, "RegisterBroker(broker=0)")
    assert not s.brokers[0].fenced
    s = _do(ts, s, "UpdateFeatures(level=5, downgrade='NONE', dry_run=False)")
    assert s.level == 5 and s.brokers[0].rpc_level == 3  # not replicated yet: still on V3's RPCs
    s = _do(ts, s, "ReplicateMetadata(broker=0)")
    assert s.brokers[0].rpc_level == 5 and s.log == (5,)
    s = _do(ts, s, "WriteRecord(introduced=4)")
    s = _do(ts, s, "WriteRecord(introduced=5)")
    # 5 -> 4 is lossless: every record stays (the V5 field is a tagged field V4 skips).
    s4 = _do(ts, s, "UpdateFeatures(level=4, downgrade='SAFE', dry_run=False)")
    assert s4.level == 4 and s4.records == frozenset({4, 5})
    # 4 -> 3 crosses V4, which changed the format: SAFE is refused, UNSAFE drops Bar and its field.
    assert _do(ts, s4, "UpdateFeatures(level=3, downgrade='SAFE', dry_run=False)") == s4
    s3 = _do(ts, s4, "UpdateFeatures(level=3, downgrade='UNSAFE', dry_run=False)")
    assert s3.level == 3 and s3.records == frozenset()
    # A software downgrade below the finalized version ends in termination, not in a misread log.
    bad = _do(ts, s, "RestartNode(role='broker', node=0, software='old')")
    assert bad.brokers[0].status is NodeStatus.TERMINATED


def test_kafka_refuses_the_unsafe_lossy_downgrade() -> None:
    ts = ENTRY.build(replace(ENTRY.configs["small"], profile="kafka", initial_software="new"))
    s = next(iter(ts.initial_states()))
    assert s.level == 5
    for label in ("UpdateFeatures(level=3, downgrade='UNSAFE', dry_run=False)",
                  "UpdateFeatures(level=3, downgrade='SAFE', dry_run=False)"):
        assert _do(ts, s, label) == s
    assert _do(ts, s, "UpdateFeatures(level=4, downgrade='SAFE', dry_run=False)").level == 4


def test_preview_cluster_bootstraps_at_level_one() -> None:
    ts = ENTRY.build(replace(ENTRY.configs["small"], initial_level=0))
    assert next(iter(ts.initial_states())).level == 1


def test_states_encode_canonically_and_views_are_itf() -> None:
    ts = ENTRY.build(ENTRY.configs["small"])
    s = next(iter(ts.initial_states()))
    for _, t in ts.successors(s):
        assert ts.decode(ts.encode(t)) == t
        canonical_view(ts.view(t))


def test_config_validation_errors() -> None:
    from rollcheck.core.configs import override
    from rollcheck.core.errors import UserError

    for table, msg in [({"catalog": "nope"}, "unknown metadata.version catalog"),
                       ({"initial_software": "nope"}, "unknown software"),
                       ({"voters": 0}, "voters"), ({"levels": [99]}, "outside"),
                       ({"initial_level": 5}, "not supported by initial software"),
                       ({"mutations": ["no_such_bug"]}, "unknown mutations")]:
        with pytest.raises(UserError, match=msg):
            override(ENTRY.configs["small"], table)


def test_cli_explore_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "metadata_version", "--config", "small", "--profile", "kafka", "--json", "--quiet",
                 "--out", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["distinct_states"] == 5488 and doc["violations"] == [] and doc["complete"]
    liveness = {p["id"]: p["status"] for p in doc["properties"] if p["id"].startswith("MV-L")}
    assert liveness == {"MV-L1": "holds", "MV-L2": "holds"}
    assert main(["explore", "metadata_version", "--config", "small", "--variant", "MV-M2", "--quiet",
                 "--out", str(tmp_path)]) == 1
    assert list(tmp_path.rglob("MV-04.itf.json"))


ROLLCHECK_CONTRACT = ProtocolContract(
    "metadata_version", counts={"small": (16504, 19), "small/kafka": (5488, 19)}, hypothesis_examples=600,
    hypothesis_steps=30, reference_hypothesis=(60, 30), reference_config="large",
    hypothesis_skip={"MV-M13": "a liveness bug (KAFKA-13990): no walk violates a safety property; the explorer's "
                     "MV-L1 and the vacuous MV-W1 kill it"},
    # test_spec_*.py's conformance already compares TLC's whole reachable set on small (stronger)
    tlc_configs=())


def test_protocol_contract(contract_case: ContractCase, tmp_path: Path) -> None:
    """rollcheck.testing's contract: variants killed (explorer, Hypothesis), codec and ITF round trips,
    pinned counts, TLC's count and the spec's names."""
    contract_case.run(tmp_path)


def test_mv12_states_kafkas_refusal_of_every_lossy_downgrade() -> None:
    """Under the kafka profile MV-12 holds the rule Kafka enforces (no lossy downgrade, UNSAFE included); the
    KIP's profile lets UNSAFE lose metadata, so MV-12 is not one of its properties."""
    kip = ENTRY.build(replace(ENTRY.configs["small"], profile="kip"))
    assert "MV-12" not in {p.id for p in kip.properties()}
    broken = ENTRY.variant("MV-M2").system(replace(ENTRY.configs["small"], profile="kafka"))
    r = explore(broken, ExploreOptions(stop_at_first=False))
    assert {"MV-04", "MV-12"} <= r.violated_ids


class _SnapshotDropsTheTarget(MetadataVersionSystem):
    """A planted off-by-one: the lossy downgrade snapshot keeps only records strictly below the target level."""

    def update_features(self, s, level, downgrade, dry_run):  # type: ignore[no-untyped-def]
        t = super().update_features(s, level, downgrade, dry_run)
        if t is None or t is s or t.level >= s.level or self.catalog.is_lossless(s.level, t.level):
            return t
        return MetadataVersionState(t.voters, t.brokers, t.leader, t.log,
                                    frozenset(r for r in t.records if r < t.level))


def test_mv14_catches_a_lossy_snapshot_that_drops_one_record_too_many() -> None:
    """MV-04 bounds what a downgrade may lose; MV-14 says what it must keep. On ``lossy`` (a record at 3, which
    the old software's versions represent) the off-by-one snapshot breaks MV-14 and nothing else; on ``small``
    (every record above 3) no config state tells the two apart, which is why ``lossy`` is a story config."""
    cfg = ENTRY.configs["lossy"]
    assert explore(ENTRY.build(cfg), ExploreOptions(stop_at_first=False)).ok
    r = explore(_SnapshotDropsTheTarget(cfg), ExploreOptions(stop_at_first=False))
    assert r.violated_ids == {"MV-14"}
    assert not explore(_SnapshotDropsTheTarget(ENTRY.configs["small"]), ExploreOptions(stop_at_first=False)).violations
    assert "lossy" in ENTRY.story_configs


class _HalfIsAQuorum(MetadataVersionSystem):
    """A planted off-by-one: the quorum check counts half the voters as a majority (``>=`` for ``>``)."""

    @staticmethod
    def _running_voters(s: MetadataVersionState) -> int:
        n = sum(1 for v in s.voters if v.status is NodeStatus.RUNNING)
        return n + 1 if n * 2 == len(s.voters) else n


def test_mv15_catches_a_quorum_check_off_by_one() -> None:
    """With three voters "more than half" and "at least half" agree on every state, so nothing could tell
    the off-by-one from the reference; ``two-voters`` (a story config) can, and MV-15 says so."""
    cfg = ENTRY.configs["two-voters"]
    assert "two-voters" in ENTRY.story_configs
    for profile in ("kip", "kafka"):
        assert explore(ENTRY.build(replace(cfg, profile=profile)), ExploreOptions(stop_at_first=False)).ok
        r = explore(_HalfIsAQuorum(replace(cfg, profile=profile)), ExploreOptions(stop_at_first=False))
        assert "MV-15" in r.violated_ids
    assert not explore(_HalfIsAQuorum(ENTRY.configs["crashes"]), ExploreOptions(max_depth=8,
                                                                                stop_at_first=False)).violations


class _UnfencedOneEntryEarly(MetadataVersionSystem):
    """A planted bug: a registered broker is unfenced by the next record it replicates, caught up or not."""

    def replicate(self, s: MetadataVersionState, i: int) -> MetadataVersionState:
        t = super().replicate(s, i)
        b = t.brokers[i]
        if b.fenced and b.status is NodeStatus.RUNNING and b.registration == b.software:
            return replace(t, brokers=(*t.brokers[:i], replace(b, fenced=False), *t.brokers[i + 1:]))
        return t


def test_mv17_catches_a_broker_unfenced_before_it_caught_up() -> None:
    """MV-16 says who may be unfenced, MV-17 when. Where a broker lags one entry at most (max_log 2, every config
    but ``lagging``), the record that unfences it early is the last one, so nothing tells the bug apart; on
    ``lagging`` a broker registers two entries behind (MV-W6) and MV-17 catches it."""
    cfg = ENTRY.configs["lagging"]
    assert "lagging" in ENTRY.story_configs and cfg.max_log == 3
    for profile in ("kip", "kafka"):
        ok = explore(ENTRY.build(replace(cfg, profile=profile)), ExploreOptions(stop_at_first=False))
        assert ok.ok and dict((p.id, p.status) for p in ok.properties)["MV-W6"].startswith("reached")
        r = explore(_UnfencedOneEntryEarly(replace(cfg, profile=profile)), ExploreOptions(stop_at_first=False))
        assert r.violated_ids == {"MV-17"}
        assert not explore(_UnfencedOneEntryEarly(replace(ENTRY.configs["crashes"], profile=profile)),
                           ExploreOptions(stop_at_first=False)).violations


class _PreviewFormattedAsNew(MetadataVersionSystem):
    """A planted bug: a preview cluster (no metadata.version in meta.properties) bootstraps at the software's
    default, as a freshly formatted one does, instead of at version 1."""

    def initial_states(self) -> list[MetadataVersionState]:
        return list(MetadataVersionSystem(replace(self.config, initial_level=None)).initial_states())


def test_the_preview_story_starts_a_preview_cluster_at_version_1_and_z3_sees_any_other_start() -> None:
    """KIP-778 "Initialization": a preview KRaft cluster is initialized at metadata.version 1. No other config
    starts one (every other is formatted with a version), so the campaign's survivors system.py:121 (the preview
    branch forced off, or taken for another level) went unnoticed; ``preview`` (a story config, so Z3's
    every-state differential runs on it in the ci tier) starts there, and a reference that starts elsewhere is a
    mismatch at Init."""
    from rollcheck.smt.checker import successor_differential
    from rollcheck.smt.prove import symbolic

    cfg = ENTRY.configs["preview"]
    assert "preview" in ENTRY.story_configs and cfg.initial_level == 0 and not cfg.dry_run
    for profile in ("kip", "kafka"):
        honest = ENTRY.build(replace(cfg, profile=profile))
        (s0,) = honest.initial_states()
        assert s0.log == (1,) and all(b.rpc_level == 1 for b in s0.brokers)
        assert successor_differential(symbolic(honest), honest, 50)["mismatch"] is None
        planted = _PreviewFormattedAsNew(replace(cfg, profile=profile))
        diff = successor_differential(symbolic(planted), planted, 50)
        assert diff["mismatch"] is not None and diff["mismatch"].startswith("initial states differ")


def test_an_empty_software_list_is_refused_in_its_own_words() -> None:
    """Refused further on too (the initial software must be one of them), so the campaign's checkers see the same
    domain without this check (the equivalent entry for metadata_version config.py:106): only the words, pinned
    here, tell the user which field is empty."""
    with pytest.raises(ValueError) as e:
        MetadataVersionSystem(replace(ENTRY.configs["small"], softwares=()))
    assert str(e.value) == "softwares must be non-empty with distinct names"


def test_preview_lists_its_initial_software_second() -> None:
    """The one config whose initial software is not listed first: the reference finds it by name, the Z3 model
    and the spec read the field itself, so a lookup that took the first software differs there."""
    preview = ENTRY.configs["preview"]
    assert preview.softwares[0].name != preview.initial_software == preview.old.name
    (initial,) = MetadataVersionSystem(preview).initial_states()
    assert {v.software for v in initial.voters} == {b.software for b in initial.brokers} == {preview.initial_software}
