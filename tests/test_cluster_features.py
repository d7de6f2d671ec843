"""The ``features`` runbooks on a real ZooKeeper-mode cluster (reference_impl/features/cluster.py): bad input
refused in one line before anything starts; the recorded run of FEAT-RB3 on Kafka 2.8.2 (the IBP roll that turns
feature versioning on) validates against the model, and the same run with /feature left disabled, its epoch
changed or its controller gone does not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reference_impl.features.cluster import BINDING
from rollcheck.cluster.runbook import ClusterPlan
from rollcheck.explore.validate import Validation, validate
from rollcheck.runbook import load_runbook
from tests.cluster_cli import runbook_error as _error

ROOT = Path(__file__).resolve().parents[1]
ENABLE = ROOT / "runbooks" / "features" / "zk-enable-versioning.toml"
RECORDED = Path(__file__).parent / "data" / "cluster" / "FEAT-RB3-2.8.2.json"


def test_bad_input_is_one_line_before_anything_starts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    enable = str(ENABLE)
    assert "know Kafka 2.8.x (e.g. 2.8.2), not 3.9.2" in _error(capsys, enable, "--cluster", "--release", "3.9.2")
    assert "give one Kafka release for each" in _error(capsys, enable, "--cluster", "--release", "2.8.2:2.8.1")
    assert "injects no faults" in _error(capsys, enable, "--cluster", "--fault", "roll-ibp:kill")
    featured = ROOT / "runbooks" / "features" / "roll-then-finalize.toml"
    assert "support features the brokers do not have" in _error(capsys, str(featured), "--cluster")
    two = tmp_path / "two-ibps.toml"
    two.write_text(ENABLE.read_text().replace("initial_ibp = [false]", "initial_ibp = [false, true]"))
    assert "starts at one IBP" in _error(capsys, str(two), "--cluster")


def _recorded() -> tuple[ClusterPlan, list[dict[str, Any]]]:
    doc = json.loads(RECORDED.read_text())
    plan = BINDING.plan(load_runbook(ROOT / doc["runbook"]), doc["releases"], [])
    return plan, [s["observed"] for s in doc["steps"]]


def _check(plan: ClusterPlan, observed: list[dict[str, Any]]) -> Validation:
    return validate(plan.model, observed, internal=plan.internal, stutter=True, view=plan.project)


def test_the_real_ibp_roll_validates_and_tampered_ones_do_not() -> None:
    """Kafka 2.8.2 at IBP 2.6 writes /feature disabled (epoch 0); rolled to IBP 2.8, the controller rewrites it
    enabled with nothing finalized (epoch 1): each observation met by a run of the model. Left disabled after the
    roll, enabled before it, at a later epoch, or without a controller, it is not."""
    plan, observed = _recorded()
    assert [o["node"]["status"] for o in observed] == ["DISABLED", "ENABLED", "ENABLED"]
    ok = _check(plan, observed)
    assert ok.valid and ok.met == len(observed), ok
    start, rolled, healthy = observed

    def node(o: dict[str, Any], **change: Any) -> dict[str, Any]:
        return {**o, "node": {**o["node"], **change}}

    for bad in ([start, node(rolled, status="DISABLED"), healthy],
                [node(start, status="ENABLED"), rolled, healthy],
                [start, node(rolled, epoch=2), node(healthy, epoch=2)],
                [start, {**rolled, "controller": -1}, healthy]):
        assert not _check(plan, bad).valid
