"""Kafka 4.0's ``BootstrapMetadataTest``, its metadata.version cases, transcribed as facts against the bootstrap of
``reference_impl/metadata_version/api.py`` (``format_storage`` under the ``kafka`` profile with
``kafka_release = "4.0"``, then ``bootstrap_metadata_version``) and ``from_feature_level`` in ``catalog.py``.

Read first-hand: ``metadata/src/test/java/org/apache/kafka/metadata/bootstrap/BootstrapMetadataTest.java`` on Apache
Kafka's 4.0 branch at commit 4ae681446f18f9a6d7a59f317013ef82379a4ba4 (2025-03-16, the branch head when 4.0.0 was
released), with ``BootstrapMetadata.java`` and ``MetadataVersion.java`` of the same commit. Each case id is the Kafka
test method's name.

How Kafka's fixture maps to ours: our bootstrap is the metadata.version alone. ``BootstrapMetadata.fromVersion(mv,
source)`` is what ``kafka-storage format`` leaves for ``mv`` (``MetaProperties``) and the one ``FeatureLevelRecord``
the first active controller writes from it; a bootstrap ``FeatureLevelRecord`` at a given level is read through
``MetadataVersion.fromFeatureLevel`` (Kafka's ``BootstrapMetadata.recordToMetadataVersion``), as ``format_storage``
reads a level.

``testFromRecordsListWithOldMetadataVersion`` checks 4.0's text for a level below 3.3-IV3 ("... Valid feature
levels are from 7 to 26."), which ``from_feature_level(level, "4.0")`` prints since this transcription found it.

Not expressible yet (``BootstrapMetadata``'s record list is not modelled: the bootstrap carries the metadata.version
level only, no other feature's record, no ``NoOpRecord``, no source name): ``testFromRecordsList``,
``testFromRecordsListWithoutMetadataVersion``, ``testCopyWithNewFeatureRecord``, ``testFeatureLevelForMetadataVersion``,
``testCopyWithModifiedFeatureRecord``, ``testFeatureLevelForFeatureThatIsNotSet``, ``testFeatureLevelForFeature``.
"""

from __future__ import annotations

import pytest

from reference_impl.metadata_version.api import FeatureLevelRecord, bootstrap_metadata_version, format_storage
from reference_impl.metadata_version.catalog import (
    FEATURE_NAME,
    KAFKA_CATALOG,
    MINIMUM_VERSION_4_X,
    MetadataVersion,
    from_feature_level,
    latest_production,
    latest_testing,
)

M = MetadataVersion
RELEASE = "4.0"
IBP_3_0_IV1_FEATURE_LEVEL = 1  # MetadataVersionTestUtils.IBP_3_0_IV1_FEATURE_LEVEL: a level Kafka 4.0 no longer has


def _format(version: str | int, source: str) -> int | None:
    # kafka-storage format on a 4.0 binary whose default is 4.0's LATEST_PRODUCTION
    return format_storage(source, KAFKA_CATALOG, latest_production(RELEASE).feature_level, version,
                          profile="kafka", kafka_release=RELEASE).metadata_version


@pytest.mark.parametrize("source", [pytest.param("foo", id="testFromVersion")])
def test_from_version(source: str) -> None:
    """``fromVersion(IBP_3_3_IV3, "foo")`` is one FeatureLevelRecord(metadata.version, 7) at 3.3-IV3."""
    meta = format_storage(source, KAFKA_CATALOG, latest_production(RELEASE).feature_level, M.IBP_3_3_IV3.version(),
                          profile="kafka", kafka_release=RELEASE)
    assert meta.metadata_version == M.IBP_3_3_IV3.feature_level == 7
    assert bootstrap_metadata_version(meta, KAFKA_CATALOG, log_is_empty=True) == FeatureLevelRecord(FEATURE_NAME, 7)


@pytest.mark.parametrize("level", [
    pytest.param(IBP_3_0_IV1_FEATURE_LEVEL, id="testFromRecordsListWithOldMetadataVersion"),
])
def test_from_records_list_with_old_metadata_version(level: int) -> None:
    """A bootstrap record at level 1 is refused with fromFeatureLevel's message."""
    expected = (f"No MetadataVersion with feature level {level}. Valid feature levels are from "
                f"{MINIMUM_VERSION_4_X.feature_level} to {latest_testing(RELEASE).feature_level}.")
    for read in (lambda: from_feature_level(level, RELEASE), lambda: _format(level, "quux")):
        with pytest.raises(ValueError) as e:
            read()
        assert str(e.value) == expected
