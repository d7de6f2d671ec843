"""Checkers as the gate sees them: one module per checker kind, one report shape for all.

A checker (:class:`~rollcheck.checkers.base.Checker`) declares what the planner needs to know (is it available
here, which configs and tiers it runs on, where it runs) and its ``Options``, and ``run(cell, context)`` returns
a :class:`CheckerReport`: a verdict per property id, counts that other exhaustive checkers must reproduce, and
counterexample traces. Checkers register through the ``rollcheck.checkers`` entry points
(:mod:`rollcheck.checkers.registry`). The gate compares reports; checkers never do.
"""

from rollcheck.checkers.base import (
    Capabilities,
    Cell,
    CellSpec,
    Checker,
    CheckerBase,
    CheckerOptions,
    Key,
    Placement,
)
from rollcheck.checkers.registry import (
    GROUP,
    all_checkers,
    available_checkers,
    checker_names,
    get_checker,
    tier_checkers,
    unavailable,
    variant_checkers,
)
from rollcheck.checkers.report import (
    BOUNDED,
    HOLDS,
    NOT_CHECKED,
    PROVED,
    REACHED,
    UNKNOWN,
    VACUOUS,
    VIOLATED,
    CheckContext,
    CheckerReport,
    PropertyVerdict,
    Status,
    Verdict,
    from_exploration,
    save_traces,
)

__all__ = [
    "BOUNDED", "GROUP", "HOLDS", "NOT_CHECKED", "PROVED", "REACHED", "UNKNOWN", "VACUOUS", "VIOLATED",
    "Capabilities", "Cell", "CellSpec", "CheckContext", "Checker", "CheckerBase", "CheckerOptions", "CheckerReport",
    "Key", "Placement", "PropertyVerdict", "Status", "Verdict", "all_checkers", "available_checkers",
    "checker_names", "from_exploration", "get_checker", "save_traces", "tier_checkers", "unavailable",
    "variant_checkers",
]
