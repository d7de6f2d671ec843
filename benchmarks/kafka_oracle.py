"""Benchmark: what the Kafka oracle adds to an exploration (not a test).

    python benchmarks/kafka_oracle.py                                   # metadata_version:default at 3.9.2
    python benchmarks/kafka_oracle.py streams_probing:small --release 2.4.1 --no-spark

In one run, on the config as the binding makes it stand for the release: the explorer alone (every property
checked, no question asked), then ``rollcheck kafka`` with the local engine and with the Spark engine
(``local[2]``). The release is built and its JVM started once before the timed runs (the start-up is a row of its
own), so the rows compare the steady cost. The figure that counts is ``oracle_over_explore``: the time the
oracle adds, as a multiple of the explorer's time in the same run (target: at most 1). Rows go to
``benchmarks/results/`` with the machine and the commit. Measure quiet: nothing else running.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from benchresults import write as write_results

from rollcheck.core.errors import UserError
from rollcheck.explore.explorer import Exploration, ExploreOptions
from rollcheck.oracle.check import binding_of, entry_of, find_release, prepare, run_check
from rollcheck.oracle.client import OracleClient


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", nargs="?", default="metadata_version:default", help="protocol:config")
    parser.add_argument("--release", default="3.9.2")
    parser.add_argument("--no-spark", action="store_true", help="leave out the Spark engine's row")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    proto, _, conf = args.target.partition(":")
    conf = conf or "default"
    try:
        entry = entry_of(proto)
        binding = binding_of(entry)
        release = find_release(binding, args.release)
        label, _config, system = prepare(entry, binding, release, conf, None)
    except UserError as exc:
        print(f"kafka_oracle benchmark: {exc}", file=sys.stderr)
        return 2
    rows: list[dict[str, object]] = []
    params = {"target": f"{proto}:{conf}", "release": release.name}
    path = args.json

    def keep(row: dict[str, object]) -> None:
        # every row is written as soon as it is measured: an interrupted run keeps what it measured
        nonlocal path
        rows.append(row)
        path = write_results("kafka_oracle", rows, params, path)

    client = OracleClient(binding)
    try:
        tick = time.perf_counter()
        # Builds (if needed) and starts the release's JVM: an op no handler knows is answered with its exception.
        client.ask(release.name, [{"op": "benchmark.start"}])
        keep({"mode": "jvm_start", "seconds": round(time.perf_counter() - tick, 3),
                     "startup_seconds": client.stats().get("startup_seconds", {})})
        tick = time.perf_counter()
        explored = Exploration(system, ExploreOptions(config_name=label, stop_at_first=False)).run()
        alone = time.perf_counter() - tick
        keep({"mode": "explore", "seconds": round(alone, 3), "states": explored.distinct_states})
        print(f"explorer alone: {explored.distinct_states:,} states in {alone:.2f} s", flush=True)
        engines = ["local"] + ([] if args.no_spark else ["spark"])
        for engine in engines:
            tick = time.perf_counter()
            result = run_check(entry, release.name, conf, engine=engine, client=client if engine == "local" else None)
            seconds = time.perf_counter() - tick
            row = {"mode": f"oracle_{engine}", "seconds": round(seconds, 3), "states": result.states,
                   "decisions": result.decisions, "distinct_requests": result.distinct_requests,
                   "round_trips": result.round_trips, "verdict": result.verdict,
                   "decisions_per_second": round(result.decisions / seconds),
                   "oracle_over_explore": round((seconds - alone) / alone, 3)}
            keep(row)
            print(f"oracle, {engine} engine: {result.decisions:,} decisions in {seconds:.2f} s "
                  f"({row['decisions_per_second']:,}/s), {row['oracle_over_explore']}x the explorer's time added, "
                  f"{result.verdict}", flush=True)
    finally:
        client.close()
    print(f"rows written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
