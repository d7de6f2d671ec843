"""The ``zk_migration`` binding's trace replay (``ZkMigrationOracle.replay``): a reference trace put to Apache Kafka's
own ``KRaftMigrationDriver`` (kafka_oracle/zk_migration/driver-<epoch>, its README), one driver per KRaft voter.

The request maps each step of the trace to what the drivers see (the action's inputs); the expectation is read off
the reference's own trace (the states before and after each step), never recomputed from the rules:

* ``replay.driverStates``: after each step, the driver state of every voter that runs a driver (running, with
  the migration config), as ``ZkMigrationSystemState.voters[v].driver`` holds it;
* ``replay.zkWrites``: the ZooKeeper writes the step's driver makes, from the ZooKeeper of the two states: its
  claim of ``/controller`` / ``/controller_epoch`` and the metadata records it creates or deletes;
* ``replay.records``: what the driver hands the metadata layer: the migration transaction begun, the copy's
  records (ZooKeeper's metadata at the copy) and its completion.

How the steps reach the drivers (the Java side holds each driver at a gate in Kafka's test fakes until the step
that releases it): ``DriverActivate`` / ``DriverDeactivate`` are ``onControllerChange`` (leader, Raft epoch);
``DriverWaitForQuorum`` the driver's first metadata image; ``DriverWaitForBrokers`` lets ``readBrokerIds``
answer; ``BecomeZkController`` the claim; ``BeginMigration`` / ``CompleteMigration`` the metadata layer's
``beginMigration`` and the copy (``readAllMetadata``); ``SyncKRaftToZk`` the full sync's read of ZooKeeper;
``SendRpcsToBrokers`` the propagator's full RPCs; ``DualWrite`` one topic write of a dual write. Whatever changes
the metadata image (the migration state, broker registrations, committed records) is published to every driver
that has had its first image; ``ZkUnavailable`` / ``ZkAvailable`` switch the fake ZooKeeper (a ZooKeeper call then
waits, as ``KafkaZkClient`` retries until connected); a ZooKeeper controller's election and writes are made on
the fake ZooKeeper; a voter's crash, restart or recovery stops its driver and starts a new one (with the
migration config). Steps the drivers do not see (``DeleteControllerZNodes``, the operator's broker restarts
beyond their registrations) are skipped and listed in the answer's comparison.

Not compared, and why: the ``/migration`` znode version (the reference bumps it once per write of its own, Kafka
once per znode operation, so only the relations the fencing rests on are alike); the RPCs sent to brokers (the
propagator is a fake); a driver's state at the step that activates it when it has had an image before (it
leaves WAIT_FOR_CONTROLLER_QUORUM on its own, without a gate: compared at the reference's next step of it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reference_impl.metadata_version.catalog import MetadataVersion
from reference_impl.zk_migration.config import KRAFT_ID, ZkMigrationConfig
from reference_impl.zk_migration.state import BrokerMode, ZkMigrationSystemState
from reference_impl.zk_migration.system import ZkMigrationSystem
from rollcheck.oracle.binding import Adapter, KafkaBug, OracleRelease, ReplayPlan, ReplayQuestion

_HANDLER = "org.apache.kafka.metadata.migration.RollcheckReplayHandler"
_MIGRATION = "org.apache.kafka.metadata.migration"
# One Maven project per API epoch of KRaftMigrationDriver and its test fakes (kafka_oracle/zk_migration/driver-*).
ADAPTERS = (
    Adapter("driver-3.5", _HANDLER, (f"{_MIGRATION}.KRaftMigrationDriver", f"{_MIGRATION}.CapturingMigrationClient",
                                     "org.apache.kafka.server.fault.MockFaultHandler",
                                     "org.apache.kafka.common.utils.MockTime", "org.apache.kafka.clients.ApiVersions")),
    Adapter("driver-3.6", _HANDLER, (f"{_MIGRATION}.KRaftMigrationDriver", f"{_MIGRATION}.CapturingMigrationClient",
                                     "org.apache.kafka.server.fault.MockFaultHandler",
                                     "org.apache.kafka.common.utils.MockTime", "org.apache.kafka.clients.ApiVersions")),
    Adapter("driver-3.7", _HANDLER, (f"{_MIGRATION}.KRaftMigrationDriver", f"{_MIGRATION}.CapturingMigrationClient",
                                     "org.apache.kafka.server.fault.MockFaultHandler",
                                     "org.apache.kafka.common.utils.MockTime")),
)
# The API epochs: driver-3.5, the driver's constructor, no metrics, no delegation tokens (3.5.x); driver-3.6,
# QuorumFeatures over the other controllers' ApiVersions (3.6.x); driver-3.7, QuorumFeatures over the controller
# registrations of the image (read from 3.7-IV0), as 3.7.0 - 3.9.x have it.
_NEWEST_LEVEL = {"3.5": MetadataVersion.IBP_3_5_IV2.feature_level}
# 3.4 has no adapter: its driver runs on the system clock and one MigrationClient interface (no test fakes).
_ADAPTER_OF_LINE = {"3.5": "driver-3.5", "3.6": "driver-3.6", "3.7": "driver-3.7", "3.8": "driver-3.7",
                    "3.9": "driver-3.7"}

KINDS = ("replay.driverStates", "replay.zkWrites", "replay.records")
TIMEOUT_MS = 10_000  # the Java side's bounded wait for the drivers to settle after one step

_GATES = {"DriverWaitForBrokers": "brokers", "BecomeZkController": "claim", "BeginMigration": "begin",
          "CompleteMigration": "copy", "SyncKRaftToZk": "sync", "SendRpcsToBrokers": "rpcs", "DualWrite": "dual"}
_DRIVER_STEPS = {*_GATES, "DriverActivate", "DriverDeactivate", "DriverWaitForQuorum"}
_UNSEEN = {"DeleteControllerZNodes", "EnableMigrationOnBroker", "IncompatibleBrokerJoins"}


def _image(s: ZkMigrationSystemState) -> dict[str, Any]:
    return {"migration": s.migration.name, "brokers": [b for b, br in enumerate(s.brokers) if br.registered],
            "topics": list(s.log), "epoch": s.raft_epoch,
            # Each voter's ControllerRegistrationRecord (read from 3.7-IV0): its migration config at its last start;
            # whether it runs (3.5 / 3.6 read the ApiVersions of the controllers the network client reaches).
            "controllers": [[v, x.migration, x.running] for v, x in enumerate(s.voters)]}


def _zk_brokers(s: ZkMigrationSystemState) -> list[int]:
    return [b for b, br in enumerate(s.brokers) if br.mode is BrokerMode.ZK]


def _drivers(s: ZkMigrationSystemState) -> dict[int, str]:
    """The voters that run a driver (a running controller with the migration config) and its state."""
    return {v: x.driver.name for v, x in enumerate(s.voters) if x.running and x.migration}


def _writes(v: int, s: ZkMigrationSystemState, t: ZkMigrationSystemState) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if t.zk.controller == KRAFT_ID + v and (t.zk.controller_epoch, t.zk.epoch_version) != \
            (s.zk.controller_epoch, s.zk.epoch_version):
        out.append({"op": "claim", "voter": v})
    before, after = Counter(s.zk.data), Counter(t.zk.data)
    out += [{"op": "createTopic", "voter": v, "record": r} for r in sorted((after - before).elements())]
    out += [{"op": "deleteTopic", "voter": v, "record": r} for r in sorted((before - after).elements())]
    return out


def _records(name: str, v: int, s: ZkMigrationSystemState) -> list[dict[str, Any]]:
    if name == "BeginMigration":
        return [{"op": "beginMigration", "voter": v}]
    if name == "CompleteMigration":
        return [{"op": "acceptBatch", "voter": v, "records": list(s.zk.data)}, {"op": "completeMigration", "voter": v}]
    return []


def _v(voter: int) -> dict[str, Any]:
    return {"voter": voter}


# KAFKA-16171: voter 0 dual-writes; Raft moves leadership to voter 1, whose driver activates (reading /migration)
# while voter 0 has not yet learnt it lost it, and writes the next record (its versions still match: voter 1 has
# not claimed yet), which moves /migration. Voter 1 then claims ZooKeeper and syncs; its first dual write is the
# story's end. Fixed (3.6.2 on, #15238, and 3.9's unconditional write of /migration at the claim, #15918): the
# claim learns the latest /migration version and the write succeeds. Buggy (3.5.x, 3.6.0, 3.6.1): the driver keeps
# the version it read at its activation, the write fails with BADVERSION (and every later one). The `faults` config
# with two metadata changes and no ZooKeeper outage (the reference's MIG-M10 `stale_migration_version` config).
_STORY_16171 = (
    ZkMigrationConfig(zk_brokers=1, voters=3, max_updates=2, max_epoch=2, unclean_shutdown=False,
                      misconfigured_controller=False, zk_outage=False, rollback=False),
    (("EnableMigrationOnBroker", {}), ("RegisterZkBroker", {}), ("DriverActivate", _v(0)),
     ("DriverWaitForQuorum", _v(0)), ("DriverWaitForBrokers", _v(0)), ("BecomeZkController", _v(0)),
     ("BeginMigration", _v(0)), ("CompleteMigration", _v(0)), ("SyncKRaftToZk", _v(0)),
     ("SendRpcsToBrokers", _v(0)), ("LeaderFailover", _v(1)), ("DriverActivate", _v(1)),
     ("KRaftMetadataChange", {}), ("DualWrite", _v(0)), ("DriverWaitForQuorum", _v(1)),
     ("BecomeZkController", _v(1)), ("SyncKRaftToZk", _v(1)), ("SendRpcsToBrokers", _v(1)),
     ("KRaftMetadataChange", {}), ("DualWrite", _v(1))))
STORIES: dict[str, tuple[ZkMigrationConfig, tuple[tuple[str, dict[str, Any]], ...]]] = {"KAFKA-16171": _STORY_16171}

BUGS = (
    KafkaBug(
        "KAFKA-16171", "zk_migration",
        "a KRaft controller that takes over during dual write keeps the /migration version it read when it became "
        "active: the previous controller's last dual write moved it, and every ZooKeeper write of the new one fails",
        buggy=("3.5.2", "3.6.0", "3.6.1"), fixed=("3.6.2", "3.7.0", "3.9.2"), config="faults", profile="kafka",
        kinds=("replay.zkWrites",),
        story="KRaftMigrationDriver read /migration (getOrCreateMigrationRecoveryState) in KRaftLeaderEvent and "
              "kept that version through BecomeZkControllerEvent; the deposed controller, not yet told, could still "
              "dual-write in between (its /controller_epoch check passes until the claim). The new controller's "
              "writes, conditional on the stale version, then failed with BADVERSION for as long as it led. "
              "Re-found by replaying the story trace on the real driver: at 3.6.0 / 3.6.1 its dual write of record 2 "
              "is not made; at 3.6.2 (the re-read after the claim) and 3.7+ it is.",
        source="KAFKA-16171 (apache/kafka #15238: 5d3e691e47b on 3.6, released in 3.6.2; b709872 in 3.7.0); "
               "KAFKA-16667 (#15918, 3.7.2 / 3.8.1 / 3.9.0) made the claim write /migration unconditionally",
        extra={"replay_story": "KAFKA-16171"}),
)


@dataclass(frozen=True)
class ZkMigrationReplay:
    """The replay content of the ``zk_migration`` binding (``rollcheck.oracle.binding.ReplayContent``)."""

    kinds: tuple[str, ...] = KINDS
    adapters: tuple[Adapter, ...] = ADAPTERS
    depth: int = 40  # the simulate walks' depth

    def plan(self, config: Any, release: OracleRelease) -> ReplayPlan | None:
        """The release's driver adapter (by its line) and the walks' depth; None for a line without one."""
        adapter = _ADAPTER_OF_LINE.get(release.line)
        return None if adapter is None else ReplayPlan(adapter=adapter, depth=self.depth)

    def story(self, name: str) -> tuple[Any, Sequence[tuple[str, Mapping[str, Any]]]] | None:
        return STORIES.get(name)

    def question(self, system: Any, steps: Sequence[tuple[Any, Any]], release: OracleRelease) -> ReplayQuestion:
        assert isinstance(system, ZkMigrationSystem)
        c = system.config
        s0: ZkMigrationSystemState = steps[0][1]
        published: set[int] = set()  # drivers (voters) that had their first image
        last: dict[int, dict[str, Any]] = {}
        out_steps: list[list[dict[str, Any]]] = []
        expected: list[dict[str, Any]] = []
        skipped: list[str] = []
        first = [{"do": "start", "voter": v} for v in _drivers(s0)]
        out_steps.append(first)
        expected.append({"states": _drivers(s0), "uncompared": [], "writes": [], "records": []})
        prev_zk_brokers = _zk_brokers(s0)
        for i in range(1, len(steps)):
            action, t = steps[i]
            s: ZkMigrationSystemState = steps[i - 1][1]
            name = action.name
            v = action.get("voter")
            acts: list[dict[str, Any]] = []
            uncompared: list[int] = []
            writes: list[dict[str, Any]] = []
            records: list[dict[str, Any]] = []
            if name == "DriverActivate":
                acts.append({"do": "leader", "voter": v, "leader": v, "epoch": t.raft_epoch})
                if v in published:
                    uncompared.append(v)
            elif name == "DriverDeactivate":
                acts.append({"do": "leader", "voter": v, "leader": t.leader, "epoch": t.raft_epoch})
            elif name == "DriverWaitForQuorum":
                if v not in published:
                    published.add(v)
                    last[v] = _image(t)
                    acts.append({"do": "publish", "voter": v, "image": last[v]})
            elif name in _GATES:
                acts.append({"do": "release", "voter": v, "gate": _GATES[name],
                             "sticky": name == "DriverWaitForBrokers"})
            elif name in ("ElectLeader", "LeaderFailover"):
                if v in _drivers(s) and s.voters[v].driver.name != "INACTIVE":
                    acts.append({"do": "leader", "voter": v, "leader": -1, "epoch": t.raft_epoch})
                if t.leader < 0:
                    skipped.append(f"{i}: {action!r} (resigned)")
            elif name == "CrashVoter":
                acts.append({"do": "stop", "voter": v})
                published.discard(v)
            elif name in ("RecoverVoter", "RestartVoter"):
                acts.append({"do": "stop", "voter": v})
                published.discard(v)
                if t.voters[v].migration:
                    acts.append({"do": "start", "voter": v})
            elif name == "ShutdownQuorum":
                acts += [{"do": "stop", "voter": u} for u in _drivers(s)]
                published.clear()
            elif name in ("ZkUnavailable", "ZkAvailable"):
                acts.append({"do": "zk", "available": t.zk.available})
            elif name in ("ElectZkController", "ZkMetadataChange"):
                acts.append({"do": "zkset", "controller": t.zk.controller, "controller_epoch": t.zk.controller_epoch,
                             "epoch_version": t.zk.epoch_version, "data": list(t.zk.data)})
            elif name in ("RegisterZkBroker", "RestartBrokerAsKRaft", "RollbackBrokerToZk", "KRaftMetadataChange"):
                pass  # seen through the image and /brokers below
            elif name in _UNSEEN:
                skipped.append(f"{i}: {action!r}")
            else:
                skipped.append(f"{i}: {action!r} (not mapped)")
            if name in _DRIVER_STEPS and v is not None:
                writes = _writes(v, s, t)
                records = _records(name, v, s)
            zk_brokers = _zk_brokers(t)
            if zk_brokers != prev_zk_brokers:
                acts.append({"do": "brokers", "ids": zk_brokers})
                prev_zk_brokers = zk_brokers
            image = _image(t)
            for u in sorted(published):
                if u in _drivers(t) and {k: x for k, x in last[u].items() if k != "epoch"} != \
                        {k: x for k, x in image.items() if k != "epoch"}:
                    last[u] = image
                    acts.append({"do": "publish", "voter": u, "image": image})
            # Images first: a step that releases a gate and changes the image (CompleteMigration) queues the image
            # before the released event's own next poll, as the metadata layer commits before the driver moves on.
            acts = [a for a in acts if a["do"] == "publish"] + [a for a in acts if a["do"] != "publish"]
            out_steps.append(acts)
            expected.append({"states": _drivers(t), "uncompared": uncompared, "writes": writes, "records": records})
        z = s0.zk
        # 3.5 has no metadata.version above 3.5-IV2, which the binding's 3.5 rows keep (their quorum's level is the
        # config's, 3.6-IV1): the image carries 3.5-IV2, which the 3.5 driver does not read (its quorum check is
        # the controllers' ApiVersions, its broker check the registrations).
        level = min(c.quorum_level, _NEWEST_LEVEL.get(release.line, c.quorum_level))
        request = {"op": "replay", "voters": len(s0.voters), "quorum_level": level, "timeout_ms": TIMEOUT_MS,
                   "zk": {"controller": z.controller, "controller_epoch": z.controller_epoch,
                          "epoch_version": z.epoch_version, "data": list(z.data), "brokers": _zk_brokers(s0)},
                   "steps": out_steps}
        return ReplayQuestion(request=request, expected=expected, skipped=tuple(skipped))

    def compare(self, question: ReplayQuestion, answer: Any) -> dict[str, tuple[int, str] | None]:
        """Per kind, None (agrees at every step) or (the first differing step, one line)."""
        out: dict[str, tuple[int, str] | None] = {k: None for k in self.kinds}
        rows = answer.get("steps", []) if isinstance(answer, Mapping) else []
        expected: Sequence[Mapping[str, Any]] = question.expected
        for i, (want, got) in enumerate(zip(expected, rows, strict=False)):
            skip = set(want["uncompared"])
            ws = {int(k): st for k, st in want["states"].items() if int(k) not in skip}
            gs = {int(k): st for k, st in got["states"].items() if int(k) not in skip}
            if out["replay.driverStates"] is None and ws != gs:
                out["replay.driverStates"] = (i, f"step {i}: driver states {_fmt(ws)} expected, Kafka's drivers "
                                                 f"{_fmt(gs)}{_blocked(got)}")
            gw = sorted((w for w in got["writes"] if w["op"] in ("claim", "createTopic", "deleteTopic")),
                        key=_key)
            ww = sorted(want["writes"], key=_key)
            if out["replay.zkWrites"] is None and [_key(w) for w in gw] != [_key(w) for w in ww]:
                out["replay.zkWrites"] = (i, f"step {i}: ZooKeeper writes {[_key(w) for w in ww]} expected, Kafka's "
                                             f"{[_key(w) for w in gw]}")
            gr = [dict(r) for r in got["records"] if r["op"] != "abortMigration" or True]
            if out["replay.records"] is None and gr != [dict(r) for r in want["records"]]:
                out["replay.records"] = (i, f"step {i}: records {want['records']} expected, Kafka's {gr}")
        return out


def _key(w: Mapping[str, Any]) -> str:
    rec = f" r{w['record']}" if "record" in w else ""
    return f"{w['op']}@{w['voter']}{rec}"


def _fmt(states: Mapping[int, str]) -> str:
    return "{" + ", ".join(f"{v}: {st}" for v, st in sorted(states.items())) + "}"


def _blocked(got: Mapping[str, Any]) -> str:
    b = got.get("blocked") or {}
    faults = got.get("faults") or []
    extra = f" (held at {dict(b)})" if b else ""
    return extra + (f"; faults: {faults}" if faults else "")


REPLAY = ZkMigrationReplay()
