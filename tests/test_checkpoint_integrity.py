"""The explorer's checkpoint trusts nothing it did not check (issue 61): a resume gives a fresh run's
result even after a level cut by --max-states or by a violation (local and Spark engines); a manifest
with a level dropped, reordered or edited, or naming a file outside its directory, is refused in one
line; no byte read back from a checkpoint is unpickled; no file or directory of a checkpoint is written,
truncated or removed through a planted symbolic link; a checkpoint path that is a file is one line."""

from __future__ import annotations

import json
import pickle
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rollcheck.cli import main
from rollcheck.core.errors import UserError
from rollcheck.core.system import DataclassSystem
from rollcheck.core.transition import Action, AnyProperty, Invariant
from rollcheck.explore.explorer import ExplorationResult, ExploreOptions, explore
from rollcheck.explore.levelstore import manifest_digest
from rollcheck.explore.shortest import successor
from tests.toy import PROTOCOL as TOY
from tests.toy import ToyConfig, ToyState, ToySystem

NAME = "features-small-kip-local"


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    return lines[0]


def _explore(out: Path, *extra: str) -> list[str]:
    return ["explore", "features", "--config", "small", "--quiet", "--workers", "1", "--out", str(out), *extra]


def _json_run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main([*args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _shape(doc: dict[str, Any]) -> tuple[Any, ...]:
    """What a resumed run must report as a fresh one does (the JSON summary)."""
    return (doc["distinct_states"], doc["generated_states"], doc["depth"], doc["complete"],
            doc["terminal_states"], [lv["frontier"] for lv in doc["levels"]],
            [(p["id"], p["status"]) for p in doc["properties"] if p["kind"] != "graph"],
            sorted((v["property"], v["length"]) for v in doc["violations"]))


def _outcome(r: ExplorationResult) -> tuple[Any, ...]:
    return (r.distinct_states, r.generated_states, r.depth, r.complete, r.terminal_states,
            [lv.frontier for lv in r.levels], [(p.id, p.status) for p in r.properties if p.kind != "graph"],
            sorted((v.property_id, v.depth) for v in r.violations))


# -- 1. a level cut short is never checkpointed as a whole one ---------------------------------------------

@pytest.fixture(scope="module")
def fresh_small(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("fresh")
    assert main([*_explore(out), "--json"]) == 0
    return json.loads((out / NAME / "summary.json").read_text())


@pytest.mark.parametrize("budget", [50, 3000])
def test_a_resume_after_a_max_states_cut_gives_the_fresh_result(budget: int, fresh_small: dict[str, Any],
                                                                tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: --max-states 50, then --resume, reported 9,708 states "complete" (fresh: 25,073)."""
    code, bounded = _json_run([*_explore(tmp_path), "--max-states", str(budget)], capsys)
    assert code == 0 and not bounded["complete"]
    code, resumed = _json_run([*_explore(tmp_path), "--resume"], capsys)
    assert code == 0 and any("resumed from level" in n for n in resumed["notes"])
    assert _shape(resumed) == _shape(fresh_small)
    assert resumed["distinct_states"] == 25073
    assert any("cut by the state budget" in n for n in bounded["notes"])  # and the bounded run said so


def test_a_resume_after_a_violation_stop_explores_the_cut_level_in_full(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A run that stopped at its first violation kept the level it stopped in as if whole; resumed with
    --collect-all it went on from that partial level."""
    base = ["explore", "zk_migration", "--config", "small", "--variant", "MIG-M6", "--quiet", "--workers", "1"]
    code, fresh = _json_run([*base, "--collect-all", "--out", str(tmp_path / "fresh")], capsys)
    assert code == 1
    code, stopped = _json_run([*base, "--out", str(tmp_path / "o")], capsys)
    assert code == 1 and stopped["violations"]
    code, resumed = _json_run([*base, "--collect-all", "--resume", "--out", str(tmp_path / "o")], capsys)
    assert code == 1
    assert _shape(resumed) == _shape(fresh)
    # resumed as it ran (stopping at the first): the first run's result again
    assert main([*base, "--out", str(tmp_path / "o2")]) == 1
    code, again = _json_run([*base, "--resume", "--out", str(tmp_path / "o2")], capsys)
    assert code == 1 and _shape(again) == _shape(stopped)


@pytest.mark.parametrize("budget", [5, 20, 40])
def test_the_library_resume_after_a_cut_is_the_fresh_run_for_every_budget(budget: int, tmp_path: Path) -> None:
    ts = ToySystem(ToyConfig(bound=4))
    fresh = explore(ts, ExploreOptions(stop_at_first=False))
    cut = explore(ts, ExploreOptions(stop_at_first=False, max_states=budget, checkpoint_dir=tmp_path))
    assert not cut.complete
    resumed = explore(ts, ExploreOptions(stop_at_first=False, checkpoint_dir=tmp_path, resume=True, workers=2,
                                         parallel_min=1))
    assert _outcome(resumed) == _outcome(fresh)


def test_a_frontier_merged_from_several_workers_is_written_and_read_back_exactly(tmp_path: Path) -> None:
    """Chunks that find one state each keep it once (a mask over their segments): what is written is the
    level's frontier in order, which the resume checks state by state against the level's fingerprints."""
    from rollcheck.core.registry import get_protocol

    entry = get_protocol("features")
    ts = entry.build(entry.configs["small"])
    explore(ts, ExploreOptions(stop_at_first=False, max_depth=8, checkpoint_dir=tmp_path, workers=2, parallel_min=1))
    resumed = explore(ts, ExploreOptions(stop_at_first=False, checkpoint_dir=tmp_path, resume=True))
    assert resumed.distinct_states == 25073 and any("resumed from level 8" in n for n in resumed.extra["notes"])


@pytest.mark.spark
def test_the_spark_engine_resumes_a_cut_level_to_the_fresh_result(spark: Any, tmp_path: Path) -> None:
    from rollcheck.spark.explorer import SparkOptions, explore_system_spark

    ts = ToySystem(ToyConfig(bound=4))
    fresh = explore(ts, ExploreOptions(stop_at_first=False))
    cut = explore_system_spark(ts, spark, ExploreOptions(checkpoint_dir=tmp_path, stop_at_first=False, max_states=20),
                               SparkOptions(spark_min=0))
    assert not cut.complete
    resumed = explore_system_spark(ts, spark, ExploreOptions(checkpoint_dir=tmp_path, stop_at_first=False,
                                                             resume=True), SparkOptions(spark_min=0))
    assert _outcome(resumed) == _outcome(fresh)
    # a violation under stop_at_first: the level it was found in is expanded again on resume
    broken = TOY.variant("TOY-M1").build(ToyConfig(bound=4))
    explore_system_spark(broken, spark, ExploreOptions(checkpoint_dir=tmp_path / "v", stop_at_first=True),
                         SparkOptions(spark_min=0))
    again = explore_system_spark(broken, spark, ExploreOptions(checkpoint_dir=tmp_path / "v", stop_at_first=False,
                                                               resume=True), SparkOptions(spark_min=0))
    assert _outcome(again) == _outcome(explore(broken, ExploreOptions(stop_at_first=False)))


# -- 2, 3. the manifest: its digest, its levels, its totals, its file names ------------------------------

@pytest.fixture(scope="module")
def bounded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint of levels 0..5 of features:small (the run stopped by --max-depth)."""
    out = tmp_path_factory.mktemp("bounded")
    assert main([*_explore(out), "--max-depth", "5"]) == 0
    return out / f"{NAME}.checkpoint"


def _copy(src: Path, tmp_path: Path) -> tuple[Path, Path]:
    out = tmp_path / "out"
    ckpt = out / src.name
    shutil.copytree(src, ckpt)
    return out, ckpt


def _manifest(ckpt: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((ckpt / "manifest.json").read_text())
    return doc


def _write(ckpt: Path, doc: dict[str, Any], *, digest: bool = True) -> None:
    """Write an edited manifest; with ``digest`` its digest made to match, as someone who read the code would."""
    if digest:
        doc["digest"] = manifest_digest(doc)
    (ckpt / "manifest.json").write_text(json.dumps(doc))


def _refused(out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main([*_explore(out), "--resume"]) == 2
    return _one_line(capsys.readouterr().err)


def _drop_level(doc: dict[str, Any], ckpt: Path) -> None:
    e = doc["levels"].pop(2)
    for part in ("fps", "parents"):
        (ckpt / e[part]["file"]).unlink()


def _drop_the_last_level(doc: dict[str, Any], ckpt: Path) -> None:
    """Consistent as far as the manifest goes: level 5 gone from levels, totals and the level number."""
    doc["levels"].pop()
    doc["totals"]["levels"].pop()
    doc["level"] = 4
    doc["totals"]["generated"] = doc["totals"]["levels"][-1]["generated"]


TAMPERING = {
    "a level dropped": _drop_level,
    "the last level dropped": _drop_the_last_level,
    "levels reordered": lambda doc, ckpt: doc["levels"].insert(1, doc["levels"].pop(3)),
    "a level duplicated": lambda doc, ckpt: doc["levels"].insert(3, dict(doc["levels"][2])),
    "level edited": lambda doc, ckpt: doc.update(level=4),
    "distinct edited": lambda doc, ckpt: doc["totals"]["levels"][3].update(distinct=1),
    "frontier size edited": lambda doc, ckpt: doc["totals"]["levels"][2].update(frontier=1),
    "transitions edited": lambda doc, ckpt: doc["totals"].update(generated=1),
    "a violation out of range": lambda doc, ckpt: doc["totals"]["found"].append(
        {"property_id": "FEAT-01", "kind": "invariant", "description": "", "level": 2, "pos": 10**6, "k": None}),
    "not an object": lambda doc, ckpt: doc.update(levels={"0": doc["levels"][0]}),
}


@pytest.mark.parametrize("case", list(TAMPERING))
def test_a_tampered_manifest_is_refused_in_one_line(case: str, bounded: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out, ckpt = _copy(bounded, tmp_path)
    doc = _manifest(ckpt)
    TAMPERING[case](doc, ckpt)
    _write(ckpt, doc)
    line = _refused(out, capsys)
    assert str(ckpt) in line and "delete" in line, line


def test_a_manifest_edited_without_its_digest_is_refused(bounded: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out, ckpt = _copy(bounded, tmp_path)
    doc = _manifest(ckpt)
    doc["totals"]["elapsed"] = 0.5  # nothing else could tell
    _write(ckpt, doc, digest=False)
    line = _refused(out, capsys)
    assert "does not match its own digest" in line and str(ckpt) in line and "drop --resume" in line


@pytest.mark.parametrize("where", ["level", "frontier"])
@pytest.mark.parametrize("name", ["../outside.npy", "ABSOLUTE", "sub/level-00003.fps.npy", "level-00004.fps.npy"])
def test_a_file_name_outside_the_checkpoint_is_refused(where: str, name: str, bounded: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The file named is a faithful copy with the right SHA-256, so only the name can refuse it."""
    out, ckpt = _copy(bounded, tmp_path)
    doc = _manifest(ckpt)
    meta = doc["levels"][3]["fps"] if where == "level" else doc["frontier"]["data"]
    original = ckpt / meta["file"]
    target = {"../outside.npy": ckpt.parent / "outside.npy", "ABSOLUTE": tmp_path / "abs.npy",
              "sub/level-00003.fps.npy": ckpt / "sub" / "level-00003.fps.npy"}.get(name, ckpt / name)
    if name != "level-00004.fps.npy":
        target.parent.mkdir(exist_ok=True)
        shutil.copyfile(original, target)
        original.unlink()
    meta["file"] = str(target) if name == "ABSOLUTE" else name
    if name == "level-00004.fps.npy":  # a real file of the checkpoint, but another level's
        meta["sha256"] = doc["levels"][4]["fps"]["sha256"]
    _write(ckpt, doc)
    line = _refused(out, capsys)
    assert "names the file" in line and "delete" in line, line


# -- 4. nothing read from disk is unpickled ----------------------------------------------------------------

class _Plant:
    """Unpickling this runs code: it creates the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.marker), "w"))


def test_a_pickled_frontier_is_never_unpickled(bounded: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out, ckpt = _copy(bounded, tmp_path)
    marker = tmp_path / "ran"
    blob = pickle.dumps([_Plant(marker)])
    doc = _manifest(ckpt)
    fr = doc["frontier"]
    (ckpt / fr["data"]["file"]).write_bytes(blob)
    fr["data"]["sha256"] = _sha(blob)
    ends = np.full(fr["states"] + 1, len(blob), dtype=np.int64)
    ends[0] = 0  # the whole pickle is state 0
    np.save(ckpt / fr["index"]["file"], ends)
    fr["index"]["sha256"] = _sha((ckpt / fr["index"]["file"]).read_bytes())
    _write(ckpt, doc)
    line = _refused(out, capsys)
    assert not marker.exists()
    assert "state 0 of frontier-00005.bin" in line and "delete" in line, line


@pytest.mark.parametrize("which", ["level", "index"])
def test_an_object_array_is_never_unpickled(which: str, bounded: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out, ckpt = _copy(bounded, tmp_path)
    marker = tmp_path / "ran"
    doc = _manifest(ckpt)
    meta = doc["levels"][2]["fps"] if which == "level" else doc["frontier"]["index"]
    path = ckpt / meta["file"]
    np.save(path, np.asarray([_Plant(marker)] * meta["rows"], dtype=object), allow_pickle=True)
    meta["sha256"] = _sha(path.read_bytes())
    _write(ckpt, doc)
    line = _refused(out, capsys)
    assert not marker.exists() and "damaged" in line, line


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class _Odd:
    n: int
    tags: frozenset[str]


class _Uncodable(DataclassSystem):
    """A state type the codec cannot encode from level ``bad_at`` on (a tag that is not a str)."""

    name = "uncodable"
    state_type = _Odd
    bad_at = 2

    def initial_states(self) -> Iterable[_Odd]:
        return [_Odd(0, frozenset() if self.bad_at else frozenset({1}))]  # type: ignore[arg-type]

    def successors(self, s: _Odd) -> Iterable[tuple[Action, _Odd]]:
        if s.n >= 4:
            return []
        tag: Any = s.n + 1 if s.n + 1 >= self.bad_at else f"t{s.n}"
        return [(Action.of("Up"), _Odd(s.n + 1, s.tags | {tag}))]

    def properties(self) -> Sequence[AnyProperty]:
        return [Invariant("U-01", "anything", "test", lambda s: True)]


@pytest.mark.parametrize("bad_at", [0, 2])
@pytest.mark.parametrize("workers", [1, 2])
def test_states_the_codec_cannot_write_are_one_line_never_a_pickle(bad_at: int, workers: int, tmp_path: Path) -> None:
    ts = _Uncodable(None)
    ts.bad_at = bad_at
    with pytest.raises(UserError, match=r"protocol 'uncodable': .*cannot be written to .*checkpoint") as err:
        explore(ts, ExploreOptions(checkpoint_dir=tmp_path, workers=workers, parallel_min=1))
    assert "\n" not in str(err.value)
    assert explore(ts).complete  # without a checkpoint nothing needs encoding


def test_nth_takes_the_successor_that_shows_the_property_failing() -> None:
    """Successor k as the exploration numbered it may be another one in the replay's order (a state decoded
    from a checkpoint builds its frozensets otherwise): the replay takes the successor that shows it."""
    ts = ToySystem(ToyConfig(bound=3, broken=True))
    s = ToyState(0, 1, frozenset())  # IncA gives (1, 1): both odd; IncB and Reset do not
    inv = next(p for p in ts.properties() if p.id == "TOY-01")
    succ = list(ts.successors(s))
    k_ok = next(i for i, (_, t) in enumerate(succ) if inv.predicate(t))
    _, t = successor(ts, s, k_ok, lambda s, a, t: not inv.predicate(t))
    assert not inv.predicate(t)
    assert successor(ts, s, k_ok)[1] == succ[k_ok][1]  # nothing to show: successor k as recorded


def test_a_resumed_violation_replays_to_a_real_counterexample(tmp_path: Path) -> None:
    broken = TOY.variant("TOY-M1").build(ToyConfig(bound=4))
    # The violation is at depth 2.
    explore(broken, ExploreOptions(stop_at_first=False, max_depth=1, checkpoint_dir=tmp_path))
    r = explore(broken, ExploreOptions(stop_at_first=False, checkpoint_dir=tmp_path, resume=True))
    (v,) = r.violations
    states = v.trace.states
    assert states[0] in set(broken.initial_states())
    for before, step in zip(states, v.trace.steps[1:], strict=False):
        assert (step.action, step.state) in set(broken.successors(before))
    assert states[-1].a % 2 and states[-1].b % 2


# -- 5, 6. planted links and a file where the checkpoint directory goes ------------------------------------

PLANTED = ["level-00000.fps.npy", "level-00003.parents.npy", "frontier-00000.bin", "frontier-00002.index.npy",
           "manifest.tmp", "manifest.json"]


@pytest.mark.parametrize("dangling", [False, True], ids=["to a file", "dangling"])
@pytest.mark.parametrize("name", PLANTED)
def test_a_link_planted_in_the_checkpoint_is_refused_before_a_fresh_run(name: str, dangling: bool, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    ckpt = tmp_path / "out" / f"{NAME}.checkpoint"
    ckpt.mkdir(parents=True)
    target = tmp_path / "precious"
    if not dangling:
        target.write_text("precious")
    (ckpt / name).symlink_to(target)
    capsys.readouterr()
    assert main(_explore(tmp_path / "out")) == 2
    line = _one_line(capsys.readouterr().err)
    assert "symbolic link" in line and str(ckpt / name) in line, line
    assert (target.read_text() == "precious") if not dangling else not target.exists()
    assert (ckpt / name).is_symlink()


@pytest.mark.parametrize("name", ["level-00000.fps.npy", "level-00003.parents.npy", "frontier-00005.bin",
                                  "frontier-00005.index.npy", "manifest.tmp", "manifest.json"])
def test_a_link_planted_in_the_checkpoint_is_refused_before_a_resume(name: str, bounded: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The link points at a faithful copy of the file it replaces, so only refusing links keeps it out."""
    out, ckpt = _copy(bounded, tmp_path)
    target = tmp_path / "elsewhere"
    if (ckpt / name).exists():
        shutil.move(ckpt / name, target)
    else:
        target.write_text("precious")
    before = target.read_bytes()
    (ckpt / name).symlink_to(target)
    line = _refused(out, capsys)
    assert "symbolic link" in line and str(ckpt / name) in line, line
    assert target.read_bytes() == before


@pytest.mark.parametrize("resume", [False, True], ids=["fresh", "resume"])
def test_a_checkpoint_directory_planted_as_a_link_is_refused(resume: bool, bounded: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Its target holds a valid checkpoint and a file named as one of the checkpoint's: neither is read,
    removed or written."""
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(bounded, elsewhere)
    before = {f.name: f.read_bytes() for f in elsewhere.iterdir()}
    out = tmp_path / "out"
    out.mkdir()
    (out / f"{NAME}.checkpoint").symlink_to(elsewhere, target_is_directory=True)
    capsys.readouterr()
    assert main(_explore(out, *(["--resume"] if resume else []))) == 2
    line = _one_line(capsys.readouterr().err)
    assert "symbolic link" in line and f"{NAME}.checkpoint" in line, line
    assert {f.name: f.read_bytes() for f in elsewhere.iterdir()} == before


@pytest.mark.parametrize("resume", [False, True], ids=["fresh", "resume"])
def test_a_checkpoint_path_that_is_a_file_is_one_line(resume: bool, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / f"{NAME}.checkpoint").write_text("mine")
    capsys.readouterr()
    assert main(_explore(out, *(["--resume"] if resume else []))) == 2
    line = _one_line(capsys.readouterr().err)
    assert "exists and is not a directory" in line and f"{NAME}.checkpoint" in line, line
    assert (out / f"{NAME}.checkpoint").read_text() == "mine"


def test_a_manifest_that_is_a_directory_is_one_line(bounded: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out, ckpt = _copy(bounded, tmp_path)
    (ckpt / "manifest.json").unlink()
    (ckpt / "manifest.json").mkdir()
    assert "manifest.json is not a regular file" in _refused(out, capsys)


@pytest.mark.parametrize("name", ["level-00006.fps.npy", "frontier-00006.bin", "manifest.tmp"])
def test_a_hard_link_planted_where_a_resume_writes_is_never_written_through(name: str, bounded: Path,
                                                                            tmp_path: Path) -> None:
    out, ckpt = _copy(bounded, tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (ckpt / name).hardlink_to(victim)
    assert main([*_explore(out), "--resume", "--max-depth", "7"]) == 0
    assert victim.read_text() == "precious"
    assert _manifest(ckpt)["level"] == 7


@pytest.mark.parametrize("resume", [False, True], ids=["fresh", "resume"])
def test_a_link_between_the_out_directory_and_the_checkpoint_is_refused(resume: bool, tmp_path: Path) -> None:
    """The gate's Spark cells checkpoint two levels below --out (``spark/NAME``): a link planted at the
    level between is refused too, and nothing is made in its target."""
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    if resume:
        explore(ToySystem(ToyConfig(bound=2)), ExploreOptions(checkpoint_dir=elsewhere / "x", max_depth=2))
    (out / "spark").symlink_to(elsewhere, target_is_directory=True)
    before = sorted(p.name for p in elsewhere.rglob("*"))
    with pytest.raises(UserError, match=r"symbolic link: .*out/spark \("):
        explore(ToySystem(ToyConfig(bound=2)), ExploreOptions(checkpoint_dir=out / "spark" / "x", checkpoint_root=out,
                                                              resume=resume))
    assert sorted(p.name for p in elsewhere.rglob("*")) == before
