"""Named configs and TOML config files.

``--config NAME`` picks one of a protocol's named configs (``small``, ``default``, ``large``);
``--config FILE.toml`` reads a file that starts from a named config and overrides fields::

    protocol = "features"      # optional; must match the protocol being run
    base = "small"             # optional; the named config to start from (default: "default")

    [config]                   # or [features]: a table named after the protocol
    profile = "kafka"
    brokers = 3

Every value is checked against the config dataclass's type hints; unknown keys, wrong types and
values the protocol's ``validate()`` rejects give one clear :class:`UserError`.
"""

from __future__ import annotations

import dataclasses
import enum
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

from rollcheck.errors import UserError
from rollcheck.transition import PROFILES, ProtocolEntry
from rollcheck.userinput import read_text_input

CONFIG_NAMES = ("small", "default", "large")


def resolve_config(entry: ProtocolEntry, spec: str | None) -> tuple[str, Any]:
    """``(label, config)`` for a named config or a TOML file path."""
    if spec is None:
        spec = "default"
    if spec in entry.configs:
        return spec, entry.configs[spec]
    path = Path(spec)
    if spec.strip() and (spec.endswith(".toml") or path.exists()):  # Path("") is "." and exists: not a file name
        return str(path), load_config_file(entry, path)
    names = ", ".join(entry.configs)
    raise UserError(
        f"unknown config '{spec}' for protocol '{entry.name}': use one of {names} or a .toml file"
    )


def load_config_file(entry: ProtocolEntry, path: Path) -> Any:
    text = read_text_input(path, "config file")
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"malformed config file {path}: {exc}") from None
    return config_from_mapping(entry, raw, origin=str(path))


def config_from_mapping(entry: ProtocolEntry, raw: dict[str, Any], origin: str = "config") -> Any:
    proto = raw.get("protocol")
    if proto is not None and proto != entry.name:
        raise UserError(f"{origin}: the file is for protocol '{proto}', not '{entry.name}'")
    base_name = raw.get("base", "default")
    if base_name not in entry.configs:
        raise UserError(
            f"{origin}: unknown base config '{base_name}'; use one of {', '.join(entry.configs)}"
        )
    table = raw.get("config", raw.get(entry.name, {}))
    if not isinstance(table, dict):
        raise UserError(f"{origin}: [config] must be a table")
    extra = set(raw) - {"protocol", "base", "config", entry.name, "name"}
    if extra:
        raise UserError(
            f"{origin}: unexpected top-level keys {sorted(extra)}; put config fields under [config]"
        )
    return override(entry.configs[base_name], table, origin, entry)


def override(base: Any, table: dict[str, Any], origin: str = "config", entry: ProtocolEntry | None = None) -> Any:
    """``base`` with the fields in ``table`` replaced (types checked), then validated (the profile against
    ``entry``'s profiles when given, else the default ones)."""
    cls = type(base)
    hints = get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    changes: dict[str, Any] = {}
    for key, value in table.items():
        if key not in fields:
            raise UserError(f"{origin}: unknown config key '{key}'; known keys: {', '.join(sorted(fields))}")
        current = getattr(base, key)
        changes[key] = _coerce(hints[key], value, f"{origin}: '{key}'", current)
    config = dataclasses.replace(base, **changes)
    validate(config, origin, entry)
    return config


def validate(config: Any, origin: str = "config", entry: ProtocolEntry | None = None) -> None:
    profile = getattr(config, "profile", None)
    if entry is not None:
        if entry.profile_problem(profile) is not None:
            raise UserError(f"{origin}: profile must be one of {', '.join(entry.profiles)} (the profiles of "
                            f"{entry.name}), not {profile!r}")
    elif profile not in PROFILES:
        raise UserError(f"{origin}: profile must be one of {', '.join(PROFILES)}, not {profile!r}")
    check = getattr(config, "validate", None)
    if check is not None:
        try:
            check()
        except ValueError as exc:
            raise UserError(f"{origin}: {exc}") from None


def _coerce(tp: Any, value: Any, where: str, current: Any = None) -> Any:
    origin = get_origin(tp)
    args = get_args(tp)
    if tp is Any:
        return value
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise UserError(f"{where} must be true or false, not {value!r}")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise UserError(f"{where} must be an integer, not {value!r}")
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise UserError(f"{where} must be a number, not {value!r}")
    if tp is str:
        if isinstance(value, str):
            return value
        raise UserError(f"{where} must be a string, not {value!r}")
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        for m in tp:
            if value in (m.name, m.value) or (isinstance(value, str) and value.upper() == m.name):
                return m
        names = ", ".join(m.name for m in tp)
        raise UserError(f"{where} must be one of {names}, not {value!r}")
    if origin is typing.Literal:
        if value in args:
            return value
        raise UserError(f"{where} must be one of {', '.join(map(repr, args))}, not {value!r}")
    if origin is typing.Union or origin is types.UnionType:
        if value is None and type(None) in args:
            return None
        errors = []
        for alt in args:
            if alt is type(None):
                continue
            try:
                return _coerce(alt, value, where, current)
            except UserError as exc:
                errors.append(str(exc))
        raise UserError(errors[0] if len(errors) == 1 else f"{where}: {value!r} fits none of its types")
    if origin is tuple:
        if not isinstance(value, list):
            raise UserError(f"{where} must be a list, not {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise UserError(f"{where} must have {len(args)} items, not {len(value)}")
        return tuple(_coerce(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value, strict=True)))
    if origin is frozenset:
        if not isinstance(value, list):
            raise UserError(f"{where} must be a list, not {value!r}")
        return frozenset(_coerce(args[0], v, f"{where}[]") for v in value)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            raise UserError(f"{where} must be a table, not {value!r}")
        hints = get_type_hints(tp)
        fields_of = {f.name: f for f in dataclasses.fields(tp)}
        unknown = set(value) - set(fields_of)
        if unknown:
            raise UserError(f"{where}: unknown keys {sorted(unknown)}; known: {', '.join(fields_of)}")
        kwargs = {k: _coerce(hints[k], v, f"{where}.{k}") for k, v in value.items()}
        try:
            if current is not None and isinstance(current, tp):
                return dataclasses.replace(current, **kwargs)
            return tp(**kwargs)
        except TypeError as exc:
            raise UserError(f"{where}: {exc}") from None
        except ValueError as exc:
            raise UserError(f"{where}: {exc}") from None
    raise UserError(f"{where}: the config type {tp!r} cannot be set from a file")
