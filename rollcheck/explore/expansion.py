"""Expanding one chunk of a BFS frontier, in this process or in forked worker processes.

A chunk is a run of consecutive frontier positions. Its expansion generates every labelled successor,
checks the step properties on every edge and the invariants on every successor that is new (neither in
the visited set as it stood when the level began nor generated earlier in the chunk), and returns the new
candidates as fingerprints, ``(parent position, successor index)`` pairs and pickled states (and, when
the run is checkpointed, each state's canonical encoding, which is what goes to disk). Nothing in a
chunk's result depends on how the level was cut into chunks: the explorer merges the results in chunk
order, which is exactly the order a single process would have found them in, so counts, violations and
counterexamples are the same for any number of workers.

Workers are forked once per level (``fork`` shares the visited set and the frontier with them at no cost,
and they inherit the interpreter's hash seed, so their fingerprints agree with the parent's).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import traceback
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rollcheck.core.fingerprint import FingerprintSet, fingerprinter
from rollcheck.core.transition import Action, Invariant, StepProperty, TransitionSystem, Witness
from rollcheck.explore.graphcheck import MarkColumns
from rollcheck.runtime.forking import start_worker, worker_signals

FLUSH = 2048  # successors looked up in the visited set at once (vectorized)

# Violation keys sort as (parent position, successor index, 0 = invariant / 1 = step, property order):
# the order in which a single process meets them.
ViolationKey = tuple[int, int, int, int]


@dataclass
class Segment:
    """Consecutive frontier states pickled together, in memory (between this process and its workers or
    Spark's executors; never read from disk); ``keep`` masks the items that belong to the frontier (a merge
    may drop candidates that another chunk found first). ``codes``: the items' canonical encodings
    (:mod:`rollcheck.core.codec`) back to back, ``code_ends`` where each ends, made where the states were found
    when the run is checkpointed, so that the checkpoint writes them without decoding the pickle."""

    items: int
    keep: np.ndarray | None = None
    blob: bytes | None = None
    codes: bytes | None = None
    code_ends: np.ndarray | None = None

    @property
    def size(self) -> int:
        return self.items if self.keep is None else int(self.keep.sum())

    def raw(self) -> bytes:
        assert self.blob is not None
        return self.blob

    def load(self) -> list[Any]:
        states: list[Any] = pickle.loads(self.raw())
        if self.keep is None:
            return states
        return [s for s, k in zip(states, self.keep.tolist(), strict=True) if k]

    def kept_codes(self) -> tuple[bytes, np.ndarray]:
        """The encodings of the items that belong to the frontier, back to back, and their lengths."""
        assert self.codes is not None and self.code_ends is not None
        ends = self.code_ends
        lengths = np.diff(ends, prepend=0)
        if self.keep is None or bool(self.keep.all()):
            return self.codes, lengths
        idx = np.flatnonzero(self.keep)
        view = memoryview(self.codes)
        data = b"".join(view[a:b] for a, b in zip((ends - lengths)[idx].tolist(), ends[idx].tolist(), strict=True))
        return data, lengths[idx]


def encode_all(encode: Callable[[Any], bytes], states: Sequence[Any]) -> tuple[bytes, np.ndarray]:
    """The states' encodings back to back and where each ends (``Segment.codes``, ``Segment.code_ends``)."""
    encoded = [encode(t) for t in states]
    return b"".join(encoded), np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)))


@dataclass
class ChunkResult:
    base: int  # frontier position of the chunk's first state
    counts: np.ndarray  # successors of each expanded state (the last one partial if the chunk stopped)
    cand_fp: np.ndarray  # uint64, candidates in discovery order
    cand_pos: np.ndarray  # uint32 parent positions
    cand_k: np.ndarray  # uint32 successor indices
    segments: list[Segment]  # the candidates' states, in order
    violations: list[tuple[ViolationKey, str, str]]  # (key, property id, kind)
    action_counts: dict[str, int]
    edge_fp: np.ndarray | None = None  # graph mode: every successor's fingerprint, in order
    edge_code: np.ndarray | None = None  # graph mode: index into ``actions``
    cand_marks: np.ndarray | None = None  # graph mode: the graph properties' predicates on each candidate
    actions: list[Action] = field(default_factory=list)
    # Witnesses first met in this chunk: id -> (parent position, successor index) of the first new state
    # that satisfies it (the chunk's discovery order).
    witnessed: dict[str, tuple[int, int]] = field(default_factory=dict)
    codec_error: str | None = None  # encoding a candidate for the checkpoint failed (``Expander.encode``)


