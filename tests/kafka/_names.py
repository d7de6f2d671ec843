"""Kafka's names as the ``tests/kafka`` transcriptions of the controller's classes write them, shared by the trunk
1eb7644 and the Kafka 4.0 ones."""

from __future__ import annotations

from reference_impl.metadata_version.api import Errors, UpgradeType
from reference_impl.metadata_version.catalog import FEATURE_NAME, MetadataVersion

M = MetadataVersion
MV = FEATURE_NAME  # MetadataVersion.FEATURE_NAME
TEST_VERSION = "test.feature.version"  # TestFeatureVersion.FEATURE_NAME
TRANSACTION_VERSION = "transaction.version"  # TransactionVersion.FEATURE_NAME
KRAFT_VERSION = "kraft.version"  # KRaftVersion.FEATURE_NAME
UPGRADE, SAFE, UNSAFE = UpgradeType.UPGRADE, UpgradeType.SAFE_DOWNGRADE, UpgradeType.UNSAFE_DOWNGRADE
INVALID = Errors.INVALID_UPDATE_VERSION
