"""Benchmark: the local and Spark explorers on the same configs (not a test).

    python benchmarks/explore.py                          # every protocol's small and default configs
    python benchmarks/explore.py features:default --master 'local[2]' --json out.json

For each protocol:config it prints distinct and generated states per second for both engines (the local
one with ``--workers`` processes, no graph properties, like the Spark engine), the Spark engine's time per
BFS level, and checks that both found the same counts (a mismatch is a bug and exits 1). Rows go to
``benchmarks/results/`` as JSON with the machine and the commit; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from benchresults import write as write_results

from rollcheck.explorer import explore
from rollcheck.registry import get_protocol, protocol_names
from rollcheck.spark.explorer import explore_system_spark
from rollcheck.spark.session import get_session


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="*", help="protocol:config (default: every protocol's small, default)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--partitions", type=int, default=None)
    parser.add_argument("--workers", type=int, default=2, help="local explorer worker processes (default 2)")
    parser.add_argument("--json", type=Path, default=None,
                        help="write the rows here (default: a new file under benchmarks/results/)")
    args = parser.parse_args()
    targets = args.targets or [f"{p}:{c}" for p in protocol_names() for c in ("small", "default")]
    spark = get_session(args.master)
    rows = []
    ok = True
    for target in targets:
        proto, _, conf = target.partition(":")
        entry = get_protocol(proto)
        ts = entry.build(entry.configs[conf or "default"])
        t0 = time.perf_counter()
        local = explore(ts, stop_at_first=False, check_graph=False, workers=args.workers)
        t_local = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            dist = explore_system_spark(ts, spark, out_dir=Path(tmp), run_key={"bench": target},
                                        partitions=args.partitions, stop_at_first=False)
            t_spark = time.perf_counter() - t0
        same = (local.distinct_states, local.depth, local.generated_states) == \
            (dist.distinct_states, dist.depth, dist.generated_states)
        ok &= same
        rows.append({
            "target": target, "distinct_states": local.distinct_states, "generated_states": local.generated_states,
            "depth": local.depth, "local_seconds": round(t_local, 2),
            "local_distinct_per_s": round(local.distinct_states / t_local),
            "local_generated_per_s": round(local.generated_states / t_local),
            "spark_seconds": round(t_spark, 2), "spark_distinct_per_s": round(dist.distinct_states / t_spark),
            "spark_seconds_per_level": round(t_spark / max(dist.depth + 1, 1), 2), "same_counts": same,
        })
        r = rows[-1]
        print(f"{target:28} {r['distinct_states']:>10,} states  local {r['local_seconds']:>7.2f} s "
              f"({r['local_distinct_per_s']:>8,}/s)  spark {r['spark_seconds']:>7.2f} s "
              f"({r['spark_distinct_per_s']:>8,}/s, {r['spark_seconds_per_level']} s/level)  "
              f"{'same' if same else 'MISMATCH'}", flush=True)
    path = write_results("explore", rows, {"master": args.master, "workers": args.workers}, args.json)
    print(f"rows written to {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
