"""How a protocol's reference implementation maps onto its TLA+ spec, and the model TLC checks.

A :class:`SpecBinding` names the spec module and turns the protocol's config (the one config that drives
every checker) into the spec's constants. :func:`write_model` writes a model directory: the spec, an
``MC.tla`` that defines each constant's value, and ``MC.cfg`` with the invariants (state properties) and
properties (action properties, ``[][A]_vars``) named after the reference's property ids (``STR-01`` is
the operator ``STR_01``). Graph properties (AG EF) are outside TLC's LTL: they are left to the explorer.
A protocol with a spec names its binding in its ``ProtocolEntry`` (``spec="specs.features:BINDING"``);
the spec file sits beside the binding's module unless the binding says otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcheck.core.errors import UserError
from rollcheck.core.registry import all_protocols, get_protocol
from rollcheck.core.transition import TransitionSystem
from rollcheck.runtime.safefs import make_dirs, write_bytes, write_text
from rollcheck.tla.value import to_tla


def operator_name(property_id: str) -> str:
    """The TLA+ operator of a property id (``STR-01`` -> ``STR_01``)."""
    return property_id.replace("-", "_")


@dataclass(frozen=True)
class SpecBinding:
    protocol: str
    module: str  # the spec's module name (file specs/<module>.tla)
    constants: Callable[[Any], Mapping[str, Any]]  # protocol config -> constant values
    actions: tuple[str, ...]  # the reference's action names, each an operator of the spec
    # Property ids the reference defines outside its default list (the KIP's claims that Kafka does not
    # make, checked as findings): the spec has an operator for each too.
    claims: tuple[str, ...] = ()
    # The spec's operator of one record of its constants that says whether the spec is written for them
    # (``rollcheck.tla.domain``: conform compares it with the configs the reference accepts); None: no check.
    domain: str | None = None
    # Values to probe a config field with beyond the generic ones (``rollcheck.tla.domain``), given the base
    # config: the names a text field takes (releases, procedures), which an unknown word alone never reaches.
    domain_values: Callable[[Any], Mapping[str, Sequence[Any]]] | None = None
    # The folder of the spec file (``<module>.tla``): by default the folder of the module defining the
    # binding, set by the registry when it loads the binding.
    directory: Path | None = None

    @property
    def path(self) -> Path:
        if self.directory is None:
            raise UserError(f"the spec binding of '{self.protocol}' does not say where {self.module}.tla is")
        return self.directory / f"{self.module}.tla"


def spec_protocols() -> list[str]:
    """The registered protocols that have a TLA+ spec."""
    return [e.name for e in all_protocols() if e.spec is not None]


def binding_for(protocol: str) -> SpecBinding:
    binding: SpecBinding | None = get_protocol(protocol).spec_binding()
    if binding is None:
        known = ", ".join(spec_protocols()) or "none"
        raise UserError(f"protocol '{protocol}' has no TLA+ spec yet (specs exist for: {known})")
    return binding


@dataclass(frozen=True)
class Model:
    directory: Path
    module: str  # "MC"
    cfg: str  # "MC.cfg"
    invariants: tuple[str, ...]  # property ids checked as INVARIANT
    properties: tuple[str, ...]  # property ids checked as PROPERTY
    unchecked: tuple[str, ...]  # graph properties (explorer only)
    witnesses: tuple[str, ...] = ()  # witness ids (checked by their own TLC runs: rollcheck.tla.witness)


def write_model(binding: SpecBinding, ts: TransitionSystem[Any], directory: Path,
                only: Mapping[str, bool] | None = None, extra_definitions: str = "",
                init: str = "Init", next_: str = "Next", check_properties: bool = True,
                extra_invariants: tuple[str, ...] = (), root: Path | None = None) -> Model:
    """Write the model checking ``ts`` (its config, its variant's mutations) into ``directory``.

    ``directory`` and, with ``root`` (the user's ``--out``), every directory between the two are real
    ones, and each file is created without following a link (:mod:`rollcheck.runtime.safefs`): a link planted
    there is refused, naming it."""
    make_dirs(directory, root)
    write_bytes(directory / binding.path.name, binding.path.read_bytes())
    consts = dict(binding.constants(ts.config))
    lines = ["---- MODULE MC ----", f"EXTENDS {binding.module}, TLC", ""]
    for name, value in consts.items():
        lines.append(f"const_{name} == {to_tla(value)}")
    lines += ["", extra_definitions, "===="]
    write_text(directory / "MC.tla", "\n".join(lines) + "\n")
    invariants: list[str] = []
    properties: list[str] = []
    unchecked: list[str] = []
    witnesses: list[str] = []
    for p in ts.properties():
        if only is not None and p.id not in only:
            continue
        {"invariant": invariants, "step": properties, "witness": witnesses}.get(p.kind, unchecked).append(p.id)
    cfg = ["CONSTANTS"] + [f"    {name} <- const_{name}" for name in consts]
    cfg += [f"INIT {init}", f"NEXT {next_}"]
    if check_properties:
        cfg += [f"INVARIANT {operator_name(i)}" for i in invariants]
        cfg += [f"PROPERTY {operator_name(i)}" for i in properties]
    cfg += [f"INVARIANT {name}" for name in extra_invariants]
    write_text(directory / "MC.cfg", "\n".join(cfg) + "\n")
    return Model(directory, "MC", "MC.cfg", tuple(invariants), tuple(properties), tuple(unchecked),
                 tuple(witnesses))
