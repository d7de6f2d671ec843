"""Two-way trace conformance between a protocol's TLA+ spec and its reference implementation.

(a) **spec -> reference**: TLC's counterexamples and a sample of TLC simulation traces are replayed on the
    reference; every spec step must be matched by an enabled reference action (same name when TLC
    names it) whose successor has the same ``view``. A step that no action matches is a divergence that
    names the step, the variables that differ from the closest reference successor, and both values.
(b) **reference -> spec**: seeded random walks of the reference are checked by TLC through a generated
    trace-validation module (the spec's ``Init`` / ``Next`` constrained to the walk's views).
(c) **reachable sets**: the ``view`` of every reachable reference state equals the set of states TLC
    dumps for the same config, and so do the counts.
(d) **config domain** (when the binding names the spec's domain operator and the caller gives the
    reference's ``build``): the configs around this one that the reference accepts are those the spec is
    written for (:mod:`rollcheck.tla.domain`).

The spec's model is written from ``spec_config``; the reference checked is ``ts``. They are the same
config except when a test checks that a divergent reference is caught.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, MutableMapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.core.errors import UserError
from rollcheck.core.traces import Step, Trace, canonical_json, to_itf
from rollcheck.core.transition import TransitionSystem
from rollcheck.explore.explorer import reachable_states
from rollcheck.tla.binding import SpecBinding, write_model
from rollcheck.tla.domain import compare_domain
from rollcheck.tla.tlc import ModelCheckResult, TraceStep, parse_dump, parse_simulation_trace, run_tlc
from rollcheck.tla.value import canonical_state, canonical_view_tla, tla_canonical, to_tla

Progress = Callable[[str], None]

# TLC's errors that report something about the spec rather than a run that failed.
_FINDINGS = ("Error: Temporal properties were violated", "Error: Deadlock reached")


@dataclass
class Divergence:
    check: str  # "replay" (a), "validation" (b), "reachable" (c), "domain" (d)
    trace: str  # which trace (file name, walk number) or "" for (c)
    step: int  # index of the step that cannot be matched (0: the initial state)
    action: str | None  # the action of that step (the spec's label in (a), the reference's in (b))
    message: str
    differences: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # var -> (spec, reference)

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "trace": self.trace, "step": self.step, "action": self.action,
                "message": self.message,
                "differences": {k: {"spec": s, "reference": r} for k, (s, r) in self.differences.items()}}

    def __str__(self) -> str:
        diff = "; ".join(f"{k}: spec {json.dumps(s)[:200]} / reference {json.dumps(r)[:200]}"
                         for k, (s, r) in self.differences.items())
        where = f"{self.trace} " if self.trace else ""
        head = f"[{self.check}] {where}step {self.step} ({self.action}): {self.message}"
        return head + (f" -- {diff}" if diff else "")


@dataclass
class ConformanceReport:
    protocol: str
    config: str
    profile: str
    replayed_traces: int = 0
    replayed_steps: int = 0
    counterexamples: int = 0
    validated_traces: int = 0
    validated_steps: int = 0
    tlc_states: int | None = None
    reference_views: int | None = None
    reference_states: int | None = None
    divergences: list[Divergence] = field(default_factory=list)
    error: str = ""
    elapsed: float = 0.0
    domain_probes: int | None = None  # (d): configs asked of both; None when not checked

    @property
    def ok(self) -> bool:
        return not self.divergences and not self.error

    def by_check(self, check: str) -> list[Divergence]:
        return [d for d in self.divergences if d.check == check]

    def to_json(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "config": self.config, "profile": self.profile, "ok": self.ok,
                "replay": {"traces": self.replayed_traces, "steps": self.replayed_steps,
                           "counterexamples": self.counterexamples,
                           "divergences": [d.to_json() for d in self.by_check("replay")]},
                "validation": {"traces": self.validated_traces, "steps": self.validated_steps,
                               "divergences": [d.to_json() for d in self.by_check("validation")]},
                "reachable": {"tlc_states": self.tlc_states, "reference_views": self.reference_views,
                              "reference_states": self.reference_states,
                              "divergences": [d.to_json() for d in self.by_check("reachable")]},
                "domain": {"probes": self.domain_probes,
                           "divergences": [d.to_json() for d in self.by_check("domain")]},
                "error": self.error, "elapsed_seconds": round(self.elapsed, 3)}


# --------------------------------------------------------------------------- (a) spec traces on the reference


def _differences(spec: dict[str, Any], ref_view: dict[str, object]) -> dict[str, tuple[Any, Any]]:
    out: dict[str, tuple[Any, Any]] = {}
    for k in sorted(set(spec) | set(ref_view)):
        s = tla_canonical(spec[k]) if k in spec else None
        r = tla_canonical(to_itf(ref_view[k])) if k in ref_view else None
        if canonical_json(s) != canonical_json(r):
            out[k] = (s, r)
    return out


def replay_spec_trace(ts: TransitionSystem[Any], steps: Sequence[TraceStep], name: str,
                      actions: Iterable[str] = (), *, views: MutableMapping[Any, str] | None = None,
                      targets: Sequence[str] | None = None) -> tuple[Trace | None, Divergence | None]:
    """Replay one spec trace on the reference: the matching reference trace, or the first divergence.

    Views need not determine a reference state, so every reference state consistent with the trace so far
    is followed (a set of candidates); the trace matches when the set never becomes empty.

    ``views``: a cache of reference states' canonical views, kept across the calls of one replayer (the
    Spark replay keeps one per task: traces share their early states, and canonicalizing every
    successor's view is most of a replay's time). ``targets``: the steps' :func:`canonical_state`, when the
    caller has them (the Spark replay computes each distinct state of its traces once). The result depends
    on neither.
    """
    known = set(actions)

    def view_key(s: Any) -> str:
        if views is None:
            return canonical_view_tla(ts.view(s))
        key = views.get(s)
        if key is None:
            key = views[s] = canonical_view_tla(ts.view(s))
        return key

    if not steps:
        return Trace([]), None
    target = targets[0] if targets is not None else canonical_state(steps[0].values)
    inits = list(ts.initial_states())
    cands: dict[Any, list[Step]] = {s: [Step(None, s)] for s in inits if view_key(s) == target}
    if not cands:
        closest = min(inits, key=lambda s: len(_differences(steps[0].values, dict(ts.view(s)))))
        return None, Divergence("replay", name, 0, None, "no initial state of the reference has this view",
                                _differences(steps[0].values, dict(ts.view(closest))))
    for k, step in enumerate(steps[1:], start=1):
        target = targets[k] if targets is not None else canonical_state(step.values)
        nxt: dict[Any, list[Step]] = {}
        every: list[tuple[Any, Any]] = []
        for s, path in cands.items():
            for a, t in ts.successors(s):
                every.append((a, t))
                if step.action in known and a.name != step.action:
                    continue
                if t not in nxt and view_key(t) == target:
                    nxt[t] = [*path, Step(a, t)]
        if not nxt:
            if every:
                a, t = min(every, key=lambda at: len(_differences(step.values, dict(ts.view(at[1])))))
                diff = _differences(step.values, dict(ts.view(t)))
                msg = (f"no enabled reference action leads to the spec's state; closest reference step is "
                       f"{a!r}, which differs in {', '.join(diff) or 'its action name only'}")
            else:
                diff, msg = {}, "the reference has no enabled action here (a terminal state)"
            return None, Divergence("replay", name, k, step.action, msg, diff)
        cands = nxt
    return Trace(next(iter(cands.values()))), None


def tlc_simulation_traces(binding: SpecBinding, ts: TransitionSystem[Any], directory: Path, *, traces: int,
                          depth: int, seed: int, timeout: float) -> tuple[list[list[TraceStep]], ModelCheckResult]:
    """``traces`` random behaviours of the spec (TLC ``-simulate``), each up to ``depth`` states."""
    files, res = tlc_simulation_files(binding, ts, directory, traces=traces, depth=depth, seed=seed,
                                      timeout=timeout)
    return [parse_simulation_trace(f) for f in files], res


def tlc_simulation_files(binding: SpecBinding, ts: TransitionSystem[Any], directory: Path, *, traces: int,
                         depth: int, seed: int, timeout: float, workers: int = 1
                         ) -> tuple[list[Path], ModelCheckResult]:
    """TLC ``-simulate`` writing ``traces`` behaviours of the spec, one file each (``sim/tr_W_I``: TLC 2.15
    names them by worker and number), unread: the files in order, and TLC's result.

    TLC's ``num`` counts each worker's traces, so with ``workers`` > 1 each writes ``ceil(traces / workers)``
    and the extra files of the last ones are removed."""
    model = write_model(binding, ts, directory, check_properties=False)
    out = directory / "sim"
    out.mkdir(exist_ok=True)
    for old in out.glob("tr_*"):
        old.unlink()
    res = run_tlc(model.directory, model.module, model.cfg, simulate=("sim/tr", -(-traces // workers)),
                  depth=depth, seed=seed, workers=workers, timeout=timeout)
    files = sorted(out.glob("tr_*"), key=lambda p: [int(x) for x in p.name.split("_")[1:] if x.isdigit()])
    for extra in files[traces:]:
        extra.unlink()
    return files[:traces], res


# --------------------------------------------------------------------------- (b) reference traces in TLC


def random_walks(ts: TransitionSystem[Any], count: int, depth: int, seed: int) -> list[Trace]:
    """Seeded random walks of the reference (deterministic for a seed: successors come in a fixed order)."""
    rng = random.Random(seed)
    inits = list(ts.initial_states())
    walks: list[Trace] = []
    for _ in range(count):
        s = inits[rng.randrange(len(inits))]
        steps = [Step(None, s)]
        for _ in range(depth - 1):
            succ = list(ts.successors(s))
            if not succ:
                break
            a, s = succ[rng.randrange(len(succ))]
            steps.append(Step(a, s))
        walks.append(Trace(steps))
    return walks


def validate_reference_traces(binding: SpecBinding, spec_ts: TransitionSystem[Any], walks: Sequence[Trace],
                              view_of: Callable[[Any], dict[str, object]], directory: Path,
                              timeout: float) -> tuple[list[Divergence], ModelCheckResult]:
    """Check each walk against the spec with TLC: a generated module whose ``Init`` / ``Next`` are the
    spec's, each state constrained to the walk's view. TLC's dump tells how far each walk got."""
    variables = list(view_of(walks[0].steps[0].state)) if walks else []
    logs = []
    for w in walks:
        states = ["[" + ", ".join(f"{k} |-> {to_tla(v)}" for k, v in view_of(st.state).items()) + "]"
                  for st in w.steps]
        logs.append("<<" + ",\n    ".join(states) + ">>")
    eq_now = " /\\ ".join(f"{v} = TraceLogs[t][1].{v}" for v in variables)
    eq_next = " /\\ ".join(f"{v}' = TraceLogs[tv_t][tv_i + 1].{v}" for v in variables)
    extra = "\n".join([
        "VARIABLES tv_t, tv_i",
        "TraceLogs == <<\n  " + ",\n  ".join(logs) + ">>",
        f"TVInit == \\E t \\in 1..Len(TraceLogs) : tv_t = t /\\ tv_i = 1 /\\ Init /\\ {eq_now}",
        f"TVNext == tv_i < Len(TraceLogs[tv_t]) /\\ Next /\\ tv_t' = tv_t /\\ tv_i' = tv_i + 1 /\\ {eq_next}",
    ])
    model = write_model(binding, spec_ts, directory, extra_definitions=extra, init="TVInit", next_="TVNext",
                        check_properties=False)
    # EXTENDS Sequences for Len: the spec module may not; the MC module adds it.
    mc = (directory / "MC.tla").read_text(encoding="utf-8").replace(
        f"EXTENDS {binding.module}, TLC", f"EXTENDS {binding.module}, TLC, Sequences")
    (directory / "MC.tla").write_text(mc, encoding="utf-8")
    dump = directory / "tv-states.txt"
    res = run_tlc(model.directory, model.module, model.cfg, dump=dump.name, workers=1, timeout=timeout)
    if res.error:
        return [], res
    reached: dict[int, int] = {}
    for st in parse_dump(directory / (dump.name + ".dump")):
        t, i = int(st["tv_t"]["#bigint"]), int(st["tv_i"]["#bigint"])
        reached[t] = max(reached.get(t, 0), i)
    out: list[Divergence] = []
    for n, w in enumerate(walks, start=1):
        got = reached.get(n, 0)
        if got >= len(w.steps):
            continue
        step = w.steps[got] if got < len(w.steps) else None
        action = None if step is None or step.action is None else repr(step.action)
        if got == 0:
            msg = "the spec has no initial state with this view"
            diff: dict[str, tuple[Any, Any]] = {}
        else:
            before, after = view_of(w.steps[got - 1].state), view_of(w.steps[got].state)
            changed = [k for k in after if canonical_json(tla_canonical(to_itf(after[k]))) !=
                       canonical_json(tla_canonical(to_itf(before[k])))]
            msg = (f"the spec has no step from state {got - 1} to state {got}: the reference changed "
                   f"{', '.join(changed) or 'nothing'}")
            diff = {k: (tla_canonical(to_itf(before[k])), tla_canonical(to_itf(after[k]))) for k in changed}
            msg += " (values: before / after)"
        out.append(Divergence("validation", f"walk {n}", got, action, msg, diff))
    return out, res


