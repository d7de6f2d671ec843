"""Benchmark: every named config of every protocol through the local explorer (not a test).

    python benchmarks/explore_configs.py                       # every config but `large`, each protocol's profiles
    python benchmarks/explore_configs.py --protocol zk_migration --scaling
    python benchmarks/explore_configs.py --protocol features --config large --profile kip   # one large config

For each protocol, config and profile it explores with ``--workers`` processes, every property checked,
and prints distinct states, transitions, depth, seconds and states per second; with ``--scaling`` it
also runs one worker and prints the speed-up. Each row also has the maximum RSS so far of this process
and of its largest worker (``ru_maxrss``: a high-water mark, so run a large config on its own).
docs/protocols/*.md's tables take their counts and times from here. Rows go to ``benchmarks/results/``
as JSON with the machine and the commit.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from dataclasses import replace
from pathlib import Path

from benchresults import write as write_results

from rollcheck.core.registry import get_protocol, protocol_names
from rollcheck.explore.explorer import GRAPH_LIMIT, ExploreOptions, explore


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--protocol", action="append", default=None)
    parser.add_argument("--config", action="append", default=None)
    parser.add_argument("--profile", action="append", default=None, help="only this profile (where a protocol has it)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scaling", action="store_true", help="also run one worker (the speed-up)")
    parser.add_argument("--graph-limit", type=int, default=GRAPH_LIMIT, help="as `rollcheck explore --graph-limit`")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = []
    for proto in args.protocol or protocol_names():
        entry = get_protocol(proto)
        for conf in args.config or [c for c in entry.configs if c != "large"]:
            if conf not in entry.configs:
                continue
            for profile in [p for p in entry.profiles if args.profile is None or p in args.profile]:
                try:
                    ts = entry.build(replace(entry.configs[conf], profile=profile))
                except ValueError as exc:  # a config for one profile only
                    print(f"{proto}:{conf}:{profile}: {exc}")
                    continue
                t0 = time.perf_counter()
                r = explore(ts, ExploreOptions(stop_at_first=False, workers=args.workers, graph_limit=args.graph_limit))
                dt = time.perf_counter() - t0
                row = {"protocol": proto, "config": conf, "profile": profile, "distinct_states": r.distinct_states,
                       "generated_states": r.generated_states, "depth": r.depth, "workers": args.workers,
                       "seconds": round(dt, 2), "states_per_s": round(r.distinct_states / dt),
                       "violated": sorted(r.violated_ids),
                       "not_checked": [p.id for p in r.properties if p.status == "not checked"],
                       "bytes_per_state": r.extra["visited_set"]["bytes_per_state"],
                       "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
                       "max_worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024,
                       "phase_seconds": r.extra["phase_seconds"]}
                if args.scaling and args.workers > 1:
                    t0 = time.perf_counter()
                    one = explore(ts, ExploreOptions(stop_at_first=False, workers=1))
                    row["seconds_1_worker"] = round(time.perf_counter() - t0, 2)
                    row["speedup"] = round(row["seconds_1_worker"] / dt, 2)
                    assert one.distinct_states == r.distinct_states
                rows.append(row)
                print(f"{proto:17} {conf:15} {profile:9} {r.distinct_states:>10,} states {r.generated_states:>11,} "
                      f"transitions depth {r.depth:>3}  {dt:>7.2f} s {row['states_per_s']:>8,}/s"
                      + (f"  1 worker {row['seconds_1_worker']} s (x{row['speedup']})" if "speedup" in row else "")
                      + (f"  violated {row['violated']}" if row["violated"] else "")
                      + (f"  not checked {row['not_checked']}" if row["not_checked"] else "")
                      + f"  max RSS {row['max_rss_mb']:,} MB (worker {row['max_worker_rss_mb']:,} MB)", flush=True)
    path = write_results("explore_configs", rows, {"workers": args.workers}, args.json)
    print(f"rows written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
