"""The ``zk_migration`` protocol's Kafka oracle binding (``ProtocolEntry.oracle``): what the reference decides at a
state, put to Apache Kafka's own ``ZkMigrationState``, ``KRaftMigrationDriver`` state-change table, ``QuorumFeatures``
and ``ActivationRecordsGenerator`` (kafka_oracle/zk_migration, one adapter per API epoch).

A row of the matrix checks the config as it stands for one Kafka release (:meth:`ZkMigrationOracle.config_for`):
the ``kafka`` profile, the release's readiness rule (``kafka_release``: "3.5" for 3.4 - 3.6, "3.9" from 3.7),
and from 3.6 on the release's newest production metadata.version as the quorum's level (the
brokers' IBP moved with it). The reference's kafka rules are Kafka 3.9's, which bootstrap a migrating quorum only
from 3.6-IV1 (``records_for_empty_log``): a 3.4.x or 3.5.x row keeps the config's levels, which those releases do
not have, and is asked only what no metadata.version enters (the persisted states' codes, the driver's table and
state changes, the 3.4 / 3.5 quorum readiness, which reads no metadata.version).

What is asked:

* ``zkMigrationState``: for the state the log holds, its code (``ZkMigrationState.value``) and what that code
  decodes to (``ZkMigrationState.of``).
* ``driverStates`` and ``driverStateTable`` (at the initial state): the driver's states in order, and every
  (current, new) pair of the reference's table against ``KRaftMigrationDriver.isValidStateChange`` at the release.
* ``driverStateChange``: every driver state change a successor of the state makes (current -> new, labelled with
  its action), which must be valid at the release (a restarted or recovered voter's new driver starts
  UNINITIALIZED: UNINITIALIZED -> its state).
* ``controllerReadiness``: where the active controller's driver waits for the controller quorum before the copy,
  the reference's verdict (``ZkMigrationSystem.quorum_ready``) and reason on the voters' view against
  ``QuorumFeatures``: 3.7+ (``kafka_release`` "3.9"): the controller registrations at the level
  (``reason_all_controllers_zk_migration_not_ready``); 3.5 / 3.6 (``kafka_release`` "3.5"): the running voters'
  ApiVersions (``reason_all_controllers_zk_migration_not_ready_from_api_versions``); 3.4: the driver's stub, which
  always answers ready and gives no reason (KAFKA-14909; the row keeps the reference's 3.5 rule, the fix).
* ``activationRecords`` (3.6+, where ``ActivationRecordsGenerator`` exists): what ``generate_activation_records``
  writes for an empty log (at the initial state) and for the state's log (its ZkMigrationState and open
  transaction), each with the migration config on and off.

* ``registerBroker`` (3.6+: a 3.4 / 3.5 row's quorum level is not one of the release's): where a ZooKeeper broker
  with the migration config asks the active controller to register (``RegisterZkBroker``), the reference's verdict
  (``ZkMigrationSystem._registration_accepted``) and Kafka's exception (``register_broker``) against
  ``ClusterControlManager.registerBroker`` with IsMigratingZkBroker, the broker's IBP as its metadata.version range,
  the quorum's level finalized and the controller's migration config. The message is compared at 3.9 (3.6 - 3.8
  word the unsupported-version error otherwise); before, the verdict and the exception's class.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from reference_impl.zk_migration.api import (
    ActivationError,
    BrokerRegistrationRequest,
    KafkaApiError,
    MigrationDriverState,
    ZkMigrationState,
    generate_activation_records,
    is_valid_state_change,
    reason_all_controllers_zk_migration_not_ready,
    reason_all_controllers_zk_migration_not_ready_from_api_versions,
    register_broker,
)
from reference_impl.zk_migration.config import ZkMigrationConfig
from reference_impl.zk_migration.replay import BUGS as REPLAY_BUGS
from reference_impl.zk_migration.replay import REPLAY
from reference_impl.zk_migration.state import BrokerMode, Shutdown
from reference_impl.zk_migration.system import ZkMigrationSystem
from rollcheck.oracle.binding import Adapter, KafkaBug, OracleRelease, Question
from rollcheck.oracle.compare import first_difference, initial_states

_HANDLER = "org.apache.kafka.controller.RollcheckZkMigration"
_MIGRATION = "org.apache.kafka.metadata.migration"
# What every adapter reaches in Kafka's jars (a --jars directory without one is refused naming it).
_CLASSES = (f"{_MIGRATION}.KRaftMigrationDriver", f"{_MIGRATION}.ZkMigrationState",
            "org.apache.kafka.controller.QuorumFeatures")

ADAPTERS: tuple[Adapter, ...] = (
    Adapter("state-3.4", _HANDLER, (*_CLASSES, f"{_MIGRATION}.MigrationState")),
    Adapter("state-3.5", _HANDLER, (*_CLASSES, f"{_MIGRATION}.MigrationDriverState",
                                    "org.apache.kafka.clients.NodeApiVersions")),
    Adapter("state-3.6", _HANDLER, (*_CLASSES, f"{_MIGRATION}.MigrationDriverState",
                                    "org.apache.kafka.controller.ActivationRecordsGenerator")),
    Adapter("state-3.7", _HANDLER, (*_CLASSES, f"{_MIGRATION}.MigrationDriverState",
                                    "org.apache.kafka.controller.ActivationRecordsGenerator",
                                    "org.apache.kafka.metadata.ControllerRegistration")),
)


@dataclasses.dataclass(frozen=True)
class _Release:
    """What the binding knows of a release: its adapter, the level a row's quorum stands at (None: the config's,
    for 3.4 / 3.5, whose levels the reference's 3.9 rules cannot bootstrap a migration at), whether it has
    ActivationRecordsGenerator, whether Kafka gives a readiness reason (3.5+; the 3.4 stub has none) and the
    reference's kafka_release for the row."""

    name: str
    adapter: str
    level: int | None
    activation: bool
    reasons: bool
    rules: str  # the reference's kafka_release: "3.5" (QuorumFeatures from ApiVersions) or "3.9"
    tiers: tuple[str, ...] = ("nightly",)

    @property
    def line(self) -> str:
        return ".".join(self.name.split(".")[:2])


