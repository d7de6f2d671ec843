"""Runbooks on a real local cluster (``rollcheck runbook FILE --cluster``, rollcheck/cluster/runbook.py and the
metadata_version binding reference_impl/metadata_version/cluster.py): bad input refused in one line before anything
starts; a real run's recorded observations validate against the model, and the same observations tampered with, or
checked against a broken reference, do not; on Java, the shortest scenario runs on real Kafka 3.7.2 and 3.9.2
processes, its observed trace valid, its ITF written, and no node left running."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from reference_impl.metadata_version.cluster import BINDING
from rollcheck.cli import main
from rollcheck.cluster.runbook import Fault, parse_fault
from rollcheck.core.errors import UserError
from rollcheck.explore.validate import validate
from rollcheck.oracle.tools import java_problem
from rollcheck.runbook import load_runbook
from tests.cluster_cli import runbook_error as _error

ROOT = Path(__file__).resolve().parents[1]
UPGRADE = ROOT / "runbooks" / "metadata_version" / "kraft-upgrade.toml"
SAFE_DOWN = ROOT / "runbooks" / "metadata_version" / "kraft-upgrade-then-safe-downgrade.toml"
RECORDED = Path(__file__).parent / "data" / "cluster" / "MV-RB3-3.7.2-3.9.2-kill.json"
needs_java = pytest.mark.skipif(java_problem() is not None, reason=str(java_problem()))


def test_bad_input_is_one_line_before_anything_starts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    up = str(UPGRADE)
    assert "know Kafka 3.7.2, 3.8.1" in _error(capsys, up, "--cluster", "--release", "9.9.9:3.9.2")
    assert "3.7 or later" in _error(capsys, up, "--cluster", "--release", "3.5.2:3.9.2")
    assert "write RELEASE or OLD:NEW" in _error(capsys, up, "--cluster", "--release", "3.7.2:3.9.2:4.0.2")
    assert "give OLD:NEW" in _error(capsys, up, "--cluster", "--release", "3.9.2")
    assert "latest production level is 20 (3.8-IV0)" in _error(capsys, up, "--cluster", "--release", "3.8.1:3.9.2")
    assert "has no step 'nope'" in _error(capsys, up, "--cluster", "--fault", "nope:kill")
    assert "unknown kind 'crash'" in _error(capsys, up, "--cluster", "--fault", "roll-c1:crash")
    assert "write STEP:KIND" in _error(capsys, up, "--cluster", "--fault", "roll-c1")
    assert "no node 'voter:7'" in _error(capsys, up, "--cluster", "--fault", "roll-c1:kill:voter:7")
    assert "--fault needs --cluster" in _error(capsys, up, "--fault", "roll-c1:kill")
    assert "--release needs --cluster" in _error(capsys, up, "--release", "3.7.2:3.9.2")
    assert "it takes no --deviations" in _error(capsys, up, "--cluster", "--deviations")
    assert "give one runbook file" in _error(capsys, str(UPGRADE.parent), "--cluster")
    from rollcheck.cluster.runbook import binding_for
    from tests.toy import PROTOCOL as TOY

    with pytest.raises(UserError, match=r"protocol toy has no cluster binding.*runs the runbooks of: features, "):
        binding_for(TOY)
    no_crashes = tmp_path / "no-crashes.toml"
    no_crashes.write_text(UPGRADE.read_text().replace('base = "crashes"', 'base = "small"'))
    assert "has no crashes" in _error(capsys, str(no_crashes), "--cluster", "--fault", "roll-c1:kill")


def test_faults_parse_with_the_step_node_or_a_named_one() -> None:
    steps = ["roll-c0", "roll-c1"]
    assert parse_fault("roll-c1:kill", steps) == Fault("roll-c1", "kill")
    assert parse_fault("start:pause:broker:0", steps) == Fault("start", "pause", "broker:0")
    assert str(parse_fault("roll-c0:kill:voter:2", steps)) == "roll-c0:kill:voter:2"
    with pytest.raises(UserError, match="unknown kind"):
        parse_fault("roll-c0:explode", steps)


def _recorded() -> tuple[Any, list[dict[str, Any]]]:
    doc = json.loads(RECORDED.read_text())
    book = load_runbook(ROOT / doc["runbook"])
    plan = BINDING.plan(book, doc["releases"], [parse_fault(f, [s.id for s in book.steps]) for f in doc["faults"]])
    return plan, [{k: v for k, v in s["observed"].items() if k not in plan.unmodelled} for s in doc["steps"]]


def test_a_real_runs_observations_validate_and_tampered_ones_do_not() -> None:
    plan, observed = _recorded()
    ok = validate(plan.model, observed, internal=plan.internal, stutter=True, view=plan.project)
    assert ok.valid and ok.met == len(observed)
    actions = [str(a) for a, _ in ok.run if a is not None]
    assert "CrashNode(role='voter', node=1)" in actions and "RecoverNode(role='voter', node=1)" in actions
    assert actions[-1] == "UpdateFeatures(level=20, downgrade='SAFE', dry_run=False)"
    # The upgrade seen to land on another level: nothing in the model meets it, and the closest state says where.
    at = next(i for i, o in enumerate(observed) if o["level"] == 21)
    wrong = [dict(o) for o in observed]
    wrong[at] = {**wrong[at], "level": 20}
    bad = validate(plan.model, wrong, internal=plan.internal, stutter=True, view=plan.project)
    assert bad.failed_step == at and any("level: observed 20, model 21" in d for c in bad.closest
                                         for d in c.differences)
    # A controller seen still on the old release after its restart.
    old = [json.loads(json.dumps(o)) for o in observed]
    old[1]["voters"][0]["software"] = "old"
    assert validate(plan.model, old, internal=plan.internal, stutter=True, view=plan.project).failed_step == 1
    # The broker seen unfenced on the new release while the controller's log still holds its old registration: the
    # model unfences a broker only once the registration it holds is the broker's own binary's.
    rolled = next(i for i, o in enumerate(observed) if o["brokers"][0]["software"] == "new")
    assert observed[rolled]["brokers"][0] == {"software": "new", "status": "RUNNING", "registration": "new",
                                              "fenced": False}
    stale = [json.loads(json.dumps(o)) for o in observed]
    stale[rolled]["brokers"][0]["registration"] = "old"
    assert validate(plan.model, stale, internal=plan.internal, stutter=True,
                    view=plan.project).failed_step == rolled
    # The same registration with the broker still fenced is a state the model has on the way.
    stale[rolled]["brokers"][0]["fenced"] = True
    assert validate(plan.model, stale[:rolled + 1], internal=plan.internal, stutter=True, view=plan.project).valid


def test_a_broken_reference_does_not_meet_what_the_cluster_did() -> None:
    # Kafka accepted the upgrade; a reference whose controllers see their peers advertise nothing refuses it.
    plan, observed = _recorded()
    from rollcheck.runbook import build_runbook_system

    doc = json.loads(RECORDED.read_text())
    book = load_runbook(ROOT / doc["runbook"])
    detail = plan.detail
    mutated = dataclasses.replace(detail.config, mutations=frozenset({"peers_advertise_no_features"}))
    mapped = dataclasses.replace(book, config=mutated, steps=plan.model.steps)
    model = build_runbook_system(mapped, "kafka")
    result = validate(model, observed, internal=plan.internal, stutter=True, view=plan.project)
    assert not result.valid and result.failed_step is not None
    assert observed[result.failed_step]["level"] != observed[result.failed_step - 1]["level"]  # the upgrade


def _processes_naming(folder: Path) -> list[int]:
    """Live processes whose command line names ``folder`` (a node of the run)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if str(folder) in (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace") and (
                    proc / "stat").read_text().split()[2] != "Z":
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@needs_java
def test_the_kraft_upgrade_runbook_on_real_kafka_3_7_and_3_9(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """CI's one cluster scenario: MV-RB1 (roll three controllers and a broker from 3.7.2 to 3.9.2, then raise
    metadata.version to 3.9-IV0) on real processes; the observed trace valid, written as ITF, no node left."""
    code = main(["runbook", str(UPGRADE), "--cluster", "--release", "3.7.2:3.9.2", "--json", "--quiet",
                 "--out", str(tmp_path / "o")])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["valid"] and doc["ok"] and doc["stalled"] is None, doc.get("validation")
    assert [s["label"] for s in doc["steps"]] == ["start", "roll-c0", "roll-c1", "roll-c2", "roll-b0", "healthy",
                                                  "upgrade"]
    assert doc["steps"][0]["observed"]["level"] == 19 and doc["steps"][-1]["observed"]["level"] == 21
    itf = json.loads(Path(doc["trace"]).read_text())
    assert itf["#meta"]["releases"] == ["3.7.2", "3.9.2"] and len(itf["states"]) == 7
    assert _processes_naming(Path(doc["folder"]) / "cluster") == []


RECORDED_MIGRATIONS = [Path(__file__).parent / "data" / "cluster" / name
                       for name in ("MIG-RB1-3.9.2.json", "MIG-RB2-3.9.2.json")]


@pytest.mark.parametrize("recorded", RECORDED_MIGRATIONS, ids=lambda p: p.stem)
def test_real_migrations_and_their_rollback_validate_and_tampered_ones_do_not(recorded: Path) -> None:
    """Kafka 3.9.2's ZooKeeper-to-KRaft migration to finalization (MIG-RB1) and its revert after the brokers moved
    to KRaft (MIG-RB2), as a real run observed them: each validates against the zk_migration model; the same run
    seen with ZooKeeper's /controller still held by the ZK broker once the copy is done does not (checked on MIG-RB1:
    on MIG-RB2's config, with its unclean shutdowns, the search for what is not there takes 45 s; its run takes 26)."""
    from reference_impl.zk_migration.cluster import BINDING as MIGRATION

    doc = json.loads(recorded.read_text())
    book = load_runbook(ROOT / doc["runbook"])
    plan = MIGRATION.plan(book, doc["releases"], [])
    observed = [s["observed"] for s in doc["steps"]]
    ok = validate(plan.model, observed, internal=plan.internal, stutter=True, view=plan.project)
    assert ok.valid and ok.met == len(observed), (ok.failed_step, ok.closest)
    actions = [str(a) for a, _ in ok.run if a is not None]
    assert "CompleteMigration(voter=" in " ".join(actions)
    if doc["runbook"].endswith("revert-after-broker-migration.toml"):
        assert actions[-2:] == ["DeleteControllerZNodes()", "ElectZkController(broker=0)"]
        # The ZK broker elected once /controller is deleted bumps /controller_epoch once more.
        assert observed[-1]["zk"] == {"controller": 0, "migrated": False, "epoch_rise": 3, "epoch_version_rise": 3}
        return
    # The broker's restart into migration mode elects it again and the KRaft controller claims: /controller_epoch
    # rose twice. A KRaft controller in /controller with the epoch where it was is met by nothing (its claim bumps
    # it), nor is a third rise.
    enabled = next(i for i, s in enumerate(doc["steps"]) if s["label"] == "enable-b0")
    assert observed[enabled]["zk"]["epoch_rise"] == 2 and observed[enabled]["zk"]["controller"] > 100
    for rise in (0, 3):
        changed = [json.loads(json.dumps(o)) for o in observed]
        for o in changed[enabled:]:
            o["zk"]["epoch_rise"] = o["zk"]["epoch_version_rise"] = rise
        assert validate(plan.model, changed, internal=plan.internal, stutter=True,
                        view=plan.project).failed_step == enabled, rise
    migrated = next(i for i, s in enumerate(doc["steps"]) if s["label"] == "migrated")
    wrong = [json.loads(json.dumps(o)) for o in observed]
    wrong[migrated]["zk"]["controller"] = 0
    bad = validate(plan.model, wrong, internal=plan.internal, stutter=True, view=plan.project)
    assert bad.failed_step == migrated


def test_migration_runs_refuse_what_they_cannot_do(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    migrate = ROOT / "runbooks" / "zk_migration" / "migrate.toml"
    assert "know one release of Kafka 3.9.2" in _error(capsys, str(migrate), "--cluster", "--release", "3.7.2")
    assert "no node 'broker:3'" in _error(capsys, str(migrate), "--cluster", "--fault", "enable-b0:kill:broker:3")
    odd = tmp_path / "incompatible.toml"
    odd.write_text(migrate.read_text().replace('action = "EnableMigrationOnBroker"',
                                               'action = "IncompatibleBrokerJoins"', 1)
                   .replace('base = "faults"', 'base = "faults"\nincompatible_broker = true'))
    assert "cannot perform IncompatibleBrokerJoins" in _error(capsys, str(odd), "--cluster")


def test_the_gate_cell_of_a_protocol_without_a_binding_says_so(tmp_path: Path) -> None:
    from rollcheck.checkers.base import Cell
    from rollcheck.checkers.cluster import check_cluster
    from rollcheck.checkers.report import CheckContext, Status
    from rollcheck.core.registry import get_protocol
    from tests.toy import PROTOCOL as TOY

    cell = Cell(TOY, "small", TOY.config("small"), "cluster")
    report = check_cluster(cell, CheckContext(tmp_path))
    assert report.status == Status.SKIPPED and "has no cluster binding" in report.message
    for protocol in ("features", "metadata_version", "streams_probing", "zk_migration"):
        binding = get_protocol(protocol).cluster_binding()
        for runbook, releases, faults in binding.scenarios:  # each scenario plans (its runbook, releases, faults)
            book = load_runbook(ROOT / runbook)
            plan = binding.plan(book, releases, [parse_fault(f, [s.id for s in book.steps]) for f in faults])
            assert plan.releases == releases


def test_the_recorded_downgrade_finding_is_a_disagreement_at_the_roll_back() -> None:
    """MV-RB2 on 3.7.2:3.9.2 (docs/runbooks.md, the findings): Kafka accepts the downgrade to 3.7-IV4, then every
    3.7.2 node exits on start (its bootstrap.checkpoint holds 3.9-IV0); the model has the node run, so the first
    roll back is met by nothing, and the observations after the quorum is lost carry no leader and no level."""
    doc = json.loads((Path(__file__).parent / "data" / "cluster" / "MV-RB2-3.7.2-3.9.2.json").read_text())
    book = load_runbook(ROOT / doc["runbook"])
    plan = BINDING.plan(book, doc["releases"], [])
    observed = [s["observed"] for s in doc["steps"]]
    assert observed[-1]["leader"] == -1 and "level" not in observed[-1]
    result = validate(plan.model, observed, internal=plan.internal, stutter=True, view=plan.project)
    assert doc["steps"][result.failed_step]["label"] == "back-c0"
    assert any("voters[0].status: observed 'TERMINATED', model 'RUNNING'" in d for c in result.closest
               for d in c.differences)


def test_a_roll_back_fault_is_a_step_of_the_model_and_its_refusal_is_shared(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--fault roll-c0:previous``: controller 0, just restarted on 3.9.2, is restarted on 3.7.2 again, a step the
    plan adds to the runbook the model runs. On the real cluster (recorded) the rest of the roll goes on, then the
    upgrade to 3.9-IV0 is refused ("Local controller 1 only supports versions 1-19"): every observation is met, and
    the model refuses the upgrade from every state they allow (a stall both share, not a disagreement)."""
    from rollcheck.cluster.runbook import START

    book = load_runbook(UPGRADE)
    ids = [s.id for s in book.steps]
    plan = BINDING.plan(book, ("3.7.2", "3.9.2"), [parse_fault("roll-c0:previous", ids)])
    steps = plan.model.steps
    at = [s.id for s in steps].index("roll-c0+previous")
    assert ids[at - 1] == "roll-c0" and dict(steps[at].params) == {"role": "voter", "node": 0, "software": "old"}
    doc = json.loads((Path(__file__).parent / "data" / "cluster" / "MV-RB1-3.7.2-3.9.2-previous.json").read_text())
    observed = [{k: v for k, v in s["observed"].items() if k not in plan.unmodelled} for s in doc["steps"]]
    assert doc["stalled"].startswith("upgrade: ") and "only supports versions 1-19" in doc["stalled"]
    v = validate(plan.model, observed, internal=plan.internal, stutter=True, view=plan.project)
    assert v.valid and v.met == len(observed)
    assert not any(any(getattr(t, "done", -1) == rs.done + 1 for _, t in plan.model.successors(rs)) for rs in v.last)
    # Without the roll back the same cluster is seen with controller 0 on the old software after roll-c0: no run of
    # the runbook as written has that.
    plain = BINDING.plan(book, ("3.7.2", "3.9.2"), [])
    wrong = [{**o, "runbook_done": o["runbook_done"] - (1 if i > 1 else 0)} for i, o in enumerate(observed)
             if i != 1]
    assert not validate(plain.model, wrong, internal=plain.internal, stutter=True, view=plain.project).valid
    up = str(UPGRADE)
    assert START == "start" and "no previous release" in _error(capsys, up, "--cluster", "--fault", "start:previous")
    assert "has run old only" in _error(capsys, up, "--cluster", "--fault", "roll-c0:previous:broker:0")
    assert "restarts no node" in _error(capsys, up, "--cluster", "--fault", "upgrade:previous")
    assert "rollback steps" in _error(capsys, str(ROOT / "runbooks" / "zk_migration" / "migrate.toml"), "--cluster",
                                      "--fault", "enable-b0:previous")
    assert "bounce back onto the old release is no step" in _error(
        capsys, str(ROOT / "runbooks" / "streams_probing" / "single-bounce.toml"), "--cluster", "--fault",
        "bounce-0:previous")


def test_each_fault_kind_does_to_the_node_what_it_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The metadata_version run's faults on a stand-in node: kill SIGKILLs it and then restarts it on its own
    software, pause SIGSTOPs and then SIGCONTs it, previous restarts it on the software it ran before (a runbook
    step counted as done). Nothing is started: the restarts are recorded."""
    import signal

    from reference_impl.metadata_version import cluster as mv
    from rollcheck.cluster.kafka import KafkaNode

    done: list[str] = []

    class StandIn:
        def __init__(self, name: str) -> None:
            self.name, self.alive, self.paused = name, True, False

        def kill(self) -> None:
            done.append(f"kill {self.name}")

        def signal(self, sig: int) -> None:
            done.append(f"{signal.Signals(sig).name} {self.name}")

    def restart(_c: Any, node: Any, dist: Any, _p: Any) -> tuple[float, str]:
        done.append(f"start {node.name} on {dist}")
        return 1.0, ""

    monkeypatch.setattr(mv, "restart_kafka", restart)
    monkeypatch.setattr(mv.time, "sleep", lambda _s: None)
    plan = BINDING.plan(load_runbook(SAFE_DOWN), ("3.7.2", "3.9.2"), [])
    config = plan.detail.config
    nodes = [KafkaNode(StandIn(f"node-{i}"), i + 1, ("controller",) if i < config.voters else ("broker",), None,
                       None, tmp_path / f"{i}.properties") for i in range(config.voters + config.brokers)]
    run = mv._Run(Any, nodes, config, dict(plan.detail.release_of), {"3.7.2": "dist-3.7.2", "3.9.2": "dist-3.9.2"},
                  plan.detail.base, Any, lambda _t: None)
    run.strike("kill", "voter:1", 0)
    assert done[-1] == "kill node-1" and run.status["node-1"] == "DOWN"
    run.strike("kill", "voter:1", 1)
    assert done[-1] == "start node-1 on dist-3.7.2" and run.status["node-1"] == "RUNNING"
    run.strike("pause", "voter:2", 0)
    assert done[-1] == "SIGSTOP node-2" and run.status["node-2"] == "DOWN"
    run.strike("pause", "voter:2", 1)
    assert done[-1] == "SIGCONT node-2" and run.status["node-2"] == "RUNNING"
    run._restart(nodes[0], "new")
    run.strike("previous", "voter:0", 0)
    assert done[-2:] == ["start node-0 on dist-3.9.2", "start node-0 on dist-3.7.2"]
    assert run.software["node-0"] == "old" and run.done == 1
