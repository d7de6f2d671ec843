"""Where a run's results go, so that two runs never mix.

* :func:`run_name`: one directory name per distinct run: protocol, config, profile, variant and engine
  (and symmetry reduction, which changes what is counted). A config given as a file is its stem plus a
  short hash of its resolved path, so two ``small.toml`` files in different folders never share a name.
* :func:`staged_run`: a run writes into a fresh hidden directory beside its final place
  (``.NAME.partial-PID-xxxx``) and only a completed run replaces ``NAME`` with it; an interrupted or
  failed run removes its partial directory, so ``NAME`` always holds one whole run, the last one that
  finished. A lock (``.NAME.lock``) refuses a second concurrent run of the same name. State that must
  survive an interruption (the explorer's checkpoint) lives beside it, in ``NAME.checkpoint``.
* :func:`clear_previous_run` / :func:`record_run`: for commands whose whole ``--out`` is one run (the
  gate, ``mutants``): a manifest of what the last run wrote, removed before the next run writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcheck.core.traces import write_json_atomic
from rollcheck.runtime.outlock import LOCK_NAME, output_lock
from rollcheck.runtime.safefs import refuse_link


def config_tag(label: str) -> str:
    """A named config is its name; a config file its stem and 6 hex digits of its resolved path."""
    if not label.endswith(".toml") and "/" not in label and os.sep not in label:
        return label
    digest = hashlib.sha256(str(Path(label).resolve()).encode()).hexdigest()[:6]
    return f"{Path(label).stem}-{digest}"


def run_name(protocol: str, config_label: str, profile: str, variant: str | None = None, *,
             engine: str | None = None, symmetry: bool = False) -> str:
    parts = [protocol, config_tag(config_label), profile]
    if variant:
        parts.append(variant)
    if engine:
        parts.append(engine)
    if symmetry:
        parts.append("symmetry")
    return "-".join(parts)


@dataclass(frozen=True)
class StagedRun:
    staging: Path  # where the run writes
    final: Path  # where its results are once it completed
    checkpoint: Path  # state kept across interruptions, beside ``final``

    def kept(self) -> str:
        """What an interrupted run leaves: its partial output is removed, the last completed run stays."""
        if self.final.exists():
            return f"its partial output was removed; {self.final} still holds the last completed run"
        return "its partial output was removed; nothing was written"

    def final_path(self, path: Path | str) -> Path:
        """Where ``path`` (under ``staging``) will be once the run is published."""
        return self.final / Path(path).relative_to(self.staging)


def process_alive(pid: int) -> bool:
    """Is a process with this id running (one of another user's counts as running)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale_partials(parent: Path, name: str) -> None:
    """Partial directories of runs of ``name`` that were killed (SIGKILL, power loss) before cleaning up.
    Only real directories: a link with such a name was not made by a run, and is never followed."""
    for p in parent.glob(f".{name}.partial-*"):
        try:
            pid = int(p.name[len(name) + len(".") + len(".partial-"):].split("-", 1)[0])
        except ValueError:
            continue
        if not process_alive(pid) and _is_real_dir(p):
            shutil.rmtree(p, ignore_errors=True)


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _remove(path: Path) -> None:
    """Remove what stands at ``path`` without following it: a real directory with its tree (``rmtree``
    never follows a link inside it), anything else (a link included) by unlinking the name."""
    if _is_real_dir(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        Path(path).unlink(missing_ok=True)


def publish(staging: Path, final: Path) -> None:
    """Replace ``final`` by ``staging``: the old one is renamed aside first, then removed. A link standing at
    ``final`` (or at the aside name) is itself renamed and removed, never followed."""
    old = None
    if os.path.lexists(final):
        old = final.with_name(f".{final.name}.old-{os.getpid()}")
        _remove(old)
        os.replace(final, old)
    os.replace(staging, final)
    if old is not None:
        _remove(old)


@contextmanager
def staged_run(parent: Path, name: str) -> Iterator[StagedRun]:
    """Yield a fresh staging directory for the run ``parent/name``; publish it when the block completes,
    remove it when the block raises (Ctrl-C included)."""
    parent = Path(parent)
    refuse_link(parent / f".{name}.lock")  # the lock file is opened and truncated: never through a link
    with output_lock(parent, f".{name}.lock", what=f"{parent / name}"):
        _remove_stale_partials(parent, name)
        staging = Path(tempfile.mkdtemp(prefix=f".{name}.partial-{os.getpid()}-", dir=parent))
        os.chmod(staging, 0o755)  # mkdtemp makes it private; results are for everyone to read
        try:
            yield StagedRun(staging, parent / name, parent / f"{name}.checkpoint")
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        publish(staging, parent / name)


# What the last run wrote into an output directory it owns whole (top-level names), so that the next run
# starts by removing exactly that: no stale trace or report survives into a new run, an interrupted run
# leaves no previous report looking current, and nothing else in the directory (the user's files) is touched.
# Each name is recorded with the identity of what the run left there, so that a name the user re-created
# since (another file or directory, a link) is the user's and stays. Inode numbers are reused by file
# systems, so an identity is more than one: a file's also has its size and modification time; a directory's
# the names and inodes of (up to 64 of) its entries, which must all still be there (an entry added since,
# a stale trace say, goes with the directory), and for an empty one its change time.
MANIFEST = ".rollcheck-manifest.json"
_NEVER = frozenset({MANIFEST, LOCK_NAME})
_MANIFEST_BYTES = 4 << 20  # far above any run's list of top-level names
_SAMPLED_ENTRIES = 64


def _identity(path: Path) -> dict[str, Any] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    kind = "dir" if stat.S_ISDIR(st.st_mode) else "link" if stat.S_ISLNK(st.st_mode) else "file"
    ident: dict[str, Any] = {"kind": kind, "dev": st.st_dev, "ino": st.st_ino}
    if kind == "file":
        ident.update(size=st.st_size, mtime_ns=st.st_mtime_ns)
    elif kind == "dir":
        ident.update(entries=_entries(path, _SAMPLED_ENTRIES), ctime_ns=st.st_ctime_ns)
    return ident


def _entries(path: Path, limit: int | None = None) -> dict[str, int]:
    try:
        with os.scandir(path) as it:
            found = {e.name: e.inode() for e in it}
    except OSError:
        return {}
    names = sorted(found)[:limit] if limit is not None else sorted(found)
    return {n: found[n] for n in names}


def _unchanged(path: Path, recorded: object) -> bool:
    """Is what stands at ``path`` still what the run left there (``recorded``: its identity then)?"""
    now = _identity(path)
    if not isinstance(recorded, dict) or now is None:
        return False
    if any(now.get(k) != recorded.get(k) for k in ("kind", "dev", "ino")):
        return False
    if now["kind"] == "file":
        return bool(now.get("size") == recorded.get("size") and now.get("mtime_ns") == recorded.get("mtime_ns"))
    if now["kind"] == "dir":
        sampled = recorded.get("entries")
        if not isinstance(sampled, dict):
            return False
        if not sampled:
            return bool(now.get("ctime_ns") == recorded.get("ctime_ns") or not _entries(path, 1))
        current = _entries(path)
        return all(current.get(name) == ino for name, ino in sampled.items())
    return True


def _read_manifest(out_dir: Path) -> tuple[list[object], dict[str, object]]:
    """(the names, their identities) the manifest lists; nothing for a missing, damaged or linked one (a
    link standing at its name is not followed: it was not written by a run)."""
    try:
        fd = os.open(out_dir / MANIFEST, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return [], {}
    try:
        with os.fdopen(fd, "rb") as fh:
            doc = json.loads(fh.read(_MANIFEST_BYTES + 1)[:_MANIFEST_BYTES])
        names = doc["written"]
        identities = doc.get("identity", {})
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return [], {}
    if not isinstance(names, list):
        return [], {}
    return names, identities if isinstance(identities, dict) else {}


def removable_names(out_dir: Path, keep: frozenset[str] = frozenset()) -> list[str]:
    """The names :func:`clear_previous_run` would remove: those the manifest lists that are still what the
    last run left there. ``keep``: names never removed whatever a manifest says (a folder the user asked the
    run to write into, such as the gate's ``--export-tests``)."""
    names, identities = _read_manifest(out_dir)
    out: list[str] = []
    for name in names:
        # Only plain names of this directory: a manifest never sends a removal elsewhere.
        if (not isinstance(name, str) or name in _NEVER or name in keep or "/" in name or os.sep in name
                or name in ("", ".", "..") or not os.path.lexists(out_dir / name)):
            continue
        # A manifest of plain names (no identities) is trusted name by name; one with identities only where
        # the entry is still the one the run left (not re-created by the user since).
        if name in identities and not _unchanged(out_dir / name, identities[name]):
            continue
        out.append(name)
    return out


def clear_previous_run(out_dir: Path, keep: frozenset[str] = frozenset()) -> tuple[list[str], set[str]]:
    """Remove what the manifest lists and is still what the run left (:func:`removable_names`); returns
    (removed names, names left: the user's)."""
    removed = removable_names(out_dir, keep)
    for name in removed:
        _remove(out_dir / name)
    if os.path.lexists(out_dir / MANIFEST):
        (out_dir / MANIFEST).unlink(missing_ok=True)
    left = set(os.listdir(out_dir)) - _NEVER if out_dir.is_dir() else set()
    return removed, left


def record_run(out_dir: Path, preexisting: set[str], keep: frozenset[str] = frozenset()) -> None:
    """Write the manifest: every top-level name in ``out_dir`` this run created (``keep``: names never
    listed, as :func:`clear_previous_run` says), each with its identity."""
    written = sorted(set(os.listdir(out_dir)) - preexisting - _NEVER - keep)
    identity = {name: ident for name in written if (ident := _identity(out_dir / name)) is not None}
    write_json_atomic(out_dir / MANIFEST, {"written": written, "identity": identity}, root=out_dir)
