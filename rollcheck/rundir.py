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
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rollcheck.outlock import LOCK_NAME, output_lock
from rollcheck.traces import write_json_atomic


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
    """Partial directories of runs of ``name`` that were killed (SIGKILL, power loss) before cleaning up."""
    for p in parent.glob(f".{name}.partial-*"):
        try:
            pid = int(p.name[len(name) + len(".") + len(".partial-"):].split("-", 1)[0])
        except ValueError:
            continue
        if not process_alive(pid):
            shutil.rmtree(p, ignore_errors=True)


def publish(staging: Path, final: Path) -> None:
    """Replace ``final`` by ``staging``: the old one is renamed aside first, then removed."""
    old = None
    if final.exists() or final.is_symlink():
        old = final.with_name(f".{final.name}.old-{os.getpid()}")
        if old.exists():
            shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
    os.replace(staging, final)
    if old is not None:
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)


@contextmanager
def staged_run(parent: Path, name: str) -> Iterator[StagedRun]:
    """Yield a fresh staging directory for the run ``parent/name``; publish it when the block completes,
    remove it when the block raises (Ctrl-C included)."""
    parent = Path(parent)
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
MANIFEST = ".rollcheck-manifest.json"
_NEVER = frozenset({MANIFEST, LOCK_NAME})


def clear_previous_run(out_dir: Path) -> tuple[list[str], set[str]]:
    """Remove what the manifest lists; returns (removed names, names left: the user's)."""
    removed: list[str] = []
    try:
        names = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))["written"]
    except (OSError, ValueError, KeyError, TypeError):
        names = []
    for name in names:
        # Only plain names of this directory: a manifest never sends a removal elsewhere.
        if not isinstance(name, str) or name in _NEVER or "/" in name or name in ("", ".", ".."):
            continue
        target = out_dir / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        elif target.exists() or target.is_symlink():
            target.unlink(missing_ok=True)
        removed.append(name)
    (out_dir / MANIFEST).unlink(missing_ok=True)
    left = set(os.listdir(out_dir)) - _NEVER if out_dir.is_dir() else set()
    return removed, left


def record_run(out_dir: Path, preexisting: set[str]) -> None:
    """Write the manifest: every top-level name in ``out_dir`` this run created."""
    written = sorted(set(os.listdir(out_dir)) - preexisting - _NEVER)
    write_json_atomic(out_dir / MANIFEST, {"written": written})
