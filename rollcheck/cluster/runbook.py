"""A runbook performed on a real local cluster, its observed trace validated against the model.

``rollcheck runbook FILE --cluster`` starts the nodes a runbook's config describes from Kafka's released jars
(:mod:`rollcheck.cluster.kafka`), performs each step on them, injects the faults asked for, and after the start,
each step and each fault reads what the cluster shows (an *observation*). The observed trace is then checked with
the model (:func:`rollcheck.explore.validate.validate`): every observation must be met by a run of the reference
under the release's rules, and no property may be forced to fail on it.

What a protocol brings is its :class:`ClusterBinding` (``ProtocolEntry.cluster``): which releases fit the runbook's
config and the model for them, what a model state shows of itself on a cluster (the projection the observations
are matched against), how its steps are done on real nodes and how the cluster is read. The engine here knows no
protocol: it orders the steps and faults, keeps the observations, validates, and writes the results (the observed
trace as ITF, ``summary.json``) into the run's folder, with every node's log beside them. Every process is stopped
at the end, on a failure and on Ctrl-C (:class:`~rollcheck.cluster.cluster.Cluster`).

A fault is ``STEP:KIND[:NODE]``: after step ``STEP`` (or ``start``: before the first), ``kill`` SIGKILLs the node
and, once the cluster has been seen without it, starts it again on the release it ran; ``pause`` SIGSTOPs it for
``PAUSE_SECONDS`` and then SIGCONTs it; ``previous`` restarts it on the release it ran before (an operator's roll
back: the binding adds it to the runbook the model runs, as a step after ``STEP``). ``NODE`` is the binding's name of
a node (``voter:1``, ``broker:0``); by default the node the step acted on. A binding refuses the kinds its model has
no transition for.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from rollcheck.cluster.cluster import Cluster
from rollcheck.core.errors import UserError
from rollcheck.core.traces import Record, to_itf, write_json_atomic
from rollcheck.core.transition import TransitionSystem
from rollcheck.explore.validate import Validation, validate

FAULT_KINDS = {
    "kill": "SIGKILL the node; once the cluster is seen without it, start it again on its release",
    "pause": "SIGSTOP the node (cut off), then SIGCONT it",
    "previous": "restart the node on the release it ran before (an operator rolling it back): a step of the run, "
                "which the model takes as one of the runbook's",
}
# The observations a fault makes: after its first phase (the kill, the pause, the restart) and, for the faults that
# undo themselves, after its second (the start again, the continue).
FAULT_PHASES = {"kill": 2, "pause": 2, "previous": 1}
PAUSE_SECONDS = 8.0  # longer than a KRaft voter's fetch timeout (2 s): the quorum sees it gone
START = "start"  # the pseudo-step of a fault struck before the runbook's first step


@dataclass(frozen=True)
class Fault:
    step: str
    kind: str
    node: str | None = None

    def __str__(self) -> str:
        return f"{self.step}:{self.kind}" + (f":{self.node}" if self.node else "")


def parse_fault(text: str, step_ids: Sequence[str]) -> Fault:
    """``STEP:KIND[:NODE]`` (see the module docstring); a UserError naming what is wrong."""
    parts = text.split(":", 2)
    if len(parts) < 2 or not parts[0] or not parts[1]:
        raise UserError(f"--fault {text!r}: write STEP:KIND[:NODE], e.g. roll-c1:kill or roll-c1:kill:voter:0")
    step, kind = parts[0], parts[1]
    node = parts[2] if len(parts) == 3 else None
    if step != START and step not in step_ids:
        raise UserError(f"--fault {text!r}: the runbook has no step {step!r}; its steps: {', '.join(step_ids)} "
                        f"(or {START}: before the first)")
    if kind not in FAULT_KINDS:
        raise UserError(f"--fault {text!r}: unknown kind {kind!r}; the kinds: {', '.join(FAULT_KINDS)}")
    return Fault(step, kind, node or None)


@dataclass(frozen=True)
class ClusterPlan:
    """What a binding makes of a runbook for the releases given: the model to validate against, the projection of
    its states onto what the cluster shows, the unobserved transitions allowed between two observations, and the
    binding's own settings for the run (``detail``)."""

    releases: tuple[str, ...]
    model: TransitionSystem[Any]
    project: Callable[[Any], Mapping[str, object]]
    internal: int
    detail: Any = None
    notes: tuple[str, ...] = ()
    # Observed keys the model has no counterpart for (a Streams member's tasks): written into the observed trace
    # and the summary, left out of the matching.
    unmodelled: tuple[str, ...] = ()


