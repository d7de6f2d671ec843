"""The metadata.version catalogs: Kafka's MetadataVersion facts and the KIP-778 V1..V5 example."""

from __future__ import annotations

import pytest

from reference_impl.metadata_version import catalog as c
from reference_impl.metadata_version.catalog import MetadataVersion as MV


def test_levels_are_consecutive_from_one() -> None:
    # MetadataVersionTest.testKRaftFeatureLevels*: -1 before 3.0-IV1, then 1, 2, ... by ordinal.
    first = MV.IBP_3_0_IV1.ordinal
    assert all(mv.feature_level == -1 and not mv.is_kraft_supported() for mv in c.VERSIONS[:first])
    assert [mv.feature_level for mv in c.VERSIONS[first:]] == list(range(1, len(c.VERSIONS) - first + 1))
    assert c.MINIMUM_KRAFT_VERSION.feature_level == 1
    assert c.KAFKA_CATALOG.levels == tuple(range(1, 35)) == tuple(mv.feature_level for mv in c.KRAFT_VERSIONS)
    assert c.LATEST is MV.IBP_4_5_IV0 and c.latest_testing() is MV.IBP_4_5_IV0
    assert c.latest_testing("3.9") is MV.IBP_4_1_IV1  # the 3.9 rules' enum ends where it did


# What each 4.x line's kafka-server-common jar answers (MetadataVersion.VERSIONS, latestProduction(),
# latestTesting(), fromVersionString, fromFeatureLevel; jshell on 4.1.2, 4.2.2 and 4.4.0, and the oracle's catalog
# question): (line, latest production, latest testing).
LINES_4X = (("4.1", "4.1-IV1", "4.2-IV1"), ("4.2", "4.2-IV1", "4.3-IV0"), ("4.3", "4.3-IV0", "4.4-IV0"),
            ("4.4", "4.4-IV2", "4.5-IV0"))


@pytest.mark.parametrize(("line", "production", "testing"), LINES_4X)
def test_the_4x_lines_bounds_are_their_jars(line: str, production: str, testing: str) -> None:
    assert str(c.latest_production(line)) == production and str(c.latest_testing(line)) == testing
    assert str(c.versions(line)[0]) == "3.3-IV3" and c.rules_of(line) == "4.0"
    assert str(c.from_feature_level(7, line)) == "3.3-IV3"
    top = c.latest_testing(line).feature_level
    with pytest.raises(ValueError, match=rf"^No MetadataVersion with feature level {top + 1}\. Valid feature "
                                         rf"levels are from 7 to {top}\.$"):
        c.from_feature_level(top + 1, line)


def test_fromversionstring_takes_the_unstable_flag_from_4_2() -> None:
    # 4.4.0: a testing member is unknown with unstable versions off, and the refusal lists what the parse knows.
    assert str(c.from_version_string("4.5-IV0", "4.4", unstable=True)) == "4.5-IV0"
    with pytest.raises(ValueError) as e:
        c.from_version_string("4.5-IV0", "4.4", unstable=False)
    assert str(e.value) == ("Unknown metadata.version '4.5-IV0'. Supported metadata.version are: "
                            + ", ".join(str(m) for m in c.versions("4.4")[:-1]))
    assert str(e.value).endswith("4.4-IV0, 4.4-IV1, 4.4-IV2")
    assert str(c.from_version_string("4.4", "4.4", unstable=False)) == "4.4-IV2"  # a bare line: its production IV
    with pytest.raises(ValueError, match=r"^Unknown metadata\.version '4\.3'"):
        c.from_version_string("4.3", "4.2", unstable=True)  # 4.2.2 has no production 4.3 member
    # 4.1 takes no flag: 4.2-IV1 (testing) parses, and a refusal names the bounds.
    assert str(c.from_version_string("4.2-IV1", "4.1", unstable=False)) == "4.2-IV1"
    with pytest.raises(ValueError) as refused:
        c.from_version_string("9.9", "4.1")
    assert str(refused.value) == ("Version 9.9 is not a valid version. The minimum version is 3.3-IV3 and the maximum "
                                  "version is 4.2-IV1")


def test_from_feature_level_words_follow_the_line() -> None:
    # "metadata version" up to 3.7 (server-common MetadataVersion.java at 3.7), "feature level" from 3.8.
    with pytest.raises(ValueError, match=r"^No MetadataVersion with metadata version 99$"):
        c.from_feature_level(99, "3.3")
    with pytest.raises(ValueError, match=r"^No MetadataVersion with metadata version 99$"):
        c.from_feature_level(99, "3.9", wording="3.3")
    with pytest.raises(ValueError, match=r"^No MetadataVersion with feature level 99$"):
        c.from_feature_level(99, "3.9")


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
    for bad in (0, 999, True, "7"):
        with pytest.raises(ValueError, match="feature level"):
            c.from_feature_level(bad)  # type: ignore[arg-type]
    for text in ("3.3-IV9", "8.0", "", "banana", "0.1.0"):
        with pytest.raises(ValueError, match="is not a valid version"):
            c.from_version_string(text)


