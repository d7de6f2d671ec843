"""Which protocols have a Z3 encoding, and the driver the CLI, the gate adapter and the benchmark share."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from model.core import ProofResult, SymbolicSystem, bmc, k_induction
from rollcheck.errors import UserError
from rollcheck.transition import TransitionSystem


def _streams(ts: TransitionSystem[Any]) -> SymbolicSystem:
    from model.streams_probing import StreamsProbingZ3

    return StreamsProbingZ3(ts)


def _features(ts: TransitionSystem[Any]) -> SymbolicSystem:
    from model.features import FeaturesZ3

    return FeaturesZ3(ts)


def _metadata_version(ts: TransitionSystem[Any]) -> SymbolicSystem:
    from model.metadata_version import MetadataVersionZ3

    return MetadataVersionZ3(ts)


def _zk_migration(ts: TransitionSystem[Any]) -> SymbolicSystem:
    from model.zk_migration import ZkMigrationZ3

    return ZkMigrationZ3(ts)


# protocol name -> builder of its symbolic system from a (reference or variant) transition system
ENCODINGS: dict[str, Callable[[TransitionSystem[Any]], SymbolicSystem]] = {
    "streams_probing": _streams,
    "features": _features,
    "metadata_version": _metadata_version,
    "zk_migration": _zk_migration,
}


def symbolic(ts: TransitionSystem[Any]) -> SymbolicSystem:
    try:
        build = ENCODINGS[ts.name]
    except KeyError:
        raise UserError(f"protocol '{ts.name}' has no Z3 encoding yet; encoded: {', '.join(ENCODINGS)}") from None
    return build(ts)


def prove(sym: SymbolicSystem, prop_id: str, depth: int, timeout: float | None,
          max_k: int = 2) -> ProofResult:
    """BMC to ``depth`` first (a refutation is final); then k-induction for k = 1 .. ``max_k``. The verdict
    is "proved" if an induction succeeds, else "checked" to the BMC depth ("unknown" if BMC timed out)."""
    t0 = time.perf_counter()
    res = bmc(sym, prop_id, depth, timeout)
    if res.status == "refuted":
        return res
    if res.depth < depth:
        res.status = "unknown"
        return res
    for k in range(1, max_k + 1):
        ind = k_induction(sym, prop_id, k, timeout)
        if ind.status == "proved":
            ind.seconds = time.perf_counter() - t0
            return ind
    res.seconds = time.perf_counter() - t0
    return res
