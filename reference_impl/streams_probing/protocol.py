"""Registry entry of the ``streams_probing`` protocol (KIP-268): named configs and broken variants."""

from __future__ import annotations

from functools import partial

from reference_impl.streams_probing.config import StreamsProbingConfig
from reference_impl.streams_probing.releases import PROFILES
from reference_impl.streams_probing.system import StreamsProbingSystem
from rollcheck.core.transition import ProtocolEntry, Variant, config_mutation

# Version probing in its simplest group: two 2.0 instances, one rolling bounce to a release speaking 4.
SMALL = StreamsProbingConfig(instances=2)

# The default: three instances, 2.0 -> post-2.0 (version probing), one crash and restart.
DEFAULT = StreamsProbingConfig(max_crashes=1)

# Pre-2.0 upgrades: two bounces with upgrade.from set, then removed.
PRE20 = StreamsProbingConfig(from_release="1.1", to_release="2.0", max_crashes=1)
FROM_0100 = StreamsProbingConfig(from_release="0.10.0", to_release="post-2.0")

# KIP-268's counterexample: a pre-2.0 group bounced once to 2.0 without upgrade.from (a finding by design).
NO_UPGRADE_FROM = StreamsProbingConfig(from_release="1.1", to_release="2.0", procedure="single-bounce")

# Kafka today: from 2.0 (version 3) to 3.9 (version 11) in one bounce (kafka profile only). A story config (the
# ci tier: explorer and Z3's every-state differential, 3,515 states): the upgrade users run today, which no other
# campaign or ci config took (a release above the codec's layouts, versions 5 to 11 in the subscriptions).
KAFKA_LATEST = StreamsProbingConfig(profile="kafka", from_release="2.0", to_release="3.9", max_crashes=1)

# An operator's mistake (kafka profile: release 3.9): bounced to 3.9, some instances set upgrade.from=1.1 (the
# group runs post-2.0), so they send version 2 while the others send 11: a post-2.0 leader meets a pre-2.0 and a
# future subscription at once. The story of the error assignment and the members' shutdown (STR-W6).
MISCONFIGURED = StreamsProbingConfig(profile="kafka", from_release="post-2.0", to_release="3.9",
                                     procedure="operator", misconfigured_upgrade_from="1.1")

# An operator bouncing a pre-2.0 group in any order, upgrade.from set or not (two instances, 643 states): a
# 1.1 leader that receives a post-2.0 subscription dies (KIP-268's counterexample, a finding by design). A
# conformance config (the spec's view of an upgrade.from and of a failure, which small never sets), not a story.
OPERATOR_FROM_11 = StreamsProbingConfig(instances=2, from_release="1.1", to_release="post-2.0",
                                        procedure="operator")

# An operator bouncing a 2.0 group onto 3.9 (kafka profile: release 3.9), two instances, 295 states: a probing group
# never sets upgrade.from (the operator's bounces only remove it), though 3.9's StreamsConfig lists "2.0". A
# conformance config: the one operator upgrade from a probing release, where the spec's own reading of which
# upgrade.from a bounce may set is compared with the reference's (operator-from-1.1 is pre-2.0).
OPERATOR_FROM_20 = StreamsProbingConfig(profile="kafka", instances=2, from_release="2.0", to_release="3.9",
                                        procedure="operator")

# An operator bouncing a 0.10.1 group onto 1.1, two instances: 1.1's StreamsConfig lists only "0.10.0" for
# upgrade.from (KIP-268 added the others in 2.0), so the operator has no value to set and every bounce leaves it
# unset. A conformance config: the one operator upgrade where the new release refuses the old one's name, so a
# reference that set it anyway (the campaign's config.py:123 survivor) differs from the spec's own reading.
OPERATOR_FROM_0101 = StreamsProbingConfig(instances=2, from_release="0.10.1", to_release="1.1", procedure="operator")

LARGE = StreamsProbingConfig(instances=4, from_release="0.10.0", to_release="post-2.0", max_crashes=2)


_mutant = partial(config_mutation, StreamsProbingSystem)  # a variant: the reference with one mutation in its config


