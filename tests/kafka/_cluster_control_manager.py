"""The fixture and the registration check of Kafka's ``ClusterControlManagerTest`` (its feature checks at broker
registration) as transcribed against ``QuorumController.register_broker`` (``kafka`` profile) in
``reference_impl/metadata_version/api.py``, shared by ``test_cluster_control_manager_test.py`` (trunk 1eb7644) and
``test_cluster_control_manager_test_4_0.py`` (Kafka 4.0). Each of those modules' docstrings says how Kafka's fixture
maps to these.
"""

from __future__ import annotations

from reference_impl.metadata_version.api import (
    BrokerRegistrationRequest,
    Errors,
    QuorumController,
    VersionRange,
)
from reference_impl.metadata_version.catalog import KAFKA_CATALOG
from tests.kafka._names import KRAFT_VERSION, MV, M

Ranges = tuple[tuple[str, int, int], ...]
# (the broker's features as sent, the error message; None: registered)
Registrations = tuple[tuple[Ranges, str | None], ...]


def unsupported(finalized: int, feature: str, low: int, high: int) -> str:
    return (f"Unable to register because the broker does not support finalized version {finalized} of {feature}. "
            f"The broker wants a version between {low} and {high}, inclusive.")


# testRegistrationWithUnsupportedKraftVersion's registrations, the same at trunk 1eb7644 and 4.0: a broker at 3.9-IV0
# that sends no kraft.version, or 0-0, is refused the finalized kraft.version 1; one that sends 1-1 registers.
KRAFT_VERSION_REGISTRATIONS: Registrations = (
    (((MV, M.IBP_3_9_IV0.feature_level, M.IBP_3_9_IV0.feature_level),),
     unsupported(1, KRAFT_VERSION, 0, 0)),
    (((MV, M.IBP_3_9_IV0.feature_level, M.IBP_3_9_IV0.feature_level), (KRAFT_VERSION, 0, 0)),
     unsupported(1, KRAFT_VERSION, 0, 0)),
    (((MV, M.IBP_3_9_IV0.feature_level, M.IBP_3_9_IV0.feature_level), (KRAFT_VERSION, 1, 1)), None),
)


def controller(supported: Ranges, finalized: tuple[tuple[str, int], ...], release: str) -> QuorumController:
    return QuorumController(
        catalog=KAFKA_CATALOG, node_id=0,
        local_supported=tuple(sorted((name, VersionRange.of(lo, hi)) for name, lo, hi in supported)),
        voters=((0, None),), finalized=tuple(sorted(finalized)), profile="kafka", kafka_release=release)


def check_registrations(c: QuorumController, registrations: Registrations) -> None:
    """Each registration in turn on ``c``: registered, or refused with its message and nothing changed."""
    for sent, message in registrations:
        request = BrokerRegistrationRequest(0, tuple((name, VersionRange.of(lo, hi)) for name, lo, hi in sent))
        reply, after = c.register_broker(request)
        if message is None:
            assert reply.ok and reply.message is None
            assert [b.broker_id for b in after.brokers] == [0]
        else:
            assert (reply.error, reply.message) == (Errors.UNSUPPORTED_VERSION, message)
            assert after == c  # a refused registration changes nothing
