"""TLA+ values as TLC prints them, read into the ITF JSON form that rollcheck compares views in.

TLC writes states as ``/\\ var = value`` conjuncts, with values built from integers, strings,
``TRUE`` / ``FALSE``, sequences ``<<a, b>>``, sets ``{a, b}``, records ``[f |-> v]``, functions
``(k :> v @@ ...)`` and model values (bare identifiers). :func:`parse_value` reads one value,
:func:`parse_state` one state, and :func:`tla_canonical` maps a value to the one canonical form in which
two TLA+ values are equal exactly when the canonical forms are: TLA+ identifies a record with a function
on strings, a sequence with a function on ``1..n`` and the empty function with ``<<>>``, and the
canonical form does too (TLC prints a function on ``1..n`` as a sequence; Python views may hold either).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import re
from collections.abc import Mapping
from typing import Any

from rollcheck.core.traces import Record, canonical_itf, canonical_json, to_itf


class TlaSyntaxError(ValueError):
    """Text that is not a TLA+ value as TLC prints it."""


_TOKEN = re.compile(r"""
    \s*(?:
      (?P<str>"(?:[^"\\]|\\.)*")
    | (?P<int>-?\d+)
    | (?P<sym><<|>>|\|->|:>|@@|\.\.|[\[\]{}(),])
    | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
    )""", re.VERBOSE)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise TlaSyntaxError(f"unexpected text at {pos}: {text[pos:pos + 30]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.text = text

    def peek(self) -> str:
        return self.toks[self.i][1] if self.i < len(self.toks) else ""

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise TlaSyntaxError(f"unexpected end of value: {self.text[:80]!r}")
        tok = self.toks[self.i]
        if expected is not None and tok[1] != expected:
            raise TlaSyntaxError(f"expected {expected!r}, found {tok[1]!r} in {self.text[:80]!r}")
        self.i += 1
        return tok

    def value(self) -> Any:
        kind, tok = self.take()
        if kind == "int":
            return {"#bigint": tok}
        if kind == "str":
            return json.loads(tok)
        if kind == "id":
            if tok == "TRUE":
                return True
            if tok == "FALSE":
                return False
            return {"#modelvalue": tok}
        if tok == "<<":
            items = self._list(">>")
            return {"#tup": items}
        if tok == "{":
            return {"#set": self._list("}")}
        if tok == "[":
            fields: dict[str, Any] = {}
            if self.peek() == "]":
                self.take("]")
                return {"#tup": []}
            while True:
                _, name = self.take()
                self.take("|->")
                fields[name] = self.value()
                if self.peek() == ",":
                    self.take(",")
                    continue
                self.take("]")
                return fields
        if tok == "(":
            pairs: list[list[Any]] = []
            while True:
                k = self.value()
                self.take(":>")
                pairs.append([k, self.value()])
                if self.peek() == "@@":
                    self.take("@@")
                    continue
                self.take(")")
                return {"#map": pairs}
        raise TlaSyntaxError(f"unexpected {tok!r} in {self.text[:80]!r}")

    def _list(self, close: str) -> list[Any]:
        items: list[Any] = []
        if self.peek() == close:
            self.take(close)
            return items
        while True:
            items.append(self.value())
            if self.peek() == ",":
                self.take(",")
                continue
            self.take(close)
            return items


def parse_value(text: str) -> Any:
    """One TLA+ value in TLC's notation, as ITF JSON (``#tup``, ``#set``, ``#map``, records, ``#bigint``)."""
    p = _Parser(text)
    v = p.value()
    if p.i != len(p.toks):
        raise TlaSyntaxError(f"trailing text after value: {text[:80]!r}")
    return v


_CONJUNCT = re.compile(r"^/\\ ([A-Za-z_][A-Za-z0-9_]*) = ", re.MULTILINE)


