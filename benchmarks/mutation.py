"""Source-level mutation campaign: how many small bugs in the reference implementations the explorer kills.

    python benchmarks/mutation.py --protocol streams_probing               # every mutant of one protocol
    python benchmarks/mutation.py --protocol features --limit 20 --jobs 2  # 20 mutants spread over the list
    python benchmarks/mutation.py --list --protocol zk_migration           # enumerate only, run nothing
    python benchmarks/mutation.py --match 'system.py:.*:if_' --operators if_true if_false
    python benchmarks/mutation.py --protocol features --screen --jobs 2   # the cheap steps only, then --resume

The broken variants (``rollcheck mutants``) are bugs someone chose; these are mechanical ones. Each mutant
is one edit, made with :mod:`ast`, to a module of ``reference_impl/<protocol>/`` (``api.py``, ``system.py``
and, where present, ``catalog.py``, ``releases.py``, ``config.py``; never the registry entry, the symmetry
keys, the command-line tool or the JVM bridge). For each mutant the repository's packages are copied into a
temporary directory, the mutated module is written there, and ``rollcheck explore`` runs from that copy
(``PYTHONPATH`` first, working directory the copy, so the copy wins over the editable install) on the
protocol's ``small`` config, its gate config and the story configs the gate's ``ci`` tier explores, under
each of the protocol's profiles (kip, kafka, and
streams' kafka-2.0). A property violated that the unmutated baseline does not violate kills the mutant; a
crash (exit other than 0/1, or no JSON summary: an exception at import or during the search) kills it "by
crash" and is counted apart; the per-mutant time limit (or the explorer's memory budget) gives "timeout".

The steps run cheapest first, and the first kill ends a mutant: outside the system module, the decision rules
alone (``rollcheck prove --decisions-only`` under each profile: the Z3 formula of each API-level decision against
the mutated reference on its bounded domain, seconds; the z3 cells below run them again), then the explorer on
``small`` (every profile), then
Z3 against the mutated reference on ``small`` and on each story config (below: seconds each; since session 41
before the larger configs, so a kill both would make is now counted to Z3), then the explorer on the larger
configs, then the rest.
A mutant no property kills on the reference's configs meets the gate's broken variant cells (``rollcheck gate``
on a config with the protocol's variant cells alone, ``variants_argv``: the reference with one bug switched on, each
on its config): they take the reference's code through paths no reference config reaches (a failed member, a refused
write ...), and a variant no longer caught would turn the gate red: "killed (variant)"; so would the Z3 relation
differing from the mutated reference where a variant steps otherwise than the reference: "killed (z3)". Then it
meets the two other copies of the rules, which the mutation did not touch, as the gate's ``ci`` tier runs them on
``small`` and the story configs: Z3 (``rollcheck prove --differential-only --differential 0``: the Z3 relation
against the mutated reference on every reachable state, and the decision rules on their bounded input domain, run
early, as said), "killed (z3)" on a disagreement; then TLC (``rollcheck conform``: reachable views and traces both
ways, and the config domain; on ``small`` and each conformance config, ``conform_cells_of``), "killed (conform)".
An exception the mutated reference raises under the decision differential is a crash.
``--no-variants`` / ``--no-z3`` / ``--no-conform`` leave those steps out. ``--screen`` runs only the cheap steps (a
config module's domain, the decision rules, the explorer on ``small``): a mutant they do not kill is "screened", no
verdict and out of the kill rate, and ``--resume`` from that file runs it in full (the kills stand), so the
survivors of a large selection show up in minutes rather than after hours of kills. A survivor whose ``small``
distinct-state count differs from the baseline is "survived (count changed)": the mutation changed behaviour and no
checker noticed. A survivor that ``benchmarks/equivalent_mutants.toml`` names (an edit no caller can observe, each
entry with its argument) is "equivalent", and the kill rate leaves it out; a listed mutant that is killed is
reported as a stale entry.

Mutation operators (each site's id is ``<protocol>:<file>:<line>:<col>:<operator>``, col 1-based):

* ``cmp_swap``: ``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <-> ``!=`` (each operator of a chained comparison);
* ``int_plus_1`` / ``int_minus_1``: an integer constant off by one (not the ``1`` of ``x + 1`` / ``x - 1``);
* ``bound_plus_1``: ``x + 1`` -> ``x + 2``, ``x - 1`` -> ``x - 2``; ``bound_minus_1``: ``x - 1`` -> ``x - 0``;
* ``drop_increment``: ``x + 1`` -> ``x + 0`` (binary or augmented: an epoch bump that no longer bumps);
* ``drop_and_operand`` / ``drop_or_operand``: one operand of ``and`` replaced by True, of ``or`` by False
  (the condition dropped; the absorbing value would make the whole expression constant, which the if_*
  operators already cover);
* ``if_true`` / ``if_false``: the test of an ``if`` statement or a conditional expression forced;
* ``swap_branches``: ``if c: A else: B`` run as ``if not (c): A else: B``, i.e. the branches swapped
  (written as a negated test so that every other line stays where it was);
* ``early_return``: a function's first statement (after its docstring) replaced by ``return V``, V being
  its first ``return``'s value when that is a constant, a parameter or nothing (no generators; nothing
  that could be unbound at the top of the function);
* ``drop_call``: a call made for its effect (an expression statement: ``records.append(r)``, a check that
  raises) replaced by ``pass``: the record never written, the check never made (a multi-line call keeps the
  lines after it where they were).

Sites whose outcome is fixed by a broken variant's flag (``"name" in ...mutations``: false in every
reference config) are left alone, as is the code only such a flag reaches: mutating it would give mutants
equal to the reference, or the repository's own variants again (a flag first copied into an attribute, as
``features``' system does, is not recognized: its sites are mutated). Annotations are not mutated, nor the field
defaults of a protocol's config class (``*Config``): they are the named configs' data, which the reference, the
Z3 model and the spec's constants all read alike, not rules; the config's validation is mutated, and ``conform``
compares it with the spec's own statement of its constants (the config domain, ``rollcheck/tla/domain.py``).
Every mutated module is parsed again and compared with the intended syntax tree, so a text edit can never mean something
else than its operator says; mutants that do not compare are dropped (reported), and identical ones merged.

Results: one JSON file (``--out``; default ``benchmarks/results/mutation-<UTC time>.json``) with the machine,
the commit, the baselines and every mutant; a summary table on stdout; a progress line on stderr every 10 s.
Ctrl-C (or SIGTERM) stops the running explorer processes and writes what was done, marked partial.
"""

from __future__ import annotations

import argparse
import ast
import copy
import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rollcheck.registry import get_protocol, protocol_names

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
# Every package a run imports from the repository: all of them are copied, so that no module of the copy
# can import its sibling from the editable install instead.
PACKAGES = ("rollcheck", "reference_impl", "properties", "model", "specs")
# What the explorer's verdict on a mutant depends on (--recheck carries it over only while these are unchanged).
EXPLORER_INPUTS = ("reference_impl", "properties", "rollcheck")
MUTATED_MODULES = ("api.py", "system.py", "catalog.py", "releases.py", "config.py")
OPERATORS = ("cmp_swap", "int_plus_1", "int_minus_1", "bound_plus_1", "bound_minus_1", "drop_increment",
             "drop_and_operand", "drop_or_operand", "if_true", "if_false", "swap_branches", "early_return",
             "drop_call")
# Names under which a config's broken-variant flags are read (config.mutations, self.muts).
FLAG_NAMES = frozenset({"mutations", "muts"})
NOT_MUTATED = frozenset({"annotation", "returns", "type_comment"})  # fields of a node whose subtree is skipped
PROGRESS_EVERY = 10.0
CELL_LIMIT = 20.0  # an explorer run's time limit, in multiples of the same run on the unmutated copy
CONFORM_AFTER_TIMEOUT = 300.0  # a conform run's time limit after an explorer run timed out, in seconds
SAVE_EVERY = 30.0  # the JSON file is rewritten this often, so that even a kill -9 keeps most of a campaign

STATUSES = ("killed", "killed (variant)", "killed (z3)", "killed (conform)", "killed (crash)", "survived",
            "survived (count changed)", "equivalent", "timeout", "screened")
# Survivors argued equivalent to the reference (a reviewed list, each with its reason): see ``Equivalent``.
EQUIVALENTS = ROOT / "benchmarks" / "equivalent_mutants.toml"


# ----------------------------------------------------------------------------------- equivalent mutants


@dataclass(frozen=True)
class Equivalent:
    """One edit argued to change nothing any caller can observe (``benchmarks/equivalent_mutants.toml``).

    It names the edit, not its place (line numbers move): every mutant of ``module`` with this operator and this
    line before and after. A mutant it names is still run: only when every step lets it survive is it counted
    "equivalent" (with ``reason``) instead of "survived"; killed, it is killed, and the entry is reported stale."""

    protocol: str
    module: str
    operator: str
    before: str
    after: str
    reason: str
    # Optional: only inside this function (``Class.method`` for a method), where the same text elsewhere in the
    # module is not equivalent (a row without the field, from before it, is then not named).
    function: str = ""
    # Optional: only at this column of the line (the id's fourth field), where the same edit of the same text in
    # the same function is not equivalent at another depth of nesting (columns stay when lines move).
    column: str = ""

    def names(self, row: dict[str, Any]) -> bool:
        return ((row.get("protocol"), Path(str(row.get("file", ""))).name, row.get("operator"), row.get("before"),
                 row.get("after")) == (self.protocol, self.module, self.operator, self.before, self.after)
                and (not self.function or row.get("function") == self.function)
                and (not self.column or str(row.get("id", "")).split(":")[3:4] == [self.column]))


def load_equivalents(path: Path = EQUIVALENTS) -> list[Equivalent]:
    """The reviewed list; ``ValueError`` (one line) when the file is malformed."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None
    optional = {"function", "column"}
    keys = set(Equivalent.__dataclass_fields__) - optional
    out = []
    for i, e in enumerate(doc.get("equivalent", []), 1):
        if not isinstance(e, dict) or not keys <= set(e) <= keys | optional or not all(
                isinstance(v, str) and v.strip() for v in e.values()):
            raise ValueError(f"{path}: entry {i} must have exactly the non-empty strings {', '.join(sorted(keys))} "
                             "(and optionally function, column)")
        if e["operator"] not in OPERATORS:
            raise ValueError(f"{path}: entry {i}: unknown operator {e['operator']!r}")
        if not e.get("column", "0").isdigit():
            raise ValueError(f"{path}: entry {i}: column must be a number, not {e['column']!r}")
        out.append(Equivalent(**e))
    return out


def judge_equivalent(row: dict[str, Any], equivalents: Sequence[Equivalent]) -> dict[str, Any]:
    """A survivor named by the list becomes "equivalent", with the list's reason; any other row is as it was."""
    if not str(row.get("status", "")).startswith("survived"):
        return row
    entry = next((e for e in equivalents if e.names(row)), None)
    return row if entry is None else dict(row, status="equivalent", equivalent=entry.reason)


