"""The mutation campaign's report (``rollcheck mutate --summary FILE...``): one row per protocol of each campaign
file, as the docs print it.

Each file is a ``rollcheck mutate`` result, ``.json`` or ``.json.gz`` (``--resume`` pieces carry every earlier
row, so the latest piece of a protocol is its whole campaign so far). The kill rate is the campaign's own: every
kill (a property, a broken variant that escapes, Z3, TLC conformance, a crash) over the mutants run less the
listed equivalents; a timeout counts as not killed, and a mutant a ``--screen`` left "screened" (no verdict yet)
is out of it. Survivors are listed with their edit. With ``latest`` each protocol has one row, from the last file
given that holds it (as ``--resume`` reads pieces: a later row replaces an earlier one).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rollcheck.core.errors import UserError
from rollcheck.mutate.report import KILLS
from rollcheck.mutate.resume import read_campaign_text


def summary_rows(paths: Sequence[Path], latest: bool) -> list[dict[str, Any]]:
    """The rows of every file (one per protocol each; ``latest``: one per protocol in all); a file that is not a
    campaign result is a one-line error."""
    rows: list[dict[str, Any]] = []
    for path in paths:
        try:
            doc = json.loads(read_campaign_text(path))
            if not isinstance(doc, dict) or not isinstance(doc.get("mutants"), list):
                raise ValueError("no 'mutants' list")
            rows += protocol_rows(doc, path.name)
        except (OSError, ValueError, EOFError, KeyError, TypeError) as exc:
            raise UserError(f"--summary: {path}: not a campaign result ({exc})") from None
    return latest_rows(rows) if latest else rows


def protocol_rows(doc: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """One row per protocol of a campaign document."""
    rows = []
    for protocol in sorted({str(m["protocol"]) for m in doc["mutants"]}):
        mutants = [m for m in doc["mutants"] if m["protocol"] == protocol]
        by = {status: sum(1 for m in mutants if m["status"] == status) for status in KILLS}
        equivalent = sum(1 for m in mutants if m["status"] == "equivalent")
        timeout = sum(1 for m in mutants if m["status"] == "timeout")
        screened = sum(1 for m in mutants if m["status"] == "screened")  # --screen: the cheap steps alone, no verdict
        survivors = [m for m in mutants if str(m["status"]).startswith("survived")]
        killed = sum(by.values())
        judged = len(mutants) - equivalent - screened
        rows.append({
            "protocol": protocol, "file": name, "commit": str(doc.get("commit", ""))[:12],
            "complete": not doc.get("partial", False) and not screened, "screened": screened,
            "mutants": len(mutants), "killed": killed,
            "by_property": by["killed"], "by_variant": by["killed (variant)"], "by_z3": by["killed (z3)"],
            "by_conform": by["killed (conform)"], "by_crash": by["killed (crash)"], "equivalent": equivalent,
            "survived": len(survivors), "timeout": timeout,
            "kill_rate": round(killed / judged, 4) if judged else None,
            "survivors": [{"id": m["id"], "before": m.get("before"), "after": m.get("after")} for m in survivors],
        })
    return rows


def latest_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per protocol: the last one given (files in the order named), placed where that row stands."""
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        latest.pop(row["protocol"], None)  # re-insert: a protocol's place is where its latest file puts it
        latest[row["protocol"]] = row
    return list(latest.values())


def markdown(rows: list[dict[str, Any]]) -> str:
    head = ("| protocol | file | commit | complete | mutants | by a property | by a variant | by z3 | by conform "
            "| by crash | equivalent | survived | timeout | kill rate |")
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for r in rows:
        judged = r["mutants"] - r["equivalent"] - r.get("screened", 0)
        rate = f"{100 * r['killed'] / judged:.1f}%" if judged else "-"
        complete = "yes" if r["complete"] else f"screen ({r['screened']} screened)" if r.get("screened") else "partial"
        lines.append(f"| {r['protocol']} | `{r['file']}` | {r['commit']} | {complete} "
                     f"| {r['mutants']} | {r['by_property']} | {r['by_variant']} | {r['by_z3']} | {r['by_conform']} "
                     f"| {r['by_crash']} | {r['equivalent']} | {r['survived']} | {r['timeout']} | {rate} |")
    survivors = [f"- survivor `{s['id']}`: `{s['before']}` -> `{s['after']}`" for r in rows for s in r["survivors"]]
    return "\n".join(lines + (["", *survivors] if survivors else []))
