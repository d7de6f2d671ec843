"""The successor differential's fast path: each Z3 relation compiled once into guarded assignments.

:func:`rollcheck.smt.core.check_successors` asks, for every checked state ``s`` and every action, whether
the Z3 successors of ``s`` are exactly the reference's. Asking Z3's solver costs about 1-2 ms a query (an
incremental check, its arithmetic included, measured through Z3's own SMT-LIB interpreter as well) and
z3py's Python side as much again: 15-50 ms a state. But with ``s`` fixed the question needs no search:
every encoding states an action as guards over the current state and the next state's fields as terms of
the current one (``frame(v, v2, changes)`` under guards, branches joined by ``Or`` or ``If``). So each
relation (and ``wellformed``) is taken apart ONCE into that form, a disjunction of branches
``guard(s) and t = f(s)`` (:func:`_branches`: ``And`` distributes over ``Or``, an ``If`` on the current
state splits, ``Not`` moves inward; a next-state field read elsewhere than in an assignment is split over
its finite domain under ``wellformed``), and compiled into one Python function that evaluates the
branches' guards and terms on a state's values. The Z3 successors of ``s`` are then the values of the
branches whose guard holds, kept where ``wellformed`` holds: exactly the assignments
``relation(s, t) and wellformed(t)`` that the solver enumerates. The operators are the ones the encodings
use (Boolean connectives, ``If``, ``=``, ``Distinct``, integer ``+ - *``, comparisons, ``div`` and ``mod``
by a positive constant) and mean in Python what they mean in Z3; a relation with anything else, or a
branch that leaves a field free, raises :class:`NotCompiled` and its caller keeps asking the solver for
it. The solver stays the judge: the callers check the first states both ways, and every difference the
compiled relation reports is looked up again by the solver, which gives the mismatch its message (a
solver that sees no difference there is an error of this module, raised).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import z3

Vals = tuple[Any, ...]  # a state's values in ``SymbolicSystem.fields()`` order
Successors = Callable[[Vals], list[Vals]]
Predicate = Callable[[Vals], bool]

BRANCH_LIMIT = 4096  # branches of one relation, after distributing And over Or
SPLIT_LIMIT = 64  # values of a next-state field split over (its domain under ``wellformed``)
SPLIT_DEPTH = 3  # fields split in one term (where it reads them)
SPLIT_PRODUCT = 256  # copies of a whole relation split over its fields' values
_DEPTH = 24  # nesting of one generated Python expression before a local variable holds it


class NotCompiled(Exception):
    """A relation this module cannot take apart; ``fields``: the next-state fields read where an assignment
    was expected (a split over their values may help)."""

    def __init__(self, why: str, fields: frozenset[int] = frozenset()) -> None:
        super().__init__(why)
        self.fields = fields


class _Node:
    """A term of a relation: ``op`` "c" (a constant ``val``), "s" / "t" (the current / next state's field
    ``val``), or an operator over ``args``. ``tf``: the next-state fields it reads; ``free``: no variable."""

    __slots__ = ("args", "boolean", "free", "op", "tf", "val")

    def __init__(self, op: str, args: Sequence[_Node] = (), val: Any = None, boolean: bool = True) -> None:
        self.op, self.args, self.val, self.boolean = op, tuple(args), val, boolean
        self.tf: frozenset[int] = (frozenset([val]) if op == "t"
                                   else frozenset().union(*(a.tf for a in self.args)))
        self.free: bool = op == "c" or (op not in ("s", "t") and all(a.free for a in self.args))


TRUE, FALSE = _Node("c", val=True), _Node("c", val=False)
_OPS = {z3.Z3_OP_AND: "and", z3.Z3_OP_OR: "or", z3.Z3_OP_NOT: "not", z3.Z3_OP_IMPLIES: "=>",
        z3.Z3_OP_ITE: "ite", z3.Z3_OP_EQ: "=", z3.Z3_OP_DISTINCT: "distinct", z3.Z3_OP_LE: "<=",
        z3.Z3_OP_LT: "<", z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">", z3.Z3_OP_ADD: "+", z3.Z3_OP_SUB: "-",
        z3.Z3_OP_UMINUS: "neg", z3.Z3_OP_MUL: "*", z3.Z3_OP_XOR: "xor", z3.Z3_OP_IDIV: "div",
        z3.Z3_OP_MOD: "mod"}


def _const(val: Any) -> _Node:
    if val is True:
        return TRUE
    if val is False:
        return FALSE
    return _Node("c", val=val, boolean=False)


def _make(op: str, args: Sequence[_Node], boolean: bool) -> _Node:
    node = _Node(op, args, boolean=boolean)
    return _const(eval(_Codegen().expr(node))) if node.free else node  # our own source, constants only


class _Importer:
    """Z3 terms over the current / next state's variables as :class:`_Node` DAGs (one node per Z3 term)."""

    def __init__(self, v: Mapping[str, Any], v2: Mapping[str, Any], names: Sequence[str]) -> None:
        index = {k: i for i, k in enumerate(names)}
        self.vars = {v[k].decl().name(): ("s", index[k]) for k in names}
        self.vars |= {v2[k].decl().name(): ("t", index[k]) for k in names}
        self.memo: dict[int, tuple[Any, _Node]] = {}  # Z3 term id -> (the term, kept alive; its node)

    def __call__(self, root: Any) -> _Node:
        stack = [root]
        while stack:
            e = stack[-1]
            if e.get_id() in self.memo:
                stack.pop()
                continue
            pending = [c for c in e.children() if c.get_id() not in self.memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            self.memo[e.get_id()] = (e, self._node(e))
        return self.memo[root.get_id()][1]

    def _node(self, e: Any) -> _Node:
        if z3.is_true(e):
            return TRUE
        if z3.is_false(e):
            return FALSE
        if z3.is_int_value(e):
            return _const(e.as_long())
        kind = e.decl().kind()
        if kind == z3.Z3_OP_UNINTERPRETED and e.num_args() == 0:
            side, index = self.vars.get(e.decl().name(), (None, None))
            if side is None:
                raise NotCompiled(f"a constant that is no state variable: {e}")
            return _Node(side, val=index, boolean=z3.is_bool(e))
        op = _OPS.get(kind)
        if op is None or not (z3.is_bool(e) or z3.is_int(e)):
            raise NotCompiled(f"operator {e.decl().name()}")
        args = [self.memo[c.get_id()][1] for c in e.children()]
        if op in ("div", "mod") and not (args[1].op == "c" and args[1].val > 0):
            # By a positive constant Z3's div and mod are Python's // and %; by anything else they are not.
            raise NotCompiled(f"{op} by {e.children()[1]}")
        return _make(op, args, z3.is_bool(e))


def _neg(n: _Node) -> _Node:
    if n.op == "c":
        return _const(not n.val)
    return n.args[0] if n.op == "not" else _Node("not", [n])


def _conj(gs: Sequence[_Node]) -> _Node:
    return TRUE if not gs else gs[0] if len(gs) == 1 else _Node("and", gs)


Branch = tuple[list[_Node], dict[int, _Node]]  # guards over the current state, next-state field -> term


def _merge(x: Branch, y: Branch) -> Branch | None:
    """Both branches at once (None: they contradict each other on a field's value)."""
    guards, assigned = [*x[0], *y[0]], dict(x[1])
    for f, term in y[1].items():
        if f not in assigned:
            assigned[f] = term
        elif assigned[f] is not term:  # two assignments of one field: they must agree
            same = _make("=", [assigned[f], term], True)
            if same is FALSE:
                return None
            if same is not TRUE:
                guards.append(same)
    return guards, assigned


Recurse = Callable[[_Node, bool], list[Branch]]


def _branches(n: _Node, negate: bool, rec: Recurse) -> list[Branch]:
    """Branches whose disjunction is ``n`` (``not n`` with ``negate``); ``rec`` takes the subterms apart."""
    if not n.tf:
        g = _neg(n) if negate else n
        return [] if g is FALSE else [([] if g is TRUE else [g], {})]
    op, args = n.op, n.args
    if op == "t":  # a Boolean next-state field
        return [([], {n.val: FALSE if negate else TRUE})]
    if op == "not":
        return rec(args[0], not negate)
    if op in ("and", "or") and (op == "and") != negate:  # a conjunction: distribute
        out: list[Branch] = [([], {})]
        for c in args:
            parts = rec(c, negate)
            if len(out) * len(parts) > BRANCH_LIMIT:
                raise NotCompiled(f"more than {BRANCH_LIMIT} branches")
            out = [m for x in out for y in parts if (m := _merge(x, y)) is not None]
        return out
    if op in ("and", "or"):
        return [b for c in args for b in rec(c, negate)]
    if op == "=>":
        return rec(_Node("or", [_neg(args[0]), args[1]]), negate)
    if op == "ite":
        c, x, y = args
        if c.tf:
            raise NotCompiled("a condition on the next state", c.tf)
        bx, by = rec(x, negate), rec(y, negate)
        if len(bx) == 1 and len(by) == 1 and bx[0][1].keys() == by[0][1].keys():
            # One branch each way assigning the same fields: one branch of If terms (no doubling).
            (gx, ax), (gy, ay) = bx[0], by[0]
            guard = [] if not gx and not gy else [_Node("ite", [c, _conj(gx), _conj(gy)])]
            return [(guard, {f: _Node("ite", [c, ax[f], ay[f]], boolean=ax[f].boolean) for f in ax})]
        return [([c, *g], m) for g, m in bx] + [([_neg(c), *g], m) for g, m in by]
    if op == "=" and len(args) == 2:
        x, y = args
        for var, term in ((x, y), (y, x)):
            if var.op == "t" and not term.tf:
                if not negate:
                    return [([], {var.val: term})]
                if term.boolean:  # t != b is t = not b
                    return [([], {var.val: _neg(term)})]
        if x.boolean:  # x = y as (x and y) or (not x and not y)
            return rec(_Node("or", [_Node("and", [x, y]), _Node("and", [_neg(x), _neg(y)])]), negate)
    if op == "xor":
        return rec(_Node("=", args), not negate)
    raise NotCompiled(f"{op} over the next state", _blocking(n) or n.tf)


def _blocking(n: _Node) -> frozenset[int]:
    """The next-state fields a term reads other than as a value it passes through (in a condition or an
    operand): fixing those first leaves the others in assignable places (``t_x = If(t_n = 1, t_a, t_b)``
    splits over ``t_n``)."""
    out: set[int] = set()
    stack = [n]
    while stack:
        x = stack.pop()
        if not x.tf or x.op == "t":
            continue
        if x.op == "ite":
            out |= x.args[0].tf
            stack.extend(x.args[1:])
        elif x.op in ("=", "not", "and", "or", "=>", "xor", "distinct"):
            stack.extend(x.args)
        else:  # arithmetic and comparisons: every field they read
            out |= x.tf
    return frozenset(out)


def _substitute(n: _Node, f: int, value: _Node, memo: dict[int, _Node]) -> _Node:
    """``n`` with next-state field ``f`` replaced by ``value`` (constants folded)."""
    if f not in n.tf:
        return n
    hit = memo.get(id(n))
    if hit is None:
        hit = memo[id(n)] = value if n.op == "t" else _make(
            n.op, [_substitute(a, f, value, memo) for a in n.args], n.boolean)
    return hit


# Z3 operators as Python: n-ary ones joined, the others from a template over their arguments' source.
_JOINED = ("and", "or", "+", "-", "*")
_PYTHON = {"not": "(not {0})", "=>": "((not {0}) or {1})", "xor": "({0} != {1})", "ite": "({1} if {0} else {2})",
           "neg": "(-{0})", "div": "({0} // {1})", "mod": "({0} % {1})", "<": "({0} < {1})", "<=": "({0} <= {1})",
           ">": "({0} > {1})", ">=": "({0} >= {1})"}


class _Codegen:
    """Python source of terms: each shared term (or a too deeply nested one) once, in a local variable."""

    def __init__(self, shared: Mapping[int, int] | None = None) -> None:
        self.shared = shared or {}
        self.lines: list[str] = []
        self.names: dict[int, tuple[str, int]] = {}

    def expr(self, n: _Node) -> str:
        return self._expr(n, top=True)[0]

    def _expr(self, n: _Node, top: bool = False) -> tuple[str, int]:
        if n.op == "c":
            return repr(n.val), 0
        if n.op == "s":
            return f"s[{n.val}]", 0
        if n.op == "t":
            raise NotCompiled("a next-state field left in a term")
        hit = self.names.get(id(n))
        if hit is not None:
            return hit
        parts = [self._expr(a) for a in n.args]
        depth = 1 + max((d for _, d in parts), default=0)
        a = [p for p, _ in parts]
        op = n.op
        if op in _JOINED:
            src = "(" + f" {op} ".join(a) + ")"
        elif op == "distinct":
            src = f"(len({{{', '.join(a)}}}) == {len(a)})"
        elif op == "=":
            src = "(" + " and ".join(f"{a[0]} == {x}" for x in a[1:]) + ")"
        else:
            src = _PYTHON[op].format(*a)
        if not top and (self.shared.get(id(n), 0) > 1 or depth > _DEPTH):
            name = f"_{len(self.names)}"
            self.lines.append(f"    {name} = {src}")
            self.names[id(n)] = (name, 0)
            return name, 0
        return src, depth


def _function(source: str, name: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<rollcheck.smt.compiled {name}>", "exec"), namespace)
    return namespace[name]


def _references(roots: Sequence[_Node]) -> dict[int, int]:
    count: dict[int, int] = {}
    stack = list(roots)
    while stack:
        n = stack.pop()
        seen = count.get(id(n), 0)
        count[id(n)] = seen + 1
        if not seen:
            stack.extend(n.args)
    return count


class CompiledSystem:
    """One symbolic system's relations as Python functions of a state's values (``fields()`` order)."""

    def __init__(self, sym: Any, compile_wellformed: bool = True) -> None:
        self.sym = sym
        self.fields: list[tuple[str, str]] = list(sym.fields())
        self.names = [k for k, _ in self.fields]
        get = operator.itemgetter(*self.names)
        self._get: Callable[[Mapping[str, Any]], Vals] = (get if len(self.names) > 1
                                                          else lambda vals: (get(vals),))
        self.v, self.v2 = sym.declare("s"), sym.declare("t")
        self._import = _Importer(self.v, self.v2, self.names)
        self._domains: dict[int, list[_Node] | None] = {}
        self.wellformed: Predicate | None = None
        try:
            self.wellformed = self._predicate(sym.wellformed(self.v)) if compile_wellformed else None
        except (NotCompiled, RecursionError):
            pass

    def as_tuple(self, vals: Mapping[str, Any]) -> Vals | None:
        """A state's ``values`` as a tuple, None where they do not give every field."""
        try:
            return self._get(vals) if len(vals) == len(self.names) else None
        except KeyError:
            return None

    def relation(self, rel: Callable[[Any, Any], Any]) -> Successors:
        """The successors of a state's values under ``rel`` (a ``Relation``) and ``wellformed``: a function
        computing exactly the next states the solver enumerates. Raises :class:`NotCompiled`."""
        if self.wellformed is None:
            raise NotCompiled("wellformed is not compiled")
        try:
            branches = self._take_apart(self._import(rel(self.v, self.v2)))
        except RecursionError:
            raise NotCompiled("a term nested too deeply") from None
        width = len(self.names)
        for _guards, assigned in branches:
            if len(assigned) < width:
                raise NotCompiled("a branch leaves next-state fields free: "
                                  + ", ".join(k for i, k in enumerate(self.names) if i not in assigned))
        guards_terms = [(_conj(g), [m[i] for i in range(width)]) for g, m in branches]
        gen = _Codegen(_references([x for g, terms in guards_terms for x in (g, *terms)]))
        body = []
        for guard, terms in guards_terms:
            values = ", ".join(gen.expr(t) for t in terms)
            body.append(f"    if {gen.expr(guard)}:\n        out.append(({values},))")
        source = "\n".join(["def successors(s):", *gen.lines, "    out = []", *body,
                            "    return [t for t in out if wellformed(t)]"])
        fn = _function(source, "successors")
        fn.__globals__["wellformed"] = self.wellformed
        return fn  # type: ignore[no-any-return]

    def predicate(self, formula: Any) -> Predicate:
        """A formula over the current state (``self.v``) as a function of a state's values."""
        return self._predicate(formula)

    def _predicate(self, formula: Any) -> Predicate:
        node = self._import(formula)
        if node.tf:
            raise NotCompiled("a state predicate reads the next state")
        gen = _Codegen(_references([node]))
        result = gen.expr(node)
        return _function("\n".join(["def holds(s):", *gen.lines, f"    return {result}"]),  # type: ignore[no-any-return]
                         "holds")

    def _take_apart(self, node: _Node) -> list[Branch]:
        """:func:`_branches`, where a term reads a next-state field elsewhere than in an assignment split
        over that field's values: ``p == Or over c in domain(f) of (t_f = c and p[t_f := c])`` for every
        next state ``wellformed`` admits. The split is tried where the field is read first (the smallest
        term around it), then, if that fails, on the whole relation."""
        try:
            return self._split(node, False, SPLIT_DEPTH, local=True)
        except NotCompiled:
            return self._split(node, False, SPLIT_PRODUCT, local=False)

    def _split(self, node: _Node, negate: bool, budget: int, local: bool) -> list[Branch]:
        """``local``: every failing subterm split, at most ``budget`` deep; else the whole term, into at most
        ``budget`` copies."""
        def rec(n: _Node, neg: bool) -> list[Branch]:
            return self._split(n, neg, budget, local) if local else _branches(n, neg, rec)

        try:
            branches = _branches(node, negate, rec)
        except NotCompiled as exc:
            options = [(len(d), f, d) for f in sorted(exc.fields) if (d := self._domain(f)) is not None]
            size, f, domain = min(options) if options else (0, -1, [])
            if not options or (budget <= 0 if local else size > budget):
                raise NotCompiled(str(exc)) from None  # the enclosing terms cannot split it either
            rest = budget - 1 if local else budget // len(domain)
            branches = []
            for value in domain:
                for guards, assigned in self._split(_substitute(node, f, value, {}), negate, rest, local):
                    branches.append((guards, {**assigned, f: value}))
        out = []
        for guards, assigned in branches:
            kept = [g for g in guards if g is not TRUE]
            if FALSE not in kept:
                out.append((kept, assigned))
        if len(out) > BRANCH_LIMIT:
            raise NotCompiled(f"more than {BRANCH_LIMIT} branches")
        return out

    def _domain(self, f: int) -> list[_Node] | None:
        """Every value of next-state field ``f`` under ``wellformed`` (None: more than SPLIT_LIMIT)."""
        if f not in self._domains:
            name, sort = self.fields[f]
            if sort == "bool":
                self._domains[f] = [TRUE, FALSE]
            else:
                solver = z3.Solver()
                solver.set("timeout", 10_000)
                solver.add(self.sym.wellformed(self.v2))
                var, found = self.v2[name], list[int]()
                while len(found) <= SPLIT_LIMIT and solver.check() == z3.sat:
                    found.append(solver.model().eval(var, model_completion=True).as_long())
                    solver.add(var != found[-1])
                complete = len(found) <= SPLIT_LIMIT and solver.check() == z3.unsat
                self._domains[f] = [_const(x) for x in found] if complete else None
        return self._domains[f]
