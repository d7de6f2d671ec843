"""Operator runbooks (``rollcheck runbook``, rollcheck/runbook.py): the product of a protocol with a runbook,
the deviations, the verdicts, the reports, and bad runbook files in one line. The protocols' own runbooks are
tested in tests/test_runbooks_<protocol>.py; these tests use the metadata_version upgrade (a few hundred
states)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rollcheck.cli import main
from rollcheck.core.errors import UserError
from rollcheck.explore.replay import replay_itf
from rollcheck.runbook import NOOP, WAIT, build_runbook_system, check, deviations, load_runbook

ROOT = Path(__file__).resolve().parent.parent
UPGRADE = ROOT / "runbooks" / "metadata_version" / "kraft-upgrade.toml"
DOWNGRADE = ROOT / "runbooks" / "metadata_version" / "kraft-downgrade.toml"


def test_the_deviations_are_every_skip_swap_and_repeat() -> None:
    book = load_runbook(UPGRADE)
    ids = [d.id for d in deviations(book)]
    steps = [s.id for s in book.steps]
    n = len(steps)
    assert ids[0] == "as-written" and len(ids) == 1 + n + (n - 1) + n
    assert [f"skip:{s}" for s in steps] == ids[1:n + 1]
    assert "swap:roll-c2/roll-b0" in ids and "repeat:upgrade" in ids
    swapped = next(d for d in deviations(book) if d.id == "swap:roll-c2/roll-b0")
    assert [s.id for s in swapped.steps][2:4] == ["roll-b0", "roll-c2"]
    again = next(d for d in deviations(book) if d.id == "repeat:upgrade").steps[-1]
    assert again.id == "upgrade#again" and again.noop_if_disabled


def test_operator_actions_happen_only_as_the_next_step() -> None:
    book = load_runbook(UPGRADE)
    ts = build_runbook_system(book, "kip")
    (init,) = ts.initial_states()
    moves = list(ts.successors(init))
    operator = [(a, t) for a, t in moves if a.name in ("RestartNode", "UpdateFeatures")]
    # only the first step's restart: no other node, no kafka-features, no restart onto the old software
    assert [repr(a) for a, _ in operator] == ["RestartNode(role='voter', node=0, software='new')"]
    assert all(t.done == 1 for _, t in operator)
    assert all(t.done == 0 for a, t in moves if a.name not in ("RestartNode", "UpdateFeatures"))
    assert any(a.name == "CrashNode" for a, _ in moves)  # the config's faults interleave


def test_a_refused_command_is_retried_not_done() -> None:
    """The upgrade refused (a node still on the old software) leaves the runbook where it was."""
    book = load_runbook(UPGRADE)
    upgrade_first = [s for s in book.steps if s.id == "upgrade"]
    ts = build_runbook_system(book, "kafka", upgrade_first)
    (init,) = ts.initial_states()
    assert not [a for a, _ in ts.successors(init) if a.name == "UpdateFeatures"]


def test_a_wait_step_is_taken_only_when_its_condition_holds() -> None:
    book = load_runbook(UPGRADE)
    healthy = [s for s in book.steps if s.id == "healthy"]
    ts = build_runbook_system(book, "kip", healthy)
    (init,) = ts.initial_states()
    waits = [(a, t) for a, t in ts.successors(init) if a.name == WAIT]
    assert len(waits) == 1 and waits[0][1].done == 1 and waits[0][1].state == init.state
    repeat = next(d for d in deviations(book) if d.id == "repeat:roll-c0").steps[:2]
    ts = build_runbook_system(book, "kip", repeat)
    after = next(t for a, t in ts.successors(init) if a.name == "RestartNode")
    assert [a.name for a, t in ts.successors(after) if t.done == 2] == [NOOP]  # already on new: a no-op


def test_the_upgrade_passes_and_the_kip_and_kafka_quorum_rules_differ() -> None:
    """KIP-778 accepts the upgrade once a majority of controllers supports it (the controller left on the old
    software then terminates: the goal is lost); Kafka 3.9 asks every controller, so it refuses and the
    operator is stuck at the upgrade step."""
    book = load_runbook(UPGRADE)
    devs = {d.id: d for d in deviations(book)}
    for profile in ("kip", "kafka"):
        assert check(book, profile, devs["as-written"]).verdict == "passes"
    kip = check(book, "kip", devs["skip:roll-c2"])
    kafka = check(book, "kafka", devs["skip:roll-c2"])
    assert (kip.verdict, kip.property_id) == ("stalls", "MV-RB1:goal")
    assert (kafka.verdict, kafka.property_id) == ("stalls", "MV-RB1:upgrade")
    assert kip.trace is not None and kip.trace.actions[-1].name == "UpdateFeatures"
    assert [s for _, s, _ in kip.operator_steps] == ["roll-c0", "roll-c1", "roll-b0", "healthy", "upgrade"]


def test_rolling_back_before_every_node_loaded_the_downgrade_loses_the_goal() -> None:
    """KIP-778 Downgrades: the software goes back only "once the downgrade snapshot has been loaded by all
    nodes"; skipping that wait lets a node start on the old software before it read V3."""
    book = load_runbook(DOWNGRADE)
    devs = {d.id: d for d in deviations(book)}
    assert check(book, "kip", devs["as-written"]).verdict == "passes"
    assert check(book, "kafka", devs["as-written"]).verdict == "stalls"  # the expected Kafka 3.9 refusal
    assert book.expected("kafka")[0] == "stalls"
    o = check(book, "kip", devs["skip:loaded"])
    assert (o.verdict, o.property_id) == ("stalls", "MV-RB2:goal")


