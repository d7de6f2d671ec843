"""Trace replay: code of Kafka's that runs on its own thread is checked on traces, not states
(``rollcheck kafka P --release R --traces N``).

The traces of a config are the explorer's counterexamples and witnesses (the one exploration of the check) and
``N`` walks of ``rollcheck simulate`` (:func:`rollcheck.spark.simulate.walker_of`, unguided, same seed rule).
The binding's replay content (:class:`rollcheck.oracle.binding.ReplayContent`, the binding's ``replay``) makes one
request per trace, asked of the same :class:`~rollcheck.oracle.client.OracleClient` machinery as the state
questions (a JVM per release, the answers cached by canonical request, batches, a dead JVM's stderr tail), over
the content's own adapter. A replay the Java side reports as timed out (a step after which the code did not settle
within its bounded wait) is asked once more; one that times out again is counted as a ``replay.timeout``
disagreement, never as a pass. Each kind's comparison is counted in the check's :class:`Tally`, and each kept
disagreement carries the trace's ITF (the first differing step in its ``#meta``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.core.traces import Step, Trace, plain_view, trace_to_itf
from rollcheck.oracle.binding import Adapter, KafkaBug, OracleBinding, OracleRelease, Question, ReplayContent
from rollcheck.oracle.compare import Client, Found, Tally, canonical, request_digest

TIMEOUT_KIND = "replay.timeout"
ERROR_KIND = "replay.error"
DEFAULT_TRACES = 4  # `rollcheck kafka --traces` default: a few walks beside the counterexamples and witnesses
DEFAULT_SEED = 0
BATCH = 8  # traces a round trip (each replays in well under a second; a batch stays far below the JVM timeout)

Ask = Callable[[str, list[Mapping[str, Any]]], list[Any]]


@dataclass(frozen=True)
class ReplayBinding:
    """The binding seen by the replay's client: the same protocol and adapters folder, the content's adapters,
    and each release re-pointed at its replay adapter (an OracleBinding, so the client's build, cache and JVM
    handling are the state questions' own)."""

    protocol: str
    adapters_dir: str
    adapters: tuple[Adapter, ...]
    releases: tuple[OracleRelease, ...]
    bugs: tuple[KafkaBug, ...] = ()

    def config_for(self, config: Any, release: OracleRelease) -> Any:
        return config

    def questions(self, system: Any, state: Any, release: OracleRelease) -> list[Question]:
        return []

    def compare(self, question: Question, answer: Any) -> str | None:
        return None


def content_of(binding: OracleBinding) -> ReplayContent | None:
    content = getattr(binding, "replay", None)
    return content if isinstance(content, ReplayContent) else None


def replay_binding(binding: OracleBinding, content: ReplayContent, config: Any) -> ReplayBinding:
    releases = []
    for r in binding.releases:
        plan = content.plan(config, r)
        if plan is not None:
            releases.append(dataclasses.replace(r, adapter=plan.adapter))
    return ReplayBinding(binding.protocol, binding.adapters_dir, tuple(content.adapters), tuple(releases))


@dataclass
class ReplayTrace:
    source: str  # "counterexample:<property>", "witness:<id>", "walk:<i>"
    steps: list[Step]


def walks(system: Any, count: int, depth: int, seed: int) -> list[ReplayTrace]:
    """Walks ``0 .. count-1`` of ``rollcheck simulate --seed S --depth D`` (unguided): the simulation's own walker
    chooses, and each walk's states are rebuilt by following its labels through the system's successors."""
    from rollcheck.spark.simulate import SWARM, walker_of

    if count <= 0:
        return []
    run = walker_of(system, None, seed, depth, count, False)
    rows = [row for part, _fps in run(range(math.ceil(count / SWARM))) for row in part]
    out: list[ReplayTrace] = []
    initial = list(system.initial_states())
    for i, labels, *_rest in sorted(rows, key=lambda r: r[0]):
        rng = random.Random(int.from_bytes(hashlib.sha256(f"{seed}:{i}".encode()).digest()[:8], "big"))
        s = initial[rng.randrange(len(initial))]  # the walker's first draw: the initial state
        steps = [Step(None, s)]
        for label in labels:
            nxt = next(((a, t) for a, t in system.successors(s) if repr(a) == label), None)
            if nxt is None:
                break
            steps.append(Step(nxt[0], nxt[1]))
            s = nxt[1]
        out.append(ReplayTrace(f"walk:{i}", steps))
    return out


def collect(system: Any, explored: Any, count: int, depth: int, seed: int) -> list[ReplayTrace]:
    """The traces a check replays: the exploration's counterexamples and witnesses, then ``count`` walks."""
    out = [ReplayTrace(f"counterexample:{v.property_id}", list(v.trace.steps)) for v in explored.violations]
    out += [ReplayTrace(f"witness:{w.property_id}", list(w.trace.steps))
            for w in getattr(explored, "witness_traces", ()) or ()]
    return out + walks(system, count, depth, seed)


@dataclass
class ReplayOutcome:
    traces: int = 0
    steps: int = 0
    retried: int = 0
    timed_out: int = 0
    skipped: int = 0
    sources: dict[str, int] = field(default_factory=dict)


def _timed_out(answer: Any) -> bool:
    return isinstance(answer, Mapping) and answer.get("timed_out") is not None


def ask_all(target: str, requests: list[Mapping[str, Any]], ask: Ask) -> list[Any]:
    out: list[Any] = []
    for start in range(0, len(requests), BATCH):
        out += ask(target, requests[start:start + BATCH])
    return out


def run_replays(content: ReplayContent, system: Any, release: OracleRelease, traces: Sequence[ReplayTrace],
                ask: Ask, tally: Tally, *, protocol: str, config: str,
                ask_many: Callable[[str, list[Mapping[str, Any]]], list[Any]] | None = None) -> ReplayOutcome:
    """Replay every trace (one request each), retry the timed-out ones once, compare and count into ``tally``.
    ``ask_many`` asks a list of requests at once (default: ``ask`` in batches of :data:`BATCH`; the Spark
    engine distributes them)."""
    many = ask_many or (lambda target, reqs: ask_all(target, reqs, ask))
    outcome = ReplayOutcome(traces=len(traces))
    questions = [content.question(system, [(st.action, st.state) for st in tr.steps], release) for tr in traces]
    for tr in traces:
        kind = tr.source.split(":", 1)[0]
        outcome.sources[kind] = outcome.sources.get(kind, 0) + 1
        outcome.steps += len(tr.steps)
    target = release.name
    requests = [q.request for q in questions]
    answers = many(target, list(requests))
    again = [i for i, a in enumerate(answers) if _timed_out(a)]
    if again:
        outcome.retried = len(again)
        # The retry is a new canonical request: not answered from the client's cache.
        retry: list[Mapping[str, Any]] = [{**requests[i], "attempt": 2} for i in again]
        for i, a in zip(again, many(target, retry), strict=True):
            answers[i] = a
    for n, (tr, q, answer) in enumerate(zip(traces, questions, answers, strict=True)):
        tally.digests.add(request_digest(target, canonical(q.request)))
        outcome.skipped += len(q.skipped)
        found: dict[str, tuple[int, str] | None]
        if _timed_out(answer):
            outcome.timed_out += 1
            at = int(answer["timed_out"])
            found = {TIMEOUT_KIND: (at, f"step {at}: the replay timed out twice (the driver did not settle within "
                                        f"the bounded wait after step {at}); not a pass")}
        elif isinstance(answer, Mapping) and "exception" in answer:
            found = {ERROR_KIND: (0, f"the replay threw {answer.get('exception')}: {answer.get('message')}")}
        else:
            found = dict(content.compare(q, answer))
        for kind in content.kinds if not ({TIMEOUT_KIND, ERROR_KIND} & set(found)) else sorted(found):
            difference = found.get(kind)
            question = Question(kind, q.request, q.expected)
            if tally.count(question, None if difference is None else difference[1]):
                assert difference is not None
                at, text = difference
                at = min(max(at, 0), len(tr.steps) - 1)
                step = tr.steps[at]
                rows = answer.get("steps", []) if isinstance(answer, Mapping) else []
                trace = Trace(tr.steps, protocol=protocol, config=config, property_id=f"kafka:{kind}",
                              description=text,
                              meta={"kafka_release": target, "replay_source": tr.source, "replay_step": at,
                                    "reference_answer": _at(q.expected, at), "kafka_answer": _at(rows, at),
                                    "skipped": list(q.skipped)})
                f = Found(kind, repr(step.action) if step.action is not None else "", target, n, at, 0,
                          plain_view(system.view(step.state)), {"op": q.request.get("op"), "source": tr.source,
                                                                "steps": len(tr.steps)},
                          _at(q.expected, at), _at(rows, at), text)
                f.trace = trace_to_itf(trace, system)
                tally.add(f)
    return outcome


def _at(rows: Any, i: int) -> Any:
    return rows[i] if isinstance(rows, list) and 0 <= i < len(rows) else None


# -- Spark: the replays distributed, one driver JVM per Python worker ------------------------------------------


def _replay_task(binding: ReplayBinding, jars: Path | None, factory: Any
                 ) -> Callable[[Any], Any]:
    def run(items: Any) -> Any:
        from rollcheck.oracle.spark import pooled

        items = list(items)
        by_target: dict[str, list[tuple[int, Mapping[str, Any]]]] = {}
        for i, target, request in items:
            by_target.setdefault(target, []).append((i, request))
        for target, rows in by_target.items():
            client = pooled(binding, f"replay:{target}", jars, factory)  # type: ignore[arg-type]
            answers = ask_all(target, [r for _i, r in rows], client.ask)
            for (i, _r), a in zip(rows, answers, strict=True):
                yield i, a

    return run


def spark_ask_many(binding: ReplayBinding, *, jars: Path | None = None, spark: Any = None,
                   factory: Any = None) -> Callable[[str, list[Mapping[str, Any]]], list[Any]]:
    """``ask_many`` for :func:`run_replays` on Spark: the requests cut into partitions, each asked of its Python
    worker's long-lived client (one driver JVM per worker), the answers back in order."""
    from rollcheck.oracle.spark import SparkOracleOptions, oracle_client
    from rollcheck.spark.session import get_session

    session = spark if spark is not None and not isinstance(spark, SparkOracleOptions) else \
        get_session((spark or SparkOracleOptions()).master, app_name="rollcheck-kafka-replay")
    sc = session.sparkContext

    def many(target: str, requests: list[Mapping[str, Any]]) -> list[Any]:
        if not requests:
            return []
        slices = max(1, min(len(requests), 2 * int(sc.defaultParallelism)))
        rdd = sc.parallelize([(i, target, dict(r)) for i, r in enumerate(requests)], slices)
        got = dict(rdd.mapPartitions(_replay_task(binding, jars, factory or oracle_client)).collect())
        return [got[i] for i in range(len(requests))]

    return many


def replay_client(binding: ReplayBinding, jars: Path | None, progress: Callable[[str], None] | None) -> Client:
    from rollcheck.oracle.client import OracleClient

    client: Client = OracleClient(binding, jars=jars, progress=progress, batch_size=BATCH)  # type: ignore[arg-type]
    return client


# -- a named story: one trace a KafkaBug names, replayed at one release -----------------------------------------


def follow(system: Any, actions: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Step]:
    """The trace that takes ``actions`` (name, parameters) from the system's first initial state; a ValueError
    naming the first one that is not a successor."""
    s = next(iter(system.initial_states()))
    steps = [Step(None, s)]
    for i, (name, params) in enumerate(actions):
        nxt = next(((a, t) for a, t in system.successors(s)
                    if a.name == name and all(a.get(k) == v for k, v in params.items())), None)
        if nxt is None:
            raise ValueError(f"story step {i + 1} {name}{dict(params)} is not a successor there")
        steps.append(Step(nxt[0], nxt[1]))
        s = nxt[1]
    return steps
