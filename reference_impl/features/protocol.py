"""Registry entry of the ``features`` protocol: named configs and broken variants."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from reference_impl.features.config import FeaturesConfig, Release
from reference_impl.features.system import FeaturesSystem
from rollcheck.core.transition import ProtocolEntry, Variant, config_mutation

# The KIP's group_coordinator story: old brokers speak v1, new brokers v1-v2 (section "Use case").
SMALL = FeaturesConfig()

# Two features, a release that deprecates group_coordinator v1 (raises its supported minimum), and
# both IBP scenarios of "Feature ZK node status" (new cluster; upgrade from an old IBP).
DEFAULT = FeaturesConfig(
    brokers=2,
    releases=(
        Release("old", (("group_coordinator", 1, 1), ("transaction_coordinator", 1, 2))),
        Release("new", (("group_coordinator", 1, 2), ("transaction_coordinator", 1, 3))),
        Release("next", (("group_coordinator", 2, 3), ("transaction_coordinator", 1, 3))),
    ),
    initial_ibp=(True, False),
    max_epoch=3,
    max_restarts=1,
    max_ibp_changes=1,
    levels=(0, 1, 2, 3),
)

# The default story with a third broker: 1,176,150 states under kip, explored to the end with liveness in minutes
# (docs/checkers/explorer.md). Three restarts a broker and two-update requests on top (the config before
# this one) grow about 5x a level and never finish.
LARGE = replace(DEFAULT, brokers=3)

# KIP-584 "Feature version deprecation", which no other config reaches (their restarts cannot roll every broker
# onto a release with a higher supported minimum while the finalized level is one it supports): a new cluster on
# "new" finalizes group_coordinator 1-2, a broker bounces onto "next", which supports 2-3 only, and once the
# controller has its registration it deprecates level 1 (the finalized minimum becomes 2; kip only). Three
# brokers and two restarts also reach the registration queue with a broker queued while another restarts under
# controller 0 (FEAT-14), which two brokers cannot. No client and no dry runs; levels 1 and 3 only, so the
# finalized minimum rises above 1 only by deprecation (FEAT-W6).
DEPRECATION = FeaturesConfig(
    brokers=3,
    releases=(
        Release("new", (("group_coordinator", 1, 2),)),
        Release("next", (("group_coordinator", 2, 3),)),
    ),
    initial_release="new",
    max_epoch=2,
    max_restarts=2,
    levels=(1, 3),
    dry_run=False,
    client=False,
)

# Two features and requests with two updates: where "partial" and "atomic" differ. A story config (the ci tier):
# no other config sends a request that the revision's all-or-nothing rule decides, so until it was one, that
# branch of FeatureController.update_features ran in no campaign or ci cell (260 states under kip, 252 under
# kafka).
ATOMIC = FeaturesConfig(
    semantics="atomic",
    releases=(
        Release("old", (("group_coordinator", 1, 1), ("transaction_coordinator", 1, 1))),
        Release("new", (("group_coordinator", 1, 2), ("transaction_coordinator", 1, 2))),
    ),
    levels=(1, 2),
    multi_update=True,
    dry_run=False,
    max_restarts=1,
    max_epoch=2,
    client=False,
)

# The deprecation story with the controller's deprecation switched off (kip; 1,434 states under kip against
# 1,578 with it on), checked by conformance alone (ProtocolEntry.conform_configs): every other config leaves
# deprecation on, so a reference that ignored the switch would agree with the spec everywhere else. Two
# brokers and one restart are enough to reach a deprecation when it is on.
NO_DEPRECATION = replace(DEPRECATION, brokers=2, max_restarts=1, deprecation=False)

# `atomic`'s two-update requests under the KIP's first semantics (partial success allowed), which no other config
# sends, checked by conformance alone: the spec states its own two-update requests, while the Z3 model reads them
# from the same config as the reference, so a reference offering other pairs (config.py:96) differs only from TLC.
PARTIAL_PAIRS = replace(ATOMIC, semantics="partial")

# KIP-584 "Feature ZK node status" across IBP rolls, both ways (a cluster that starts at or above
# migration_ibp_version and one below it), there and back, with a client and one restart, checked by conformance
# alone (conform_configs; 3,196 states under kip, 2,088 under kafka). `default` is the only other config that
# rolls the IBP and is explored by properties only: a roll that kept the brokers registered, or a client that took
# a same-epoch answer from a broker below the IBP, agreed with every Z3 and TLC cell before (the mutation
# campaign's survivors features system.py:511 and :480). Two rolls, because the second one is where a roll that
# does not restart the brokers lets a broker that started unvalidated below the IBP run on above it (FEAT-08).
# Two features and single updates only: two-update requests reach more states, so offering them where the
# config does not disagrees with TLC (config.py:94).
IBP_ROLL = FeaturesConfig(releases=ATOMIC.releases, initial_ibp=(True, False), max_ibp_changes=2, max_restarts=1,
                          max_epoch=1, levels=(1, 2), dry_run=False)


_mutant = partial(config_mutation, FeaturesSystem)  # a variant: the reference with one mutation in its config


VARIANTS = (
    Variant("FEAT-M1", "the controller skips the range check against live brokers' supported versions",
            _mutant("skip_range_check"), expect=("FEAT-01", "FEAT-08"), source="KIP-584 Validations"),
    Variant("FEAT-M2", "a downgrade or deletion is applied without allowDowngrade",
            _mutant("allow_downgrade_unchecked"), expect=("FEAT-05",), source="KIP-584 Validations point 2"),
    Variant("FEAT-M3", "under the all-or-nothing revision, the valid half of a failed request is applied",
            _mutant("apply_partially_when_atomic", semantics="atomic", multi_update=True),
            expect=("FEAT-06",), source="KIP-584 revision: if one update fails, none is applied",
            config="atomic"),
    Variant("FEAT-M4", "a request that changes nothing still rewrites /features and bumps its epoch",
            _mutant("bump_epoch_on_noop"), expect=("FEAT-06",), source="KIP-584 Guarantees"),
    Variant("FEAT-M5", "the controller admits a registering broker without checking its features "
            "(the incompatible broker lifetime race left open)",
            _mutant("register_incompatible"), expect=("FEAT-01",),
            source="KIP-584 Incompatible broker lifetime race condition"),
    Variant("FEAT-M6", "a client adopts whatever epoch the broker it asked happens to serve",
            _mutant("client_adopts_stale"), expect=("FEAT-04",),
            source="KIP-584 Client discovery (highest epoch wins)"),
    Variant("FEAT-M7", "a broker keeps running after a watch shows /features is incompatible with it",
            _mutant("ignore_incompatible_notification"),
            expect=("FEAT-08",), source="KIP-584 Broker protections, point 2"),
    Variant("FEAT-M8", "a broker restarted onto an older binary skips the startup validation against /features "
            "and runs although it cannot support the finalized levels",
            _mutant("skip_startup_validation"), expect=("FEAT-08", "FEAT-01"),
            source="KIP-584 Broker protections, point 1 (validation at startup)"),
)


PROTOCOL = ProtocolEntry(
    name="features",
    summary="KIP-584 feature versions: /features, UpdateFeatures, broker protections (ZooKeeper era)",
    config_type=FeaturesConfig,
    configs={"small": SMALL, "default": DEFAULT, "large": LARGE, "atomic": ATOMIC, "deprecation": DEPRECATION,
             "no-deprecation": NO_DEPRECATION, "ibp-roll": IBP_ROLL, "partial-pairs": PARTIAL_PAIRS},
    story_configs=("deprecation", "atomic"),
    # Conformance beside small: the controller's deprecation switched off, which no other config does; an IBP
    # roll, which no other Z3 or TLC cell reaches; two-update requests under partial semantics; and atomic's own
    # two-update requests against the spec's: the Z3 model reads the pairs from the same config as the reference,
    # so a reference pairing a raise without the downgrade flag with a lowering that has it (one write moving both
    # features, 260 states for 252 under kafka) differs from TLC alone.
    conform_configs=("no-deprecation", "ibp-roll", "partial-pairs", "atomic"),
    build=FeaturesSystem,
    variants=VARIANTS,
    sources=("KIP-584 (shared/seeds/001_c2d576b2a56443a1.txt)",
             "KIP-584 revision (shared/seeds/003_8b887593d8df6495.txt)",
             "Apache Kafka 2.8 core/src/main/scala/kafka/controller/KafkaController.scala"),
    spec="specs.features:BINDING",
    properties="properties.features:PROPERTIES",
    z3="model.features:FeaturesZ3",
    decisions="model.decisions.features:DECISIONS",
    oracle="reference_impl.features.oracle:ORACLE",
    # What only an operator does (runbooks, docs/runbooks.md): bounce a broker onto a release (the rolling
    # upgrade or rollback), send UpdateFeatures with the kafka-features tool, roll the IBP across
    # migration_ibp_version. Everything else the cluster does: controller elections, broker startup and its
    # validation, registrations, ZooKeeper watch notifications, client ApiVersions reads, and
    # DeprecateMinLevel, which KIP-584 "Feature version deprecation" has "activated through the controller"
    # when it sees a higher supported minimum (the operator's part is deploying the release). The model has
    # no crash apart from RestartBroker, so under a runbook a broker bounces only where a step says.
    operator_actions=("RestartBroker", "UpdateFeatures", "SetIbp"),
    cluster="reference_impl.features.cluster:BINDING",
    runbook_conditions="runbooks.features:CONDITIONS",
    order=10,
)
