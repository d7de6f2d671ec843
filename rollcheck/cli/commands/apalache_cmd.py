"""``rollcheck apalache PROTOCOL``: check the protocol's TLA+ spec with Apalache (when it is installed)."""

from __future__ import annotations

import argparse

from rollcheck.cli.commands.common import add_output_args, add_protocol_args, positive_int, resolve
from rollcheck.core.errors import ExitCode
from rollcheck.core.traces import write_itf, write_json_atomic
from rollcheck.runtime.console import on_interrupt, out_console, print_json
from rollcheck.runtime.rundir import run_name, staged_run
from rollcheck.tla.apalache import find_apalache, run_apalache
from rollcheck.tla.binding import binding_for, operator_name, write_model
from rollcheck.tla.conformance import replay_spec_trace


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("apalache", help="bounded model checking / simulation of the TLA+ spec with Apalache")
    add_protocol_args(p)
    p.add_argument("--mode", choices=("check", "simulate"), default="check",
                   help="bounded model checking (check, the default) or random simulation runs (simulate)")
    p.add_argument("--length", type=positive_int, default=10, metavar="N", help="maximal number of steps (default: 10)")
    p.add_argument("--max-run", type=positive_int, default=100, metavar="N",
                   help="simulation runs (--mode simulate; default: 100)")
    p.add_argument("--property", action="append", default=None, metavar="ID",
                   help="only this invariant (repeatable; default: every invariant of the spec)")
    p.add_argument("--timeout", type=positive_int, default=1800, metavar="SECONDS",
                   help="seconds per Apalache run (default: 1800)")
    add_output_args(p, "rollcheck-out/apalache")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    find_apalache()  # absent: one clear line, exit code 4, before any work
    entry, label, _config, ts = resolve(args)
    binding = binding_for(entry.name)
    name = run_name(entry.name, label, ts.config.profile, args.variant)
    with staged_run(args.out, name) as run_dir, on_interrupt(run_dir.kept):
        out = run_dir.staging
        model = write_model(binding, ts, out / "model", check_properties=False)
        wanted = [i for i in model.invariants if args.property is None or i in args.property]
        results = run_apalache(model.directory, model.module, model.cfg, mode=args.mode,
                               invariants=[operator_name(i) for i in wanted], length=args.length,
                               max_run=args.max_run if args.mode == "simulate" else None, timeout=args.timeout)
        doc = {"protocol": entry.name, "config": label, "profile": ts.config.profile, "mode": args.mode,
               "length": args.length, "results": []}
        code = ExitCode.OK
        pids: list[str | None] = [*wanted] or [None]
        for pid, res in zip(pids, results, strict=True):
            row = {"property": pid, **res.to_json()}
            if res.error:
                code = ExitCode.RUN_FAILED
            elif res.violated:
                trace, div = replay_spec_trace(ts, res.trace, f"apalache {pid}", binding.actions)
                if trace is not None and pid is not None:
                    trace.property_id, trace.config = pid, label
                    row["counterexample"] = str(run_dir.final_path(
                        write_itf(out / "counterexamples" / f"{pid}.itf.json", trace, ts)))
                    code = max(code, ExitCode.VIOLATION)
                else:
                    row["divergence"] = str(div)
                    code = ExitCode.DISAGREEMENT
            doc["results"].append(row)
        write_json_atomic(out / "summary.json", doc)
    if args.json:
        print_json(doc)
    else:
        console = out_console()
        for row in doc["results"]:
            verdict = "error: " + row["error"] if row["error"] else (
                "violated" if row["violated"] else f"holds up to {args.length} steps")
            console.print(f"{row['property']}: {verdict}", markup=False)
    return int(code)
