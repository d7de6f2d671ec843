"""A convenience base for protocols whose state is a frozen dataclass.

It supplies ``encode`` / ``decode`` (the canonical codec of :mod:`rollcheck.core.codec`) and a default
``view`` (the state's fields, which ITF renders as a record). Protocols override ``view`` when their
TLA+ spec names or shapes variables differently.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar, TypeVar

from rollcheck.core.codec import StateCodec
from rollcheck.core.transition import Action, AnyProperty

T = TypeVar("T")

# Action labels are immutable and few: one shared Action per distinct call (typed: True and 1 stay apart).
shared_label = lru_cache(maxsize=None, typed=True)(Action.of)


def fast_replace(obj: T, **changes: Any) -> T:
    """``dataclasses.replace`` for plain frozen dataclasses (no ``__post_init__``, no ``init=False`` or
    slotted fields), by copying the instance dict: the same value, several times cheaper."""
    new = object.__new__(obj.__class__)
    d = new.__dict__
    d.update(obj.__dict__)
    d.update(changes)
    return new


class DataclassSystem:
    """Subclasses set ``name`` and ``state_type`` and implement the three protocol methods."""

    name: ClassVar[str] = ""
    state_type: ClassVar[type]
    variant_id: str | None = None  # set on a broken variant's system (Variant.system)

    def __init__(self, config: Any) -> None:
        self.config = config
        self._codec: StateCodec | None = None

    # Codecs hold closures: rebuild them after unpickling (Spark ships systems to executors).
    def __getstate__(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["_codec"] = None
        d.pop("_symmetry_key", None)  # a closure too: rebuilt on first use
        for key in [k for k in d if k.startswith("_memo_")]:  # memos (by convention "_memo_..."): rebuilt on use
            del d[key]
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)

    @property
    def codec(self) -> StateCodec:
        if self._codec is None:
            self._codec = StateCodec(self.state_type)
        return self._codec

    def initial_states(self) -> Iterable[Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def successors(self, s: Any) -> Iterable[tuple[Action, Any]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def properties(self) -> Sequence[AnyProperty]:  # pragma: no cover - abstract
        raise NotImplementedError

    def cached_symmetry_key(self, factory: Callable[[Any], Callable[[Any], object]], s: Any) -> object:
        """``factory(config)(s)``, the key function built once per system (for ``symmetry_key``)."""
        key = self.__dict__.get("_symmetry_key")
        if key is None:
            key = self.__dict__["_symmetry_key"] = factory(self.config)
        return key(s)

    def encode(self, s: Any) -> bytes:
        return self.codec.encode(s)

    def decode(self, b: bytes) -> Any:
        return self.codec.decode(b)

    def view(self, s: Any) -> Mapping[str, object]:
        return {f.name: getattr(s, f.name) for f in dataclasses.fields(s)}
