"""Digests of what a protocol's mutants are made of, for ``--resume``: a row stands while its digest does.

Per protocol: the reference package without the other protocols' packages its own does not import; over the
bytes, or over the syntax trees (a comment changes nothing), optionally without the registry entry and without
the definitions nothing reaches.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

# Each protocol's registry entry (<reference>/<package>/protocol.py): its named configs and broken variants,
# read by name from the package's entry points, never mutated.
REGISTRY_MODULE = "protocol.py"


def _code_of(path: Path, dead: frozenset[int] = frozenset()) -> bytes:
    """A module's code without its comments and layout (its syntax tree; docstrings stay: they are values):
    a comment edited in the reference changes no mutant's behaviour. ``dead``: the indices of top-level
    statements to leave out (:func:`dead_definitions`)."""
    text = path.read_bytes()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return text
    tree.body = [stmt for i, stmt in enumerate(tree.body) if i not in dead]
    return ast.dump(tree).encode()


def _defined_names(stmt: ast.stmt) -> tuple[str, ...]:
    """The names a top-level definition binds (a function, a class, an assignment to plain names of a value
    computed without a call); () for any other statement (an import, an expression, a conditional, an assignment
    that calls: always live)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names: tuple[str, ...] = (stmt.name,)
    elif (isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets)
          and not _calls(stmt.value)):
        names = tuple(t.id for t in stmt.targets if isinstance(t, ast.Name))
    elif (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None
          and not _calls(stmt.value)):
        names = (stmt.target.id,)
    else:
        return ()
    return () if any(n.startswith("__") for n in names) else names


def _calls(expr: ast.expr) -> bool:
    """Whether evaluating ``expr`` calls anything (an assignment that does runs code at import: always live)."""
    return any(isinstance(n, ast.Call) for n in ast.walk(expr))


def _names_read(stmt: ast.stmt) -> set[str]:
    """Every name a statement may read: loaded names, attributes, imported names and string constants (a
    ``getattr`` by name, ``__all__``): an over-approximation, so a definition read only dynamically stays live."""
    out: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.alias):
            out.add(node.name.rsplit(".", 1)[-1])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            out.add(node.value)
    return out


def dead_definitions(root: Path, reference: str) -> dict[Path, frozenset[int]]:
    """Per module of ``root/<reference>`` (the reference package), the top-level definitions no code under
    ``root`` (the campaign's packages: the reference, its checkers and the engine; tests are not there) can
    reach: the least fixpoint of "read by a live statement", where every statement but a definition is live and
    names match by name alone (any read of a name anywhere keeps every definition of it). A definition read only
    by tests or by nothing changes no behaviour a mutant or a checker has, so deleting it leaves every verdict
    standing (:func:`rollcheck.mutate.registry_growth.registry_growth`). A module that calls ``globals()`` or
    ``vars()`` keeps all its definitions."""
    modules: list[tuple[Path, ast.Module]] = []
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        try:
            modules.append((path, ast.parse(path.read_bytes())))
        except (SyntaxError, ValueError):
            continue
    ref = root / reference
    candidates: dict[tuple[Path, int], tuple[str, ...]] = {}
    live_reads: set[str] = set()
    reads: dict[tuple[Path, int], set[str]] = {}
    for path, tree in modules:
        dynamic = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("globals", "vars")
                      for n in ast.walk(tree))
        for i, stmt in enumerate(tree.body):
            # The registry entry is read by name from the package's entry points (pyproject.toml): live.
            names = (_defined_names(stmt) if ref in path.parents and path.name != REGISTRY_MODULE and not dynamic
                     else ())
            if names:
                candidates[path, i] = names
                reads[path, i] = _names_read(stmt)
            else:
                live_reads |= _names_read(stmt)
    dead = set(candidates)
    grew = True
    while grew:  # a definition read by a live one is live
        grew = False
        for key in [k for k in dead if set(candidates[k]) & live_reads]:
            dead.discard(key)
            live_reads |= reads[key]
            grew = True
    out: dict[Path, set[int]] = {}
    for path, i in dead:
        out.setdefault(path, set()).add(i)
    return {path: frozenset(ix) for path, ix in out.items()}


