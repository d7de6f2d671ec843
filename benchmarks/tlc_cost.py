"""What TLC's property checking costs: the same spec and config checked with nothing, with the invariants
only, with the step properties (``PROPERTY [][A]_vars``) only, with everything, and each step property
alone, side by side in one run (TLC with one worker, so that times are comparable).

    python benchmarks/tlc_cost.py features:default metadata_version:default --profile kip

TLC evaluates an invariant once per distinct state, but a step property once per *generated* transition
(including transitions into states already seen: that is where a step can go wrong), so its cost grows
with generated / distinct (about 10-20 here). Rows go to ``benchmarks/results/tlc_cost-*.json``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from benchresults import write as write_results

from rollcheck.core.registry import get_protocol
from rollcheck.tla.binding import binding_for, write_model
from rollcheck.tla.tlc import run_tlc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("targets", nargs="+", metavar="PROTOCOL:CONFIG")
    ap.add_argument("--profile", default="kip", choices=("kip", "kafka"))
    ap.add_argument("--each", action="store_true", help="also time each step property alone")
    ap.add_argument("--json", type=Path, default=None, help="write the rows here")
    args = ap.parse_args()
    rows = []
    for target in args.targets:
        proto, _, conf = target.partition(":")
        entry = get_protocol(proto)
        ts = entry.build(replace(entry.configs[conf or "default"], profile=args.profile))
        props = ts.properties()
        invariants = {p.id: True for p in props if p.kind == "invariant"}
        steps = {p.id: True for p in props if p.kind == "step"}
        modes: list[tuple[str, dict[str, bool] | None, bool]] = [
            ("nothing", None, False), ("invariants", invariants, True), ("step properties", steps, True),
            ("everything", None, True)]
        if args.each:
            modes += [(f"only {pid}", {pid: True}, True) for pid in steps]
        base = None
        for mode, only, check in modes:
            with tempfile.TemporaryDirectory() as tmp:
                model = write_model(binding_for(proto), ts, Path(tmp) / "tlc", only=only, check_properties=check)
                res = run_tlc(model.directory, model.module, model.cfg, workers=1, timeout=3600)
            if res.error or res.violated:
                print(f"{target} {mode}: TLC failed: {res.error or res.violated}")
                return 1
            secs = res.elapsed
            base = base or secs
            row = {"target": target, "profile": args.profile, "mode": mode,
                   "distinct_states": res.distinct_states, "generated_states": res.generated_states,
                   "seconds": round(secs, 2), "states_per_s": round((res.distinct_states or 0) / secs),
                   "generated_per_s": round((res.generated_states or 0) / secs),
                   "over_nothing": round(secs / base, 2)}
            rows.append(row)
            print(f"{target:28} {mode:26} {row['distinct_states']:>9,} {row['seconds']:>8} s "
                  f"{row['states_per_s']:>8,}/s  x{row['over_nothing']}", flush=True)
    path = write_results("tlc_cost", rows, {"profile": args.profile, "tlc_workers": 1}, args.json)
    print(f"rows written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
