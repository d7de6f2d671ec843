"""What `rollcheck mutate` runs a mutant through: the gate's ci cells, so a kill there is the gate's."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rollcheck.core.registry import get_protocol
from rollcheck.gate import default_gate_config, plan_cells
from rollcheck.mutate.steps import Cell, cells_of, z3_argv, z3_cells_of


class RecordingRunner:
    """A fake ``mutation.Runner``: every step holds or agrees and is recorded in ``ran`` ("explore small/kip",
    "decisions kafka", "z3 small/kip", "variants", "conform small/kip"); ``z3_says`` / ``decisions_say`` give a
    step's verdict instead (None: agrees)."""

    def __init__(self, work: Path, ran: list[str], spec: bool = False,
                 z3_says: Callable[[Cell], tuple[str, str] | None] = lambda cell: None,
                 decisions_say: Callable[[str], tuple[str, str] | None] = lambda profile: None) -> None:
        self.work, self.ran, self.spec, self.z3_says, self.decisions_say = work, ran, spec, z3_says, decisions_say

    def workdir(self, mutant: object) -> Path:
        return self.work

    def run_cell(self, work: Path, protocol: str, cell: Cell, timeout: float) -> Any:
        from rollcheck.mutate.runner import CellResult

        self.ran.append(f"explore {cell.config}/{cell.profile}")
        return CellResult(cell.config, cell.profile, "holds", 0, 1.0, distinct_states=10)

    def has_z3(self, protocol: str) -> bool:
        return True

    def snapshot_has_spec(self, protocol: str) -> bool:
        return self.spec

    def run_decisions(self, work: Path, protocol: str, profile: str, timeout: float) -> tuple[str, str]:
        self.ran.append(f"decisions {profile}")
        return self.decisions_say(profile) or ("agrees", "")

    def run_z3(self, work: Path, protocol: str, cell: Cell, timeout: float) -> tuple[str, str]:
        self.ran.append(f"z3 {cell.config}/{cell.profile}")
        return self.z3_says(cell) or ("agrees", "")

    def run_variants(self, work: Path, protocol: str, timeout: float, z3: bool = True) -> tuple[str, str]:
        self.ran.append("variants")
        return "caught", ""

    def run_conform(self, work: Path, protocol: str, cell: Cell, timeout: float,
                    domain_only: bool = False) -> tuple[str, str]:
        self.ran.append(f"conform {cell.config}/{cell.profile}")
        return "agrees", ""

def test_the_campaigns_z3_step_runs_where_the_ci_gates_z3_differential_cells_do(tmp_path: Path) -> None:
    """small under every profile, then each story config under the profiles it is valid for (the ci tier's
    differential-only z3 cells), so a state-level change on a story's path is a disagreement in both."""
    cells, _ = plan_cells(default_gate_config(tmp_path))
    for proto in ("features", "metadata_version", "zk_migration", "streams_probing"):
        gate = [Cell(c.label, c.config.profile) for c in cells
                if c.entry.name == proto and c.variant is None and c.checker == "z3" and c.differential_only]
        assert sorted(z3_cells_of(proto), key=repr) == sorted(gate, key=repr), proto
        assert all(c in cells_of(proto) for c in z3_cells_of(proto))  # only where the explorer runs too
    assert Cell("misconfigured-upgrade-from", "kafka") in z3_cells_of("streams_probing")
    assert Cell("misconfigured-upgrade-from", "kip") not in z3_cells_of("streams_probing")
    argv = z3_argv("streams_probing", "kafka", tmp_path, "pre20")
    assert argv[argv.index("--config") + 1] == "pre20" and "--differential-only" in argv


def test_resume_keeps_a_row_while_its_code_stands(tmp_path: Path) -> None:
    """--resume: any verdict stands while every module is unchanged (a timeout is none: it runs again, as with a
    longer --timeout); a kill (flagged carried) while only the reference is; nothing when the reference changed
    or the edit is another one."""
    from rollcheck.mutate.generate import Mutant
    from rollcheck.mutate.resume import carried_rows

    def mutant(mid: str, before: str = "a < b", after: str = "a <= b") -> Mutant:
        return Mutant(mid, "zk_migration", "cmp_swap", "reference_impl/zk_migration/system.py", "system.py", 1, 1,
                      before, after, "")

    selected = {"zk_migration": [mutant("k1"), mutant("s1"), mutant("k2"), mutant("moved"), mutant("t1")]}
    rows = [{"id": "k1", "protocol": "zk_migration", "status": "killed (z3)", "before": "a < b", "after": "a <= b"},
            {"id": "s1", "protocol": "zk_migration", "status": "survived", "before": "a < b", "after": "a <= b"},
            {"id": "k2", "protocol": "zk_migration", "status": "killed", "before": "a < b", "after": "a <= b",
             "sources_sha256": "old", "reference_sha256": "other"},
            {"id": "moved", "protocol": "zk_migration", "status": "killed", "before": "x", "after": "y"},
            {"id": "t1", "protocol": "zk_migration", "status": "timeout", "before": "a < b", "after": "a <= b"}]
    earlier = {"commit": "c0", "sources_sha256": "S", "reference_sha256": "R", "mutants": rows}
    same = carried_rows(earlier, selected, {"sources_sha256": "S", "reference_sha256": "R"})
    assert sorted(same) == ["k1", "s1"] and not any(r["carried"] for r in same.values())
    checkers_changed = carried_rows(earlier, selected, {"sources_sha256": "S2", "reference_sha256": "R"})
    assert sorted(checkers_changed) == ["k1"] and checkers_changed["k1"]["carried"]
    assert checkers_changed["k1"]["commit"] == "c0"
    assert carried_rows(earlier, selected, {"sources_sha256": "S2", "reference_sha256": "R2"}) == {}