VARIANTS = (
    Variant("STR-M1", "the 2.0+ leader fails on a subscription newer than it understands (pre-KIP behaviour)",
            _mutant("leader_fails_on_future"), expect=("STR-01", "STR-06"),
            source="KIP-268 Future upgrades with version probing"),
    Variant("STR-M2", "the leader assigns at its own version while an older member remains",
            _mutant("assign_at_leader_version"), expect=("STR-03", "STR-02", "STR-06"),
            source="KIP-268 Detailed upgrade protocol", config="pre20"),
    Variant("STR-M3", "a member never returns to the higher version after probing down",
            _mutant("member_never_upgrades"), expect=("STR-07", "STR-08"),
            source="KIP-268 Detailed upgrade protocol: update its downgraded used-version"),
    Variant("STR-M4", "KAFKA-8649: a member adopts the leader's supported version even above its own (Kafka 2.0's "
            "onAssignment; the 2.0 instance then cannot encode its subscription)", _mutant("uncapped_adopt"),
            expect=("STR-05", "STR-06"), source="KAFKA-8649, apache/kafka PR #7423"),
    Variant("STR-M5", "KAFKA-6054: a 0.10.1 ... 1.1 release without the upgrade.from=\"0.10.0\" back-port: the "
            "first bounce from 0.10.0 sends version 2 and the 0.10.0 leader cannot decode it",
            _mutant("no_kafka_6054_backport", from_release="0.10.0", to_release="1.1"), expect=("STR-06",),
            source="KAFKA-6054 (KIP-268: requires back porting of KAFKA-6054 to older branches)"),
    Variant("STR-M6", "the leader encodes the version it uses as its supported version: members never learn "
            "that they can go back up", _mutant("leader_supported_is_used"), expect=("STR-07", "STR-08"),
            source="KIP-268 Detailed upgrade protocol: the leader encodes its supported version"),
    Variant("STR-M7", "an instance restarted during the first bounce ignores upgrade.from and subscribes with "
            "its latest version while a pre-2.0 leader remains", _mutant("restart_ignores_upgrade_from"),
            expect=("STR-06", "STR-01"), source="KIP-268 Upgrading to 2.0 (failure during the upgrade)",
            config="pre20"),
    Variant("STR-M8", "the leader takes the maximum of the members' supported versions as the commonly "
            "supported one: a 2.0 member is told to upgrade beyond what it speaks",
            _mutant("commonly_supported_is_max", profile="kafka"), expect=("STR-06", "STR-05"),
            source="Kafka StreamsPartitionAssignor (KAFKA-8649 fix): minimum over all subscriptions"),
)


PROTOCOL = ProtocolEntry(
    name="streams_probing",
    summary="KIP-268 Kafka Streams rebalance metadata upgrade: upgrade.from, version probing, rolling bounces",
    config_type=StreamsProbingConfig,
    configs={"small": SMALL, "default": DEFAULT, "large": LARGE, "pre20": PRE20, "from-0.10.0": FROM_0100,
             "no-upgrade-from": NO_UPGRADE_FROM, "kafka-latest": KAFKA_LATEST,
             "misconfigured-upgrade-from": MISCONFIGURED, "operator-from-1.1": OPERATOR_FROM_11,
             "operator-from-2.0": OPERATOR_FROM_20, "operator-from-0.10.1": OPERATOR_FROM_0101},
    # The default config is one bounce from 2.0 (version probing): the gate also checks KIP-268's two
    # bounces with upgrade.from, from 1.1 and from 0.10.0, which only the test matrix ran before, and an
    # operator's wrong upgrade.from (kafka only), the one story that reaches the members' error shutdown.
    story_configs=("pre20", "from-0.10.0", "misconfigured-upgrade-from", "kafka-latest"),
    # Conformance beside small: the view's upgrade.from and failure kind, compared nowhere else.
    conform_configs=("operator-from-1.1", "operator-from-2.0", "operator-from-0.10.1"),
    build=StreamsProbingSystem,
    variants=VARIANTS,
    sources=("KIP-268 (shared/seeds/004_06894be9ea0d2c9e.txt)",
             "Apache Kafka 2.0 streams/.../internals/StreamsPartitionAssignor.java, SubscriptionInfo.java, "
             "AssignmentInfo.java",
             "Apache Kafka 2.1 streams/.../internals/assignment/AssignmentInfo.java (version 4, error code)",
             "Apache Kafka trunk (2024) StreamsPartitionAssignor.java, AssignorConfiguration.java, "
             "StreamsAssignmentProtocolVersions.java",
             "Apache Kafka 2.0 streams/src/test/.../tests/StreamsUpgradeTest.java (simulated version 4)"),
    spec="specs.streams_probing:BINDING",
    properties="properties.streams_probing:PROPERTIES",
    z3="model.streams_probing:StreamsProbingZ3",
    decisions="model.decisions.streams:DECISIONS",
    oracle="reference_impl.streams_probing.oracle:ORACLE",
    cluster="reference_impl.streams_probing.cluster:BINDING",
    # What only an operator does (runbooks, docs/runbooks.md): a rolling bounce of one instance onto the new
    # release, with upgrade.from set or removed. Rebalances, the members' onAssignment (probing down, going
    # back up, failing), the leader's follow-up rebalance, crashes and restarts: the group.
    operator_actions=("RollingBounce",),
    runbook_conditions="runbooks.streams_probing:CONDITIONS",
    order=40,
    # kip, kafka, and kafka-2.0: each release runs its own branch's assignor (2.0, the 2.1 branch with
    # KAFKA-8649's fix); docs/protocols/streams_probing.md.
    profiles=PROFILES,
)
