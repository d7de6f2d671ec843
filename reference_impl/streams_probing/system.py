"""KIP-268 at the system level: a group of Kafka Streams instances going through a rolling upgrade.

The model, and why it is shaped so:

* A rebalance is one step (JoinGroup and SyncGroup as a barrier): every running instance sends its
  subscription, a leader elected by the coordinator (any member: a superset of the coordinator's choice)
  runs :func:`~reference_impl.streams_probing.api.assign`, and each member finds its assignment in its
  inbox. Each member then processes it in its own step (:func:`~reference_impl.streams_probing.api.on_assignment`):
  probing down, adopting the supported version, failing, or nothing.
* Rebalances happen only when something asks for one: a member joining or leaving (bounce, crash,
  restart), a member that probed, or the leader's follow-up request. So "converged" and "stable" have a
  meaning, and a group that never settles (a rebalance storm) is caught by the liveness property.
* The operator bounces one instance at a time, only when the group is stable (the rolling-bounce
  procedure: wait until the bounced instance is running again), round after round. Under procedure
  "operator" (the runbooks') it bounces any instance, up to ``OPERATOR_MAX_BOUNCES`` times each, with
  ``upgrade.from`` removed or set as it chooses: the runbook, not the model, says which.
* A failed instance (an exception in the assignor, or an error assignment) stays failed: the properties
  report it; nothing restarts it behind the checker's back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from reference_impl.streams_probing.api import (
    MAX_ENCODED_VERSION,
    AssignmentInfo,
    AssignorError,
    IllegalArgumentException,
    IllegalStateException,
    MemberOutcome,
    SubscriptionInfo,
    TaskAssignmentException,
    assign,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
    on_assignment,
)
from reference_impl.streams_probing.config import OPERATOR_MAX_BOUNCES, StreamsProbingConfig
from reference_impl.streams_probing.releases import KAFKA, StreamsRelease, configured_metadata_version, release
from reference_impl.streams_probing.state import REBALANCE_CAP, Delivered, StreamsGroupState, StreamsInstance
from reference_impl.streams_probing.symmetry import symmetry_key
from rollcheck.core.registry import registered_properties
from rollcheck.core.system import DataclassSystem, fast_replace, shared_label
from rollcheck.core.traces import Record
from rollcheck.core.transition import Action, AnyProperty

_label = shared_label
_with = fast_replace


def _set(xs: tuple[StreamsInstance, ...], i: int, x: StreamsInstance) -> tuple[StreamsInstance, ...]:
    return (*xs[:i], x, *xs[i + 1:])


class StreamsProbingSystem(DataclassSystem):
    name = "streams_probing"
    state_type = StreamsGroupState

    def __init__(self, config: StreamsProbingConfig) -> None:
        config.validate()
        super().__init__(config)
        self.old = config.old
        self.new = config.new
        # (release, upgrade.from, restart) -> configured version: fixed per config, asked on every bounce.
        self._configured: dict[tuple[str, str | None, bool], int] = {}

    # ---- helpers shared with the properties
    def target_version(self, s: StreamsGroupState) -> int:
        """The highest version every instance supports (what the group should converge on)."""
        return min(release(x.release).latest_supported for x in s.instances)

    @staticmethod
    def stable(s: StreamsGroupState) -> bool:
        return (not s.rebalance_pending and s.follow_up < 0
                and all(x.running and x.inbox is None and not x.failure for x in s.instances))

    def bounces_done(self, s: StreamsGroupState) -> bool:
        """Every bounce of the procedure is done; under "operator", the operator's intent is complete: every
        instance runs the new release with ``upgrade.from`` removed."""
        if self.config.operator:
            return all(x.release == self.new.name and x.upgrade_from is None for x in s.instances)
        return all(x.bounces >= self.config.rounds for x in s.instances)

    def converged(self, s: StreamsGroupState) -> bool:
        target = self.target_version(s)
        return all(x.used_version == target and x.last_version == target for x in s.instances)

    def configured(self, rel_name: str, upgrade_from: str | None, restart: bool = False) -> int:
        """The version an instance starts with (``configured_metadata_version``), with the variants that
        get it wrong."""
        key = (rel_name, upgrade_from, restart)
        hit = self._configured.get(key)
        if hit is None:
            hit = self._configured[key] = self._configure(rel_name, upgrade_from, restart)
        return hit

    def _configure(self, rel_name: str, upgrade_from: str | None, restart: bool) -> int:
        rel = release(rel_name)
        if "no_kafka_6054_backport" in self.config.mutations and not rel.probing:
            upgrade_from = None  # before KAFKA-6054's back-port, 0.10.1 ... 1.1 had no upgrade.from
        if restart and "restart_ignores_upgrade_from" in self.config.mutations:
            upgrade_from = None
        return configured_metadata_version(rel, upgrade_from, self.config.profile)

    # ---- the TLA+ variables of specs/StreamsProbing.tla
    def view(self, s: StreamsGroupState) -> dict[str, object]:
        """The state as the spec's variables: an absent inbox is the empty set (an option as a set), and a
        failure is its kind ("subscription", "leader", "member", "shutdown"), not the exception text."""
        return {
            "instances": tuple(Record(
                release=x.release, upgrade_from=x.upgrade_from or "", used_version=x.used_version,
                running=x.running, bounces=x.bounces,
                inbox=frozenset() if x.inbox is None else frozenset({Record(
                    version=x.inbox.version, supported=x.inbox.supported, error=x.inbox.error,
                    probing_reply=x.inbox.probing_reply)}),
                last_version=x.last_version, failure=x.failure.split(":", 1)[0]) for x in s.instances),
            "rebalance_pending": s.rebalance_pending,
            "follow_up": s.follow_up,
            "rebalances": s.rebalances,
            "leader": s.leader,
            "crashes": s.crashes,
        }

    # ---- the transition system
    def initial_states(self) -> Iterable[StreamsGroupState]:
        v = self.old.latest_supported
        inst = StreamsInstance(self.old.name, None, v, True, 0, None, 0, "")
        yield StreamsGroupState((inst,) * self.config.instances, True, -1, 0, -1, 0)

    def properties(self) -> Sequence[AnyProperty]:
        return registered_properties(self)  # the set its ProtocolEntry names (properties=)

    def successors(self, s: StreamsGroupState) -> Iterable[tuple[Action, StreamsGroupState]]:
        cfg = self.config
        members = [i for i, x in enumerate(s.instances) if x.running and not x.failure]
        inboxes_empty = all(x.inbox is None for x in s.instances)
        if self.stable(s):
            yield from self._bounces(s)
        if s.rebalance_pending and inboxes_empty and s.follow_up < 0 and members:
            for leader in members:
                yield self._rebalance(s, leader, members)
        for i, x in enumerate(s.instances):
            if x.inbox is not None:
                yield self._on_assignment(s, i)
        if s.crashes < cfg.max_crashes:
            for i in members:
                x = s.instances[i]
                down = _with(x, running=False, inbox=None)
                others = any(j != i for j in members)
                yield _label("Crash", instance=i), _with(
                    s, instances=_set(s.instances, i, down), rebalance_pending=others or s.rebalance_pending,
                    follow_up=-1 if s.follow_up == i else s.follow_up, rebalances=0, crashes=s.crashes + 1)
        for i, x in enumerate(s.instances):
            if not x.running and not x.failure:
                used = self.configured(x.release, x.upgrade_from, restart=True)
                up = _with(x, running=True, used_version=used, inbox=None)
                yield _label("Restart", instance=i), _with(
                    s, instances=_set(s.instances, i, up), rebalance_pending=True, rebalances=0)

    def _bounces(self, s: StreamsGroupState) -> Iterable[tuple[Action, StreamsGroupState]]:
        cfg = self.config
        if cfg.operator:
            yield from self._operator_bounces(s)
            return
        for i, x in enumerate(s.instances):
            if x.bounces >= cfg.rounds or any(y.bounces < x.bounces for y in s.instances):
                continue  # round r+1 starts once every instance finished round r
            last_round = x.bounces + 1 == cfg.rounds
            upgrade_from = None if last_round else cfg.upgrade_from
            used = self.configured(self.new.name, upgrade_from)
            bounced = StreamsInstance(self.new.name, upgrade_from, used, True, x.bounces + 1, None,
                                      x.last_version, "")
            action = _label("RollingBounce", instance=i, release=self.new.name, upgrade_from=upgrade_from)
            yield action, _with(s, instances=_set(s.instances, i, bounced), rebalance_pending=True, rebalances=0)

    def _operator_bounces(self, s: StreamsGroupState) -> Iterable[tuple[Action, StreamsGroupState]]:
        """Procedure "operator": any instance below the cap, in any order, with each upgrade.from it may use."""
        cfg = self.config
        for i, x in enumerate(s.instances):
            if x.bounces >= OPERATOR_MAX_BOUNCES:
                continue
            for upgrade_from in cfg.upgrade_from_choices:
                used = self.configured(self.new.name, upgrade_from)
                bounced = StreamsInstance(self.new.name, upgrade_from, used, True, x.bounces + 1, None,
                                          x.last_version, "")
                action = _label("RollingBounce", instance=i, release=self.new.name, upgrade_from=upgrade_from)
                yield action, _with(s, instances=_set(s.instances, i, bounced), rebalance_pending=True,
                                    rebalances=0)

    def _rebalance(self, s: StreamsGroupState, leader: int,
                   members: list[int]) -> tuple[Action, StreamsGroupState]:
        cfg = self.config
        subs: dict[str, SubscriptionInfo] = {}
        instances = s.instances
        for i in members:
            x = instances[i]
            rel = release(x.release)
            try:
                subs[str(i)] = SubscriptionInfo.of(x.used_version, rel.latest_supported)
            except IllegalArgumentException as exc:
                # The member cannot even build its subscription (a version above what it speaks).
                failed = _with(x, running=False, failure=f"subscription: {exc}")
                return _label("Rebalance", leader=leader), _with(
                    s, instances=_set(instances, i, failed), rebalances=0)
        action = _label("Rebalance", leader=leader)
        lrel = release(instances[leader].release)
        try:
            # What the leader reads is what the members' bytes say (a field written at the wrong version
            # changes the assignment, so the properties see a codec bug, not only its unit tests).
            for i in members:
                subs[str(i)] = subscription_over_the_wire(subs[str(i)], release(instances[i].release), lrel)
            result = assign(lrel, cfg.profile, subs, mutations=cfg.mutations)
        except (TaskAssignmentException, IllegalStateException) as exc:
            failed = _with(instances[leader], running=False, failure=f"leader: {exc}")
            # The leader's thread dies; the others rejoin without it.
            return action, _with(s, instances=_set(instances, leader, failed), rebalance_pending=True,
                                   rebalances=0, leader=leader)
        new = list(instances)
        for i in members:
            info: AssignmentInfo = result.assignments[str(i)]
            # The KIP's empty reply to a future member (kip; kafka-2.0: versionProbingAssignment's), which
            # today's assignor (kafka) no longer sends.
            probing_reply = (info.is_empty and subs[str(i)].version > lrel.latest_supported
                             and cfg.profile != KAFKA)
            new[i] = _with(new[i], inbox=Delivered(info.version, info.latest_supported, int(info.error),
                                                     probing_reply))
        return action, _with(s, instances=tuple(new), rebalance_pending=False,
                               follow_up=leader if result.follow_up_rebalance else -1,
                               rebalances=min(s.rebalances + 1, REBALANCE_CAP), leader=leader)

    def _on_assignment(self, s: StreamsGroupState, i: int) -> tuple[Action, StreamsGroupState]:
        cfg = self.config
        x = s.instances[i]
        d = x.inbox
        assert d is not None
        info = AssignmentInfo(d.version, d.supported, error=AssignorError(d.error))
        follow_up = s.follow_up
        leader_trigger = follow_up == i
        if leader_trigger:
            follow_up = -1
        try:
            if s.leader >= 0:  # the last rebalance's leader sent it (a bounce needs every inbox processed first)
                info = assignment_over_the_wire(info, release(s.instances[s.leader].release), release(x.release))
            upd = on_assignment(release(x.release), cfg.profile, x.used_version, info, cfg.mutations)
        except (TaskAssignmentException, IllegalStateException) as exc:
            failed = _with(x, running=False, inbox=None, failure=f"member: {exc}")
            return _label("AssignmentFailure", instance=i, version=d.version), _with(
                s, instances=_set(s.instances, i, failed), follow_up=follow_up, rebalances=0,
                rebalance_pending=True)
        if upd.outcome is MemberOutcome.ERROR_SHUTDOWN:
            failed = _with(x, running=False, inbox=None, failure=f"shutdown: {AssignorError(upd.error).name}")
            return _label("ErrorShutdown", instance=i, error=AssignorError(upd.error).name), _with(
                s, instances=_set(s.instances, i, failed), follow_up=follow_up, rebalances=0,
                rebalance_pending=True)
        done = _with(x, used_version=upd.used_version, inbox=None, last_version=d.version)
        pending = s.rebalance_pending or upd.rebalance or leader_trigger
        if upd.outcome is MemberOutcome.PROBE_DOWNGRADE:
            action = _label("ProbeDowngrade", instance=i, version=upd.used_version)
        elif upd.outcome is MemberOutcome.ADOPT_SUPPORTED:
            action = _label("AdoptSupportedVersion", instance=i, version=upd.used_version)
        elif leader_trigger:
            action = _label("LeaderFollowUpRebalance", instance=i)
        else:
            action = _label("OnAssignment", instance=i, version=d.version)
        return action, _with(s, instances=_set(s.instances, i, done), rebalance_pending=pending,
                               follow_up=follow_up)

    # ------------------------------------------------------------------ symmetry (issue #17)
    def symmetry_key(self, s: StreamsGroupState) -> object:
        """A hashable key equal for two states iff one is the other with interchangeable instances
        renamed (the canonical representative of the orbit); see :mod:`reference_impl.streams_probing.symmetry`."""
        return self.cached_symmetry_key(symmetry_key, s)


def subscription_over_the_wire(info: SubscriptionInfo, member: StreamsRelease, leader: StreamsRelease
                                ) -> SubscriptionInfo:
    """The subscription as the leader decodes the member's bytes (``SubscriptionInfo.encode`` by the member's
    release, ``decode`` by the leader's: a newer version reaches a probing leader as version and supported
    version only). Versions above the codec's layouts (``MAX_ENCODED_VERSION``) pass as fields: the model has
    no bytes for them. A decoding error is the leader's (Kafka's assign() throws on the member's data)."""
    if info.version > MAX_ENCODED_VERSION:
        return info
    return decode_subscription(encode_subscription(info, member.latest_supported), leader.latest_supported)


def assignment_over_the_wire(info: AssignmentInfo, leader: StreamsRelease, member: StreamsRelease) -> AssignmentInfo:
    """The assignment as the member decodes the leader's bytes (``AssignmentInfo.encode`` by the leader's
    release, ``decode`` by the member's, which throws on a version it does not know). Only the fields the state
    keeps (version, supported version, error) are carried: the model assigns no tasks. Versions above the
    codec's layouts pass as fields."""
    if info.version > MAX_ENCODED_VERSION or info.version > leader.latest_supported or not member.can_decode(
            info.version):
        # A version the member cannot decode fails in on_assignment with the model's one message for it (Kafka
        # before 2.0 words it "Unknown assignment data version": the spec and Z3 name one failure kind).
        return info
    return decode_assignment(encode_assignment(info, leader.latest_supported), member.latest_supported)