@dataclass
class Expander:
    """What a level's chunks share: the system, the properties still to check, the visited set."""

    ts: TransitionSystem[Any]
    invariants: Sequence[Invariant[Any]]
    step_properties: Sequence[StepProperty[Any]]
    key: Callable[[Any], Hashable] | None  # symmetry: states with equal keys are one orbit
    visited: FingerprintSet
    stop_at_first: bool
    marks: MarkColumns | None  # graph mode: keep every edge and evaluate these on every new state
    witnesses: Sequence[Witness[Any]] = ()  # the witnesses not reached yet: evaluated on new states
    encode: bool = False  # checkpointed run: encode every candidate (``Segment.codes``) here, in parallel

    def fingerprint(self, state: Any) -> int:
        return fingerprinter(self.key)(state)

    def expand(self, states: Sequence[Any], base: int) -> ChunkResult:
        successors = self.ts.successors
        fingerprint = fingerprinter(self.key)
        stop = self.stop_at_first
        invariants = list(enumerate(self.invariants))
        steps = list(enumerate(self.step_properties))
        done: set[str] = set()  # properties already violated in this chunk (collect-all mode)
        violations: list[tuple[ViolationKey, str, str]] = []
        seen: set[int] = set()
        counts: list[int] = []
        pend_fp: list[int] = []
        pend_pos: list[int] = []
        pend_k: list[int] = []
        pend_t: list[Any] = []
        out_fp: list[np.ndarray] = []
        out_pos: list[np.ndarray] = []
        out_k: list[np.ndarray] = []
        segments: list[Segment] = []
        names: dict[str, int] = {}
        marks = self.marks
        edge_fp: list[int] | None = [] if marks is not None else None
        out_marks: list[np.ndarray] = []
        edge_code: list[int] = []
        codes: dict[Action, int] = {}
        actions: list[Action] = []
        witnesses = list(self.witnesses)
        witnessed: dict[str, tuple[int, int]] = {}
        encode = self.ts.encode if self.encode else None
        codec_error: list[str] = []

        def flush() -> bool:
            """Keep the pending successors that are not visited; check invariants on them. True: stop."""
            if not pend_fp:
                return False
            fps = np.fromiter(pend_fp, dtype=np.uint64, count=len(pend_fp))
            fresh = np.flatnonzero(~self.visited.contains(fps))
            cut = len(fresh)
            if invariants:
                for n, i in enumerate(fresh.tolist()):
                    t = pend_t[i]
                    bad = False
                    for order, p in invariants:
                        if p.id not in done and not p.predicate(t):
                            violations.append(((pend_pos[i], pend_k[i], 0, order), p.id, "invariant"))
                            bad = True
                    if bad:
                        if stop:
                            cut = n + 1
                            break
                        done.update(v[1] for v in violations)
            fresh = fresh[:cut]
            if witnesses:  # each is evaluated only until a state satisfies it
                for i in fresh.tolist():
                    t = pend_t[i]
                    for w in [w for w in witnesses if w.predicate(t)]:
                        witnessed[w.id] = (pend_pos[i], pend_k[i])
                        witnesses.remove(w)
                    if not witnesses:
                        break
            if fresh.size:
                out_fp.append(fps[fresh])
                out_pos.append(np.asarray(pend_pos, dtype=np.uint32)[fresh])
                out_k.append(np.asarray(pend_k, dtype=np.uint32)[fresh])
                chosen = [pend_t[i] for i in fresh.tolist()]
                if marks is not None:
                    out_marks.append(marks.evaluate(chosen))
                seg = Segment(len(chosen), blob=pickle.dumps(chosen, protocol=pickle.HIGHEST_PROTOCOL))
                if encode is not None and not codec_error:
                    try:
                        seg.codes, seg.code_ends = encode_all(encode, chosen)
                    except Exception as exc:  # the explorer refuses to checkpoint, in one line naming it
                        codec_error.append(f"{type(exc).__name__}: {exc}")
                segments.append(seg)
            pend_fp.clear()
            pend_pos.clear()
            pend_k.clear()
            pend_t.clear()
            return stop and bool(violations)

        stopped = False
        for off, s in enumerate(states):
            pos = base + off
            k = 0
            for a, t in successors(s):
                names[a.name] = names.get(a.name, 0) + 1
                f = fingerprint(t)
                if edge_fp is not None:
                    code = codes.get(a)
                    if code is None:
                        code = codes[a] = len(actions)
                        actions.append(a)
                    edge_fp.append(f)
                    edge_code.append(code)
                step_bad = False
                for order, p in steps:
                    if p.id not in done and not p.predicate(s, a, t):
                        violations.append(((pos, k, 1, order), p.id, "step"))
                        step_bad = True
                if f not in seen:
                    seen.add(f)
                    pend_fp.append(f)
                    pend_pos.append(pos)
                    pend_k.append(k)
                    pend_t.append(t)
                k += 1
                if step_bad:
                    if stop:
                        # The successor's own invariants come first (a single process checks a new state
                        # before the edge that reached it): flush, then stop at this successor.
                        flush()
                        stopped = True
                        break
                    done.update(v[1] for v in violations)
                if len(pend_fp) >= FLUSH and flush():
                    stopped = True
                    break
            counts.append(k)
            if stopped:
                break
        if not stopped:
            flush()
        if stop and violations:
            first = min(v[0] for v in violations)
            violations = [v for v in violations if v[0][:2] == first[:2]]
        return ChunkResult(
            base=base,
            counts=np.asarray(counts, dtype=np.uint32),
            cand_fp=_cat(out_fp, np.uint64),
            cand_pos=_cat(out_pos, np.uint32),
            cand_k=_cat(out_k, np.uint32),
            segments=segments,
            violations=violations,
            action_counts=names,
            edge_fp=None if edge_fp is None else np.asarray(edge_fp, dtype=np.uint64),
            edge_code=None if edge_fp is None else np.asarray(edge_code, dtype=np.uint32),
            actions=actions,
            witnessed=witnessed,
            codec_error=codec_error[0] if codec_error else None,
            cand_marks=None if marks is None else (
                np.concatenate(out_marks) if out_marks else np.zeros((0, len(marks.predicates)), dtype=bool)),
        )


