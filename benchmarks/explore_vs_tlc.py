"""Benchmark: TLC (2 workers) against rollcheck's explorers on the same configs (not a test).

    python benchmarks/explore_vs_tlc.py                               # every protocol with a spec
    python benchmarks/explore_vs_tlc.py features:default zk_migration:default --no-spark
    python benchmarks/explore_vs_tlc.py streams_probing:large --profile kafka --json out.json

For each protocol:config (default: the largest config that both finish in a few minutes, per protocol
below) it prints distinct states, wall time and distinct states per second for TLC (raw: no property
checks, ``-workers 2``), the local explorer with ``--workers`` processes checking every property (graph
properties included), the same explorer with one worker (the speed-up), and the Spark explorer, with
the ratios. TLC counts the spec's states (the reference's views); the explorers count reference states:
the counts must be equal (a mismatch exits 1). Rows go to ``benchmarks/results/`` as JSON with the
machine and the commit.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from benchresults import write as write_results

from rollcheck.core.hashenv import reexec_for_stable_hashes
from rollcheck.core.registry import get_protocol
from rollcheck.explore.explorer import ExploreOptions, explore
from rollcheck.tla.binding import binding_for, spec_protocols, write_model
from rollcheck.tla.tlc import run_tlc

# The largest named config of each protocol that TLC and both explorers finish in a few minutes here.
LARGEST = {"streams_probing": "large", "features": "small", "metadata_version": "small", "zk_migration": "faults"}


def main() -> int:
    # Spark executors must fingerprint states as this process does (rollcheck.core.hashenv).
    reexec_for_stable_hashes(sys.argv)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="*", help="protocol:config (default: each protocol with a spec)")
    parser.add_argument("--profile", choices=("kip", "kafka"), default="kip")
    parser.add_argument("--master", default="local[2]", help="Spark master (default: local[2])")
    parser.add_argument("--no-spark", action="store_true", help="skip the Spark engine")
    parser.add_argument("--workers", type=int, default=2, help="explorer worker processes (default 2)")
    parser.add_argument("--no-scaling", action="store_true", help="skip the one-worker run (the speed-up)")
    parser.add_argument("--json", type=Path, default=None,
                        help="write the rows here (default: a new file under benchmarks/results/)")
    args = parser.parse_args()
    targets = args.targets or [f"{p}:{LARGEST.get(p, 'small')}" for p in spec_protocols()]
    spark = None
    if not args.no_spark:
        from rollcheck.spark.session import get_session

        spark = get_session(args.master)
    rows = []
    ok = True
    print(f"{'target':30} {'states':>10} {'TLC s':>8} {'TLC st/s':>10} {'local s':>8} {'local st/s':>10} "
          f"{'spark s':>8} {'spark st/s':>10} {'TLC/local':>9} {'TLC/spark':>9}  counts  1->N workers")
    for target in targets:
        proto, _, conf = target.partition(":")
        entry = get_protocol(proto)
        ts = entry.build(replace(entry.configs[conf or "default"], profile=args.profile))
        with tempfile.TemporaryDirectory() as tmp:
            model = write_model(binding_for(proto), ts, Path(tmp) / "tlc", check_properties=False)
            t0 = time.perf_counter()
            tlc = run_tlc(model.directory, model.module, model.cfg, workers=2, timeout=3600)
            t_tlc = time.perf_counter() - t0
        if tlc.error:
            print(f"{target}: TLC failed: {tlc.error}")
            ok = False
            continue
        t0 = time.perf_counter()
        local = explore(ts, ExploreOptions(stop_at_first=False, workers=args.workers))
        t_local = time.perf_counter() - t0
        t_one = None
        if not args.no_scaling and args.workers > 1:
            t0 = time.perf_counter()
            one = explore(ts, ExploreOptions(stop_at_first=False, workers=1))
            t_one = time.perf_counter() - t0
            if one.distinct_states != local.distinct_states:
                print(f"{target}: 1 worker found {one.distinct_states:,} states, {args.workers} found "
                      f"{local.distinct_states:,}")
                ok = False
        t_spark = None
        spark_states = None
        if spark is not None:
            from rollcheck.spark.explorer import explore_system_spark

            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                dist = explore_system_spark(ts, spark, ExploreOptions(checkpoint_dir=Path(tmp), stop_at_first=False,
                                                                      workers=args.workers))
                t_spark = time.perf_counter() - t0
                spark_states = dist.distinct_states
        same = tlc.distinct_states == local.distinct_states and spark_states in (None, local.distinct_states)
        ok &= same
        row = {"target": target, "profile": args.profile, "distinct_states": local.distinct_states,
               "tlc_states": tlc.distinct_states, "spark_states": spark_states,
               "tlc_seconds": round(t_tlc, 2), "tlc_states_per_s": round((tlc.distinct_states or 0) / t_tlc),
               "local_workers": args.workers, "local_checks": "every property",
               "local_seconds": round(t_local, 2), "local_states_per_s": round(local.distinct_states / t_local),
               "local_1_worker_seconds": None if t_one is None else round(t_one, 2),
               "speedup_1_to_n_workers": None if t_one is None else round(t_one / t_local, 2),
               "local_over_tlc_speed": round(t_tlc / t_local, 2),
               "visited_bytes_per_state": local.extra["visited_set"]["bytes_per_state"],
               "spark_seconds": None if t_spark is None else round(t_spark, 2),
               "spark_states_per_s": None if t_spark is None else round(local.distinct_states / t_spark),
               "tlc_over_local": round(t_tlc / t_local, 2),
               "tlc_over_spark": None if t_spark is None else round(t_tlc / t_spark, 2), "same_counts": same}
        rows.append(row)
        spark_cols = (f"{row['spark_seconds']:>8} {row['spark_states_per_s']:>10,}" if t_spark is not None
                      else f"{'-':>8} {'-':>10}")
        print(f"{target:30} {row['distinct_states']:>10,} {row['tlc_seconds']:>8} {row['tlc_states_per_s']:>10,} "
              f"{row['local_seconds']:>8} {row['local_states_per_s']:>10,} {spark_cols} "
              f"{row['tlc_over_local']:>9} {row['tlc_over_spark'] if row['tlc_over_spark'] is not None else '-':>9}"
              f"  {'equal' if same else 'MISMATCH'}  {row['speedup_1_to_n_workers'] or '-'}", flush=True)
    path = write_results("explore_vs_tlc", rows, {"profile": args.profile, "workers": args.workers,
                                                   "tlc_workers": 2, "spark": not args.no_spark}, args.json)
    print(f"rows written to {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
