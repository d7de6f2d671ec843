"""``rollcheck export-test TRACE.itf.json|DIR ... [-o DIR]``: turn counterexamples into pytest regression
tests (one self-contained file per trace; see :mod:`rollcheck.explore.regression`)."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from rich.markup import escape

from rollcheck.cli.commands.common import add_json_arg, add_out_arg, itf_files
from rollcheck.core.errors import ExitCode, UserError
from rollcheck.explore.regression import DEFAULT_DIR, VARIANT_ENV, Exported, export_test
from rollcheck.runtime.console import out_console, print_json


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("export-test", help="turn counterexample traces (ITF) into pytest regression tests")
    p.add_argument("paths", nargs="+", type=Path, metavar="TRACE|DIR",
                   help="ITF counterexamples rollcheck wrote, or directories searched for *.itf.json (witness "
                   "traces found there are skipped)")
    add_out_arg(p, str(DEFAULT_DIR), what="output directory: where the test files go", short=True)
    p.add_argument("--config", type=Path, default=None, metavar="FILE",
                   help="protocol config file (.toml) the traces were made with, for a trace whose config is a file "
                   "(default: rebuilt from the trace's own record; a file the trace names is never read; a named "
                   "config is always rebuilt from its name)")
    add_json_arg(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.config is not None and not args.config.is_file():
        raise UserError(f"--config {args.config}: not a file (the config file the traces were made with)")
    written: list[Exported] = []
    skipped: list[dict[str, str]] = []
    for path, named in itf_files(args.paths):
        command = shlex.join(["rollcheck", "export-test", str(path), "-o", str(args.out)]
                             + (["--config", str(args.config)] if args.config is not None else []))
        try:
            written.append(export_test(path, args.out, command, args.config))
        except UserError as exc:
            if named:
                raise
            skipped.append({"trace": str(path), "reason": str(exc)})
    if not written:
        raise UserError("no counterexample to export: " + "; ".join(s["reason"] for s in skipped))
    if args.json:
        print_json({"tests": [e.to_json() for e in written], "skipped": skipped})
        return int(ExitCode.OK)
    console = out_console()
    for e in written:
        variant = f" variant {e.variant}" if e.variant else ""
        console.print(f"{escape(e.path)}: {e.property_id} ({e.protocol}{variant}, {e.steps} steps) from "
                      f"{escape(e.trace)}", soft_wrap=True, highlight=False)
    for s in skipped:
        console.print(f"[yellow]skipped[/] {escape(s['reason'])}", soft_wrap=True, highlight=False)
    first = written[0]
    hint = f"python -m pytest -q -n 0 {shlex.quote(first.path)}"
    if first.variant:
        hint += f" (and {VARIANT_ENV}={first.variant} to see it fail on the bug)"
    console.print(f"run: {escape(hint)}", soft_wrap=True, highlight=False)
    return int(ExitCode.OK)
