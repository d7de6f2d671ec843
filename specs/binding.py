"""How a protocol's reference implementation maps onto its TLA+ spec, and the model TLC checks.

A :class:`SpecBinding` names the spec module and turns the protocol's config (the one config that drives
every checker) into the spec's constants. :func:`write_model` writes a model directory: the spec, an
``MC.tla`` that defines each constant's value, and ``MC.cfg`` with the invariants (state properties) and
properties (action properties, ``[][A]_vars``) named after the reference's property ids (``STR-01`` is
the operator ``STR_01``). Graph properties (AG EF) are outside TLC's LTL: they are left to the explorer.
A new protocol needs only its spec and a binding here.
"""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcheck.errors import UserError
from rollcheck.transition import TransitionSystem
from specs.tlavalue import to_tla

SPEC_DIR = Path(__file__).resolve().parent


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

    @property
    def path(self) -> Path:
        return SPEC_DIR / f"{self.module}.tla"


# protocol -> module holding its BINDING; a new protocol adds one line.
_BINDINGS = {
    "features": "specs.features",
    "streams_probing": "specs.streams_probing",
    "metadata_version": "specs.metadata_version",
    "zk_migration": "specs.zk_migration",
}


def spec_protocols() -> list[str]:
    return sorted(_BINDINGS)


def binding_for(protocol: str) -> SpecBinding:
    if protocol not in _BINDINGS:
        known = ", ".join(spec_protocols()) or "none"
        raise UserError(f"protocol '{protocol}' has no TLA+ spec yet (specs exist for: {known})")
    binding: SpecBinding = importlib.import_module(_BINDINGS[protocol]).BINDING
    return binding


@dataclass(frozen=True)
class Model:
    directory: Path
    module: str  # "MC"
    cfg: str  # "MC.cfg"
    invariants: tuple[str, ...]  # property ids checked as INVARIANT
    properties: tuple[str, ...]  # property ids checked as PROPERTY
    unchecked: tuple[str, ...]  # graph properties (explorer only)


def write_model(binding: SpecBinding, ts: TransitionSystem[Any], directory: Path,
                only: Mapping[str, bool] | None = None, extra_definitions: str = "",
                init: str = "Init", next_: str = "Next", check_properties: bool = True) -> Model:
    """Write the model checking ``ts`` (its config, its variant's mutations) into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(binding.path, directory / binding.path.name)
    consts = dict(binding.constants(ts.config))
    lines = ["---- MODULE MC ----", f"EXTENDS {binding.module}, TLC", ""]
    for name, value in consts.items():
        lines.append(f"const_{name} == {to_tla(value)}")
    lines += ["", extra_definitions, "===="]
    (directory / "MC.tla").write_text("\n".join(lines) + "\n", encoding="utf-8")
    invariants: list[str] = []
    properties: list[str] = []
    unchecked: list[str] = []
    for p in ts.invariants():
        if only is not None and p.id not in only:
            continue
        {"invariant": invariants, "step": properties}.get(p.kind, unchecked).append(p.id)
    cfg = ["CONSTANTS"] + [f"    {name} <- const_{name}" for name in consts]
    cfg += [f"INIT {init}", f"NEXT {next_}"]
    if check_properties:
        cfg += [f"INVARIANT {operator_name(i)}" for i in invariants]
        cfg += [f"PROPERTY {operator_name(i)}" for i in properties]
    (directory / "MC.cfg").write_text("\n".join(cfg) + "\n", encoding="utf-8")
    return Model(directory, "MC", "MC.cfg", tuple(invariants), tuple(properties), tuple(unchecked))
