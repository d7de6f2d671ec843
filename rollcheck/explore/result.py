"""What an exploration returns: its counts, its levels, each property's outcome and the shortest traces.

Both engines (the local explorer and the Spark engine, which runs the same loop) return an
:class:`ExplorationResult`; ``to_json`` is the summary ``rollcheck explore --json`` prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rollcheck.core.traces import Trace


@dataclass
class Violation:
    property_id: str
    kind: str  # "invariant", "step" or "graph"
    description: str
    depth: int  # number of transitions in the counterexample
    trace: Trace

    def to_json(self) -> dict[str, Any]:
        return {
            "property": self.property_id,
            "kind": self.kind,
            "description": self.description,
            "length": self.depth,
            "actions": [repr(a) for a in self.trace.actions],
        }


@dataclass
class LevelStats:
    level: int  # BFS level just completed (the depth of the states it found)
    frontier: int  # new states found at this level
    distinct: int  # distinct states so far
    generated: int  # transitions generated so far
    elapsed: float

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "frontier": self.frontier,
            "distinct": self.distinct,
            "generated": self.generated,
            "elapsed": round(self.elapsed, 4),
        }


@dataclass
class PropertyOutcome:
    id: str
    kind: str
    description: str
    source: str
    # "holds", "holds up to depth K" (a bounded run), "violated", "not checked"; a witness: "reached at
    # depth D", "vacuous" (a complete run never reached it), "not reached up to depth K"
    status: str

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ExplorationResult:
    protocol: str
    config: str
    engine: str
    distinct_states: int
    generated_states: int
    depth: int
    complete: bool
    violations: list[Violation]
    levels: list[LevelStats]
    elapsed: float
    properties: list[PropertyOutcome]
    terminal_states: int = 0
    variant: str | None = None
    profile: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    witness_traces: list[Violation] = field(default_factory=list)  # the shortest path to each reached witness

    @property
    def violated_ids(self) -> set[str]:
        return {v.property_id for v in self.violations}

    @property
    def vacuous(self) -> list[str]:
        """The witnesses a complete exploration never reached (the run fails: the story never happened)."""
        return [p.id for p in self.properties if p.kind == "witness" and p.status == "vacuous"]

    @property
    def ok(self) -> bool:
        return not self.violations and not self.vacuous

    def to_json(self) -> dict[str, Any]:
        rate = self.distinct_states / self.elapsed if self.elapsed > 0 else None
        return {
            "protocol": self.protocol,
            "config": self.config,
            "profile": self.profile,
            "variant": self.variant,
            "engine": self.engine,
            "distinct_states": self.distinct_states,
            "generated_states": self.generated_states,
            "depth": self.depth,
            "complete": self.complete,
            "terminal_states": self.terminal_states,
            "violations": [v.to_json() for v in self.violations],
            "properties": [p.to_json() for p in self.properties],
            "vacuous": self.vacuous,
            "levels": [lv.to_json() for lv in self.levels],
            "elapsed_seconds": round(self.elapsed, 3),
            "distinct_states_per_second": round(rate, 1) if rate else None,
            **self.extra,
        }


ProgressFn = Callable[[LevelStats], None]
