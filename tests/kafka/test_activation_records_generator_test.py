"""Apache Kafka's ``ActivationRecordsGeneratorTest`` as facts about our ``zk_migration`` reference.

Transcribed from ``metadata/src/test/java/org/apache/kafka/controller/ActivationRecordsGeneratorTest.java``
at tag ``3.9.0-rc3`` (commit ``dd5272687e8adf9e79e3e329b1b3d2524afb6020``; the file, and
``ActivationRecordsGenerator.java`` beside it, are identical on branch ``3.9`` at
``c821449fb7c1e2c0f398eeb5cfc4a8abc210c0a4``). Only the inputs and expected outputs are taken: one case per
``recordsForEmptyLog`` / ``recordsForNonEmptyLog`` call, its id the test method's name and the call's
position in it (``-1`` is the first call).

Kafka's test asserts the activation message (or the exception's message), ``isAtomic`` and the number of
records. The records themselves are listed here as ``ActivationRecordsGenerator.java`` builds them (same
commit), so that a count that matches for the wrong records is caught.

Inputs: whether the log is empty, the transaction start offset (-1: none), ``zookeeper.metadata.migration
.enable``, the bootstrap metadata.version (``BootstrapMetadata.fromVersion(mv, "test")``: one
FeatureLevelRecord) and the metadata.version Kafka's test passes beside it, or the replayed log's
metadata.version and ZkMigrationState (``buildFeatureControl``: None for ``Optional.empty()``, i.e. no
ZkMigrationStateRecord in the log).

The issue's gap, "a non-empty metadata log without a FeatureLevelRecord at bootstrap", is Kafka's first
``testActivationMessageForNonEmptyLogNoMigrations`` case (QuorumController's FeatureControlManager starts at
``MINIMUM_KRAFT_VERSION``, 3.0-IV1, until a FeatureLevelRecord is replayed): our API now expresses it as
``metadata_version=None`` (and still as an explicit 3.0-IV1, which Kafka cannot tell apart).

Each case is also checked where the system model decides through the API under the ``kafka`` profile
(``bootstrap_migration_state`` for an empty log, ``activate`` for a replayed one).

Not expressible yet: none. (Kafka's empty-log call whose bootstrap metadata.version, 3.3-IV0, differs from
the metadata.version passed beside it, 3.0-IV1, needed ``records_for_empty_log(..., metadata_version=)``.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from reference_impl.metadata_version.catalog import MetadataVersion as MV
from reference_impl.zk_migration import api
from reference_impl.zk_migration.api import ZkMigrationState as Z

SOURCE = "test"  # BootstrapMetadata.fromVersion(..., "test")
ACTIVATION = "Performing controller activation."


@dataclass(frozen=True)
class EmptyLogCase:
    offset: int
    migration: bool
    bootstrap: MV  # BootstrapMetadata.fromVersion(bootstrap, "test")
    metadata_version: MV  # recordsForEmptyLog's last argument
    message: str | None = None  # the activation message, or None when it throws
    atomic: bool | None = None
    records: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class NonEmptyLogCase:
    offset: int
    migration: bool
    metadata_version: MV | None  # None: no FeatureLevelRecord in the log (FeatureControlManager's default)
    state: Z | None  # None: no ZkMigrationStateRecord in the log (Optional.empty())
    message: str | None = None
    records: tuple[str, ...] = ()  # recordsForNonEmptyLog always returns an atomic batch
    error: str | None = None


def _tail(text: str) -> str:
    return f"{ACTIVATION} {text}"


_EMPTY_APPEND = "The metadata log appears to be empty. Appending 1 bootstrap record(s) "
_NONE_MSG = "Setting the ZK migration state to NONE since this is a de-novo KRaft cluster."
_PRE_MSG = ("Putting the controller into pre-migration mode. No metadata updates will be allowed until the ZK "
            "metadata has been migrated.")
_ABORT_BOOT = ("Aborting partial bootstrap records transaction at offset 0. Re-appending 1 bootstrap record(s) in "
               "new metadata transaction at metadata.version 3.6-IV1 from bootstrap source 'test'. ")
_NO_ZK = "does not support ZK migrations. Cannot continue with ZK migrations enabled."
_BEGIN, _END = "BeginTransactionRecord(Bootstrap records)", "EndTransactionRecord"
_ABORT = "AbortTransactionRecord(Controller failover)"

EMPTY_LOG = {
    "testActivationMessageForEmptyLog-1": EmptyLogCase(
        -1, False, MV.IBP_3_3_IV0, MV.IBP_3_0_IV1,
        _tail(_EMPTY_APPEND + "at metadata.version 3.0-IV1 from bootstrap source 'test'."),
        True, ("FeatureLevelRecord(4)",)),
    "testActivationMessageForEmptyLog-2": EmptyLogCase(
        -1, False, MV.IBP_3_4_IV0, MV.IBP_3_4_IV0,
        _tail(_EMPTY_APPEND + "at metadata.version 3.4-IV0 from bootstrap source 'test'."),
        True, ("FeatureLevelRecord(8)",)),
    "testActivationMessageForEmptyLog-3": EmptyLogCase(
        -1, True, MV.IBP_3_3_IV2, MV.IBP_3_3_IV2, error=f"The bootstrap metadata.version 3.3-IV2 {_NO_ZK}"),
    "testActivationMessageForEmptyLog-4": EmptyLogCase(
        -1, True, MV.IBP_3_4_IV0, MV.IBP_3_4_IV0, error=f"The bootstrap metadata.version 3.4-IV0 {_NO_ZK}"),
    "testActivationMessageForEmptyLog-5": EmptyLogCase(
        -1, False, MV.IBP_3_6_IV1, MV.IBP_3_6_IV1,
        _tail(_EMPTY_APPEND + "in metadata transaction at metadata.version 3.6-IV1 from bootstrap source 'test'. "
              + _NONE_MSG),
        False, (_BEGIN, "FeatureLevelRecord(13)", "ZkMigrationStateRecord(NONE)", _END)),
    "testActivationMessageForEmptyLog-6": EmptyLogCase(
        -1, True, MV.IBP_3_6_IV1, MV.IBP_3_6_IV1,
        _tail(_EMPTY_APPEND + "in metadata transaction at metadata.version 3.6-IV1 from bootstrap source 'test'. "
              + _PRE_MSG),
        False, (_BEGIN, "FeatureLevelRecord(13)", "ZkMigrationStateRecord(PRE_MIGRATION)", _END)),
    "testActivationMessageForEmptyLog-7": EmptyLogCase(
        0, False, MV.IBP_3_6_IV1, MV.IBP_3_6_IV1, _tail(_ABORT_BOOT + _NONE_MSG),
        False, (_ABORT, _BEGIN, "FeatureLevelRecord(13)", "ZkMigrationStateRecord(NONE)", _END)),
    "testActivationMessageForEmptyLog-8": EmptyLogCase(
        0, True, MV.IBP_3_6_IV1, MV.IBP_3_6_IV1, _tail(_ABORT_BOOT + _PRE_MSG),
        False, (_ABORT, _BEGIN, "FeatureLevelRecord(13)", "ZkMigrationStateRecord(PRE_MIGRATION)", _END)),
    "testActivationMessageForEmptyLog-9": EmptyLogCase(
        0, True, MV.IBP_3_6_IV0, MV.IBP_3_6_IV0,
        error="Detected partial bootstrap records transaction at 0, but the metadata.version 3.6-IV0 does not "
              "support transactions. Cannot continue."),
}

_DE_NOVO = "Loaded ZK migration state of NONE. This is expected because this is a de-novo KRaft cluster."
_ABORT_42 = "Aborting in-progress metadata transaction at offset 42. "
_STAY = ("Loaded ZK migration state of MIGRATION. Staying in ZK migration mode since "
         "'zookeeper.metadata.migration.enable' is still 'true'.")
_COMPLETE = ("Loaded ZK migration state of MIGRATION. Completing the ZK migration since this controller was "
             "configured with 'zookeeper.metadata.migration.enable' set to 'false'.")
_POST = "Loaded ZK migration state of POST_MIGRATION."
_IGNORE = (" Ignoring 'zookeeper.metadata.migration.enable' value of 'true' since the ZK migration has been "
           "completed.")
_KRAFT_MODE = "Should not have ZK migrations enabled on a cluster that was created in KRaft mode."
_POST_RECORD = "ZkMigrationStateRecord(POST_MIGRATION)"

NON_EMPTY_LOG = {
    "testActivationMessageForNonEmptyLogNoMigrations-1": NonEmptyLogCase(
        -1, False, None, None,
        _tail("No metadata.version feature level record was found in the log. Treating the log as version 3.0-IV1.")),
    "testActivationMessageForNonEmptyLogNoMigrations-2": NonEmptyLogCase(-1, False, MV.IBP_3_3_IV0, None, ACTIVATION),
    "testActivationMessageForNonEmptyLogNoMigrations-3": NonEmptyLogCase(
        -1, False, MV.IBP_3_4_IV0, None, _tail(_DE_NOVO)),
    "testActivationMessageForNonEmptyLogNoMigrations-4": NonEmptyLogCase(
        42, False, MV.IBP_3_6_IV1, None, _tail(_ABORT_42 + _DE_NOVO), (_ABORT,)),
    "testActivationMessageForNonEmptyLogNoMigrations-5": NonEmptyLogCase(
        42, False, MV.IBP_3_6_IV0, None,
        error="Detected in-progress transaction at offset 42, but the metadata.version 3.6-IV0 does not support "
              "transactions. Cannot continue."),
    "testActivationMessageForNonEmptyLogWithMigrations-1": NonEmptyLogCase(
        -1, True, MV.IBP_3_3_IV0, None,
        error="Should not have ZK migrations enabled on a cluster running metadata.version 3.3-IV0"),
    "testActivationMessageForNonEmptyLogWithMigrations-2": NonEmptyLogCase(
        -1, True, MV.IBP_3_4_IV0, None, error=_KRAFT_MODE),
    "testActivationMessageForNonEmptyLogWithMigrations-3": NonEmptyLogCase(
        -1, True, MV.IBP_3_6_IV1, None, error=_KRAFT_MODE),
    "testActivationMessageForNonEmptyLogWithMigrations-4": NonEmptyLogCase(
        -1, True, MV.IBP_3_6_IV1, Z.PRE_MIGRATION, _tail("Loaded ZK migration state of PRE_MIGRATION.")),
    "testActivationMessageForNonEmptyLogWithMigrations-5": NonEmptyLogCase(
        -1, True, MV.IBP_3_6_IV1, Z.MIGRATION, _tail(_STAY)),
    "testActivationMessageForNonEmptyLogWithMigrations-6": NonEmptyLogCase(
        -1, False, MV.IBP_3_4_IV0, Z.MIGRATION, _tail(_COMPLETE), (_POST_RECORD,)),
    "testActivationMessageForNonEmptyLogWithMigrations-7": NonEmptyLogCase(
        42, False, MV.IBP_3_6_IV1, Z.MIGRATION, _tail(_ABORT_42 + _COMPLETE), (_ABORT, _POST_RECORD)),
    "testActivationMessageForNonEmptyLogWithMigrations-8": NonEmptyLogCase(
        -1, False, MV.IBP_3_4_IV0, Z.POST_MIGRATION, _tail(_POST)),
    "testActivationMessageForNonEmptyLogWithMigrations-9": NonEmptyLogCase(
        42, False, MV.IBP_3_6_IV1, Z.POST_MIGRATION, _tail(_ABORT_42 + _POST), (_ABORT,)),
    "testActivationMessageForNonEmptyLogWithMigrations-10": NonEmptyLogCase(
        -1, True, MV.IBP_3_4_IV0, Z.POST_MIGRATION, _tail(_POST + _IGNORE)),
    "testActivationMessageForNonEmptyLogWithMigrations-11": NonEmptyLogCase(
        42, True, MV.IBP_3_6_IV1, Z.POST_MIGRATION, _tail(_ABORT_42 + _POST + _IGNORE), (_ABORT,)),
}


def _outcome(call: Callable[[], object]) -> tuple[str, object]:
    """The result of an activation call as (kind, value): ("error", message) or ("records", result)."""
    try:
        result = call()
    except api.ActivationError as exc:
        return ("error", str(exc))
    return ("records", result)


# ---------------------------------------------------------------- recordsForEmptyLog
@pytest.mark.parametrize("case", EMPTY_LOG.values(), ids=EMPTY_LOG.keys())
def test_records_for_empty_log(case: EmptyLogCase) -> None:
    kind, value = _outcome(lambda: api.records_for_empty_log(case.offset, case.migration, case.bootstrap, SOURCE,
                                                             metadata_version=case.metadata_version))
    if case.error is not None:
        assert (kind, value) == ("error", case.error)
        return
    assert kind == "records" and isinstance(value, api.ActivationRecords)
    assert value.message == case.message
    assert value.is_atomic is case.atomic
    assert tuple(str(r) for r in value.records) == case.records


@pytest.mark.parametrize("case", [c for c in EMPTY_LOG.values() if c.bootstrap is c.metadata_version],
                         ids=[k for k, c in EMPTY_LOG.items() if c.bootstrap is c.metadata_version])
def test_generate_for_empty_log(case: EmptyLogCase) -> None:
    """``generate`` passes the bootstrap's metadata.version as recordsForEmptyLog's last argument: the same
    outcome as the direct call wherever Kafka's test passes the two equal."""
    direct = _outcome(lambda: api.records_for_empty_log(case.offset, case.migration, case.bootstrap, SOURCE))
    via = _outcome(lambda: api.generate_activation_records(True, case.offset, case.migration, case.bootstrap,
                                                           bootstrap_source=SOURCE))
    assert via == direct


