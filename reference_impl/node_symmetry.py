"""Shared machinery of the protocols' symmetry reduction (``symmetry_key``, issue #17 item 5).

A protocol declares *groups* of interchangeable node indices (brokers on the same binary, KRaft voters,
Streams instances). A permutation ``p`` (``p[old] = new``) may only move an index within its group. The
canonical form of a state sorts each group's nodes by a *signature*: the node's own data plus every
reference to it from elsewhere in the state (leader, controller, queue positions). Two nodes with equal
signatures are then identical in every respect, so the order among them does not matter and the sorted
state is the same for every state of an orbit.

Whatever the signatures, the canonical form is ``p(s)`` for some allowed ``p``: equal keys always mean
one orbit (a signature that missed a difference could only merge fewer states, never wrong ones).
Signatures are built from strings, ints, bools and tuples only (never ``hash``), so the canonical form
is the same in every process.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Groups = tuple[tuple[int, ...], ...]
Perm = tuple[int, ...]


def nontrivial(groups: Sequence[Sequence[int]]) -> Groups:
    """The groups with at least two members (singletons permute nothing)."""
    return tuple(tuple(g) for g in groups if len(g) >= 2)


def canonical_perm(n: int, groups: Groups, sig: Callable[[int], Any]) -> Perm | None:
    """The permutation that sorts every group by ``sig`` (stable), or None when it is the identity."""
    p: list[int] | None = None
    for g in groups:
        if len(g) == 2:  # the common case, without a sort
            a, b = g
            if sig(b) < sig(a):
                if p is None:
                    p = list(range(n))
                p[a], p[b] = b, a
            continue
        keys = [sig(i) for i in g]
        order = sorted(range(len(g)), key=keys.__getitem__)
        if order != list(range(len(g))):
            if p is None:
                p = list(range(n))
            for k, o in enumerate(order):
                p[g[o]] = g[k]
    return None if p is None else tuple(p)


def move(items: tuple[T, ...], p: Perm) -> tuple[T, ...]:
    """``items`` with item ``i`` put at position ``p[i]``."""
    out: list[T] = list(items)
    for i, x in enumerate(items):
        out[p[i]] = x
    return tuple(out)


def rename(i: int, p: Perm) -> int:
    """A node index under ``p``; negative indices mean "none" and stay as they are."""
    return p[i] if i >= 0 else i


def group_permutations(n: int, groups: Groups) -> Iterator[Perm]:
    """Every permutation of ``range(n)`` that moves indices only within their group (identity included).
    For the tests and the docs: the explorer never enumerates the group."""
    per_group = [list(itertools.permutations(g)) for g in groups]
    for choice in itertools.product(*per_group):
        p = list(range(n))
        for g, image in zip(groups, choice, strict=True):
            for i, j in zip(g, image, strict=True):
                p[i] = j
        yield tuple(p)