# ci: the newest of each line, but 3.4: every 3.4.x release has KAFKA-14909 / KAFKA-15010 / KAFKA-14805 and
# disagrees by design (its rows stay in the nightly tier, as streams_probing's 2.1.x).
_CI = ("ci", "nightly")
# MetadataVersion.latestProduction() of each line: 3.6-IV2 (14), 3.7-IV4 (19), 3.8-IV0 (20), 3.9-IV0 (21).
RELEASES: tuple[_Release, ...] = (
    _Release("3.4.0", "state-3.4", None, False, False, "3.5"),
    _Release("3.4.1", "state-3.4", None, False, False, "3.5"),
    _Release("3.5.0", "state-3.5", None, False, True, "3.5"),
    _Release("3.5.1", "state-3.5", None, False, True, "3.5"),
    _Release("3.5.2", "state-3.5", None, False, True, "3.5", _CI),
    _Release("3.6.0", "state-3.6", 14, True, True, "3.5"),
    _Release("3.6.1", "state-3.6", 14, True, True, "3.5"),
    _Release("3.6.2", "state-3.6", 14, True, True, "3.5", _CI),
    _Release("3.7.0", "state-3.7", 19, True, True, "3.9"),
    _Release("3.7.1", "state-3.7", 19, True, True, "3.9"),
    _Release("3.7.2", "state-3.7", 19, True, True, "3.9", _CI),
    _Release("3.8.0", "state-3.7", 20, True, True, "3.9"),
    _Release("3.8.1", "state-3.7", 20, True, True, "3.9", _CI),
    _Release("3.9.0", "state-3.7", 21, True, True, "3.9"),
    _Release("3.9.1", "state-3.7", 21, True, True, "3.9"),
    _Release("3.9.2", "state-3.7", 21, True, True, "3.9", _CI),
)
_BY_NAME = {r.name: r for r in RELEASES}

