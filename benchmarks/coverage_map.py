"""Which statements of ``reference_impl/`` no checker of the mutation campaign ever executes.

    python benchmarks/coverage_map.py                           # every protocol: explore, z3, conform
    python benchmarks/coverage_map.py --protocol zk_migration   # one protocol (repeatable)
    python benchmarks/coverage_map.py --no-conform --no-z3      # the explorer's cells only

A mutant in a statement no checker runs can only be killed by a unit test (``tests/kafka``), never by a
property, Z3 or TLC: the map says where the campaign's survivors can be, and which of them need a config, a
decision rule or a system-level use before any checker can see them. The commands are exactly those a mutant
meets in ``rollcheck mutate`` (its ``cells_of`` cells through ``rollcheck explore``, the gate's broken
variant cells with Z3's differential under each variant, then the ``small`` z3 cell and TLC conformance, every
profile), each run under ``coverage run`` from this checkout.

Needs ``coverage`` (``pip install -e '.[bench]'``). rollcheck re-executes itself once for stable hashes
(``rollcheck.core.hashenv``), and a re-executed process records nothing; so this script first re-executes itself
under those conditions, which every command it starts inherits.

One JSON file under ``benchmarks/results/`` (``coverage_map-<UTC time>-<commit>.json``): per command its exit
and seconds; per module the campaign mutates (``MUTATED_MODULES`` of each protocol) its statements, the line
ranges no command executed, and how many of the campaign's mutants start on such a line; the totals; a table on
stdout. A command that fails (exit other than 0) is reported and the map is still written, marked so.
Ctrl-C stops the running command and writes nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.benchresults import write  # noqa: E402
from rollcheck.core.hashenv import reexec_for_stable_hashes, stable_hashes  # noqa: E402
from rollcheck.core.registry import get_protocol, protocol_names  # noqa: E402
from rollcheck.mutate.generate import MUTATED_MODULES, enumerate_mutants  # noqa: E402
from rollcheck.mutate.sites import OPERATORS  # noqa: E402
from rollcheck.mutate.steps import cells_of as campaign_cells  # noqa: E402
from rollcheck.mutate.steps import (  # noqa: E402
    conform_argv,
    explore_argv,
    profiles_of,
    variants_argv,
    z3_argv,
    z3_cells_of,
)
from rollcheck.mutate.tree import protocol_dir  # noqa: E402

SOURCE = ROOT / "reference_impl"


def _fail(message: str) -> NoReturn:
    print(f"coverage_map.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="coverage_map.py", description=__doc__.split("\n")[0])
    ap.add_argument("--protocol", action="append", default=None, help="a protocol (repeatable; default: all)")
    ap.add_argument("--no-z3", action="store_true", help="leave out the z3 cell on small")
    ap.add_argument("--no-conform", action="store_true", help="leave out TLC conformance on small")
    ap.add_argument("--max-memory", type=float, default=2.0, help="the explorer's memory budget (GiB) per run")
    ap.add_argument("--out", type=Path, default=None, help="the JSON file (default: under benchmarks/results/)")
    args = ap.parse_args(argv)
    known = protocol_names()
    for p in args.protocol or []:
        if p not in known:
            _fail(f"unknown protocol {p!r}; known: {', '.join(known)}")
    if args.max_memory <= 0:
        _fail(f"--max-memory must be positive, got {args.max_memory}")
    return args


def commands(protocol: str, scratch: Path, z3: bool, conform: bool, max_memory: float) -> list[list[str]]:
    """The rollcheck argument lists a mutant of ``protocol`` meets, in the campaign's order."""
    out = [explore_argv(protocol, cell, scratch / "explore", max_memory) for cell in campaign_cells(protocol)]
    entry = get_protocol(protocol)
    out.append(variants_argv(protocol, scratch / "variants", z3 and entry.z3 is not None))
    if z3 and entry.z3 is not None:
        out += [z3_argv(protocol, c.profile, scratch / "prove", c.config) for c in z3_cells_of(protocol)]
    for profile in profiles_of(protocol):
        if conform and entry.spec is not None:
            out.append(conform_argv(protocol, profile, scratch / "conform"))
    return out


def _ranges(lines: Iterable[int]) -> list[str]:
    """[3, 4, 5, 9] -> ["3-5", "9"]."""
    out: list[list[int]] = []
    for n in sorted(lines):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return [f"{a}-{b}" if a != b else str(a) for a, b in out]


