"""Decision rules: the Z3 formulas of model/decisions/ agree with the reference on the whole bounded domain."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import Any

import pytest

import reference_impl.features.api as features_api
import reference_impl.streams_probing.api as streams_api
import reference_impl.zk_migration.api as zk_api
from model.decisions.features import (
    admin_update_cases,
    feature_znode_cases,
    features_request_cases,
    features_update_cases,
    features_update_formula,
    features_update_reference,
    finalized_cache_cases,
    version_range_cases,
)
from model.decisions.metadata_version import format_storage_cases, mv_activation_cases, mv_request_cases
from model.decisions.streams import (
    streams_assign_cases,
    streams_assign_formula,
    streams_assign_reference,
    streams_codec_cases,
    streams_decode_cases,
    streams_on_assignment_cases,
    streams_tasks_cases,
)
from reference_impl.streams_probing.releases import release
from rollcheck.core.transition import Action
from rollcheck.smt.decisions import differential


def test_streams_assign_formula_agrees_with_reference() -> None:
    res = differential("streams_assign", streams_assign_cases(max_members=2, mutations=("",)))
    assert res.ok, str(res.disagreement)
    # 8 leader releases x 3 profiles + 3.9 (kafka only), no member (refused), members over 21 (version, latest) pairs
    assert res.cases == 25 * 3 and res.inputs == 25 * (1 + 21 + 21 * 21)


def test_streams_assign_formula_agrees_under_every_assignor_mutation() -> None:
    res = differential("streams_assign", streams_assign_cases(max_members=1))
    assert res.ok, str(res.disagreement)
    # kip and kafka read 6 mutations, kafka-2.0 also uncapped_adopt (Kafka 2.1.0 / 2.1.1); and the empty group
    assert res.cases == 17 * 6 + 8 * 7 + 25


def _atomic_answers_every_update_feature_update_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's features api.py:602 if_false: the update that failed loses its own error.
    real = features_api.FeatureController.update_features

    def planted(self: Any, request: Any, principal_can_alter: bool = True) -> Any:
        resp, after = real(self, request, principal_can_alter)
        if self.semantics == "atomic" and not resp.ok and resp.error is features_api.Errors.NONE:
            resp = dataclasses.replace(resp, results=tuple(dataclasses.replace(
                r, error=features_api.Errors.FEATURE_UPDATE_FAILED) for r in resp.results))
        return resp, after
    monkeypatch.setattr(features_api.FeatureController, "update_features", planted)


def _atomic_applies_the_valid_half(monkeypatch: pytest.MonkeyPatch) -> None:
    real = features_api.FeatureController.update_features

    def planted(self: Any, request: Any, principal_can_alter: bool = True) -> Any:
        return real(dataclasses.replace(self, mutations=self.mutations | {"apply_partially_when_atomic"}), request,
                    principal_can_alter)
    monkeypatch.setattr(features_api.FeatureController, "update_features", planted)


def _response_ok_ignores_the_top_level_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's features api.py:554:16 drop_and_operand.
    monkeypatch.setattr(features_api.UpdateFeaturesResponse, "ok", property(
        lambda self: all(r.error is features_api.Errors.NONE for r in self.results)))


@pytest.mark.parametrize("planted", [_atomic_answers_every_update_feature_update_failed, _atomic_applies_the_valid_half,
                                     _response_ok_ignores_the_top_level_error])
def test_features_atomic_and_request_rules_see_each_planted_bug(planted: Any, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """Two-update requests under KIP-584 and its all-or-nothing revision (features_atomic), and the response's
    ``ok`` (features_atomic, features_request): which error each update reports, and what is applied."""
    from model.decisions.features import features_atomic_cases, features_request_cases

    res = differential("features_atomic", features_atomic_cases())
    assert res.ok and res.cases == 2 and res.inputs == 2 * 2 * 2 * (3 * 4) ** 2, str(res.disagreement)
    assert differential("features_request", features_request_cases()).ok
    planted(monkeypatch)
    assert not (differential("features_atomic", features_atomic_cases()).ok
                and differential("features_request", features_request_cases()).ok)


@pytest.mark.parametrize("planted", ["default message always", "path swapped", "same level always 'upgrade'",
                                     "kip's broker words under kafka"])
def test_features_texts_rule_sees_each_planted_bug(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the kafka-features tool prints of an error, and the node's path by profile."""
    from model.decisions.features import features_texts_cases

    res = differential("features_texts", features_texts_cases())
    assert res.ok and res.inputs == 5 * 2 + 2 * 2 * 3 * 2, str(res.disagreement)  # and the refusals' words
    if planted == "kip's broker words under kafka":
        real_fail = features_api.FeatureController._fail

        def named(self: Any, update: Any, error: Any, message: str) -> Any:
            return real_fail(self, update, error, message.replace("brokers were found to have", "broker 0 has"))
        monkeypatch.setattr(features_api.FeatureController, "_fail", named)
    elif planted == "same level always 'upgrade'":
        real = features_api.FeatureController._fail

        def fail(self: Any, update: Any, error: Any, message: str) -> Any:
            return real(self, update, error, message.replace("Can not downgrade a", "Can not upgrade a"))
        monkeypatch.setattr(features_api.FeatureController, "_fail", fail)
    elif planted == "default message always":
        monkeypatch.setattr(features_api.Errors, "exception_string",
                            lambda self, message: f"{self.exception_class}: {self.default_message}")
    else:
        monkeypatch.setattr(features_api.FeatureZNode, "path",
                            staticmethod(lambda profile="kafka": "/features" if profile == "kafka" else "/feature"))
    assert differential("features_texts", features_texts_cases()).disagreement is not None


@pytest.mark.parametrize("planted", ["a mapping failure tolerated", "an IAE fatal", "the cache kept",
                                     "the election goes on", "the update refused", "a registration refused"])
