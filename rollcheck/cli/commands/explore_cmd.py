"""``rollcheck explore PROTOCOL``: exhaustive breadth-first exploration of a bounded config."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.table import Table

from rollcheck.cli.commands.common import (
    add_output_args,
    add_protocol_args,
    non_negative_int,
    positive_float,
    positive_int,
    resolve,
)
from rollcheck.core.errors import ExitCode
from rollcheck.core.traces import format_trace, write_itf, write_json_atomic
from rollcheck.core.transition import TransitionSystem, action_coverage
from rollcheck.explore.explorer import GRAPH_LIMIT, ExplorationResult, ExploreOptions, available_memory, explore
from rollcheck.runtime.console import level_progress, on_interrupt, out_console, print_json, results_line
from rollcheck.runtime.rundir import run_name, staged_run
from rollcheck.spark.explorer import SPARK_MIN


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("explore", help="explore every reachable state of a protocol's bounded config")
    add_protocol_args(p)
    p.add_argument("--engine", choices=("local", "spark"), default="local",
                   help="single-process BFS (local) or distributed BFS on Apache Spark")
    p.add_argument("--master", default="local[*]", metavar="URL", help="Spark master URL (default: local[*])")
    p.add_argument("--partitions", type=positive_int, default=None, metavar="N",
                   help="Spark engine: tasks a wide level is cut into (default: four per executor core)")
    p.add_argument("--spark-min", type=non_negative_int, default=SPARK_MIN, metavar="STATES",
                   help=f"Spark engine: levels narrower than this are expanded in the driver by the local "
                   f"engine's workers (default {SPARK_MIN:,}; 0: every level on Spark); the result does not "
                   "depend on it")
    p.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1, metavar="N",
                   help="processes that expand each BFS level (the Spark engine: each narrow level) "
                   "(default: the machine's cores); the result does not depend on it")
    p.add_argument("--symmetry", action="store_true",
                   help="keep one state per orbit of the protocol's interchangeable nodes")
    p.add_argument("--graph-limit", type=positive_int, default=GRAPH_LIMIT, metavar="STATES",
                   help=f"check graph (liveness) properties only up to this many states (default {GRAPH_LIMIT:,})")
    p.add_argument("--max-memory", type=positive_float, default=None, metavar="GIB",
                   help="stop (resumably) before a level that would take the process over this "
                   "many GiB (default: 90%% of the memory available at the start)")
    p.add_argument("--resume", action="store_true",
                   help="continue a killed run from its last completed level in --out")
    p.add_argument("--max-depth", type=positive_int, default=None, metavar="N", help="stop after this BFS depth")
    p.add_argument("--max-states", type=positive_int, default=None, metavar="STATES",
                   help="stop after this many states")
    p.add_argument("--collect-all", action="store_true",
                   help="keep exploring after a violation (one shortest trace per property)")
    add_output_args(p, "rollcheck-out/explore")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    entry, label, config, ts = resolve(args)
    name = run_name(entry.name, label, config.profile, args.variant, engine=args.engine, symmetry=args.symmetry)
    title = f"{entry.name}/{label}"
    budget = args.max_memory * 2**30 if args.max_memory else 0.9 * available_memory()
    with staged_run(args.out, name) as run_dir, on_interrupt(_kept(run_dir.checkpoint)), \
            level_progress(title, enabled=not args.quiet) as progress:
        options = ExploreOptions(config_name=label, variant=args.variant, max_depth=args.max_depth,
                                 max_states=args.max_states, stop_at_first=not args.collect_all, progress=progress,
                                 workers=args.workers, symmetry=args.symmetry, checkpoint_dir=run_dir.checkpoint,
                                 checkpoint_root=Path(args.out), resume=args.resume, graph_limit=args.graph_limit,
                                 max_memory=int(budget) if budget else None)
        if args.engine == "spark":
            result = _spark(args, entry.name, config, options)
        else:
            result = explore(ts, options)
        doc = result.to_json()
        doc["actions"] = action_coverage(entry, result.extra.get("action_counts", {}), result.complete)
        doc["counterexamples"] = [str(run_dir.final_path(p))
                                  for p in write_counterexamples(result, ts, run_dir.staging)]
        doc["witness_traces"] = [str(run_dir.final_path(p))
                                 for p in write_counterexamples(result, ts, run_dir.staging, witnesses=True)]
        write_json_atomic(run_dir.staging / "summary.json", doc)
    if args.json:
        print_json(doc)
    else:
        show(result, ts, doc["counterexamples"], doc["actions"])
        results_line(f"results in {run_dir.final}")
    return int(ExitCode.OK if result.ok else ExitCode.VIOLATION)


def _kept(checkpoint: Path) -> Callable[[], str]:
    def note() -> str:
        if (checkpoint / "manifest.json").is_file():
            return f"the checkpoint in {checkpoint} keeps every completed level: --resume continues from it"
        return "nothing kept (no level completed)"
    return note


def _spark(args: argparse.Namespace, protocol: str, config: Any, options: ExploreOptions) -> ExplorationResult:
    from rollcheck.spark.explorer import SparkOptions, explore_spark  # imported late: PySpark is heavy

    return explore_spark(protocol, config, options,
                         SparkOptions(master=args.master, partitions=args.partitions, spark_min=args.spark_min))


def write_counterexamples(result: ExplorationResult, ts: TransitionSystem[Any], out: Path,
                          witnesses: bool = False) -> list[str]:
    """Each violation's shortest counterexample as ITF under ``counterexamples/`` (``witnesses``: each
    reached witness's shortest trace, under ``witnesses/``)."""
    paths = []
    for v in result.witness_traces if witnesses else result.violations:
        path = out / ("witnesses" if witnesses else "counterexamples") / f"{v.property_id}.itf.json"
        write_itf(path, v.trace, ts)
        paths.append(str(path))
    return paths


