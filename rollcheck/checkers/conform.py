"""Spec/reference conformance: spec traces on the reference, reference traces in TLC, and equal reachable
sets. A config larger than ``options.conform_max_states`` (counted by the explorer of the same run when it
ran first) is skipped with the reason."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollcheck.checkers.base import Capabilities, Cell, CheckerBase, CheckerOptions, Key, cell_where
from rollcheck.checkers.inputs import CellInputs, canonical, java_version
from rollcheck.checkers.report import CheckContext, CheckerReport, Status
from rollcheck.checkers.specbinding import TLA_READS, binding_or_skip, tla_tools_problem, tlc_jar
from rollcheck.core.transition import ProtocolEntry
from rollcheck.runtime.rundir import run_name

CONFORM_MAX_STATES = 100_000  # conformance dumps and compares every state: larger configs are skipped


@dataclass(frozen=True)
class ConformOptions(CheckerOptions):
    KEYS = (Key("conform_max_states"), Key("conform_traces", least=1), Key("conform_depth", least=1))
    conform_max_states: int = CONFORM_MAX_STATES
    conform_traces: int = 30
    conform_depth: int = 25


def check_conform(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    from rollcheck.explore.explorer import ExploreOptions, explore
    from rollcheck.tla.conformance import conform

    report = CheckerReport("conform", entry.name, label, config.profile)
    binding = binding_or_skip(entry, report)
    if binding is None:
        return report
    opts = ConformOptions.read(ctx.options)
    ts = ctx.build(entry, config)
    limit = opts.conform_max_states
    size = ctx.known_sizes.get((entry.name, label, config.profile, ctx.variant))
    if size is None:
        size = explore(ts, ExploreOptions(max_states=limit + 1, stop_at_first=False)).distinct_states
    if size > limit:
        report.status = Status.SKIPPED
        report.message = (f"more than {limit} states: run `rollcheck conform {entry.name} --config small` "
                          "(or raise conform_max_states)")
        return report
    name = run_name(entry.name, label, config.profile, ctx.variant)
    rep = conform(binding, ts, ts, ctx.out_dir / "conform" / name, config_name=label,
                  traces=opts.conform_traces, depth=opts.conform_depth,
                  seed=ctx.seed, timeout=ctx.timeout_seconds, build=entry.build,
                  domain_bases=tuple(entry.configs.values()))
    report.elapsed = rep.elapsed
    report.stats = rep.to_json()
    if rep.error:
        report.status = Status.ERROR
        report.message = rep.error
    elif rep.divergences:
        # The spec and the reference disagree: the gate reports it as a disagreement between checkers.
        report.status = Status.DIVERGED
        report.message = "spec and reference diverge: " + "; ".join(str(d) for d in rep.divergences[:3])
    return report


class ConformChecker(CheckerBase):
    name = "conform"
    description = "spec <-> reference trace conformance"
    order = 60
    module = "rollcheck.tla.conformance"
    # A broken variant shows as a divergence (the spec is the reference's copy), not a violation: no killer.
    capabilities = Capabilities(ci_configs_only=True, conform_configs=True, needs_size=True, out_dirs=("conform",))
    options = ConformOptions

    def tool_problem(self) -> str | None:
        return tla_tools_problem()

    def rerun(self, report: CheckerReport, values: Mapping[str, Any]) -> str:
        return f"rollcheck conform {cell_where(report)}"

    def run(self, cell: Cell, ctx: CheckContext) -> CheckerReport:
        return check_conform(cell.entry, cell.label, cell.config, ctx)

    deterministic = True  # its random traces come from the run's seed

    def inputs(self, cell: Cell, ctx: CheckContext) -> CellInputs:
        # Every config of the protocol: the domain check probes the spec with each of them (domain_bases).
        return self.declare(ctx, reads=TLA_READS, seed=True, timeout=True,
                            tools={"tlc": tlc_jar, "java": java_version},
                            domain_bases=canonical(tuple(cell.entry.configs.values())))


CHECKER = ConformChecker()
