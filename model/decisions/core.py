"""The decision rules' protocol-independent machinery: :class:`Formula` (a rule's Z3 terms over named Int inputs,
compiled once for evaluation), :func:`differential` (the formula against the reference on every input of a
bounded domain) and the output codes the protocols' rules share."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import z3

Inputs = dict[str, int]
Outputs = dict[str, int]


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


def _compile(t: z3.ExprRef) -> Callable[[Inputs], Any]:
    """A Python closure evaluating a quantifier-free Int/Bool Z3 term on named inputs."""
    cache: dict[int, Callable[[Inputs], Any]] = {}

    def go(e: z3.ExprRef) -> Callable[[Inputs], Any]:
        key = e.get_id()
        if key in cache:
            return cache[key]
        k = e.decl().kind()
        f: Callable[[Inputs], Any]
        if z3.is_int_value(e):
            val = e.as_long()
            f = lambda x, val=val: val  # noqa: E731
        elif z3.is_true(e) or z3.is_false(e):
            val_b = z3.is_true(e)
            f = lambda x, val_b=val_b: val_b  # noqa: E731
        elif k == z3.Z3_OP_UNINTERPRETED and e.num_args() == 0:
            name = e.decl().name()
            f = lambda x, name=name: x[name]  # noqa: E731
        elif k == z3.Z3_OP_ITE:
            c, a, b = (go(e.arg(i)) for i in range(3))
            f = lambda x, c=c, a=a, b=b: a(x) if c(x) else b(x)  # noqa: E731
        elif k in _OPS:
            op, args = _OPS[k], [go(e.arg(i)) for i in range(e.num_args())]
            f = lambda x, op=op, args=args: op([g(x) for g in args])  # noqa: E731
        else:
            raise NotImplementedError(f"no evaluator for Z3 operator {e.decl()}")
        cache[key] = f
        return f

    return go(t)


def differential(rule: str, cases: Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]
                 ) -> DifferentialResult:
    """Compare formula and reference on every input of every case; stop at the first disagreement."""
    res = DifferentialResult(rule)
    t0 = time.perf_counter()
    for case, formula, domain, reference in cases:
        res.cases += 1
        for inputs in domain:
            res.inputs += 1
            ref, mine = reference(inputs), formula.eval(inputs)
            # Outputs the reference marks as irrelevant (-99) are not compared (e.g. assignments when the
            # leader fails).
            if any(ref[k] != mine[k] for k in ref if ref[k] != DONT_CARE):
                res.disagreement = Disagreement(rule, case, inputs, ref, mine)
                res.seconds = time.perf_counter() - t0
                return res
    res.seconds = time.perf_counter() - t0
    return res


DONT_CARE = -99
CODEC_ERROR = -5  # the reference raised, or gave back a value that is none of the inputs'
# Kafka's error codes (clients/src/main/java/org/apache/kafka/common/protocol/Errors.java), shared by the
# UpdateFeatures (features) and metadata.version rules: the rules' own copy, so a reference whose code table
# drifts from Kafka's disagrees (code_table_case compares the reference's enum with it).
KAFKA_ERRORS = {"NONE": 0, "CLUSTER_AUTHORIZATION_FAILED": 31, "UNSUPPORTED_VERSION": 35, "NOT_CONTROLLER": 41,
                "INVALID_REQUEST": 42, "INVALID_UPDATE_VERSION": 95, "FEATURE_UPDATE_FAILED": 96}
INVALID_REQUEST, FEATURE_UPDATE_FAILED = KAFKA_ERRORS["INVALID_REQUEST"], KAFKA_ERRORS["FEATURE_UPDATE_FAILED"]
CLUSTER_AUTHORIZATION_FAILED = KAFKA_ERRORS["CLUSTER_AUTHORIZATION_FAILED"]
NOT_CONTROLLER = KAFKA_ERRORS["NOT_CONTROLLER"]


def code_table_case(label: str, codes: Mapping[str, int], enum_type: Any
                    ) -> tuple[str, Formula, list[Inputs], Callable[[Inputs], Outputs]]:
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
