"""Specs and code cannot drift: a spec's action and property operators against the reference's names.

The spec is parsed with the ``tla`` package (a TLA+ parser for Python). Property operators are the
definitions named like a property id of the protocol (``STR-01`` -> ``STR_01``; helper definitions such as
``STR_01_Step`` do not count); action operators are the operators that ``Next`` applies. Each must match
the reference one to one: the property ids of ``properties/`` and the action names of the binding, which
in turn must cover every action name the reference emits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import tla

from rollcheck.tla.binding import SpecBinding, operator_name


def _walk(node: Any) -> Iterable[Any]:
    """Every AST node under ``node`` (the parser's nodes are named tuples)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if hasattr(n, "_fields"):
            yield n
            stack.extend(getattr(n, f) for f in n._fields)
        elif isinstance(n, (list, tuple)):
            stack.extend(n)


def spec_definitions(path: Path) -> dict[str, Any]:
    """Every top-level operator definition of the spec, by name."""
    tree = tla.parse(path.read_text(encoding="utf-8"))
    if tree is None:
        raise ValueError(f"{path}: the tla parser could not parse the module")
    return {u.name: u for u in tree.units if type(u).__name__ == "OperatorDefinition"}


_COMMENT = re.compile(r"\\\*[^\n]*|\(\*.*?\*\)", re.DOTALL)  # \* line comments and (* block comments *)


def _applied(defn: Any, defs: dict[str, Any]) -> set[str]:
    return {n.operator for n in _walk(defn.definiens)
            if type(n).__name__ == "OperatorApplication" and isinstance(getattr(n, "operator", None), str)
            and n.operator in defs}


def _text(defn: Any, lines: list[str]) -> str:
    """The source of a definition (the parser's positions are 0-based; ``end`` is inclusive)."""
    (l0, c0), (l1, c1) = (defn.start.line, defn.start.column), (defn.end.line, defn.end.column)
    if l0 == l1:
        return str(lines[l0][c0:c1 + 1])
    return "\n".join([lines[l0][c0:], *lines[l0 + 1:l1], lines[l1][:c1 + 1]])


def next_actions(defs: dict[str, Any], source: str, next_name: str = "Next") -> set[str]:
    """The operators that ``Next`` applies and that are actions: their definition (or one they apply)
    mentions a primed variable or UNCHANGED. Constants such as ``Idx`` in ``\\E i \\in Idx`` are not."""
    if next_name not in defs:
        raise ValueError(f"the spec has no {next_name} operator")
    lines = source.splitlines()
    bodies = {n: _COMMENT.sub("", _text(d, lines)).split("==", 1)[-1] for n, d in defs.items()}
    direct = {n for n, body in bodies.items() if "'" in body or "UNCHANGED" in body}
    calls = {n: _applied(d, defs) for n, d in defs.items()}
    primed = set(direct)
    changed = True
    while changed:
        changed = False
        for n, called in calls.items():
            if n not in primed and called & primed:
                primed.add(n)
                changed = True
    return {a for a in calls[next_name] if a in primed}


def drift(binding: SpecBinding, property_ids: Iterable[str], emitted_actions: Iterable[str] = ()) -> list[str]:
    """Every mismatch between the spec and the reference, each naming both sides; empty when in step."""
    defs = spec_definitions(binding.path)
    ids = sorted(set(property_ids))
    prefixes = sorted({i.split("-")[0] for i in ids})
    pattern = re.compile(rf"^(?:{'|'.join(map(re.escape, prefixes))})_[A-Z0-9]+$")
    spec_props = {n for n in defs if pattern.match(n)}
    expected = {operator_name(i): i for i in ids}
    problems = [f"property {expected[op]} has no operator {op} in {binding.path.name}"
                for op in sorted(set(expected) - spec_props)]
    problems += [f"operator {op} of {binding.path.name} matches no property id of the reference "
                 f"(expected one of: {', '.join(ids)})" for op in sorted(spec_props - set(expected))]
    actions = next_actions(defs, binding.path.read_text(encoding="utf-8"))
    problems += [f"reference action {a} is not an action of {binding.path.name}'s Next"
                 for a in sorted(set(binding.actions) - actions)]
    problems += [f"action {a} of {binding.path.name}'s Next is not a reference action "
                 f"(reference actions: {', '.join(binding.actions)})" for a in sorted(actions - set(binding.actions))]
    problems += [f"the reference emits action {a}, which the binding of {binding.path.name} does not list"
                 for a in sorted(set(emitted_actions) - set(binding.actions))]
    return problems