_SYNC = "SYNC_KRAFT_TO_ZK"


def _kafka_14909(kind: str, request: Mapping[str, Any], expected: Any, answer: Any) -> bool:
    """KAFKA-14909: the 3.4 driver's quorum check is a stub that says ready where a voter is not."""
    return (kind == "controllerReadiness" and isinstance(expected, Mapping) and isinstance(answer, Mapping)
            and expected.get("ready") is False and answer.get("ready") is True)


def _kafka_15010(kind: str, request: Mapping[str, Any], expected: Any, answer: Any) -> bool:
    """KAFKA-15010: 3.4's MigrationDriverState has no SYNC_KRAFT_TO_ZK (nor its transitions), and goes from
    BECOME_CONTROLLER or ZK_MIGRATION straight to KRAFT_CONTROLLER_TO_BROKER_COMM; all else equal."""
    if not isinstance(answer, Mapping) or not isinstance(expected, Mapping):
        return False
    if kind == "driverStates":
        return (_SYNC in expected.get("states", ())
                and list(answer.get("states", ())) == [s for s in expected["states"] if s != _SYNC])
    missing = answer.get("missing")
    if missing:
        return set(missing) == {_SYNC} and _SYNC in (request.get("from"), request.get("to"))
    return (request.get("from") in ("BECOME_CONTROLLER", "ZK_MIGRATION")
            and request.get("to") == "KRAFT_CONTROLLER_TO_BROKER_COMM"
            and expected == {"valid": False} and dict(answer) == {"valid": True})


def _kafka_14805(kind: str, request: Mapping[str, Any], expected: Any, answer: Any) -> bool:
    """KAFKA-14805: 3.4's ZkMigrationState codes (PRE_MIGRATION 1, MIGRATION 2, swapped in 3.5), and its driver's
    missing WAIT_FOR_CONTROLLER_QUORUM -> BECOME_CONTROLLER (a controller restarted mid-migration)."""
    if not isinstance(expected, Mapping) or not isinstance(answer, Mapping):
        return False
    if kind == "zkMigrationState":
        swapped = {"PRE_MIGRATION": (2, 1), "MIGRATION": (1, 2)}.get(str(request.get("name")))
        return swapped is not None and (expected.get("code"), answer.get("code")) == swapped
    return ((request.get("from"), request.get("to")) == ("WAIT_FOR_CONTROLLER_QUORUM", "BECOME_CONTROLLER")
            and expected == {"valid": True} and dict(answer) == {"valid": False})
_BOOTSTRAP_SOURCE = "the default bootstrap"
# The actions whose driver change is a new driver (a restarted process starts UNINITIALIZED, the model starts it
# INACTIVE: system.restart_voter).
_NEW_DRIVER = frozenset({"RestartVoter", "RecoverVoter"})


def _memo(system: ZkMigrationSystem) -> dict[Any, Any]:
    # Questions per system (a pure function of its config): states that agree on what a question reads share
    # the same Question object, which the check compares once.
    memo: dict[Any, Any] = system.__dict__.setdefault("_memo_oracle_questions", {})
    return memo


def activation_answer(is_empty: bool, offset: int, enabled: bool, level: int | None,
                      state: ZkMigrationState | None, source: str = _BOOTSTRAP_SOURCE) -> dict[str, Any]:
    """The reference's ``generate_activation_records`` in the adapter's normal form: the records as [class,
    field], the batch's atomicity and the activation message; {"error": message} when it throws."""
    try:
        r = generate_activation_records(is_empty, offset, enabled, level, state, source)
    except ActivationError as exc:
        return {"error": str(exc)}
    return {"records": [[x.name, x.value.name if isinstance(x.value, ZkMigrationState) else x.value]
                        for x in r.records],
            "atomic": r.atomic, "message": r.message}