def test_a_listed_survivor_is_equivalent_and_left_out_of_the_kill_rate(tmp_path: Path) -> None:
    """A protocol's equivalent_mutants.toml: a survivor it names becomes "equivalent" (with the reason), carried by
    --resume like a kill; a kill stays a kill; the kill rate is over the mutants that are not equivalent."""
    from rollcheck.mutate.equivalents import Equivalent, judge_equivalent, listed_equivalent
    from rollcheck.mutate.generate import Mutant
    from rollcheck.mutate.report import summarize
    from rollcheck.mutate.resume import carried_rows

    entry = Equivalent("zk_migration", "api.py", "if_false", "if x:", "if False:", "x is never true here")
    row = {"id": "e1", "protocol": "zk_migration", "operator": "if_false", "file": "reference_impl/zk_migration/api.py",
           "before": "if x:", "after": "if False:", "status": "survived"}
    assert judge_equivalent(row, [entry])["status"] == "equivalent"
    assert judge_equivalent(row, [entry])["equivalent"] == "x is never true here"
    assert judge_equivalent(dict(row, status="killed (z3)"), [entry])["status"] == "killed (z3)"
    assert judge_equivalent(dict(row, file="reference_impl/zk_migration/system.py"), [entry])["status"] == "survived"
    assert judge_equivalent(dict(row, protocol="features"), [entry])["status"] == "survived"
    killed = dict(row, id="k1", before="if y:", status="killed")
    survivor = dict(row, id="s1", before="if z:")
    s = summarize([judge_equivalent(r, [entry]) for r in (row, killed, survivor)], ["zk_migration"])["zk_migration"]
    assert (s["mutants"], s["equivalent"], s["survived"], s["kill_rate"]) == (3, 1, 1, 0.5)

    def mutant(r: dict[str, str]) -> Mutant:
        return Mutant(r["id"], "zk_migration", "if_false", r["file"], "api.py", 1, 1, r["before"], r["after"], "")

    # Listed mutants run after the others (they are expected to take every step): told apart before they run.
    assert listed_equivalent(mutant(row), [entry]) and not listed_equivalent(mutant(survivor), [entry])
    earlier = {"commit": "c0", "sources_sha256": "S", "reference_sha256": "R", "mutants": [row, survivor]}
    kept = carried_rows(earlier, {"zk_migration": [mutant(row), mutant(survivor)]},
                        {"sources_sha256": "S2", "reference_sha256": "R"}, [entry])
    assert sorted(kept) == ["e1"] and kept["e1"]["status"] == "equivalent" and kept["e1"]["carried"]
    # Where the reference changed, an equivalent runs again unless --carry-equivalents, and then only while the
    # list still names it (an entry removed since, its mutant killed by a new check, runs again).
    changed = {"sources_sha256": "S2", "reference_sha256": "R2"}
    assert carried_rows(earlier, {"zk_migration": [mutant(row), mutant(survivor)]}, changed, [entry]) == {}
    kept = carried_rows(earlier, {"zk_migration": [mutant(row), mutant(survivor)]}, changed, [entry],
                        carry_equivalents=True)
    assert sorted(kept) == ["e1"] and kept["e1"]["equivalent_carried"] and kept["e1"]["commit"] == "c0"
    assert carried_rows(earlier, {"zk_migration": [mutant(row)]}, changed, [], carry_equivalents=True) == {}
    # An equivalent row whose entry is gone (found stale) is a survivor again: it runs, even at the same sources.
    judged = dict(row, status="equivalent", equivalent="x is never true here")
    same = {"sources_sha256": "S", "reference_sha256": "R"}
    assert carried_rows(dict(earlier, mutants=[judged]), {"zk_migration": [mutant(row)]}, same, [entry]) != {}
    assert carried_rows(dict(earlier, mutants=[judged]), {"zk_migration": [mutant(row)]}, changed, [],
                        carry_equivalents=True) == {}
    assert carried_rows(dict(earlier, mutants=[judged]), {"zk_migration": [mutant(row)]}, same, [])["e1"][
        "status"] == "survived"
    # A line an edit above moved: the same edit of the same function at the same column, under the new id.
    old_id, new_id = "zk_migration:api.py:1:1:if_false", "zk_migration:api.py:9:1:if_false"
    there = dict(row, id=old_id, function="f", col=1)
    moved = dataclasses.replace(mutant(there), id=new_id, line=9, function="f")
    kept = carried_rows(dict(earlier, mutants=[there, survivor]), {"zk_migration": [moved, mutant(survivor)]},
                        changed, [entry], carry_equivalents=True)
    assert sorted(kept) == [new_id] and kept[new_id]["moved_from"] == old_id and kept[new_id]["line"] == 9
    assert kept[new_id]["status"] == "equivalent" and kept[new_id]["commit"] == "c0"


def test_the_equivalent_mutants_list_reads_and_names_lines_the_reference_has(tmp_path: Path) -> None:
    """Every entry's line is still in its module (an entry for a line that is gone is stale); a malformed list is
    one line of error, not a traceback."""
    import pytest

    from rollcheck.core.registry import protocol_names
    from rollcheck.mutate.equivalents import load_equivalents, protocol_equivalents
    from rollcheck.mutate.tree import protocol_dir

    entries = protocol_equivalents(protocol_names())
    assert entries, "the list is empty"
    for e in entries:
        lines = {ln.strip() for ln in (protocol_dir(e.protocol) / e.module).read_text().splitlines()}
        assert e.before in lines, f"{e.protocol}/{e.module}: no line {e.before!r}"
    # An edit argued twice is an entry someone wrote without finding the first.
    keys = [(e.protocol, e.module, e.operator, e.before, e.after, e.function, e.column) for e in entries]
    assert not [k for k in set(keys) if keys.count(k) > 1], "an edit listed twice"
    bad = tmp_path / "bad.toml"
    bad.write_text('[[equivalent]]\nmodule = "api.py"\n')
    with pytest.raises(ValueError, match="entry 1 must have exactly"):
        load_equivalents(bad, "zk_migration")
    bad.write_text("[[equivalent]\n")
    with pytest.raises(ValueError, match="cannot read"):
        load_equivalents(bad, "zk_migration")
    assert load_equivalents(tmp_path / "absent.toml", "zk_migration") == []


def test_an_equivalent_entry_can_be_scoped_to_one_function(tmp_path: Path) -> None:
    """``function`` names where the edit is equivalent: the same text elsewhere in the module (streams'
    ``if n < 0:`` in decode_subscription, inside ``if n != 0``, and in _capacity) is not named; a row without the
    field (before it) is not either, unless a resumed row gets it from today's mutant; a key the schema does not
    have is refused."""
    import pytest

    from rollcheck.mutate.equivalents import listed_equivalent, load_equivalents
    from rollcheck.mutate.generate import Mutant
    from rollcheck.mutate.resume import carried_rows
    from rollcheck.mutate.sites import enclosing_functions

    assert enclosing_functions("x = 1\nclass C:\n    def m(self):\n        return 1\ndef f():\n    pass\n") == {
        3: "C.m", 4: "C.m", 5: "f", 6: "f"}
    toml = tmp_path / "eq.toml"
    toml.write_text('[[equivalent]]\nmodule = "api.py"\noperator = "cmp_swap"\nbefore = "a < b"\n'
                    'after = "a <= b"\nfunction = "f"\nreason = "r"\n')
    (entry,) = load_equivalents(toml, "p")

    def mutant(function: str) -> Mutant:
        return Mutant("p:api.py:1:1:cmp_swap", "p", "cmp_swap", "x/api.py", "api.py", 1, 1, "a < b", "a <= b", "",
                      function)

    assert listed_equivalent(mutant("f"), [entry]) and not listed_equivalent(mutant("g"), [entry])
    row = {"protocol": "p", "file": "x/api.py", "operator": "cmp_swap", "before": "a < b", "after": "a <= b"}
    assert not entry.names(row) and entry.names(dict(row, function="f"))
    earlier = {"mutants": [dict(row, id="p:api.py:1:1:cmp_swap", status="survived")], "sources_sha256": "S",
               "reference_sha256": "R"}
    kept = carried_rows(earlier, {"p": [mutant("f")]}, {"sources_sha256": "S", "reference_sha256": "R"}, [entry])
    assert kept["p:api.py:1:1:cmp_swap"]["status"] == "equivalent"
    toml.write_text(toml.read_text() + 'where = "x"\n')
    with pytest.raises(ValueError, match="optionally function"):
        load_equivalents(toml, "p")


