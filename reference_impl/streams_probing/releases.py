"""Kafka Streams releases as the rebalance protocol sees them (KIP-268), and the ``upgrade.from`` table.

Each release is described by its ``LATEST_SUPPORTED_VERSION`` (the subscription / assignment metadata
version it speaks) and whether it implements version probing (2.0 and later). The numbers are read from
Apache Kafka's branches: ``SubscriptionInfo.CURRENT_VERSION`` is 1 in 0.10.0 and 2 in 0.10.1 ... 1.1;
``LATEST_SUPPORTED_VERSION`` is 3 in 2.0, 4 in 2.1 ... 2.3 and 11 in 3.2 ... 3.9
(``StreamsAssignmentProtocolVersions``).

``post-2.0`` is the KIP's test-matrix column "post-2.0.x (simulate metadata version 4)": a release that
speaks version 4 (Kafka 2.1's real layout for version 4, see ``api.py``). The ``3.9`` release exists in the
``kafka`` profile only, to check today's assignor across a jump of several versions (2.0's 3 to 3.9's 11).
"""

from __future__ import annotations

from dataclasses import dataclass

from rollcheck.core.errors import UserError

# The profiles of this protocol (its registry entry lists them): the KIP as written; today's assignor applied to
# every release; and each release running its own branch's code (2.0: the 2.0 branch, post-2.0: the 2.1 branch),
# docs/protocols/streams_probing.md "The kafka-2.0 profile".
KIP, KAFKA, KAFKA_20 = "kip", "kafka", "kafka-2.0"
PROFILES: tuple[str, ...] = (KIP, KAFKA, KAFKA_20)

EARLIEST_PROBEABLE_VERSION = 3  # StreamsAssignmentProtocolVersions.EARLIEST_PROBEABLE_VERSION
UNKNOWN = -1  # the supported version of a version 1 or 2 subscription (not encoded before version 3)


@dataclass(frozen=True, order=True)
class StreamsRelease:
    """A Kafka Streams release: ``order`` sorts releases by age."""

    order: int
    name: str
    latest_supported: int  # LATEST_SUPPORTED_VERSION (CURRENT_VERSION before 2.0)

    @property
    def probing(self) -> bool:
        """Implements KIP-268's version probing (2.0 and later)."""
        return self.latest_supported >= EARLIEST_PROBEABLE_VERSION

    def can_decode(self, version: int) -> bool:
        """Whether ``SubscriptionInfo.decode`` / ``AssignmentInfo.decode`` of this release read ``version``:
        0.10.0 reads only version 1, 0.10.1 ... 1.1 read 1 and 2, each later release 1 up to its latest
        (a probing release still reads the used and supported version of a newer subscription: see
        :func:`reference_impl.streams_probing.api.decode_subscription`)."""
        return 1 <= version <= self.latest_supported

    def __str__(self) -> str:
        return self.name


RELEASES: tuple[StreamsRelease, ...] = (
    StreamsRelease(0, "0.10.0", 1),
    StreamsRelease(1, "0.10.1", 2),
    StreamsRelease(2, "0.10.2", 2),
    StreamsRelease(3, "0.11.0", 2),
    StreamsRelease(4, "1.0", 2),
    StreamsRelease(5, "1.1", 2),
    StreamsRelease(6, "2.0", 3),
    StreamsRelease(7, "post-2.0", 4),
    StreamsRelease(8, "3.9", 11),
)
_BY_NAME = {r.name: r for r in RELEASES}
_ALIASES = {"2.1": "post-2.0", "0.10.0.x": "0.10.0", "2.0.x": "2.0"}


def release(name: str) -> StreamsRelease:
    """The release named ``name`` (``"1.1"``, ``"2.0"``, ``"post-2.0"``...), or a clear error."""
    key = _ALIASES.get(name, name)
    try:
        return _BY_NAME[key]
    except KeyError:
        known = ", ".join(r.name for r in RELEASES)
        raise UserError(f"unknown Kafka Streams release '{name}'; known releases: {known}") from None


# upgrade.from values (StreamsConfig.UPGRADE_FROM_*) and the subscription version each one forces.
# KIP-268 lists "0.10.0" ... "1.1"; pre-2.0 releases got only "0.10.0" (the KAFKA-6054 back-port, present on
# the 0.10.1 ... 1.1 branches: StreamPartitionAssignor.configure). Kafka 2.4+ added "2.0" ... "3.8", which
# leave the metadata version alone (they select cooperative rebalancing or the FK-join response format:
# AssignorConfiguration.configuredMetadataVersion).
UPGRADE_FROM_VERSION: dict[str, int] = {
    "0.10.0": 1, "0.10.1": 2, "0.10.2": 2, "0.11.0": 2, "1.0": 2, "1.1": 2,
}
UPGRADE_FROM_NEUTRAL: tuple[str, ...] = (
    "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8",
    "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8",
)


def upgrade_from_values(rel: StreamsRelease, profile: str) -> tuple[str, ...]:
    """The ``upgrade.from`` values ``rel`` accepts (an unknown one fails the instance at start-up)."""
    if rel.latest_supported == 1:
        return ()  # 0.10.0 has no upgrade.from
    if not rel.probing:
        return ("0.10.0",)  # the KAFKA-6054 back-port
    values = tuple(UPGRADE_FROM_VERSION)
    if profile == "kafka" and rel.name == "3.9":
        values += UPGRADE_FROM_NEUTRAL
    return values


class ConfigException(UserError):
    """Kafka's ``ConfigException``: ``StreamsConfig`` rejects an ``upgrade.from`` value its validator
    (``ConfigDef.ValidString.in(null, ...)``) does not list, before the assignor ever sees it."""


def configured_metadata_version(rel: StreamsRelease, upgrade_from: str | None, profile: str) -> int:
    """The subscription version an instance of ``rel`` starts with (``usedSubscriptionMetadataVersion``).

    Kafka: ``StreamsPartitionAssignor.configure`` (2.0) and ``AssignorConfiguration.configuredMetadataVersion``
    (today): "0.10.0" forces version 1, "0.10.1" ... "1.1" force version 2, later values change nothing.
    """
    if upgrade_from is None:
        return rel.latest_supported
    values = upgrade_from_values(rel, profile)
    if not values:
        # 0.10.0 defines no upgrade.from: Kafka would only log an unknown config; the model rejects it.
        raise ConfigException(f"Kafka Streams {rel} has no configuration upgrade.from (set to {upgrade_from})")
    if upgrade_from not in values:
        # ConfigException(name, value, "String must be one of: " + join(validStrings, ", ")), null first.
        raise ConfigException(f"Invalid value {upgrade_from} for configuration upgrade.from: String must be one "
                              f"of: {', '.join(('null', *values))}")
    return min(UPGRADE_FROM_VERSION.get(upgrade_from, rel.latest_supported), rel.latest_supported)


def upgrade_from_for(old: StreamsRelease) -> str:
    """The ``upgrade.from`` value an operator sets when upgrading away from ``old``."""
    return old.name
