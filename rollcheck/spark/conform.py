"""Spec traces against the reference at scale: TLC simulation traces replayed on Spark executors.

``rollcheck conform P --engine spark --traces N`` is check (a) of :mod:`rollcheck.tla.conformance` (spec
traces replayed on the reference) for many traces: TLC ``-simulate`` writes N traces of the spec, one file
each (:func:`~rollcheck.tla.conformance.tlc_simulation_files`, TLC's workers sharing the count), and Spark
replays them with :func:`~rollcheck.tla.conformance.replay_spec_trace`, the same function the local check
calls. The traces go to the executors as file paths, so the executors must see the driver's disk: the
master is ``local[...]``, ``local-cluster[...]`` or a standalone master on the loopback address
(:func:`check_local_master`). Each task rebuilds the reference from the protocol's name and the config once
(:func:`rollcheck.core.registry.build_system`, as the Spark explorer's tasks do), reads its traces and replays
them. Random traces of a spec share most of their states, so each Python worker keeps, across its tasks,
the states it parsed, the reference's successors of the states it met (:class:`Remembering`, which gives
each distinct state one object with its hash computed once) and their canonical views: on
features:default that makes reading and replaying a trace about fifteen times cheaper; what is compared
is unchanged.

TLC's files go to a folder in ``/dev/shm`` (memory) when it has room, reached through ``tlc/sim`` in the
run's directory, and are removed at the end (``--keep-traces``: they are written under the run's directory
and kept). The traces are replayed in waves (Spark jobs of a few thousand traces) and the verdicts written
to ``verdicts.parquet`` at the end; a run stopped by Ctrl-C keeps every finished wave's verdicts (as JSON
lines, ``verdicts.partial.jsonl``) and a summary marked ``partial``. Apalache is not run here (its
simulation traces would be a second source); the summary says whether it is installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.core.errors import ToolUnavailable, UserError, interruption
from rollcheck.core.registry import build_system
from rollcheck.core.traces import write_json_atomic, write_text_atomic
from rollcheck.core.transition import Action, AnyProperty, TransitionSystem
from rollcheck.runtime.rundir import process_alive
from rollcheck.tla.binding import binding_for
from rollcheck.tla.conformance import replay_spec_trace, tlc_simulation_files
from rollcheck.tla.tlc import TraceStep, parse_simulation_trace, spec_trace_to_itf
from rollcheck.tla.value import canonical_state, parse_state

Progress = Callable[[str], None]

SUMMARY = "conform-summary.json"
VERDICTS = "verdicts.parquet"
PARTIAL_VERDICTS = "verdicts.partial.jsonl"  # an interrupted run's verdicts so far
COLUMNS = ("trace", "file", "length", "ok", "divergent_step", "variables", "message")  # of the verdicts
MEMO_LIMIT = 30_000  # reference states whose successors (and the views of those) a worker keeps, then forgets
STATES_LIMIT = 100_000  # distinct spec states (their text) a worker keeps parsed
WAVES = 10  # a run's traces go to Spark in about this many jobs (each a unit kept when interrupted)
WAVE_MIN = 2_000  # traces a wave has at least (a Spark job costs about 0.2 s here)
MESSAGE_CHARS = 300
SCRATCH = "rollcheck-conform-traces-"  # /dev/shm/rollcheck-conform-traces-PID-xxxx
STATE_BYTES = 2_000  # room reserved per state of a trace file (features:default: about 570 bytes)
DIVERGENT_ITF = 20  # divergent traces written as ITF (the Parquet lists them all)

_STATE_HEAD = re.compile(r"^STATE_\d+ ==\s*$", re.MULTILINE)  # as parse_simulation_trace splits a file

# A verdict row: trace id, file name, states, ok, first divergent step, variables that differ, message,
# and whether the row is a failure to read the trace (not a divergence).
Row = tuple[int, str, int, bool, int | None, list[str], str | None, bool]


def check_local_master(master: str) -> None:
    """The executors read TLC's trace files from the driver's disk: only a master on this machine will do.
    One line (a :class:`UserError`) otherwise; the URL's form and reachability are checked by
    :func:`rollcheck.spark.session.check_master` when the session starts."""
    if master.startswith(("local[", "local-cluster[")) or master == "local":
        return
    if master.startswith("spark://"):
        hosts = [h.rsplit(":", 1)[0].strip("[]") for h in master[len("spark://"):].split(",")]
        if hosts and all(h == "localhost" or h == "::1" or h.startswith("127.") for h in hosts):
            return
    raise UserError(f"--master {master}: the Spark engine of conform hands the executors the paths of TLC's trace "
                    "files on this machine, so the master must be local, local[N], local[*], local-cluster[...] "
                    "or spark://127.0.0.1:PORT (loopback)")


def apalache_note() -> str:
    """What the summary says about Apalache: this engine replays TLC's traces only."""
    from rollcheck.tla.apalache import find_apalache

    try:
        path = find_apalache()
    except ToolUnavailable:
        return "Apalache is not installed (no apalache-mc on the PATH, no APALACHE_HOME): no Apalache traces"
    return f"Apalache is installed ({path}) but this engine replays TLC's simulation traces only"


