"""A Hypothesis ``RuleBasedStateMachine`` that drives any protocol through the transition-system interface.

It never restates a protocol's rules: each step asks the reference implementation for its enabled
labelled successors and lets Hypothesis choose one (so shrinking moves towards earlier-listed, usually
simpler actions). Every state invariant is an ``@invariant``; step properties are checked on each step.
Graph (liveness) properties need the whole graph and are left to the explorers.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from rollcheck.core.traces import Step
from rollcheck.core.transition import TransitionSystem, properties_by_kind


class PropertyViolated(AssertionError):
    """Raised inside the machine; its message starts with the property id.

    ``steps`` is the run that failed (after shrinking, the minimal one Hypothesis re-raises), so callers
    can write it as an ITF counterexample.
    """

    def __init__(self, property_id: str, message: str, steps: list[Step] | None = None) -> None:
        super().__init__(f"{property_id}: {message}")
        self.property_id = property_id
        self.steps = list(steps or [])


def machine_for(ts: TransitionSystem[Any], max_steps: int | None = None) -> type[RuleBasedStateMachine]:
    """A fresh state-machine class for ``ts`` (run it with ``run_state_machine_as_test``)."""
    inv, step_props, _ = properties_by_kind(ts)
    initial = list(ts.initial_states())
    if not initial:
        raise ValueError(f"{ts.name}: no initial state")

    class ProtocolMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.state: Any = None
            self.steps = 0
            self.history: list[str] = []
            self.trace: list[Step] = []

        @initialize(i=st.integers(min_value=0, max_value=len(initial) - 1))
        def start(self, i: int) -> None:
            self.state = initial[i]
            self.history = ["Init"]
            self.trace = [Step(None, self.state)]

        @precondition(lambda self: self.state is not None and (max_steps is None or self.steps < max_steps))
        @rule(data=st.data())
        def step(self, data: st.DataObject) -> None:
            succ = list(ts.successors(self.state))
            if not succ:
                return  # a terminal state: nothing is enabled
            # Steps that leave the state as it is (a refused request, a dry run) are checked here, all of
            # them, and not spent as steps: the walk then moves through the state space instead of
            # stuttering, which is what lets a run of bounded length reach deep bugs.
            moving = [(a, t) for a, t in succ if t != self.state]
            for action, nxt in succ:
                if nxt == self.state:
                    for p in step_props:
                        if not p.holds(self.state, action, nxt):
                            raise PropertyViolated(p.id, f"{p.description} (step {action!r})",
                                                   [*self.trace, Step(action, nxt)])
            succ = moving or succ
            k = data.draw(st.integers(min_value=0, max_value=len(succ) - 1), label="choice")
            action, nxt = succ[k]
            self.history.append(repr(action))
            for p in step_props:
                if not p.holds(self.state, action, nxt):
                    raise PropertyViolated(p.id, f"{p.description} (step {action!r})",
                                           [*self.trace, Step(action, nxt)])
            self.state = nxt
            self.trace.append(Step(action, nxt))
            self.steps += 1

        @invariant()
        def state_invariants(self) -> None:
            if self.state is None:
                return
            for p in inv:
                if not p.holds(self.state):
                    raise PropertyViolated(p.id, f"{p.description} after {' -> '.join(self.history)}",
                                           self.trace)

    ProtocolMachine.__name__ = f"{ts.name.title().replace('_', '')}Machine"
    ProtocolMachine.__qualname__ = ProtocolMachine.__name__
    return ProtocolMachine
