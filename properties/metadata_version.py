"""Properties of the ``metadata_version`` protocol (KIP-778), ids ``MV-01``...

Each predicate restates the KIP sentence it cites directly over the state (the catalog's lossless rule
is the one shared fact); none calls the controller's decision code, so a wrong rule there cannot make
its own check pass. The witnesses (``MV-W*``) name the stories the configs exist for: a run that never
reaches one is vacuous.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reference_impl.metadata_version.catalog import Catalog
from reference_impl.metadata_version.config import MetadataVersionConfig, Software
from reference_impl.metadata_version.state import MetadataVersionState
from rollcheck.core.declare import PropertySet, graph_property, invariant, step_property, witness
from rollcheck.core.transition import Action

KIP = "KIP-778"


@dataclass(frozen=True)
class MetadataVersionContext:
    """What the predicates read besides the state, computed once per config: the catalog, each software's
    supported range, the lowest settable version, the levels that changed the metadata format (above the
    minimum), the lossless (source, target) pairs, the old and new software, and MV-L2's scope."""

    config: MetadataVersionConfig
    profile: str
    catalog: Catalog
    software: dict[str, Software]
    floor: int
    breaking: frozenset[int]
    lossless_pairs: frozenset[tuple[int, int]]
    old: Software
    new: Software
    downgrade_from_any: bool

    @staticmethod
    def of(system: Any, downgrade_from_any: bool | None = None) -> MetadataVersionContext:
        """``downgrade_from_any`` widens MV-L2 to every new-software cluster (the KIP's claim); by default
        (None) the kip profile checks that claim and the kafka profile only where Kafka allows the downgrade."""
        c: MetadataVersionConfig = system.config
        catalog = c.version_catalog
        levels = catalog.levels
        return MetadataVersionContext(
            config=c,
            profile=c.profile,
            catalog=catalog,
            software={s.name: s for s in c.softwares},
            floor=catalog.bootstrap_floor if c.profile == "kafka" else catalog.minimum,
            breaking=frozenset(lvl for lvl in levels if lvl > catalog.minimum and catalog.did_metadata_change(lvl)),
            # A level outside the catalog (a deleted metadata.version) has no lossless path to anything.
            lossless_pairs=frozenset((a, b) for a in levels for b in levels if catalog.is_lossless(a, b)),
            old=c.old,
            new=c.new,
            downgrade_from_any=c.profile == "kip" if downgrade_from_any is None else downgrade_from_any,
        )

    def lossless(self, source: int, target: int) -> bool:
        return (source, target) in self.lossless_pairs

    def supports(self, name: str, level: int) -> bool:
        sw = self.software[name]
        return sw.min_level <= level <= sw.max_level


def _running(n: Any) -> bool:
    return bool(n.status.name == "RUNNING")


def _is_update(a: Action) -> bool:
    return a.name == "UpdateFeatures"


# ---------------------------------------------------------------- invariants and step properties

@invariant("MV-01", "no running node holds a finalized metadata.version outside its binary's supported range",
           source=f"{KIP} Compatibility: a broker that encounters an unsupported metadata.version unregisters and "
           "terminates; an active controller resigns and terminates")
def running_nodes_supported(ctx: MetadataVersionContext, s: MetadataVersionState) -> bool:
    supports = ctx.supports
    for v in s.voters:
        if _running(v) and not supports(v.software, s.log[v.offset]):
            return False
    return all(not _running(b) or supports(b.software, s.log[b.offset]) for b in s.brokers)


@step_property("MV-02", "a metadata.version change is committed only when a majority of the voters and every "
               "registered broker support it",
               source=f"{KIP} Compatibility: the active controller will check that the given version is compatible "
               "with at least a majority of the quorum; KIP-584 Validations (every broker)")
def commit_supported(ctx: MetadataVersionContext, s: MetadataVersionState, a: Action,
                     t: MetadataVersionState) -> bool:
    if not _is_update(a) or t.level == s.level:
        return True
    voters = sum(1 for v in s.voters if ctx.supports(v.software, t.level))
    if voters * 2 <= len(s.voters):
        return False
    return all(ctx.supports(b.registration, t.level) for b in s.brokers if b.registration)


@invariant("MV-11", "every registered broker's binary supports the committed metadata.version",
           source=f"{KIP} Compatibility: if a broker attempts to register but cannot support the current finalized "
           "features, the controller rejects the registration")
