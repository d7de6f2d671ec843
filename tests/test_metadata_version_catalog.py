"""The metadata.version catalogs: Kafka's MetadataVersion facts and the KIP-778 V1..V5 example."""

from __future__ import annotations

import pytest

from reference_impl.metadata_version import catalog as c
from reference_impl.metadata_version.catalog import MetadataVersion as MV


def test_levels_are_consecutive_from_one() -> None:
    assert [mv.feature_level for mv in MV] == list(range(1, len(MV) + 1))
    assert c.MINIMUM_KRAFT_VERSION.feature_level == 1
    assert c.KAFKA_CATALOG.levels == tuple(range(1, len(MV) + 1))


def test_kafka_facts() -> None:
    assert MV.IBP_3_3_IV3.feature_level == 7
    assert MV.IBP_3_3_IV3.version_string == "3.3-IV3"
    assert MV.IBP_3_3_IV3.release == "3.3"
    assert c.MINIMUM_BOOTSTRAP_VERSION is MV.IBP_3_3_IV0
    assert c.MIGRATION_MINIMUM is MV.IBP_3_4_IV0
    assert c.LATEST_PRODUCTION is MV.IBP_3_9_IV0
    assert not MV.IBP_3_3_IV3.is_migration_supported()
    assert MV.IBP_3_4_IV0.is_migration_supported()
    assert MV.IBP_3_5_IV0.is_at_least(MV.IBP_3_4_IV0)
    assert not MV.IBP_3_3_IV0.is_at_least(MV.IBP_3_4_IV0)


def test_parsing() -> None:
    assert c.from_feature_level(7) is MV.IBP_3_3_IV3
    assert c.from_version_string("3.3-IV3") is MV.IBP_3_3_IV3
    assert c.from_version_string("3.3") is MV.IBP_3_3_IV3  # bare release: its last IV, as in Kafka
    for bad in (0, -1, 999, True, "7"):
        with pytest.raises(ValueError, match="feature level"):
            c.from_feature_level(bad)  # type: ignore[arg-type]
    for text in ("3.3-IV9", "2.8-IV1", "", "banana"):
        with pytest.raises(ValueError, match=r"not a valid metadata\.version"):
            c.from_version_string(text)


def test_kafka_lossless_rule() -> None:
    # 3.1-IV0 changed nothing: 3.1 -> 3.0 is lossless; 3.2-IV0 did: 3.2 -> 3.1 is lossy.
    assert c.is_lossless_downgrade(MV.IBP_3_1_IV0, MV.IBP_3_0_IV1)
    assert not c.is_lossless_downgrade(MV.IBP_3_2_IV0, MV.IBP_3_1_IV0)
    # 3.9 -> 3.7-IV2: 3.7-IV3, 3.7-IV4, 3.8, 3.9 changed nothing.
    assert c.is_lossless_downgrade(MV.IBP_3_9_IV0, MV.IBP_3_7_IV2)
    assert not c.is_lossless_downgrade(MV.IBP_3_9_IV0, MV.IBP_3_7_IV1)
    assert not c.check_if_metadata_changed(MV.IBP_3_5_IV0, MV.IBP_3_5_IV0)
    # symmetric, as checkIfMetadataChanged orders its arguments
    assert c.check_if_metadata_changed(MV.IBP_3_3_IV0, MV.IBP_3_4_IV0)
    assert c.check_if_metadata_changed(MV.IBP_3_4_IV0, MV.IBP_3_3_IV0)


def test_kip_example_downgrades() -> None:
    ex = c.EXAMPLE_CATALOG
    assert ex.is_lossless(5, 4)
    for target in (1, 2, 3):
        assert ex.is_lossless(3, target)
    for source in (4, 5):
        for target in (1, 2, 3):
            assert not ex.is_lossless(source, target)
    assert ex.parse("V4") == 4 and ex.label(4) == "V4"
    with pytest.raises(ValueError, match="not valid in catalog example"):
        ex.parse("V6")
    with pytest.raises(ValueError, match="feature level 6"):
        ex.is_lossless(6, 1)
    assert c.catalog_named("example") is ex
    with pytest.raises(ValueError, match=r"unknown metadata\.version catalog"):
        c.catalog_named("nope")
