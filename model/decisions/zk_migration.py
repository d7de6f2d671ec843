"""KIP-866 (ZooKeeper to KRaft migration) decision rules: the migration's triggers, the KRaftMigrationDriver
helpers and ActivationRecordsGenerator.generate; reference_impl/zk_migration/api.py is the reference.

Rules (``DECISIONS``, registered through the protocol's ``ProtocolEntry.decisions``):

* ``zk_triggers``: KIP-866's triggers (reference_impl/zk_migration/api.py): activation, bootstrap, ZK broker
  registration, the /controller_epoch take-over, the driver's valid state changes; and the driver helpers no
  config varies: ``isLeader``, ``onControllerChange`` and ``PollEvent``, the copy's record batches, the two
  image events for an image behind /migration or an event made under another leader, the KIP's four-valued
  ``ZkMigrationState`` metric, and ``ActivationRecordsGenerator.generate``'s records on every log.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import z3

from reference_impl.metadata_version.catalog import MINIMUM_KRAFT_VERSION, VERSIONS, from_feature_level, versions
from reference_impl.zk_migration import api as zk_api
from rollcheck.smt.decisions import CODEC_ERROR, DONT_CARE, DecisionRules, Formula, Inputs, Outputs

# zookeeper.metadata.migration.min.batch.size's default: KRaftConfigs.MIGRATION_METADATA_MIN_BATCH_SIZE_DEFAULT (3.9).
MIN_MIGRATION_BATCH_SIZE = 200

# --------------------------------------------------------------------------- ZooKeeper migration (KIP-866)

ZK_NONE, ZK_MIGRATION, ZK_PRE_MIGRATION, ZK_POST_MIGRATION, ZK_ZK = 0, 1, 2, 3, 4  # ZkMigrationState codes
# metadata.version levels: 3.4-IV0 (isMigrationSupported), 3.6-IV1 (isMetadataTransactionSupported).
ZK_MIGRATION_LEVEL, ZK_TRANSACTION_LEVEL = 8, 13
LATEST_PRODUCTION_3_9_LEVEL = 21  # MetadataVersion.LATEST_PRODUCTION of Kafka 3.9: 3.9-IV0
# KRaftMigrationDriver states by code: UNINITIALIZED 0, INACTIVE 1, WAIT_FOR_CONTROLLER_QUORUM 2,
# WAIT_FOR_BROKERS 3, BECOME_CONTROLLER 4, ZK_MIGRATION 5, SYNC_KRAFT_TO_ZK 6, KRAFT_CONTROLLER_TO_BROKER_COMM 7,
# DUAL_WRITE 8.
DRIVER_EDGES = ((0, 1), (8, 1), (1, 2), (2, 1), (2, 4), (2, 3), (3, 1), (3, 4), (4, 1), (4, 5), (4, 6), (5, 1),
                (5, 6), (6, 1), (6, 7), (7, 1), (7, 8))


def zk_trigger_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The migration's triggers in reference_impl/zk_migration/api.py: what a newly active controller does
    with the persisted state (ActivationRecordsGenerator; KIP-866 "wrong settings"), what the first
    controller of an empty log bootstraps, whether a ZK broker's registration is accepted, the take-over of
    /controller_epoch, and the driver's valid state changes; per profile."""
    act_inputs = ("state", "enabled", "all_voters_disabled", "txn", "level")
    # The quorum's default level (3.6-IV1) first, then the levels where Kafka's rules change: 3.4-IV0 (the
    # migration), 3.6-IV1 (transactions), 3.0-IV1 (no metadata.version record).
    # -1: no level given (activate's default, 3.9-IV0, LATEST_PRODUCTION of Kafka 3.9).
    act_levels = (13, 21, 12, 8, 7, 4, 1, -1)
    for profile in ("kip", "kafka"):
        def act_formula(x: dict[str, z3.ArithRef], profile: str = profile) -> dict[str, Any]:
            st, enabled, all_off, txn = x["state"], x["enabled"] == 1, x["all_voters_disabled"] == 1, x["txn"] == 1
            if profile == "kafka":
                # recordsForNonEmptyLog throws for a transaction it cannot abort, for migration enabled below
                # 3.4-IV0 or on a NONE log; below 3.4-IV0 the state is not looked at.
                level = z3.If(x["level"] < 0, LATEST_PRODUCTION_3_9_LEVEL, x["level"])
                migration_mv = level >= ZK_MIGRATION_LEVEL
                resign = z3.Or(z3.And(txn, level < ZK_TRANSACTION_LEVEL), z3.And(enabled, z3.Not(migration_mv)),
                               z3.And(st == ZK_NONE, enabled))
                finalize = z3.And(z3.Not(resign), migration_mv, st == ZK_MIGRATION, z3.Not(enabled))
            else:
                finalize = z3.And(st == ZK_MIGRATION, z3.Not(enabled), all_off)
                resign = z3.Or(z3.And(st == ZK_NONE, enabled),
                               z3.And(st == ZK_MIGRATION, z3.Not(enabled), z3.Not(finalize)),
                               z3.And(st == ZK_PRE_MIGRATION, z3.Not(enabled)))
            # A controller that resigns writes nothing, not even the abort of the open transaction.
            return {"write": z3.If(finalize, ZK_POST_MIGRATION, -1), "resign": resign,
                    "abort": z3.And(txn, z3.Not(resign))}

        def act_ref(x: Inputs, profile: str = profile) -> Outputs:
            r = zk_api.activate(zk_api.ZkMigrationState.from_code(x["state"]), bool(x["enabled"]),
                             bool(x["all_voters_disabled"]), bool(x["txn"]), profile,
                             None if x["level"] < 0 else x["level"])
            return {"write": r.write.code if r.write else -1, "resign": int(r.resign is not None),
                    "abort": int(r.abort_transaction)}

        yield (f"activate, {profile}", Formula(list(act_inputs), act_formula),
               [dict(zip(act_inputs, (st, e, a, t, lv), strict=True))
                for lv in act_levels for st, e, a, t in itertools.product(range(4), (0, 1), (0, 1), (0, 1))],
               act_ref)

        minimum = zk_api.KAFKA_EMPTY_LOG_MINIMUM_LEVEL if profile == "kafka" else zk_api.KIP_MINIMUM_LEVEL

        def boot_formula(x: dict[str, z3.ArithRef], minimum: int = minimum) -> dict[str, Any]:
            enabled = x["enabled"] == 1
            return {"state": z3.If(enabled, z3.If(x["level"] < minimum, -1, ZK_PRE_MIGRATION), ZK_NONE)}

        def boot_ref(x: Inputs, profile: str = profile) -> Outputs:
            try:
                return {"state": zk_api.bootstrap_migration_state(x["level"], bool(x["enabled"]), profile).code}
            except zk_api.ActivationError:
                return {"state": -1}

        yield (f"bootstrap, {profile}", Formula(["level", "enabled"], boot_formula),
               [{"level": lv, "enabled": e} for lv in range(1, 28) for e in (0, 1)], boot_ref)

        def reg_formula(x: dict[str, z3.ArithRef], profile: str = profile) -> dict[str, Any]:
            if profile == "kafka":
                # ClusterControlManager.registerBroker: migration config and a migration-capable
                # metadata.version, then the IBP range [ibp, ibp] must hold the finalized level.
                return {"accepted": z3.And(x["enabled"] == 1, x["level"] >= ZK_MIGRATION_LEVEL,
                                           x["ibp"] == x["level"])}
            return {"accepted": z3.And(x["enabled"] == 1, x["ready"] == 1, x["kraft_id"] == 0,
                                       x["ibp"] == x["level"])}

        def reg_ref(x: Inputs, profile: str = profile) -> Outputs:
            reg = zk_api.ZkBrokerRegistration(1, x["ibp"], bool(x["ready"]))
            err = zk_api.zk_broker_registration_error(reg, x["level"], bool(x["enabled"]),
                                                   frozenset({1}) if x["kraft_id"] else frozenset(), profile=profile)
            return {"accepted": int(err is None)}

        yield (f"ZK broker registration, {profile}",
               Formula(["ibp", "level", "ready", "enabled", "kraft_id"], reg_formula),
               [dict(zip(("ibp", "level", "ready", "enabled", "kraft_id"), c, strict=True))
                for c in itertools.product(range(5, 13), range(5, 13), (0, 1), (0, 1), (0, 1))], reg_ref)

    yield from _register_broker_cases()
    yield from _quorum_readiness_cases()

    def claim_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        # Refused for a same-or-newer KRaft epoch in /controller, and without /controller_epoch (-1).
        return {"epoch": z3.If(z3.Or(x["kraft_in_zk"] >= x["kraft"], x["zk"] < 0), -1, x["zk"] + 1)}

    def claim_ref(x: Inputs) -> Outputs:  # zk -2: no /controller_epoch read at all (None)
        r = zk_api.claim_controller_epoch(None if x["zk"] == -2 else x["zk"], x["kraft_in_zk"], x["kraft"])
        return {"epoch": -1 if r is None else r}

    yield ("claim /controller_epoch", Formula(["zk", "kraft_in_zk", "kraft"], claim_formula),
           [{"zk": a, "kraft_in_zk": b, "kraft": c} for a in range(-2, 4) for b in range(-1, 4) for c in range(4)],
           claim_ref)

    # KafkaZkClient.tryRegisterKRaftControllerAsActiveController itself (the claim above reads only the epoch):
    # the refusals in Kafka's order (the KRaft epoch in /controller first), and on success /controller_epoch
    # + 1 written by a SetData that moves its znode version by one.
    def register_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        error = z3.If(z3.And(x["kraft_in_zk"] >= 0, x["kraft_in_zk"] >= x["kraft"]), 1, z3.If(x["zk"] < 0, 2, 0))
        # version -1: the caller gives none, the znode's version is 0 (the default).
        return {"error": error, "epoch": z3.If(error == 0, x["zk"] + 1, DONT_CARE),
                "version": z3.If(error == 0, z3.If(x["version"] < 0, 0, x["version"]) + 1, DONT_CARE)}

    def register_ref(x: Inputs) -> Outputs:
        given = {} if x["version"] < 0 else {"controller_epoch_zk_version": x["version"]}
        try:
            r = zk_api.try_register_kraft_controller_as_active_controller(
                3000, x["kraft"], None if x["zk"] < 0 else x["zk"],
                kraft_epoch_in_zk=None if x["kraft_in_zk"] < 0 else x["kraft_in_zk"], **given)
        except zk_api.ControllerMovedError:
            return {"error": 1, "epoch": DONT_CARE, "version": DONT_CARE}
        except zk_api.IllegalStateError:
            return {"error": 2, "epoch": DONT_CARE, "version": DONT_CARE}
        return {"error": 0, "epoch": r.controller_epoch, "version": r.controller_epoch_zk_version}

    yield ("KafkaZkClient.tryRegisterKRaftControllerAsActiveController",
           Formula(["zk", "version", "kraft_in_zk", "kraft"], register_formula),
           [dict(zip(("zk", "version", "kraft_in_zk", "kraft"), c, strict=True))
            for c in itertools.product(range(-1, 4), range(-1, 3), range(-1, 4), range(4))], register_ref)

    drivers = list(zk_api.MigrationDriverState)

    def driver_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        cur, new = x["current"], x["new"]
        edge = z3.Or([z3.And(cur == a, new == b) for a, b in DRIVER_EDGES])
        return {"valid": z3.Or(cur == new, z3.And(new != 0, edge))}

    # KIP-866 "Broker registration" (kip only; Kafka 3.9 has no such rule): a KRaft broker reusing the id of a
    # ZK broker taking part in the migration is rejected. The system's brokers keep their ids when they move
    # to KRaft, so no config registers a new KRaft broker: this is the only place the rule is reached.
    zk_flags = ["zk0", "zk1", "zk2"]  # whether ZK broker 0, 1, 2 takes part in the migration
    yield ("KRaft broker registration, kip", Formula(["broker", *zk_flags], lambda x: {
        "rejected": z3.Or([z3.And(x["broker"] == b, x[f] == 1) for b, f in enumerate(zk_flags)])}),
           [{"broker": b, **dict(zip(zk_flags, bits, strict=True))}
            for b in range(4) for bits in itertools.product((0, 1), repeat=3)],
           lambda x: {"rejected": int(zk_api.kraft_broker_registration_error(
               x["broker"], frozenset(b for b, f in enumerate(zk_flags) if x[f])) is not None)})

    yield ("driver state changes", Formula(["current", "new"], driver_formula),
           [{"current": a, "new": b} for a in range(9) for b in range(9)],
           lambda x: {"valid": int(zk_api.is_valid_state_change(drivers[x["current"]], drivers[x["new"]]))})

    # KIP-866's ZkMigrationState metric ("these four will be exposed"), reported by the active controller from
    # the persisted state and its driver: finalized once POST_MIGRATION; dual write once the data is copied and
    # the driver may write to ZooKeeper (Kafka's allowDualWrite: KRAFT_CONTROLLER_TO_BROKER_COMM, DUAL_WRITE);
    # copying while the driver takes ZooKeeper over and copies it, and after a failover until the new driver
    # writes again; ineligible otherwise. (Kafka 3.5+ reports the persisted state's own code instead.) The
    # system never reads the metric, so only this comparison sees it.
    persisted = list(zk_api.ZkMigrationState)
    zs, ds = zk_api.ZkMigrationState, zk_api.MigrationDriverState

    def metric_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        st, drv = x["state"], x["driver"]
        writes = z3.Or([drv == drivers.index(d) for d in (ds.KRAFT_CONTROLLER_TO_BROKER_COMM, ds.DUAL_WRITE)])
        taking_over = z3.Or([drv == drivers.index(d) for d in (ds.BECOME_CONTROLLER, ds.ZK_MIGRATION)])
        copied = st == persisted.index(zs.MIGRATION)
        copying = z3.And(st == persisted.index(zs.PRE_MIGRATION), taking_over)
        # The metric's values are this copy's own (KIP_METRIC), not read from the reference's enum.
        return {"metric": z3.If(st == persisted.index(zs.POST_MIGRATION), KIP_METRIC["MIGRATION_FINALIZED"],
                                z3.If(z3.And(copied, writes), KIP_METRIC["DUAL_WRITE"],
                                      z3.If(z3.Or(copied, copying), KIP_METRIC["MIGRATE_ZK_DATA"],
                                            KIP_METRIC["MIGRATION_INELIGIBLE"])))}

    yield ("ZkMigrationState metric", Formula(["state", "driver"], metric_formula),
           [{"state": a, "driver": b} for a in range(len(persisted)) for b in range(len(drivers))],
           lambda x: {"metric": zk_api.kip_state(persisted[x["state"]], drivers[x["driver"]]).value})

    # ZkMigrationState.of (Kafka 3.9's ZkMigrationState.java): the record's int8 code to the state, ZK (4)
    # included; any other code an IllegalArgumentException (-1 here). optionalOf gives no state instead.
    def of_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        valid = z3.And(x["code"] >= 0, x["code"] < len(ZK_MIGRATION_STATE_CODES))
        return {"of": z3.If(valid, x["code"], -1), "optional": z3.If(valid, x["code"], -1)}

    def of_ref(x: Inputs) -> Outputs:
        def code(s: Any) -> int:
            return ZK_MIGRATION_STATE_CODES.index(s.name) if s.name in ZK_MIGRATION_STATE_CODES else CODEC_ERROR

        try:
            of = code(zs.of(x["code"]))
        except ValueError:
            of = -1
        optional = zs.optional_of(x["code"])
        return {"of": of, "optional": -1 if optional is None else code(optional)}

    yield ("ZkMigrationState.of", Formula(["code"], of_formula),
           [{"code": c} for c in range(-1, len(ZK_MIGRATION_STATE_CODES) + 2)], of_ref)

    # The API takes a metadata.version as a MetadataVersion, its feature level or its version string
    # ("3.6-IV1", as Kafka's MetadataVersion.fromVersionString reads it): each form is the same version.
    forms = ("level", "member", "text")

    def forms_ref(x: Inputs) -> Outputs:
        mv = from_feature_level(x["level"])
        out = {}
        for form, given in zip(forms, (x["level"], mv, str(mv)), strict=True):
            try:
                out[form] = zk_api.to_metadata_version(given).feature_level
            except ValueError:
                out[form] = -1
        return out

    yield ("metadata.version as level, member or string",
           Formula(["level"], lambda x: dict.fromkeys(forms, x["level"])),
           # the levels of the 3.9 line's enum, the releases that have the migration
           [{"level": lv} for lv in sorted({m.feature_level for m in versions("3.9") if m.feature_level > 0})],
           forms_ref)

    yield from zk_driver_event_cases()
    yield from zk_activation_records_cases()


