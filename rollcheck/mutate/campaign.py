"""The campaign: the mutants a command line selects, their baselines, every mutant through its checks on
``--jobs`` threads, the JSON file saved as it goes, progress on stderr, and what an interruption keeps."""

from __future__ import annotations

import datetime
import os
import platform
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from rollcheck.core.errors import UserError
from rollcheck.mutate.baseline import Baseline, run_baseline
from rollcheck.mutate.digests import reference_digests
from rollcheck.mutate.equivalents import Equivalent, judge_equivalent, listed_equivalent
from rollcheck.mutate.generate import Mutant, enumerate_mutants, spread
from rollcheck.mutate.mutant_run import run_mutant
from rollcheck.mutate.registry_growth import registry_growth
from rollcheck.mutate.report import print_summary, progress_line, summarize, write_json
from rollcheck.mutate.resume import _rechecked, carried_rows, git, kill_hints
from rollcheck.mutate.runner import CellResult, Runner
from rollcheck.mutate.sites import OPERATORS
from rollcheck.mutate.steps import cells_of, profiles_of
from rollcheck.mutate.tree import SourceTree, snapshot

PROGRESS_EVERY = 10.0
SAVE_EVERY = 30.0  # the JSON file is rewritten this often, so that even a kill -9 keeps most of a campaign


@dataclass(frozen=True)
class CampaignOptions:
    """What a command line asks of a campaign (``rollcheck mutate --help`` says what each means)."""

    protocols: tuple[str, ...]
    operators: tuple[str, ...]
    equivalents: tuple[Equivalent, ...]
    out: Path
    match: str | None = None
    only: tuple[str, ...] = ()
    limit: int | None = None
    offset: int = 0
    timeout: float | None = None
    jobs: int = 1
    max_memory: float = 2.0
    all_cells: bool = False
    conform: bool = True
    z3: bool = True
    variants: bool = True
    screen: bool = False
    carry_equivalents: bool = False
    recheck: Path | None = None
    previous: dict[str, Any] | None = None  # the --recheck campaign
    resume: tuple[Path, ...] = ()
    resumed: dict[str, Any] | None = None  # the --resume campaigns, merged
    argv: tuple[str, ...] = ()
    quiet: bool = False


def select(opts: CampaignOptions, root: Path, protocol: str,
           source: Path | None = None) -> tuple[list[Mutant], list[dict[str, Any]]]:
    """The mutants of one protocol that the options ask for, and the sites dropped."""
    if opts.previous is not None:
        wanted = [r["id"] for r in opts.previous["mutants"] if r["protocol"] == protocol and _rechecked(r)]
        every, dropped = enumerate_mutants(protocol, OPERATORS, root, source)
        by_id = {m.id: m for m in every}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise UserError(f"--recheck: {missing[0]} is no mutant of this checkout")
        return [by_id[i] for i in wanted], dropped
    mutants, dropped = enumerate_mutants(protocol, opts.operators, root, source)
    if opts.match:
        mutants = [m for m in mutants if re.search(opts.match, m.id)]
    if opts.only:
        mutants = [m for m in mutants if m.id in opts.only]
    return spread(mutants, opts.limit, opts.offset), dropped


def list_mutants(opts: CampaignOptions, tree: SourceTree) -> int:
    """``--list``: each selected mutant (its id and mutated line) on stdout, a count per protocol on stderr."""
    for p in opts.protocols:
        mutants, gone = select(opts, tree.root, p)
        for m in mutants:
            print(f"{m.id}\n    - {m.before}\n    + {m.after}")
        print(f"# {p}: {len(mutants)} mutants ({len(gone)} sites dropped)", file=sys.stderr)
    return 0


def _say(opts: CampaignOptions) -> Callable[[str], None]:
    def say(text: str) -> None:
        if not opts.quiet:
            print(text, file=sys.stderr, flush=True)
    return say


