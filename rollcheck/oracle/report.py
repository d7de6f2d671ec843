"""What ``rollcheck kafka`` prints and writes: a check's JSON summary (schema in docs/kafka-oracle.md), its text,
the ITF traces of its disagreements and violations, and the release x verdict matrix of ``--release all``."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rollcheck.core.traces import write_json_atomic
from rollcheck.oracle.check import CheckResult

FORMAT = "rollcheck-kafka-check/1"
MATRIX_HEADER = ("release", "line", "states", "decisions", "disagreements", "verdict")


def _file_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"


def trace_paths(result: CheckResult) -> tuple[list[str], list[str]]:
    """Where each kept disagreement's trace and each violation's counterexample go, relative to the run's folder."""
    seen: dict[str, int] = {}
    mine = []
    for f in result.disagreements:
        n = seen[f.kind] = seen.get(f.kind, 0) + 1
        mine.append(f"disagreements/{_file_part(f.kind)}-{n}.itf.json")
    return mine, [f"counterexamples/{_file_part(v['property'])}.itf.json" for v in result.violations]


def summary(result: CheckResult, folder: Path | None = None) -> dict[str, Any]:
    """The JSON summary of one check; trace paths under ``folder`` (None: relative ones)."""
    dis, cex = trace_paths(result)
    where = (lambda p: str(folder / p)) if folder is not None else (lambda p: p)
    return {
        "format": FORMAT, "protocol": result.protocol, "release": result.release, "line": result.line,
        "config": result.config, "profile": result.profile, "engine": result.engine, "verdict": result.verdict,
        "exit_code": int(result.exit_code), "states": result.states, "depth": result.depth,
        "complete": result.complete, "decisions": result.decisions, "distinct_requests": result.distinct_requests,
        "cache_hits": result.cache_hits, "round_trips": result.round_trips,
        "jvm_start_seconds": result.jvm_start_seconds, "kinds": result.kinds,
        "disagreements": {"count": result.disagreement_count, "unexplained": result.unexplained,
                          "known_bugs": result.known_bugs, "strict": result.strict,
                          "kept": [{**f.to_json(), "trace": where(p)}
                                   for f, p in zip(result.disagreements, dis, strict=True)]},
        "violations": [{"property": v["property"], "description": v["description"], "length": v["length"],
                        "trace": where(p)} for v, p in zip(result.violations, cex, strict=True)],
        "timings": result.timings, "client": result.client, "notes": result.notes,
    }


def write_run(result: CheckResult, staging: Path, final: Path) -> dict[str, Any]:
    """Write the traces and ``summary.json`` into ``staging`` (published as ``final``); the summary."""
    dis, cex = trace_paths(result)
    for f, p in zip(result.disagreements, dis, strict=True):
        write_json_atomic(staging / p, f.trace, root=staging)
    for v, p in zip(result.violations, cex, strict=True):
        write_json_atomic(staging / p, v["trace"], root=staging)
    doc = summary(result, final)
    write_json_atomic(staging / "summary.json", doc, root=staging)
    return doc


def _short(value: Any, width: int = 400) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= width else text[: width - 3] + "..."


def text(result: CheckResult, doc: dict[str, Any]) -> str:
    """The human report: the row, decisions per kind, each kind's first disagreement with both answers."""
    lines = [f"{result.protocol}/{result.config} (profile {result.profile}) against Kafka {result.release} "
             f"(line {result.line}, {result.engine} engine): {result.verdict.upper()}",
             f"  {result.states:,} states (depth {result.depth}), {result.decisions:,} decisions, "
             f"{result.distinct_requests:,} distinct requests ({result.cache_hits:,} answered from the cache), "
             f"{result.round_trips:,} round trips, JVM start {result.jvm_start_seconds:.2f} s; explore "
             f"{result.timings.get('explore_seconds', 0):.2f} s, "
             f"oracle {result.timings.get('oracle_seconds', 0):.2f} s"]
    for kind, row in result.kinds.items():
        lines.append(f"  {kind}: {row['decisions']:,} decisions, {row['disagreements']:,} disagreements"
                     + (f" ({row['known']:,} a known Kafka bug's)" if row.get("known") else ""))
    for bug, n in result.known_bugs.items():
        lines.append(f"  known Kafka bug {bug} of {result.release}: {n:,} disagreements are its (`rollcheck kafka "
                     f"bugs`; " + ("--strict: they count as new ones)" if result.strict else
                                   "not a new finding; --strict counts them)"))
    shown: set[str] = set()
    for f, kept in zip(result.disagreements, doc["disagreements"]["kept"], strict=True):
        if f.kind in shown:
            continue
        shown.add(f.kind)
        n = result.kinds.get(f.kind, {}).get("disagreements", 0)
        lines += [f"disagreement {f.kind} ({n:,} in all), at depth {f.level}"
                  + (f", deciding {f.action}" if f.action else "")
                  + (f" (known Kafka bug {f.known})" if f.known else "") + ":",
                  f"  state:     {_short(f.state, 1000)}",
                  f"  request:   {_short(f.request)}",
                  f"  reference: {_short(f.expected)}",
                  f"  Kafka {f.release}: {_short(f.answer)}",
                  f"  difference: {f.difference}",
                  f"  trace (ITF): {kept['trace']}"]
    for v in doc["violations"]:
        lines.append(f"violated {v['property']} ({v['description']}); counterexample, {v['length']} steps: "
                     f"{v['trace']}")
    lines.extend(f"note: {n}" for n in result.notes)
    return "\n".join(lines)


def _verdict_cell(result: CheckResult) -> str:
    return result.verdict + (f" ({', '.join(result.known_bugs)})" if result.known_bugs else "")


def matrix_row(result: CheckResult) -> list[str]:
    return [result.release, result.line, f"{result.states:,}", f"{result.decisions:,}",
            f"{result.disagreement_count:,}", _verdict_cell(result)]


def matrix_json(result: CheckResult, doc: dict[str, Any]) -> dict[str, Any]:
    return {"release": result.release, "line": result.line, "states": result.states, "decisions": result.decisions,
            "disagreements": result.disagreement_count, "known_bugs": result.known_bugs, "verdict": result.verdict,
            "summary": doc}


def matrix_text(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [MATRIX_HEADER, *rows]) for i in range(len(MATRIX_HEADER))]
    out = ["  ".join(h.ljust(w) for h, w in zip(MATRIX_HEADER, widths, strict=True))]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)
