"""The Kafka oracle's check: explore a config once, put every decision the reference makes at every reachable state
to Apache Kafka's released classes, and compare (``rollcheck kafka P --release R``).

The one explorer runs (:class:`rollcheck.explore.explorer.Exploration`, every violation collected); its ``visit``
hook hands the driver each level's new states in level-store order, so a disagreement is located as (level,
position) and its ITF trace is rebuilt by the explorer's own replay (:func:`rollcheck.explore.shortest.replay`).
Each level's questions are grouped by the release that answers them, deduplicated by canonical request and sent
to the :class:`~rollcheck.oracle.client.OracleClient` in one batch per release (the local engine); the Spark engine
(:mod:`rollcheck.oracle.spark`) sends them from its tasks instead, and both reduce to the same
:class:`CheckResult` through :class:`Tally`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.core.configs import resolve_config
from rollcheck.core.errors import ExitCode, UserError
from rollcheck.core.registry import check_profile, get_protocol
from rollcheck.core.traces import Trace, trace_to_itf
from rollcheck.core.transition import ProtocolEntry, TransitionSystem, replace_config
from rollcheck.oracle.binding import OracleBinding, OracleRelease
from rollcheck.oracle.compare import KEEP_PER_KIND, Client, Found, Tally, ask_states

ENGINES = ("local", "spark")


@dataclass
class CheckResult:
    """One check of one protocol config against one Kafka release (``to_json``: rollcheck.oracle.report)."""

    protocol: str
    release: str
    line: str
    config: str
    profile: str
    engine: str
    states: int = 0
    depth: int = 0
    complete: bool = True
    decisions: int = 0
    distinct_requests: int = 0
    cache_hits: int = 0  # decisions answered without a request of their own (deduplicated, or asked before)
    round_trips: int = 0
    jvm_start_seconds: float = 0.0
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)
    disagreement_count: int = 0  # every disagreement, the known bugs' included
    known_bugs: dict[str, int] = field(default_factory=dict)  # known Kafka bug of the release -> its disagreements
    strict: bool = False  # a known bug's disagreements count as new ones (exit 3)
    disagreements: list[Found] = field(default_factory=list)  # the first KEEP_PER_KIND per kind, in full
    violations: list[dict[str, Any]] = field(default_factory=list)  # property violations: id, description, trace
    timings: dict[str, float] = field(default_factory=dict)  # explore_seconds, oracle_seconds, total_seconds
    client: dict[str, Any] = field(default_factory=dict)  # the client's own stats (per engine: not compared)
    notes: list[str] = field(default_factory=list)

    @property
    def unexplained(self) -> int:
        """The disagreements no known Kafka bug of the release explains."""
        return self.disagreement_count - sum(self.known_bugs.values())

    @property
    def verdict(self) -> str:
        """"disagree" (Kafka answered otherwise somewhere no known bug of the release explains; with ``strict``,
        anywhere), "violated" (a property of the config failed), "known-bug" (Kafka answered otherwise only where
        a known bug of the release does, :class:`~rollcheck.oracle.binding.KafkaBug`), "agree"."""
        if self.unexplained or (self.strict and self.disagreement_count):
            return "disagree"
        if self.violations:
            return "violated"
        return "known-bug" if self.disagreement_count else "agree"

    @property
    def exit_code(self) -> ExitCode:
        return {"disagree": ExitCode.DISAGREEMENT, "violated": ExitCode.VIOLATION}.get(self.verdict, ExitCode.OK)


def entry_of(protocol: str | ProtocolEntry) -> ProtocolEntry:
    return protocol if isinstance(protocol, ProtocolEntry) else get_protocol(protocol)


def binding_of(entry: ProtocolEntry) -> OracleBinding:
    """The entry's oracle binding; one line where it has none or it does not load."""
    if entry.oracle is None:
        raise UserError(f"protocol {entry.name} has no Kafka oracle binding (ProtocolEntry.oracle)")
    try:
        binding = entry.oracle_binding()
    except (ImportError, ValueError) as exc:
        raise UserError(f"protocol {entry.name}: its Kafka oracle binding {entry.oracle} does not load: "
                        f"{' '.join(str(exc).split())}") from None
    if not isinstance(binding, OracleBinding):
        raise UserError(f"protocol {entry.name}: {entry.oracle} is not an OracleBinding")
    return binding


def find_release(binding: OracleBinding, name: str) -> OracleRelease:
    """The binding's release ``name``; one line listing the known ones (the client's look-up when it is there)."""
    try:
        from rollcheck.oracle.client import find_release as client_find
    except ImportError:  # the engine's client is not there (yet): the same look-up
        for r in binding.releases:
            if r.name == name:
                return r
        known = ", ".join(r.name for r in binding.releases) or "(none)"
        raise UserError(f"unknown Kafka release '{name}' for {binding.protocol}; known: {known}") from None
    return client_find(binding, name)


