"""Where a protocol's content lives, per content group (:data:`rollcheck.checkers.inputs.CONTENT`): the one place
that maps a :class:`ProtocolEntry` to the files a checker reading a group reads.

Every group comes from what the entry names ("module:attribute" strings and its build), with the project modules
each file imports (statically, transitively; the engine's and installed packages' left out, the engine being keyed
whole):

- ``reference``: the package of the module defining the entry's build (``reference_impl/<protocol>/``, every file
  below it, data files too) when that module lies in a package inside a package, else that module's file; and the
  modules defining its broken variants' systems;
- ``properties``, ``spec``, ``model``, ``decisions``, ``oracle``, ``cluster``: the module the entry names
  (``properties``, ``spec``, ``z3``, ``decisions``, ``oracle``, ``cluster``); a package's whole folder;
- ``tla``: the ``.tla`` file of the spec binding and the local modules it ``EXTENDS`` or ``INSTANCE``\\ s;
- ``runbooks``: the module of ``runbook_conditions`` and, by convention, ``runbooks/<protocol>/`` beside the
  reference's top package.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import sys
import sysconfig
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from rollcheck.checkers.inputs import (
    CLUSTER,
    DECISIONS,
    MODEL,
    ORACLE,
    PROPERTIES,
    REFERENCE,
    RUNBOOKS,
    SPEC,
    TLA,
)
from rollcheck.core.transition import ProtocolEntry

# The entry's field naming each group's module ("module:attribute").
_NAMED: dict[str, Callable[[ProtocolEntry], str | None]] = {
    PROPERTIES: lambda e: e.properties, SPEC: lambda e: e.spec, MODEL: lambda e: e.z3,
    DECISIONS: lambda e: e.decisions, ORACLE: lambda e: e.oracle, CLUSTER: lambda e: e.cluster,
    RUNBOOKS: lambda e: e.runbook_conditions,
}
_SKIP_DIRS = frozenset({"__pycache__", "target", "node_modules"})
_TLA_USES = re.compile(r"^\s*(?:EXTENDS|(?:\w+\s*==\s*)?INSTANCE)\s+([\w\s,]+)", re.MULTILINE)


class ContentError(Exception):
    """A group whose files cannot be found (a module that does not resolve): its cells are not stored."""


def read_bytes(path: Path) -> bytes:
    """A file's bytes: every digest and import scan of the key reads through this."""
    return Path(path).read_bytes()


def files_below(folder: Path) -> Iterator[Path]:
    """Every file below ``folder`` (or ``folder`` itself, a file), sorted; caches and hidden names left out."""
    if folder.is_file():
        yield folder
        return
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and not name.endswith((".pyc", ".pyo")):
                yield Path(dirpath) / name


def _installed() -> tuple[Path, ...]:
    paths = {sys.prefix, sys.base_prefix, *(sysconfig.get_paths().get(k, "") for k in ("stdlib", "purelib", "platlib"))}
    return tuple(Path(p).resolve() for p in paths if p)