def test_an_equivalent_entry_can_be_scoped_to_one_column(tmp_path: Path) -> None:
    """``column`` tells apart the same edit of the same text in one function at two depths (streams'
    on_assignment adopts a higher supported version in today's branch at once, in kip's only after an inner
    check): the id's column decides, whatever the line; a column that is not a number is refused."""
    import pytest

    from rollcheck.mutate.equivalents import load_equivalents

    toml = tmp_path / "eq.toml"
    entry_text = ('[[equivalent]]\nmodule = "api.py"\noperator = "cmp_swap"\nbefore = "a < b"\n'
                  'after = "a <= b"\nfunction = "f"\nreason = "r"\n')
    toml.write_text(entry_text + 'column = "8"\n')
    (entry,) = load_equivalents(toml, "p")
    row = {"protocol": "p", "file": "x/api.py", "operator": "cmp_swap", "before": "a < b", "after": "a <= b",
           "function": "f"}
    assert entry.names(dict(row, id="p:api.py:806:8:cmp_swap")) and entry.names(dict(row, id="p:api.py:9:8:cmp_swap"))
    assert not entry.names(dict(row, id="p:api.py:792:12:cmp_swap")) and not entry.names(row)
    toml.write_text(entry_text + 'column = "eight"\n')
    with pytest.raises(ValueError, match="column must be a number"):
        load_equivalents(toml, "p")


def test_each_protocol_has_a_reference_digest_of_what_it_imports(tmp_path: Path) -> None:
    """A change to one protocol's package leaves the digests of the protocols that do not import it; a change
    to a package a protocol imports (directly or through another), or to a shared module, moves it; a
    docstring naming another package is no import. --resume keeps a kill while its protocol's digest stands."""
    from rollcheck.mutate.digests import reference_digests
    from rollcheck.mutate.generate import Mutant
    from rollcheck.mutate.resume import carried_rows

    ref = tmp_path / "reference_impl"
    files = {"__init__.py": "", "shared.py": "X = 1\n", "a/api.py": "from reference_impl.b import api\n",
             "b/api.py": "import reference_impl.shared\n", "c/api.py": '"""Unlike reference_impl.a: alone."""\n'}
    for name, text in files.items():
        (ref / name).parent.mkdir(parents=True, exist_ok=True)
        (ref / name).write_text(text)
    packages = {"a": "A", "b": "B", "c": "C"}
    before = reference_digests(tmp_path, packages, "reference_impl")
    assert len(set(before.values())) == 3
    (ref / "c/api.py").write_text('"""Changed."""\n')
    after_c = reference_digests(tmp_path, packages, "reference_impl")
    assert after_c["A"] == before["A"] and after_c["B"] == before["B"] and after_c["C"] != before["C"]
    (ref / "b/api.py").write_text("import reference_impl.shared  # changed\n")
    after_b = reference_digests(tmp_path, packages, "reference_impl")
    assert after_b["A"] != before["A"] and after_b["C"] == after_c["C"]
    (ref / "shared.py").write_text("X = 2\n")
    assert all(v != after_b[k] for k, v in reference_digests(tmp_path, packages, "reference_impl").items())

    m = Mutant("k1", "zk_migration", "cmp_swap", "reference_impl/zk_migration/api.py", "api.py", 1, 1, "a", "b", "")
    row = {"id": "k1", "protocol": "zk_migration", "status": "killed", "before": "a", "after": "b",
           "protocol_reference_sha256": "Z"}
    earlier = {"commit": "c0", "sources_sha256": "S", "reference_sha256": "R", "mutants": [row]}
    other_protocol_fixed = {"sources_sha256": "S2", "reference_sha256": "R2", "protocol_reference_sha256": {
        "zk_migration": "Z"}}
    assert list(carried_rows(earlier, {"zk_migration": [m]}, other_protocol_fixed)) == ["k1"]
    own_fixed = dict(other_protocol_fixed, protocol_reference_sha256={"zk_migration": "Z2"})
    assert carried_rows(earlier, {"zk_migration": [m]}, own_fixed) == {}

    # A comment or a line break moves the byte digest but not the code digest, which a row
    # carries: its kill stands; a changed constant moves both.
    code = reference_digests(tmp_path, packages, "reference_impl", code_only=True)
    (ref / "b/api.py").write_text("import reference_impl.shared  # another comment\n\n")
    assert reference_digests(tmp_path, packages, "reference_impl")["B"] != after_b["B"]
    assert reference_digests(tmp_path, packages, "reference_impl", code_only=True) == code
    (ref / "b/api.py").write_text("import reference_impl.shared as s\n")
    assert reference_digests(tmp_path, packages, "reference_impl", code_only=True)["B"] != code["B"]
    coded = dict(row, protocol_code_sha256="C")
    commented = dict(own_fixed, protocol_code_sha256={"zk_migration": "C"})
    assert list(carried_rows(dict(earlier, mutants=[coded]), {"zk_migration": [m]}, commented)) == ["k1"]
    recoded = dict(own_fixed, protocol_code_sha256={"zk_migration": "C2"})
    assert carried_rows(dict(earlier, mutants=[coded]), {"zk_migration": [m]}, recoded) == {}


def test_a_story_config_whose_state_space_blows_up_meets_z3_on_that_story(tmp_path: Path) -> None:
    """A mutant that drops a fault's budget makes a story config's state space infinite: the explorer times
    out there, and Z3's differential on that story (which stops at the first state where it steps otherwise)
    decides, as it does when small blows up."""
    from rollcheck.mutate.baseline import Baseline
    from rollcheck.mutate.generate import Mutant
    from rollcheck.mutate.mutant_run import run_mutant
    from rollcheck.mutate.runner import CellResult

    story = next(c for c in z3_cells_of("zk_migration") if c.config != "small")
    ran: list[str] = []

    class Runner:
        def workdir(self, mutant: Mutant | None) -> Path:
            return tmp_path

        def run_cell(self, work: Path, protocol: str, cell: Cell, timeout: float) -> CellResult:
            outcome = "timeout" if cell.config == story.config else "holds"
            return CellResult(cell.config, cell.profile, outcome, None, 1.0, distinct_states=10)

        def has_z3(self, protocol: str) -> bool:
            return True

        def snapshot_has_spec(self, protocol: str) -> bool:
            return False

        def run_z3(self, work: Path, protocol: str, cell: Cell, timeout: float) -> tuple[str, str]:
            ran.append(cell.config)
            return ("disagrees", "steps otherwise") if cell.config == story.config else ("agrees", "")

        def run_variants(self, work: Path, protocol: str, timeout: float, z3: bool = True) -> tuple[str, str]:
            return "caught", ""

    base = Baseline("zk_migration", [CellResult(c.config, c.profile, "holds", 0, 1.0, distinct_states=10)
                                     for c in cells_of("zk_migration")], 10.0, {})
    m = Mutant("m", "zk_migration", "drop_and_operand", "reference_impl/zk_migration/system.py", "system.py", 1, 1,
               "a and b", "True and b", "")
    row = run_mutant(Runner(), m, base, timeout=900.0, all_cells=False)  # type: ignore[arg-type]
    assert row["status"] == "killed (z3)" and story.config in ran


