"""KIP-778 at the system level: a KRaft controller quorum and brokers changing software and metadata.version.

The model, and why it is shaped so:

* The metadata log is kept as the ``metadata.version`` levels that some node has not read yet
  (``log``; ``log[-1]`` is the committed level). Entries every node has read are dropped, so the state
  stays finite without a counter; ``max_log`` bounds how far a node may lag (an update waits for it).
* Running voters follow the leader at once (Raft commits on a majority and followers fetch
  continuously); a voter that is down or terminated keeps its offset and reads the rest when it starts.
  Brokers replicate one entry at a time (``ReplicateMetadata``), which is where lag matters.
* A ``metadata.version`` change is decided by the API level's :class:`QuorumController` (the same code
  the unit tests exercise), so each profile's rules live in one place.
* ``records`` is the committed metadata image, as the set of record features in use, each named by the
  level that introduced it (a new record type where that level changed the format, a tagged field
  otherwise). A version change writes a snapshot at the new version (KIP-778 "Downgrades" and "Metadata
  Version Change Implementation"): lossless keeps every record, lossy drops what the target cannot represent.
* A node that reads a version its binary cannot support terminates (KIP-778 "Compatibility"): a broker
  unregisters first, an active controller resigns first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from reference_impl.metadata_version.api import (
    BrokerRegistration,
    BrokerRegistrationRequest,
    DowngradeType,
    QuorumController,
    VersionRange,
    bootstrap_metadata_version,
    format_storage,
    request,
)
from reference_impl.metadata_version.catalog import FEATURE_NAME
from reference_impl.metadata_version.config import MetadataVersionConfig, Software
from reference_impl.metadata_version.state import Broker, MetadataVersionState, NodeStatus, Voter
from reference_impl.metadata_version.symmetry import symmetry_key
from rollcheck.core.registry import registered_properties
from rollcheck.core.system import DataclassSystem, fast_replace, shared_label
from rollcheck.core.transition import Action, AnyProperty


class MetadataVersionSystem(DataclassSystem):
    name = "metadata_version"
    state_type = MetadataVersionState

    def __init__(self, config: MetadataVersionConfig) -> None:
        config.validate()
        super().__init__(config)
        self.catalog = config.version_catalog
        self.softwares: dict[str, Software] = {s.name: s for s in config.softwares}
        self.record_levels = tuple(sorted(set(config.record_levels)))
        self._decisions: dict[tuple[object, ...], tuple[bool, int | None]] = {}
        # The operator's requests are fixed per config: (level, downgrade, dry run, label), in successor order.
        self._requests = tuple((level, DowngradeType[dt], dry, _label("UpdateFeatures", level=level, downgrade=dt,
                                                                      dry_run=dry))
                               for level in config.requested_levels for dt in config.downgrade_types
                               for dry in ((False, True) if config.dry_run else (False,)))
        # Memos (pure functions of a few fields): software -> VersionRange; (software, committed level) ->
        # registration accepted (the controller's check reads only the offered range and the finalized level).
        self._ranges: dict[str, VersionRange] = {}
        self._registration_ok: dict[tuple[str, int], bool] = {}

    def __getstate__(self) -> dict[str, object]:
        d = super().__getstate__()
        d["_decisions"] = {}  # a memo, rebuilt wherever the system is unpickled
        d["_registration_ok"] = {}
        return d

    # ------------------------------------------------------------------ interface
    def initial_states(self) -> Iterable[MetadataVersionState]:
        """A formatted cluster on ``initial_software`` after its first leader wrote the bootstrap
        FeatureLevelRecord (KIP-778 "Initialization"); ``initial_level`` 0 is a pre-KIP-778 preview
        cluster with no version in meta.properties, which bootstraps at level 1."""
        c = self.config
        old = c.old
        if c.initial_level == 0:
            meta = format_storage("rollcheck", self.catalog, old.max_level, profile="kip")
            meta = replace(meta, metadata_version=None)
        else:
            meta = format_storage("rollcheck", self.catalog, old.max_level, c.initial_level, profile="kip")
        record = bootstrap_metadata_version(meta, self.catalog)
        assert record is not None  # an empty log always gets its bootstrap record
        level = record.feature_level
        voters = tuple(Voter(old.name, NodeStatus.RUNNING, 0) for _ in range(c.voters))
        brokers = tuple(Broker(old.name, NodeStatus.RUNNING, 0, old.name, False, level) for _ in range(c.brokers))
        return [MetadataVersionState(voters, brokers, 0, (level,), frozenset())]

    def properties(self) -> Sequence[AnyProperty]:
        return registered_properties(self)  # the set its ProtocolEntry names (properties=)

    def view(self, s: MetadataVersionState) -> dict[str, object]:
        return {
            "voters": tuple({"software": v.software, "status": v.status.name, "offset": v.offset} for v in s.voters),
            "brokers": tuple({"software": b.software, "status": b.status.name, "offset": b.offset,
                              "registration": b.registration, "fenced": b.fenced, "rpc_level": b.rpc_level}
                             for b in s.brokers),
            "leader": s.leader,
            "log": s.log,
            "records": s.records,
        }

    def successors(self, s: MetadataVersionState) -> list[tuple[Action, MetadataVersionState]]:
        c = self.config
        out: list[tuple[Action, MetadataVersionState]] = []
        has_quorum = s.leader >= 0 and self._running_voters(s) * 2 > len(s.voters)
        if has_quorum:
            for level, downgrade, dry, label in self._requests:
                nxt = self.update_features(s, level, downgrade, dry)
                if nxt is not None:
                    out.append((label, nxt))
            for t in self.record_levels:
                if t not in s.records and (t <= s.level or "write_record_above_version" in c.mutations):
                    out.append((_label("WriteRecord", introduced=t), _with(s, records=s.records | {t})))
        for i, b in enumerate(s.brokers):
            if b.status is NodeStatus.RUNNING and b.offset < len(s.log) - 1:
                out.append((_label("ReplicateMetadata", broker=i), self.replicate(s, i)))
        if has_quorum:
            for i, b in enumerate(s.brokers):
                # A fenced broker registers (again); a restart fences, so a registration for another binary
                # is always fenced too (MV-16 checks that, rather than a second guard taking it on trust).
                if b.status is NodeStatus.RUNNING and b.fenced:
                    out.append((_label("RegisterBroker", broker=i), self.register_broker(s, i)))
        if s.leader < 0:
            if self._running_voters(s) * 2 > len(s.voters):
                for v, voter in enumerate(s.voters):
                    if voter.status is NodeStatus.RUNNING:
                        out.append((_label("ElectLeader", voter=v), _with(s, leader=v)))
        elif c.failover:
            for v, voter in enumerate(s.voters):
                if v != s.leader and voter.status is NodeStatus.RUNNING:
                    out.append((_label("LeaderFailover", voter=v), _with(s, leader=v)))
        for kind, nodes in (("voter", s.voters), ("broker", s.brokers)):
            for i, n in enumerate(nodes):
                for sw in c.softwares:
                    if sw.name != n.software:
                        out.append((_label("RestartNode", role=kind, node=i, software=sw.name),
                                    self.restart(s, kind, i, sw.name)))
        if c.crashes:
            down = sum(1 for n in (*s.voters, *s.brokers) if n.status is not NodeStatus.RUNNING)
            for kind, nodes in (("voter", s.voters), ("broker", s.brokers)):
                for i, n in enumerate(nodes):
                    if n.status is NodeStatus.RUNNING and down < c.max_down:
                        out.append((_label("CrashNode", role=kind, node=i), self.crash(s, kind, i)))
                    elif n.status is NodeStatus.DOWN:
                        out.append((_label("RecoverNode", role=kind, node=i),
                                    self.restart(s, kind, i, n.software)))
        return out

    # ------------------------------------------------------------------ the controller
    def controller(self, s: MetadataVersionState) -> QuorumController:
        """The API-level controller for the active voter: its own binary, every voter's range (Kafka:
        controller registrations, refreshed when a controller restarts) and every broker registration."""
        c = self.config
        leader = s.voters[s.leader]
        voter_ids = range(len(s.voters))
        return QuorumController(
            catalog=self.catalog,
            node_id=s.leader,
            local_supported=((FEATURE_NAME, self._range(leader.software)),),
            voters=tuple((v, self._range(s.voters[v].software)) for v in voter_ids),
            brokers=tuple(BrokerRegistration(len(s.voters) + i, ((FEATURE_NAME, self._range(b.registration)),),
                                             b.fenced)
                          for i, b in enumerate(s.brokers) if b.registration),
            finalized=((FEATURE_NAME, s.level),),
            profile=c.profile,
            kafka_release=c.kafka_release,
            mutations=c.mutations,
        )

    def decide(self, s: MetadataVersionState, level: int, downgrade: DowngradeType, dry_run: bool
               ) -> tuple[bool, int | None]:
        """(accepted, the level written or None when nothing is written) for one UpdateFeatures request."""
        key = (s.voters[s.leader].software, tuple([v.software for v in s.voters]),
               tuple([(b.registration, b.fenced) for b in s.brokers]), s.log[-1], level, downgrade, dry_run)
        hit = self._decisions.get(key)
        if hit is None:
            result = self.controller(s).update_features(request(FEATURE_NAME, level, downgrade, dry_run=dry_run))
            # the request names metadata.version alone: its record, if any, is the one written
            written = next((r.feature_level for r in result.records if r.name == FEATURE_NAME), None)
            hit = (result.response.ok, written)
            self._decisions[key] = hit
        return hit

    def update_features(self, s: MetadataVersionState, level: int, downgrade: DowngradeType, dry_run: bool
                        ) -> MetadataVersionState | None:
        """The state after an operator's request; None when the log is full (the request waits)."""
        accepted, written = self.decide(s, level, downgrade, dry_run)
        if not accepted or written is None or written == s.level:
            # Refused, dry run, or a record that restates the current level: the image is unchanged.
            return s
        if len(s.log) >= self.config.max_log:
            return None
        records = s.records
        lossless = self.catalog.is_lossless(s.level, written) if written in self.catalog.levels else False
        if written < s.level and (not lossless or "lossless_drops_records" in self.config.mutations):
            # The downgrade snapshot is written at the target version: record types and fields the
            # target cannot represent are excluded (KIP-778 "Downgrades").
            records = frozenset(t for t in records if t <= written)
        log = (*s.log, written)
        end = len(log) - 1
        voters = list(s.voters)
        leader = s.leader
        for v, voter in enumerate(voters):
            if voter.status is NodeStatus.RUNNING:
                if self._range(voter.software).contains(written):
                    voters[v] = _with(voter, offset=end)
                else:
                    # KIP-778 Compatibility: a controller that meets an unsupported version resigns
                    # (if active) and terminates.
                    voters[v] = _with(voter, status=NodeStatus.TERMINATED)
                    if v == leader:
                        leader = -1
        return _normalize(MetadataVersionState(tuple(voters), s.brokers, leader, log, records))

    # ------------------------------------------------------------------ brokers
    def replicate(self, s: MetadataVersionState, i: int) -> MetadataVersionState:
        b = s.brokers[i]
        level = s.log[b.offset + 1]
        sw = self.softwares[b.software]
        if not sw.supports(level) and "broker_ignores_unsupported" not in self.config.mutations:
            # KIP-778 Compatibility: "If a broker encounters an unsupported metadata.version, it should
            # unregister itself and terminate."
            nb = _with(b, status=NodeStatus.TERMINATED, registration="", fenced=True, rpc_level=0)
        else:
            offset = b.offset + 1
            caught_up = offset == len(s.log) - 1
            nb = _with(b, offset=offset, rpc_level=self._rpc_level(sw, level),
                         fenced=b.fenced and not (caught_up and b.registration == b.software))
        return _normalize(_with(s, brokers=_put(s.brokers, i, nb)))

    def register_broker(self, s: MetadataVersionState, i: int) -> MetadataVersionState:
        b = s.brokers[i]
        sw = self.softwares[b.software]
        key = (b.software, s.level)
        ok = self._registration_ok.get(key)
        if ok is None:
            req = BrokerRegistrationRequest(len(s.voters) + i,
                                            ((FEATURE_NAME, VersionRange(sw.min_level, sw.max_level)),))
            reply, _ = self.controller(s).register_broker(req)
            ok = self._registration_ok[key] = reply.ok
        if not ok:
            return s  # refused: the broker stays fenced and retries
        caught_up = b.offset == len(s.log) - 1
        # Kafka unfences a registered broker once it has caught up with the metadata log.
        return _with(s, brokers=_put(s.brokers, i, _with(b, registration=b.software, fenced=not caught_up)))

    # ------------------------------------------------------------------ restarts and faults
    def restart(self, s: MetadataVersionState, kind: str, i: int, software: str) -> MetadataVersionState:
        """Stop node ``i`` and start it on ``software`` (a rolling restart, or a recovery when the
        software is its own). On start the node reads its log: a version its binary cannot read makes it
        terminate instead of running (KIP-778 Compatibility)."""
        sw = self.softwares[software]
        check = "restart_skips_version_check" not in self.config.mutations
        if kind == "voter":
            v = s.voters[i]
            leader = -1 if s.leader == i else s.leader
            # A starting voter fetches the committed log from its offset on.
            readable = all(sw.supports(lvl) for lvl in s.log[v.offset:]) or not check
            nv = (Voter(software, NodeStatus.RUNNING, len(s.log) - 1) if readable
                  else Voter(software, NodeStatus.TERMINATED, v.offset))
            return _normalize(_with(s, voters=_put(s.voters, i, nv), leader=leader))
        b = s.brokers[i]
        level = s.log[b.offset]  # the metadata it has on disk
        if sw.supports(level) or not check:
            # A starting broker is a new incarnation: fenced until it registers and catches up.
            fenced = b.fenced if "restart_keeps_session" in self.config.mutations else True
            nb = _with(b, software=software, status=NodeStatus.RUNNING, fenced=fenced,
                         rpc_level=self._rpc_level(sw, level))
        else:
            nb = _with(b, software=software, status=NodeStatus.TERMINATED, fenced=True, rpc_level=0)
        return _with(s, brokers=_put(s.brokers, i, nb))

    def crash(self, s: MetadataVersionState, kind: str, i: int) -> MetadataVersionState:
        if kind == "voter":
            v = s.voters[i]
            return _with(s, voters=_put(s.voters, i, _with(v, status=NodeStatus.DOWN)),
                           leader=-1 if s.leader == i else s.leader)
        b = s.brokers[i]
        # The registration survives a crash; the broker is fenced when its session times out.
        return _with(s, brokers=_put(s.brokers, i, _with(b, status=NodeStatus.DOWN, fenced=True, rpc_level=0)))

    # ------------------------------------------------------------------ helpers
    def _range(self, software: str) -> VersionRange:
        rng = self._ranges.get(software)
        if rng is None:  # VersionRange is frozen: one per software serves every call
            sw = self.softwares[software]
            rng = self._ranges[software] = VersionRange(sw.min_level, sw.max_level)
        return rng

    def _rpc_level(self, sw: Software, level: int) -> int:
        # KIP-778 ApiVersions: brokers renegotiate RPCs when they see a new metadata.version, and use
        # only what it enables. The mutant uses what its binary supports, as the static IBP did.
        return sw.max_level if "rpc_from_binary" in self.config.mutations else level

    @staticmethod
    def _running_voters(s: MetadataVersionState) -> int:
        return sum(1 for v in s.voters if v.status is NodeStatus.RUNNING)

    # ------------------------------------------------------------------ symmetry (issue #17)
    def symmetry_key(self, s: MetadataVersionState) -> object:
        """A hashable key equal for two states iff one is the other with interchangeable voters and brokers
        renamed (the canonical representative of the orbit); see :mod:`reference_impl.metadata_version.symmetry`."""
        return self.cached_symmetry_key(symmetry_key, s)


_label = shared_label
_with = fast_replace


def _put(nodes: tuple[object, ...], i: int, node: object) -> tuple[object, ...]:
    return (*nodes[:i], node, *nodes[i + 1:])


def _normalize(s: MetadataVersionState) -> MetadataVersionState:
    """Drop the log entries every node has read, so that equal situations are equal states."""
    low = min([v.offset for v in s.voters] + [b.offset for b in s.brokers])
    if low == 0:
        return s
    return MetadataVersionState(
        tuple(_with(v, offset=v.offset - low) for v in s.voters),
        tuple(_with(b, offset=b.offset - low) for b in s.brokers),
        s.leader, s.log[low:], s.records)
