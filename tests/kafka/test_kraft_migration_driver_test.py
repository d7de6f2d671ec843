"""Apache Kafka's ``KRaftMigrationDriverTest`` as facts about our ``zk_migration`` reference.

Transcribed from ``metadata/src/test/java/org/apache/kafka/metadata/migration/KRaftMigrationDriverTest.java``
at tag ``3.9.0-rc3`` (commit ``dd5272687e8adf9e79e3e329b1b3d2524afb6020``; identical on branch ``3.9`` at
``c821449fb7c1e2c0f398eeb5cfc4a8abc210c0a4``), with the state machine it exercises read from
``KRaftMigrationDriver.java`` and ``MigrationDriverState.java`` and the mocks' behaviour from
``CapturingMigrationClient.java`` (same commit). Only inputs and expected outputs are taken; each case id is
the test method's name, with ``[false]`` / ``[true]`` / ``[n]`` for its parameter sets in Kafka's order.
Cases named after a method of ``KRaftMigrationDriver`` (``isValidStateChange``, ``checkDriverState``,
``areZkBrokersReadyForMigration``) are facts of the driver's source that the test reaches through its mocks.

Kafka's test drives a whole ``KRaftMigrationDriver`` (its event queue, mocks for ZooKeeper, the controller
and the brokers) and waits for a state. Here the same setups drive ``Driver`` below: a small event loop of
our own that calls the API's per-event functions (``reference_impl/zk_migration/api.py``: ``poll_event``,
``on_controller_change``, ``recover_migration_state_from_zk_event``, ``kraft_leader_event``,
``wait_for_controller_quorum_event``, ``wait_for_zk_brokers_event``, ``become_zk_controller_event``,
``migrate_metadata_event``, ``sync_kraft_metadata_event``, ``send_rpcs_to_brokers_event``,
``metadata_change_event``, ``handle_migration_event_exception``, ``coalesce_migration_batches``). What Kafka
asserts (the state reached, RPC counts, fault-handler contents, batch counts) is asserted; the trace of states
and the ZooKeeper writes are asserted too, as the driver's source makes them.

The ``*_system`` cases check the same facts where the system model (``system.py``, ``kafka`` profile)
decides them: the driver steps of the leader's voter.

The system model does not call the per-event functions (its driver steps are written out in
``ZkMigrationSystem.driver_steps``; under ``kafka`` its quorum trigger asks
``reason_all_controllers_zk_migration_not_ready`` about the voters' registrations); the ``*_system`` cases
are where the two must agree.

Not expressible yet:
* ``testTopicDualWriteSnapshot``, ``testTopicDualWriteDelta``, ``testControllerFailover``: which topics the
  ZooKeeper writes delete, create and update (foo deleted, foo and baz created, partition bar-0 updated, no
  config deleted). ``KRaftMigrationZkWriter``'s diff of topics and configs is not modelled: the metadata is
  opaque records. Transcribed: that the snapshot / delta / full sync is written, and the RPCs that follow.
* ``testOnlySendNeededRPCsToBrokers``: that the config delta writes exactly one config znode
  (``writtenConfigs.size() == 1``); expressed only as a metadata write to ZooKeeper.
* ``testMigrationWithClientException``: the fault handler's exception is Kafka's wrapper around the cause;
  expressed as the cause's class name reaching the fault handler.
* ``testCoalesceMigrationRecords``: the records themselves (TopicRecords); expressed as batch sizes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import pytest

from reference_impl.metadata_version.catalog import MetadataVersion as MV
from reference_impl.zk_migration import api
from reference_impl.zk_migration.api import DriverEvent as E
from reference_impl.zk_migration.api import LeaderAndEpoch, OffsetAndEpoch
from reference_impl.zk_migration.api import MigrationDriverState as D
from reference_impl.zk_migration.api import ZkMigrationState as Z
from reference_impl.zk_migration.system import ZkMigrationSystem, ZkMigrationSystemState
from rollcheck.core.registry import get_protocol

QUORUM = (4, 5, 6)  # QUORUM_FEATURES = new QuorumFeatures(4, ..., Arrays.asList(4, 5, 6))
LEADER = LeaderAndEpoch(3000, 1)  # new LeaderAndEpoch(OptionalInt.of(3000), 1): this node (3000) leads
COPY_ENDS_AT = OffsetAndEpoch(epoch=1, offset=100)  # NoOpRecordConsumer.completeMigration(): (100, 1)
NOT_MIGRATED = OffsetAndEpoch(epoch=-1, offset=-1)  # ZkMigrationLeadershipState.EMPTY
IMAGE_AT_100 = OffsetAndEpoch(epoch=1, offset=100)  # MetadataProvenance(100, 1, 1)
ALL_READY = {4: True, 5: True, 6: True}  # createTestControllerRegistration(id, true) for 4, 5, 6


def kafka_case(name: str) -> pytest.MarkDecorator:
    """A single case whose id is the Kafka test method's (or the driver source's) name."""
    return pytest.mark.parametrize("kafka_test", [name])


@dataclass(frozen=True)
class World:
    """What the driver reads in a Kafka test's setup: the published image, ZooKeeper as the mock answers."""

    zk_migration_state: Z = Z.PRE_MIGRATION  # image.features().zkMigrationState()
    metadata_version: MV = MV.IBP_3_7_IV0  # setupDeltaForMigration(delta, registerControllers=true)
    controllers: Mapping[int, bool] = field(default_factory=lambda: dict(ALL_READY))  # id -> zkMigrationReady
    kraft_brokers: Mapping[int, bool] = field(default_factory=dict)  # id -> isMigratingZkBroker
    zk_broker_ids: frozenset[int] = frozenset()  # CapturingMigrationClient: setBrokersInZk(...)
    zk_assignments: frozenset[int] = frozenset()  # brokers the ZooKeeper topic assignments name
    migrated: bool = False  # /migration: withKRaftMetadataOffsetAndEpoch(100, 1) (the copy is complete)
    image: OffsetAndEpoch = IMAGE_AT_100
    published: bool = True  # onMetadataUpdate was called (firstPublish)


