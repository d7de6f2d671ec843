"""The gate's wall time at this checkout beside an anchor commit's, measured in one session.

    python benchmarks/gate.py                               # ci tier, HEAD's working tree vs the anchor
    python benchmarks/gate.py --anchor 50414c0 --tier ci    # the anchor is any commit of this repository
    python benchmarks/gate.py --protocol zk_migration       # one protocol (passed on to both gates)

The machine is shared and noisy, so the figure that counts is the ratio of the two runs, taken back to back
(the anchor first, then this checkout). The anchor runs from a copy of its tree (``git archive``) with the
copy first on ``PYTHONPATH`` and as working directory, so its own packages win over the editable install;
this checkout runs as installed. Each run is ``rollcheck gate --tier T --json --quiet``; its summary gives
the verdict and the seconds per checker (the sum of the cells' times, which overlap under ``--parallel``).

One JSON file under ``benchmarks/results/`` (``gate_<tier>-<UTC time>-<commit>.json``) with the machine, the
commit, one row per run and the ratio. Ctrl-C stops the running gate and writes nothing.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.benchresults import write

ROOT = Path(__file__).resolve().parent.parent
# The anchor of the ci tier's figure in docs/gate.md (247 s on 2026-11-25, before the tier grew).
DEFAULT_ANCHOR = "50414c0"


def _fail(message: str) -> NoReturn:
    """A user mistake or a run that gave nothing to measure: one line on stderr, exit 2."""
    print(f"gate.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, timeout=120, check=False)


def resolve(commit: str) -> str:
    proc = _git("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    if proc.returncode != 0:
        _fail(f"{commit!r} is not a commit of this repository")
    return proc.stdout.decode().strip()


def export_tree(commit: str, dest: Path) -> None:
    """The commit's files (no .git), as ``git archive`` writes them."""
    proc = _git("archive", "--format=tar", commit)
    if proc.returncode != 0:
        _fail(f"git archive {commit} failed: {proc.stderr.decode().strip()}")
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(dest, filter="data")


def run_gate(cwd: Path, env: dict[str, str], tier: str, out: Path, extra: Sequence[str]) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "rollcheck", "gate", "--tier", tier, "--json", "--quiet", "--out", str(out),
           *extra]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        _fail(f"the gate in {cwd} printed no JSON summary (exit {proc.returncode}): {last}")
    per_checker: dict[str, float] = {}
    for r in doc.get("reports", []):
        per_checker[r["checker"]] = round(per_checker.get(r["checker"], 0.0) + float(r.get("elapsed_seconds", 0.0)), 1)
    return {"tier": tier, "exit_code": proc.returncode, "verdict": doc.get("verdict"),
            "wall_seconds": round(wall, 1), "gate_elapsed_seconds": doc.get("elapsed_seconds"),
            "cells": len(doc.get("reports", [])), "findings": len(doc.get("findings", [])),
            "checker_seconds": per_checker}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--anchor", default=DEFAULT_ANCHOR, metavar="COMMIT",
                   help=f"the commit measured beside this checkout (default {DEFAULT_ANCHOR})")
    p.add_argument("--tier", choices=("ci", "nightly"), default="ci", help="gate tier (default ci)")
    p.add_argument("--protocol", action="append", default=[], metavar="NAME",
                   help="only this protocol, in both gates (repeatable)")
    p.add_argument("--parallel", type=int, default=None, metavar="N", help="cells at once, in both gates")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    anchor = resolve(args.anchor)
    extra = [a for name in args.protocol for a in ("--protocol", name)]
    if args.parallel is not None:
        extra += ["--parallel", str(args.parallel)]
    scratch = Path(tempfile.mkdtemp(prefix="rollcheck-gate-bench-"))
    rows: list[dict[str, Any]] = []
    try:
        tree = scratch / "anchor"
        export_tree(anchor, tree)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), *filter(None, [os.environ.get("PYTHONPATH")])]))
        print(f"gate.py: {args.tier} tier at the anchor {anchor[:12]} ...", file=sys.stderr, flush=True)
        rows.append({"run": "anchor", "gate_commit": anchor[:12],
                     **run_gate(tree, env, args.tier, scratch / "out-anchor", extra)})
        print(f"gate.py: anchor {rows[-1]['wall_seconds']} s ({rows[-1]['verdict']}); {args.tier} tier at this "
              "checkout ...", file=sys.stderr, flush=True)
        rows.append({"run": "checkout", "gate_commit": "HEAD (working tree)",
                     **run_gate(ROOT, dict(os.environ), args.tier, scratch / "out-checkout", extra)})
    except KeyboardInterrupt:
        print("gate.py: interrupted; nothing written", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    ratio = round(rows[1]["wall_seconds"] / rows[0]["wall_seconds"], 3) if rows[0]["wall_seconds"] else None
    path = write(f"gate_{args.tier}", rows,
                 {"argv": sys.argv[1:], "anchor": anchor, "ratio_checkout_to_anchor": ratio})
    for r in rows:
        print(f"{r['run']:8}  {r['gate_commit']:20}  {r['verdict']:12}  {r['wall_seconds']:8.1f} s  "
              f"{r['cells']} cells")
    print(f"ratio (checkout / anchor): {ratio}\nresults in {path}")
    return 0 if all(r["exit_code"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