def test_an_explorer_timeout_still_meets_conform_on_its_small_configs(tmp_path: Path) -> None:
    """A mutant that removes a bound (features system.py:521, the IBP roll's count not incremented) times the
    explorer out on the gate's config; conform's configs are small and TLC's reachable set is bounded by the
    spec, so they still run, each capped, and their disagreement kills it. Agreement leaves it a timeout."""
    from rollcheck.mutate.baseline import Baseline
    from rollcheck.mutate.generate import Mutant
    from rollcheck.mutate.mutant_run import CONFORM_AFTER_TIMEOUT, run_mutant
    from rollcheck.mutate.runner import CellResult

    gate = get_protocol("features").gate_config

    class Runner(RecordingRunner):
        says = "agrees"
        limits: list[float] = []

        def run_cell(self, work: Path, protocol: str, cell: Cell, timeout: float) -> Any:
            self.ran.append(f"explore {cell.config}/{cell.profile}")
            outcome = "timeout" if cell.config == gate else "holds"
            return CellResult(cell.config, cell.profile, outcome, None, 1.0, distinct_states=10)

        def run_conform(self, work: Path, protocol: str, cell: Cell, timeout: float,
                        domain_only: bool = False) -> tuple[str, str]:
            self.ran.append(f"conform {cell.config}/{cell.profile}")
            self.limits.append(timeout)
            return (self.says, "reachable sets differ") if cell.config == "ibp-roll" else ("agrees", "")

    for says, status in (("disagrees", "killed (conform)"), ("agrees", "timeout")):
        ran: list[str] = []
        runner = Runner(tmp_path, ran, spec=True)
        runner.says, runner.limits = says, []
        base = Baseline("features", [CellResult(c.config, c.profile, "holds", 0, 1.0, distinct_states=10)
                                     for c in cells_of("features")], 10.0, {})
        m = Mutant("m", "features", "drop_increment", "reference_impl/features/system.py", "system.py", 1, 1,
                   "n + 1", "n + 0", "")
        row = run_mutant(runner, m, base, timeout=2400.0, all_cells=False)
        assert row["status"] == status, row
        assert "variants" not in ran and any(r.startswith("conform ibp-roll/") for r in ran)
        assert runner.limits and max(runner.limits) <= CONFORM_AFTER_TIMEOUT
    # A mutant nothing stopped short meets conform with the whole time left, as before.
    ran = []
    run_mutant(RecordingRunner(tmp_path, ran, spec=True), m, base, timeout=2400.0, all_cells=False)
    assert "variants" in ran and any(r.startswith("conform ") for r in ran)


def test_a_configs_field_defaults_are_data_and_its_validation_is_mutated() -> None:
    """The defaults of a ``*Config`` class's fields are not mutated (every copy of the rules reads them alike);
    its methods are, and so is any other class's default."""
    from rollcheck.mutate.sites import ModuleSites

    text = '''
from dataclasses import dataclass

@dataclass(frozen=True)
class ToyConfig:
    brokers: int = 2

    def validate(self) -> None:
        if not 1 <= self.brokers <= 3:
            raise ValueError("brokers must be between 1 and 3")

@dataclass(frozen=True)
class Record:
    level: int = 7
'''
    sites = ModuleSites(text).sites()
    lines = {s.line for s in sites}
    assert 6 not in lines  # brokers: int = 2
    assert 9 in lines and 14 in lines  # the validation's bounds; another class's default


def test_resume_at_another_reference_runs_the_earlier_killing_step_first(tmp_path: Path) -> None:
    """--resume from a campaign at an older reference runs every mutant again, but the step that killed the same
    edit there first (kill_hints): a kill in any order is a kill. When that step no longer kills, the usual order
    follows, and the step is not run twice."""
    from rollcheck.mutate.baseline import Baseline
    from rollcheck.mutate.generate import Mutant
    from rollcheck.mutate.mutant_run import run_mutant
    from rollcheck.mutate.resume import kill_hint, kill_hints
    from rollcheck.mutate.runner import CellResult

    story = next(c for c in z3_cells_of("zk_migration") if c.config != "small")
    assert kill_hint({"status": "killed", "killed_by": [{"config": "faults", "profile": "kafka",
                                                         "properties": ["MIG-03"]}]}) == ("explore",
                                                                                          Cell("faults", "kafka"))
    z3_row = {"status": "killed (z3)", "variants": {}, "z3": [
        {"config": "small", "profile": "kip", "verdict": "agrees"},
        {"config": story.config, "profile": story.profile, "verdict": "disagrees"}]}
    assert kill_hint(z3_row) == ("z3", story)
    assert kill_hint({"status": "killed (variant)", "variants": {"verdict": "escaped"}}) is None  # minutes: not first
    assert kill_hint({"status": "killed (crash)", "variants": {}, "z3": [], "runs": [
        {"config": "small", "profile": "kip", "outcome": "crash"}]}) == ("explore", Cell("small", "kip"))
    assert kill_hint({"status": "survived"}) is None and kill_hint({"status": "timeout"}) is None
    conform_row = {"status": "killed (conform)", "variants": {"verdict": "caught"}, "z3": [], "conform": [
        {"config": "small", "profile": "kip", "verdict": "agrees"},
        {"config": "operator-from-1.1", "profile": "kafka", "verdict": "disagrees"}]}
    assert kill_hint(conform_row) == ("conform", Cell("operator-from-1.1", "kafka"))
    domain = {"status": "killed (conform)", "conform": [
        {"config": "small", "profile": "kip", "verdict": "disagrees", "domain_only": "yes"}]}
    assert kill_hint(domain) is None  # a config module's domain runs first anyway

    def mutant(mid: str) -> Mutant:
        return Mutant(mid, "zk_migration", "cmp_swap", "reference_impl/zk_migration/system.py", "system.py", 1, 1,
                      "a < b", "a <= b", "")

    earlier = {"mutants": [dict(z3_row, id="m", before="a < b", after="a <= b"),
                           dict(z3_row, id="kept", before="a < b", after="a <= b"),
                           dict(z3_row, id="other", before="x", after="y")]}
    selected = {"zk_migration": [mutant("m"), mutant("kept"), mutant("other")]}
    assert kill_hints(earlier, selected, {"kept": {}}) == {"m": ("z3", story)}
    # A line added above moves every later site (a new id): the same edit of the same function at the same
    # column keeps its hint where no other site of that function makes it; an ambiguous one gets none.
    def moved(line: int, before: str, function: str = "f") -> Mutant:
        return Mutant(f"zk_migration:system.py:{line}:5:cmp_swap", "zk_migration", "cmp_swap",
                      "reference_impl/zk_migration/system.py", "system.py", line, 5, before, before + "=", "", function)

    def row(line: int, before: str, function: str = "f") -> dict[str, object]:
        return dict(z3_row, id=f"zk_migration:system.py:{line}:5:cmp_swap", protocol="zk_migration",
                    operator="cmp_swap", col=5, before=before, after=before + "=", function=function)

    earlier = {"mutants": [row(10, "a < b"), row(20, "c < d"), row(30, "c < d"), row(40, "e < f", "g")]}
    selected = {"zk_migration": [moved(11, "a < b"), moved(21, "c < d"), moved(31, "c < d"), moved(41, "e < f", "h")]}
    assert kill_hints(earlier, selected, {}) == {"zk_migration:system.py:11:5:cmp_swap": ("z3", story)}

    ran: list[str] = []

    def runner(kills: bool) -> object:
        return RecordingRunner(tmp_path, ran, z3_says=lambda cell: ("disagrees", "steps otherwise")
                               if kills and cell == story else None)

    base = Baseline("zk_migration", [CellResult(c.config, c.profile, "holds", 0, 1.0, distinct_states=10)
                                     for c in cells_of("zk_migration")], 10.0, {})
    row = run_mutant(runner(True), mutant("m"), base, 900.0, False, first=("z3", story))  # type: ignore[arg-type]
    assert row["status"] == "killed (z3)" and ran == [f"z3 {story.config}/{story.profile}"]
    assert row["first_step"] == f"z3 {story.config}/{story.profile}"
    ran.clear()
    row = run_mutant(runner(False), mutant("m"), base, 900.0, False, first=("z3", story))  # type: ignore[arg-type]
    assert row["status"] == "survived" and ran[0] == f"z3 {story.config}/{story.profile}"
    assert len(ran) == len(set(ran)) and "variants" in ran  # every step ran, none twice
    assert sum(r.startswith("explore ") for r in ran) == len(cells_of("zk_migration"))
    assert sum(r.startswith("z3 ") for r in ran) == len(z3_cells_of("zk_migration"))