def run_campaign(opts: CampaignOptions, tree: SourceTree, path: Path, table: TextIO | None = None
                 ) -> tuple[int, dict[str, Any]]:
    """The whole campaign, its JSON written to ``path`` (every ``SAVE_EVERY`` seconds, and at the end, marked
    partial when it did not end); the summary table on ``table`` (default stdout). An interruption (Ctrl-C,
    SIGTERM) stops the running checks, writes what was done and is raised again, saying what it kept."""
    started = datetime.datetime.now(datetime.UTC)
    scratch = Path(tempfile.mkdtemp(prefix="rollcheck-mutation-"))
    head = git(tree.root, "rev-parse", "HEAD")
    dirty = bool(git(tree.root, "status", "--porcelain", "--untracked-files=no"))
    selected: dict[str, list[Mutant]] = {}
    dropped: dict[str, list[dict[str, Any]]] = {}
    protocols = list(opts.protocols)
    try:
        sources, reference = snapshot(tree, scratch / "snapshot")
        packages = tree.protocol_packages()
        per_protocol = reference_digests(scratch / "snapshot", packages, tree.reference)
        per_protocol_code = reference_digests(scratch / "snapshot", packages, tree.reference, code_only=True)
        for p in protocols:
            selected[p], dropped[p] = select(opts, tree.root, p, scratch / "snapshot")
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    doc: dict[str, Any] = {
        "benchmark": "mutation", "started": started.isoformat(timespec="seconds"), "finished": None,
        "partial": True, "interrupted": False,
        "commit": head, "dirty": dirty, "sources_sha256": sources, "reference_sha256": reference,
        "protocol_reference_sha256": per_protocol, "protocol_code_sha256": per_protocol_code,
        "commit_at_end": None,
        "machine": {"node": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform(), "load_average_at_start": list(os.getloadavg())},
        "params": {"argv": list(opts.argv), "protocols": protocols, "operators": list(opts.operators),
                   "match": opts.match, "only": list(opts.only),
                   "limit": opts.limit, "offset": opts.offset, "timeout": opts.timeout, "jobs": opts.jobs,
                   "max_memory_gib": opts.max_memory,
                   "all_cells": opts.all_cells, "conform": opts.conform, "z3": opts.z3,
                   "variants": opts.variants, "screen": opts.screen,
                   "carry_equivalents": opts.carry_equivalents,
                   "profiles": {p: list(profiles_of(p)) for p in protocols}},
        "baseline": {}, "dropped_sites": dropped, "mutants": [], "summary": {},
        "rechecked_from": None if opts.previous is None else {"file": str(opts.recheck),
                                                              "commit": opts.previous["commit"]},
        "resumed_from": None if opts.resumed is None else {"file": ", ".join(map(str, opts.resume)),
                                                           "commit": opts.resumed.get("commit"),
                                                           "sources_sha256": opts.resumed.get("sources_sha256")},
    }
    # A background job of a non-interactive shell starts with SIGINT ignored, and Python keeps it so: only this
    # process can stop the checks it starts in their own sessions, so Ctrl-C (kill -INT) must reach it.
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    runner = Runner(tree, scratch, scratch / "snapshot", opts.max_memory, opts.all_cells)
    results: list[dict[str, Any]] = doc["mutants"]
    code = 0
    stopped: KeyboardInterrupt | None = None
    try:
        code = _campaign(opts, tree, protocols, selected, runner, doc, results, path)
    except KeyboardInterrupt as exc:
        doc["interrupted"] = True
        stopped = exc
    finally:
        runner.kill_all()
        # The file first: a second signal during the clean-up must not cost the results.
        results.sort(key=lambda r: r["order"])
        for r in results:
            del r["order"]
        doc["finished"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        doc["commit_at_end"] = git(tree.root, "rev-parse", "HEAD")
        doc["summary"] = summarize(results, protocols)
        doc["equivalents_killed"] = [r["id"] for r in results if str(r["status"]).startswith("killed")
                                     and any(e.names(r) for e in opts.equivalents)]
        write_json(path, doc)
        shutil.rmtree(scratch, ignore_errors=True)
    out = sys.stdout if table is None else table
    print_summary(doc, out)
    if doc["commit_at_end"] != head:
        print(f"\nnote: HEAD moved from {head} to {doc['commit_at_end']} during the campaign; the results are "
              "for the code as it was at the start (copied then)", file=out)
    print(f"\nresults in {path}", file=out)
    if stopped is not None:
        stopped.rollcheck_kept = (  # type: ignore[attr-defined]
            f"the checks are stopped; the {len(results)} mutants done are kept in {path} (marked partial)")
        raise stopped
    return code, doc


def _campaign(opts: CampaignOptions, tree: SourceTree, protocols: list[str], selected: dict[str, list[Mutant]],
              runner: Runner, doc: dict[str, Any], results: list[dict[str, Any]], path: Path) -> int:
    say = _say(opts)
    bases: dict[str, Baseline] = {}
    timeouts: dict[str, float] = {}
    carried = {} if opts.resumed is None else carried_rows(
        opts.resumed, selected, doc, opts.equivalents, registry_growth(tree, runner.snapshot),
        opts.carry_equivalents)
    hints = {} if opts.resumed is None else kill_hints(opts.resumed, selected, carried)
    resumed_same = opts.resumed is not None and opts.resumed.get("sources_sha256") == doc["sources_sha256"]

    def baseline(p: str) -> None:
        earlier = (opts.previous or opts.resumed or {}).get("baseline", {}).get(p)
        # A screen's baseline has the cheap steps' runs alone: it serves another screen, not a full run.
        if isinstance(earlier, dict) and earlier.get("screen") and not opts.screen:
            earlier = None  # nor does its time limit, ten times the cheap steps'
        cheap = opts.screen
        if resumed_same and isinstance(earlier, dict) and earlier.get("runs"):
            # Every module as it was when FILE's baseline ran: its verdicts stand.
            base = Baseline(p, [CellResult(**r) for r in earlier["runs"]], earlier["seconds"], earlier["imports"])
            cheap = bool(earlier.get("screen"))
        else:
            what = "the decision rules and the config domain" if opts.screen else "the broken variants, z3 and conform"
            cells = ", ".join(f"{c.config}/{c.profile}" for c in cells_of(p) if c.config == "small" or not opts.screen)
            say(f"mutation: baseline of {p} ({cells}, then {what})")
            explored = None if opts.previous is None else [CellResult(**r) for r in (earlier or {}).get("runs", [])]
            try:
                base = run_baseline(runner, p, max(3600.0, opts.timeout or 0), opts.conform, opts.z3,
                                    opts.variants, explored, inner_jobs, opts.screen)
            except RuntimeError as exc:
                # Without a clean baseline nothing can be called killed: the protocol is skipped, and said so.
                doc["baseline"][p] = {"error": str(exc)}
                print(f"mutation: {p} skipped: {exc}", file=sys.stderr, flush=True)
                return
        bases[p] = base
        timeouts[p] = opts.timeout or (earlier["timeout"] if earlier else max(60.0, 10 * base.seconds))
        doc["baseline"][p] = {"seconds": round(base.seconds, 2), "timeout": timeouts[p], "imports": base.imports,
                              "screen": cheap,
                              "runs": [asdict(c) | {"seconds": round(c.seconds, 2)} for c in base.cells]}
        todo = sum(m.id not in carried for m in selected[p])
        say(f"mutation: {p}: " + ", ".join(f"{c.config}/{c.profile} {c.distinct_states} states" for c in base.cells)
            + f"; {todo} mutants to run, time limit {timeouts[p]:.0f} s each")

    # The baselines side by side (--jobs of them): each is one protocol's every step on the unmutated copy, its
    # cells spread over the jobs the other baselines leave (one protocol: all of them).
    needed = [p for p in protocols if any(m.id not in carried for m in selected[p])]
    inner_jobs = max(1, opts.jobs // max(1, len(needed)))
    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        list(pool.map(baseline, needed))
    every = [m for p in protocols for m in selected[p]]
    results += [dict(carried[m.id], order=i) for i, m in enumerate(every) if m.id in carried]
    queue = [(i, m) for i, m in enumerate(every) if m.id not in carried and m.protocol in bases]
    explored_of: dict[str, list[CellResult]] = {}
    if opts.previous is not None:
        # The earlier rows: survivors run again (their explorer runs carried over), the others kept as they were.
        rows = [r for r in opts.previous["mutants"] if r["protocol"] in bases]
        explored_of = {r["id"]: [CellResult(**c) for c in r["runs"]] for r in rows if _rechecked(r)}
        order_of = {r["id"]: i for i, r in enumerate(rows)}
        queue = [(order_of[m.id], m) for _, m in queue]
        results += [dict(r, order=order_of[r["id"]]) for r in rows if not _rechecked(r)]
    # A mutant the equivalent list names is expected to survive every step (minutes each: the larger configs and
    # the variant cells): it runs after the others, so a campaign stopped early has judged every open mutant.
    queue.sort(key=lambda om: (listed_equivalent(om[1], opts.equivalents), om[0]))
    total = len(queue) + len(results)  # with --recheck, the earlier kills are already in results
    t0 = time.monotonic()
    last_progress = last_save = t0
    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        running: dict[Future[dict[str, Any]], tuple[int, Mutant]] = {}
        pending = iter(queue)
        try:
            while True:
                while len(running) < opts.jobs:
                    nxt = next(pending, None)
                    if nxt is None:
                        break
                    order, m = nxt
                    fut = pool.submit(run_mutant, runner, m, bases[m.protocol], timeouts[m.protocol], opts.all_cells,
                                      opts.conform, opts.z3, opts.variants, explored_of.get(m.id), hints.get(m.id),
                                      opts.screen)
                    running[fut] = (order, m)
                if not running:
                    break
                done, _ = wait(running, timeout=1.0, return_when=FIRST_COMPLETED)
                for fut in done:
                    order, done_m = running.pop(fut)
                    # Results arrive in completion order; the JSON lists them in enumeration order.
                    results.append(judge_equivalent(fut.result(), opts.equivalents)
                                   | {"order": order, "commit": doc["commit"], "sources_sha256": doc["sources_sha256"],
                                      "reference_sha256": doc["reference_sha256"],
                                      "protocol_reference_sha256": doc["protocol_reference_sha256"][done_m.protocol],
                                      "protocol_code_sha256": doc["protocol_code_sha256"][done_m.protocol]})
                now = time.monotonic()
                if now - last_progress >= PROGRESS_EVERY:
                    last_progress = now
                    say(progress_line(results, total, now - t0, [m.id for _, m in running.values()]))
                if now - last_save >= SAVE_EVERY:
                    last_save = now
                    doc["summary"] = summarize(results, protocols)
                    write_json(path, doc)
        except BaseException:
            runner.kill_all()
            for fut in running:
                fut.cancel()
            raise
    doc["partial"] = False
    say(progress_line(results, total, time.monotonic() - t0, []))
    return 0


def protocols_of(selection: Sequence[str] | None, known: Sequence[str]) -> tuple[str, ...]:
    """The protocols asked for (each once, in the order given), every registered one when none is."""
    return tuple(dict.fromkeys(selection or known))
