"""``rollcheck list``: the registered protocols, their profiles, configs, properties and broken variants."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from rollcheck.cli.commands.common import add_json_arg
from rollcheck.core.registry import all_protocols
from rollcheck.runtime.console import out_console, print_json


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("list", help="list protocols, profiles, configs, properties and variants")
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
    if args.json:
        print_json({"protocols": docs})
        return 0
    console = out_console()
    table = Table(title="rollcheck protocols")
    for col in ("protocol", "summary", "profiles", "configs", "properties", "variants"):
        table.add_column(col)
    for d in docs:
        table.add_row(d["name"], d["summary"], ", ".join(d["profiles"]), ", ".join(d["configs"]),
                      str(len(d["properties"])), str(len(d["variants"])))
    console.print(table)
    if args.properties:
        for d in docs:
            t = Table(title=f"{d['name']} properties")
            for col in ("id", "kind", "statement", "source"):
                t.add_column(col)
            for p in d["properties"]:
                t.add_row(p["id"], p["kind"], p["description"], p["source"])
            console.print(t)
    return 0
