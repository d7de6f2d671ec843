"""The ``metadata.version`` catalogs: Apache Kafka's real one and the KIP-778 five-version example.

Sources (facts only; the code is our own):
- Kafka ``server-common/src/main/java/org/apache/kafka/server/common/MetadataVersion.java`` at ``3.9`` and
  at trunk of Oct 2024 (levels 1..25); levels 26..27 (4.1) and the 4.x minimum from the same file in 4.1.0.
- KIP-778 "Downgrades": the V1..V5 example, where V4 is the one version that is not backwards compatible.

Both catalogs answer the same small interface (:class:`VersionCatalog`) over plain ``int`` feature levels,
which is what a system state stores (states hold ints, never catalog objects).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol

FEATURE_NAME = "metadata.version"


class MetadataVersion(enum.Enum):
    """One member per KRaft ``metadata.version`` (feature level >= 1) of Apache Kafka.

    Value: (feature level, release, sub-version, did the metadata format change). The flag is Kafka's
    ``didMetadataChange``; a downgrade across a version with it set is lossy. Final released values are
    used: on the 3.9 branch the then-unstable ``IBP_4_0_IV0`` still carried ``true``; 4.0 moved it to
    ``IBP_4_0_IV1`` (ELR, KIP-966).
    """

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
    IBP_4_0_IV0 = (22, "4.0", "IV0", False)
    IBP_4_0_IV1 = (23, "4.0", "IV1", True)  # ELR (KIP-966)
    IBP_4_0_IV2 = (24, "4.0", "IV2", False)
    IBP_4_0_IV3 = (25, "4.0", "IV3", False)
    IBP_4_1_IV0 = (26, "4.1", "IV0", False)
    IBP_4_1_IV1 = (27, "4.1", "IV1", False)

    @property
    def feature_level(self) -> int:
        return self.value[0]

    @property
    def release(self) -> str:
        return self.value[1]

    @property
    def version_string(self) -> str:
        return f"{self.value[1]}-{self.value[2]}"

    @property
    def did_metadata_change(self) -> bool:
        return self.value[3]

    def is_at_least(self, other: MetadataVersion) -> bool:
        return self.feature_level >= other.feature_level

    def is_less_than(self, other: MetadataVersion) -> bool:
        return self.feature_level < other.feature_level

    def is_migration_supported(self) -> bool:
        # MetadataVersion.isMigrationSupported (3.4 .. 3.9); the migration is gone from Kafka 4.0.
        return self.is_at_least(MIGRATION_MINIMUM)

    def __str__(self) -> str:
        return self.version_string


_BY_LEVEL: dict[int, MetadataVersion] = {mv.feature_level: mv for mv in MetadataVersion}
_BY_STRING: dict[str, MetadataVersion] = {mv.version_string: mv for mv in MetadataVersion}
# Kafka's fromVersionString also accepts a bare release ("3.3") and maps it to that release's last IV.
for _mv in MetadataVersion:
    _BY_STRING[_mv.release] = _mv

MINIMUM_KRAFT_VERSION = MetadataVersion.IBP_3_0_IV1
# MetadataVersion.MINIMUM_BOOTSTRAP_VERSION (3.9): the first version that stores metadata.version in the log.
MINIMUM_BOOTSTRAP_VERSION = MetadataVersion.IBP_3_3_IV0
MIGRATION_MINIMUM = MetadataVersion.IBP_3_4_IV0
# Kafka 4.x drops every level below 3.3-IV3 (MetadataVersion.MINIMUM_VERSION in 4.1.0).
MINIMUM_VERSION_4_X = MetadataVersion.IBP_3_3_IV3
LATEST_PRODUCTION_3_9 = MetadataVersion.IBP_3_9_IV0  # MetadataVersion.LATEST_PRODUCTION on branch 3.9
# Kafka 4.0.0 ships 4.0-IV3 as LATEST_PRODUCTION (release notes; trunk of Oct 2024 still said 4.0-IV0).
LATEST_PRODUCTION_4_0 = MetadataVersion.IBP_4_0_IV3
LATEST_PRODUCTION_4_1 = MetadataVersion.IBP_4_1_IV1  # MetadataVersion.LATEST_PRODUCTION in 4.1.0
LATEST_PRODUCTION = LATEST_PRODUCTION_3_9
LATEST = max(MetadataVersion, key=lambda mv: mv.feature_level)


@dataclass(frozen=True)
class KafkaRelease:
    """The version bounds one Kafka software release accepts (used by the ``kafka`` profile)."""

    name: str
    minimum: MetadataVersion
    latest_production: MetadataVersion
    supports_migration: bool


KAFKA_RELEASES: dict[str, KafkaRelease] = {
    "3.9": KafkaRelease("3.9", MINIMUM_KRAFT_VERSION, LATEST_PRODUCTION_3_9, supports_migration=True),
    "4.0": KafkaRelease("4.0", MINIMUM_VERSION_4_X, LATEST_PRODUCTION_4_0, supports_migration=False),
}


def from_feature_level(level: int) -> MetadataVersion:
    """The version with this feature level; ``ValueError`` for a level Kafka does not define."""
    if isinstance(level, bool) or not isinstance(level, int):
        raise ValueError(f"metadata.version feature level must be an int, got {level!r}")
    try:
        return _BY_LEVEL[level]
    except KeyError:
        raise ValueError(
            f"No MetadataVersion with feature level {level} (known levels: "
            f"{MINIMUM_KRAFT_VERSION.feature_level}..{LATEST.feature_level})"
        ) from None


def from_version_string(text: str) -> MetadataVersion:
    """Parse ``"3.3-IV3"`` (or a bare release ``"3.3"``, meaning its last IV, as Kafka does)."""
    if not isinstance(text, str):
        raise ValueError(f"metadata.version must be a string such as '3.3-IV3', got {text!r}")
    mv = _BY_STRING.get(text.strip())
    if mv is None:
        raise ValueError(
            f"Version {text!r} is not a valid metadata.version: expected RELEASE-IVn such as "
            f"'{MINIMUM_BOOTSTRAP_VERSION.version_string}' between {MINIMUM_KRAFT_VERSION} and {LATEST}"
        )
    return mv


def check_if_metadata_changed(source: MetadataVersion, target: MetadataVersion) -> bool:
    """Kafka's ``MetadataVersion.checkIfMetadataChanged``: did any version in (low, high] change the format."""
    return not KAFKA_CATALOG.is_lossless(source.feature_level, target.feature_level)


