"""The gate's TLA+ checkers: TLC on the spec, Apalache when installed, and spec/reference conformance.

Each adapter checks the protocol's spec (``specs/``) on the same config the other checkers use. A
protocol without a spec yet, an absent Apalache, or a config too large for a conformance run gives a
"skipped" report with the reason: the gate shows it and does not count it as a failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rollcheck.checkers import (
    BOUNDED,
    HOLDS,
    NOT_CHECKED,
    REACHED,
    VACUOUS,
    VIOLATED,
    CheckContext,
    CheckerReport,
    PropertyVerdict,
    save_traces,
)
from rollcheck.errors import ToolUnavailable, UserError
from rollcheck.rundir import run_name
from rollcheck.transition import ProtocolEntry, action_coverage

CONFORM_MAX_STATES = 100_000  # conformance dumps and compares every state: larger configs are skipped


def _binding(entry: ProtocolEntry, report: CheckerReport) -> Any:
    from rollcheck.tla.binding import binding_for

    try:
        return binding_for(entry.name)
    except UserError as exc:
        report.status = "skipped"
        report.message = str(exc)
        return None


def check_tlc(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    """TLC model-checks the spec exhaustively; its counterexample is replayed on the reference."""
    from rollcheck.conformance import replay_spec_trace
    from rollcheck.tla.binding import operator_name, write_model
    from rollcheck.tla.tlc import run_tlc

    report = CheckerReport("tlc", entry.name, label, config.profile)
    binding = _binding(entry, report)
    if binding is None:
        return report
    ts = ctx.build(entry, config)
    name = run_name(entry.name, label, config.profile, ctx.variant)
    model = write_model(binding, ts, ctx.out_dir / "tlc" / name, root=ctx.out_dir)
    res = run_tlc(model.directory, model.module, model.cfg, timeout=ctx.timeout_seconds, workers=ctx.cores,
                  coverage=True)
    report.elapsed = res.elapsed
    if res.error:
        report.status = "error"
        report.message = res.error
        return report
    violated = res.violated
    for pid in (*model.invariants, *model.properties):
        if violated == operator_name(pid):
            trace, div = replay_spec_trace(ts, res.trace, "counterexample", binding.actions)
            if trace is not None:
                trace.property_id, trace.config = pid, label
                report.properties[pid] = PropertyVerdict(pid, VIOLATED, "TLC counterexample", trace)
            else:
                report.properties[pid] = PropertyVerdict(pid, VIOLATED, f"TLC counterexample (does not replay on "
                                                         f"the reference: {div})")
        else:
            report.properties[pid] = PropertyVerdict(
                pid, NOT_CHECKED if violated else HOLDS, "TLC stopped at another violation" if violated else "")
    for pid in model.unchecked:
        report.properties[pid] = PropertyVerdict(pid, NOT_CHECKED, "graph property: explorers only")
    # TLC stops at the first violation: only a complete run is exhaustive and has comparable counts.
    report.exhaustive = violated is None
    if violated is None and res.distinct_states is not None:
        report.counts = {"distinct_states": res.distinct_states}
        # TLC counts the initial state as depth 1. With several workers its search is not level by level and
        # the depth it prints is only an upper bound (metadata_version:small: 21 with 2 workers, 19 with one,
        # as the explorers find): only a one-worker depth is compared.
        if res.depth is not None and ctx.cores == 1:
            report.counts["depth"] = res.depth - 1
        elif res.depth is not None:
            report.stats["depth_upper_bound"] = res.depth - 1
    report.stats.update({"generated_states": res.generated_states, "spec": binding.path.name,
                         "workers": ctx.cores,
                         "actions": action_coverage(entry, res.extra.get("action_counts", {}), violated is None)})
    report.status = VIOLATED if violated else "ok"
    _tlc_witnesses(report, binding, ts, model.witnesses, ctx, model.directory / "witnesses")
    save_traces(report, ts, ctx)
    return report


def _tlc_witnesses(report: CheckerReport, binding: Any, ts: Any, witnesses: tuple[str, ...], ctx: CheckContext,
                   directory: Path) -> None:
    """Each witness decided by TLC as a negated invariant (:mod:`rollcheck.tla.witness`); a broken variant's
    run checks them only when no property failed (a liveness bug shows as a story no longer reached: that is
    how TLC kills it), and ``options.tlc_witnesses = false`` skips them."""
    from rollcheck.tla.witness import check_witnesses

    if not witnesses:
        return
    killed = ctx.variant is not None and report.status == VIOLATED
    if killed or not ctx.options.get("tlc_witnesses", True):
        why = "a broken variant a property already caught" if killed else "tlc_witnesses = false"
        for pid in witnesses:
            report.properties[pid] = PropertyVerdict(pid, NOT_CHECKED, f"witness: not checked ({why})")
        return
    runs = check_witnesses(binding, ts, directory, witnesses,
                           timeout=ctx.timeout_seconds, workers=ctx.cores)
    report.elapsed += runs.elapsed
    report.stats["witness_runs"] = runs.runs
    for pid in witnesses:
        if pid in runs.reached:
            report.properties[pid] = PropertyVerdict(pid, REACHED, f"reached at depth {runs.depth(pid)}")
        elif pid in runs.vacuous:
            report.properties[pid] = PropertyVerdict(
                pid, VACUOUS, "no reachable state satisfies it: the config never tells this story")
        else:
            report.properties[pid] = PropertyVerdict(pid, NOT_CHECKED, f"witness run failed: {runs.error}")
    if runs.vacuous and report.status == "ok":
        report.status = VIOLATED


def check_conform(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    """Spec traces on the reference, reference traces in TLC, and equal reachable sets."""
    from rollcheck.conformance import conform
    from rollcheck.explorer import explore

    report = CheckerReport("conform", entry.name, label, config.profile)
    binding = _binding(entry, report)
    if binding is None:
        return report
    ts = ctx.build(entry, config)
    limit = int(ctx.options.get("conform_max_states", CONFORM_MAX_STATES))
    size = ctx.known_sizes.get((entry.name, label, config.profile, ctx.variant))
    if size is None:
        size = explore(ts, max_states=limit + 1, stop_at_first=False).distinct_states
    if size > limit:
        report.status = "skipped"
        report.message = (f"more than {limit} states: run `rollcheck conform {entry.name} --config small` "
                          "(or raise conform_max_states)")
        return report
    name = run_name(entry.name, label, config.profile, ctx.variant)
    rep = conform(binding, ts, ts, ctx.out_dir / "conform" / name, config_name=label,
                  traces=int(ctx.options.get("conform_traces", 30)), depth=int(ctx.options.get("conform_depth", 25)),
                  seed=ctx.seed, timeout=ctx.timeout_seconds, build=entry.build,
                  domain_bases=tuple(entry.configs.values()))
    report.elapsed = rep.elapsed
    report.stats = rep.to_json()
    if rep.error:
        report.status = "error"
        report.message = rep.error
    elif rep.divergences:
        # The spec and the reference disagree: the gate reports it as a disagreement between checkers.
        report.status = "diverged"
        report.message = "spec and reference diverge: " + "; ".join(str(d) for d in rep.divergences[:3])
    return report


def check_apalache(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    """Apalache bounded model checking of every invariant to ``ctx.z3_depth`` steps, when installed."""
    from rollcheck.conformance import replay_spec_trace
    from rollcheck.tla.apalache import find_apalache, run_apalache
    from rollcheck.tla.binding import operator_name, write_model

    report = CheckerReport("apalache", entry.name, label, config.profile)
    try:
        find_apalache()
    except ToolUnavailable as exc:
        report.status = "skipped"
        report.message = str(exc)
        report.stats["unavailable"] = True  # the gate's "nothing was checked: a tool is missing" (exit 4)
        return report
    binding = _binding(entry, report)
    if binding is None:
        return report
    ts = ctx.build(entry, config)
    name = run_name(entry.name, label, config.profile, ctx.variant)
    model = write_model(binding, ts, ctx.out_dir / "apalache" / name, check_properties=False,
                        root=ctx.out_dir)
    results = run_apalache(model.directory, model.module, model.cfg,
                           invariants=[operator_name(i) for i in model.invariants], length=ctx.z3_depth,
                           timeout=ctx.timeout_seconds)
    for pid, res in zip(model.invariants, results, strict=True):
        report.elapsed += res.elapsed
        if res.error:
            report.status = "error"
            report.message = res.error
            report.properties[pid] = PropertyVerdict(pid, NOT_CHECKED, res.error)
        elif res.violated:
            trace, _div = replay_spec_trace(ts, res.trace, f"apalache {pid}", binding.actions)
            if trace is not None:
                trace.property_id, trace.config = pid, label
            report.properties[pid] = PropertyVerdict(pid, VIOLATED, "Apalache counterexample", trace)
            report.status = VIOLATED if report.status != "error" else report.status
        else:
            report.properties[pid] = PropertyVerdict(pid, BOUNDED, f"holds up to depth {ctx.z3_depth} (Apalache)")
    save_traces(report, ts, ctx)
    return report
