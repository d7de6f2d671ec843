"""One assertion the Z3 tests share: a BMC refutation is a shortest counterexample the reference replays."""

from __future__ import annotations

from typing import Any

from rollcheck.smt.core import ProofResult, replay


def assert_shortest_replayed_refutation(ts: Any, res: ProofResult, prop: str, shortest: int) -> None:
    """``res`` refutes ``prop`` in ``shortest`` steps (the explorer's depth), and the reference replays the
    trace and agrees that its last state (invariant) or last step (step property) violates ``prop``."""
    assert res.status == "refuted" and res.trace is not None, (prop, res.line)
    assert res.depth == shortest == len(res.trace.actions)
    states, actions = res.trace.states, res.trace.actions
    replay(ts, states, [a.name for a in actions], violates=prop)
    p = {p.id: p for p in ts.properties()}[prop]
    if p.kind == "step":
        assert not p.holds(states[-2], actions[-1], states[-1])
    else:
        assert not p.holds(states[-1])