@dataclass
class SparkConformResult:
    protocol: str
    config: str
    profile: str
    traces: int  # asked for
    depth: int
    seed: int
    generated: int = 0  # trace files TLC wrote
    replayed: int = 0
    steps: int = 0  # states replayed
    divergent: int = 0
    unreadable: int = 0  # trace files that could not be read (a run failure, not a divergence)
    divergences: list[dict[str, Any]] = field(default_factory=list)  # the first few divergent rows
    divergent_itf: list[str] = field(default_factory=list)
    generation_seconds: float = 0.0
    replay_seconds: float = 0.0
    parquet_seconds: float = 0.0  # writing the verdicts
    cleanup_seconds: float = 0.0  # removing the trace files
    trace_files: str = ""  # where TLC wrote them
    wave_log: list[dict[str, Any]] = field(default_factory=list)  # each wave (Spark job): traces, seconds
    master: str = ""
    default_parallelism: int = 0
    tasks_per_wave: int = 0
    waves: int = 0
    tlc_workers: int = 1
    partial: bool = False
    error: str = ""
    tlc: dict[str, Any] = field(default_factory=dict)
    apalache: str = ""
    parquet: str = ""

    @property
    def ok(self) -> bool:
        return not self.divergent and not self.error and not self.partial

    def to_json(self) -> dict[str, Any]:
        total = self.generation_seconds + self.replay_seconds + self.parquet_seconds
        return {"protocol": self.protocol, "config": self.config, "profile": self.profile, "engine": "spark",
                "ok": self.ok, "partial": self.partial, "error": self.error,
                "traces": self.traces, "depth": self.depth, "seed": self.seed, "generated": self.generated,
                "replayed": self.replayed, "steps": self.steps, "divergent": self.divergent,
                "unreadable": self.unreadable,
                "seconds": {"generation": round(self.generation_seconds, 2), "replay": round(self.replay_seconds, 2),
                            "writing_verdicts": round(self.parquet_seconds, 2), "total": round(total, 2),
                            "removing_trace_files": round(self.cleanup_seconds, 2)},
                "traces_per_second": {"replay": round(self.replayed / self.replay_seconds, 1)
                                      if self.replay_seconds else None,
                                      "overall": round(self.replayed / total, 1) if total else None},
                "spark": {"master": self.master, "default_parallelism": self.default_parallelism,
                          "tasks_per_wave": self.tasks_per_wave, "waves": self.waves,
                          "wave_log": self.wave_log},
                "cores": os.cpu_count(), "tlc_workers": self.tlc_workers, "tlc": self.tlc,
                "trace_files": self.trace_files, "apalache": self.apalache, "parquet": self.parquet,
                "divergences": self.divergences, "divergent_itf": self.divergent_itf}


class TraceReader:
    """Reads a TLC simulation trace file as :func:`~rollcheck.tla.tlc.parse_simulation_trace` does (a test
    checks they agree), with each distinct state parsed and canonicalized once: random traces of a spec
    repeat their states (features:default: 9,689 distinct states in 150,000 steps)."""

    def __init__(self, limit: int = STATES_LIMIT) -> None:
        self.limit = limit
        self.states: dict[str, tuple[dict[str, Any], str]] = {}

    def read(self, path: Path) -> tuple[list[TraceStep], list[str]]:
        """The trace's steps and each one's :func:`~rollcheck.tla.value.canonical_state`."""
        text = path.read_text(encoding="utf-8")
        steps: list[TraceStep] = []
        targets: list[str] = []
        for part in _STATE_HEAD.split(text)[1:]:
            body = part.split("\n====")[0].split("\n---")[0]
            known = self.states.get(body)
            if known is None:
                values = parse_state(body)
                known = (values, canonical_state(values))
                if len(self.states) < self.limit:
                    self.states[body] = known
            steps.append(TraceStep(None, known[0]))
            targets.append(known[1])
        return steps, targets