def registrations_supported(ctx: MetadataVersionContext, s: MetadataVersionState) -> bool:
    return all(ctx.supports(b.registration, s.level) for b in s.brokers if b.registration)


@invariant("MV-05", "no record type newer than the finalized version is in the image, and no running broker "
           "uses an RPC above the version it has read",
           source=f"{KIP} Upgrades: only after increasing the metadata.version will these new RPCs and records be "
           "used")
def nothing_above_version(ctx: MetadataVersionContext, s: MetadataVersionState) -> bool:
    breaking = ctx.breaking
    if any(t in breaking and t > s.level for t in s.records):
        return False
    return all(b.rpc_level <= s.log[b.offset] for b in s.brokers if _running(b))


@step_property("MV-03", "a lossless downgrade loses no record",
               source=f"{KIP} Downgrades: when performing a lossless downgrade, no modifications are made to the "
               "metadata records")
def lossless_keeps_records(ctx: MetadataVersionContext, s: MetadataVersionState, a: Action,
                           t: MetadataVersionState) -> bool:
    if _is_update(a) and t.level < s.level and ctx.lossless(s.level, t.level):
        return t.records == s.records
    return True


@step_property("MV-04", "metadata is lost only by an UNSAFE downgrade",
               source=f"{KIP} Downgrades: by default the controller should not perform [a lossy] downgrade; --unsafe "
               "(DowngradeType 2) is meant to override this")
def loss_only_unsafe(s: MetadataVersionState, a: Action, t: MetadataVersionState) -> bool:
    if s.records is t.records or s.records <= t.records:  # identity first: most steps keep the set
        return True
    return _is_update(a) and a["downgrade"] == "UNSAFE"


@invariant("MV-13", "the active controller is a running voter (a voter that stops, crashes or terminates is no "
           "longer the Raft leader)",
           source=f"{KIP} Compatibility: an active controller that cannot support the version terminates; KIP-595 "
           "(KRaft): a leader that stops loses its leadership to a newly elected voter")
def leader_running(s: MetadataVersionState) -> bool:
    return s.leader < 0 or s.voters[s.leader].status.name == "RUNNING"


@invariant("MV-16", "an unfenced broker is running and registered for the binary it runs: a restart fences it "
           "until it registers again, so the controller never serves a broker under another binary's ranges",
           source=f"{KIP} Compatibility: the controller checks a broker's supported features when it registers; "
           "KIP-631 (broker registration): a broker that starts registers a new incarnation and stays fenced until "
           "it has caught up (Kafka's ClusterControlManager.registerBroker writes a RegisterBrokerRecord whose Fenced "
           "field keeps its default, true; the broker heartbeats its way out once caught up)")
def unfenced_registered(s: MetadataVersionState) -> bool:
    return all(b.fenced or (_running(b) and b.registration == b.software) for b in s.brokers)


@step_property("MV-17", "a broker is unfenced only once it has caught up with the metadata log: the step that "
               "unfences it leaves it at the log's end",
               source="KIP-631 (broker registration, which KIP-778 builds on): a registered broker stays fenced until "
               "it has caught up with the metadata log (Kafka's BrokerHeartbeatManager unfences a broker only once "
               "its reported metadata offset has reached its registration's; the model has no offset for the "
               "registration, so the whole log is the bar)")
def unfenced_caught_up(s: MetadataVersionState, a: Action, t: MetadataVersionState) -> bool:
    # MV-16 says who may be unfenced; this says when: a broker unfenced one record early would serve a
    # cluster whose metadata it has not read.
    return all(not (b.fenced and not nb.fenced) or nb.offset == len(t.log) - 1
               for b, nb in zip(s.brokers, t.brokers, strict=True))


@step_property("MV-12", "under Kafka's rules a metadata.version update never drops metadata: every downgrade it "
               "commits is lossless, UNSAFE included",
               source="Apache Kafka FeatureControlManager.updateMetadataVersion: \"Unsafe metadata downgrade is not "
               "supported in this version.\" and \"Refusing to perform the requested downgrade because it might "
               "delete metadata information.\" (KIP-778 lets UNSAFE lose metadata; Kafka never shipped it)",
               when=lambda ctx: ctx.profile == "kafka")
