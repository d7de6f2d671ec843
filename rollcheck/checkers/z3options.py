"""The Z3 checker's gate config keys and cell settings, read by :mod:`rollcheck.checkers.z3` (which plans) and
:mod:`rollcheck.smt.checker` (which runs)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollcheck.checkers.base import CheckerOptions, Key

# The gate configs (3,461-221,704 states) are compared on their first states in the ci tier, which compares
# every reachable state of the ci configs in cells of their own, and whole in the nightly tier
# (z3_differential_states = 0 there).
DIFFERENTIAL_STATES = 50
# ... except a config this small, compared whole (finding that out explores this many states).
DIFFERENTIAL_ALL_BELOW = 1_000
# A broken variant's cell compares its relation with the variant's reference where the two step otherwise than
# the reference (the reference's own cells compare the rest): at most this many states (0: all of them).
VARIANT_STATES = 0
CI_VARIANT_STATES = 2_000

# The cell setting that also runs the decision differential (SymbolicSystem.decision_differential).
DECISIONS = "decisions"


@dataclass(frozen=True)
class Z3Options(CheckerOptions):
    KEYS = (Key("z3_depth", "gate", least=1), Key("z3_differential_states"), Key("z3_differential_all_below"),
            Key("z3_variant_states"))
    z3_depth: int = 8
    z3_differential_states: int = DIFFERENTIAL_STATES
    z3_differential_all_below: int = DIFFERENTIAL_ALL_BELOW
    z3_variant_states: int = VARIANT_STATES
    # BMC to 5 steps: metadata_version's default config takes minutes per profile at 8 (every encoded property
    # is proved by k-induction anyway). The ci tier: under each broken variant, the first 2,000 states
    # (breadth-first) where it steps otherwise than the reference: where its failure paths start; all of them
    # (up to 47,792 a variant) cost the gate 406 checker-seconds more, the nightly tier's business, which also
    # compares the gate configs whole.
    TIER_DEFAULTS = {"ci": {"z3_depth": 5, "z3_variant_states": CI_VARIANT_STATES},
                     "nightly": {"z3_depth": 5, "z3_differential_states": 0}}


def decisions(settings: Mapping[str, Any]) -> bool:
    return bool(settings.get(DECISIONS, True))
