"""Conditions the ``streams_probing`` runbooks wait for or reach (docs/runbooks.md).

The predicates read :class:`~reference_impl.streams_probing.system.StreamsGroupState`: an instance's release,
its ``upgrade.from`` (``None``: removed), the subscription version it uses and the version of the last
assignment it processed, and the group's pending rebalance and follow-up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reference_impl.streams_probing.config import StreamsProbingConfig
from reference_impl.streams_probing.releases import release as find_release
from reference_impl.streams_probing.system import StreamsGroupState, StreamsProbingSystem
from rollcheck.core.errors import UserError
from rollcheck.runbook import RunbookCondition

Predicate = Callable[[StreamsGroupState], bool]


def _stable(s: StreamsGroupState) -> bool:
    """No rebalance pending or owed (the leader's follow-up), every instance running, nothing failed and no
    assignment left unprocessed: the group has settled (the system's own notion, which STR-07 also reads)."""
    return StreamsProbingSystem.stable(s)


def group_stable(config: StreamsProbingConfig) -> Predicate:
    return _stable


def upgrade_complete(config: StreamsProbingConfig, release: str, version: int | None = None) -> Predicate:
    """The group is stable, every instance runs ``release`` with ``upgrade.from`` removed, and each uses
    and last received metadata version ``version`` (default: the release's latest supported version)."""
    if not isinstance(release, str):
        raise ValueError(f"release must be a release name such as \"2.0\", not {release!r}")
    try:
        rel = find_release(release)
    except UserError as exc:
        raise ValueError(str(exc)) from None
    if rel.name not in (config.old.name, config.new.name):
        raise ValueError(f"release {rel} is neither the config's from_release ({config.old}) nor its to_release "
                         f"({config.new})")
    if version is None:
        version = rel.latest_supported
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= rel.latest_supported:
        raise ValueError(f"version must be a metadata version release {rel} speaks (1 to {rel.latest_supported}), "
                         f"not {version!r}")
    name, v = rel.name, version

    def pred(s: StreamsGroupState) -> bool:
        return _stable(s) and all(x.release == name and x.upgrade_from is None and x.used_version == v
                                  and x.last_version == v for x in s.instances)
    return pred


CONDITIONS: dict[str, RunbookCondition] = {
    "group_stable": RunbookCondition(
        "no rebalance pending or owed, every instance running with no failure and no unprocessed assignment",
        group_stable),
    "upgrade_complete": RunbookCondition(
        "the group is stable, every instance runs `release` with upgrade.from removed, and each uses and last "
        "received metadata version `version` (default: the release's latest supported version)",
        upgrade_complete),
}

__all__: list[Any] = ["CONDITIONS"]
