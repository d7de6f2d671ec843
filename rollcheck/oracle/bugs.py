"""``rollcheck kafka bugs``: every real Kafka bug a binding lists (:class:`~rollcheck.oracle.binding.KafkaBug`),
re-found on the released code. At each buggy release the check must disagree with the reference in one of the bug's
kinds (no kinds: any disagreement, or a property violation); at each fixed release it must agree."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.core.errors import UserError
from rollcheck.core.registry import all_protocols, get_protocol
from rollcheck.oracle import replay as rp
from rollcheck.oracle.binding import KafkaBug, OracleBinding
from rollcheck.oracle.check import CheckResult, binding_of, default_client, entry_of, find_release, run_check
from rollcheck.oracle.compare import Client, Tally


def bug_id(bug: KafkaBug) -> str:
    """The bug's id in every report: stable across runs and releases."""
    return f"{bug.protocol}:{bug.id}"


def shows_bug(bug: KafkaBug, result: CheckResult) -> bool:
    if bug.signature is not None:  # the disagreements its signature tells from any other
        return result.known_bugs.get(bug.id, 0) > 0
    if bug.kinds:
        return any(result.kinds.get(k, {}).get("disagreements", 0) for k in bug.kinds)
    return bool(result.disagreement_count or result.violations)


def _first(result: CheckResult, kinds: Sequence[str]) -> dict[str, Any] | None:
    """The first disagreement that tells the bug (of its kinds, else any), or the first violation."""
    for f in result.disagreements:
        if not kinds or f.kind in kinds:
            return f.to_json()
    if result.violations and not kinds:
        v = result.violations[0]
        return {"property": v["property"], "description": v["description"], "length": v["length"]}
    return None


@dataclass
class BugOutcome:
    bug: KafkaBug
    buggy: list[dict[str, Any]] = field(default_factory=list)  # per release: verdict, shown, the first finding
    fixed: list[dict[str, Any]] = field(default_factory=list)  # per release: verdict, agrees

    @property
    def refound(self) -> bool:
        return bool(self.buggy) and all(r["shown"] for r in self.buggy)

    @property
    def fixed_agree(self) -> bool:
        return all(r["agrees"] for r in self.fixed)

    @property
    def ok(self) -> bool:
        return self.refound and self.fixed_agree

    def to_json(self) -> dict[str, Any]:
        b = self.bug
        return {"id": bug_id(b), "bug": b.id, "protocol": b.protocol, "summary": b.summary, "story": b.story,
                "source": b.source, "config": b.config, "profile": b.profile, "kinds": list(b.kinds),
                "verdict": "REFOUND" if self.refound else "NOT REFOUND", "fixed_agree": self.fixed_agree,
                "ok": self.ok, "buggy": self.buggy, "fixed": self.fixed}


def bindings(protocol: str | None) -> list[tuple[str, OracleBinding]]:
    """(protocol, binding) of ``protocol`` (its binding or a one-line error), or of every protocol with one."""
    if protocol is not None:
        entry = get_protocol(protocol)
        return [(entry.name, binding_of(entry))]
    return [(e.name, binding_of(e)) for e in all_protocols() if e.oracle is not None]


def _check(name: str, bug: KafkaBug, release: str, jars: Path | None, client: Client,
           progress: Callable[[str], None] | None) -> CheckResult:
    """The check that shows the bug: its config's, or (``extra["replay_story"]``) its story's trace replayed."""
    story = bug.extra.get("replay_story")
    if story:

        result: CheckResult = run_story(name, str(story), release, jars=jars)
        return result
    return run_check(name, release, bug.config, profile=bug.profile, jars=jars, client=client, progress=progress)


