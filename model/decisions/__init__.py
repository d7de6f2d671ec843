"""Differential checks of decision rules: a Z3 formula per rule against the reference, over a bounded domain.

Each rule is written as Z3 terms over symbolic inputs (an independent restatement of the KIP / Kafka rule).
:func:`differential` enumerates the whole bounded input domain, evaluates the terms on each input
(``substitute`` + ``simplify``: the formula is built once) and compares them with the reference called on
the same input; the first disagreement is reported as a concrete input with both outputs.

The rules live in one module per protocol, on the shared machinery of :mod:`model.decisions.core`
(:class:`~model.decisions.core.Formula`, :func:`~model.decisions.core.differential`, the output codes the
protocols share): :mod:`model.decisions.streams` (Kafka Streams), :mod:`model.decisions.features`
(KIP-584), :mod:`model.decisions.metadata_version` (KIP-778) and :mod:`model.decisions.zk_migration`
(KIP-866). This package gathers them in ``RULES`` (the full domains) and ``GATE_RULES`` (the gate's domains,
run by :func:`gate_differential`) and re-exports the names its users import.

Rules:

Kafka Streams (:mod:`model.decisions.streams`):

* ``streams_assign``: the Kafka Streams leader's ``assign()`` (reference_impl/streams_probing/api.py): the
  used version, the supported version it encodes, what a future member gets, the error assignment, the
  follow-up rebalance, when the leader fails and by which exception (a pre-2.0 leader's decode failure or a
  probing leader's), and the refused empty group; per leader release, profile (kafka-2.0's own branch too) and
  assignor mutation (uncapped_adopt: Kafka 2.1.0 / 2.1.1). The Z3 side is the transition relation's own chain
  (model/streams_probing.py ``assign_outcomes``).
* ``streams_on_assignment``: a Kafka Streams member's ``onAssignment()`` (api.py ``on_assignment``) on every
  reply (used, received and supported version, error code), per member release and profile: the member step,
  the version it uses next, whether it rejoins, and the failure it raises; the Z3 side is the transition
  relation's own chain (model/streams_probing.py ``on_assignment_outcomes``); post-2.0 also as Kafka 2.1.1
  (``uncapped_adopt``, KAFKA-8649).
* ``streams_codec``: what each release's ``SubscriptionInfo`` / ``AssignmentInfo`` ``encode()`` writes, its own
  ``decode()`` reads back (the fields each version carries, Kafka's ``equals``, the encoded length), and a version
  above what it speaks is refused; the checked constructors (``of``), what ``encode()`` refuses of an info built
  unchecked, the supported-version word and process id bytes written, task sets in hash-bin order.
* ``streams_decode``: each release's ``decode()`` on damaged bytes (an unknown version word, a buffer cut in any
  field, trailing bytes, a negative length, bad modified UTF-8): which exception, with which message.
* ``streams_tasks``: the tasks the leader deals round robin and each assignment's consumer-level partitions
  (its active tasks' partitions, in task order; none without the grouper's map, a refusal when it lacks a dealt
  task), with a future member in the group (kip deals it nothing, kafka pools it), and kafka-2.0's version
  probing (previous tasks back).
* ``streams_releases``: each release's age and latest metadata version, and the ``upgrade.from`` table (each
  value refused or the version it forces, per release and profile), restated from KIP-268 and Kafka (the
  reference's tables are read by the spec and the Z3 model too, so only this second copy sees an edit to them).

metadata.version, KIP-778 (:mod:`model.decisions.metadata_version`):

* ``mv_lossless``: KIP-778's lossless-downgrade rule over each catalog (reference_impl/metadata_version/catalog.py).
* ``mv_catalog``: the catalogs' own rules (reference_impl/metadata_version/catalog.py): Kafka's level numbering,
  KRaft support, ``previous()``, and that printed names and KRaft levels read back to their member, per release;
  ``checkIfMetadataChanged`` / ``isLosslessDowngrade`` over every pair of members, with Kafka's didMetadataChange
  flags restated, their order and FeatureCommand's list between them; ``VersionRange.of`` (the short cast),
  ``intersects``, ``toString``, the constructor's ``0 <= min <= max``; QuorumFeatures' default metadata.version
  range per release, stable or not; and ``UpdateFeaturesResponse``'s readers.
* ``mv_update``: the active controller's decision on a ``metadata.version`` update (api.py QuorumController), per
  profile and Kafka release (3.9 / 4.0), catalog, dry run.
* ``mv_update_forms``: one metadata.version update in each form a request may carry it (an UpgradeType byte,
  known or not; the v0 AllowDowngrade flag; a negative level; an empty name) and during a ZK migration: the
  checks before the version rules, which error and message, and the level written; and (kip) an update of
  another feature, checked against the controller's own range and a broker's that lacks the feature (0-0).
* ``mv_replay``: FeatureControlManager.replay of one FeatureLevelRecord per profile and release (level 0 removes;
  kafka: a level the controller does not support is fatal; 4.0 skips kraft.version).
* ``mv_request``: the answers ControllerApis.handleUpdateFeatures gives before the decision (authorization, not
  the active controller, a feature named twice) and what their messages name; a request of two updates
  (metadata.version and another feature), one refused (``mv_atomic_cases``): all or nothing under kip, the valid
  half written under kafka 3.9, the first refusal answered at the top level under 4.0; the codes on the
  wire (Errors, DowngradeType, UpgradeType) against Kafka's numbers, restated.
* ``format_storage``: ``kafka-storage format --metadata-version`` (reference_impl/metadata_version/api.py
  format_storage): the level a new cluster bootstraps at, or a refusal; per profile and Kafka release.
* ``mv_activation``: KIP-778 "Initialization" (bootstrap_metadata_version, activation_metadata_version): the
  bootstrap record an activating controller writes and the version it runs at, for empty and non-empty logs.
* ``mv_registration``: ClusterControlManager.registerBroker's feature checks on what the system never sends (no
  metadata.version range: assumed, or refused by 4.0; a second feature in either order): the error, the feature
  and numbers the refusal names, the range registered.

ZooKeeper migration, KIP-866 (:mod:`model.decisions.zk_migration`):

* ``zk_triggers``: KIP-866's triggers (reference_impl/zk_migration/api.py): activation, bootstrap, ZK broker
  registration, the /controller_epoch take-over, the driver's valid state changes; and the driver helpers no
  config varies: ``isLeader``, ``onControllerChange`` and ``PollEvent``, the copy's record batches, the two
  image events for an image behind /migration or an event made under another leader, the KIP's four-valued
  ``ZkMigrationState`` metric, and ``ActivationRecordsGenerator.generate``'s records on every log.

Feature versioning, KIP-584 (:mod:`model.decisions.features`):

* ``version_range``: KIP-584's version ranges (reference_impl/features/api.py): which (min, max) the
  SupportedVersionRange and FinalizedVersionRange constructors accept, a level's membership, and a finalized
  range's incompatibility with a supported one; ``fromMap``, and Kafka 2.8's BrokerFeatures (``createDefault``,
  ``defaultFinalizedFeatures``, ``incompatibleFeatures``).
* ``finalized_cache``: a broker's FinalizedFeatureCache (reference_impl/features/api.py): an update's
  acceptance by epoch and compatibility, the epoch cached after it, and ``waitUntilEpochOrThrow``'s condition;
  ``is_compatible`` on the same node (absent, disabled even with features, enabled) and the epoch refusal's
  quote of the cache.
* ``admin_update``: the Admin client's checks before an UpdateFeatures request is sent (a level below 1
  needs allowDowngrade, no empty map, no feature name that Java's ``String.trim`` empties) and the request it
  sends.
* ``feature_znode``: Kafka 2.8's ``FeatureZNode.decode`` on well-formed and malformed /feature JSON (32-bit
  edges of every int, a missing or mistyped key): the exception class it throws, or the node it decodes; the
  node's defaults; and what an elected controller writes to every node it can find, per IBP
  (``enableFeatureVersioning`` / ``disableFeatureVersioning``).
* ``features_update``: one UpdateFeatures update at the controller (reference_impl/features/api.py): the
  error code and the finalized range written (or the deletion), for the existing range, the level, the
  allowDowngrade flag, the controller's own supported range and the live brokers' ranges; per profile.
* ``features_atomic``: a request with two updates under KIP-584 as written (each on its own) and its revision
  (all or nothing): each result's error code and note, and the ranges after it.
* ``features_texts``: what the ``kafka-features`` tool prints of an error (class and message, the default
  message when there is none), the node's path by profile, and the words of two refusals (the same level: Kafka's,
  naming the direction the flag asked for; a level a broker cannot run with, per profile).
* ``features_unreadable``: what the cluster does with a /feature node no reader can decode (an operator's
  bytes): a broker's startup and watch notification (it runs on with its cache cleared, or exits), the
  controller's election, an UpdateFeatures request and a registration, by the decoder's exception class.
* ``features_request``: Kafka 2.8's answers to an UpdateFeatures request before any update is validated
  (authorization, not the active controller, versioning off, a feature named twice under kip), with their
  messages, and an empty feature name failing alone; the error codes against Kafka's numbers, restated.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .core import (
    CODEC_ERROR,
    DONT_CARE,
    FEATURE_UPDATE_FAILED,
    INVALID_REQUEST,
    DifferentialResult,
    Disagreement,
    Formula,
    Inputs,
    Outputs,
    differential,
)
from .features import (
    UpdateOutcome,
    admin_update_cases,
    feature_znode_cases,
    features_atomic_cases,
    features_request_cases,
    features_texts_cases,
    features_unreadable_cases,
    features_update_cases,
    features_update_formula,
    features_update_reference,
    features_update_rule,
    finalized_cache_cases,
    version_range_cases,
)
from .metadata_version import (
    format_storage_cases,
    mv_activation_cases,
    mv_atomic_cases,
    mv_catalog_cases,
    mv_lossless,
    mv_lossless_cases,
    mv_own_registration_cases,
    mv_registration_cases,
    mv_replay_cases,
    mv_request_cases,
    mv_update_cases,
    mv_update_form_cases,
    mv_update_formula,
    mv_update_reference,
    mv_update_rule,
)
from .streams import (
    streams_assign_cases,
    streams_assign_formula,
    streams_assign_reference,
    streams_codec_cases,
    streams_decode_cases,
    streams_on_assignment_cases,
    streams_releases_cases,
    streams_tasks_cases,
)
from .zk_migration import zk_activation_records_cases, zk_driver_event_cases, zk_trigger_cases

__all__ = [
    "CODEC_ERROR",
    "DONT_CARE",
    "FEATURE_UPDATE_FAILED",
    "GATE_RULES",
    "INVALID_REQUEST",
    "RULES",
    "DifferentialResult",
    "Disagreement",
    "Formula",
    "Inputs",
    "Outputs",
    "UpdateOutcome",
    "admin_update_cases",
    "differential",
    "feature_znode_cases",
    "features_atomic_cases",
    "features_request_cases",
    "features_texts_cases",
    "features_unreadable_cases",
    "features_update_cases",
    "features_update_formula",
    "features_update_reference",
    "features_update_rule",
    "finalized_cache_cases",
    "format_storage_cases",
    "gate_differential",
    "mv_activation_cases",
    "mv_atomic_cases",
    "mv_catalog_cases",
    "mv_lossless",
    "mv_lossless_cases",
    "mv_own_registration_cases",
    "mv_registration_cases",
    "mv_replay_cases",
    "mv_request_cases",
    "mv_update_cases",
    "mv_update_form_cases",
    "mv_update_formula",
    "mv_update_reference",
    "mv_update_rule",
    "streams_assign_cases",
    "streams_assign_formula",
    "streams_assign_reference",
    "streams_codec_cases",
    "streams_decode_cases",
    "streams_on_assignment_cases",
    "streams_releases_cases",
    "streams_tasks_cases",
    "version_range_cases",
    "zk_activation_records_cases",
    "zk_driver_event_cases",
    "zk_trigger_cases",
]


RULES: dict[str, Callable[[], Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]]] = {
    "streams_assign": streams_assign_cases,
    "streams_on_assignment": streams_on_assignment_cases,
    "streams_codec": streams_codec_cases,
    "streams_decode": streams_decode_cases,
    "streams_tasks": streams_tasks_cases,
    "streams_releases": streams_releases_cases,
    "features_update": features_update_cases,
    "features_request": features_request_cases,
    "features_atomic": features_atomic_cases,
    "features_texts": features_texts_cases,
    "features_unreadable": features_unreadable_cases,
    "version_range": version_range_cases,
    "finalized_cache": finalized_cache_cases,
    "admin_update": admin_update_cases,
    "feature_znode": feature_znode_cases,
    "mv_lossless": mv_lossless_cases,
    "mv_catalog": mv_catalog_cases,
    "mv_update": lambda: itertools.chain(mv_update_cases(), mv_own_registration_cases()),
    "mv_request": mv_request_cases,
    "mv_update_forms": mv_update_form_cases,
    "mv_replay": mv_replay_cases,
    "format_storage": format_storage_cases,
    "mv_activation": mv_activation_cases,
    "mv_registration": mv_registration_cases,
    "zk_triggers": zk_trigger_cases,
}


# --------------------------------------------------------------------------- the gate's decision differential

# What the gate's z3 cell (and ``rollcheck prove``) compares for a protocol: each rule's cases restricted to the
# profile checked, on domains that keep a cell within seconds (the full domains: RULES, benchmarks/prove.py).
# Unlike the successor differential, this reaches the decision code on every input of its domain, whether or
# not a config's states ever ask it: a wrong error code or a refused deletion that no config reaches is caught.
GATE_RULES: dict[str, Callable[[], Iterable[tuple[str, Formula, Iterable[Inputs], Callable[[Inputs], Outputs]]]]] = {
    # Every assignor mutation too: uncapped_adopt is Kafka 2.1.0 / 2.1.1's leader (STR-M4), and the variants'
    # leaders are only as good as the branches no explored state of theirs reaches.
    "streams_assign": lambda: streams_assign_cases(max_members=2),
    "streams_on_assignment": streams_on_assignment_cases,
    "streams_codec": streams_codec_cases,
    "streams_decode": streams_decode_cases,
    "streams_tasks": streams_tasks_cases,
    "streams_releases": streams_releases_cases,
    "features_update": lambda: features_update_cases(brokers=1),
    "features_request": features_request_cases,
    "features_atomic": features_atomic_cases,
    "features_texts": features_texts_cases,
    "features_unreadable": features_unreadable_cases,
    "version_range": version_range_cases,
    "finalized_cache": finalized_cache_cases,
    "admin_update": admin_update_cases,
    "feature_znode": feature_znode_cases,
    "mv_lossless": mv_lossless_cases,
    "mv_catalog": mv_catalog_cases,
    "mv_update": lambda: itertools.chain(
        mv_update_cases("example", voters=2, brokers=0, dry_runs=(False, True), edge_ranges=True),
        mv_update_cases("kafka", voters=1, brokers=0, dry_runs=(False,)), mv_own_registration_cases()),
    "mv_request": mv_request_cases,
    "mv_update_forms": mv_update_form_cases,
    "mv_replay": mv_replay_cases,
    "format_storage": format_storage_cases,
    "mv_activation": mv_activation_cases,
    "mv_registration": mv_registration_cases,
    "zk_triggers": zk_trigger_cases,
}
_PROFILE_WORDS = ("kip", "kafka", "kafka-2.0")


def _for_profile(case: str, profile: str) -> bool:
    """A case whose name names a profile runs for that profile only; one naming none, for all. A name's
    comma-separated parts name a profile as the whole part ("activate, kip") or followed by a release
    ("kafka 3.9"); "kafka catalog" names the catalog, not the profile."""
    named = set()
    for part in case.split(", "):
        word, _, rest = part.partition(" ")
        if word in _PROFILE_WORDS and (not rest or rest[:1].isdigit()):
            named.add(word)
    return not named or profile in named


def gate_differential(rules: Sequence[str], profile: str) -> list[dict[str, Any]]:
    """Each rule's differential on the gate's domains, the cases of ``profile`` only; JSON-ready rows."""
    out: list[dict[str, Any]] = []
    for rule in rules:
        cases = [c for c in GATE_RULES[rule]() if _for_profile(c[0], profile)]
        res = differential(rule, cases)
        out.append({"rule": rule, "cases": res.cases, "inputs": res.inputs, "seconds": round(res.seconds, 2),
                    "disagreement": None if res.ok else str(res.disagreement)})
    return out
