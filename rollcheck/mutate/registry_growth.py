"""A protocol's registry entry as a checkout has it, for ``--resume``: a kill stands where the reference changed
only by its registry entry's growth (a config added: every check the kill met still runs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rollcheck.mutate.digests import reference_digests
from rollcheck.mutate.tree import SourceTree

# Run in a checkout's packages (PYTHONPATH first): what the kills of a campaign there were run on, besides the
# code. Values as canonical JSON (a frozenset's order is the hash seed's, so sorted), so two checkouts compare.
_REGISTRY_SIGNATURE = """
import dataclasses, enum, importlib, json, os, sys
# The checkout's own registry module: rollcheck/core/registry.py, or rollcheck/registry.py in a checkout from before
# the engine had rooms (the editable install would otherwise lend this checkout's modules to an older tree).
get_protocol = importlib.import_module("rollcheck.core.registry" if os.path.exists("rollcheck/core/registry.py")
                                       else "rollcheck.registry").get_protocol

def canon(x):
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: canon(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, (set, frozenset)):
        return sorted((canon(v) for v in x), key=repr)
    if isinstance(x, (list, tuple)):
        return [canon(v) for v in x]
    if isinstance(x, dict):
        return {str(k): canon(v) for k, v in x.items()}
    if isinstance(x, enum.Enum):
        return repr(x)
    return x if isinstance(x, (str, int, float, bool, type(None))) else repr(x)

entry = get_protocol(sys.argv[1])
variants = []
for v in entry.variants:
    ts = v.system(entry.configs[v.config])
    variants.append([v.id, list(v.expect), v.config, type(ts).__qualname__, canon(ts.config)])
# (an older commit's ProtocolEntry has no conform_configs)
print(json.dumps({"configs": {n: canon(c) for n, c in entry.configs.items()}, "gate_config": entry.gate_config,
                  "story_configs": list(entry.story_configs),
                  "conform_configs": list(getattr(entry, "conform_configs", ())), "profiles": list(entry.profiles),
                  "variants": variants}, sort_keys=True))
"""


def registry_signature(root: Path, protocol: str) -> dict[str, Any]:
    """The protocol's registry entry as the packages under ``root`` have it (:data:`_REGISTRY_SIGNATURE`)."""
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONHASHSEED="0")
    proc = subprocess.run([sys.executable, "-c", _REGISTRY_SIGNATURE, protocol], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"registry of {protocol} under {root}: {proc.stderr.strip().splitlines()[-1:]}")
    return dict(json.loads(proc.stdout))


def registry_grew(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether ``after`` (a registry signature) runs every check ``before`` ran: each named config of ``before``
    there with the same value, its story configs among ``after``'s, the same gate config, profiles and broken
    variants. Only named configs (and story configs) added since, then: a kill under ``before`` is one under
    ``after``."""
    configs = after["configs"]
    return (all(configs.get(name) == value for name, value in before["configs"].items())
            and set(before["story_configs"]) <= set(after["story_configs"])
            and set(before.get("conform_configs", [])) <= set(after.get("conform_configs", []))
            and (before["gate_config"], before["profiles"], before["variants"])
            == (after["gate_config"], after["profiles"], after["variants"]))


def registry_growth(tree: SourceTree, snapshot_root: Path) -> Callable[[dict[str, Any], str], bool]:
    """For ``--resume``: whether an earlier row's kill stands at this snapshot although its protocol's reference
    digest changed, because only the registry entry grew (a story config added, as for a survivor only a new
    config reaches) or definitions that nothing reads were deleted (test data moved out of the reference, dead
    code: :func:`dead_definitions`). The row's commit is read from git (cached per commit): its protocol's code
    digest must be the row's own (the row ran on that commit's code, not a dirty tree), its live code without
    the registry entry this snapshot's, and its registry entry one this snapshot's extends
    (:func:`registry_grew`). A mutant inside a deleted definition is gone; one whose line moved has a new id
    and runs again."""
    packages = tree.protocol_packages()
    now_body = reference_digests(snapshot_root, packages, tree.reference, code_only=True, registry=False,
                                 live_only=True)
    now: dict[str, dict[str, Any]] = {}
    seen: dict[tuple[str, str], tuple[str, str, dict[str, Any]] | None] = {}

    def at(commit: str, protocol: str) -> tuple[str, str, dict[str, Any]] | None:
        there = Path(tempfile.mkdtemp(prefix="rollcheck-registry-"))
        try:
            listed = subprocess.run(["git", "ls-tree", "--name-only", commit], cwd=tree.root, capture_output=True,
                                    text=True, timeout=300)
            # a package the project has since added is absent from an older commit: archive the others
            present = [p for p in tree.packages if p in listed.stdout.split()]
            archive = subprocess.run(["git", "archive", commit, *present], cwd=tree.root,
                                     capture_output=True, timeout=300)
            if archive.returncode != 0:
                return None  # a commit this clone does not have
            subprocess.run(["tar", "-x", "-C", str(there)], input=archive.stdout, check=True, timeout=300)
            full = reference_digests(there, packages, tree.reference, code_only=True)[protocol]
            body = reference_digests(there, packages, tree.reference, code_only=True, registry=False,
                                     live_only=True)[protocol]
            return full, body, registry_signature(there, protocol)
        except (RuntimeError, subprocess.SubprocessError, KeyError, OSError):
            return None
        finally:
            shutil.rmtree(there, ignore_errors=True)

    def grown(row: dict[str, Any], protocol: str) -> bool:
        commit, code = row.get("commit"), row.get("protocol_code_sha256")
        if not commit or not code or protocol not in now_body:
            return False
        if (commit, protocol) not in seen:
            seen[commit, protocol] = at(commit, protocol)
        then = seen[commit, protocol]
        if then is None or then[0] != code or then[1] != now_body[protocol]:
            return False
        if protocol not in now:
            now[protocol] = registry_signature(snapshot_root, protocol)
        return registry_grew(then[2], now[protocol])

    return grown
