"""The mutants of a protocol: every operator's sites in the modules of its package that hold its rules.

The modules mutated are the protocol's ``api.py``, ``system.py`` and, where present, ``state.py``,
``catalog.py``, ``releases.py``, ``config.py``: never the registry entry, the symmetry keys, the command-line
tool or the JVM bridge. A mutant's id is ``<protocol>:<module>:<line>:<col>:<operator>`` (col 1-based; ``#2``
... when two sites share it); identical mutated modules are merged, and edits that do not give the intended
tree are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.mutate.sites import ModuleSites, apply_site, enclosing_functions
from rollcheck.mutate.tree import protocol_dir

MUTATED_MODULES = ("api.py", "system.py", "state.py", "catalog.py", "releases.py", "config.py")
# A protocol's config module (its named configs' class and validation): its mutants meet the config domain first.
CONFIG_MODULE = "config.py"
# A protocol's system module (its transition system): the decision rules do not call it, so its mutants skip them
# as a first step (the z3 cells run them anyway).
SYSTEM_MODULE = "system.py"


@dataclass(frozen=True)
class Mutant:
    id: str
    protocol: str
    operator: str
    file: str  # relative to the checkout
    module: str  # relative to the protocol's package (what the id names)
    line: int
    col: int
    before: str
    after: str
    source: str = field(repr=False)  # the whole mutated module
    function: str = ""  # the innermost function (or method, as Class.name) around the site; "" at module level



def enumerate_mutants(protocol: str, operators: Sequence[str], root: Path,
                      source: Path | None = None) -> tuple[list[Mutant], list[dict[str, Any]]]:
    """Every mutant of one protocol, in a fixed order (module, position, operator), and the sites dropped;
    the modules are read under ``source`` (the campaign's snapshot of the checkout ``root``; default: ``root``
    itself)."""
    source = root if source is None else source
    pkg = source / protocol_dir(protocol).relative_to(root)
    mutants: list[Mutant] = []
    dropped: list[dict[str, Any]] = []
    seen_ids: dict[str, int] = {}
    seen_texts: dict[tuple[str, str], str] = {}
    for name in MUTATED_MODULES:
        path = pkg / name
        if not path.is_file():
            continue
        original = path.read_text(encoding="utf-8")
        sites = ModuleSites(original)
        functions = enclosing_functions(original)
        rel = str(path.relative_to(source))
        for site in sites.sites():
            if site.operator not in operators:
                continue
            base = f"{protocol}:{name}:{site.line}:{site.col}:{site.operator}"
            # Two sites can share a position and an operator ((a and b) and c): numbered in enumeration order.
            seen_ids[base] = seen_ids.get(base, 0) + 1
            mid = base if seen_ids[base] == 1 else f"{base}#{seen_ids[base]}"
            text = apply_site(sites, site)
            if text is None:
                dropped.append({"id": mid, "reason": "the edit does not give the intended syntax tree"})
                continue
            if (rel, text) in seen_texts:
                dropped.append({"id": mid, "reason": f"the same module as {seen_texts[rel, text]}"})
                continue
            seen_texts[rel, text] = mid
            after_lines = text.splitlines()
            mutants.append(Mutant(mid, protocol, site.operator, rel, name, site.line, site.col,
                                  sites.lines[site.line - 1].strip(), after_lines[site.line - 1].strip(), text,
                                  functions.get(site.line, "")))
    return mutants, dropped


def spread(items: list[Mutant], limit: int | None, offset: int = 0) -> list[Mutant]:
    """At most ``limit`` items evenly spaced over the list (deterministic), so that a small sample still
    covers every module and operator; ``offset`` shifts every pick by that many places (another sample of the
    same spread: offsets 0 .. len/limit - 1 never pick a mutant twice)."""
    if limit is None or limit >= len(items):
        return items
    return [items[((i * len(items)) // limit + offset) % len(items)] for i in range(limit)]
