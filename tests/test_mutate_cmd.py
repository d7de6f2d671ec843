"""``rollcheck mutate``: the mutation campaign as a command: its flags, its refusals (one line, exit 2), the
equivalence lists' rule for mutants that change distinct-state counts, and a one-mutant run's JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rollcheck.cli import main
from rollcheck.mutate.equivalents import Equivalent, check_evidence, judge_equivalent, load_equivalents
from rollcheck.mutate.generate import enumerate_mutants
from rollcheck.mutate.report import STATUSES
from rollcheck.mutate.tree import SourceTree

ENTRY = ('[[equivalent]]\nmodule = "config.py"\noperator = "drop_and_operand"\nbefore = "if a and b:"\n'
         'after = "if a and True:"\nreason = "b is implied by a"\n')


def _exit(argv: list[str]) -> int:
    """The command's exit code; a flag argparse refuses exits from inside the parser."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


def test_an_entry_whose_mutant_changes_states_needs_a_reason_they_are_harmless(tmp_path: Path) -> None:
    """``states`` (the counts the edit changes) without ``harmless`` is refused in one line naming the entry, and
    so is ``harmless`` without ``states``; with both the entry loads."""
    toml = tmp_path / "equivalent_mutants.toml"
    toml.write_text(ENTRY + 'states = ["atomic/kafka: 252 -> 260"]\n')
    with pytest.raises(ValueError) as refused:
        load_equivalents(toml, "p")
    message = str(refused.value)
    assert "\n" not in message and "entry 1 (p config.py drop_and_operand `if a and b:`)" in message
    assert "atomic/kafka: 252 -> 260" in message and "harmless" in message
    toml.write_text(ENTRY + 'harmless = "they differ only in a label"\n')
    with pytest.raises(ValueError, match="`states` names no changed count"):
        load_equivalents(toml, "p")
    toml.write_text(ENTRY + 'states = ["atomic/kafka: 252 -> 260"]\nharmless = "they differ only in a label"\n')
    (entry,) = load_equivalents(toml, "p")
    assert entry.states == ("atomic/kafka: 252 -> 260",) and entry.harmless
    toml.write_text(ENTRY + 'states = "atomic/kafka: 252 -> 260"\nharmless = "h"\n')
    with pytest.raises(ValueError, match="states must be a list"):
        load_equivalents(toml, "p")


def test_a_survivor_whose_states_changed_is_equivalent_only_by_an_entry_that_argues_them_harmless() -> None:
    """The judge: a survivor with changed counts stays a survivor under a plain entry (flagged why), and is
    "equivalent" under one that says why the new states are harmless; an earlier campaign's row with changed
    counts that a plain entry names refuses the list (``--resume``)."""
    plain = Equivalent("p", "config.py", "drop_and_operand", "if a and b:", "if a and True:", "b is implied by a")
    argued = Equivalent(**{**plain.__dict__, "states": ("atomic/kafka: 252 -> 260",), "harmless": "a label only"})
    row = {"id": "p:config.py:9:5:drop_and_operand", "protocol": "p", "file": "ref/p/config.py",
           "operator": "drop_and_operand", "before": "if a and b:", "after": "if a and True:", "status": "survived",
           "count_changed": ["atomic/kafka: 252 -> 260"]}
    kept = judge_equivalent(row, [plain])
    assert kept["status"] == "survived" and "harmless" in kept["equivalent_refused"]
    judged = judge_equivalent(row, [argued])
    assert judged["status"] == "equivalent" and judged["harmless"] == "a label only"
    assert judge_equivalent(dict(row, count_changed=[]), [plain])["status"] == "equivalent"
    with pytest.raises(ValueError, match=r"p:config\.py:9:5:drop_and_operand, whose distinct states changed in F"):
        check_evidence([plain], [row], "F")
    check_evidence([argued], [row], "F")
    check_evidence([plain], [dict(row, count_changed=[])], "F")


