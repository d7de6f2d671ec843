"""The ``streams_probing`` protocol's config: the group, the rolling upgrade it goes through, faults."""

from __future__ import annotations

from dataclasses import dataclass, field

from reference_impl.streams_probing.api import MUTATIONS
from reference_impl.streams_probing.releases import (
    ConfigException,
    StreamsRelease,
    configured_metadata_version,
    release,
    upgrade_from_for,
)
from rollcheck.errors import UserError

PROCEDURES = ("auto", "single-bounce", "two-bounces")


@dataclass(frozen=True)
class StreamsProbingConfig:
    profile: str = "kip"
    instances: int = 3
    from_release: str = "2.0"
    to_release: str = "post-2.0"
    # "auto": what KIP-268 prescribes (two rolling bounces, upgrade.from set then removed, when a pre-2.0
    # group changes its metadata version; otherwise one bounce, no config); or force one of the two.
    procedure: str = "auto"
    max_crashes: int = 0  # instance crashes (each followed by a restart) in a run
    mutations: frozenset[str] = field(default_factory=frozenset)

    def validate(self) -> None:
        if self.profile not in ("kip", "kafka"):
            raise ValueError("profile must be 'kip' or 'kafka'")
        if not 1 <= self.instances <= 4:
            raise ValueError("instances must be between 1 and 4")
        try:
            old, new = release(self.from_release), release(self.to_release)
        except UserError as exc:
            raise ValueError(str(exc)) from None
        if new < old:
            raise ValueError(f"to_release {new} is older than from_release {old}: not an upgrade")
        if new.name == "3.9" and self.profile != "kafka":
            raise ValueError("release 3.9 (metadata version 11) exists in the kafka profile only")
        if self.procedure not in PROCEDURES:
            raise ValueError(f"procedure must be one of {', '.join(PROCEDURES)}")
        if self.max_crashes < 0:
            raise ValueError("max_crashes must be >= 0")
        unknown = set(self.mutations) - MUTATIONS
        if unknown:
            raise ValueError(f"unknown mutations {sorted(unknown)}")
        if self.two_bounces:
            try:
                configured_metadata_version(new, self.upgrade_from, self.profile)
            except ConfigException as exc:
                raise ValueError(f"release {new} cannot be started with upgrade.from={self.upgrade_from}: "
                                 f"{exc}") from None

    @property
    def old(self) -> StreamsRelease:
        return release(self.from_release)

    @property
    def new(self) -> StreamsRelease:
        return release(self.to_release)

    @property
    def two_bounces(self) -> bool:
        if self.procedure == "auto":
            # KIP-268 "Upgrading to 2.0": a pre-2.0 group whose metadata version changes needs upgrade.from.
            return not self.old.probing and self.new.latest_supported > self.old.latest_supported
        return self.procedure == "two-bounces"

    @property
    def upgrade_from(self) -> str | None:
        """The ``upgrade.from`` value set in the first bounce (None in a single-bounce upgrade)."""
        return upgrade_from_for(self.old) if self.two_bounces else None

    @property
    def rounds(self) -> int:
        return 2 if self.two_bounces else 1
