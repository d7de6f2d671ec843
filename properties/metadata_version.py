"""Properties of the ``metadata_version`` protocol (KIP-778), ids ``MV-01``...

Each predicate restates the KIP sentence it cites directly over the state (the catalog's lossless rule
is the one shared fact); none calls the controller's decision code, so a wrong rule there cannot make
its own check pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reference_impl.metadata_version.config import MetadataVersionConfig
from rollcheck.transition import Action, AnyProperty, GraphProperty, Invariant, StepProperty

KIP = "KIP-778"


def metadata_version_properties(config: MetadataVersionConfig, *, downgrade_from_any: bool | None = None
                                ) -> list[AnyProperty]:
    """The properties for a config. ``downgrade_from_any`` widens MV-L2 to every new-software cluster
    (the KIP's claim); by default the kafka profile checks it only where Kafka allows the downgrade."""
    catalog = config.version_catalog
    software = {s.name: s for s in config.softwares}
    floor = catalog.bootstrap_floor if config.profile == "kafka" else catalog.minimum
    breaking = frozenset(lvl for lvl in catalog.levels if lvl > catalog.minimum and catalog.did_metadata_change(lvl))
    old, new = config.old, config.new
    if downgrade_from_any is None:
        downgrade_from_any = config.profile == "kip"

    def lossless(source: int, target: int) -> bool:
        # A level outside the catalog (a deleted metadata.version) has no lossless path to anything.
        return source in catalog.levels and target in catalog.levels and catalog.is_lossless(source, target)

    def supports(name: str, level: int) -> bool:
        sw = software[name]
        return sw.min_level <= level <= sw.max_level

    def running(n: Any) -> bool:
        return n.status.name == "RUNNING"

    # ---- invariants
    def running_nodes_supported(s: Any) -> bool:
        for v in s.voters:
            if running(v) and not supports(v.software, s.log[v.offset]):
                return False
        return all(not running(b) or supports(b.software, s.log[b.offset]) for b in s.brokers)

    def registrations_supported(s: Any) -> bool:
        return all(supports(b.registration, s.level) for b in s.brokers if b.registration)

    def commit_supported(s: Any, a: Action, t: Any) -> bool:
        if not is_update(a) or t.level == s.level:
            return True
        voters = sum(1 for v in s.voters if supports(v.software, t.level))
        if voters * 2 <= len(s.voters):
            return False
        return all(supports(b.registration, t.level) for b in s.brokers if b.registration)

    def nothing_above_version(s: Any) -> bool:
        if any(t in breaking and t > s.level for t in s.records):
            return False
        return all(b.rpc_level <= s.log[b.offset] for b in s.brokers if running(b))

    # ---- step properties
    def is_update(a: Action) -> bool:
        return a.name == "UpdateFeatures"

    def lossless_keeps_records(s: Any, a: Action, t: Any) -> bool:
        if is_update(a) and t.level < s.level and lossless(s.level, t.level):
            return t.records == s.records
        return True

    def loss_only_unsafe(s: Any, a: Action, t: Any) -> bool:
        if s.records is t.records or s.records <= t.records:  # identity first: most steps keep the set
            return True
        return is_update(a) and a["downgrade"] == "UNSAFE"

    def dry_run_changes_nothing(s: Any, a: Action, t: Any) -> bool:
        return not (is_update(a) and a["dry_run"]) or s is t or s == t

    def unreadable_start_terminates(s: Any, a: Action, t: Any) -> bool:
        if a.name not in ("RestartNode", "RecoverNode"):
            return True
        i = a["node"]
        if a["role"] == "broker":
            levels: tuple[int, ...] = (s.log[s.brokers[i].offset],)
            after = t.brokers[i]
        else:
            levels = s.log[s.voters[i].offset:]
            after = t.voters[i]
        name = a.get("software", s.voters[i].software if a["role"] == "voter" else s.brokers[i].software)
        if all(supports(name, lvl) for lvl in levels):
            return True
        return after.status.name == "TERMINATED"

    def above_floor(s: Any, a: Action, t: Any) -> bool:
        return not (is_update(a) and t.level != s.level) or t.level >= floor

    def typed_change(s: Any, a: Action, t: Any) -> bool:
        if not is_update(a) or t.level == s.level:
            return True
        return (a["downgrade"] == "NONE") == (t.level > s.level)

    def record_enabled(s: Any, a: Action, t: Any) -> bool:
        return a.name != "WriteRecord" or a["introduced"] <= s.level

    # ---- liveness: one rolling restart, then online changes
    def cluster_on(s: Any, name: str) -> bool:
        return all(n.software == name and running(n) for n in (*s.voters, *s.brokers))

    def settled(s: Any) -> bool:
        end = len(s.log) - 1
        return s.leader >= 0 and all(not b.fenced and b.offset == end for b in s.brokers)

    def upgrade_step(a: Action) -> bool:
        if a.name == "RestartNode":
            return bool(a["software"] == new.name)
        if is_update(a):
            return bool(a["downgrade"] == "NONE" and not a["dry_run"])
        return a.name in ("ElectLeader", "LeaderFailover", "ReplicateMetadata", "RegisterBroker", "WriteRecord")

    def downgrade_step(a: Action) -> bool:
        if a.name == "RestartNode":
            return bool(a["software"] == old.name)
        if is_update(a):
            return bool(a["downgrade"] != "NONE" and not a["dry_run"])
        return a.name in ("ElectLeader", "LeaderFailover", "ReplicateMetadata", "RegisterBroker")

    def upgrade_from(s: Any) -> bool:
        return cluster_on(s, old.name) and settled(s)

    def upgraded(s: Any) -> bool:
        return cluster_on(s, new.name) and settled(s) and s.level == new.max_level

    def downgrade_from(s: Any) -> bool:
        if not (cluster_on(s, new.name) and settled(s)):
            return False
        # Kafka refuses every lossy downgrade (UNSAFE included), so only a cluster whose version can go
        # back to one the old software reads without loss can be rolled back.
        return downgrade_from_any or s.level <= old.max_level or lossless(s.level, old.max_level)

    def downgraded(s: Any) -> bool:
        return cluster_on(s, old.name) and settled(s) and s.level <= old.max_level

    src = "KIP-778"
    props: list[AnyProperty] = [
        Invariant("MV-01", "no running node holds a finalized metadata.version outside its binary's supported range",
                  f"{src} Compatibility: a broker that encounters an unsupported metadata.version unregisters and "
                  "terminates; an active controller resigns and terminates", running_nodes_supported),
        StepProperty("MV-02", "a metadata.version change is committed only when a majority of the voters and every "
                     "registered broker support it",
                     f"{src} Compatibility: the active controller will check that the given version is compatible "
                     "with at least a majority of the quorum; KIP-584 Validations (every broker)", commit_supported),
        Invariant("MV-11", "every registered broker's binary supports the committed metadata.version",
                  f"{src} Compatibility: if a broker attempts to register but cannot support the current finalized "
                  "features, the controller rejects the registration", registrations_supported),
        Invariant("MV-05", "no record type newer than the finalized version is in the image, and no running broker "
                  "uses an RPC above the version it has read",
                  f"{src} Upgrades: only after increasing the metadata.version will these new RPCs and records be "
                  "used", nothing_above_version),
        StepProperty("MV-03", "a lossless downgrade loses no record",
                     f"{src} Downgrades: when performing a lossless downgrade, no modifications are made to the "
                     "metadata records", lossless_keeps_records),
        StepProperty("MV-04", "metadata is lost only by an UNSAFE downgrade",
                     f"{src} Downgrades: by default the controller should not perform [a lossy] downgrade; --unsafe "
                     "(DowngradeType 2) is meant to override this", loss_only_unsafe),
        StepProperty("MV-06", "a dry run changes nothing",
                     f"{src} Public Interfaces: DryRun / --dry-run validates the change but does not perform it",
                     dry_run_changes_nothing),
        StepProperty("MV-07", "a node started on a binary that cannot read its metadata.version terminates",
                     f"{src} Compatibility; Overview: a software downgrade follows the metadata.version downgrade",
                     unreadable_start_terminates),
        StepProperty("MV-08", "metadata.version is never deleted or set below the minimum",
                     f"{src} Rejected Alternatives (Final IBP): KRaft requires a metadata.version; Kafka: "
                     "MINIMUM_BOOTSTRAP_VERSION", above_floor),
        StepProperty("MV-09", "an increase is an upgrade and a decrease is a SAFE or UNSAFE downgrade",
                     "KIP-584 Validations; KIP-778 DowngradeType (NONE performs no downgrade)", typed_change),
        StepProperty("MV-10", "the controller writes a record type only once the finalized version enables it",
                     f"{src} Motivation: holding back the use of new RPCs and record formats until the whole "
                     "cluster has been upgraded", record_enabled),
        _until("MV-L1", "from any settled cluster on the old software, one rolling restart onto the new software "
               "followed by online metadata.version upgrades reaches the new software's highest version",
               f"{src} Upgrades: only a single rolling restart of the cluster required", upgrade_from, upgrade_step,
               upgraded),
        _until("MV-L2", "from a settled cluster on the new software, online metadata.version downgrades followed by "
               "one rolling restart onto the old software bring the whole cluster back to the old software",
               f"{src} Overview (downgrade workflow): downgrade metadata.version, then roll back the software",
               downgrade_from, downgrade_step, downgraded),
    ]
    return props


def _until(prop_id: str, description: str, source: str, start: Callable[[Any], bool],
           allowed: Callable[[Action], bool], goal: Callable[[Any], bool]) -> GraphProperty[Any]:
    """AG (start => E[allowed U goal]) over the explored graph: from every start state, the goal can be
    reached through ``allowed`` actions only. Restarts are allowed only onto the target software, so
    every node restarts at most once on such a path: "no second restart"."""
    return GraphProperty(prop_id, description, source, goal=goal, start=start, allowed=allowed)
