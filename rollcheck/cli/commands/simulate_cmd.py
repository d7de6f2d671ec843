"""``rollcheck simulate PROTOCOL --traces N --depth D --seed S``: random walks on Spark."""

from __future__ import annotations

import argparse

from rollcheck.cli.commands.common import add_output_args, add_protocol_args, add_seed_arg, positive_int, resolve
from rollcheck.core.errors import ExitCode
from rollcheck.core.traces import write_itf
from rollcheck.core.transition import action_coverage
from rollcheck.runtime.console import on_interrupt, print_json, results_line
from rollcheck.runtime.rundir import run_name, staged_run


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("simulate", help="random walks on Spark, checked and re-executed against the reference")
    add_protocol_args(p)
    p.add_argument("--traces", type=positive_int, default=1000, metavar="N", help="number of walks (default 1000)")
    p.add_argument("--depth", type=positive_int, default=50, metavar="N", help="steps per walk at most (default 50)")
    add_seed_arg(p, "the same walks")
    p.add_argument("--guided", action="store_true",
                   help="coverage-guided swarm: walks fork from the states where a walk first found a new "
                   "fingerprint (deterministic per seed too)")
    p.add_argument("--master", default="local[*]", metavar="URL", help="Spark master URL (default: local[*])")
    p.add_argument("--partitions", type=positive_int, default=None, metavar="N",
                   help="tasks the walks are cut into (default: two per executor core, at least 2)")
    add_output_args(p, "rollcheck-out/simulate")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from rollcheck.spark.session import get_session
    from rollcheck.spark.simulate import simulate

    entry, label, config, ts = resolve(args)
    name = run_name(entry.name, label, config.profile, args.variant, engine="spark")
    spark = get_session(args.master)
    with staged_run(args.out, name) as run_dir, on_interrupt(run_dir.kept):
        out = run_dir.staging
        result = simulate(ts, spark, traces=args.traces, depth=args.depth, seed=args.seed, out_dir=out,
                          config_name=label, partitions=args.partitions, guided=args.guided)
        paths = []
        for trace in result.violation_traces[:20]:
            path = write_itf(out / "counterexamples" / f"{trace.property_id}-{trace.description.split()[1]}"
                             ".itf.json", trace, ts)
            paths.append(str(run_dir.final_path(path)))
        doc = {**result.to_json(), "actions": action_coverage(entry, result.action_counts, complete=False),
               "counterexamples": paths,
               "parquet": str(run_dir.final / "walks.parquet")}
    if args.json:
        print_json(doc)
    else:
        results_line(
            f"{result.traces:,} walks, {result.steps:,} steps, {result.distinct_states:,} distinct states; "
            f"{len(result.violations)} violating walks, {len(result.divergences)} divergences "
            f"({result.elapsed:.1f} s); results in {run_dir.final}")
        unseen = doc["actions"]["not_seen"]
        results_line("steps per action: " + ", ".join(f"{a} {n:,}" for a, n in result.action_counts.items())
                     + (f"; not taken by any walk: {', '.join(unseen)}" if unseen else ""))
    if result.divergences:
        return int(ExitCode.DISAGREEMENT)
    return int(ExitCode.VIOLATION if result.violations else ExitCode.OK)
