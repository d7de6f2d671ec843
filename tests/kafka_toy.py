"""A toy Kafka oracle binding on tests/toy.py's counters, and a fake oracle client answering in Python, for the
tests of the check driver, the CLI, the Spark engine and the gate checker (no Java needed).

Each state asks "parity" (is a + b odd?) of the row's release and, from a > 0 on, "double" of release 1.0 (a
mixed-release question). Release 2.0's fake classes get parity wrong at (a, b) = (2, 1): a toy Kafka bug."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rollcheck.oracle.binding import Adapter, KafkaBug, OracleRelease, Question
from tests.toy import PROTOCOL as TOY


@dataclasses.dataclass(frozen=True)
class ToyBinding:
    protocol: str = "toy"
    adapters_dir: str = "kafka_oracle"
    adapters: tuple[Adapter, ...] = (Adapter("selftest", "rollcheck.selftest.SelfTest"),)
    releases: tuple[OracleRelease, ...] = (OracleRelease("1.0", "1", "selftest", ("ci", "nightly")),
                                           OracleRelease("2.0", "2", "selftest", ("nightly",)))
    bugs: tuple[KafkaBug, ...] = (KafkaBug("TOY-1", "toy", "2.0 gets the parity of (2, 1) wrong", ("2.0",),
                                           ("1.0",), "small", kinds=("parity",), story="a toy bug"),)

    def config_for(self, config: Any, release: OracleRelease) -> Any:
        if config.bound > 10:
            raise ValueError("bound above 10 stands for no toy release")
        return config

    def questions(self, system: Any, state: Any, release: OracleRelease) -> Iterable[Question]:
        yield Question("parity", {"op": "parity", "a": state.a, "b": state.b}, (state.a + state.b) % 2, "IncA")
        if state.a:
            yield Question("double", {"op": "double", "n": state.a}, 2 * state.a, release="1.0")

    def compare(self, question: Question, answer: Any) -> str | None:
        return None if answer == question.expected else f"reference {question.expected}, Kafka {answer}"


BINDING = ToyBinding()
ENTRY = dataclasses.replace(TOY, oracle="tests.kafka_toy:BINDING")


def toy_1(kind: str, request: Mapping[str, Any], expected: Any, answer: Any) -> bool:
    """TOY-1's disagreement: the parity of (2, 1) answered 0."""
    return kind == "parity" and (request.get("a"), request.get("b")) == (2, 1) and answer == 0


# The same bug with its signature: its disagreements at 2.0 are a known bug's, not a new finding.
KNOWN_BINDING = dataclasses.replace(BINDING, bugs=(dataclasses.replace(BINDING.bugs[0], signature=toy_1),))
KNOWN_ENTRY = dataclasses.replace(TOY, oracle="tests.kafka_toy:KNOWN_BINDING")
# A signature that accepts no answer of the check: the disagreements stay new findings.
PICKY_BINDING = dataclasses.replace(BINDING, bugs=(dataclasses.replace(
    BINDING.bugs[0], signature=lambda _kind, _request, _expected, answer: answer == 7),))
PICKY_ENTRY = dataclasses.replace(TOY, oracle="tests.kafka_toy:PICKY_BINDING")


class FakeClient:
    """OracleClient's shape, answering in Python; counts what it was asked."""

    def __init__(self, binding: Any, *, jars: Path | None = None, **_: Any) -> None:
        self.binding, self.jars = binding, jars
        self.cache: dict[tuple[str, str], Any] = {}
        self.requests = self.hits = self.round_trips = 0
        self.closed = False

    def answer(self, release: str, r: Mapping[str, Any]) -> Any:
        if r["op"] == "parity":
            if release == "2.0" and (r["a"], r["b"]) == (2, 1):
                return 0
            return (r["a"] + r["b"]) % 2
        if r["op"] == "double":
            return 2 * r["n"]
        raise AssertionError(r)

    def ask(self, release: str, requests: Sequence[Mapping[str, Any]]) -> list[Any]:
        self.round_trips += 1
        out = []
        for r in requests:
            self.requests += 1
            key = (release, repr(sorted(r.items())))
            if key in self.cache:
                self.hits += 1
            else:
                self.cache[key] = self.answer(release, r)
            out.append(self.cache[key])
        return out

    def stats(self) -> dict[str, Any]:
        return {"requests": self.requests, "cache_hits": self.hits, "sent": self.requests - self.hits,
                "round_trips": self.round_trips, "jvm_starts": 0, "startup_seconds": {}, "build_seconds": {}}

    def close(self) -> None:
        self.closed = True


class WrongEverywhereClient(FakeClient):
    """FakeClient whose every release gives TOY-1's wrong answer (1.0 is not a buggy release of it)."""

    def answer(self, release: str, r: Mapping[str, Any]) -> Any:
        return super().answer("2.0", r)
