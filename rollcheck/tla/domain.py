"""(d) The config domain: the configs the reference accepts are exactly those its spec is written for.

A spec states the constants it is written for as an operator of one record of them (``SpecBinding.domain``,
e.g. ``ConfigOk(c)``) and assumes it of its own constants. A config's validation is a rule like any other:
a bound off by one lets the reference run on a cluster nobody checked it for, or refuses one the docs
promise. The spec's predicate is a second copy of those bounds, written from the docs, so the two are
compared on probes around a base config: every integer field one below and one above its value and over
-1..5 (where most bounds lie), an unknown word in each text field and in each set of words, and the values
the binding names for a field (``SpecBinding.domain_values``: releases, procedures, upgrade.from values),
around the checked config and around each of the protocol's named configs (a rule that only matters in
an operator's story is probed beside that story). The reference
accepts a probe when its system builds and has initial states (``rollcheck`` refuses it with exit 2
otherwise); the spec's answers for every probe come from one TLC run, which prints them from an ASSUME.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcheck.core.errors import UserError
from rollcheck.core.traces import Record
from rollcheck.core.transition import TransitionSystem
from rollcheck.tla.binding import SpecBinding, write_model
from rollcheck.tla.tlc import run_tlc
from rollcheck.tla.value import parse_value, to_tla

TAG = "rollcheck-domain"
UNKNOWN_WORD = "?"  # no field that takes a word or a set of words accepts this one


@dataclass(frozen=True)
class DomainProbe:
    field: str
    value: Any
    config: Any


def domain_probes(base: Any, values: Mapping[str, Sequence[Any]] | None = None) -> list[DomainProbe]:
    """The configs around ``base`` that differ from it in one field (``values``: more values per field)."""
    out: list[DomainProbe] = []
    for f in dataclasses.fields(base):
        value = getattr(base, f.name)
        candidates: list[Any]
        if isinstance(value, bool):
            candidates = []  # every switch is valid both ways
        elif isinstance(value, int):
            candidates = sorted({value - 1, value + 1, *range(-1, 6)} - {value})
        elif isinstance(value, str):
            candidates = [UNKNOWN_WORD]
        elif isinstance(value, frozenset) and all(isinstance(v, str) for v in value):
            candidates = [value | {UNKNOWN_WORD}]
        else:
            candidates = []
        candidates += [v for v in (values or {}).get(f.name, ()) if v != value and v not in candidates]
        out += [DomainProbe(f.name, c, dataclasses.replace(base, **{f.name: c})) for c in candidates]
    return out


def reference_accepts(build: Callable[[Any], TransitionSystem[Any]], config: Any) -> tuple[bool, str]:
    """Whether the reference runs on ``config``, and its refusal when it does not."""
    try:
        ts = build(config)
        if not list(ts.initial_states()):
            return False, "no initial state"
    except (ValueError, UserError) as exc:  # rollcheck refuses both with exit 2
        return False, str(exc)
    return True, ""


@dataclass
class DomainResult:
    probes: int = 0
    untranslated: int = 0  # refused by the reference and by the binding's constants() alike
    mismatches: list[tuple[DomainProbe, bool, bool, str]] = dataclasses.field(default_factory=list)
    error: str = ""


def probes_around(binding: SpecBinding, bases: Sequence[Any]) -> list[DomainProbe]:
    """The probes around each base, each config once (the first probe that reaches it names it)."""
    seen: set[Any] = set(bases)
    out: list[DomainProbe] = []
    for base in dict.fromkeys(bases):  # a base named twice (the checked config is a named one) is probed once
        values = binding.domain_values(base) if binding.domain_values is not None else None
        for probe in domain_probes(base, values):
            if probe.config not in seen:
                seen.add(probe.config)
                out.append(probe)
    return out


def compare_domain(binding: SpecBinding, spec_ts: TransitionSystem[Any],
                   build: Callable[[Any], TransitionSystem[Any]], directory: Path, timeout: float,
                   bases: Sequence[Any] = ()) -> DomainResult:
    """Ask the spec's domain operator and the reference about every probe around ``spec_ts``'s config and
    around each of ``bases`` (the protocol's named configs)."""
    assert binding.domain is not None
    result = DomainResult()
    asked: list[tuple[DomainProbe, bool, str]] = []
    records: list[str] = []
    for probe in probes_around(binding, [spec_ts.config, *bases]):
        accepted, why = reference_accepts(build, probe.config)
        try:
            consts: Mapping[str, Any] = binding.constants(probe.config)
            record = to_tla(Record(consts))
        except (ValueError, TypeError, KeyError, UserError) as exc:
            if accepted:  # the reference runs on it, so the spec must be able to say whether it is written for it
                result.mismatches.append((probe, True, False, f"the binding cannot translate it: {exc}"))
            else:
                result.untranslated += 1
            continue
        asked.append((probe, accepted, why))
        records.append(record)
    result.probes = len(asked) + result.untranslated + len(result.mismatches)
    if not asked:
        return result
    # One record a line: SANY reads one long line in time that grows much faster than its length (a 200-probe
    # line took TLC about three times as long as the same probes a line each).
    answers = ",\n    ".join(f"{binding.domain}({r})" for r in records)
    # TLC evaluates the ASSUMEs first; the spec's Init then costs little, and no step is taken (TLC
    # refuses a constant Init or Next, hence ``Next /\ FALSE``).
    extra = (f'ASSUME PrintT(<<"{TAG}", <<{answers}>>>>)\n'
             "DomainNext == Next /\\ FALSE\n")
    model = write_model(binding, spec_ts, directory, extra_definitions=extra, next_="DomainNext",
                        check_properties=False)
    res = run_tlc(model.directory, model.module, model.cfg, timeout=timeout, workers=1)
    output = (model.directory / "tlc-output.txt").read_text(encoding="utf-8") \
        if (model.directory / "tlc-output.txt").exists() else ""
    printed = _printed_value(output)
    if printed is None:
        result.error = res.error or "TLC printed no answer for the config domain"
        return result
    spec_answers = printed["#tup"][1]["#tup"]  # ITF JSON: <<tag, <<answers>>>>
    for (probe, accepted, why), in_domain in zip(asked, spec_answers, strict=True):
        if bool(in_domain) != accepted:
            result.mismatches.append((probe, accepted, bool(in_domain), why))
    return result


def _printed_value(output: str) -> Any:
    """The tagged tuple PrintT wrote (TLC breaks a long value over lines), or None."""
    lines = output.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.replace(" ", "").startswith(f'<<"{TAG}"')), None)
    if start is None:
        return None
    for end in range(start + 1, len(lines) + 1):
        try:
            return parse_value(" ".join(lines[start:end]))
        except ValueError:
            continue
    return None