class _Held:
    """A reference state with its hash computed once (the reference's states are dataclasses that hash
    their fields at every dict look-up, most of a replay's time otherwise)."""

    __slots__ = ("hash", "state")

    def __init__(self, state: Any) -> None:
        self.state = state
        self.hash = hash(state)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, _Held) and self.hash == other.hash and self.state == other.state)


class Remembering:
    """The reference as a :class:`~rollcheck.core.transition.TransitionSystem` whose states are :class:`_Held`,
    one object per distinct state, and whose successors are computed once per state (up to ``limit``
    states, then forgotten and computed again): what a replay asks of the reference, answered by the
    reference, only once. The replay is :func:`~rollcheck.tla.conformance.replay_spec_trace`, unchanged; its
    ``views`` cache is keyed by these objects, so its look-ups end at an identity check."""

    def __init__(self, ts: TransitionSystem[Any], limit: int = MEMO_LIMIT) -> None:
        self.ts = ts
        self.name = ts.name
        self.config = ts.config
        self.limit = limit
        self.memo: dict[_Held, list[tuple[Action, _Held]]] = {}
        self.states: dict[_Held, _Held] = {}
        self.views: dict[Any, str] = {}  # replay_spec_trace's cache of canonical views, keyed by these states
        self.initial = [self._one(s) for s in ts.initial_states()]

    def _one(self, state: Any) -> _Held:
        held = _Held(state)
        return self.states.setdefault(held, held)

    def adopt(self, other: Remembering) -> None:
        """Take over an earlier task's memo (the same run: the same reference, rebuilt)."""
        self.memo, self.states, self.initial, self.views = other.memo, other.states, other.initial, other.views

    def initial_states(self) -> Iterable[_Held]:
        return self.initial

    def successors(self, s: _Held) -> Iterable[tuple[Action, _Held]]:
        got = self.memo.get(s)
        if got is None:
            if len(self.memo) >= self.limit:  # forget (states held by a running replay stay valid)
                self.memo.clear()
                self.states.clear()
                self.views.clear()
            got = [(a, self._one(t)) for a, t in self.ts.successors(s.state)]
            self.memo[s] = got
        return got

    def properties(self) -> Sequence[AnyProperty]:
        return self.ts.properties()

    def encode(self, s: _Held) -> bytes:
        return self.ts.encode(s.state)

    def decode(self, b: bytes) -> _Held:
        return self._one(self.ts.decode(b))

    def view(self, s: _Held) -> Mapping[str, object]:
        return self.ts.view(s.state)


# Per Python worker (Spark reuses them from task to task): the run's caches, kept across its tasks and
# waves. Keyed by a token per run, so a run never sees another's (a test replays on a mutated reference).
_WORKER: dict[str, Any] = {}


def _caches(token: str, ts: TransitionSystem[Any]) -> tuple[Remembering, TraceReader]:
    if _WORKER.get("token") != token:
        _WORKER.clear()
        _WORKER.update(token=token, reader=TraceReader())
    # The system rebuilt by this task, with the worker's memo of successors if there is one (the states
    # the views cache holds are that memo's objects).
    remembering = Remembering(ts)
    if "memo" in _WORKER:
        remembering.adopt(_WORKER["memo"])
    _WORKER["memo"] = remembering
    reader: TraceReader = _WORKER["reader"]
    return remembering, reader


def _replayer(protocol: str, config: Any, actions: tuple[str, ...], token: str
              ) -> Callable[[Iterator[tuple[int, str]]], Iterator[Row]]:
    """The task: rebuild the reference once, then read and replay each of its traces."""

    def replay(items: Iterator[tuple[int, str]]) -> Iterator[Row]:
        ts, reader = _caches(token, build_system(protocol, config))
        for trace_id, path in items:
            name = Path(path).name
            try:
                steps, targets = reader.read(Path(path))
            except Exception as exc:  # a file TLC did not finish, or text the parser does not know
                yield trace_id, name, 0, False, None, [], f"cannot read {path}: {exc}"[:MESSAGE_CHARS], True
                continue
            _trace, div = replay_spec_trace(ts, steps, f"trace {trace_id}", actions, views=ts.views, targets=targets)
            if div is None:
                yield trace_id, name, len(steps), True, None, [], None, False
            else:
                yield (trace_id, name, len(steps), False, div.step, sorted(div.differences),
                       div.message[:MESSAGE_CHARS], False)

    return replay


