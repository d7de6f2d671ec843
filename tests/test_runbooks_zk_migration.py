"""The ``zk_migration`` runbooks (runbooks/zk_migration/): the documented procedures pass, and a few
deviations keep their known outcome (docs/runbooks.md)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rollcheck.runbook import ConditionRef, Deviation, Runbook, check, deviations, load_runbook

DIR = Path(__file__).resolve().parent.parent / "runbooks" / "zk_migration"
FILES = ("migrate.toml", "revert-after-broker-migration.toml", "revert-from-migration-mode.toml")


def _book(name: str) -> Runbook:
    return load_runbook(DIR / name)


def _deviation(book: Runbook, deviation_id: str) -> Deviation:
    return next(d for d in deviations(book) if d.id == deviation_id)


@pytest.mark.parametrize("name", FILES)
def test_as_written_passes_under_every_profile(name: str) -> None:
    book = _book(name)
    assert book.profiles == ("kip", "kafka")
    for profile in book.profiles:
        assert book.expected(profile)[0] == "passes"
        outcome = check(book, profile, deviations(book)[0])
        assert (outcome.verdict, outcome.property_id) == ("passes", None), (name, profile, outcome.description)


def test_finalizing_restarts_each_controller_and_the_roll_survives_post_migration() -> None:
    """Under kafka the first controller elected without the migration config writes POST_MIGRATION; the rest of
    the documented roll restarts controllers still configured for the migration (Kafka 3.9 ignores the flag
    then). Skipping one of them leaves the goal (every controller without the config) unreachable."""
    book = _book("migrate.toml")
    outcome = check(book, "kafka", _deviation(book, "skip:finalize-c2"))
    assert (outcome.verdict, outcome.property_id) == ("stalls", "MIG-RB1:goal")
    assert outcome.trace is not None
    assert [a.name for a in outcome.trace.actions].count("RestartVoter") == 2


def test_deprovisioning_while_a_broker_runs_kraft_is_refused() -> None:
    """Skipping the first broker roll: the model refuses to shut the quorum down while a broker is in KRaft
    mode, so the operator never gets past 'deprovision'."""
    book = _book("revert-after-broker-migration.toml")
    outcome = check(book, "kip", _deviation(book, "skip:zk-b0"))
    assert (outcome.verdict, outcome.property_id, outcome.length) == ("stalls", "MIG-RB2:deprovision", 10)


def test_docs_deprovision_without_a_clean_shutdown_can_lose_metadata() -> None:
    """The docs say only 'deprovision the quorum'; taken while ZooKeeper lags (an unclean shutdown), a record
    the KRaft log committed never reaches ZooKeeper, and the revert's goal is lost (KIP-866 asks for a clean
    shutdown, which the as-written runbook has)."""
    book = _book("revert-from-migration-mode.toml")
    steps = tuple(dataclasses.replace(s, params=()) if s.action == "ShutdownQuorum" else s for s in book.steps)
    outcome = check(book, "kafka", Deviation("docs-deprovision", "deprovision at any time", steps))
    assert (outcome.verdict, outcome.property_id, outcome.length) == ("stalls", "MIG-RB3:goal", 12)
    assert outcome.trace is not None
    actions = [repr(a) for a in outcome.trace.actions]
    assert "ShutdownQuorum(clean=False)" in actions and "KRaftMetadataChange()" in actions


def test_kip_revert_restarts_the_controller_epoch() -> None:
    """KIP-866 deletes /controller_epoch: the ZK controller elected after the revert starts again at epoch 1,
    below the epochs the KRaft controllers wrote; Kafka's docs keep the znode (the epoch goes on)."""
    book = _book("revert-from-migration-mode.toml")
    strict = dataclasses.replace(book, goal=ConditionRef("reverted_to_zk", (("monotonic_epoch", True),)))
    kip = check(strict, "kip", deviations(strict)[0])
    assert (kip.verdict, kip.property_id) == ("stalls", "MIG-RB3:goal")
    kafka = check(strict, "kafka", deviations(strict)[0])
    assert kafka.verdict == "passes"
