"""The engine of the cluster runs (rollcheck/cluster/runbook.py) on the engine's toy protocol and a scripted
"cluster": the steps performed in order with an observation after each, the observed trace validated against the
runbook's system, a wrong observation reported at its step, a refusal the model shares taken as a stall and one it
never makes flagged, and a run that fails midway keeping what it observed."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from rollcheck.cluster.cluster import Cluster
from rollcheck.cluster.runbook import ClusterPlan, Fault, run_on_cluster
from rollcheck.core.errors import UserError
from rollcheck.runbook import RunbookState, RunbookStep, RunbookSystem
from tests.toy import ToyConfig, ToySystem

STEPS = (RunbookStep("inc-a", "raise a", action="IncA"), RunbookStep("inc-b", "raise b", action="IncB"),
         RunbookStep("inc-a-again", "raise a again", action="IncA"))


class Book:
    id = "TOY-RB"
    protocol = "toy"
    path = "toy.toml"
    steps = STEPS


def _model() -> RunbookSystem:
    return RunbookSystem(ToySystem(ToyConfig(bound=4)), "TOY-RB", STEPS, [None] * len(STEPS), lambda s: True,
                         "anything", ("IncA", "IncB"))


def _project(rs: RunbookState) -> dict[str, object]:
    return {"runbook_done": rs.done, "a": rs.state.a, "b": rs.state.b}


class ScriptedRun:
    """A cluster that does what the script says: per step, (a, b) after it, or "refuse", or "fail"."""

    def __init__(self, script: dict[str, Any]) -> None:
        self.script, self.a, self.b, self.done = script, 0, 0, 0

    def observe(self) -> dict[str, Any]:
        return {"runbook_done": self.done, "a": self.a, "b": self.b}

    def perform(self, step: RunbookStep) -> tuple[str, bool]:
        what = self.script.get(step.id)
        if what == "refuse":
            return "refused", False
        if what == "fail":
            raise UserError(f"node x did not come up at {step.id} (log x.log)")
        if what is not None:
            self.a, self.b = what
        elif step.action == "IncA":
            self.a += 1
        else:
            self.b += 1
        self.done += 1
        return f"{step.action} done", True

    def node_of(self, step: RunbookStep) -> str | None:
        return "node:0"

    def strike(self, kind: str, node: str, phase: int) -> str:
        return f"{kind} {node} phase {phase}"

    def close(self) -> None:
        pass


class Binding:
    protocol = "toy"
    default_releases = ("1.0",)

    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script

    def plan(self, book: Any, releases: Sequence[str] | None, faults: Sequence[Fault]) -> ClusterPlan:
        return ClusterPlan(("1.0",), _model(), _project, 1)

    def start(self, cluster: Cluster, book: Any, plan: ClusterPlan, say: Callable[[str], None]) -> ScriptedRun:
        return ScriptedRun(self.script)


def _run(tmp_path: Path, script: dict[str, Any], faults: Sequence[Fault] = ()) -> Any:
    b = Binding(script)
    return run_on_cluster(b, Book(), b.plan(Book(), None, faults), faults, tmp_path / "run", lambda _t: None)


def test_a_run_that_does_what_the_model_allows_is_valid_and_written(tmp_path: Path) -> None:
    # inc-a: a=1; b cannot rise while a is odd, so the cluster resets first (an internal transition): a=0, b=1;
    # then a cannot rise while b is odd: reset again, a=1.
    run = _run(tmp_path, {"inc-b": (0, 1), "inc-a-again": (1, 0)}, [Fault("inc-a", "kill")])
    assert run.valid and [o.label for o in run.observed] == ["start", "inc-a", "inc-a+kill", "inc-a+kill/after",
                                                             "inc-b", "inc-a-again"]
    assert [str(a) for a, _ in run.validation.run] == ["None", "IncA()", "Reset()", "IncB()", "Reset()", "IncA()"]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["valid"] and summary["faults"] == ["inc-a:kill"]
    itf = json.loads((tmp_path / "run" / "observed.itf.json").read_text())
    assert itf["vars"] == ["a", "b", "runbook_done"] and itf["states"][1]["a"] == {"#bigint": "1"}


def test_an_observation_the_model_cannot_meet_is_reported_at_its_step(tmp_path: Path) -> None:
    run = _run(tmp_path, {"inc-a": (3, 0)})
    assert not run.valid and run.observed[run.validation.failed_step].label == "inc-a"
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["validation"]["failed_step"] == "inc-a"


def test_a_refusal_is_a_stall_only_where_the_model_can_refuse_too(tmp_path: Path) -> None:
    # After inc-a (a=1, b=0) the model cannot raise b either: a shared refusal, a valid stall.
    shared = _run(tmp_path / "1", {"inc-b": "refuse"})
    assert shared.valid and shared.stalled is not None and not shared.model_accepts
    assert [o.label for o in shared.observed] == ["start", "inc-a", "inc-b"]
    # At the start the model always raises a: a cluster that refuses it disagrees with the model.
    alone = _run(tmp_path / "2", {"inc-a": "refuse"})
    assert alone.model_accepts and not alone.valid


def test_a_run_that_fails_midway_keeps_what_it_observed(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="did not come up at inc-b"):
        _run(tmp_path, {"inc-b": "fail"})
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert [s["label"] for s in summary["steps"]] == ["start", "inc-a"]
    assert summary["ended"].startswith("UserError: node x did not come up")
