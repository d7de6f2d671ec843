"""Going on from earlier campaigns: which of their rows stand at this checkout (``--resume``), the step that
killed an edit there (run first), and the survivors ``--recheck`` runs again.

A row stands, by mutant id and the same edit, while every module is unchanged since it ran (any verdict but a
timeout or a screen), or while its protocol's reference is unchanged and it is a kill or a listed equivalent
(the checkers only grow); or where the reference changed only by its registry entry's growth.
"""

from __future__ import annotations

import gzip
import json
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rollcheck.core.errors import UserError
from rollcheck.mutate.equivalents import Equivalent, judge_equivalent
from rollcheck.mutate.generate import Mutant
from rollcheck.mutate.mutant_run import KillHint
from rollcheck.mutate.steps import Cell
from rollcheck.mutate.tree import SourceTree


def git(root: Path, *args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30,
                              check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def read_campaign_text(path: Path) -> str:
    """A campaign file's text: ``.json``, or ``.json.gz`` as benchmarks/results/ keeps them (gzip -9 -n)."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return f.read()
    return path.read_text(encoding="utf-8")


def load_campaign(path: Path, option: str) -> dict[str, Any]:
    """An earlier campaign's JSON, refused (one line, exit 2) when it cannot be read or is not one."""
    try:
        doc = json.loads(read_campaign_text(path))
    except (OSError, ValueError, EOFError) as exc:
        raise UserError(f"{option}: cannot read {path}: {exc}") from None
    rows = doc.get("mutants") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("benchmark") != "mutation" or not isinstance(rows, list) \
            or not doc.get("commit") or not all(isinstance(r, dict) and {"id", "protocol", "status"} <= r.keys()
                                                for r in rows):
        raise UserError(f"{option}: {path} is not a campaign's JSON (rollcheck mutate's mutation-*.json)")
    return doc


def merge_campaigns(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several campaigns' JSON as one, for ``--resume`` from pieces (runs with ``--match``): the last file's fields,
    and every file's rows, each keeping the commit and digests of the file it came from (a row without its own);
    a later file's row of a mutant replaces an earlier one's."""
    if len(docs) == 1:
        return docs[0]
    rows: dict[str, dict[str, Any]] = {}
    for doc in docs:
        own = {k: doc[k] for k in ("commit", "sources_sha256", "reference_sha256") if doc.get(k) is not None}
        for r in doc["mutants"]:
            rows[str(r["id"])] = {**own, **r}
    return {**docs[-1], "mutants": list(rows.values())}


def load_previous(tree: SourceTree, path: Path) -> dict[str, Any]:
    """An earlier campaign's JSON for ``--recheck``, refused (one line, exit 2) when it is not one, or when the
    explorer's inputs changed since its commit (its explorer verdicts would not carry over)."""
    doc = load_campaign(path, "--recheck")
    if doc.get("partial"):
        raise UserError(f"--recheck: {path} is a partial campaign; its survivors are not all of its mutants' survivors")
    changed = git(tree.root, "diff", "--name-only", doc["commit"], "--", *tree.packages)
    if changed:
        first = changed.splitlines()[0]
        raise UserError(f"--recheck: {first} (and what else changed under {', '.join(tree.packages)}) differs from "
                f"{path.name}'s commit {doc['commit'][:12]}: its explorer verdicts do not carry over; run the "
                "campaign again")
    return doc


def carried_rows(earlier: dict[str, Any], selected: dict[str, list[Mutant]], doc: dict[str, Any],
                 equivalents: Sequence[Equivalent] = (),
                 grown: Callable[[dict[str, Any], str], bool] | None = None,
                 carry_equivalents: bool = False) -> dict[str, dict[str, Any]]:
    """The rows of an earlier campaign (``--resume``) that stand at this checkout, by mutant id: the same edit
    (id, line before and after), and either every module unchanged since the row ran (any verdict stands; a
    timeout is none, and runs again) or
    ``reference_impl/`` unchanged and the row a kill (the checkers changed: a survivor or a timeout runs again
    against them; a kill is kept, flagged ``carried``, on the ground that the checkers only grow: a property
    weakened since would need a campaign from scratch). A survivor the list of equivalent mutants names is judged
    "equivalent" and kept like a kill: it survived the checkers of its time, and more checkers cannot kill an
    edit that changes nothing (if they do, the entry is wrong: ``--resume`` from a campaign at the old reference
    sees it). ``grown`` (:func:`registry_growth`): a standing row also stands where the reference changed only by
    its registry entry's growth (configs added: every check the row met still runs), flagged ``registry_grew``.
    ``carry_equivalents`` (``--carry-equivalents``): an equivalent row the list still names stands even where the
    reference changed, flagged ``equivalent_carried``: a run can only confirm it (a survivor the list names is
    "equivalent" again) or show the entry stale (killed), never leave a survivor, and it costs every step (about
    seven minutes a streams_probing mutant); whether the argument still holds is the list's review, not a run's."""
    wanted = {m.id: m for ms in selected.values() for m in ms}
    out: dict[str, dict[str, Any]] = {}
    for r in earlier["mutants"]:
        m = wanted.get(r["id"])
        if m is None or (r.get("before"), r.get("after")) != (m.before, m.after):
            continue
        # The enclosing function of rows from before the field: the same edit of the same line is in the same
        # function while the code stands, which is all a carried row needs.
        r = r if "function" in r else dict(r, function=m.function)
        if r["status"] == "equivalent" and not any(e.names(r) for e in equivalents):
            r = dict(r, status="survived")  # its entry is gone (found stale): a survivor, run again
        r = judge_equivalent(r, equivalents)
        # Rows written before these fields were: the campaign's own.
        src = r.get("sources_sha256", earlier.get("sources_sha256"))
        ref = r.get("reference_sha256", earlier.get("reference_sha256"))
        # The protocol's own digest where the row has one (rows before it: every reference module).
        own = r.get("protocol_reference_sha256")
        same_reference = (ref == doc["reference_sha256"] if own is None
                          else own == doc.get("protocol_reference_sha256", {}).get(m.protocol))
        # A row with the digest of the code alone: a comment edited since stands.
        code = r.get("protocol_code_sha256")
        same_reference = same_reference or (code is not None
                                            and code == doc.get("protocol_code_sha256", {}).get(m.protocol))
        standing = str(r["status"]).startswith("killed") or r["status"] == "equivalent"
        row_commit = r.get("commit", earlier.get("commit"))
        # A timeout is no verdict: it runs again (a resume is how a longer --timeout reaches it); nor is a screen's
        # "screened" (the cheap steps alone ran).
        verdict = r["status"] not in ("timeout", "screened")
        if (src == doc["sources_sha256"] and verdict) or (same_reference and standing):
            out[m.id] = dict(r, commit=row_commit, sources_sha256=src, reference_sha256=ref,
                             carried=src != doc["sources_sha256"])
        elif standing and grown is not None and grown(dict(r, commit=row_commit), m.protocol):
            out[m.id] = dict(r, commit=row_commit, sources_sha256=src, reference_sha256=ref, carried=True,
                             registry_grew=True)
        elif carry_equivalents and r["status"] == "equivalent" and any(e.names(r) for e in equivalents):
            out[m.id] = dict(r, commit=row_commit, sources_sha256=src, reference_sha256=ref, carried=True,
                             equivalent_carried=True)
    if carry_equivalents:
        out.update(_moved_equivalents(earlier, wanted, out, equivalents))
    return out


def _moved_equivalents(earlier: dict[str, Any], wanted: dict[str, Mutant], kept: dict[str, dict[str, Any]],
                       equivalents: Sequence[Equivalent]) -> dict[str, dict[str, Any]]:
    """For ``--carry-equivalents``: an equivalent row whose line an edit above moved (a new id), matched to its
    mutant by the same edit of the same function at the same column where that is unique on both sides (as
    :func:`kill_hints` matches), under the mutant's id and flagged ``moved_from`` the row's."""
    todo = [m for m in wanted.values() if m.id not in kept]
    by_edit = _unique_by_edit([(_edit_key(m.protocol, m.module, m.function, m.operator, m.col, m.before, m.after), m)
                               for m in todo])
    rows = _unique_by_edit([(_row_edit_key(r), r) for r in earlier["mutants"]])
    out: dict[str, dict[str, Any]] = {}
    for key, row in rows.items():
        m = by_edit.get(key)
        r = judge_equivalent(row, equivalents)  # a survivor the list names since
        if m is None or m.id == r["id"] or r.get("status") != "equivalent" or not any(
                e.names(r) for e in equivalents):
            continue
        out[m.id] = dict(r, id=m.id, line=m.line, moved_from=r["id"], commit=r.get("commit", earlier.get("commit")),
                         carried=True, equivalent_carried=True)
    return out


def kill_hint(row: dict[str, Any]) -> KillHint | None:
    """The step that killed a row: ("explore", the cell whose property broke, or where it crashed), ("z3", the
    cell where Z3 disagreed or raised), ("conform", the cell whose TLC conformance disagreed: about a minute,
    where the steps ahead of it take minutes); None for any other verdict (a survivor, a timeout, an equivalent
    edit) and for a kill by the broken variants' cells: minutes, where a story config added since may kill in
    seconds (a hinted variant run took 253 s on a mutant the usual order kills in 80)."""
    status = str(row.get("status", ""))
    if status == "killed" and row.get("killed_by"):
        kb = row["killed_by"][0]
        return "explore", Cell(kb["config"], kb["profile"])
    if (row.get("variants") or {}).get("verdict") in ("escaped", "disagrees", "error"):
        return None
    if status in ("killed (z3)", "killed (crash)"):
        for d in row.get("z3") or []:
            if d.get("verdict") in ("disagrees", "error"):
                return "z3", Cell(d["config"], d["profile"])
    if status == "killed (crash)":
        for r in row.get("runs") or []:
            if r.get("outcome") == "crash":
                return "explore", Cell(r["config"], r["profile"])
    if status == "killed (conform)":
        # The whole check on the cell that disagreed (its config domain alone, a config module's first step,
        # runs first anyway).
        for c in row.get("conform") or []:
            if c.get("verdict") == "disagrees" and not c.get("domain_only"):
                return "conform", Cell(c["config"], c["profile"])
    return None


def kill_hints(earlier: dict[str, Any], selected: dict[str, list[Mutant]],
               carried: dict[str, dict[str, Any]]) -> dict[str, KillHint]:
    """For each mutant ``--resume`` runs again (its row not carried: the reference changed since) whose edit
    an earlier row killed, the step that killed it (:func:`kill_hint`), to run first. A row is matched by its
    id, or, when an edit above moved the line (a new id), by the same edit of the same function at the same
    column (:func:`_edit_key`) where that is unique on both sides: a hint only orders the steps, so a wrong
    match costs time, never a verdict."""
    wanted = {m.id: m for ms in selected.values() for m in ms}
    by_edit = _unique_by_edit([(_edit_key(m.protocol, m.module, m.function, m.operator, m.col, m.before, m.after), m)
                               for m in wanted.values()])
    earlier_by_edit = _unique_by_edit([(_row_edit_key(r), r) for r in earlier["mutants"]])
    out: dict[str, KillHint] = {}
    for r in earlier["mutants"]:
        m = wanted.get(r["id"])
        if m is None or (r.get("before"), r.get("after")) != (m.before, m.after):
            key = _row_edit_key(r)
            m = by_edit.get(key) if earlier_by_edit.get(key) is r else None
        if m is None or m.id in carried or m.id in out:
            continue
        hint = kill_hint(r)
        if hint is not None:
            out[m.id] = hint
    return out


EditKey = tuple[object, ...]


def _edit_key(protocol: object, module: object, function: object, operator: object, col: object, before: object,
              after: object) -> EditKey:
    """A mutant's edit without its line: the protocol, the module, the enclosing function, the operator, the
    column and the line's text before and after."""
    return protocol, module, function, operator, col, before, after


def _row_edit_key(row: dict[str, Any]) -> EditKey:
    """An earlier row's edit key; its module is the one its id names (``protocol:module:line:col:operator``)."""
    parts = str(row.get("id", "")).split(":")
    return _edit_key(row.get("protocol"), parts[1] if len(parts) == 5 else None, row.get("function"),
                     row.get("operator"), row.get("col"), row.get("before"), row.get("after"))


def _unique_by_edit(items: list[tuple[EditKey, Any]]) -> dict[EditKey, Any]:
    """The items whose edit key no other item shares (the same edit on two lines of a function is ambiguous)."""
    seen: dict[EditKey, Any] = {}
    twice: set[EditKey] = set()
    for key, item in items:
        if key in seen:
            twice.add(key)
        seen[key] = item
    return {k: v for k, v in seen.items() if k not in twice}


def _rechecked(row: dict[str, Any]) -> bool:
    """A row --recheck runs again: a survivor (a timeout or a kill stands as it was)."""
    return str(row.get("status", "")).startswith("survived")
