"""The ``streams_probing`` runbooks (runbooks/streams_probing/), all under procedure "operator" (every bounce a
runbook step with its instance and its ``upgrade.from``): KIP-268's double bounce from 1.1 to 2.0 (``upgrade.from``
set, then removed) and its single bounce from 2.0 with version probing pass under every profile, with crashes; the
single bounce without ``upgrade.from`` from 1.1 (STR-RB3) breaks STR-06 under each, as it is expected to (the
failure the two bounces exist to avoid). The deviations that tell the story keep their verdicts: removing
``upgrade.from`` while a 1.1 instance can still lead (a first-round bounce skipped, or the last first-round bounce
swapped with the first second-round one) fails that leader; a second-round bounce skipped leaves the group on
metadata version 2 (safe, the goal stalls); the first instance's first bounce skipped is safe (it goes straight
onto 2.0 once no 1.1 instance is left to lead)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from reference_impl.streams_probing.protocol import PRE20
from reference_impl.streams_probing.system import StreamsGroupState, StreamsInstance
from rollcheck.runbook import Deviation, Outcome, Runbook, check, deviations, load_runbook
from runbooks.streams_probing import CONDITIONS

ROOT = Path(__file__).resolve().parent.parent
DOUBLE = ROOT / "runbooks" / "streams_probing" / "double-bounce.toml"
SINGLE = ROOT / "runbooks" / "streams_probing" / "single-bounce.toml"
FROM_11 = ROOT / "runbooks" / "streams_probing" / "single-bounce-from-1.1.toml"
PROFILES = ("kip", "kafka", "kafka-2.0")  # every profile of streams_probing: the runbooks run under each


def _deviation(book: Runbook, deviation_id: str) -> Deviation:
    return next(d for d in deviations(book) if d.id == deviation_id)


def _check(path: Path, profile: str, deviation_id: str) -> Outcome:
    book = load_runbook(path)
    return check(book, profile, _deviation(book, deviation_id))


def _bounces(outcome: Outcome) -> list[tuple[int, str | None]]:
    assert outcome.trace is not None
    return [(a["instance"], a["upgrade_from"]) for a in outcome.trace.actions if a.name == "RollingBounce"]


@pytest.mark.parametrize("path", [DOUBLE, SINGLE], ids=["double-bounce", "single-bounce"])
@pytest.mark.parametrize("profile", PROFILES)
def test_the_runbook_as_written_passes(path: Path, profile: str) -> None:
    book = load_runbook(path)
    assert book.profiles == PROFILES  # no runbook limits its profiles: streams_probing's own, kafka-2.0 included
    assert book.config.procedure == "operator" and book.expected(profile) == ("passes", "")
    outcome = check(book, profile, deviations(book)[0])
    assert (outcome.verdict, outcome.property_id) == ("passes", None), outcome.description


@pytest.mark.parametrize("profile", PROFILES)
def test_one_bounce_without_upgrade_from_from_11_breaks_as_expected(profile: str) -> None:
    """STR-RB3 (KIP-268 Motivation, KAFKA-6054): the first instance bounced onto 2.0 without upgrade.from
    subscribes with version 3, and a 1.1 leader cannot decode it. The runbook expects exactly that."""
    book = load_runbook(FROM_11)
    assert book.profiles == PROFILES and book.expected(profile)[0] == "breaks"
    outcome = check(book, profile, deviations(book)[0])
    assert (outcome.verdict, outcome.property_id, outcome.length) == ("breaks", "STR-06", 6)
    assert outcome.trace is not None and _bounces(outcome) == [(0, None)]
    rebalance = outcome.trace.actions[-1]
    assert rebalance.name == "Rebalance"
    leader = outcome.trace.steps[-1].state.instances[rebalance["leader"]]
    assert leader.release == "1.1" and "unable to decode subscription data: version=3" in leader.failure


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(("deviation", "bounces"), [
    # first-1 skipped: instance 0 loses upgrade.from while instance 1 is still on 1.1 and is elected leader.
    ("skip:first-1", [(0, "1.1"), (2, "1.1"), (0, None)]),
    # first-2 and second-0 swapped: the same, with instance 2 the 1.1 leader.
    ("swap:first-2/second-0", [(0, "1.1"), (1, "1.1"), (0, None)]),
])
def test_removing_upgrade_from_while_a_11_instance_can_lead_breaks(deviation: str, profile: str,
                                                                  bounces: list[tuple[int, str | None]]) -> None:
    outcome = _check(DOUBLE, profile, deviation)
    assert (outcome.verdict, outcome.property_id, outcome.length) == ("breaks", "STR-06", 16)
    assert _bounces(outcome) == bounces
    assert outcome.trace is not None
    last = outcome.trace.steps[-1].state
    leader = last.instances[outcome.trace.actions[-1]["leader"]]
    assert leader.release == "1.1" and leader.failure.startswith("leader: ")


@pytest.mark.parametrize("profile", PROFILES)
def test_skipping_a_second_bounce_leaves_the_group_on_version_2(profile: str) -> None:
    """KIP-268 Upgrading to 2.0, 4b: the leader answers version 2 while any version 2 subscription remains;
    instance 2 keeps upgrade.from="1.1", so nobody reaches version 3. Safe, but never done."""
    outcome = _check(DOUBLE, profile, "skip:second-2")
    assert (outcome.verdict, outcome.property_id, outcome.length) == ("stalls", "STR-RB1:goal", 25)
    assert outcome.trace is not None
    last = outcome.trace.steps[-1].state
    assert last.instances[2].upgrade_from == "1.1"
    assert all(x.release == "2.0" and x.last_version == 2 for x in last.instances)


@pytest.mark.parametrize("profile", PROFILES)
def test_the_last_11_instance_may_skip_upgrade_from(profile: str) -> None:
    """first-0 skipped: instance 0 goes from 1.1 straight to 2.0 without upgrade.from, but only after the
    others run 2.0 (with upgrade.from): no 1.1 leader is left to fail on its version 3, so it is safe."""
    outcome = _check(DOUBLE, profile, "skip:first-0")
    assert (outcome.verdict, outcome.property_id) == ("safe", None), outcome.description


def test_conditions() -> None:
    done = StreamsInstance("2.0", None, 3, True, 2, None, 3, "")
    stable = StreamsGroupState((done,) * 3, False, -1, 1, 0, 0)
    complete = CONDITIONS["upgrade_complete"].build(PRE20, release="2.0")
    assert complete(stable) and CONDITIONS["group_stable"].build(PRE20)(stable)
    assert not complete(dataclasses.replace(stable, rebalance_pending=True))
    half = dataclasses.replace(done, upgrade_from="1.1", used_version=2, last_version=2)
    assert not complete(dataclasses.replace(stable, instances=(done, done, half)))
    assert CONDITIONS["upgrade_complete"].build(PRE20, release="1.1", version=2)(
        dataclasses.replace(stable, instances=(dataclasses.replace(half, release="1.1", upgrade_from=None),) * 3))


def test_conditions_reject_bad_parameters() -> None:
    with pytest.raises(ValueError, match=r"unknown Kafka Streams release '2\.9'"):
        CONDITIONS["upgrade_complete"].build(PRE20, release="2.9")
    with pytest.raises(ValueError, match="neither the config's from_release"):
        CONDITIONS["upgrade_complete"].build(PRE20, release="post-2.0")
    with pytest.raises(ValueError, match=r"version must be a metadata version release 2.0 speaks \(1 to 3\)"):
        CONDITIONS["upgrade_complete"].build(PRE20, release="2.0", version=4)
    with pytest.raises(ValueError, match="release must be a release name"):
        CONDITIONS["upgrade_complete"].build(PRE20, release=2.0)
