"""What the explorer remembers of each BFS level, and its checkpoint on disk.

Per level, in frontier order: each state's fingerprint and its parent pointer (the parent's position in
the previous level and the index of the successor that reached it), 16 bytes a state. That is enough to
rebuild any shortest counterexample exactly (replay from an initial state, checking every fingerprint) and,
at ``--resume``, to rebuild the visited set. With a directory the arrays are files (read back memory-mapped,
so they cost no memory until a trace is rebuilt) and the run is a checkpoint: after each level a manifest
is replaced atomically, naming every file with its row count and SHA-256, and the frontier of the last
level is written beside it. A resume verifies all of them and refuses a damaged checkpoint naming the file.

Format ``rollcheck-local-checkpoint/1`` (``manifest.json``)::

    {"format": ..., "key": {protocol, config, profile, variant, symmetry}, "hash_probe": int,
     "level": L, "levels": [{"level": l, "states": n, "fps": {file, sha256}, "parents": {file, sha256}}],
     "frontier": {"states": n, "data": {file, sha256}, "index": {file, sha256}}, "totals": {...}}
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rollcheck.errors import UserError
from rollcheck.expansion import Segment
from rollcheck.fingerprint import hash_probe

FORMAT = "rollcheck-local-checkpoint/1"
MANIFEST = "manifest.json"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _save_array(path: Path, arr: np.ndarray) -> dict[str, Any]:
    with open(path, "wb") as fh:
        np.save(fh, arr, allow_pickle=False)
        fh.flush()
        os.fsync(fh.fileno())
    return {"file": path.name, "rows": int(arr.shape[0]), "sha256": _sha256(path)}


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
        f = _save_array(self.directory / f"level-{level:05d}.fps.npy", fps)
        p = _save_array(self.directory / f"level-{level:05d}.parents.npy", parents)
        self._entries.append({"level": level, "states": int(fps.shape[0]), "fps": f, "parents": p})
        self._fps.append(np.load(self.directory / f["file"], mmap_mode="r"))
        self._parents.append(np.load(self.directory / p["file"], mmap_mode="r"))

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
        """Resume: read the levels a manifest names, refusing any file whose rows or checksum differ."""
        assert self.directory is not None
        for e in entries:
            arrays = []
            for part in ("fps", "parents"):
                meta = e[part]
                path = self.directory / meta["file"]
                _verify(path, meta, f"level {e['level']}")
                arr = np.load(path, mmap_mode="r")
                if arr.shape[0] != meta["rows"]:
                    raise UserError(f"checkpoint level {e['level']} is damaged: {path} has {arr.shape[0]} rows, "
                                    f"the manifest says {meta['rows']}; delete {self.directory} to start afresh")
                arrays.append(arr)
            self._fps.append(arrays[0])
            self._parents.append(arrays[1])
            self._entries.append(e)


def _verify(path: Path, meta: dict[str, Any], what: str) -> None:
    if not path.is_file():
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
    """The manifest and the last frontier of a local exploration in ``directory``."""

    def __init__(self, directory: Path, key: dict[str, Any]) -> None:
        self.directory = directory
        self.key = key

    @property
    def manifest_path(self) -> Path:
        return self.directory / MANIFEST

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    def clear(self) -> None:
        if self.directory.is_dir():
            for p in self.directory.iterdir():
                if p.is_file() and (p.name == MANIFEST or p.name.startswith(("level-", "frontier-"))):
                    p.unlink()
        self.directory.mkdir(parents=True, exist_ok=True)

    def load(self, store: LevelStore) -> ResumePoint:
        try:
            doc = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UserError(f"checkpoint manifest {self.manifest_path} is unreadable ({exc}); delete "
                            f"{self.directory} to start afresh") from None
        if doc.get("format") != FORMAT:
            raise UserError(f"{self.manifest_path} is not a local explorer checkpoint (format "
                            f"{doc.get('format')!r}); was it written by --engine spark?")
        if doc.get("key") != self.key:
            diff = sorted(k for k in set(self.key) | set(doc.get("key", {}))
                          if self.key.get(k) != doc.get("key", {}).get(k))
            raise UserError(f"the checkpoint in {self.directory} is of another run (it differs in: "
                            f"{', '.join(diff)}); use another --out or drop --resume")
        if doc.get("hash_probe") != hash_probe():
            raise UserError(f"the checkpoint in {self.directory} was written by a process that hashes states "
                            "differently (another PYTHONHASHSEED, or address randomization on Python 3.11); "
                            "resume it through the rollcheck command, which fixes both")
        store.load_verified(doc["levels"])
        fr = doc["frontier"]
        data = self.directory / fr["data"]["file"]
        index = self.directory / fr["index"]["file"]
        _verify(data, fr["data"], f"frontier of level {doc['level']}")
        _verify(index, fr["index"], f"frontier index of level {doc['level']}")
        table = np.load(index, allow_pickle=False)
        segments = []
        keep_all = np.load(self.directory / fr["keep"]["file"], allow_pickle=False)
        _verify(self.directory / fr["keep"]["file"], fr["keep"], f"frontier mask of level {doc['level']}")
        at = 0
        for items, off, length in table.tolist():
            keep = keep_all[at: at + items].astype(bool)
            at += items
            segments.append(Segment(items, keep, None, str(data), off, length))
        if sum(s.size for s in segments) != fr["states"]:
            raise UserError(f"checkpoint frontier of level {doc['level']} is damaged: {fr['states']} states "
                            f"expected; delete {self.directory} to start afresh")
        return ResumePoint(doc["level"], segments, doc["totals"])

    def save(self, store: LevelStore, level: int, frontier: list[Segment], totals: dict[str, Any]) -> list[Segment]:
        """Write the frontier of ``level`` and the manifest; returns the frontier reading from its file."""
        data = self.directory / f"frontier-{level:05d}.bin"
        segments: list[Segment] = []
        with open(data, "wb") as fh:
            for seg in frontier:
                raw = seg.raw()
                off = fh.tell()
                fh.write(raw)
                segments.append(Segment(seg.items, seg.keep, None, str(data), off, len(raw)))
            fh.flush()
            os.fsync(fh.fileno())
        table = np.asarray([(s.items, s.offset, s.length) for s in segments], dtype=np.int64).reshape(-1, 3)
        keep = np.concatenate([s.keep.astype(np.uint8) if s.keep is not None else np.ones(s.items, np.uint8)
                               for s in segments]) if segments else np.zeros(0, np.uint8)
        doc = {
            "format": FORMAT,
            "key": self.key,
            "hash_probe": hash_probe(),
            "level": level,
            "levels": store.entries,
            "frontier": {
                "states": sum(s.size for s in segments),
                "data": {"file": data.name, "sha256": _sha256(data)},
                "index": _save_array(self.directory / f"frontier-{level:05d}.index.npy", table),
                "keep": _save_array(self.directory / f"frontier-{level:05d}.keep.npy", keep),
            },
            "totals": totals,
        }
        tmp = self.manifest_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.manifest_path)
        for old in self.directory.glob("frontier-*"):
            if not old.name.startswith(f"frontier-{level:05d}."):
                old.unlink(missing_ok=True)
        return segments
