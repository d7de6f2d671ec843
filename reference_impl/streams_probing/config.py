"""The ``streams_probing`` protocol's config: the group, the rolling upgrade it goes through, faults."""

from __future__ import annotations

from dataclasses import dataclass, field

from reference_impl.streams_probing.api import MUTATIONS
from reference_impl.streams_probing.releases import (
    PROFILES,
    ConfigException,
    StreamsRelease,
    configured_metadata_version,
    release,
    upgrade_from_for,
)
from rollcheck.core.errors import UserError

PROCEDURES = ("auto", "single-bounce", "two-bounces", "operator")

# Rolling bounces per instance under procedure "operator" (the operator chooses every bounce). Three covers the
# KIP's two bounces plus one repeated or extra bounce (a runbook deviation repeats one step), and keeps the state
# space finite: an operator free to bounce forever would make it infinite.
OPERATOR_MAX_BOUNCES = 3


@dataclass(frozen=True)
class StreamsProbingConfig:
    profile: str = "kip"  # "kip", "kafka" or "kafka-2.0" (releases.PROFILES)
    instances: int = 3
    from_release: str = "2.0"
    to_release: str = "post-2.0"
    # "auto": what KIP-268 prescribes (two rolling bounces, upgrade.from set then removed, when a pre-2.0
    # group changes its metadata version; otherwise one bounce, no config); or force one of the two.
    # "operator": the model prescribes nothing: whenever the group is stable, any instance with fewer than
    # OPERATOR_MAX_BOUNCES bounces may be bounced onto to_release, with upgrade.from removed or (where the
    # new release accepts it) set to the old release's value, in any order (runbooks/ pin each bounce).
    procedure: str = "auto"
    max_crashes: int = 0  # instance crashes (each followed by a restart) in a run
    mutations: frozenset[str] = field(default_factory=frozenset)
    # An operator's mistake (procedure "operator" only): the upgrade.from value its bounces may set instead of
    # the old release's, one the new release accepts but that names an older release than the group runs
    # (e.g. "1.1" in a group of 2.1+ instances). KIP-268 assumes upgrade.from names the release upgraded from;
    # nothing in Kafka checks it, so a member then sends an old subscription version beside members that
    # send newer ones: the story of what the leader and the members do then.
    misconfigured_upgrade_from: str | None = None

    def validate(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"profile must be one of {', '.join(PROFILES)}, not {self.profile!r}")
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
        if self.misconfigured_upgrade_from is not None:
            self._validate_misconfiguration(self.misconfigured_upgrade_from, old, new)
        unknown = set(self.mutations) - MUTATIONS
        if unknown:
            raise ValueError(f"unknown mutations {sorted(unknown)}")
        if self.two_bounces:
            try:
                configured_metadata_version(new, self.upgrade_from, self.profile)
            except ConfigException as exc:
                raise ValueError(f"release {new} cannot be started with upgrade.from={self.upgrade_from}: "
                                 f"{exc}") from None

    def _validate_misconfiguration(self, value: str, old: StreamsRelease, new: StreamsRelease) -> None:
        if self.procedure != "operator":
            raise ValueError("misconfigured_upgrade_from needs procedure 'operator' (an operator's bounces set it)")
        try:
            configured = configured_metadata_version(new, value, self.profile)
        except ConfigException as exc:
            raise ValueError(f"misconfigured_upgrade_from: release {new} cannot be started with upgrade.from="
                             f"{value}: {exc}") from None
        if configured >= old.latest_supported:
            raise ValueError(f"misconfigured_upgrade_from {value!r} is no mistake in an upgrade from {old}: "
                             f"release {new} then sends version {configured}, which every {old} instance "
                             "can read; name a release older than the group's")

    @property
    def old(self) -> StreamsRelease:
        return release(self.from_release)

    @property
    def new(self) -> StreamsRelease:
        return release(self.to_release)

    @property
    def operator(self) -> bool:
        """The operator chooses every bounce (procedure "operator"): no rounds, no prescribed upgrade.from."""
        return self.procedure == "operator"

    @property
    def two_bounces(self) -> bool:
        """The model runs KIP-268's two rolling bounces (False under "operator": it prescribes no bounce)."""
        if self.procedure == "auto":
            # KIP-268 "Upgrading to 2.0": a pre-2.0 group whose metadata version changes needs upgrade.from.
            return not self.old.probing and self.new.latest_supported > self.old.latest_supported
        return self.procedure == "two-bounces"

    @property
    def upgrade_from(self) -> str | None:
        """The ``upgrade.from`` value set in the first bounce (None in a single-bounce upgrade). Under
        "operator": the value a bounce may set, the old release's, when it is pre-2.0 and the new release
        accepts it (None: every bounce removes upgrade.from); or the operator's mistaken value
        (``misconfigured_upgrade_from``)."""
        if self.operator:
            if self.misconfigured_upgrade_from is not None:
                return self.misconfigured_upgrade_from
            if self.old.probing:
                return None
            value = upgrade_from_for(self.old)
            try:
                configured_metadata_version(self.new, value, self.profile)
            except ConfigException:
                return None
            return value
        return upgrade_from_for(self.old) if self.two_bounces else None

    @property
    def upgrade_from_choices(self) -> tuple[str | None, ...]:
        """The ``upgrade.from`` values an operator's bounce may use (procedure "operator"): removed, or set."""
        value = self.upgrade_from
        return (None,) if value is None else (None, value)

    @property
    def rounds(self) -> int:
        """The rolling bounces every instance goes through, round after round (not under "operator")."""
        if self.operator:
            raise ValueError("procedure 'operator' has no rounds: the operator chooses each bounce "
                             "(max_bounces caps them)")
        return 2 if self.two_bounces else 1

    @property
    def max_bounces(self) -> int:
        """The most bounces an instance goes through: the rounds, or OPERATOR_MAX_BOUNCES under "operator"."""
        return OPERATOR_MAX_BOUNCES if self.operator else self.rounds