def listed_equivalent(m: Mutant, equivalents: Sequence[Equivalent]) -> bool:
    """Whether the list names this mutant (before it runs)."""
    row = {"protocol": m.protocol, "file": m.file, "operator": m.operator, "before": m.before, "after": m.after,
           "function": m.function}
    return any(e.names(row) for e in equivalents)


# ----------------------------------------------------------------------------------- enumeration


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


@dataclass
class Mutant:
    id: str
    protocol: str
    operator: str
    file: str  # relative to the repository
    module: str  # relative to the protocol's package (what the id names)
    line: int
    col: int
    before: str
    after: str
    source: str = field(repr=False)  # the whole mutated module
    function: str = ""  # the innermost function (or method, as Class.name) around the site; "" at module level


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


def snapshot(dest: Path) -> tuple[str, str]:
    """Copy the packages once, at the start: every mutant and the baselines are built from this copy, so a
    campaign measures one version of the code even if the working tree changes while it runs (a commit
    landing mid-run once paired old mutated modules with a newer engine). Returns two SHA-256 digests: over
    every module copied, and over ``reference_impl/`` alone (:func:`reference_digests` has one per protocol).

    No bytecode is copied: a cached .pyc of the original must never stand in for a mutated module."""
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, dest / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    digest, reference = hashlib.sha256(), hashlib.sha256()
    for path in sorted(dest.rglob("*.py")):
        entry = str(path.relative_to(dest)).encode() + b"\0" + path.read_bytes() + b"\0"
        digest.update(entry)
        if path.relative_to(dest).parts[0] == "reference_impl":
            reference.update(entry)
    return digest.hexdigest(), reference.hexdigest()


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


def dead_definitions(root: Path) -> dict[Path, frozenset[int]]:
    """Per module of ``root/reference_impl``, the top-level definitions no code under ``root`` (the campaign's
    packages: the reference, its checkers and the engine; tests are not there) can reach: the least fixpoint of
    "read by a live statement", where every statement but a definition is live and names match by name alone
    (any read of a name anywhere keeps every definition of it). A definition read only by tests (KIP-268's test
    matrix once) or by nothing changes no behaviour a mutant or a checker has, so deleting it leaves every
    verdict standing (:func:`registry_growth`). A module that calls ``globals()`` or ``vars()`` keeps all its
    definitions."""
    modules: list[tuple[Path, ast.Module]] = []
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        try:
            modules.append((path, ast.parse(path.read_bytes())))
        except (SyntaxError, ValueError):
            continue
    ref = root / "reference_impl"
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


