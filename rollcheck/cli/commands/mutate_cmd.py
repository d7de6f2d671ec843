"""``rollcheck mutate``: the mutation campaign, how many small bugs in the reference implementations the checkers
kill (rollcheck.mutate says how each mutant is made and judged)."""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

from rollcheck.cli.commands.common import (
    add_deprecated_spelling,
    add_json_arg,
    add_parallel_arg,
    add_quiet_arg,
    non_negative_int,
    positive_float,
    positive_int,
)
from rollcheck.core.errors import UserError
from rollcheck.core.registry import protocol_names
from rollcheck.mutate.campaign import CampaignOptions, list_mutants, protocols_of, run_campaign
from rollcheck.mutate.equivalents import EQUIVALENTS_FILE, check_evidence, protocol_equivalents
from rollcheck.mutate.report import output_path
from rollcheck.mutate.resume import load_campaign, load_previous, merge_campaigns
from rollcheck.mutate.sites import OPERATORS
from rollcheck.mutate.summary import markdown, summary_rows
from rollcheck.mutate.tree import SourceTree
from rollcheck.runtime.console import print_json

DEFAULT_OUT = "rollcheck-out/mutate"

EPILOG = f"""\
examples:
  rollcheck mutate --protocol streams_probing                # every mutant of one protocol
  rollcheck mutate --protocol features --limit 20 --parallel 2  # 20 mutants spread over the list
  rollcheck mutate --list --protocol zk_migration            # enumerate only, run nothing
  rollcheck mutate --only features:config.py:96:47:drop_and_operand
  rollcheck mutate --protocol features --screen --parallel 2    # the cheap steps only, then --resume

Each mutant is one edit, made with ast, to a module of a protocol's reference (api.py, system.py, catalog.py,
releases.py, config.py); it runs from a copy of the checkout through the gate's checks, cheapest first, the first
kill ending it. A survivor its protocol's {EQUIVALENTS_FILE} names is "equivalent" and left out of the kill rate.
The JSON (--out) has the machine, the commit, the baselines and every mutant; a summary table is printed; a
progress line goes to stderr every 10 s. Ctrl-C (or SIGTERM) stops the checks and writes what was done,
marked partial; --resume goes on from it.
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("mutate", help="mutation campaign: mechanical bugs in the reference against every check",
                       description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--protocol", action="append", default=None, metavar="NAME",
                   help="protocol to mutate (repeatable; default: every registered protocol)")
    p.add_argument("--operators", nargs="+", choices=OPERATORS, default=None, metavar="OP",
                   help=f"mutation operators (default: all): {', '.join(OPERATORS)}")
    p.add_argument("--match", default=None, metavar="REGEX", help="only the mutants whose id matches (re.search)")
    p.add_argument("--only", action="append", default=None, metavar="ID",
                   help="only this mutant (its id, as --list prints it; repeatable); its protocol is selected")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N",
                   help="at most N mutants per protocol, evenly spread over its enumeration (deterministic)")
    p.add_argument("--offset", type=non_negative_int, default=0, metavar="K",
                   help="with --limit: each pick K places further on (another sample of the same spread; default 0)")
    p.add_argument("--out", type=Path, default=Path(DEFAULT_OUT), metavar="DIR",
                   help=f"output directory, for mutation-<UTC time>.json (default: {DEFAULT_OUT}); a path ending "
                   "in .json is the file itself")
    add_json_arg(p)  # the campaign's JSON on stdout; the summary table then goes to stderr
    add_quiet_arg(p)
    p.add_argument("--timeout", type=positive_float, default=None, metavar="SECONDS",
                   help="per-mutant time limit over all its runs (default: 10x the protocol's baseline: every "
                   "explorer run, then z3 and conform on small, on the unmutated copy; at least 60 s)")
    given = p.add_mutually_exclusive_group()
    add_parallel_arg(given, "mutants", 1, "1")
    add_deprecated_spelling(given, "--jobs", "--parallel N", "parallel", type=positive_int, metavar="N",
                            why="--parallel is the spelling of every command")
    p.add_argument("--max-memory", type=positive_float, default=2.0, metavar="GIB",
                   help="each explorer run's memory budget (default 2 GiB): above it the run stops, timeout")
    p.add_argument("--all-cells", action="store_true",
                   help="run every config x profile on a killed mutant too, each run collecting every property it "
                   "violates (default: stop at the first kill, each run at its first violation)")
    p.add_argument("--no-conform", action="store_true",
                   help="do not run `rollcheck conform` (TLC against the mutated reference) on the mutants the "
                   "explorer's properties did not kill")
    p.add_argument("--no-z3", action="store_true",
                   help="do not run the Z3 differential (`rollcheck prove --differential-only`: every reachable "
                   "state, and the decision rules) on the mutants the explorer's properties did not kill")
    p.add_argument("--no-variants", action="store_true",
                   help="do not run the gate's broken variants (`rollcheck mutants`) on the mutants the explorer's "
                   "properties did not kill")
    p.add_argument("--recheck", type=Path, metavar="FILE",
                   help="the survivors of an earlier campaign's JSON, through the steps after the explorer (broken "
                   "variants, z3, conform) at this checkout; their explorer runs are taken from FILE, which needs "
                   "the checkout's packages unchanged since FILE's commit; the killed rows of FILE are kept, so the "
                   "summary is the whole campaign's")
    p.add_argument("--resume", type=Path, nargs="+", metavar="FILE",
                   help="go on with an earlier campaign (FILE: its JSON, partial or not; several FILEs: pieces run "
                   "with --match, merged, a later file's row of a mutant replacing an earlier one's; by default the "
                   "same selection of mutants as FILE's (several: every mutant of the protocols they name), unless "
                   "--protocol/--operators/--match/--only/--limit say otherwise): a row of FILE is kept as it is "
                   "while every module is unchanged since it ran, a kill while the protocol's reference alone is "
                   "unchanged (the checkers may have grown), and every other mutant runs; a mutant whose edit FILE "
                   "killed at another reference runs the step that killed it first")
    p.add_argument("--carry-equivalents", action="store_true",
                   help="with --resume: a row FILE judged equivalent that the list of equivalent mutants still names "
                   "is kept even where the reference changed (a run could only confirm it or show the entry stale, "
                   "and costs every step); the row keeps its commit and is flagged equivalent_carried")
    p.add_argument("--screen", action="store_true",
                   help="only the cheap steps (a config module's domain, the decision rules, the explorer on small: "
                   "seconds a mutant): what they kill is killed, the rest is \"screened\", no verdict (left out of "
                   "the kill rate); --resume from the file runs the screened ones in full and keeps the kills")
    p.add_argument("--list", action="store_true", help="print the mutants (id and mutated line) and exit")
    p.add_argument("--summary", type=Path, nargs="+", metavar="FILE",
                   help="print the table of earlier campaigns (FILE: a campaign's .json or .json.gz; one row per "
                   "protocol of each file; with --json the rows as JSON) and exit; runs nothing")
    p.add_argument("--latest", action="store_true",
                   help="with --summary: one row per protocol, from the last FILE given that holds it")
    p.set_defaults(run=run)


def options(args: argparse.Namespace, tree: SourceTree) -> CampaignOptions:
    """The campaign the flags ask for; a user error (one line) for flags that do not go together, an unknown
    protocol or mutant, an earlier campaign that cannot be read, or an equivalence list that is refused."""
    known = protocol_names()
    for name in args.protocol or []:
        if name not in known:
            raise UserError(f"unknown protocol {name!r}; registered protocols: {', '.join(known)}")
    only = tuple(dict.fromkeys(args.only or []))
    for mid in only:
        if mid.split(":", 1)[0] not in known:
            raise UserError(f"--only {mid}: not a mutant id (protocol:module:line:col:operator, as --list prints)")
    if args.screen and args.recheck is not None:
        raise UserError("--screen runs the cheap steps, --recheck the steps after the explorer: give one")
    if args.carry_equivalents and args.resume is None:
        raise UserError("--carry-equivalents keeps rows of the campaign --resume goes on from: give --resume FILE")
    if args.offset and args.limit is None:
        raise UserError("--offset needs --limit")
    protocol, operators, match, limit, offset = args.protocol, args.operators, args.match, args.limit, args.offset
    if only and protocol is None:
        protocol = [mid.split(":", 1)[0] for mid in only]
    resumed = previous = None
    if args.resume is not None:
        if args.recheck is not None:
            raise UserError("--resume and --recheck are two ways of going on from FILE: give one")
        pieces = [load_campaign(path, "--resume") for path in args.resume]
        resumed = merge_campaigns(pieces)
        params = resumed.get("params", {})
        if protocol is None and operators is None and match is None and limit is None and not only:
            if len(pieces) == 1:
                protocol, operators = params.get("protocols"), params.get("operators")
                match, limit, offset = params.get("match"), params.get("limit"), params.get("offset", 0)
                only = tuple(params.get("only") or ())
            else:  # pieces of one campaign: the whole of what they cover, not the last piece's --match
                protocol = sorted({str(r["protocol"]) for r in resumed["mutants"]})
            unknown = [n for n in protocol or [] if n not in known]
            if unknown:
                raise UserError(f"--resume: {', '.join(map(str, args.resume))} names the protocol {unknown[0]!r}, "
                                "which is not registered")
    if args.recheck is not None:
        if match or limit is not None or only:
            raise UserError("--recheck reruns FILE's survivors: --match, --only and --limit do not apply")
        previous = load_previous(tree, args.recheck)
    protocols = protocols_of(protocol, known)
    if previous is not None:
        protocols = tuple(p for p in protocols if p in previous["params"].get("protocols", []))
    try:
        equivalents = tuple(protocol_equivalents(protocols))
        if resumed is not None:
            check_evidence(equivalents, resumed["mutants"], ", ".join(map(str, args.resume)))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    return CampaignOptions(
        protocols=protocols, operators=tuple(operators or OPERATORS), equivalents=equivalents, out=args.out,
        match=match, only=only, limit=limit, offset=offset, timeout=args.timeout, jobs=args.parallel,
        max_memory=args.max_memory, all_cells=args.all_cells, conform=not args.no_conform, z3=not args.no_z3,
        variants=not args.no_variants, screen=args.screen, carry_equivalents=args.carry_equivalents,
        recheck=args.recheck, previous=previous, resume=tuple(args.resume or ()), resumed=resumed,
        argv=tuple(sys.argv[2:] if len(sys.argv) > 1 and sys.argv[1] == "mutate" else ()), quiet=args.quiet)


def run(args: argparse.Namespace) -> int:
    if args.latest and not args.summary:
        raise UserError("--latest picks rows of --summary FILE...: give --summary")
    if args.summary:
        rows = summary_rows(args.summary, args.latest)
        if args.json:
            print_json(rows)
        else:
            print(markdown(rows))
        return 0
    tree = SourceTree.of_checkout()
    opts = options(args, tree)
    if args.list:
        return list_mutants(opts, tree)
    path = output_path(opts.out, datetime.datetime.now(datetime.UTC))
    code, doc = run_campaign(opts, tree, path, sys.stderr if args.json else None)
    if args.json:
        print_json(doc)
    return code