class ContentIndex:
    """The files of each group of each protocol, for one gate run (each module resolved and scanned once)."""

    def __init__(self, engine: Path) -> None:
        self.engine = engine.resolve()
        self._installed = _installed()
        self._imports: dict[Path, tuple[Path, ...]] = {}
        self._groups: dict[tuple[int, str], tuple[tuple[Path, Path], ...]] = {}

    def files(self, entry: ProtocolEntry, group: str) -> tuple[tuple[Path, Path], ...]:
        """(file, the root it is named relative to) of every file of ``group`` of ``entry``, sorted; raises
        :class:`ContentError` when the entry names a module that does not resolve."""
        key = (id(entry), group)
        if key not in self._groups:
            self._groups[key] = tuple(sorted(set(self._resolve(entry, group))))
        return self._groups[key]

    def _resolve(self, entry: ProtocolEntry, group: str) -> Iterable[tuple[Path, Path]]:
        if group == REFERENCE:
            return self._reference(entry)
        if group == TLA:
            return self._tla(entry)
        found: list[tuple[Path, Path]] = []
        named = _NAMED[group](entry) if group in _NAMED else None
        if named:
            found += self._module(named.split(":", 1)[0], whole_package=True)
        if group == RUNBOOKS:
            root = self._reference_root(entry)
            if root is not None and (root / "runbooks" / entry.name).is_dir():
                found += [(f, root) for f in files_below(root / "runbooks" / entry.name)]
        return found

    # ------------------------------------------------------------------ groups

    def _reference(self, entry: ProtocolEntry) -> list[tuple[Path, Path]]:
        module = getattr(entry.build, "__module__", None)
        if not isinstance(module, str):
            raise ContentError(f"{entry.name}: its build names no module")
        found = self._module(module, whole_package=False, package_of_module=module.count(".") >= 2)
        for variant in entry.variants:
            other = getattr(variant.system, "__module__", None)
            if isinstance(other, str) and other != module:
                found += self._module(other, whole_package=False)
        return found

    def _reference_root(self, entry: ProtocolEntry) -> Path | None:
        module = getattr(entry.build, "__module__", None)
        located = self._locate(module) if isinstance(module, str) else None
        return None if located is None else located[1]

    def _tla(self, entry: ProtocolEntry) -> list[tuple[Path, Path]]:
        if entry.spec is None:
            return []
        try:
            binding = entry.spec_binding()
            path = Path(binding.path).resolve()
        except Exception as exc:  # the binding does not load: the TLA+ checkers skip or fail on it themselves
            raise ContentError(f"{entry.name}: its spec binding does not load ({type(exc).__name__})") from None
        root = path.parent
        seen: dict[Path, None] = {}
        todo = [path]
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen[p] = None
            try:
                text = read_bytes(p).decode("utf-8", "replace")
            except OSError:
                continue  # a module of TLC's own (Integers, Sequences): not a file here
            for names in _TLA_USES.findall(text):
                todo += [root / f"{n.strip()}.tla" for n in names.split(",") if n.strip()
                         and (root / f"{n.strip()}.tla").is_file()]
        return [(p, root) for p in seen]

    # ------------------------------------------------------------------ modules

    def _locate(self, module: str) -> tuple[Path, Path, bool] | None:
        """(origin file, the sys.path root it lies under, is a package) of a project module; None for the
        engine's, an installed package's, a built-in one."""
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError, AttributeError):
            return None
        if spec is None or not spec.origin or not spec.has_location:
            return None
        origin = Path(spec.origin).resolve()
        is_package = spec.submodule_search_locations is not None
        if origin.is_relative_to(self.engine) or any(origin.is_relative_to(p) for p in self._installed):
            return None
        depth = module.count(".") + (1 if is_package else 0)
        return origin, origin.parents[depth], is_package

    def _module(self, module: str, *, whole_package: bool, package_of_module: bool = False) -> list[tuple[Path, Path]]:
        """A module's file (a package: its folder, with ``whole_package``; the folder of the module's package,
        with ``package_of_module``) and the project modules its files import."""
        located = self._locate(module)
        if located is None:
            if self._engine_or_installed(module):
                return []
            raise ContentError(f"module {module} is not found")
        origin, root, is_package = located
        if is_package and whole_package:
            files = list(files_below(origin.parent))
        elif package_of_module:
            files = list(files_below(origin.parent))
        else:
            files = [origin]
        return [(f, root) for f in self._closure(files, root)]

    def _engine_or_installed(self, module: str) -> bool:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError, AttributeError):
            return False
        return spec is not None and (not spec.has_location or spec.origin is None
                                     or Path(spec.origin).resolve().is_relative_to(self.engine)
                                     or any(Path(spec.origin).resolve().is_relative_to(p) for p in self._installed))

    def _closure(self, files: list[Path], root: Path) -> list[Path]:
        out: dict[Path, None] = {}
        todo = list(files)
        while todo:
            f = todo.pop()
            if f in out:
                continue
            out[f] = None
            if f.suffix == ".py":
                todo += self._imports_of(f, root)
            # The packages it lies in run their __init__ first.
            todo += [d / "__init__.py" for d in f.parents if d.is_relative_to(root) and d != root
                     and (d / "__init__.py").is_file()]
        return list(out)

    def _imports_of(self, path: Path, root: Path) -> tuple[Path, ...]:
        if path not in self._imports:
            found: list[Path] = []
            for name in _imported_names(path, root):
                located = self._locate(name)
                if located is not None and located[1] == root:
                    found.append(located[0])
            self._imports[path] = tuple(dict.fromkeys(found))
        return self._imports[path]


def _imported_names(path: Path, root: Path) -> list[str]:
    """Every module name ``path`` imports at any depth (``from a import b``: ``a`` and ``a.b``), relative imports
    resolved against its own package."""
    try:
        tree = ast.parse(read_bytes(path))
    except (OSError, SyntaxError, ValueError):
        return []
    rel = path.relative_to(root).with_suffix("").parts
    package = list(rel[:-1])  # a/b/c.py and a/b/__init__.py both import relative to a.b
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                base = ".".join([*parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            if base:
                names.append(base)
            names += [f"{base}.{a.name}" if base else a.name for a in node.names if a.name != "*"]
    return names


def describe(files: Iterable[tuple[Path, Path]]) -> list[str]:
    """The files as their names relative to their roots, for the key (a checkout moved elsewhere keys alike)."""
    return [f.relative_to(root).as_posix() if f.is_relative_to(root) else str(f) for f, root in files]


def module_file(obj: Any) -> Path | None:
    """The file of the module defining ``obj``'s type (a checker), or None."""
    module = sys.modules.get(type(obj).__module__)
    origin = getattr(module, "__file__", None)
    return Path(origin).resolve() if origin else None
