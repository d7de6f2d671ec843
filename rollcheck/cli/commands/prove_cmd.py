"""``rollcheck prove PROTOCOL``: Z3 bounded model checking and k-induction of the encoded invariants and
step properties."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rollcheck.cli.commands.common import (
    add_json_arg,
    add_out_arg,
    add_protocol_args,
    add_quiet_arg,
    non_negative_int,
    positive_float,
    positive_int,
    resolve,
)
from rollcheck.core.errors import ExitCode, UserError
from rollcheck.core.traces import write_itf, write_json_atomic
from rollcheck.runtime.console import on_interrupt, out_console, print_json, status_progress
from rollcheck.runtime.rundir import run_name, staged_run
from rollcheck.smt.z3interrupt import interruptible_z3


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("prove", help="Z3: bounded model checking and k-induction of a protocol's invariants")
    add_protocol_args(p)
    p.add_argument("--property", default=None, metavar="ID", help="only this property (default: every encoded one)")
    p.add_argument("--depth", type=positive_int, default=10, metavar="N", help="BMC depth (default: 10)")
    p.add_argument("--timeout", type=positive_float, default=60.0, metavar="SECONDS",
                   help="Z3 timeout in seconds per solver call (default: 60)")
    add_out_arg(p, "rollcheck-out/prove")
    p.add_argument("--differential", type=non_negative_int, default=50, metavar="N",
                   help="also compare the Z3 relation with the reference on the first N states, breadth-first "
                        "(0, or a config of at most 1,000 states: every reachable state; a mismatch exits 3; "
                        "default: 50); with --variant, on the first N states where the variant steps otherwise "
                        "than the reference (0: every one)")
    p.add_argument("--no-differential", action="store_true",
                   help="prove the Z3 model alone (neither the successor nor the decision differential)")
    p.add_argument("--differential-only", action="store_true",
                   help="prove nothing: only compare the Z3 relation and decision rules with the reference (what "
                        "the ci tier's z3 cell on a small config does; with --differential 0, every reachable state)")
    p.add_argument("--decisions-only", action="store_true",
                   help="prove nothing and walk no state: only compare the decision rules' Z3 formulas with the "
                        "reference on their bounded input domains (seconds; the profile's cases only)")
    add_json_arg(p)
    add_quiet_arg(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from rollcheck.smt.checker import decision_differential, successor_differential  # late: z3 is heavy
    from rollcheck.smt.prove import prove, symbolic

    if args.timeout <= 0:
        raise UserError(f"--timeout must be positive: {args.timeout}")
    if args.differential_only and args.no_differential:
        raise UserError("--differential-only and --no-differential exclude each other: one proves nothing, "
                        "the other compares nothing")
    if args.differential_only and args.property is not None:
        raise UserError("--differential-only proves no property: drop --property, or --differential-only")
    if args.decisions_only and (args.no_differential or args.property is not None or args.differential_only):
        raise UserError("--decisions-only compares the decision rules alone: drop --no-differential, --property "
                        "and --differential-only")
    entry, label, config, ts = resolve(args)
    try:
        sym = symbolic(ts)
    except ValueError as exc:  # a config outside what the encoding covers
        raise UserError(f"{entry.name}/{label}: {exc}") from None
    known = [p.id for p in ts.properties()]
    if args.property is not None:
        if args.property not in known:
            raise UserError(f"protocol '{entry.name}' has no property '{args.property}'; known: {', '.join(known)}")
        if args.property not in sym.encoded():
            raise UserError(f"property '{args.property}' is not encoded in Z3; encoded: {', '.join(sym.encoded())}")
        ids = [args.property]
    elif args.differential_only or args.decisions_only:
        ids = []
    else:
        ids = [i for i in known if i in sym.encoded()]
    name = run_name(entry.name, label, config.profile, args.variant)
    console = out_console()
    with staged_run(args.out, name) as run_dir, on_interrupt(run_dir.kept), interruptible_z3(), \
            status_progress(f"prove {entry.name}/{label}", enabled=not args.quiet and not args.json) as show:
        out = run_dir.staging
        results: list[dict[str, Any]] = []
        refuted = False
        not_checked: list[str] = []  # the solver gave up before BMC reached --depth: no verdict
        replay_failed = ""
        for pid in ids:
            show(f"{pid}: BMC to depth {args.depth}, then k-induction")
            res = prove(sym, pid, args.depth, args.timeout)
            if res.status == "diverged":  # Z3's counterexample is no run of the reference: the copies disagree
                replay_failed = replay_failed or f"{pid}: {res.message.splitlines()[0]}"
                results.append({"property": pid, "status": "diverged", "replay_error": res.message})
                if not args.json:
                    console.print(f"{pid}: the Z3 counterexample does not replay on the reference: {res.message}",
                                  markup=False, soft_wrap=True)
                continue
            doc = res.to_json()
            line = res.line
            if res.status == "refuted":
                assert res.trace is not None
                refuted = True
                res.trace.config = label
                path = run_dir.final_path(write_itf(out / "counterexamples" / f"{pid}.itf.json", res.trace, ts))
                doc["trace"] = str(path)
                line = f"refuted (trace at {path})"
            elif res.status == "proved":
                extra = f", with {', '.join(res.strengthening)}" if res.strengthening else ""
                line = f"proved ({res.depth}-induction{extra})"
            elif res.status == "unknown":
                not_checked.append(pid)
                line = f"not checked: {res.message}"
            results.append(doc)
            if not args.json:
                console.print(f"{pid}: {line}  [{res.seconds:.2f} s]", markup=False, soft_wrap=True)
        diff = decisions = None
        nothing_ran = not ids and args.no_differential  # no property encoded, no comparison asked
        if not args.no_differential:
            # The proofs are about the Z3 model, a second copy of the rules: only this comparison sees a bug
            # planted in the reference that the model does not share.
            # Under a broken variant, where it steps otherwise than the reference: the reference's own
            # differential compares every other state, and the variant's failure paths lead into code that no
            # reference config reaches.
            reference = None if args.variant is None else entry.build(config)
            where = "" if reference is None else " where the variant steps otherwise than the reference"
            if not args.decisions_only:
                show(f"successor differential on {args.differential or 'every'} state(s){where or ' reachable'}")
                diff = successor_differential(sym, ts, args.differential, reference=reference)
            if diff is not None and not args.json:
                if reference is not None:
                    scope = (f"{'all' if diff['every_reachable_state'] else 'the first'} {diff['states']} "
                             f"state(s) where {args.variant} steps otherwise than the reference (of "
                             f"{diff['variant_states']} visited)")
                else:
                    scope = ("every reachable state" if diff["every_reachable_state"]
                             else f"the first {diff['states']} states")
                if diff["mismatch"] is None:
                    terms = diff.get("state_terms") or []
                    also = f"; state terms {', '.join(terms)}" if terms else ""
                    console.print(f"Z3 relation = reference on {scope} ({diff['transitions']} transitions{also})",
                                  markup=False)
                else:
                    console.print(f"the Z3 relation and the reference differ: {diff['mismatch']}", markup=False,
                                  soft_wrap=True)
            show("decision differential")
            decisions = decision_differential(sym)
            if not args.json and decisions["rules"]:
                if decisions["disagreement"] is None:
                    console.print(f"Z3 decision rules = reference on {decisions['inputs']} inputs "
                                  f"({', '.join(r['rule'] for r in decisions['rules'])})", markup=False)
                else:
                    console.print(f"a Z3 decision rule and the reference differ: {decisions['disagreement']}",
                                  markup=False, soft_wrap=True)
        summary = {"protocol": entry.name, "config": label, "profile": config.profile, "variant": args.variant,
                   "depth": args.depth, "timeout": args.timeout, "differential_only": args.differential_only,
                   "decisions_only": args.decisions_only,
                   "not_encoded": [i for i in known if i not in sym.encoded()],
                   "not_checked": not_checked, "inconclusive": bool(not_checked) or nothing_ran,
                   "results": results, "differential": diff, "decisions": decisions}
        write_json_atomic(out / "summary.json", summary)
    if args.json:
        print_json(summary)
    if replay_failed or (diff is not None and diff["mismatch"] is not None) or (
            decisions is not None and decisions["disagreement"] is not None):
        return int(ExitCode.DISAGREEMENT)
    if refuted:
        return int(ExitCode.VIOLATION)
    if not_checked or nothing_ran:
        # A cancelled solver call is no verdict: "proved" or "checked" for the others is not said of these.
        what = (f"{len(not_checked)} of {len(ids)} properties not checked ({', '.join(not_checked)}): the solver "
                f"gave up before BMC reached depth {args.depth} (--timeout {args.timeout:g} s per call)"
                if not_checked else f"{entry.name} has no property encoded in Z3 and --no-differential compares "
                "nothing: nothing was checked")
        print(f"rollcheck: inconclusive: {what}", file=sys.stderr)
        return int(ExitCode.INCONCLUSIVE)
    return int(ExitCode.OK)
