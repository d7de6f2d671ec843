"""Does TLC's ``-simulate -seed`` give the same trace files with several workers? (not a test)

    python benchmarks/tlc_seed_determinism.py [PROTOCOL:CONFIG] [--traces N] [--workers W] [--runs R]

``rollcheck conform --engine spark`` names each verdict by the trace file TLC wrote (``tr_W_I``); a rerun
with the same ``--seed`` reproduces its verdicts only if TLC writes the same content under the same names.
This runs TLC R times with W workers and the same seed (and once with another seed), and compares the files
name by name. The row goes to ``benchmarks/results/tlc_seed_determinism-<UTC time>-<commit>.json``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.benchresults import write
from rollcheck.core.registry import get_protocol
from rollcheck.tla.conformance import tlc_simulation_files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("target", nargs="?", default="features:default")
    ap.add_argument("--traces", type=int, default=400)
    ap.add_argument("--depth", type=int, default=30)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    name, _, label = args.target.partition(":")
    entry = get_protocol(name)
    ts = entry.build(entry.configs[label or "default"])
    binding = entry.spec_binding()

    def run(seed: int) -> dict[str, str]:
        with tempfile.TemporaryDirectory() as d:
            files, _ = tlc_simulation_files(binding, ts, Path(d), traces=args.traces, depth=args.depth, seed=seed,
                                            timeout=1800, workers=args.workers)
            return {f.name: f.read_text() for f in files}

    t0 = time.perf_counter()
    runs = [run(args.seed) for _ in range(args.runs)]
    other = run(args.seed + 1)
    same = all(r == runs[0] for r in runs)
    row = {"protocol": name, "config": label or "default", "traces": args.traces, "depth": args.depth,
           "workers": args.workers, "runs": args.runs, "seed": args.seed, "files": len(runs[0]),
           "identical_per_file": same, "other_seed_differs": other != runs[0],
           "seconds": round(time.perf_counter() - t0, 1)}
    print(row)
    print(f"rows written to {write('tlc_seed_determinism', [row], vars(args))}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
