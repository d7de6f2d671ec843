"""Z3 proof times per property and depth for the encoded protocols, printed as a table (not a test).

    python benchmarks/prove.py [PROTOCOL:CONFIG ...] [--depths 2,4,6,8] [--timeout S]

For each protocol / config / profile and encoded invariant: the time of BMC to each depth (or the depth of
the counterexample), and the verdict and time of k-induction (k = 1, 2). Then the decision-rule
differential checks (inputs per second).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rollcheck.core.registry import all_protocols, get_protocol
from rollcheck.smt.core import bmc, k_induction
from rollcheck.smt.decisions import differential
from rollcheck.smt.prove import symbolic


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("targets", nargs="*", default=[f"{e.name}:small" for e in all_protocols() if e.z3 is not None])
    ap.add_argument("--depths", default="2,4,6,8")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--no-decisions", action="store_true")
    args = ap.parse_args(argv)
    depths = [int(d) for d in args.depths.split(",")]
    head = f"{'protocol/config/profile':34} {'property':9}" + "".join(f" {'bmc@' + str(d):>9}" for d in depths)
    print(head + f" {'k-induction':>24}")
    for target in args.targets:
        name, _, label = target.partition(":")
        entry = get_protocol(name)
        for profile in ("kip", "kafka"):
            ts = entry.build(dataclasses.replace(entry.configs[label or "small"], profile=profile))
            sym = symbolic(ts)
            for pid in sym.encoded():
                cells = []
                for d in depths:
                    r = bmc(sym, pid, d, args.timeout)
                    cells.append(f"{r.seconds:8.2f}s" if r.status == "checked" else f"{'cex@' + str(r.depth):>9}")
                ind = "-"
                for k in (1, 2):
                    t0 = time.perf_counter()
                    r = k_induction(sym, pid, k, args.timeout)
                    ind = f"{r.status} k={k} {time.perf_counter() - t0:6.2f}s"
                    if r.status != "unknown":
                        break
                print(f"{name + '/' + (label or 'small') + '/' + profile:34} {pid:9}" + " ".join(cells) + f" {ind:>24}")
    if not args.no_decisions:
        print()
        print(f"{'decision rule':18} {'cases':>6} {'inputs':>9} {'seconds':>8} {'inputs/s':>9}  verdict")
        rules = [(rule, cases) for entry in all_protocols() if entry.decisions
                 for rule, cases in entry.decision_rules().full.items()]
        for rule, cases in rules:
            res = differential(rule, cases())
            verdict = "agree" if res.ok else f"DISAGREE: {res.disagreement}"
            rate = res.inputs / max(res.seconds, 1e-9)
            print(f"{rule:18} {res.cases:6} {res.inputs:9} {res.seconds:8.2f} {rate:9.0f}"
                  f"  {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
