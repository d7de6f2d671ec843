"""The ``streams_probing`` runbooks on real Kafka Streams instances (reference_impl/streams_probing/cluster.py): bad
input refused in one line before anything starts; the observations of real runs (recorded in tests/data/cluster/)
validate against the model, tampered ones do not; KAFKA-8649 as Kafka 2.1.1 showed it on a real group is met by no
state of the fixed model, while the model with the bug planted meets it further and is forced to break STR-05 and
STR-06 on it, and the fixed release's run refutes the planted bug; the instances' events read as the binding
documents them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from reference_impl.streams_probing.cluster import BINDING, TASKS, events, failure_kind
from rollcheck.cluster.node import Node
from rollcheck.cluster.runbook import ClusterPlan, parse_fault
from rollcheck.explore.validate import Validation, validate
from rollcheck.runbook import Runbook, build_runbook_system, load_runbook
from tests.cluster_cli import runbook_error as _error

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data" / "cluster"
SINGLE = ROOT / "runbooks" / "streams_probing" / "single-bounce.toml"
LEADER_LAST = ROOT / "runbooks" / "streams_probing" / "single-bounce-leader-last.toml"
VALID = ["STR-RB1-1.1.1-2.0.1.json", "STR-RB2-2.0.1-2.3.1.json", "STR-RB4-2.0.1-2.3.1-kill.json"]
BUGGY = "STR-RB4-2.0.1-2.1.1-kill.json"


def test_bad_input_is_one_line_before_anything_starts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    single = str(SINGLE)
    assert "run Kafka 2.0.x, not 1.1.1" in _error(capsys, single, "--cluster", "--release", "1.1.1:2.3.1")
    assert "run Kafka 2.1.x or 2.2.x or 2.3.x, not 2.4.1" in _error(capsys, single, "--cluster", "--release",
                                                                    "2.0.1:2.4.1")
    assert "'2.3' is not a Kafka release name" in _error(capsys, single, "--cluster", "--release", "2.0.1:2.3")
    assert "give OLD:NEW" in _error(capsys, single, "--cluster", "--release", "2.0.1")
    assert "injects kill only" in _error(capsys, single, "--cluster", "--fault", "bounce-0:pause")
    assert "no node 'instance:3'" in _error(capsys, single, "--cluster", "--fault", "bounce-0:kill:instance:3")
    three = ["--fault", "bounce-0:kill", "--fault", "bounce-1:kill", "--fault", "bounce-2:kill"]
    assert "allows 2 crash(es)" in _error(capsys, single, "--cluster", *three)
    auto = tmp_path / "auto.toml"
    auto.write_text(SINGLE.read_text().replace('procedure = "operator"', 'procedure = "auto"'))
    assert "procedure 'operator'" in _error(capsys, str(auto), "--cluster")
    latest = tmp_path / "latest.toml"
    latest.write_text(SINGLE.read_text().replace('base = "default"', 'base = "from-0.10.0"'))
    assert "knows the Kafka Streams releases" in _error(capsys, str(latest), "--cluster")


def _recorded(name: str) -> tuple[Runbook, ClusterPlan, list[dict[str, Any]], dict[str, Any]]:
    doc = json.loads((DATA / name).read_text())
    book = load_runbook(ROOT / doc["runbook"])
    plan = BINDING.plan(book, doc["releases"], [parse_fault(f, [s.id for s in book.steps]) for f in doc["faults"]])
    observed = [{k: v for k, v in s["observed"].items() if k not in plan.unmodelled} for s in doc["steps"]]
    return book, plan, observed, doc


def _check(plan: ClusterPlan, observed: list[dict[str, Any]], model: Any = None) -> Validation:
    return validate(plan.model if model is None else model, observed, internal=plan.internal, stutter=True,
                    view=plan.project)


def _planted(book: Runbook, *mutations: str) -> Any:
    config = dataclasses.replace(book.config, mutations=frozenset(mutations))
    return build_runbook_system(dataclasses.replace(book, config=config), "kafka-2.0")


@pytest.mark.parametrize("name", VALID, ids=lambda n: n.removesuffix(".json"))
def test_real_streams_runs_validate_and_tampered_ones_do_not(name: str) -> None:
    """Two rolling bounces from 1.1.1 with upgrade.from (STR-RB1), one bounce from 2.0.1 to 2.3.1 with version
    probing (STR-RB2), and STR-RB4 with its leader killed, as real runs observed them: each validates; the same run
    with one instance's version after the last bounce changed, or its leader swapped, does not."""
    _, plan, observed, doc = _recorded(name)
    ok = _check(plan, observed)
    assert ok.valid and ok.met == len(observed), ok
    assert all(len(s["observed"][TASKS]) == len(s["observed"]["instances"]) for s in doc["steps"])
    last = observed[-1]
    wrong_version = {**last, "instances": [{**last["instances"][0], "used_version": 2}, *last["instances"][1:]]}
    bad = _check(plan, [*observed[:-1], wrong_version])
    assert not bad.valid and bad.failed_step == len(observed) - 1
    assert any("used_version" in d for c in bad.closest for d in c.differences)
    alive = [i for i, x in enumerate(last["instances"]) if x["running"]]
    stranger = {**last, "leader": len(last["instances"])}
    assert alive and not _check(plan, [*observed[:-1], stranger]).valid


