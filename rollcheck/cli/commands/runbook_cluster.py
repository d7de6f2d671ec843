"""``rollcheck runbook FILE --cluster [--release A[:B]] [--fault STEP:KIND[:NODE]]... [--json]``: one runbook performed
on a real local cluster of Kafka's released jars, its observed trace validated against the model
(:mod:`rollcheck.cluster.runbook`, docs/runbooks.md). Exit 0: every observation met by a run of the model and no
property forced to fail (a stall only where the runbook expects one); 3: an observation the model cannot meet, a
refusal the model never makes, or a stall the runbook does not expect; 1: a property the observations force to
fail; 2: bad input, or a node that failed (named with its log)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rollcheck.cluster.runbook import (
    ClusterRun,
    binding_for,
    parse_fault,
    parse_releases,
    run_on_cluster,
)
from rollcheck.core.errors import ExitCode, UserError
from rollcheck.core.registry import get_protocol
from rollcheck.runbook import load_runbook
from rollcheck.runtime.console import err_console, out_console, print_json, results_line

CLUSTER_DIR = "cluster"  # the runs' directory under --out


def check_args(args: argparse.Namespace) -> None:
    """The flags a cluster run takes (before anything starts)."""
    if not args.cluster:
        for flag, value in (("--release", args.release), ("--fault", args.fault)):
            if value:
                raise UserError(f"{flag} needs --cluster (a run on a real local cluster)")
        return
    given = [("--deviations", args.deviations), ("--markdown", args.markdown is not None),
             ("--max-states", args.max_states is not None), ("--parallel", args.parallel != 1),
             ("--profile", args.profile is not None)]
    for flag, on in given:
        if on:
            raise UserError(f"--cluster runs one runbook as written under the kafka profile: it takes no {flag}")
    if len(args.paths) != 1 or args.paths[0].is_dir():
        raise UserError("--cluster runs one runbook: give one runbook file (e.g. "
                        "runbooks/metadata_version/kraft-upgrade.toml)")


def run_cluster(args: argparse.Namespace) -> int:
    path: Path = args.paths[0]
    if not path.exists():
        raise UserError(f"runbook not found: {path}")
    book = load_runbook(path)
    entry = get_protocol(book.protocol)
    binding = binding_for(entry)
    faults = [parse_fault(f, [s.id for s in book.steps]) for f in args.fault or []]
    plan = binding.plan(book, parse_releases(args.release), faults)
    folder = Path(args.out) / CLUSTER_DIR / book.id
    progress = err_console()

    def say(text: str) -> None:
        if not args.quiet:
            progress.print(text, markup=False, highlight=False, soft_wrap=True)

    for note in plan.notes:
        say(note)
    run = run_on_cluster(binding, book, plan, faults, folder, say)
    expected, why = book.expected("kafka")
    stall_expected = expected == "stalls"
    ok = run.valid and (run.stalled is None or stall_expected)
    if args.json:
        doc = run.to_json()
        doc["expected"] = {"verdict": expected, "why": why}
        doc["ok"] = ok
        print_json(doc)
    else:
        _show(run, book.id, stall_expected)
        results_line(f"results in {run.folder}")
    if ok:
        return int(ExitCode.OK)
    v = run.validation
    # What the cluster did and the model cannot do is a disagreement (3); a property the observations force to
    # fail, on a trace the model allows, a violation (1).
    if v is not None and v.failed_step is None and not run.model_accepts and v.violations:
        return int(ExitCode.VIOLATION)
    return int(ExitCode.DISAGREEMENT)


def _show(run: ClusterRun, book_id: str, stall_expected: bool) -> None:
    console = out_console()
    v = run.validation
    assert v is not None
    where = f"{book_id} on Kafka {':'.join(run.releases)}" + (
        f" (faults: {', '.join(str(f) for f in run.faults)})" if run.faults else "")
    for i, o in enumerate(run.observed):
        console.print(f"{i:>3} {o.label}: {o.did}", markup=False, highlight=False, soft_wrap=True)
    if v.failed_step is not None:
        label = run.observed[v.failed_step].label
        console.print(f"{where}: the observation after {label} is met by no model state reached from the one "
                      f"before; observed {v.observed}", markup=False, highlight=False, soft_wrap=True)
        for c in v.closest:
            console.print(f"  closest model state differs in: {'; '.join(c.differences)}", markup=False,
                          highlight=False, soft_wrap=True)
        return
    for x in v.violations:
        console.print(f"{where}: property {x.property_id} is violated at {run.observed[x.step].label} whatever the "
                      f"hidden state: {x.description}", markup=False, highlight=False, soft_wrap=True)
    if v.truncated:
        console.print(f"{where}: inconclusive: a step reached more model states than the bound", markup=False)
    if run.model_accepts:
        console.print(f"{where}: the cluster refused {run.stalled}; the model takes that step from every state the "
                      f"observations allow", markup=False, highlight=False, soft_wrap=True)
    if run.valid:
        tail = ""
        if run.stalled is not None:
            tail = (f"; stalled at {run.stalled} as the runbook expects" if stall_expected
                    else f"; but the cluster refused {run.stalled}, and the runbook is expected to pass")
        console.print(f"{where}: the observed trace is valid: {v.met} observations met by a run of the model "
                      f"({len(v.run) - 1} transitions){tail}; {run.seconds:.0f} s", markup=False, highlight=False,
                      soft_wrap=True)