def _cat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


@dataclass(frozen=True)
class Chunk:
    base: int
    segments: tuple[Segment, ...]

    def states(self) -> list[Any]:
        out: list[Any] = []
        for seg in self.segments:
            out.extend(seg.load())
        return out


def plan_chunks(segments: Sequence[Segment], workers: int, per_worker: int = 4) -> list[Chunk]:
    """Cut the frontier into chunks of whole segments, about ``per_worker`` per worker (for balance)."""
    total = sum(seg.size for seg in segments)
    if workers <= 1:
        return [Chunk(0, tuple(segments))] if total else []
    target = max(256, -(-total // (workers * per_worker)))
    chunks: list[Chunk] = []
    current: list[Segment] = []
    base = size = 0
    for seg in segments:
        if not seg.size:
            continue
        current.append(seg)
        size += seg.size
        if size >= target:
            chunks.append(Chunk(base, tuple(current)))
            base += size
            current, size = [], 0
    if current:
        chunks.append(Chunk(base, tuple(current)))
    return chunks


class WorkerFailed(RuntimeError):
    """A worker process died or raised: the level cannot be completed."""


def expand_level(expander: Expander, chunks: Sequence[Chunk], workers: int) -> list[ChunkResult]:
    """Expand every chunk; results in chunk order. One process when ``workers`` is 1."""
    if workers <= 1 or len(chunks) <= 1:
        return [expander.expand(c.states(), c.base) for c in chunks]
    ctx = multiprocessing.get_context("fork")
    n = min(workers, len(chunks))
    # Without this a worker's garbage collector walks every object inherited from the parent (the graph's
    # states, say), which writes to their pages and makes the kernel copy them all.
    gc.freeze()
    procs = []
    conns = []
    for w in range(n):
        mine = list(range(w, len(chunks), n))  # interleaved: the heavy and light parts of a level spread
        recv, send = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_worker, args=(expander, [chunks[i] for i in mine], mine, send), daemon=True)
        start_worker(p)
        send.close()
        procs.append(p)
        conns.append(recv)
    results: list[ChunkResult | None] = [None] * len(chunks)
    try:
        for w, conn in enumerate(conns):
            try:
                payload = conn.recv_bytes()
            except EOFError:
                procs[w].join(5)
                raise WorkerFailed(f"explorer worker {w} died (exit code {procs[w].exitcode}); "
                                   "out of memory? try --workers 1 or a smaller config") from None
            status, body = pickle.loads(payload)
            if status == "error":
                raise WorkerFailed(f"explorer worker {w} failed:\n{body}")
            for i, r in body:
                results[i] = r
    finally:
        for conn in conns:
            conn.close()
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join(5)
        gc.unfreeze()
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


def _worker(expander: Expander, chunks: list[Chunk], indices: list[int], conn: Any) -> None:
    # Not the command's handlers (inherited through fork): Ctrl-C is the parent's to handle, and the
    # parent's terminate() ends a worker at once, silently.
    worker_signals()
    try:
        out = [(i, expander.expand(c.states(), c.base)) for i, c in zip(indices, chunks, strict=True)]
        payload = pickle.dumps(("ok", out), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:  # reported to the parent, which raises it there
        payload = pickle.dumps(("error", traceback.format_exc()))
    try:
        conn.send_bytes(payload)
    finally:
        conn.close()
    os._exit(0)  # skip the parent's atexit handlers (pytest, Spark) inherited through fork