def reference_digests(root: Path, packages: dict[str, str], reference: str, code_only: bool = False,
                      registry: bool = True, live_only: bool = False) -> dict[str, str]:
    """Per protocol, a SHA-256 digest over what its mutants are made of: ``reference_impl/`` without the other
    protocols' packages its own does not import (directly or through another; zk_migration imports
    metadata_version's catalog). ``--resume`` carries a protocol's kills over while its digest is unchanged, so
    fixing one protocol's reference does not send every other protocol's mutants through again. ``packages``:
    each protocol's package name under ``root/reference_impl`` -> the protocol. ``code_only``: over the modules'
    syntax trees, so that a comment or a line break changes nothing (``protocol_code_sha256``). ``registry``
    False: without each protocol's registry entry (``REGISTRY_MODULE``: named configs and broken variants, never
    mutated), the code a mutant is made of (:func:`registry_growth`). ``live_only`` (with ``code_only``): without
    the definitions nothing reaches (:func:`dead_definitions`), and of another protocol's package only the
    modules the protocol's own import, directly or through others (:func:`_module_imports`: zk_migration reads
    metadata_version's catalog, not its controller)."""
    ref = root / reference
    dead = dead_definitions(root, reference) if live_only else {}
    reached = _module_imports(ref) if live_only else {}
    imports = {name: set(re.findall(rf"^\s*(?:from|import)\s+{re.escape(reference)}\.(\w+)", "".join(
        f.read_text(encoding="utf-8") for f in sorted((ref / name).rglob("*.py"))), re.M)) & set(packages)
        for name in packages}
    out = {}
    for name, protocol in packages.items():
        deps, todo = {name}, [name]
        while todo:
            for d in imports[todo.pop()] - deps:
                deps.add(d)
                todo.append(d)
        own = {p for p in (ref / name).rglob("*.py") if "__pycache__" not in p.parts}
        closure, stack = set(own), list(own)
        while stack:
            for q in reached.get(stack.pop(), ()):
                if q not in closure:
                    closure.add(q)
                    stack.append(q)
        digest = hashlib.sha256()
        for path in sorted(ref.rglob("*.py")):
            rel = path.relative_to(ref)
            if "__pycache__" in rel.parts or (len(rel.parts) > 1 and rel.parts[0] in packages
                                              and rel.parts[0] not in deps):
                continue
            if live_only and len(rel.parts) > 1 and rel.parts[0] in packages and path not in closure:
                continue
            if not registry and rel.parts[1:] == (REGISTRY_MODULE,) and rel.parts[0] in packages:
                continue
            code = _code_of(path, dead.get(path, frozenset())) if code_only else path.read_bytes()
            digest.update(str(rel).encode() + b"\0" + code + b"\0")
        out[protocol] = digest.hexdigest()
    return out


def _module_imports(ref: Path) -> dict[Path, set[Path]]:
    """Per module of ``ref`` (``reference_impl/``), the modules of ``ref`` its imports load: the named module
    and every package ``__init__`` on the way (``from reference_impl.x import y`` loads ``x/y.py`` when ``y``
    is a module, else ``x/__init__.py``)."""
    def module(parts: Sequence[str]) -> list[Path]:
        out = [ref / "__init__.py"]
        for i in range(1, len(parts) + 1):
            base = ref.joinpath(*parts[:i])
            out.append(base / "__init__.py" if base.is_dir() else base.with_suffix(".py"))
        return [p for p in out if p.is_file()]

    graph: dict[Path, set[Path]] = {}
    for path in sorted(ref.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        loads: set[Path] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name.split(".") for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [[*node.module.split("."), a.name] for a in node.names]
            else:
                continue
            for parts in names:
                if parts[0] == ref.name:
                    rest = parts[1:]
                    # the last part of a from-import is a module only when the file exists
                    while rest and not (ref.joinpath(*rest).is_dir()
                                        or ref.joinpath(*rest).with_suffix(".py").is_file()):
                        rest = rest[:-1]
                    loads.update(module(rest))
        graph[path] = loads
    return graph