def test_a_conform_kill_resumed_runs_that_conform_cell_first(tmp_path: Path) -> None:
    """A kill by TLC conformance at another reference: the cell that disagreed runs first, and alone when it
    disagrees again; when it agrees now, the usual order follows and the whole conform step runs at its end."""
    from rollcheck.mutate.baseline import Baseline
    from rollcheck.mutate.generate import Mutant
    from rollcheck.mutate.mutant_run import run_mutant
    from rollcheck.mutate.runner import CellResult
    from rollcheck.mutate.steps import conform_cells_of

    proto = "streams_probing"
    cell = Cell("operator-from-1.1", "kafka")
    assert cell in conform_cells_of(proto)
    ran: list[str] = []

    class Runner(RecordingRunner):
        kills = True

        def run_conform(self, work: Path, protocol: str, c: Cell, timeout: float,
                        domain_only: bool = False) -> tuple[str, str]:
            self.ran.append(f"conform {c.config}/{c.profile}")
            return ("disagrees", "a view only in the reference") if self.kills and c == cell else ("agrees", "")

    base = Baseline(proto, [CellResult(c.config, c.profile, "holds", 0, 1.0, distinct_states=10)
                            for c in cells_of(proto)], 10.0, {})
    m = Mutant(f"{proto}:system.py:1:1:cmp_swap", proto, "cmp_swap", f"reference_impl/{proto}/system.py",
               "system.py", 1, 1, "a < b", "a <= b", "")
    row = run_mutant(Runner(tmp_path, ran, spec=True), m, base, 900.0, False, first=("conform", cell))
    assert row["status"] == "killed (conform)" and ran == ["conform operator-from-1.1/kafka"]
    assert row["first_step"] == "conform operator-from-1.1/kafka"
    ran.clear()
    agrees = Runner(tmp_path, ran, spec=True)
    agrees.kills = False
    row = run_mutant(agrees, m, base, 900.0, False, first=("conform", cell))
    assert row["status"] == "survived" and ran[0] == "conform operator-from-1.1/kafka" and "variants" in ran
    assert ran[-len(conform_cells_of(proto)):] == [f"conform {c.config}/{c.profile}" for c in conform_cells_of(proto)]


def test_resume_keeps_a_kill_where_only_the_registry_entry_grew() -> None:
    """--resume across a commit that only added a config to a protocol's registry entry (protocol.py): every
    check an earlier kill met still runs, so kills and listed equivalents stand, flagged ``registry_grew``, and a
    survivor runs again (the new config may kill it). Anything else that changed (a config's value, a story
    dropped, a broken variant) keeps the old rule: the row runs again."""
    from rollcheck.mutate.generate import Mutant
    from rollcheck.mutate.registry_growth import registry_grew
    from rollcheck.mutate.resume import carried_rows

    def mutant(mid: str) -> Mutant:
        return Mutant(mid, "zk_migration", "cmp_swap", "reference_impl/zk_migration/system.py", "system.py", 1, 1,
                      "a < b", "a <= b", "")

    rows = [{"id": i, "protocol": "zk_migration", "status": st, "before": "a < b", "after": "a <= b",
             "protocol_code_sha256": "old", "commit": "c0"}
            for i, st in (("k1", "killed (z3)"), ("s1", "survived"), ("t1", "timeout"))]
    earlier = {"mutants": rows, "sources_sha256": "S0", "reference_sha256": "R0"}
    doc = {"sources_sha256": "S1", "reference_sha256": "R1", "protocol_code_sha256": {"zk_migration": "new"}}
    selected = {"zk_migration": [mutant("k1"), mutant("s1"), mutant("t1")]}
    asked: list[tuple[str, str]] = []

    def grown(row: dict[str, object], protocol: str) -> bool:
        asked.append((str(row["commit"]), protocol))
        return True

    kept = carried_rows(earlier, selected, doc, (), grown)
    assert sorted(kept) == ["k1"] and kept["k1"]["registry_grew"] and kept["k1"]["carried"]
    assert asked == [("c0", "zk_migration")]  # asked for standing rows only, with the row's commit
    assert carried_rows(earlier, selected, doc, (), lambda r, p: False) == {}
    assert carried_rows(earlier, selected, doc) == {}

    sig = {"configs": {"small": {"voters": 1}, "story": {"voters": 3}}, "gate_config": "small",
           "story_configs": ["story"], "profiles": ["kip"], "variants": [["V1", ["P"], "small", "S", {"m": 1}]]}
    added = dict(sig, configs={**sig["configs"], "new": {"voters": 3}}, story_configs=["story", "new"])
    assert registry_grew(sig, added) and not registry_grew(added, sig) and registry_grew(sig, sig)
    assert not registry_grew(sig, dict(sig, configs={**sig["configs"], "story": {"voters": 1}}))
    assert not registry_grew(sig, dict(added, story_configs=["new"]))
    assert not registry_grew(sig, dict(added, variants=[["V1", ["P"], "story", "S", {"m": 1}]]))
    assert not registry_grew(sig, dict(added, gate_config="story"))
    # A conformance config added (the signature before they existed has none) is growth; one dropped is not.
    conforming = dict(added, conform_configs=["new"])
    assert registry_grew(sig, conforming) and registry_grew(added, conforming)
    assert not registry_grew(conforming, added)