def zk_brokers(*ids: int) -> dict[int, bool]:
    """``zkBrokerRecord(id)``: registered with KRaft as a migrating ZK broker."""
    return dict.fromkeys(ids, True)


@dataclass
class Driver:
    """A single-threaded stand-in for ``KRaftMigrationDriver``'s event queue, built on the API's events.
    ``failures`` are the exceptions (Kafka class names) the migration client throws, per event, in order."""

    world: World
    failures: dict[E, list[str]] = field(default_factory=dict)
    state: D = D.UNINITIALIZED
    migration: OffsetAndEpoch = NOT_MIGRATED
    is_leader: bool = False
    trace: list[D] = field(default_factory=lambda: [D.UNINITIALIZED])
    zk_writes: list[str] = field(default_factory=list)
    rpcs: list[str] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    begun: int = 0  # ZkRecordConsumer.beginMigration calls
    queue: deque[tuple[E, bool]] = field(default_factory=deque)

    # -- the driver's entry points
    def start(self) -> Driver:
        self.queue.appendleft((E.POLL, False))  # start(): eventQueue.prepend(new PollEvent())
        return self

    def controller_change(self, leader: bool) -> Driver:
        for ev in api.on_controller_change(self.state):
            self.queue.append((ev, leader))
        return self

    def run(self) -> Driver:
        """Run the queue, then the deferred polls, until a poll changes nothing."""
        for _ in range(100):
            while self.queue:
                self._run(*self.queue.popleft())
            before = (self.state, sum(len(v) for v in self.failures.values()))
            self._run(E.POLL, False)
            while self.queue:
                self._run(*self.queue.popleft())
            if (self.state, sum(len(v) for v in self.failures.values())) == before:
                return self
        raise AssertionError("the driver did not settle")

    # -- one event
    def _complete(self) -> bool:
        return self.migration.offset > 0  # ZkMigrationLeadershipState.initialZkMigrationComplete

    def _run(self, ev: E, leader: bool) -> None:
        w = self.world
        if ev is E.POLL:
            nxt = api.poll_event(self.state)
            if nxt is not None:
                self.queue.append((nxt, False))
            return
        if ev is E.KRAFT_LEADER:
            self.is_leader = leader
            self._to(api.kraft_leader_event(self.state, leader))
            return
        if self.failures.get(ev) and api.check_driver_state(self.state, ev, LEADER, LEADER):
            error = self.failures[ev].pop(0)  # the migration client throws: the state stays
            if api.handle_migration_event_exception(error) == "fault":
                self.faults.append(error)
            return
        step: api.DriverStep
        if ev is E.RECOVER_MIGRATION_STATE_FROM_ZK:
            new = api.recover_migration_state_from_zk_event(self.state)
            if new is not self.state:
                self.migration = COPY_ENDS_AT if w.migrated else NOT_MIGRATED
            step = api.DriverStep(new)
        elif ev is E.WAIT_FOR_CONTROLLER_QUORUM:
            reason = api.reason_all_controllers_zk_migration_not_ready(w.metadata_version, QUORUM, w.controllers)
            step = api.DriverStep(api.wait_for_controller_quorum_event(
                self.state, w.zk_migration_state, self._complete(), reason, w.published))
        elif ev is E.WAIT_FOR_ZK_BROKERS:
            reason = api.reason_zk_brokers_not_ready_for_migration(w.published, w.kraft_brokers, w.zk_broker_ids,
                                                                   w.zk_assignments)
            step = api.DriverStep(api.wait_for_zk_brokers_event(self.state, reason))
        elif ev is E.BECOME_ZK_CONTROLLER:
            step = api.become_zk_controller_event(self.state, True, self._complete(), LEADER, LEADER)
        elif ev is E.MIGRATE_METADATA:
            step = api.migrate_metadata_event(self.state, LEADER, LEADER)
            if step.state is not self.state:
                self.begun += 1
                self.migration = COPY_ENDS_AT
        elif ev is E.SYNC_KRAFT_METADATA:
            step = api.sync_kraft_metadata_event(self.state, w.image, self.migration, LEADER, LEADER)
        else:
            assert ev is E.SEND_RPCS_TO_BROKERS
            step = api.send_rpcs_to_brokers_event(self.state, w.image, self.migration, LEADER, LEADER)
        self.zk_writes += step.zk_writes
        if step.rpcs is not None:
            self.rpcs.append(step.rpcs)
        self._to(step.state)

    def _to(self, new: D) -> None:
        if new is not self.state:
            self.state = api.transition_to(self.state, new)
            self.trace.append(new)
            self.queue.append((E.POLL, False))  # transitionTo: wakeup()


