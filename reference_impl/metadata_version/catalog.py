"""The ``metadata.version`` catalogs: Apache Kafka's real one and the KIP-778 five-version example.

Sources (facts only; the code is our own):
- Kafka ``server-common/src/main/java/org/apache/kafka/server/common/MetadataVersion.java`` on the ``3.9``
  branch (every member, the KRaft levels 1..23, ``fromVersionString``, ``fromFeatureLevel``, the predicates)
  and Kafka 4.0/4.1 for levels 22..27: ``MetadataVersionTest`` of early 4.1 trunk (4.0-IV0..4.0-IV3 and
  4.1-IV0, "4.0-IV3 is the latest production version in the 4.0 line", ELR from 4.0-IV1) and the 4.x
  upgrade notes (``IBP_4_0_IV1(23, "4.0", "IV1", true)``).
- Levels 28..34 (4.2-IV0 .. 4.5-IV0) as Kafka's own released classes report them: ``MetadataVersion.VERSIONS``
  of the published ``kafka-server-common`` jars of 4.1.2, 4.2.2, 4.3.2 and 4.4.0, read through the Kafka
  oracle's ``catalog`` question (kafka_oracle/metadata_version, ``rollcheck kafka metadata_version``). Each
  level's flag is the value of the first release where it is production (4.3-IV0 reads false in 4.2.2, where it
  is still in development, and true from 4.3.2); 4.5-IV0 is 4.4.0's testing level, with 4.4.0's flag.
- Kafka 4.0's own ``MetadataVersion.java``, read on the 4.0 branch at 4ae681446f18f9a6d7a59f317013ef82379a4ba4
  (2025-03-16, the branch head at the 4.0.0 release): members 3.3-IV3 (``MINIMUM_VERSION``) .. 4.1-IV0
  (``latestTesting()``), ``LATEST_PRODUCTION`` 4.0-IV3; each has the level and ``didMetadataChange`` given here.
- KIP-778 "Downgrades": the V1..V5 example, where V4 is the one version that is not backwards compatible.

Both catalogs answer the same small interface (:class:`VersionCatalog`) over plain ``int`` feature levels,
which is what a system state stores (states hold ints, never catalog objects).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol

FEATURE_NAME = "metadata.version"
DEFAULT_RELEASE = "3.9"  # the Kafka software release whose constants apply when none is named


class MetadataVersion(enum.Enum):
    """One member per ``MetadataVersion`` of Apache Kafka, in Kafka's (ordinal) order.

    Value: (feature level, release, sub-version, did the metadata format change). Members before 3.0-IV1
    are the ZooKeeper-era inter-broker protocol versions: feature level -1, not usable in KRaft, and (as
    Kafka's three-argument constructor does) ``didMetadataChange`` true. The flag is Kafka's
    ``didMetadataChange``; a downgrade across a version with it set is lossy. Final released values are
    used: on the 3.9 branch the then-unstable 4.0 levels read ``IBP_4_0_IV0(22, "4.0", "IV0", true)``
    (ELR) and ``IBP_4_0_IV1(23, "4.0", "IV1", false)``; Kafka 4.0 moved ELR (and the flag) to 4.0-IV1.
    """

    IBP_0_8_0 = (-1, "0.8.0", "", True)
    IBP_0_8_1 = (-1, "0.8.1", "", True)
    IBP_0_8_2 = (-1, "0.8.2", "", True)
    IBP_0_9_0 = (-1, "0.9.0", "", True)
    IBP_0_10_0_IV0 = (-1, "0.10.0", "IV0", True)
    IBP_0_10_0_IV1 = (-1, "0.10.0", "IV1", True)
    IBP_0_10_1_IV0 = (-1, "0.10.1", "IV0", True)
    IBP_0_10_1_IV1 = (-1, "0.10.1", "IV1", True)
    IBP_0_10_1_IV2 = (-1, "0.10.1", "IV2", True)
    IBP_0_10_2_IV0 = (-1, "0.10.2", "IV0", True)
    IBP_0_11_0_IV0 = (-1, "0.11.0", "IV0", True)
    IBP_0_11_0_IV1 = (-1, "0.11.0", "IV1", True)
    IBP_0_11_0_IV2 = (-1, "0.11.0", "IV2", True)
    IBP_1_0_IV0 = (-1, "1.0", "IV0", True)
    IBP_1_1_IV0 = (-1, "1.1", "IV0", True)
    IBP_2_0_IV0 = (-1, "2.0", "IV0", True)
    IBP_2_0_IV1 = (-1, "2.0", "IV1", True)
    IBP_2_1_IV0 = (-1, "2.1", "IV0", True)
    IBP_2_1_IV1 = (-1, "2.1", "IV1", True)
    IBP_2_1_IV2 = (-1, "2.1", "IV2", True)
    IBP_2_2_IV0 = (-1, "2.2", "IV0", True)
    IBP_2_2_IV1 = (-1, "2.2", "IV1", True)
    IBP_2_3_IV0 = (-1, "2.3", "IV0", True)
    IBP_2_3_IV1 = (-1, "2.3", "IV1", True)
    IBP_2_4_IV0 = (-1, "2.4", "IV0", True)
    IBP_2_4_IV1 = (-1, "2.4", "IV1", True)
    IBP_2_5_IV0 = (-1, "2.5", "IV0", True)
    IBP_2_6_IV0 = (-1, "2.6", "IV0", True)
    IBP_2_7_IV0 = (-1, "2.7", "IV0", True)  # feature versioning (KIP-584)
    IBP_2_7_IV1 = (-1, "2.7", "IV1", True)
    IBP_2_7_IV2 = (-1, "2.7", "IV2", True)
    IBP_2_8_IV0 = (-1, "2.8", "IV0", True)
    IBP_2_8_IV1 = (-1, "2.8", "IV1", True)
    IBP_3_0_IV0 = (-1, "3.0", "IV0", True)
    IBP_3_0_IV1 = (1, "3.0", "IV1", True)  # first KRaft version; preview clusters bootstrap here (KIP-778)
    IBP_3_1_IV0 = (2, "3.1", "IV0", False)
    IBP_3_2_IV0 = (3, "3.2", "IV0", True)
    IBP_3_3_IV0 = (4, "3.3", "IV0", False)  # metadata.version stored in the log (KIP-778)
    IBP_3_3_IV1 = (5, "3.3", "IV1", True)  # NoopRecord (KIP-835)
    IBP_3_3_IV2 = (6, "3.3", "IV2", True)  # BrokerRegistrationChangeRecord
    IBP_3_3_IV3 = (7, "3.3", "IV3", True)  # InControlledShutdown (KIP-841)
    IBP_3_4_IV0 = (8, "3.4", "IV0", True)  # ZK to KRaft migration (KIP-866)
    IBP_3_5_IV0 = (9, "3.5", "IV0", False)
    IBP_3_5_IV1 = (10, "3.5", "IV1", False)
    IBP_3_5_IV2 = (11, "3.5", "IV2", True)  # SCRAM in KRaft
    IBP_3_6_IV0 = (12, "3.6", "IV0", False)
    IBP_3_6_IV1 = (13, "3.6", "IV1", True)  # metadata transactions
    IBP_3_6_IV2 = (14, "3.6", "IV2", True)  # delegation tokens in KRaft
    IBP_3_7_IV0 = (15, "3.7", "IV0", True)  # controller registration (KIP-919)
    IBP_3_7_IV1 = (16, "3.7", "IV1", False)
    IBP_3_7_IV2 = (17, "3.7", "IV2", True)  # JBOD in KRaft
    IBP_3_7_IV3 = (18, "3.7", "IV3", False)
    IBP_3_7_IV4 = (19, "3.7", "IV4", False)
    IBP_3_8_IV0 = (20, "3.8", "IV0", False)
    IBP_3_9_IV0 = (21, "3.9", "IV0", False)
    IBP_4_0_IV0 = (22, "4.0", "IV0", False)  # 3.9 branch: true (ELR was planned here)
    IBP_4_0_IV1 = (23, "4.0", "IV1", True)  # ELR (KIP-966); 3.9 branch: false
    IBP_4_0_IV2 = (24, "4.0", "IV2", False)
    IBP_4_0_IV3 = (25, "4.0", "IV3", False)
    IBP_4_1_IV0 = (26, "4.1", "IV0", False)
    IBP_4_1_IV1 = (27, "4.1", "IV1", False)
    IBP_4_2_IV0 = (28, "4.2", "IV0", False)
    IBP_4_2_IV1 = (29, "4.2", "IV1", False)
    IBP_4_3_IV0 = (30, "4.3", "IV0", True)  # 4.2.2 (unstable there): false
    IBP_4_4_IV0 = (31, "4.4", "IV0", False)
    IBP_4_4_IV1 = (32, "4.4", "IV1", True)
    IBP_4_4_IV2 = (33, "4.4", "IV2", True)
    IBP_4_5_IV0 = (34, "4.5", "IV0", False)  # testing only, as of 4.4.0

    @property
    def feature_level(self) -> int:
        return self.value[0]

    @property
    def release(self) -> str:
        return self.value[1]

    @property
    def version_string(self) -> str:
        # Kafka's ibpVersion: "0.8.0" when there is no sub-version, "3.3-IV3" otherwise.
        return f"{self.value[1]}-{self.value[2]}" if self.value[2] else self.value[1]

    @property
    def did_metadata_change(self) -> bool:
        return self.value[3]

    @property
    def ordinal(self) -> int:
        return _ORDINAL[self]

    def feature_name(self) -> str:
        return FEATURE_NAME

    def version(self) -> str:
        """MetadataVersion.version(): "3.3-IV3"."""
        return self.version_string

    def short_version(self) -> str:
        """MetadataVersion.shortVersion(): the release, "3.3"."""
        return self.release

    def previous(self) -> MetadataVersion | None:
        """MetadataVersion.previous(): the member before this one, None for the first (Optional.empty)."""
        return VERSIONS[self.ordinal - 1] if self.ordinal > 0 else None

    # Kafka compares enum ordinals, not feature levels (every member before 3.0-IV1 has level -1).
    def is_at_least(self, other: MetadataVersion) -> bool:
        return self.ordinal >= other.ordinal

    def is_less_than(self, other: MetadataVersion) -> bool:
        return self.ordinal < other.ordinal

    def is_production(self, release: str = DEFAULT_RELEASE) -> bool:
        """MetadataVersion.isProduction() of the given Kafka release (its LATEST_PRODUCTION differs)."""
        return self.ordinal <= kafka_release(release).latest_production.ordinal

    def is_kraft_supported(self) -> bool:
        return self.feature_level > 0

    def is_feature_versioning_supported(self) -> bool:
        return self.is_at_least(MetadataVersion.IBP_2_7_IV0)

    def is_leader_recovery_supported(self) -> bool:
        return self.is_at_least(MetadataVersion.IBP_3_2_IV0)

    def is_no_op_record_supported(self) -> bool:
        return self.is_at_least(MetadataVersion.IBP_3_3_IV1)

    def is_broker_registration_change_record_supported(self) -> bool:
        return self.is_at_least(MetadataVersion.IBP_3_3_IV2)

    def is_in_controlled_shutdown_state_supported(self) -> bool:
        return self.is_at_least(MetadataVersion.IBP_3_3_IV3)

    def is_api_forwarding_enabled(self) -> bool:
        return self.is_at_least(MetadataVersion.IBP_3_4_IV0)

    def is_migration_supported(self) -> bool:
        # MetadataVersion.isMigrationSupported (from 3.4-IV0). Kafka 4.x removed the ZooKeeper migration
        # itself but kept this predicate for the RegisterBrokerRecord version (isMigratingZkBroker field).
        return self.is_at_least(MIGRATION_MINIMUM)

    def is_scram_supported(self) -> bool:
        return self.is_at_least(MetadataVersion.IBP_3_5_IV2)

    def is_leader_epoch_bump_required_on_isr_shrink(self) -> bool:
        return not self.is_at_least(MetadataVersion.IBP_3_6_IV0)

    def is_metadata_transaction_supported(self) -> bool:
        return self.is_at_least(MetadataVersion.IBP_3_6_IV1)

    def is_delegation_token_supported(self) -> bool:
        return self.is_at_least(MetadataVersion.IBP_3_6_IV2)

    def is_controller_registration_supported(self) -> bool:
        return self.is_at_least(MetadataVersion.IBP_3_7_IV0)  # KIP-919

    def is_directory_assignment_supported(self) -> bool:
        return self.is_at_least(MetadataVersion.IBP_3_7_IV2)

    def is_elr_supported(self) -> bool:
        # Kafka 4.0's numbering (MetadataVersionTest: isAtLeast(IBP_4_0_IV1)); the 3.9 branch said 4.0-IV0.
        return self.is_at_least(MetadataVersion.IBP_4_0_IV1)

    def register_broker_record_version(self) -> int:
        if self.is_directory_assignment_supported():
            return 3  # logDirs
        if self.is_migration_supported():
            return 2  # isMigratingZkBroker
        if self.is_in_controlled_shutdown_state_supported():
            return 1
        return 0

    def register_controller_record_version(self) -> int:
        if self.is_controller_registration_supported():
            return 0
        raise RuntimeError(f"Controller registration is not supported in MetadataVersion {self}")

    def partition_record_version(self) -> int:
        if self.is_elr_supported():
            return 2
        return 1 if self.is_directory_assignment_supported() else 0

    def partition_change_record_version(self) -> int:
        return self.partition_record_version()  # the same rule in Kafka

    def __str__(self) -> str:
        return self.version_string


VERSIONS: tuple[MetadataVersion, ...] = tuple(MetadataVersion)  # MetadataVersion.VERSIONS, in ordinal order
_ORDINAL: dict[MetadataVersion, int] = {mv: i for i, mv in enumerate(VERSIONS)}
KRAFT_VERSIONS: tuple[MetadataVersion, ...] = tuple(mv for mv in VERSIONS if mv.is_kraft_supported())

MINIMUM_KRAFT_VERSION = MetadataVersion.IBP_3_0_IV1
# MetadataVersion.MINIMUM_BOOTSTRAP_VERSION (3.9): the first version that stores metadata.version in the log.
MINIMUM_BOOTSTRAP_VERSION = MetadataVersion.IBP_3_3_IV0
MIGRATION_MINIMUM = MetadataVersion.IBP_3_4_IV0
# Kafka 4.x drops every level below 3.3-IV3 (MetadataVersion.MINIMUM_VERSION; the 4.x upgrade notes: "the
# software and metadata versions must be at least 3.3.x").
MINIMUM_VERSION_4_X = MetadataVersion.IBP_3_3_IV3
LATEST_PRODUCTION_3_9 = MetadataVersion.IBP_3_9_IV0  # MetadataVersion.LATEST_PRODUCTION on branch 3.9
# Kafka 4.0.0 ships 4.0-IV3 as LATEST_PRODUCTION ("4.0-IV3 is the latest production version in the 4.0 line").
LATEST_PRODUCTION_4_0 = MetadataVersion.IBP_4_0_IV3
LATEST_PRODUCTION = LATEST_PRODUCTION_3_9
LATEST = KRAFT_VERSIONS[-1]
# Kafka 4.0's MetadataVersion enum runs from IBP_3_3_IV3 to IBP_4_1_IV0 (its latestTesting()): the 4.0 branch at
# 4ae681446f18f9a6d7a59f317013ef82379a4ba4, server-common/.../MetadataVersion.java.
LATEST_TESTING_4_0 = MetadataVersion.IBP_4_1_IV0
# Release 3.9's enum, as the reference's 3.9 rules model it, ends at 4.1-IV1 (Kafka 3.9's own ended at 4.0-IV1; the
# rules carry 4.0-IV2 .. 4.1-IV1 as further testing levels, which the Z3 decision rules and the spec share).
LATEST_TESTING_3_9 = MetadataVersion.IBP_4_1_IV1


@dataclass(frozen=True)
class KafkaRelease:
    """The version bounds one Kafka software release accepts (used by the ``kafka`` profile).

    ``first`` and ``latest_testing`` bound the release's own ``MetadataVersion.VERSIONS``: Kafka 4.0's enum starts
    at ``MINIMUM_VERSION`` (3.3-IV3) and ends at 4.1-IV0. Release 3.9 keeps the ZooKeeper-era members and ends at
    4.1-IV1 (``LATEST_TESTING_3_9``)."""

    name: str
    minimum: MetadataVersion
    latest_production: MetadataVersion
    supports_migration: bool
    first: MetadataVersion = VERSIONS[0]
    latest_testing: MetadataVersion = LATEST
    # The rules the release follows where it differs from the others ("3.3", "3.9", "4.0"): the 4.x lines after
    # 4.0 follow 4.0's (one error for the whole request, no level below 3.3-IV3) with their own catalog bounds.
    rules: str = ""
    # fromVersionString(String, boolean unstableFeatureVersionsEnabled), new in 4.2: with the flag off a member that
    # is not production is unknown, and a refusal lists what it knows ("Unknown metadata.version '9.9'. Supported
    # metadata.version are: 3.3-IV3, ..."), read from the 4.2.2 and 4.4.0 jars' MetadataVersion. FeatureCommand
    # passes true; StorageTool's format passes the node's unstable.feature.versions.enable.
    stable_parse: bool = False
    # From 4.2 FeatureControlManager refuses a downgrade as "Unsupported metadata.version downgrade from 31 to 29.
    # <reason>" (unsupportedMetadataDowngrade), where earlier lines say "Invalid metadata.version 29. <reason>"
    # (kafka-metadata 4.1.2 and 4.2.2 jars).
    downgrade_words: bool = False

    @property
    def line_rules(self) -> str:
        return self.rules or self.name


KAFKA_RELEASES: dict[str, KafkaRelease] = {
    # Kafka 3.3-3.6: no production flag yet (every member is production); the line's first release, 3.3, ends at
    # 3.3-IV3 (MetadataVersion.latest() in server-common/.../MetadataVersion.java at 3.3.2).
    "3.3": KafkaRelease("3.3", MINIMUM_KRAFT_VERSION, MetadataVersion.IBP_3_3_IV3, supports_migration=False,
                        latest_testing=MetadataVersion.IBP_3_3_IV3),
    "3.9": KafkaRelease("3.9", MINIMUM_KRAFT_VERSION, LATEST_PRODUCTION_3_9, supports_migration=True,
                        latest_testing=LATEST_TESTING_3_9),
    "4.0": KafkaRelease("4.0", MINIMUM_VERSION_4_X, LATEST_PRODUCTION_4_0, supports_migration=False,
                        first=MINIMUM_VERSION_4_X, latest_testing=LATEST_TESTING_4_0),
    # 4.1 .. 4.4: LATEST_PRODUCTION and latestTesting() of each line's newest served release (4.1.2, 4.2.2, 4.3.2,
    # 4.4.0), as their kafka-server-common jars answer the oracle's catalog question.
    "4.1": KafkaRelease("4.1", MINIMUM_VERSION_4_X, MetadataVersion.IBP_4_1_IV1, supports_migration=False,
                        first=MINIMUM_VERSION_4_X, latest_testing=MetadataVersion.IBP_4_2_IV1, rules="4.0"),
    "4.2": KafkaRelease("4.2", MINIMUM_VERSION_4_X, MetadataVersion.IBP_4_2_IV1, supports_migration=False,
                        first=MINIMUM_VERSION_4_X, latest_testing=MetadataVersion.IBP_4_3_IV0, rules="4.0",
                        stable_parse=True, downgrade_words=True),
    "4.3": KafkaRelease("4.3", MINIMUM_VERSION_4_X, MetadataVersion.IBP_4_3_IV0, supports_migration=False,
                        first=MINIMUM_VERSION_4_X, latest_testing=MetadataVersion.IBP_4_4_IV0, rules="4.0",
                        stable_parse=True, downgrade_words=True),
    "4.4": KafkaRelease("4.4", MINIMUM_VERSION_4_X, MetadataVersion.IBP_4_4_IV2, supports_migration=False,
                        first=MINIMUM_VERSION_4_X, latest_testing=MetadataVersion.IBP_4_5_IV0, rules="4.0",
                        stable_parse=True, downgrade_words=True),
}


def kafka_release(name: str) -> KafkaRelease:
    try:
        return KAFKA_RELEASES[name]
    except KeyError:
        raise ValueError(f"unknown Kafka release {name!r}; choose one of {sorted(KAFKA_RELEASES)}") from None


def rules_of(release: str) -> str:
    """The rules a Kafka release line follows ("3.3", "3.9" or "4.0"; 4.1 .. 4.4 follow 4.0's)."""
    return kafka_release(release).line_rules


def latest_production(release: str = DEFAULT_RELEASE) -> MetadataVersion:
    """MetadataVersion.latestProduction() of the given release."""
    return kafka_release(release).latest_production


def latest_testing(release: str | None = None) -> MetadataVersion:
    """MetadataVersion.latestTesting(): the last member (here 4.5-IV0, Kafka 4.4's testing level). With a release,
    that release's last member: 4.1-IV0 for 4.0, 4.5-IV0 for 4.4; release 3.9 ends at 4.1-IV1 (LATEST_TESTING_3_9)."""
    return LATEST if release is None else kafka_release(release).latest_testing


def versions(release: str | None = None) -> tuple[MetadataVersion, ...]:
    """MetadataVersion.VERSIONS: every member, in ordinal order; with a release, the members that release's
    enum has (Kafka 4.0: 3.3-IV3 .. 4.1-IV0)."""
    if release is None:
        return VERSIONS
    r = kafka_release(release)
    return VERSIONS[r.first.ordinal:r.latest_testing.ordinal + 1]


def _ibp_versions(release: str) -> dict[str, MetadataVersion]:
    # MetadataVersion's static block: every version string, plus each bare release mapped to its last
    # *production* version (so a release whose versions are all unstable has no bare entry).
    # The release's own members only: Kafka 4.0's enum knows nothing below 3.3-IV3 nor above 4.1-IV0.
    members = versions(release)
    out = {mv.version_string: mv for mv in members}
    bare = {mv.release: mv for mv in members if mv.is_production(release)}
    out.update(bare)
    return out


_IBP_VERSIONS: dict[str, dict[str, MetadataVersion]] = {r: _ibp_versions(r) for r in KAFKA_RELEASES}


def _java_split_on_dots(text: str) -> list[str]:
    # String.split("\\."): trailing empty strings are removed. One difference, a text of dots alone ([""] here,
    # [] in Java), is invisible to from_version_string: it reads the segments only when there are more than it
    # wants (two or three).
    return text.rstrip(".").split(".")


def from_feature_level(level: int, release: str = DEFAULT_RELEASE, wording: str | None = None) -> MetadataVersion:
    """MetadataVersion.fromFeatureLevel: the first member with this level (so -1 gives 0.8.0, as in Kafka 3.9);
    ``ValueError`` with Kafka's text for a level no member has. Only the release's own members count: Kafka
    4.0's enum runs from ``MINIMUM_VERSION`` (3.3-IV3) to 4.1-IV0, so it has no level -1 and no 4.1-IV1. The
    words are the release line's (``wording`` names another line's): "with metadata version" up to 3.7, "with
    feature level" from 3.8, and from 4.0 the valid range after them."""
    if isinstance(level, bool) or not isinstance(level, int):
        raise ValueError(f"No MetadataVersion with feature level {level!r}")
    floor = kafka_release(release).minimum
    for mv in versions(release):
        if mv.feature_level == level:
            return mv
    if rules_of(release) == "4.0":  # 4.0 on name the valid range (MetadataVersion.fromFeatureLevel; 4.0 and 4.4 jars)
        raise ValueError(f"No MetadataVersion with feature level {level}. Valid feature levels are from "
                         f"{floor.feature_level} to {latest_testing(release).feature_level}.")
    if rules_of(wording or release) == "3.3":  # 3.3 .. 3.7's words (server-common MetadataVersion.java at 3.7)
        raise ValueError(f"No MetadataVersion with metadata version {level}")
    raise ValueError(f"No MetadataVersion with feature level {level}")


def from_version_string(text: str, release: str = DEFAULT_RELEASE, unstable: bool = True) -> MetadataVersion:
    """MetadataVersion.fromVersionString: "3.3-IV3", or a bare release "3.3" (its last production IV in
    ``release``). Only the first two dot-separated segments count (three when the text starts with "0."),
    so "3.3.1" is 3.3-IV3 and "0.10.0.1" is 0.10.0-IV1; nothing is stripped. From 4.2 (``stable_parse``) a member
    that is not production is unknown unless ``unstable``; earlier releases take no such flag."""
    if not isinstance(text, str):
        raise ValueError(f"Version {text!r} is not a valid version")
    r = kafka_release(release)
    segments = _java_split_on_dots(text)
    wanted = 3 if text.startswith("0.") else 2
    key = text if wanted >= len(segments) else ".".join(segments[:wanted])
    mv = _IBP_VERSIONS[r.name].get(key)
    if r.stable_parse:
        known = [m for m in versions(release) if unstable or m.is_production(release)]
        if mv is None or mv not in known:
            raise ValueError(f"Unknown metadata.version '{text}'. Supported metadata.version are: "
                             + ", ".join(str(m) for m in known))
        return mv
    if mv is None:
        if r.line_rules == "4.0":  # Kafka 4.0 and 4.1 name the bounds (MetadataVersion.fromVersionString)
            raise ValueError(f"Version {text} is not a valid version. The minimum version is "
                             f"{r.first} and the maximum version is {latest_testing(release)}")
        raise ValueError(f"Version {text} is not a valid version")
    return mv


def metadata_versions_to_string(first: MetadataVersion, last: MetadataVersion) -> str:
    """FeatureCommand.metadataVersionsToString: "3.3-IV0, 3.3-IV1, ..." from first to last inclusive."""
    return ", ".join(str(mv) for mv in VERSIONS[first.ordinal:last.ordinal + 1])


def check_if_metadata_changed(source: MetadataVersion, target: MetadataVersion) -> bool:
    """Kafka's ``MetadataVersion.checkIfMetadataChanged``: did any version in (low, high] change the format
    (walked by ordinal, so it also answers for the ZooKeeper-era members)."""
    low, high = sorted((source, target), key=lambda mv: mv.ordinal)
    return any(mv.did_metadata_change for mv in VERSIONS[low.ordinal + 1:high.ordinal + 1])


def is_lossless_downgrade(source: MetadataVersion, target: MetadataVersion) -> bool:
    return not check_if_metadata_changed(source, target)


class VersionCatalog(Protocol):
    """What the API and system levels need from a catalog, over plain int feature levels."""

    name: str

    @property
    def levels(self) -> tuple[int, ...]: ...

    def label(self, level: int) -> str: ...

    def parse(self, text: str, release: str | None = None) -> int: ...

    def did_metadata_change(self, level: int) -> bool: ...

    def is_lossless(self, source: int, target: int) -> bool: ...


@dataclass(frozen=True)
class Catalog:
    """An ordered list of versions with their labels and format-change flags; implements VersionCatalog."""

    name: str
    entries: tuple[tuple[int, str, bool], ...]  # (feature level, label, did the metadata format change)
    # The lowest level an update may set under the kafka profile (MINIMUM_BOOTSTRAP_VERSION). No default: each
    # catalog states it (a default no catalog used was a constant nothing could check).
    bootstrap_floor: int
    # The first level with controller registrations (IBP_3_7_IV0, KIP-919): from it on, Kafka checks
    # every voter's supported range before a change; below it, only its own.
    controller_registration_level: int
    # Per Kafka release: the lowest level that exists (4.0: MINIMUM_VERSION) and LATEST_PRODUCTION; a
    # release not listed uses the catalog's first and last level.
    release_minimums: tuple[tuple[str, int], ...] = ()
    release_latest_production: tuple[tuple[str, int], ...] = ()
    # Per Kafka release: its latestTesting() level (4.0: 4.1-IV0); a release not listed uses the last level.
    release_latest_testing: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        levels = [level for level, _, _ in self.entries]
        if not levels or levels != list(range(levels[0], levels[0] + len(levels))):
            raise ValueError(f"catalog {self.name}: feature levels must be consecutive, got {levels}")

    @property
    def levels(self) -> tuple[int, ...]:
        return tuple(level for level, _, _ in self.entries)

    @property
    def minimum(self) -> int:
        return self.entries[0][0]

    @property
    def latest(self) -> int:
        return self.entries[-1][0]

    def _entry(self, level: int) -> tuple[int, str, bool]:
        if isinstance(level, bool) or not isinstance(level, int) or not self.minimum <= level <= self.latest:
            raise ValueError(
                f"No {FEATURE_NAME} with feature level {level!r} in catalog {self.name} "
                f"(known levels: {self.minimum}..{self.latest})"
            )
        return self.entries[level - self.minimum]

    def label(self, level: int) -> str:
        return self._entry(level)[1]

    def minimum_for(self, release: str) -> int:
        return dict(self.release_minimums).get(release, self.minimum)

    def latest_production_for(self, release: str) -> int:
        return dict(self.release_latest_production).get(release, self.latest)

    def latest_testing_for(self, release: str) -> int:
        return dict(self.release_latest_testing).get(release, self.latest)

    def is_production(self, level: int, release: str) -> bool:
        return level <= self.latest_production_for(release)

    def parse(self, text: str, release: str | None = None) -> int:
        for level, label, _ in self.entries:
            if label == text:
                return level
        raise ValueError(
            f"Version {text!r} is not valid in catalog {self.name}: expected one of "
            + ", ".join(label for _, label, _ in self.entries)
        )

    def did_metadata_change(self, level: int) -> bool:
        return self._entry(level)[2]

    def controller_registration_supported(self, level: int) -> bool:
        return level >= self.controller_registration_level

    def is_lossless(self, source: int, target: int) -> bool:
        """KIP-778 "Downgrades": lossless iff no version in (target, source] changed the format."""
        self._entry(source)
        self._entry(target)
        low, high = min(source, target), max(source, target)
        return not any(self.did_metadata_change(level) for level in range(low + 1, high + 1))


@dataclass(frozen=True)
class KafkaCatalog(Catalog):
    """Kafka's catalog: parses as ``MetadataVersion.fromVersionString`` does (bare releases, extra segments)."""

    def parse(self, text: str, release: str | None = None) -> int:
        # featureLevel() of the parsed version: -1 for a ZooKeeper-era one, which callers then refuse. Without a
        # release, a label of the catalog names its level (a level newer than 3.9's enum included); any other text
        # is read as 3.9's fromVersionString reads it.
        if release is None:
            for level, label, _ in self.entries:
                if label == text:
                    return level
        return from_version_string(text, release or DEFAULT_RELEASE).feature_level


KAFKA_CATALOG = KafkaCatalog(
    "kafka",
    tuple((mv.feature_level, mv.version_string, mv.did_metadata_change) for mv in KRAFT_VERSIONS),
    bootstrap_floor=MINIMUM_BOOTSTRAP_VERSION.feature_level,
    controller_registration_level=MetadataVersion.IBP_3_7_IV0.feature_level,
    release_minimums=tuple((r.name, r.minimum.feature_level) for r in KAFKA_RELEASES.values()),
    release_latest_production=tuple((r.name, r.latest_production.feature_level) for r in KAFKA_RELEASES.values()),
    release_latest_testing=tuple((r.name, r.latest_testing.feature_level) for r in KAFKA_RELEASES.values()),
)

# KIP-778 "Downgrades": V1..V5 with isBackwardsCompatible = true except V4 ("New metadata record type
# Bar"); not backwards compatible is the same as Kafka's didMetadataChange.
EXAMPLE_CATALOG = Catalog(
    "example",
    (
        (1, "V1", False),  # initial version
        (2, "V2", False),  # new RPC X
        (3, "V3", False),  # new optional field on Foo
        (4, "V4", True),  # new record type Bar
        (5, "V5", False),  # new optional field on Bar
    ),
    # The KIP's example has no bootstrap floor and no controller registration history: the kafka profile
    # treats V1 as the floor and assumes controller registration (so it checks every voter).
    bootstrap_floor=1,
    controller_registration_level=1,
)

CATALOGS: dict[str, Catalog] = {c.name: c for c in (KAFKA_CATALOG, EXAMPLE_CATALOG)}


def catalog_named(name: str) -> Catalog:
    try:
        return CATALOGS[name]
    except KeyError:
        raise ValueError(f"unknown metadata.version catalog {name!r}; choose one of {sorted(CATALOGS)}") from None