def _schema() -> Any:
    from pyspark.sql.types import (
        ArrayType,
        BooleanType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    return StructType([StructField("trace", LongType(), False), StructField("file", StringType(), False),
                       StructField("length", IntegerType(), False), StructField("ok", BooleanType(), False),
                       StructField("divergent_step", IntegerType(), True),
                       StructField("variables", ArrayType(StringType(), False), False),
                       StructField("message", StringType(), True)])


def conform_spark(protocol: str, spec_config: Any, spark: Any, out_dir: Path, *, config_name: str, traces: int,
                  depth: int = 30, seed: int = 0, timeout: float = 1800.0, reference_config: Any = None,
                  partitions: int | None = None, tlc_workers: int | None = None, keep_traces: bool = False,
                  progress: Progress | None = None) -> SparkConformResult:
    """Generate ``traces`` TLC simulation traces of the spec on ``spec_config`` and replay each on the
    reference built from ``reference_config`` (default: the same config) on Spark; write the verdicts
    (``verdicts.parquet``) and the summary (``conform-summary.json``) into ``out_dir``. Paths in the result
    (the Parquet, TLC's output, the divergent traces as ITF) are relative to ``out_dir``.

    Ctrl-C: the summary is written marked ``partial`` with the waves replayed so far, then the interrupt
    goes on."""
    say = progress or (lambda _m: None)
    binding = binding_for(protocol)
    spec_ts = build_system(protocol, spec_config)
    ref_config = spec_config if reference_config is None else reference_config
    sc = spark.sparkContext
    workers = tlc_workers or max(1, os.cpu_count() or 1)
    result = SparkConformResult(protocol, config_name, getattr(spec_config, "profile", ""), traces, depth, seed,
                                master=sc.master, default_parallelism=sc.defaultParallelism, tlc_workers=workers,
                                apalache=apalache_note())
    out_dir.mkdir(parents=True, exist_ok=True)
    tlc_dir = out_dir / "tlc"
    scratch = None if keep_traces else memory_scratch(traces * depth * STATE_BYTES)
    if scratch is not None:  # TLC writes its trace files there through tlc/sim, a symbolic link
        tlc_dir.mkdir(parents=True, exist_ok=True)
        (tlc_dir / "sim").symlink_to(scratch, target_is_directory=True)
    result.trace_files = str(scratch or tlc_dir / "sim")
    rows: list[Row] = []
    t0 = time.perf_counter()
    try:
        say(f"TLC writing {traces:,} simulation traces of depth {depth} ({workers} worker(s))")
        files, res = tlc_simulation_files(binding, spec_ts, tlc_dir, traces=traces, depth=depth, seed=seed,
                                          timeout=timeout, workers=workers)
        result.generation_seconds = time.perf_counter() - t0
        result.generated = len(files)
        result.tlc = {"seconds": round(res.elapsed, 2), "error": res.error,
                      "output": str((tlc_dir / "tlc-output.txt").relative_to(out_dir))}
        if res.error:
            result.error = f"TLC (simulation): {res.error}"
        elif len(files) < traces:
            result.error = f"TLC wrote {len(files):,} trace files of the {traces:,} asked for"
        else:
            replay = _replayer(protocol, ref_config, binding.actions, uuid.uuid4().hex)
            _replay_waves(result, rows, spark, replay, files, partitions, say)
            _write_verdicts(result, rows, spark, out_dir)
        _finish(result, out_dir, tlc_dir, keep_traces=keep_traces, write_itf=True)
    except BaseException as exc:
        if interruption(exc) is None:
            raise
        result.partial = True
        if not result.generated:
            result.generation_seconds = time.perf_counter() - t0
        _finish(result, out_dir, tlc_dir, keep_traces=keep_traces, write_itf=False)
        _write_partial_verdicts(rows, out_dir)
        raise
    finally:
        if scratch is not None:  # never left in memory, whatever happened
            shutil.rmtree(scratch, ignore_errors=True)
    return result


def memory_scratch(needed: int) -> Path | None:
    """A fresh folder in ``/dev/shm`` (memory) for TLC's trace files when it has room for ``needed`` bytes
    twice over, else None (they go under the run's directory). Removing 100,000 files from this machine's
    disk took 243 s, longer than replaying them; from memory it is instant. Folders left by runs that were
    killed (their process is gone) are removed first."""
    shm = Path("/dev/shm")
    try:
        if not shm.is_dir():
            return None
        for old in shm.glob(f"{SCRATCH}*"):
            pid = old.name[len(SCRATCH):].split("-", 1)[0]
            if pid.isdigit() and not process_alive(int(pid)):
                shutil.rmtree(old, ignore_errors=True)
        if shutil.disk_usage(shm).free < 2 * needed:
            return None
        return Path(tempfile.mkdtemp(prefix=f"{SCRATCH}{os.getpid()}-", dir=shm))
    except OSError:
        return None


def _replay_waves(result: SparkConformResult, rows: list[Row], spark: Any, replay: Any, files: Sequence[Path],
                  partitions: int | None, say: Progress) -> None:
    """Replay ``files`` in waves (one Spark job each), adding their verdicts to ``rows``."""
    sc = spark.sparkContext
    tasks = partitions or max(1, sc.defaultParallelism)
    result.tasks_per_wave = tasks
    size = max(WAVE_MIN, -(-len(files) // WAVES))
    folder = files[0].parent.resolve() if files else Path()  # TLC writes them all in one (maybe in memory)
    t0 = time.perf_counter()
    for start in range(0, len(files), size):
        wave = [(i, str(folder / files[i].name)) for i in range(start, min(start + size, len(files)))]
        tw = time.perf_counter()
        got: list[Row] = sc.parallelize(wave, min(tasks, len(wave))).mapPartitions(replay).collect()
        got.sort(key=lambda r: r[0])
        rows += got
        result.waves += 1
        result.wave_log.append({"traces": len(wave), "seconds": round(time.perf_counter() - tw, 2)})
        _count(result, got)
        result.replay_seconds = time.perf_counter() - t0
        say(f"replayed {result.replayed:,} / {len(files):,} traces, {result.divergent:,} divergent "
            f"({result.replayed / max(result.replay_seconds, 1e-9):,.0f} traces/s)")
    result.replay_seconds = time.perf_counter() - t0


def _write_verdicts(result: SparkConformResult, rows: Sequence[Row], spark: Any, out_dir: Path) -> None:
    """One Parquet write at the end: appending wave by wave cost 1-5 s a wave here (even for 2,000 rows,
    and growing as the run went on), a single write of 100,000 rows a few seconds."""
    t0 = time.perf_counter()
    df = spark.createDataFrame([r[:7] for r in rows], _schema(), verifySchema=False)  # rows made to fit it
    df.coalesce(1).write.mode("overwrite").parquet(str(out_dir / VERDICTS))
    result.parquet = VERDICTS
    result.parquet_seconds = time.perf_counter() - t0


def _write_partial_verdicts(rows: Sequence[Row], out_dir: Path) -> None:
    """An interrupted run's verdicts, as JSON lines with the Parquet's columns: quick and without Spark (a
    second interrupt follows within seconds)."""
    lines = [json.dumps(dict(zip(COLUMNS, r[:7], strict=True))) for r in rows]
    write_text_atomic(out_dir / PARTIAL_VERDICTS, "\n".join(lines) + ("\n" if lines else ""))


def _count(result: SparkConformResult, got: Sequence[Row]) -> None:
    for trace_id, name, length, ok, step, variables, message, unreadable in got:
        result.replayed += 1
        result.steps += length
        if unreadable:
            result.unreadable += 1
            if not result.error:
                result.error = message or f"cannot read {name}"
        elif not ok:
            result.divergent += 1
            if len(result.divergences) < DIVERGENT_ITF:
                result.divergences.append({"trace": trace_id, "file": name, "length": length, "step": step,
                                           "variables": variables, "message": message})


def _finish(result: SparkConformResult, out_dir: Path, tlc_dir: Path, *, keep_traces: bool, write_itf: bool) -> None:
    """The divergent traces as ITF, the trace files removed unless kept, and the summary (an interrupted
    run writes the summary first: it must be on disk before a second Ctrl-C)."""
    if not write_itf:
        write_json_atomic(out_dir / SUMMARY, result.to_json())
    if write_itf and result.divergences:
        binding = binding_for(result.protocol)
        for d in result.divergences:
            steps = parse_simulation_trace(tlc_dir / "sim" / d["file"])
            doc = spec_trace_to_itf(steps, module=binding.module,
                                    description=f"TLC simulation trace {d['trace']} ({d['file']}): it diverges "
                                    f"from the reference at step {d['step']}: {d['message']}")
            path = out_dir / "divergent" / f"trace-{d['trace']}.itf.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(path, doc)
            result.divergent_itf.append(str(path.relative_to(out_dir)))
    if not keep_traces:
        t0 = time.perf_counter()
        sim = tlc_dir / "sim"
        if sim.is_symlink():
            shutil.rmtree(sim.resolve(), ignore_errors=True)
            sim.unlink()
        else:
            shutil.rmtree(sim, ignore_errors=True)
        result.cleanup_seconds = time.perf_counter() - t0
    write_json_atomic(out_dir / SUMMARY, result.to_json())
