"""``rollcheck mutants``: run the gate's checkers against every broken variant; every one must die."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from rich.markup import escape
from rich.table import Table

from rollcheck.checkers import CheckContext, available_checkers, checker_names, variant_checkers
from rollcheck.cli.commands.common import add_json_arg, add_out_arg, add_parallel_arg, add_quiet_arg
from rollcheck.core.errors import ExitCode, ToolUnavailable
from rollcheck.core.registry import get_protocol, protocol_names
from rollcheck.core.traces import write_json_atomic
from rollcheck.gate.mutants import run_mutants, scores, unavailable
from rollcheck.runtime.console import err_console, on_interrupt, out_console, print_json
from rollcheck.runtime.outlock import output_lock
from rollcheck.runtime.rundir import clear_previous_run, record_run


def _default() -> list[str]:
    """The ci tier's killers: the fastest; every variant is caught by the explorer on its config (a test
    requires it)."""
    return variant_checkers("ci")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("mutants", help="mutation score: every broken variant against the checkers")
    p.add_argument("--protocol", action="append", default=None, metavar="NAME",
                   help="only this protocol (repeatable)")
    p.add_argument("--checker", action="append", default=None, choices=[*checker_names(), "all"],
                   help=f"run this checker (repeatable; default: {', '.join(_default())}, the fastest killer; "
                   "'all': " + ", ".join(variant_checkers()) + ")")
    add_out_arg(p, "rollcheck-out/mutants")
    add_parallel_arg(p, "variant x checker cells", os.cpu_count() or 1, "the machine's cores")
    add_json_arg(p)
    add_quiet_arg(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    protocols = args.protocol or protocol_names()
    for name in protocols:
        get_protocol(name)
    present = set(available_checkers())
    wanted: list[str] = []
    for c in args.checker or _default():  # 'all' takes the checkers this machine has; a named one is run as asked
        wanted.extend([x for x in variant_checkers() if x in present] if c == "all" else [c])
    checkers = list(dict.fromkeys(wanted))
    # A checker that cannot run would leave every variant unkilled: it is said, before the work, and not run.
    not_run = {c: why for c in checkers if (why := unavailable(c)) is not None}
    if len(not_run) == len(checkers):
        raise ToolUnavailable("; ".join(not_run.values()) + ": nothing was checked")
    checkers = [c for c in checkers if c not in not_run]
    console = err_console()
    for why in not_run.values():
        print(f"rollcheck: {why}: not run", file=sys.stderr)
    say = (lambda m: None) if args.quiet else (lambda m: console.print(f"[dim]mutants[/] {m}"))
    # Z3's BMC to 5 steps, as in the gate (so that `--checker all` is the nightly tier's mutation matrix).
    ctx = CheckContext(out_dir=args.out, options={"z3_depth": 5})
    # --out is this run's whole: locked against a second run, and what the last run wrote is removed first
    # (its manifest), so no trace of an earlier run is left beside this one's.
    with output_lock(args.out), on_interrupt(lambda: f"no mutants.json was written; the finished cells' files "
                                             f"under {args.out} are removed by the next run"):
        _removed, preexisting = clear_previous_run(args.out)
        try:
            outcomes = run_mutants(protocols, checkers, ctx, say, parallel=args.parallel)
            doc: dict[str, Any] = {"scores": scores(outcomes), "checkers": checkers, "not_run": not_run,
                                   "mutants": [o.to_json() for o in outcomes]}
            write_json_atomic(args.out / "mutants.json", doc)
        finally:
            record_run(args.out, preexisting)
    if args.json:
        print_json(doc)
    console = console if args.json else out_console()
    table = Table(title="mutation matrix (seconds to kill; - survived)")
    table.add_column("mutant")
    table.add_column("story")
    for c in checkers:
        table.add_column(c, justify="right")
    table.add_column("first killer")
    for o in outcomes:
        cells = {k.checker: (f"{k.elapsed:.1f}" if k.killed else ("err" if k.status == "error" else
                                                                   "skip" if k.status == "skipped" else "-"))
                 for k in o.kills}
        first = o.first_killer
        table.add_row(f"{o.protocol}:{o.variant}", o.story, *[cells.get(c, "") for c in checkers],
                      first.checker if first else "[bold red]SURVIVED[/]" if o.checked else "[yellow]not checked[/]")
    console.print(table)
    s = doc["scores"]
    console.print(f"killed {s['killed']}/{s['mutants']}; per checker: " + ", ".join(
        f"{c} {v['killed']}/{v['run']}" for c, v in s["per_checker"].items())
        + (f"; not checked by any checker: {len(s['not_checked'])}" if s["not_checked"] else ""))
    # A checker's own copy of the rules (the Z3 relation, the TLA+ spec) stepping otherwise than the reference
    # under a variant is a disagreement, as in the gate, whether or not the variant was caught.
    diverged = [(o, k) for o in outcomes for k in o.kills if k.disagrees]
    for o, k in diverged:
        console.print(f"[bold red]disagreement[/] under broken variant {o.protocol}:{o.variant} ({k.checker}): "
                      f"{escape(k.message)}", soft_wrap=True)
    if diverged:
        return int(ExitCode.DISAGREEMENT)
    if s["survivors"]:
        return int(ExitCode.VIOLATION)
    if s["not_checked"]:
        # No checker ran on these: neither killed nor survived. A checker's error is a failed run (exit 2);
        # else each was skipped (no encoding, too many states): inconclusive.
        unchecked = [o for o in outcomes if not o.checked]
        why = "; ".join(f"{o.protocol}:{o.variant}: " + ", ".join(f"{k.checker} {k.status} ({k.message})"
                                                                  for k in o.kills) for o in unchecked[:3])
        more = f" (and {len(unchecked) - 3} more)" if len(unchecked) > 3 else ""
        failed = any(k.status == "error" for o in unchecked for k in o.kills)
        print(f"rollcheck: {'error' if failed else 'inconclusive'}: {len(unchecked)} variant(s) not checked by "
              f"any checker: {why}{more}", file=sys.stderr)
        return int(ExitCode.RUN_FAILED if failed else ExitCode.INCONCLUSIVE)
    return int(ExitCode.OK)
