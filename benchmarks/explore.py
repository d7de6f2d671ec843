"""Benchmark: the Spark engine against the local engine on the same configs (not a test).

    python benchmarks/explore.py                          # every protocol's small and default configs
    python benchmarks/explore.py features:large --master 'local[2]'
    python benchmarks/explore.py features:default --standalone 2    # a standalone cluster on 127.0.0.1
    python benchmarks/explore.py --simulate features:default           # only the random-walk rate

For each protocol:config, every property checked (liveness included), it times: the local engine with
``--workers`` processes and with one; the Spark engine as it runs by default (levels under ``--spark-min``
states in the driver, wider ones on the executors); and the Spark engine with every level on the executors,
whose extra time over the local engine per level is the Spark engine's fixed cost per level. It checks
that all four found the same counts (a mismatch exits 1). The Spark session's start-up is timed once,
apart. ``--standalone N`` starts a standalone master and N one-core workers on 127.0.0.1 (pyspark's
``spark-class``) and runs on it instead of ``--master``. Rows go to ``benchmarks/results/`` as JSON
with the machine and the commit; compare ratios from one run. ``--simulate P:C`` measures
``rollcheck simulate``'s checked steps per second instead (``--traces`` walks of ``--depth`` steps).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from benchresults import write as write_results

from rollcheck.core.hashenv import reexec_for_stable_hashes
from rollcheck.core.registry import get_protocol, protocol_names
from rollcheck.explore.explorer import ExploreOptions, explore
from rollcheck.spark.explorer import SPARK_MIN, SparkOptions, explore_system_spark
from rollcheck.spark.session import get_session
from rollcheck.spark.simulate import simulate
from rollcheck.spark.standalone import StandaloneCluster


def main() -> int:
    # Spark executors must fingerprint states as this process does (rollcheck.core.hashenv).
    reexec_for_stable_hashes(sys.argv)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="*", help="protocol:config (default: every protocol's small, default)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--standalone", type=int, default=0, metavar="N",
                        help="start a standalone cluster of N one-core workers on 127.0.0.1 and use it")
    parser.add_argument("--partitions", type=int, default=None)
    parser.add_argument("--spark-min", type=int, default=SPARK_MIN)
    parser.add_argument("--workers", type=int, default=2, help="local explorer worker processes (default 2)")
    parser.add_argument("--simulate", metavar="P:C", default=None, help="measure random walks on this config")
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=50)
    parser.add_argument("--json", type=Path, default=None,
                        help="write the rows here (default: a new file under benchmarks/results/)")
    args = parser.parse_args()
    targets = args.targets or [f"{p}:{c}" for p in protocol_names() for c in ("small", "default")]
    with tempfile.TemporaryDirectory() as scratch:
        master = args.master
        cluster = None
        if args.standalone:
            cluster = StandaloneCluster(Path(scratch))
            cluster.start(args.standalone)
            master = cluster.url
        try:
            return _run(args, targets, master)
        finally:
            if cluster is not None:
                cluster.stop()


def _run(args: argparse.Namespace, targets: list[str], master: str) -> int:
    t0 = time.perf_counter()
    spark = get_session(master)
    startup = time.perf_counter() - t0
    print(f"Spark session on {master}: {startup:.1f} s to start", flush=True)
    if args.simulate:
        return _simulate(args, spark, master, startup)
    rows = []
    ok = True
    for target in targets:
        proto, _, conf = target.partition(":")
        entry = get_protocol(proto)
        ts = entry.build(entry.configs[conf or "default"])
        t0 = time.perf_counter()
        local = explore(ts, ExploreOptions(stop_at_first=False, workers=args.workers))
        t_local = time.perf_counter() - t0
        t0 = time.perf_counter()
        one = explore(ts, ExploreOptions(stop_at_first=False, workers=1))
        t_one = time.perf_counter() - t0
        runs = {}
        for name, spark_min in (("adaptive", args.spark_min), ("all", 0)):
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                runs[name] = explore_system_spark(
                    ts, spark, ExploreOptions(checkpoint_dir=Path(tmp), stop_at_first=False, workers=args.workers),
                    SparkOptions(partitions=args.partitions, spark_min=spark_min))
                runs[name + "_s"] = time.perf_counter() - t0
        counts = {(r.distinct_states, r.generated_states, r.depth, tuple(p.status for p in r.properties))
                  for r in (local, one, runs["adaptive"], runs["all"])}
        same = len(counts) == 1
        ok &= same
        levels = local.depth + 1
        row = {
            "target": target, "distinct_states": local.distinct_states, "generated_states": local.generated_states,
            "levels": levels, "local_seconds": round(t_local, 2), "local_1_worker_seconds": round(t_one, 2),
            "spark_seconds": round(runs["adaptive_s"], 2),
            "spark_levels_on_spark": runs["adaptive"].extra["spark"]["levels_on_spark"],
            "spark_all_levels_seconds": round(runs["all_s"], 2),
            "spark_fixed_cost_per_level": round((runs["all_s"] - t_local) / levels, 3),
            "spark_vs_local": round(runs["adaptive_s"] / t_local, 2),
            "spark_vs_local_1_worker": round(runs["adaptive_s"] / t_one, 2),
            "session_startup_seconds": round(startup, 1), "same_counts": same,
        }
        rows.append(row)
        print(f"{target:26} {row['distinct_states']:>10,} states {levels:>3} levels  local {t_local:>7.2f} s "
              f"(1 worker {t_one:>7.2f})  spark {runs['adaptive_s']:>7.2f} s ({row['spark_levels_on_spark']} on "
              f"Spark; x{row['spark_vs_local']} local)  every level on Spark {runs['all_s']:>7.2f} s "
              f"({row['spark_fixed_cost_per_level']:+.3f} s/level)  {'same' if same else 'MISMATCH'}", flush=True)
    path = write_results("explore", rows, {"master": master, "workers": args.workers, "spark_min": args.spark_min,
                                           "partitions": args.partitions}, args.json)
    print(f"rows written to {path}")
    return 0 if ok else 1


def _simulate(args: argparse.Namespace, spark: object, master: str, startup: float) -> int:
    proto, _, conf = args.simulate.partition(":")
    entry = get_protocol(proto)
    ts = entry.build(entry.configs[conf or "default"])
    rows = []
    for guided in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            r = simulate(ts, spark, traces=args.traces, depth=args.depth, seed=0, out_dir=Path(tmp),
                         partitions=args.partitions, guided=guided)
            dt = time.perf_counter() - t0
        row = {"target": args.simulate, "mode": "guided" if guided else "random", "traces": args.traces,
               "depth": args.depth, "steps": r.steps, "distinct_states": r.distinct_states, "seconds": round(dt, 2),
               "steps_per_s": round(r.steps / dt), "distinct_per_minute": round(r.distinct_states / dt * 60),
               "divergences": len(r.divergences), "session_startup_seconds": round(startup, 1)}
        rows.append(row)
        print(f"simulate {args.simulate} ({row['mode']}): {r.steps:,} checked steps in {dt:.2f} s = "
              f"{row['steps_per_s']:,} steps/s; {r.distinct_states:,} distinct states "
              f"({row['distinct_per_minute']:,} a minute)", flush=True)
    path = write_results("simulate", rows, {"master": master, "partitions": args.partitions}, args.json)
    print(f"rows written to {path}")
    return 0 if not any(row["divergences"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