def run_bugs(protocol: str | None = None, *, jars: Path | None = None,
             progress: Callable[[str], None] | None = None,
             make_client: Callable[[OracleBinding], Client] | None = None) -> list[BugOutcome]:
    say = progress or (lambda _t: None)
    out: list[BugOutcome] = []
    for name, binding in bindings(protocol):
        if not binding.bugs:
            continue
        # One client per binding for every bug of it: a release's JVM starts once, its answers are cached once.
        client = make_client(binding) if make_client is not None else default_client(binding, jars, progress)
        try:
            for bug in binding.bugs:
                outcome = BugOutcome(bug)
                for release in bug.buggy:
                    say(f"{bug_id(bug)}: checking buggy release {release}")
                    r = _check(name, bug, release, jars, client, progress)
                    outcome.buggy.append({"release": release, "verdict": r.verdict, "shown": shows_bug(bug, r),
                                          "disagreements": r.disagreement_count, "first": _first(r, bug.kinds)})
                for release in bug.fixed:
                    say(f"{bug_id(bug)}: checking fixed release {release}")
                    r = _check(name, bug, release, jars, client, progress)
                    outcome.fixed.append({"release": release, "verdict": r.verdict, "agrees": r.verdict == "agree",
                                          "disagreements": r.disagreement_count, "first": _first(r, ())})
                out.append(outcome)
        finally:
            client.close()
    return out


def bugs_text(outcomes: Sequence[BugOutcome]) -> str:
    lines: list[str] = []
    for o in outcomes:
        b = o.bug
        lines.append(f"{bug_id(b)} {'REFOUND' if o.refound else 'NOT REFOUND'}"
                     + ("" if o.fixed_agree else " (a fixed release disagrees)") + f": {b.summary}")
        if b.story:
            lines.append(f"  story: {b.story}")
        for r in o.buggy:
            first = r["first"]
            what = (f"{first.get('kind', first.get('property'))}: {first.get('difference', first.get('description'))}"
                    if first else "no finding")
            lines.append(f"  buggy {r['release']}: {r['verdict']} ({what})")
        for r in o.fixed:
            lines.append(f"  fixed {r['release']}: {r['verdict']}")
        if b.source:
            lines.append(f"  source: {b.source}")
    if not outcomes:
        lines.append("no Kafka bugs are listed by any binding")
    return "\n".join(lines)


def run_story(protocol: str, story: str, release_name: str, *, jars: Path | None = None,
              client: Client | None = None) -> Any:
    """The check of one named story at one release: its trace replayed alone (a CheckResult with the replay's
    kinds only; ``rollcheck kafka bugs`` for a KafkaBug with ``extra["replay_story"]``)."""
    entry = entry_of(protocol)
    binding = binding_of(entry)
    content = rp.content_of(binding)
    release = find_release(binding, release_name)
    told = content.story(story) if content is not None else None
    if content is None or told is None:
        raise UserError(f"{entry.name}: its binding has no replay story '{story}'")
    if content.plan(told[0], release) is None:
        raise UserError(f"{entry.name}: no replay adapter for Kafka {release.name} (story {story})")
    try:
        config = binding.config_for(told[0], release)
        system = entry.build(config)
        steps = rp.follow(system, told[1])
    except ValueError as exc:
        raise UserError(f"{entry.name} story {story} at Kafka {release.name}: {' '.join(str(exc).split())}") from None
    tally = Tally()
    own = client is None
    active = client if client is not None else rp.replay_client(rp.replay_binding(binding, content, config), jars, None)
    try:
        rp.run_replays(content, system, release, [rp.ReplayTrace(f"story:{story}", steps)], active.ask, tally,
                    protocol=entry.name, config=f"story:{story}")
    finally:
        if own:
            active.close()
    result = CheckResult(entry.name, release.name, release.line, f"story:{story}", config.profile, "local",
                         states=len(steps), depth=len(steps) - 1, decisions=tally.decisions,
                         distinct_requests=len(tally.digests), kinds=dict(sorted(tally.kinds.items())),
                         disagreement_count=tally.disagreements, known_bugs=dict(sorted(tally.known.items())))
    for kind in sorted(tally.found):
        result.disagreements.extend(tally.found[kind])
    return result