def message_kind(text: str, kinds: tuple[str, ...], anywhere: bool = False) -> int:
    """The index of the one entry of ``kinds`` (index 0: no message) that ``text`` starts with (``anywhere``:
    contains); CODEC_ERROR when none or several do, so an unknown message is a disagreement."""
    found = [i for i, part in enumerate(kinds) if i and (part in text if anywhere else text.startswith(part))]
    return found[0] if len(found) == 1 else CODEC_ERROR


# ClusterControlManager.registerBroker's refusals (3.9), by the start of Kafka's message, in its order.
REGISTRATION_ERRORS = ("", "Controller does not support registering ZK brokers",
                       "Controller is in pre-migration mode and cannot register KRaft brokers",
                       "Broker does not have the current inter.broker.listener",
                       "Unable to register because the broker does not support finalized version")


def _register_broker_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """``ClusterControlManager.registerBroker``'s migration checks with what the system never sends: a KRaft
    broker (refused in PRE_MIGRATION), a ZK broker without the inter-broker listener, an explicit finalized
    level and a request without a metadata.version range (3.0-IV1 assumed)."""
    names = ["zkb", "enabled", "level", "state", "listener", "lo", "hi", "fin"]
    minimum = MINIMUM_KRAFT_VERSION.feature_level

    def formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        zkb, enabled = x["zkb"] == 1, x["enabled"] == 1
        finalized = z3.If(x["fin"] < 0, x["level"], x["fin"])
        lo, hi = z3.If(x["lo"] < 0, minimum, x["lo"]), z3.If(x["lo"] < 0, minimum, x["hi"])
        return {"error": z3.If(z3.And(zkb, z3.Not(z3.And(enabled, x["level"] >= ZK_MIGRATION_LEVEL))), 1,
                               z3.If(z3.And(z3.Not(zkb), x["state"] == ZK_PRE_MIGRATION), 2,
                                     z3.If(z3.And(zkb, x["listener"] == 0), 3,
                                           z3.If(z3.And(lo <= finalized, finalized <= hi), 0, 4))))}

    def reference(x: Inputs) -> Outputs:
        request = zk_api.BrokerRegistrationRequest(
            1, bool(x["zkb"]), None if x["lo"] < 0 else (x["lo"], x["hi"]),
            ("PLAINTEXT",) if x["listener"] else ("SSL",))
        try:
            zk_api.register_broker(request, bool(x["enabled"]), x["level"],
                                   zk_api.ZkMigrationState.from_code(x["state"]),
                                   finalized_level=None if x["fin"] < 0 else x["fin"])
        except zk_api.KafkaApiError as exc:
            return {"error": message_kind(str(exc), REGISTRATION_ERRORS)}
        return {"error": 0}

    ranges = [(-1, -1), *itertools.product((7, 8, 13), repeat=2)]
    yield ("ClusterControlManager.registerBroker", Formula(names, formula),
           [dict(zip(names, (zkb, en, lv, st, li, lo, hi, fin), strict=True))
            for zkb, en, lv, st, li, (lo, hi), fin in itertools.product(
                (0, 1), (0, 1), (7, 8, 13), range(4), (0, 1), ranges, (-1, 1, 8, 13))], reference)


