"""The Spark explorer (embedded local mode by default): it must reproduce the local explorer's counts exactly.
Its cells run in the driver process, one at a time: they share the one Spark session (one JVM)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollcheck.checkers.base import Capabilities, Cell, CheckerBase, CheckerOptions, Key, cell_where
from rollcheck.checkers.explore import EXPLORER_READS, complete_or_violated
from rollcheck.checkers.inputs import CellInputs, java_version, package_version
from rollcheck.checkers.report import CheckContext, CheckerReport, Status, from_exploration, save_traces
from rollcheck.core.errors import UserError
from rollcheck.core.transition import ProtocolEntry
from rollcheck.runtime.rundir import run_name

# Above this many states (when the local explorer of the same run has counted them) the Spark engine is
# skipped: the gate sends every level to Spark (``options.spark_min``, default 0) to exercise the executors'
# path, which costs the local engine's time plus ~0.15 s a level on 2 cores; every gate config fits.
# ``options.spark_max_states`` changes it (0: no limit).
SPARK_MAX_STATES = 250_000


@dataclass(frozen=True)
class SparkOptions(CheckerOptions):
    KEYS = (Key("spark_master", "gate", "text"), Key("spark_partitions", "gate", least=1),
            Key("spark_max_states"), Key("spark_min"))
    spark_master: str = "local[*]"
    spark_partitions: int | None = None
    spark_max_states: int = SPARK_MAX_STATES
    spark_min: int = 0


def check_spark(entry: ProtocolEntry, label: str, config: Any, ctx: CheckContext) -> CheckerReport:
    from rollcheck.explore.explorer import ExploreOptions
    from rollcheck.spark.explorer import SparkOptions as EngineOptions
    from rollcheck.spark.explorer import explore_spark

    opts = SparkOptions.read(ctx.options)
    limit = opts.spark_max_states
    size = ctx.known_sizes.get((entry.name, label, config.profile, ctx.variant))
    if limit > 0 and size is not None and size > limit:
        return CheckerReport("spark", entry.name, label, config.profile, status=Status.SKIPPED,
                             message=f"{size} states, more than spark_max_states = {limit}: run `rollcheck explore "
                                     f"{entry.name} --config {label} --engine spark` (or raise spark_max_states)")
    name = run_name(entry.name, label, config.profile, ctx.variant)
    out = ctx.out_dir / "spark" / name
    result = explore_spark(entry.name, config,
                           ExploreOptions(config_name=label, variant=ctx.variant, checkpoint_dir=out,
                                          checkpoint_root=ctx.out_dir, stop_at_first=ctx.variant is not None,
                                          workers=ctx.cores),
                           EngineOptions(master=opts.spark_master, partitions=opts.spark_partitions,
                                         spark_min=opts.spark_min))
    report = from_exploration("spark", entry, label, config, result)
    save_traces(report, ctx.build(entry, config), ctx)
    return report


class SparkChecker(CheckerBase):
    name = "spark"
    description = "exhaustive BFS on Apache Spark"
    order = 20
    exhaustive = True
    module = "rollcheck.spark.explorer"
    capabilities = Capabilities(ci_configs_only=True, needs_size=True, in_driver=True,
                                tiers=frozenset({"ci", "nightly"}), mutant_tiers=frozenset({"nightly"}),
                                mutant_rank=50, out_dirs=("spark",))
    options = SparkOptions

    def check_selected(self, values: Mapping[str, Any], where: str) -> None:
        from rollcheck.spark.session import check_master

        master = values.get("spark_master", "local[*]")
        if not isinstance(master, str):
            raise UserError(f"{where}: 'spark_master' must be a string (a Spark master URL)")
        try:
            check_master(master)
        except UserError as exc:
            raise UserError(f"{where}: spark_master: {exc}") from None

    def rerun(self, report: CheckerReport, values: Mapping[str, Any]) -> str:
        return f"rollcheck explore {cell_where(report)} --engine spark"

    def run(self, cell: Cell, ctx: CheckContext) -> CheckerReport:
        return check_spark(cell.entry, cell.label, cell.config, ctx)

    deterministic = True

    def inputs(self, cell: Cell, ctx: CheckContext) -> CellInputs:
        return self.declare(ctx, reads=EXPLORER_READS, tools={"pyspark": package_version("pyspark"),
                                                              "java": java_version})

    def cacheable(self, report: CheckerReport) -> bool:
        return complete_or_violated(report)


CHECKER = SparkChecker()
