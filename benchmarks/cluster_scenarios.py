"""Benchmark: the runbooks on real local clusters, one after the other (not a test).

    python benchmarks/cluster_scenarios.py            # every scenario of docs/runbooks.md's table
    python benchmarks/cluster_scenarios.py --only STR  # the scenarios whose runbook id starts with STR

Each scenario is the command ``rollcheck runbook FILE --cluster [--release R] [--fault F]... --json``, timed from
its start to its end, with the jars already fetched and the adapters built (a first run on a new machine fetches
them: run it twice and keep the second). A row holds the scenario, its exit code, whether the observed trace is valid,
the observations, the seconds and the memory (the sum over the nodes of each one's highest peak resident set seen
at an observation). Rows go to ``benchmarks/results/`` with the machine and the commit. Measure quiet: nothing else
running, least of all a gate or another cluster.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from benchresults import write as write_results

ROOT = Path(__file__).resolve().parents[1]
R = "runbooks"
# (runbook, releases or None for the default, faults): the scenarios of docs/runbooks.md, in its table's order.
SCENARIOS: list[tuple[str, str | None, tuple[str, ...]]] = [
    (f"{R}/metadata_version/kraft-upgrade.toml", None, ()),
    (f"{R}/metadata_version/kraft-upgrade-then-safe-downgrade.toml", None, ("roll-c1:kill",)),
    (f"{R}/metadata_version/kraft-upgrade.toml", None, ("roll-c0:pause:voter:2",)),
    (f"{R}/metadata_version/kraft-upgrade.toml", None, ("roll-c0:previous",)),
    (f"{R}/zk_migration/migrate.toml", None, ()),
    (f"{R}/zk_migration/revert-after-broker-migration.toml", None, ()),
    (f"{R}/features/zk-enable-versioning.toml", None, ()),
    (f"{R}/streams_probing/single-bounce.toml", None, ()),
    (f"{R}/streams_probing/double-bounce.toml", None, ()),
    (f"{R}/streams_probing/single-bounce-leader-last.toml", None, ("bounce-1:kill:instance:0",)),
    (f"{R}/streams_probing/single-bounce-leader-last.toml", "2.0.1:2.1.1", ("bounce-1:kill:instance:0",)),
]


def _argv(runbook: str, releases: str | None, faults: tuple[str, ...], out: Path) -> list[str]:
    argv = [sys.executable, "-m", "rollcheck", "runbook", runbook, "--cluster", "--json", "--quiet",
            "--out", str(out)]
    if releases:
        argv += ["--release", releases]
    for f in faults:
        argv += ["--fault", f]
    return argv


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="only the scenarios whose runbook id starts with this")
    parser.add_argument("--json", type=Path, default=None, help="write the rows here (default: benchmarks/results/)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="rollcheck-cluster-bench-") as tmp:
        for n, (runbook, releases, faults) in enumerate(SCENARIOS):
            book_id = tomllib.loads((ROOT / runbook).read_text(encoding="utf-8"))["id"]
            if not book_id.startswith(args.only):
                continue
            out = Path(tmp) / str(n)
            tick = time.perf_counter()
            run = subprocess.run(_argv(runbook, releases, faults, out), cwd=ROOT, capture_output=True, text=True,
                                 check=False)
            seconds = time.perf_counter() - tick
            try:
                doc = json.loads(run.stdout)
            except ValueError:
                print(f"{book_id} {releases or ''} {' '.join(faults)}: exit {run.returncode}: "
                      f"{run.stderr.strip()[-300:]}", file=sys.stderr)
                return 2
            row = {"runbook": doc["runbook"], "file": runbook, "releases": doc["releases"], "faults": doc["faults"],
                   "exit": run.returncode, "valid": doc["valid"], "observations": len(doc["steps"]),
                   "seconds": round(seconds, 1), "memory_mib": doc["memory_mib"]["total"],
                   "nodes": len(doc["memory_mib"]) - 1}
            rows.append(row)
            print(f"{row['runbook']} {':'.join(row['releases'])} {' '.join(row['faults'])}: exit {row['exit']}, "
                  f"{row['observations']} observations, {row['seconds']} s, {row['memory_mib']} MiB "
                  f"({row['nodes']} nodes)", file=sys.stderr)
    path = write_results("cluster_scenarios", rows, {"only": args.only}, args.json)
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
