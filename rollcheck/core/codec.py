"""Canonical, compact byte encoding of protocol states, derived from their type hints.

Why not pickle: pickling a ``frozenset`` writes its elements in hash order, and string hashes differ
between processes (``PYTHONHASHSEED``), so two Spark workers would give different bytes for one state.
Here every value is written positionally from its declared type, and the members of a ``frozenset`` are
sorted by their own encoding, so equal states give equal bytes in any process.

Supported types: ``bool``, ``int`` (zig-zag varint), ``str``, ``bytes``, ``None``, ``enum.Enum``
subclasses, frozen dataclasses, ``tuple[X, ...]``, fixed ``tuple[X, Y]``, ``frozenset[X]``, ``X | None``
and ``Literal[...]`` of such scalars.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable
from typing import Any, get_args, get_origin, get_type_hints

Encoder = Callable[[Any, bytearray], None]
Decoder = Callable[[memoryview, int], tuple[Any, int]]


class CodecError(ValueError):
    """Bytes that are not a valid encoding, or a type the codec cannot handle."""


def _write_varint(n: int, out: bytearray) -> None:
    z = (n << 1) ^ (n >> 63) if -(1 << 63) <= n < (1 << 63) else None
    if z is None:
        raise CodecError(f"integer out of range: {n}")
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return


def _read_varint(buf: memoryview, pos: int) -> tuple[int, int]:
    shift = 0
    z = 0
    while True:
        if pos >= len(buf):
            raise CodecError("truncated varint")
        b = buf[pos]
        pos += 1
        z |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift > 70:
            raise CodecError("varint too long")
    return (z >> 1) ^ -(z & 1), pos


def _enc_int(v: Any, out: bytearray) -> None:
    _write_varint(int(v), out)


def _dec_int(buf: memoryview, pos: int) -> tuple[Any, int]:
    return _read_varint(buf, pos)


def _enc_bool(v: Any, out: bytearray) -> None:
    out.append(1 if v else 0)


def _dec_bool(buf: memoryview, pos: int) -> tuple[Any, int]:
    if pos >= len(buf):
        raise CodecError("truncated bool")
    return buf[pos] == 1, pos + 1


def _enc_str(v: Any, out: bytearray) -> None:
    raw = v.encode("utf-8")
    _write_varint(len(raw), out)
    out += raw


def _dec_str(buf: memoryview, pos: int) -> tuple[Any, int]:
    n, pos = _read_varint(buf, pos)
    if n < 0 or pos + n > len(buf):
        raise CodecError("truncated string")
    return bytes(buf[pos : pos + n]).decode("utf-8"), pos + n


def _enc_bytes(v: Any, out: bytearray) -> None:
    _write_varint(len(v), out)
    out += v


def _dec_bytes(buf: memoryview, pos: int) -> tuple[Any, int]:
    n, pos = _read_varint(buf, pos)
    if n < 0 or pos + n > len(buf):
        raise CodecError("truncated bytes")
    return bytes(buf[pos : pos + n]), pos + n


def _enc_none(v: Any, out: bytearray) -> None:
    return None


def _dec_none(buf: memoryview, pos: int) -> tuple[Any, int]:
    return None, pos


class _Compiler:
    def __init__(self) -> None:
        self._cache: dict[Any, tuple[Encoder, Decoder]] = {}

    def compile(self, tp: Any) -> tuple[Encoder, Decoder]:
        try:
            hit = self._cache.get(tp)
        except TypeError:  # unhashable annotation
            hit = None
        if hit is not None:
            return hit
        # A forward placeholder lets recursive dataclasses refer to themselves.
        slot: list[tuple[Encoder, Decoder]] = []

        def enc_fwd(v: Any, out: bytearray) -> None:
            slot[0][0](v, out)

        def dec_fwd(buf: memoryview, pos: int) -> tuple[Any, int]:
            return slot[0][1](buf, pos)

        try:
            self._cache[tp] = (enc_fwd, dec_fwd)
        except TypeError:
            pass
        result = self._build(tp)
        slot.append(result)
        try:
            self._cache[tp] = result
        except TypeError:
            pass
        return result

    def _build(self, tp: Any) -> tuple[Encoder, Decoder]:
        if tp is bool:
            return _enc_bool, _dec_bool
        if tp is int:
            return _enc_int, _dec_int
        if tp is str:
            return _enc_str, _dec_str
        if tp is bytes:
            return _enc_bytes, _dec_bytes
        if tp is type(None) or tp is None:
            return _enc_none, _dec_none
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self._enum(tp)
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            return self._dataclass(tp)
        origin = get_origin(tp)
        args = get_args(tp)
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return self._seq(args[0])
            if args == ((),) or not args:
                return self._fixed(())
            return self._fixed(args)
        if origin is frozenset:
            return self._set(args[0])
        if origin is typing.Union or origin is types.UnionType:
            return self._union(args)
        if origin is typing.Literal:
            return self._literal(args)
        raise CodecError(f"the codec cannot encode values of type {tp!r}")

    def _enum(self, tp: type[enum.Enum]) -> tuple[Encoder, Decoder]:
        members = list(tp)
        pos_of = {m: i for i, m in enumerate(members)}

        def enc(v: Any, out: bytearray) -> None:
            _write_varint(pos_of[v], out)

        def dec(buf: memoryview, pos: int) -> tuple[Any, int]:
            i, pos = _read_varint(buf, pos)
            if not 0 <= i < len(members):
                raise CodecError(f"bad {tp.__name__} index {i}")
            return members[i], pos

        return enc, dec

    def _literal(self, values: tuple[Any, ...]) -> tuple[Encoder, Decoder]:
        pos_of = {v: i for i, v in enumerate(values)}

        def enc(v: Any, out: bytearray) -> None:
            _write_varint(pos_of[v], out)

        def dec(buf: memoryview, pos: int) -> tuple[Any, int]:
            i, pos = _read_varint(buf, pos)
            if not 0 <= i < len(values):
                raise CodecError(f"bad literal index {i}")
            return values[i], pos

        return enc, dec

    def _dataclass(self, tp: type) -> tuple[Encoder, Decoder]:
        hints = get_type_hints(tp)
        names = [f.name for f in dataclasses.fields(tp) if f.init]
        parts = [self.compile(hints[n]) for n in names]
        encs = [p[0] for p in parts]
        decs = [p[1] for p in parts]
        pairs = list(zip(names, encs, strict=True))

        def enc(v: Any, out: bytearray) -> None:
            for name, e in pairs:
                e(getattr(v, name), out)

        def dec(buf: memoryview, pos: int) -> tuple[Any, int]:
            vals = []
            for d in decs:
                x, pos = d(buf, pos)
                vals.append(x)
            return tp(*vals), pos

        return enc, dec

    def _seq(self, item: Any) -> tuple[Encoder, Decoder]:
        e, d = self.compile(item)

        def enc(v: Any, out: bytearray) -> None:
            _write_varint(len(v), out)
            for x in v:
                e(x, out)

        def dec(buf: memoryview, pos: int) -> tuple[Any, int]:
            n, pos = _read_varint(buf, pos)
            if n < 0 or n > len(buf):
                raise CodecError("bad sequence length")
            vals = []
            for _ in range(n):
                x, pos = d(buf, pos)
                vals.append(x)
            return tuple(vals), pos

        return enc, dec

    def _fixed(self, items: tuple[Any, ...]) -> tuple[Encoder, Decoder]:
        parts = [self.compile(t) for t in items]

        def enc(v: Any, out: bytearray) -> None:
            if len(v) != len(parts):
                raise CodecError(f"expected a {len(parts)}-tuple, got {v!r}")
            for (e, _), x in zip(parts, v, strict=True):
                e(x, out)

        def dec(buf: memoryview, pos: int) -> tuple[Any, int]:
            vals = []
            for _, d in parts:
                x, pos = d(buf, pos)
                vals.append(x)
            return tuple(vals), pos

        return enc, dec

    def _set(self, item: Any) -> tuple[Encoder, Decoder]:
        e, d = self.compile(item)

        def enc(v: Any, out: bytearray) -> None:
            chunks = []
            for x in v:
                b = bytearray()
                e(x, b)
                chunks.append(bytes(b))
            chunks.sort()
            _write_varint(len(chunks), out)
            for c in chunks:
                out += c

        def dec(buf: memoryview, pos: int) -> tuple[Any, int]:
            n, pos = _read_varint(buf, pos)
            if n < 0 or n > len(buf):
                raise CodecError("bad set size")
            vals = []
            for _ in range(n):
                x, pos = d(buf, pos)
                vals.append(x)
            return frozenset(vals), pos

        return enc, dec

    def _union(self, args: tuple[Any, ...]) -> tuple[Encoder, Decoder]:
        alts = [(a, self.compile(a)) for a in args]

        def pick(v: Any) -> int:
            for i, (a, _) in enumerate(alts):
                if a is type(None):
                    if v is None:
                        return i
                    continue
                check = get_origin(a) or a
                if check is typing.Literal:
                    if v in get_args(a):
                        return i
                    continue
                if isinstance(check, type) and isinstance(v, check):
                    # bool is an int: prefer the exact type when both are offered
                    if check is int and isinstance(v, bool) and any(x is bool for x, _ in alts):
                        continue
                    return i
            raise CodecError(f"value {v!r} fits no alternative of {args!r}")

        def enc(v: Any, out: bytearray) -> None:
            i = pick(v)
            out.append(i)
            alts[i][1][0](v, out)

        def dec(buf: memoryview, pos: int) -> tuple[Any, int]:
            if pos >= len(buf):
                raise CodecError("truncated union tag")
            i = buf[pos]
            if i >= len(alts):
                raise CodecError(f"bad union tag {i}")
            return alts[i][1][1](buf, pos + 1)

        return enc, dec


class StateCodec:
    """Encoder / decoder for one root state type."""

    def __init__(self, state_type: Any) -> None:
        self.state_type = state_type
        self._enc, self._dec = _Compiler().compile(state_type)

    def encode(self, state: Any) -> bytes:
        out = bytearray()
        self._enc(state, out)
        return bytes(out)

    def decode(self, data: bytes) -> Any:
        buf = memoryview(data)
        try:
            value, pos = self._dec(buf, 0)
        except (IndexError, UnicodeDecodeError) as exc:
            raise CodecError(f"malformed state bytes: {exc}") from exc
        if pos != len(buf):
            raise CodecError(f"{len(buf) - pos} trailing bytes after a state")
        return value