def started(world: World, failures: dict[E, list[str]] | None = None) -> Driver:
    """``startAndWaitForRecoveringMigrationStateFromZK``: start, and wait for INACTIVE."""
    d = Driver(world, failures or {}).start().run()
    assert d.state is D.INACTIVE
    return d


HAPPY = [D.UNINITIALIZED, D.INACTIVE, D.WAIT_FOR_CONTROLLER_QUORUM, D.WAIT_FOR_BROKERS, D.BECOME_CONTROLLER,
         D.ZK_MIGRATION, D.SYNC_KRAFT_TO_ZK, D.KRAFT_CONTROLLER_TO_BROKER_COMM, D.DUAL_WRITE]
# Claim /controller and /controller_epoch, write /migration (KAFKA-16171), record the copy on /migration,
# then the full KRaft -> ZooKeeper sync.
HAPPY_ZK_WRITES = ["/controller", "/controller_epoch", "/migration", "/migration", "metadata"]
AFTER_COPY = ["/controller", "/controller_epoch", "/migration", "metadata"]  # the copy already done


# ---------------------------------------------------------------- the state machine (KRaftMigrationDriver.java)
_VALID = {
    D.UNINITIALIZED: {D.INACTIVE},
    D.INACTIVE: {D.WAIT_FOR_CONTROLLER_QUORUM},
    D.WAIT_FOR_CONTROLLER_QUORUM: {D.INACTIVE, D.BECOME_CONTROLLER, D.WAIT_FOR_BROKERS},
    D.WAIT_FOR_BROKERS: {D.INACTIVE, D.BECOME_CONTROLLER},
    D.BECOME_CONTROLLER: {D.INACTIVE, D.ZK_MIGRATION, D.SYNC_KRAFT_TO_ZK},
    D.ZK_MIGRATION: {D.INACTIVE, D.SYNC_KRAFT_TO_ZK},
    D.SYNC_KRAFT_TO_ZK: {D.INACTIVE, D.KRAFT_CONTROLLER_TO_BROKER_COMM},
    D.KRAFT_CONTROLLER_TO_BROKER_COMM: {D.INACTIVE, D.DUAL_WRITE},
    D.DUAL_WRITE: {D.INACTIVE},
}
PAIRS = [(a, b) for a in D for b in D]


@pytest.mark.parametrize(("current", "new"), PAIRS, ids=[f"isValidStateChange-{a.name}-{b.name}" for a, b in PAIRS])
def test_is_valid_state_change(current: D, new: D) -> None:
    """``KRaftMigrationDriver.isValidStateChange``: staying put is valid, UNINITIALIZED is never a target;
    ``transitionTo`` throws IllegalStateException otherwise."""
    valid = current is new or (new is not D.UNINITIALIZED and new in _VALID[current])
    assert api.is_valid_state_change(current, new) is valid
    if valid:
        assert api.transition_to(current, new) is new
    else:
        with pytest.raises(api.IllegalStateError) as caught:
            api.transition_to(current, new)
        assert str(caught.value) == f"Invalid transition in migration driver from {current.name} to {new.name}"


@kafka_case("MigrationDriverState-allowDualWrite")
def test_migration_driver_state_allow_dual_write(kafka_test: str) -> None:
    """``MigrationDriverState``: the declaration order and ``allowDualWrite``."""
    assert [s.name for s in D] == ["UNINITIALIZED", "INACTIVE", "WAIT_FOR_CONTROLLER_QUORUM", "WAIT_FOR_BROKERS",
                                   "BECOME_CONTROLLER", "ZK_MIGRATION", "SYNC_KRAFT_TO_ZK",
                                   "KRAFT_CONTROLLER_TO_BROKER_COMM", "DUAL_WRITE"]
    assert {s for s in D if s.allow_dual_write} == {D.KRAFT_CONTROLLER_TO_BROKER_COMM, D.DUAL_WRITE}


@kafka_case("PollEvent")
def test_poll_event(kafka_test: str) -> None:
    """``PollEvent.run``: the event each state enqueues; INACTIVE and DUAL_WRITE wait for other events."""
    assert {s: api.poll_event(s) for s in D} == {
        D.UNINITIALIZED: E.RECOVER_MIGRATION_STATE_FROM_ZK, D.INACTIVE: None,
        D.WAIT_FOR_CONTROLLER_QUORUM: E.WAIT_FOR_CONTROLLER_QUORUM, D.WAIT_FOR_BROKERS: E.WAIT_FOR_ZK_BROKERS,
        D.BECOME_CONTROLLER: E.BECOME_ZK_CONTROLLER, D.ZK_MIGRATION: E.MIGRATE_METADATA,
        D.SYNC_KRAFT_TO_ZK: E.SYNC_KRAFT_METADATA, D.KRAFT_CONTROLLER_TO_BROKER_COMM: E.SEND_RPCS_TO_BROKERS,
        D.DUAL_WRITE: None}
    assert {e for e in E if e.is_write_event} == {E.BECOME_ZK_CONTROLLER, E.MIGRATE_METADATA,
                                                 E.SYNC_KRAFT_METADATA, E.SEND_RPCS_TO_BROKERS}


