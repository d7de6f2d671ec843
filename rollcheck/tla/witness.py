"""Witnesses checked by TLC: each as a negated invariant.

TLC has no "sometimes" check, but a witness W is reached exactly when the invariant ``~W`` is violated,
and TLC's counterexample is then a trace into the story. TLC stops at the first violation, so the
witnesses are checked by successive runs: every run checks the negations of the witnesses not reached yet
(``Witness_FEAT_W1 == ~FEAT_W1`` in ``MC.tla``), the one it reports is reached and dropped, and a run
that completes with no violation proves the rest vacuous on this config. With every witness reachable
that is one short run per witness (each stops at its story); only a vacuous witness costs a complete run.
The safety properties are not checked in these runs (the main TLC run does that).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.core.transition import TransitionSystem
from rollcheck.tla.binding import SpecBinding, operator_name, write_model
from rollcheck.tla.tlc import TraceStep, run_tlc

PREFIX = "Witness_"


@dataclass
class WitnessRuns:
    """What TLC found: each witness reached (with the trace TLC printed into it) or vacuous."""

    reached: dict[str, list[TraceStep]] = field(default_factory=dict)
    vacuous: list[str] = field(default_factory=list)
    error: str = ""  # a run failed: the witnesses in neither list were not decided
    runs: int = 0
    elapsed: float = 0.0

    def depth(self, witness_id: str) -> int:
        """The depth (steps from an initial state) of the state TLC reached the witness in."""
        return len(self.reached[witness_id]) - 1


def check_witnesses(binding: SpecBinding, ts: TransitionSystem[Any], directory: Path, witness_ids: Sequence[str],
                    *, timeout: float, workers: int,
                    progress: Callable[[str], None] | None = None) -> WitnessRuns:
    """Decide every witness in ``witness_ids`` with TLC on ``ts``'s config (its variant included)."""
    out = WitnessRuns()
    remaining = list(witness_ids)
    while remaining:
        if progress:
            progress(f"witnesses: {len(remaining)} to reach ({', '.join(remaining)})")
        negations = {PREFIX + operator_name(w): w for w in remaining}
        definitions = "\n".join(f"{name} == ~{operator_name(w)}" for name, w in negations.items())
        model = write_model(binding, ts, directory, only={}, extra_definitions=definitions,
                            check_properties=False, extra_invariants=tuple(negations))
        res = run_tlc(model.directory, model.module, model.cfg, timeout=timeout, workers=workers)
        out.runs += 1
        out.elapsed += res.elapsed
        if res.error:
            out.error = res.error
            return out
        reached = negations.get(res.violated or "")
        if reached is None:  # a complete run: no remaining witness holds in any reachable state
            out.vacuous = remaining
            return out
        out.reached[reached] = res.trace
        remaining.remove(reached)
    return out
