"""Benchmark: distinct states and time with and without symmetry reduction (not a test).

    python benchmarks/symmetry.py                          # every protocol's small and default configs
    python benchmarks/symmetry.py zk_migration:faults --profile kafka

For each protocol:config it explores the config twice (``--workers`` processes, every property checked)
and prints the states, seconds and the reduction; the property verdicts must be equal (else exit 1).
Rows go to ``benchmarks/results/`` as JSON with the machine and the commit.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from benchresults import write as write_results

from rollcheck.core.registry import get_protocol, protocol_names
from rollcheck.explore.explorer import ExploreOptions, explore


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="*", help="protocol:config (default: every protocol's small, default)")
    parser.add_argument("--profile", choices=("kip", "kafka"), default="kip")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    targets = args.targets or [f"{p}:{c}" for p in protocol_names() for c in ("small", "default")]
    rows = []
    ok = True
    for target in targets:
        proto, _, conf = target.partition(":")
        entry = get_protocol(proto)
        ts = entry.build(replace(entry.configs[conf or "default"], profile=args.profile))
        runs = {}
        for sym in (False, True):
            t0 = time.perf_counter()
            runs[sym] = (explore(ts, ExploreOptions(stop_at_first=False, workers=args.workers, symmetry=sym)),
                         time.perf_counter() - t0)
        (plain, t_plain), (red, t_red) = runs[False], runs[True]
        same = [(p.id, p.status) for p in plain.properties] == [(p.id, p.status) for p in red.properties]
        ok &= same
        rows.append({"target": target, "profile": args.profile, "states": plain.distinct_states,
                     "states_symmetry": red.distinct_states, "seconds": round(t_plain, 2),
                     "seconds_symmetry": round(t_red, 2),
                     "reduction": round(plain.distinct_states / max(red.distinct_states, 1), 2),
                     "same_verdicts": same})
        r = rows[-1]
        print(f"{target:28} {r['states']:>10,} -> {r['states_symmetry']:>10,} states (x{r['reduction']})  "
              f"{r['seconds']:>7.2f} s -> {r['seconds_symmetry']:>7.2f} s  "
              f"{'same verdicts' if same else 'VERDICTS DIFFER'}", flush=True)
    path = write_results("symmetry", rows, {"profile": args.profile, "workers": args.workers}, args.json)
    print(f"rows written to {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