def kafka_downgrades_lossless(ctx: MetadataVersionContext, s: MetadataVersionState, a: Action,
                              t: MetadataVersionState) -> bool:
    # The rule, not only its effect: a lossy downgrade of a log that holds no record yet loses nothing, and
    # is still refused by Kafka.
    if not _is_update(a):
        return True
    kept = s.records is t.records or s.records <= t.records
    return kept and (t.level >= s.level or ctx.lossless(s.level, t.level))


@step_property("MV-14", "a lossy downgrade's snapshot keeps exactly what the target version can represent: every "
               "record introduced at or below it stays, every one above it goes",
               source=f"{KIP} Downgrades: in a lossy downgrade the controller writes a snapshot at the lower "
               "version, excluding the new record types and fields it cannot represent (and only those)")
def lossy_keeps_representable(ctx: MetadataVersionContext, s: MetadataVersionState, a: Action,
                              t: MetadataVersionState) -> bool:
    # MV-04 bounds what may be lost (only by UNSAFE); this says what must be kept, so a snapshot that drops
    # one record too many (or keeps one it cannot represent) is caught too.
    if not _is_update(a) or t.level >= s.level or ctx.lossless(s.level, t.level):
        return True
    return t.records == frozenset(r for r in s.records if r <= t.level)


@step_property("MV-15", "the metadata log takes a new entry (a metadata.version change, a record, a broker "
               "registration) and a leader is elected only while a strict majority of the voters runs",
               source="KIP-631/KIP-595 (KRaft, which KIP-778 builds on): a record is committed once a majority of the "
               "voters has it; a candidate becomes leader with the votes of a majority")
def strict_majority(s: MetadataVersionState, a: Action, t: MetadataVersionState) -> bool:
    # With three voters "more than half" and "at least half" agree; with an even number they do not, and a
    # quorum check off by one let half the voters commit (the ``two-voters`` story config shows it).
    # LeaderFailover is left out: the model moves leadership between running voters whenever failover is on.
    if a.name not in _COMMITS or s == t:
        return True
    return sum(1 for v in s.voters if _running(v)) * 2 > len(s.voters)


_COMMITS = frozenset({"UpdateFeatures", "WriteRecord", "RegisterBroker", "ElectLeader"})


@step_property("MV-06", "a dry run changes nothing",
               source=f"{KIP} Public Interfaces: DryRun / --dry-run validates the change but does not perform it")
def dry_run_changes_nothing(s: MetadataVersionState, a: Action, t: MetadataVersionState) -> bool:
    return not (_is_update(a) and a["dry_run"]) or s is t or s == t


@step_property("MV-07", "a node started on a binary that cannot read its metadata.version terminates",
               source=f"{KIP} Compatibility; Overview: a software downgrade follows the metadata.version downgrade")
def unreadable_start_terminates(ctx: MetadataVersionContext, s: MetadataVersionState, a: Action,
                                t: MetadataVersionState) -> bool:
    if a.name not in ("RestartNode", "RecoverNode"):
        return True
    i = a["node"]
    after: Any
    if a["role"] == "broker":
        levels: tuple[int, ...] = (s.log[s.brokers[i].offset],)
        after = t.brokers[i]
    else:
        levels = s.log[s.voters[i].offset:]
        after = t.voters[i]
    name = a.get("software", s.voters[i].software if a["role"] == "voter" else s.brokers[i].software)
    if all(ctx.supports(name, lvl) for lvl in levels):
        return True
    return bool(after.status.name == "TERMINATED")


@step_property("MV-08", "metadata.version is never deleted or set below the minimum",
               source=f"{KIP} Rejected Alternatives (Final IBP): KRaft requires a metadata.version; Kafka: "
               "MINIMUM_BOOTSTRAP_VERSION")
def above_floor(ctx: MetadataVersionContext, s: MetadataVersionState, a: Action, t: MetadataVersionState) -> bool:
    return not (_is_update(a) and t.level != s.level) or t.level >= ctx.floor


@step_property("MV-09", "an increase is an upgrade and a decrease is a SAFE or UNSAFE downgrade",
               source="KIP-584 Validations; KIP-778 DowngradeType (NONE performs no downgrade)")
def typed_change(s: MetadataVersionState, a: Action, t: MetadataVersionState) -> bool:
    if not _is_update(a) or t.level == s.level:
        return True
    return (a["downgrade"] == "NONE") == (t.level > s.level)