def test_from_feature_level_like_kafka() -> None:
    with pytest.raises(ValueError) as e:
        c.from_feature_level(999)
    assert str(e.value) == "No MetadataVersion with feature level 999"
    # Kafka returns the first member with the level, so -1 is 0.8.0.
    assert c.from_feature_level(-1) is MV.IBP_0_8_0
    # Kafka 4.0 has no version below MINIMUM_VERSION (3.3-IV3).
    assert c.from_feature_level(7, "4.0") is MV.IBP_3_3_IV3
    with pytest.raises(ValueError, match=r"^No MetadataVersion with feature level 6\. Valid feature levels are from 7 "
                       r"to 26\.$"):
        c.from_feature_level(6, "4.0")


def test_from_version_string_like_kafka() -> None:
    # Only the first two segments count (three after "0."): MetadataVersionTest.testFromVersionString.
    assert c.from_version_string("3.3.1") is MV.IBP_3_3_IV3
    assert c.from_version_string("1.0.1") is MV.IBP_1_0_IV0
    assert c.from_version_string("0.8.0.1") is MV.IBP_0_8_0
    assert c.from_version_string("0.10.0") is MV.IBP_0_10_0_IV1
    assert c.from_version_string("0.10.0.0-IV0") is MV.IBP_0_10_0_IV1
    assert c.from_version_string("2.8-IV1") is MV.IBP_2_8_IV1 and c.from_version_string("3.0") is MV.IBP_3_0_IV1
    # A bare release maps only to production versions of the selected software release.
    assert c.from_version_string("3.9") is MV.IBP_3_9_IV0
    assert c.from_version_string("4.0-IV1") is MV.IBP_4_0_IV1  # a full version string is always known
    with pytest.raises(ValueError) as e:
        c.from_version_string("4.0")
    assert str(e.value) == "Version 4.0 is not a valid version"
    assert c.from_version_string("4.0", "4.0") is MV.IBP_4_0_IV3
    with pytest.raises(ValueError, match="is not a valid version"):
        c.from_version_string("4.1", "4.0")
    # No stripping, and Java's split drops trailing empty segments.
    for text in (" 3.3", "3.3 ", "3.3."):
        with pytest.raises(ValueError) as e:
            c.from_version_string(text)
        assert str(e.value) == f"Version {text} is not a valid version"
    assert c.KAFKA_CATALOG.parse("3.3") == 7 and c.KAFKA_CATALOG.parse("4.0", "4.0") == 25
    assert c.KAFKA_CATALOG.parse("2.8") == -1  # featureLevel() of a ZooKeeper-era version


def test_metadata_version_predicates() -> None:
    assert MV.IBP_3_3_IV3.version() == "3.3-IV3" and MV.IBP_3_3_IV3.short_version() == "3.3"
    assert MV.IBP_0_8_0.version() == "0.8.0" and str(MV.IBP_0_10_0_IV1) == "0.10.0-IV1"
    assert MV.IBP_3_0_IV1.previous() is MV.IBP_3_0_IV0 and MV.IBP_0_8_0.previous() is None
    assert MV.IBP_3_0_IV1.is_kraft_supported() and not MV.IBP_3_0_IV0.is_kraft_supported()
    assert MV.IBP_3_7_IV0.is_controller_registration_supported()
    assert not MV.IBP_3_6_IV2.is_controller_registration_supported()
    assert MV.IBP_4_0_IV1.is_elr_supported() and not MV.IBP_4_0_IV0.is_elr_supported()
    assert MV.IBP_3_6_IV2.is_delegation_token_supported() and not MV.IBP_3_6_IV1.is_delegation_token_supported()
    assert MV.IBP_0_8_0.is_less_than(MV.IBP_3_0_IV0)  # by ordinal: every ZooKeeper-era level is -1
    assert c.LATEST_PRODUCTION.is_production() and not c.latest_testing().is_production()
    assert not MV.IBP_4_0_IV3.is_production() and MV.IBP_4_0_IV3.is_production("4.0")
    assert c.latest_production() is MV.IBP_3_9_IV0 and c.latest_production("4.0") is MV.IBP_4_0_IV3
    assert [MV.IBP_3_3_IV2.register_broker_record_version(), MV.IBP_3_3_IV3.register_broker_record_version(),
            MV.IBP_3_4_IV0.register_broker_record_version(), MV.IBP_3_7_IV2.register_broker_record_version()] \
        == [0, 1, 2, 3]
    assert [mv.partition_record_version() for mv in (MV.IBP_3_7_IV1, MV.IBP_3_7_IV2, MV.IBP_4_0_IV1)] == [0, 1, 2]
    assert MV.IBP_3_7_IV0.register_controller_record_version() == 0
    with pytest.raises(RuntimeError, match=r"Controller registration is not supported in MetadataVersion 3\.6-IV2"):
        MV.IBP_3_6_IV2.register_controller_record_version()
    assert c.metadata_versions_to_string(MV.IBP_3_3_IV0, MV.IBP_3_3_IV3) == "3.3-IV0, 3.3-IV1, 3.3-IV2, 3.3-IV3"
    assert c.check_if_metadata_changed(MV.IBP_3_3_IV1, MV.IBP_3_3_IV0)
    assert not c.check_if_metadata_changed(MV.IBP_3_2_IV0, MV.IBP_3_2_IV0)


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
