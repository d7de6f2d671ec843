"""Kafka's ``ClusterControlManagerTest``, its feature checks at broker registration, transcribed as facts against
``QuorumController.register_broker`` (``kafka`` profile) in ``reference_impl/metadata_version/api.py``.

Read first-hand: ``metadata/src/test/java/org/apache/kafka/controller/ClusterControlManagerTest.java`` at Apache
Kafka trunk commit 1eb7644349cb07139d6a3c1ad1986979647cac99 (2024-10-25), with
``ClusterControlManager.registerBroker`` / ``processRegistrationFeature`` of the same commit. Each case id is the
Kafka test method's name; its registrations, in Kafka's order, are its sub-cases.

How Kafka's fixture maps to ours: the ``FeatureControlManager``'s ``QuorumFeatures(0, supported, [0])`` is
``local_supported`` with voter 0; its metadata.version and the ``FinalizedControllerFeatures`` handed to
``registerBroker`` (with ``kraft.version`` added where the test adds it, as ``QuorumController`` does) are
``finalized``; a ``BrokerRegistrationRequestData``'s ``features`` are the request's; a thrown
``UnsupportedVersionException`` is a reply with ``UNSUPPORTED_VERSION`` and the exception's message. Registration
checks do not depend on the release in our model; the release is 3.9's, whose ``MINIMUM_KRAFT_VERSION``
(3.0-IV1, the version a broker that sends no metadata.version range is assumed to support) is this commit's.

Not transcribed (not a feature check at broker registration, outside this file's scope): ``testReplay``,
``testReplayRegisterBrokerRecord``, ``testReplayBrokerRegistrationChangeRecord``,
``testRegistrationWithIncorrectClusterId``, ``testRegisterBrokerRecordVersion``, ``testUnregister``,
``testPlaceReplicas``, ``testRegistrationsToRecords``, ``testRegisterControlWithOlderMetadataVersion`` (controller
registration), ``testRegisterWithDuplicateDirectoryId``, ``testHasOnlineDir``, ``testDefaultDir``,
``testReRegistrationAndBrokerEpoch``.

Not expressible yet: none of the transcribed cases.

The class as Kafka's 4.0 release has it, run under release 4.0: ``test_cluster_control_manager_test_4_0.py``.
"""

from __future__ import annotations

import pytest

from tests.kafka import _cluster_control_manager as shared
from tests.kafka._cluster_control_manager import KRAFT_VERSION_REGISTRATIONS
from tests.kafka._cluster_control_manager import unsupported as _unsupported
from tests.kafka._names import KRAFT_VERSION, MV, TEST_VERSION, M

RELEASE = "3.9"

# (the broker's features as sent, the error message; None: registered)
CASES = [
    pytest.param(
        ((MV, M.IBP_3_1_IV0.feature_level, M.IBP_3_7_IV0.feature_level), (TEST_VERSION, 0, 1)),
        # metadata.version 3.7-IV0, then a replayed FeatureLevelRecord(test.feature.version, 1)
        ((MV, M.IBP_3_7_IV0.feature_level), (TEST_VERSION, 1)),
        (
            (((MV, M.IBP_3_1_IV0.feature_level, M.IBP_3_7_IV0.feature_level),),
             _unsupported(1, TEST_VERSION, 0, 0)),
        ), id="testRegistrationWithUnsupportedFeature"),
    pytest.param(
        ((MV, M.IBP_3_1_IV0.feature_level, M.IBP_3_9_IV0.feature_level), (KRAFT_VERSION, 1, 1)),
        ((MV, M.IBP_3_9_IV0.feature_level), (KRAFT_VERSION, 1)),  # the controller adds the latest kraft.version
        KRAFT_VERSION_REGISTRATIONS, id="testRegistrationWithUnsupportedKraftVersion"),
    pytest.param(
        ((MV, M.IBP_3_1_IV0.feature_level, M.IBP_3_3_IV0.feature_level),),
        ((MV, M.IBP_3_3_IV0.feature_level),),
        (
            # no features sent: assumed to support only MINIMUM_KRAFT_VERSION (level 1)
            ((), _unsupported(4, MV, 1, 1)),
            (((MV, M.IBP_3_3_IV3.feature_level, M.IBP_3_3_IV3.feature_level),), _unsupported(4, MV, 7, 7)),
        ), id="testRegistrationWithUnsupportedMetadataVersion"),
]


@pytest.mark.parametrize(("supported", "finalized", "registrations"), CASES)
def test_registration_feature_checks(supported: shared.Ranges, finalized: tuple[tuple[str, int], ...],
                                     registrations: shared.Registrations) -> None:
    shared.check_registrations(shared.controller(supported, finalized, RELEASE), registrations)
