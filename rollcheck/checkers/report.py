"""One report shape for every checker: a verdict per property id, counts that other exhaustive checkers must
reproduce, and counterexample traces. The gate compares reports; checkers never do."""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rollcheck.core.traces import Trace, format_trace, write_itf
from rollcheck.core.transition import ProtocolEntry, TransitionSystem, action_coverage

if TYPE_CHECKING:
    from rollcheck.explore.explorer import ExplorationResult


class Verdict(enum.StrEnum):
    """A checker's verdict on one property (a ``str``: reports and JSON carry the value)."""

    HOLDS = "holds"            # exhaustively checked on the bounded config (or to the stated depth)
    PROVED = "proved"          # proved for every depth (induction)
    VIOLATED = "violated"      # a counterexample exists (trace attached)
    NOT_CHECKED = "not checked"
    BOUNDED = "holds up to a depth"  # a bounded (incomplete) search found no violation: the message says the depth
    UNKNOWN = "unknown"
    REACHED = "reached"        # a witness: a reachable state satisfies it (the message says the depth)
    VACUOUS = "vacuous"        # a witness no reachable state satisfies: the config never tells its story


HOLDS, PROVED, VIOLATED = Verdict.HOLDS, Verdict.PROVED, Verdict.VIOLATED
NOT_CHECKED, BOUNDED, UNKNOWN = Verdict.NOT_CHECKED, Verdict.BOUNDED, Verdict.UNKNOWN
REACHED, VACUOUS = Verdict.REACHED, Verdict.VACUOUS


class Status(enum.StrEnum):
    """How one checker's run on one cell ended (a ``str``: reports and JSON carry the value)."""

    OK = "ok"
    VIOLATED = "violated"
    ERROR = "error"
    SKIPPED = "skipped"
    # The checker's own copy of the rules (the TLA+ spec, the Z3 relation) and the reference take different
    # steps somewhere: a disagreement, whatever the properties say.
    DIVERGED = "diverged"


@dataclass
class PropertyVerdict:
    id: str
    status: Verdict
    message: str = ""
    trace: Trace | None = None
    trace_path: str | None = None
    trace_text: str = ""

    def to_json(self, *, full: bool = False) -> dict[str, Any]:
        """Its JSON (``full``: with the counterexample's text too, which :meth:`from_json` restores)."""
        doc: dict[str, Any] = {"id": self.id, "status": self.status, "message": self.message,
                               "trace": self.trace_path}
        if full:
            doc["trace_text"] = self.trace_text
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> PropertyVerdict:
        """The verdict :meth:`to_json` wrote (its trace as the file it names: ``trace`` stays None)."""
        path = doc.get("trace")
        return cls(str(doc["id"]), Verdict(doc["status"]), str(doc.get("message", "")),
                   trace_path=None if path is None else str(path), trace_text=str(doc.get("trace_text", "")))


@dataclass
class CheckerReport:
    checker: str
    protocol: str
    config: str
    profile: str
    status: Status = Status.OK
    exhaustive: bool = False  # its "holds" means: no violation in the whole bounded state space
    properties: dict[str, PropertyVerdict] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)  # compared across exhaustive checkers
    stats: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    elapsed: float = 0.0
    # A result the gate took from its store instead of running the cell: the run it came from (run id, time,
    # commit, key, the seconds it took then). None: this run's own.
    cached: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.protocol, self.config, self.profile)

    def to_json(self, *, full: bool = False) -> dict[str, Any]:
        """Its JSON (``full``: each counterexample's text too); :meth:`from_json` reads it back."""
        doc = {
            "checker": self.checker, "protocol": self.protocol, "config": self.config,
            "profile": self.profile, "status": self.status, "exhaustive": self.exhaustive,
            "message": self.message, "elapsed_seconds": round(self.elapsed, 3),
            "counts": self.counts, "stats": self.stats,
            "properties": [v.to_json(full=full) for v in self.properties.values()],
        }
        if self.cached is not None:
            doc["cached"] = self.cached
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> CheckerReport:
        """The report :meth:`to_json` wrote: verdicts, counts, stats, trace paths (and texts, from a ``full``
        document); the traces themselves stay in their files (``PropertyVerdict.trace`` None)."""
        verdicts = [PropertyVerdict.from_json(v) for v in doc.get("properties", [])]
        cached = doc.get("cached")
        return cls(str(doc["checker"]), str(doc["protocol"]), str(doc["config"]), str(doc["profile"]),
                   status=Status(doc["status"]), exhaustive=bool(doc.get("exhaustive", False)),
                   properties={v.id: v for v in verdicts}, counts=dict(doc.get("counts", {})),
                   stats=dict(doc.get("stats", {})), message=str(doc.get("message", "")),
                   elapsed=float(doc.get("elapsed_seconds", 0.0)),
                   cached=dict(cached) if isinstance(cached, Mapping) else None)


# Checker settings a hand-built context may still name as keywords (tests, benchmarks): the [gate] keys go
# into ``options`` and the per-cell ones into ``settings``, where the checkers read them.


