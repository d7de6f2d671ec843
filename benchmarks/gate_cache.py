"""The gate with its store of cell results: a cold run (an empty store), a warm one (nothing changed) and one
with one protocol's reference touched, in one session.

    python benchmarks/gate_cache.py                                   # the ci tier; touches the first protocol
    python benchmarks/gate_cache.py --protocol streams_probing --checker explore
    python benchmarks/gate_cache.py --touch zk_migration

The runs use a copy of this working tree (its tracked and untracked files, as ``git ls-files`` lists them) first on
``PYTHONPATH`` and as working directory, so touching a file (a comment appended to the touched protocol's
``system.py``) never edits the checkout, and a fresh store in a temporary folder (``--cache``). Each run is
``rollcheck gate --json --quiet``; its summary gives the verdict, the cells, the hits and the cells stored. The
warm run must give the cold run's verdict and per-cell statuses and counts ("identical" in its row).

One JSON file under ``benchmarks/results/`` (``gate_cache-<UTC time>-<commit>.json``) with the machine, the
commit and one row per run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.benchresults import write

ROOT = Path(__file__).resolve().parent.parent


def _fail(message: str) -> NoReturn:
    print(f"gate_cache.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def copy_tree(dest: Path) -> None:
    """This working tree's files (tracked and untracked, not ignored) into ``dest``."""
    proc = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                          timeout=120, check=False)
    if proc.returncode != 0:
        _fail(f"git ls-files failed: {proc.stderr.decode().strip()}")
    for name in filter(None, proc.stdout.decode().split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def gate(tree: Path, store: Path, out: Path, tier: str, extra: Sequence[str]) -> tuple[float, dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))}
    env.pop("ROLLCHECK_GATE_CACHE", None)
    cmd = [sys.executable, "-m", "rollcheck", "gate", "--tier", tier, "--json", "--quiet", "--out", str(out),
           "--cache", str(store), *extra]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    try:
        return wall, json.loads(proc.stdout)
    except ValueError:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        _fail(f"the gate printed no JSON summary (exit {proc.returncode}): {last}")


def results(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(r["protocol"], r["config"], r["profile"], r["checker"], r["status"],
             json.dumps(r["counts"], sort_keys=True), json.dumps([(p["id"], p["status"]) for p in r["properties"]]))
            for r in doc.get("reports", [])]


def row(name: str, wall: float, doc: dict[str, Any], **extra: Any) -> dict[str, Any]:
    cache = doc.get("cache") or {}
    return {"run": name, "wall_seconds": round(wall, 1), "verdict": doc.get("verdict"),
            "cells": len((doc.get("plan") or {}).get("cells") or []), "hits": cache.get("hits"),
            "stored": cache.get("stored"), **extra}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tier", default="ci", choices=("ci", "nightly"))
    p.add_argument("--protocol", action="append", default=[], help="passed on to the gate (repeatable)")
    p.add_argument("--checker", action="append", default=[], help="passed on to the gate (repeatable)")
    p.add_argument("--touch", default=None, metavar="PROTOCOL",
                   help="the protocol whose reference the third run touches (default: the first --protocol, else "
                   "features)")
    args = p.parse_args(argv)
    touch = args.touch or (args.protocol[0] if args.protocol else "features")
    extra = [*(f"--protocol={x}" for x in args.protocol), *(f"--checker={x}" for x in args.checker)]
    with tempfile.TemporaryDirectory(prefix="gate-cache-") as tmp:
        tree, store = Path(tmp) / "tree", Path(tmp) / "store"
        copy_tree(tree)
        touched = tree / "reference_impl" / touch / "system.py"
        if not touched.is_file():
            _fail(f"--touch {touch}: no {touched.relative_to(tree)} in this checkout")
        cold_wall, cold = gate(tree, store, Path(tmp) / "out", args.tier, extra)
        warm_wall, warm = gate(tree, store, Path(tmp) / "out", args.tier, extra)
        with touched.open("a", encoding="utf-8") as fh:
            fh.write("\n# touched by benchmarks/gate_cache.py\n")
        touched_wall, after = gate(tree, store, Path(tmp) / "out", args.tier, extra)
    rows = [row("cold", cold_wall, cold),
            row("warm", warm_wall, warm, identical=results(warm) == results(cold)
                and warm.get("verdict") == cold.get("verdict")),
            row("touched", touched_wall, after, touched=str(touched.relative_to(tree)),
                rerun=sorted({r["protocol"] for r in after.get("reports", []) if not r.get("cached")}))]
    path = write("gate_cache", rows, {"tier": args.tier, "protocols": args.protocol, "checkers": args.checker,
                                      "touch": touch})
    for r in rows:
        print(json.dumps(r))
    print(f"written: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
