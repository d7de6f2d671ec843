"""The checks a mutant meets, as ``rollcheck`` command lines: the gate's cells, so a kill there is the gate's.

The explorer on ``small``, the protocol's gate config and its story configs (each under the profiles it is valid
for); the decision rules alone; Z3's differential on ``small`` and each story config; the gate's broken variant
cells; TLC conformance on ``small`` and each conformance config.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rollcheck.core.registry import get_protocol

# The z3 rows of the decision rules' first step (``run_decisions``): a cell name no config has.
DECISIONS = "decisions"


@dataclass(frozen=True)
class Cell:
    config: str
    profile: str


def explore_argv(protocol: str, cell: Cell, out: Path, max_memory: float, collect_all: bool = False) -> list[str]:
    """``rollcheck explore`` on one cell: one process (``--jobs`` runs several mutants), and a bound on what a
    mutant that blows the state space up may take (the explorer then stops, incomplete, instead of swapping).
    It stops at the first violation (``collect_all``: every property's, as ``--all-cells``
    asks): a mutant that makes the state space unbounded is then killed by the first property it breaks, where
    ``--collect-all`` kept expanding the broken states until the time limit. The baselines violate nothing."""
    return ["explore", protocol, "--config", cell.config, "--profile", cell.profile, "--json", "--quiet",
            *(["--collect-all"] if collect_all else []), "--out", str(out), "--workers", "1",
            "--max-memory", str(max_memory)]


def z3_argv(protocol: str, profile: str, out: Path, config: str = "small") -> list[str]:
    """The ci tier's z3 cell on ``config`` (small, a story config): the successor differential and the decision
    rules, nothing proved."""
    return ["prove", protocol, "--config", config, "--profile", profile, "--differential-only", "--differential",
            "0", "--json", "--quiet", "--out", str(out)]


def decisions_argv(protocol: str, profile: str, out: Path) -> list[str]:
    """The decision rules' differential alone (the part of the ci tier's z3 cell that walks no state: each rule's
    Z3 formula against the reference on its bounded input domain, ``profile``'s cases): seconds."""
    return ["prove", protocol, "--config", "small", "--profile", profile, "--decisions-only", "--json", "--quiet",
            "--out", str(out)]


def conform_argv(protocol: str, profile: str, out: Path, config: str = "small", domain_only: bool = False
                 ) -> list[str]:
    """The gate's TLC conformance on ``config`` (small, a conformance config); ``domain_only``: its config
    domain check alone (seconds)."""
    return ["conform", protocol, "--config", config, "--profile", profile, "--json", "--quiet", "--out", str(out),
            *(["--domain-only"] if domain_only else [])]


def variants_argv(protocol: str, out: Path, z3: bool = True) -> list[str]:
    """The gate's variant cells alone (``rollcheck gate`` on a config with no reference cell, written under
    ``out``): every broken variant of the protocol on its own config by the explorer (each must still be
    caught) and, with ``z3``, the Z3 relation against the reference on every state where a variant steps
    otherwise than the reference (``z3_variant_states = 0``: all of them; the ci tier bounds them)."""
    out.mkdir(parents=True, exist_ok=True)
    config = out / "variants.toml"
    config.write_text(
        "[gate]\n"
        f"protocols = [{json.dumps(protocol)}]\n"
        f"checkers = {json.dumps(['z3'] if z3 else [])}\n"
        f"configs = {{ {protocol} = [] }}\nci_configs = {{ {protocol} = [] }}\nstory_configs = {{ {protocol} = [] }}\n"
        "mutants = true\nmutant_checkers = [\"explore\"]\nparallel = 1\n"
        "options = { z3_variant_states = 0 }\n", encoding="utf-8")
    return ["gate", "--gate-config", str(config), "--out", str(out / "gate"), "--json", "--quiet"]


def profiles_of(protocol: str) -> tuple[str, ...]:
    """Every semantics profile of the protocol (kip, kafka and any it adds, e.g. streams' kafka-2.0), as the
    gate runs them."""
    return get_protocol(protocol).profiles


def cells_of(protocol: str) -> list[Cell]:
    """small, then the gate's config, then the story configs the gate's ci tier explores (stories the gate
    config does not tell: crashes, deprecation, two-bounce upgrades ...); each profile in turn: the cheapest
    runs first, since a kill stops a mutant."""
    entry = get_protocol(protocol)
    configs = list(dict.fromkeys(["small", entry.gate_config, *entry.story_configs]))
    # As the gate: a story config under the profiles it is valid for (streams' 3.9 story: kafka alone).
    return [Cell(c, p) for c in configs for p in profiles_of(protocol)
            if c not in entry.story_configs or p in entry.config_profiles(entry.configs[c])]


def z3_cells_of(protocol: str) -> list[Cell]:
    """Where the ci tier's z3 cells compare the Z3 relation with the reference on every reachable state: small
    under each profile, then each story config under the profiles it is valid for."""
    stories = get_protocol(protocol).story_configs
    return [Cell("small", p) for p in profiles_of(protocol)] + [c for c in cells_of(protocol) if c.config in stories]


def conform_cells_of(protocol: str) -> list[Cell]:
    """Where the gate's conformance cells compare the reference's reachable views with TLC's: small under each
    profile, then each conformance config (ProtocolEntry.conform_configs) under the profiles it is valid for."""
    entry = get_protocol(protocol)
    return [Cell(c, p) for c in ["small", *entry.conform_configs] for p in profiles_of(protocol)
            if c == "small" or p in entry.config_profiles(entry.configs[c])]
