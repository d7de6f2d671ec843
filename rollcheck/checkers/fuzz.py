"""A fuzzing round (the nightly tier): a Hypothesis campaign of ``options.fuzz_minutes`` with an example
database under the output directory (:mod:`rollcheck.fuzzing.fuzz`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from rollcheck.checkers.base import Capabilities, Cell, CheckerBase, cell_where
from rollcheck.checkers.fuzzoptions import FuzzOptions
from rollcheck.checkers.inputs import CellInputs
from rollcheck.checkers.report import CheckContext, CheckerReport


class FuzzChecker(CheckerBase):
    name = "fuzz"
    description = "a fuzzing round (Hypothesis campaign)"
    order = 80
    module = "hypothesis"
    capabilities = Capabilities(tiers=frozenset({"nightly"}), out_dirs=("fuzz",))
    options = FuzzOptions

    def rerun(self, report: CheckerReport, values: Mapping[str, Any]) -> str:
        return f"rollcheck fuzz {cell_where(report)} --minutes 1"

    def run(self, cell: Cell, ctx: CheckContext) -> CheckerReport:
        from rollcheck.fuzzing.fuzz import check_fuzz

        return check_fuzz(cell.entry, cell.label, cell.config, ctx)

    def inputs(self, cell: Cell, ctx: CheckContext) -> CellInputs:
        inputs = self.declare(ctx, reads=None, seed=True)
        return dataclasses.replace(inputs, deterministic=False,
                                   why_not="a campaign of a time budget: how far it gets depends on the machine")


CHECKER = FuzzChecker()
