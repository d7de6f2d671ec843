"""``rollcheck list``: the registered protocols (their profiles, configs, properties and broken variants) and the
registered checker kinds (whether each runs here, and if not why)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from rollcheck.checkers import all_checkers
from rollcheck.cli.commands.common import add_json_arg
from rollcheck.core.registry import all_protocols
from rollcheck.runtime.console import out_console, print_json


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("list", help="list protocols, profiles, configs, properties, variants and checkers")
    add_json_arg(p)
    p.add_argument("--properties", action="store_true", help="also list every property")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    entries = all_protocols()
    docs: list[dict[str, Any]] = []
    for e in entries:
        ts = e.build(e.configs["default"])
        docs.append({
            "name": e.name,
            "summary": e.summary,
            "profiles": list(e.profiles),
            "configs": list(e.configs),
            "sources": list(e.sources),
            "properties": [{"id": p.id, "kind": p.kind, "description": p.description,
                            "source": p.source} for p in ts.properties()],
            "variants": [{"id": v.id, "story": v.story, "expect": list(v.expect)} for v in e.variants],
        })
    # Why a checker cannot run here: its module is missing (the gate skips it), or its external tool is
    # (Java, a jar, a binary: its cells report unavailable).
    checkers = [{"name": c.name, "description": c.description, "exhaustive": c.exhaustive,
                 "unavailable": c.available() or c.tool_problem()} for c in all_checkers()]
    if args.json:
        print_json({"protocols": docs, "checkers": checkers})
        return 0
    console = out_console()
    table = Table(title="rollcheck protocols")
    for col in ("protocol", "summary", "profiles", "configs", "properties", "variants"):
        table.add_column(col)
    for d in docs:
        table.add_row(d["name"], d["summary"], ", ".join(d["profiles"]), ", ".join(d["configs"]),
                      str(len(d["properties"])), str(len(d["variants"])))
    console.print(table)
    kinds = Table(title="rollcheck checkers")
    for col in ("checker", "description", "exhaustive", "here"):
        kinds.add_column(col)
    for c in all_checkers():
        why = c.available() or c.tool_problem()
        kinds.add_row(c.name, c.description, "yes" if c.exhaustive else "no",
                      "available" if why is None else f"not available: {why}")
    console.print(kinds)
    if args.properties:
        for d in docs:
            t = Table(title=f"{d['name']} properties")
            for col in ("id", "kind", "statement", "source"):
                t.add_column(col)
            for p in d["properties"]:
                t.add_row(p["id"], p["kind"], p["description"], p["source"])
            console.print(t)
    return 0
