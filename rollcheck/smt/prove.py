"""The proof driver the CLI, the gate adapter and the benchmark share, and each protocol's encoding by name."""

from __future__ import annotations

import time
from typing import Any

from rollcheck.core.errors import UserError
from rollcheck.core.registry import all_protocols, get_protocol
from rollcheck.core.transition import TransitionSystem
from rollcheck.smt.core import ProofResult, ReplayError, SymbolicSystem, bmc, k_induction


def symbolic(ts: TransitionSystem[Any]) -> SymbolicSystem:
    """The symbolic system of ``ts`` (the reference or a variant), by its protocol's registered encoding."""
    build = get_protocol(ts.name).z3_encoding()
    if build is None:
        encoded = ", ".join(e.name for e in all_protocols() if e.z3 is not None)
        raise UserError(f"protocol '{ts.name}' has no Z3 encoding yet; encoded: {encoded}")
    sym: SymbolicSystem = build(ts)
    return sym


def prove(sym: SymbolicSystem, prop_id: str, depth: int, timeout: float | None,
          max_k: int = 2) -> ProofResult:
    """BMC to ``depth`` first (a refutation is final); then k-induction for k = 1 .. ``max_k``. The verdict
    is "proved" if an induction succeeds, else "checked" to the BMC depth ("unknown" if the solver gave up
    before BMC reached ``depth``: no verdict, its ``message`` says so).
    A counterexample the reference does not replay is "diverged" (its reason in ``message``): the Z3 model
    and the reference, two copies of the rules, step otherwise; a disagreement, not a crash."""
    t0 = time.perf_counter()
    try:
        res = bmc(sym, prop_id, depth, timeout)
    except ReplayError as exc:
        return ProofResult(sym.name, prop_id, "bmc", "diverged", depth, time.perf_counter() - t0, message=str(exc))
    if res.status == "refuted":
        return res
    if res.depth < depth:
        res.status = "unknown"
        res.message = f"the solver gave up before BMC reached depth {depth} ({res.message or 'solver: unknown'})"
        return res
    for k in range(1, max_k + 1):
        ind = k_induction(sym, prop_id, k, timeout)
        if ind.status == "proved":
            ind.seconds = time.perf_counter() - t0
            return ind
    res.seconds = time.perf_counter() - t0
    return res
