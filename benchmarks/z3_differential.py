"""The cost of the Z3 successor differential (the Z3 relation against the reference, state by state): the
solver path (before #22 item 3: every relation a solver query a state) against the compiled path (the
relations compiled once into guarded assignments, rollcheck/smt/compiled.py), beside their anchor: the
reference computing the same states' successors (not a test).

    python benchmarks/z3_differential.py                      # every encoded protocol's small and gate config
    python benchmarks/z3_differential.py zk_migration:faults --old-states 300 --new-states 20000

For each protocol / config / profile: the solver path on the first ``--old-states`` states in breadth-first
order, the compiled path on the first ``--new-states`` (0: every reachable state; it stops at a mismatch,
and the row says where), each in ms a state (the compiled path's fixed cost, compiling the relations and
the solver's control states, in ``new_fixed_seconds`` and included in its ms a state), the reference's
``successors`` on the same states (ms a state), each path's ratio to it, the speed-up (old / new ms a state)
and the seconds every reachable state takes on the compiled path. Both paths compare every action and every
parameter sub-relation (``check_successors(sym, ts, states, sym.parameter_relations())``). Rows go to
``benchmarks/results/z3_differential-<UTC time>-<commit>.json`` with the machine and the commit.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.benchresults import write
from rollcheck.core.registry import all_protocols, get_protocol
from rollcheck.smt.core import bfs_states, check_successors
from rollcheck.smt.prove import symbolic


def _reference_ms(ts: Any, states: list[Any]) -> float:
    t0 = time.perf_counter()
    for s in states:
        list(ts.successors(s))
    return 1000 * (time.perf_counter() - t0) / max(1, len(states))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default = [f"{e.name}:{c}" for e in all_protocols() if e.z3 is not None
               for c in dict.fromkeys(["small", e.gate_config])]
    ap.add_argument("targets", nargs="*", default=default)
    ap.add_argument("--old-states", type=int, default=200, help="states through the solver path")
    ap.add_argument("--new-states", type=int, default=0, help="states through the compiled path (0: every one)")
    args = ap.parse_args(argv)
    rows = []
    print(f"{'protocol:config/profile':36} {'old n':>6} {'old ms':>8} {'x ref':>7} {'new n':>8} {'new ms':>7} "
          f"{'x ref':>6} {'speed-up':>8} {'all states':>10}")
    for target in args.targets:
        name, _, label = target.partition(":")
        entry = get_protocol(name)
        for profile in entry.profiles:
            try:
                ts = entry.build(dataclasses.replace(entry.configs[label or "small"], profile=profile))
            except ValueError:
                continue  # a config this profile does not accept
            sym = symbolic(ts)
            subs = sym.parameter_relations()
            reachable = bfs_states(ts, 2**62)
            new_states = reachable if args.new_states <= 0 else reachable[:args.new_states]
            old_states = reachable[:args.old_states]
            t0 = time.perf_counter()
            old = check_successors(sym, ts, old_states, subs, compiled=False)
            old_ms = 1000 * (time.perf_counter() - t0) / max(1, old.states)
            t0 = time.perf_counter()
            check_successors(sym, ts, new_states[:1], subs)  # the fixed cost: compiling, one control state
            fixed = time.perf_counter() - t0
            t0 = time.perf_counter()
            new = check_successors(sym, ts, new_states, subs)
            new_seconds = time.perf_counter() - t0
            new_ms = 1000 * new_seconds / max(1, new.states)
            ref_old = _reference_ms(ts, old_states)
            ref_new = _reference_ms(ts, new_states[:new.states])
            row = {"protocol": name, "config": label or "small", "profile": profile,
                   "reachable_states": len(reachable),
                   "old_states": old.states, "old_seconds": round(old_ms * old.states / 1000, 3),
                   "old_ms_per_state": round(old_ms, 3), "old_reference_ms_per_state": round(ref_old, 4),
                   "old_ratio": round(old_ms / ref_old, 1) if ref_old else None,
                   "new_states": new.states, "new_transitions": new.transitions,
                   "new_seconds": round(new_seconds, 2), "new_fixed_seconds": round(fixed, 2),
                   "new_ms_per_state": round(new_ms, 3), "new_reference_ms_per_state": round(ref_new, 4),
                   "new_ratio": round(new_ms / ref_new, 1) if ref_new else None,
                   "speedup": round(old_ms / new_ms, 1) if new_ms else None,
                   "solver_only": new.solver_only,
                   "every_state_seconds": round(new_ms * len(reachable) / 1000, 1),
                   "old_mismatch": None if old.mismatch is None else str(old.mismatch),
                   "mismatch": None if new.mismatch is None else str(new.mismatch)}
            rows.append(row)
            print(f"{name + ':' + row['config'] + '/' + profile:36} {old.states:>6} {old_ms:>8.2f} "
                  f"{row['old_ratio']:>7} {new.states:>8,} {new_ms:>7.3f} {row['new_ratio']:>6} "
                  f"{row['speedup']:>8} {row['every_state_seconds']:>9}s"
                  + ("" if new.mismatch is None else f"  MISMATCH at state {new.states}: "
                     + str(new.mismatch).splitlines()[0][:120]), flush=True)
    path = write("z3_differential", rows, {"old_states": args.old_states, "new_states": args.new_states,
                                           "targets": args.targets})
    print(f"rows written to {path}")
    return 1 if any(r["mismatch"] or r["old_mismatch"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
