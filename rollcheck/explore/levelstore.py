"""What the explorer remembers of each BFS level, and its checkpoint on disk.

Per level, in frontier order: each state's fingerprint and its parent pointer (the parent's position in
the previous level and the index of the successor that reached it), 16 bytes a state. That is enough to
rebuild any shortest counterexample exactly (replay from an initial state, checking every fingerprint) and,
at ``--resume``, to rebuild the visited set. With a directory the arrays are files (read back memory-mapped,
so they cost no memory until a trace is rebuilt) and the run is a checkpoint: after each completed level a
manifest is replaced atomically, naming every file with its row count and SHA-256, and the frontier of the
last level is written beside it as the states' canonical encodings (:mod:`rollcheck.core.codec`, never pickle:
nothing read back from disk can run code).

A resume trusts nothing it has not checked, and refuses in one line naming the checkpoint:

* every file is opened without following a symbolic link, and a link planted in the directory (or the
  directory itself a link, or a file) is refused before anything is read or written;
* the manifest carries the SHA-256 of its own canonical content (``digest``); its levels are exactly
  ``0..level`` in order, and every file it names is the plain name the writer makes for that level (a
  name with ``/`` or ``..`` is never opened);
* the totals agree with the levels (each level's frontier size is its files' rows, the distinct count the
  running sum, the transitions the sum of the action counts), every recorded violation and witness points
  at a state of a level, every parent pointer at a state of the level before;
* every file matches its row count and SHA-256; the frontier's states decode, and their fingerprints are
  the last level's, in order.

Format ``rollcheck-local-checkpoint/2`` (``manifest.json``)::

    {"format": ..., "key": {protocol, config, profile, variant, symmetry, config_repr}, "hash_probe": int,
     "level": L,
     "levels": [{"level": l, "states": n, "fps": {file, rows, sha256}, "parents": {file, rows, sha256}}],
     "frontier": {"states": n, "data": {file, sha256}, "index": {file, rows, sha256}},
     "totals": {...}, "digest": sha256}

``frontier-L.bin`` holds the frontier's encodings back to back; ``frontier-L.index.npy`` their ``n + 1``
offsets (int64).
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import math
import os
import pickle
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from rollcheck.core.errors import UserError
from rollcheck.core.fingerprint import hash_probe
from rollcheck.explore.expansion import Segment
from rollcheck.runtime.safefs import make_dirs, open_nofollow, refuse_link

FORMAT = "rollcheck-local-checkpoint/2"
MANIFEST = "manifest.json"
MANIFEST_TMP = "manifest.tmp"
MAX_MANIFEST_BYTES = 1 << 28  # a manifest is a few hundred bytes a level: far below this
FRONTIER_SEGMENT = 2048  # states per in-memory segment of a resumed frontier (what the workers share out)

# The only names a manifest may give: plain names of its own directory, of the forms the writer makes.
_MEMBER = re.compile(r"level-[0-9]{5,}\.(?:fps|parents)\.npy|frontier-[0-9]{5,}\.(?:bin|index\.npy)")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_FOUND_KEYS = {"property_id", "kind", "description", "level", "pos", "k"}
_STATS_KEYS = {"level", "frontier", "distinct", "generated", "elapsed"}


def level_file(level: int, part: str) -> str:
    return f"level-{level:05d}.{part}.npy"


def frontier_file(level: int, part: str) -> str:
    return f"frontier-{level:05d}.bin" if part == "data" else f"frontier-{level:05d}.index.npy"


def _ours(name: str) -> bool:
    """A name this module writes into a checkpoint directory (or did, in an earlier format)."""
    return name in (MANIFEST, MANIFEST_TMP) or name.startswith(("level-", "frontier-"))


def _count(x: Any) -> bool:
    return type(x) is int and x >= 0


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) and x >= 0


def _open_read(path: Path) -> IO[bytes]:
    """A regular file opened for reading without following a link (a FIFO does not block it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_link(path)
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UserError(f"{path} is not a regular file; delete {path.parent} to start afresh, or drop --resume")
    return os.fdopen(fd, "rb")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with _open_read(path) as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _create(path: Path, mode: str = "wb") -> IO[Any]:
    """A new file at ``path``, opened without following a link: a symbolic link there is refused; an earlier
    file is removed first, so that a hard link planted under its name is never written through either."""
    refuse_link(path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    return open_nofollow(path, mode, exclusive=True)


def _save_array(path: Path, arr: np.ndarray) -> dict[str, Any]:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    data = buf.getvalue()
    with _create(path) as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return {"file": path.name, "rows": int(arr.shape[0]), "sha256": hashlib.sha256(data).hexdigest()}


def manifest_digest(doc: dict[str, Any]) -> str:
    """The SHA-256 of a manifest's canonical JSON, its ``digest`` left out."""
    body = {k: v for k, v in doc.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class LevelStore:
    """Fingerprints and parent pointers per level, in memory or (with a directory) in files."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory
        self._fps: list[np.ndarray] = []
        self._parents: list[np.ndarray] = []  # shape (n, 2): parent position, successor index
        self._entries: list[dict[str, Any]] = []

    def __len__(self) -> int:
        return len(self._fps)

    def append(self, fps: np.ndarray, parent_pos: np.ndarray, succ_k: np.ndarray) -> None:
        level = len(self._fps)
        parents = np.stack([parent_pos.astype(np.uint32), succ_k.astype(np.uint32)], axis=1)
        fps = fps.astype(np.uint64)
        if self.directory is None:
            self._fps.append(fps)
            self._parents.append(parents)
            return
        f = _save_array(self.directory / level_file(level, "fps"), fps)
        p = _save_array(self.directory / level_file(level, "parents"), parents)
        self._entries.append({"level": level, "states": int(fps.shape[0]), "fps": f, "parents": p})
        self._fps.append(np.load(self.directory / f["file"], mmap_mode="r", allow_pickle=False))
        self._parents.append(np.load(self.directory / p["file"], mmap_mode="r", allow_pickle=False))

    def fps(self, level: int) -> np.ndarray:
        return self._fps[level]

    def parent(self, level: int, pos: int) -> tuple[int, int]:
        row = self._parents[level][pos]
        return int(row[0]), int(row[1])

    def sizes(self) -> list[int]:
        return [int(a.shape[0]) for a in self._fps]

    def all_fps(self) -> np.ndarray:
        return np.concatenate([np.asarray(a) for a in self._fps]) if self._fps else np.zeros(0, np.uint64)

    @property
    def entries(self) -> list[dict[str, Any]]:
        return self._entries

    def load_verified(self, entries: list[dict[str, Any]]) -> None:
        """Resume: read the levels a manifest names (already checked by :meth:`Checkpoint.load`), refusing
        any file whose rows, checksum, type or parent pointers are not what they must be."""
        assert self.directory is not None
        for e in entries:
            lv = e["level"]
            arrays = []
            for part, dtype, width in (("fps", np.uint64, 1), ("parents", np.uint32, 2)):
                meta = e[part]
                path = self.directory / meta["file"]
                _verify(path, meta, f"level {lv}")
                try:
                    arr = np.load(path, mmap_mode="r", allow_pickle=False)
                except (OSError, ValueError) as exc:
                    raise UserError(f"checkpoint level {lv} is damaged: {path} is not an array ({exc}); "
                                    f"delete {self.directory} to start afresh") from None
                if arr.shape[0:1] != (meta["rows"],):
                    raise UserError(f"checkpoint level {lv} is damaged: {path} has {arr.shape[0:1]} rows, "
                                    f"the manifest says {meta['rows']}; delete {self.directory} to start afresh")
                if arr.dtype != dtype or arr.ndim != width or (width == 2 and arr.shape[1] != 2):
                    raise UserError(f"checkpoint level {lv} is damaged: {path} holds {arr.dtype} {arr.shape}; "
                                    f"delete {self.directory} to start afresh")
                arrays.append(arr)
            if lv and arrays[1].shape[0] and int(np.asarray(arrays[1][:, 0]).max()) >= self._fps[-1].shape[0]:
                raise UserError(f"checkpoint level {lv} is damaged: a parent pointer points past level {lv - 1}; "
                                f"delete {self.directory} to start afresh")
            self._fps.append(arrays[0])
            self._parents.append(arrays[1])
            self._entries.append(e)


def _verify(path: Path, meta: dict[str, Any], what: str) -> None:
    if not os.path.lexists(path):
        raise UserError(f"checkpoint {what} is missing: {path}; delete {path.parent} to start afresh")
    if _sha256(path) != meta["sha256"]:
        raise UserError(f"checkpoint {what} is damaged: {path} does not match its SHA-256 in the manifest; "
                        f"delete {path.parent} to start afresh")


@dataclass
class ResumePoint:
    level: int  # the last completed level
    frontier: list[Segment]
    totals: dict[str, Any]


class Checkpoint:
    """The manifest and the last frontier of a local exploration in ``directory``. ``root`` is the user's
    directory it lies under (``--out``; default: its parent): every directory below ``root`` down to it is
    made, or must be, a real directory, never a link."""

    def __init__(self, directory: Path, key: dict[str, Any], root: Path | None = None) -> None:
        self.directory = directory
        self.key = key
        self.root = directory.parent if root is None else root

    @property
    def manifest_path(self) -> Path:
        return self.directory / MANIFEST

    def _present(self) -> bool:
        """Is the directory there? A link or a file in its place, or a link planted inside it under a name
        this module writes or reads, is refused in one line; so is a link between ``root`` and it."""
        try:
            parts, at = self.directory.relative_to(self.root).parts, self.root
        except ValueError:
            parts, at = (self.directory.name,), self.directory.parent
        for part in parts:
            at = at / part
            try:
                mode = os.lstat(at).st_mode
            except (FileNotFoundError, NotADirectoryError):
                return False
            refuse_link(at)
            if not stat.S_ISDIR(mode):
                what = "the checkpoint directory" if at == self.directory else \
                    f"the checkpoint directory {self.directory} cannot be made:"
                raise UserError(f"{what} {at} exists and is not a directory: remove it, or pick another --out")
        with os.scandir(self.directory) as it:
            for entry in it:
                if _ours(entry.name) and entry.is_symlink():
                    refuse_link(entry.path)
        return True

    def exists(self) -> bool:
        if not self._present():
            return False
        try:
            mode = os.lstat(self.manifest_path).st_mode
        except FileNotFoundError:
            return False
        if not stat.S_ISREG(mode):
            raise self.damaged(f"{MANIFEST} is not a regular file")
        return True

    def clear(self) -> None:
        """Start afresh: remove the files of an earlier checkpoint (never through a link)."""
        self._present()
        make_dirs(self.directory, root=self.root)
        with os.scandir(self.directory) as it:
            for entry in it:
                if _ours(entry.name) and entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)

    def damaged(self, why: str) -> UserError:
        return UserError(f"the checkpoint in {self.directory} is damaged: {why}; delete it to start afresh, "
                         "or drop --resume")

    def _read_manifest(self) -> Any:
        try:
            with _open_read(self.manifest_path) as fh:
                raw = fh.read(MAX_MANIFEST_BYTES + 1)
        except OSError as exc:
            raise UserError(f"checkpoint manifest {self.manifest_path} is unreadable ({exc.strerror}); delete "
                            f"{self.directory} to start afresh") from None
        if len(raw) > MAX_MANIFEST_BYTES:
            raise self.damaged(f"its manifest is over {MAX_MANIFEST_BYTES >> 20} MiB")
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise UserError(f"checkpoint manifest {self.manifest_path} is unreadable ({why}); delete "
                            f"{self.directory} to start afresh") from None

    def load(self, store: LevelStore, decode: Callable[[bytes], Any],
             fingerprint: Callable[[Any], int]) -> ResumePoint:
        """Check the whole checkpoint (see the module's docstring), load its levels into ``store`` and return
        the last level's frontier, decoded with ``decode`` and checked against its fingerprints."""
        self._present()
        doc = self._read_manifest()
        if not isinstance(doc, dict):
            raise self.damaged("its manifest is not a JSON object")
        fmt = doc.get("format")
        if fmt != FORMAT:
            raise UserError(f"{self.manifest_path} is not a checkpoint of this rollcheck (format "
                            f"{str(fmt)[:60]!r}, expected {FORMAT!r}); delete {self.directory} to start afresh, "
                            "or drop --resume")
        key = doc.get("key")
        if not isinstance(key, dict):
            raise self.damaged("its manifest has no key")
        if key != self.key:
            diff = sorted(str(k)[:40] for k in set(self.key) | set(key) if self.key.get(k) != key.get(k))
            raise UserError(f"the checkpoint in {self.directory} is of another run (it differs in: "
                            f"{', '.join(diff)}); use another --out or drop --resume")
        if doc.get("hash_probe") != hash_probe():
            raise UserError(f"the checkpoint in {self.directory} was written by a process that hashes states "
                            "differently (another PYTHONHASHSEED, or address randomization on Python 3.11); "
                            "resume it through the rollcheck command, which fixes both")
        level, entries, fr = self._structure(doc)
        if doc.get("digest") != manifest_digest(doc):
            raise self.damaged("its manifest does not match its own digest (it was edited)")
        self._check_totals(doc.get("totals"), level, [e["states"] for e in entries])
        store.load_verified(entries)
        segments = self._frontier(fr, level, store, decode, fingerprint)
        return ResumePoint(level, segments, doc["totals"])

    def _structure(self, doc: dict[str, Any]) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
        """The level, the level entries and the frontier entry, each file name the one the writer makes."""
        level: Any = doc["level"] if "level" in doc else None
        if not _count(level):
            raise self.damaged("its manifest's 'level' is not a level number")
        entries = doc.get("levels")
        if isinstance(entries, list) and len(entries) != level + 1:
            raise self.damaged(f"its manifest lists {len(entries)} levels where its 'level' ({level}) needs "
                               f"{level + 1}")
        if not isinstance(entries, list) or any(
                not isinstance(e, dict) or e.get("level") != i or type(e.get("level")) is not int
                for i, e in enumerate(entries)):
            raise self.damaged(f"its manifest's levels are not exactly 0 to {level} in order")
        for i, e in enumerate(entries):
            if not _count(e.get("states")):
                raise UserError(f"checkpoint level {i} is damaged: no state count in the manifest; delete "
                                f"{self.directory} to start afresh")
            for part in ("fps", "parents"):
                self._member(e.get(part), level_file(i, part), f"level {i}", e["states"])
        fr = doc.get("frontier")
        if not isinstance(fr, dict) or fr.get("states") != entries[level]["states"]:
            raise self.damaged(f"its frontier is not the {entries[level]['states']:,} states of level {level}")
        self._member(fr.get("data"), frontier_file(level, "data"), f"frontier of level {level}", None)
        self._member(fr.get("index"), frontier_file(level, "index"), f"frontier index of level {level}",
                     entries[level]["states"] + 1)
        return level, entries, fr

    def _member(self, meta: Any, expected: str, what: str, rows: int | None) -> None:
        """A file entry of the manifest: the plain name the writer makes, its rows, a SHA-256."""
        if not isinstance(meta, dict):
            raise UserError(f"checkpoint {what} is damaged: no file entry in the manifest; delete "
                            f"{self.directory} to start afresh")
        name = meta.get("file")
        if not isinstance(name, str) or not _MEMBER.fullmatch(name) or name != expected:
            raise UserError(f"checkpoint {what} is damaged: the manifest names the file {str(name)[:80]!r}, "
                            f"not {expected} (a checkpoint names only its own files); delete {self.directory} "
                            "to start afresh, or drop --resume")
        if rows is not None and meta.get("rows") != rows:
            raise UserError(f"checkpoint {what} is damaged: the manifest gives {expected} "
                            f"{str(meta.get('rows'))[:20]} rows, not {rows}; delete {self.directory} to start afresh")
        if not isinstance(meta.get("sha256"), str) or not _SHA256.fullmatch(meta["sha256"]):
            raise UserError(f"checkpoint {what} is damaged: no SHA-256 for {expected} in the manifest; delete "
                            f"{self.directory} to start afresh")

    def _check_totals(self, totals: Any, level: int, sizes: list[int]) -> None:
        """The totals agree with the levels: what a resume takes from them cannot be off by a level."""
        if not isinstance(totals, dict):
            raise self.damaged("its manifest has no totals")
        stats = totals.get("levels")
        if not isinstance(stats, list) or len(stats) != level + 1:
            raise self.damaged(f"its totals do not list levels 0 to {level}")
        distinct = generated = 0
        for i, st in enumerate(stats):
            if not isinstance(st, dict) or set(st) != _STATS_KEYS or st["level"] != i \
                    or type(st["level"]) is not int:
                raise self.damaged(f"its totals for level {i} are malformed")
            if not _number(st["elapsed"]):
                raise self.damaged(f"its totals' elapsed time at level {i} is not a number")
            distinct += sizes[i]
            if st["frontier"] != sizes[i] or type(st["frontier"]) is not int:
                raise self.damaged(f"its totals give level {i} {str(st['frontier'])[:20]} states, its files "
                                    f"{sizes[i]:,}")
            if st["distinct"] != distinct or type(st["distinct"]) is not int:
                raise self.damaged(f"its totals give {str(st['distinct'])[:20]} distinct states up to level {i}, "
                                    f"its files {distinct:,}")
            if not _count(st["generated"]) or st["generated"] < generated or (i == 0 and st["generated"]):
                raise self.damaged(f"its totals' transitions at level {i} are not a running count")
            generated = st["generated"]
        counts = totals.get("action_counts")
        if totals.get("generated") != generated or not isinstance(counts, dict) \
                or not all(isinstance(k, str) and _count(n) for k, n in counts.items()) \
                or sum(counts.values()) != generated:
            raise self.damaged(f"its totals' transitions do not add up to {generated:,}")
        if not _count(totals.get("terminal")) or totals["terminal"] > sum(sizes[:-1]):
            raise self.damaged("its totals' terminal state count is not one of the expanded levels'")
        if not _number(totals.get("elapsed")):
            raise self.damaged("its totals' elapsed time is not a number")
        for name, kinds in (("found", ("invariant", "step", "graph")), ("witnessed", ("witness",))):
            items = totals.get(name)
            if not isinstance(items, list):
                raise self.damaged(f"its totals' {name} list is missing")
            for f in items:
                if not isinstance(f, dict) or set(f) != _FOUND_KEYS or f["kind"] not in kinds \
                        or not isinstance(f["property_id"], str) or not isinstance(f["description"], str) \
                        or not _count(f["level"]) or f["level"] > level or not _count(f["pos"]) \
                        or f["pos"] >= sizes[f["level"]] or not (f["k"] is None or _count(f["k"])):
                    raise self.damaged(f"a recorded {'witness' if name == 'witnessed' else 'violation'} "
                                        "does not point at a state of its levels")

    def _frontier(self, fr: dict[str, Any], level: int, store: LevelStore, decode: Callable[[bytes], Any],
                  fingerprint: Callable[[Any], int]) -> list[Segment]:
        what = f"frontier of level {level}"
        data_path = self.directory / fr["data"]["file"]
        index_path = self.directory / fr["index"]["file"]
        _verify(data_path, fr["data"], what)
        _verify(index_path, fr["index"], f"frontier index of level {level}")
        try:
            ends = np.load(index_path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise self.damaged(f"{index_path.name} is not an array ({exc})") from None
        with _open_read(data_path) as fh:
            data = fh.read()
        n = fr["states"]
        if ends.dtype != np.int64 or ends.shape != (n + 1,) or int(ends[0]) != 0 or int(ends[-1]) != len(data) \
                or bool((np.diff(ends) < 0).any()):
            raise self.damaged(f"{index_path.name} is not the offsets of {n:,} states in {data_path.name}")
        bounds = ends.tolist()
        want = np.asarray(store.fps(level))
        states: list[Any] = []
        view = memoryview(data)
        for i in range(n):
            try:
                s = decode(bytes(view[bounds[i]: bounds[i + 1]]))
            except Exception as exc:  # any failure to decode is damage, said in one line
                raise self.damaged(f"state {i} of {data_path.name} does not decode "
                                    f"({type(exc).__name__}: {str(exc)[:120]})") from None
            if fingerprint(s) != int(want[i]):
                raise self.damaged(f"state {i} of {data_path.name} is not the state level {level} recorded")
            states.append(s)
        return [Segment(len(part), blob=pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL))
                for part in (states[i: i + FRONTIER_SEGMENT] for i in range(0, n, FRONTIER_SEGMENT))]

    def save(self, store: LevelStore, level: int, frontier: list[Segment], totals: dict[str, Any]) -> None:
        """Write the frontier of the completed ``level`` (its states' encodings) and then the manifest."""
        data = self.directory / frontier_file(level, "data")
        h = hashlib.sha256()
        lengths: list[np.ndarray] = [np.zeros(1, np.int64)]
        with _create(data) as fh:
            for seg in frontier:
                if seg.codes is None:
                    raise RuntimeError("a frontier segment without its encodings (Expander.encode was off)")
                chunk, sizes = seg.kept_codes()
                fh.write(chunk)
                h.update(chunk)
                lengths.append(sizes.astype(np.int64))
            fh.flush()
            os.fsync(fh.fileno())
        ends = np.cumsum(np.concatenate(lengths), dtype=np.int64)
        doc: dict[str, Any] = {
            "format": FORMAT,
            "key": self.key,
            "hash_probe": hash_probe(),
            "level": level,
            "levels": store.entries[: level + 1],
            "frontier": {
                "states": int(ends.shape[0]) - 1,
                "data": {"file": data.name, "sha256": h.hexdigest()},
                "index": _save_array(self.directory / frontier_file(level, "index"), ends),
            },
            "totals": totals,
        }
        doc["digest"] = manifest_digest(doc)
        tmp = self.directory / MANIFEST_TMP
        with _create(tmp, "w") as out:
            out.write(json.dumps(doc, indent=1) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.manifest_path)
        with os.scandir(self.directory) as it:
            for entry in it:
                if entry.name.startswith("frontier-") and not entry.name.startswith(f"frontier-{level:05d}."):
                    try:
                        os.unlink(entry.path)
                    except FileNotFoundError:
                        pass
