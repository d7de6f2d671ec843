"""``rollcheck runbook FILE|DIR ... [--deviations]``: check operator runbooks (see :mod:`rollcheck.runbook`
and docs/runbooks.md): every interleaving of the steps with the cluster's own actions and faults, the
protocol's properties at every state, the goal reachable from every state; with ``--deviations`` every
single-step deviation too, reported as a table an operator reads."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from rollcheck.cli.commands.common import (
    add_deprecated_spelling,
    add_output_args,
    add_parallel_arg,
    add_profile_arg,
    positive_int,
)
from rollcheck.core.errors import ExitCode, UserError
from rollcheck.core.registry import check_profiles, get_protocol, variant_ids_for
from rollcheck.core.traces import write_itf, write_json_atomic, write_text_atomic
from rollcheck.core.transition import replace_config
from rollcheck.runbook import INCOMPLETE, Deviation, Outcome, Runbook, check, deviations, load_runbook
from rollcheck.runtime.console import err_console, on_interrupt, out_console, print_json, results_line
from rollcheck.runtime.forking import end_with_parent
from rollcheck.runtime.rundir import staged_run

RUN_NAME = "runbooks"  # the run's directory under --out


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("runbook", help="check operator runbooks (TOML) and, with --deviations, every single-step "
                       "deviation from them")
    p.add_argument("paths", nargs="+", type=Path, metavar="FILE|DIR",
                   help="runbook files, or directories searched for *.toml (e.g. runbooks/)")
    p.add_argument("--deviations", action="store_true",
                   help="also try every step skipped, every two adjacent steps swapped, every step repeated")
    add_profile_arg(p, "one of the runbooks' protocols'; default: the profiles each runbook lists", repeatable=True)
    p.add_argument("--max-states", type=positive_int, default=None, metavar="STATES",
                   help="stop each exploration after this many states (its verdict: incomplete)")
    given = p.add_mutually_exclusive_group()
    add_parallel_arg(given, "explorations (each a process)", 1, "1")
    add_deprecated_spelling(given, "--jobs", "--parallel N", "parallel", type=positive_int, metavar="N",
                            why="--parallel is the spelling of every command")
    p.add_argument("--markdown", type=Path, default=None, metavar="FILE",
                   help="also write the tables as Markdown to FILE (for the docs)")
    p.add_argument("--cluster", action="store_true",
                   help="perform the runbook (one file) on a real local cluster of Kafka's released jars and validate "
                        "what it did against the model (docs/runbooks.md)")
    p.add_argument("--release", default=None, metavar="A[:B]",
                   help="with --cluster: the Kafka release(s) the runbook's softwares run, OLD:NEW (default: the "
                        "protocol's, e.g. 3.7.2:3.9.2 for metadata_version)")
    p.add_argument("--fault", action="append", default=None, metavar="STEP:KIND[:NODE]",
                   help="with --cluster: after step STEP (or 'start'), KIND kill (SIGKILL, then start it again) or "
                        "pause (SIGSTOP, then SIGCONT) the step's node or NODE (voter:1, broker:0); repeatable")
    add_output_args(p, "rollcheck-out/runbook")
    p.set_defaults(run=run)


def _files(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for p in paths:
        if p.is_dir():
            files = sorted(p.rglob("*.toml"))
            if not files:
                raise UserError(f"{p}: no runbook (*.toml) under it")
            found += files
        elif p.exists():
            found.append(p)
        else:
            raise UserError(f"runbook not found: {p}")
    return found


def _work(book: Runbook, args: argparse.Namespace) -> list[tuple[Runbook, str, Deviation]]:
    profiles = [p for p in book.profiles if args.profile is None or p in args.profile]
    devs = deviations(book) if args.deviations else deviations(book)[:1]
    return [(book, p, d) for d in devs for p in profiles]


def _check(item: tuple[Runbook, str, Deviation], max_states: int | None) -> Outcome:
    book, profile, dev = item
    return check(book, profile, dev, max_states)


def _run_all(items: list[tuple[Runbook, str, Deviation]], jobs: int, max_states: int | None,
             done: Callable[[int, Outcome], None]) -> None:
    if jobs == 1 or len(items) == 1:
        for i, item in enumerate(items):
            done(i, _check(item, max_states))
        return
    ctx = multiprocessing.get_context("fork")  # workers inherit the loaded protocols and the hash seed
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=end_with_parent) as pool:
        pending: dict[Future[Outcome], int] = {pool.submit(_check, item, max_states): i for i, item in enumerate(items)}
        try:
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    done(pending.pop(f), f.result())
        except BaseException:
            for f in pending:
                f.cancel()
            raise


def _check_output_file(path: Path, flag: str) -> None:
    """Fail now, not after the explorations, when ``path`` cannot be written: a directory stands there, a
    file stands where its folder would be made, or that folder refuses a new entry."""
    if path.is_dir() and not path.is_symlink():
        raise UserError(f"{flag} {path}: is a directory; give a file name")
    existing = path.parent
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        raise UserError(f"{flag} {path}: {existing} is a file, so no file can be made under it")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"{flag} {path}: cannot write under {existing} (permission denied or read-only)")


def _check_outputs(args: argparse.Namespace) -> None:
    """Every output path, before any exploration: the results are never thrown away for a path found
    unwritable at the end."""
    final = Path(args.out) / RUN_NAME
    if final.exists() and not final.is_dir() and not final.is_symlink():
        raise UserError(f"--out {args.out}: {final} exists and is not a directory (the runbooks' results go there)")
    if args.markdown is not None:
        _check_output_file(Path(args.markdown), "--markdown")


def run(args: argparse.Namespace) -> int:
    from rollcheck.cli.commands.runbook_cluster import check_args, run_cluster

    check_args(args)
    if args.cluster:
        return run_cluster(args)
    if args.profile is not None:
        args.profile = list(dict.fromkeys(args.profile))
    books = sorted((load_runbook(f) for f in _files(args.paths)),
                   key=lambda b: (get_protocol(b.protocol).order, b.id))  # the KIPs' story, then the ids
    if args.profile is not None:
        check_profiles(args.profile, list(dict.fromkeys(b.protocol for b in books)), "--profile")
    ids = [b.id for b in books]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise UserError(f"runbook ids must be unique across the files given; repeated: {', '.join(dup)}")
    items = [w for b in books for w in _work(b, args)]
    if not items:
        raise UserError("nothing to check: no runbook lists the profile(s) given with --profile")
    _check_outputs(args)
    progress = err_console()
    outcomes: dict[int, Outcome] = {}
    with staged_run(args.out, RUN_NAME) as run_dir, on_interrupt(
            lambda: f"nothing kept ({len(outcomes)} of {len(items)} explorations had finished)"):
        def done(i: int, o: Outcome) -> None:
            outcomes[i] = o
            if not args.quiet:
                progress.print(f"[{len(outcomes)}/{len(items)}] {items[i][0].id} {o.deviation} ({o.profile}): "
                               f"{_cell(o)}", markup=False)

        _run_all(items, args.parallel, args.max_states, done)
        docs = []
        markdown: list[str] = []
        for book in books:
            mine = [outcomes[i] for i, it in enumerate(items) if it[0] is book]
            docs.append(_write(book, mine, run_dir.staging, run_dir.final_path))
            markdown.append(_markdown(book, mine))
        write_json_atomic(run_dir.staging / "summary.json", {"runbooks": docs})
        write_text_atomic(run_dir.staging / "report.md", "\n".join(markdown))
    if args.markdown is not None:
        # After the run is published: a path that fails now loses nothing (its tables are in report.md).
        try:
            write_text_atomic(args.markdown, "\n".join(markdown))
        except OSError as exc:
            raise UserError(f"--markdown {args.markdown}: cannot write it ({exc.strerror or exc}); the tables are "
                            f"in {run_dir.final / 'report.md'}") from None
    failed = [d["id"] for d in docs if d["verdict"] == NOT_AS_EXPECTED]
    cut = [o for o in outcomes.values() if o.verdict == INCOMPLETE]
    if args.json:
        print_json({"runbooks": docs, "out": str(run_dir.final)})
    else:
        for book, doc in zip(books, docs, strict=True):
            _show(book, [outcomes[i] for i, it in enumerate(items) if it[0] is book], doc)
        results_line(f"results in {run_dir.final}")
    if failed:
        return int(ExitCode.VIOLATION)
    if cut:
        # Nothing found and nothing shown to hold: exit 5, with what was not checked.
        first = cut[0]
        print(f"rollcheck: inconclusive: {len(cut)} of {len(items)} explorations did not run in full; the first, "
              f"{first.deviation} ({first.profile}), {first.description}", file=sys.stderr)
        return int(ExitCode.INCONCLUSIVE)
    return int(ExitCode.OK)


# --------------------------------------------------------------------------- reports


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def _write(book: Runbook, outcomes: list[Outcome], staging: Path, final: Callable[[Path], Path]) -> dict[str, Any]:
    rows = []
    for o in outcomes:
        row = o.to_json()
        if o.trace is not None:
            path = staging / _slug(book.id) / o.profile / f"{_slug(o.deviation)}.itf.json"
            entry = get_protocol(book.protocol)
            inner = entry.build(replace_config(book.config, profile=o.profile))
            write_itf(path, o.trace, inner)
            row["trace"] = str(final(path))
        rows.append(row)
    verdict = book_verdict(book, outcomes)
    mutations = sorted(getattr(book.config, "mutations", ()) or ())
    return {"id": book.id, "title": book.title, "protocol": book.protocol, "file": book.path, "source": book.source,
            "config": book.config_label, "goal": str(book.goal),
            "steps": [{"id": s.id, "says": s.says, "does": str(s)} for s in book.steps],
            "passes": verdict == AS_EXPECTED, "verdict": verdict,
            # A config that switches on a broken variant's bug: named, so no result reads as the reference's.
            "mutations": mutations, "variants": variant_ids_for(get_protocol(book.protocol), mutations),
            "not_checked": [f"{o.deviation} ({o.profile}): {o.description}" for o in outcomes
                            if o.verdict == INCOMPLETE],
            "expected": {p: {"verdict": v, "why": why} for p, (v, why) in book.expect},
            "outcomes": rows}


AS_EXPECTED, NOT_AS_EXPECTED, INCONCLUSIVE = "as expected", "not as expected", "inconclusive"


def book_verdict(book: Runbook, outcomes: list[Outcome]) -> str:
    """"not as expected" when an as-written verdict that was reached differs from the expected one;
    else "inconclusive" when some exploration (a deviation's too) was cut; else "as expected"."""
    as_written = [o for o in outcomes if o.deviation == "as-written"]
    if any(o.verdict != INCOMPLETE and o.verdict != book.expected(o.profile)[0] for o in as_written):
        return NOT_AS_EXPECTED
    if any(o.verdict == INCOMPLETE for o in outcomes):
        return INCONCLUSIVE
    return AS_EXPECTED


def _cell(o: Outcome, md: bool = False) -> str:
    if o.verdict in ("passes", "safe"):
        return o.verdict
    if o.verdict == "breaks":
        text = f"breaks {o.property_id}"
        return (f"**{text}**" if md else text) + f" ({o.length} steps)"
    if o.verdict == "stalls":
        assert o.property_id is not None
        where = o.property_id.split(":", 1)[1]
        what = "goal unreachable" if where == "goal" else f"stuck before `{where}`" if md else f"stuck before {where}"
        return f"stalls: {what} ({o.length} steps)"
    return o.verdict


def _grouped(outcomes: list[Outcome]) -> Iterator[tuple[str, dict[str, Outcome]]]:
    by_dev: dict[str, dict[str, Outcome]] = {}
    for o in outcomes:
        by_dev.setdefault(o.deviation, {})[o.profile] = o
    yield from by_dev.items()


def _profiles(outcomes: list[Outcome]) -> list[str]:
    return list(dict.fromkeys(o.profile for o in outcomes))


def _story(o: Outcome) -> list[str]:
    """The trace as an operator reads it: operator steps marked with their runbook step, waits in place."""
    assert o.trace is not None
    acts = {i: sid for i, sid, kind in o.operator_steps if kind == "action"}
    lines: list[str] = []

    def waits(at: int) -> None:
        lines.extend(f"     operator {kind} {sid}" for i, sid, kind in o.operator_steps if kind != "action" and i == at)

    waits(0)
    for i, a in enumerate(o.trace.actions, 1):
        lines.append(f"{i:>3}  {'operator ' + acts[i] + ': ' if i in acts else ''}{a!r}")
        waits(i)
    return lines


def _brief(o: Outcome) -> str:
    """The operator's steps of a trace and the step that broke the property, on one line."""
    assert o.trace is not None
    acts = {i: sid for i, sid, kind in o.operator_steps if kind == "action"}
    actions = o.trace.actions
    parts = [f"{acts[i]} ({actions[i - 1]!r})" for i in sorted(acts)]
    last = len(actions)
    if last and last not in acts:
        parts.append(f"then {actions[-1]!r}")
    return ", ".join(parts)


def _says(book: Runbook, dev: str) -> str:
    for d in deviations(book):
        if d.id == dev:
            return d.says
    return dev


def _markdown(book: Runbook, outcomes: list[Outcome]) -> str:
    profiles = _profiles(outcomes)
    lines = [f"### {book.id}: {book.title}", "", f"`{book.path}` ({book.protocol}, config {book.config_label}); "
             f"follows {book.source}. Goal: {book.goal}.", "",
             "| deviation | " + " | ".join(profiles) + " |", "| --- |" + " --- |" * len(profiles)]
    for dev, row in _grouped(outcomes):
        cells = [_cell(row[p], md=True) if p in row else "" for p in profiles]
        lines.append(f"| {dev}: {_says(book, dev)} | " + " | ".join(cells) + " |")
    for p, (verdict, why) in book.expect:
        lines += ["", f"As written under `{p}` the runbook is expected to give '{verdict}': {why}"]
    dangerous = [o for o in outcomes if o.verdict == "breaks"]
    base = {o.profile: o.property_id for o in outcomes if o.deviation == "as-written" and o.verdict == "breaks"}
    # A runbook expected to break (the failure a procedure exists to avoid): its deviations that break the
    # same property say nothing new.
    dangerous = [o for o in dangerous if o.deviation == "as-written" or base.get(o.profile) != o.property_id]
    if dangerous:
        lines += ["", "Dangerous deviations (a property broken; operator steps and the failing step of the shortest "
                  "trace, the whole trace in the run's ITF file):", ""]
        merged: dict[tuple[str, str | None, int | None, str], list[str]] = {}
        for o in dangerous:
            merged.setdefault((o.deviation, o.property_id, o.length, _brief(o)), []).append(o.profile)
        for (dev, prop, length, brief), profiles_ in merged.items():
            lines.append(f"- `{dev}` ({', '.join(profiles_)}): {prop} in {length} steps: {brief}")
    return "\n".join(lines) + "\n"


def _show(book: Runbook, outcomes: list[Outcome], doc: dict[str, Any]) -> None:
    console = out_console()
    profiles = _profiles(outcomes)
    table = Table(title=f"{book.id}: {book.title} ({book.protocol}, config {book.config_label})")
    table.add_column("deviation")
    for p in profiles:
        table.add_column(p)
    style = {"passes": "green", "safe": "green", "breaks": "bold red", "stalls": "yellow"}
    for dev, row in _grouped(outcomes):
        cells = []
        for p in profiles:
            o = row.get(p)
            cells.append("" if o is None else f"[{style.get(o.verdict, 'yellow')}]{escape(_cell(o))}[/]")
        table.add_row(escape(f"{dev}: {_says(book, dev)}"), *cells)
    console.print(table)
    rows = doc["outcomes"]
    for o, row in zip(outcomes, rows, strict=True):
        if o.verdict == "passes" or o.verdict == "safe" or o.trace is None:
            continue
        head = "[bold red]dangerous[/]" if o.verdict == "breaks" else "[yellow]stall[/]"
        if o.verdict == "stalls" and o.deviation != "as-written":
            continue  # stalls of deviations are in the table; their traces in the files
        console.print(f"{head} {escape(o.deviation)} ({o.profile}): {escape(o.description)}; "
                      f"trace {escape(row['trace'])}", soft_wrap=True, highlight=False)
        for line in _story(o):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    for p, (expected, why) in book.expect:
        console.print(f"expected under {p}: {expected} ({escape(why)})", highlight=False)
    if doc["verdict"] == INCONCLUSIVE:
        for line in doc["not_checked"]:
            console.print(f"[yellow]not checked[/] {escape(line)}", soft_wrap=True, highlight=False)
    verdict = {AS_EXPECTED: "[green]as expected[/]", NOT_AS_EXPECTED: "[bold red]NOT as expected[/]",
               INCONCLUSIVE: "[yellow]inconclusive[/] (an exploration was cut short: see 'not checked')"}
    console.print(f"{book.id} as written: {verdict[doc['verdict']]}", highlight=False)
