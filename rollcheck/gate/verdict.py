"""The gate's verdict: findings from the checkers' reports (violations, disagreements between checkers,
cells that checked nothing) and the exit code they give."""

from __future__ import annotations

import enum
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rollcheck.checkers import (
    HOLDS,
    PROVED,
    REACHED,
    VACUOUS,
    VIOLATED,
    CheckerReport,
    Status,
)
from rollcheck.core.errors import ExitCode
from rollcheck.gate.cellrun import CellResult
from rollcheck.gate.config import GateConfig
from rollcheck.gate.tables import rerun_command


class FindingKind(enum.StrEnum):
    """What a finding is (a ``str``: summary.json carries the value). The exit code is the first kind present in
    :data:`EXIT_ORDER`'s order."""

    DISAGREEMENT = "disagreement"  # checkers disagree: one of them is wrong
    VIOLATION = "violation"
    SURVIVOR = "survivor"  # a broken variant no checker caught
    VACUOUS = "vacuous"  # a witness no reachable state satisfies
    ERROR = "error"  # the run itself failed (a checker crashed, a trace could not be exported)
    NOT_CHECKED = "not_checked"  # every cell of a protocol or of a variant skipped
    UNAVAILABLE = "unavailable"  # nothing checked because a tool is missing


EXIT_ORDER: tuple[tuple[frozenset[FindingKind], ExitCode], ...] = (
    (frozenset({FindingKind.DISAGREEMENT}), ExitCode.DISAGREEMENT),
    (frozenset({FindingKind.VIOLATION, FindingKind.SURVIVOR, FindingKind.VACUOUS}), ExitCode.VIOLATION),
    (frozenset({FindingKind.ERROR}), ExitCode.RUN_FAILED),
    (frozenset({FindingKind.NOT_CHECKED}), ExitCode.INCONCLUSIVE),
    (frozenset({FindingKind.UNAVAILABLE}), ExitCode.TOOL_UNAVAILABLE),
)


@dataclass
class Finding:
    kind: FindingKind
    protocol: str
    config: str
    profile: str
    message: str
    checker: str = ""
    property_id: str = ""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class GateResult:
    reports: list[CheckerReport]
    findings: list[Finding]
    elapsed: float
    config: GateConfig
    skipped: list[dict[str, str]] = field(default_factory=list)
    mutants: dict[str, Any] | None = None  # the mutation run (scores, checkers, one row per mutant)
    plan: dict[str, Any] | None = None  # estimate_plan's, with each cell's actual seconds
    preexisting: set[str] = field(default_factory=set)  # names in the output directory the gate did not write
    exported_tests: list[dict[str, Any]] | None = None  # --export-tests: the test files written
    cache: dict[str, Any] | None = None  # the store's use (rollcheck.gate.reuse.GateCache.summary); None: no store

    @property
    def exit_code(self) -> ExitCode:
        kinds = {FindingKind(f.kind) for f in self.findings}
        return next((code for group, code in EXIT_ORDER if kinds & group), ExitCode.OK)

    def to_json(self) -> dict[str, Any]:
        return {
            "exit_code": int(self.exit_code),
            "verdict": self.exit_code.name,
            "elapsed_seconds": round(self.elapsed, 2),
            "tier": self.config.tier,
            "protocols": self.config.protocols,
            "profiles": self.config.profiles,
            "checkers": self.config.checkers,
            "skipped_checkers": self.skipped,
            "findings": [f.to_json() for f in self.findings],
            "reports": [{**r.to_json(), "rerun": rerun_command(r, self.config.context)} for r in self.reports],
            "mutants": self.mutants,
            "plan": self.plan,
            "cache": self.cache,
            **({"exported_tests": self.exported_tests} if self.exported_tests is not None else {}),
        }


def unchecked(cfg: GateConfig, reports: Sequence[CheckerReport], skipped: Sequence[dict[str, str]], *,
               any_cell: bool) -> list[Finding]:
    """A protocol none of whose cells ran (each skipped: a tool not installed, a size limit) was not
    checked, and a gate that ran no cell at all checked nothing: neither may pass as "every property
    holds". Kind ``unavailable`` (exit 4) where only a missing tool is to blame, else ``not_checked`` (5)."""
    out: list[Finding] = []
    for proto in cfg.protocols:
        mine = [r for r in reports if r.protocol == proto]
        if mine and all(r.status == Status.SKIPPED for r in mine):
            why = "; ".join(dict.fromkeys(f"{r.checker}: {r.message}" for r in mine))
            only_tools = all(r.stats.get("unavailable") for r in mine)
            kind = FindingKind.UNAVAILABLE if only_tools else FindingKind.NOT_CHECKED
            out.append(Finding(kind, proto, "", "", f"nothing was checked: every cell was skipped ({why})"))
    if not any_cell:  # (a plan of broken variants alone is judged by its variants: not_checked above)
        why = "; ".join(f"{s['checker']}: {s['reason']}" for s in skipped) or "the plan has no cell"
        kind = FindingKind.UNAVAILABLE if skipped else FindingKind.NOT_CHECKED
        out.append(Finding(kind, ",".join(cfg.protocols), "", "",
                           f"nothing was checked: no cell ran ({why})"))
    return out


