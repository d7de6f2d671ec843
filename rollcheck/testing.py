"""The contract every protocol meets, as pytest cases (also a pytest plugin: ``pytest11`` entry point).

A protocol's test module declares its contract and one test function takes the cases::

    from rollcheck.testing import ProtocolContract

    ROLLCHECK_CONTRACT = ProtocolContract("features", counts={"small": (25073, 14), "default/kafka": 45321})

    def test_protocol_contract(contract_case, tmp_path):
        contract_case.run(tmp_path)

The plugin parametrizes ``contract_case`` with every case (stable ids such as ``explore[FEAT-M1]``):

* ``explore[V]``: each broken variant is killed by the explorer on its config, with a property it names;
  the counterexample replays step by step on the broken system, round-trips through ITF and
  ``rollcheck replay`` reproduces it from the file alone;
* ``hypothesis[V]``: each variant is killed by the Hypothesis state machine (a derandomized run);
* ``hypothesis-reference``: the reference holds under Hypothesis on its ``default`` config;
* ``codec[C]``: every reachable state of config C encodes and decodes to itself (``@given``);
* ``counts[C]``: pinned distinct states (and depth) of config C, ``C/PROFILE`` for another profile (a change
  there is a change of the model);
* ``tlc[C]``: TLC finds exactly the explorer's number of states (where a spec exists);
* ``drift``: the spec and the reference name the same actions and properties (where a spec exists).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test

from rollcheck.core.registry import get_protocol
from rollcheck.core.traces import read_itf, trace_from_itf, write_itf
from rollcheck.core.transition import ProtocolEntry, TransitionSystem, declared_property_ids
from rollcheck.explore.explorer import ExploreOptions, explore, reachable_states
from rollcheck.explore.replay import replay_itf
from rollcheck.fuzzing.machine import PropertyViolated, machine_for
from rollcheck.tla.binding import write_model
from rollcheck.tla.drift import drift
from rollcheck.tla.tlc import run_tlc


@dataclass(frozen=True)
class ContractCase:
    id: str
    check: Callable[[Path], None] = field(repr=False, compare=False)

    def run(self, tmp_path: Path) -> None:
        self.check(tmp_path)

    def __str__(self) -> str:
        return self.id


@dataclass(frozen=True)
class ProtocolContract:
    """What a protocol's tests pin and how hard Hypothesis tries; everything else comes from its entry."""

    protocol: str
    # "config" or "config/profile" -> distinct states, or (distinct states, depth)
    counts: Mapping[str, int | tuple[int, int]] = field(default_factory=dict)
    profiles: Sequence[str] = ("kip",)  # the profiles the variants are explored under
    # variants the KIP profile's bug does not exist under kafka: explored there, they must survive
    kafka_survivors: Mapping[str, str] = field(default_factory=dict)
    hypothesis_examples: int = 400
    hypothesis_steps: int = 30
    # variants Hypothesis cannot find in a derandomized run (say why; the explorer still kills them)
    hypothesis_skip: Mapping[str, str] = field(default_factory=dict)
    reference_hypothesis: tuple[int, int] = (60, 30)  # examples, steps on reference_config
    reference_config: str = "default"
    reference_profiles: Sequence[str] = ("kip",)
    codec_configs: Sequence[str] = ("small",)
    tlc_configs: Sequence[str] = ("small",)

    @property
    def entry(self) -> ProtocolEntry:
        return get_protocol(self.protocol)

    def cases(self) -> list[ContractCase]:
        entry = self.entry
        out: list[ContractCase] = []
        for v in entry.variants:
            for profile in self.profiles:
                suffix = "" if len(self.profiles) == 1 else f"-{profile}"
                out.append(ContractCase(f"explore[{v.id}{suffix}]", partial(self._explore_variant, v.id, profile)))
        out += [ContractCase(f"hypothesis[{v.id}]", partial(self._hypothesis_variant, v.id))
                for v in entry.variants if v.id not in self.hypothesis_skip]
        out.append(ContractCase("hypothesis-reference", self._hypothesis_reference))
        out += [ContractCase(f"codec[{c}]", partial(self._codec, c)) for c in self.codec_configs]
        out += [ContractCase(f"counts[{c}]", partial(self._counts, c)) for c in self.counts]
        if entry.spec is not None:
            out += [ContractCase(f"tlc[{c}]", partial(self._tlc, c)) for c in self.tlc_configs]
            out.append(ContractCase("drift", self._drift))
        return out

    # -- the cases

    def _explore_variant(self, variant: str, profile: str, tmp_path: Path) -> None:
        entry = self.entry
        v = entry.variant(variant)
        ts = v.system(replace(entry.configs[v.config], profile=profile))
        r = explore(ts, ExploreOptions(config_name=v.config))
        if profile == "kafka" and variant in self.kafka_survivors:
            assert not r.violations, f"{variant} under kafka: {self.kafka_survivors[variant]}"
            return
        assert r.violations, f"{variant} survived the explorer on {v.config}"
        violation = r.violations[0]
        assert violation.property_id in v.expect, (violation.property_id, v.expect)
        for before, after in itertools.pairwise(violation.trace.steps):
            assert (after.action, after.state) in list(ts.successors(before.state)), "a step does not replay"
        path = write_itf(tmp_path / f"{variant}.itf.json", violation.trace, ts)
        assert trace_from_itf(read_itf(path), ts).states == violation.trace.states
        replayed = replay_itf(path)
        assert replayed.divergence is None and replayed.reproduced, replayed.to_json()

    def _hypothesis_variant(self, variant: str, _tmp_path: Path) -> None:
        entry = self.entry
        v = entry.variant(variant)
        found = _hypothesis(v.system(entry.configs[v.config]), self.hypothesis_examples, self.hypothesis_steps,
                            generate_only=True)
        assert found is not None, f"{variant} survived {self.hypothesis_examples} Hypothesis examples"
        assert found in v.expect, (found, v.expect)

    def _hypothesis_reference(self, _tmp_path: Path) -> None:
        entry = self.entry
        examples, steps = self.reference_hypothesis
        for profile in self.reference_profiles:
            ts = entry.build(replace(entry.configs[self.reference_config], profile=profile))
            found = _hypothesis(ts, examples, steps, generate_only=False)
            assert found is None, f"the reference violates {found} under {profile}"

    def _codec(self, config: str, _tmp_path: Path) -> None:
        ts = self.entry.build(self.entry.configs[config])
        states = sorted(reachable_states(ts)[0], key=lambda s: ts.encode(s))

        @settings(max_examples=min(300, len(states)), derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.sampled_from(states))
        def round_trip(state: Any) -> None:
            data = ts.encode(state)
            assert ts.decode(data) == state
            assert ts.encode(ts.decode(data)) == data

        round_trip()

    def _counts(self, key: str, _tmp_path: Path) -> None:
        name, _, profile = key.partition("/")
        config = self.entry.configs[name]
        r = explore(self.entry.build(replace(config, profile=profile) if profile else config))
        want = self.counts[key]
        got: int | tuple[int, int] = (r.distinct_states, r.depth) if isinstance(want, tuple) else r.distinct_states
        assert got == want, f"{key}: {got} states (and depth), pinned {want}: the model changed, update the pin"

    def _tlc(self, config: str, tmp_path: Path) -> None:
        entry = self.entry
        ts = entry.build(entry.configs[config])
        binding = entry.spec_binding()
        model = write_model(binding, ts, tmp_path / "tlc", check_properties=False)
        res = run_tlc(model.directory, model.module, model.cfg, workers=1, timeout=600)
        assert not res.error, res.error
        assert res.distinct_states == explore(ts).distinct_states

    def _drift(self, _tmp_path: Path) -> None:
        entry = self.entry
        ts = entry.build(entry.configs["small"])
        emitted = reachable_states(ts)[1]
        binding = entry.spec_binding()
        # the KIP's claims that Kafka does not make have operators too (checked as findings)
        assert drift(binding, declared_property_ids(entry) + list(binding.claims), emitted) == []


def _hypothesis(ts: TransitionSystem[Any], examples: int, steps: int, *, generate_only: bool) -> str | None:
    """The id of the property a derandomized Hypothesis run finds violated, or None."""
    phases = (Phase.generate,) if generate_only else tuple(Phase)
    run = settings(max_examples=examples, stateful_step_count=steps, derandomize=True, database=None,
                   deadline=None, suppress_health_check=list(HealthCheck), phases=phases)
    try:
        run_state_machine_as_test(machine_for(ts), settings=run)
    except PropertyViolated as exc:
        return exc.property_id
    return None


# -- the pytest plugin

def pytest_generate_tests(metafunc: Any) -> None:
    """Parametrize a test's ``contract_case`` argument with its module's ``ROLLCHECK_CONTRACT``."""
    if "contract_case" not in metafunc.fixturenames:
        return
    contract = getattr(metafunc.module, "ROLLCHECK_CONTRACT", None)
    if not isinstance(contract, ProtocolContract):
        raise TypeError(f"{metafunc.module.__name__} takes contract_case but defines no ROLLCHECK_CONTRACT")
    cases = contract.cases()
    metafunc.parametrize("contract_case", cases, ids=[c.id for c in cases])
