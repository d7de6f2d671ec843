"""Layers point one way (issue #21): the engine (``rollcheck/``) imports no content package and names no
protocol; protocols come from the ``rollcheck.protocols`` entry points."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rollcheck.registry import GROUP, get_protocol, protocol_names
from rollcheck.transition import ProtocolEntry

ENGINE = Path(__file__).resolve().parent.parent / "rollcheck"
CONTENT = ("reference_impl", "properties", "model", "specs", "runbooks")


def _modules() -> list[Path]:
    return sorted(p for p in ENGINE.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module an AST imports, at any depth (function-local imports included), and every module named
    by a string handed to importlib."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "find_spec", "_lazy"):
            found += [(node.lineno, a.value) for a in node.args
                      if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return found


@pytest.mark.parametrize("module", _modules(), ids=lambda p: str(p.relative_to(ENGINE)))
def test_the_engine_imports_no_content_package(module: Path) -> None:
    bad = [f"line {line}: {name}" for line, name in _imports(ast.parse(module.read_text(encoding="utf-8")))
           if name.split(".")[0] in CONTENT]
    assert not bad, f"{module.relative_to(ENGINE.parent)} imports content: {bad}"


def test_the_engine_names_no_protocol() -> None:
    """No string literal in the engine's code is a registered protocol's name (docstrings and comments may
    use them as examples)."""
    names = set(protocol_names())
    hits = []
    for module in _modules():
        tree = ast.parse(module.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if node.value in names:
                    hits.append(f"{module.relative_to(ENGINE.parent)}:{node.lineno}: {node.value!r}")
    assert not hits, hits


def test_every_protocol_comes_from_the_entry_point_group() -> None:
    from importlib.metadata import entry_points

    registered = {ep.name for ep in entry_points(group=GROUP)}
    assert set(protocol_names()) == registered
    assert protocol_names()[:4] == ["features", "metadata_version", "zk_migration", "streams_probing"]
    for name in protocol_names():
        entry = get_protocol(name)
        assert isinstance(entry, ProtocolEntry) and entry.name == name
        # the optional checkers' content loads from the names the registration gives
        if entry.spec is not None:
            binding = entry.spec_binding()
            assert binding.path.is_file() and binding.protocol == name
        if entry.z3 is not None:
            assert callable(entry.z3_encoding())
        assert entry.gate_config in entry.configs
