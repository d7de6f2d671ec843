"""The ``metadata_version`` protocol's config: quorum and brokers, software versions, catalog, bounds."""

from __future__ import annotations

from dataclasses import dataclass, field

from reference_impl.metadata_version.catalog import KAFKA_RELEASES, Catalog, catalog_named

MUTATIONS = frozenset({
    "skip_quorum_check",  # the controller ignores the voters' supported ranges
    "skip_broker_check",  # ... and the registered brokers' ranges
    "allow_lossy_safe_downgrade",  # a lossy downgrade goes through without UNSAFE
    "register_incompatible",  # a broker whose binary cannot read the finalized version registers
    "broker_ignores_unsupported",  # a broker keeps running on a version it cannot read
    "lossless_drops_records",  # every downgrade snapshot is written as if it were lossy
    "dry_run_writes",  # a dry run writes its FeatureLevelRecord
    "rpc_from_binary",  # a broker uses the RPCs of its binary, not of the finalized version (IBP style)
    "skip_floor_check",  # metadata.version may be deleted or set below the minimum
    "restart_skips_version_check",  # a restarted node reads its log without checking the version
    "allow_downgrade_unchecked",  # a downgrade goes through with DowngradeType NONE
    "write_record_above_version",  # the controller writes a record type the version does not enable
    "restart_keeps_session",  # a restarted broker keeps its old session: unfenced under its old registration
    "peers_advertise_no_features",  # KAFKA-13990: every other controller looks as if it supported nothing
})

DOWNGRADE_TYPES = ("NONE", "SAFE", "UNSAFE")


@dataclass(frozen=True)
class Software:
    """A Kafka binary: the range of metadata.version levels it supports, and its default for format."""

    name: str
    min_level: int
    max_level: int

    def supports(self, level: int) -> bool:
        return self.min_level <= level <= self.max_level


@dataclass(frozen=True)
class MetadataVersionConfig:
    profile: str = "kip"
    # kafka profile: "3.3" (the 3.3-3.6 rules), "3.9" (3.7-3.9: per-feature results), "4.0" (4.0 on: all-or-nothing);
    # "4.1" .. "4.4": 4.0's rules with that line's catalog bounds (the Kafka oracle's rows of those releases)
    kafka_release: str = "3.9"
    catalog: str = "example"  # "example" (KIP-778's V1..V5) or "kafka" (MetadataVersion.java)
    voters: int = 3
    brokers: int = 1
    softwares: tuple[Software, ...] = (Software("old", 1, 3), Software("new", 1, 5))
    initial_software: str = "old"
    # None: the initial software's default (format without --metadata-version); 0: a pre-KIP-778 preview
    # cluster whose meta.properties has no version (it bootstraps at level 1).
    initial_level: int | None = None
    levels: tuple[int, ...] = ()  # levels the operator asks for; () = every level of the catalog
    downgrade_types: tuple[str, ...] = DOWNGRADE_TYPES
    dry_run: bool = True
    crashes: bool = True  # node crash and recovery actions
    failover: bool = True  # leader failover action
    max_down: int = 1  # at most this many nodes crashed or terminated at once (bounds the faults)
    max_log: int = 3  # log entries not yet read by every node, latest included (bounds replication lag)
    # Record features the controller writes, named by the level that introduced them. KIP-778's example:
    # V3 adds an optional (tagged) field to Foo, V4 the new record type Bar, V5 an optional field on Bar.
    # () = none (no WriteRecord action).
    record_levels: tuple[int, ...] = (3, 4, 5)
    mutations: frozenset[str] = field(default_factory=frozenset)

    @property
    def version_catalog(self) -> Catalog:
        return catalog_named(self.catalog)

    def software(self, name: str) -> Software:
        for s in self.softwares:
            if s.name == name:
                return s
        raise ValueError(f"unknown software {name!r}; the config has {[s.name for s in self.softwares]}")

    @property
    def old(self) -> Software:
        return self.software(self.initial_software)

    @property
    def new(self) -> Software:
        """The newest software: the target of the single-rolling-restart liveness check."""
        return max(self.softwares, key=lambda s: (s.max_level, s.name))

    @property
    def requested_levels(self) -> tuple[int, ...]:
        return self.levels or self.version_catalog.levels

    @property
    def start_level(self) -> int:
        if self.initial_level == 0:  # a preview cluster: no version in meta.properties bootstraps at level 1
            return self.version_catalog.minimum
        return self.old.max_level if self.initial_level is None else self.initial_level

    def validate(self) -> None:
        if self.profile not in ("kip", "kafka"):
            raise ValueError("profile must be 'kip' or 'kafka'")
        if self.kafka_release not in KAFKA_RELEASES:
            raise ValueError(f"kafka_release must be one of {', '.join(repr(r) for r in KAFKA_RELEASES)}")
        catalog = catalog_named(self.catalog)
        if not 1 <= self.voters <= 5:
            raise ValueError("voters must be between 1 and 5")
        if not 0 <= self.brokers <= 4:
            raise ValueError("brokers must be between 0 and 4")
        names = [s.name for s in self.softwares]
        if not names or len(set(names)) != len(names):
            raise ValueError("softwares must be non-empty with distinct names")
        for s in self.softwares:
            if s.min_level not in catalog.levels or s.max_level not in catalog.levels or s.min_level > s.max_level:
                raise ValueError(f"software {s.name!r}: range {s.min_level}-{s.max_level} is not a valid range of "
                                 f"catalog {catalog.name} (levels {catalog.minimum}..{catalog.latest})")
        old = self.software(self.initial_software)
        if not old.supports(self.start_level):
            raise ValueError(f"initial_level {self.start_level} is not supported by initial software {old.name!r}")
        for level in self.levels:
            if level < 0 or level > catalog.latest:
                raise ValueError(f"requested level {level} is outside 0..{catalog.latest}")
        bad = set(self.downgrade_types) - set(DOWNGRADE_TYPES)
        if bad or not self.downgrade_types:
            raise ValueError(f"downgrade_types must be a non-empty subset of {DOWNGRADE_TYPES}")
        for level in self.record_levels:
            if level not in catalog.levels:
                raise ValueError(f"record level {level} is not a level of catalog {catalog.name}")
        if self.max_down < 0 or self.max_log < 1:
            raise ValueError("max_down must be >= 0 and max_log >= 1")
        unknown = set(self.mutations) - MUTATIONS
        if unknown:
            raise ValueError(f"unknown mutations {sorted(unknown)}")