class ZkMigrationOracle:
    """The binding (see the module docstring)."""

    protocol = "zk_migration"
    adapters_dir = "kafka_oracle/zk_migration"
    adapters: tuple[Adapter, ...] = ADAPTERS
    releases: tuple[OracleRelease, ...] = tuple(OracleRelease(r.name, r.line, r.adapter, r.tiers) for r in RELEASES)
    replay = REPLAY  # trace replay on KRaftMigrationDriver (reference_impl/zk_migration/replay.py)
    bugs: tuple[KafkaBug, ...] = (
        KafkaBug(
            "KAFKA-14909", "zk_migration",
            "the 3.4 migration driver does not check the controller quorum: the copy begins while a voter is not "
            "configured for the migration",
            buggy=("3.4.0", "3.4.1"), fixed=("3.5.0", "3.5.1", "3.5.2"), config="misconfigured", profile="kafka",
            kinds=("controllerReadiness",), signature=_kafka_14909,
            story="In Kafka 3.4, KRaftMigrationDriver.isControllerQuorumReadyForMigration was a stub ('TODO "
                  "implement this') that returned true: the active controller left WAIT_FOR_CONTROLLER_QUORUM while "
                  "another voter ran without zookeeper.metadata.migration.enable (or was down), and began the "
                  "migration; that voter, once elected, could not drive it. 3.5 sends ZkMigrationReady in "
                  "ApiVersionsResponse and waits until every other voter has sent it (QuorumFeatures."
                  "reasonAllControllersZkMigrationNotReady); 3.7 reads it from the controller registrations.",
            source="KAFKA-14909 (apache/kafka #13631, 8b33a83f5d64 on 3.5, released in 3.5.0)"),
        KafkaBug(
            "KAFKA-15010", "zk_migration",
            "the 3.4 migration driver has no SYNC_KRAFT_TO_ZK: a controller that takes over mid-migration does "
            "not reconcile ZooKeeper with the log",
            buggy=("3.4.0", "3.4.1"), fixed=("3.5.0", "3.5.1", "3.5.2"), config="small", profile="kafka",
            kinds=("driverStates", "driverStateTable", "driverStateChange"), signature=_kafka_15010,
            story="Kafka 3.4's KRaftMigrationDriver went from BECOME_CONTROLLER / ZK_MIGRATION straight to "
                  "KRAFT_CONTROLLER_TO_BROKER_COMM: a KRaft controller that became active during dual write "
                  "resumed after the log's end and never wrote to ZooKeeper what the previous controller had "
                  "committed but not yet written. 3.5 added the SYNC_KRAFT_TO_ZK state (a full KRaft -> ZooKeeper "
                  "sync after every take-over); the 3.4 jars have neither the state nor its transitions.",
            source="KAFKA-15010 (apache/kafka #13758, f1bb8d17b0cc on 3.5, released in 3.5.0)"),
        KafkaBug(
            "KAFKA-14805", "zk_migration",
            "the 3.4 controller has no pre-migration mode; its ZkMigrationState codes PRE_MIGRATION 1 / MIGRATION 2 "
            "are swapped in 3.5",
            buggy=("3.4.0", "3.4.1"), fixed=("3.5.0", "3.5.1", "3.5.2"), config="small", profile="kafka",
            kinds=("zkMigrationState", "driverStateTable", "driverStateChange"), signature=_kafka_14805,
            story="Kafka 3.4 (migration early access) had no KRaft pre-migration mode: its controller served metadata "
                  "changes before the copy (KIP-866 'soft start'; the reference's serve_before_copy, MIG-M6) and "
                  "wrote PRE_MIGRATION as code 1 while never writing MIGRATION. 3.5 added the mode and swapped the "
                  "codes (MIGRATION 1, PRE_MIGRATION 2) so that a 3.4 log reads as MIGRATION, and let a controller "
                  "restarted mid-migration go WAIT_FOR_CONTROLLER_QUORUM -> BECOME_CONTROLLER.",
            source="KAFKA-14805 (apache/kafka #13407, c687621a23e, released in 3.5.0)"),
        *REPLAY_BUGS,  # re-found by trace replay on KRaftMigrationDriver (reference_impl/zk_migration/replay.py)
    )

    def config_for(self, config: Any, release: OracleRelease) -> Any:
        r = _BY_NAME[release.name]
        if not isinstance(config, ZkMigrationConfig):
            raise ValueError(f"not a zk_migration config: {type(config).__name__}")
        c = dataclasses.replace(config, profile="kafka", kafka_release=r.rules)
        if r.level is not None:
            shift = r.level - config.quorum_level  # the brokers' IBP moves with the quorum's level
            c = dataclasses.replace(c, quorum_level=r.level, broker_ibp=config.broker_ibp + shift)
        return c

    def questions(self, system: Any, state: Any, release: OracleRelease) -> Iterable[Question]:
        assert isinstance(system, ZkMigrationSystem)
        r = _BY_NAME[release.name]
        memo = _memo(system)
        out: list[Question] = []
        if state in initial_states(system):
            out.extend(self._initial_questions(system, r))
        key: tuple[Any, ...] = (r.name, "zkMigrationState", state.migration)
        q = memo.get(key)
        if q is None:
            m = state.migration
            q = memo[key] = Question("zkMigrationState", {"op": "zkMigrationState", "name": m.name},
                                     {"code": m.code, "of": ZkMigrationState.of(m.code).name})
        out.append(q)
        out.extend(self._state_changes(system, state, memo, r))
        leader = state.leader
        if leader >= 0 and state.voters[leader].running and state.voters[leader].migration \
                and state.voters[leader].driver is MigrationDriverState.WAIT_FOR_CONTROLLER_QUORUM \
                and state.migration is ZkMigrationState.PRE_MIGRATION:
            # what the readiness reads of the voters: each one's migration config, and (3.5 rules) whether it runs
            flags = tuple(v.migration if v.running or r.rules == "3.9" else None for v in state.voters)
            key = (r.name, "controllerReadiness", leader, flags)
            q = memo.get(key)
            if q is None:
                q = memo[key] = self._readiness(system, state, r, leader, flags)
            out.append(q)
        if r.level is not None and state.shutdown is Shutdown.NONE and leader >= 0 and state.voters[leader].running:
            for b, broker in enumerate(state.brokers):
                if broker.mode is BrokerMode.ZK and broker.migration and not broker.registered:
                    enabled = state.voters[leader].migration
                    key = (r.name, "registerBroker", b, broker.ibp, enabled)
                    q = memo.get(key)
                    if q is None:
                        q = memo[key] = self._registration(system, r, b, broker.ibp, enabled)
                    out.append(q)
        if r.activation:
            key = (r.name, "activationRecords", state.migration, state.txn)
            qs = memo.get(key)
            if qs is None:
                level = system.config.quorum_level
                qs = memo[key] = tuple(
                    Question("activationRecords", {"op": "activationRecords", "empty": False,
                                                   "transactionStartOffset": 0 if state.txn else -1,
                                                   "zkMigrationEnabled": enabled, "level": level,
                                                   "state": state.migration.name, "source": _BOOTSTRAP_SOURCE},
                             activation_answer(False, 0 if state.txn else -1, enabled, level, state.migration),
                             action="ElectLeader")
                    for enabled in (True, False))
            out.extend(qs)
        return out

    @staticmethod
    def _initial_questions(system: ZkMigrationSystem, r: _Release) -> list[Question]:
        memo = _memo(system)
        qs: list[Question] | None = memo.get((r.name, "initial"))
        if qs is None:
            names = [d.name for d in MigrationDriverState]
            qs = [Question("driverStates", {"op": "driverStates"}, {"states": names})]
            for a in MigrationDriverState:
                for b in MigrationDriverState:
                    qs.append(Question("driverStateTable", {"op": "driverStateChange", "from": a.name, "to": b.name},
                                       {"valid": is_valid_state_change(a, b)}))
            if r.activation:
                level = system.config.quorum_level
                for enabled in (True, False):
                    qs.append(Question(
                        "activationRecords", {"op": "activationRecords", "empty": True, "transactionStartOffset": -1,
                                              "zkMigrationEnabled": enabled, "level": level, "state": None,
                                              "source": _BOOTSTRAP_SOURCE},
                        activation_answer(True, -1, enabled, level, None)))
            memo[(r.name, "initial")] = qs
        return qs

    @staticmethod
    def _state_changes(system: ZkMigrationSystem, state: Any, memo: dict[Any, Any], r: _Release) -> list[Question]:
        """Every driver state change the state's successors make, current -> new, against the release's table."""
        out: list[Question] = []
        seen: set[tuple[str, MigrationDriverState, MigrationDriverState]] = set()
        for action, nxt in system.successors(state):
            for before, after in zip(state.voters, nxt.voters, strict=True):
                if before.driver is after.driver:
                    continue
                current = MigrationDriverState.UNINITIALIZED if action.name in _NEW_DRIVER else before.driver
                change = (action.name, current, after.driver)
                if change in seen:
                    continue
                seen.add(change)
                key = (r.name, "driverStateChange", *change)
                q = memo.get(key)
                if q is None:
                    q = memo[key] = Question(
                        "driverStateChange", {"op": "driverStateChange", "from": current.name, "to": after.driver.name},
                        {"valid": is_valid_state_change(current, after.driver)}, action=action.name)
                out.append(q)
        return out

    @staticmethod
    def _readiness(system: ZkMigrationSystem, state: Any, r: _Release, leader: int,
                   flags: tuple[bool | None, ...]) -> Question:
        """The active controller's view: the quorum, the level and each voter's ZkMigrationReady, from its
        registration (3.9 rules: every voter registered at its last start with its migration config, down or not)
        or its ApiVersions (3.5 rules: the running voters'); system.quorum_ready decides."""
        level = system.config.quorum_level
        ready = system.quorum_ready(state)
        known = {v: f for v, f in enumerate(flags) if f is not None}
        expected: dict[str, Any] = {"ready": ready}
        if r.reasons and not ready:
            expected["reason"] = (
                reason_all_controllers_zk_migration_not_ready_from_api_versions(leader, range(len(flags)), known)
                if r.rules == "3.5" else reason_all_controllers_zk_migration_not_ready(level, range(len(flags)), known))
        elif r.reasons:
            expected["reason"] = None
        request = {"op": "controllerReadiness", "nodeId": leader, "quorum": list(range(len(flags))), "level": level,
                   "controllers": {str(v): f for v, f in known.items()}}
        return Question("controllerReadiness", request, expected, action="DriverWaitForQuorum")

    @staticmethod
    def _registration(system: ZkMigrationSystem, r: _Release, b: int, ibp: int, enabled: bool) -> Question:
        level = system.config.quorum_level
        accepted = system._registration_accepted(b, ibp, enabled)
        expected: dict[str, Any] = {"accepted": accepted}
        if not accepted:
            try:
                register_broker(BrokerRegistrationRequest.zk_broker(b, ibp), enabled, level)
                expected["error"] = None  # the system refuses what Kafka's rule accepts: a disagreement
            except KafkaApiError as exc:
                expected["error"] = exc.error
                if r.line == "3.9":
                    expected["message"] = str(exc)
        request = {"op": "registerBroker", "brokerId": b, "ibp": ibp, "level": level, "zkMigrationEnabled": enabled}
        return Question("registerBroker", request, expected, action="RegisterZkBroker")

    def compare(self, question: Question, answer: Any) -> str | None:
        if isinstance(answer, Mapping) and "exception" in answer and question.kind == "activationRecords":
            answer = {"error": answer.get("message")}  # ActivationRecordsGenerator threw: Kafka's message
        elif isinstance(answer, Mapping) and "exception" not in answer and isinstance(question.expected, Mapping):
            # The keys the reference answers: the enum's class name (MigrationState in 3.4) and, below 3.7, the
            # readiness reason (3.5 / 3.6 word it from ApiVersions; the reference transcribes 3.9) are not.
            answer = {k: answer.get(k) for k in question.expected} if "missing" not in answer else dict(answer)
        if answer == question.expected:
            return None
        return first_difference(question.expected, answer)




ORACLE = ZkMigrationOracle()
