"""The one comparison loop of the Kafka oracle's engines (the local check, :mod:`rollcheck.oracle.check`, and the
Spark tasks, :mod:`rollcheck.oracle.spark`): a set of states' questions asked once per (release, canonical
request), each answer compared by the binding, the results counted in a :class:`Tally` that merges across
partitions into what one pass gives."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from rollcheck.core.errors import UserError
from rollcheck.core.traces import plain_view
from rollcheck.oracle.binding import OracleBinding, OracleRelease, Question, known_bug

KEEP_PER_KIND = 3  # disagreements kept in full (state, both answers, ITF trace) per kind; all are counted


class Client(Protocol):
    """What the check needs of an oracle client (:class:`rollcheck.oracle.client.OracleClient`'s shape)."""

    def ask(self, release: str, requests: Sequence[Mapping[str, Any]]) -> list[Any]: ...

    def stats(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


def canonical(request: Mapping[str, Any]) -> str:
    """A request's canonical JSON: equal requests are asked once per release."""
    return json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def request_digest(target: str, key: str) -> bytes:
    """16 bytes standing for (release, canonical request): what distinct requests are counted by (a set of these
    costs far less than one of the requests themselves, and Spark tasks ship them back to the driver)."""
    return hashlib.blake2b(f"{target}\0{key}".encode(), digest_size=16).digest()


@dataclass
class Found:
    """One disagreement kept in full: where (level, pos of the level store), what was asked and both answers."""

    kind: str
    action: str
    release: str  # the release whose classes answered
    level: int
    pos: int
    index: int  # the question's place among the state's questions
    state: dict[str, Any]  # the state's view, as plain JSON
    request: Mapping[str, Any]
    expected: Any
    answer: Any
    difference: str
    trace: dict[str, Any] | None = None  # ITF, filled in by the driver once the exploration is done
    known: str | None = None  # the known Kafka bug of the release this disagreement is (KafkaBug.signature)

    @property
    def order(self) -> tuple[int, int, int]:
        return (self.level, self.pos, self.index)

    def to_json(self, with_trace: bool = False) -> dict[str, Any]:
        doc = {"kind": self.kind, "action": str(self.action), "release": self.release, "depth": self.level,
               "state": self.state, "request": dict(self.request), "expected": self.expected, "answer": self.answer,
               "difference": self.difference}
        if self.known is not None:
            doc["known_bug"] = self.known
        if with_trace:
            doc["trace"] = self.trace
        return doc


@dataclass
class Tally:
    """What the comparisons of a set of states add up to; two tallies merge (Spark's partitions) into what one
    pass over all of them gives: counts add, request digests unite, the first ``keep`` per kind in (level, pos,
    question) order stay."""

    keep: int = KEEP_PER_KIND
    decisions: int = 0
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> {"decisions", "disagreements"}
    digests: set[bytes] = field(default_factory=set)
    found: dict[str, list[Found]] = field(default_factory=dict)
    known: dict[str, int] = field(default_factory=dict)  # known bug id -> the disagreements it explains

    def count(self, q: Question, difference: str | None, known: str | None = None) -> bool:
        """Count one compared question (``known``: the known Kafka bug its disagreement is); True when its
        disagreement is to be kept in full."""
        self.decisions += 1
        row = self.kinds.setdefault(q.kind, {"decisions": 0, "disagreements": 0})
        row["decisions"] += 1
        if difference is None:
            return False
        row["disagreements"] += 1
        if known is not None:
            row["known"] = row.get("known", 0) + 1
            self.known[known] = self.known.get(known, 0) + 1
        return len(self.found.get(q.kind, ())) < self.keep

    def add(self, f: Found) -> None:
        self.found.setdefault(f.kind, []).append(f)

    def merge(self, other: Tally) -> None:
        self.decisions += other.decisions
        for kind, row in other.kinds.items():
            mine = self.kinds.setdefault(kind, {"decisions": 0, "disagreements": 0})
            for k, n in row.items():
                mine[k] = mine.get(k, 0) + n
        for bug, n in other.known.items():
            self.known[bug] = self.known.get(bug, 0) + n
        self.digests |= other.digests
        for kind, fs in other.found.items():
            self.found[kind] = sorted([*self.found.get(kind, []), *fs], key=lambda f: f.order)[: self.keep]

    @property
    def disagreements(self) -> int:
        """Every disagreement, the known bugs' included."""
        return sum(row["disagreements"] for row in self.kinds.values())

    @property
    def unexplained(self) -> int:
        """The disagreements no known Kafka bug of the release explains."""
        return self.disagreements - sum(self.known.values())


def ask_states(binding: OracleBinding, system: Any, release: OracleRelease, items: Iterable[tuple[int, int, Any]],
               ask: Callable[[str, list[Mapping[str, Any]]], list[Any]], tally: Tally) -> None:
    """The questions of every (level, pos, state) in ``items``, asked once per (release, canonical request) with one
    ``ask`` per answering release, compared and counted into ``tally``: the one comparison loop of both engines."""
    asked: list[tuple[int, int, Any, int, Question, str, str]] = []
    pending: dict[str, dict[str, Mapping[str, Any]]] = {}  # target release -> canonical -> request
    # A binding may hand the same Question object to many states (a memo of what they share): its canonical
    # request is computed, and its answer compared, once per call. ``asked`` keeps every such object alive, so
    # its id stands for it throughout.
    keys: dict[int, str] = {}
    for level, pos, state in items:
        for i, q in enumerate(binding.questions(system, state, release)):
            target = q.release or release.name
            key = keys.get(id(q))
            if key is None:
                key = keys[id(q)] = canonical(q.request)
            pending.setdefault(target, {}).setdefault(key, q.request)
            asked.append((level, pos, state, i, q, target, key))
    answers: dict[tuple[str, str], Any] = {}
    for target, requests in pending.items():
        order = list(requests)
        got = ask(target, [requests[k] for k in order])
        if len(got) != len(order):
            raise UserError(f"Kafka oracle {target} gave {len(got)} answers to {len(order)} requests")
        answers.update(((target, k), a) for k, a in zip(order, got, strict=True))
        tally.digests.update(request_digest(target, k) for k in order)
    differences: dict[tuple[int, str], tuple[str | None, str | None]] = {}
    for level, pos, state, i, q, target, key in asked:
        answer = answers[(target, key)]
        memo = (id(q), target)
        if memo in differences:
            difference, known = differences[memo]
        else:
            difference = binding.compare(q, answer)
            # A known bug is the row release's: its buggy classes answer the question (whichever JVM it was).
            known = None if difference is None else known_bug(binding.bugs, release.name, q.kind, q.request,
                                                                  q.expected, answer)
            differences[memo] = (difference, known)
        if tally.count(q, difference, known):
            assert difference is not None
            tally.add(Found(q.kind, q.action, target, level, pos, i, plain_view(system.view(state)), q.request,
                            q.expected, answer, difference, known=known))


def first_difference(expected: Any, answer: Any) -> str:
    """One line for a binding's ``compare``: the first place Kafka's answer and the reference's part (Kafka threw
    where the reference did not; a class or method the release lacks, ``{"missing": ...}``; the first key whose
    values differ; else both whole)."""
    if isinstance(answer, Mapping) and "exception" in answer and not (
            isinstance(expected, Mapping) and "exception" in expected):
        return f"Kafka threw {answer.get('exception')}: {answer.get('message')}; the reference answers {expected}"
    if isinstance(answer, Mapping) and "missing" in answer and not (
            isinstance(expected, Mapping) and "missing" in expected):
        return f"Kafka {answer.get('missing')} missing at the release; the reference answers {expected}"
    if isinstance(expected, Mapping) and isinstance(answer, Mapping):
        for key in sorted(set(expected) | set(answer)):
            if expected.get(key) != answer.get(key):
                return f"{key}: reference {expected.get(key)!r}, Kafka {answer.get(key)!r}"
    return f"reference {expected!r}, Kafka {answer!r}"


def initial_states(system: Any) -> tuple[Any, ...]:
    """A system's initial states, computed once per system (a pure function of its config) and kept in its
    ``__dict__`` under a ``_memo_oracle_`` name, which ``core/system.py`` drops on pickling."""
    cached = system.__dict__.get("_memo_oracle_initial")
    if cached is None:
        cached = system.__dict__["_memo_oracle_initial"] = tuple(system.initial_states())
    return tuple(cached)
