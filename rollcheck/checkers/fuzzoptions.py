"""The fuzzing checker's gate config keys, read by :mod:`rollcheck.checkers.fuzz` and :mod:`rollcheck.fuzzing.fuzz`."""

from __future__ import annotations

from dataclasses import dataclass

from rollcheck.checkers.base import CheckerOptions, Key


@dataclass(frozen=True)
class FuzzOptions(CheckerOptions):
    KEYS = (Key("fuzz_minutes", kind="positive"),)
    fuzz_minutes: float = 1.0
    TIER_DEFAULTS = {"nightly": {"fuzz_minutes": 0.5}}
