"""The source tree a campaign mutates: the checkout that holds the engine, its packages, each protocol's
package in it, and the snapshot every mutant is built from."""

from __future__ import annotations

import hashlib
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import rollcheck
from rollcheck.core.errors import UserError
from rollcheck.core.registry import get_protocol, protocol_names


@dataclass(frozen=True)
class SourceTree:
    """``root``: the checkout; ``packages``: every package a run imports from it (all are copied, so that no
    module of a copy can import its sibling from the editable install instead); ``reference``: the package
    that holds the protocols' packages (each protocol's package is found through its registry entry)."""

    root: Path
    packages: tuple[str, ...]
    reference: str

    @classmethod
    def of_checkout(cls) -> SourceTree:
        """The checkout the engine runs from; a user error (one line) when it runs from an installed copy."""
        root = Path(rollcheck.__file__).resolve().parent.parent
        if not (root / "pyproject.toml").is_file():
            raise UserError(f"rollcheck mutate mutates a checkout's reference and runs from it: {root} has no "
                            "pyproject.toml (install the project editable, `pip install -e .`)")
        packages = project_packages(root)
        tops = set()
        for name in protocol_names():
            where = protocol_dir(name)
            if not where.is_relative_to(root):
                raise UserError(f"protocol {name}'s package {where} is not in the checkout {root}: "
                                "rollcheck mutate mutates the checkout's protocols")
            tops.add(where.relative_to(root).parts[0])
        if len(tops) != 1:
            raise UserError(f"the protocols' packages are under {', '.join(sorted(tops))}: rollcheck mutate "
                            "needs them under one package of the checkout")
        reference = tops.pop()
        return cls(root, tuple(dict.fromkeys([*packages, reference])), reference)

    def protocol_dir(self, protocol: str) -> Path:
        return protocol_dir(protocol)

    def protocol_packages(self) -> dict[str, str]:
        """Each protocol's package name under the reference package -> the protocol."""
        return {protocol_dir(p).name: p for p in protocol_names()}


def protocol_dir(protocol: str) -> Path:
    """The directory of the package that builds the protocol (its registry entry's ``build``)."""
    module = sys.modules[get_protocol(protocol).build.__module__]
    return Path(module.__file__ or "").resolve().parent


def project_packages(root: Path) -> tuple[str, ...]:
    """The top-level packages the project's ``pyproject.toml`` installs (``[tool.setuptools.packages.find]
    include``: ``name*`` patterns), those that are packages of the checkout."""
    try:
        doc = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read {root / 'pyproject.toml'}: {exc}") from None
    include = doc.get("tool", {}).get("setuptools", {}).get("packages", {}).get("find", {}).get("include", [])
    names = [str(p).split(".")[0].rstrip("*") for p in include if isinstance(p, str)]
    found = tuple(n for n in dict.fromkeys(names) if n and (root / n / "__init__.py").is_file())
    if rollcheck.__name__ not in found:
        found = (rollcheck.__name__, *found)
    return found


def snapshot(tree: SourceTree, dest: Path) -> tuple[str, str]:
    """Copy the packages once, at the start: every mutant and the baselines are built from this copy, so a
    campaign measures one version of the code even if the working tree changes while it runs. Returns two
    SHA-256 digests: over every module copied, and over the reference package alone (:func:`reference_digests`
    has one per protocol).

    No bytecode is copied: a cached .pyc of the original must never stand in for a mutated module."""
    for pkg in tree.packages:
        shutil.copytree(tree.root / pkg, dest / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    digest, reference = hashlib.sha256(), hashlib.sha256()
    for path in sorted(dest.rglob("*.py")):
        entry = str(path.relative_to(dest)).encode() + b"\0" + path.read_bytes() + b"\0"
        digest.update(entry)
        if path.relative_to(dest).parts[0] == tree.reference:
            reference.update(entry)
    return digest.hexdigest(), reference.hexdigest()