@step_property("MV-10", "the controller writes a record type only once the finalized version enables it",
               source=f"{KIP} Motivation: holding back the use of new RPCs and record formats until the whole "
               "cluster has been upgraded")
def record_enabled(s: MetadataVersionState, a: Action, t: MetadataVersionState) -> bool:
    return a.name != "WriteRecord" or a["introduced"] <= s.level


# ---------------------------------------------------------------- liveness: one rolling restart, then online changes
# AG (start => E[allowed U goal]) over the explored graph: from every start state, the goal can be reached
# through allowed actions only. Restarts are allowed only onto the target software, so every node restarts
# at most once on such a path: "no second restart".

def _cluster_on(s: MetadataVersionState, name: str) -> bool:
    return all(n.software == name and _running(n) for n in (*s.voters, *s.brokers))


def _settled(s: MetadataVersionState) -> bool:
    end = len(s.log) - 1
    return s.leader >= 0 and all(not b.fenced and b.offset == end for b in s.brokers)


def upgrade_from(ctx: MetadataVersionContext, s: MetadataVersionState) -> bool:
    return _cluster_on(s, ctx.old.name) and _settled(s)


def upgrade_step(ctx: MetadataVersionContext, a: Action) -> bool:
    if a.name == "RestartNode":
        return bool(a["software"] == ctx.new.name)
    if _is_update(a):
        return bool(a["downgrade"] == "NONE" and not a["dry_run"])
    return a.name in ("ElectLeader", "LeaderFailover", "ReplicateMetadata", "RegisterBroker", "WriteRecord")


@graph_property("MV-L1", "from any settled cluster on the old software, one rolling restart onto the new software "
                "followed by online metadata.version upgrades reaches the new software's highest version",
                source=f"{KIP} Upgrades: only a single rolling restart of the cluster required",
                start=upgrade_from, allowed=upgrade_step)
def upgraded(ctx: MetadataVersionContext, s: MetadataVersionState) -> bool:
    return _cluster_on(s, ctx.new.name) and _settled(s) and s.level == ctx.new.max_level


def downgrade_from(ctx: MetadataVersionContext, s: MetadataVersionState) -> bool:
    if not (_cluster_on(s, ctx.new.name) and _settled(s)):
        return False
    # Kafka refuses every lossy downgrade (UNSAFE included), so only a cluster whose version can go back to
    # one the old software reads without loss can be rolled back.
    return ctx.downgrade_from_any or s.level <= ctx.old.max_level or ctx.lossless(s.level, ctx.old.max_level)


def downgrade_step(ctx: MetadataVersionContext, a: Action) -> bool:
    if a.name == "RestartNode":
        return bool(a["software"] == ctx.old.name)
    if _is_update(a):
        return bool(a["downgrade"] != "NONE" and not a["dry_run"])
    return a.name in ("ElectLeader", "LeaderFailover", "ReplicateMetadata", "RegisterBroker")


@graph_property("MV-L2", "from a settled cluster on the new software, online metadata.version downgrades followed by "
                "one rolling restart onto the old software bring the whole cluster back to the old software",
                source=f"{KIP} Overview (downgrade workflow): downgrade metadata.version, then roll back the software",
                start=downgrade_from, allowed=downgrade_step)
def downgraded(ctx: MetadataVersionContext, s: MetadataVersionState) -> bool:
    return _cluster_on(s, ctx.old.name) and _settled(s) and s.level <= ctx.old.max_level


# ---------------------------------------------------------------- witnesses: the stories the configs cover

def _settable(ctx: MetadataVersionContext) -> frozenset[int]:
    """The levels an UpdateFeatures request can commit: requested, in the catalog, at or above the floor,
    and read by some software of the config."""
    c = ctx.config
    return frozenset(lvl for lvl in c.requested_levels if lvl in ctx.catalog.levels and lvl >= ctx.floor
                     and any(sw.supports(lvl) for sw in c.softwares))


def _upgradable(ctx: MetadataVersionContext) -> bool:
    c = ctx.config
    return "NONE" in c.downgrade_types and ctx.new.max_level in _settable(ctx) and ctx.new.max_level > c.start_level


def _lossless_kept(ctx: MetadataVersionContext) -> bool:
    """A record written at some level x survives a lossless downgrade from x to a level below it."""
    c = ctx.config
    settable = _settable(ctx)
    return "SAFE" in c.downgrade_types and any(
        ctx.lossless(x, y) for r in c.record_levels for x in settable | {c.start_level} if x >= r
        for y in settable if y < r)


