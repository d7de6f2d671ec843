"""``rollcheck conform PROTOCOL``: two-way trace conformance between the TLA+ spec and the reference."""

from __future__ import annotations

import argparse

from rich.table import Table

from rollcheck.commands.common import add_output_args, non_negative_int, positive_int
from rollcheck.configs import resolve_config
from rollcheck.conformance import ConformanceReport, conform
from rollcheck.console import err_console, on_interrupt, out_console, print_json
from rollcheck.errors import ExitCode
from rollcheck.registry import get_protocol
from rollcheck.rundir import StagedRun, run_name, staged_run
from rollcheck.tla.binding import binding_for
from rollcheck.traces import write_json_atomic
from rollcheck.transition import PROFILES, replace_config


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("conform", help="spec traces on the reference, reference traces in TLC, equal reachable sets")
    p.add_argument("protocol", help="protocol name (see `rollcheck list`)")
    p.add_argument("--config", action="append", default=None, metavar="NAME|FILE",
                   help="config(s) to check (repeatable; default: small: conformance compares every "
                   "reachable state, so larger configs take minutes)")
    p.add_argument("--profile", action="append", choices=PROFILES, default=None,
                   help="profile(s) (repeatable; default: both)")
    p.add_argument("--traces", type=positive_int, default=50, help="TLC simulation traces and reference walks")
    p.add_argument("--depth", type=positive_int, default=30, help="length of each trace")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the simulations and walks")
    p.add_argument("--timeout", type=positive_int, default=1800, help="seconds per TLC run")
    add_output_args(p, "rollcheck-out/conform")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    entry = get_protocol(args.protocol)
    binding = binding_for(entry.name)
    console = err_console()
    reports: list[ConformanceReport] = []
    for cfg_name in args.config or ["small"]:
        label, base = resolve_config(entry, cfg_name)
        for profile in args.profile or list(PROFILES):
            config = replace_config(base, profile=profile)
            try:
                ts = entry.build(config)
            except ValueError as exc:  # e.g. a kafka-only release under kip
                console.print(f"skipped {label}/{profile}: {exc}")
                continue
            progress = None if args.quiet else (lambda m, lb=label, pr=profile: console.print(f"{lb}/{pr}: {m}"))
            with staged_run(args.out, run_name(entry.name, label, profile)) as run_dir, \
                    on_interrupt(lambda: _kept(reports, run_dir)):
                rep = conform(binding, ts, ts, run_dir.staging, config_name=label, traces=args.traces,
                              depth=args.depth, seed=args.seed, timeout=args.timeout, progress=progress)
                write_json_atomic(run_dir.staging / "conformance.json", rep.to_json())
            reports.append(rep)
    doc = {"protocol": entry.name, "ok": all(r.ok for r in reports), "reports": [r.to_json() for r in reports]}
    write_json_atomic(args.out / f"{entry.name}-conformance.json", doc)
    if args.json:
        print_json(doc)
    elif not args.quiet:
        show(reports)
    if any(r.error for r in reports):
        return int(ExitCode.RUN_FAILED)
    return int(ExitCode.OK if doc["ok"] else ExitCode.DISAGREEMENT)


def _kept(done: list[ConformanceReport], run_dir: StagedRun) -> str:
    if not done:
        return run_dir.kept()
    return (f"the {len(done)} finished config/profile pair(s) are kept under {run_dir.final.parent} "
            f"({', '.join(f'{r.config}/{r.profile}' for r in done)}); the one in progress was removed")


def show(reports: list[ConformanceReport]) -> None:
    console = out_console()
    table = Table(title="conformance: spec <-> reference")
    for col in ("config", "profile", "(a) spec traces replayed", "(b) reference traces in TLC",
                "(c) TLC states / reference views", "verdict"):
        table.add_column(col)
    for r in reports:
        a = f"{r.replayed_traces} ({r.replayed_steps} steps, {len(r.by_check('replay'))} diverge)"
        b = f"{r.validated_traces} ({r.validated_steps} steps, {len(r.by_check('validation'))} rejected)"
        c = f"{r.tlc_states} / {r.reference_views}"
        verdict = "[green]conform[/green]" if r.ok else ("[red]error[/red]" if r.error else "[red]diverge[/red]")
        table.add_row(r.config, r.profile, a, b, c, verdict)
    console.print(table)
    for r in reports:
        if r.error:
            console.print(f"{r.config}/{r.profile}: {r.error}", markup=False)
        for d in r.divergences[:5]:
            console.print(f"{r.config}/{r.profile}: {d}", markup=False)