def check_engine(engine: str) -> None:
    if engine not in ENGINES:
        raise UserError(f"unknown engine '{engine}'; known: {', '.join(ENGINES)}")


def prepare(entry: ProtocolEntry, binding: OracleBinding, release: OracleRelease, config_name: str,
            profile: str | None) -> tuple[str, Any, TransitionSystem[Any]]:
    """(config label, config, system) of one row: the named config (profile applied), as the binding makes it
    stand for ``release``."""
    if profile is not None:
        check_profile(entry, profile, "--profile")
        if profile != "kafka" and "kafka" in entry.profiles:
            # The binding makes every row stand for the release under the profile that models Kafka's code:
            # another one would be overridden without a word.
            raise UserError(f"the Kafka oracle compares with Apache Kafka's code: {entry.name} runs under profile "
                            f"kafka, not {profile} (leave --profile out, or give kafka)")
    label, config = resolve_config(entry, config_name)
    if profile is not None:
        config = replace_config(config, profile=profile)
    try:
        config = binding.config_for(config, release)
        system = entry.build(config)
    except ValueError as exc:
        raise UserError(f"{entry.name}/{label} at Kafka {release.name}: {' '.join(str(exc).split())}") from None
    return label, config, system


def default_client(binding: OracleBinding, jars: Path | None,
                   progress: Callable[[str], None] | None) -> Client:
    from rollcheck.oracle.client import OracleClient  # the engine's; imported late (it is the JVM's side)

    client: Client = OracleClient(binding, jars=jars, progress=progress)
    return client


def run_check(protocol: str | ProtocolEntry, release_name: str, config_name: str, *, profile: str | None = None,
              engine: str = "local", jars: Path | None = None, client: Client | None = None,
              progress: Callable[[str], None] | None = None, spark: Any = None,
              keep: int = KEEP_PER_KIND, traces: int = 0, seed: int = 0,
              replay_client: Client | None = None, strict: bool = False) -> CheckResult:
    """Check ``protocol``'s config ``config_name`` against Kafka ``release_name`` (see the module docstring).
    ``client``: the oracle client to ask (default: a new OracleClient, closed at the end); ``spark``: the Spark
    engine's session or options (:func:`rollcheck.oracle.spark.ask_spark`). ``traces``: when above 0 and the
    binding has replay content, its counterexamples, witnesses and ``traces`` simulate walks (``seed``) are
    replayed on Kafka's code too (:mod:`rollcheck.oracle.replay`; ``replay_client``: the client they are asked
    of, default a new one over the content's adapter). ``strict``: a known Kafka bug's disagreements fail the
    check as new ones do (exit 3)."""
    from rollcheck.explore.explorer import Exploration, ExploreOptions
    from rollcheck.explore.shortest import replay

    t_start = time.perf_counter()
    check_engine(engine)
    entry = entry_of(protocol)
    binding = binding_of(entry)
    release = find_release(binding, release_name)
    label, config, system = prepare(entry, binding, release, config_name, profile)
    say = progress or (lambda _text: None)
    own = client is None
    tally = Tally(keep=keep)
    oracle_seconds = 0.0
    collected: list[tuple[int, int, Any]] = []
    active: Client | None = client

    def visit(level: int, states: Sequence[Any]) -> None:
        nonlocal oracle_seconds, active
        if engine == "spark":  # asked by the Spark tasks once the exploration is done
            collected.extend((level, pos, s) for pos, s in enumerate(states))
            return
        tick = time.perf_counter()
        if active is None:
            active = default_client(binding, jars, progress)
        ask_states(binding, system, release, ((level, pos, s) for pos, s in enumerate(states)), active.ask, tally)
        oracle_seconds += time.perf_counter() - tick
        say(f"level {level}: {tally.decisions:,} decisions, {tally.disagreements:,} disagreements")

    try:
        exploration = Exploration(system, ExploreOptions(config_name=label, stop_at_first=False, visit=visit))
        explored = exploration.run()
        client_stats: dict[str, Any] = {}
        if engine == "spark":
            from rollcheck.oracle.spark import ask_spark

            tick = time.perf_counter()
            client_stats = ask_spark(binding, system, release, collected, tally, jars=jars, spark=spark,
                                     client=client)
            oracle_seconds += time.perf_counter() - tick
        elif active is not None:
            client_stats = dict(active.stats())
    finally:
        if own and active is not None:
            active.close()
    result = CheckResult(entry.name, release.name, release.line, label, config.profile, engine,
                         states=explored.distinct_states, depth=explored.depth, complete=explored.complete,
                         decisions=tally.decisions, distinct_requests=len(tally.digests),
                         kinds=dict(sorted(tally.kinds.items())), disagreement_count=tally.disagreements,
                         known_bugs=dict(sorted(tally.known.items())), strict=strict)
    result.cache_hits = result.decisions - result.distinct_requests
    result.client = client_stats
    result.round_trips = int(client_stats.get("round_trips", 0))
    result.jvm_start_seconds = round(float(sum((client_stats.get("startup_seconds") or {}).values())), 3)
    for kind in sorted(tally.found):
        for f in tally.found[kind]:
            steps = replay(system, exploration.store, exploration.initial, f.level, f.pos, exploration.fingerprint)
            trace = Trace(steps, protocol=entry.name, config=label, property_id=f"kafka:{f.kind}",
                          description=f.difference,
                          meta={"kafka_release": f.release, "kafka_request": dict(f.request),
                                "reference_answer": f.expected, "kafka_answer": f.answer})
            f.trace = trace_to_itf(trace, system)
            result.disagreements.append(f)
    for v in explored.violations:
        result.violations.append({"property": v.property_id, "description": v.description, "length": v.depth,
                                  "trace": trace_to_itf(v.trace, system)})
    result.notes.extend(explored.extra.get("notes", []))
    if traces > 0:
        tick = time.perf_counter()
        _replay(result, entry, binding, release, label, config, system, explored, traces=traces, seed=seed,
                engine=engine, jars=jars, spark=spark, progress=progress, client=replay_client, keep=keep)
        oracle_seconds += time.perf_counter() - tick
    total = time.perf_counter() - t_start
    result.timings = {"explore_seconds": round(max(explored.elapsed - (0 if engine == "spark" else oracle_seconds),
                                                   0.0), 3),
                      "oracle_seconds": round(oracle_seconds, 3), "total_seconds": round(total, 3)}
    return result


