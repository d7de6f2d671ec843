"""The ``features`` runbooks (runbooks/features/): KIP-584's upgrade (roll, then finalize) and its emergency
downgrade (lower the level, then roll back) pass under both profiles, and the deviations that tell the story
keep their verdicts: finalizing before the last broker runs the new release is refused (the operator is stuck
at that step), and rolling a broker back before lowering the level shuts it down at startup."""

from __future__ import annotations

from pathlib import Path

import pytest

from reference_impl.features.api import FeatureZNode
from reference_impl.features.protocol import SMALL
from reference_impl.features.system import BrokerStatus
from rollcheck.runbook import Deviation, Runbook, check, deviations, load_runbook
from runbooks.features import CONDITIONS

ROOT = Path(__file__).resolve().parent.parent
UPGRADE = ROOT / "runbooks" / "features" / "roll-then-finalize.toml"
DOWNGRADE = ROOT / "runbooks" / "features" / "downgrade.toml"


def _deviation(book: Runbook, deviation_id: str) -> Deviation:
    return next(d for d in deviations(book) if d.id == deviation_id)


@pytest.mark.parametrize("path", [UPGRADE, DOWNGRADE], ids=["roll-then-finalize", "downgrade"])
@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_the_runbook_as_written_passes(path: Path, profile: str) -> None:
    book = load_runbook(path)
    outcome = check(book, profile, deviations(book)[0])
    assert (outcome.verdict, outcome.property_id) == ("passes", None), outcome.description


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_finalizing_before_the_last_broker_is_rolled_is_refused(profile: str) -> None:
    """Broker 2 still runs the old release (v1 only) and is live: UpdateFeatures v2 is refused every time."""
    book = load_runbook(UPGRADE)
    outcome = check(book, profile, _deviation(book, "swap:roll-b2/finalize"))
    assert (outcome.verdict, outcome.property_id, outcome.length) == ("stalls", "FEAT-RB1:finalize", 7)


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_rolling_back_before_lowering_the_level_shuts_the_old_broker_down(profile: str) -> None:
    """KIP-584 "Broker protections" point 1: broker 0, back on the old release while v2 is finalized, exits at
    startup; lowering the level afterwards (it is no longer live) does not bring it back."""
    book = load_runbook(DOWNGRADE)
    outcome = check(book, profile, _deviation(book, "swap:lower/back-b0"))
    assert (outcome.verdict, outcome.property_id, outcome.length) == ("stalls", "FEAT-RB2:goal", 10)
    assert outcome.trace is not None
    names = [a.name for a in outcome.trace.actions]
    assert names.index("StartBroker") < names.index("UpdateFeatures")
    last = outcome.trace.steps[-1].state
    assert last.brokers[0].status is BrokerStatus.EXITED
    assert last.znode is not None
    node = FeatureZNode.decode(last.znode.data, last.znode.version, profile)
    assert node.get("group_coordinator").max_version_level == 1  # type: ignore[union-attr]


def test_conditions_reject_bad_parameters() -> None:
    with pytest.raises(ValueError, match="release 'newer'"):
        CONDITIONS["all_on"].build(SMALL, release="newer", level=2)
    with pytest.raises(ValueError, match="broker must be a broker id from 0 to 1"):
        CONDITIONS["broker_running"].build(SMALL, broker=2, release="new")
    with pytest.raises(ValueError, match="feature 'transaction_coordinator'"):
        CONDITIONS["finalized_level"].build(SMALL, level=1, feature="transaction_coordinator")
    with pytest.raises(ValueError, match="level must be"):
        CONDITIONS["finalized_level"].build(SMALL, level=0)
