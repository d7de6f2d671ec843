"""Entry-point groups as plug-in registries: protocols (``rollcheck.protocols``) and checker kinds
(``rollcheck.checkers``) are found the same way, so a third-party package adds either with no engine edit.
An entry point that exists but fails to load, or loads something else, is a one-line error naming it, never
silently skipped."""

from __future__ import annotations

import functools
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from rollcheck.core.errors import UserError


@functools.cache
def registered(group: str) -> dict[str, EntryPoint]:
    """The group's entry points by name, the first of a name winning. Read once per process: the installed
    distributions do not change while a run goes on."""
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=group):
        found.setdefault(ep.name, ep)
    return found


def load(group: str, name: str, kind: str, expected: type) -> Any:
    """The object entry point ``name`` of ``group`` names: an instance of ``expected`` whose ``name`` is
    ``name`` (``kind`` words the errors: "protocol", "checker")."""
    ep = registered(group)[name]
    try:
        obj = ep.load()
    except Exception as exc:
        raise UserError(f"{kind} '{name}' is registered ({ep.value}) but does not load: "
                        f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(obj, expected):
        raise UserError(f"{kind} '{name}': {ep.value} is not a {expected.__name__}")
    own = getattr(obj, "name", None)
    if own != name:
        raise UserError(f"{kind} '{name}': {ep.value} is named '{own}'")
    return obj