def show(result: ExplorationResult, ts: TransitionSystem[Any], traces: list[str], actions: dict[str, Any]) -> None:
    console = out_console()
    table = Table(title=f"{result.protocol} / {result.config} ({result.engine}, profile {result.profile})")
    table.add_column("distinct states", justify="right")
    table.add_column("transitions", justify="right")
    table.add_column("depth", justify="right")
    table.add_column("complete")
    table.add_column("violations", justify="right")
    table.add_column("seconds", justify="right")
    table.add_row(f"{result.distinct_states:,}", f"{result.generated_states:,}", str(result.depth),
                  "yes" if result.complete else "no (bounded)", str(len(result.violations)),
                  f"{result.elapsed:.2f}")
    console.print(table)
    vs = result.extra.get("visited_set")
    if vs:
        console.print(f"{result.extra.get('workers', 1)} worker(s); visited set {vs['bytes_per_state']} bytes a "
                      f"state ({vs['fingerprint_bits']}-bit fingerprints); fingerprint collision probability "
                      f"{vs['collision_probability_optimistic']:.1e} (calculated, optimistic)", highlight=False)
    for note in result.extra.get("notes", []):
        console.print(f"note: {note}", highlight=False, markup=False)
    taken = ", ".join(f"{name} {n:,}" for name, n in actions["transitions"].items())
    console.print(f"transitions per action: {taken or 'none'}", highlight=False, markup=False)
    if actions["never_taken"]:
        console.print(f"[yellow]never taken in this config[/]: {', '.join(actions['never_taken'])} "
                      "(declared actions no reachable state enables)", highlight=False)
    props = Table(title="properties")
    for col in ("id", "kind", "status", "statement"):
        props.add_column(col)
    for p in result.properties:
        style = {"holds": "green", "violated": "bold red", "vacuous": "bold red"}.get(
            p.status, "green" if p.status.startswith("reached") else "yellow")  # bounded: yellow
        props.add_row(p.id, p.kind, f"[{style}]{p.status}[/]", p.description)
    console.print(props)
    for wid in result.vacuous:
        console.print(f"[bold red]{wid} vacuous[/]: the exploration is complete and no reachable state satisfies "
                      "it, so this config never tells the story it names (the properties hold without it)")
    for v, path in zip(result.violations, traces, strict=True):
        console.print(f"[bold red]{v.property_id} violated[/] ({v.description}); "
                      f"shortest counterexample, {v.depth} steps (ITF: {path}):")
        console.print(format_trace(v.trace, ts), markup=False, highlight=False, soft_wrap=True)