@dataclass
class CheckContext:
    """What every checker of one run shares: where to write, the run's seed and time limit, the gate
    config's checker keys and options (``options``: each checker reads its own through its ``Options``), the
    cell's settings (``settings``: the planner's, for the checker to interpret) and the cell's variant."""

    out_dir: Path
    seed: int = 0
    timeout_seconds: float = 600.0
    options: Mapping[str, Any] = field(default_factory=dict)
    progress: Callable[[str], None] | None = None
    variant: str | None = None  # check this broken variant instead of the reference (mutation runs)
    # The cell compares the checker's own copy of the rules with the system under test and gives no property
    # a verdict (under a broken variant it must agree, not kill).
    differential_only: bool = False
    settings: Mapping[str, Any] = field(default_factory=dict)
    # Distinct states of each (protocol, config, profile, variant) the explorer finished in this run, so a
    # later checker that only needs the size (conform's limit) does not explore it again.
    known_sizes: dict[tuple[str, str, str, str | None], int] = field(default_factory=dict)
    # The cores one cell may use (explorer worker processes, TLC -workers): all of them in a sequential run,
    # a share when the gate runs cells in parallel.
    cores: int = field(default_factory=lambda: os.cpu_count() or 1)

    @classmethod
    def for_gate(cls, out_dir: Path, context: Mapping[str, Any]) -> CheckContext:
        """The context of a gate run: ``context`` is the gate config's (its [gate] keys and its options table);
        every key but the run's own (seed, timeout_seconds) is a checker's, read through its ``Options``."""
        own = {k: context[k] for k in ("seed", "timeout_seconds") if k in context}
        options = {k: v for k, v in context.items() if k not in own and k != "options"}
        options.update(context.get("options") or {})
        return cls(out_dir=out_dir, options=options, **own)

    def build(self, entry: ProtocolEntry, config: Any) -> TransitionSystem[Any]:
        """The system every checker checks: the reference, or the variant under test."""
        return entry.build(config) if self.variant is None else entry.variant(self.variant).system(config)

    def trace_dir(self, report: CheckerReport) -> Path:
        name = f"{report.protocol}-{report.config}-{report.profile}-{report.checker}"
        if self.variant:
            name = f"{self.variant}/{name}"
        return self.out_dir / "traces" / name


def save_traces(report: CheckerReport, ts: TransitionSystem[Any], ctx: CheckContext) -> None:
    """Write every counterexample of ``report`` as ITF under the output directory."""
    for verdict in report.properties.values():
        if verdict.trace is None:
            continue
        path = ctx.trace_dir(report) / f"{verdict.id}.itf.json"
        verdict.trace.config = verdict.trace.config or report.config  # so that `rollcheck replay` finds it
        write_itf(path, verdict.trace, ts, root=ctx.out_dir)
        verdict.trace_path = str(path)
        verdict.trace_text = format_trace(verdict.trace, ts)


def from_exploration(checker: str, entry: ProtocolEntry, label: str, config: Any,
                     result: ExplorationResult) -> CheckerReport:
    report = CheckerReport(checker, entry.name, label, config.profile, exhaustive=result.complete)
    by_id = {v.property_id: v for v in result.violations}
    for p in result.properties:
        v = by_id.get(p.id)
        status: Verdict
        if v:
            status, message = VIOLATED, v.description
        elif p.kind == "witness" and p.status.startswith("reached"):
            status, message = REACHED, p.status
        elif p.kind == "witness" and p.status == "vacuous":
            status, message = VACUOUS, "no reachable state satisfies it: the config never tells this story"
        elif p.kind == "witness":
            status, message = NOT_CHECKED, p.status
        elif p.status == "holds":
            status, message = HOLDS, ""
        elif p.status.startswith("holds up to"):
            status, message = BOUNDED, p.status  # "holds up to depth K": what was checked, never plain holds
        else:
            status = NOT_CHECKED
            message = ("the search stopped at another property's violation" if result.violations
                       else "the search did not cover the whole state space")
        report.properties[p.id] = PropertyVerdict(p.id, status, message, v.trace if v else None)
    report.counts = {"distinct_states": result.distinct_states, "depth": result.depth}
    report.stats = {"generated_states": result.generated_states, "complete": result.complete,
                    "levels": [lv.distinct for lv in result.levels],
                    "states_per_second": round(result.distinct_states / max(result.elapsed, 1e-9), 1),
                    "actions": action_coverage(entry, result.extra.get("action_counts", {}), result.complete)}
    report.status = Status.VIOLATED if result.violations or result.vacuous else Status.OK
    report.elapsed = result.elapsed
    return report


def unavailable(report: CheckerReport, why: str) -> CheckerReport:
    """``report`` skipped because a tool it needs is missing here (Java, Maven, a release's jars): the gate's
    "nothing was checked: a tool is missing" (exit 4) when no cell checked anything."""
    report.status = Status.SKIPPED
    report.message = why
    report.stats["unavailable"] = True
    return report