def reference_digests(root: Path, packages: dict[str, str], code_only: bool = False,
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
    ref = root / "reference_impl"
    dead = dead_definitions(root) if live_only else {}
    reached = _module_imports(ref) if live_only else {}
    imports = {name: set(re.findall(r"^\s*(?:from|import)\s+reference_impl\.(\w+)", "".join(
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
                if parts[0] == "reference_impl":
                    rest = parts[1:]
                    # the last part of a from-import is a module only when the file exists
                    while rest and not (ref.joinpath(*rest).is_dir()
                                        or ref.joinpath(*rest).with_suffix(".py").is_file()):
                        rest = rest[:-1]
                    loads.update(module(rest))
        graph[path] = loads
    return graph


# A protocol's config module (its named configs' class and validation): its mutants meet the config domain first.
CONFIG_MODULE = "config.py"

# A protocol's system module (its transition system): the decision rules do not call it, so its mutants skip them
# as a first step (the z3 cells run them anyway).
SYSTEM_MODULE = "system.py"

# The z3 rows of the decision rules' first step (``run_decisions``): a cell name no config has.
DECISIONS = "decisions"

# Each protocol's registry entry (reference_impl/<package>/protocol.py): its named configs and broken variants.
REGISTRY_MODULE = "protocol.py"

# Run in a checkout's packages (PYTHONPATH first): what the kills of a campaign there were run on, besides the
# code. Values as canonical JSON (a frozenset's order is the hash seed's, so sorted), so two checkouts compare.
_REGISTRY_SIGNATURE = """
import dataclasses, enum, json, sys
from rollcheck.registry import get_protocol

def canon(x):
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: canon(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, (set, frozenset)):
        return sorted((canon(v) for v in x), key=repr)
    if isinstance(x, (list, tuple)):
        return [canon(v) for v in x]
    if isinstance(x, dict):
        return {str(k): canon(v) for k, v in x.items()}
    if isinstance(x, enum.Enum):
        return repr(x)
    return x if isinstance(x, (str, int, float, bool, type(None))) else repr(x)

entry = get_protocol(sys.argv[1])
variants = []
for v in entry.variants:
    ts = v.system(entry.configs[v.config])
    variants.append([v.id, list(v.expect), v.config, type(ts).__qualname__, canon(ts.config)])
# (an older commit's ProtocolEntry has no conform_configs)
print(json.dumps({"configs": {n: canon(c) for n, c in entry.configs.items()}, "gate_config": entry.gate_config,
                  "story_configs": list(entry.story_configs),
                  "conform_configs": list(getattr(entry, "conform_configs", ())), "profiles": list(entry.profiles),
                  "variants": variants}, sort_keys=True))
"""


def registry_signature(root: Path, protocol: str) -> dict[str, Any]:
    """The protocol's registry entry as the packages under ``root`` have it (:data:`_REGISTRY_SIGNATURE`)."""
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONHASHSEED="0")
    proc = subprocess.run([sys.executable, "-c", _REGISTRY_SIGNATURE, protocol], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"registry of {protocol} under {root}: {proc.stderr.strip().splitlines()[-1:]}")
    return dict(json.loads(proc.stdout))


def registry_grew(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether ``after`` (a registry signature) runs every check ``before`` ran: each named config of ``before``
    there with the same value, its story configs among ``after``'s, the same gate config, profiles and broken
    variants. Only named configs (and story configs) added since, then: a kill under ``before`` is one under
    ``after``."""
    configs = after["configs"]
    return (all(configs.get(name) == value for name, value in before["configs"].items())
            and set(before["story_configs"]) <= set(after["story_configs"])
            and set(before.get("conform_configs", [])) <= set(after.get("conform_configs", []))
            and (before["gate_config"], before["profiles"], before["variants"])
            == (after["gate_config"], after["profiles"], after["variants"]))


def registry_growth(snapshot_root: Path, packages: dict[str, str]) -> Callable[[dict[str, Any], str], bool]:
    """For ``--resume``: whether an earlier row's kill stands at this snapshot although its protocol's reference
    digest changed, because only the registry entry grew (a story config added, as for a survivor only a new
    config reaches) or definitions that nothing reads were deleted (test data moved out of the reference, dead
    code: :func:`dead_definitions`). The row's commit is read from git (cached per commit): its protocol's code
    digest must be the row's own (the row ran on that commit's code, not a dirty tree), its live code without
    the registry entry this snapshot's, and its registry entry one this snapshot's extends
    (:func:`registry_grew`). A mutant inside a deleted definition is gone; one whose line moved has a new id
    and runs again."""
    now_body = reference_digests(snapshot_root, packages, code_only=True, registry=False, live_only=True)
    now: dict[str, dict[str, Any]] = {}
    seen: dict[tuple[str, str], tuple[str, str, dict[str, Any]] | None] = {}

    def at(commit: str, protocol: str) -> tuple[str, str, dict[str, Any]] | None:
        tree = Path(tempfile.mkdtemp(prefix="rollcheck-registry-"))
        try:
            archive = subprocess.run(["git", "archive", commit, *PACKAGES], cwd=ROOT, capture_output=True,
                                     timeout=300)
            if archive.returncode != 0:
                return None  # a commit this clone does not have
            subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True, timeout=300)
            full = reference_digests(tree, packages, code_only=True)[protocol]
            body = reference_digests(tree, packages, code_only=True, registry=False, live_only=True)[protocol]
            return full, body, registry_signature(tree, protocol)
        except (RuntimeError, subprocess.SubprocessError, KeyError, OSError):
            return None
        finally:
            shutil.rmtree(tree, ignore_errors=True)

    def grown(row: dict[str, Any], protocol: str) -> bool:
        commit, code = row.get("commit"), row.get("protocol_code_sha256")
        if not commit or not code or protocol not in now_body:
            return False
        if (commit, protocol) not in seen:
            seen[commit, protocol] = at(commit, protocol)
        then = seen[commit, protocol]
        if then is None or then[0] != code or then[1] != now_body[protocol]:
            return False
        if protocol not in now:
            now[protocol] = registry_signature(snapshot_root, protocol)
        return registry_grew(then[2], now[protocol])

    return grown


def protocol_packages() -> dict[str, str]:
    """Each protocol's package name under ``reference_impl/`` -> the protocol."""
    return {protocol_dir(p).name: p for p in protocol_names()}


def protocol_dir(protocol: str) -> Path:
    module = sys.modules[get_protocol(protocol).build.__module__]
    return Path(module.__file__ or "").resolve().parent


def enumerate_mutants(protocol: str, operators: Sequence[str],
                      source: Path = ROOT) -> tuple[list[Mutant], list[dict[str, Any]]]:
    """Every mutant of one protocol, in a fixed order (module, position, operator), and the sites dropped;
    the modules are read under ``source`` (the campaign's snapshot of the repository)."""
    pkg = source / protocol_dir(protocol).relative_to(ROOT)
    mutants: list[Mutant] = []
    dropped: list[dict[str, Any]] = []
    seen_ids: dict[str, int] = {}
    seen_texts: dict[tuple[str, str], str] = {}
    for name in MUTATED_MODULES:
        path = pkg / name
        if not path.is_file():
            continue
        original = path.read_text(encoding="utf-8")
        sites = ModuleSites(original)
        functions = enclosing_functions(original)
        rel = str(path.relative_to(source))
        for site in sites.sites():
            if site.operator not in operators:
                continue
            base = f"{protocol}:{name}:{site.line}:{site.col}:{site.operator}"
            # Two sites can share a position and an operator ((a and b) and c): numbered in enumeration order.
            seen_ids[base] = seen_ids.get(base, 0) + 1
            mid = base if seen_ids[base] == 1 else f"{base}#{seen_ids[base]}"
            text = apply_site(sites, site)
            if text is None:
                dropped.append({"id": mid, "reason": "the edit does not give the intended syntax tree"})
                continue
            if (rel, text) in seen_texts:
                dropped.append({"id": mid, "reason": f"the same module as {seen_texts[rel, text]}"})
                continue
            seen_texts[rel, text] = mid
            after_lines = text.splitlines()
            mutants.append(Mutant(mid, protocol, site.operator, rel, name, site.line, site.col,
                                  sites.lines[site.line - 1].strip(), after_lines[site.line - 1].strip(), text,
                                  functions.get(site.line, "")))
    return mutants, dropped


def spread(items: list[Mutant], limit: int | None, offset: int = 0) -> list[Mutant]:
    """At most ``limit`` items evenly spaced over the list (deterministic), so that a small sample still
    covers every module and operator; ``offset`` shifts every pick by that many places (another sample of the
    same spread: offsets 0 .. len/limit - 1 never pick a mutant twice)."""
    if limit is None or limit >= len(items):
        return items
    return [items[((i * len(items)) // limit + offset) % len(items)] for i in range(limit)]


# ----------------------------------------------------------------------------------- running


@dataclass
class Cell:
    config: str
    profile: str


@dataclass
class CellResult:
    config: str
    profile: str
    outcome: str  # "holds", "violated", "crash", "timeout", "incomplete" (stopped at the memory budget)
    exit: int | None
    seconds: float
    distinct_states: int | None = None
    transitions: int | None = None
    violated: list[str] = field(default_factory=list)
    detail: str = ""


class Stopped(Exception):
    """The campaign is being stopped (Ctrl-C): a mutant in progress is not recorded."""


class Runner:
    """Copies the repository's packages, writes a mutated module and runs the explorer from the copy."""

    def __init__(self, scratch: Path, snapshot: Path, max_memory: float, collect_all: bool = False) -> None:
        self.scratch = scratch
        self.snapshot = snapshot
        self.max_memory = max_memory
        self.collect_all = collect_all
        self.stop = threading.Event()
        self._procs: dict[int, subprocess.Popen[str]] = {}
        self._lock = threading.Lock()
        self._count = 0

    def workdir(self, mutant: Mutant | None) -> Path:
        with self._lock:
            self._count += 1
            n = self._count
        work = self.scratch / f"m{n:05d}"
        for pkg in PACKAGES:
            shutil.copytree(self.snapshot / pkg, work / pkg)
        if mutant is not None:
            (work / mutant.file).write_text(mutant.source, encoding="utf-8")
        return work

    def env(self, work: Path) -> dict[str, str]:
        # The copy first: rollcheck is installed editable, but its finder comes after the path entries.
        path = os.pathsep.join([str(work), *filter(None, [os.environ.get("PYTHONPATH")])])
        return dict(os.environ, PYTHONPATH=path)

    def import_check(self, work: Path, protocol: str) -> dict[str, str]:
        """Where each package (and the protocol's modules) is imported from, as the explorer runs it."""
        pkg = protocol_dir(protocol)
        dotted = ".".join(pkg.relative_to(ROOT).parts)
        names = [*PACKAGES, *(f"{dotted}.{m.removesuffix('.py')}" for m in MUTATED_MODULES if (pkg / m).is_file())]
        code = ("import importlib, json\n"
                f"print(json.dumps({{n: importlib.import_module(n).__file__ for n in {names!r}}}))\n")
        proc = subprocess.run([sys.executable, "-c", code], cwd=work, env=self.env(work), capture_output=True,
                              text=True, timeout=120, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"import check failed: {proc.stderr.strip()[-2000:]}")
        files: dict[str, str] = json.loads(proc.stdout)
        wrong = {n: f for n, f in files.items() if not Path(f).resolve().is_relative_to(work.resolve())}
        if wrong:
            raise RuntimeError(f"the copy does not win over the installed packages: {wrong}")
        return files

    def run_cell(self, work: Path, protocol: str, cell: Cell, timeout: float) -> CellResult:
        if self.stop.is_set():
            raise Stopped
        if timeout <= 0:
            return CellResult(cell.config, cell.profile, "timeout", None, 0.0, detail="no time left for this run")
        out = work / "out"
        cmd = [sys.executable, "-m", "rollcheck", *explore_argv(protocol, cell, out, self.max_memory, self.collect_all)]
        t0 = time.perf_counter()
        # Its own session: the explorer's processes can be killed as a group, and a terminal's Ctrl-C
        # reaches only this script, which stops them itself.
        proc = subprocess.Popen(cmd, cwd=work, env=self.env(work), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        with self._lock:
            self._procs[proc.pid] = proc
        try:
            try:
                stdout, stderr = proc.communicate(timeout=max(timeout, 0.1))
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                proc.communicate()
                return CellResult(cell.config, cell.profile, "timeout", None, time.perf_counter() - t0,
                                  detail=f"over the time limit ({timeout:.0f} s left for this run)")
        finally:
            with self._lock:
                self._procs.pop(proc.pid, None)
        if self.stop.is_set():
            raise Stopped
        return classify(cell, proc.returncode, stdout, stderr, time.perf_counter() - t0)

    @staticmethod
    def snapshot_has_spec(protocol: str) -> bool:
        return get_protocol(protocol).spec is not None

    @staticmethod
    def has_z3(protocol: str) -> bool:
        return get_protocol(protocol).z3 is not None

    def _run_tool(self, work: Path, cmd: list[str], timeout: float) -> tuple[int, str, str] | None:
        """One rollcheck command from the mutated copy, in its own session; None when over ``timeout``."""
        if self.stop.is_set():
            raise Stopped
        if timeout <= 0:
            return None
        proc = subprocess.Popen(cmd, cwd=work, env=self.env(work), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        with self._lock:
            self._procs[proc.pid] = proc
        try:
            try:
                stdout, stderr = proc.communicate(timeout=max(timeout, 0.1))
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                proc.communicate()
                return None
        finally:
            with self._lock:
                self._procs.pop(proc.pid, None)
        if self.stop.is_set():
            raise Stopped
        return proc.returncode, stdout, stderr

    def run_z3(self, work: Path, protocol: str, cell: Cell, timeout: float) -> tuple[str, str]:
        """``rollcheck prove --differential-only --differential 0`` on ``cell`` (small or a story config) from
        the mutated copy (the ci tier's z3 cells there): the Z3 relation against the mutated reference on every
        reachable state, and the decision rules on their bounded input domain. ("disagrees" | "agrees" | "error" |
        "timeout", a one-line detail). The encoding is a copy of the rules the mutation did not touch, so a
        disagreement kills a mutant the properties missed; an error (an exception the mutated reference
        raises where the decision differential calls it) is reported as such."""
        cmd = [sys.executable, "-m", "rollcheck", *z3_argv(protocol, cell.profile, work / "prove", cell.config)]
        return self._verdict("z3", f"{cell.config}/{cell.profile}", self._run_tool(work, cmd, timeout), timeout,
                             _prove_disagreement)

    def run_decisions(self, work: Path, protocol: str, profile: str, timeout: float) -> tuple[str, str]:
        """``rollcheck prove --decisions-only`` under ``profile`` from the mutated copy: the decision rules alone
        (the ci tier's z3 cell on small runs them too, after its walk of every state). Same verdicts as
        :meth:`run_z3`."""
        cmd = [sys.executable, "-m", "rollcheck", *decisions_argv(protocol, profile, work / "decisions")]
        return self._verdict("z3", f"decisions/{profile}", self._run_tool(work, cmd, timeout), timeout,
                             _prove_disagreement)

    def run_variants(self, work: Path, protocol: str, timeout: float, z3: bool = True) -> tuple[str, str]:
        """The gate's broken variants from the mutated copy (the gate's variant cells alone, ``variants_argv``):
        each variant is the reference with one bug switched on, so its run takes the reference's code through
        paths no reference config reaches (a failed member, a fenced write ...). A variant no longer caught by
        the explorer ("escaped") would turn the gate red; so would the Z3 relation differing from the mutated
        reference where a variant steps otherwise than the reference ("disagrees", with ``z3``): either kills
        the mutant. ("escaped" | "disagrees" | "caught" | "error" | "timeout", a one-line detail)."""
        argv = variants_argv(protocol, work / "variants", z3 and self.has_z3(protocol))
        ran = self._run_tool(work, [sys.executable, "-m", "rollcheck", *argv], timeout)
        if ran is None:
            return "timeout", f"variants over the time limit ({timeout:.0f} s left)"
        code, stdout, stderr = ran
        try:
            doc = json.loads(stdout)
            rows: list[dict[str, Any]] = doc["mutants"]["mutants"]
            findings: list[dict[str, Any]] = doc["findings"]
        except (ValueError, KeyError, TypeError):
            return "error", f"variants: exit {code}: {stderr.strip()[-300:]}"
        escaped = [f"{r['variant']} ({r.get('config', '?')})" for r in rows if not r.get("killed")]
        if escaped:
            return "escaped", ("no property catches " + ", ".join(escaped))[:300]
        for kind, verdict in (("disagreement", "disagrees"), ("error", "error")):
            first = next((f for f in findings if f.get("kind") == kind), None)
            if first is not None:
                return verdict, str(first.get("message", "")).splitlines()[0][:300]
        return ("caught", "") if code == 0 else ("error", f"variants: exit {code}: {stderr.strip()[-300:]}")

    def run_conform(self, work: Path, protocol: str, cell: Cell, timeout: float, domain_only: bool = False
                    ) -> tuple[str, str]:
        """``rollcheck conform`` on ``cell`` (small or a conformance config) from the mutated copy (the gate's
        TLC conformance: the reference's reachable views against TLC's, both trace directions, and the config
        domain; ``domain_only``: the domain alone): ("disagrees" | "agrees" | "error" | "timeout", a one-line
        detail). A disagreement kills a mutant the properties missed: the spec is the second copy of the rules,
        which the mutation did not touch."""
        cmd = [sys.executable, "-m", "rollcheck",
               *conform_argv(protocol, cell.profile, work / "conform", cell.config, domain_only)]

        def why(doc: dict[str, Any]) -> str:
            reports: list[dict[str, Any]] = doc.get("reports", [])
            bad: dict[str, Any] = next((r for r in reports if not r.get("ok", True)), {})
            parts = [f"{k}: {bad[k]['divergences'][0]}" for k in ("reachable", "replay", "validation", "domain")
                     if isinstance(bad.get(k), dict) and bad[k].get("divergences")]
            return parts[0] if parts else str(bad.get("error") or "")

        return self._verdict("conform", f"{cell.config}/{cell.profile}", self._run_tool(work, cmd, timeout), timeout,
                             why)

    @staticmethod
    def _verdict(step: str, where: str, ran: tuple[int, str, str] | None, timeout: float,
                 why: Callable[[dict[str, Any]], str]) -> tuple[str, str]:
        """A second copy's answer on a mutated copy: exit 3 "disagrees" (with ``why`` of its JSON summary),
        0 "agrees", None (over the limit) "timeout", anything else "error"."""
        if ran is None:
            return "timeout", f"{step} over the time limit ({timeout:.0f} s left)"
        code, stdout, stderr = ran
        if code == 3:
            try:
                reason = why(json.loads(stdout))
            except (ValueError, AttributeError, TypeError, KeyError, IndexError):
                reason = ""
            return "disagrees", f"{where}: {reason or 'exit 3'}"[:300]
        if code == 0:
            return "agrees", ""
        return "error", f"{where}: exit {code}: {stderr.strip()[-300:]}"

    def kill_all(self) -> None:
        self.stop.set()
        with self._lock:
            procs = list(self._procs.values())
        for proc in procs:
            _kill_group(proc)


def _prove_disagreement(doc: dict[str, Any]) -> str:
    """The first line of what a ``rollcheck prove --json`` summary says differs: the successor differential's
    mismatch, else the decision rules' disagreement (``--decisions-only`` has no successor differential)."""
    text = str((doc.get("differential") or {}).get("mismatch") or (doc.get("decisions") or {}).get("disagreement")
               or "")
    return text.splitlines()[0] if text else ""


def _kill_group(proc: subprocess.Popen[str]) -> None:
    # The group of a process this script started (start_new_session: its pid is the group's id).
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def classify(cell: Cell, code: int, stdout: str, stderr: str, seconds: float) -> CellResult:
    """One explorer run: exit 1 with a JSON summary naming violations is a violation; exit 0 with a complete
    clean summary holds; anything else (an uncaught exception also exits 1, but prints no summary) a crash."""
    try:
        doc = json.loads(stdout)
    except ValueError:
        doc = None
    tail = stderr.strip()[-1500:]
    if not isinstance(doc, dict) or code not in (0, 1):
        return CellResult(cell.config, cell.profile, "crash", code, seconds, detail=tail or "no JSON summary")
    # A witness the mutant made vacuous (a story the config no longer tells) kills it as a violation does.
    violated = sorted({v["property"] for v in doc.get("violations", [])}
                      | {f"{w} (vacuous)" for w in doc.get("vacuous", [])})
    res = CellResult(cell.config, cell.profile, "holds", code, seconds, doc.get("distinct_states"),
                     doc.get("generated_states"), violated)
    if (code == 1) != bool(violated):
        res.outcome, res.detail = "crash", f"exit {code} with {len(violated)} violation(s): {tail}"
    elif violated:
        res.outcome = "violated"
    elif not doc.get("complete", False):
        res.outcome, res.detail = "incomplete", "; ".join(doc.get("notes", [])) or "exploration not complete"
    return res


# The checker commands a mutant meets (``rollcheck`` arguments; benchmarks/coverage_map.py runs the same ones).
def explore_argv(protocol: str, cell: Cell, out: Path, max_memory: float, collect_all: bool = False) -> list[str]:
    """``rollcheck explore`` on one cell: one process (``--jobs`` runs several mutants), and a bound on what a
    mutant that blows the state space up may take (the explorer then stops, incomplete, instead of swapping).
    It stops at the first violation (``collect_all``: every property's, as ``--all-cells``
    asks): a mutant that makes the state space unbounded is then killed by the first property it breaks, where
    ``--collect-all`` kept expanding the broken states until the time limit. The baselines violate nothing."""
    return ["explore", protocol, "--config", cell.config, "--profile", cell.profile, "--json", "--quiet",
            *(["--collect-all"] if collect_all else []), "--out", str(out), "--workers", "1",
            "--max-memory", str(max_memory)]


def z3_argv(protocol: str, profile: str, out: Path, config: str = "small") -> list[str]:
    """The ci tier's z3 cell on ``config`` (small, a story config): the successor differential and the decision
    rules, nothing proved."""
    return ["prove", protocol, "--config", config, "--profile", profile, "--differential-only", "--differential",
            "0", "--json", "--quiet", "--out", str(out)]


def decisions_argv(protocol: str, profile: str, out: Path) -> list[str]:
    """The decision rules' differential alone (the part of the ci tier's z3 cell that walks no state: each rule's
    Z3 formula against the reference on its bounded input domain, ``profile``'s cases): seconds."""
    return ["prove", protocol, "--config", "small", "--profile", profile, "--decisions-only", "--json", "--quiet",
            "--out", str(out)]


def conform_argv(protocol: str, profile: str, out: Path, config: str = "small", domain_only: bool = False
                 ) -> list[str]:
    """The gate's TLC conformance on ``config`` (small, a conformance config); ``domain_only``: its config
    domain check alone (seconds)."""
    return ["conform", protocol, "--config", config, "--profile", profile, "--json", "--quiet", "--out", str(out),
            *(["--domain-only"] if domain_only else [])]


def variants_argv(protocol: str, out: Path, z3: bool = True) -> list[str]:
    """The gate's variant cells alone (``rollcheck gate`` on a config with no reference cell, written under
    ``out``): every broken variant of the protocol on its own config by the explorer (each must still be
    caught) and, with ``z3``, the Z3 relation against the reference on every state where a variant steps
    otherwise than the reference (``z3_variant_states = 0``: all of them; the ci tier bounds them)."""
    out.mkdir(parents=True, exist_ok=True)
    config = out / "variants.toml"
    config.write_text(
        "[gate]\n"
        f"protocols = [{json.dumps(protocol)}]\n"
        f"checkers = {json.dumps(['z3'] if z3 else [])}\n"
        f"configs = {{ {protocol} = [] }}\nci_configs = {{ {protocol} = [] }}\nstory_configs = {{ {protocol} = [] }}\n"
        "mutants = true\nmutant_checkers = [\"explore\"]\nparallel = 1\n"
        "options = { z3_variant_states = 0 }\n", encoding="utf-8")
    return ["gate", "--config", str(config), "--out", str(out / "gate"), "--json", "--quiet"]


def profiles_of(protocol: str) -> tuple[str, ...]:
    """Every semantics profile of the protocol (kip, kafka and any it adds, e.g. streams' kafka-2.0), as the
    gate runs them."""
    return get_protocol(protocol).profiles


def cells_of(protocol: str) -> list[Cell]:
    """small, then the gate's config, then the story configs the gate's ci tier explores (stories the gate
    config does not tell: crashes, deprecation, two-bounce upgrades ...); each profile in turn: the cheapest
    runs first, since a kill stops a mutant."""
    entry = get_protocol(protocol)
    configs = list(dict.fromkeys(["small", entry.gate_config, *entry.story_configs]))
    # As the gate: a story config under the profiles it is valid for (streams' 3.9 story: kafka alone).
    return [Cell(c, p) for c in configs for p in profiles_of(protocol)
            if c not in entry.story_configs or p in entry.config_profiles(entry.configs[c])]


def z3_cells_of(protocol: str) -> list[Cell]:
    """Where the ci tier's z3 cells compare the Z3 relation with the reference on every reachable state: small
    under each profile, then each story config under the profiles it is valid for."""
    stories = get_protocol(protocol).story_configs
    return [Cell("small", p) for p in profiles_of(protocol)] + [c for c in cells_of(protocol) if c.config in stories]


def conform_cells_of(protocol: str) -> list[Cell]:
    """Where the gate's conformance cells compare the reference's reachable views with TLC's: small under each
    profile, then each conformance config (ProtocolEntry.conform_configs) under the profiles it is valid for."""
    entry = get_protocol(protocol)
    return [Cell(c, p) for c in ["small", *entry.conform_configs] for p in profiles_of(protocol)
            if c == "small" or p in entry.config_profiles(entry.configs[c])]


@dataclass
class Baseline:
    protocol: str
    cells: list[CellResult]
    seconds: float
    imports: dict[str, str]

    def of(self, cell: Cell) -> CellResult:
        return next(c for c in self.cells if (c.config, c.profile) == (cell.config, cell.profile))


def run_baseline(runner: Runner, protocol: str, timeout: float, conform: bool = True, z3: bool = True,
                 variants: bool = True, explored: list[CellResult] | None = None, jobs: int = 1,
                 screen: bool = False) -> Baseline:
    """Every run a mutant may need, on the unmutated copy: the explorer's cells, the broken variants (each
    caught), then Z3 and TLC under each profile, which must agree with the reference (else nothing they say of
    a mutant means anything). Their total time sets the per-mutant limit, so a survivor that goes through every
    step is not cut short. ``jobs``: the explorer's cells and Z3's run that many at a time (each writes its own
    directory under the copy's ``out``; a baseline took 11 minutes on one core of two while the other idled);
    the variants' gate and TLC, which share the copy's working files, run one at a time. ``screen``: what a
    screen runs (the explorer on small, the decision rules, the config domain), minutes less."""
    work = runner.workdir(None)
    cells = [c for c in cells_of(protocol) if c.config == "small" or not screen]
    try:
        imports = runner.import_check(work, protocol)
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            results = explored if explored is not None else list(pool.map(
                lambda cell: runner.run_cell(work, protocol, cell, timeout), cells))
            bad = [f"{r.config}/{r.profile}: {r.outcome} {r.detail}" for r in results
                   if r.outcome not in ("holds", "violated")]
            if variants and not screen:
                verdict, detail = runner.run_variants(work, protocol, timeout, z3)
                if verdict != "caught":
                    bad.append(f"variants: {verdict} {detail}")
            if screen and z3 and runner.has_z3(protocol):
                for profile in profiles_of(protocol):
                    verdict, detail = runner.run_decisions(work, protocol, profile, timeout)
                    if verdict != "agrees":
                        bad.append(f"decisions {profile}: {verdict} {detail}")
            z3_cells = z3_cells_of(protocol) if z3 and runner.has_z3(protocol) and not screen else []
            for cell, (verdict, detail) in zip(z3_cells, pool.map(
                    lambda cell: runner.run_z3(work, protocol, cell, timeout), z3_cells), strict=True):
                if verdict != "agrees":
                    bad.append(f"z3 {cell.config}/{cell.profile}: {verdict} {detail}")
        conform_cells = conform_cells_of(protocol) if conform and runner.snapshot_has_spec(protocol) else []
        # A screen meets conform only as its config domain (small's first profile, as a config module's mutant does).
        for cell in conform_cells[:1] if screen else conform_cells:
            verdict, detail = runner.run_conform(work, protocol, cell, timeout, domain_only=screen)
            if verdict != "agrees":
                bad.append(f"conform {cell.config}/{cell.profile}: {verdict} {detail}")
        if bad:
            raise RuntimeError(f"baseline of {protocol} failed: " + "; ".join(bad))
        return Baseline(protocol, results, time.perf_counter() - t0, imports)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_mutant(runner: Runner, mutant: Mutant, base: Baseline, timeout: float, all_cells: bool,
               conform: bool = True, z3: bool = True, variants: bool = True,
               explored: list[CellResult] | None = None, first: KillHint | None = None,
               screen: bool = False) -> dict[str, Any]:
    """One mutant through every step; with ``explored`` (``--recheck``: the explorer's runs of an earlier
    campaign whose explorer inputs are unchanged, so its verdicts stand) the explorer is not run again. With
    ``first`` (``--resume`` from a campaign at another reference, :func:`kill_hints`) the step that killed the
    same edit there runs before the others: a kill is a kill in any order, and the one that killed before
    usually kills again, so the cheaper steps ahead of it need not run. If it does not, the usual order
    follows, without that step again. With ``screen`` only the cheap steps run (a config module's domain, the
    decision rules, the explorer on small): a mutant they do not kill is "screened", no verdict."""
    t0 = time.perf_counter()
    work = runner.workdir(mutant)
    cells: list[CellResult] = []
    broken: dict[str, str] = {}  # the broken variants' verdict
    killed_by: list[dict[str, Any]] = []
    conformance: list[dict[str, str]] = []
    differential: list[dict[str, str]] = []
    protocol = mutant.protocol
    cells += explored or []

    def alive() -> bool:
        """Nothing has killed the mutant yet (and nothing stopped short: a timeout or a crash ends it)."""
        return (not killed_by and all(c.outcome in ("holds", "violated") for c in cells)
                and all(d["verdict"] == "agrees" for d in [*differential, *conformance])
                and broken.get("verdict", "caught") == "caught")

    def timed_out_only() -> bool:
        """Nothing has killed the mutant, and an explorer run stopped at its time limit or memory budget."""
        return (not killed_by and all(c.outcome in ("holds", "violated", "timeout", "incomplete") for c in cells)
                and any(c.outcome in ("timeout", "incomplete") for c in cells)
                and all(d["verdict"] == "agrees" for d in [*differential, *conformance])
                and broken.get("verdict", "caught") == "caught")

    def explore(todo: list[Cell]) -> bool:
        """The explorer on ``todo`` in turn; False once a run times out, or kills the mutant (unless
        ``all_cells``)."""
        for cell in todo:
            # No run may take more than CELL_LIMIT times its baseline (at least a minute): a mutant that blows
            # one config's state space up is a timeout there, not after the whole campaign's share of time.
            limit = max(60.0, CELL_LIMIT * base.of(cell).seconds)
            res = runner.run_cell(work, protocol, cell, min(limit, timeout - (time.perf_counter() - t0)))
            cells.append(res)
            # A property the unmutated reference violates too (none in these configs today) kills nothing.
            new = sorted(set(res.violated) - set(base.of(cell).violated))
            if res.outcome == "violated" and new:
                killed_by.append({"config": cell.config, "profile": cell.profile, "properties": new})
            if res.outcome == "timeout" or (not all_cells and (killed_by or res.outcome == "crash")):
                return False
        return True

    def differ(todo: list[Cell], cap: float | None = None) -> None:
        for cell in todo:
            left = timeout - (time.perf_counter() - t0)
            verdict, detail = runner.run_z3(work, protocol, cell, left if cap is None else min(cap, left))
            differential.append({"config": cell.config, "profile": cell.profile, "verdict": verdict,
                                 "detail": detail})
            if verdict != "agrees":
                return

    # Cheapest first, since the first kill ends a mutant: the explorer on small, then Z3 against the reference
    # on small's every state and on each story config's (seconds each, and together they kill about as many as
    # every larger config does), then the larger configs, the broken variants (minutes) and TLC.
    todo = [] if explored is not None else cells_of(protocol)
    with_z3 = z3 and runner.has_z3(protocol)
    hinted = ""
    full = not screen
    if screen and first is not None and (first[0] != "explore" or first[1].config != "small"):
        first = None  # a hint to a larger config or to Z3's walk is no cheap step

    def fresh(todo: list[Cell]) -> list[Cell]:
        """The explorer's cells not run yet (the hinted one ran first)."""
        return [c for c in todo if not any((r.config, r.profile) == (c.config, c.profile) for r in cells)]

    def unasked(todo: list[Cell]) -> list[Cell]:
        """Z3's cells not run yet."""
        return [c for c in todo if not any((d["config"], d["profile"]) == (c.config, c.profile)
                                           for d in differential)]

    try:
        if conform and Path(mutant.file).name == CONFIG_MODULE and runner.snapshot_has_spec(protocol):
            # A config module's edit is mostly to its validation, which conform's config domain compares with the
            # spec's own statement of it in one TLC run (seconds): first, ahead of minutes of explorer and Z3
            # runs that cannot see a config the named ones never are. The gate's conform cells check it too.
            cell = next(c for c in cells_of(protocol) if c.config == "small")
            verdict, detail = runner.run_conform(work, protocol, cell, timeout, domain_only=True)
            conformance.append({"config": cell.config, "profile": cell.profile, "verdict": verdict,
                                "detail": detail, "domain_only": "yes"})
        if with_z3 and alive() and Path(mutant.file).name != SYSTEM_MODULE:
            # The decision rules call the API level's code (api.py, the catalog, the releases, the config's
            # validation), not the system module: a mutant there that they catch dies in seconds, ahead of the
            # explorer and of Z3's walk of every state (whose cell runs the rules again, after the walk).
            # A resumed kill by one profile's rules runs that profile first (each is a process of seconds).
            said = first[1].profile if first is not None and first[0] == "z3" and first[1].config == DECISIONS else ""
            for profile in sorted(profiles_of(protocol), key=lambda p: p != said):
                verdict, detail = runner.run_decisions(work, protocol, profile, timeout - (time.perf_counter() - t0))
                differential.append({"config": DECISIONS, "profile": profile, "verdict": verdict, "detail": detail})
                if verdict != "agrees":
                    break
        if first is not None and alive():
            step, cell = first
            if step == "explore" and cell in todo:
                hinted = f"explore {cell.config}/{cell.profile}"
                explore([cell])
            elif step == "z3" and with_z3 and cell in z3_cells_of(protocol):
                hinted = f"z3 {cell.config}/{cell.profile}"
                differ([cell])
            elif step == "conform" and conform and runner.snapshot_has_spec(protocol) \
                    and cell in conform_cells_of(protocol):
                # A TLC conformance kill: its one cell (a minute at most) ahead of the minutes of every other step.
                hinted = f"conform {cell.config}/{cell.profile}"
                verdict, detail = runner.run_conform(work, protocol, cell, timeout - (time.perf_counter() - t0))
                conformance.append({"config": cell.config, "profile": cell.profile, "verdict": verdict,
                                    "detail": detail})
        # After a hinted kill nothing else runs (the explorer's other cells too, unless --all-cells); a hinted
        # step that timed out is the mutant's verdict, as when the usual order reaches it.
        going = explore(fresh([c for c in todo if c.config == "small"])) if alive() or all_cells else False
        if screen:
            pass  # the cheap steps alone: what survives them is run in full by --resume
        elif with_z3 and alive():
            differ(unasked([c for c in z3_cells_of(protocol) if c.config == "small"]))
        elif with_z3 and not killed_by and {c.outcome for c in cells} <= {"holds", "violated", "timeout"} and all(
                d["verdict"] == "agrees" for d in [*differential, *conformance]) \
                and broken.get("verdict", "caught") == "caught":
            # small's state space blew up (an alias of two enum members, a bound gone): the differential walks
            # the same states, but stops at the first one where Z3 steps otherwise, or a decision rule may
            # refuse the reference at once; given as long as one small run may take, so a timeout stays cheap.
            differ(unasked([c for c in z3_cells_of(protocol) if c.config == "small"]),
                   max(60.0, CELL_LIMIT * max(base.of(c).seconds for c in cells_of(protocol) if c.config == "small")))
        stories = unasked([c for c in z3_cells_of(protocol) if c.config != "small"])
        if full and with_z3 and alive() and stories:
            # A story's state space may have no end under the mutant (a fault's budget gone): Z3's encoding, which
            # the mutation did not touch, has one, so the walk stops at the first state where the two differ.
            differ(stories)
        if full and going and (alive() or all_cells):
            explore(fresh([c for c in todo if c.config != "small"]))
        if full and variants and alive():
            verdict, detail = runner.run_variants(work, protocol, timeout - (time.perf_counter() - t0), z3)
            broken = {"verdict": verdict, "detail": detail}
        # An explorer run that timed out (a bound the mutation removed: features system.py:521, the IBP roll's
        # count never incremented) ends the explorer and the variants, but not conform: its configs are small,
        # and TLC's reachable set, bounded by the spec, differs from the reference's at once. Each run is capped
        # so a mutant that blows a conformance config up too stays a cheap timeout.
        cap = None if alive() else CONFORM_AFTER_TIMEOUT
        if full and conform and runner.snapshot_has_spec(protocol) and (alive() or timed_out_only()):
            conformance.clear()  # the domain-only step agreed: the whole check runs (its domain again)
            for cell in conform_cells_of(protocol):
                left = timeout - (time.perf_counter() - t0)
                verdict, detail = runner.run_conform(work, protocol, cell, left if cap is None else min(cap, left))
                conformance.append({"config": cell.config, "profile": cell.profile, "verdict": verdict,
                                    "detail": detail})
                if verdict != "agrees":
                    break
    finally:
        shutil.rmtree(work, ignore_errors=True)
    changed = []
    for c in cells:
        before = base.of(Cell(c.config, c.profile)).distinct_states
        if c.distinct_states is not None and c.distinct_states != before:
            changed.append(f"{c.config}/{c.profile}: {before} -> {c.distinct_states}")
    small_changed = any(s.startswith("small/") for s in changed)
    if killed_by:
        status = "killed"
    elif any(c.outcome == "crash" for c in cells):
        status = "killed (crash)"
    elif broken.get("verdict") == "escaped":
        status = "killed (variant)"
    elif broken.get("verdict") == "disagrees":
        status = "killed (z3)"
    elif broken.get("verdict") == "error":
        status = "killed (crash)"
    elif any(d["verdict"] == "disagrees" for d in differential):
        status = "killed (z3)"
    elif any(d["verdict"] == "error" for d in differential):
        status = "killed (crash)"
    elif any(c["verdict"] == "disagrees" for c in conformance):
        status = "killed (conform)"
    elif any(c["verdict"] == "error" for c in conformance):
        # conform failed on the mutated copy where the baseline's agrees (a view TLC's values cannot be): the ci
        # tier's conform cell fails too, as a z3 step's error does
        status = "killed (crash)"
    elif any(c.outcome in ("timeout", "incomplete") for c in cells) or any(
            d["verdict"] == "timeout" for d in [*differential, *conformance]) or broken.get("verdict") == "timeout":
        status = "timeout"
    elif screen:
        status = "screened"
    else:
        status = "survived (count changed)" if small_changed else "survived"
    crash = next((c.detail for c in cells if c.outcome == "crash"),
                 broken["detail"] if broken.get("verdict") == "error" else
                 next((d["detail"] for d in [*differential, *conformance] if d["verdict"] == "error"), None))
    return {
        "id": mutant.id, "protocol": mutant.protocol, "operator": mutant.operator, "file": mutant.file,
        "line": mutant.line, "col": mutant.col, "before": mutant.before, "after": mutant.after,
        "function": mutant.function,
        "status": status, "seconds": round(time.perf_counter() - t0, 2), "killed_by": killed_by,
        "crash": crash, "count_changed": changed, "small_count_changed": small_changed,
        "variants": broken, "z3": differential, "conform": conformance,
        "runs": [asdict(c) | {"seconds": round(c.seconds, 2)} for c in cells],
        **({"first_step": hinted} if hinted else {}),
    }


# ----------------------------------------------------------------------------------- reporting


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30,
                              check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def summarize(results: list[dict[str, Any]], protocols: Sequence[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for p in protocols:
        rows = [r for r in results if r["protocol"] == p]
        n = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
        killed = n["killed"] + n["killed (variant)"] + n["killed (z3)"] + n["killed (conform)"] + n["killed (crash)"]
        # An equivalent mutant cannot be killed, and a screened one has no verdict yet: both are left out of the rate.
        judged = len(rows) - n["equivalent"] - n["screened"]
        out[p] = {"mutants": len(rows), "killed": n["killed"], "killed_variant": n["killed (variant)"],
                  "killed_z3": n["killed (z3)"],
                  "killed_conform": n["killed (conform)"],
                  "killed_crash": n["killed (crash)"],
                  "survived": n["survived"] + n["survived (count changed)"],
                  "survived_count_changed": n["survived (count changed)"], "equivalent": n["equivalent"],
                  "timeout": n["timeout"], "screened": n["screened"],
                  "carried": sum(bool(r.get("carried")) for r in rows),
                  "kill_rate": round(killed / judged, 4) if judged else None}
    return out


def print_summary(doc: dict[str, Any]) -> None:
    head = ("protocol", "mutants", "killed", "by a variant", "by z3", "by conform", "crash", "survived (count changed)",
            "equivalent", "timeout", "kill rate")
    rows = [head]
    for p, s in doc["summary"].items():
        rate = "-" if s["kill_rate"] is None else f"{100 * s['kill_rate']:.1f}%"
        rows.append((p, str(s["mutants"]), str(s["killed"]), str(s.get("killed_variant", 0)),
                     str(s.get("killed_z3", 0)), str(s.get("killed_conform", 0)), str(s["killed_crash"]),
                     f"{s['survived']} ({s['survived_count_changed']})", str(s.get("equivalent", 0)),
                     str(s["timeout"]), rate))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    print()
    if doc["partial"]:
        print("PARTIAL: the campaign was stopped before every mutant ran")
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(r, widths, strict=True))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print("kill rate = (killed by a property, by a broken variant that escapes, by z3, by conform or by crash) / "
          f"(mutants run - equivalent); a timeout counts as not killed; equivalent: a survivor {EQUIVALENTS.name} "
          "argues changes nothing")
    carried = sum(s.get("carried", 0) for s in doc["summary"].values())
    if carried:
        print(f"{carried} kills carried over by --resume from a campaign whose checkers differed (the reference "
              "was the same): see each row's commit")
    screened = sum(s.get("screened", 0) for s in doc["summary"].values())
    if screened:
        print(f"{screened} screened: the cheap steps did not kill them; --resume from this file runs them in full")
    survivors = [r for r in doc["mutants"] if r["status"].startswith("survived")]
    if survivors:
        print(f"\nsurvivors ({len(survivors)}):")
        for r in survivors:
            note = f"  [distinct states {', '.join(r['count_changed'])}]" if r["count_changed"] else ""
            print(f"  {r['id']}{note}\n      - {r['before']}\n      + {r['after']}")
    stale = doc.get("equivalents_killed") or []
    if stale:
        print(f"\nkilled, yet listed as equivalent in {EQUIVALENTS.name} (a wrong or stale entry, {len(stale)}):")
        for i in stale:
            print(f"  {i}")
    timeouts = [r for r in doc["mutants"] if r["status"] == "timeout"]
    if timeouts:
        print(f"\ntimeouts ({len(timeouts)}):")
        for r in timeouts:
            print(f"  {r['id']}\n      + {r['after']}")


def write_json(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def output_path(out: Path | None, started: datetime.datetime) -> Path:
    name = f"mutation-{started:%Y%m%dT%H%M%SZ}.json"
    if out is None:
        return RESULTS / name
    if out.is_dir() or out.suffix != ".json":
        return out / name
    return out


# ----------------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--protocol", action="append", default=None, metavar="P",
                   help="protocol to mutate (repeatable; default: every registered protocol)")
    p.add_argument("--operators", nargs="+", choices=OPERATORS, default=None, metavar="OP",
                   help=f"mutation operators (default: all): {', '.join(OPERATORS)}")
    p.add_argument("--match", default=None, metavar="REGEX", help="only the mutants whose id matches (re.search)")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="at most N mutants per protocol, evenly spread over its enumeration (deterministic)")
    p.add_argument("--offset", type=int, default=0, metavar="K",
                   help="with --limit: each pick K places further on (another sample of the same spread; default 0)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR|FILE.json",
                   help="where the JSON goes: a .json file, or a directory for mutation-<UTC time>.json "
                   "(default: benchmarks/results/)")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="per-mutant time limit over all its runs (default: 10x the protocol's baseline: every explorer "
                   "run, then z3 and conform on small, on the unmutated copy; at least 60 s)")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="mutants run at once (default 1)")
    p.add_argument("--max-memory", type=float, default=2.0, metavar="GIB",
                   help="each explorer run's memory budget (default 2 GiB): above it the run stops, timeout")
    p.add_argument("--all-cells", action="store_true",
                   help="run every config x profile on a killed mutant too, each run collecting every property it "
                   "violates (default: stop at the first kill, each run at its first violation)")
    p.add_argument("--no-conform", action="store_true",
                   help="do not run `rollcheck conform` (TLC against the mutated reference, small config) on the "
                   "mutants the explorer's properties did not kill")
    p.add_argument("--no-z3", action="store_true",
                   help="do not run the Z3 differential (`rollcheck prove --differential-only`, small config, every "
                   "reachable state and the decision rules) on the mutants the explorer's properties did not kill")
    p.add_argument("--no-variants", action="store_true",
                   help="do not run the gate's broken variants (`rollcheck mutants`) on the mutants the explorer's "
                   "properties did not kill")
    p.add_argument("--recheck", type=Path, metavar="FILE",
                   help="the survivors of an earlier campaign's JSON, through the steps after the explorer (broken "
                   "variants, z3, conform) at this checkout; their explorer runs are taken from FILE, which needs "
                   "reference_impl/, properties/ and rollcheck/ unchanged since FILE's commit; the killed rows of "
                   "FILE are kept, so the summary is the whole campaign's")
    p.add_argument("--resume", type=Path, nargs="+", metavar="FILE",
                   help="go on with an earlier campaign (FILE: its JSON, partial or not; several FILEs: pieces run "
                   "with --match, merged, a later file's row of a mutant replacing an earlier one's; by default the "
                   "same selection of mutants as FILE's (several: every mutant of the protocols they name), unless "
                   "--protocol/--operators/--match/--limit say otherwise): "
                   "a row of FILE is kept as it is while every module is unchanged since it ran, a kill while "
                   "reference_impl/ alone is unchanged (the checkers may have grown), and every other mutant runs; "
                   "a mutant whose edit FILE killed at another reference runs the step that killed it first")
    p.add_argument("--carry-equivalents", action="store_true",
                   help="with --resume: a row FILE judged equivalent that the list of equivalent mutants still names "
                   "is kept even where reference_impl/ changed (a run could only confirm it or show the entry "
                   "stale, and costs every step); the row keeps its commit and is flagged equivalent_carried")
    p.add_argument("--screen", action="store_true",
                   help="only the cheap steps (a config module's domain, the decision rules, the explorer on small: "
                   "seconds a mutant): what they kill is killed, the rest is \"screened\", no verdict (left out of "
                   "the kill rate); --resume from the file runs the screened ones in full and keeps the kills")
    p.add_argument("--list", action="store_true", help="print the mutants (id and mutated line) and exit")
    args = p.parse_args(argv)
    if args.jobs < 1 or (args.limit is not None and args.limit < 1):
        p.error("--jobs and --limit must be at least 1")
    if args.offset < 0 or (args.offset and args.limit is None):
        p.error("--offset must be a whole number of places, and needs --limit")
    known = protocol_names()
    for name in args.protocol or []:
        if name not in known:
            p.error(f"unknown protocol {name!r}; registered: {', '.join(known)}")
    try:
        args.equivalents = load_equivalents()
    except ValueError as exc:
        p.error(str(exc))
    args.previous = args.resumed = None
    if args.screen and args.recheck is not None:
        p.error("--screen runs the cheap steps, --recheck the steps after the explorer: give one")
    if args.carry_equivalents and args.resume is None:
        p.error("--carry-equivalents keeps rows of the campaign --resume goes on from: give --resume FILE")
    if args.resume is not None:
        if args.recheck is not None:
            p.error("--resume and --recheck are two ways of going on from FILE: give one")
        pieces = [load_campaign(p, path, "--resume") for path in args.resume]
        args.resumed = merge_campaigns(pieces)
        params = args.resumed.get("params", {})
        if args.protocol is None and args.operators is None and args.match is None and args.limit is None:
            if len(pieces) == 1:
                args.protocol, args.operators = params.get("protocols"), params.get("operators")
                args.match, args.limit = params.get("match"), params.get("limit")
                args.offset = params.get("offset", 0)
            else:  # pieces of one campaign: the whole of what they cover, not the last piece's --match
                args.protocol = sorted({str(r["protocol"]) for r in args.resumed["mutants"]})
            unknown = [n for n in args.protocol or [] if n not in known]
            if unknown:
                p.error(f"--resume: {', '.join(map(str, args.resume))} names the protocol {unknown[0]!r}, which is "
                        "not registered")
    if args.operators is None:
        args.operators = list(OPERATORS)
    if args.recheck is not None:
        if args.match or args.limit is not None:
            p.error("--recheck reruns FILE's survivors: --match and --limit do not apply")
        args.previous = load_previous(p, args.recheck)
    return args


def load_campaign(p: argparse.ArgumentParser, path: Path, option: str) -> dict[str, Any]:
    """An earlier campaign's JSON, refused (one line, exit 2) when it cannot be read or is not one."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        p.error(f"{option}: cannot read {path}: {exc}")
    rows = doc.get("mutants") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("benchmark") != "mutation" or not isinstance(rows, list) \
            or not doc.get("commit") or not all(isinstance(r, dict) and {"id", "protocol", "status"} <= r.keys()
                                                for r in rows):
        p.error(f"{option}: {path} is not a campaign's JSON (benchmarks/results/mutation-*.json)")
    return doc


def merge_campaigns(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several campaigns' JSON as one, for ``--resume`` from pieces (runs with ``--match``): the last file's fields,
    and every file's rows, each keeping the commit and digests of the file it came from (a row without its own);
    a later file's row of a mutant replaces an earlier one's."""
    if len(docs) == 1:
        return docs[0]
    rows: dict[str, dict[str, Any]] = {}
    for doc in docs:
        own = {k: doc[k] for k in ("commit", "sources_sha256", "reference_sha256") if doc.get(k) is not None}
        for r in doc["mutants"]:
            rows[str(r["id"])] = {**own, **r}
    return {**docs[-1], "mutants": list(rows.values())}


def load_previous(p: argparse.ArgumentParser, path: Path) -> dict[str, Any]:
    """An earlier campaign's JSON for ``--recheck``, refused (one line, exit 2) when it is not one, or when the
    explorer's inputs changed since its commit (its explorer verdicts would not carry over)."""
    doc = load_campaign(p, path, "--recheck")
    if doc.get("partial"):
        p.error(f"--recheck: {path} is a partial campaign; its survivors are not all of its mutants' survivors")
    changed = git("diff", "--name-only", doc["commit"], "--", *EXPLORER_INPUTS)
    if changed:
        first = changed.splitlines()[0]
        p.error(f"--recheck: {first} (and what else changed under {', '.join(EXPLORER_INPUTS)}) differs from "
                f"{path.name}'s commit {doc['commit'][:12]}: its explorer verdicts do not carry over; run the "
                "campaign again")
    return doc


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    protocols = list(dict.fromkeys(args.protocol or protocol_names()))
    if args.previous is not None:
        protocols = [p for p in protocols if p in args.previous["params"].get("protocols", [])]
    if args.list:
        for p in protocols:
            mutants, gone = select(args, p, ROOT)
            for m in mutants:
                print(f"{m.id}\n    - {m.before}\n    + {m.after}")
            print(f"# {p}: {len(mutants)} mutants ({len(gone)} sites dropped)", file=sys.stderr)
        return 0

    started = datetime.datetime.now(datetime.UTC)
    path = output_path(args.out, started)
    scratch = Path(tempfile.mkdtemp(prefix="rollcheck-mutation-"))
    head = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    selected: dict[str, list[Mutant]] = {}
    dropped: dict[str, list[dict[str, Any]]] = {}
    try:
        sources, reference = snapshot(scratch / "snapshot")
        packages = protocol_packages()
        per_protocol = reference_digests(scratch / "snapshot", packages)
        per_protocol_code = reference_digests(scratch / "snapshot", packages, code_only=True)
        for p in protocols:
            selected[p], dropped[p] = select(args, p, scratch / "snapshot")
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    doc: dict[str, Any] = {
        "benchmark": "mutation", "started": started.isoformat(timespec="seconds"), "finished": None,
        "partial": True, "interrupted": False,
        "commit": head, "dirty": dirty, "sources_sha256": sources, "reference_sha256": reference,
        "protocol_reference_sha256": per_protocol, "protocol_code_sha256": per_protocol_code,
        "commit_at_end": None,
        "machine": {"node": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform(), "load_average_at_start": list(os.getloadavg())},
        "params": {"argv": sys.argv[1:], "protocols": protocols, "operators": args.operators, "match": args.match,
                   "limit": args.limit, "offset": args.offset, "timeout": args.timeout, "jobs": args.jobs,
                   "max_memory_gib": args.max_memory,
                   "all_cells": args.all_cells, "conform": not args.no_conform, "z3": not args.no_z3,
                   "variants": not args.no_variants, "screen": args.screen,
                   "carry_equivalents": args.carry_equivalents,
                   "profiles": {p: list(profiles_of(p)) for p in protocols}},
        "baseline": {}, "dropped_sites": dropped, "mutants": [], "summary": {},
        "rechecked_from": None if args.previous is None else {"file": str(args.recheck),
                                                              "commit": args.previous["commit"]},
        "resumed_from": None if args.resumed is None else {"file": ", ".join(map(str, args.resume)),
                                                           "commit": args.resumed.get("commit"),
                                                           "sources_sha256": args.resumed.get("sources_sha256")},
    }
    # SIGTERM ends the campaign as Ctrl-C does: partial results written, explorer processes stopped. SIGINT
    # too when it was started ignoring it (a background job of a non-interactive shell): Python then keeps it
    # ignored, and only this script can stop the explorers it starts in their own sessions.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    runner = Runner(scratch, scratch / "snapshot", args.max_memory, args.all_cells)
    results: list[dict[str, Any]] = doc["mutants"]
    code = 0
    try:
        code = _campaign(args, protocols, selected, runner, doc, results, path)
    except KeyboardInterrupt:
        doc["interrupted"] = True
        runner.kill_all()
        print("\nmutation: interrupted; the explorer processes are stopped, the mutants done so far are kept",
              file=sys.stderr)
        code = 130
    finally:
        runner.kill_all()
        shutil.rmtree(scratch, ignore_errors=True)
        results.sort(key=lambda r: r["order"])
        for r in results:
            del r["order"]
        doc["finished"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        doc["commit_at_end"] = git("rev-parse", "HEAD")
        doc["summary"] = summarize(results, protocols)
        doc["equivalents_killed"] = [r["id"] for r in results if str(r["status"]).startswith("killed")
                                     and any(e.names(r) for e in args.equivalents)]
        write_json(path, doc)
    print_summary(doc)
    if doc["commit_at_end"] != head:
        print(f"\nnote: HEAD moved from {head} to {doc['commit_at_end']} during the campaign; the results are "
              "for the code as it was at the start (copied then)")
    print(f"\nresults in {path}")
    return code


def select(args: argparse.Namespace, protocol: str, source: Path) -> tuple[list[Mutant], list[dict[str, Any]]]:
    """The mutants of one protocol that the command line asks for, and the sites dropped."""
    if args.previous is not None:
        wanted = [r["id"] for r in args.previous["mutants"] if r["protocol"] == protocol and _rechecked(r)]
        every, dropped = enumerate_mutants(protocol, OPERATORS, source)
        by_id = {m.id: m for m in every}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise SystemExit(f"mutation.py: --recheck: {missing[0]} is no mutant of this checkout")
        return [by_id[i] for i in wanted], dropped
    mutants, dropped = enumerate_mutants(protocol, args.operators, source)
    if args.match:
        mutants = [m for m in mutants if re.search(args.match, m.id)]
    return spread(mutants, args.limit, args.offset), dropped


def carried_rows(earlier: dict[str, Any], selected: dict[str, list[Mutant]], doc: dict[str, Any],
                 equivalents: Sequence[Equivalent] = (),
                 grown: Callable[[dict[str, Any], str], bool] | None = None,
                 carry_equivalents: bool = False) -> dict[str, dict[str, Any]]:
    """The rows of an earlier campaign (``--resume``) that stand at this checkout, by mutant id: the same edit
    (id, line before and after), and either every module unchanged since the row ran (any verdict stands; a
    timeout is none, and runs again) or
    ``reference_impl/`` unchanged and the row a kill (the checkers changed: a survivor or a timeout runs again
    against them; a kill is kept, flagged ``carried``, on the ground that the checkers only grow: a property
    weakened since would need a campaign from scratch). A survivor the list of equivalent mutants names is judged
    "equivalent" and kept like a kill: it survived the checkers of its time, and more checkers cannot kill an
    edit that changes nothing (if they do, the entry is wrong: ``--resume`` from a campaign at the old reference
    sees it). ``grown`` (:func:`registry_growth`): a standing row also stands where the reference changed only by
    its registry entry's growth (configs added: every check the row met still runs), flagged ``registry_grew``.
    ``carry_equivalents`` (``--carry-equivalents``): an equivalent row the list still names stands even where the
    reference changed, flagged ``equivalent_carried``: a run can only confirm it (a survivor the list names is
    "equivalent" again) or show the entry stale (killed), never leave a survivor, and it costs every step (about
    seven minutes a streams_probing mutant); whether the argument still holds is the list's review, not a run's."""
    wanted = {m.id: m for ms in selected.values() for m in ms}
    out: dict[str, dict[str, Any]] = {}
    for r in earlier["mutants"]:
        m = wanted.get(r["id"])
        if m is None or (r.get("before"), r.get("after")) != (m.before, m.after):
            continue
        # The enclosing function of rows from before the field: the same edit of the same line is in the same
        # function while the code stands, which is all a carried row needs.
        r = r if "function" in r else dict(r, function=m.function)
        if r["status"] == "equivalent" and not any(e.names(r) for e in equivalents):
            r = dict(r, status="survived")  # its entry is gone (found stale): a survivor, run again
        r = judge_equivalent(r, equivalents)
        # Rows written before these fields were: the campaign's own.
        src = r.get("sources_sha256", earlier.get("sources_sha256"))
        ref = r.get("reference_sha256", earlier.get("reference_sha256"))
        # The protocol's own digest where the row has one (rows before it: every reference module).
        own = r.get("protocol_reference_sha256")
        same_reference = (ref == doc["reference_sha256"] if own is None
                          else own == doc.get("protocol_reference_sha256", {}).get(m.protocol))
        # Rows since session 43 also have the digest of the code alone: a comment edited since stands.
        code = r.get("protocol_code_sha256")
        same_reference = same_reference or (code is not None
                                            and code == doc.get("protocol_code_sha256", {}).get(m.protocol))
        standing = str(r["status"]).startswith("killed") or r["status"] == "equivalent"
        row_commit = r.get("commit", earlier.get("commit"))
        # A timeout is no verdict: it runs again (a resume is how a longer --timeout reaches it); nor is a screen's
        # "screened" (the cheap steps alone ran).
        verdict = r["status"] not in ("timeout", "screened")
        if (src == doc["sources_sha256"] and verdict) or (same_reference and standing):
            out[m.id] = dict(r, commit=row_commit, sources_sha256=src, reference_sha256=ref,
                             carried=src != doc["sources_sha256"])
        elif standing and grown is not None and grown(dict(r, commit=row_commit), m.protocol):
            out[m.id] = dict(r, commit=row_commit, sources_sha256=src, reference_sha256=ref, carried=True,
                             registry_grew=True)
        elif carry_equivalents and r["status"] == "equivalent" and any(e.names(r) for e in equivalents):
            out[m.id] = dict(r, commit=row_commit, sources_sha256=src, reference_sha256=ref, carried=True,
                             equivalent_carried=True)
    if carry_equivalents:
        out.update(_moved_equivalents(earlier, wanted, out, equivalents))
    return out


def _moved_equivalents(earlier: dict[str, Any], wanted: dict[str, Mutant], kept: dict[str, dict[str, Any]],
                       equivalents: Sequence[Equivalent]) -> dict[str, dict[str, Any]]:
    """For ``--carry-equivalents``: an equivalent row whose line an edit above moved (a new id), matched to its
    mutant by the same edit of the same function at the same column where that is unique on both sides (as
    :func:`kill_hints` matches), under the mutant's id and flagged ``moved_from`` the row's."""
    todo = [m for m in wanted.values() if m.id not in kept]
    by_edit = _unique_by_edit([(_edit_key(m.protocol, m.module, m.function, m.operator, m.col, m.before, m.after), m)
                               for m in todo])
    rows = _unique_by_edit([(_row_edit_key(r), r) for r in earlier["mutants"]])
    out: dict[str, dict[str, Any]] = {}
    for key, row in rows.items():
        m = by_edit.get(key)
        r = judge_equivalent(row, equivalents)  # a survivor the list names since
        if m is None or m.id == r["id"] or r.get("status") != "equivalent" or not any(
                e.names(r) for e in equivalents):
            continue
        out[m.id] = dict(r, id=m.id, line=m.line, moved_from=r["id"], commit=r.get("commit", earlier.get("commit")),
                         carried=True, equivalent_carried=True)
    return out


KillHint = tuple[str, Cell]


def kill_hint(row: dict[str, Any]) -> KillHint | None:
    """The step that killed a row: ("explore", the cell whose property broke, or where it crashed), ("z3", the
    cell where Z3 disagreed or raised), ("conform", the cell whose TLC conformance disagreed: about a minute,
    where the steps ahead of it take minutes); None for any other verdict (a survivor, a timeout, an equivalent
    edit) and for a kill by the broken variants' cells: minutes, where a story config added since may kill in
    seconds (a hinted variant run took 253 s on a mutant the usual order kills in 80)."""
    status = str(row.get("status", ""))
    if status == "killed" and row.get("killed_by"):
        kb = row["killed_by"][0]
        return "explore", Cell(kb["config"], kb["profile"])
    if (row.get("variants") or {}).get("verdict") in ("escaped", "disagrees", "error"):
        return None
    if status in ("killed (z3)", "killed (crash)"):
        for d in row.get("z3") or []:
            if d.get("verdict") in ("disagrees", "error"):
                return "z3", Cell(d["config"], d["profile"])
    if status == "killed (crash)":
        for r in row.get("runs") or []:
            if r.get("outcome") == "crash":
                return "explore", Cell(r["config"], r["profile"])
    if status == "killed (conform)":
        # The whole check on the cell that disagreed (its config domain alone, a config module's first step,
        # runs first anyway).
        for c in row.get("conform") or []:
            if c.get("verdict") == "disagrees" and not c.get("domain_only"):
                return "conform", Cell(c["config"], c["profile"])
    return None


def kill_hints(earlier: dict[str, Any], selected: dict[str, list[Mutant]],
               carried: dict[str, dict[str, Any]]) -> dict[str, KillHint]:
    """For each mutant ``--resume`` runs again (its row not carried: the reference changed since) whose edit
    an earlier row killed, the step that killed it (:func:`kill_hint`), to run first. A row is matched by its
    id, or, when an edit above moved the line (a new id), by the same edit of the same function at the same
    column (:func:`_edit_key`) where that is unique on both sides: a hint only orders the steps, so a wrong
    match costs time, never a verdict."""
    wanted = {m.id: m for ms in selected.values() for m in ms}
    by_edit = _unique_by_edit([(_edit_key(m.protocol, m.module, m.function, m.operator, m.col, m.before, m.after), m)
                               for m in wanted.values()])
    earlier_by_edit = _unique_by_edit([(_row_edit_key(r), r) for r in earlier["mutants"]])
    out: dict[str, KillHint] = {}
    for r in earlier["mutants"]:
        m = wanted.get(r["id"])
        if m is None or (r.get("before"), r.get("after")) != (m.before, m.after):
            key = _row_edit_key(r)
            m = by_edit.get(key) if earlier_by_edit.get(key) is r else None
        if m is None or m.id in carried or m.id in out:
            continue
        hint = kill_hint(r)
        if hint is not None:
            out[m.id] = hint
    return out


EditKey = tuple[object, ...]


def _edit_key(protocol: object, module: object, function: object, operator: object, col: object, before: object,
              after: object) -> EditKey:
    """A mutant's edit without its line: the protocol, the module, the enclosing function, the operator, the
    column and the line's text before and after."""
    return protocol, module, function, operator, col, before, after


def _row_edit_key(row: dict[str, Any]) -> EditKey:
    """An earlier row's edit key; its module is the one its id names (``protocol:module:line:col:operator``)."""
    parts = str(row.get("id", "")).split(":")
    return _edit_key(row.get("protocol"), parts[1] if len(parts) == 5 else None, row.get("function"),
                     row.get("operator"), row.get("col"), row.get("before"), row.get("after"))


def _unique_by_edit(items: list[tuple[EditKey, Any]]) -> dict[EditKey, Any]:
    """The items whose edit key no other item shares (the same edit on two lines of a function is ambiguous)."""
    seen: dict[EditKey, Any] = {}
    twice: set[EditKey] = set()
    for key, item in items:
        if key in seen:
            twice.add(key)
        seen[key] = item
    return {k: v for k, v in seen.items() if k not in twice}


def _rechecked(row: dict[str, Any]) -> bool:
    """A row --recheck runs again: a survivor (a timeout or a kill stands as it was)."""
    return str(row.get("status", "")).startswith("survived")


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _campaign(args: argparse.Namespace, protocols: list[str], selected: dict[str, list[Mutant]], runner: Runner,
              doc: dict[str, Any], results: list[dict[str, Any]], path: Path) -> int:
    bases: dict[str, Baseline] = {}
    timeouts: dict[str, float] = {}
    carried = {} if args.resumed is None else carried_rows(
        args.resumed, selected, doc, args.equivalents, registry_growth(runner.snapshot, protocol_packages()),
        args.carry_equivalents)
    hints = {} if args.resumed is None else kill_hints(args.resumed, selected, carried)
    resumed_same = args.resumed is not None and args.resumed.get("sources_sha256") == doc["sources_sha256"]

    def baseline(p: str) -> None:
        earlier = (args.previous or args.resumed or {}).get("baseline", {}).get(p)
        # A screen's baseline has the cheap steps' runs alone: it serves another screen, not a full run.
        if isinstance(earlier, dict) and earlier.get("screen") and not args.screen:
            earlier = None  # nor does its time limit, ten times the cheap steps'
        cheap = args.screen
        if resumed_same and isinstance(earlier, dict) and earlier.get("runs"):
            # Every module as it was when FILE's baseline ran: its verdicts stand.
            base = Baseline(p, [CellResult(**r) for r in earlier["runs"]], earlier["seconds"], earlier["imports"])
            cheap = bool(earlier.get("screen"))
        else:
            what = "the decision rules and the config domain" if args.screen else "the broken variants, z3 and conform"
            cells = ", ".join(f"{c.config}/{c.profile}" for c in cells_of(p) if c.config == "small" or not args.screen)
            print(f"mutation: baseline of {p} ({cells}, then {what})", file=sys.stderr, flush=True)
            explored = None if args.previous is None else [CellResult(**r) for r in (earlier or {}).get("runs", [])]
            try:
                base = run_baseline(runner, p, max(3600.0, args.timeout or 0), not args.no_conform, not args.no_z3,
                                    not args.no_variants, explored, inner_jobs, args.screen)
            except RuntimeError as exc:
                # Without a clean baseline nothing can be called killed: the protocol is skipped, and said so.
                doc["baseline"][p] = {"error": str(exc)}
                print(f"mutation: {p} skipped: {exc}", file=sys.stderr, flush=True)
                return
        bases[p] = base
        timeouts[p] = args.timeout or (earlier["timeout"] if earlier else max(60.0, 10 * base.seconds))
        doc["baseline"][p] = {"seconds": round(base.seconds, 2), "timeout": timeouts[p], "imports": base.imports,
                              "screen": cheap,
                              "runs": [asdict(c) | {"seconds": round(c.seconds, 2)} for c in base.cells]}
        todo = sum(m.id not in carried for m in selected[p])
        print(f"mutation: {p}: " + ", ".join(f"{c.config}/{c.profile} {c.distinct_states} states"
                                             for c in base.cells)
              + f"; {todo} mutants to run, time limit {timeouts[p]:.0f} s each", file=sys.stderr, flush=True)

    # The baselines side by side (--jobs of them): each is one protocol's every step on the unmutated copy, its
    # cells spread over the jobs the other baselines leave (one protocol: all of them).
    needed = [p for p in protocols if any(m.id not in carried for m in selected[p])]
    inner_jobs = max(1, args.jobs // max(1, len(needed)))
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(baseline, needed))
    every = [m for p in protocols for m in selected[p]]
    results += [dict(carried[m.id], order=i) for i, m in enumerate(every) if m.id in carried]
    queue = [(i, m) for i, m in enumerate(every) if m.id not in carried and m.protocol in bases]
    explored_of: dict[str, list[CellResult]] = {}
    if args.previous is not None:
        # The earlier rows: survivors run again (their explorer runs carried over), the others kept as they were.
        rows = [r for r in args.previous["mutants"] if r["protocol"] in bases]
        explored_of = {r["id"]: [CellResult(**c) for c in r["runs"]] for r in rows if _rechecked(r)}
        order_of = {r["id"]: i for i, r in enumerate(rows)}
        queue = [(order_of[m.id], m) for _, m in queue]
        results += [dict(r, order=order_of[r["id"]]) for r in rows if not _rechecked(r)]
    # A mutant the equivalent list names is expected to survive every step (minutes each: the larger configs and
    # the variant cells): it runs after the others, so a campaign stopped early has judged every open mutant.
    queue.sort(key=lambda om: (listed_equivalent(om[1], args.equivalents), om[0]))
    total = len(queue) + len(results)  # with --recheck, the earlier kills are already in results
    t0 = time.monotonic()
    last_progress = last_save = t0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        running: dict[Future[dict[str, Any]], tuple[int, Mutant]] = {}
        pending = iter(queue)
        try:
            while True:
                while len(running) < args.jobs:
                    nxt = next(pending, None)
                    if nxt is None:
                        break
                    order, m = nxt
                    fut = pool.submit(run_mutant, runner, m, bases[m.protocol], timeouts[m.protocol], args.all_cells,
                                      not args.no_conform, not args.no_z3, not args.no_variants,
                                      explored_of.get(m.id), hints.get(m.id), args.screen)
                    running[fut] = (order, m)
                if not running:
                    break
                done, _ = wait(running, timeout=1.0, return_when=FIRST_COMPLETED)
                for fut in done:
                    order, done_m = running.pop(fut)
                    # Results arrive in completion order; the JSON lists them in enumeration order.
                    results.append(judge_equivalent(fut.result(), args.equivalents)
                                   | {"order": order, "commit": doc["commit"], "sources_sha256": doc["sources_sha256"],
                                      "reference_sha256": doc["reference_sha256"],
                                      "protocol_reference_sha256": doc["protocol_reference_sha256"][done_m.protocol],
                                      "protocol_code_sha256": doc["protocol_code_sha256"][done_m.protocol]})
                now = time.monotonic()
                if now - last_progress >= PROGRESS_EVERY:
                    last_progress = now
                    _progress(results, total, now - t0, [m for _, m in running.values()])
                if now - last_save >= SAVE_EVERY:
                    last_save = now
                    doc["summary"] = summarize(results, protocols)
                    write_json(path, doc)
        except BaseException:
            runner.kill_all()
            for fut in running:
                fut.cancel()
            raise
    doc["partial"] = False
    _progress(results, total, time.monotonic() - t0, [])
    return 0


def _progress(results: list[dict[str, Any]], total: int, elapsed: float, running: list[Mutant]) -> None:
    n = {s: sum(r["status"] == s for r in results) for s in STATUSES}
    now = ", ".join(m.id for m in running) or "-"
    print(f"mutation: {len(results)}/{total} done in {elapsed:.0f} s: {n['killed']} killed, "
          f"{n['killed (variant)']} by a variant, {n['killed (z3)']} by z3, {n['killed (conform)']} by conform, "
          f"{n['killed (crash)']} by crash, {n['survived'] + n['survived (count changed)']} survived, "
          f"{n['equivalent']} equivalent, {n['timeout']} timeout"
          + (f", {n['screened']} screened" if n["screened"] else "") + f"; running {now}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
