"""The one transition-system interface (docs/architecture.md, "The one interface").

Every protocol in ``reference_impl/`` exposes a :class:`TransitionSystem`; every checker (the local and
Spark explorers, Hypothesis, Z3, TLA+ trace replay) consumes only this interface, so a protocol's rules
are written exactly once.

Properties come in three shapes, all with a stable id that appears in every report:

* :class:`Invariant`: a predicate over one state, checked on every reachable state.
* :class:`StepProperty`: a predicate over one transition ``(s, a, s')``, checked on every explored edge
  (epoch monotonicity, "a failed request changes nothing", "a dry run changes nothing").
* :class:`GraphProperty`: AG (start => E[allowed U goal]) over the whole explored graph, used for
  liveness under fairness ("from every reachable state a converged state stays reachable", AG EF goal).
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from rollcheck.core.errors import UserError

State = TypeVar("State")
S = TypeVar("S")

# The semantics profiles a protocol has unless its entry lists its own (ProtocolEntry.profiles): the KIP as
# written and what Apache Kafka's code does. A protocol may add more (a release's own code, say).
PROFILES: tuple[str, ...] = ("kip", "kafka")


@dataclass(frozen=True, slots=True)
class Action:
    """A labelled step: a name from the KIP / Kafka and its parameters, immutable and hashable.

    ``Action.of("UpdateFeatures", feature="metadata.version", level=7)`` prints as
    ``UpdateFeatures(feature='metadata.version', level=7)``. Parameters keep the order given, so equal
    actions built the same way compare and hash equal.
    """

    name: str
    params: tuple[tuple[str, Any], ...] = ()

    @staticmethod
    def of(name: str, **params: Any) -> Action:
        return Action(name, tuple(params.items()))

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.params:
            if k == key:
                return v
        return default

    def __getitem__(self, key: str) -> Any:
        for k, v in self.params:
            if k == key:
                return v
        raise KeyError(key)

    @property
    def args(self) -> dict[str, Any]:
        return dict(self.params)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.params)
        return f"{self.name}({inner})"

    __str__ = __repr__


class PropertyKind(enum.StrEnum):
    """The three shapes of a property (a ``str``: reports, JSON and specs carry the value)."""

    INVARIANT = "invariant"  # one state
    STEP = "step"  # one transition (an action property, [][A]_vars in TLA+)
    GRAPH = "graph"  # the explored graph: AG (start => E[allowed U goal])
    WITNESS = "witness"  # "sometimes": a state the config must reach, else the run is vacuous


@dataclass(frozen=True)
class Invariant(Generic[S]):
    """A state invariant: ``id`` (stable, e.g. ``FEAT-01``), one-line statement, KIP source."""

    id: str
    description: str
    source: str
    predicate: Callable[[S], bool] = field(compare=False, repr=False)

    kind = PropertyKind.INVARIANT

    def holds(self, state: S) -> bool:
        return bool(self.predicate(state))


@dataclass(frozen=True)
class StepProperty(Generic[S]):
    """A property of one transition ``(s, a, s')`` (an action invariant in TLA+ terms)."""

    id: str
    description: str
    source: str
    predicate: Callable[[S, Action, S], bool] = field(compare=False, repr=False)

    kind = PropertyKind.STEP

    def holds(self, before: S, action: Action, after: S) -> bool:
        return bool(self.predicate(before, action, after))


@dataclass(frozen=True)
class GraphProperty(Generic[S]):
    """A property of the explored graph: AG (start => E[allowed U goal]), the liveness check of
    explicit-state exploration ("from every reachable state a converged state stays reachable").

    It is declared, not coded against a graph object: ``goal`` and ``start`` are predicates over one state
    (``start`` None: every state) and ``allowed`` one over an action (None: every action), so an engine
    evaluates them where it meets each state (in its worker processes) and searches the graph as flat
    arrays without keeping a single state (:mod:`rollcheck.explore.graphcheck`). The property is violated by every
    reachable ``start`` state from which no ``goal`` state can be reached through ``allowed`` steps.
    """

    id: str
    description: str
    source: str
    goal: Callable[[S], bool] = field(compare=False, repr=False)
    start: Callable[[S], bool] | None = field(default=None, compare=False, repr=False)
    allowed: Callable[[Action], bool] | None = field(default=None, compare=False, repr=False)

    kind = PropertyKind.GRAPH


@dataclass(frozen=True)
class Witness(Generic[S]):
    """A "sometimes" property (Quint's witness, TLA+'s EF at the start): some reachable state satisfies
    ``predicate``. It states what a config exists to exercise ("a lossy downgrade happened", "the migration
    finalized"): an exhaustive checker that never meets such a state fails the run as vacuous, since every
    property that holds there may hold only because the story never happened. A witness applies to the
    configs its ``when`` (evaluated by the protocol's property set) accepts."""

    id: str
    description: str
    source: str
    predicate: Callable[[S], bool] = field(compare=False, repr=False)

    kind = PropertyKind.WITNESS

    def holds(self, state: S) -> bool:
        return bool(self.predicate(state))


AnyProperty = Invariant[Any] | StepProperty[Any] | GraphProperty[Any] | Witness[Any]


def always_eventually_reachable(
    prop_id: str, description: str, source: str, goal: Callable[[Any], bool]
) -> GraphProperty[Any]:
    """AG EF goal: from every reachable state some goal state can still be reached.

    Under strong fairness of the actions that make progress this is the finite-graph form of
    "eventually goal" for the runs that do not stall forever in a fault loop; it is the standard
    liveness check for explicit-state exploration of bounded models.
    """
    return GraphProperty(prop_id, description, source, goal)


class Config(Protocol):
    """A protocol's config: a frozen dataclass with at least a ``profile`` (one of its entry's ``profiles``)."""

    profile: str


@runtime_checkable
class TransitionSystem(Protocol[State]):
    """docs/architecture.md's interface. Implementations must be deterministic and side-effect free."""

    name: str
    config: Any

    def initial_states(self) -> Iterable[State]: ...

    def successors(self, s: State) -> Iterable[tuple[Action, State]]: ...

    def properties(self) -> Sequence[AnyProperty]: ...

    def encode(self, s: State) -> bytes: ...

    def decode(self, b: bytes) -> State: ...

    def view(self, s: State) -> Mapping[str, object]: ...


@dataclass(frozen=True)
class Variant:
    """A deliberately broken variant (a mutant) of a protocol, built without editing any file.

    ``build(config)`` returns the broken transition system. ``expect`` lists the property ids that the
    variant is meant to violate (any one of them counts as caught).
    """

    id: str
    story: str
    build: Callable[[Any], TransitionSystem[Any]] = field(compare=False, repr=False)
    expect: tuple[str, ...] = ()
    source: str = ""
    config: str = "small"  # the named config on which the variant is caught

    def system(self, config: Any) -> TransitionSystem[Any]:
        """The broken system, tagged with this variant's id (``variant_id``) so that every trace written
        from it says which system it came from and ``rollcheck replay`` rebuilds that one."""
        ts = self.build(config)
        ts.variant_id = self.id  # type: ignore[attr-defined]
        return ts


@dataclass(frozen=True)
class ProtocolEntry:
    """What the registry knows of one protocol: how to build it and its named configs."""

    name: str
    summary: str
    config_type: type
    configs: Mapping[str, Any]  # at least "small", "default", "large"
    build: Callable[[Any], TransitionSystem[Any]] = field(repr=False)
    variants: Sequence[Variant] = ()
    sources: tuple[str, ...] = ()
    # Optional checkers' content, named "module:attribute" so that registering a protocol imports neither
    # TLA+ tooling nor Z3: the spec binding (a rollcheck.tla.binding.SpecBinding) and the Z3 encoding (a
    # callable from the transition system to a rollcheck.smt.core.SymbolicSystem).
    spec: str | None = None
    z3: str | None = None
    # The protocol's property set (a rollcheck.core.declare.PropertySet) and its decision rules (a
    # rollcheck.smt.decisions.DecisionRules), named the same way: the reference binds neither itself, so nothing
    # in it reads the properties or the Z3 model that check it (registered_properties binds the set).
    properties: str | None = None
    decisions: str | None = None
    # The protocol's Kafka oracle binding (a rollcheck.oracle.binding.OracleBinding), named the same way: the
    # Java adapters that put the reference's decisions to Apache Kafka's released classes (`rollcheck kafka`).
    oracle: str | None = None
    # Its runbooks on a real local cluster (a rollcheck.cluster.runbook.ClusterBinding), named the same way: how the
    # steps are done on Kafka's own processes and what is read back (`rollcheck runbook FILE --cluster`).
    cluster: str | None = None
    gate_config: str = "default"  # the config the gate checks unless its config file says otherwise
    # More configs the gate checks by default, each telling a story the gate config does not (a fault, a
    # misconfiguration, another upgrade path), so that a bug only they reach still fails the gate.
    story_configs: tuple[str, ...] = ()
    # Configs the two-way conformance (TLC) also compares with the reference, in every tier: where the spec's
    # view has a field that no ``small`` / gate state sets (an ``upgrade.from``, a failure's kind), a change to
    # it in the reference is otherwise compared nowhere. Conformance checks no property, so such a config may
    # tell a finding by design (the other checkers do not run on it).
    conform_configs: tuple[str, ...] = ()
    # Every action name the reference can emit (for action coverage); empty: the spec binding's list.
    actions: tuple[str, ...] = ()
    # Runbooks (rollcheck.runbook): the actions only an operator takes (a runbook's steps; every other
    # action the cluster takes by itself), and the named state conditions runbooks may wait for or reach,
    # as "module:attribute" (a Mapping[str, rollcheck.runbook.RunbookCondition]).
    operator_actions: tuple[str, ...] = ()
    runbook_conditions: str | None = None
    order: int = 1000  # position in listings and reports (the built-ins: the KIPs' story, 10-40)
    # The semantics profiles its configs accept, in report order: what every command offers for it, what the
    # gate runs it under. Default: the KIP as written and Apache Kafka's code (PROFILES).
    profiles: tuple[str, ...] = PROFILES

    def __post_init__(self) -> None:
        if (not isinstance(self.profiles, tuple) or not self.profiles
                or not all(isinstance(p, str) and p for p in self.profiles)
                or len(set(self.profiles)) != len(self.profiles)):
            raise ValueError(f"{self.name}: profiles must be a non-empty tuple of distinct names, "
                             f"not {self.profiles!r}")

    def config(self, name: str) -> Any:
        return self.configs[name]

    def profile_problem(self, profile: object) -> str | None:
        """None if ``profile`` is one of this protocol's profiles, else the one-line reason it is not."""
        if isinstance(profile, str) and profile in self.profiles:
            return None
        return f"protocol {self.name} has no profile {profile!r}; its profiles: {', '.join(self.profiles)}"

    def config_profiles(self, config: Any) -> tuple[str, ...]:
        """The profiles ``config`` runs under: each of the protocol's profiles whose copy of the config validates
        (a story only Apache Kafka can tell, e.g. streams' release 3.9, runs under ``kafka`` alone)."""
        out: list[str] = []
        for profile in self.profiles:
            copy = replace_config(config, profile=profile)
            validate = getattr(copy, "validate", None)
            try:
                if validate is not None:
                    validate()
            except (ValueError, UserError):
                continue
            out.append(profile)
        return tuple(out)

    def spec_binding(self) -> Any:
        """The protocol's spec binding (None: no spec), with the spec's folder defaulting to its module's."""
        if self.spec is None:
            return None
        binding, module = load_reference(self.spec, f"{self.name}: spec")
        if getattr(binding, "directory", None) is None:
            binding = dataclasses.replace(binding, directory=Path(module.__file__ or ".").resolve().parent)
        return binding

    def action_names(self) -> tuple[str, ...]:
        """The protocol's declared actions: its own list, else its spec binding's (empty if neither)."""
        if self.actions:
            return self.actions
        binding = self.spec_binding()
        return tuple(binding.actions) if binding is not None else ()

    def z3_encoding(self) -> Callable[[TransitionSystem[Any]], Any] | None:
        """The callable building the protocol's symbolic (Z3) system from a transition system, or None."""
        if self.z3 is None:
            return None
        encoding, _ = load_reference(self.z3, f"{self.name}: z3")
        return encoding  # type: ignore[no-any-return]

    def property_set(self) -> Any:
        """The protocol's property set (``properties``: a PropertySet), or None when the entry names none."""
        if self.properties is None:
            return None
        props, _ = load_reference(self.properties, f"{self.name}: properties")
        return props

    def decision_rules(self) -> Any:
        """The protocol's decision rules (``decisions``: a rollcheck.smt.decisions.DecisionRules), or None."""
        if self.decisions is None:
            return None
        rules, _ = load_reference(self.decisions, f"{self.name}: decisions")
        return rules

    def oracle_binding(self) -> Any:
        """The protocol's Kafka oracle binding (``oracle``: an OracleBinding), or None when the entry names none."""
        if self.oracle is None:
            return None
        binding, _ = load_reference(self.oracle, f"{self.name}: oracle")
        return binding

    def cluster_binding(self) -> Any:
        """The protocol's cluster binding (``cluster``: a ClusterBinding), or None when the entry names none."""
        if self.cluster is None:
            return None
        binding, _ = load_reference(self.cluster, f"{self.name}: cluster")
        return binding

    def variant(self, variant_id: str) -> Variant:
        for v in self.variants:
            if v.id == variant_id:
                return v
        raise KeyError(variant_id)


def properties_by_kind(ts: TransitionSystem[Any]) -> tuple[
    list[Invariant[Any]], list[StepProperty[Any]], list[GraphProperty[Any]]
]:
    inv: list[Invariant[Any]] = []
    step: list[StepProperty[Any]] = []
    graph: list[GraphProperty[Any]] = []
    for p in ts.properties():
        if isinstance(p, Invariant):
            inv.append(p)
        elif isinstance(p, StepProperty):
            step.append(p)
        elif isinstance(p, GraphProperty):
            graph.append(p)
        elif isinstance(p, Witness):
            continue  # not a safety or liveness property: see witnesses_of
        else:  # pragma: no cover - a protocol returned something else
            raise TypeError(f"{ts.name}: not a property: {p!r}")
    return inv, step, graph


def witnesses_of(ts: TransitionSystem[Any]) -> list[Witness[Any]]:
    """The system's witnesses ("sometimes" properties), in declaration order."""
    return [p for p in ts.properties() if isinstance(p, Witness)]


def declared_property_ids(entry: ProtocolEntry) -> list[str]:
    """Every property id the protocol declares on any of its named configs under any of its profiles, in first
    appearance order: a property or witness whose ``when`` leaves a config out still has its spec operator.
    A config that a profile does not accept (the system refuses it) is skipped."""
    ids: dict[str, None] = {}
    for config in entry.configs.values():
        for profile in entry.profiles:
            try:
                ts = entry.build(dataclasses.replace(config, profile=profile))
            except ValueError:
                continue
            ids.update(dict.fromkeys(p.id for p in ts.properties()))
    return list(ids)


def replace_config(config: Any, **changes: Any) -> Any:
    """``dataclasses.replace`` for configs, kept here so callers need not import dataclasses."""
    return dataclasses.replace(config, **changes)


def iter_properties(ts: TransitionSystem[Any]) -> Iterator[AnyProperty]:
    yield from ts.properties()


def load_reference(ref: str, where: str) -> tuple[Any, ModuleType]:
    """The object named by ``"package.module:attribute"`` and its module."""
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise ValueError(f"{where}: {ref!r} is not 'module:attribute'")
    module = importlib.import_module(module_name)
    try:
        return getattr(module, attr), module
    except AttributeError:
        raise ValueError(f"{where}: module {module_name} has no attribute {attr!r}") from None


def action_coverage(entry: ProtocolEntry, counts: Mapping[str, int], complete: bool = True) -> dict[str, Any]:
    """Transitions per action name, and the declared actions no transition took (dead rules in this
    config, as TLC's coverage shows them). Only a complete exploration can say an action is never
    enabled: for a bounded or stopped one ``never_taken`` is None."""
    declared = entry.action_names()
    unseen = [a for a in declared if not counts.get(a)]
    return {"transitions": dict(sorted(counts.items())),
            "never_taken": unseen if complete else None,
            "not_seen": unseen,  # by this run: for an incomplete one, not yet taken rather than dead
            "declared": list(declared)}


def config_mutation(system: Callable[[Any], TransitionSystem[Any]], name: str,
                    **changes: Any) -> Callable[[Any], TransitionSystem[Any]]:
    """A broken variant's ``build``: ``system`` on the config with mutation ``name`` added to its
    ``mutations`` set (and the fields in ``changes`` replaced), so that the reference, its spec and its Z3
    encoding, which all read ``config.mutations``, break the same way."""
    def build(config: Any) -> TransitionSystem[Any]:
        return system(dataclasses.replace(config, mutations=config.mutations | {name}, **changes))

    return build
