"""64-bit state fingerprints and the compact visited set the explorer keeps them in.

A state's fingerprint is Python's own structural hash of it (``hash(state)``, 64 bits on every platform
this project supports), with 0 reserved for an empty slot; with symmetry, the hash of its orbit key
(:func:`fingerprinter`). Both engines, the trace replay and a resume's checks fingerprint through
:func:`fingerprinter`, so they cannot disagree on a state. It was measured against a fingerprint of the
canonical codec's bytes (BLAKE2b over ``encode(state)``) on every named config: the same distinct counts,
at 2.4 us a state against 12 us for encoding alone (``features:default``, where a state has 8 successors
on average, so encoding every successor would cost more than expanding it).

``hash`` of a string or an enum depends on ``PYTHONHASHSEED``, and on Python 3.11 ``hash(None)`` on
None's address. Within one run every process agrees (the workers are forked); across processes
(``--resume``, Spark executors) the ``rollcheck`` command fixes both (:mod:`rollcheck.core.hashenv`), and a
checkpoint records :func:`hash_probe` (Spark executors report theirs) so that a process that hashes
otherwise is refused instead of silently merging unrelated states.

:class:`FingerprintSet` is an open-addressing table of ``uint64`` in NumPy (linear probing, grown at
60% load): 8 bytes a slot, 13-27 bytes a distinct state. Look-ups and inserts are vectorized over a batch,
so the per-state cost in Python is one ``hash`` call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import numpy as np

MASK64 = (1 << 64) - 1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: spreads structured hashes over the slots
_MAX_LOAD = 0.6


def fingerprint(state: Any) -> int:
    """A non-zero 64-bit fingerprint of a hashable state (equal states, equal fingerprints)."""
    return (hash(state) & MASK64) or 1


def fingerprinter(key: Callable[[Any], Hashable] | None = None) -> Callable[[Any], int]:
    """The fingerprint function of an exploration: of the state itself, or (symmetry) of ``key(state)``,
    which the states of one orbit share. Without a key it is :func:`fingerprint` itself (the
    expansion's inner loop calls it once a transition: no wrapper)."""
    if key is None:
        return fingerprint
    return lambda state: fingerprint(key(state))


def hash_probe() -> int:
    """A value that changes with whatever makes two processes hash equal states differently: the string
    hash seed, and None's address on Python 3.11 (see :mod:`rollcheck.core.hashenv`). Checkpoints record it and
    Spark executors report it (see module doc)."""
    return fingerprint(("rollcheck-fingerprint-probe", 1, frozenset({"a", "b"}), None))


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's "calculated (optimistic)" fingerprint-collision probability: every look-up of an already
    seen state (``generated - distinct`` of them) could have hit one of ``distinct`` fingerprints."""
    seen_again = max(generated - distinct, 0)
    return distinct * seen_again / 2.0**64


class FingerprintSet:
    """A set of non-zero 64-bit fingerprints in one NumPy array (see the module doc)."""

    def __init__(self, capacity: int = 1 << 12) -> None:
        bits = max(8, math.ceil(math.log2(max(capacity, 1) / _MAX_LOAD)))
        self._bits = bits
        self._slots = np.zeros(1 << bits, dtype=np.uint64)
        self._count = 0

    def __len__(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        return int(self._slots.nbytes)

    def _home(self, fps: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return ((fps * _GOLDEN) >> np.uint64(64 - self._bits)).astype(np.int64)

    def contains(self, fps: np.ndarray) -> np.ndarray:
        """A boolean array: which of ``fps`` (uint64) are in the set."""
        fps = np.asarray(fps, dtype=np.uint64)
        found = np.zeros(fps.shape[0], dtype=bool)
        pending = np.arange(fps.shape[0])
        idx = self._home(fps)
        mask = (1 << self._bits) - 1
        while pending.size:
            here = self._slots[idx]
            want = fps[pending]
            hit = here == want
            found[pending[hit]] = True
            go_on = (here != 0) & ~hit
            pending = pending[go_on]
            idx = (idx[go_on] + 1) & mask
        return found

    def add_new(self, fps: np.ndarray) -> None:
        """Insert fingerprints that are pairwise distinct and not in the set yet (the caller knows)."""
        fps = np.asarray(fps, dtype=np.uint64)
        if not fps.size:
            return
        self._reserve(self._count + fps.shape[0])
        self._place(fps)
        self._count += int(fps.shape[0])

    def add(self, fps: Iterable[int]) -> np.ndarray:
        """Insert any fingerprints; returns the mask of those that were new (first occurrences only)."""
        arr = np.fromiter(fps, dtype=np.uint64)
        _, first = np.unique(arr, return_index=True)
        fresh = np.zeros(arr.shape[0], dtype=bool)
        fresh[first] = True
        fresh &= ~self.contains(arr)
        self.add_new(arr[fresh])
        return fresh

    def values(self) -> np.ndarray:
        kept: np.ndarray = self._slots[self._slots != 0]
        return kept

    def _reserve(self, count: int) -> None:
        if count <= _MAX_LOAD * (1 << self._bits):
            return
        old = self.values()
        while count > _MAX_LOAD * (1 << self._bits):
            self._bits += 1
        self._slots = np.zeros(1 << self._bits, dtype=np.uint64)
        self._place(old)

    def _place(self, fps: np.ndarray) -> None:
        mask = (1 << self._bits) - 1
        pending = np.arange(fps.shape[0])
        idx = self._home(fps)
        while pending.size:
            empty = np.flatnonzero(self._slots[idx] == 0)
            placed = np.zeros(pending.size, dtype=bool)
            if empty.size:
                # Several pending fingerprints may want one empty slot: the first of each wins it.
                _, first = np.unique(idx[empty], return_index=True)
                winners = empty[first]
                self._slots[idx[winners]] = fps[pending[winners]]
                placed[winners] = True
            rest = ~placed
            pending = pending[rest]
            idx = (idx[rest] + 1) & mask