def test_registry_growth_reads_each_rows_commit_from_git(tmp_path: Path) -> None:
    """registry_growth against this repository's history: e799c05 added the zk ``leaderless_rollback`` story
    config and nothing else to the reference, so a kill at bc10bf4 stands there; 5f24969 changed two story
    configs' values (Raft epochs, lag limit), so a kill from before it does not; a row whose code digest is not
    its commit's (a dirty tree) never stands this way."""
    import subprocess

    from rollcheck.mutate.digests import reference_digests
    from rollcheck.mutate.registry_growth import registry_growth
    from rollcheck.mutate.tree import SourceTree

    source = SourceTree.of_checkout()

    def at(commit: str) -> Path:
        d = tmp_path / commit
        if d.exists():
            return d
        d.mkdir()
        archive = subprocess.run(["git", "archive", commit, *source.packages], cwd=source.root, capture_output=True,
                                 check=True)
        subprocess.run(["tar", "-x", "-C", str(d)], input=archive.stdout, check=True)
        return d

    packages = source.protocol_packages()

    def row(commit: str) -> dict[str, object]:
        code = reference_digests(at(commit), packages, source.reference, code_only=True)["zk_migration"]
        return {"commit": commit, "protocol_code_sha256": code}

    grown = registry_growth(source, at("e799c05"))
    assert grown(row("bc10bf4"), "zk_migration")
    assert not grown(dict(row("bc10bf4"), protocol_code_sha256="dirty"), "zk_migration")
    assert not registry_growth(source, at("5f24969"))(row("5f24969~1"), "zk_migration")


def test_conformance_cells_follow_the_registry() -> None:
    """The campaign's TLC step runs where the gate's conform cells run: small under every profile, then each
    conformance config of the registry (streams: an operator's pre-2.0 bounces, where the view's upgrade.from
    and failure kind are set) under the profiles it is valid for."""
    from rollcheck.mutate.steps import conform_argv, conform_cells_of

    entry = get_protocol("streams_probing")
    cells = conform_cells_of("streams_probing")
    small = len(entry.profiles)
    assert entry.conform_configs and [c.config for c in cells[:small]] == ["small"] * small
    assert {(c.config, c.profile) for c in cells[small:]} == {
        (c, p) for c in entry.conform_configs for p in entry.config_profiles(entry.configs[c])}
    assert ("operator-from-2.0", "kafka") in {(c.config, c.profile) for c in cells} and \
        ("operator-from-2.0", "kip") not in {(c.config, c.profile) for c in cells}  # release 3.9: kafka only
    assert conform_argv("streams_probing", "kip", Path("o"), "operator-from-1.1")[:4] == [
        "conform", "streams_probing", "--config", "operator-from-1.1"]
    # features: the deprecation switched off (kip's copy of the switch) under both profiles; zk_migration: none
    assert [(c.config, c.profile) for c in conform_cells_of("features")] == [
        ("small", "kip"), ("small", "kafka"), ("no-deprecation", "kip"), ("no-deprecation", "kafka"),
        ("ibp-roll", "kip"), ("ibp-roll", "kafka"), ("partial-pairs", "kip"),
        ("partial-pairs", "kafka"), ("atomic", "kip"), ("atomic", "kafka")]
    zk = get_protocol("zk_migration")
    assert [c.config for c in conform_cells_of("zk_migration")] == ["small"] * len(zk.profiles)


def test_dead_definitions_leave_the_live_digest(tmp_path: Path) -> None:
    """--resume keeps a kill where the reference changed only by deleting definitions nothing under the
    campaign's packages reads (KIP-268's test matrix, read only by tests): the live digest ignores them, a chain
    of them, and nothing else; a name read anywhere (an attribute, a getattr by string, another package) is
    live, and so is every definition of a module that calls globals()."""
    from rollcheck.mutate.digests import dead_definitions, reference_digests

    ref = tmp_path / "reference_impl"
    files = {
        "__init__.py": "",
        "a/api.py": ("def f():\n    return T[0]\n\nT = (1, 2)\n\ndef cells():\n    return [x for x in MATRIX]\n\n"
                     "MATRIX = (1, 2)\n\ndef by_attr():\n    return 1\n\ndef by_string():\n    return 2\n"),
        "a/use.py": "from reference_impl.a import api\n\nX = api.f()\nY = getattr(api, 'by_string')\n",
        "a/dyn.py": "def unread():\n    return 3\n\nG = globals()\n",
    }
    for name, text in files.items():
        (ref / name).parent.mkdir(parents=True, exist_ok=True)
        (ref / name).write_text(text)
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "m.py").write_text("from reference_impl.a import api\n\nZ = api.by_attr\n")
    dead = dead_definitions(tmp_path, "reference_impl")
    assert dead == {ref / "a/api.py": frozenset({2, 3})}  # cells and the MATRIX only it reads
    packages = {"a": "A"}
    before = reference_digests(tmp_path, packages, "reference_impl", code_only=True, live_only=True)
    full = reference_digests(tmp_path, packages, "reference_impl", code_only=True)
    assert full != before
    text = files["a/api.py"]
    (ref / "a/api.py").write_text(text.replace("def cells():\n    return [x for x in MATRIX]\n\nMATRIX = (1, 2)\n\n",
                                               ""))
    assert reference_digests(tmp_path, packages, "reference_impl", code_only=True, live_only=True) == before
    assert reference_digests(tmp_path, packages, "reference_impl", code_only=True) != full
    (ref / "a/api.py").write_text(text.replace("def by_string():\n    return 2\n", ""))
    assert reference_digests(tmp_path, packages, "reference_impl", code_only=True, live_only=True) != before
    (ref / "a/api.py").write_text(text.replace("T = (1, 2)", "T = (2, 1)"))
    assert reference_digests(tmp_path, packages, "reference_impl", code_only=True, live_only=True) != before


def test_live_digest_reads_only_the_modules_another_protocol_imports(tmp_path: Path) -> None:
    """zk_migration imports metadata_version's catalog, not its controller: a fix to the controller keeps the
    zk kills (the live digest), one to the catalog does not, and the package-wide digest moves with either."""
    from rollcheck.mutate.digests import reference_digests

    ref = tmp_path / "reference_impl"
    files = {"__init__.py": "", "a/__init__.py": "", "b/__init__.py": "", "b/cat.py": "LEVEL = 1\n",
             "a/api.py": "from reference_impl.b.cat import LEVEL\n\nX = LEVEL\n",
             "b/api.py": "from reference_impl.b import cat\n\nY = cat\n"}
    for name, text in files.items():
        (ref / name).parent.mkdir(parents=True, exist_ok=True)
        (ref / name).write_text(text)
    packages = {"a": "A", "b": "B"}

    def digests() -> tuple[str, str]:
        return (reference_digests(tmp_path, packages, "reference_impl", code_only=True, live_only=True)["A"],
                reference_digests(tmp_path, packages, "reference_impl", code_only=True)["A"])

    live, full = digests()
    (ref / "b/api.py").write_text("from reference_impl.b import cat\n\nY = cat.LEVEL + 1\n")
    assert digests()[0] == live and digests()[1] != full
    (ref / "b/cat.py").write_text("LEVEL = 2\n")
    assert digests()[0] != live


