"""Arguments and look-ups shared by several sub-commands."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from rollcheck.configs import resolve_config
from rollcheck.errors import UserError
from rollcheck.registry import build_system, check_profile, get_protocol, protocol_names
from rollcheck.transition import ProtocolEntry, TransitionSystem, replace_config

PROFILE_HELP = ("semantics profile, one of the protocol's (`rollcheck list`): kip (the KIP as written), kafka "
                "(Apache Kafka's code) and any the protocol adds")


def add_protocol_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("protocol", help="protocol name (see `rollcheck list`)")
    p.add_argument("--config", default=None, metavar="NAME|FILE",
                   help="named config (small, default, large) or a .toml file (default: default; with --variant, "
                        "the config the variant is caught on)")
    p.add_argument("--profile", default=None, metavar="PROFILE", help=f"{PROFILE_HELP} (default: the config's)")
    p.add_argument("--variant", default=None, metavar="ID",
                   help="explore a deliberately broken variant (mutant) instead of the reference")


def add_output_args(p: argparse.ArgumentParser, default_out: str) -> None:
    p.add_argument("--out", type=Path, default=Path(default_out), metavar="DIR",
                   help=f"output directory (default: {default_out})")
    p.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress display")


def resolve(args: argparse.Namespace) -> tuple[ProtocolEntry, str, Any, TransitionSystem[Any]]:
    """(entry, config label, config, system) from the protocol / config / profile / variant flags."""
    entry = get_protocol(args.protocol)
    if getattr(args, "profile", None) is not None:
        check_profile(entry, args.profile)  # before the config: the first thing wrong is the one reported
    variant = getattr(args, "variant", None)
    spec = args.config
    if spec is None and variant is not None:  # a broken variant on the config it is caught on
        spec = next((v.config for v in entry.variants if v.id == variant), None)
    label, config = resolve_config(entry, spec)
    if getattr(args, "profile", None) is not None:
        config = replace_config(config, profile=args.profile)
    try:
        ts = build_system(entry.name, config, variant)
    except ValueError as exc:  # a config the system refuses (e.g. a release only the kafka profile knows)
        raise UserError(f"{entry.name}/{label} under profile {config.profile}: {exc}") from None
    return entry, label, config, ts


def _whole_number(text: str, least: int) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}: {n}")
    return n


def non_negative_int(text: str) -> int:
    return _whole_number(text, 0)


def positive_int(text: str) -> int:
    return _whole_number(text, 1)


def positive_float(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(x) or x <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0: {text}")
    return x


def require(cond: bool, message: str) -> None:
    if not cond:
        raise UserError(message)


def itf_files(paths: list[Path]) -> list[tuple[Path, bool]]:
    """The ITF traces that ``replay`` and ``export-test`` read: each file named, and each ``*.itf.json`` under a
    directory named; with whether the user named the file itself. A trace names its own protocol, so a
    protocol's name given first gets a hint, not only "not found"."""
    found: list[tuple[Path, bool]] = []
    for p in paths:
        if p.is_dir():
            files = sorted(p.rglob("*.itf.json"))
            require(bool(files), f"{p}: no *.itf.json file under it")
            found.extend((f, False) for f in files)
        elif p.exists():
            found.append((p, True))
        elif str(p) in protocol_names():
            raise UserError(f"trace not found: {p} (give ITF files or directories only: "
                            "each trace names its protocol, config and profile)")
        else:
            raise UserError(f"trace not found: {p}")
    return found
