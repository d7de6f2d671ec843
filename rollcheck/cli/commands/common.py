"""Arguments and look-ups shared by several sub-commands."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from rollcheck.core.configs import resolve_config
from rollcheck.core.errors import UserError
from rollcheck.core.registry import build_system, check_profile, get_protocol, protocol_names
from rollcheck.core.transition import ProtocolEntry, TransitionSystem, replace_config

# One vocabulary: a flag means the same thing, takes the same metavar and is validated and worded alike in
# every command that has it (README.md's command lines and tests/test_cli_transcript.py rely on it).
# --config NAME|FILE  a protocol config: a config name of the protocol (`rollcheck list`) or a .toml file
#                     (export-test: a file only; the gate's own file is --gate-config, --config its old name)
# --profile PROFILE   a semantics profile of the protocol; repeatable where a command runs a matrix
# --seed SEED         a whole number from 0: the same seed gives the same run
# --out DIR           the output directory, checked writable before any work
# --json              the results as one JSON document on stdout, nothing else there
# --quiet             no progress lines on stderr
# --parallel N        things run at once

PROFILE_HELP = ("semantics profile, one of the protocol's (`rollcheck list`): kip (the KIP as written), kafka "
                "(Apache Kafka's code) and any the protocol adds")
CONFIG_HELP = "protocol config: one of the protocol's config names (`rollcheck list`) or a .toml file"
JSON_HELP = "print the results as one JSON document on stdout (nothing else goes to stdout)"
QUIET_HELP = "no progress lines on stderr"


def add_protocol_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("protocol", help="protocol name (see `rollcheck list`)")
    p.add_argument("--config", default=None, metavar="NAME|FILE",
                   help=f"{CONFIG_HELP} (default: default; with --variant, the config the variant is caught on)")
    add_profile_arg(p, "default: the config's")
    p.add_argument("--variant", default=None, metavar="ID",
                   help="check a deliberately broken variant (mutant, `rollcheck list`) instead of the reference")


def add_profile_arg(p: argparse.ArgumentParser, default: str, repeatable: bool = False) -> None:
    """``--profile PROFILE``; ``repeatable`` where the command runs several profiles (a matrix)."""
    if repeatable:
        p.add_argument("--profile", action="append", default=None, metavar="PROFILE",
                       help=f"{PROFILE_HELP} (repeatable; {default})")
    else:
        p.add_argument("--profile", default=None, metavar="PROFILE", help=f"{PROFILE_HELP} ({default})")


def add_out_arg(p: argparse.ArgumentParser, default: str | None, default_text: str | None = None,
                what: str = "output directory", short: bool = False) -> None:
    """``--out DIR``; ``default`` None where the command works its directory out itself (``default_text`` says
    how)."""
    names = ("-o", "--out") if short else ("--out",)
    p.add_argument(*names, type=Path, default=None if default is None else Path(default), metavar="DIR",
                   help=f"{what} (default: {default_text or default})")


def add_json_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help=JSON_HELP)


def add_quiet_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help=QUIET_HELP)


def add_output_args(p: argparse.ArgumentParser, default_out: str) -> None:
    add_out_arg(p, default_out)
    add_json_arg(p)
    add_quiet_arg(p)


def add_seed_arg(p: argparse.ArgumentParser, same: str) -> None:
    """``--seed SEED``: ``same`` is what the same seed gives again."""
    p.add_argument("--seed", type=non_negative_int, default=0, metavar="SEED",
                   help=f"random seed, a whole number from 0 (default 0): the same seed gives {same}")


def add_parallel_arg(p: argparse._ActionsContainer, what: str, default: int | None, default_text: str) -> None:
    p.add_argument("--parallel", type=positive_int, default=default, metavar="N",
                   help=f"{what} run at once (default: {default_text})")


# The namespace attribute where the parser collects deprecation lines: the command line prints them once the
# whole line parsed, so that a mistake elsewhere on it stays the one line it is.
DEPRECATIONS = "deprecated_spellings"


class _DeprecatedSpelling(argparse.Action):
    """An old spelling of a flag: stores as the new one does, and one line for stderr names the new one."""

    def __init__(self, option_strings: list[str], dest: str, new: str = "", why: str = "",
                 **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.new, self.why = new, why

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        why = f" ({self.why})" if self.why else ""
        line = f"{parser.prog}: warning: {option_string} is deprecated; use {self.new}{why}"
        setattr(namespace, DEPRECATIONS, [*getattr(namespace, DEPRECATIONS, []), line])
        setattr(namespace, self.dest, values)


def add_deprecated_spelling(group: argparse._ActionsContainer, old: str, new: str, dest: str, why: str = "",
                            **kwargs: Any) -> None:
    """``old`` as an alias of ``new`` (same ``dest``, same type): put both in one mutually exclusive group, so
    that giving both is a one-line mistake."""
    group.add_argument(old, dest=dest, action=_DeprecatedSpelling, new=new, why=why, default=argparse.SUPPRESS,
                       help=f"deprecated spelling of {new}", **kwargs)


def resolve(args: argparse.Namespace) -> tuple[ProtocolEntry, str, Any, TransitionSystem[Any]]:
    """(entry, config label, config, system) from the protocol / config / profile / variant flags."""
    entry = get_protocol(args.protocol)
    if getattr(args, "profile", None) is not None:
        check_profile(entry, args.profile, "--profile")  # before the config: the first thing wrong is the one reported
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
