"""Benchmark: spec traces compared at scale (``rollcheck conform P --engine spark``), not a test.

    python benchmarks/conform_spark.py                                   # features:default, 100,000 traces, kip
    python benchmarks/conform_spark.py features:default --traces 10000 --extrapolate 100000

Runs the command itself, as a user would, under ``/usr/bin/time -v`` (when there is one: the peak memory of
the driver), with ``--json``, and records what its summary says: TLC's generation seconds, the
replay seconds on Spark, the traces per second, the divergences (a clean run has none), the master and the
machine's cores; and the command's wall-clock time (which also counts the Python and Spark start-up and
removing TLC's trace files). ``--extrapolate M`` adds figures for M traces scaled linearly from this run's
generation and replay rates, labelled as extrapolated. Rows go to ``benchmarks/results/conform_spark-*.json``
with the machine and the commit.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchresults import write as write_results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("target", nargs="?", default="features:default", metavar="PROTOCOL:CONFIG")
    ap.add_argument("--traces", type=int, default=100_000)
    ap.add_argument("--profile", default="kip", choices=("kip", "kafka"))
    ap.add_argument("--depth", type=int, default=30, help="states a trace has at most (conform's default: 30)")
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--extrapolate", type=int, default=None, metavar="M",
                    help="also give the figures scaled linearly to M traces (labelled extrapolated)")
    ap.add_argument("--json", type=Path, default=None, help="write the rows here")
    args = ap.parse_args()
    protocol, _, config = args.target.partition(":")
    with tempfile.TemporaryDirectory(prefix="conform-spark-bench-") as scratch:
        cmd = [sys.executable, "-m", "rollcheck", "conform", protocol, "--config", config or "default",
               "--engine", "spark", "--traces", str(args.traces), "--profile", args.profile,
               "--depth", str(args.depth), "--master", args.master, "--out", scratch, "--json", "--quiet"]
        timed = ["/usr/bin/time", "-v", *cmd] if Path("/usr/bin/time").exists() else cmd
        print("$ " + " ".join(cmd), flush=True)
        t0 = time.perf_counter()
        proc = subprocess.run(timed, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
    if proc.returncode not in (0, 3):
        print(f"the command failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}", file=sys.stderr)
        return 1
    doc = json.loads(proc.stdout)
    rep: dict[str, Any] = doc["reports"][0]
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    gen, replay = rep["seconds"]["generation"], rep["seconds"]["replay"]
    row: dict[str, Any] = {
        "target": f"{protocol}:{config or 'default'}", "profile": args.profile, "traces": rep["replayed"],
        "depth": args.depth, "states_replayed": rep["steps"], "divergent": rep["divergent"],
        "exit_code": proc.returncode,
        "generation_seconds": gen, "replay_seconds": replay,
        "writing_verdicts_seconds": rep["seconds"].get("writing_verdicts"),
        "generation_plus_replay_seconds": round(gen + replay, 2),
        "removing_trace_files_seconds": rep["seconds"].get("removing_trace_files"),
        "command_wall_seconds": round(wall, 2),
        "replay_traces_per_second": rep["traces_per_second"]["replay"],
        "overall_traces_per_second": rep["traces_per_second"]["overall"],
        "master": rep["spark"]["master"], "default_parallelism": rep["spark"]["default_parallelism"],
        "waves": rep["spark"]["waves"], **_waves(rep["spark"].get("wave_log", [])),
        "tlc_workers": rep["tlc_workers"], "cores": rep["cores"],
        # /usr/bin/time -v: the largest resident size among the driver and the children it waited for (TLC's
        # JVM among them); Spark's JVM and Python workers are not counted
        "max_rss_mib_driver_or_tlc": round(int(rss.group(1)) / 1024) if rss else None,
        "apalache": rep["apalache"]}
    if args.extrapolate:
        k = args.extrapolate / max(rep["replayed"], 1)
        row["extrapolated"] = {"traces": args.extrapolate, "generation_seconds": round(gen * k, 1),
                               "replay_seconds": round(replay * k, 1),
                               "generation_plus_replay_seconds": round((gen + replay) * k, 1),
                               "note": f"EXTRAPOLATED linearly from {rep['replayed']:,} traces, not measured"}
    print(f"{row['target']} ({args.profile}), {row['traces']:,} traces of up to {args.depth} states: "
          f"generation {gen:.1f} s, replay {replay:.1f} s ({row['replay_traces_per_second']:,.0f} traces/s), "
          f"{row['divergent']} divergent; the command {wall:.1f} s wall", flush=True)
    path = write_results("conform_spark", [row], {"master": args.master, "profile": args.profile,
                                                   "depth": args.depth, "traces": args.traces}, args.json)
    print(f"rows written to {path}")
    return 0


def _waves(log: list[dict[str, Any]]) -> dict[str, Any]:
    """The replay's Spark jobs: the first (Python workers started, their caches empty) and the last."""
    if not log:
        return {}
    return {"traces_per_wave": log[0]["traces"], "first_wave_seconds": log[0]["seconds"],
            "last_wave_seconds": log[-1]["seconds"]}


if __name__ == "__main__":
    sys.exit(main())
