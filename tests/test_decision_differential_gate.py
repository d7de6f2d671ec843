"""The decision differential in the gate's z3 cells and in ``rollcheck prove`` (issue #22 item 3).

Each protocol's decision rules (model/decisions/<p>.py, registered through ``ProtocolEntry.decisions``: one
UpdateFeatures update, one metadata.version change, one Streams assignment, KIP-866's triggers) are compared
with the reference on every input of a bounded domain, for the cell's profile. A rule that no config's states
ask about is reached this way: a controller that accepts the deletion of a feature that does not exist (a rule
only API unit tests saw) is a disagreement, exit 3.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from reference_impl.features.api import FeatureController, FeatureUpdate, FinalizedVersionRange
from rollcheck.checkers import CheckContext
from rollcheck.checkers.z3options import DECISIONS, decisions
from rollcheck.core.registry import get_protocol
from rollcheck.smt.checker import check_z3, decision_differential
from rollcheck.smt.decisions import for_profile, protocol_differential
from rollcheck.smt.prove import symbolic

# What each protocol's encoding compares, per profile (the Streams assign() and onAssignment() formulas are the
# transition relation's own chains, kafka-2.0's included).
RULES = {"features": ["features_update", "features_request", "features_atomic", "features_texts",
                      "features_unreadable", "version_range", "finalized_cache", "admin_update", "feature_znode"],
         "metadata_version": ["mv_lossless", "mv_catalog", "mv_update", "mv_request", "mv_update_forms",
                              "mv_replay", "format_storage", "mv_activation", "mv_registration"],
         "zk_migration": ["zk_triggers"],
         "streams_probing": ["streams_assign", "streams_on_assignment", "streams_codec", "streams_decode",
                             "streams_tasks", "streams_releases"]}


def _sym(protocol: str, profile: str) -> Any:
    entry = get_protocol(protocol)
    return symbolic(entry.build(dataclasses.replace(entry.configs["small"], profile=profile)))


@pytest.mark.parametrize(("protocol", "profile"), [
    (name, profile) for name in RULES for profile in get_protocol(name).profiles])
def test_every_encoding_compares_its_decision_rules_and_they_agree(protocol: str, profile: str) -> None:
    res = decision_differential(_sym(protocol, profile))
    assert [r["rule"] for r in res["rules"]] == RULES[protocol]
    assert res["disagreement"] is None, res["disagreement"]
    assert all(r["cases"] > 0 and r["inputs"] > 0 for r in res["rules"]), res["rules"]


def _for_profile(case: str, profile: str) -> bool:
    return for_profile(case, profile, get_protocol("streams_probing").profiles)


def test_a_case_named_for_one_profile_runs_for_that_profile_only() -> None:
    assert _for_profile("kip, 1 live brokers", "kip") and not _for_profile("kip, 1 live brokers", "kafka")
    assert _for_profile("leader 2.1, kafka 3.9", "kafka") and not _for_profile("leader 2.1, kafka 3.9", "kip")
    assert _for_profile("catalog example", "kafka") and _for_profile("catalog example", "kip")
    assert _for_profile("kafka catalog, voters 1", "kip")  # the catalog, not the profile
    assert _for_profile("leader 2.0, kafka-2.0", "kafka-2.0") and not _for_profile("leader 2.0, kafka-2.0", "kafka")
    # the profile words are the protocol's own (ProtocolEntry.profiles): one it lacks names no profile
    assert for_profile("leader 2.0, kafka-2.0", "kip", ("kip", "kafka"))


def test_each_protocol_registers_its_decision_rules_through_its_entry() -> None:
    """The rules come from ``ProtocolEntry.decisions``, nowhere else: an entry without them compares none."""
    for name, rules in RULES.items():
        entry = get_protocol(name)
        assert list(entry.decision_rules().gate) == rules
        assert list(entry.decision_rules().full) == rules
        sym = _sym(name, entry.profiles[0])
        assert [r["rule"] for r in decision_differential(sym)["rules"]] == rules
    bare = dataclasses.replace(get_protocol("zk_migration"), decisions=None)
    assert bare.decision_rules() is None and protocol_differential(bare, "kip") == []


def _accept_deleting_a_missing_feature(monkeypatch: pytest.MonkeyPatch) -> None:
    validate = FeatureController._validate

    def planted(self: FeatureController, update: FeatureUpdate, existing: FinalizedVersionRange | None) -> Any:
        if update.is_delete and existing is None and update.allow_downgrade:
            return None  # the planted bug: "Can not delete non-existing finalized feature." is gone
        return validate(self, update, existing)

    monkeypatch.setattr(FeatureController, "_validate", planted)


def test_a_planted_decision_bug_no_config_reaches_is_a_disagreement(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    """features:small never deletes a feature that is not finalized with the allowDowngrade flag set in any
    state its properties read; the decision differential sends that request and sees the wrong answer."""
    _accept_deleting_a_missing_feature(monkeypatch)
    res = decision_differential(_sym("features", "kip"))
    assert res["disagreement"] is not None and res["disagreement"].startswith("features_update: ")
    entry = get_protocol("features")
    ctx = CheckContext(tmp_path, options={"z3_differential_states": 20, "z3_differential_all_below": 0})
    report = check_z3(entry, "small", entry.configs["small"], ctx)
    assert report.status == "diverged", report.message
    assert "decision rule" in report.message and report.stats["differential"]["mismatch"] is None


def test_the_ci_tier_compares_decisions_once_per_profile(tmp_path: Path) -> None:
    """The decision rules depend on the profile alone: the ci tier runs them in the ci config's z3 cell."""
    entry = get_protocol("zk_migration")
    off = check_z3(entry, "small", entry.configs["small"], CheckContext(
        tmp_path, options={"z3_depth": 1, "z3_differential_states": 5, "z3_differential_all_below": 0},
        settings={DECISIONS: False}))
    assert "decisions" not in off.stats
    from rollcheck.gate import default_gate_config, plan_cells
    cells, _ = plan_cells(default_gate_config(tmp_path))
    z3 = [c for c in cells if c.checker == "z3" and c.variant is None]
    for name in RULES:
        for profile in get_protocol(name).profiles:
            mine = [c for c in z3 if c.entry.name == name and c.config.profile == profile]
            assert [c.label for c in mine if decisions(c.settings)] == ["small"], (name, profile)