# --------------------------------------------------------------------------- (c) reachable views


def reference_views(ts: TransitionSystem[Any], limit: int = 2_000_000,
                    within: AbstractSet[str] | None = None) -> tuple[set[str], int]:
    """Every reachable state's view and the number of states. With ``within`` (TLC's views) the walk stops at the
    first state whose view is not among them (that view is in the set returned): a reference whose state space a
    bug has blown up past ``limit`` still shows where it leaves the spec, at once."""
    views: set[str] = set()

    def admit(s: Any) -> bool:
        view = canonical_view_tla(ts.view(s))
        views.add(view)
        return within is None or view in within

    try:
        seen, _names = reachable_states(ts, limit, admit)
    except ValueError as exc:
        raise UserError(f"{exc}: too large for a conformance check (every view TLC's run reaches is reached "
                        "by the reference too, up to there); try a smaller config") from None
    return views, len(seen)


def compare_reachable(binding: SpecBinding, spec_ts: TransitionSystem[Any], ts: TransitionSystem[Any],
                      directory: Path, timeout: float) -> tuple[list[Divergence], ModelCheckResult, int, int]:
    model = write_model(binding, spec_ts, directory, check_properties=False)
    res = run_tlc(model.directory, model.module, model.cfg, dump="reachable.txt", timeout=timeout)
    if res.error:
        return [], res, 0, 0
    tlc = {canonical_state(s) for s in parse_dump(directory / "reachable.txt.dump")}
    ref, n_states = reference_views(ts, within=tlc)
    out: list[Divergence] = []
    only_tlc, only_ref = sorted(tlc - ref), sorted(ref - tlc)
    if only_ref:  # the walk stopped at the first view outside TLC's: the counts so far say nothing
        out.append(Divergence("reachable", "", -1, None,
                              f"a view only in the reference (its walk stopped at the first, after {n_states} "
                              f"states; TLC reaches {len(tlc)}): {only_ref[0][:300]}"))
    elif only_tlc:
        out.append(Divergence("reachable", "", -1, None,
                              f"TLC reaches {len(tlc)} states, the reference {len(ref)} distinct views; "
                              f"{len(only_tlc)} only in TLC, 0 only in the reference; e.g. only in TLC: "
                              f"{only_tlc[0][:300]}"))
    return out, res, len(ref), n_states