def test_resume_from_a_campaign_whose_listed_mutant_changed_states_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The command refuses, in one line and exit 2, to go on from a campaign in which a mutant a protocol's list
    names without a ``harmless`` reason changed distinct-state counts."""
    from rollcheck.core.registry import protocol_names
    from rollcheck.mutate.equivalents import protocol_equivalents

    entry = next(e for e in protocol_equivalents(protocol_names()) if not e.harmless and not e.column)
    row = {"id": f"{entry.protocol}:{entry.module}:1:1:{entry.operator}", "protocol": entry.protocol,
           "file": f"x/{entry.module}", "operator": entry.operator, "before": entry.before, "after": entry.after,
           "function": entry.function, "status": "equivalent", "count_changed": ["small/kip: 10 -> 12"]}
    campaign = tmp_path / "campaign.json"
    campaign.write_text(json.dumps({"benchmark": "mutation", "commit": "c0", "params": {}, "mutants": [row]}))
    assert main(["mutate", "--resume", str(campaign), "--list"]) == 2
    line = _one_line_error(capsys)
    assert row["id"] in line and "small/kip: 10 -> 12" in line and "harmless" in line
    assert main(["mutate", "--resume", str(campaign), "--list", "--protocol", entry.protocol]) == 2
    capsys.readouterr()


@pytest.mark.parametrize("argv, says", [
    (["--jobs", "0"], "--jobs"),
    (["--limit", "0"], "--limit"),
    (["--offset", "2"], "--offset needs --limit"),
    (["--protocol", "nope"], "unknown protocol 'nope'"),
    (["--operators", "swap_everything"], "invalid choice"),
    (["--only", "nope:api.py:1:1:cmp_swap"], "not a mutant id"),
    (["--screen", "--recheck", "x.json"], "give one"),
    (["--carry-equivalents"], "give --resume FILE"),
    (["--resume", "absent.json"], "--resume: cannot read absent.json"),
    (["--timeout", "-1"], "--timeout"),
])
def test_bad_flags_are_one_line_and_exit_2(argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit(["mutate", *argv, "--list"]) == 2
    assert says in _one_line_error(capsys)


def test_a_resumed_file_that_is_no_campaign_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"mutants": []}))
    assert main(["mutate", "--resume", str(other), "--list"]) == 2
    assert "is not a campaign's JSON" in _one_line_error(capsys)


def test_list_prints_the_selected_mutants(capsys: pytest.CaptureFixture[str]) -> None:
    """--list with --only: the one mutant, as the enumeration has it (one operator's sites: seconds, where every
    operator's take minutes)."""
    tree = SourceTree.of_checkout()
    first = enumerate_mutants("zk_migration", ["drop_call"], tree.root)[0][0]
    assert main(["mutate", "--list", "--operators", "drop_call", "--only", first.id]) == 0
    out = capsys.readouterr()
    assert out.out == f"{first.id}\n    - {first.before}\n    + {first.after}\n"
    assert "# zk_migration: 1 mutants" in out.err


def test_a_one_mutant_run_writes_and_prints_its_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One mutant of a system module through the cheap steps (the explorer on small under each profile; no Z3,
    TLC or variants): the campaign's JSON, on stdout with --json and in --out, with its baseline and its row."""
    tree = SourceTree.of_checkout()
    mutants, _ = enumerate_mutants("zk_migration", ["drop_call"], tree.root)
    mutant = next(m for m in mutants if m.module == "system.py")
    out = tmp_path / "out"
    argv = ["mutate", "--only", mutant.id, "--screen", "--no-z3", "--no-conform", "--no-variants", "--quiet",
            "--json", "--out", str(out)]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    (written,) = out.glob("mutation-*.json")
    doc = json.loads(written.read_text())
    assert printed == doc and doc["benchmark"] == "mutation" and not doc["partial"]
    assert doc["params"]["protocols"] == ["zk_migration"] and doc["params"]["only"] == [mutant.id]
    assert {(r["config"], r["profile"]) for r in doc["baseline"]["zk_migration"]["runs"]} == {
        ("small", "kip"), ("small", "kafka")}
    (row,) = doc["mutants"]
    assert row["id"] == mutant.id and row["status"] in STATUSES and row["before"] == mutant.before
    assert row["status"] == "screened" or row["status"].startswith("killed")
    assert doc["summary"]["zk_migration"]["mutants"] == 1
