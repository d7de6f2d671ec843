"""Layers point one way (issue #21): the engine (``rollcheck/``) imports no content package and names no
protocol; protocols come from the ``rollcheck.protocols`` entry points."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rollcheck.core.registry import GROUP, get_protocol, protocol_names
from rollcheck.core.transition import ProtocolEntry

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


# --------------------------------------------------------------------------- the content packages' layers

ROOT = ENGINE.parent
PACKAGES = ("rollcheck", "reference_impl", "properties", "model")
# What the properties and the Z3 encodings may import of the reference: its state and config types and the data
# tables its configs name (Kafka's metadata.version catalog, the Streams releases), never its rules (system.py,
# api.py's decisions), so that they stay independent checks of those rules.
READABLE = frozenset({
    "reference_impl.features.config", "reference_impl.features.state",
    "reference_impl.metadata_version.config", "reference_impl.metadata_version.state",
    "reference_impl.metadata_version.catalog",
    "reference_impl.streams_probing.config", "reference_impl.streams_probing.state",
    "reference_impl.streams_probing.releases",
    "reference_impl.zk_migration.config", "reference_impl.zk_migration.state",
})
# Named exceptions, each with its reason.
READABLE_BY = {
    # /features is held as the bytes of Kafka's FeatureZNode JSON: values / from_values map the state through the
    # node's value types and their codec, which api.py keeps beside the controller.
    "model/features.py": frozenset({"reference_impl.features.api"}),
}


def _content_modules(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _runtime_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module an AST imports when it runs, at any depth (function-local imports included), and for
    ``from m import x`` also ``m.x`` (x may be a module); ``if TYPE_CHECKING:`` blocks are annotations only."""
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(node.test) for stmt in node.body for n in ast.walk(stmt)}
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def _graph() -> dict[str, set[str]]:
    """The runtime import graph over the four packages' modules."""
    paths = {_module_name(p): p for pkg in PACKAGES for p in _content_modules(pkg)}
    return {m: {t for _line, t in _runtime_imports(ast.parse(p.read_text(encoding="utf-8"))) if t in paths and t != m}
            for m, p in paths.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected component of more than one node (or a node importing itself), as a cycle's
    path through it (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, successors = work[-1]
            w = next(successors, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1 or v in graph.get(v, ()):
                    components.append(_cycle_in(graph, set(component)))
    return components


def _cycle_in(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """One cycle through a strongly connected component: a -> ... -> a."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"not a strongly connected component: {sorted(component)}")


def test_find_cycles_prints_each_cycle() -> None:
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"a"}}) == [["a", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_runtime_import_cycle_among_the_engine_and_the_content() -> None:
    """rollcheck, reference_impl, properties and model import each other one way: no cycle between two packages
    and none between modules (function-local imports count: a cycle there is a cycle at run time)."""
    graph = _graph()
    packages: dict[str, set[str]] = {}
    for m, targets in graph.items():
        packages.setdefault(m.split(".")[0], set()).update(t.split(".")[0] for t in targets)
    package_cycles = find_cycles({p: targets - {p} for p, targets in packages.items()})
    assert not package_cycles, "package import cycles: " + "; ".join(" -> ".join(c) for c in package_cycles)
    cycles = find_cycles(graph)
    assert not cycles, "module import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("module", _content_modules("reference_impl"), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_reference_imports_neither_its_properties_nor_its_model(module: Path) -> None:
    """The reference is what the properties and the Z3 model check: it reads neither (its entry names them,
    ``ProtocolEntry.properties`` / ``decisions`` / ``z3``, for the engine to load). Annotation-only imports too."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    bad = [f"line {line}: {name}" for line, name in _imports(tree) if name.split(".")[0] in ("properties", "model")]
    assert not bad, f"{module.relative_to(ROOT)} imports what checks it: {bad}"


@pytest.mark.parametrize("module", [*_content_modules("properties"),
                                    *(p for p in _content_modules("model") if "decisions" not in p.parts)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_properties_and_the_z3_model_read_only_the_references_state_and_config(module: Path) -> None:
    """Only READABLE (and the module's named exceptions); the decision rules (model/decisions/) compare
    their formulas with the reference's own decision functions, so they call them by design."""
    allowed = READABLE | READABLE_BY.get(str(module.relative_to(ROOT)), frozenset())
    reference = {_module_name(p): p for p in _content_modules("reference_impl")}
    tree = ast.parse(module.read_text(encoding="utf-8"))
    # A package's __init__ (a docstring) is no rule: ``from reference_impl.x import api`` names the package too.
    bad = sorted({name for _line, name in _runtime_imports(tree) if name in reference
                  and reference[name].name != "__init__.py" and name not in allowed})
    assert not bad, f"{module.relative_to(ROOT)} reads the reference's rules: {bad}"


def test_the_layering_checks_would_see_a_reference_that_imports_its_properties() -> None:
    tree = ast.parse("def f():\n    from properties.features import PROPERTIES\n")
    assert [n for _l, n in _imports(tree)] == ["properties.features"]
    tree = ast.parse("from reference_impl.features.system import FeaturesSystem\nfrom typing import TYPE_CHECKING\n"
                     "if TYPE_CHECKING:\n    from reference_impl.features import api\n")
    assert {n for _l, n in _runtime_imports(tree)} == {
        "reference_impl.features.system", "reference_impl.features.system.FeaturesSystem", "typing",
        "typing.TYPE_CHECKING"}


def test_each_protocol_binds_its_properties_and_decision_rules_through_its_entry() -> None:
    from rollcheck.core.registry import registered_properties

    for name in protocol_names():
        entry = get_protocol(name)
        if entry.properties is None:
            continue
        ts = entry.build(entry.configs["small"])
        assert [p.id for p in ts.properties()] == [p.id for p in registered_properties(ts)]
        assert [p.id for p in ts.properties()] == [p.id for p in entry.property_set().bind(ts)]
        if entry.decisions is not None:
            assert list(entry.decision_rules().gate)
