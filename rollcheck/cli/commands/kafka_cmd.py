"""``rollcheck kafka``: Apache Kafka's released classes as an oracle (docs/kafka-oracle.md).

* ``rollcheck kafka P --release R``: at every reachable state of P's config, each decision of the reference put to
  Kafka R's classes; exit 0 when every answer agrees, 3 at a disagreement (its ITF trace under --out), 1 when a
  property of the config fails, 2 for bad input or an oracle that cannot run. A disagreement that a known Kafka bug
  of the release explains (its ``KafkaBug.signature``) is reported as that bug (verdict known-bug, exit 0) unless
  ``--strict``. ``--release all``: every release of
  the binding, as a release x verdict matrix (the worst exit).
* ``rollcheck kafka fetch RELEASE...``: fetch and build the adapters of those releases (``all``: every one).
* ``rollcheck kafka bugs``: every Kafka bug of every binding re-found at its buggy releases, absent at its fixed.
* ``rollcheck kafka list``: the bindings, their releases and bugs.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rollcheck.cli.commands import common
from rollcheck.core.errors import ExitCode, UserError

SUBCOMMANDS = ("fetch", "bugs", "list")
DEFAULT_OUT = "rollcheck-kafka"
# Worst first: a matrix's exit is its worst row's.
_SEVERITY = (ExitCode.DISAGREEMENT, ExitCode.VIOLATION, ExitCode.OK)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("kafka", help="check a protocol against Apache Kafka's released classes (the Kafka oracle)",
                       description="rollcheck kafka PROTOCOL --release R | fetch RELEASE... | bugs | list")
    p.add_argument("target", metavar="PROTOCOL|fetch|bugs|list",
                   help="a protocol with a Kafka oracle binding, or one of: fetch, bugs, list")
    p.add_argument("releases", nargs="*", metavar="RELEASE", help="fetch: the releases to build (all: every one)")
    p.add_argument("--release", default=None, metavar="R|all",
                   help="the Kafka release to check against (`rollcheck kafka list`), or all")
    p.add_argument("--config", default="default", metavar="NAME|FILE", help=f"{common.CONFIG_HELP} (default: default)")
    common.add_profile_arg(p, "default: the config's; the binding makes it stand for the release")
    p.add_argument("--engine", default="local", metavar="local|spark",
                   help="who asks the questions: this process (local) or Spark tasks (spark); the explorer runs "
                   "once either way")
    p.add_argument("--master", default="local[*]", metavar="URL", help="Spark master URL (default: local[*])")
    p.add_argument("--jars", type=Path, default=None, metavar="DIR",
                   help="a Kafka build's libs/ directory to answer instead of the release's jars from Maven")
    p.add_argument("--traces", type=int, default=None, metavar="N",
                   help="a binding with trace replay (zk_migration): replay the counterexamples, the witnesses and N "
                   "simulate walks on Kafka's code (default: 4; 0: no replay)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="--traces: the walks' seed (default: 0)")
    p.add_argument("--strict", action="store_true",
                   help="count the disagreements a known Kafka bug of the release explains as new ones (exit 3)")
    p.add_argument("--protocol", default=None, metavar="P", help="fetch, bugs: only this protocol's binding")
    common.add_out_arg(p, None, f"{DEFAULT_OUT}/PROTOCOL-RELEASE", what="parent of the run's output directory")
    common.add_json_arg(p)
    common.add_quiet_arg(p)
    p.set_defaults(run=run)


def _say(args: argparse.Namespace) -> Callable[[str], None]:
    if args.quiet:
        return lambda _text: None
    return lambda text: print(text, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from rollcheck.oracle.check import check_engine

    check_engine(args.engine)
    if args.target == "list":
        return _list(args)
    if args.target == "fetch":
        return _fetch(args)
    if args.target == "bugs":
        return _bugs(args)
    common.require(not args.releases, f"rollcheck kafka {args.target}: unexpected arguments "
                   f"{' '.join(args.releases)} (the release is --release R)")
    common.require(args.release is not None, f"rollcheck kafka {args.target}: --release R is needed "
                   "(`rollcheck kafka list` lists the releases; all: every one)")
    return _check(args)


def _run_name(protocol: str, release: str, config: str, profile: str | None, jars: Path | None) -> str:
    from rollcheck.runtime.rundir import config_tag

    parts = [protocol, release]
    if config != "default":
        parts.append(config_tag(config))
    if profile is not None:
        parts.append(profile)
    if jars is not None:
        parts.append("jars-" + hashlib.sha256(str(jars.resolve()).encode()).hexdigest()[:6])
    return "-".join(parts)


def _traces(args: argparse.Namespace) -> int:
    from rollcheck.oracle.replay import DEFAULT_TRACES

    n = DEFAULT_TRACES if args.traces is None else int(args.traces)
    if n < 0:
        raise UserError(f"--traces must be 0 or more, not {n}")
    return n


def _check(args: argparse.Namespace) -> int:
    from rollcheck.core.registry import check_profile, get_protocol
    from rollcheck.oracle import report
    from rollcheck.oracle.check import binding_of, find_release, run_check
    from rollcheck.oracle.spark import SparkOracleOptions
    from rollcheck.runtime.console import out_console, print_json, results_line
    from rollcheck.runtime.rundir import staged_run

    entry = get_protocol(args.target)
    binding = binding_of(entry)
    names = [r.name for r in binding.releases] if args.release == "all" else [find_release(binding, args.release).name]
    if args.profile is not None:
        check_profile(entry, args.profile, "--profile")
    parent = Path(args.out) if args.out is not None else Path(DEFAULT_OUT)
    spark = SparkOracleOptions(master=args.master) if args.engine == "spark" else None
    say = _say(args)
    docs: list[dict[str, Any]] = []
    rows: list[list[str]] = []
    codes: list[ExitCode] = []
    texts: list[str] = []
    for name in names:
        with staged_run(parent, _run_name(entry.name, name, args.config, args.profile, args.jars)) as run_dir:
            result = run_check(entry, name, args.config, profile=args.profile, engine=args.engine, jars=args.jars,
                               progress=say, spark=spark, traces=_traces(args), seed=args.seed,
                               strict=args.strict)
            doc = report.write_run(result, run_dir.staging, run_dir.final)
        docs.append(report.matrix_json(result, doc) if args.release == "all" else doc)
        rows.append(report.matrix_row(result))
        codes.append(result.exit_code)
        texts.append(report.text(result, doc) + f"\nresults in {run_dir.final}")
    worst = min(codes, key=_SEVERITY.index)
    if args.json:
        print_json({"protocol": entry.name, "rows": docs, "exit_code": int(worst)} if args.release == "all"
                   else docs[0])
        return int(worst)
    console = out_console()
    for t in texts:
        console.print(t, markup=False, highlight=False, soft_wrap=True)
    if args.release == "all":
        results_line(report.matrix_text(rows))
    return int(worst)


def _fetch(args: argparse.Namespace) -> int:
    import time

    from rollcheck.oracle.bugs import bindings
    from rollcheck.oracle.build import ensure_built, repo_root
    from rollcheck.runtime.console import print_json, results_line

    common.require(bool(args.releases), "rollcheck kafka fetch: name the releases to fetch (all: every one)")
    pairs = bindings(args.protocol)
    wanted = set(args.releases) - {"all"}
    known = {r.name for _p, b in pairs for r in b.releases}
    unknown = sorted(wanted - known)
    common.require(not unknown, f"unknown Kafka release {unknown[0]!r}; known: {', '.join(sorted(known))}"
                   if unknown else "")
    say = _say(args)
    built: list[dict[str, Any]] = []
    for protocol, binding in pairs:
        adapters = {a.name: a for a in binding.adapters}
        for r in binding.releases:
            if "all" not in args.releases and r.name not in wanted:
                continue
            if r.adapter not in adapters:
                raise UserError(f"{protocol}: release {r.name} names adapter {r.adapter!r}, which the binding "
                                f"does not list")
            tick = time.perf_counter()
            b = ensure_built(repo_root() / binding.adapters_dir, adapters[r.adapter], r.name, jars=args.jars,
                             progress=say)
            built.append({"protocol": protocol, "release": r.name, "adapter": r.adapter,
                          "directory": str(b.directory), "seconds": round(time.perf_counter() - tick, 2)})
    if args.json:
        print_json({"built": built})
    else:
        for row in built:
            results_line(f"{row['protocol']} {row['release']} ({row['adapter']}): {row['directory']}")
    return 0


def _bugs(args: argparse.Namespace) -> int:
    from rollcheck.oracle.bugs import bugs_text, run_bugs
    from rollcheck.runtime.console import print_json, results_line

    outcomes = run_bugs(args.protocol, jars=args.jars, progress=_say(args))
    ok = all(o.ok for o in outcomes)
    if args.json:
        print_json({"bugs": [o.to_json() for o in outcomes], "ok": ok})
    else:
        results_line(bugs_text(outcomes))
    return int(ExitCode.OK) if ok else int(ExitCode.VIOLATION)


def _list(args: argparse.Namespace) -> int:
    from rollcheck.core.registry import all_protocols
    from rollcheck.oracle.check import binding_of
    from rollcheck.runtime.console import print_json, results_line

    docs: list[dict[str, Any]] = []
    for e in all_protocols():
        if e.oracle is None:
            continue
        try:
            b = binding_of(e)
        except UserError as exc:
            docs.append({"protocol": e.name, "problem": str(exc), "releases": [], "bugs": []})
            continue
        docs.append({"protocol": e.name, "adapters_dir": b.adapters_dir,
                     "releases": [{"name": r.name, "line": r.line, "adapter": r.adapter, "tiers": list(r.tiers)}
                                  for r in b.releases],
                     "bugs": [{"id": x.id, "summary": x.summary, "buggy": list(x.buggy), "fixed": list(x.fixed),
                               "kinds": list(x.kinds)} for x in b.bugs]})
    if args.json:
        print_json({"bindings": docs})
        return 0
    lines: list[str] = []
    for d in docs:
        if "problem" in d:
            lines.append(f"{d['protocol']}: not available: {d['problem']}")
            continue
        n = len(d["bugs"])
        lines.append(f"{d['protocol']} ({d['adapters_dir']}): {len(d['releases'])} releases, {n} "
                     f"bug{'' if n == 1 else 's'}")
        for r in d["releases"]:
            lines.append(f"  {r['name']:<10} line {r['line']:<6} adapter {r['adapter']:<20} "
                         f"tiers {', '.join(r['tiers'])}")
        for x in d["bugs"]:
            lines.append(f"  bug {x['id']}: {x['summary']} (buggy {', '.join(x['buggy'])}; fixed "
                         f"{', '.join(x['fixed'])})")
    results_line("\n".join(lines) or "no protocol has a Kafka oracle binding")
    return 0