def test_features_unreadable_rule_sees_each_planted_bug(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the cluster does with a /feature node no reader can decode (system actions no explored state
    reaches: every write is FeatureZNode.encode's): the campaign's features system.py 330 and 355 ran nowhere."""
    from model.decisions.features import features_unreadable_cases
    from reference_impl.features import system as features_system

    res = differential("features_unreadable", features_unreadable_cases())
    assert res.ok and res.inputs == 2 * 16, str(res.disagreement)
    fs = features_system.FeaturesSystem
    if planted in ("a mapping failure tolerated", "an IAE fatal"):
        read = fs.read

        def misread(self: Any, z: Any) -> Any:
            got = read(self, z)
            if isinstance(got, features_system.Unreadable):  # every failure taken as the one class
                return features_system.Unreadable(planted == "an IAE fatal", got.message)
            return got
        monkeypatch.setattr(fs, "read", misread)
    elif planted == "the cache kept":
        reads = fs._broker_reads

        def keeps(self: Any, s: Any, b: Any) -> Any:
            runs, cache, epoch = reads(self, s, b)
            unreadable = isinstance(self.read(s.znode), features_system.Unreadable)
            return (runs, b.cache, b.cache_epoch) if unreadable and s.ibp_enabled else (runs, cache, epoch)
        monkeypatch.setattr(fs, "_broker_reads", keeps)
    elif planted == "the election goes on":
        elect = fs.elect_controller

        def elects(self: Any, s: Any, i: int) -> Any:
            t = elect(self, s, i)
            return dataclasses.replace(t, controller=i) if t == s else t
        monkeypatch.setattr(fs, "elect_controller", elects)
    elif planted == "the update refused":
        outcomes = fs.operator_outcomes

        def refused(self: Any, s: Any) -> Any:
            # a misreading: nothing validated or written, every update FEATURE_UPDATE_FAILED
            if not isinstance(self.read(s.znode), features_system.Unreadable):
                return outcomes(self, s)
            return [(Action.of("UpdateFeatures", updates=a["updates"], dry_run=a["dry_run"],
                               result=("NONE", *["FEATURE_UPDATE_FAILED"] * len(a["updates"]))), s.znode)
                    for a, _after in outcomes(self, s)]
        monkeypatch.setattr(fs, "operator_outcomes", refused)
    else:
        admits = fs._admits
        monkeypatch.setattr(fs, "_admits", lambda self, s, b, node: admits(self, s, b, node)
                            and not isinstance(node, features_system.Unreadable))
    assert differential("features_unreadable", features_unreadable_cases()).disagreement is not None


def test_features_update_formula_agrees_with_reference() -> None:
    res = differential("features_update", features_update_cases(brokers=1))
    assert res.ok, str(res.disagreement)
    assert res.inputs == 2 * 7 * 5 * 2 * 7 * 7


def test_streams_assign_rule_tells_the_two_leader_failures_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pre-2.0 leader dies of a TaskAssignmentException (it cannot decode a newer subscription), a probing one
    of an IllegalStateException: a leader that failed by the other class is caught (campaign survivor
    api.py:580:12 lets a pre-2.0 leader reach the probing leader's check)."""
    assert differential("streams_assign", streams_assign_cases(max_members=2, mutations=("",))).ok
    real = streams_api._future_members

    def planted(leader: Any, subscriptions: Any) -> list[str]:
        try:
            return real(leader, subscriptions)
        except streams_api.TaskAssignmentException as exc:
            raise streams_api.IllegalStateException(str(exc)) from None
    monkeypatch.setattr(streams_api, "_future_members", planted)
    d = differential("streams_assign", streams_assign_cases(max_members=2, mutations=("",))).disagreement
    assert d is not None and d.reference["outcome"] == 1 and d.formula["outcome"] == 3


def test_differential_reports_a_concrete_disagreement() -> None:
    """A formula for another rule than the reference's (the max, not the min, of the supported versions;
    the other profile) must be caught with a concrete input."""
    leader = release("post-2.0")
    member = [{"v0": v0, "lat0": l0, "v1": v1, "lat1": l1} for l0 in (3, 4, 11) for v0 in range(1, l0 + 1)
              for l1 in (3, 4, 11) for v1 in range(1, l1 + 1)]
    res = differential("streams_assign", [("wrong", streams_assign_formula(4, "kafka", "commonly_supported_is_max", 2),
                                           member, streams_assign_reference(leader, "kafka", "", 2))])
    assert res.disagreement is not None
    d = res.disagreement
    assert d.reference != d.formula and set(d.inputs) == {"v0", "lat0", "v1", "lat1"}
    res = differential("features_update", [("wrong", features_update_formula("kip", 1),
                                            features_update_cases(brokers=1).__next__()[2],
                                            features_update_reference("kafka", 1))])
    assert res.disagreement is not None


def test_mv_lossless_rule_agrees_on_every_catalog_pair() -> None:
    from model.decisions.metadata_version import mv_lossless_cases

    res = differential("mv_lossless", mv_lossless_cases())
    assert res.ok, str(res.disagreement)
    assert res.cases == 2 and res.inputs > 25


def test_mv_update_decision_agrees_with_reference() -> None:
    from model.decisions.metadata_version import mv_update_cases

    # Two voters (the controller and one that may be unregistered), no brokers; ranges that start at the
    # lowest level or end at the highest (the full domain runs in benchmarks/prove.py).
    res = differential("mv_update", mv_update_cases("example", voters=2, brokers=0, dry_runs=(False,),
                                                    edge_ranges=True))
    assert res.ok, str(res.disagreement)
    assert res.cases == 3 and res.inputs == 3 * 5 * 7 * 3 * 9 * 10


def test_mv_update_decision_agrees_on_kafkas_catalog() -> None:
    """Kafka's own catalog, where 3.9's floor (3.3-IV0) and 4.0's minimum version (3.3-IV3) differ."""
    from model.decisions.metadata_version import mv_update_cases

    res = differential("mv_update", mv_update_cases("kafka", voters=1, brokers=0, dry_runs=(False,)))
    assert res.ok, str(res.disagreement)
    assert res.cases == 3 and res.inputs == 3 * 10 * 12 * 3 * 12


def test_mv_update_decision_disagreement_is_found() -> None:
    """The kip formula against Kafka 3.9's controller: they differ (a lossy UNSAFE downgrade, for one)."""
    from model.decisions.metadata_version import mv_update_cases, mv_update_formula
    from reference_impl.metadata_version.catalog import CATALOGS

    case = next(c for c in mv_update_cases("example", voters=1, brokers=0, dry_runs=(False,)) if "kafka 3.9" in c[0])
    wrong = mv_update_formula(CATALOGS["example"], "kip", "3.9", False, 1, 0)
    res = differential("mv_update", [("kip formula vs kafka 3.9", wrong, case[2], case[3])])
    assert res.disagreement is not None and res.disagreement.reference != res.disagreement.formula


def test_zk_migration_triggers_agree_with_reference() -> None:
    from model.decisions.zk_migration import zk_trigger_cases

    res = differential("zk_triggers", zk_trigger_cases())
    assert res.ok, str(res.disagreement)
    # activate, bootstrap and registration per profile, epoch claim, KRaft broker registration (kip), driver
    # changes; the driver helpers: isLeader, onControllerChange and PollEvent, the copy's batches, the two image
    # events; the ZkMigrationState metric; ActivationRecordsGenerator.generate; areZkBrokersReadyForMigration,
    # MetadataChangeEvent, MigrationEvent.handleException; ZkMigrationState.of; metadata.version's three forms;
    # recordsForEmptyLog with its own metadata.version and bootstrap records; registerBroker's migration checks;
    # tryRegisterKRaftControllerAsActiveController; reasonAllControllersZkMigrationNotReady; the driver's state
    # events; the copy's default batch size; checkDriverState
    assert res.cases == 9 + 6 + 1 + 3 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1


@pytest.mark.parametrize("planted", ["member read as a level", "string read as a level"])
def test_each_form_of_a_metadata_version_is_the_same_version(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The system passes levels alone: a to_metadata_version that loses a form (the campaign's survivors
    api.py:146 / 148 if_false) is seen by the decision differential only."""
    from model.decisions.zk_migration import zk_trigger_cases
    from reference_impl.metadata_version.catalog import MetadataVersion, from_feature_level, from_version_string

    def lossy(mv: object) -> MetadataVersion:
        if planted == "string read as a level" and isinstance(mv, MetadataVersion):
            return mv
        if planted == "member read as a level" and isinstance(mv, str):
            return from_version_string(mv)
        return from_feature_level(mv)  # type: ignore[arg-type]

    monkeypatch.setattr(zk_api, "to_metadata_version", lossy)
    case = "metadata.version as level, member or string"
    bad = differential("zk_triggers", [c for c in zk_trigger_cases() if c[0] == case])
    assert bad.cases == 1 and bad.disagreement is not None


@pytest.mark.parametrize("planted", ["ZK under code 5", "an unknown code read as NONE", "metric values shifted"])
def test_zk_state_codes_and_metric_values_are_the_rules_own(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The formulas hold Kafka's ZkMigrationState codes and the KIP metric's values themselves: the campaign's
    enum-constant mutants (api.py:38 ZK = 5 / 3, api.py:57, api.py:71-72) moved the reference and a formula
    that read the same enum together."""
    import enum

    from model.decisions.zk_migration import zk_trigger_cases
    from reference_impl.zk_migration import api as zk_api

    zs = zk_api.ZkMigrationState
    case = "ZkMigrationState.of"
    if planted == "ZK under code 5":
        real = zs.optional_of
        monkeypatch.setattr(zs, "optional_of", staticmethod(
            lambda code: None if code == 4 else (zs.ZK if code == 5 else real(code))))
    elif planted == "an unknown code read as NONE":
        monkeypatch.setattr(zs, "of", staticmethod(lambda code: zs.optional_of(code) or zs.NONE))
    else:
        shifted = enum.Enum("KipMigrationState", {"MIGRATION_INELIGIBLE": 1, "MIGRATE_ZK_DATA": 1, "DUAL_WRITE": 2,
                                                  "MIGRATION_FINALIZED": 3})
        monkeypatch.setattr(zk_api, "KipMigrationState", shifted)
        case = "ZkMigrationState metric"
    bad = differential("zk_triggers", [c for c in zk_trigger_cases() if c[0] == case])
    assert bad.disagreement is not None


def test_zk_kraft_broker_registration_rule_sees_a_planted_id_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """No config registers a new KRaft broker: the KIP's id rule is reached by the decision differential only."""
    from model.decisions.zk_migration import zk_trigger_cases
    from reference_impl.zk_migration import api as zk_api

    monkeypatch.setattr(zk_api, "kraft_broker_registration_error", lambda broker_id, zk_broker_ids: None)
    bad = differential("zk_triggers", [c for c in zk_trigger_cases() if c[0] == "KRaft broker registration, kip"])
    assert bad.disagreement is not None


@pytest.mark.parametrize("planted", ["partial bootstrap not aborted", "no record read as the latest version",
                                     "NONE log with migration enabled accepted", "bootstrap version not named",
                                     "state record printed without its state", "end record printed with a field"])
def test_zk_activation_records_rule_sees_each_planted_generator_bug(planted: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The system's first controller activates an empty log with no partial transaction, and every replayed log
    has a metadata.version record: the generator's other paths are compared by this case only."""
    from model.decisions.zk_migration import zk_activation_records_cases
    from reference_impl.zk_migration import api as zk_api

    assert differential("zk_triggers", zk_activation_records_cases()).ok
    real_empty, real_log = zk_api.records_for_empty_log, zk_api.records_for_non_empty_log
    if planted == "partial bootstrap not aborted":
        monkeypatch.setattr(zk_api, "records_for_empty_log", lambda offset, *a, **k: real_empty(-1, *a, **k))
    elif planted == "bootstrap version not named":
        def unnamed(*a: Any, **k: Any) -> Any:
            r = real_empty(*a, **k)
            return dataclasses.replace(r, message=r.message.replace(" at metadata.version", " at"))
        monkeypatch.setattr(zk_api, "records_for_empty_log", unnamed)
    elif planted == "state record printed without its state":
        monkeypatch.setattr(zk_api.MetadataRecord, "__str__", lambda self: self.name)
    elif planted == "end record printed with a field":
        monkeypatch.setattr(zk_api.MetadataRecord, "__str__", lambda self: f"{self.name}({self.value})")
    elif planted == "no record read as the latest version":
        monkeypatch.setattr(zk_api, "records_for_non_empty_log",
                            lambda offset, enabled, mv, *a: real_log(offset, enabled, mv or 21, *a))
    else:
        def accept_none(offset: int, enabled: bool, mv: Any, state: Any = zk_api.ZkMigrationState.NONE) -> Any:
            if state in (None, zk_api.ZkMigrationState.NONE) and enabled:
                return real_log(offset, False, mv, state)
            return real_log(offset, enabled, mv, state)
        monkeypatch.setattr(zk_api, "records_for_non_empty_log", accept_none)
    assert differential("zk_triggers", zk_activation_records_cases()).disagreement is not None


@pytest.mark.parametrize("planted", ["assigned brokers not checked", "snapshot sent as a delta",
                                     "an auth failure retried", "a change under another leader written",
                                     "an unknown image offset taken as behind",
                                     "an image at /migration's offset skipped"])
def test_zk_driver_helper_rules_see_each_planted_bug(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from model.decisions.zk_migration import _zk_driver_helper_cases
    from reference_impl.zk_migration import api as zk_api

    assert differential("zk_triggers", _zk_driver_helper_cases()).ok
    if planted == "assigned brokers not checked":
        real = zk_api.reason_zk_brokers_not_ready_for_migration
        monkeypatch.setattr(zk_api, "reason_zk_brokers_not_ready_for_migration",
                            lambda first, kraft, ids, assigned=(): real(first, kraft, ids))
    elif planted == "snapshot sent as a delta":
        real_change = zk_api.metadata_change_event
        monkeypatch.setattr(zk_api, "metadata_change_event", lambda state, **k: real_change(
            state, **{**k, "is_snapshot": False, "topics_changed": k.get("topics_changed") or k.get("is_snapshot")}))
    elif planted == "an auth failure retried":
        real_handle = zk_api.handle_migration_event_exception
        monkeypatch.setattr(zk_api, "handle_migration_event_exception",
                            lambda error: "retry" if error.startswith("MigrationClient") else real_handle(error))
    elif planted == "an image at /migration's offset skipped":
        # The survivor zk api.py:882 (cmp_swap <=): an image exactly at /migration's offset is up to date.
        real_equal = zk_api.metadata_change_event
        monkeypatch.setattr(zk_api, "metadata_change_event", lambda state, **k: real_equal(
            state, **{**k, "image": zk_api.OffsetAndEpoch(0, 0)} if k.get("image") == k.get("migration") else k))
    elif planted == "an unknown image offset taken as behind":
        # The mutation campaign's survivor zk api.py:882 (drop_and_operand): an offset not given is compared.
        real_change = zk_api.metadata_change_event
        monkeypatch.setattr(zk_api, "metadata_change_event", lambda state, **k: real_change(
            state, **{**k, "image": k.get("image") or zk_api.OffsetAndEpoch(0, 0)}))
    else:
        real_change = zk_api.metadata_change_event
        monkeypatch.setattr(zk_api, "metadata_change_event",
                            lambda state, **k: real_change(state, **{**k, "leader_current": True}))
    assert differential("zk_triggers", _zk_driver_helper_cases()).disagreement is not None


def _planted_driver_helper(planted: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Plants one bug in a KRaftMigrationDriver helper no config's driver step varies; returns the case that
    must see it."""
    from reference_impl.zk_migration import api as zk_api

    if planted == "an unknown leader leads":
        monkeypatch.setattr(zk_api.LeaderAndEpoch, "is_leader", lambda self, node_id: self.leader_id in (None, node_id))
        return "LeaderAndEpoch.is_leader"
    if planted == "every event checks its leader":
        # The mutation campaign's survivor zk api.py:683 (drop_and_operand): a non-write event made under an
        # older leader no longer runs.
        real_check = zk_api.check_driver_state
        monkeypatch.setattr(zk_api, "check_driver_state", lambda state, event, made=None, now=None:
                            made == now and real_check(state, event, made, now))
        return "checkDriverState"
    if planted == "no recovery before the first leader event":
        monkeypatch.setattr(zk_api, "on_controller_change", lambda state: (zk_api.DriverEvent.KRAFT_LEADER,))
        return "onControllerChange and PollEvent"
    if planted == "a batch handed over one record late":
        real = zk_api.coalesce_migration_batches
        monkeypatch.setattr(zk_api, "coalesce_migration_batches",
                            lambda sizes, min_batch_size=1000: real(sizes, min_batch_size + 1))
        return "MigrateMetadataEvent batches"
    if planted == "the default batch size off by one":
        # The mutation campaign's survivors zk api.py:599 (DEFAULT_MIN_MIGRATION_BATCH_SIZE 199 / 201).
        real = zk_api.coalesce_migration_batches
        monkeypatch.setattr(zk_api, "coalesce_migration_batches",
                            lambda sizes, min_batch_size=201: real(sizes, min_batch_size))
        return "MigrateMetadataEvent default batch size"
    if planted == "copied data reported ineligible after a failover":
        # The mutation campaign's survivor zk api.py:127: the metric was read by nothing.
        real_metric = zk_api.kip_state

        def metric(state: Any, driver: Any) -> Any:
            if state is zk_api.ZkMigrationState.MIGRATION and not driver.allow_dual_write:
                return zk_api.KipMigrationState.MIGRATION_INELIGIBLE
            return real_metric(state, driver)
        monkeypatch.setattr(zk_api, "kip_state", metric)
        return "ZkMigrationState metric"
    real_sync = zk_api.sync_kraft_metadata_event
    if planted == "a sync from an image behind /migration":
        def sync(state: Any, image: Any, migration: Any, *leaders: Any) -> Any:
            return real_sync(state, max(image, migration), migration, *leaders)
        monkeypatch.setattr(zk_api, "sync_kraft_metadata_event", sync)
        return "SyncKRaftMetadataEvent"
    assert planted == "RPCs sent for an older leader"
    real_rpcs = zk_api.send_rpcs_to_brokers_event

    def rpcs(state: Any, image: Any, migration: Any, event_leader: Any = None, current_leader: Any = None) -> Any:
        return real_rpcs(state, image, migration, current_leader, current_leader)
    monkeypatch.setattr(zk_api, "send_rpcs_to_brokers_event", rpcs)
    return "SendRPCsToBrokersEvent"


@pytest.mark.parametrize("planted", ["an unknown leader leads", "no recovery before the first leader event",
                                     "a batch handed over one record late", "the default batch size off by one",
                                     "every event checks its leader",
                                     "a sync from an image behind /migration",
                                     "RPCs sent for an older leader",
                                     "copied data reported ineligible after a failover"])
def test_zk_driver_helpers_no_config_varies_are_decision_rules(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The system's leader image always holds what /migration records, its events run under the leader that made
    them and it copies no record batches: a bug in those driver helpers is seen by the decision differential."""
    from model.decisions.zk_migration import zk_trigger_cases

    case = _planted_driver_helper(planted, monkeypatch)
    bad = differential("zk_triggers", [c for c in zk_trigger_cases() if c[0] == case])
    assert bad.cases == 1 and bad.disagreement is not None, case


def test_zk_activation_profiles_differ_concretely() -> None:
    """The kip activation formula against Kafka's: a MIGRATION log met by a controller with migration off
    (and not every voter off) resigns in the KIP and finalizes in Kafka."""
    from model.decisions.zk_migration import zk_trigger_cases

    cases = {c[0]: c for c in zk_trigger_cases()}
    kip, kafka = cases["activate, kip"], cases["activate, kafka"]
    res = differential("zk_triggers", [("kip formula vs kafka", kip[1], kafka[2], kafka[3])])
    assert res.disagreement is not None
    assert res.disagreement.inputs["state"] == 1 and res.disagreement.inputs["enabled"] == 0


def test_version_range_formula_agrees_and_sees_a_constructor_that_lets_max_below_min(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No config builds a bad range; only the decision differential reaches the constructors' check."""
    res = differential("version_range", version_range_cases())
    assert res.ok, str(res.disagreement)
    assert res.inputs == 6**4 + 6**4 * 2  # the ranges, and BrokerFeatures with a known or an unknown feature

    def planted(min_value: int, max_value: int) -> None:  # Kafka's check without "maxValue >= minValue"
        if min_value < 1 or max_value < 1:
            raise ValueError("planted")

    monkeypatch.setattr(features_api, "_check_range", planted)
    bad = differential("version_range", version_range_cases())
    assert bad.disagreement is not None
    assert bad.disagreement.inputs["smin"] > bad.disagreement.inputs["smax"] or \
        bad.disagreement.inputs["fmin"] > bad.disagreement.inputs["fmax"]


@pytest.mark.parametrize("planted", ["levels swapped", "a missing level taken as 1"])
def test_version_range_rule_sees_each_planted_from_map_bug(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """fromMap (BaseVersionRange.valueOrThrow): no config builds a range from a map; the campaign's features
    api.py:93 (a missing level not refused) ran on no checker."""
    if planted == "levels swapped":
        monkeypatch.setattr(features_api.FinalizedVersionRange, "from_map", classmethod(
            lambda cls, values: cls(features_api._value_or_throw(cls.MAX_KEY, values),
                                    features_api._value_or_throw(cls.MIN_KEY, values))))
    else:
        monkeypatch.setattr(features_api, "_value_or_throw", lambda key, values: values.get(key, 1))
    assert differential("version_range", version_range_cases()).disagreement is not None


@pytest.mark.parametrize("planted", ["default at max only", "incompatible when only max outside",
                                     "unknown feature compatible", "default supports one", "from_map finalized"])
def test_version_range_rule_sees_each_planted_broker_features_bug(planted: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Kafka 2.8's BrokerFeatures (defaultFinalizedFeatures, incompatibleFeatures, createDefault) and
    Features.fromMap of maps are read by the Kafka transcriptions and no system action: the rule sees each
    edit."""
    broker = features_api.BrokerFeatures
    if planted == "default at max only":
        monkeypatch.setattr(broker, "default_finalized_features", lambda self: tuple(
            (n, features_api.FinalizedVersionRange(r.max_version, r.max_version)) for n, r in self.supported_features))
    elif planted == "incompatible when only max outside":
        monkeypatch.setattr(broker, "incompatible_features", lambda self, finalized: tuple(
            (n, r) for n, r in finalized if n in set(features_api.incompatible_features(
                self.supported_features, finalized, "kip"))))
    elif planted == "unknown feature compatible":
        real = broker.incompatible_features
        monkeypatch.setattr(broker, "incompatible_features", lambda self, finalized: tuple(
            (n, r) for n, r in real(self, finalized) if features_api.lookup(self.supported_features, n)))
    elif planted == "default supports one":
        monkeypatch.setattr(broker, "create_default", staticmethod(
            lambda: broker((("x", features_api.SupportedVersionRange(1, 1)),))))
    else:
        monkeypatch.setattr(features_api, "supported_features_from_map",
                            lambda values: features_api.finalized_features_from_map(values))
    bad = differential("version_range", version_range_cases())
    assert bad.disagreement is not None and bad.disagreement.case == "BrokerFeatures", planted


@pytest.mark.parametrize("planted", ["equal_epoch_refused", "older_epoch_accepted", "negative_wait_accepted"])
def test_finalized_cache_formula_agrees_and_sees_each_planted_epoch_bug(planted: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The system never reads the API's FinalizedFeatureCache: its epoch rule is reached here only."""
    res = differential("finalized_cache", finalized_cache_cases())
    assert res.ok, str(res.disagreement)
    assert res.cases == 2 and res.inputs == 2 * 2160
    cache = features_api.FinalizedFeatureCache
    update, reached = cache.update_or_throw, cache.reached_epoch

    def update_or_throw(self: Any, latest_features: Any, latest_epoch: int) -> Any:
        held = self.features_and_epoch
        if planted == "equal_epoch_refused" and held is not None and held.epoch == latest_epoch:
            raise features_api.FeatureCacheUpdateException("planted")
        if planted == "older_epoch_accepted" and held is not None and held.epoch > latest_epoch:
            return cache(self.supported, features_api.FinalizedFeaturesAndEpoch(latest_features, latest_epoch),
                         self.profile)
        return update(self, latest_features, latest_epoch)

    def reached_epoch(self: Any, min_expected_epoch: int) -> bool:
        if planted == "negative_wait_accepted" and min_expected_epoch < 0:
            return True
        return bool(reached(self, min_expected_epoch))

    monkeypatch.setattr(cache, "update_or_throw", update_or_throw)
    monkeypatch.setattr(cache, "reached_epoch", reached_epoch)
    assert differential("finalized_cache", finalized_cache_cases()).disagreement is not None


@pytest.mark.parametrize("planted", ["no_downgrade_flag_check", "every_update_refused", "untrimmed_name"])
def test_admin_update_formula_agrees_and_sees_each_planted_client_bug(planted: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    res = differential("admin_update", admin_update_cases())
    assert res.ok, str(res.disagreement)
    check, build = features_api.AdminFeatureUpdate.__post_init__, features_api.admin_update_features_request

    def post_init(self: Any) -> None:
        if planted == "every_update_refused":
            raise ValueError("planted")
        if planted != "no_downgrade_flag_check":
            check(self)

    def request(updates: Any, timeout_ms: int = 60000) -> Any:
        if planted == "untrimmed_name" and any(not name for name in updates):
            raise ValueError("planted: only the empty string is refused, not a blank one")
        if planted == "untrimmed_name":
            return features_api.UpdateFeaturesRequest(tuple(features_api.FeatureUpdate(f, u.max_version_level,
                                                                                        u.allow_downgrade)
                                                            for f, u in updates.items()), timeout_ms)
        return build(updates, timeout_ms)

    monkeypatch.setattr(features_api.AdminFeatureUpdate, "__post_init__", post_init)
    monkeypatch.setattr(features_api, "admin_update_features_request", request)
    import model.decisions.features as decisions_features  # the rule's module: it imported the name
    monkeypatch.setattr(decisions_features, "admin_update_features_request", request)
    assert differential("admin_update", admin_update_cases()).disagreement is not None


@pytest.mark.parametrize("planted", ["unstable_ignored", "floor_dropped", "cluster_id_unchecked",
                                     "bare_release_refused", "zk_era_as_unknown"])
def test_format_storage_formula_agrees_and_sees_each_planted_formatter_bug(planted: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Every config starts formatted: only the decision differential reaches kafka-storage format's checks."""
    import model.decisions.metadata_version as decisions_mv
    import reference_impl.metadata_version.api as mv_api

    res = differential("format_storage", format_storage_cases())
    assert res.ok, str(res.disagreement)
    real = mv_api.format_storage

    def planted_format(cluster_id: str, catalog: Any, binary_default: int, metadata_version: Any = None,
                       profile: str = "kip", **kw: Any) -> Any:
        if planted == "bare_release_refused" and isinstance(metadata_version, str) and "-" not in metadata_version:
            raise ValueError(f"Version {metadata_version} is not a valid version")  # only full names parsed
        if planted == "zk_era_as_unknown" and metadata_version == "2.8":
            raise ValueError("No MetadataVersion with feature level -1")  # not "too old to be supported"
        if planted == "cluster_id_unchecked":
            cluster_id = cluster_id or "formatted-anyway"  # "You must specify the cluster id." never said
        elif planted == "unstable_ignored":
            kw["unstable_feature_versions_enabled"] = True  # "is not yet stable" never said
        elif profile == "kafka" and isinstance(metadata_version, int) and metadata_version in catalog.levels \
                and metadata_version >= catalog.minimum_for(kw.get("kafka_release", "3.9")):
            return mv_api.MetaProperties(cluster_id, metadata_version)  # no bootstrap floor, no stability check
        return real(cluster_id, catalog, binary_default, metadata_version, profile, **kw)

    monkeypatch.setattr(decisions_mv, "format_storage", planted_format)
    assert differential("format_storage", format_storage_cases()).disagreement is not None


def test_mv_activation_formula_agrees_and_sees_a_bootstrap_record_on_a_non_empty_log(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """KAFKA's ActivationRecordsGenerator writes bootstrap records only to an empty log; a planted generator
    that also writes them to a non-empty log without a FeatureLevelRecord is a disagreement."""
    import model.decisions.metadata_version as decisions_mv
    import reference_impl.metadata_version.api as mv_api

    res = differential("mv_activation", mv_activation_cases())
    assert res.ok, str(res.disagreement)
    real = mv_api.bootstrap_metadata_version

    def planted(meta: Any, catalog: Any, log_levels: Any = (), *, log_is_empty: bool | None = None) -> Any:
        return real(meta, catalog, log_levels, log_is_empty=None if log_is_empty is False else log_is_empty)

    monkeypatch.setattr(decisions_mv, "bootstrap_metadata_version", planted)
    bad = differential("mv_activation", mv_activation_cases()).disagreement
    assert bad is not None and bad.inputs["records"] == 0 and bad.inputs["empty"] == 2


def _accept_a_higher_assignment(real: Any) -> Any:
    def planted(member: Any, profile: str, used: int, info: Any, mutations: frozenset[str] = frozenset()) -> Any:
        if info.version > used and member.can_decode(info.version):  # no "got an assignment with higher version"
            return streams_api.MemberUpdate(used, False, streams_api.MemberOutcome.NONE)
        return real(member, profile, used, info, mutations)
    return planted


def _adopt_above_own(real: Any) -> Any:
    def planted(member: Any, profile: str, used: int, info: Any, mutations: frozenset[str] = frozenset()) -> Any:
        if profile == "kafka" and info.latest_supported > member.latest_supported >= 3 and info.version <= used:
            # no "Can't upgrade to metadata version greater than we support"
            return streams_api.MemberUpdate(info.latest_supported, True, streams_api.MemberOutcome.ADOPT_SUPPORTED)
        return real(member, profile, used, info, mutations)
    return planted


def _ignore_the_error_code(real: Any) -> Any:
    def planted(member: Any, profile: str, used: int, info: Any, mutations: frozenset[str] = frozenset()) -> Any:
        return real(member, profile, used, dataclasses.replace(info, error=streams_api.AssignorError.NONE), mutations)
    return planted


def _shut_down_on_an_unknown_code(real: Any) -> Any:
    """The coverage map's streams api.py:777: an error code no AssignorError names taken as a shutdown, not as
    Kafka's "Hit an unrecognized exception during rebalance"."""
    def planted(member: Any, profile: str, used: int, info: Any, mutations: frozenset[str] = frozenset()) -> Any:
        if not isinstance(info.error, streams_api.AssignorError):
            info = dataclasses.replace(info, error=streams_api.AssignorError.SHUTDOWN_REQUESTED)
        return real(member, profile, used, info, mutations)
    return planted


def _kafka_2_1_1_probe_takes_the_received_version(real: Any) -> Any:
    """The coverage map's streams api.py:855 (Kafka 2.1.0 / 2.1.1's probe downgrade, uncapped_adopt): the
    received version taken even when the leader's supported version differs."""
    def planted(member: Any, profile: str, used: int, info: Any, mutations: frozenset[str] = frozenset()) -> Any:
        got = real(member, profile, used, info, mutations)
        if "uncapped_adopt" in mutations and got.outcome is streams_api.MemberOutcome.PROBE_DOWNGRADE:
            return dataclasses.replace(got, used_version=info.version)
        return got
    return planted


def _kafka_2_0_member_throws_today_s_class(real: Any) -> Any:
    """Campaign survivor streams api.py:784:49: a 2.0-rules member refusing an assignment above the version it sent
    with today's TaskAssignmentException, not Kafka 2.0's IllegalStateException (the text is the same)."""
    def planted(member: Any, profile: str, used: int, info: Any, mutations: frozenset[str] = frozenset()) -> Any:
        try:
            return real(member, profile, used, info, mutations)
        except streams_api.IllegalStateException as exc:
            raise streams_api.TaskAssignmentException(str(exc)) from None
    return planted


@pytest.mark.parametrize("planted", [_accept_a_higher_assignment, _adopt_above_own, _ignore_the_error_code,
                                     _shut_down_on_an_unknown_code, _kafka_2_1_1_probe_takes_the_received_version,
                                     _kafka_2_0_member_throws_today_s_class])
def test_streams_on_assignment_formula_agrees_and_sees_each_planted_member_bug(
        planted: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The member's branches no config's states reach (an assignment above the version sent, a commonly supported
    version above the member's own, an error code, which no config's leader sends, one no AssignorError names)
    are on the rule's domain: a planted member that gets any of them wrong is a disagreement."""
    res = differential("streams_on_assignment", streams_on_assignment_cases())
    assert res.ok, str(res.disagreement)
    # 8 member releases x 3 profiles + 3.9 (kafka only), post-2.0 as 2.1.1 (uncapped_adopt) under each profile, and
    # the probing members under member_never_upgrades (2.0 and post-2.0 x 3, 3.9 x 1)
    assert res.cases == 8 * 3 + 1 + 3 + 7
    monkeypatch.setattr(streams_api, "on_assignment", planted(streams_api.on_assignment))
    assert differential("streams_on_assignment", streams_on_assignment_cases()).disagreement is not None


def _zk_era_level_off_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference_impl.metadata_version.catalog import MetadataVersion

    monkeypatch.setattr(MetadataVersion, "feature_level",
                        property(lambda self: -2 if self is MetadataVersion.IBP_0_8_2 else self.value[0]))


def _version_string_without_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference_impl.metadata_version.catalog import MetadataVersion

    monkeypatch.setattr(MetadataVersion, "version_string", property(lambda self: self.value[1] + self.value[2]))


def _previous_skips_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference_impl.metadata_version.catalog import VERSIONS, MetadataVersion

    monkeypatch.setattr(MetadataVersion, "previous",
                        lambda self: VERSIONS[self.ordinal - 2] if self.ordinal > 1 else None)


def _example_label_parses_to_the_next_level(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference_impl.metadata_version.catalog import Catalog

    real = Catalog.parse
    monkeypatch.setattr(Catalog, "parse", lambda self, text, release=None: real(self, text, release) + (
        1 if self.name == "example" and text == "V2" else 0))


def _a_level_as_text_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference_impl.metadata_version.catalog import Catalog

    real = Catalog._entry
    monkeypatch.setattr(Catalog, "_entry", lambda self, level: real(self, int(level)))


def _elr_from_the_3_9_numbering(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference_impl.metadata_version import catalog as mv_catalog

    monkeypatch.setattr(mv_catalog.MetadataVersion, "is_elr_supported",
                        lambda self: self.is_at_least(mv_catalog.MetadataVersion.IBP_4_0_IV0))


def _broker_record_v2_from_3_3_iv3(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference_impl.metadata_version import catalog as mv_catalog

    real = mv_catalog.MetadataVersion.register_broker_record_version
    monkeypatch.setattr(mv_catalog.MetadataVersion, "register_broker_record_version",
                        lambda self: 2 if real(self) == 1 else real(self))


def _version_string_dashed_without_sub_version(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's screen: catalog.py version_string `if self.value[2]` made `if True` ("0.8.0-", which still
    # reads back, so only the restated names see it).
    from reference_impl.metadata_version.catalog import MetadataVersion

    monkeypatch.setattr(MetadataVersion, "version_string", property(lambda self: f"{self.value[1]}-{self.value[2]}"))


def _parse_over_every_member(monkeypatch: pytest.MonkeyPatch) -> None:
    # A misreading: fromVersionString under 4.0 knowing the 3.9 members too.
    from reference_impl.metadata_version import catalog as mv_catalog

    every = mv_catalog._ibp_versions("3.9")
    monkeypatch.setitem(mv_catalog._IBP_VERSIONS, "4.0", {**every, **mv_catalog._IBP_VERSIONS["4.0"]})


def _level_above_the_release(monkeypatch: pytest.MonkeyPatch) -> None:
    # fromFeatureLevel bounded below only: 4.0 taking 4.1-IV1 (27), which its enum does not have.
    from reference_impl.metadata_version import catalog as mv_catalog

    real = mv_catalog.from_feature_level
    monkeypatch.setattr(mv_catalog, "from_feature_level", lambda level, release="3.9": (
        mv_catalog.MetadataVersion.IBP_4_1_IV1 if level == 27 else real(level, release)))


def _label_index_wraps(monkeypatch: pytest.MonkeyPatch) -> None:
    # Catalog._entry without its range check: level minimum - 1 reads the last entry.
    from reference_impl.metadata_version.catalog import Catalog

    monkeypatch.setattr(Catalog, "_entry", lambda self, level: self.entries[level - self.minimum])


def _kafka_parse_ignores_the_release(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference_impl.metadata_version import catalog as mv_catalog

    monkeypatch.setattr(mv_catalog.KafkaCatalog, "parse", lambda self, text, release=None: (
        mv_catalog.from_version_string(text).feature_level))


def _example_floor_at_v2(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference_impl.metadata_version import catalog as mv_catalog

    monkeypatch.setitem(mv_catalog.CATALOGS, "example",
                        dataclasses.replace(mv_catalog.EXAMPLE_CATALOG, bootstrap_floor=2))


@pytest.mark.parametrize("planted", [_zk_era_level_off_by_one, _version_string_without_dash, _previous_skips_one,
                                     _example_label_parses_to_the_next_level, _a_level_as_text_accepted,
                                     _elr_from_the_3_9_numbering, _broker_record_v2_from_3_3_iv3,
                                     _version_string_dashed_without_sub_version, _parse_over_every_member,
                                     _level_above_the_release, _label_index_wraps, _kafka_parse_ignores_the_release,
                                     _example_floor_at_v2])
def test_mv_catalog_rule_agrees_and_sees_each_planted_catalog_bug(planted: Any, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    """The system reads levels as ints and never prints or parses a version's name: a wrong ZooKeeper-era level,
    a name that no longer reads back, a wrong ``previous()`` are seen by the catalog rule, not only by
    tests/kafka's MetadataVersionTest."""
    from model.decisions.metadata_version import mv_catalog_cases

    res = differential("mv_catalog", mv_catalog_cases())
    assert res.ok, str(res.disagreement)
    # MetadataVersion x7 (releases 3.3, 3.9, 4.0 .. 4.4), predicates, names and members x6, fromFeatureLevel x6,
    # fromVersionString, bounds, pairs, VersionRange, controller settings, default ranges, responses, labels x2,
    # catalog settings, entries, parse: 7 + 6 + 6 + 13
    assert res.cases == 32
    planted(monkeypatch)
    assert differential("mv_catalog", mv_catalog_cases()).disagreement is not None


def _decoder_drops_the_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    real = streams_api.decode_subscription
    monkeypatch.setattr(streams_api, "decode_subscription",
                        lambda data, latest=4: dataclasses.replace(real(data, latest), user_endpoint=None))


def _decoder_masks_the_low_half_one_bit_wide(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's survivors streams api.py:369:68 / 73 int_plus_1: a 65-bit mask on the signed low half sets
    # the high half's lowest bit when the low half is negative, which only an even high half shows.
    import uuid

    real = streams_api.decode_subscription

    def planted(data: bytes, latest: int = 4) -> Any:
        got = real(data, latest)
        pid = getattr(got, "process_id", None)
        if pid is None or not pid.int & (1 << 63):
            return got
        return dataclasses.replace(got, process_id=uuid.UUID(int=pid.int | (1 << 64)))
    monkeypatch.setattr(streams_api, "decode_subscription", planted)


def _decoder_drops_the_error_code(monkeypatch: pytest.MonkeyPatch) -> None:
    real = streams_api.decode_assignment
    monkeypatch.setattr(streams_api, "decode_assignment", lambda data, latest=4: dataclasses.replace(
        real(data, latest), error=streams_api.AssignorError.NONE))


def _encoder_writes_the_supported_version_below_version_3(monkeypatch: pytest.MonkeyPatch) -> None:
    real = streams_api.encode_subscription

    def planted(info: Any, latest: int = 4) -> bytes:
        data = real(info, latest)
        if info.version < 3 and latest >= 3:  # the field only versions 3 and later carry
            return data[:4] + (-1).to_bytes(4, "big", signed=True) + data[4:]
        return data
    monkeypatch.setattr(streams_api, "encode_subscription", planted)


def _task_set_sorts_a_task_set_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's survivor streams api.py:128:12 if_false: a TaskSet wrapped again (SubscriptionInfo's
    # __post_init__) is taken for an unordered set and sorted, losing the order the caller put its tasks in.
    real = streams_api.TaskSet.__new__
    monkeypatch.setattr(streams_api.TaskSet, "__new__", lambda cls, tasks=(): real(
        cls, frozenset(tasks) if isinstance(tasks, streams_api.TaskSet) else tasks))


def _task_set_stays_what_it_was_given(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's survivors streams api.py:128 (TaskSet.__new__ returning what it was given): a list stays
    # a list, so the decoded prevTasks is no Set (a task given twice stays twice, and it equals no Set).
    real = streams_api.TaskSet.__new__
    monkeypatch.setattr(streams_api.TaskSet, "__new__",
                        lambda cls, tasks=(): tasks if isinstance(tasks, list) else real(cls, tasks))


def _task_set_keeps_a_python_sets_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's survivor streams api.py:130:41 if_false: an unordered set given to TaskSet keeps Python's
    # iteration order (how the set happened to be filled) instead of TaskId order.
    real = streams_api.TaskSet.__new__
    monkeypatch.setattr(streams_api.TaskSet, "__new__", lambda cls, tasks=(): real(
        cls, list(tasks) if isinstance(tasks, frozenset | set) else tasks))


def _subscription_of_accepts_version_0(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's survivor streams api.py:178:16 (``0 <= version``): the checked constructor lets version 0 in.
    real = streams_api.SubscriptionInfo.of

    def planted(version: int, latest: int, *rest: Any) -> Any:
        return streams_api.SubscriptionInfo(0, latest_supported=-1) if version == 0 else real(version, latest, *rest)
    monkeypatch.setattr(streams_api.SubscriptionInfo, "of", staticmethod(planted))


def _subscription_of_defaults_to_another_process_id(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's survivor streams api.py:181:81: a subscription built without a process id gets UUID 1.
    import uuid

    real = streams_api.SubscriptionInfo.of

    def planted(version: int, latest: int, process_id: Any = None, *rest: Any) -> Any:
        return real(version, latest, process_id or uuid.UUID(int=1), *rest)
    monkeypatch.setattr(streams_api.SubscriptionInfo, "of", staticmethod(planted))


def _partition_map_takes_a_mapping_for_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's survivor streams api.py:201:32 if_false: a Mapping given for an assignment's map is
    # iterated as if it were pairs (its keys).
    real = streams_api._partition_map
    monkeypatch.setattr(streams_api, "_partition_map", lambda entries: real(list(entries)))


def _assignment_equals_inverted(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's survivor streams api.py:248:28 cmp_swap: equals answering the opposite.
    real = streams_api.AssignmentInfo.__eq__
    monkeypatch.setattr(streams_api.AssignmentInfo, "__eq__", lambda self, other: (
        r if (r := real(self, other)) is NotImplemented else not r))


def _assignment_of_accepts_any_version(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's survivor streams api.py:263:12 if_false: AssignmentInfo.of without its version check (the
    # encoder still refuses what it has no layout for, so only the constructor's own refusal is missed).
    real = streams_api.AssignmentInfo.of

    def planted(version: int, latest: int, *rest: Any, **kw: Any) -> Any:
        return real(version, max(latest, version), *rest, **kw) if version > latest else (
            streams_api.AssignmentInfo(version, -1) if version < 1 else real(version, latest, *rest, **kw))
    monkeypatch.setattr(streams_api.AssignmentInfo, "of", staticmethod(planted))


def _assignment_constructor_accepts_version_0(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's survivor streams api.py:232:27 (``version < 0``): the unchecked constructor lets version 0 in.
    real = streams_api.AssignmentInfo.__post_init__

    def planted(self: Any) -> None:
        if self.version == 0:
            object.__setattr__(self, "version", 1)
            real(self)
            object.__setattr__(self, "version", 0)
            return
        real(self)
    monkeypatch.setattr(streams_api.AssignmentInfo, "__post_init__", planted)


def _empty_reply_ignores_the_partitions(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's survivors streams api.py:285 (an operand of is_empty dropped): the KIP's empty reply told
    # by its tasks alone.
    monkeypatch.setattr(streams_api.AssignmentInfo, "is_empty", property(
        lambda self: not self.active_tasks and not self.standby_tasks))


def _encoder_refuses_0_10_0_by_the_range_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's survivor streams api.py:325:8 if_false: 0.10.0's own refusal ("unable to encode subscription
    # data") replaced by the range check's IllegalStateException.
    real = streams_api.encode_subscription

    def planted(info: Any, latest: int = 4) -> bytes:
        if latest == 1 and info.version != 1:
            raise streams_api.IllegalStateException(
                f"Unknown metadata version: {info.version}; latest supported version: {latest}")
        return real(info, latest)
    monkeypatch.setattr(streams_api, "encode_subscription", planted)


def _writes_the_infos_word_for_2_0(encoder: str) -> Any:
    """A planted bug: ``encoder`` of Kafka 2.0 writes the info's supported-version field where 2.0 writes its own
    LATEST_SUPPORTED_VERSION (3): api.py:332 for subscriptions, the campaign's survivor api.py:441:45 if_false
    for assignments."""
    def plant(monkeypatch: pytest.MonkeyPatch) -> None:
        real = getattr(streams_api, encoder)

        def planted(info: Any, latest: int = 4) -> bytes:
            data = real(info, latest)
            if latest == 3 and info.version >= 3:
                return data[:4] + info.latest_supported.to_bytes(4, "big", signed=True) + data[8:]
            return data
        monkeypatch.setattr(streams_api, encoder, planted)

    plant.__name__ = f"_{encoder}_writes_the_field_for_2_0"
    return plant


_encoder_writes_the_field_for_2_0 = _writes_the_infos_word_for_2_0("encode_subscription")
_assignment_encoder_writes_the_field_for_2_0 = _writes_the_infos_word_for_2_0("encode_assignment")


def _assignment_encoder_writes_the_error_code_below_version_4(monkeypatch: pytest.MonkeyPatch) -> None:
    # The campaign's api.py:458 if_true: four bytes the decoder of versions 1-3 never reads.
    real = streams_api.encode_assignment

    def planted(info: Any, latest: int = 4) -> bytes:
        data = real(info, latest)
        return data + int(info.error).to_bytes(4, "big", signed=True) if info.version < 4 else data
    monkeypatch.setattr(streams_api, "encode_assignment", planted)


@pytest.mark.parametrize("planted", [_decoder_drops_the_endpoint, _decoder_masks_the_low_half_one_bit_wide,
                                     _assignment_encoder_writes_the_field_for_2_0,
                                     _assignment_encoder_writes_the_error_code_below_version_4,
                                     _decoder_drops_the_error_code,
                                     _encoder_writes_the_supported_version_below_version_3,
                                     _task_set_stays_what_it_was_given, _task_set_sorts_a_task_set_again,
                                     _task_set_keeps_a_python_sets_order, _subscription_of_accepts_version_0,
                                     _subscription_of_defaults_to_another_process_id,
                                     _partition_map_takes_a_mapping_for_pairs, _assignment_equals_inverted,
                                     _assignment_of_accepts_any_version, _assignment_constructor_accepts_version_0,
                                     _empty_reply_ignores_the_partitions, _encoder_refuses_0_10_0_by_the_range_check,
                                     _encoder_writes_the_field_for_2_0])
def test_streams_codec_rule_agrees_and_sees_each_planted_wire_bug(planted: Any, monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    """The system carries only the version, the supported version and the error code between members: a field
    the codec loses, or one written where the version has none, is seen by the round-trip rule."""
    res = differential("streams_codec", streams_codec_cases())
    assert res.ok, str(res.disagreement)
    # SubscriptionInfo and AssignmentInfo of every release: round trip, .of, encode's refusals; the task order
    assert res.cases == 7 * 9
    planted(monkeypatch)
    try:
        assert differential("streams_codec", streams_codec_cases()).disagreement is not None
    except TypeError:  # a Mapping iterated as pairs cannot even be unpacked: the campaign counts a crash
        assert planted is _partition_map_takes_a_mapping_for_pairs


def _probing_release_refuses_an_unknown_subscription(monkeypatch: pytest.MonkeyPatch) -> None:
    real = streams_api.decode_subscription

    def planted(data: bytes, latest: int = 4) -> Any:
        version = int.from_bytes(data[:4], "big", signed=True) if len(data) >= 4 else 1
        if latest >= 3 and not 1 <= version <= latest:  # as a release before 2.0 does: no version probing
            raise streams_api.TaskAssignmentException(f"unable to decode subscription data: version={version}")
        return real(data, latest)
    monkeypatch.setattr(streams_api, "decode_subscription", planted)


def _assignment_decoder_gives_the_pre_2_0_message(monkeypatch: pytest.MonkeyPatch) -> None:
    real = streams_api.decode_assignment

    def planted(data: bytes, latest: int = 4) -> Any:
        try:
            return real(data, latest)
        except streams_api.TaskAssignmentException as exc:
            if str(exc).startswith("Unable to decode assignment data"):
                version = int.from_bytes(data[:4], "big", signed=True)
                raise streams_api.TaskAssignmentException(f"Unknown assignment data version: {version}") from exc
            raise
    monkeypatch.setattr(streams_api, "decode_assignment", planted)


def _negative_count_read_as_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams_api, "_capacity", lambda n, message: max(n, 0))


def _negative_endpoint_length_read_as_none(monkeypatch: pytest.MonkeyPatch) -> None:
    real = streams_api.decode_subscription

    def planted(data: bytes, latest: int = 4) -> Any:
        try:
            return real(data, latest)
        except streams_api.NegativeArraySizeException:
            return real(data[:-4] + bytes(4), latest)  # the count read as 0: no endpoint
    monkeypatch.setattr(streams_api, "decode_subscription", planted)


@pytest.mark.parametrize("planted", [_probing_release_refuses_an_unknown_subscription,
                                     _assignment_decoder_gives_the_pre_2_0_message, _negative_count_read_as_empty,
                                     _negative_endpoint_length_read_as_none])
def test_streams_decode_rule_agrees_and_sees_each_planted_refusal_bug(planted: Any, monkeypatch: pytest.MonkeyPatch
                                                                      ) -> None:
    """Every member sends bytes its own release encoded, so the decoders' refusals (an unknown version, a buffer
    cut short, a negative length) are reached by no config: the rule compares them on damaged bytes."""
    res = differential("streams_decode", streams_decode_cases())
    assert res.ok, str(res.disagreement)
    assert res.cases == 2 * 9  # SubscriptionInfo and AssignmentInfo of every release
    planted(monkeypatch)
    assert differential("streams_decode", streams_decode_cases()).disagreement is not None


def _disabled_versioning_checked_before_authorization(monkeypatch: pytest.MonkeyPatch) -> None:
    real = features_api.FeatureController._top_level_error

    def planted(self: Any, request: Any, can_alter: bool) -> Any:
        if not self.versioning_enabled:
            return features_api.Errors.INVALID_REQUEST, "Feature versioning system is disabled."
        return real(self, request, can_alter)
    monkeypatch.setattr(features_api.FeatureController, "_top_level_error", planted)


def _empty_name_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    real = features_api.FeatureController._validate

    def planted(self: Any, update: Any, existing: Any) -> Any:
        return real(self, dataclasses.replace(update, feature=update.feature or "f"), existing)
    monkeypatch.setattr(features_api.FeatureController, "_validate", planted)


def _duplicate_refused_under_kafka_too(monkeypatch: pytest.MonkeyPatch) -> None:
    real = features_api.FeatureController._top_level_error

    def planted(self: Any, request: Any, can_alter: bool) -> Any:
        top = real(self, request, can_alter)
        names = [u.feature for u in request.feature_updates]
        if top is None and len(names) != len(set(names)):
            return features_api.Errors.INVALID_REQUEST, "A feature may appear only once in a request."
        return top
    monkeypatch.setattr(features_api.FeatureController, "_top_level_error", planted)


@pytest.mark.parametrize("planted", [_disabled_versioning_checked_before_authorization, _empty_name_accepted,
                                     _duplicate_refused_under_kafka_too])
def test_features_request_rule_agrees_and_sees_each_planted_top_level_bug(planted: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The system's operator sends authorized requests naming one feature to the active controller: the order of
    the top-level answers, a feature named twice and an empty name are reached by this rule only."""
    res = differential("features_request", features_request_cases())
    assert res.ok, str(res.disagreement)
    assert res.cases == 2 + 1 and res.inputs == 2 * 64 + 5  # the two profiles, and the error codes
    planted(monkeypatch)
    assert differential("features_request", features_request_cases()).disagreement is not None


def _partitions_in_partition_order(monkeypatch: pytest.MonkeyPatch) -> None:
    real = streams_api._with_partitions

    def planted(info: Any, partitions_for_task: Any) -> Any:
        out = real(info, partitions_for_task)
        return dataclasses.replace(out, partitions=tuple(sorted(out.partitions, key=lambda p: (p.partition,
                                                                                              p.topic))))
    monkeypatch.setattr(streams_api, "_with_partitions", planted)


def _first_partition_of_each_task_only(monkeypatch: pytest.MonkeyPatch) -> None:
    real = streams_api._partitions_of
    monkeypatch.setattr(streams_api, "_partitions_of", lambda task, parts: real(task, parts)[:1])


def _round_robin_off_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    def planted(members: Any, tasks: Any) -> Any:
        out: dict[str, list[Any]] = {m: [] for m in members}
        for i, t in enumerate(sorted(tasks)):
            out[members[(i + 1) % len(members)]].append(t)
        return {m: tuple(ts) for m, ts in out.items()}
    monkeypatch.setattr(streams_api, "_round_robin", planted)


def _version_probing_as_kafka_2_0_for_every_leader(monkeypatch: pytest.MonkeyPatch) -> None:
    # The coverage map's streams api.py:722-733: the 2.1 branch's versionProbingAssignment taken for 2.0's
    # (the client's tasks to each consumer, listed task by task).
    real = streams_api._version_probing_assignment
    monkeypatch.setattr(streams_api, "_version_probing_assignment",
                        lambda leader, subs, current, used, supported, branch_21, parts: real(
                            leader, subs, current, used, supported, False, parts))


def _version_probing_without_partitions(monkeypatch: pytest.MonkeyPatch) -> None:
    real = streams_api._version_probing_assignment
    monkeypatch.setattr(streams_api, "_version_probing_assignment",
                        lambda leader, subs, current, used, supported, branch_21, parts: real(
                            leader, subs, current, used, supported, branch_21, None))


def _future_member_taken_for_a_current_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # Seen only with a future member in the group: under kip it is dealt tasks (campaign survivor
    # api.py:623:30, the deal over every member, drops the tasks dealt to it; this plants the sibling bug).
    real = streams_api._future_members

    def planted(leader: Any, subscriptions: Any) -> list[str]:
        real(leader, subscriptions)
        return []
    monkeypatch.setattr(streams_api, "_future_members", planted)


def _task_without_partitions_given_none(monkeypatch: pytest.MonkeyPatch) -> None:
    # Seen only with a grouper that lacks a dealt task (campaign survivor api.py:561:8 fails with a KeyError).
    monkeypatch.setattr(streams_api, "_partitions_of", lambda task, parts: tuple(parts.get(task, ())))


@pytest.mark.parametrize("planted", [_partitions_in_partition_order, _first_partition_of_each_task_only,
                                     _round_robin_off_by_one, _version_probing_as_kafka_2_0_for_every_leader,
                                     _version_probing_without_partitions, _future_member_taken_for_a_current_one,
                                     _task_without_partitions_given_none])
def test_streams_tasks_rule_agrees_and_sees_each_planted_dealing_bug(planted: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """No config deals tasks or partitions (the system's members carry versions only): how they are dealt is
    compared here, under every profile's leader."""
    res = differential("streams_tasks", streams_tasks_cases())
    assert res.ok, str(res.disagreement)
    # leaders x profiles (3.9: kafka alone) x 1-2 members x 1-2 partitions; the same with a future member for the
    # probing leaders under kip and kafka (2.0, post-2.0 x 2, 3.9 x 1); kafka-2.0's version probing by the 2.0 and
    # post-2.0 leaders x 1-2 partitions
    assert res.cases == (8 * 3 + 1) * 4 + (2 * 2 + 1) * 4 + 2 * 2
    planted(monkeypatch)
    assert differential("streams_tasks", streams_tasks_cases()).disagreement is not None


@pytest.mark.parametrize("planted", ["v0 flag read as SAFE by the KRaft controller", "unknown upgrade type read as "
                                     "UPGRADE", "migration in progress ignored", "unknown DowngradeType code accepted"])
def test_mv_update_forms_rule_sees_each_planted_form_bug(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The system's operator sends typed updates within the catalog with no ZK migration in progress: the
    request forms and the migration check are compared by this rule only."""
    from model.decisions.metadata_version import mv_update_form_cases
    from reference_impl.metadata_version import api as mv_api

    assert differential("mv_update_forms", mv_update_form_cases()).ok
    if planted == "v0 flag read as SAFE by the KRaft controller":
        monkeypatch.setattr(mv_api.FeatureUpdate, "upgrade_type", property(
            lambda self: mv_api.UpgradeType.of(self.downgrade_type) if self.upgrade_type_code is None
            else mv_api.UpgradeType.from_code(self.upgrade_type_code)))
    elif planted == "unknown upgrade type read as UPGRADE":
        monkeypatch.setattr(mv_api.UpgradeType, "from_code", staticmethod(
            lambda code: mv_api.UpgradeType(code) if code in (1, 2, 3) else mv_api.UpgradeType.UPGRADE))
    elif planted == "migration in progress ignored":
        real_update = mv_api.QuorumController.update_features
        monkeypatch.setattr(mv_api.QuorumController, "update_features", lambda self, request, *a, **k: real_update(
            dataclasses.replace(self, zk_migration_in_progress=False), request, *a, **k))
    else:
        real = mv_api.QuorumController._kip_validate
        monkeypatch.setattr(mv_api.QuorumController, "_kip_validate", lambda self, u: real(
            self, dataclasses.replace(u, upgrade_type_code=None)))
    assert differential("mv_update_forms", mv_update_form_cases()).disagreement is not None


@pytest.mark.parametrize("planted", ["4.0 applies kraft.version", "kafka replays an unsupported level",
                                     "level 0 kept as a level"])
def test_mv_replay_rule_sees_each_planted_replay_bug(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from model.decisions.metadata_version import mv_replay_cases
    from reference_impl.metadata_version import api as mv_api

    assert differential("mv_replay", mv_replay_cases()).ok
    real = mv_api.QuorumController.replay
    if planted == "4.0 applies kraft.version":
        monkeypatch.setattr(mv_api.QuorumController, "replay", lambda self, record: real(
            dataclasses.replace(self, kafka_release="3.9"), record) if record.name == "kraft.version" else real(
            self, record))
    elif planted == "kafka replays an unsupported level":
        monkeypatch.setattr(mv_api.QuorumController, "replay", lambda self, record: real(
            dataclasses.replace(self, profile="kip"), record))
    else:
        def keep_zero(self: Any, record: Any) -> Any:
            out = real(self, record)
            if record.feature_level == 0:
                return dataclasses.replace(out, finalized=tuple(sorted({**dict(out.finalized), record.name: 0}
                                                                       .items())))
            return out
        monkeypatch.setattr(mv_api.QuorumController, "replay", keep_zero)
    assert differential("mv_replay", mv_replay_cases()).disagreement is not None


@pytest.mark.parametrize("planted", ["int32_floor_off", "int32_ceiling_off", "status_before_features",
                                     "unknown_status_enabled"])
def test_feature_znode_formula_agrees_and_sees_each_planted_decoder_bug(planted: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The system writes only nodes the reference encodes: FeatureZNode.decode's edges are reached here only
    (the mutation campaign's survivor features api.py:240, a 32-bit floor of -1, is the first planted bug)."""
    res = differential("feature_znode", feature_znode_cases())
    assert res.ok, str(res.disagreement)
    # and the node's defaults, and the node an elected controller sets up (2 IBPs x 5 nodes x 2 versions)
    assert res.cases == 4 and res.inputs == 2 * (9 ** 4 + 9 * 4 * 3 * 2 * 2) + 4 + 2 * 5 * 2
    json_int, decode = features_api._json_int, features_api.FeatureZNode.decode

    def planted_int(value: object) -> int:
        got = json_int(value)
        if (planted == "int32_floor_off" and got < -1) or (planted == "int32_ceiling_off" and got == 2**31 - 1):
            raise features_api.JsonMappingException("planted")
        return got

    def planted_decode(data: bytes | str, epoch: int = 0, profile: Any = "kafka") -> Any:
        info = features_api.json.loads(data)
        if planted == "status_before_features" and isinstance(info, dict) and info.get("status") is None:
            raise ValueError("planted: status checked first")
        if planted == "unknown_status_enabled" and isinstance(info, dict) and info.get("status") == 2:
            info = {**info, "status": 1}
            data = features_api.json.dumps(info)
        return decode(data, epoch, profile)

    monkeypatch.setattr(features_api, "_json_int", planted_int)
    monkeypatch.setattr(features_api.FeatureZNode, "decode", staticmethod(planted_decode))
    bad = differential("feature_znode", feature_znode_cases())
    assert bad.disagreement is not None


@pytest.mark.parametrize("planted", ["authorization skipped", "the request named, not its description",
                                     "a standby answers", "a known leader not named", "an unknown leader named",
                                     "duplicates accepted"])
def test_mv_request_checks_formula_agrees_and_sees_each_planted_bug(planted: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """No config sends an unauthorized request, asks a standby or names a feature twice: handleUpdateFeatures'
    own answers are reached here only (the mutation campaign's survivor metadata_version api.py:399 is the
    second planted bug)."""
    import reference_impl.metadata_version.api as mv_api

    res = differential("mv_request", mv_request_cases())
    assert res.ok, str(res.disagreement)
    # the two profiles, the code tables (Errors: Kafka's eight, INVALID_REGISTRATION among them, and the KIP's
    # one; DowngradeType, UpgradeType) and the two-update requests of kip, kafka 3.9 and 4.0 (mv_atomic_cases)
    assert res.cases == 2 + 3 + 3 and res.inputs == 32 + 16 + 9 + 3 + 4 + 3 * 64
    real = mv_api.QuorumController.update_features

    def update_features(self: Any, request: Any, principal_can_alter: bool = True,
                        request_description: str | None = None) -> Any:
        if planted == "authorization skipped":
            principal_can_alter = True
        elif planted == "the request named, not its description":
            request_description = None
        elif planted == "a standby answers":
            self = dataclasses.replace(self, is_active=True)
        elif planted == "a known leader not named":
            self = dataclasses.replace(self, active_controller_id=None)
        elif planted == "an unknown leader named":  # the campaign's metadata_version api.py:402 if_false
            if not self.is_active and self.active_controller_id is None:
                return mv_api.ControllerResult(mv_api.UpdateFeaturesResponse(
                    mv_api.Errors.NOT_CONTROLLER, "The active controller appears to be node None.", ()))
        elif planted == "duplicates accepted":
            request = dataclasses.replace(request, feature_updates=request.feature_updates[:1])
        return real(self, request, principal_can_alter, request_description)

    monkeypatch.setattr(mv_api.QuorumController, "update_features", update_features)
    assert differential("mv_request", mv_request_cases()).disagreement is not None


@pytest.mark.parametrize("ignored", ["metadata_version", "bootstrap_records"])
def test_records_for_empty_log_reads_its_own_version_and_records(ignored: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The system's activation passes neither (generate() gives the bootstrap's): a recordsForEmptyLog that
    ignores one (the campaign's survivors api.py:247 if_true / 248 if_false) is seen by the decision rule."""
    from model.decisions.zk_migration import zk_trigger_cases

    original = zk_api.records_for_empty_log

    def ignoring(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop(ignored, None)
        return original(*args, **kwargs)

    monkeypatch.setattr(zk_api, "records_for_empty_log", ignoring)
    case = "ActivationRecordsGenerator.recordsForEmptyLog"
    bad = differential("zk_triggers", [c for c in zk_trigger_cases() if c[0] == case])
    assert bad.cases == 1 and bad.disagreement is not None


@pytest.mark.parametrize("planted", ["KRaft broker in pre-migration accepted", "listener not checked",
                                     "finalized level ignored", "no range read as the controller's level"])
def test_register_broker_checks_the_system_never_sends_are_decision_rules(planted: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The system registers ZK brokers alone, with the inter-broker listener, a range and no explicit finalized
    level: each of registerBroker's other checks is seen by the decision rule only."""
    from model.decisions.zk_migration import zk_trigger_cases

    original = zk_api.register_broker

    def planted_register(request: Any, enabled: bool, mv: Any, state: Any = zk_api.ZkMigrationState.NONE,
                         listener: str = "PLAINTEXT", finalized_level: int | None = None) -> None:
        if planted == "KRaft broker in pre-migration accepted" and not request.is_migrating_zk_broker:
            state = zk_api.ZkMigrationState.NONE
        if planted == "listener not checked":
            listener = request.listeners[0]
        if planted == "finalized level ignored":
            finalized_level = None
        if planted == "no range read as the controller's level" and request.metadata_version_range is None:
            level = zk_api.to_metadata_version(mv).feature_level
            request = dataclasses.replace(request, metadata_version_range=(level, level))
        original(request, enabled, mv, state, listener, finalized_level)

    monkeypatch.setattr(zk_api, "register_broker", planted_register)
    case = "ClusterControlManager.registerBroker"
    bad = differential("zk_triggers", [c for c in zk_trigger_cases() if c[0] == case])
    assert bad.cases == 1 and bad.disagreement is not None, planted


@pytest.mark.parametrize("planted", ["znode version not moved", "absent epoch checked first", "version 1 by default"])
def test_kraft_controller_registration_is_a_decision_rule(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The system's claim reads only the new epoch: the znode version written and the order of the refusals
    are seen by the rule on tryRegisterKRaftControllerAsActiveController alone."""
    from model.decisions.zk_migration import zk_trigger_cases

    def planted_register(cid: int, kraft: int, epoch: int | None,
                         controller_epoch_zk_version: int = 1 if planted == "version 1 by default" else 0,
                         kraft_epoch_in_zk: int | None = None) -> Any:
        version, kraft_in_zk = controller_epoch_zk_version, kraft_epoch_in_zk
        if planted == "absent epoch checked first" and epoch is None:
            raise zk_api.IllegalStateError("planted")
        if kraft_in_zk is not None and kraft_in_zk >= kraft:
            raise zk_api.ControllerMovedError("planted")
        if epoch is None:
            raise zk_api.IllegalStateError("planted")
        return zk_api.KRaftRegistrationResult(epoch + 1, version + (0 if planted == "znode version not moved" else 1))

    monkeypatch.setattr(zk_api, "try_register_kraft_controller_as_active_controller", planted_register)
    case = "KafkaZkClient.tryRegisterKRaftControllerAsActiveController"
    bad = differential("zk_triggers", [c for c in zk_trigger_cases() if c[0] == case])
    assert bad.cases == 1 and bad.disagreement is not None, planted


@pytest.mark.parametrize("dropped", ["No metadata.version feature level record was found",
                                     "Activating pre-migration controller without empty log",
                                     "Staying in ZK migration mode"])
def test_the_activation_message_is_part_of_the_rule(dropped: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The message Kafka logs is what its ActivationRecordsGeneratorTest asserts; no system step reads it, so a
    branch that only writes a sentence (the campaign's api.py:306 survivors) is seen by the rule alone."""
    from model.decisions.zk_migration import zk_trigger_cases

    original = zk_api.generate_activation_records

    def without(*args: Any, **kwargs: Any) -> Any:
        r = original(*args, **kwargs)
        kept = ". ".join(part for part in r.message.split(". ") if not part.startswith(dropped))
        return dataclasses.replace(r, message=kept)

    monkeypatch.setattr(zk_api, "generate_activation_records", without)
    case = "ActivationRecordsGenerator.generate"
    bad = differential("zk_triggers", [c for c in zk_trigger_cases() if c[0] == case])
    assert bad.cases == 1 and bad.disagreement is not None, dropped


@pytest.mark.parametrize("planted", ["a missing registration passes", "the last controller named first",
                                     "checked below 3.7-IV0"])
def test_quorum_readiness_reasons_are_a_decision_rule(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The system registers every voter and reads only whether a reason exists: a missing registration, the
    order of the controllers and the 3.7-IV0 floor are seen by the rule alone."""
    from model.decisions.zk_migration import zk_trigger_cases

    original = zk_api.reason_all_controllers_zk_migration_not_ready

    def planted_reason(mv: Any, nodes: Any, controllers: Any) -> str | None:
        nodes = list(nodes)
        if planted == "a missing registration passes":
            nodes = [n for n in nodes if n in controllers]
        if planted == "the last controller named first":
            nodes.reverse()
        if planted == "checked below 3.7-IV0" and zk_api.to_metadata_version(mv).is_migration_supported():
            for n in nodes:
                if not controllers.get(n, False):
                    return f"Controller {n} has not enabled zookeeper.metadata.migration.enable"
            return None
        return original(mv, nodes, controllers)

    monkeypatch.setattr(zk_api, "reason_all_controllers_zk_migration_not_ready", planted_reason)
    case = "QuorumFeatures.reasonAllControllersZkMigrationNotReady"
    bad = differential("zk_triggers", [c for c in zk_trigger_cases() if c[0] == case])
    assert bad.cases == 1 and bad.disagreement is not None, planted


@pytest.mark.parametrize("planted", ["first publish not awaited", "a stale BecomeZkController runs",
                                     "a leader event from any state", "the copy writes nothing",
                                     "a ZK-mode state taken as MIGRATION"])
def test_the_driver_state_events_are_a_decision_rule(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The system's driver runs every event under the leader that made it, after the first publish, from the
    states Kafka allows, and ignores the znodes an event lists: each of those is seen by this rule alone."""
    from model.decisions.zk_migration import zk_trigger_cases

    if planted == "first publish not awaited":
        original_quorum = zk_api.wait_for_controller_quorum_event
        monkeypatch.setattr(zk_api, "wait_for_controller_quorum_event",
                            lambda st, ms, c, reason=None, first=True: original_quorum(st, ms, c, reason, True))
    elif planted == "a stale BecomeZkController runs":
        original_become = zk_api.become_zk_controller_event
        monkeypatch.setattr(zk_api, "become_zk_controller_event",
                            lambda st, claimed, c, made=None, now=None: original_become(st, claimed, c))
    elif planted == "a ZK-mode state taken as MIGRATION":
        # The mutation campaign's survivor zk api.py:732 (if_true): Kafka throws on a state it does not know.
        original_wait = zk_api.wait_for_controller_quorum_event
        monkeypatch.setattr(zk_api, "wait_for_controller_quorum_event", lambda st, ms, c, reason=None, first=True:
                            original_wait(st, zk_api.ZkMigrationState.MIGRATION if ms is zk_api.ZkMigrationState.ZK
                                          else ms, c, reason, first))
    elif planted == "a leader event from any state":
        monkeypatch.setattr(zk_api, "kraft_leader_event", lambda st, active: zk_api.MigrationDriverState(
            2 if active else 1))
    else:
        original_migrate = zk_api.migrate_metadata_event
        monkeypatch.setattr(zk_api, "migrate_metadata_event", lambda st, made=None, now=None: dataclasses.replace(
            original_migrate(st, made, now), zk_writes=()))
    case = "the driver's state events"
    bad = differential("zk_triggers", [c for c in zk_trigger_cases() if c[0] == case])
    assert bad.cases == 1 and bad.disagreement is not None, planted


@pytest.mark.parametrize("planted", ["ZK read as POST_MIGRATION", "an empty log without a version let through"])
def test_activation_refusals_no_config_reaches_are_decision_rules(planted: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """No KRaft log replays ZK (the state of a ZooKeeper-mode cluster) and every empty log has a bootstrap
    version: the campaign's survivors api.py:334 if_true / 352 if_false are seen by the generate rule alone."""
    from model.decisions.zk_migration import zk_trigger_cases

    if planted == "ZK read as POST_MIGRATION":
        original = zk_api.records_for_non_empty_log

        def non_empty(offset: int, enabled: bool, mv: Any, state: Any = zk_api.ZkMigrationState.NONE) -> Any:
            if state is zk_api.ZkMigrationState.ZK:
                state = zk_api.ZkMigrationState.POST_MIGRATION
            return original(offset, enabled, mv, state)

        monkeypatch.setattr(zk_api, "records_for_non_empty_log", non_empty)
    else:
        monkeypatch.setattr(zk_api, "generate_activation_records",
                            lambda empty, offset, enabled, mv, state=None, source="": (
                                zk_api.records_for_empty_log(offset, enabled, mv) if empty
                                else zk_api.records_for_non_empty_log(offset, enabled, mv, state)))
    case = "ActivationRecordsGenerator.generate"
    bad = differential("zk_triggers", [c for c in zk_trigger_cases() if c[0] == case])
    assert bad.cases == 1 and bad.disagreement is not None, planted


@pytest.mark.parametrize("planted", ["0.10.1 speaks 3", "3.9 older than post-2.0"])
def test_streams_releases_rule_sees_each_planted_table_bug(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The release table is read by the reference, the spec and the Z3 model alike: only the KIP's own table,
    restated, sees an edit to it (the campaign's streams releases.py survivors; no gate config runs 0.10.1)."""
    from model.decisions.streams import streams_releases_cases
    from reference_impl.streams_probing import releases

    assert differential("streams_releases", streams_releases_cases()).ok
    if planted == "0.10.1 speaks 3":
        monkeypatch.setitem(releases._BY_NAME, "0.10.1", releases.StreamsRelease(1, "0.10.1", 3))
    else:
        monkeypatch.setitem(releases._BY_NAME, "3.9", releases.StreamsRelease(7, "3.9", 11))
    assert differential("streams_releases", streams_releases_cases()).disagreement is not None


@pytest.mark.parametrize("planted", ["0.10.1 forces 3", "0.10.1 forces 1", "pre-2.0 accepts 0.10.1",
                                     "neutral values under kip", "0.10.0 accepts 0.10.0",
                                     "0.10.0 refused as an invalid value"])
def test_streams_releases_rule_sees_each_planted_upgrade_from_bug(planted: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The upgrade.from table is read by the reference and the spec alike, and no gate config sets every value
    (the campaign's releases.py:94 survivors: 0.10.1's entry): the KIP's table, restated, sees each edit."""
    from model.decisions.streams import streams_releases_cases
    from reference_impl.streams_probing import releases

    assert differential("streams_releases", streams_releases_cases()).ok
    if planted == "0.10.1 forces 3":
        monkeypatch.setitem(releases.UPGRADE_FROM_VERSION, "0.10.1", 3)
    elif planted == "0.10.1 forces 1":
        monkeypatch.setitem(releases.UPGRADE_FROM_VERSION, "0.10.1", 1)
    elif planted == "pre-2.0 accepts 0.10.1":
        real = releases.upgrade_from_values
        monkeypatch.setattr(releases, "upgrade_from_values",
                            lambda rel, profile: ("0.10.0", "0.10.1") if 1 < rel.latest_supported < 3
                            else real(rel, profile))
    elif planted == "neutral values under kip":
        real = releases.upgrade_from_values
        monkeypatch.setattr(releases, "upgrade_from_values",
                            lambda rel, profile: real(rel, "kafka"))
    elif planted == "0.10.0 accepts 0.10.0":
        real = releases.upgrade_from_values
        monkeypatch.setattr(releases, "upgrade_from_values",
                            lambda rel, profile: ("0.10.0",) if rel.latest_supported == 1 else real(rel, profile))
    else:  # the campaign's releases.py:119 if_false: still refused, with the validator's message
        real = releases.upgrade_from_values
        monkeypatch.setattr(releases, "upgrade_from_values",
                            lambda rel, profile: ("2.0",) if rel.latest_supported == 1 else real(rel, profile))
    bad = differential("streams_releases", streams_releases_cases())
    assert bad.disagreement is not None and "upgrade.from" in str(bad.disagreement), planted


@pytest.mark.parametrize("planted", ["3.5-IV0 changed the format", "lower bound included", "lossless not negated"])
def test_mv_catalog_rule_sees_each_planted_check_if_metadata_changed_bug(planted: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """MetadataVersion.checkIfMetadataChanged / isLosslessDowngrade are read by tests/kafka and no system action:
    the restated flags and bounds see each edit."""
    from model.decisions.metadata_version import mv_catalog_cases
    from reference_impl.metadata_version import catalog

    case = "MetadataVersion.checkIfMetadataChanged"
    assert differential("mv_catalog", [c for c in mv_catalog_cases() if c[0] == case]).ok
    if planted == "3.5-IV0 changed the format":
        real = catalog.MetadataVersion.did_metadata_change
        monkeypatch.setattr(catalog.MetadataVersion, "did_metadata_change", property(
            lambda self: self.version() == "3.5-IV0" or real.fget(self)))  # type: ignore[attr-defined]
    elif planted == "lower bound included":
        monkeypatch.setattr(catalog, "check_if_metadata_changed", lambda a, b: any(
            mv.did_metadata_change for mv in catalog.VERSIONS[min(a.ordinal, b.ordinal):max(a.ordinal, b.ordinal) + 1]))
    else:
        monkeypatch.setattr(catalog, "is_lossless_downgrade", catalog.check_if_metadata_changed)
    bad = differential("mv_catalog", [c for c in mv_catalog_cases() if c[0] == case])
    assert bad.disagreement is not None, planted


@pytest.mark.parametrize("planted", ["no short cast", "touching ranges apart", "unstable ignored",
                                     "feature error first", "other feature unchecked", "less or equal",
                                     "last version left out"])
def test_mv_rules_see_each_planted_bug_in_code_only_tests_ran(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The metadata_version code the coverage map found no checker running (VersionRange.of and intersects,
    QuorumFeatures' default range with unstable versions, UpdateFeaturesResponse's readers, a kip update of
    another feature, isLessThan, FeatureCommand's version list): the rules' new cases see each edit."""
    from model.decisions.metadata_version import mv_catalog_cases, mv_update_form_cases
    from reference_impl.metadata_version import api as mv_api
    from reference_impl.metadata_version import catalog as mv_catalog

    rule, cases = (("mv_update_forms", mv_update_form_cases) if planted == "other feature unchecked"
                   else ("mv_catalog", mv_catalog_cases))
    assert differential(rule, cases()).ok
    if planted == "no short cast":
        monkeypatch.setattr(mv_api, "_to_short", lambda value: value)
    elif planted == "touching ranges apart":
        monkeypatch.setattr(mv_api.VersionRange, "intersects",
                            lambda self, other: other.min < self.max and other.max > self.min)
    elif planted == "unstable ignored":
        real = mv_api.default_local_supported
        monkeypatch.setattr(mv_api, "default_local_supported",
                            lambda catalog, kafka_release="3.9", enable_unstable=False: real(catalog, kafka_release))
    elif planted == "feature error first":
        monkeypatch.setattr(mv_api.UpdateFeaturesResponse, "first_error", lambda self: next(
            ((r.error, r.message) for r in self.results if r.error is not mv_api.Errors.NONE),
            (self.error, self.message)))
    elif planted == "other feature unchecked":
        monkeypatch.setattr(mv_api.QuorumController, "local_range",
                            lambda self, feature: mv_api.VersionRange(0, 32767) if feature != "metadata.version"
                            else dict(self.local_supported).get(feature, mv_api.DISABLED))
    elif planted == "less or equal":
        monkeypatch.setattr(mv_catalog.MetadataVersion, "is_less_than",
                            lambda self, other: self.ordinal <= other.ordinal)
    else:
        monkeypatch.setattr(mv_catalog, "metadata_versions_to_string", lambda first, last: ", ".join(
            str(mv) for mv in mv_catalog.VERSIONS[first.ordinal:last.ordinal]))
    assert differential(rule, cases()).disagreement is not None, planted


@pytest.mark.parametrize("planted", ["built at version 1", "decoded at version 1", "write keeps the version"])
def test_feature_znode_rule_sees_each_planted_default(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A node built or decoded without a ZooKeeper version is at version 0 (the campaign's features api.py:277
    and 302 defaults, read by the Kafka transcriptions and no system action), and a write is the next one."""
    node_cls = features_api.FeatureZNode
    assert differential("feature_znode", feature_znode_cases()).ok
    if planted == "built at version 1":
        monkeypatch.setattr(node_cls, "__init__", _init_with_epoch_default(node_cls.__init__, 1))
    elif planted == "decoded at version 1":
        real = node_cls.decode
        monkeypatch.setattr(node_cls, "decode", staticmethod(
            lambda data, epoch=1, profile="kafka": real(data, epoch, profile)))
    else:
        monkeypatch.setattr(node_cls, "write", lambda self, status, features: node_cls(status, features, self.epoch))
    bad = differential("feature_znode", feature_znode_cases())
    assert bad.disagreement is not None and bad.disagreement.case == "FeatureZNode defaults", planted


def _init_with_epoch_default(init: Any, default: int) -> Any:
    def patched(self: Any, status: Any, features: Any, epoch: int = default) -> None:
        init(self, status, features, epoch)
    return patched


def test_code_table_case_sees_a_code_that_drifted_from_kafka_and_a_missing_name() -> None:
    """The error and upgrade-type codes travel on the wire: the rules keep Kafka's numbers, so a reference enum
    whose code moved (or that lost a name) disagrees, even where every other rule reads the enum alike."""
    import enum

    from model.decisions.kafka_errors import KAFKA_ERRORS
    from rollcheck.smt.decisions import code_table_case

    def agrees(enum_type: Any) -> bool:
        label, formula, domain, reference = code_table_case("codes", KAFKA_ERRORS, enum_type)
        return differential("codes", [(label, formula, domain, reference)]).ok

    assert agrees(enum.IntEnum("Errors", KAFKA_ERRORS))
    assert not agrees(enum.IntEnum("Errors", {**KAFKA_ERRORS, "NOT_CONTROLLER": 40}))
    assert not agrees(enum.IntEnum("Errors", {n: c for n, c in KAFKA_ERRORS.items() if n != "UNSUPPORTED_VERSION"}))


@pytest.mark.parametrize("planted", ["old IBP rewrites a disabled empty node",
                                     "new IBP keeps a disabled node's features"])
def test_feature_znode_rule_sees_a_planted_setup_bug(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What an elected controller writes to the node: no config elects one under an old IBP over a node already
    disabled and empty, so the rule's comparison is what sees an extra rewrite (the campaign's api.py:736)."""
    from model.decisions.features import feature_znode_cases

    real = features_api.setup_feature_versioning
    status = features_api.FeatureZNodeStatus

    def setup(node: Any, enabled: bool, own: Any) -> Any:
        if planted.startswith("old") and not enabled and node is not None:
            return node.write(status.DISABLED, ())
        if planted.startswith("new") and enabled and node is not None and node.status is status.DISABLED:
            return node.write(status.ENABLED, node.features)
        return real(node, enabled, own)
    monkeypatch.setattr(features_api, "setup_feature_versioning", setup)
    monkeypatch.setattr(sys.modules["model.decisions.features"], "setup_feature_versioning", setup)
    bad = differential("feature_znode", feature_znode_cases())
    assert bad.disagreement is not None and bad.disagreement.case == "controller election's node setup", planted


@pytest.mark.parametrize("planted", ["any profile", "bootstrap floor under 4.0", "floor ignores the setting",
                                     "unfinalized at 1", "kafka current from metadata.version",
                                     "kafka level 0 refused", "replay keeps level 0", "4.0 success as 3.9's",
                                     "4.0 unfinalized as none"])
def test_mv_rules_see_each_planted_quorum_controller_bug(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutation campaign's screen of QuorumController: its settings' checks and floor, the level
    of a feature that is not finalized, a kafka update of a feature other than metadata.version (3.9 and 4.0),
    replay's removal at level 0 and 4.0's success results: the rules' cases see each edit."""
    from model.decisions.metadata_version import mv_catalog_cases, mv_replay_cases, mv_update_form_cases
    from reference_impl.metadata_version import api as mv_api

    rule, cases = {"any profile": ("mv_catalog", mv_catalog_cases),
                   "bootstrap floor under 4.0": ("mv_catalog", mv_catalog_cases),
                   "floor ignores the setting": ("mv_catalog", mv_catalog_cases),
                   "replay keeps level 0": ("mv_replay", mv_replay_cases)}.get(
        planted, ("mv_update_forms", mv_update_form_cases))
    assert differential(rule, cases()).ok
    ctl = mv_api.QuorumController
    if planted == "any profile":
        monkeypatch.setattr(mv_api, "PROFILES", (*mv_api.PROFILES, "zk"))
    elif planted == "bootstrap floor under 4.0":
        real_init = ctl.__post_init__

        def lenient(self: Any) -> None:
            if self.kafka_release == "4.0" and self.minimum_bootstrap_version is not None:
                return
            real_init(self)
        monkeypatch.setattr(ctl, "__post_init__", lenient)
    elif planted == "floor ignores the setting":
        monkeypatch.setattr(ctl, "floor", property(
            lambda self: self.catalog.bootstrap_floor if self.profile == "kafka" and self.kafka_release == "3.9"
            else (self.catalog.minimum if self.profile != "kafka" else self.catalog.minimum_for("4.0"))))
    elif planted == "unfinalized at 1":
        monkeypatch.setattr(ctl, "finalized_level", lambda self, feature: dict(self.finalized).get(feature, 1))
    elif planted == "4.0 unfinalized as none":  # a misreading: none (0) until the log's record
        real_mv = ctl.metadata_version.fget
        assert real_mv is not None
        monkeypatch.setattr(ctl, "metadata_version", property(
            lambda self: 0 if self.kafka_release == "4.0" and not self.finalized else real_mv(self)))
    elif planted == "kafka current from metadata.version":
        monkeypatch.setattr(ctl, "finalized_level", lambda self, feature: self.metadata_version)
    elif planted == "kafka level 0 refused":
        real_feature = ctl._kafka_update_feature
        monkeypatch.setattr(ctl, "_kafka_update_feature", lambda self, feature, new, upgrade, records: (
            "A feature version cannot be less than 0." if new == 0 else real_feature(self, feature, new, upgrade,
                                                                                      records)))
    elif planted == "replay keeps level 0":
        real_replay = ctl.replay
        monkeypatch.setattr(ctl, "replay", lambda self, record: (
            dataclasses.replace(self, finalized=tuple(sorted({**dict(self.finalized), record.name: 0}.items())))
            if record.feature_level == 0 and self.profile != "kafka" else real_replay(self, record)))
    else:
        real_update = ctl._update_kafka

        def as_39(self: Any, request: Any) -> Any:
            res = real_update(self, request)
            r = res.response
            if self.kafka_release == "4.0" and r.results:
                r = dataclasses.replace(r, results=tuple(dataclasses.replace(x, message=None) for x in r.results))
            return dataclasses.replace(res, response=r)
        monkeypatch.setattr(ctl, "_update_kafka", as_39)
    bad = differential(rule, cases())
    assert bad.disagreement is not None, planted


def _registration_planted(kind: str) -> Callable[..., Any]:
    from reference_impl.metadata_version.api import (
        BrokerRegistrationReply,
        BrokerRegistrationRequest,
        Errors,
        QuorumController,
        VersionRange,
    )

    real = QuorumController.register_broker
    mv = "metadata.version"

    def planted(self: Any, request: Any) -> Any:
        sent = request.features
        if kind == "4.0 assumes" and sent is None and self.kafka_release == "4.0":
            reply, after = real(dataclasses.replace(self, kafka_release="3.9"), request)
            return reply, (self if after.kafka_release == "3.9" and not reply.ok else
                           dataclasses.replace(after, kafka_release="4.0"))
        if kind == "assumes one above the minimum" and (sent is None or mv not in dict(sent)) \
                and self.kafka_release != "4.0":
            low = self.catalog.minimum + 1
            return real(self, BrokerRegistrationRequest(request.broker_id,
                                                        (*(sent or ()), (mv, VersionRange(low, low)))))
        if kind == "metadata.version checked first" and sent:
            first = tuple(sorted(sent, key=lambda f: f[0] != mv))
            return real(self, BrokerRegistrationRequest(request.broker_id, first))
        if kind == "level 0 counted" and (mv, 0) in self.finalized and sent is not None and mv in dict(sent) \
                and not dict(sent)[mv].contains(0):
            # The campaign's survivor metadata_version api.py:666 (a feature listed at level 0 taken as finalized).
            return BrokerRegistrationReply(Errors.UNSUPPORTED_VERSION, "level 0"), self
        if kind == "other brokers dropped":
            # The campaign's survivor metadata_version api.py:678 (the registration kept only the broker's own).
            reply, after = real(self, request)
            return reply, (dataclasses.replace(after, brokers=tuple(b for b in after.brokers
                                                                    if b.broker_id == request.broker_id))
                           if reply.ok else after)
        if kind == "kip refuses under 4.0" and sent is None and self.kafka_release == "4.0" and self.profile == "kip":
            # The campaign's survivor metadata_version api.py:655 (the profile test dropped from 4.0's refusal).
            return real(dataclasses.replace(self, profile="kafka", catalog=self.catalog), request)
        if kind == "4.0 refusal unquoted" and sent is None and self.kafka_release == "4.0" and self.profile == "kafka":
            reply, after = real(self, request)
            return BrokerRegistrationReply(reply.error, (reply.message or "").replace("'", "")), after
        return real(self, request)
    return planted


@pytest.mark.parametrize("kind", ["4.0 assumes", "assumes one above the minimum", "metadata.version checked first",
                                  "4.0 refusal unquoted", "kip refuses under 4.0", "level 0 counted",
                                  "other brokers dropped"])
def test_mv_registration_rule_agrees_and_sees_each_planted_registration_bug(kind: str,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The system registers every broker with a metadata.version range and a single feature, so only this rule
    meets a request without one (Kafka 3.9 assumes MINIMUM_KRAFT_VERSION, 4.0 refuses with INVALID_REGISTRATION)
    or a second feature sent before metadata.version; kip assumes the minimum whichever release a config names.
    Each planted bug is a disagreement."""
    from model.decisions.metadata_version import mv_registration_cases
    from reference_impl.metadata_version.api import QuorumController

    cases = list(mv_registration_cases())
    assert [name for name, *_ in cases] == ["registerBroker, kip 3.9", "registerBroker, kip 4.0",
                                            "registerBroker, kafka 3.9", "registerBroker, kafka 4.0"]
    res = differential("mv_registration", cases)
    assert res.ok, str(res.disagreement)
    # Every answer occurs: registered, refused for either feature, and (4.0) the missing range refused.
    seen = {(name, tuple(sorted((k, v) for k, v in ref(x).items() if k in ("error", "feature"))))
            for name, _f, domain, ref in cases for x in domain}
    for name in ("registerBroker, kip 3.9", "registerBroker, kip 4.0", "registerBroker, kafka 3.9",
                 "registerBroker, kafka 4.0"):
        kinds = {dict(o)["error"] * 10 + max(dict(o)["feature"], 0) for n, o in seen if n == name}
        assert {0, 351, 352} <= kinds, (name, kinds)
    assert any(dict(o)["error"] == 119 for n, o in seen if n == "registerBroker, kafka 4.0")
    monkeypatch.setattr(QuorumController, "register_broker", _registration_planted(kind))
    assert differential("mv_registration", mv_registration_cases()).disagreement is not None


def test_mv_request_rule_sees_a_kip_request_applied_in_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """The system sends one update a request, so a kip request that fails in part met no rule: the campaign's
    survivor metadata_version api.py:574 (the all-or-nothing block of ``_update_kip`` skipped) survived every
    checker. ``mv_request`` now sends two updates (``mv_atomic_cases``), each valid or refused, in either order;
    a controller that applies the valid one beside a refused one is a disagreement."""
    from model.decisions.metadata_version import mv_atomic_cases
    from reference_impl.metadata_version.api import ControllerResult, QuorumController, UpdateFeaturesRequest
    from reference_impl.metadata_version.api import UpdateFeaturesResponse as Response

    res = differential("mv_request", mv_atomic_cases())
    assert res.ok and res.cases == 3 and res.inputs == 3 * 64, str(res.disagreement)
    real = QuorumController._update_kip

    def in_part(self: Any, request: Any) -> Any:  # each update decided alone: partial success
        parts = [real(self, UpdateFeaturesRequest((u,), dry_run=request.dry_run)) for u in request.feature_updates]
        return ControllerResult(Response(parts[0].response.error, None, tuple(r for p in parts
                                                                              for r in p.response.results)),
                                tuple(rec for p in parts for rec in p.records))

    monkeypatch.setattr(QuorumController, "_update_kip", in_part)
    bad = differential("mv_request", mv_atomic_cases()).disagreement
    assert bad is not None and bad.inputs["mv_ok"] != bad.inputs["gv_ok"]


@pytest.mark.parametrize("planted", ["3.9 all or nothing", "4.0 applies the valid half", "4.0 names the last refusal"])
def test_mv_request_rule_sees_kafkas_two_update_requests(planted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the kafka profile a request that fails in part is not all or nothing: 3.9 writes the updates that
    passed beside a refused one, 4.0 stops at the first refused one (in the request's order) and writes nothing.
    Each way of getting that wrong is a disagreement of ``mv_request``'s kafka two-update cases."""
    from model.decisions.metadata_version import mv_atomic_cases
    from reference_impl.metadata_version import api as mv_api

    real = mv_api.QuorumController._update_kafka

    def planted_update(self: Any, request: Any) -> Any:
        if planted == "4.0 names the last refusal" and self.kafka_release == "4.0":
            request = mv_api.UpdateFeaturesRequest(tuple(reversed(request.feature_updates)), request.dry_run)
        result = real(self, request)
        failed = any(r.error is not mv_api.Errors.NONE for r in result.response.results)
        if planted == "3.9 all or nothing" and self.kafka_release == "3.9" and failed:
            return mv_api.ControllerResult(result.response)
        if planted == "4.0 applies the valid half" and self.kafka_release == "4.0" and \
                result.response.error is not mv_api.Errors.NONE and not request.dry_run:
            parts = [real(self, mv_api.UpdateFeaturesRequest((u,), request.dry_run)) for u in request.feature_updates]
            return mv_api.ControllerResult(result.response, tuple(rec for p in parts for rec in p.records))
        return result

    monkeypatch.setattr(mv_api.QuorumController, "_update_kafka", planted_update)
    bad = differential("mv_request", mv_atomic_cases()).disagreement
    assert bad is not None and bad.case == f"two updates, kafka {planted[:3]}", bad


def test_mv_update_forms_sees_another_feature_refused_for_a_level_metadata_version_lacks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The campaign's survivor metadata_version api.py:600: kip's "Unknown metadata.version level" check applied to
    every feature. On Kafka's catalog (27 levels) no other feature's level tells; on the KIP's example (V1..V5)
    group.version at 6 or 7 does, and ``mv_update_forms`` now has that case."""
    from model.decisions.metadata_version import mv_update_form_cases
    from reference_impl.metadata_version import api as mv_api

    res = differential("mv_update_forms", mv_update_form_cases())
    assert res.ok, str(res.disagreement)
    real = mv_api.QuorumController._kip_validate

    def every_feature_checked(self: Any, update: Any) -> Any:
        if update.feature != mv_api.FEATURE_NAME and update.max_version_level >= 1 \
                and update.max_version_level not in self.catalog.levels:
            return mv_api.Errors.INVALID_REQUEST, f"Unknown metadata.version level {update.max_version_level}."
        return real(self, update)

    monkeypatch.setattr(mv_api.QuorumController, "_kip_validate", every_feature_checked)
    bad = differential("mv_update_forms", mv_update_form_cases()).disagreement
    assert bad is not None and bad.case.endswith("catalog example") and bad.inputs["y"] in (6, 7)


@pytest.mark.parametrize("verb", ["always upgrade", "always downgrade", "another level named"])
def test_mv_update_forms_reads_the_same_level_refusals_words(verb: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """kip's same-level refusal ("Can not upgrade group.version from existing level 1 to the same value.") names the
    request's verb, feature and level; the campaign's survivors metadata_version api.py:603 (the verb fixed either
    way) met no rule that read it."""
    from model.decisions.metadata_version import mv_update_form_cases
    from reference_impl.metadata_version import api as mv_api

    real = mv_api.QuorumController._kip_validate

    def reworded(self: Any, update: Any) -> Any:
        out = real(self, update)
        if out is None or "to the same value" not in out[1]:
            return out
        text = {"always upgrade": out[1].replace("Can not downgrade", "Can not upgrade"),
                "always downgrade": out[1].replace("Can not upgrade", "Can not downgrade"),
                "another level named": out[1].replace("existing level ", "existing level 1")}[verb]
        return out[0], text

    monkeypatch.setattr(mv_api.QuorumController, "_kip_validate", reworded)
    bad = differential("mv_update_forms", mv_update_form_cases()).disagreement
    assert bad is not None and "same_level" in str(bad) and bad.inputs["y"] == bad.inputs["cur"]


@pytest.mark.parametrize("planted", ["always only supports", "never only supports", "brokers after controllers",
                                     "range printed one wider"])
def test_kafka_other_feature_rule_reads_who_refused_and_its_words(planted: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """kafka's refusal of an update another node cannot take names the node and says "only supports versions R" or,
    for a node without the feature, "does not support this feature." (QuorumFeatures.reasonNotSupported), in
    reasonNotSupported's order: the campaign's survivors metadata_version api.py:693 (if_true, if_false) changed
    only the words. Each planted bug is a disagreement of ``_kafka_other_feature_cases``."""
    from model.decisions.metadata_version import _kafka_other_feature_cases
    from reference_impl.metadata_version import api as mv_api

    assert differential("mv_update_forms", _kafka_other_feature_cases()).ok
    real = mv_api._reason_not_supported
    if planted == "always only supports":
        monkeypatch.setattr(mv_api, "_reason_not_supported", lambda v, what, rng: None if rng.contains(v)
                            else f"{what} only supports versions {rng}")
    elif planted == "never only supports":
        monkeypatch.setattr(mv_api, "_reason_not_supported", lambda v, what, rng: None if rng.contains(v)
                            else f"{what} does not support this feature.")
    elif planted == "brokers after controllers":
        real_reason = mv_api.QuorumController._kafka_reason_not_supported

        def controllers_first(self: Any, feature: str, new: int) -> Any:
            no_brokers = dataclasses.replace(self, brokers=())
            return real_reason(no_brokers, feature, new) or real_reason(self, feature, new)
        monkeypatch.setattr(mv_api.QuorumController, "_kafka_reason_not_supported", controllers_first)
    else:
        monkeypatch.setattr(mv_api, "_reason_not_supported", lambda v, what, rng: (
            None if rng.contains(v) else f"{what} only supports versions {rng.min}-{rng.max + 1}")
            if rng.max != 0 else real(v, what, rng))
    assert differential("mv_update_forms", _kafka_other_feature_cases()).disagreement is not None, planted


@pytest.mark.parametrize("planted", ["reads its own registration", "needs its own registration"])
def test_mv_update_rule_sees_the_controller_read_its_own_registration(planted: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Kafka checks the active controller by its binary's range and skips its own ControllerRegistration (stale
    or missing) among the controllers': the campaign's survivors metadata_version api.py:523 (the local node
    checked by its registration) and :529 (refused while it has not registered), which no system state reaches
    (every registration names its binary there). Each is a disagreement of ``mv_own_registration_cases``."""
    from model.decisions.metadata_version import mv_own_registration_cases
    from reference_impl.metadata_version import api as mv_api

    assert differential("mv_update", mv_own_registration_cases()).ok
    real = mv_api.QuorumController._kafka_reason_not_supported

    def reads_own(self: Any, feature: str, new: int) -> Any:
        own = dict(self.voters).get(self.node_id)
        if isinstance(own, mv_api.VersionRange) and not own.contains(new):
            return f"Controller {self.node_id} only supports versions {own}"
        return real(self, feature, new)

    def needs_own(self: Any, feature: str, new: int) -> Any:
        if dict(self.voters).get(self.node_id) is None:
            return f"controller {self.node_id} has not registered, and may not support this feature"
        return real(self, feature, new)

    monkeypatch.setattr(mv_api.QuorumController, "_kafka_reason_not_supported",
                        reads_own if planted == "reads its own registration" else needs_own)
    assert differential("mv_update", mv_own_registration_cases()).disagreement is not None, planted
