"""The reviewed list of equivalent mutants: edits argued to change nothing any caller can observe.

Each protocol keeps its own list beside its reference, ``equivalent_mutants.toml`` in the protocol's package: an
entry names the edit, not its line (lines move): the module (its file name), the operator, the mutated line
before and after as the campaign's JSON prints them, and the reason; optionally ``function`` (only inside it)
and ``column`` (only at that column of the line). A listed mutant still runs every step: only when every step
lets it survive is it counted "equivalent"; killed, it is killed, and the entry is reported stale.

A mutant whose distinct-state count differs from the baseline's reaches states the reference does not, so
"changes nothing" needs more than the usual reason: the entry records the changed counts (``states``, as the
campaign prints them: ``"atomic/kafka: 252 -> 260"``) and says why the new states are harmless
(``harmless``). An entry with one of the two and not the other is refused, and so is an entry that names a
campaign row whose counts changed without giving ``harmless``; a survivor whose counts changed is never judged
equivalent by an entry without it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcheck.mutate.generate import Mutant
from rollcheck.mutate.sites import OPERATORS
from rollcheck.mutate.tree import protocol_dir

EQUIVALENTS_FILE = "equivalent_mutants.toml"


@dataclass(frozen=True)
class Equivalent:
    """One edit of one protocol's module argued equivalent (see the module's docstring)."""

    protocol: str
    module: str
    operator: str
    before: str
    after: str
    reason: str
    function: str = ""
    column: str = ""
    # The distinct-state counts the edit changes ("config/profile: before -> after") and why the new states
    # are harmless: both or neither.
    states: tuple[str, ...] = ()
    harmless: str = ""

    def names(self, row: dict[str, Any]) -> bool:
        return ((row.get("protocol"), Path(str(row.get("file", ""))).name, row.get("operator"), row.get("before"),
                 row.get("after")) == (self.protocol, self.module, self.operator, self.before, self.after)
                and (not self.function or row.get("function") == self.function)
                and (not self.column or str(row.get("id", "")).split(":")[3:4] == [self.column]))

    def label(self) -> str:
        where = f" in {self.function}" if self.function else ""
        return f"{self.protocol} {self.module} {self.operator}{where} `{self.before}`"


_REQUIRED = ("module", "operator", "before", "after", "reason")
_OPTIONAL = ("function", "column", "harmless")


def load_equivalents(path: Path, protocol: str) -> list[Equivalent]:
    """One protocol's list (absent: empty); ``ValueError`` (one line naming the entry) when it is malformed."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None
    out = []
    for i, e in enumerate(doc.get("equivalent", []), 1):
        strings = {k: v for k, v in e.items() if k != "states"} if isinstance(e, dict) else {}
        if not isinstance(e, dict) or not set(_REQUIRED) <= set(e) <= {*_REQUIRED, *_OPTIONAL, "states"} or not all(
                isinstance(v, str) and v.strip() for v in strings.values()):
            raise ValueError(f"{path}: entry {i} must have exactly the non-empty strings "
                             f"{', '.join(sorted(_REQUIRED))} (and optionally function, column, states, harmless)")
        entry = Equivalent(protocol, **strings, states=_states(path, i, e.get("states", [])))
        if entry.operator not in OPERATORS:
            raise ValueError(f"{path}: entry {i}: unknown operator {entry.operator!r}")
        if not (entry.column or "0").isdigit():
            raise ValueError(f"{path}: entry {i}: column must be a number, not {entry.column!r}")
        if bool(entry.states) != bool(entry.harmless):
            raise ValueError(f"{path}: entry {i} ({entry.label()}): " + (
                f"its mutant changes distinct states ({'; '.join(entry.states)}) and `harmless` does not say why "
                "the new states are harmless" if entry.states else
                "`harmless` argues new states harmless, but `states` names no changed count"))
        out.append(entry)
    return out


def protocol_equivalents(protocols: Iterable[str]) -> list[Equivalent]:
    """The lists of ``protocols``, each read from its package (:data:`EQUIVALENTS_FILE`)."""
    return [e for p in protocols for e in load_equivalents(protocol_dir(p) / EQUIVALENTS_FILE, p)]


def _states(path: Path, i: int, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{path}: entry {i}: states must be a list of changed counts (\"config/profile: a -> b\")")
    return tuple(value)


def check_evidence(equivalents: Sequence[Equivalent], rows: Iterable[dict[str, Any]], source: str) -> None:
    """Refuse (``ValueError``, one line) an entry that names a row of an earlier campaign whose distinct-state
    counts changed when the entry gives no reason why the new states are harmless."""
    for row in rows:
        changed = row.get("count_changed") or []
        if not changed:
            continue
        entry = next((e for e in equivalents if not e.harmless and e.names(row)), None)
        if entry is not None:
            raise ValueError(f"the equivalent entry {entry.label()} names {row.get('id')}, whose distinct states "
                             f"changed in {source} ({'; '.join(map(str, changed))}): give `states` and `harmless` "
                             "(why the new states are harmless), or remove the entry")


def _covers(entry: Equivalent, row: dict[str, Any]) -> bool:
    """The entry may judge the row: its counts did not change, or the entry argues the new states harmless."""
    return bool(entry.harmless) or not row.get("count_changed")


def judge_equivalent(row: dict[str, Any], equivalents: Sequence[Equivalent]) -> dict[str, Any]:
    """A survivor named by the list becomes "equivalent", with the list's reason; any other row is as it was
    (a survivor whose counts changed, named by an entry that does not argue the new states harmless, too)."""
    if not str(row.get("status", "")).startswith("survived"):
        return row
    entry = next((e for e in equivalents if e.names(row)), None)
    if entry is None:
        return row
    if not _covers(entry, row):
        return dict(row, equivalent_refused=f"listed as equivalent ({entry.label()}), but its distinct states "
                    "changed and the entry does not say why the new states are harmless")
    return dict(row, status="equivalent", equivalent=entry.reason, **({"harmless": entry.harmless}
                                                                      if entry.harmless else {}))


def listed_equivalent(m: Mutant, equivalents: Sequence[Equivalent]) -> bool:
    """Whether the list names this mutant (before it runs)."""
    row = {"protocol": m.protocol, "file": m.file, "operator": m.operator, "before": m.before, "after": m.after,
           "function": m.function}
    return any(e.names(row) for e in equivalents)