@pytest.mark.parametrize("case", [c for c in EMPTY_LOG.values() if c.offset == -1 and c.bootstrap is
                                  c.metadata_version],
                         ids=[k for k, c in EMPTY_LOG.items() if c.offset == -1 and c.bootstrap is c.metadata_version])
def test_system_bootstrap_follows_empty_log(case: EmptyLogCase) -> None:
    """The system model's first activation (``bootstrap_migration_state``, kafka profile) agrees: it throws
    where Kafka throws, else the state written, NONE when no ZkMigrationStateRecord is (below 3.6-IV1)."""
    kind, value = _outcome(lambda: api.bootstrap_migration_state(case.bootstrap.feature_level, case.migration,
                                                                 "kafka"))
    if case.error is not None:
        assert (kind, value) == ("error", case.error)
    else:
        written = [r for r in case.records if r.startswith("ZkMigrationStateRecord")]
        expected = Z.PRE_MIGRATION if written == ["ZkMigrationStateRecord(PRE_MIGRATION)"] else Z.NONE
        assert (kind, value) == ("records", expected)


# ---------------------------------------------------------------- recordsForNonEmptyLog
@pytest.mark.parametrize("case", NON_EMPTY_LOG.values(), ids=NON_EMPTY_LOG.keys())
def test_records_for_non_empty_log(case: NonEmptyLogCase) -> None:
    kind, value = _outcome(lambda: api.records_for_non_empty_log(case.offset, case.migration, case.metadata_version,
                                                                 case.state))
    # generate() on a non-empty log: the same call.
    via = _outcome(lambda: api.generate_activation_records(False, case.offset, case.migration, case.metadata_version,
                                                           case.state))
    assert via == (kind, value)
    if case.error is not None:
        assert (kind, value) == ("error", case.error)
        return
    assert kind == "records" and isinstance(value, api.ActivationRecords)
    assert value.message == case.message
    assert value.is_atomic
    assert tuple(str(r) for r in value.records) == case.records
    if case.metadata_version is None:
        # Without a FeatureLevelRecord the log is treated as 3.0-IV1: the same as naming it.
        assert api.records_for_non_empty_log(case.offset, case.migration, MV.IBP_3_0_IV1, case.state) == value


@pytest.mark.parametrize("case", NON_EMPTY_LOG.values(), ids=NON_EMPTY_LOG.keys())
def test_system_activation_follows_non_empty_log(case: NonEmptyLogCase) -> None:
    """The system model's activation of a newly elected controller (``activate``, kafka profile) agrees: it
    resigns where Kafka throws (writing nothing, not even the abort record), else it writes the
    ZkMigrationStateRecord and the abort record Kafka generates. Its open transaction starts at offset 0."""
    level = (case.metadata_version or MV.IBP_3_0_IV1).feature_level
    state = case.state or Z.NONE
    act = api.activate(state, case.migration, False, case.offset != -1, "kafka", level)
    if case.error is not None:
        assert act.write is None and not act.abort_transaction
        assert act.resign == (case.error if case.offset == -1 else case.error.replace("offset 42", "offset 0"))
        return
    assert act.resign is None
    assert act.abort_transaction is (_ABORT in case.records)
    assert act.write is (Z.POST_MIGRATION if _POST_RECORD in case.records else None)