def test_a_broken_property_is_reported_with_its_shortest_trace(tmp_path: Path) -> None:
    """A deviation into a state the protocol's invariants forbid: here a config mutation (the controller
    skips the broker check, MV-M4) makes the upgrade with broker 0 left behind unsafe."""
    text = UPGRADE.read_text().replace('base = "crashes"', 'base = "crashes"\nmutations = ["skip_broker_check"]')
    f = tmp_path / "mutant.toml"
    f.write_text(text)
    book = load_runbook(f)
    o = check(book, "kip", next(d for d in deviations(book) if d.id == "skip:roll-b0"))
    assert o.verdict == "breaks" and o.property_id in ("MV-01", "MV-02", "MV-11")
    assert o.trace is not None and o.length == len(o.trace.actions) + sum(
        1 for _, _, kind in o.operator_steps if kind != "action")
    assert [s for _, s, _ in o.operator_steps] == ["roll-c0", "roll-c1", "roll-c2", "healthy", "upgrade"]


def test_the_command_writes_tables_traces_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    md = tmp_path / "tables.md"
    code = main(["runbook", str(UPGRADE), str(DOWNGRADE), "--deviations", "--profile", "kafka",
                 "--out", str(tmp_path / "o"),
                 "--markdown", str(md), "--json", "--quiet"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    books = {b["id"]: b for b in doc["runbooks"]}
    assert set(books) == {"MV-RB1", "MV-RB2"} and all(b["passes"] for b in books.values())
    assert books["MV-RB2"]["expected"]["kafka"]["verdict"] == "stalls"
    rows = {o["deviation"]: o for o in books["MV-RB1"]["outcomes"]}
    assert {o["profile"] for o in rows.values()} == {"kafka"}
    stall = rows["skip:roll-b0"]
    assert stall["verdict"] == "stalls" and stall["property"] == "MV-RB1:upgrade"
    trace = Path(stall["trace"])
    assert trace.is_file() and json.loads(trace.read_text())["#meta"]["runbook"] == "MV-RB1"
    # the trace is the protocol's: `rollcheck replay` rebuilds the system and follows it
    assert replay_itf(trace).divergence is None
    text = md.read_text()
    assert "| skip:roll-b0: skip 'restart broker 0 on the new software' | stalls: stuck before `upgrade`" in text
    assert (tmp_path / "o" / "runbooks" / "report.md").read_text() == text


def test_a_runbook_that_does_not_give_its_expected_verdict_fails(tmp_path: Path) -> None:
    text = UPGRADE.read_text().replace('[config]', '[expect]\nkip = { verdict = "stalls", why = "a test" }\n\n[config]')
    f = tmp_path / "expects.toml"
    f.write_text(text)
    assert main(["runbook", str(f), "--out", str(tmp_path / "o"), "--quiet"]) == 1


BAD = [
    ("id = 1\n", "'id' must be a non-empty string"),
    ("nonsense = 1\n", "unknown keys ['nonsense']"),
    ('protocol = "nope"\n', "unknown protocol"),
    ('profiles = ["kip", "zk"]\n', "'profiles' must be a list of distinct profiles"),
    ("[goal]\ncondition = \"no_such\"\n", "has no condition 'no_such'; known: all_on, cluster_healthy"),
    ("[goal]\ncondition = \"all_on\"\nsoftware = \"newest\"\nlevel = 5\n", "software 'newest' is not in the config"),
    ("[goal]\ncondition = \"all_on\"\nsoftware = \"new\"\n", "under profile kip"),
    ("[config]\nbase = \"huge\"\n", "unknown base config 'huge'"),
    ("[config]\nbase = \"small\"\nvoterz = 3\n", "unknown config key 'voterz'"),
    ("[config]\nbase = \"small\"\nprofile = \"kafka\"\n", "sets no profile"),
    ("[[step]]\nid = \"x\"\nsays = \"elect\"\naction = \"ElectLeader\"\n",
     "'ElectLeader' is not an operator action of 'metadata_version'"),
    ("[[step]]\nid = \"x\"\nsays = \"both\"\naction = \"RestartNode\"\nwait = { condition = \"cluster_healthy\" }\n",
     "exactly one of 'action'"),
    ("[[step]]\nid = \"roll-c0\"\nsays = \"again\"\naction = \"RestartNode\"\n", "repeated: roll-c0"),
    ("[[step]]\nid = \"x\"\nsays = \"s\"\naction = \"RestartNode\"\nparams = 3\n", "'params' must be a table"),
    ("[[step]]\nid = \"x\"\nsays = \"s\"\naction = \"RestartNode\"\nunset = \"software\"\n", "'unset' must be a list"),
    ("[[step]]\nid = \"x\"\nsays = \"s\"\naction = \"RestartNode\"\nparams = { node = 1 }\nunset = [\"node\"]\n",
     "node both in 'params' and in 'unset'"),
    ("[expect]\nkafka = { verdict = \"maybe\", why = \"x\" }\n", "[expect].kafka must be"),
    ("[expect]\nzk = { verdict = \"stalls\", why = \"x\" }\n", "is not one of the runbook's profiles"),
    ("step = 3\n", "at least one [[step]]"),
    ("[[[\n", "malformed runbook"),
]


@pytest.mark.parametrize(("patch", "says"), BAD, ids=[b[1][:40] for b in BAD])
def test_a_bad_runbook_is_one_line(patch: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = UPGRADE.read_text()
    lines = base.splitlines(keepends=True)
    head = {"id", "nonsense", "protocol", "profiles", "step"}
    key = patch.split("=")[0].strip()
    if key in head and not patch.startswith("["):
        # replace (or add) a top-level key: put it first, dropping the file's own
        kept = [ln for ln in lines if not ln.startswith(f"{key} =")]
        text = patch + "".join(kept)
        if key == "step":
            text = patch + base.split("[[step]]")[0].replace(patch, "")
    elif patch.startswith("[goal]"):
        text = base.split("[goal]")[0] + patch + "\n[[step]]" + base.split("[[step]]", 1)[1]
    elif patch.startswith("[config]"):
        text = base.replace('[config]\nbase = "crashes"\n', patch)
    elif patch.startswith("[expect]"):
        text = base.replace("[config]", patch + "\n[config]")
    else:
        text = base + "\n" + patch
    f = tmp_path / "bad.toml"
    f.write_text(text)
    assert main(["runbook", str(f), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    assert says in err[0], err[0]


def test_missing_and_empty_inputs_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runbook", str(tmp_path / "none.toml"), "--out", str(tmp_path / "o")]) == 2
    assert "runbook not found" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["runbook", str(tmp_path / "empty"), "--out", str(tmp_path / "o")]) == 2
    assert "no runbook (*.toml) under it" in capsys.readouterr().err
    with pytest.raises(UserError, match="not UTF-8"):
        (tmp_path / "bin.toml").write_bytes(b"\xff\xfe")
        load_runbook(tmp_path / "bin.toml")


def test_a_step_matches_its_params_and_unset_ones() -> None:
    from rollcheck.core.transition import Action
    from rollcheck.runbook import RunbookStep

    step = RunbookStep("s", "second bounce", action="RollingBounce", params=(("instance", 0),), unset=("upgrade_from",))
    assert step.matches(Action.of("RollingBounce", instance=0, release="2.0", upgrade_from=None))
    assert not step.matches(Action.of("RollingBounce", instance=0, release="2.0", upgrade_from="1.1"))
    assert not step.matches(Action.of("RollingBounce", instance=1, release="2.0", upgrade_from=None))
    assert not step.matches(Action.of("Restart", instance=0))
    tuples = RunbookStep("u", "update", action="UpdateFeatures", params=(("updates", (("f", 2, False),)),))
    assert tuples.matches(Action.of("UpdateFeatures", updates=(("f", 2, False),), result=("NONE",)))
    assert str(step) == "RollingBounce(instance=0, upgrade_from=None)"