# --------------------------------------------------------------------------- all three


def conform(binding: SpecBinding, spec_ts: TransitionSystem[Any], ts: TransitionSystem[Any], directory: Path,
            *, config_name: str = "", traces: int = 50, depth: int = 30, seed: int = 0, timeout: float = 600.0,
            progress: Progress | None = None, build: Callable[[Any], TransitionSystem[Any]] | None = None,
            domain_bases: Sequence[Any] = (), domain_only: bool = False) -> ConformanceReport:
    """Run (a), (b) and (c) for one config and profile, and (d) when ``build`` is given (probing around the
    config and around each of ``domain_bases``, the protocol's named configs); ``domain_only``: (d) alone (one
    TLC run: seconds, where (c) takes minutes; what a change to a config's validation meets first)."""
    import time

    t0 = time.perf_counter()
    say = progress or (lambda _m: None)
    report = ConformanceReport(binding.protocol, config_name, getattr(spec_ts.config, "profile", ""))
    directory.mkdir(parents=True, exist_ok=True)
    if domain_only:
        if build is None or binding.domain is None:
            raise UserError(f"{binding.protocol}: its spec states no config domain, so --domain-only has "
                            "nothing to check")
        _check_domain(report, binding, spec_ts, build, directory, timeout, domain_bases, say)
        report.elapsed = time.perf_counter() - t0
        return report

    say("(c) reachable states: TLC dump vs the reference explorer")
    divs, res, nviews, nstates = compare_reachable(binding, spec_ts, ts, directory / "reachable", timeout)
    if res.error:
        report.error = f"TLC (reachable states): {res.error}"
        report.elapsed = time.perf_counter() - t0
        return report
    report.tlc_states, report.reference_views, report.reference_states = res.distinct_states, nviews, nstates
    report.divergences += divs

    say("(a) TLC counterexample and simulation traces replayed on the reference")
    model = write_model(binding, spec_ts, directory / "check")
    check = run_tlc(model.directory, model.module, model.cfg, timeout=timeout)
    spec_traces: list[tuple[str, list[TraceStep]]] = []
    # The spec's model check did not finish (a timeout, a TLC failure): a counterexample it would give is not
    # replayed. A liveness violation or a deadlock is the spec's finding, not a failed run: (a) goes on.
    if check.error and not check.error.startswith(_FINDINGS):
        report.error = f"TLC (model check): {check.error}"
    if check.violated and check.trace:
        report.counterexamples = 1
        spec_traces.append((f"counterexample {check.violated}", check.trace))
    sims, sim_res = tlc_simulation_traces(binding, spec_ts, directory / "simulate", traces=traces, depth=depth,
                                          seed=seed, timeout=timeout)
    if sim_res.error or len(sims) < traces:  # fewer traces replayed than asked is not a full check (a)
        why = sim_res.error or f"TLC wrote {len(sims)} of the {traces} simulation traces asked for"
        report.error = (report.error + "; " if report.error else "") + f"TLC (simulation): {why}"
    spec_traces += [(f"simulation {i}", t) for i, t in enumerate(sims)]
    for name, steps in spec_traces:
        _trace, div = replay_spec_trace(ts, steps, name, binding.actions)
        report.replayed_traces += 1
        report.replayed_steps += len(steps)
        if div is not None:
            report.divergences.append(div)

    say("(b) reference random walks validated by TLC")
    walks = random_walks(ts, traces, depth, seed)
    vdivs, vres = validate_reference_traces(binding, spec_ts, walks, lambda s: dict(ts.view(s)),
                                            directory / "validate", timeout)
    if vres.error:
        report.error = (report.error + "; " if report.error else "") + f"TLC (trace validation): {vres.error}"
    report.validated_traces = len(walks)
    report.validated_steps = sum(len(w.steps) for w in walks)
    report.divergences += vdivs

    if build is not None and binding.domain is not None:
        _check_domain(report, binding, spec_ts, build, directory, timeout, domain_bases, say)
    report.elapsed = time.perf_counter() - t0
    return report


def _check_domain(report: ConformanceReport, binding: SpecBinding, spec_ts: TransitionSystem[Any],
                  build: Callable[[Any], TransitionSystem[Any]], directory: Path, timeout: float,
                  domain_bases: Sequence[Any], say: Callable[[str], None]) -> None:
    """(d) into ``report``: the probes asked, each mismatch a divergence, a TLC failure the report's error."""
    assert binding.domain is not None
    say("(d) config domain: the configs the reference accepts vs the spec's " + binding.domain)
    dom = compare_domain(binding, spec_ts, build, directory / "domain", timeout, domain_bases)
    if dom.error:
        report.error = (report.error + "; " if report.error else "") + f"TLC (config domain): {dom.error}"
    report.domain_probes = dom.probes
    for probe, accepted, in_domain, why in dom.mismatches:
        said = "accepts" if accepted else f"refuses ({why})"
        report.divergences.append(Divergence(
            "domain", "", -1, None, f"{probe.field} = {probe.value!r}: the reference {said}, the spec's "
            f"{binding.domain} is {'TRUE' if in_domain else 'FALSE'}",
            {probe.field: (in_domain, accepted)}))