QUORUM_REASONS = ("", "The metadata.version too low at", "No registration found for controller",
                  "has not enabled zookeeper.metadata.migration.enable")
CONTROLLER_REGISTRATION_LEVEL = 15  # MetadataVersion.IBP_3_7_IV0: controller registrations


def _quorum_readiness_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """``QuorumFeatures.reasonAllControllersZkMigrationNotReady``: the system registers every voter, so only
    this rule meets a controller with no registration; and it reads only whether there is a reason, so only
    this rule sees which reason, and for which controller (the first, in the quorum's order)."""
    nodes = ("c0", "c1", "c2")  # -1: no registration; 0 / 1: registered without / with the migration config

    def formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        reason, node = z3.IntVal(0), z3.IntVal(-1)
        for i in reversed(range(len(nodes))):  # the first failing controller wins
            c = x[nodes[i]]
            reason = z3.If(c < 0, 2, z3.If(c == 0, 3, reason))
            node = z3.If(c <= 0, i, node)
        registered = x["level"] >= CONTROLLER_REGISTRATION_LEVEL
        return {"reason": z3.If(x["level"] < ZK_MIGRATION_LEVEL, 1, z3.If(registered, reason, 0)),
                "node": z3.If(z3.And(x["level"] >= ZK_MIGRATION_LEVEL, registered), node, -1)}

    def reference(x: Inputs) -> Outputs:
        text = zk_api.reason_all_controllers_zk_migration_not_ready(
            x["level"], range(len(nodes)), {i: bool(x[n]) for i, n in enumerate(nodes) if x[n] >= 0})
        if text is None:
            return {"reason": 0, "node": -1}
        named = [i for i in range(len(nodes)) if f"controller {i}" in text.lower()]
        return {"reason": message_kind(text, QUORUM_REASONS, anywhere=True),
                "node": named[0] if len(named) == 1 else -1}

    yield ("QuorumFeatures.reasonAllControllersZkMigrationNotReady", Formula(["level", *nodes], formula),
           [dict(zip(("level", *nodes), c, strict=True))
            for c in itertools.product((7, 8, 14, 15, 21), *[(-1, 0, 1)] * len(nodes))], reference)


