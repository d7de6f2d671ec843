"""Conditions the ``metadata_version`` runbooks wait for or reach (docs/runbooks.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reference_impl.metadata_version.config import MetadataVersionConfig
from reference_impl.metadata_version.system import MetadataVersionState, NodeStatus
from rollcheck.runbook import RunbookCondition

Predicate = Callable[[MetadataVersionState], bool]


def _software(config: MetadataVersionConfig, software: str) -> str:
    names = [sw.name for sw in config.softwares]
    if software not in names:
        raise ValueError(f"software {software!r} is not in the config's softwares ({', '.join(names)})")
    return software


def _level(config: MetadataVersionConfig, level: int) -> int:
    if not isinstance(level, int) or isinstance(level, bool) or level < 1:
        raise ValueError(f"level must be a metadata.version feature level (a positive integer), not {level!r}")
    return level


def _healthy(s: MetadataVersionState) -> bool:
    """Every node running and caught up with the committed log, every broker registered with its own
    software and unfenced: what Kafka's upgrade notes ask to see before the next step."""
    end = len(s.log) - 1
    return (s.leader >= 0
            and all(v.status is NodeStatus.RUNNING and v.offset == end for v in s.voters)
            and all(b.status is NodeStatus.RUNNING and b.offset == end and not b.fenced
                    and b.registration == b.software for b in s.brokers))


def cluster_healthy(config: MetadataVersionConfig) -> Predicate:
    return _healthy


def all_on(config: MetadataVersionConfig, software: str, level: int) -> Predicate:
    sw, lvl = _software(config, software), _level(config, level)

    def pred(s: MetadataVersionState) -> bool:
        return (s.level == lvl and _healthy(s) and all(v.software == sw for v in s.voters)
                and all(b.software == sw for b in s.brokers))
    return pred


def finalized_level(config: MetadataVersionConfig, level: int) -> Predicate:
    lvl = _level(config, level)
    return lambda s: s.level == lvl


CONDITIONS: dict[str, RunbookCondition] = {
    "cluster_healthy": RunbookCondition(
        "every voter and broker running and caught up with the log, a leader elected, every broker "
        "registered with its own software and unfenced", cluster_healthy),
    "all_on": RunbookCondition(
        "every node runs `software`, healthy, and the finalized metadata.version is `level`", all_on),
    "finalized_level": RunbookCondition("the committed metadata.version is `level`", finalized_level),
}

__all__: list[Any] = ["CONDITIONS"]
