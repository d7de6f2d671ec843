"""Conditions the ``features`` runbooks wait for or reach (docs/runbooks.md).

Each predicate reads :class:`reference_impl.features.system.FeaturesState` directly, ``/features`` as a broker
decodes its bytes (``FeatureZNode.decode`` under the config's profile). "Caught up" means what the KIP's
"Guarantees" calls the end of the gradual propagation: the broker has read the latest ``/features`` (no watch
notification pending) and serves its features and epoch in ApiVersions.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from reference_impl.features.api import FeatureZNode, FeatureZNodeStatus
from reference_impl.features.config import FeaturesConfig
from reference_impl.features.system import Broker, BrokerStatus, FeaturesState, ZNode
from rollcheck.runbook import RunbookCondition

Predicate = Callable[[FeaturesState], bool]


def _release(config: FeaturesConfig, release: str) -> str:
    names = [r.name for r in config.releases]
    if release not in names:
        raise ValueError(f"release {release!r} is not one of the config's releases ({', '.join(names)})")
    return release


def _feature(config: FeaturesConfig, feature: str) -> str:
    if feature not in config.feature_names:
        raise ValueError(f"feature {feature!r} is not one of the config's features "
                         f"({', '.join(config.feature_names)})")
    return feature


def _level(level: int) -> int:
    if not isinstance(level, int) or isinstance(level, bool) or level < 1:
        raise ValueError(f"level must be a finalized max version level (an integer >= 1), not {level!r}")
    return level


def _broker(config: FeaturesConfig, broker: int) -> int:
    if not isinstance(broker, int) or isinstance(broker, bool) or not 0 <= broker < config.brokers:
        raise ValueError(f"broker must be a broker id from 0 to {config.brokers - 1}, not {broker!r}")
    return broker


@lru_cache(maxsize=1024)
def _decoded(znode: ZNode | None, profile: str) -> FeatureZNode | None:
    """/features as a broker decodes it; ``None`` when absent or when the decoder refuses its bytes."""
    if znode is None:
        return None
    try:
        return FeatureZNode.decode(znode.data, znode.version, profile)
    except ValueError:
        return None


def _caught_up(config: FeaturesConfig, s: FeaturesState, b: Broker) -> bool:
    """Running, in the controller's live set, and serving the latest /features."""
    node = _decoded(s.znode, config.profile)
    if b.status is not BrokerStatus.RUNNING or not b.registered or not b.notified or node is None:
        return False
    enabled = node.status is FeatureZNodeStatus.ENABLED and s.ibp_enabled
    return b.cache_epoch == node.epoch and b.cache == (node.features if enabled else ())


def _healthy(config: FeaturesConfig, s: FeaturesState) -> bool:
    """A controller elected, /features written, no registration left on the controller's queue, every
    broker running, registered and caught up."""
    return (s.controller >= 0 and s.znode is not None and not s.registration_queue
            and all(_caught_up(config, s, b) for b in s.brokers))


def _finalized(config: FeaturesConfig, s: FeaturesState, feature: str, level: int) -> bool:
    node = _decoded(s.znode, config.profile)
    if node is None or node.status is not FeatureZNodeStatus.ENABLED:
        return False
    rng = node.get(feature)
    return rng is not None and rng.max_version_level == level


def cluster_healthy(config: FeaturesConfig) -> Predicate:
    return lambda s: _healthy(config, s)


def broker_running(config: FeaturesConfig, broker: int, release: str) -> Predicate:
    i, rel = _broker(config, broker), _release(config, release)
    return lambda s: s.controller >= 0 and s.brokers[i].release == rel and _caught_up(config, s, s.brokers[i])


def finalized_level(config: FeaturesConfig, level: int, feature: str = "group_coordinator") -> Predicate:
    lvl, f = _level(level), _feature(config, feature)
    return lambda s: _finalized(config, s, f, lvl)


def all_on(config: FeaturesConfig, release: str, level: int, feature: str = "group_coordinator") -> Predicate:
    rel, lvl, f = _release(config, release), _level(level), _feature(config, feature)

    def pred(s: FeaturesState) -> bool:
        return _finalized(config, s, f, lvl) and all(b.release == rel for b in s.brokers) and _healthy(config, s)
    return pred


CONDITIONS: dict[str, RunbookCondition] = {
    "cluster_healthy": RunbookCondition(
        "a controller elected, /features written, no registration queued, every broker running, in the "
        "controller's live set and serving the latest /features", cluster_healthy),
    "broker_running": RunbookCondition(
        "broker `broker` runs `release`, is in the controller's live set and serves the latest /features",
        broker_running),
    "finalized_level": RunbookCondition(
        "/features is enabled and finalizes `feature` (default group_coordinator) at max level `level`",
        finalized_level),
    "all_on": RunbookCondition(
        "every broker runs `release`, the cluster is healthy (every broker running, registered and serving "
        "the latest /features) and /features finalizes `feature` (default group_coordinator) at max level "
        "`level`", all_on),
}

__all__: list[Any] = ["CONDITIONS"]
