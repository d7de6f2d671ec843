"""Apalache bounded model checking of every invariant of the TLA+ spec to ``z3_depth`` steps, when installed;
absent, every cell is skipped as unavailable (the gate's exit 4 when nothing else ran)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollcheck.checkers.base import Capabilities, Cell, CheckerBase, CheckerOptions, Key, cell_where
from rollcheck.checkers.inputs import CellInputs, file_digest, java_version
from rollcheck.checkers.report import (
    BOUNDED,
    NOT_CHECKED,
    VIOLATED,
    CheckContext,
    CheckerReport,
    PropertyVerdict,
    Status,
    save_traces,
)
from rollcheck.checkers.specbinding import TLA_READS, binding_or_skip
from rollcheck.core.errors import ToolUnavailable
from rollcheck.core.transition import ProtocolEntry
from rollcheck.runtime.rundir import run_name


@dataclass(frozen=True)
class ApalacheOptions(CheckerOptions):
    KEYS = (Key("z3_depth", "gate", least=1),)  # the bound of the run, shared with Z3's BMC
    z3_depth: int = 8


def check_apalache(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    from rollcheck.tla.apalache import find_apalache, run_apalache
    from rollcheck.tla.binding import operator_name, write_model
    from rollcheck.tla.conformance import replay_spec_trace

    report = CheckerReport("apalache", entry.name, label, config.profile)
    try:
        find_apalache()
    except ToolUnavailable as exc:
        report.status = Status.SKIPPED
        report.message = str(exc)
        report.stats["unavailable"] = True  # the gate's "nothing was checked: a tool is missing" (exit 4)
        return report
    binding = binding_or_skip(entry, report)
    if binding is None:
        return report
    depth = ApalacheOptions.read(ctx.options).z3_depth
    ts = ctx.build(entry, config)
    name = run_name(entry.name, label, config.profile, ctx.variant)
    model = write_model(binding, ts, ctx.out_dir / "apalache" / name, check_properties=False,
                        root=ctx.out_dir)
    results = run_apalache(model.directory, model.module, model.cfg,
                           invariants=[operator_name(i) for i in model.invariants], length=depth,
                           timeout=ctx.timeout_seconds)
    for pid, res in zip(model.invariants, results, strict=True):
        report.elapsed += res.elapsed
        if res.error:
            report.status = Status.ERROR
            report.message = res.error
            report.properties[pid] = PropertyVerdict(pid, NOT_CHECKED, res.error)
        elif res.violated:
            trace, _div = replay_spec_trace(ts, res.trace, f"apalache {pid}", binding.actions)
            if trace is not None:
                trace.property_id, trace.config = pid, label
            report.properties[pid] = PropertyVerdict(pid, VIOLATED, "Apalache counterexample", trace)
            report.status = Status.VIOLATED if report.status != Status.ERROR else report.status
        else:
            report.properties[pid] = PropertyVerdict(pid, BOUNDED, f"holds up to depth {depth} (Apalache)")
    save_traces(report, ts, ctx)
    return report


class ApalacheChecker(CheckerBase):
    name = "apalache"
    description = "Apalache bounded model checking (when installed)"
    order = 70
    module = "rollcheck.tla.apalache"
    options = ApalacheOptions
    capabilities = Capabilities(out_dirs=("apalache",))

    def tool_problem(self) -> str | None:
        from rollcheck.tla.apalache import find_apalache

        try:
            find_apalache()
        except ToolUnavailable as exc:
            return str(exc)
        return None

    def rerun(self, report: CheckerReport, values: Mapping[str, Any]) -> str:
        return f"rollcheck apalache {cell_where(report)}"

    def run(self, cell: Cell, ctx: CheckContext) -> CheckerReport:
        return check_apalache(cell.entry, cell.label, cell.config, ctx)

    deterministic = True

    def inputs(self, cell: Cell, ctx: CheckContext) -> CellInputs:
        return self.declare(ctx, reads=TLA_READS, timeout=True, tools={"apalache": apalache_version,
                                                                       "java": java_version})


def apalache_version() -> str:
    """The Apalache that runs: its launcher's and its jars' digests (``lib/`` beside ``bin/``)."""
    from rollcheck.tla.apalache import find_apalache

    try:
        binary = find_apalache().resolve()
    except ToolUnavailable as exc:
        return f"absent: {exc}"
    jars = sorted((binary.parent.parent / "lib").glob("*.jar"))
    return " ".join([f"{binary} {file_digest(binary)}", *(f"{j.name} {file_digest(j)}" for j in jars)])


CHECKER = ApalacheChecker()