def parse_state(text: str) -> dict[str, Any]:
    """A TLC state (``/\\ x = 1`` conjuncts, values possibly spanning lines) as variable -> ITF value."""
    text = text.strip()
    if not text:
        return {}
    marks = list(_CONJUNCT.finditer(text))
    if not marks and re.match(r"^[A-Za-z_][A-Za-z0-9_]* = ", text):
        name, rest = text.split(" = ", 1)  # a state with one variable has no /\
        return {name: parse_value(rest)}
    if not marks or marks[0].start() != 0:
        raise TlaSyntaxError(f"not a TLC state: {text[:80]!r}")
    out: dict[str, Any] = {}
    for m, nxt in zip(marks, [*marks[1:], None], strict=True):
        end = nxt.start() if nxt is not None else len(text)
        out[m.group(1)] = parse_value(text[m.end():end])
    return out


# --------------------------------------------------------------------------- canonical form


def _normal(v: Any) -> Any:
    """TLA+ identifications on canonical ITF: functions on 1..n and records are the same values as
    sequences and functions on strings; the empty record / function is ``<<>>``."""
    if isinstance(v, list):
        return [_normal(x) for x in v]
    if isinstance(v, dict):
        if "#bigint" in v or "#modelvalue" in v:
            return v
        if "#set" in v:
            return {"#set": sorted((_normal(x) for x in v["#set"]), key=canonical_json)}
        if "#map" in v:
            pairs = [[_normal(k), _normal(x)] for k, x in v["#map"]]
            if not pairs:
                return []
            keys = [k for k, _ in pairs]
            if all(isinstance(k, str) for k in keys):
                return {k: x for k, x in sorted(pairs, key=lambda kv: kv[0])}
            if all(isinstance(k, dict) and "#bigint" in k for k in keys):
                ints = sorted(int(k["#bigint"]) for k in keys)
                if ints == list(range(1, len(ints) + 1)):
                    return [x for _, x in sorted(pairs, key=lambda kv: int(kv[0]["#bigint"]))]
            pairs.sort(key=lambda kv: canonical_json(kv[0]))
            return {"#map": pairs}
        if not v:
            return []
        return {k: _normal(x) for k, x in sorted(v.items())}
    return v


def tla_canonical(value: Any) -> Any:
    """The canonical form of an ITF JSON value (ours, TLC's, Apalache's). A model value stays the one-key
    object ``{"#modelvalue": name}``."""
    return _normal(canonical_itf(value))


def canonical_state(values: Mapping[str, Any]) -> str:
    """Canonical JSON text of one state's variables given as ITF values (``#meta`` ignored)."""
    return canonical_json(tla_canonical({k: v for k, v in values.items() if k != "#meta"}))


def canonical_view_tla(view: Mapping[str, object]) -> str:
    """Canonical JSON text of a reference view, comparable with :func:`canonical_state` of TLC's states."""
    return canonical_json(tla_canonical({k: to_itf(v) for k, v in view.items()}))


def to_tla(value: Any) -> str:
    """A Python constant (int, bool, str, tuple, set, dict) in TLA+ notation, for generated modules."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, enum.Enum):
        return json.dumps(value.name)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if value is None:
        return '[tag |-> "None", value |-> <<>>]'  # the ITF form of None (see rollcheck.core.traces.to_itf)
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(to_tla(v) for v in value)) + "}"
    if isinstance(value, (tuple, list)):
        return "<<" + ", ".join(to_tla(v) for v in value) + ">>"
    if isinstance(value, Record) and value:
        return "[" + ", ".join(f"{k} |-> {to_tla(v)}" for k, v in value.items()) + "]"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = (f"{f.name} |-> {to_tla(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return "[" + ", ".join(fields) + "]"
    if isinstance(value, Mapping):
        if not value:
            return "<<>>"
        return "(" + " @@ ".join(f"{to_tla(k)} :> {to_tla(v)}" for k, v in value.items()) + ")"
    raise TypeError(f"no TLA+ form for {type(value).__name__}: {value!r}")
