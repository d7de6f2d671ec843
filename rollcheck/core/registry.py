"""The protocol registry: the CLI, the explorers, the gate and the tests look protocols up here by name.

Protocols register through the entry-point group ``rollcheck.protocols`` (``name = "module:PROTOCOL"``,
a :class:`~rollcheck.core.transition.ProtocolEntry`), the built-ins in rollcheck's own ``pyproject.toml`` and
a third-party package in its own, so nothing in the engine lists protocol names. An entry point that
exists but fails to load is an error naming it, never silently skipped.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from importlib.metadata import EntryPoint
from typing import Any

from rollcheck.core.errors import UserError
from rollcheck.core.plugins import load, registered
from rollcheck.core.transition import AnyProperty, ProtocolEntry, TransitionSystem

GROUP = "rollcheck.protocols"


def _registered() -> dict[str, EntryPoint]:
    return registered(GROUP)


@functools.cache
def _load(name: str) -> ProtocolEntry:
    loaded: ProtocolEntry = load(GROUP, name, "protocol", ProtocolEntry)
    return loaded


def protocol_names() -> list[str]:
    """The registered protocols, in report order (each entry's ``order``, then the name)."""
    return [e.name for e in sorted((_load(n) for n in _registered()), key=lambda e: (e.order, e.name))]


def get_protocol(name: str) -> ProtocolEntry:
    """The entry of a registered protocol; a clear :class:`UserError` for an unknown name."""
    if name not in _registered():
        known = ", ".join(protocol_names()) or "(none)"
        raise UserError(f"unknown protocol '{name}'; registered protocols: {known}")
    return _load(name)


def all_protocols() -> list[ProtocolEntry]:
    return [get_protocol(n) for n in protocol_names()]


def known_profiles(protocols: list[str] | None = None) -> list[str]:
    """Every profile of the given protocols (default: every registered one), each once, in the order the
    protocols (then their entries) list them."""
    names = protocol_names() if protocols is None else protocols
    return list(dict.fromkeys(p for n in names for p in get_protocol(n).profiles))


def check_profile(entry: ProtocolEntry, profile: object, where: str = "") -> str:
    """``profile`` if it is one of the protocol's profiles, else a one-line :class:`UserError` naming the
    protocol and its profiles (``where`` is put in front, e.g. a file name)."""
    problem = entry.profile_problem(profile)
    if problem is not None:
        raise UserError(f"{where}: {problem}" if where else problem)
    assert isinstance(profile, str)
    return profile


def find_protocol(name: str) -> ProtocolEntry | None:
    """The entry of a registered protocol, or None for a name no entry point registers."""
    return _load(name) if name in _registered() else None


def registered_properties(ts: Any) -> list[AnyProperty]:
    """The property set ``ts``'s protocol registers (``ProtocolEntry.properties``), bound to ``ts``: what a
    reference system's ``properties()`` returns, so that the reference never imports its own properties."""
    entry = get_protocol(ts.name)
    props = entry.property_set()
    if props is None:
        raise UserError(f"protocol '{entry.name}' registers no properties (ProtocolEntry.properties)")
    return list(props.bind(ts))


def build_system(protocol: str, config: Any, variant: str | None = None) -> TransitionSystem[Any]:
    """Build a protocol's transition system, or one of its broken variants, from a config.

    Spark executors call this with the (picklable) names and config rather than receiving the system.
    """
    entry = get_protocol(protocol)
    if variant is None:
        return entry.build(config)
    try:
        return entry.variant(variant).system(config)
    except KeyError:
        known = ", ".join(v.id for v in entry.variants) or "(none)"
        raise UserError(f"protocol '{protocol}' has no variant '{variant}'; known: {known}") from None


def check_profiles(profiles: Sequence[str], protocols: Sequence[str], where: str) -> None:
    """Each profile must be one of some given protocol's (it then applies to the protocols that have it): else
    one :class:`UserError` line naming the protocol (or, for several, every profile they have)."""
    known = known_profiles(list(protocols))
    for pr in profiles:
        if pr in known:
            continue
        if len(protocols) == 1:
            raise UserError(f"{where}: {get_protocol(protocols[0]).profile_problem(pr)}")
        raise UserError(f"{where}: unknown profile {pr!r}: none of {', '.join(protocols)} has it; their profiles: "
                        f"{', '.join(known)}")


def variant_ids_for(entry: ProtocolEntry, mutations: Iterable[str]) -> list[str]:
    """The broken variants of ``entry`` whose bug is among ``mutations`` (names a config's ``mutations`` field
    switches on): each variant is built on its own config and the mutations it adds are compared, so a
    report can name the variant a config turns the reference into."""
    wanted = set(mutations)
    found: list[str] = []
    for v in entry.variants:
        try:
            base = entry.configs[v.config]
            added = set(getattr(v.system(base).config, "mutations", ())) - set(getattr(base, "mutations", ()))
        except (KeyError, ValueError, TypeError, UserError):
            continue  # a variant that does not build on its own config names nothing here
        if added and added <= wanted:
            found.append(v.id)
    return found
