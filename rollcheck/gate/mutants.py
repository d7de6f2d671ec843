"""Mutation score: every broken variant of every protocol through the gate's checkers.

A variant (a plausible real bug: a skipped range check, a non-conditional ZooKeeper write, ...) is
*killed* by a checker when that checker reports a violated property on it, or a witness it makes vacuous
(a liveness bug blocks a story). Every variant must be killed by at least one checker; the score per
checker shows how strong each checker is on its own.

A cell whose checker did not run on the variant (``skipped``: not installed, no encoding, too many states;
or ``error``) neither kills nor lets survive: a variant no checker ran on is *not checked*, never a survivor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rollcheck.checkers import (
    VACUOUS,
    VIOLATED,
    CheckContext,
    CheckerReport,
    Placement,
    Status,
    available_checkers,
    get_checker,
    unavailable,
)
from rollcheck.core.registry import get_protocol
from rollcheck.core.transition import ProtocolEntry
from rollcheck.gate.cellrun import Cell, CellResult, run_cells

__all__ = ["Kill", "MutantOutcome", "disagrees", "mutant_cells", "outcomes_from", "run_mutants", "scores",
           "unavailable"]


@dataclass
class Kill:
    checker: str
    killed: bool
    properties: list[str]
    elapsed: float
    status: Status
    message: str = ""
    disagrees: bool = False  # the checker's own copy of the rules stepped otherwise (:func:`disagrees`)

    @property
    def checked(self) -> bool:
        """The checker ran on the variant: a kill, or a run that ended with a verdict (not skipped, no error)."""
        return self.killed or self.status not in NOT_RUN

    def to_json(self) -> dict[str, Any]:
        return {"checker": self.checker, "killed": self.killed, "checked": self.checked,
                "properties": self.properties, "elapsed_seconds": round(self.elapsed, 3), "status": self.status,
                "message": self.message, "disagrees": self.disagrees}


# Cell statuses in which the checker gave no verdict on the variant.
NOT_RUN = frozenset({Status.SKIPPED, Status.ERROR})


def disagrees(report: CheckerReport) -> bool:
    """A variant cell whose checker's own copy of the rules (the Z3 relation, the TLA+ spec) stepped otherwise
    than the reference under the variant: a disagreement (exit 3) whether or not the variant was caught, in
    the gate as in ``rollcheck mutants``."""
    return report.status == Status.DIVERGED


@dataclass
class MutantOutcome:
    protocol: str
    variant: str
    story: str
    expect: tuple[str, ...]
    config: str
    kills: list[Kill] = field(default_factory=list)

    @property
    def killed(self) -> bool:
        return any(k.killed for k in self.kills)

    @property
    def checked(self) -> bool:
        """At least one checker ran on it: not killed then means survived."""
        return any(k.checked for k in self.kills)

    @property
    def first_killer(self) -> Kill | None:
        killers = [k for k in self.kills if k.killed]
        return min(killers, key=lambda k: k.elapsed) if killers else None

    def to_json(self) -> dict[str, Any]:
        first = self.first_killer
        return {"protocol": self.protocol, "variant": self.variant, "story": self.story,
                "expect": list(self.expect), "config": self.config, "killed": self.killed,
                "checked": self.checked, "first_killed_by": first.checker if first else None,
                "kills": [k.to_json() for k in self.kills]}


def mutant_cells(protocols: Sequence[str], checkers: Sequence[str],
                 lookup: Callable[[str], ProtocolEntry] = get_protocol, subdir: str = "", *,
                 compare_only: bool = False) -> list[Cell]:
    """One cell per broken variant x checker (those this machine has), each on the variant's own config;
    ``compare_only``: cells that compare the checker's own rules under each variant (Placement.compare_only)."""
    present = set(available_checkers())
    placement = Placement(variant=True, compare_only=compare_only)
    specs = [(name, get_checker(name).cell_spec(placement)) for name in checkers if name in present]
    cells: list[Cell] = []
    for proto in protocols:
        entry = lookup(proto)
        for v in entry.variants:
            cells.extend(Cell(entry, v.config, entry.configs[v.config], name, v.id, subdir, spec.differential_only,
                              spec.settings) for name, spec in specs)
    return cells


def outcomes_from(results: Sequence[CellResult]) -> list[MutantOutcome]:
    """The mutation matrix from the variant cells' results (one outcome per variant, in plan order)."""
    outcomes: dict[tuple[str, str], MutantOutcome] = {}
    for res in results:
        cell, report = res.cell, res.report
        assert cell.variant is not None
        key = (cell.entry.name, cell.variant)
        if key not in outcomes:
            v = cell.entry.variant(cell.variant)
            outcomes[key] = MutantOutcome(cell.entry.name, v.id, v.story, v.expect, v.config)
        # A witness the variant made vacuous (a story a complete search no longer reaches: the bug blocks the
        # protocol, as a liveness bug does) kills it as a violated property does.
        bad = [pid if verdict.status == VIOLATED else f"{pid} (vacuous)"
               for pid, verdict in report.properties.items() if verdict.status in (VIOLATED, VACUOUS)]
        outcomes[key].kills.append(Kill(cell.checker, bool(bad), bad, res.seconds, report.status, report.message,
                                        disagrees(report)))
    return list(outcomes.values())


def run_mutants(protocols: Sequence[str], checkers: Sequence[str], ctx: CheckContext,
                progress: Callable[[str], None] | None = None,
                lookup: Callable[[str], ProtocolEntry] = get_protocol, parallel: int = 1) -> list[MutantOutcome]:
    """Every broken variant through ``checkers``; ``parallel`` cells at once (see :mod:`rollcheck.gate.cellrun`)."""
    cells = mutant_cells(protocols, checkers, lookup)
    return outcomes_from(run_cells(cells, ctx, parallel=parallel, progress=progress))


def scores(outcomes: Sequence[MutantOutcome]) -> dict[str, Any]:
    """Overall and per-checker mutation scores (killed / run: a cell that did not run is not counted); the
    survivors (checked, not killed) and the variants no checker ran on (``not_checked``)."""
    per: dict[str, list[int]] = {}
    for o in outcomes:
        for k in o.kills:
            ran_killed = per.setdefault(k.checker, [0, 0])
            ran_killed[0] += int(k.checked)
            ran_killed[1] += int(k.killed)
    total = len(outcomes)
    killed = sum(o.killed for o in outcomes)
    return {
        "mutants": total,
        "killed": killed,
        "score": round(killed / total, 4) if total else None,
        "per_checker": {c: {"run": r, "killed": kd, "score": round(kd / r, 4) if r else None}
                        for c, (r, kd) in per.items()},
        "survivors": [f"{o.protocol}:{o.variant}" for o in outcomes if o.checked and not o.killed],
        "not_checked": [f"{o.protocol}:{o.variant}" for o in outcomes if not o.checked],
    }

