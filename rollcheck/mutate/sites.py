"""The mutation operators: where a module's syntax tree offers each one, and the edit that makes it.

Each site is a text edit checked against the syntax tree it must amount to (:func:`apply_site`), so an edit can
never mean something else than its operator says. Sites whose outcome a broken variant's flag fixes
(``"name" in config.mutations``: false in every reference config) are left alone, as is the code only such a
flag reaches; so are annotations and the field defaults of a protocol's config class (``*Config``: the named
configs' data, which every copy of the rules reads alike).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass

OPERATORS = ("cmp_swap", "int_plus_1", "int_minus_1", "bound_plus_1", "bound_minus_1", "drop_increment",
             "drop_and_operand", "drop_or_operand", "if_true", "if_false", "swap_branches", "early_return",
             "drop_call")
# Names under which a config's broken-variant flags are read (config.mutations, self.muts).
FLAG_NAMES = frozenset({"mutations", "muts"})
NOT_MUTATED = frozenset({"annotation", "returns", "type_comment"})  # fields of a node whose subtree is skipped



@dataclass(frozen=True)
class Site:
    """One mutation of one module: a text edit and the syntax-tree change it must amount to."""

    operator: str
    line: int  # 1-based, where the edit starts
    col: int  # 1-based, in characters
    start: int  # character offsets of the replaced text in the module
    end: int
    replacement: str
    node: int  # pre-order index of the node the intended change applies to
    intend: Callable[[list[ast.AST]], None]  # applies the change to a fresh parse's pre-order node list


def enclosing_functions(text: str) -> dict[int, str]:
    """For each line of a module, the innermost function around it (methods as ``Class.name``)."""
    out: dict[int, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                        out[line] = name
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(text), "")
    return out


def _preorder(tree: ast.AST) -> list[ast.AST]:
    """Every node, parent before children, children in field order: the same list for equal sources."""
    out: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return out


def _children(node: ast.AST) -> Iterator[ast.AST]:
    for name, value in ast.iter_fields(node):
        if name in NOT_MUTATED:
            continue
        if isinstance(value, ast.AST):
            yield value
        elif isinstance(value, list):
            yield from (v for v in value if isinstance(v, ast.AST))


def _reads_flags(e: ast.AST) -> bool:
    return (isinstance(e, ast.Name) and e.id in FLAG_NAMES) or (isinstance(e, ast.Attribute) and e.attr in FLAG_NAMES)


def static_value(e: ast.AST) -> bool | None:
    """The value of ``e`` in every reference config if it depends only on broken-variant flags
    (``"name" in config.mutations`` is False there, the set being empty), else None."""
    if (isinstance(e, ast.Compare) and len(e.ops) == 1 and isinstance(e.ops[0], (ast.In, ast.NotIn))
            and isinstance(e.left, ast.Constant) and isinstance(e.left.value, str) and _reads_flags(e.comparators[0])):
        return isinstance(e.ops[0], ast.NotIn)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        inner = static_value(e.operand)
        return None if inner is None else not inner
    if isinstance(e, ast.BoolOp):
        values = [static_value(v) for v in e.values]
        absorbing = isinstance(e.op, ast.Or)  # True decides an `or`, False an `and`
        if absorbing in values:
            return absorbing
        if all(v is (not absorbing) for v in values):
            return not absorbing
    return None


def _live(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes worth mutating: not annotations, not what only a broken variant's flag reaches."""
    yield node
    if isinstance(node, (ast.If, ast.IfExp)):
        flag = static_value(node.test)
        if flag is not None:
            # The test is a variant switch: only the branch the reference takes is live.
            branch: ast.AST | list[ast.stmt] = node.body if flag else node.orelse
            for child in branch if isinstance(branch, list) else [branch]:
                yield from _live(child)
            return
    if isinstance(node, ast.BoolOp) and static_value(node) is not None:
        return  # its value is a variant switch: the other operands are never evaluated, or never matter
    if isinstance(node, ast.ClassDef) and node.name.endswith("Config"):
        # A protocol config's field defaults say which cluster a named config describes: data that every copy
        # of the rules reads alike, not a rule. Its methods (the validation) are mutated.
        for stmt in node.body:
            if not isinstance(stmt, ast.AnnAssign):
                yield from _live(stmt)
        return
    for child in _children(node):
        yield from _live(child)


