"""``rollcheck conform PROTOCOL``: two-way trace conformance between the TLA+ spec and the reference."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.table import Table

from rollcheck.cli.commands.common import CONFIG_HELP, add_output_args, add_profile_arg, add_seed_arg, positive_int
from rollcheck.core.configs import resolve_config
from rollcheck.core.errors import ExitCode, UserError
from rollcheck.core.registry import check_profile, get_protocol
from rollcheck.core.traces import write_json_atomic
from rollcheck.core.transition import ProtocolEntry, replace_config
from rollcheck.runtime.console import err_console, on_interrupt, out_console, print_json, status_progress
from rollcheck.runtime.rundir import StagedRun, config_tag, run_name, staged_run
from rollcheck.spark.conform import PARTIAL_VERDICTS, SUMMARY, SparkConformResult, check_local_master
from rollcheck.tla.binding import binding_for
from rollcheck.tla.conformance import ConformanceReport, conform


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("conform", help="spec traces on the reference, reference traces in TLC, equal reachable sets")
    p.add_argument("protocol", help="protocol name (see `rollcheck list`)")
    p.add_argument("--config", action="append", default=None, metavar="NAME|FILE",
                   help=f"{CONFIG_HELP} (repeatable; default: small: conformance compares every reachable state, "
                   "so larger configs take minutes)")
    add_profile_arg(p, "default: every profile of the protocol", repeatable=True)
    p.add_argument("--traces", type=positive_int, default=None, metavar="N",
                   help="TLC simulation traces and reference walks (default 50; --engine spark: TLC simulation "
                   f"traces replayed, default {SPARK_TRACES:,})")
    p.add_argument("--depth", type=positive_int, default=30, metavar="N", help="length of each trace (default: 30)")
    add_seed_arg(p, "the same TLC simulations and reference walks")
    p.add_argument("--timeout", type=positive_int, default=1800, metavar="SECONDS",
                   help="seconds per TLC run (default: 1800)")
    p.add_argument("--engine", choices=("local", "spark"), default="local",
                   help="local (default): checks (a), (b) and (c); spark: check (a) at scale, --traces TLC "
                   "simulation traces replayed on the reference by Spark executors, verdicts as Parquet")
    p.add_argument("--master", default=None, metavar="URL",
                   help="--engine spark: Spark master on this machine (default local[*]; the executors read "
                   "TLC's trace files from its disk)")
    p.add_argument("--partitions", type=positive_int, default=None, metavar="N",
                   help="--engine spark: tasks each wave of traces is cut into (default: one per executor core)")
    p.add_argument("--tlc-workers", type=positive_int, default=None, metavar="N",
                   help="--engine spark: TLC workers writing the traces (default: the machine's cores)")
    p.add_argument("--domain-only", action="store_true",
                   help="check (d) alone, the config domain (one TLC run: seconds; (c) takes minutes)")
    p.add_argument("--keep-traces", action="store_true",
                   help="--engine spark: keep TLC's trace files (tlc/sim/ in the run's directory; "
                   "about 17 KB each on features:default)")
    add_output_args(p, "rollcheck-out/conform")
    p.set_defaults(run=run)


SPARK_TRACES = 10_000
SPARK_ONLY = ("master", "partitions", "tlc_workers")


def _profiles(entry: ProtocolEntry, given: list[str] | None) -> list[str]:
    """The --profile values (each checked against the protocol's profiles), or every profile it has."""
    if given is None:
        return list(entry.profiles)
    return [check_profile(entry, p, "--profile") for p in dict.fromkeys(given)]


def summary_name(protocol: str, labels: list[str], profiles: list[str], engine: str | None = None) -> str:
    """The run's summary file: named by its protocol, configs and profiles (as :func:`rollcheck.runtime.rundir.run_name`
    names each pair's directory), so that runs of other configs into the same ``--out`` keep theirs."""
    configs = "+".join(dict.fromkeys(config_tag(label) for label in labels))
    return f"{protocol}-{configs}-{'+'.join(profiles)}-conformance{'-' + engine if engine else ''}.json"


def _not_checked(doc: dict[str, Any], skipped: list[dict[str, str]]) -> None:
    """Every pair skipped: nothing was compared, so the run is not "ok" (exit 5)."""
    doc["skipped"] = skipped
    if not doc["reports"]:
        doc["ok"] = False
        doc["reason"] = ("every config/profile pair was skipped (" + "; ".join(
            f"{s['config']}/{s['profile']}: {s['reason']}" for s in skipped) + "): nothing was checked")


def run(args: argparse.Namespace) -> int:
    if args.engine == "spark":
        if args.domain_only:
            raise UserError("--domain-only: only with --engine local (the config domain is one TLC run)")
        return run_spark(args)
    given = [f"--{name.replace('_', '-')}" for name in SPARK_ONLY if getattr(args, name) is not None]
    if args.keep_traces:
        given.append("--keep-traces")
    if given:
        raise UserError(f"{', '.join(given)}: only with --engine spark")
    if args.traces is None:
        args.traces = 50
    entry = get_protocol(args.protocol)
    profiles = _profiles(entry, args.profile)
    binding = binding_for(entry.name)
    console = err_console()
    reports: list[ConformanceReport] = []
    skipped: list[dict[str, str]] = []
    labels: list[str] = []
    for cfg_name in args.config or ["small"]:
        label, base = resolve_config(entry, cfg_name)
        labels.append(label)
        for profile in profiles:
            config = replace_config(base, profile=profile)
            try:
                ts = entry.build(config)
            except ValueError as exc:  # e.g. a kafka-only release under kip
                console.print(f"skipped {label}/{profile}: {exc}", markup=False, soft_wrap=True)
                skipped.append({"config": label, "profile": profile, "reason": str(exc)})
                continue
            progress = None if args.quiet else (lambda m, lb=label, pr=profile: console.print(f"{lb}/{pr}: {m}"))
            with staged_run(args.out, run_name(entry.name, label, profile)) as run_dir, \
                    on_interrupt(lambda: _kept(reports, run_dir)):
                rep = conform(binding, ts, ts, run_dir.staging, config_name=label, traces=args.traces,
                              depth=args.depth, seed=args.seed, timeout=args.timeout, progress=progress,
                              build=entry.build, domain_bases=tuple(entry.configs.values()),
                              domain_only=args.domain_only)
                write_json_atomic(run_dir.staging / "conformance.json", rep.to_json())
            reports.append(rep)
    doc = {"protocol": entry.name, "ok": all(r.ok for r in reports), "reports": [r.to_json() for r in reports]}
    _not_checked(doc, skipped)
    write_json_atomic(args.out / summary_name(entry.name, labels, profiles), doc, root=args.out)
    if args.json:
        print_json(doc)
    else:  # the results, --quiet or not: it silences the progress lines alone
        show(reports)
    return _exit_code(doc)


def _kept(done: list[ConformanceReport], run_dir: StagedRun) -> str:
    if not done:
        return run_dir.kept()
    return (f"the {len(done)} finished config/profile pair(s) are kept under {run_dir.final.parent} "
            f"({', '.join(f'{r.config}/{r.profile}' for r in done)}); the one in progress was removed")


def show(reports: list[ConformanceReport]) -> None:
    console = out_console()
    table = Table(title="conformance: spec <-> reference")
    for col in ("config", "profile", "(a) spec traces replayed", "(b) reference traces in TLC",
                "(c) TLC states / reference views", "(d) config domain", "verdict"):
        table.add_column(col)
    for r in reports:
        ran = r.tlc_states is not None  # (a) ... (c) ran: not --domain-only, and TLC's dump was read
        a = f"{r.replayed_traces} ({r.replayed_steps} steps, {len(r.by_check('replay'))} diverge)" if ran else "-"
        b = (f"{r.validated_traces} ({r.validated_steps} steps, {len(r.by_check('validation'))} rejected)"
             if ran else "-")
        c = f"{r.tlc_states} / {r.reference_views}" if ran else "-"
        dom = "-" if r.domain_probes is None else f"{r.domain_probes} probes, {len(r.by_check('domain'))} differ"
        verdict = "[green]conform[/green]" if r.ok else ("[red]error[/red]" if r.error else "[red]diverge[/red]")
        table.add_row(r.config, r.profile, a, b, c, dom, verdict)
    console.print(table)
    for r in reports:
        if r.error:
            console.print(f"{r.config}/{r.profile}: {r.error}", markup=False)
        for d in r.divergences[:5]:
            console.print(f"{r.config}/{r.profile}: {d}", markup=False)


# --------------------------------------------------------------------------- --engine spark


def run_spark(args: argparse.Namespace) -> int:
    """Check (a) at scale: N TLC simulation traces per config and profile, replayed on Spark."""
    entry = get_protocol(args.protocol)
    profiles = _profiles(entry, args.profile)
    binding_for(entry.name)  # a protocol without a spec: one line before Spark starts
    master = args.master or "local[*]"
    check_local_master(master)
    traces = args.traces or SPARK_TRACES
    pairs = []
    skipped: list[dict[str, str]] = []
    labels: list[str] = []
    for cfg_name in args.config or ["small"]:
        label, base = resolve_config(entry, cfg_name)
        labels.append(label)
        for profile in profiles:
            config = replace_config(base, profile=profile)
            try:
                entry.build(config)
            except ValueError as exc:  # e.g. a kafka-only release under kip
                err_console().print(f"skipped {label}/{profile}: {exc}", markup=False, soft_wrap=True)
                skipped.append({"config": label, "profile": profile, "reason": str(exc)})
                continue
            pairs.append((label, config))
    if not pairs:  # nothing to replay: said before Spark starts
        doc: dict[str, Any] = {"protocol": entry.name, "engine": "spark", "ok": True, "reports": []}
        _not_checked(doc, skipped)
        return _finish_spark(args, doc, [], labels, profiles)
    from rollcheck.spark.session import get_session  # imported late: PySpark is heavy

    spark = get_session(master)
    results: list[SparkConformResult] = []
    for label, config in pairs:
        name = run_name(entry.name, label, config.profile, engine="spark")
        with staged_run(args.out, name) as run_dir, on_interrupt(_kept_partial(run_dir)), \
                status_progress(f"{entry.name}/{label}/{config.profile}", enabled=not args.quiet) as say:
            res = _conform_spark(entry.name, config, spark, run_dir.staging, config_name=label, traces=traces,
                                 depth=args.depth, seed=args.seed, timeout=args.timeout, partitions=args.partitions,
                                 tlc_workers=args.tlc_workers, keep_traces=args.keep_traces, progress=say)
            # the engine's paths are relative to the run's directory: where it will be once published
            if res.parquet:
                res.parquet = str(run_dir.final / res.parquet)
            res.divergent_itf = [str(run_dir.final / p) for p in res.divergent_itf]
            if res.tlc.get("output"):
                res.tlc["output"] = str(run_dir.final / res.tlc["output"])
            write_json_atomic(run_dir.staging / SUMMARY, res.to_json())
        results.append(res)
    doc = {"protocol": entry.name, "engine": "spark", "ok": all(r.ok for r in results),
           "reports": [r.to_json() for r in results]}
    _not_checked(doc, skipped)
    return _finish_spark(args, doc, results, labels, profiles)


def _finish_spark(args: argparse.Namespace, doc: dict[str, Any], results: list[SparkConformResult],
                  labels: list[str], profiles: list[str]) -> int:
    write_json_atomic(args.out / summary_name(doc["protocol"], labels, profiles, "spark"), doc, root=args.out)
    if args.json:
        print_json(doc)
    else:  # the results, --quiet or not: it silences the progress lines alone
        show_spark(results, args.out)
    return _exit_code(doc)


def _conform_spark(protocol: str, config: Any, spark: Any, out: Path, **kwargs: Any) -> SparkConformResult:
    """The engine's entry (a test wraps it to replay on a reference that differs from the spec)."""
    from rollcheck.spark.conform import conform_spark

    return conform_spark(protocol, config, spark, out, **kwargs)


def _kept_partial(run_dir: StagedRun) -> Callable[[], str]:
    """An interrupted Spark conformance keeps what it replayed: the staging directory, whose summary is marked
    partial, becomes ``NAME.partial`` (the last completed run, ``NAME``, stays)."""
    def note() -> str:
        kept = run_dir.final.with_name(run_dir.final.name + ".partial")
        if not (run_dir.staging / SUMMARY).is_file():
            return run_dir.kept()
        shutil.rmtree(kept, ignore_errors=True)
        os.replace(run_dir.staging, kept)
        return (f"the verdicts of the traces replayed so far and a summary marked partial are in {kept} "
                f"({SUMMARY}, {PARTIAL_VERDICTS})")
    return note


def show_spark(results: list[SparkConformResult], out: Path) -> None:
    console = out_console()
    table = Table(title="conformance at scale: TLC simulation traces replayed on the reference (Spark)")
    for col in ("config", "profile", "traces", "divergent", "generation", "replay", "traces/s", "verdict"):
        table.add_column(col)
    for r in results:
        doc = r.to_json()
        verdict = ("[red]error[/red]" if r.error else "[green]conform[/green]" if r.ok
                   else "[yellow]partial[/yellow]" if r.partial and not r.divergent else "[red]diverge[/red]")
        rate = doc["traces_per_second"]["replay"]
        table.add_row(r.config, r.profile, f"{r.replayed:,} ({r.steps:,} states)", f"{r.divergent:,}",
                      f"{r.generation_seconds:.1f} s", f"{r.replay_seconds:.1f} s",
                      f"{rate:,.0f}" if rate else "-", verdict)
    console.print(table)
    if results:
        r = results[0]
        console.print(f"Spark master {r.master} ({r.default_parallelism} cores for tasks, {r.tasks_per_wave} tasks "
                      f"a wave), machine cores {os.cpu_count()}, TLC workers {r.tlc_workers}", markup=False)
        console.print(r.apalache, markup=False)
    for r in results:
        if r.error:
            console.print(f"{r.config}/{r.profile}: {r.error}", markup=False)
        for d in r.divergences[:5]:
            console.print(f"{r.config}/{r.profile}: trace {d['trace']} ({d['file']}) diverges at step {d['step']}"
                          f" in {', '.join(d['variables']) or 'no variable'}: {d['message']}", markup=False)
        if r.parquet:
            console.print(f"{r.config}/{r.profile}: verdicts in {r.parquet}", markup=False)
    console.print(f"summary in {out}", markup=False)


def _exit_code(doc: dict[str, Any]) -> int:
    """3 where a report found a divergence, even if another of its steps then failed (TLC cannot compare a
    value of the reference's view with the spec's: the divergence is the answer); else 2 where a run failed;
    5 where every pair was skipped (nothing was checked); else 0."""
    reports = doc["reports"]
    if not reports:
        print(f"rollcheck: inconclusive: {doc['reason']}", file=sys.stderr)
        return int(ExitCode.INCONCLUSIVE)
    if any(isinstance(r.get(k), dict) and r[k].get("divergences")
           for r in reports for k in ("reachable", "replay", "validation")):
        return int(ExitCode.DISAGREEMENT)
    if any(r.get("error") for r in reports):
        return int(ExitCode.RUN_FAILED)
    return int(ExitCode.OK if doc["ok"] else ExitCode.DISAGREEMENT)
