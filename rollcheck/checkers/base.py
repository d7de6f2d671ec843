"""What a checker is to the gate: the :class:`Checker` protocol, its declarations (:class:`Capabilities`), its
:class:`CheckerOptions` and the :class:`Cell` it runs on.

The planner reads only these declarations and hooks, never a checker's name: a checker plugged in through the
``rollcheck.checkers`` entry points is planned, run and reported like a built-in one.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, Self, runtime_checkable

from rollcheck.checkers.inputs import CellInputs, Probe, options_values, python_version
from rollcheck.checkers.report import UNKNOWN, CheckContext, CheckerReport, Status
from rollcheck.core.errors import UserError
from rollcheck.core.transition import ProtocolEntry
from rollcheck.runtime.userinput import positive_number, whole_number


@dataclass(frozen=True)
class Cell:
    """One checker on one protocol x config x profile (x broken variant): the unit the gate runs."""

    entry: ProtocolEntry
    label: str
    config: Any
    checker: str
    variant: str | None = None
    subdir: str = ""  # under the run's output directory (the gate's broken variants go under mutants/)
    # The checker compares its own copy of the rules with the system under test and gives no property a
    # verdict: under a broken variant such a cell must agree, not kill.
    differential_only: bool = False
    # The checker's own per-cell settings (CellSpec.settings), which only it interprets.
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.entry.name, self.label, self.config.profile, self.checker)

    @property
    def size_key(self) -> tuple[str, str, str, str | None]:
        return (self.entry.name, self.label, self.config.profile, self.variant)

    @property
    def name(self) -> str:
        return "/".join((self.entry.name, self.label, self.config.profile, self.checker)
                        + ((self.variant,) if self.variant else ()))


@dataclass(frozen=True)
class Placement:
    """Where a cell stands in the plan, for the checker to choose its settings (:meth:`Checker.cell_spec`)."""

    tier: str = ""
    gate_config: bool = False  # one of the protocol's gate configs
    ci_config: bool = False  # one of the ci tier's ci configs
    story: bool = False  # a story config (ProtocolEntry.story_configs)
    ci_configs_planned: bool = False  # the protocol has ci configs in this plan
    variant: bool = False  # a broken variant's cell (the checker is to kill it)
    compare_only: bool = False  # under a broken variant, to compare (Capabilities.compares_under_variants)


@dataclass(frozen=True)
class CellSpec:
    differential_only: bool = False
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Capabilities:
    """What the planner and the cell runner need to know about a checker."""

    # Sizing: which configs of a protocol the checker runs on (every checker runs on the gate configs).
    ci_configs_only: bool = False  # in the ci tier, only on the ci configs (it costs the most per state)
    beside_ci_configs_only: bool = False  # on the ci configs too where a ci_configs_only checker runs there
    ci_configs: bool = False  # on the ci tier's ci configs too
    ci_stories: bool = False  # on the story configs in the ci tier too (the nightly tier runs every checker there)
    conform_configs: bool = False  # on the conformance-only configs (ProtocolEntry.conform_configs) too
    # Once per protocol: on its first gate config only, under ``profiles`` only (None: every profile). For a checker
    # whose cells name their own scenarios (the cluster runs), not a config's states.
    once_per_protocol: bool = False
    profiles: frozenset[str] | None = None
    # Running.
    sizes_cells: bool = False  # its complete count is the cell's size, which needs_size checkers read
    needs_size: bool = False  # reads the size of the same cell (CheckContext.known_sizes) before it runs
    in_driver: bool = False  # runs in the driver process, one cell at a time (a shared session)
    # Tiers: the tiers that run it by default, and on broken variants.
    tiers: frozenset[str] = frozenset({"ci", "nightly"})
    mutant_tiers: frozenset[str] = frozenset()  # the tiers that run it on every broken variant
    mutant_rank: int = 0  # its place among the checkers of broken variants, cheapest first
    # Under every broken variant (and every profile of it), a differential_only cell: its own copy of the rules
    # against the variant where the variant steps otherwise than the reference.
    compares_under_variants: bool = False
    # Folders it writes under the run's output directory (beside traces/, every checker's): the gate checks them
    # for planted links before a run and never lets --export-tests write into them.
    out_dirs: tuple[str, ...] = ()

    @property
    def kills_variants(self) -> bool:
        return bool(self.mutant_tiers)


@dataclass(frozen=True)
class Key:
    """One gate config key a checker reads: in the [gate] table or in its options table."""

    name: str
    table: Literal["gate", "options"] = "options"
    kind: Literal["whole", "positive", "switch", "text"] = "whole"
    least: int = 0  # a whole number's least value

    def check(self, value: Any, where: str) -> None:
        if self.kind == "switch" and not isinstance(value, bool):
            raise UserError(f"{where} must be true or false, not {value!r}")
        if self.kind == "whole":
            whole_number(value, where, self.least)
        elif self.kind == "positive":
            positive_number(value, where)

    def convert(self, value: Any) -> Any:
        return int(value) if self.kind == "whole" else float(value) if self.kind == "positive" else value


@dataclass(frozen=True)
class CheckerOptions:
    """A checker's settings from the gate config: a frozen dataclass whose fields are named as its keys
    (``KEYS``), each with its default. ``validate`` checks a config's values; ``read`` takes the run's."""

    KEYS: ClassVar[tuple[Key, ...]] = ()
    # Per tier, the values its default gate config gives some of them (a config file's values win).
    TIER_DEFAULTS: ClassVar[Mapping[str, Mapping[str, Any]]] = {}

    @classmethod
    def validate(cls, gate: Mapping[str, Any], options: Mapping[str, Any], where: str) -> None:
        for key in cls.KEYS:
            table, prefix = (gate, "") if key.table == "gate" else (options, "options.")
            if key.name in table:
                key.check(table[key.name], f"{where}: {prefix}{key.name}")

    @classmethod
    def read(cls, values: Mapping[str, Any]) -> Self:
        """The options of a run (``CheckContext.options``: its keys already validated), defaults elsewhere."""
        mine = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k.name: k.convert(values[k.name]) for k in cls.KEYS if k.name in mine and k.name in values})


@runtime_checkable
class Checker(Protocol):
    """A checker kind, registered by name in the ``rollcheck.checkers`` entry-point group."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...  # one line

    @property
    def order(self) -> int: ...  # its place in reports and tiers

    @property
    def exhaustive(self) -> bool: ...  # its "holds" covers the bounded space: its counts are compared

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def options(self) -> type[CheckerOptions]: ...

    def available(self) -> str | None:
        """None when it can be planned here, else why not (its module is missing)."""

    def tool_problem(self) -> str | None:
        """None when its external tool runs here too, else why not (Java, a jar, a binary missing)."""

    def check_selected(self, values: Mapping[str, Any], where: str) -> None:
        """The checks a gate config needs only when this checker is selected (a reachable Spark master)."""

    def cell_spec(self, placement: Placement) -> CellSpec:
        """The cell's differential_only flag and settings where the planner places it."""

    def rerun(self, report: CheckerReport, values: Mapping[str, Any]) -> str | None:
        """The command that runs this one cell again (None: the gate's own, for this checker alone)."""

    def run(self, cell: Cell, ctx: CheckContext) -> CheckerReport: ...


