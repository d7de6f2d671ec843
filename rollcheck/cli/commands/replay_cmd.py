"""``rollcheck replay FILE.itf.json|DIR ...``: rebuild the system a trace came from (protocol, config,
profile, broken variant: all in its ``#meta``) and replay the trace on it, checking every property."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.markup import escape

from rollcheck.cli.commands.common import CONFIG_HELP, add_json_arg, itf_files
from rollcheck.core.errors import ExitCode
from rollcheck.explore.replay import ReplayResult, replay_itf
from rollcheck.runtime.console import out_console, print_json


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("replay", help="replay ITF traces on the exact system that wrote them; print what fails")
    p.add_argument("paths", nargs="+", type=Path, metavar="FILE|DIR",
                   help="ITF files, or directories searched for *.itf.json (a gate's --out, for instance)")
    p.add_argument("--config", type=Path, default=None, metavar="NAME|FILE",
                   help=f"{CONFIG_HELP}, to replay on when the trace's config file is no longer where the trace "
                   "says or the trace names none (default: the one in the trace's #meta)")
    p.add_argument("--reference", action="store_true",
                   help="replay on the reference even when the trace came from a broken variant")
    add_json_arg(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    files = [f for f, _named in itf_files(args.paths)]
    results = [replay_itf(f, args.config, args.reference) for f in files]
    if args.json:
        print_json({"traces": [r.to_json() for r in results]})
    else:
        console = out_console()
        for r in results:
            console.print(_line(r), soft_wrap=True)
    if any(r.divergence for r in results):
        return int(ExitCode.DISAGREEMENT)
    if any(r.failures for r in results):
        return int(ExitCode.VIOLATION)
    unchecked = [r for r in results if r.unchecked]
    if unchecked:  # nothing failed, but not everything was checked: "every property holds" is not shown
        print("rollcheck: inconclusive: " + "; ".join(f"{r.path}: {', '.join(r.unchecked)} not checked"
                                                      for r in unchecked), file=sys.stderr)
        return int(ExitCode.INCONCLUSIVE)
    return int(ExitCode.OK)


def _line(r: ReplayResult) -> str:
    system = f"{r.protocol}/{r.config}/{r.profile}" + (f" variant {r.variant}" if r.variant else "")
    head = f"{escape(r.path)} ({system}, {r.steps} steps)"
    if r.divergence:
        return f"{head}: [bold red]does not replay[/]: {escape(r.divergence)}"
    if not r.failures:
        notes = f" ({escape('; '.join(r.notes))})" if r.notes else ""
        story = ""
        if r.witness is not None:
            story = (f"; it reaches witness {r.claimed}" if r.witness
                     else f"; [yellow]its last state does not satisfy witness {r.claimed}[/]")
        if r.unchecked:
            return (f"{head}: replays; [yellow]no property checked fails, {', '.join(r.unchecked)} not checked[/]"
                    f"{story}{notes}")
        return f"{head}: replays; [green]every property holds[/] along it{story}{notes}"
    parts = []
    for f in r.failures:
        where = "the last step" if f.step == r.steps else f"step {f.step}"
        parts.append(f"[bold red]{f.property_id}[/] fails at {where} ({escape(f.description)})")
    return f"{head}: " + "; ".join(parts)
