"""The controller and the checks of Kafka's ``QuorumControllerTest`` (its bootstrap and metadata.version cases) as
transcribed against ``reference_impl/metadata_version/api.py``, shared by ``test_quorum_controller_test.py`` (trunk
1eb7644) and ``test_quorum_controller_test_4_0.py`` (Kafka 4.0). Each of those modules' docstrings says how Kafka's
fixture maps to these.
"""

from __future__ import annotations

from collections.abc import Callable

from reference_impl.metadata_version.api import (
    BrokerRegistrationRequest,
    Errors,
    FeatureLevelRecord,
    MetaProperties,
    QuorumController,
    VersionRange,
    activation_metadata_version,
    bootstrap_metadata_version,
    default_local_supported,
)
from reference_impl.metadata_version.catalog import KAFKA_CATALOG, MetadataVersion
from tests.kafka._names import KRAFT_VERSION, MV, M

SIMPLE_BOOTSTRAP = M.IBP_3_7_IV0


def controller(release: str, metadata_version: MetadataVersion, *extra: tuple[str, int],
               local: VersionRange | None = None) -> QuorumController:
    """Node 0, the only voter, under ``release``: its local metadata.version range is the
    ``FeatureControlManager.Builder`` default (``default_local_supported``; checked to be ``local`` when given);
    ``metadata_version`` and ``extra`` are finalized."""
    supported = default_local_supported(KAFKA_CATALOG, release)
    if local is not None:
        assert supported == local
    return QuorumController(KAFKA_CATALOG, 0, ((MV, supported),), ((0, None),),
                            finalized=tuple(sorted(((MV, metadata_version.feature_level), *extra))),
                            profile="kafka", kafka_release=release)


def check_bootstrap(bootstrap: MetaProperties, log_is_empty: bool, record: FeatureLevelRecord | None,
                    metadata_version: MetadataVersion) -> None:
    """What the first active controller makes of ``bootstrap`` on a log that is empty or not: it writes ``record``
    (None: no bootstrap record) and runs at ``metadata_version``."""
    assert bootstrap_metadata_version(bootstrap, KAFKA_CATALOG, log_is_empty=log_is_empty) == record
    assert activation_metadata_version(bootstrap, KAFKA_CATALOG, log_is_empty=log_is_empty) \
        == metadata_version.feature_level


def check_register_broker_kraft_versions(rows: tuple[tuple[int, int], ...],
                                         controller_with: Callable[[tuple[str, int]], QuorumController],
                                         broker_metadata_versions: VersionRange) -> None:
    """``testRegisterBrokerKRaftVersions``: for each (finalized kraft.version, the broker's max kraft.version), a
    broker supporting ``broker_metadata_versions`` registers with ``controller_with((KRAFT_VERSION, finalized))``;
    refused when its max is below the finalized level."""
    for finalized_kraft, broker_max in rows:
        c = controller_with((KRAFT_VERSION, finalized_kraft))
        sent = [(MV, broker_metadata_versions)]
        # A broker does not send a feature it supports only at level 0 (4.0: "broker registration requests do not
        # include initial versions of features"); its minimum is KRAFT_VERSION.minimumProduction().
        if broker_max != 0:
            sent.append((KRAFT_VERSION, VersionRange.of(0, broker_max)))
        reply, _ = c.register_broker(BrokerRegistrationRequest(0, tuple(sent)))
        if broker_max < finalized_kraft:
            assert (reply.error, reply.message) == (
                Errors.UNSUPPORTED_VERSION,
                f"Unable to register because the broker does not support finalized version {finalized_kraft} of "
                f"kraft.version. The broker wants a version between 0 and {broker_max}, inclusive.")
        else:
            assert reply.ok, (finalized_kraft, broker_max)