# Kafka's ZkMigrationState codes (ZkMigrationState.java, 3.9: NONE 0, MIGRATION 1, PRE_MIGRATION 2,
# POST_MIGRATION 3, ZK 4), by name; and the four states KIP-866 exposes as the ZkMigrationState metric, numbered
# in the order the KIP lists them (the KIP gives no numbers; the reference's KipMigrationState uses these).
ZK_MIGRATION_STATE_CODES = ("NONE", "MIGRATION", "PRE_MIGRATION", "POST_MIGRATION", "ZK")
KIP_METRIC = {"MIGRATION_INELIGIBLE": 0, "MIGRATE_ZK_DATA": 1, "DUAL_WRITE": 2, "MIGRATION_FINALIZED": 3}


# The driver's event classes as codes (their order in zk_api.DriverEvent) and the PollEvent of each state
# (KRaftMigrationDriver.PollEvent.run; -1: nothing, the driver waits for a leader or a metadata event).
# ActivationRecordsGenerator's refusals (``error``), by the start of Kafka's message.
ACTIVATION_ERRORS = ("", "Detected partial bootstrap records transaction", "Detected in-progress transaction",
                     "The bootstrap metadata.version", "Should not have ZK migrations enabled on a cluster running",
                     "Should not have ZK migrations enabled on a cluster that was created in KRaft mode",
                     "Unsupported ZkMigrationState")
NO_BOOTSTRAP_VERSION = len(ACTIVATION_ERRORS)  # generate() on an empty log without a metadata.version
# The sentences of the activation message Kafka logs (ActivationRecordsGenerator, 3.9), each by a piece of
# its text; the rule compares which appear (what Kafka's ActivationRecordsGeneratorTest asserts).
ACTIVATION_SENTENCES = (
    "Aborting partial bootstrap records transaction", "The metadata log appears to be empty",
    "bootstrap record(s) in metadata transaction", "Putting the controller into pre-migration mode",
    "Setting the ZK migration state to NONE since this is a de-novo KRaft cluster",
    "Aborting in-progress metadata transaction", "No metadata.version feature level record was found",
    "Loaded ZK migration state of", "This is expected because this is a de-novo KRaft cluster",
    "Activating pre-migration controller without empty log", "Completing the ZK migration since",
    "Staying in ZK migration mode", "Ignoring 'zookeeper.metadata.migration.enable' value of 'true'")


def activation_sentences(empty: Any, partial: Any, txn_ok: Any, enabled: Any, minimum_kraft: Any, mig: Any,
                         st: Any) -> list[Any]:
    """Whether each of ACTIVATION_SENTENCES is in the message of a successful activation: on an empty log
    (recordsForEmptyLog) or not (recordsForNonEmptyLog; ``mig``: the metadata.version supports the migration,
    ``st`` the replayed state)."""
    log = z3.Not(empty)
    loaded = z3.And(log, mig)
    return [z3.And(empty, partial), z3.And(empty, z3.Not(partial)), z3.And(empty, z3.Not(partial), txn_ok),
            z3.And(empty, txn_ok, enabled), z3.And(empty, txn_ok, z3.Not(enabled)),
            z3.And(log, partial), z3.And(log, minimum_kraft), loaded, z3.And(loaded, st == ZK_NONE),
            z3.And(loaded, st == ZK_PRE_MIGRATION, z3.Not(txn_ok)), z3.And(loaded, st == ZK_MIGRATION, z3.Not(enabled)),
            z3.And(loaded, st == ZK_MIGRATION, enabled), z3.And(loaded, st == ZK_POST_MIGRATION, enabled)]
BOOTSTRAP_SOURCE = "the format command"  # recordsForEmptyLog's bootstrap source, named in its message
_BOOTSTRAP_SAID = re.compile(r"ppending (\d+) bootstrap record\(s\) .*?at metadata\.version (\S+) from bootstrap "
                             r"source '([^']*)'\.")
_LEVEL_OF_NAME = {str(mv): mv.feature_level for mv in VERSIONS}
_STATE_CODE_OF_NAME = {state.name: state.code for state in zk_api.ZkMigrationState}
# A printed record: its class name, then its one field in parentheses when the record has one (every record
# here but an EndTransactionRecord, which has none: _read_record refuses "EndTransactionRecord(None)").
_PRINTED_RECORD = re.compile(r"([A-Za-z]+Record)(?:\((.+)\))?")


def _read_record(text: str) -> tuple[str, str | None]:
    """The kind and field of a record read back from its printed form; kind "?" when the text is no record."""
    m = _PRINTED_RECORD.fullmatch(text)
    if m is None or (m[1] == "EndTransactionRecord") != (m[2] is None):
        return "?", None
    return m[1], m[2]


ACTIVATION_LEVELS = (0, 1, 4, 7, 8, 12, 13, 21)  # 0: the log holds no FeatureLevelRecord for metadata.version


