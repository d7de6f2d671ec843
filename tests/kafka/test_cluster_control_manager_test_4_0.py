"""Kafka 4.0's ``ClusterControlManagerTest``, its feature checks at broker registration, transcribed as facts against
``QuorumController.register_broker`` (``kafka`` profile, ``kafka_release = "4.0"``) in
``reference_impl/metadata_version/api.py``.

Read first-hand: ``metadata/src/test/java/org/apache/kafka/controller/ClusterControlManagerTest.java`` on Apache
Kafka's 4.0 branch at commit 4ae681446f18f9a6d7a59f317013ef82379a4ba4 (2025-03-16, the branch head when 4.0.0 was
released), with ``ClusterControlManager.registerBroker`` / ``processRegistrationFeature`` of the same commit. Each
case id is the Kafka test method's name; its registrations, in Kafka's order, are its sub-cases.

How Kafka's fixture maps to ours: the ``FeatureControlManager``'s ``QuorumFeatures(0, supported, [0])`` is
``local_supported`` with voter 0; its metadata.version and the ``FinalizedControllerFeatures`` handed to
``registerBroker`` (with ``kraft.version`` added where the test adds it, as ``QuorumController`` does) are
``finalized``; a ``BrokerRegistrationRequestData``'s ``features`` are the request's; a thrown
``UnsupportedVersionException`` is a reply with ``UNSUPPORTED_VERSION`` and the exception's message.

Differences from trunk 1eb7644 (``test_cluster_control_manager_test.py``): the ranges start at ``MINIMUM_VERSION``
(3.3-IV3); ``testRegistrationWithUnsupportedMetadataVersion`` no longer registers a broker that sends no
metadata.version range (4.0's ``registerBroker`` refuses one with ``InvalidRegistrationException`` "Request features
do not contain 'metadata.version'" where 3.9 assumed ``MINIMUM_KRAFT_VERSION``; no 4.0 test states it; our
``register_broker`` does so under ``kafka`` 4.0, see docs/kafka-tests.md and the decision rule
``mv_registration``) but one that sends 3.4-IV0 only.

Not transcribed (not a feature check at broker registration, outside this file's scope): ``testReplay``,
``testReplayRegisterBrokerRecord``, ``testReplayBrokerRegistrationChangeRecord``,
``testRegistrationWithIncorrectClusterId``, ``testRegisterBrokerRecordVersion``, ``testUnregister``,
``testPlaceReplicas``, ``testRegistrationsToRecords``, ``testRegisterControlWithUnsupportedMetadataVersion``
(controller registration), ``testRegisterWithDuplicateDirectoryId``, ``testHasOnlineDir``, ``testDefaultDir``,
``testReRegistrationAndBrokerEpoch``, ``testReRegistrationWithCleanShutdownDetection``,
``testBrokerContactTimesAreUpdatedOnClusterControlActivation``.

Not expressible yet: none of the transcribed cases.
"""

from __future__ import annotations

import pytest

from reference_impl.metadata_version.catalog import MINIMUM_VERSION_4_X
from tests.kafka import _cluster_control_manager as shared
from tests.kafka._cluster_control_manager import KRAFT_VERSION_REGISTRATIONS
from tests.kafka._cluster_control_manager import unsupported as _unsupported
from tests.kafka._names import KRAFT_VERSION, MV, TEST_VERSION, M

RELEASE = "4.0"
MINIMUM_VERSION = MINIMUM_VERSION_4_X

# (the broker's features as sent, the error message; None: registered)
CASES = [
    pytest.param(
        # TestFeatureVersion.TEST_0 .. TEST_1
        ((MV, MINIMUM_VERSION.feature_level, M.IBP_3_7_IV0.feature_level), (TEST_VERSION, 0, 1)),
        # metadata.version 3.7-IV0, then a replayed FeatureLevelRecord(test.feature.version, 1)
        ((MV, M.IBP_3_7_IV0.feature_level), (TEST_VERSION, 1)),
        (
            (((MV, MINIMUM_VERSION.feature_level, M.IBP_3_7_IV0.feature_level),),
             _unsupported(1, TEST_VERSION, 0, 0)),
        ), id="testRegistrationWithUnsupportedFeature"),
    pytest.param(
        ((MV, MINIMUM_VERSION.feature_level, M.IBP_3_9_IV0.feature_level), (KRAFT_VERSION, 1, 1)),
        ((MV, M.IBP_3_9_IV0.feature_level), (KRAFT_VERSION, 1)),  # the controller adds the latest kraft.version
        KRAFT_VERSION_REGISTRATIONS, id="testRegistrationWithUnsupportedKraftVersion"),
    pytest.param(
        ((MV, M.IBP_3_5_IV0.feature_level, M.IBP_3_6_IV0.feature_level),),
        ((MV, M.IBP_3_5_IV0.feature_level),),
        (
            (((MV, MINIMUM_VERSION.feature_level, MINIMUM_VERSION.feature_level),), _unsupported(9, MV, 7, 7)),
            (((MV, M.IBP_3_4_IV0.feature_level, M.IBP_3_4_IV0.feature_level),), _unsupported(9, MV, 8, 8)),
        ), id="testRegistrationWithUnsupportedMetadataVersion"),
]


@pytest.mark.parametrize(("supported", "finalized", "registrations"), CASES)
def test_registration_feature_checks(supported: shared.Ranges, finalized: tuple[tuple[str, int], ...],
                                     registrations: shared.Registrations) -> None:
    shared.check_registrations(shared.controller(supported, finalized, RELEASE), registrations)