def is_lossless_downgrade(source: MetadataVersion, target: MetadataVersion) -> bool:
    return not check_if_metadata_changed(source, target)


class VersionCatalog(Protocol):
    """What the API and system levels need from a catalog, over plain int feature levels."""

    name: str

    @property
    def levels(self) -> tuple[int, ...]: ...

    def label(self, level: int) -> str: ...

    def parse(self, text: str) -> int: ...

    def did_metadata_change(self, level: int) -> bool: ...

    def is_lossless(self, source: int, target: int) -> bool: ...


@dataclass(frozen=True)
class Catalog:
    """An ordered list of versions with their labels and format-change flags; implements VersionCatalog."""

    name: str
    entries: tuple[tuple[int, str, bool], ...]  # (feature level, label, did the metadata format change)
    # The lowest level an update may set under the kafka profile (MINIMUM_BOOTSTRAP_VERSION).
    bootstrap_floor: int = 1
    # The first level with controller registrations (IBP_3_7_IV0, KIP-919): from it on, Kafka checks
    # every voter's supported range before a change; below it, only its own.
    controller_registration_level: int = 1

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

    def parse(self, text: str) -> int:
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


KAFKA_CATALOG = Catalog(
    "kafka",
    tuple((mv.feature_level, mv.version_string, mv.did_metadata_change) for mv in MetadataVersion),
    bootstrap_floor=MINIMUM_BOOTSTRAP_VERSION.feature_level,
    controller_registration_level=MetadataVersion.IBP_3_7_IV0.feature_level,
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