def test_mutation_summary_reports_each_protocol_and_refuses_other_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The docs' campaign table (rollcheck mutate --summary): kills by step, listed equivalents out of the rate,
    survivors with their edit; a file that is no campaign result is one line, exit 2."""
    from rollcheck.cli import main as cli

    def main(argv: list[str]) -> int:
        return cli(["mutate", "--summary", *argv])

    rows = [{"id": f"p:api.py:{i}:1:cmp_swap", "protocol": "p", "status": status, "before": "a < b", "after": "a <= b"}
            for i, status in enumerate(["killed", "killed (z3)", "killed (crash)", "equivalent", "survived",
                                        "timeout"])]
    good = tmp_path / "campaign.json"
    good.write_text(json.dumps({"commit": "abc", "partial": True, "mutants": rows}))
    assert main([str(good)]) == 0
    out = capsys.readouterr().out
    assert "| p | `campaign.json` | abc | partial | 6 | 1 | 0 | 1 | 0 | 1 | 1 | 1 | 1 | 60.0% |" in out
    assert "- survivor `p:api.py:4:1:cmp_swap`: `a < b` -> `a <= b`" in out
    bad = tmp_path / "other.json"
    bad.write_text("[1, 2]")
    assert main([str(good), str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a campaign result" in err[0]


def test_mutation_summary_latest_keeps_one_row_per_protocol_from_the_last_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--latest: a campaign in several files is one row per protocol, the last file's (as --resume merges)."""
    from rollcheck.cli import main as cli

    def main(argv: list[str]) -> int:
        return cli(["mutate", *argv[:-2], "--summary", *argv[-2:]])

    def campaign(name: str, commit: str, statuses: dict[str, str]) -> str:
        rows = [{"id": f"{proto}:api.py:1:1:cmp_swap", "protocol": proto, "status": status}
                for proto, status in statuses.items()]
        (tmp_path / name).write_text(json.dumps({"commit": commit, "mutants": rows}))
        return str(tmp_path / name)

    first = campaign("a.json", "old", {"p": "survived", "q": "killed"})
    second = campaign("b.json", "new", {"p": "killed"})
    assert main(["--latest", "--json", first, second]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["protocol"], r["commit"], r["survived"]) for r in rows] == [("q", "old", 0), ("p", "new", 0)]
    assert main(["--json", first, second]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 3


def test_a_config_module_edit_meets_the_config_domain_first() -> None:
    """A config module's mutants meet conform's config domain alone first (one TLC run, seconds, where their
    explorer and Z3 runs took minutes each before conform killed them): the same check the gate's conform
    cells run."""
    from rollcheck.mutate.generate import CONFIG_MODULE
    from rollcheck.mutate.steps import conform_argv

    assert CONFIG_MODULE == "config.py"
    assert conform_argv("p", "kip", Path("o"), domain_only=True)[-1] == "--domain-only"
    assert "--domain-only" not in conform_argv("p", "kip", Path("o"))


def test_resume_from_pieces_merges_their_rows_each_with_its_own_commit(tmp_path: Path) -> None:
    """--resume FILE FILE ...: pieces of one campaign (runs with --match) read as one; each row keeps the commit and
    digests of its own file, a later file's row of a mutant replaces an earlier one's, and with no selection given
    the campaign goes on over every mutant of the protocols the pieces name."""
    import argparse

    from rollcheck.cli.commands import mutate_cmd
    from rollcheck.mutate.resume import merge_campaigns
    from rollcheck.mutate.tree import SourceTree

    a = {"commit": "c1", "sources_sha256": "S1", "reference_sha256": "R1", "params": {"match": "system"},
         "mutants": [{"id": "m1", "protocol": "metadata_version", "status": "survived"},
                     {"id": "m2", "protocol": "metadata_version", "status": "killed", "commit": "c0"}]}
    b = {"commit": "c2", "sources_sha256": "S2", "reference_sha256": "R2", "params": {"match": "catalog"},
         "mutants": [{"id": "m1", "protocol": "metadata_version", "status": "killed (z3)"},
                     {"id": "m3", "protocol": "metadata_version", "status": "killed"}]}
    merged = merge_campaigns([a, b])
    rows = {r["id"]: r for r in merged["mutants"]}
    assert rows["m1"]["status"] == "killed (z3)" and rows["m1"]["commit"] == "c2"
    assert rows["m2"]["commit"] == "c0" and rows["m2"]["sources_sha256"] == "S1"  # a row's own commit stands
    assert rows["m3"]["reference_sha256"] == "R2" and merged["params"] == {"match": "catalog"}
    assert merge_campaigns([a]) is a
    files = []
    for name, doc in (("a", a), ("b", b)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"benchmark": "mutation", **doc}))
        files.append(str(path))
    parser = argparse.ArgumentParser()
    mutate_cmd.register(parser.add_subparsers())
    opts = mutate_cmd.options(parser.parse_args(["mutate", "--resume", *files]), SourceTree.of_checkout())
    assert opts.protocols == ("metadata_version",) and opts.match is None
    assert opts.resumed is not None and len(opts.resumed["mutants"]) == 3


