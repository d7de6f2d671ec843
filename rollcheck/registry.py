"""The protocol registry: the CLI, the explorers, the gate and the tests look protocols up here by name.

Each protocol module exposes ``PROTOCOL: ProtocolEntry``. A protocol is registered when its module is
importable; a module that exists but fails to import is an error, never silently skipped.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from rollcheck.errors import UserError
from rollcheck.transition import ProtocolEntry, TransitionSystem

# name -> module holding PROTOCOL. Order is the order of the KIPs' story (and of reports).
_MODULES: dict[str, str] = {
    "features": "reference_impl.features.protocol",
    "metadata_version": "reference_impl.metadata_version.protocol",
    "zk_migration": "reference_impl.zk_migration.protocol",
    "streams_probing": "reference_impl.streams_probing.protocol",
}


def _module_exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def protocol_names() -> list[str]:
    """The registered protocols, in report order."""
    return [name for name, mod in _MODULES.items() if _module_exists(mod)]


def get_protocol(name: str) -> ProtocolEntry:
    """The entry of a registered protocol; a clear :class:`UserError` for an unknown name."""
    module = _MODULES.get(name)
    if module is None or not _module_exists(module):
        known = ", ".join(protocol_names()) or "(none)"
        raise UserError(f"unknown protocol '{name}'; registered protocols: {known}")
    entry = importlib.import_module(module).PROTOCOL
    if not isinstance(entry, ProtocolEntry):  # pragma: no cover - a wiring mistake
        raise TypeError(f"{module}.PROTOCOL is not a ProtocolEntry")
    return entry


def all_protocols() -> list[ProtocolEntry]:
    return [get_protocol(n) for n in protocol_names()]


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
