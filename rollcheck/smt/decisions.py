"""Differential checks of decision rules: a Z3 formula per rule against the reference, over a bounded domain.

A protocol's decision rule is written as Z3 terms over symbolic Int inputs (an independent restatement of the
KIP / Kafka rule, :class:`Formula`) beside the reference's own function of the same inputs. :func:`differential`
enumerates a case's whole bounded input domain, evaluates the formula on each input (a closure compiled once
from the terms) and compares it with the reference; the first disagreement is reported as a concrete input with
both outputs. A protocol registers its rules as a :class:`DecisionRules` through its entry
(``ProtocolEntry.decisions``, ``"module:attribute"``); :func:`protocol_differential` is what the gate's z3 cell
and ``rollcheck prove`` run for one profile.

Unlike the successor differential, this reaches the decision code on every input of its domain, whether or not
a config's states ever ask it: a wrong error code or a refused deletion that no config reaches is caught.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import z3

if TYPE_CHECKING:
    from rollcheck.core.transition import ProtocolEntry

Inputs = dict[str, int]
Outputs = dict[str, int]
# One case of a rule: its name (the Python-level parameters: release, profile, mutation ...), the formula, the
# inputs it is compared on and the reference's function of one input.
Case = tuple[str, "Formula", Iterable[Inputs], Callable[[Inputs], Outputs]]
CaseSource = Callable[[], Iterable[Case]]

DONT_CARE = -99  # an output the reference marks as irrelevant on this input: not compared
CODEC_ERROR = -5  # the reference raised, or gave back a value that is none of the inputs'


@dataclass
class Disagreement:
    rule: str
    case: str  # the Python-level parameters (release, profile, mutation ...)
    inputs: Inputs
    reference: Outputs
    formula: Outputs

    def __str__(self) -> str:
        diff = {k: (self.reference.get(k), self.formula.get(k)) for k in sorted(set(self.reference) | set(self.formula))
                if self.reference.get(k) != self.formula.get(k)}
        return (f"{self.rule} [{self.case}] disagrees on {self.inputs}: reference {self.reference}, "
                f"formula {self.formula} (reference, formula) per output: {diff}")


@dataclass
class DifferentialResult:
    rule: str
    cases: int = 0
    inputs: int = 0
    seconds: float = 0.0
    disagreement: Disagreement | None = None

    @property
    def ok(self) -> bool:
        return self.disagreement is None


class Formula:
    """A rule's Z3 terms over named Int inputs. Evaluated on concrete inputs by a closure compiled once from
    the Z3 terms (the same terms a solver would see), which is ~1000 times faster than substitution."""

    def __init__(self, names: Sequence[str], build: Callable[[dict[str, z3.ArithRef]], Mapping[str, Any]]) -> None:
        self.vars = {n: z3.Int(n) for n in names}
        self.outputs = {k: (t if isinstance(t, z3.ExprRef) else z3.IntVal(int(t)))
                        for k, t in build(self.vars).items()}
        self.compiled = {k: _compile(t) for k, t in self.outputs.items()}

    def eval(self, inputs: Inputs) -> Outputs:
        return {k: int(f(inputs)) for k, f in self.compiled.items()}


_OPS: dict[int, Callable[[list[Any]], Any]] = {
    z3.Z3_OP_AND: all, z3.Z3_OP_OR: any,
    z3.Z3_OP_NOT: lambda a: not a[0], z3.Z3_OP_EQ: lambda a: a[0] == a[1],
    z3.Z3_OP_DISTINCT: lambda a: len(set(a)) == len(a),
    z3.Z3_OP_LT: lambda a: a[0] < a[1], z3.Z3_OP_LE: lambda a: a[0] <= a[1],
    z3.Z3_OP_GT: lambda a: a[0] > a[1], z3.Z3_OP_GE: lambda a: a[0] >= a[1],
    z3.Z3_OP_ADD: sum, z3.Z3_OP_SUB: lambda a: a[0] - sum(a[1:]), z3.Z3_OP_UMINUS: lambda a: -a[0],
    z3.Z3_OP_IMPLIES: lambda a: (not a[0]) or a[1],
}


Evaluator = Callable[[Inputs], Any]


def _const(value: Any) -> Evaluator:
    def f(x: Inputs) -> Any:
        return value
    return f


def _var(name: str) -> Evaluator:
    def f(x: Inputs) -> Any:
        return x[name]
    return f


def _ite(c: Evaluator, a: Evaluator, b: Evaluator) -> Evaluator:
    def f(x: Inputs) -> Any:
        return a(x) if c(x) else b(x)
    return f


def _apply(op: Callable[[list[Any]], Any], args: list[Evaluator]) -> Evaluator:
    def f(x: Inputs) -> Any:
        return op([g(x) for g in args])
    return f


def _compile(t: z3.ExprRef) -> Evaluator:
    """A Python closure evaluating a quantifier-free Int/Bool Z3 term on named inputs."""
    cache: dict[int, Evaluator] = {}

    def go(e: z3.ExprRef) -> Evaluator:
        key = e.get_id()
        if key in cache:
            return cache[key]
        k = e.decl().kind()
        f: Evaluator
        if z3.is_int_value(e):
            f = _const(e.as_long())
        elif z3.is_true(e) or z3.is_false(e):
            f = _const(z3.is_true(e))
        elif k == z3.Z3_OP_UNINTERPRETED and e.num_args() == 0:
            f = _var(e.decl().name())
        elif k == z3.Z3_OP_ITE:
            f = _ite(go(e.arg(0)), go(e.arg(1)), go(e.arg(2)))
        elif k in _OPS:
            f = _apply(_OPS[k], [go(e.arg(i)) for i in range(e.num_args())])
        else:
            raise NotImplementedError(f"no evaluator for Z3 operator {e.decl()}")
        cache[key] = f
        return f

    return go(t)


def differential(rule: str, cases: Iterable[Case]) -> DifferentialResult:
    """Compare formula and reference on every input of every case; stop at the first disagreement."""
    res = DifferentialResult(rule)
    t0 = time.perf_counter()
    for case, formula, domain, reference in cases:
        res.cases += 1
        for inputs in domain:
            res.inputs += 1
            ref, mine = reference(inputs), formula.eval(inputs)
            # Outputs the reference marks as irrelevant are not compared (e.g. assignments when the leader fails).
            if any(ref[k] != mine[k] for k in ref if ref[k] != DONT_CARE):
                res.disagreement = Disagreement(rule, case, inputs, ref, mine)
                res.seconds = time.perf_counter() - t0
                return res
    res.seconds = time.perf_counter() - t0
    return res


def code_table_case(label: str, codes: Mapping[str, int], enum_type: Any) -> Case:
    """One decision-rule case: each name of ``codes`` has its code in the reference's ``enum_type`` (an
    ``IntEnum`` such as a protocol's ``Errors``); a name the enum lacks answers CODEC_ERROR. The codes travel on
    the wire, so they are Kafka's numbers, not labels: no other rule sees a code that moved in both copies."""
    names = sorted(codes)

    def formula(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        code: Any = z3.IntVal(CODEC_ERROR)
        for k, name in enumerate(names):
            code = z3.If(x["k"] == k, codes[name], code)
        return {"code": code}

    def reference(x: Inputs) -> Outputs:
        member = enum_type.__members__.get(names[x["k"]])
        return {"code": CODEC_ERROR if member is None else int(member)}

    return label, Formula(["k"], formula), [{"k": k} for k in range(len(names))], reference


@dataclass(frozen=True)
class DecisionRules:
    """A protocol's decision rules, each a function returning its cases: ``full`` on the whole bounded domains
    (benchmarks/prove.py), ``gate`` on domains that keep a z3 cell within seconds. Both name the same rules, in
    report order."""

    full: Mapping[str, CaseSource]
    gate: Mapping[str, CaseSource]

    def __post_init__(self) -> None:
        if list(self.full) != list(self.gate):
            raise ValueError(f"decision rules: the full and gate domains name different rules "
                             f"({list(self.full)} against {list(self.gate)})")


def for_profile(case: str, profile: str, profiles: Sequence[str]) -> bool:
    """A case whose name names a profile runs for that profile only; one naming none, for all. A name's
    comma-separated parts name a profile (one of ``profiles``) as the whole part ("activate, kip") or followed
    by a release ("kafka 3.9"); "kafka catalog" names the catalog, not the profile."""
    named = set()
    for part in case.split(", "):
        word, _, rest = part.partition(" ")
        if word in profiles and (not rest or rest[:1].isdigit()):
            named.add(word)
    return not named or profile in named


def gate_differential(rules: DecisionRules, profile: str, profiles: Sequence[str]) -> list[dict[str, Any]]:
    """Each rule's differential on the gate's domains, the cases of ``profile`` only; JSON-ready rows (``rule``,
    ``cases``, ``inputs``, ``seconds``, ``disagreement``: None or the first input where they differ)."""
    out: list[dict[str, Any]] = []
    for rule, cases_of in rules.gate.items():
        cases = [c for c in cases_of() if for_profile(c[0], profile, profiles)]
        res = differential(rule, cases)
        out.append({"rule": rule, "cases": res.cases, "inputs": res.inputs, "seconds": round(res.seconds, 2),
                    "disagreement": None if res.ok else str(res.disagreement)})
    return out


def protocol_differential(entry: ProtocolEntry, profile: str) -> list[dict[str, Any]]:
    """The decision rules ``entry`` registers (none: no row), on the gate's domains, for ``profile``."""
    rules = entry.decision_rules()
    return [] if rules is None else gate_differential(rules, profile, entry.profiles)