@kafka_case("checkDriverState")
def test_check_driver_state(kafka_test: str) -> None:
    """``checkDriverState`` (driver source): an event runs only in its state; a write event made under another
    KRaft leader or epoch does nothing (so a take-over that keeps failing stops once a new leader is known);
    a failed claim keeps the driver in BECOME_CONTROLLER, writing nothing."""
    newer = LeaderAndEpoch(3001, 2)
    assert api.check_driver_state(D.BECOME_CONTROLLER, E.BECOME_ZK_CONTROLLER, LEADER, LEADER)
    assert not api.check_driver_state(D.BECOME_CONTROLLER, E.BECOME_ZK_CONTROLLER, LEADER, newer)
    assert not api.check_driver_state(D.ZK_MIGRATION, E.BECOME_ZK_CONTROLLER, LEADER, LEADER)
    assert api.check_driver_state(D.WAIT_FOR_BROKERS, E.WAIT_FOR_ZK_BROKERS, LEADER, newer)  # not a write event
    assert api.become_zk_controller_event(D.BECOME_CONTROLLER, True, False, LEADER, newer) == api.DriverStep(
        D.BECOME_CONTROLLER)
    assert api.become_zk_controller_event(D.BECOME_CONTROLLER, False, False, LEADER, LEADER) == api.DriverStep(
        D.BECOME_CONTROLLER)
    assert [api.handle_migration_event_exception(e) for e in (
        "MigrationClientAuthException", "MigrationClientException", "RejectedExecutionException",
        "IllegalStateException")] == ["fault", "retry", "ignore", "fault"]


_BROKERS = {1: True, 2: True, 3: False}  # 1 and 2 registered as migrating ZK brokers, 3 as a KRaft broker
BROKER_CASES = {
    "no-publish": (False, _BROKERS, {1}, (), "Waiting for initial metadata publish before checking if Zk brokers "
                   "are registered."),
    "no-kraft-broker": (True, {}, {1}, (), "No brokers are known to KRaft, waiting for brokers to register."),
    "no-zk-broker": (True, _BROKERS, set(), (), "No brokers are registered in ZK, waiting for brokers to register."),
    "zk-broker-unregistered": (True, _BROKERS, {1, 2, 4}, (), "Still waiting for ZK brokers [4] to register with "
                               "KRaft."),
    "zk-broker-as-kraft": (True, _BROKERS, {1, 3}, (), "Still waiting for ZK brokers [3] to register with KRaft."),
    "assigned-broker-unregistered": (True, _BROKERS, {1, 2}, {2, 5}, "Still waiting for ZK brokers [5] found in "
                                     "metadata to register with KRaft."),
    "ready": (True, _BROKERS, {1, 2}, {1, 2}, None),
}


@pytest.mark.parametrize(("published", "kraft", "zk", "assigned", "reason"), BROKER_CASES.values(),
                         ids=[f"areZkBrokersReadyForMigration-{k}" for k in BROKER_CASES])
def test_are_zk_brokers_ready_for_migration(published: bool, kraft: dict[int, bool], zk: set[int],
                                            assigned: tuple[int, ...], reason: str | None) -> None:
    """``areZkBrokersReadyForMigration`` (driver source, which the tests below reach through their mocks):
    every broker under /brokers and every broker a ZooKeeper assignment names must be registered with KRaft
    as a migrating ZK broker; WAIT_FOR_BROKERS is left only then."""
    assert api.reason_zk_brokers_not_ready_for_migration(published, kraft, zk, assigned) == reason
    after = api.wait_for_zk_brokers_event(D.WAIT_FOR_BROKERS, reason)
    assert after is (D.WAIT_FOR_BROKERS if reason else D.BECOME_CONTROLLER)


# ---------------------------------------------------------------- KRaftMigrationDriverTest
@kafka_case("testOnControllerChangeWhenUninitialized")
def test_on_controller_change_when_uninitialized(kafka_test: str) -> None:
    """testOnControllerChangeWhenUninitialized: leadership is announced before the driver started; it still
    gets past initialization and waits for the controller quorum (no metadata has been published)."""
    assert api.on_controller_change(D.UNINITIALIZED) == (E.RECOVER_MIGRATION_STATE_FROM_ZK, E.KRAFT_LEADER)
    d = Driver(World(published=False, migrated=True)).controller_change(leader=True).start().run()
    assert d.state is D.WAIT_FOR_CONTROLLER_QUORUM
    assert d.trace == [D.UNINITIALIZED, D.INACTIVE, D.WAIT_FOR_CONTROLLER_QUORUM]
    # Why the recovery is enqueued first: a leader event while UNINITIALIZED is an invalid transition.
    with pytest.raises(api.IllegalStateError, match="from UNINITIALIZED to WAIT_FOR_CONTROLLER_QUORUM"):
        api.kraft_leader_event(D.UNINITIALIZED, True)


@pytest.mark.parametrize("register_controllers", [False, True],
                         ids=[f"testOnlySendNeededRPCsToBrokers[{b}]" for b in ("false", "true")])
