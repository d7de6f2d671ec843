"""The state of the ``features`` reference (reference_impl/features/system.py): the brokers, the client and
``/features``.

Its own module, so that the properties and the Z3 model read the state without importing the rules
(the layering test, tests/test_layers.py)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from reference_impl.features.api import FeatureZNode, FinalizedFeatures


class BrokerStatus(enum.Enum):
    STOPPED = 0
    RUNNING = 1
    EXITED = 2  # shut down on a feature incompatibility (at startup or on a watch notification)


@dataclass(frozen=True)
class Broker:
    release: str
    status: BrokerStatus
    cache_epoch: int  # FinalizedFeaturesEpoch it serves in ApiVersions; -1 when it has none
    cache: FinalizedFeatures
    registered: bool  # in the controller's live-broker set (gets metadata, counts in validations)
    notified: bool  # has read the latest /features write (False: a watch notification is pending)


@dataclass(frozen=True)
class Client:
    epoch: int
    features: FinalizedFeatures


@dataclass(frozen=True)
class ZNode:
    """``/features`` as ZooKeeper holds it (``KafkaZkClient.getDataAndVersion``): the node's data, the JSON
    bytes of Kafka's ``FeatureZNode.encode``, and its version (``Stat.version``: the KIP's
    ``FinalizedFeaturesEpoch``, which is not in the JSON)."""

    data: bytes
    version: int


@dataclass(frozen=True)
class Unreadable:
    """What a reader gets from bytes ``FeatureZNode.decode`` refuses (only a codec bug writes them).

    ``fatal``: the failure is not an ``IllegalArgumentException`` (Jackson's ``JsonMappingException`` for a
    missing ``version`` or a value of the wrong type, or any other exception), which Kafka 2.8's feature
    listener turns into the broker's exit; otherwise the listener clears the broker's feature cache and the
    broker runs on (``FinalizedFeatureChangeListener.scala``; see :meth:`FeaturesSystem.read`)."""

    fatal: bool
    message: str


Decoded = FeatureZNode | Unreadable | None  # what a reader makes of /features (None: the node is absent)


@dataclass(frozen=True)
class FeaturesState:
    znode: ZNode | None  # /features in ZooKeeper: its bytes and version (None: absent)
    ibp_enabled: bool  # inter.broker.protocol.version >= migration_ibp_version
    controller: int  # broker id of the active controller, -1 when none
    brokers: tuple[Broker, ...]
    registration_queue: tuple[int, ...]  # broker registrations waiting on the controller's event queue
    client: Client
    restarts: int
    ibp_changes: int