def _lossy_unsafe(ctx: MetadataVersionContext) -> bool:
    """The kip profile only (Kafka refuses every lossy downgrade): UNSAFE requested, a lossy downgrade from a
    settable level the old software cannot read to one it reads, and room in the log for it next to a
    lagging node."""
    c = ctx.config
    settable = _settable(ctx)
    top = ctx.old.max_level
    return ctx.profile == "kip" and "UNSAFE" in c.downgrade_types and c.max_log >= 2 and any(
        not ctx.lossless(x, y) for x in settable if x > top for y in settable if y <= top)


def _unreadable(ctx: MetadataVersionContext) -> bool:
    """Some software cannot read a settable level that another one can: its nodes can meet it."""
    c = ctx.config
    return any(not sw.supports(lvl) for sw in c.softwares for lvl in _settable(ctx))


@witness("MV-W1", "the whole cluster runs the new software at its highest metadata.version (one rolling restart, "
         "then online metadata.version upgrades)",
         source=f"{KIP} Upgrades: only a single rolling restart; many online upgrades without restarting any nodes",
         when=_upgradable)
def upgraded_to_new_max(ctx: MetadataVersionContext, s: MetadataVersionState) -> bool:
    return s.level == ctx.new.max_level and _cluster_on(s, ctx.new.name)


@witness("MV-W2", "a lossless downgrade kept a record the finalized version does not use (a tagged field above "
         "the finalized metadata.version stays in the image)",
         source=f"{KIP} Downgrades: when performing a lossless downgrade, no modifications are made to the metadata "
         "records; tagged fields from a newer version are skipped", when=_lossless_kept)
def lossless_downgrade_kept_records(s: MetadataVersionState) -> bool:
    level = s.log[-1]
    return any(t > level for t in s.records)


@witness("MV-W3", "an UNSAFE lossy downgrade took metadata.version from a level only the new software reads back "
         "to one the old software reads (the log holds it while some node has not read it yet)",
         source=f"{KIP} Downgrades: a lossy downgrade excludes new record types from the snapshot; --unsafe "
         "(DowngradeType 2) overrides the default refusal; Overview: then roll back the software", when=_lossy_unsafe)
def lossy_downgrade_committed(ctx: MetadataVersionContext, s: MetadataVersionState) -> bool:
    log, top = s.log, ctx.old.max_level
    return any(log[i] > top >= log[i + 1] and not ctx.lossless(log[i], log[i + 1]) for i in range(len(log) - 1))


@witness("MV-W4", "a node terminated on a metadata.version its binary cannot read (restarted onto an older binary, "
         "or reading the FeatureLevelRecord)",
         source=f"{KIP} Compatibility: a broker that encounters an unsupported metadata.version should unregister "
         "and terminate; an inactive controller should terminate", when=_unreadable)
def node_terminated(s: MetadataVersionState) -> bool:
    return any(n.status.name == "TERMINATED" for n in (*s.voters, *s.brokers))


@witness("MV-W5", "a running broker whose binary cannot support the finalized metadata.version stays fenced (the "
         "controller rejects its registration)",
         source=f"{KIP} Compatibility: the controller will reject the registration request and the broker will "
         "remain fenced",
         when=lambda ctx: _unreadable(ctx) and ctx.config.brokers >= 1 and ctx.config.max_log >= 2)
def incompatible_broker_fenced(ctx: MetadataVersionContext, s: MetadataVersionState) -> bool:
    level = s.log[-1]
    return any(b.fenced and _running(b) and not ctx.supports(b.software, level) for b in s.brokers)


@witness("MV-W6", "a running broker registered for its binary is still fenced two log entries behind the end (it "
         "registered while lagging, and catches up before it is unfenced)",
         source="KIP-631 (broker registration): a registered broker stays fenced until it has caught up with the "
         "metadata log (MV-17 checks the bar; this says a config puts a broker far enough behind for it to matter)",
         when=lambda ctx: ctx.config.brokers >= 1 and ctx.config.max_log >= 3)
def registered_broker_lagging(s: MetadataVersionState) -> bool:
    return any(b.fenced and _running(b) and b.registration == b.software and b.offset <= len(s.log) - 3
               for b in s.brokers)


PROPERTIES = PropertySet.of(globals(), context=MetadataVersionContext.of)