def module_present(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


class CheckerBase:
    """Defaults for the :class:`Checker` hooks: a checker available where ``module`` imports, with no tool,
    no per-cell settings and the gate's own rerun command; for the gate's store of results
    (:mod:`rollcheck.gate.cache`), every protocol content group read, every option of its own, the run's seed,
    time limit and cores, and not deterministic (never stored) unless ``deterministic`` says so."""

    name: str = ""
    description: str = ""
    order: int = 1000
    exhaustive: bool = False
    module: str = ""  # the module whose presence makes it available
    capabilities: Capabilities = Capabilities()
    options: type[CheckerOptions] = CheckerOptions
    # The same inputs (:meth:`inputs`) give the same report: the gate may store its results and reuse them.
    deterministic: bool = False

    def available(self) -> str | None:
        if self.module and not module_present(self.module):
            return f"{self.name} is not installed (its Python package is missing)"
        return None

    def tool_problem(self) -> str | None:
        return None

    def check_selected(self, values: Mapping[str, Any], where: str) -> None:
        return None

    def cell_spec(self, placement: Placement) -> CellSpec:
        return CellSpec(differential_only=placement.compare_only)

    def rerun(self, report: CheckerReport, values: Mapping[str, Any]) -> str | None:
        return None

    def run(self, cell: Cell, ctx: CheckContext) -> CheckerReport:
        raise NotImplementedError

    def inputs(self, cell: Cell, ctx: CheckContext) -> CellInputs:
        """What the cell's result depends on beside the engine, its config, profile, variant, settings and this
        checker's name and module (the gate adds those): by default every content group of its protocol, every
        option of its own, the run's seed, time limit and cores, and the Python that runs it."""
        return self.declare(ctx, reads=None, seed=True, timeout=True, cores=True)

    def declare(self, ctx: CheckContext, *, reads: frozenset[str] | None, tools: Mapping[str, Probe] | None = None,
                paths: tuple[Any, ...] = (), seed: bool = False, timeout: bool = False, cores: bool = False,
                **values: Any) -> CellInputs:
        """A :class:`CellInputs` of this checker: its options (``CheckerOptions.read`` of the run's), the run's
        seed, time limit and cores where they change its result, ``values`` and ``tools`` beside Python's
        version; ``reads`` None: every content group."""
        own: dict[str, Any] = {"options": options_values(self.options.read(ctx.options)), **values}
        if seed:
            own["seed"] = ctx.seed
        if timeout:
            own["timeout_seconds"] = ctx.timeout_seconds
        if cores:
            own["cores"] = ctx.cores
        why = "" if self.deterministic else f"{self.name} does not declare its results deterministic"
        base = CellInputs(values=own, tools={"python": python_version, **(tools or {})}, paths=tuple(paths),
                          deterministic=self.deterministic, why_not=why)
        return base if reads is None else dataclasses.replace(base, reads=reads)

    def cacheable(self, report: CheckerReport) -> bool:
        """Whether this result may be stored: see :func:`reusable`."""
        return reusable(report)


def reusable(report: CheckerReport) -> bool:
    """A result that the same inputs give again: not an error, not skipped for a tool missing here, no property
    the tool gave up on (a solver's time budget, which depends on the machine)."""
    if report.status == Status.ERROR or report.stats.get("unavailable"):
        return False
    return not any(v.status == UNKNOWN for v in report.properties.values())


def cell_where(report: CheckerReport) -> str:
    """``PROTOCOL --config C --profile P`` of a report, shell-quoted, for rerun commands."""
    return f"{shlex.quote(report.protocol)} --config {shlex.quote(report.config)} --profile {report.profile}"
