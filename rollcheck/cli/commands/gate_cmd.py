"""``rollcheck gate``: the main job. Every protocol and checker on its default config; CI's verdict."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.table import Table

from rollcheck.checkers import checker_names
from rollcheck.cli.commands.common import (
    add_deprecated_spelling,
    add_json_arg,
    add_out_arg,
    add_parallel_arg,
    add_profile_arg,
    add_quiet_arg,
)
from rollcheck.core.errors import ExitCode
from rollcheck.gate import TIERS, GateConfig, estimate_plan, kept_names, load_gate_config, plan_cells, run_gate
from rollcheck.gate.cache import default_cache_dir
from rollcheck.gate.reports import write_outputs
from rollcheck.gate.tables import RUN_HEADER, run_rows, variant_differential_line, verdict_matrix
from rollcheck.runtime.console import err_console, on_interrupt, out_console, print_json, status_progress
from rollcheck.runtime.outlock import LOCK_NAME, output_lock
from rollcheck.runtime.safefs import refuse_link
from rollcheck.runtime.userinput import check_output_dir


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("gate", help="run every configured protocol and checker (the CI gate)")
    given = p.add_mutually_exclusive_group()
    given.add_argument("--gate-config", type=Path, default=None, metavar="FILE",
                       help="gate config file (rollcheck.toml, [gate] table; docs/gate.md); default: the tier's "
                       "plan, every protocol under each of its profiles through every available checker")
    add_deprecated_spelling(given, "--config", "--gate-config FILE", "gate_config", type=Path, metavar="FILE",
                            why="--config names a protocol config in the other commands")
    add_out_arg(p, None, "the gate config's out, else rollcheck-out/gate")
    p.add_argument("--protocol", action="append", default=None, metavar="NAME",
                   help="only this protocol (repeatable)")
    p.add_argument("--checker", action="append", default=None, choices=checker_names(),
                   help="only this checker (repeatable)")
    add_profile_arg(p, "default: every profile; each runs on the protocols that have it", repeatable=True)
    p.add_argument("--tier", choices=TIERS, default=None,
                   help="ci (default): every protocol, profile and checker kind, every broken variant through the "
                   "explorer (its measured time: docs/gate.md#measurements); "
                   "nightly: every checker on the gate configs, every broken variant through explore, Hypothesis, "
                   "Z3, TLC and Spark, a fuzzing round per protocol and profile (overrides the gate config's tier)")
    add_parallel_arg(p, "cells", None, "the gate config's parallel, else the machine's cores; 1: one after another")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan (every cell, with its seconds in the last run under --out) and run nothing")
    p.add_argument("--export-tests", type=Path, default=None, metavar="DIR",
                   help="write a pytest regression test per counterexample trace into DIR (see rollcheck export-test); "
                   "summary.json lists them")
    store = p.add_mutually_exclusive_group()
    store.add_argument("--cache", type=Path, default=None, metavar="DIR",
                       help="the store of cell results (entries under DIR/cells/; docs/gate.md#cached-cell-results); "
                       "default: $ROLLCHECK_GATE_CACHE, else $ROLLCHECK_CACHE, else ~/.cache/rollcheck")
    store.add_argument("--no-cache", action="store_true",
                       help="run every cell: neither look results up nor store them")
    add_json_arg(p)
    add_quiet_arg(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    cfg = load_gate_config(args.gate_config, args.out, args.tier)
    if args.protocol:
        from rollcheck.core.registry import get_protocol

        for name in args.protocol:
            get_protocol(name)
        cfg.protocols = list(args.protocol)
        cfg.configs = {p: cfg.configs.get(p, ["default"]) for p in cfg.protocols}
    if args.checker:
        cfg.checkers = list(args.checker)
    if args.profile:
        from rollcheck.core.registry import check_profiles

        check_profiles(args.profile, cfg.protocols, "--profile")
        cfg.profiles = list(dict.fromkeys(args.profile))
    if args.parallel is not None:
        cfg.parallel = args.parallel
    if args.export_tests is not None:
        cfg.export_tests = args.export_tests
    cfg.cache = None if args.no_cache else args.cache if args.cache is not None else default_cache_dir()
    console = err_console(wide=True)
    if args.dry_run:
        return _dry_run(cfg, args.json)
    check_output_dir(cfg.out_dir, "out")  # the config file's 'out' too, before any cell runs
    if cfg.export_tests is not None:
        check_output_dir(cfg.export_tests, "--export-tests")
        kept_names(cfg)  # a folder inside --out that each run replaces is refused now
    refuse_link(cfg.out_dir / LOCK_NAME)  # the lock file is opened and truncated: never through a link
    with output_lock(cfg.out_dir), on_interrupt(lambda: _kept(cfg.out_dir)), \
            status_progress("gate", enabled=not args.quiet) as status:
        def say(message: str) -> None:
            if not args.quiet:
                console.print(f"[dim]gate[/] {message}", highlight=False)
                status(f"last: {message}")

        result = run_gate(cfg, say, warn=_warn)
        paths = write_outputs(result, cfg.out_dir)
    doc = result.to_json()
    doc["outputs"] = paths
    if args.json:
        print_json(doc)
    # The results: on stdout, unless stdout carries the JSON (then on stderr, for the log).
    console = console if args.json else out_console()
    plan = result.plan or {}
    est = plan.get("estimated_wall_seconds")
    title = (f"rollcheck gate (tier {cfg.tier}): {result.exit_code.name} in {result.elapsed:.0f} s"
             + (f" (estimated {est:.0f} s)" if est is not None else ""))
    runs = Table(title="every cell (report.html and summary.json add the command that reruns each)")
    for col in RUN_HEADER[:-1]:
        runs.add_column(col, justify="right" if col in ("states", "depth", "seconds") else "left",
                        no_wrap=True, overflow="ellipsis", max_width=48 if col == "note" else None)
    for row in run_rows(result.reports, cfg.context):
        runs.add_row(*row[:-1])
    console.print(runs)
    header, rows = verdict_matrix(result.reports, result.mutants)
    matrix = Table(title=title)
    for col in header:
        matrix.add_column(col)
    for row in rows:
        matrix.add_row(*(_styled(v) for v in row))
    console.print(matrix)
    for s in result.skipped:
        console.print(f"[yellow]not run[/]: {s['checker']}: {s['reason']}")
    line = variant_differential_line(result.mutants)
    if line:
        console.print(line, highlight=False, markup=False)
    for f in result.findings:
        console.print(f"[bold red]{f.kind}[/] {f.protocol}/{f.config}/{f.profile}: {f.message}")
    if result.exported_tests is not None:
        console.print(f"regression tests written under {cfg.export_tests}: {len(result.exported_tests)} (one per "
                      "counterexample trace; listed in summary.json's exported_tests)", highlight=False)
    if result.cache is not None:
        c = result.cache
        console.print(f"cache {c['dir']}: {c['hits']} of {len(plan.get('cells') or [])} cells' results reused "
                      f"(marked cached), {c['stored']} stored", highlight=False, markup=False)
    console.print(f"outputs: {paths['summary']}, {paths['junit']}, {paths['html']}")
    return int(result.exit_code)


def _warn(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _kept(out_dir: Path) -> str:
    return (f"no report was written; the finished cells' files under {out_dir} are listed in its manifest and "
            "removed by the next gate")


def _styled(text: str) -> str:
    status = text.split(" ", 1)[0]
    style = {"ok": "green", "violated": "bold red", "error": "bold red", "skipped": "yellow"}.get(status)
    return f"[{style}]{text}[/]" if style else text


def _dry_run(cfg: GateConfig, as_json: bool) -> int:
    cells, skipped = plan_cells(cfg)
    plan = estimate_plan(cfg, cells)
    plan["skipped_checkers"] = skipped
    if as_json:
        print_json(plan)
        return int(ExitCode.OK)
    console = out_console()
    est = plan["estimated_wall_seconds"]
    table = Table(title=f"rollcheck gate --dry-run (tier {cfg.tier}, {cfg.parallel} at once): {len(cells)} cells"
                  + (f", estimated {est:.0f} s" if est is not None else ""))
    for col in ("protocol", "config", "profile", "checker", "cells", "estimated s"):
        table.add_column(col, justify="right" if col in ("cells", "estimated s") else "left")
    # The reference's cells one per row; the broken variants' summed per protocol x checker.
    grouped: dict[tuple[str, str, str, str], list[float | None]] = {}
    for row in plan["cells"]:
        key = ((row["protocol"], row["config"], row["profile"], row["checker"]) if row["variant"] is None
               else (row["protocol"], "variants' own", "", ("compare under variants: " if row["differential_only"]
                                                             else "mutants: ") + row["checker"]))
        grouped.setdefault(key, []).append(row["estimated_seconds"])
    for key, times in grouped.items():
        known = [t for t in times if t is not None]
        table.add_row(*key, str(len(times)), "?" if not known else f"{sum(known):.1f}"
                      + ("" if len(known) == len(times) else "+?"))
    console.print(table)
    for s in skipped:
        console.print(f"[yellow]not run[/]: {s['checker']}: {s['reason']}")
    source = plan["estimates_from"]
    console.print(f"estimates from {source}" if source else
                  f"no earlier run under {cfg.out_dir}: no estimates ('?')", highlight=False)
    if plan["unestimated_cells"] and source:
        console.print(f"{plan['unestimated_cells']} cells were not in that run ('?')", highlight=False)
    return int(ExitCode.OK)