CMP_SWAPS: dict[type[ast.cmpop], tuple[type[ast.cmpop], str, str]] = {
    ast.Lt: (ast.LtE, "<", "<="), ast.LtE: (ast.Lt, "<=", "<"),
    ast.Gt: (ast.GtE, ">", ">="), ast.GtE: (ast.Gt, ">=", ">"),
    ast.Eq: (ast.NotEq, "==", "!="), ast.NotEq: (ast.Eq, "!=", "=="),
}


class ModuleSites:
    """The mutation sites of one module's source text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tree = ast.parse(text)
        self.nodes = _preorder(self.tree)
        self.index = {id(n): i for i, n in enumerate(self.nodes)}
        self.parent: dict[int, ast.AST] = {}
        for n in self.nodes:
            for c in ast.iter_child_nodes(n):
                self.parent[id(c)] = n
        self.lines = text.splitlines(keepends=True)
        self.line_start = [0]
        for line in self.lines:
            self.line_start.append(self.line_start[-1] + len(line))

    # ---- positions: ast gives UTF-8 byte columns, the edits work on characters
    def offset(self, lineno: int, col_bytes: int) -> int:
        line = self.lines[lineno - 1]
        return self.line_start[lineno - 1] + len(line.encode("utf-8")[:col_bytes].decode("utf-8"))

    def position(self, offset: int) -> tuple[int, int]:
        """(1-based line, 1-based character column) of a character offset."""
        lo, hi = 0, len(self.lines)
        while lo < hi:  # the last line whose start is <= offset
            mid = (lo + hi + 1) // 2
            if self.line_start[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.line_start[lo] + 1

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                self.offset(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]

    def _site(self, operator: str, start: int, end: int, replacement: str, node: ast.AST,
              intend: Callable[[list[ast.AST]], None]) -> Site:
        line, col = self.position(start)
        return Site(operator, line, col, start, end, replacement, self.index[id(node)], intend)

    def _expr_site(self, operator: str, node: ast.AST, replacement: str) -> Site:
        """Replace the expression ``node`` by ``replacement`` (an expression's text)."""
        start, end = self.span(node)
        new = ast.parse(replacement, mode="eval").body
        idx = self.index[id(node)]
        return self._site(operator, start, end, replacement, node,
                          lambda nodes: _replace_node(nodes, idx, copy.deepcopy(new)))

    # ---- the operators
    def sites(self) -> list[Site]:
        found: list[Site] = []
        for node in _live(self.tree):
            if isinstance(node, ast.Compare):
                found += self._cmp_swaps(node)
            elif isinstance(node, ast.Constant) and type(node.value) is int:
                found += self._constants(node)
            elif isinstance(node, ast.BoolOp):
                found += self._dropped_operands(node)
            elif isinstance(node, (ast.If, ast.IfExp)):
                found += self._if_tests(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found += self._early_return(node)
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                found += self._dropped_call(node)
        order = {op: i for i, op in enumerate(OPERATORS)}
        return sorted(found, key=lambda s: (s.start, order[s.operator], s.node))

    def _cmp_swaps(self, node: ast.Compare) -> list[Site]:
        out = []
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            swap = CMP_SWAPS.get(type(op))
            if swap is None:
                continue
            new_op, old_text, new_text = swap
            where = self._operator_token(self.span(operands[i])[1], self.span(operands[i + 1])[0], old_text)
            if where is None:
                continue
            idx = self.index[id(node)]

            def intend(nodes: list[ast.AST], idx: int = idx, i: int = i, new_op: type[ast.cmpop] = new_op) -> None:
                nodes[idx].ops[i] = new_op()  # type: ignore[attr-defined]

            out.append(self._site("cmp_swap", where, where + len(old_text), new_text, node, intend))
        return out

    def _operator_token(self, start: int, end: int, token: str) -> int | None:
        """Where ``token`` is between two operands: only blanks, brackets, comments and line continuations
        can stand around it there."""
        i = start
        while i < end:
            ch = self.text[i]
            if ch in " \t\r\n()\\":
                i += 1
            elif ch == "#":
                i = self.text.index("\n", i)
            else:
                return i if self.text.startswith(token, i) and not self.text.startswith(token + "=", i) else None
        return None

    def _constants(self, node: ast.Constant) -> list[Site]:
        parent = self.parent.get(id(node))
        value = node.value
        assert isinstance(value, int)
        if (node.value == 1 and isinstance(parent, ast.BinOp) and parent.right is node
                and isinstance(parent.op, (ast.Add, ast.Sub))) or \
                (node.value == 1 and isinstance(parent, ast.AugAssign) and parent.value is node
                 and isinstance(parent.op, (ast.Add, ast.Sub))):
            assert isinstance(parent, (ast.BinOp, ast.AugAssign))
            # The `1` of a `+ 1` / `- 1` bound: widened, or removed (an increment that no longer increments).
            lowered = "drop_increment" if isinstance(parent.op, ast.Add) else "bound_minus_1"
            return [self._expr_site("bound_plus_1", node, "2"), self._expr_site(lowered, node, "0")]
        # A negative result is parenthesized: `x - 0` must become `x - (-1)`, not `x - -1` (another tree).
        return [self._expr_site("int_plus_1", node, str(value + 1)),
                self._expr_site("int_minus_1", node, str(value - 1) if value >= 1 else f"({value - 1})")]

    def _dropped_operands(self, node: ast.BoolOp) -> list[Site]:
        if static_value(node) is not None:
            return []  # a variant switch as a whole (see _live)
        is_and = isinstance(node.op, ast.And)
        neutral = "True" if is_and else "False"
        out = []
        for operand in node.values:
            if static_value(operand) is (neutral == "True"):
                continue  # a variant flag at its reference value: dropping it changes nothing
            out.append(self._expr_site("drop_and_operand" if is_and else "drop_or_operand", operand, neutral))
        return out

    def _if_tests(self, node: ast.If | ast.IfExp) -> list[Site]:
        test = node.test
        if static_value(test) is not None or isinstance(test, ast.Constant):
            return []
        out = [self._expr_site("if_true", test, "True"), self._expr_site("if_false", test, "False")]
        if isinstance(node, ast.IfExp) or node.orelse:
            start, end = self.span(test)
            # Negating the test swaps the branches (elif included) without moving a line.
            out.append(self._expr_site("swap_branches", test, f"not ({self.text[start:end]})"))
        return out

    def _early_return(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Site]:
        body = fn.body
        k = 1 if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                  and isinstance(body[0].value.value, str)) else 0
        if k >= len(body) or isinstance(body[k], ast.Return):
            return []
        own = list(_own_scope(fn))
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own):
            return []  # a generator: an early return would only empty it
        first = next((n for n in own if isinstance(n, ast.Return)), None)
        if first is None:
            return []
        params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
        params |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
        value = first.value
        if value is None:
            text = "return"
        elif isinstance(value, ast.Constant) or (isinstance(value, ast.Name) and value.id in params):
            text = f"return {ast.unparse(value)}"
        else:
            return []  # anything else may be unbound, or have effects, at the top of the function
        stmt = body[k]
        start, end = self.span(stmt)
        idx = self.index[id(fn)]

        def intend(nodes: list[ast.AST], idx: int = idx, k: int = k, value: ast.expr | None = value) -> None:
            nodes[idx].body[k] = ast.Return(value=copy.deepcopy(value))  # type: ignore[attr-defined]

        return [self._site("early_return", start, end, text, fn, intend)]

    def _dropped_call(self, stmt: ast.Expr) -> list[Site]:
        start, end = self.span(stmt)
        idx = self.index[id(stmt)]
        return [self._site("drop_call", start, end, "pass", stmt,
                           lambda nodes: _replace_node(nodes, idx, ast.Pass()))]


def _own_scope(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body in source order, without nested functions, lambdas and classes."""
    stack = list(reversed(list(ast.iter_child_nodes(fn))))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _replace_node(nodes: list[ast.AST], idx: int, new: ast.AST) -> None:
    target = nodes[idx]
    for parent in nodes:
        for name, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, name, new)
                return
            if isinstance(value, list):
                for i, v in enumerate(value):
                    if v is target:
                        value[i] = new
                        return
    raise LookupError("node without a parent")


def apply_site(sites: ModuleSites, site: Site) -> str | None:
    """The mutated module's text, or None when the edit does not give exactly the intended tree.

    A multi-line edit is first tried padded with newlines, so that every later line keeps its number (inside
    brackets, and after a replaced statement, blank lines are harmless), then as it is."""
    fresh = ast.parse(sites.text)
    site.intend(_preorder(fresh))
    expected = ast.dump(fresh)
    newlines = sites.text.count("\n", site.start, site.end)
    for replacement in dict.fromkeys((site.replacement + "\n" * newlines, site.replacement)):
        text = sites.text[:site.start] + replacement + sites.text[site.end:]
        try:
            if ast.dump(ast.parse(text)) == expected:
                return text
        except SyntaxError:
            pass
    return None
