"""``rollcheck gate``: the main job. Every protocol and checker on its default config; CI's verdict."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.table import Table

from rollcheck.checkers import CHECKERS
from rollcheck.console import err_console, print_json
from rollcheck.errors import ExitCode
from rollcheck.gate import GateConfig, estimate_plan, load_gate_config, plan_cells, run_gate
from rollcheck.reports import write_outputs
from rollcheck.transition import PROFILES


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("gate", help="run every configured protocol and checker (the CI gate)")
    p.add_argument("--config", type=Path, default=None, metavar="FILE",
                   help="gate config (rollcheck.toml, [gate] table); default: every protocol, both profiles, "
                   "every available checker, default configs")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="output directory (default: rollcheck-out/gate)")
    p.add_argument("--protocol", action="append", default=None, metavar="NAME",
                   help="only this protocol (repeatable)")
    p.add_argument("--checker", action="append", default=None, choices=list(CHECKERS),
                   help="only this checker (repeatable)")
    p.add_argument("--profile", action="append", default=None, choices=PROFILES,
                   help="only this profile (repeatable)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan (every cell, with its seconds in the last run under --out) and run nothing")
    p.add_argument("--json", action="store_true", help="print the JSON summary on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    cfg = load_gate_config(args.config, args.out)
    if args.protocol:
        from rollcheck.registry import get_protocol

        for name in args.protocol:
            get_protocol(name)
        cfg.protocols = list(args.protocol)
        cfg.configs = {p: cfg.configs.get(p, ["default"]) for p in cfg.protocols}
    if args.checker:
        cfg.checkers = list(args.checker)
    if args.profile:
        cfg.profiles = list(args.profile)
    console = err_console()
    if args.dry_run:
        return _dry_run(cfg, args.json)
    say = (lambda m: None) if args.quiet else (lambda m: console.print(f"[dim]gate[/] {m}"))
    result = run_gate(cfg, say)
    paths = write_outputs(result, cfg.out_dir)
    doc = result.to_json()
    doc["outputs"] = paths
    if args.json:
        print_json(doc)
    table = Table(title=f"rollcheck gate: {result.exit_code.name} ({result.elapsed:.1f} s)")
    for col in ("protocol", "config", "profile", "checker", "status", "counts", "seconds"):
        table.add_column(col)
    for r in result.reports:
        style = {"ok": "green", "violated": "bold red", "error": "bold red"}.get(r.status, "yellow")
        table.add_row(r.protocol, r.config, r.profile, r.checker, f"[{style}]{r.status}[/]",
                      ", ".join(f"{v:,} {k.replace('distinct_states', 'states')}" for k, v in r.counts.items()),
                      f"{r.elapsed:.1f}")
    console.print(table)
    for s in result.skipped:
        console.print(f"[yellow]not run[/]: {s['checker']}: {s['reason']}")
    for f in result.findings:
        console.print(f"[bold red]{f.kind}[/] {f.protocol}/{f.config}/{f.profile}: {f.message}")
    console.print(f"outputs: {paths['summary']}, {paths['junit']}, {paths['html']}")
    return int(result.exit_code)


def _dry_run(cfg: GateConfig, as_json: bool) -> int:
    cells, skipped = plan_cells(cfg)
    plan = estimate_plan(cfg, cells)
    plan["skipped_checkers"] = skipped
    if as_json:
        print_json(plan)
        return int(ExitCode.OK)
    console = err_console()
    table = Table(title=f"rollcheck gate --dry-run: {len(cells)} cells"
                  + (f", estimated {plan['estimated_seconds']:.0f} s" if plan["estimated_seconds"] is not None else ""))
    for col in ("protocol", "config", "profile", "checker", "estimated s"):
        table.add_column(col, justify="right" if col == "estimated s" else "left")
    for row in plan["cells"]:
        est = row["estimated_seconds"]
        table.add_row(row["protocol"], row["config"], row["profile"], row["checker"],
                      "?" if est is None else f"{est:.1f}")
    if cfg.mutants:
        est = plan["mutants_estimated_seconds"]
        table.add_row("every protocol", "variants' own", "", "mutants: " + ", ".join(cfg.mutant_checkers),
                      "?" if est is None else f"{est:.1f}")
    console.print(table)
    for s in skipped:
        console.print(f"[yellow]not run[/]: {s['checker']}: {s['reason']}")
    source = plan["estimates_from"]
    console.print(f"estimates from {source}" if source else
                  f"no earlier run under {cfg.out_dir}: no estimates ('?')", highlight=False)
    if plan["unestimated_cells"] and source:
        console.print(f"{plan['unestimated_cells']} cells were not in that run ('?')", highlight=False)
    return int(ExitCode.OK)
