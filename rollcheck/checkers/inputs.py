"""What a gate cell's result depends on, as its checker declares it (:meth:`CheckerBase.inputs`): the protocol
content it reads, more files, the values of its options and settings, and the tools that run it. The gate digests
them into the key its result is stored under (:mod:`rollcheck.gate.cellkey`); the engine's own files, the config,
the profile, the variant and the checker's name are always part of the key.

The protocol content is named by group (:data:`CONTENT`), resolved per protocol in one place
(:mod:`rollcheck.gate.content`): ``reference`` (the package of the protocol's build), ``properties``, ``spec`` (the
binding), ``tla`` (the ``.tla`` file it names), ``model`` (the Z3 encoding), ``decisions``, ``runbooks``, ``oracle``
(the Kafka oracle binding) and ``cluster`` (the cluster binding), each with the project modules it imports.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

REFERENCE = "reference"
PROPERTIES = "properties"
SPEC = "spec"  # the spec binding (its module and what it imports)
TLA = "tla"  # the TLA+ spec file the binding names
MODEL = "model"
DECISIONS = "decisions"
RUNBOOKS = "runbooks"
ORACLE = "oracle"
CLUSTER = "cluster"
CONTENT = frozenset({REFERENCE, PROPERTIES, SPEC, TLA, MODEL, DECISIONS, RUNBOOKS, ORACLE, CLUSTER})

# A tool's version, probed at most once a gate run (the key builder keeps each name's answer for the run).
Probe = Callable[[], str]


@dataclass(frozen=True)
class CellInputs:
    """What one cell reads beside the engine, its config, profile, variant and checker name.

    ``deterministic``: False when the same inputs may give another result (a time budget, real processes): such a
    cell is never stored nor served. ``tools``: name -> probe of the version of each tool that runs the cell; two
    checkers naming the same tool must mean the same one (the name is the key of the run's answer)."""

    reads: frozenset[str] = CONTENT
    paths: tuple[Path, ...] = ()  # more files or folders (every file below, recursively)
    values: Mapping[str, Any] = field(default_factory=dict)
    tools: Mapping[str, Probe] = field(default_factory=dict)
    deterministic: bool = True
    why_not: str = ""  # why it is not deterministic


def options_values(options: Any) -> dict[str, Any]:
    """A checker options dataclass (``CheckerOptions.read``'s) as a plain dict for the key."""
    if dataclasses.is_dataclass(options) and not isinstance(options, type):
        return dataclasses.asdict(options)
    return {"options": repr(options)}


def canonical(value: Any) -> Any:
    """``value`` as JSON-ready data that does not depend on the hash seed or on object addresses: a dataclass by
    its type and fields, a set sorted, a mapping by sorted keys, an enum by its value, a path as text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"__type__": f"{type(value).__module__}.{type(value).__qualname__}",
                **{f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, enum.Enum):
        return {"__enum__": f"{type(value).__qualname__}", "value": canonical(value.value)}
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return repr(value)  # NaN and infinities too, exactly
    if isinstance(value, bytes):
        return {"__bytes__": value.hex()}
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        items = sorted(((canonical(k), canonical(v)) for k, v in value.items()), key=lambda kv: repr(kv[0]))
        return {"__map__": [[k, v] for k, v in items]}
    if isinstance(value, (set, frozenset)):
        return {"__set__": sorted((canonical(v) for v in value), key=repr)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if callable(value):
        return {"__code__": f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', repr(type(value)))}"}
    return {"__repr__": repr(value)}


# --------------------------------------------------------------------------- version probes


def python_version() -> str:
    return f"{platform.python_implementation()} {sys.version.split()[0]}"


def package_version(distribution: str) -> Probe:
    """A probe of an installed distribution's version ("absent" when it is not installed)."""

    def probe() -> str:
        try:
            return f"{distribution} {metadata.version(distribution)}"
        except metadata.PackageNotFoundError:
            return f"{distribution} absent"

    return probe


def java_version() -> str:
    """``java -version``'s output (the ``java`` on PATH, or JAVA_HOME's), or why there is none."""
    home = os.environ.get("JAVA_HOME")
    own = Path(home) / "bin" / "java" if home else None
    java = str(own) if own is not None and own.is_file() else shutil.which("java")
    if java is None:
        return "no java"
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"java does not run: {type(exc).__name__}"
    return f"{java}: {proc.returncode}: {(proc.stdout + proc.stderr).strip()}"


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes ("absent: ..." when it cannot be read)."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        return f"absent: {path}: {exc.strerror or exc}"
    return h.hexdigest()