class ClusterRunbook(Protocol):
    """A runbook's run on started nodes (what :meth:`ClusterBinding.start` returns)."""

    def observe(self) -> dict[str, Any]:
        """What the cluster shows now, in the projection's keys (after waiting, bounded, for it to settle)."""
        ...

    def perform(self, step: Any) -> tuple[str, bool]:
        """Do one runbook step on the cluster: one line saying what was done and what the cluster answered, and
        whether the step is done (False: the cluster refused it, and the operator is stuck there)."""
        ...

    def node_of(self, step: Any) -> str | None:
        """The node a step acts on (the default node of a fault struck after it), None for none."""
        ...

    def strike(self, kind: str, node: str, phase: int) -> str:
        """Phase 0 of a fault on ``node`` (kill, or stop it), then phase 1 (start it again, or continue it)."""
        ...

    def close(self) -> None:
        ...


class ClusterBinding(Protocol):
    protocol: str
    default_releases: tuple[str, ...]

    def plan(self, book: Any, releases: Sequence[str] | None, faults: Sequence[Fault]) -> ClusterPlan:
        """The plan, or a UserError (one line) when the runbook, its releases or its faults cannot be run."""
        ...

    def start(self, cluster: Cluster, book: Any, plan: ClusterPlan, say: Callable[[str], None]) -> ClusterRunbook:
        ...


@dataclass
class Observed:
    label: str  # "start", a step id, or "<step>+<fault kind>[/after]"
    did: str
    observation: dict[str, Any]
    seconds: float


@dataclass
class ClusterRun:
    runbook: str
    protocol: str
    releases: tuple[str, ...]
    faults: tuple[Fault, ...]
    folder: Path
    observed: list[Observed] = field(default_factory=list)
    validation: Validation | None = None
    seconds: float = 0.0
    notes: tuple[str, ...] = ()
    stalled: str | None = None  # the step the cluster refused (the run stops there), with what it answered
    # The cluster refused a step that the model takes from every state the observations allow there.
    model_accepts: bool = False
    # Each node's peak resident set (VmHWM), the highest seen at any observation (a restart is a new process).
    memory_mib: dict[str, float] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return self.validation is not None and self.validation.valid and not self.model_accepts

    def to_json(self) -> dict[str, Any]:
        v = self.validation
        out: dict[str, Any] = {
            "runbook": self.runbook, "protocol": self.protocol, "releases": list(self.releases),
            "faults": [str(f) for f in self.faults], "valid": self.valid, "stalled": self.stalled,
            "refused_where_the_model_accepts": self.model_accepts,
            "seconds": round(self.seconds, 1),
            "folder": str(self.folder), "trace": str(self.folder / "observed.itf.json"),
            "steps": [{"label": o.label, "did": o.did, "observed": o.observation, "seconds": round(o.seconds, 1)}
                      for o in self.observed],
            "notes": list(self.notes),
            "memory_mib": {**dict(sorted(self.memory_mib.items())), "total": round(sum(self.memory_mib.values()), 1)},
        }
        if v is not None:
            out["validation"] = {
                "met": v.met, "of": v.steps, "candidates": v.candidates, "truncated": v.truncated,
                "failed_step": None if v.failed_step is None else self.observed[v.failed_step].label,
                "closest": [{"view": _plain(c.view), "differences": list(c.differences)} for c in v.closest],
                "violations": [{"property": x.property_id, "description": x.description,
                                "step": self.observed[x.step].label} for x in v.violations],
                "model_run": [None if a is None else str(a) for a, _ in v.run],
            }
        return out


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda v: getattr(v, "name", str(v))))


