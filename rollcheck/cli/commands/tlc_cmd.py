"""``rollcheck tlc PROTOCOL``: model-check the protocol's TLA+ spec with TLC on the same config."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from rollcheck.cli.commands.common import add_output_args, add_protocol_args, positive_int, resolve
from rollcheck.core.errors import ExitCode
from rollcheck.core.registry import get_protocol
from rollcheck.core.traces import format_trace, write_itf, write_json_atomic
from rollcheck.core.transition import action_coverage
from rollcheck.runtime.console import err_console, on_interrupt, out_console, print_json, status_progress
from rollcheck.runtime.rundir import StagedRun, run_name, staged_run
from rollcheck.tla.binding import binding_for, write_model
from rollcheck.tla.conformance import replay_spec_trace
from rollcheck.tla.tlc import ModelCheckResult, run_tlc, spec_trace_to_itf
from rollcheck.tla.witness import check_witnesses


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("tlc", help="model-check the protocol's TLA+ spec with TLC (same config, same property ids)")
    add_protocol_args(p)
    p.add_argument("--workers", type=positive_int, default=2, metavar="N", help="TLC worker threads (default: 2)")
    p.add_argument("--timeout", type=positive_int, default=1800, metavar="SECONDS",
                   help="seconds before TLC is stopped (default: 1800)")
    p.add_argument("--no-witnesses", action="store_true",
                   help="skip the witness runs (each witness is checked by TLC as a negated invariant)")
    add_output_args(p, "rollcheck-out/tlc")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    entry, label, _config, ts = resolve(args)
    binding = binding_for(entry.name)
    name = run_name(entry.name, label, ts.config.profile, args.variant)
    console = err_console()
    with staged_run(args.out, name) as run_dir, on_interrupt(run_dir.kept):
        doc, text, res = _check(args, entry.name, label, ts, binding, run_dir, console)
    if args.json:
        print_json(doc)
    else:  # the results, --quiet or not: it silences the progress lines alone
        out = out_console()
        if res.error:
            out.print(f"[red]TLC failed[/red]: {res.error}")
        elif res.violated:
            out.print(f"[red]{doc['violated_property']} violated[/red] after {res.distinct_states} states; "
                      f"counterexample ({len(res.trace)} states) in {doc['counterexample']}")
            out.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            out.print(f"[green]no violation[/green]: {res.distinct_states} distinct states, depth {res.depth}, "
                      f"{res.elapsed:.1f} s; results in {run_dir.final}")
            taken = ", ".join(f"{a} {n:,}" for a, n in doc["actions"]["transitions"].items())
            out.print(f"transitions per action (TLC): {taken or 'none'}", markup=False)
            if doc["actions"]["never_taken"]:
                out.print(f"[yellow]never taken in this config[/]: {', '.join(doc['actions']['never_taken'])}")
        _print_witnesses(out, doc["witnesses"])
    if res.error:
        return int(ExitCode.RUN_FAILED)
    if res.violated:
        return int(ExitCode.DISAGREEMENT if doc["replays_on_reference"] is False else ExitCode.VIOLATION)
    if any(w["status"] == "vacuous" for w in doc["witnesses"].values()):
        return int(ExitCode.VIOLATION)
    if any(w["status"] == "not checked" for w in doc["witnesses"].values()):
        return int(ExitCode.RUN_FAILED)
    return int(ExitCode.OK)


def _print_witnesses(out: Console, witnesses: dict[str, dict[str, Any]]) -> None:
    """One line: each witness reached (at its depth) or vacuous (in red: the run fails)."""
    if not witnesses:
        return
    parts = []
    for wid, w in witnesses.items():
        if w["status"] == "reached":
            parts.append(f"[green]{wid}[/] reached at depth {w['depth']}")
        elif w["status"] == "vacuous":
            parts.append(f"[red]{wid} vacuous[/] (no reachable state tells its story)")
        else:
            parts.append(f"[yellow]{wid} not checked[/] ({w.get('error', '')})")
    out.print("witnesses (TLC, as negated invariants): " + "; ".join(parts), soft_wrap=True)


def _check(args: argparse.Namespace, protocol: str, label: str, ts: Any, binding: Any, run_dir: StagedRun,
           console: Console) -> tuple[dict[str, Any], str, ModelCheckResult]:
    out = run_dir.staging
    text = ""
    model = write_model(binding, ts, out / "model")
    if not args.quiet:
        console.print(f"TLC: {binding.module}.tla on {label} (profile {ts.config.profile}), "
                      f"{len(model.invariants)} invariants, {len(model.properties)} action properties; "
                      f"{', '.join(model.unchecked) or 'no'} graph properties left to the explorer", soft_wrap=True)
    with status_progress(f"TLC {protocol}/{label}", enabled=not args.quiet) as show:
        show("model checking")
        res = run_tlc(model.directory, model.module, model.cfg, workers=args.workers, timeout=args.timeout,
                      coverage=True)
    doc = {"protocol": protocol, "config": label, "profile": ts.config.profile, "variant": args.variant,
           "spec": binding.path.name, **res.to_json(),
           "violated_property": res.violated.replace("_", "-") if res.violated else None,
           "unchecked": list(model.unchecked), "counterexample": None, "replays_on_reference": None}
    if res.violated and res.trace:
        path = out / "counterexamples" / f"{res.violated.replace('_', '-')}.itf.json"
        trace, div = replay_spec_trace(ts, res.trace, "counterexample", binding.actions)
        if trace is not None:
            trace.property_id, trace.config = res.violated.replace("_", "-"), label
            write_itf(path, trace, ts)  # with the reference encodings: replays exactly
            doc["replays_on_reference"] = True
            text = format_trace(trace, ts)
        else:
            write_json_atomic(path, spec_trace_to_itf(res.trace, module=binding.module))
            doc["replays_on_reference"] = False
            doc["divergence"] = str(div)
            text = str(div)
        doc["counterexample"] = str(run_dir.final_path(path))
    doc["actions"] = action_coverage(get_protocol(protocol), doc.pop("action_counts", {}),
                                     res.ok and not res.violated)
    doc["witnesses"] = {}
    if model.witnesses and not args.no_witnesses and not res.error:
        with status_progress(f"TLC {protocol}/{label}", enabled=not args.quiet) as show:
            runs = check_witnesses(binding, ts, out / "witness-model", model.witnesses, timeout=args.timeout,
                                   workers=args.workers, progress=show)
        for wid in model.witnesses:
            entry: dict[str, Any] = {"status": "not checked", "depth": None, "trace": None}
            if wid in runs.reached:
                entry.update(status="reached", depth=runs.depth(wid))
                trace, _div = replay_spec_trace(ts, runs.reached[wid], "witness", binding.actions)
                path = out / "witnesses" / f"{wid}.itf.json"
                if trace is not None:
                    trace.property_id, trace.config = wid, label
                    write_itf(path, trace, ts)
                else:
                    write_json_atomic(path, spec_trace_to_itf(runs.reached[wid], module=binding.module))
                entry["trace"] = str(run_dir.final_path(path))
            elif wid in runs.vacuous:
                entry["status"] = "vacuous"
            else:
                entry["error"] = runs.error
            doc["witnesses"][wid] = entry
    write_json_atomic(out / "summary.json", doc)
    return doc, text, res
