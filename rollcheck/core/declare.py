"""Properties declared as module-level functions, each carrying its id, statement and source.

A protocol's property module reads like the KIP it checks::

    @invariant("FEAT-02", "every finalized feature has 1 <= min_version_level <= max_version_level",
               source="KIP-584 Persistence of finalized feature version levels, Schema")
    def ranges_valid(ctx: FeaturesContext, s: FeaturesState) -> bool:
        ...

    @witness("FEAT-W1", "a feature was downgraded", source="KIP-584 Downgrade", when=lambda ctx: ctx.levels)
    def downgraded(ctx: FeaturesContext, s: FeaturesState) -> bool:
        ...

    PROPERTIES = PropertySet.of(globals(), context=FeaturesContext.of)

and its protocol's entry names it (``properties="properties.features:PROPERTIES"``); the system's
``properties()`` returns ``registered_properties(self)``, the set bound to it. A predicate takes the state (an
invariant or witness), the transition ``(s, a, t)`` (a step property) or the action (a graph property's
``allowed``), optionally preceded by a context: what the property set's ``context`` builds once from the
system (the profile, the config's tables), so that one function serves every config. ``when`` (a predicate
over the context) says on which configs a property applies, typically a witness whose story needs faults
that a small config never switches on.

Mistakes fail where they are made, as Hypothesis's ``@rule`` does: a malformed id, an empty statement or
source, a predicate with the wrong number of parameters, at definition; two properties with one id, at
:meth:`PropertySet.of`. The decorated function stays callable as written (unit tests call it directly).
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rollcheck.core.transition import (
    AnyProperty,
    GraphProperty,
    Invariant,
    PropertyKind,
    StepProperty,
    Witness,
)

# FEAT-01, MV-L1, STR-W2, MIG-10a: a protocol prefix, a dash, then letters, digits and dashes.
PROPERTY_ID = re.compile(r"[A-Z][A-Z0-9]*-[A-Za-z0-9][A-Za-z0-9-]*")


class PropertyDefinitionError(TypeError):
    """A property declared wrongly (raised when the module defining it is imported)."""


def _positional(fn: Callable[..., Any]) -> int:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # pragma: no cover - builtins: assume the plain shape
        return -1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in sig.parameters.values() if p.kind in kinds and p.default is inspect.Parameter.empty)


def _takes_context(prop_id: str, what: str, fn: Callable[..., Any], plain: int, shape: str) -> bool:
    """True if ``fn`` takes the context first (``plain`` + 1 parameters), False if ``plain``."""
    if not callable(fn):
        raise PropertyDefinitionError(f"{prop_id}: {what} must be a function, not {type(fn).__name__}")
    n = _positional(fn)
    if n == plain:
        return False
    if n == plain + 1:
        return True
    if n == -1:
        return False
    name = getattr(fn, "__name__", repr(fn))
    raise PropertyDefinitionError(
        f"{prop_id}: {what} {name} takes {n} parameter(s); it must take ({shape}) or (context, {shape})")


@dataclass(frozen=True)
class DeclaredProperty:
    """A declared property, not yet bound to a context: what the decorators return."""

    kind: PropertyKind
    id: str
    statement: str
    source: str
    fn: Callable[..., bool] = field(repr=False)
    contextual: bool = field(repr=False)
    start: Callable[..., bool] | None = field(default=None, repr=False)
    allowed: Callable[..., bool] | None = field(default=None, repr=False)
    when: Callable[[Any], bool] | None = field(default=None, repr=False)
    start_contextual: bool = field(default=False, repr=False)
    allowed_contextual: bool = field(default=False, repr=False)

    def __call__(self, *args: Any) -> bool:
        return self.fn(*args)

    @property
    def __name__(self) -> str:  # so tracebacks and listings name the function
        return getattr(self.fn, "__name__", self.id)

    def applies(self, ctx: Any) -> bool:
        return self.when is None or bool(self.when(ctx))

    def bind(self, ctx: Any) -> AnyProperty:
        """The property for one context (a system's): predicates with the context already applied."""

        def bound(fn: Callable[..., bool] | None, contextual: bool) -> Any:
            if fn is None or not contextual:
                return fn
            return functools.partial(fn, ctx)

        pred = bound(self.fn, self.contextual)
        if self.kind is PropertyKind.INVARIANT:
            return Invariant(self.id, self.statement, self.source, pred)
        if self.kind is PropertyKind.STEP:
            return StepProperty(self.id, self.statement, self.source, pred)
        if self.kind is PropertyKind.WITNESS:
            return Witness(self.id, self.statement, self.source, pred)
        return GraphProperty(self.id, self.statement, self.source, goal=pred,
                             start=bound(self.start, self.start_contextual),
                             allowed=bound(self.allowed, self.allowed_contextual))


def _check_text(prop_id: str, statement: str, source: str) -> None:
    if not isinstance(prop_id, str) or not PROPERTY_ID.fullmatch(prop_id):
        raise PropertyDefinitionError(
            f"property id {prop_id!r} is not of the form PREFIX-NAME (letters, digits, dashes; e.g. FEAT-01)")
    if not isinstance(statement, str) or not statement.strip():
        raise PropertyDefinitionError(f"{prop_id}: the statement is empty (say in one line what must hold)")
    if not isinstance(source, str) or not source.strip():
        raise PropertyDefinitionError(f"{prop_id}: the source is empty (cite the KIP section or Kafka class)")


def _declare(kind: PropertyKind, prop_id: str, statement: str, source: str, plain: int, shape: str,
             when: Callable[[Any], bool] | None, **graph: Any) -> Callable[[Callable[..., bool]], DeclaredProperty]:
    _check_text(prop_id, statement, source)
    if when is not None and not callable(when):
        raise PropertyDefinitionError(f"{prop_id}: when= must be a predicate over the context")

    def decorate(fn: Callable[..., bool]) -> DeclaredProperty:
        if isinstance(fn, DeclaredProperty):
            raise PropertyDefinitionError(f"{prop_id}: {fn.id} is already declared; one function, one property")
        extra: dict[str, Any] = {}
        start, allowed = graph.get("start"), graph.get("allowed")
        if start is not None:
            extra["start"] = start
            extra["start_contextual"] = _takes_context(prop_id, "start=", start, 1, "state")
        if allowed is not None:
            extra["allowed"] = allowed
            extra["allowed_contextual"] = _takes_context(prop_id, "allowed=", allowed, 1, "action")
        return DeclaredProperty(kind, prop_id, statement, source, fn,
                                _takes_context(prop_id, f"the {kind.value} predicate", fn, plain, shape),
                                when=when, **extra)

    return decorate


def invariant(prop_id: str, statement: str, *, source: str, when: Callable[[Any], bool] | None = None
              ) -> Callable[[Callable[..., bool]], DeclaredProperty]:
    """A state invariant, checked on every reachable state: ``fn([ctx,] s) -> bool``."""
    return _declare(PropertyKind.INVARIANT, prop_id, statement, source, 1, "state", when)


def step_property(prop_id: str, statement: str, *, source: str, when: Callable[[Any], bool] | None = None
                  ) -> Callable[[Callable[..., bool]], DeclaredProperty]:
    """A property of one transition, checked on every explored edge: ``fn([ctx,] s, a, t) -> bool``."""
    return _declare(PropertyKind.STEP, prop_id, statement, source, 3, "before, action, after", when)


def graph_property(prop_id: str, statement: str, *, source: str, start: Callable[..., bool] | None = None,
                   allowed: Callable[..., bool] | None = None, when: Callable[[Any], bool] | None = None
                   ) -> Callable[[Callable[..., bool]], DeclaredProperty]:
    """AG (start => E[allowed U goal]) over the explored graph; the decorated function is the goal
    (``fn([ctx,] s)``), ``start`` a state predicate (None: every state), ``allowed`` one over an action
    (None: every action). With neither, AG EF goal: a goal state stays reachable from everywhere."""
    return _declare(PropertyKind.GRAPH, prop_id, statement, source, 1, "state", when, start=start, allowed=allowed)


def witness(prop_id: str, statement: str, *, source: str, when: Callable[[Any], bool] | None = None
            ) -> Callable[[Callable[..., bool]], DeclaredProperty]:
    """A "sometimes" property: some reachable state satisfies ``fn([ctx,] s)``. An exhaustive run that
    never reaches one fails as vacuous (the story the config exists for never happened)."""
    return _declare(PropertyKind.WITNESS, prop_id, statement, source, 1, "state", when)


@dataclass(frozen=True)
class PropertySet:
    """A protocol's declared properties, in declaration order, and how to build their context."""

    declared: tuple[DeclaredProperty, ...]
    context: Callable[..., Any] = field(repr=False)

    @staticmethod
    def of(namespace: Mapping[str, object] | Sequence[DeclaredProperty],
           context: Callable[..., Any] = lambda system: system) -> PropertySet:
        """The properties declared in a module (pass ``globals()``) or listed; ``context(system)`` builds
        what contextual predicates take first (by default the system itself)."""
        items = namespace.values() if isinstance(namespace, Mapping) else namespace
        declared: list[DeclaredProperty] = []
        seen: dict[str, DeclaredProperty] = {}
        for value in items:
            if not isinstance(value, DeclaredProperty) or any(value is d for d in declared):
                continue
            if value.id in seen:
                raise PropertyDefinitionError(
                    f"two properties with the id {value.id}: {seen[value.id].__name__} and {value.__name__}")
            seen[value.id] = value
            declared.append(value)
        if not declared:
            raise PropertyDefinitionError("no property declared (decorate functions with @invariant, ...)")
        return PropertySet(tuple(declared), context)

    def __iter__(self) -> Iterator[DeclaredProperty]:
        return iter(self.declared)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(d.id for d in self.declared)

    def __getitem__(self, prop_id: str) -> DeclaredProperty:
        for d in self.declared:
            if d.id == prop_id:
                return d
        raise KeyError(prop_id)

    def bind(self, system: Any, only: Sequence[str] | None = None, **options: Any) -> list[AnyProperty]:
        """The properties of one system (those whose ``when`` accepts its context), ready for checkers;
        ``only`` keeps those ids (in declaration order); ``options`` go to the context builder (a
        protocol's switches, such as checking the KIP's claims under the kafka profile)."""
        ctx = self.context(system, **options)
        return [d.bind(ctx) for d in self.declared
                if (only is None or d.id in only) and d.applies(ctx)]