def observed_itf(run: ClusterRun, source: str) -> dict[str, Any]:
    """The observed trace as ITF: one state per observation (its keys the projection's), ``#meta`` naming the
    runbook, the releases and the faults, and each state's step and what was done."""
    keys = sorted({k for o in run.observed for k in o.observation})
    states = []
    for i, o in enumerate(run.observed):
        state: dict[str, Any] = {"#meta": {"index": i, "step": o.label, "did": o.did}}
        for k in keys:
            if k in o.observation:
                state[k] = to_itf(_records(o.observation[k]))
        states.append(state)
    return {"#meta": {"format": "ITF", "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
                      "source": source, "description": f"runbook {run.runbook} observed on a local cluster",
                      "runbook": run.runbook, "protocol": run.protocol, "releases": list(run.releases),
                      "faults": [str(f) for f in run.faults]},
            "vars": keys, "states": states}


def _records(value: Any) -> Any:
    if isinstance(value, Mapping):
        return Record({k: _records(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_records(v) for v in value)
    return value


def run_on_cluster(binding: ClusterBinding, book: Any, plan: ClusterPlan, faults: Sequence[Fault], folder: Path,
                   say: Callable[[str], None]) -> ClusterRun:
    """Perform ``book`` on a new cluster under ``folder`` (its nodes' folders, the results), validate the observed
    trace and write ``observed.itf.json`` and ``summary.json`` there. A node that fails, a step the cluster cannot
    perform: a UserError (one line naming the node and its log), every process stopped."""
    run = ClusterRun(book.id, book.protocol, plan.releases, tuple(faults), folder.resolve(), notes=plan.notes)
    tick = time.monotonic()
    try:
        _perform(run, binding, book, plan, faults, folder, say)
    except (Exception, KeyboardInterrupt) as exc:
        # What was observed before the failure or the interrupt is kept, with what ended the run.
        doc = run.to_json()
        doc["ended"] = f"{type(exc).__name__}: {exc}"
        write_json_atomic(folder / "summary.json", doc)
        raise
    say(f"validating the {len(run.observed)} observations against the model ...")
    _validate_and_write(run, book, plan, folder)
    run.seconds = time.monotonic() - tick
    write_json_atomic(folder / "summary.json", run.to_json())
    return run


def _perform(run: ClusterRun, binding: ClusterBinding, book: Any, plan: ClusterPlan, faults: Sequence[Fault],
             folder: Path, say: Callable[[str], None]) -> None:
    tick = time.monotonic()
    folder.mkdir(parents=True, exist_ok=True)
    nodes = folder / "cluster"
    with Cluster(nodes, progress=say) as cluster:
        # An earlier run's nodes were reaped on entering; their data goes (a new cluster starts empty).
        for child in nodes.iterdir():
            if child.is_dir():
                shutil.rmtree(child)
        handle = binding.start(cluster, book, plan, say)
        try:
            look = partial(_look, run, handle, cluster)
            look(START, "the cluster started", tick, say)
            _strike_all(look, handle, [f for f in faults if f.step == START], None, say)
            for step in book.steps:
                t = time.monotonic()
                did, done = handle.perform(step)
                look(step.id, did, t, say)
                if not done:
                    # As the model's runbook system has it: a refused command is not the step done, and no later
                    # step may be taken before it.
                    run.stalled = f"{step.id}: {did}"
                    say(f"stalled at {step.id}: the cluster refused it; the steps after it are not performed")
                    break
                _strike_all(look, handle, [f for f in faults if f.step == step.id], step, say)
        finally:
            handle.close()


def _validate_and_write(run: ClusterRun, book: Any, plan: ClusterPlan, folder: Path) -> None:
    matched = [{k: v for k, v in o.observation.items() if k not in plan.unmodelled} for o in run.observed]
    run.validation = validate(plan.model, matched, internal=plan.internal,
                              stutter=True, view=plan.project)
    v = run.validation
    if run.stalled is not None and v.failed_step is None and v.last:
        # A refusal the model shares is a stall; one it never makes (the step is taken from every state the
        # observations allow) is a disagreement. The model is a runbook system: its states count the steps done.
        run.model_accepts = all(any(getattr(t, "done", -1) == rs.done + 1 for _, t in plan.model.successors(rs))
                                for rs in v.last)
    write_json_atomic(folder / "observed.itf.json", observed_itf(run, book.path))


def peak_rss_mib(pid: int) -> float | None:
    """A process's peak resident set (``VmHWM`` of /proc/PID/status), in MiB; None where it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        return None
    return None


def _look(run: ClusterRun, handle: ClusterRunbook, cluster: Cluster, label: str, did: str, since: float,
          say: Callable[[str], None]) -> None:
    observation = handle.observe()
    run.observed.append(Observed(label, did, observation, time.monotonic() - since))
    for name, node in cluster.nodes.items():
        if node.pid is not None and node.alive and (m := peak_rss_mib(node.pid)) is not None:
            run.memory_mib[name] = max(m, run.memory_mib.get(name, 0.0))
    say(f"[{len(run.observed)}] {label}: {did}")


def _strike_all(look: Callable[..., None], handle: ClusterRunbook, faults: Sequence[Fault], step: Any,
                say: Callable[[str], None]) -> None:
    for f in faults:
        node = f.node or (handle.node_of(step) if step is not None else None)
        if node is None:
            raise UserError(f"--fault {f}: step {f.step} acts on no node; name one (STEP:KIND:NODE)")
        for phase in range(FAULT_PHASES[f.kind]):
            t = time.monotonic()
            did = handle.strike(f.kind, node, phase)
            look(f"{f.step}+{f.kind}" + ("/after" if phase else ""), did, t, say)


def binding_for(entry: Any) -> ClusterBinding:
    """The protocol's cluster binding; one line where it has none or it does not load."""
    if entry.cluster is None:
        from rollcheck.core.registry import all_protocols

        with_one = ", ".join(e.name for e in all_protocols() if e.cluster is not None) or "none yet"
        raise UserError(f"protocol {entry.name} has no cluster binding (ProtocolEntry.cluster): its runbooks run "
                        f"only against the model; --cluster runs the runbooks of: {with_one}")
    try:
        binding = entry.cluster_binding()
    except (ImportError, ValueError) as exc:
        raise UserError(f"protocol {entry.name}: its cluster binding {entry.cluster} does not load: "
                        f"{' '.join(str(exc).split())}") from None
    return binding  # type: ignore[no-any-return]


def parse_releases(text: str | None) -> tuple[str, ...] | None:
    """``--release A[:B]``: the releases in order (None: the binding's default)."""
    if text is None:
        return None
    parts = tuple(text.split(":"))
    if not all(parts) or len(parts) > 2:
        raise UserError(f"--release {text!r}: write RELEASE or OLD:NEW, e.g. 3.7.2:3.9.2")
    return parts


def check_steps(book: Any, actions: Sequence[str], waits: Sequence[str]) -> None:
    """Every step of ``book`` is one of the binding's ``actions`` or ``waits``; else a UserError naming the step."""
    for step in book.steps:
        if step.action is not None and step.action not in actions:
            raise UserError(f"runbook {book.id} step {step.id}: a cluster run cannot perform {step.action} (it "
                            f"performs {', '.join(actions)} and the waits {', '.join(waits)})")
        if step.wait is not None and step.wait.name not in waits:
            raise UserError(f"runbook {book.id} step {step.id}: a cluster run cannot wait for {step.wait.name} "
                            f"(it waits for {', '.join(waits)})")


def node_index(name: str, counts: Mapping[str, int], where: str) -> tuple[str, int]:
    """A fault's node ``ROLE:INDEX`` (``voter:1``) among ``counts`` (role -> how many): (role, index), or a
    UserError listing the nodes."""
    role, _, index = name.partition(":")
    count = counts.get(role)
    if count is None or not index.isdigit() or not 0 <= int(index) < count:
        nodes = [f"{r}:{i}" for r, n in counts.items() for i in range(n)]
        raise UserError(f"{where}: no node {name!r}; the nodes: {', '.join(nodes)}")
    return role, int(index)
