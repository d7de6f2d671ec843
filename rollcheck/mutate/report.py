"""A campaign's results: the per-protocol summary and kill rate, the table on stdout, the JSON file.

kill rate = (killed by a property, by a broken variant that escapes, by z3, by conform or by crash) / (mutants
run - equivalent - screened); a timeout counts as not killed.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from rollcheck.mutate.equivalents import EQUIVALENTS_FILE

STATUSES = ("killed", "killed (variant)", "killed (z3)", "killed (conform)", "killed (crash)", "survived",
            "survived (count changed)", "equivalent", "timeout", "screened")
KILLS = STATUSES[:5]


def summarize(results: list[dict[str, Any]], protocols: Sequence[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for p in protocols:
        rows = [r for r in results if r["protocol"] == p]
        n = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
        killed = n["killed"] + n["killed (variant)"] + n["killed (z3)"] + n["killed (conform)"] + n["killed (crash)"]
        # An equivalent mutant cannot be killed, and a screened one has no verdict yet: both are left out of the rate.
        judged = len(rows) - n["equivalent"] - n["screened"]
        out[p] = {"mutants": len(rows), "killed": n["killed"], "killed_variant": n["killed (variant)"],
                  "killed_z3": n["killed (z3)"],
                  "killed_conform": n["killed (conform)"],
                  "killed_crash": n["killed (crash)"],
                  "survived": n["survived"] + n["survived (count changed)"],
                  "survived_count_changed": n["survived (count changed)"], "equivalent": n["equivalent"],
                  "timeout": n["timeout"], "screened": n["screened"],
                  "carried": sum(bool(r.get("carried")) for r in rows),
                  "kill_rate": round(killed / judged, 4) if judged else None}
    return out


def print_summary(doc: dict[str, Any], file: TextIO | None = None) -> None:
    """The table and the lists of survivors, stale entries and timeouts (on stdout unless ``file``)."""
    out = sys.stdout if file is None else file

    def say(text: str = "") -> None:
        print(text, file=out)

    head = ("protocol", "mutants", "killed", "by a variant", "by z3", "by conform", "crash", "survived (count changed)",
            "equivalent", "timeout", "kill rate")
    rows = [head]
    for p, s in doc["summary"].items():
        rate = "-" if s["kill_rate"] is None else f"{100 * s['kill_rate']:.1f}%"
        rows.append((p, str(s["mutants"]), str(s["killed"]), str(s.get("killed_variant", 0)),
                     str(s.get("killed_z3", 0)), str(s.get("killed_conform", 0)), str(s["killed_crash"]),
                     f"{s['survived']} ({s['survived_count_changed']})", str(s.get("equivalent", 0)),
                     str(s["timeout"]), rate))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    say()
    if doc["partial"]:
        say("PARTIAL: the campaign was stopped before every mutant ran")
    for i, r in enumerate(rows):
        say("  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(r, widths, strict=True))))
        if i == 0:
            say("  ".join("-" * w for w in widths))
    say("kill rate = (killed by a property, by a broken variant that escapes, by z3, by conform or by crash) / "
        f"(mutants run - equivalent); a timeout counts as not killed; equivalent: a survivor its protocol's "
        f"{EQUIVALENTS_FILE} argues changes nothing")
    carried = sum(s.get("carried", 0) for s in doc["summary"].values())
    if carried:
        say(f"{carried} kills carried over by --resume from a campaign whose checkers differed (the reference "
            "was the same): see each row's commit")
    screened = sum(s.get("screened", 0) for s in doc["summary"].values())
    if screened:
        say(f"{screened} screened: the cheap steps did not kill them; --resume from this file runs them in full")
    survivors = [r for r in doc["mutants"] if r["status"].startswith("survived")]
    if survivors:
        say(f"\nsurvivors ({len(survivors)}):")
        for r in survivors:
            note = f"  [distinct states {', '.join(r['count_changed'])}]" if r["count_changed"] else ""
            refused = f"\n      ! {r['equivalent_refused']}" if r.get("equivalent_refused") else ""
            say(f"  {r['id']}{note}\n      - {r['before']}\n      + {r['after']}{refused}")
    stale = doc.get("equivalents_killed") or []
    if stale:
        say(f"\nkilled, yet listed as equivalent in {EQUIVALENTS_FILE} (a wrong or stale entry, {len(stale)}):")
        for i in stale:
            say(f"  {i}")
    timeouts = [r for r in doc["mutants"] if r["status"] == "timeout"]
    if timeouts:
        say(f"\ntimeouts ({len(timeouts)}):")
        for r in timeouts:
            say(f"  {r['id']}\n      + {r['after']}")


def write_json(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def output_path(out: Path, started: datetime.datetime) -> Path:
    """``out`` itself when it names a ``.json`` file, else ``mutation-<UTC time>.json`` in the directory ``out``."""
    if out.suffix == ".json" and not out.is_dir():
        return out
    return out / f"mutation-{started:%Y%m%dT%H%M%SZ}.json"


def progress_line(results: list[dict[str, Any]], total: int, elapsed: float, running: Sequence[str]) -> str:
    n = {s: sum(r["status"] == s for r in results) for s in STATUSES}
    now = ", ".join(running) or "-"
    return (f"mutation: {len(results)}/{total} done in {elapsed:.0f} s: {n['killed']} killed, "
            f"{n['killed (variant)']} by a variant, {n['killed (z3)']} by z3, {n['killed (conform)']} by conform, "
            f"{n['killed (crash)']} by crash, {n['survived'] + n['survived (count changed)']} survived, "
            f"{n['equivalent']} equivalent, {n['timeout']} timeout"
            + (f", {n['screened']} screened" if n["screened"] else "") + f"; running {now}")