def variant_differential(res: CellResult) -> dict[str, Any]:
    """The Z3 relation against the reference under one variant, as the report's mutation section lists it:
    ``agrees`` when compared without a difference (a skipped cell, an encoding that does not cover the
    variant's config, compared nothing)."""
    r, diff = res.report, res.report.stats.get("differential") or {}
    agrees = bool(diff) and diff.get("mismatch") is None and r.status not in (Status.ERROR, Status.DIVERGED)
    return {"protocol": r.protocol, "variant": res.cell.variant, "config": r.config, "profile": r.profile,
            "checker": r.checker, "status": r.status, "agrees": agrees, "message": r.message,
            "states": diff.get("states"),
            "variant_states": diff.get("variant_states"), "complete": diff.get("every_reachable_state"),
            "seconds": round(res.seconds, 2)}


def findings_of(reports: Sequence[CheckerReport]) -> list[Finding]:
    out: list[Finding] = []
    groups: dict[tuple[str, str, str], list[CheckerReport]] = {}
    for r in reports:
        groups.setdefault(r.key, []).append(r)
        if r.status == Status.ERROR:
            out.append(Finding(FindingKind.ERROR, *r.key, f"{r.checker} failed: {r.message}", r.checker))
        elif r.status == Status.DIVERGED:
            out.append(Finding(FindingKind.DISAGREEMENT, *r.key, f"{r.checker}: {r.message}", r.checker))
        elif r.status == Status.SKIPPED:
            continue
        for v in r.properties.values():
            if v.status == VIOLATED:
                out.append(Finding(FindingKind.VIOLATION, *r.key, f"{v.id} violated ({r.checker}): {v.message}",
                                   r.checker, v.id))
            elif v.status == VACUOUS:
                out.append(Finding(FindingKind.VACUOUS, *r.key, f"{v.id} never reached ({r.checker}): {v.message}",
                                   r.checker, v.id))
    for (proto, conf, prof), group in groups.items():
        exhaustive = [r for r in group if r.exhaustive and r.status != Status.ERROR]
        # Exhaustive checkers must find the same counts.
        for a, b in itertools.pairwise(exhaustive):
            for k in set(a.counts) & set(b.counts):
                if a.counts[k] != b.counts[k]:
                    out.append(Finding(FindingKind.DISAGREEMENT, proto, conf, prof,
                                       f"{k}: {a.checker} found {a.counts[k]}, "
                                       f"{b.checker} found {b.counts[k]}",
                                       f"{a.checker}/{b.checker}"))
        # The same reachable graph has the same dead actions (declared, never taken), whichever engine walked it.
        dead: list[tuple[str, list[str]]] = [
            (r.checker, r.stats["actions"]["never_taken"]) for r in exhaustive
            if isinstance(r.stats.get("actions"), dict) and r.stats["actions"].get("never_taken") is not None]
        for (first, first_dead), (second, second_dead) in itertools.pairwise(dead):
            if sorted(first_dead) != sorted(second_dead):
                out.append(Finding(FindingKind.DISAGREEMENT, proto, conf, prof,
                                   f"actions never taken: {first} says {', '.join(first_dead) or 'none'}, "
                                   f"{second} says {', '.join(second_dead) or 'none'}", f"{first}/{second}"))
        # A witness one exhaustive checker reached and another says no reachable state satisfies.
        for r in exhaustive:
            for v in r.properties.values():
                if v.status != VACUOUS:
                    continue
                for e in exhaustive:
                    ev = e.properties.get(v.id)
                    if ev is not None and ev.status == REACHED:
                        out.append(Finding(FindingKind.DISAGREEMENT, proto, conf, prof,
                                           f"{v.id}: {e.checker} reached the witness ({ev.message}), {r.checker} "
                                           "says no reachable state satisfies it", f"{e.checker}/{r.checker}", v.id))
        # A violation that an exhaustive (or proving) checker says cannot happen.
        for r in group:
            for v in r.properties.values():
                if v.status != VIOLATED:
                    continue
                for e in group:
                    ev = e.properties.get(v.id)
                    if ev is None or e is r:
                        continue
                    if (e.exhaustive and ev.status == HOLDS) or ev.status == PROVED:
                        out.append(Finding(FindingKind.DISAGREEMENT, proto, conf, prof,
                                           f"{v.id}: {r.checker} found a violation, {e.checker} says "
                                           f"{ev.status}", f"{r.checker}/{e.checker}", v.id))
    return out
