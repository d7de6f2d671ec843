"""``rollcheck fuzz PROTOCOL --minutes M [--seed S]``: a fuzzing campaign that resumes and replays."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rollcheck.cli.commands.common import (
    add_json_arg,
    add_out_arg,
    add_protocol_args,
    add_quiet_arg,
    add_seed_arg,
    non_negative_int,
    positive_float,
    positive_int,
    resolve,
)
from rollcheck.core.errors import ExitCode, UserError
from rollcheck.fuzzing.fuzz import SUMMARY, FuzzResult, fuzz_hypothesis, prepare_campaign_dir
from rollcheck.runtime.console import err_console, on_interrupt, out_console, print_json
from rollcheck.runtime.outlock import output_lock
from rollcheck.runtime.rundir import run_name


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("fuzz", help="fuzzing campaign until a violation or the time budget")
    add_protocol_args(p)
    p.add_argument("--minutes", type=positive_float, required=True, metavar="MINUTES",
                   help="time budget (required)")
    add_seed_arg(p, "the same campaign on a new example database")
    p.add_argument("--examples", type=positive_int, default=200, metavar="N", help="examples per round (default 200)")
    p.add_argument("--steps", type=positive_int, default=50, metavar="N", help="steps per example (default 50)")
    p.add_argument("--spark-walks", type=non_negative_int, default=200, metavar="N",
                   help="Spark random walks per round beside Hypothesis (default 200; 0: Hypothesis only)")
    p.add_argument("--master", default="local[*]", metavar="URL", help="Spark master URL (default: local[*])")
    add_out_arg(p, None, "rollcheck-out/fuzz/PROTOCOL-CONFIG-PROFILE[-VARIANT]",
                what="output directory, kept from run to run: its example database replays what earlier runs found")
    add_json_arg(p)
    add_quiet_arg(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    entry, label, config, ts = resolve(args)
    # The campaign directory is kept from run to run (its example database replays what earlier runs
    # found), so it is locked rather than staged: one campaign at a time writes into it.
    out: Path = args.out or Path("rollcheck-out/fuzz") / run_name(entry.name, label, config.profile, args.variant)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {out}: {exc.strerror}") from None
    with output_lock(out), on_interrupt(lambda: _kept(out)):
        # Before Spark starts: the last campaign's files go, and a summary path that cannot be written
        # (a directory, a planted link) is one line now, not after the budget was spent.
        written = prepare_campaign_dir(out)
        return _campaign(args, entry.name, label, ts, out, written)


def _kept(out: Path) -> str:
    db = f"the example database in {out / 'hypothesis-db'} keeps what the campaign found (the next run replays it)"
    try:
        doc = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return db
    if not isinstance(doc, dict):
        return db
    found = f"{doc['violation']['property']} violated" if doc.get("violation") else "no violation"
    return (f"{doc.get('rounds', 0)} rounds, {doc.get('examples', 0):,} examples, {found}: "
            f"{out / SUMMARY}; {db}")


def _campaign(args: argparse.Namespace, protocol: str, label: str, ts: Any, out: Path, written: set[str]) -> int:
    console = err_console()

    def show(r: FuzzResult) -> None:
        if not args.quiet:
            console.print(f"[dim]fuzz[/] {protocol}: round {r.rounds}, {r.examples:,} examples")

    walker = None
    if args.spark_walks > 0:
        from rollcheck.fuzzing.fuzz import spark_walker
        from rollcheck.spark.session import get_session

        walker = spark_walker(ts, get_session(args.master), walks=args.spark_walks, depth=args.steps,
                              out_dir=out, config_name=label)
    result = fuzz_hypothesis(ts, out_dir=out, minutes=args.minutes, seed=args.seed, config_name=label,
                             examples_per_round=args.examples, steps=args.steps, progress=show, walker=walker,
                             written=written)
    if args.json:
        print_json(result.to_json())
    if result.inconclusive:
        # Not one round: no example ran, so "no violation" would claim what was never checked.
        print(f"rollcheck: inconclusive: the time budget ({args.minutes:g} min) ended before the first round: "
              f"nothing was checked (0 examples); summary in {out / SUMMARY}", file=sys.stderr)
        return int(ExitCode.INCONCLUSIVE)
    if args.json:
        return int(ExitCode.VIOLATION if result.violation else ExitCode.OK)
    results = out_console()
    if result.violation:
        results.print(f"[bold red]{result.violation['property']} violated[/] (found by "
                      f"{result.violation['found_by']}) after {result.rounds} rounds; "
                      f"shrunk trace of {result.violation['length']} steps in {out / 'counterexample.txt'}")
        return int(ExitCode.VIOLATION)
    results.print(f"no violation (time budget used): {result.rounds} rounds, "
                  f"{result.examples:,} examples, {result.elapsed:.0f} s; summary in {out / SUMMARY}", markup=False)
    return int(ExitCode.OK)
