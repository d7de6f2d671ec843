"""The checker registry: checkers register through the entry-point group ``rollcheck.checkers``
(``name = "module:CHECKER"``, an object satisfying :class:`~rollcheck.checkers.base.Checker`), the built-ins in
rollcheck's own ``pyproject.toml`` and a third-party package in its own, as protocols do
(:mod:`rollcheck.core.registry`). An entry point that exists but fails to load is an error naming it."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib.metadata import EntryPoint
from typing import Any

from rollcheck.checkers.base import Checker, Key
from rollcheck.core.errors import UserError
from rollcheck.core.plugins import load, registered

GROUP = "rollcheck.checkers"


def _registered() -> dict[str, EntryPoint]:
    return registered(GROUP)


@functools.cache
def _load(name: str) -> Checker:
    loaded: Checker = load(GROUP, name, "checker", Checker)
    return loaded


def all_checkers() -> list[Checker]:
    """Every registered checker, in report order (each one's ``order``, then the name)."""
    return sorted((_load(n) for n in _registered()), key=lambda c: (c.order, c.name))


def checker_names() -> list[str]:
    return [c.name for c in all_checkers()]


def get_checker(name: str) -> Checker:
    """A registered checker; a clear :class:`UserError` for an unknown name."""
    if name not in _registered():
        raise UserError(f"unknown checker '{name}'; known: {', '.join(checker_names())}")
    return _load(name)


def available_checkers() -> list[str]:
    """The checkers that can be planned here (their modules import), in report order."""
    return [c.name for c in all_checkers() if c.available() is None]


def unavailable(name: str) -> str | None:
    """Why ``name`` cannot run on this machine (its package or its external tool missing), or None."""
    checker = get_checker(name)
    return checker.available() or checker.tool_problem()


def tier_checkers(tier: str) -> list[str]:
    """The checkers a tier runs by default, in report order (those this machine has)."""
    return [c.name for c in all_checkers() if tier in c.capabilities.tiers and c.available() is None]


def variant_checkers(tier: str | None = None) -> list[str]:
    """The checkers that run on broken variants (in ``tier``; None: in any tier), cheapest first."""
    found = [c for c in all_checkers() if c.capabilities.kills_variants
             and (tier is None or tier in c.capabilities.mutant_tiers)]
    return [c.name for c in sorted(found, key=lambda c: c.capabilities.mutant_rank)]


def option_keys() -> list[Key]:
    """Every registered checker's config keys, each once (two checkers may read one key: the first's rule)."""
    keys: dict[str, Key] = {}
    for c in all_checkers():
        for key in c.options.KEYS:
            keys.setdefault(key.name, key)
    return list(keys.values())


def validate_options(gate: Mapping[str, Any], options: Mapping[str, Any], where: str) -> None:
    """Every checker's keys in a gate config (its [gate] table and its options table): an unknown option is
    an error naming the known ones."""
    keys = option_keys()
    known = sorted(k.name for k in keys if k.table == "options")
    unknown = set(options) - set(known)
    if unknown:
        raise UserError(f"{where}: unknown options {sorted(unknown)}; known: {', '.join(known)}")
    for c in all_checkers():
        c.options.validate(gate, options, where)


def gate_keys() -> frozenset[str]:
    """The [gate] keys the registered checkers read (beside the gate's own)."""
    return frozenset(k.name for k in option_keys() if k.table == "gate")