def test_only_send_needed_rpcs_to_brokers(register_controllers: bool) -> None:
    """testOnlySendNeededRPCsToBrokers (KAFKA-14668): one full set of RPCs on entering dual write; a config
    change is written to ZooKeeper without RPCs; a broker registration change sends incremental RPCs.
    Without controller registrations (3.6-IV2) the controller quorum is not checked."""
    mv = MV.IBP_3_7_IV0 if register_controllers else MV.IBP_3_6_IV2
    world = World(metadata_version=mv, controllers=ALL_READY if register_controllers else {},
                  kraft_brokers=zk_brokers(1, 2, 3), zk_broker_ids=frozenset({1, 2, 3}))
    d = started(world).controller_change(leader=True).run()
    assert d.state is D.DUAL_WRITE and d.trace == HAPPY
    assert d.rpcs == ["image"]  # metadataPropagator.images == 1, deltas == 0
    assert d.zk_writes == HAPPY_ZK_WRITES
    config = api.metadata_change_event(d.state, image=OffsetAndEpoch(1, 120), migration=d.migration)
    assert config == api.MetadataChange(("metadata", "/migration"), None)  # 1 config written, no RPC
    broker = api.metadata_change_event(d.state, cluster_changed=True, image=OffsetAndEpoch(1, 130),
                                       migration=d.migration)
    assert broker == api.MetadataChange(("metadata", "/migration"), "delta")  # deltas == 1


@pytest.mark.parametrize("auth_exception", [True, False],
                         ids=[f"testMigrationWithClientException[{b}]" for b in ("true", "false")])
def test_migration_with_client_exception(auth_exception: bool) -> None:
    """testMigrationWithClientException: claiming ZK controller leadership throws three times; the driver
    retries until it succeeds and reaches dual write. An authentication error goes to the (non-fatal) fault
    handler, another ZooKeeper error is only logged."""
    error = "MigrationClientAuthException" if auth_exception else "MigrationClientException"
    world = World(kraft_brokers=zk_brokers(1, 2, 3), zk_broker_ids=frozenset({1, 2, 3}))
    d = started(world, {E.BECOME_ZK_CONTROLLER: [error] * 3}).controller_change(leader=True).run()
    assert d.state is D.DUAL_WRITE and d.trace == HAPPY
    assert d.failures[E.BECOME_ZK_CONTROLLER] == []  # all three attempts were made
    assert d.faults == ([error] * 3 if auth_exception else [])


@kafka_case("testMigrationWithClientExceptionWhileMigratingZnodeCreation")
def test_migration_with_client_exception_while_migrating_znode_creation(kafka_test: str) -> None:
    """testMigrationWithClientExceptionWhileMigratingZnodeCreation: reading / creating /migration fails three
    times; the driver stays UNINITIALIZED, retries on each poll, then migrates; no fault is reported."""
    world = World(kraft_brokers=zk_brokers(1, 2, 3), zk_broker_ids=frozenset({1, 2, 3}))
    d = started(world, {E.RECOVER_MIGRATION_STATE_FROM_ZK: ["MigrationClientException"] * 3})
    assert d.failures[E.RECOVER_MIGRATION_STATE_FROM_ZK] == [] and d.trace == [D.UNINITIALIZED, D.INACTIVE]
    d.controller_change(leader=True).run()
    assert d.state is D.DUAL_WRITE and d.trace == HAPPY and d.faults == []


@pytest.mark.parametrize(("all_node_present", "controllers", "reason"), [
    (False, {4: True, 5: True}, "No registration found for controller 6"),
    (True, {4: False, 5: False, 6: False}, "Controller 4 has not enabled zookeeper.metadata.migration.enable"),
], ids=["testShouldNotMoveToNextStateIfControllerNodesAreNotReadyToMigrate[false]",
         "testShouldNotMoveToNextStateIfControllerNodesAreNotReadyToMigrate[true]"])
def test_should_not_move_to_next_state_if_controller_nodes_are_not_ready_to_migrate(
        all_node_present: bool, controllers: dict[int, bool], reason: str) -> None:
    """testShouldNotMoveToNextStateIfControllerNodesAreNotReadyToMigrate: at 3.7-IV0 the driver stays in
    WAIT_FOR_CONTROLLER_QUORUM while a quorum controller is unregistered or registered without
    ZkMigrationReady; once all three are ready it migrates."""
    world = World(controllers=controllers, kraft_brokers=zk_brokers(1), zk_broker_ids=frozenset({1}))
    assert api.reason_all_controllers_zk_migration_not_ready(MV.IBP_3_7_IV0, QUORUM, controllers) == reason
    d = started(world).controller_change(leader=True).run()
    assert d.state is D.WAIT_FOR_CONTROLLER_QUORUM
    d.world = replace(world, controllers=ALL_READY)  # a new image with all controllers ready
    d.queue.append((E.POLL, False))  # the metadata change before dual write wakes the driver...
    assert api.metadata_change_event(D.WAIT_FOR_CONTROLLER_QUORUM, cluster_changed=True).wakeup
    d.run()
    assert d.state is D.DUAL_WRITE and d.trace == HAPPY