def _replay(result: CheckResult, entry: ProtocolEntry, binding: OracleBinding, release: OracleRelease, label: str,
            config: Any, system: TransitionSystem[Any], explored: Any, *, traces: int, seed: int, engine: str,
            jars: Path | None, spark: Any, progress: Callable[[str], None] | None, client: Client | None,
            keep: int) -> None:
    """The check's trace replay (:mod:`rollcheck.oracle.replay`), counted into ``result`` beside the states'."""
    from rollcheck.oracle import replay as rp

    content = rp.content_of(binding)
    if content is None:  # a binding without trace replay: its states are all there is to check
        return
    plan = content.plan(config, release)
    if plan is None:
        result.notes.append(f"replay: no replay adapter for Kafka {release.name}; traces not replayed")
        return
    rb = rp.replay_binding(binding, content, config)
    chosen = rp.collect(system, explored, traces, plan.depth, seed)
    tally = Tally(keep=keep)
    own = client is None and engine != "spark"
    active = client if client is not None or engine == "spark" else rp.replay_client(rb, jars, progress)
    many = rp.spark_ask_many(rb, jars=jars, spark=spark) if engine == "spark" and client is None else None
    try:
        ask = active.ask if active is not None else (lambda _t, _r: [])
        outcome = rp.run_replays(content, system, release, chosen, ask, tally, protocol=entry.name, config=label,
                                 ask_many=many)
        stats = dict(active.stats()) if active is not None else {}
    finally:
        if own and active is not None:
            active.close()
    result.decisions += tally.decisions
    result.distinct_requests += len(tally.digests)
    for kind, row in tally.kinds.items():
        result.kinds[kind] = dict(row)
    result.kinds = dict(sorted(result.kinds.items()))
    result.disagreement_count += tally.disagreements
    for bug, n in tally.known.items():
        result.known_bugs[bug] = result.known_bugs.get(bug, 0) + n
    for kind in sorted(tally.found):
        result.disagreements.extend(tally.found[kind])
    result.round_trips += int(stats.get("round_trips", 0))
    result.cache_hits = result.decisions - result.distinct_requests
    result.client["replay"] = {"traces": outcome.traces, "sources": outcome.sources, "steps": outcome.steps,
                               "skipped_steps": outcome.skipped, "retried": outcome.retried,
                               "timed_out": outcome.timed_out, "client": stats}
    result.notes.append(f"replay: {outcome.traces} traces ({', '.join(f'{n} {k}' for k, n in outcome.sources.items())}"
                        f"), {outcome.steps} steps, {outcome.skipped} not seen by Kafka's code; {outcome.retried} "
                        f"timed out and retried, {outcome.timed_out} timed out twice")