def test_kafka_8649_on_a_real_2_1_1_group_is_refound() -> None:
    """STR-RB4 on 2.0.1:2.1.1: once the 2.1.1 instance leads, the 2.0.1 member is told the group supports version 4,
    adopts it (its assignor's used version, read from the running JVM) and dies building its next subscription.
    The fixed model meets no state there (the member keeps version 3); the model with KAFKA-8649 planted (STR-M4,
    the member adopts uncapped) meets that observation too, and its run is forced to break STR-05 and STR-06."""
    book, plan, observed, _ = _recorded(BUGGY)
    fixed = _check(plan, observed)
    assert not fixed.valid and fixed.failed_step is not None
    seen = observed[fixed.failed_step]["instances"][0]
    assert (seen["release"], seen["used_version"], seen["failure"]) == ("2.0", 4, "subscription")
    assert any("instances[0].used_version: observed 4, model 3" in d for c in fixed.closest for d in c.differences)
    planted = _check(plan, observed, _planted(book, "uncapped_adopt"))
    assert planted.met > fixed.met
    assert {v.property_id for v in planted.violations} >= {"STR-05", "STR-06"}


def test_the_fixed_release_refutes_the_planted_bug() -> None:
    """The same runbook on 2.0.1:2.3.1 (KAFKA-8649 fixed) is met by the model and by no model with the bug planted
    on the member's side."""
    book, plan, observed, _ = _recorded("STR-RB4-2.0.1-2.3.1-kill.json")
    assert _check(plan, observed).valid
    assert not _check(plan, observed, _planted(book, "uncapped_adopt")).valid


def _node(tmp_path: Path, lines: list[str], start: int = 0) -> Node:
    log = tmp_path / "node.log"
    log.write_text("\n".join(lines) + "\n")
    return Node("streams-0", ["java"], tmp_path, log_start=start)


def test_events_are_this_process_s_own_and_a_cut_line_is_skipped(tmp_path: Path) -> None:
    earlier = 'ROLLCHECK-EVENT {"event":"failed","ms":1}'
    mine = ['[2026-12-04] INFO something', 'ROLLCHECK-EVENT {"event":"starting","ms":2}',
            'ROLLCHECK-EVENT {"event":"subscr']
    node = _node(tmp_path, [earlier, *mine], start=len(earlier) + 1)
    assert events(node) == [{"event": "starting", "ms": 2}]


@pytest.mark.parametrize(("evs", "kind"), [
    ([], ""),
    ([{"event": "assignment", "error": 0}], ""),
    ([{"event": "subscription", "exception": "IllegalArgumentException"}, {"event": "failed"}], "subscription"),
    ([{"event": "assign", "exception": "TaskAssignmentException"}, {"event": "failed"}], "leader"),
    ([{"event": "assignment", "exception": "IllegalStateException"}, {"event": "failed"}], "member"),
    ([{"event": "assignment", "error": 1}, {"event": "failed"}], "shutdown"),
    ([{"event": "failed"}], "unknown"),
], ids=["none", "alive", "subscription", "leader", "member", "shutdown", "unknown"])
def test_a_failure_s_kind_is_the_model_s(evs: list[dict[str, Any]], kind: str) -> None:
    assert failure_kind(evs) == kind


def test_the_tasks_are_recorded_and_not_matched() -> None:
    """A member's tasks are in every observation of the recorded runs but in no model view: the plan leaves them
    out of the matching (``unmodelled``) and the validation of the full observations would refuse them."""
    _, plan, observed, doc = _recorded(VALID[1])
    assert plan.unmodelled == (TASKS,)
    full = [s["observed"] for s in doc["steps"]]
    assert not _check(plan, full).valid
    assert _check(plan, observed).valid


def test_a_group_whose_every_instance_failed_is_settled(tmp_path: Path) -> None:
    """Both instances dead of a failure (their last events an exception and the thread's death): nothing is coming,
    so the group is observed at once, not waited for until the settle bound."""
    from reference_impl.streams_probing.cluster import _Instance, _Run

    run = _Run(Any, {}, {}, "", 2, lambda _t: None)
    for i in range(2):
        folder = tmp_path / f"streams-{i}"
        folder.mkdir()
        (folder / "node.log").write_text(
            'ROLLCHECK-EVENT {"event":"assign","ms":1,"members":{"a":{},"b":{}},"assignments":{}}\n'
            'ROLLCHECK-EVENT {"event":"assignment","ms":2,"version":3,"supported":4,"error":0,"used":4}\n'
            'ROLLCHECK-EVENT {"event":"subscription","ms":3,"used":4,"exception":"IllegalArgumentException"}\n'
            'ROLLCHECK-EVENT {"event":"failed","ms":3}\n')
        run.instances.append(_Instance(Node(f"streams-{i}", ["java"], folder), "2.0", None))
    view, why = run._look()
    assert why == "" and not view["stable"]
    assert [x["failure"] for x in view["instances"]] == ["subscription", "subscription"]
    assert [x["used_version"] for x in view["instances"]] == [4, 4]