def zk_activation_records_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """``ActivationRecordsGenerator.generate`` (Kafka 3.9) on every log a controller may activate on: empty (the
    bootstrap records, in a metadata transaction from 3.6-IV1, re-appended after aborting a partial bootstrap
    transaction; PRE_MIGRATION or NONE written from 3.6-IV1, migration refused below it) or not (an in-progress
    transaction aborted, which needs 3.6-IV1; no metadata.version record: 3.0-IV1; the replayed state against
    ``zookeeper.metadata.migration.enable``). The records (abort, begin, bootstrap, state, end), whether one
    atomic batch, or the refusal. The system's first controller always activates an empty log with no partial
    transaction, so only this comparison reaches the partial bootstrap and the no-record log."""
    names = ["empty", "txn", "enabled", "level", "state"]

    def build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        empty, txn, enabled, level, state = (x[n] for n in names)
        eff = z3.If(level == 0, 1, level)  # no FeatureLevelRecord: MINIMUM_KRAFT_VERSION, 3.0-IV1
        txn_ok, mig = eff >= ZK_TRANSACTION_LEVEL, eff >= ZK_MIGRATION_LEVEL
        st = z3.If(state < 0, ZK_NONE, state)  # no ZkMigrationStateRecord replayed: NONE
        empty_error = z3.If(level == 0, NO_BOOTSTRAP_VERSION, z3.If(z3.And(txn == 1, z3.Not(txn_ok)), 1,
                                                                    z3.If(z3.And(enabled == 1, z3.Not(txn_ok)), 3, 0)))
        # ZK (4), the state of a ZooKeeper-mode cluster, is no state a KRaft log replays: Kafka's switch throws.
        log_error = z3.If(z3.And(txn == 1, z3.Not(txn_ok)), 2, z3.If(z3.And(enabled == 1, z3.Not(mig)), 4,
                                                                       z3.If(z3.And(mig, st == ZK_NONE, enabled == 1),
                                                                             5, z3.If(z3.And(mig, st == ZK_ZK), 6, 0))))
        error = z3.If(empty == 1, empty_error, log_error)
        ok = error == 0

        def out(v: Any) -> Any:
            return z3.If(ok, v, DONT_CARE)
        written = z3.If(empty == 1, z3.If(txn_ok, z3.If(enabled == 1, ZK_PRE_MIGRATION, ZK_NONE), -1),
                        z3.If(z3.And(mig, st == ZK_MIGRATION, enabled == 0), ZK_POST_MIGRATION, -1))
        is_empty, on, partial = empty == 1, enabled == 1, txn == 1
        said = activation_sentences(
            is_empty, partial, txn_ok, on, eff == MINIMUM_KRAFT_VERSION.feature_level, mig, st)
        return {"error": error, "abort": out(txn), "begin": out(z3.If(z3.And(empty == 1, txn_ok), 1, 0)),
                "boot": out(empty), "written": out(written), "end": out(z3.If(z3.And(empty == 1, txn_ok), 1, 0)),
                "atomic": out(z3.If(z3.And(empty == 1, txn_ok), 0, 1)),
                "message": out(z3.Sum([z3.If(c, 1 << i, 0) for i, c in enumerate(said)]))}

    def reference(x: Inputs) -> Outputs:
        failed = dict.fromkeys(("abort", "begin", "boot", "written", "end", "atomic", "message"), DONT_CARE)
        state = None if x["state"] < 0 else zk_api.ZkMigrationState.from_code(x["state"])
        try:
            r = zk_api.generate_activation_records(bool(x["empty"]), 7 if x["txn"] else -1, bool(x["enabled"]),
                                                   x["level"] or None, state)
        except zk_api.ActivationError as exc:
            return {"error": message_kind(str(exc), ACTIVATION_ERRORS), **failed}
        except ValueError as exc:
            refused = str(exc).startswith("an empty log is activated at the bootstrap metadata.version")
            return {"error": NO_BOOTSTRAP_VERSION if refused else CODEC_ERROR, **failed}
        # The records as they are printed ("ZkMigrationStateRecord(PRE_MIGRATION)", "EndTransactionRecord"): the
        # rule reads the kinds and the state written from that text, so a rendering that drops or garbles a field
        # is a disagreement like a wrong record.
        read = [_read_record(str(rec)) for rec in r.records]
        kinds = [kind for kind, _ in read]
        expected_order = sorted(kinds, key=["AbortTransactionRecord", "BeginTransactionRecord", "FeatureLevelRecord",
                                            "ZkMigrationStateRecord", "EndTransactionRecord", "?"].index)
        written = r.zk_migration_state
        states = [field for kind, field in read if kind == "ZkMigrationStateRecord"]
        printed = _STATE_CODE_OF_NAME.get(states[0] or "", CODEC_ERROR) if len(states) == 1 else -1
        said = sum(1 << i for i, text in enumerate(ACTIVATION_SENTENCES) if text in r.message)
        ok = kinds == expected_order and "?" not in kinds and printed == (-1 if written is None else written.code)
        return {"message": said,
                "error": 0 if ok else CODEC_ERROR, "abort": kinds.count("AbortTransactionRecord"),
                "begin": kinds.count("BeginTransactionRecord"), "boot": kinds.count("FeatureLevelRecord"),
                "written": -1 if written is None else written.code, "end": kinds.count("EndTransactionRecord"),
                "atomic": int(r.is_atomic)}

    domain = [dict(zip(names, v, strict=True)) for v in itertools.product((0, 1), (0, 1), (0, 1), ACTIVATION_LEVELS,
                                                                          range(-1, 5))
              if v[0] == 0 or v[4] == -1]  # an empty log has replayed no state
    yield "ActivationRecordsGenerator.generate", Formula(names, build), domain, reference

    # recordsForEmptyLog with what generate() never varies: Kafka's fifth argument, the metadata.version the
    # transaction check uses (not the bootstrap's), and bootstrap records other than fromVersion's one
    # FeatureLevelRecord (Kafka's tests pass their own). nboot -1: the default records; mv -1: the bootstrap's.
    empty_names = ["boot", "mv", "nboot", "partial", "enabled"]
    levels = [lv for lv in ACTIVATION_LEVELS if lv > 0]

    def empty_build(x: dict[str, z3.ArithRef]) -> Mapping[str, Any]:
        txn_ok = z3.If(x["mv"] < 0, x["boot"], x["mv"]) >= ZK_TRANSACTION_LEVEL
        partial, enabled = x["partial"] == 1, x["enabled"] == 1
        error = z3.If(z3.And(partial, z3.Not(txn_ok)), 1, z3.If(z3.And(enabled, z3.Not(txn_ok)), 3, 0))

        def out(v: Any) -> Any:
            return z3.If(error == 0, v, DONT_CARE)
        boot = z3.If(x["nboot"] < 0, 1, x["nboot"])
        return {"error": error, "abort": out(x["partial"]), "begin": out(z3.If(txn_ok, 1, 0)), "boot": out(boot),
                # the message's "(Re-)Appending N bootstrap record(s) ... at metadata.version V from bootstrap
                # source 'S'": N, V's level (the fifth argument's, else the bootstrap's) and S as given
                "said_count": out(boot), "said_level": out(z3.If(x["mv"] < 0, x["boot"], x["mv"])),
                "said_source": out(1),
                "written": out(z3.If(txn_ok, z3.If(enabled, ZK_PRE_MIGRATION, ZK_NONE), -1)),
                "end": out(z3.If(txn_ok, 1, 0)), "atomic": out(z3.If(txn_ok, 0, 1))}

    def empty_reference(x: Inputs) -> Outputs:
        given = None if x["nboot"] < 0 else tuple(zk_api.MetadataRecord("ConfigRecord", i) for i in range(x["nboot"]))
        try:
            r = zk_api.records_for_empty_log(7 if x["partial"] else -1, bool(x["enabled"]), x["boot"],
                                             BOOTSTRAP_SOURCE, bootstrap_records=given,
                                             metadata_version=None if x["mv"] < 0 else x["mv"])
        except zk_api.ActivationError as exc:
            return {"error": message_kind(str(exc), ACTIVATION_ERRORS),
                    **dict.fromkeys(("abort", "begin", "boot", "written", "end", "atomic", "said_count", "said_level",
                                     "said_source"), DONT_CARE)}
        said = _BOOTSTRAP_SAID.search(r.message)
        kinds = [rec.name for rec in r.records]
        framing = ("AbortTransactionRecord", "BeginTransactionRecord", "ZkMigrationStateRecord", "EndTransactionRecord")
        written = r.zk_migration_state
        return {"error": 0, "abort": kinds.count("AbortTransactionRecord"),
                "begin": kinds.count("BeginTransactionRecord"), "boot": sum(k not in framing for k in kinds),
                "written": -1 if written is None else written.code,
                "end": kinds.count("EndTransactionRecord"), "atomic": int(r.is_atomic),
                "said_count": int(said[1]) if said else CODEC_ERROR,
                "said_level": _LEVEL_OF_NAME.get(said[2], CODEC_ERROR) if said else CODEC_ERROR,
                "said_source": int(said[3] == BOOTSTRAP_SOURCE) if said else CODEC_ERROR}

    yield ("ActivationRecordsGenerator.recordsForEmptyLog", Formula(empty_names, empty_build),
           [dict(zip(empty_names, v, strict=True))
            for v in itertools.product(levels, [-1, *levels], (-1, 0, 1, 2), (0, 1), (0, 1))], empty_reference)


