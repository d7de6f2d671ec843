"""Mutation score: every broken variant of every protocol through the gate's checkers.

A variant (a plausible real bug: a skipped range check, a non-conditional ZooKeeper write, ...) is
*killed* by a checker when that checker reports a violated property on it. Every variant must be killed
by at least one checker; the score per checker shows how strong each checker is on its own.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rollcheck.checkers import CHECKERS, VIOLATED, CheckContext, available_checkers
from rollcheck.registry import get_protocol
from rollcheck.transition import ProtocolEntry


@dataclass
class Kill:
    checker: str
    killed: bool
    properties: list[str]
    elapsed: float
    status: str
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"checker": self.checker, "killed": self.killed, "properties": self.properties,
                "elapsed_seconds": round(self.elapsed, 3), "status": self.status, "message": self.message}


@dataclass
class MutantOutcome:
    protocol: str
    variant: str
    story: str
    expect: tuple[str, ...]
    config: str
    kills: list[Kill] = field(default_factory=list)

    @property
    def killed(self) -> bool:
        return any(k.killed for k in self.kills)

    @property
    def first_killer(self) -> Kill | None:
        killers = [k for k in self.kills if k.killed]
        return min(killers, key=lambda k: k.elapsed) if killers else None

    def to_json(self) -> dict[str, Any]:
        first = self.first_killer
        return {"protocol": self.protocol, "variant": self.variant, "story": self.story,
                "expect": list(self.expect), "config": self.config, "killed": self.killed,
                "first_killed_by": first.checker if first else None,
                "kills": [k.to_json() for k in self.kills]}


def run_mutants(protocols: Sequence[str], checkers: Sequence[str], ctx: CheckContext,
                progress: Callable[[str], None] | None = None,
                lookup: Callable[[str], ProtocolEntry] = get_protocol) -> list[MutantOutcome]:
    say = progress or (lambda _m: None)
    present = set(available_checkers())
    outcomes: list[MutantOutcome] = []
    for proto in protocols:
        entry = lookup(proto)
        for v in entry.variants:
            config = entry.configs[v.config]
            outcome = MutantOutcome(proto, v.id, v.story, v.expect, v.config)
            vctx = dataclasses.replace(ctx, variant=v.id, out_dir=ctx.out_dir)
            for name in checkers:
                if name not in present:
                    continue
                say(f"{proto} {v.id}: {name}")
                t0 = time.perf_counter()
                try:
                    report = CHECKERS[name][0](entry, v.config, config, vctx)
                except Exception as exc:  # a crashing checker does not kill a mutant
                    outcome.kills.append(Kill(name, False, [], time.perf_counter() - t0, "error",
                                              f"{type(exc).__name__}: {exc}"))
                    continue
                bad = [pid for pid, verdict in report.properties.items() if verdict.status == VIOLATED]
                outcome.kills.append(Kill(name, bool(bad), bad, time.perf_counter() - t0, report.status,
                                          report.message))
            outcomes.append(outcome)
    return outcomes


def scores(outcomes: Sequence[MutantOutcome]) -> dict[str, Any]:
    """Overall and per-checker mutation scores (killed / run)."""
    per: dict[str, list[int]] = {}
    for o in outcomes:
        for k in o.kills:
            ran_killed = per.setdefault(k.checker, [0, 0])
            ran_killed[0] += 1
            ran_killed[1] += int(k.killed)
    total = len(outcomes)
    killed = sum(o.killed for o in outcomes)
    return {
        "mutants": total,
        "killed": killed,
        "score": round(killed / total, 4) if total else None,
        "per_checker": {c: {"run": r, "killed": kd, "score": round(kd / r, 4) if r else None}
                        for c, (r, kd) in per.items()},
        "survivors": [f"{o.protocol}:{o.variant}" for o in outcomes if not o.killed],
    }