@kafka_case("testSkipWaitForBrokersInDualWrite")
def test_skip_wait_for_brokers_in_dual_write(kafka_test: str) -> None:
    """testSkipWaitForBrokersInDualWrite: ZooKeeper says the copy is complete and the log says MIGRATION (a
    restarted controller mid-migration): no waiting for ZK brokers (none is registered in ZooKeeper) and no
    second copy."""
    world = World(zk_migration_state=Z.MIGRATION, kraft_brokers=zk_brokers(1, 2, 3), migrated=True)
    assert api.reason_zk_brokers_not_ready_for_migration(True, world.kraft_brokers, ()) == (
        "No brokers are registered in ZK, waiting for brokers to register.")
    d = started(world).controller_change(leader=True).run()
    assert d.state is D.DUAL_WRITE
    assert d.trace == [D.UNINITIALIZED, D.INACTIVE, D.WAIT_FOR_CONTROLLER_QUORUM, D.BECOME_CONTROLLER,
                       D.SYNC_KRAFT_TO_ZK, D.KRAFT_CONTROLLER_TO_BROKER_COMM, D.DUAL_WRITE]
    assert d.zk_writes == AFTER_COPY and d.begun == 0 and d.rpcs == ["image"]


def _dual_writing() -> Driver:
    """``setupTopicDualWrite``: ZK brokers 0-5 in ZooKeeper (and named by its topic assignments), registered
    with KRaft; all controllers ready; PRE_MIGRATION; this node leads."""
    ids = frozenset(range(6))
    world = World(kraft_brokers=zk_brokers(*ids), zk_broker_ids=ids, zk_assignments=ids)
    d = started(world).controller_change(leader=True).run()
    assert d.state is D.DUAL_WRITE and d.trace == HAPPY and d.zk_writes == HAPPY_ZK_WRITES
    return d


@kafka_case("testTopicDualWriteSnapshot")
def test_topic_dual_write_snapshot(kafka_test: str) -> None:
    """testTopicDualWriteSnapshot: in dual write a KRaft snapshot (at offset 200) is written to ZooKeeper and
    the brokers get full RPCs. (Which topics are written: not expressible.)"""
    d = _dual_writing()
    out = api.metadata_change_event(d.state, is_snapshot=True, topics_changed=True, image=OffsetAndEpoch(1, 200),
                                    migration=d.migration)
    assert out == api.MetadataChange(("metadata", "/migration"), "image")


@kafka_case("testTopicDualWriteDelta")
def test_topic_dual_write_delta(kafka_test: str) -> None:
    """testTopicDualWriteDelta: in dual write a KRaft delta changing topics is written to ZooKeeper and the
    brokers get incremental RPCs. (Which topics are written: not expressible.)"""
    d = _dual_writing()
    out = api.metadata_change_event(d.state, topics_changed=True, image=OffsetAndEpoch(1, 200),
                                    migration=d.migration)
    assert out == api.MetadataChange(("metadata", "/migration"), "delta")


@kafka_case("testNoDualWriteBeforeMigration")
def test_no_dual_write_before_migration(kafka_test: str) -> None:
    """testNoDualWriteBeforeMigration: the test forces WAIT_FOR_BROKERS, BECOME_CONTROLLER, ZK_MIGRATION and
    SYNC_KRAFT_TO_ZK (all valid transitions); a snapshot published in SYNC_KRAFT_TO_ZK is not written to
    ZooKeeper; the driver still reaches dual write. The forced path skipped the copy, so /migration holds no
    offset and even in dual write the driver writes nothing to ZooKeeper."""
    ids = frozenset(range(6))
    world = World(kraft_brokers=zk_brokers(*ids), zk_broker_ids=ids, zk_assignments=ids,
                  image=OffsetAndEpoch(1, 200))
    d = started(world).controller_change(leader=True)
    d._run(*d.queue.popleft())  # the leader event: WAIT_FOR_CONTROLLER_QUORUM
    assert d.state is D.WAIT_FOR_CONTROLLER_QUORUM
    for forced in (D.WAIT_FOR_BROKERS, D.BECOME_CONTROLLER, D.ZK_MIGRATION, D.SYNC_KRAFT_TO_ZK):
        d._to(forced)  # driver.transitionTo(...) from the test thread, before the driver's own events run
    d.queue.clear()
    assert api.metadata_change_event(d.state, is_snapshot=True, topics_changed=True, image=world.image,
                                     migration=d.migration) == api.MetadataChange()
    d.run()
    assert d.state is D.DUAL_WRITE and d.begun == 0 and d.zk_writes == ["metadata"]
    assert api.metadata_change_event(d.state, is_snapshot=True, topics_changed=True, image=world.image,
                                     migration=d.migration, initial_zk_migration_complete=False) == api.MetadataChange()


@kafka_case("testControllerFailover")
def test_controller_failover(kafka_test: str) -> None:
    """testControllerFailover: a standby driver ignores metadata while another node leads; ZooKeeper then says
    the copy is complete; when this node becomes leader it syncs KRaft to ZooKeeper in full (no second copy)
    and reaches dual write."""
    ids = frozenset(range(6))
    world = World(kraft_brokers=zk_brokers(*ids), zk_broker_ids=ids, zk_assignments=ids, migrated=True,
                  image=OffsetAndEpoch(1, 200))
    d = started(world).controller_change(leader=False).run()
    assert d.state is D.INACTIVE and d.trace == [D.UNINITIALIZED, D.INACTIVE]
    assert api.metadata_change_event(D.INACTIVE, topics_changed=True) == api.MetadataChange()
    d.controller_change(leader=True).run()
    assert d.state is D.DUAL_WRITE
    assert d.trace == [D.UNINITIALIZED, D.INACTIVE, D.WAIT_FOR_CONTROLLER_QUORUM, D.WAIT_FOR_BROKERS,
                       D.BECOME_CONTROLLER, D.SYNC_KRAFT_TO_ZK, D.KRAFT_CONTROLLER_TO_BROKER_COMM, D.DUAL_WRITE]
    assert d.zk_writes == AFTER_COPY and d.begun == 0


