"""Z3: bounded model checking and k-induction on the protocol's Z3 encoding, and its relation against the
reference (the successor and decision differentials, :mod:`rollcheck.smt.checker`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollcheck.checkers.base import (
    Capabilities,
    Cell,
    CellSpec,
    CheckerBase,
    Placement,
    cell_where,
)
from rollcheck.checkers.inputs import DECISIONS as DECISION_RULES
from rollcheck.checkers.inputs import MODEL, PROPERTIES, REFERENCE, CellInputs, package_version
from rollcheck.checkers.report import CheckContext, CheckerReport
from rollcheck.checkers.z3options import DECISIONS, Z3Options, decisions

__all__ = ["CHECKER", "DECISIONS", "Z3Checker", "Z3Options", "decisions"]


class Z3Checker(CheckerBase):
    name = "z3"
    description = "Z3: bounded model checking and k-induction"
    order = 40
    module = "z3"
    # On every reachable state of the ci configs and of the story configs (the differential alone there) and
    # under every broken variant, so a change no property looks at is still a disagreement.
    capabilities = Capabilities(ci_configs=True, ci_stories=True, mutant_tiers=frozenset({"nightly"}),
                                mutant_rank=30, compares_under_variants=True)
    options = Z3Options

    def cell_spec(self, placement: Placement) -> CellSpec:
        if placement.compare_only:  # the variant's kill is another checker's; the decision rules the reference's
            return CellSpec(True, {DECISIONS: False})
        if placement.variant:
            return CellSpec(False, {DECISIONS: True})
        # The ci tier's ci and story configs: the successor differential alone (the proofs run on the gate
        # config); the decision differential depends on the profile alone: with ci configs, their cells run it.
        only = not placement.gate_config and (placement.ci_config or (placement.tier == "ci" and placement.story))
        return CellSpec(only, {DECISIONS: not placement.ci_configs_planned or placement.ci_config})

    def rerun(self, report: CheckerReport, values: Mapping[str, Any]) -> str:
        depth = values.get("z3_depth")
        return f"rollcheck prove {cell_where(report)}" + (f" --depth {depth}" if depth else "")

    def run(self, cell: Cell, ctx: CheckContext) -> CheckerReport:
        from rollcheck.smt.checker import check_z3

        return check_z3(cell.entry, cell.label, cell.config, ctx)

    deterministic = True  # a property the solver gave up on (its time budget) is UNKNOWN: never stored

    def inputs(self, cell: Cell, ctx: CheckContext) -> CellInputs:
        # The Z3 encoding and decision rules against the reference; the time limit sets each query's budget.
        return self.declare(ctx, reads=frozenset({REFERENCE, PROPERTIES, MODEL, DECISION_RULES}), timeout=True,
                            tools={"z3": package_version("z3-solver")})


CHECKER = Z3Checker()
