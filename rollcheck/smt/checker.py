"""The gate's Z3 adapter: BMC to ``ctx.z3_depth`` plus k-induction, one verdict per property id."""

from __future__ import annotations

import time
from typing import Any

from rollcheck.checkers import (
    BOUNDED,
    NOT_CHECKED,
    PROVED,
    UNKNOWN,
    VIOLATED,
    CheckContext,
    CheckerReport,
    PropertyVerdict,
    save_traces,
)
from rollcheck.smt.prove import prove, symbolic
from rollcheck.transition import ProtocolEntry
from rollcheck.z3interrupt import interruptible_z3


def check_z3(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    """Z3 on the encoded invariants and step properties; every other property of the protocol is NOT_CHECKED.
    Never exhaustive: "holds" means no violation within ``ctx.z3_depth`` steps."""
    t0 = time.perf_counter()
    ts = ctx.build(entry, config)
    report = CheckerReport("z3", entry.name, label, config.profile, exhaustive=False)
    if entry.z3 is None:
        report.status = "skipped"
        report.message = f"no Z3 encoding for {entry.name}"
        for p in ts.properties():
            report.properties[p.id] = PropertyVerdict(p.id, NOT_CHECKED, "no Z3 encoding")
        return report
    try:
        sym = symbolic(ts)
    except ValueError as exc:  # a config the encoding does not cover (e.g. features with multi_update)
        report.status = "skipped"
        report.message = f"Z3: {exc}"
        for p in ts.properties():
            report.properties[p.id] = PropertyVerdict(p.id, NOT_CHECKED, str(exc))
        return report
    encoded = sym.encoded()
    budget = max(1.0, ctx.timeout_seconds / max(1, len(encoded)))
    for p in ts.properties():
        if p.id not in encoded:
            report.properties[p.id] = PropertyVerdict(p.id, NOT_CHECKED, f"{p.kind} property: not encoded in Z3")
            continue
        if ctx.progress:
            ctx.progress(f"z3 {entry.name}/{label}/{config.profile}: {p.id}")
        with interruptible_z3():  # Ctrl-C during a long query ends the run now, not when Z3 returns
            res = prove(sym, p.id, ctx.z3_depth, budget)
        if res.status == "refuted":
            assert res.trace is not None
            res.trace.config = label
            res.trace.description = p.description
            verdict = PropertyVerdict(p.id, VIOLATED, f"{p.description} ({res.line})", res.trace)
        elif res.status == "proved":
            verdict = PropertyVerdict(p.id, PROVED, res.line)
        elif res.status == "checked":  # BMC found nothing but induction did not close: bounded, not "holds"
            verdict = PropertyVerdict(p.id, BOUNDED, f"holds up to depth {res.depth} ({res.line}; not proved)")
        else:
            verdict = PropertyVerdict(p.id, UNKNOWN, res.line)
        report.properties[p.id] = verdict
        report.stats[p.id] = res.to_json()
    report.status = VIOLATED if any(v.status == VIOLATED for v in report.properties.values()) else "ok"
    report.stats["depth"] = ctx.z3_depth
    report.elapsed = time.perf_counter() - t0
    save_traces(report, ts, ctx)
    return report