_EVENTS = list(zk_api.DriverEvent)
_EV = {e.name: i for i, e in enumerate(_EVENTS)}
POLL_OF_STATE = {0: _EV["RECOVER_MIGRATION_STATE_FROM_ZK"], 1: -1, 2: _EV["WAIT_FOR_CONTROLLER_QUORUM"],
                 3: _EV["WAIT_FOR_ZK_BROKERS"], 4: _EV["BECOME_ZK_CONTROLLER"], 5: _EV["MIGRATE_METADATA"],
                 6: _EV["SYNC_KRAFT_METADATA"], 7: _EV["SEND_RPCS_TO_BROKERS"], 8: -1}


def zk_driver_event_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """The KRaftMigrationDriver helpers the system's one driver step per event does not vary: who leads
    (``LeaderAndEpoch.isLeader``), what the loader's ``onControllerChange`` and ``PollEvent`` enqueue, how
    ``MigrateMetadataEvent`` batches ZooKeeper's records (``BufferingBatchConsumer``), and the two image events
    (``SyncKRaftMetadataEvent``, ``SendRPCsToBrokersEvent``) for an image behind /migration's offset and for an
    event created under another leader: the system's leader image always holds what /migration records and
    its events always run under the leader that made them, so no config reaches those branches."""
    drivers = list(zk_api.MigrationDriverState)
    yield ("LeaderAndEpoch.is_leader", Formula(["leader", "node"], lambda x: {
        "leads": z3.And(x["leader"] >= 0, x["leader"] == x["node"])}),
           [{"leader": a, "node": b} for a in range(-1, 3) for b in range(3)],
           lambda x: {"leads": int(zk_api.LeaderAndEpoch(None if x["leader"] < 0 else x["leader"], 1)
                                   .is_leader(x["node"]))})

    # checkDriverState for every event, in every state, under the leader that made it or another: the API's
    # event functions pass leaders only for write events, so this is the one place a non-write event meets them.
    write_events = [_EV[n] for n in ("BECOME_ZK_CONTROLLER", "MIGRATE_METADATA", "SYNC_KRAFT_METADATA",
                                     "SEND_RPCS_TO_BROKERS")]

    def check_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        expected = z3.Or([z3.And(x["event"] == ev, x["state"] == st) for st, ev in POLL_OF_STATE.items() if ev >= 0])
        stale = z3.And(z3.Or([x["event"] == ev for ev in write_events]), x["same"] == 0)
        return {"runs": z3.And(expected, z3.Not(stale))}

    def check_ref(x: Inputs) -> Outputs:
        made, now = zk_api.LeaderAndEpoch(1, 2), zk_api.LeaderAndEpoch(1, 2 if x["same"] else 3)
        return {"runs": int(zk_api.check_driver_state(drivers[x["state"]], _EVENTS[x["event"]], made, now))}

    yield ("checkDriverState", Formula(["state", "event", "same"], check_formula),
           [{"state": s, "event": e, "same": m} for s in range(len(drivers)) for e in range(len(_EVENTS))
            for m in (0, 1)], check_ref)

    def events_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        # The recovery from ZooKeeper goes first while UNINITIALIZED, so the leader event finds INACTIVE.
        first_boot = x["state"] == 0
        poll: Any = z3.IntVal(-1)
        for st, ev in POLL_OF_STATE.items():
            poll = z3.If(x["state"] == st, ev, poll)
        return {"count": z3.If(first_boot, 2, 1),
                "first": z3.If(first_boot, _EV["RECOVER_MIGRATION_STATE_FROM_ZK"], _EV["KRAFT_LEADER"]),
                "second": z3.If(first_boot, _EV["KRAFT_LEADER"], -1), "poll": poll}

    def events_ref(x: Inputs) -> Outputs:
        st = drivers[x["state"]]
        queued = [_EVENTS.index(e) for e in zk_api.on_controller_change(st)]
        poll = zk_api.poll_event(st)
        return {"count": len(queued), "first": queued[0], "second": queued[1] if len(queued) > 1 else -1,
                "poll": -1 if poll is None else _EVENTS.index(poll)}

    yield ("onControllerChange and PollEvent", Formula(["state"], events_formula),
           [{"state": i} for i in range(len(drivers))], events_ref)

    # The state events with what the system never varies: an event made under another leader (the system's
    # run under the leader that made them), the first metadata image not yet published, a leader event that
    # Kafka's transitionTo refuses (IllegalStateException: -2 here), and the znodes each event writes.
    step_names = ["state", "active", "mstate", "complete", "ready", "first", "claimed", "same"]

    def edge(cur: Any, new: int) -> Any:
        return z3.Or(cur == new, z3.Or([z3.And(cur == a, new == b) for a, b in DRIVER_EDGES]))

    def steps_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        st, same = x["state"], x["same"] == 1
        leader = z3.If(x["active"] == 1, z3.If(edge(st, 2), 2, -2), z3.If(edge(st, 1), 1, -2))
        ms = x["mstate"]
        # ZK (a state only a ZK-mode log has): Kafka's switch throws "Unsupported ZkMigrationState" (-2).
        quorum = z3.If(z3.Or(st != 2, x["first"] == 0), st, z3.If(ms == ZK_ZK, -2,
                       z3.If(z3.Or(ms == ZK_NONE, ms == ZK_POST_MIGRATION), 1,
                             z3.If(ms == ZK_PRE_MIGRATION, z3.If(x["ready"] == 1, 3, st),
                                   z3.If(x["complete"] == 1, 4, 1)))))
        become_moves = z3.And(st == 4, same, x["claimed"] == 1)
        migrate_moves = z3.And(st == 5, same)
        return {"recover": z3.If(st == 0, 1, st), "leader": leader, "quorum": quorum,
                "brokers": z3.If(z3.And(st == 3, x["ready"] == 1), 4, st),
                "become": z3.If(become_moves, z3.If(x["complete"] == 1, 6, 5), st),
                "become_writes": z3.If(become_moves, 3, 0),
                "migrate": z3.If(migrate_moves, 6, st), "migrate_writes": z3.If(migrate_moves, 1, 0)}

    def steps_ref(x: Inputs) -> Outputs:
        st = drivers[x["state"]]
        made, now = zk_api.LeaderAndEpoch(1, 2), zk_api.LeaderAndEpoch(1, 2 if x["same"] else 3)
        try:
            leader = zk_api.kraft_leader_event(st, bool(x["active"])).value
        except zk_api.IllegalStateError:
            leader = -2
        become = zk_api.become_zk_controller_event(st, bool(x["claimed"]), bool(x["complete"]), made, now)
        migrate = zk_api.migrate_metadata_event(st, made, now)
        try:
            quorum = zk_api.wait_for_controller_quorum_event(
                st, zk_api.ZkMigrationState.from_code(x["mstate"]), bool(x["complete"]),
                None if x["ready"] else "not ready", bool(x["first"])).value
        except zk_api.IllegalStateError:
            quorum = -2
        return {"recover": zk_api.recover_migration_state_from_zk_event(st).value, "leader": leader,
                "quorum": quorum,
                "brokers": zk_api.wait_for_zk_brokers_event(st, None if x["ready"] else "not ready").value,
                "become": become.state.value,
                "become_writes": len(become.zk_writes) if become.zk_writes in (
                    (), ("/controller", "/controller_epoch", "/migration")) else CODEC_ERROR,
                "migrate": migrate.state.value,
                "migrate_writes": len(migrate.zk_writes) if migrate.zk_writes in ((), ("/migration",)) else CODEC_ERROR}

    yield ("the driver's state events", Formula(step_names, steps_formula),
           [dict(zip(step_names, c, strict=True))
            for c in itertools.product(range(len(drivers)), (0, 1), range(5), (0, 1), (0, 1), (0, 1), (0, 1), (0, 1))],
           steps_ref)

    sizes = ("b0", "b1", "b2")

    def batches_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        # Buffered until at least min records are held, then handed over whole; the rest flushed at the end.
        held: Any = z3.IntVal(0)
        count: Any = z3.IntVal(0)
        out: list[Any] = [z3.IntVal(0)] * len(sizes)
        for b in sizes:
            held = held + x[b]
            emit = z3.And(held >= x["min"], held > 0)
            out = [z3.If(z3.And(emit, count == k), held, o) for k, o in enumerate(out)]
            count = z3.If(emit, count + 1, count)
            held = z3.If(emit, 0, held)
        out = [z3.If(z3.And(held > 0, count == k), held, o) for k, o in enumerate(out)]
        count = z3.If(held > 0, count + 1, count)
        return {"count": count, **{f"out{k}": o for k, o in enumerate(out)}}

    def batches_ref(x: Inputs) -> Outputs:
        got = zk_api.coalesce_migration_batches([x[b] for b in sizes], x["min"])
        return {"count": len(got), **{f"out{k}": got[k] if k < len(got) else 0 for k in range(len(sizes))}}

    yield ("MigrateMetadataEvent batches", Formula(["min", *sizes], batches_formula),
           [{"min": m, **dict(zip(sizes, bs, strict=True))}
            for m in range(1, 5) for bs in itertools.product(range(4), repeat=len(sizes))], batches_ref)

    # zookeeper.metadata.migration.min.batch.size's default, what KRaftMigrationDriver.Builder takes when the
    # size is not set (Kafka 3.9: 200): a batch of ``size`` records then one more is handed over in two
    # batches only from 200 on. The rule above sets the size; nothing else calls it without one.
    yield ("MigrateMetadataEvent default batch size", Formula(["size"], lambda x: {
        "count": z3.If(x["size"] >= MIN_MIGRATION_BATCH_SIZE, 2, 1)}),
           [{"size": n} for n in range(MIN_MIGRATION_BATCH_SIZE - 2, MIN_MIGRATION_BATCH_SIZE + 3)],
           lambda x: {"count": len(zk_api.coalesce_migration_batches([x["size"], 1]))})

    image_events = (("SYNC_KRAFT_METADATA", zk_api.sync_kraft_metadata_event, 7, ("metadata",), -1),
                    ("SEND_RPCS_TO_BROKERS", zk_api.send_rpcs_to_brokers_event, 8, (), 1))
    names = ["state", "ie", "io", "me", "mo", "same_leader"]
    for event, run, target, writes, rpcs in image_events:
        expected = next(s for s, e in POLL_OF_STATE.items() if e == _EV[event])

        def image_formula(x: dict[str, z3.ArithRef], expected: int = expected, target: int = target,
                          writes: tuple[str, ...] = writes, rpcs: int = rpcs) -> dict[str, Any]:
            # OffsetAndEpoch compares by epoch, then by offset; a write event made under another leader or
            # epoch, or found in another state, does nothing; so does an image behind /migration.
            behind = z3.Or(x["ie"] < x["me"], z3.And(x["ie"] == x["me"], x["io"] < x["mo"]))
            runs = z3.And(x["state"] == expected, x["same_leader"] == 1, z3.Not(behind))
            return {"state": z3.If(runs, target, x["state"]), "writes": z3.If(runs, len(writes), 0),
                    "rpcs": z3.If(runs, rpcs, -1)}

        def image_ref(x: Inputs, run: Callable[..., Any] = run) -> Outputs:
            made, now = zk_api.LeaderAndEpoch(1, 2), zk_api.LeaderAndEpoch(1, 2 if x["same_leader"] else 3)
            step = run(drivers[x["state"]], zk_api.OffsetAndEpoch(x["ie"], x["io"]),
                       zk_api.OffsetAndEpoch(x["me"], x["mo"]), made, now)
            return {"state": step.state.value, "writes": len(step.zk_writes),
                    "rpcs": {None: -1, "image": 1}.get(step.rpcs, 2)}

        yield (f"{_EVENTS[_EV[event]].value}", Formula(names, image_formula),
               [dict(zip(names, c, strict=True)) for c in itertools.product(
                   range(len(drivers)), range(2), range(2), range(2), range(2), (0, 1))], image_ref)
    yield from _zk_driver_helper_cases()


