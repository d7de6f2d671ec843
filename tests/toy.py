"""A tiny protocol used to test the engine itself: two bounded counters that must not both be odd."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rollcheck.core.system import DataclassSystem
from rollcheck.core.transition import (
    Action,
    AnyProperty,
    Invariant,
    ProtocolEntry,
    StepProperty,
    Variant,
    always_eventually_reachable,
)


@dataclass(frozen=True)
class ToyConfig:
    profile: str = "kip"
    bound: int = 4
    broken: bool = False

    def validate(self) -> None:
        if self.bound < 1:
            raise ValueError("bound must be at least 1")


@dataclass(frozen=True)
class ToyState:
    a: int
    b: int
    tags: frozenset[str]


class ToySystem(DataclassSystem):
    name = "toy"
    state_type = ToyState

    def initial_states(self) -> Iterable[ToyState]:
        return [ToyState(0, 0, frozenset())]

    def successors(self, s: ToyState) -> Iterable[tuple[Action, ToyState]]:
        n = self.config.bound
        out = []
        # Correct rule: a may move only while b is even (so a, b never both odd).
        if s.a < n and (s.b % 2 == 0 or s.a % 2 == 1 or self.config.broken):
            out.append((Action.of("IncA"), ToyState(s.a + 1, s.b, s.tags | {f"a{s.a + 1}"})))
        if s.b < n and (s.a % 2 == 0 or s.b % 2 == 1):
            out.append((Action.of("IncB"), ToyState(s.a, s.b + 1, s.tags)))
        if s.a or s.b:
            out.append((Action.of("Reset"), ToyState(0, 0, s.tags)))
        return out

    def properties(self) -> Sequence[AnyProperty]:
        return [
            Invariant("TOY-01", "a and b are never both odd", "toy", lambda s: not (s.a % 2 and s.b % 2)),
            StepProperty("TOY-02", "a never decreases except by Reset", "toy",
                         lambda s, a, t: t.a >= s.a or a.name == "Reset"),
            always_eventually_reachable("TOY-03", "the origin stays reachable", "toy",
                                        lambda s: s.a == 0 and s.b == 0),
        ]


def _build(config: Any) -> ToySystem:
    return ToySystem(config)


PROTOCOL = ProtocolEntry(
    name="toy",
    summary="two counters (engine self-test)",
    config_type=ToyConfig,
    configs={"small": ToyConfig(bound=3), "default": ToyConfig(), "large": ToyConfig(bound=40)},
    build=_build,
    variants=(Variant("TOY-M1", "a moves while b is odd", lambda c: ToySystem(
        ToyConfig(c.profile, c.bound, True)), expect=("TOY-01",)),),
)