def file_map(data_file: Path, protocols: Sequence[str]) -> list[dict[str, Any]]:
    """Per module the campaign mutates: statements, those never executed (as line ranges), and the campaign's
    mutants whose edit starts on such a line (no checker can kill them: only a unit test can)."""
    import coverage

    cov = coverage.Coverage(data_file=str(data_file), source=[str(SOURCE)])
    cov.combine(data_paths=[str(data_file.parent)], strict=False)
    cov.load()
    rows = []
    for protocol in protocols:
        mutants, _ = enumerate_mutants(protocol, OPERATORS, ROOT)
        for name in MUTATED_MODULES:
            path = protocol_dir(protocol) / name
            if not path.is_file():
                continue
            _, statements, _, missing, _ = cov.analysis2(str(path))
            rel = str(path.relative_to(ROOT))
            here = [m for m in mutants if m.file == rel]
            dark = set(missing)
            rows.append({"protocol": protocol, "file": rel, "statements": len(statements), "missed": len(missing),
                         "mutants": len(here), "mutants_never_executed": sum(m.line in dark for m in here),
                         "never_executed": _ranges(missing)})
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if importlib.util.find_spec("coverage") is None:
        _fail("coverage is not installed: pip install -e '.[bench]'")
    # Re-executed once (the pid is kept); afterwards every command started inherits the seed and the layout.
    reexec_for_stable_hashes([str(Path(__file__).resolve()), *(sys.argv[1:] if argv is None else argv)])
    if not stable_hashes():
        _fail("cannot fix the hash seed and turn address randomization off here (rollcheck would re-execute "
              "itself under coverage and record nothing)")
    protocols = args.protocol or list(protocol_names())
    runs: list[dict[str, Any]] = []
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rollcheck-coverage-") as tmp:
        scratch, data = Path(tmp) / "out", Path(tmp) / "data"
        scratch.mkdir()
        data.mkdir()
        todo = [(p, c) for p in protocols for c in commands(p, scratch, not args.no_z3, not args.no_conform,
                                                             args.max_memory)]
        for n, (protocol, cmd) in enumerate(todo, 1):
            full = [sys.executable, "-m", "coverage", "run", "-p", f"--data-file={data / '.coverage'}",
                    f"--source={SOURCE}", "-m", "rollcheck", *cmd]
            print(f"coverage_map: [{n}/{len(todo)}] rollcheck {' '.join(cmd[:6])}", file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            proc = subprocess.run(full, cwd=ROOT, capture_output=True, text=True, check=False,
                                  env=dict(os.environ, PYTHONPATH=str(ROOT)))
            runs.append({"protocol": protocol, "command": ["rollcheck", *cmd[:cmd.index("--json")]],
                         "exit": proc.returncode, "seconds": round(time.perf_counter() - t0, 1),
                         "stderr_tail": (proc.stderr.strip().splitlines() or [""])[-1]})
        files = file_map(data / ".coverage", protocols)
    statements = sum(f["statements"] for f in files)
    missed = sum(f["missed"] for f in files)
    mutants = sum(f["mutants"] for f in files)
    dark = sum(f["mutants_never_executed"] for f in files)
    failed = [r for r in runs if r["exit"] != 0]
    summary = {"statements": statements, "never_executed": missed,
               "covered": round(1 - missed / statements, 4) if statements else None,
               "mutants": mutants, "mutants_never_executed": dark,
               "commands": len(runs), "failed_commands": len(failed),
               "seconds": round(time.perf_counter() - t_all, 1)}
    path = write("coverage_map", files, {"protocols": protocols, "z3": not args.no_z3,
                                         "conform": not args.no_conform, "runs": runs, "summary": summary},
                 args.out)
    print(f"{'file':<42} {'statements':>10} {'never run':>9} {'covered':>7} {'mutants':>7} {'never run':>9}")
    for f in files:
        print(f"{f['file']:<42} {f['statements']:>10} {f['missed']:>9} {1 - f['missed'] / f['statements']:>7.0%} "
              f"{f['mutants']:>7} {f['mutants_never_executed']:>9}")
    print(f"{'all':<42} {statements:>10} {missed:>9} {summary['covered'] or 0:>7.0%} {mutants:>7} {dark:>9}")
    for r in failed:
        print(f"coverage_map: {' '.join(r['command'])} exited {r['exit']}: {r['stderr_tail']}", file=sys.stderr)
    print(f"coverage_map: {path}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:
        print("coverage_map.py: interrupted; nothing written", file=sys.stderr)
        raise SystemExit(130) from None