@kafka_case("testBeginMigrationOnce")
def test_begin_migration_once(kafka_test: str) -> None:
    """testBeginMigrationOnce: two MigrateMetadataEvents enqueued back to back begin one migration; the
    second finds the driver no longer in ZK_MIGRATION."""
    world = World(kraft_brokers=zk_brokers(1, 2, 3), zk_broker_ids=frozenset({1, 2, 3}))
    d = started(world).controller_change(leader=True).run()
    assert d.state is D.DUAL_WRITE and d.begun == 1
    first = api.migrate_metadata_event(D.ZK_MIGRATION, LEADER, LEADER)
    assert first == api.DriverStep(D.SYNC_KRAFT_TO_ZK, ("/migration",))
    assert not api.check_driver_state(first.state, E.MIGRATE_METADATA, LEADER, LEADER)
    assert api.migrate_metadata_event(first.state, LEADER, LEADER) == api.DriverStep(D.SYNC_KRAFT_TO_ZK)


# KRaftMigrationDriverTest.batchSizes(): (configured min batch size or None, ZooKeeper batches, count, records)
BATCH_SIZES = [
    (200, [0, 0, 0, 0], 0, 0),
    (200, [0, 0, 1, 0], 1, 1),
    (200, [1, 1, 1, 1], 1, 4),
    (1000, [999], 1, 999),
    (1000, [1000], 1, 1000),
    (1000, [1001], 1, 1001),
    (1000, [1000, 1], 2, 1001),
    (200, [0, 0, 0, 0], 0, 0),
    (1000, [1000, 1000, 1000], 3, 3000),
    (200, [201], 1, 201),
    (200, [200, 1], 2, 201),
    (None, [201], 1, 201),
    (None, [200, 1], 2, 201),
]


@pytest.mark.parametrize(("min_batch", "batches", "count", "records"), BATCH_SIZES,
                         ids=[f"testCoalesceMigrationRecords[{i}]" for i in range(len(BATCH_SIZES))])
def test_coalesce_migration_records(min_batch: int | None, batches: list[int], count: int, records: int) -> None:
    """testCoalesceMigrationRecords: the batches handed to the controller during the copy (the default
    minimum batch size is 200)."""
    handed = (api.coalesce_migration_batches(batches) if min_batch is None
              else api.coalesce_migration_batches(batches, min_batch))
    assert len(handed) == count and sum(handed) == records
    assert all(size > 0 for size in handed)


# ---------------------------------------------------------------- the system model (kafka profile)
ENTRY = get_protocol("zk_migration")


def _system(**config: object) -> tuple[ZkMigrationSystem, ZkMigrationSystemState]:
    ts = ENTRY.build(replace(ENTRY.configs["faults"], profile="kafka", **config))
    assert isinstance(ts, ZkMigrationSystem)
    return ts, next(iter(ts.initial_states()))


def _with_voter(s: ZkMigrationSystemState, v: int, **changes: object) -> ZkMigrationSystemState:
    voters = list(s.voters)
    voters[v] = replace(voters[v], **changes)  # type: ignore[arg-type]
    return replace(s, voters=tuple(voters))


def _step(ts: ZkMigrationSystem, s: ZkMigrationSystemState, label: str) -> ZkMigrationSystemState:
    for a, t in ts.successors(s):
        if repr(a) == label:
            return t
    raise AssertionError(f"{label} not enabled: {[repr(a) for a, _ in ts.successors(s)]}")


def _driver_after(ts: ZkMigrationSystem, s: ZkMigrationSystemState, label: str) -> D | None:
    """The leader's (voter 0's) driver state after the step ``label``, None when the step is not enabled."""
    for a, t in ts.successors(s):
        if repr(a) == f"{label}(voter=0)":
            return t.voters[0].driver
    return None


@pytest.mark.parametrize(("migrated", "expected"), [(True, D.BECOME_CONTROLLER), (False, D.INACTIVE)],
                         ids=["testSkipWaitForBrokersInDualWrite_system", "testSkipWaitForBrokersInDualWrite_system-"
                              "zk-not-migrated"])
def test_system_wait_for_quorum_in_migration(migrated: bool, expected: D) -> None:
    """The system's WAIT_FOR_CONTROLLER_QUORUM step when the log says MIGRATION: the ZK brokers are skipped
    when /migration says the copy finished, and the driver goes INACTIVE when it does not (as the API)."""
    ts, s = _system()
    s = _with_voter(replace(s, migration=Z.MIGRATION, zk=replace(s.zk, migrated=migrated)), 0,
                    driver=D.WAIT_FOR_CONTROLLER_QUORUM)
    assert _driver_after(ts, s, "DriverWaitForQuorum") is expected
    assert api.wait_for_controller_quorum_event(D.WAIT_FOR_CONTROLLER_QUORUM, Z.MIGRATION, migrated) is expected


