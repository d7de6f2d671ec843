"""The cost of the Z3 successor differential (the Z3 relation against the reference, state by state), beside
its anchor: the reference computing the same states' successors (not a test).

    python benchmarks/z3_differential.py                          # every encoded protocol's small config
    python benchmarks/z3_differential.py zk_migration:faults --states 300

For each protocol / config / profile: the first N states in breadth-first order (0: every reachable state),
the seconds of ``rollcheck.smt.checker.successor_differential`` on them (successors and parameter
sub-relations, both directions), the seconds of the reference's ``successors`` on the same states, ms per
state for each, their ratio, and the config's reachable state count with the time every state would take
at that rate (what "the differential on every reachable state" would cost the gate). Rows go to
``benchmarks/results/z3_differential-<UTC time>-<commit>.json`` with the machine and the commit.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.benchresults import write
from rollcheck.explorer import reachable_states
from rollcheck.registry import all_protocols, get_protocol
from rollcheck.smt.checker import successor_differential
from rollcheck.smt.core import bfs_states
from rollcheck.smt.prove import symbolic


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("targets", nargs="*", default=[f"{e.name}:small" for e in all_protocols() if e.z3 is not None])
    ap.add_argument("--states", type=int, default=200, help="states per target (0: every reachable state)")
    args = ap.parse_args(argv)
    rows = []
    print(f"{'protocol:config/profile':36} {'states':>7} {'z3 ms/state':>12} {'ref ms/state':>13} {'ratio':>7} "
          f"{'reachable':>10} {'all states':>11}")
    for target in args.targets:
        name, _, label = target.partition(":")
        entry = get_protocol(name)
        for profile in ("kip", "kafka"):
            try:
                ts = entry.build(dataclasses.replace(entry.configs[label or "small"], profile=profile))
            except ValueError:
                continue  # a config this profile does not accept
            states = bfs_states(ts, args.states if args.states > 0 else 2**62)
            t0 = time.perf_counter()
            for s in states:
                list(ts.successors(s))
            ref = time.perf_counter() - t0
            sym = symbolic(ts)
            t0 = time.perf_counter()
            res = successor_differential(sym, ts, len(states))
            z3_seconds = time.perf_counter() - t0
            reachable = len(reachable_states(ts)[0])
            z3_ms = 1000 * z3_seconds / max(1, res["states"])
            ref_ms = 1000 * ref / max(1, len(states))
            row = {"protocol": name, "config": label or "small", "profile": profile, "states": res["states"],
                   "transitions": res["transitions"], "mismatch": res["mismatch"],
                   "z3_seconds": round(z3_seconds, 3), "reference_seconds": round(ref, 4),
                   "z3_ms_per_state": round(z3_ms, 2), "reference_ms_per_state": round(ref_ms, 4),
                   "ratio": round(z3_ms / ref_ms, 1) if ref_ms else None, "reachable_states": reachable,
                   "every_state_seconds_estimate": round(z3_ms * reachable / 1000, 1)}
            rows.append(row)
            print(f"{name + ':' + row['config'] + '/' + profile:36} {row['states']:>7} {z3_ms:>12.1f} "
                  f"{ref_ms:>13.3f} {row['ratio']:>7} {reachable:>10,} {row['every_state_seconds_estimate']:>10}s"
                  + ("" if res["mismatch"] is None else f"  MISMATCH {res['mismatch']}"), flush=True)
    path = write("z3_differential", rows, {"states": args.states, "targets": args.targets})
    print(f"rows written to {path}")
    return 1 if any(r["mismatch"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