def test_prove_exits_3_on_a_decision_disagreement(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from rollcheck.cli import main

    _accept_deleting_a_missing_feature(monkeypatch)
    code = main(["prove", "features", "--config", "small", "--property", "FEAT-01", "--depth", "1",
                 "--differential", "10", "--json", "--quiet", "--out", str(tmp_path)])
    assert code == 3
    summary = json.loads(capsys.readouterr().out)
    assert summary["differential"]["mismatch"] is None
    assert summary["decisions"]["disagreement"].startswith("features_update: ")


def test_prove_differential_only_compares_every_state_and_proves_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the ci tier's z3 cell on small runs, and what `rollcheck mutate` runs on a mutated copy."""
    from rollcheck.cli import main

    code = main(["prove", "zk_migration", "--config", "small", "--profile", "kafka", "--differential-only",
                 "--differential", "0", "--json", "--quiet", "--out", str(tmp_path)])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["differential_only"] is True and summary["results"] == []
    assert summary["differential"]["every_reachable_state"] is True and summary["differential"]["mismatch"] is None
    assert summary["differential"]["states"] == 1440  # zk_migration small/kafka's reachable states
    assert summary["decisions"]["inputs"] > 0 and summary["decisions"]["disagreement"] is None


def test_prove_decisions_only_walks_no_state_and_exits_3_on_a_disagreement(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The decision rules alone (the mutation campaign's first step outside a system module): no successor
    differential, no proof; a rule's disagreement is exit 3 as in the z3 cell."""
    from rollcheck.cli import main

    argv = ["prove", "features", "--config", "small", "--profile", "kip", "--decisions-only", "--json", "--quiet"]
    code = main([*argv, "--out", str(tmp_path / "ok")])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["decisions_only"] is True and summary["results"] == []
    assert summary["differential"] is None
    assert [r["rule"] for r in summary["decisions"]["rules"]] == RULES["features"]
    assert summary["decisions"]["disagreement"] is None
    _accept_deleting_a_missing_feature(monkeypatch)
    code = main([*argv, "--out", str(tmp_path / "bad")])
    summary = json.loads(capsys.readouterr().out)
    assert code == 3 and summary["decisions"]["disagreement"].startswith("features_update: ")


@pytest.mark.parametrize("extra", [["--no-differential"], ["--property", "FEAT-01"], ["--differential-only"]])
def test_prove_decisions_only_refuses_what_contradicts_it(extra: list[str], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from rollcheck.cli import main

    code = main(["prove", "features", "--config", "small", "--decisions-only", *extra, "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "--decisions-only" in err, err


@pytest.mark.parametrize("extra", [["--no-differential"], ["--property", "MIG-01"]])
def test_prove_differential_only_refuses_what_contradicts_it(extra: list[str], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from rollcheck.cli import main

    code = main(["prove", "zk_migration", "--config", "small", "--differential-only", *extra,
                 "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "--differential-only" in err, err
