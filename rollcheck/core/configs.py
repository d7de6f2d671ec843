"""Named configs and TOML config files.

``--config NAME`` picks one of a protocol's named configs (``small``, ``default``, ``large``);
``--config FILE.toml`` reads a file that starts from a named config and overrides fields::

    protocol = "features"      # optional; must match the protocol being run
    base = "small"             # optional; the named config to start from (default: "default")

    [config]                   # or [features]: a table named after the protocol
    profile = "kafka"
    brokers = 3

Every value is checked against the config dataclass's type hints; unknown keys, wrong types and
values the protocol's ``validate()`` rejects give one clear :class:`UserError`. A file never sets
``mutations``: those switch on a broken variant's bug, which ``--variant ID`` checks under its own name.

:func:`config_from_repr` rebuilds a config from a trace's ``#meta config_repr`` without running it (the
text is parsed, never evaluated), and :func:`config_table` is a config as plain data, so an exported
regression test carries its config without copying any file.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

from rollcheck.core.errors import UserError
from rollcheck.core.registry import variant_ids_for
from rollcheck.core.transition import PROFILES, ProtocolEntry
from rollcheck.runtime.userinput import read_text_input

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
    if table.get("mutations"):
        # The reference with a bug switched on would be reported as the reference (its traces, the gate's
        # summary name the config file only): a broken variant is checked under its own name.
        names = table["mutations"] if isinstance(table["mutations"], list) else [table["mutations"]]
        named = [str(n) for n in names]
        variants = variant_ids_for(entry, named)
        use = f"--variant {' or '.join(variants)}" if variants else "--variant ID (a broken variant; rollcheck list)"
        raise UserError(f"{origin}: 'mutations' ({', '.join(named)}) switches on a broken variant's bug; a config "
                        f"file describes the cluster, not the bug: drop it and use {use}")
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


# --------------------------------------------------------------------------- configs as data

_REPR_CHARS = 200_000  # far above any config's repr; a longer text is not one rollcheck wrote


def config_table(config: Any) -> dict[str, Any]:
    """Every field of ``config`` as plain data (JSON, or a TOML ``[config]`` table): tuples and sets as
    lists, nested dataclasses as tables, enums by name. ``override(base, config_table(c))`` is ``c``."""
    return {f.name: _plain(getattr(config, f.name)) for f in dataclasses.fields(config)}


def _plain(v: Any) -> Any:
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return config_table(v)
    if isinstance(v, enum.Enum):
        return v.name
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted((_plain(x) for x in v), key=repr)
    return v


def config_from_fields(entry: ProtocolEntry, fields: Any, origin: str) -> Any:
    """A config from :func:`config_table`'s data (every field checked as a config file's would be)."""
    if not isinstance(fields, dict):
        raise UserError(f"{origin}: the embedded config is not a table of fields")
    return override(next(iter(entry.configs.values())), fields, origin, entry)


def config_from_repr(entry: ProtocolEntry, text: object, origin: str) -> Any:
    """The config whose ``repr`` is ``text`` (a trace's ``#meta config_repr``), rebuilt without running any
    of it: the text is parsed, and only the config's own dataclasses (called with keywords), literals,
    tuples, lists and ``frozenset`` are accepted; each field is then checked as a config file's, and the
    config rebuilt must print as ``text`` exactly."""
    if not isinstance(text, str) or not text or len(text) > _REPR_CHARS:
        raise UserError(f"{origin}: the trace records no config (config_repr) to rebuild it from")
    cls = entry.config_type
    try:
        node = ast.parse(text, mode="eval").body
        table = _literal(node, _dataclass_names(cls), cls.__name__)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise UserError(f"{origin}: the trace's config_repr is not a {cls.__name__} rollcheck wrote "
                        f"({exc})") from None
    if not isinstance(table, dict):
        raise UserError(f"{origin}: the trace's config_repr is not a {cls.__name__}")
    config = override(next(iter(entry.configs.values())), table, origin, entry)
    if repr(config) != text:
        raise UserError(f"{origin}: the trace's config_repr does not rebuild to the same {cls.__name__} (a field "
                        "this version does not know, or of another form)")
    return config


def _dataclass_names(cls: type) -> set[str]:
    """The names of ``cls`` and of every dataclass its fields' types mention."""
    names: set[str] = set()
    todo: list[Any] = [cls]
    while todo:
        tp = todo.pop()
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            if tp.__name__ in names:
                continue
            names.add(tp.__name__)
            todo.extend(get_type_hints(tp).values())
        else:
            todo.extend(get_args(tp))
    return names


def _literal(node: ast.expr, dataclasses_: set[str], top: str | None = None) -> Any:
    """A config's repr as TOML-shaped data (dataclass calls as tables, tuples and sets as lists); anything
    else (a name, an attribute, an operator, another call) is refused."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool)):
        return -node.operand.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [_literal(x, dataclasses_) for x in node.elts]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = node.func.id
        if name == "frozenset" and not node.keywords and len(node.args) <= 1:
            return _literal(node.args[0], dataclasses_) if node.args else []
        if name in dataclasses_ and (top is None or name == top) and not node.args:
            out: dict[str, Any] = {}
            for kw in node.keywords:
                if kw.arg is None:
                    raise ValueError("a ** argument")
                out[kw.arg] = _literal(kw.value, dataclasses_)
            return out
        raise ValueError(f"a call of {name}")
    raise ValueError(f"a {type(node).__name__} expression")