# Why the driver waits in WAIT_FOR_BROKERS (``reason``): none, the first image not yet published, no broker known
# to KRaft, none under /brokers, a ZK broker not registered as migrating, one named by a topic's assignment.
BROKERS_WAIT_PHRASES = ("", "Waiting for initial metadata publish", "No brokers are known to KRaft",
                        "No brokers are registered in ZK", "Still waiting for ZK brokers",
                        "found in metadata to register with KRaft")
MIGRATION_EXCEPTIONS = ("MigrationClientAuthException", "MigrationClientException", "RejectedExecutionException",
                        "IllegalStateException", "RuntimeException")
MIGRATION_EXCEPTION_OUTCOMES = ("fault", "retry", "ignore")


def _zk_driver_helper_cases() -> Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]:
    """Three more driver helpers no config varies: ``areZkBrokersReadyForMigration`` (the system's brokers all
    register as migrating ZK brokers before the driver looks), ``MetadataChangeEvent`` (the system writes each
    metadata change in dual write; a snapshot, a change made under another leader, an image behind /migration,
    a change before dual write that wakes the driver are not its steps) and ``MigrationEvent.handleException``
    (no ZooKeeper call of the system fails with an exception)."""
    kraft = ("k1", "k2")  # per broker 1, 2: 0 unknown to KRaft, 1 registered but not migrating, 2 migrating
    zk, assigned = ("z1", "z2"), ("a1", "a2")

    def brokers_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        migrating = [x[k] == 2 for k in kraft]
        miss_zk = [z3.And(x[z] == 1, z3.Not(m)) for z, m in zip(zk, migrating, strict=True)]
        miss_assigned = [z3.And(x[a] == 1, z3.Not(m)) for a, m in zip(assigned, migrating, strict=True)]

        def bits(flags: list[Any]) -> Any:
            return z3.Sum([z3.If(f, 1 << i, 0) for i, f in enumerate(flags)])
        reason = z3.If(x["first"] == 0, 1, z3.If(z3.And([x[k] == 0 for k in kraft]), 2,
                       z3.If(z3.And([x[z] == 0 for z in zk]), 3, z3.If(z3.Or(miss_zk), 4,
                                                                       z3.If(z3.Or(miss_assigned), 5, 0)))))
        return {"reason": reason, "named": z3.If(reason == 4, bits(miss_zk),
                                                 z3.If(reason == 5, bits(miss_assigned), 0))}

    def brokers_ref(x: Inputs) -> Outputs:
        known = {b: x[k] == 2 for b, k in ((1, "k1"), (2, "k2")) if x[k]}
        text = zk_api.reason_zk_brokers_not_ready_for_migration(
            bool(x["first"]), known, [b for b, z in ((1, "z1"), (2, "z2")) if x[z]],
            [b for b, a in ((1, "a1"), (2, "a2")) if x[a]])
        if text is None:
            return {"reason": 0, "named": 0}
        kinds = [i for i, phrase in enumerate(BROKERS_WAIT_PHRASES) if phrase and phrase in text]
        reason = kinds[-1] if kinds else CODEC_ERROR  # "found in metadata" also starts "Still waiting"
        named = sum(1 << (b - 1) for b in (1, 2) if f"[{b}" in text or f" {b}]" in text or f", {b}" in text)
        return {"reason": reason, "named": named}

    names = ["first", *kraft, *zk, *assigned]
    yield ("areZkBrokersReadyForMigration", Formula(names, brokers_formula),
           [dict(zip(names, c, strict=True)) for c in itertools.product((0, 1), range(3), range(3), *[(0, 1)] * 4)],
           brokers_ref)

    drivers = list(zk_api.MigrationDriverState)
    dual = [d.value for d in drivers if d.allow_dual_write]
    # The image's offset against /migration's, per case: 0 ahead, 1 behind, 2 no image offset given, 3 no
    # /migration offset given, 4 neither (the API compares only two offsets it was given), 5 equal, 6 behind
    # by epoch with a higher offset (OffsetAndEpoch compares the epoch first).
    flags = ("first", "empty", "snapshot", "topics", "cluster", "leader", "complete")
    offsets = {0: ((1, 6), (1, 5)), 1: ((1, 4), (1, 5)), 2: (None, (1, 5)), 3: ((1, 6), None), 4: (None, None),
               5: ((1, 5), (1, 5)), 6: ((1, 9), (2, 0))}

    def change_formula(x: dict[str, z3.ArithRef]) -> dict[str, Any]:
        st = x["state"]
        ignored = z3.Or(z3.And(x["first"] == 0, x["empty"] == 1), st == 0, st == 1)  # UNINITIALIZED, INACTIVE
        in_dual = z3.Or([st == d for d in dual])
        skipped = z3.Or(x["leader"] == 0, x["complete"] == 0, x["offsets"] == 1, x["offsets"] == 6)
        writes = z3.And(z3.Not(ignored), in_dual, z3.Not(skipped))
        rpcs = z3.If(x["snapshot"] == 1, 1, z3.If(z3.Or(x["topics"] == 1, x["cluster"] == 1), 2, -1))
        return {"writes": z3.If(writes, 2, 0), "rpcs": z3.If(writes, rpcs, -1),
                "wakeup": z3.And(z3.Not(ignored), z3.Not(in_dual), x["cluster"] == 1)}

    def change_ref(x: Inputs) -> Outputs:
        c = zk_api.metadata_change_event(
            drivers[x["state"]], first_publish=bool(x["first"]), image_empty=bool(x["empty"]),
            is_snapshot=bool(x["snapshot"]), topics_changed=bool(x["topics"]), cluster_changed=bool(x["cluster"]),
            leader_current=bool(x["leader"]), initial_zk_migration_complete=bool(x["complete"]),
            image=_offset(offsets[x["offsets"]][0]), migration=_offset(offsets[x["offsets"]][1]))
        return {"writes": len(c.zk_writes) if c.zk_writes in ((), ("metadata", "/migration")) else CODEC_ERROR,
                "rpcs": {None: -1, "image": 1, "delta": 2}.get(c.rpcs, CODEC_ERROR), "wakeup": int(c.wakeup)}

    names = ["state", *flags, "offsets"]
    yield ("MetadataChangeEvent", Formula(names, change_formula),
           [dict(zip(names, c, strict=True))
            for c in itertools.product(range(len(drivers)), *[(0, 1)] * len(flags), range(len(offsets)))], change_ref)

    yield ("MigrationEvent.handleException", Formula(["error"], lambda x: {
        "outcome": z3.If(x["error"] == 1, 1, z3.If(x["error"] == 2, 2, 0))}),
           [{"error": e} for e in range(len(MIGRATION_EXCEPTIONS))],
           lambda x: {"outcome": MIGRATION_EXCEPTION_OUTCOMES.index(
               zk_api.handle_migration_event_exception(MIGRATION_EXCEPTIONS[x["error"]]))})


def _offset(pair: tuple[int, int] | None) -> zk_api.OffsetAndEpoch | None:
    return None if pair is None else zk_api.OffsetAndEpoch(*pair)


DECISIONS = DecisionRules(full={"zk_triggers": zk_trigger_cases}, gate={"zk_triggers": zk_trigger_cases})