def test_the_baseline_spreads_the_explorer_and_z3_cells_over_its_jobs(tmp_path: Path) -> None:
    """run_baseline(jobs=2): two explorer (and Z3) cells at once, the rows still in cells_of's order; a Z3 cell
    that disagrees fails the baseline by name; the variants' gate and TLC run alone (they share working files)."""
    import threading
    import time

    from rollcheck.mutate.baseline import run_baseline
    from rollcheck.mutate.runner import CellResult
    from rollcheck.mutate.steps import conform_cells_of

    class FakeRunner:
        def __init__(self, z3_verdict: str = "agrees") -> None:
            self.lock, self.now, self.most, self.z3_verdict = threading.Lock(), 0, 0, z3_verdict
            self.alone: list[bool] = []
            self.decided: list[str] = []
            self.cells: list[Cell] = []
            self.domain_only: list[bool] = []

        def _enter(self) -> None:
            with self.lock:
                self.now += 1
                self.most = max(self.most, self.now)
            time.sleep(0.05)
            with self.lock:
                self.now -= 1

        def workdir(self, mutant: object) -> Path:
            return tmp_path

        def import_check(self, work: Path, protocol: str) -> dict[str, str]:
            return {}

        def run_cell(self, work: Path, protocol: str, cell: Cell, timeout: float) -> CellResult:
            self._enter()
            self.cells.append(cell)
            return CellResult(cell.config, cell.profile, "holds", 0, 0.05)

        def run_variants(self, work: Path, protocol: str, timeout: float, z3: bool = True) -> tuple[str, str]:
            self.alone.append(self.now == 0)
            return "caught", ""

        def has_z3(self, protocol: str) -> bool:
            return True

        def run_z3(self, work: Path, protocol: str, cell: Cell, timeout: float) -> tuple[str, str]:
            self._enter()
            return (self.z3_verdict, "differs") if cell == z3_cells_of("metadata_version")[-1] else ("agrees", "")

        def run_decisions(self, work: Path, protocol: str, profile: str, timeout: float) -> tuple[str, str]:
            self.decided.append(profile)
            return "agrees", ""

        def snapshot_has_spec(self, protocol: str) -> bool:
            return True

        def run_conform(self, work: Path, protocol: str, cell: Cell, timeout: float,
                        domain_only: bool = False) -> tuple[str, str]:
            self.alone.append(self.now == 0)
            self.domain_only.append(domain_only)
            return "agrees", ""

    runner = FakeRunner()
    base = run_baseline(runner, "metadata_version", 60.0, jobs=2)  # type: ignore[arg-type]
    assert [Cell(c.config, c.profile) for c in base.cells] == cells_of("metadata_version")
    assert runner.most == 2 and runner.alone == [True] * (1 + len(conform_cells_of("metadata_version")))
    alone = FakeRunner()
    run_baseline(alone, "metadata_version", 60.0)  # type: ignore[arg-type]
    assert alone.most == 1
    last = z3_cells_of("metadata_version")[-1]
    with pytest.raises(RuntimeError, match=f"z3 {last.config}/{last.profile}: disagrees differs"):
        run_baseline(FakeRunner("disagrees"), "metadata_version", 60.0, jobs=2)  # type: ignore[arg-type]
    # A screen's baseline: the explorer on small, the decision rules under each profile, the config domain.
    cheap = FakeRunner("disagrees")
    base = run_baseline(cheap, "metadata_version", 60.0, jobs=2, screen=True)  # type: ignore[arg-type]
    assert sorted(cheap.cells, key=repr) == sorted((c for c in cells_of("metadata_version") if c.config == "small"),
                                                   key=repr)  # two jobs: in either order
    assert cheap.decided == list(get_protocol("metadata_version").profiles) and cheap.domain_only == [True]


def test_drop_call_replaces_a_call_made_for_its_effect_by_pass() -> None:
    """drop_call: each expression-statement call (the record appended, the check that raises) becomes ``pass``,
    a multi-line one without moving the lines after it; a docstring, a call whose value is used and a bare name
    are not sites."""
    from rollcheck.mutate.sites import ModuleSites, apply_site

    text = '''
def write(records: list[int], level: int) -> list[int]:
    """Docstring."""
    check(level)
    records.append(
        level)
    out = sorted(records)
    records
    return out
'''
    sites = ModuleSites(text)
    drops = [s for s in sites.sites() if s.operator == "drop_call"]
    assert [(s.line, s.col) for s in drops] == [(4, 5), (5, 5)]
    for site in drops:
        mutated = apply_site(sites, site)
        assert mutated is not None
        assert mutated.splitlines()[6] == "    out = sorted(records)"  # later lines stay where they were
        assert mutated.count("pass") == 1
    assert "check(level)" not in str(apply_site(sites, drops[0]))
    assert "records.append" not in str(apply_site(sites, drops[1]))


def test_decisions_run_first_outside_the_system_module_and_a_screen_stops_after_the_cheap_steps(
        tmp_path: Path) -> None:
    """An API-level mutant meets the decision rules (``prove --decisions-only``, each profile) before anything
    else, and a kill there ends it in seconds; a system-module mutant skips them (the rules never call it). With
    ``screen`` only the cheap steps run: a mutant they leave alive is "screened", which the kill rate leaves out
    and ``--resume`` runs again even at the same sources."""
    from rollcheck.mutate.baseline import Baseline
    from rollcheck.mutate.generate import Mutant
    from rollcheck.mutate.mutant_run import run_mutant
    from rollcheck.mutate.report import summarize
    from rollcheck.mutate.resume import carried_rows, kill_hint
    from rollcheck.mutate.runner import CellResult
    from rollcheck.mutate.steps import profiles_of

    ran: list[str] = []

    def runner(decide: str = "agrees") -> RecordingRunner:
        return RecordingRunner(tmp_path, ran, spec=True, decisions_say=lambda profile: (
            decide, f"decisions/{profile}: mv_update: differs") if profile == "kafka" else None)

    proto = "metadata_version"
    base = Baseline(proto, [CellResult(c.config, c.profile, "holds", 0, 1.0, distinct_states=10)
                            for c in cells_of(proto)], 10.0, {})

    def mutant(module: str) -> Mutant:
        return Mutant(f"{proto}:{module}:1:1:cmp_swap", proto, "cmp_swap", f"reference_impl/{proto}/{module}",
                      module, 1, 1, "a < b", "a <= b", "")

    row = run_mutant(runner("disagrees"), mutant("api.py"), base, 900.0, False)  # type: ignore[arg-type]
    assert row["status"] == "killed (z3)" and ran == [f"decisions {p}" for p in profiles_of(proto)]
    assert row["z3"][-1]["config"] == "decisions" and "mv_update" in row["z3"][-1]["detail"]
    ran.clear()
    # Resumed from a row those rules killed, the profile that killed it runs first, and alone.
    hint = kill_hint(row)
    assert hint == ("z3", Cell("decisions", "kafka"))
    row = run_mutant(runner("disagrees"), mutant("api.py"), base, 900.0, False, first=hint)  # type: ignore[arg-type]
    assert row["status"] == "killed (z3)" and ran == ["decisions kafka"]
    ran.clear()
    row = run_mutant(runner(), mutant("api.py"), base, 900.0, False, screen=True)  # type: ignore[arg-type]
    small = [f"explore small/{p}" for p in profiles_of(proto)]
    assert row["status"] == "screened" and ran == [*(f"decisions {p}" for p in profiles_of(proto)), *small]
    ran.clear()
    row = run_mutant(runner(), mutant("system.py"), base, 900.0, False, screen=True)  # type: ignore[arg-type]
    assert row["status"] == "screened" and ran == small
    ran.clear()
    # In full, the decision rows do not stand in for the z3 cell on small: that still walks every state.
    row = run_mutant(runner(), mutant("api.py"), base, 900.0, False)  # type: ignore[arg-type]
    assert row["status"] == "survived" and all(f"z3 {c.config}/{c.profile}" in ran for c in z3_cells_of(proto))
    assert "variants" in ran and any(r.startswith("conform ") for r in ran)
    screened = dict(row, id="s", status="screened")
    killed = dict(row, id="k", status="killed (z3)")
    assert summarize([screened, killed], [proto])[proto]["kill_rate"] == 1.0
    doc = {"sources_sha256": "S", "reference_sha256": "R", "mutants": [screened, killed]}
    selected = {proto: [dataclasses.replace(mutant("api.py"), id=i) for i in ("s", "k")]}
    assert list(carried_rows(doc, selected, doc)) == ["k"]
    from rollcheck.mutate.summary import markdown, protocol_rows

    rows = protocol_rows(dict(doc, partial=False), "screen.json")
    assert rows[0]["screened"] == 1 and rows[0]["kill_rate"] == 1.0 and not rows[0]["complete"]
    assert "| screen (1 screened) |" in markdown(rows)