@pytest.mark.parametrize(("migrated", "expected"), [(True, D.SYNC_KRAFT_TO_ZK), (False, D.ZK_MIGRATION)],
                         ids=["testControllerFailover_system", "testBeginMigrationOnce_system"])
def test_system_become_zk_controller(migrated: bool, expected: D) -> None:
    """The system's take-over: a full sync when /migration says the copy finished, else the copy."""
    ts, s = _system()
    s = _with_voter(replace(s, zk=replace(s.zk, migrated=migrated)), 0, driver=D.BECOME_CONTROLLER)
    assert _driver_after(ts, s, "BecomeZkController") is expected
    assert api.become_zk_controller_event(D.BECOME_CONTROLLER, True, migrated).state is expected


@pytest.mark.parametrize("state", [Z.NONE, Z.POST_MIGRATION], ids=lambda z: f"WaitForControllerQuorumEvent-{z.name}")
def test_system_wait_for_quorum_without_migration(state: Z) -> None:
    """``WaitForControllerQuorumEvent`` (driver source): NONE and POST_MIGRATION send the driver INACTIVE."""
    ts, s = _system()
    s = _with_voter(replace(s, migration=state), 0, driver=D.WAIT_FOR_CONTROLLER_QUORUM)
    assert _driver_after(ts, s, "DriverWaitForQuorum") is D.INACTIVE
    assert api.wait_for_controller_quorum_event(D.WAIT_FOR_CONTROLLER_QUORUM, state, False) is D.INACTIVE


@kafka_case("testShouldNotMoveToNextStateIfControllerNodesAreNotReadyToMigrate_system")
def test_system_waits_for_an_unready_controller(kafka_test: str) -> None:
    """testShouldNotMoveToNextStateIfControllerNodesAreNotReadyToMigrate_system: at 3.7-IV0 a quorum
    controller without the migration config holds the driver in WAIT_FOR_CONTROLLER_QUORUM, in both."""
    ts, s = _system(quorum_level=MV.IBP_3_7_IV0.feature_level, broker_ibp=MV.IBP_3_7_IV0.feature_level)
    s = _with_voter(_with_voter(s, 0, driver=D.WAIT_FOR_CONTROLLER_QUORUM), 2, migration=False)
    assert _driver_after(ts, s, "DriverWaitForQuorum") is None
    assert api.reason_all_controllers_zk_migration_not_ready(
        MV.IBP_3_7_IV0, (0, 1, 2), {0: True, 1: True, 2: False}) is not None
    s = _with_voter(s, 2, migration=True)
    assert _driver_after(ts, s, "DriverWaitForQuorum") is D.WAIT_FOR_BROKERS


@pytest.mark.parametrize(("level", "registered"), [
    (MV.IBP_3_6_IV2, {}),  # testOnlySendNeededRPCsToBrokers[false]: no controller registration at all
    (MV.IBP_3_7_IV0, ALL_READY),  # all registered ready, one of them down since
], ids=["testOnlySendNeededRPCsToBrokers[false]_system", "testShouldNotMoveToNextStateIfControllerNodesAreNot"
        "ReadyToMigrate_system-registered-controller-down"])
def test_system_does_not_wait_for_a_controller_that_is_down(level: MV, registered: dict[int, bool]) -> None:
    """Kafka's driver leaves WAIT_FOR_CONTROLLER_QUORUM in PRE_MIGRATION with a quorum voter down: below
    3.7-IV0 nothing is checked, from 3.7-IV0 the registrations are (they are not removed when a controller
    stops). The system's leader (voter 0) should do the same with voter 2 crashed."""
    controllers = {4 + v: ready for v, ready in enumerate(registered.values())}
    assert api.reason_all_controllers_zk_migration_not_ready(level, QUORUM, controllers) is None
    assert api.wait_for_controller_quorum_event(D.WAIT_FOR_CONTROLLER_QUORUM, Z.PRE_MIGRATION, False) \
        is D.WAIT_FOR_BROKERS
    ts, s = _system(quorum_level=level.feature_level, broker_ibp=level.feature_level)
    for label in ("DriverActivate(voter=0)", "CrashVoter(voter=2)"):  # a reachable state
        s = _step(ts, s, label)
    assert s.leader == 0 and s.voters[0].driver is D.WAIT_FOR_CONTROLLER_QUORUM and s.migration is Z.PRE_MIGRATION
    assert _driver_after(ts, s, "DriverWaitForQuorum") is D.WAIT_FOR_BROKERS


@kafka_case("testControllerFailover_system-standby")
def test_system_deactivates_a_driver_that_lost_leadership(kafka_test: str) -> None:
    """``KRaftLeaderEvent`` for another leader (testControllerFailover's standby): INACTIVE, from any state,
    forgetting the ZK controller epoch it claimed; the system's DriverDeactivate does the same."""
    ts, s = _system()
    for d in D:
        if d in (D.UNINITIALIZED, D.INACTIVE):
            continue
        t = _with_voter(replace(s, leader=1), 0, driver=d, zk_epoch=6, zk_version=3)
        after = {repr(a): n for a, n in ts.successors(t)}["DriverDeactivate(voter=0)"]
        assert after.voters[0].driver is api.kraft_leader_event(d, False) is D.INACTIVE
        assert after.voters[0].zk_epoch == -1 and after.voters[0].zk_version == -1
