"""The ``metadata_version`` protocol's Kafka oracle binding (``ProtocolEntry.oracle``): what the reference decides at a
state, put to Apache Kafka's own ``FeatureControlManager`` and ``MetadataVersion`` (kafka_oracle/metadata_version).

A row of the matrix checks the config as it stands for one Kafka release (:meth:`MetadataVersionOracle.config_for`):
the ``kafka`` profile, Kafka's catalog, and the rules of the release's line (``kafka_release``: "3.3" for 3.3-3.6,
"3.9" for 3.7-3.9, "4.0" for 4.0, and "4.1" .. "4.4" for those lines: 4.0's rules with each line's own catalog
bounds). A config on the KIP's example catalog (V1..V5) is mapped onto the release's
five newest production levels, the old software onto the first three of them, so that the same shapes of upgrade
and downgrade are put to the release's own classes.

At every state with an active controller and a quorum, each UpdateFeatures request the model's operator issues is
asked of ``FeatureControlManager.updateFeatures`` with the controller's view (its own range, the other controllers'
ranges, every registered broker's, the finalized level replayed first); the answer (error codes and messages, the
records written, the finalized levels after replaying them) must equal the reference's. At the initial state the
release's ``MetadataVersion`` catalog is compared, ``BootstrapMetadata`` of each of its levels and (3.6+)
``ActivationRecordsGenerator`` for the config's start; on 3.3.x, the feature records a snapshot of the state holds
(``FeatureControlManager``'s snapshot iterator, KAFKA-14316).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from reference_impl.metadata_version.api import (
    ALL_FAILED_PREFIX,
    BrokerRegistrationRequest,
    ControllerResult,
    MetaProperties,
    QuorumController,
    QuorumFeatures,
    VersionRange,
    activation_metadata_version,
    bootstrap_metadata,
    bootstrap_metadata_version,
    feature_snapshot_records,
    request,
)
from reference_impl.metadata_version.catalog import (
    FEATURE_NAME,
    KAFKA_CATALOG,
    from_feature_level,
    from_version_string,
    kafka_release,
    rules_of,
    versions,
)
from reference_impl.metadata_version.config import MetadataVersionConfig, Software
from reference_impl.metadata_version.system import MetadataVersionSystem
from rollcheck.oracle.binding import Adapter, KafkaBug, OracleRelease, Question
from rollcheck.oracle.compare import first_difference, initial_states

_CONTROLLER = "org.apache.kafka.controller"
_HANDLER = f"{_CONTROLLER}.RollcheckMetadataVersion"
# What every adapter reaches in Kafka's jars (a --jars directory without one is refused naming it).
_CLASSES = (f"{_CONTROLLER}.FeatureControlManager", f"{_CONTROLLER}.QuorumFeatures",
            "org.apache.kafka.server.common.MetadataVersion", "org.apache.kafka.common.metadata.FeatureLevelRecord")

ADAPTERS = (
    Adapter("kraft-3.3", _HANDLER, (*_CLASSES, "org.apache.kafka.clients.ApiVersions")),
    Adapter("kraft-3.7", _HANDLER, (*_CLASSES, f"{_CONTROLLER}.ClusterFeatureSupportDescriber")),
    Adapter("kraft-4.0", _HANDLER, (*_CLASSES, f"{_CONTROLLER}.ClusterFeatureSupportDescriber")),
    Adapter("kraft-4.1", _HANDLER, (*_CLASSES, f"{_CONTROLLER}.ClusterFeatureSupportDescriber")),
)


@dataclasses.dataclass(frozen=True)
class _Release:
    """What the binding knows of a release: its adapter, the reference's rules for it and its catalog bounds
    (MetadataVersion.latestProduction() and MINIMUM_KRAFT_VERSION / MINIMUM_VERSION of the release, which the
    ``release.catalog`` question checks against the release's own classes)."""

    name: str
    adapter: str
    rules: str  # the reference's kafka_release
    minimum: int
    latest_production: int
    tiers: tuple[str, ...] = ("nightly",)
    snapshot: bool = False  # FeatureControlManager has its own snapshot iterator (3.3.x only)
    # The release line of ClusterControlManager's registration checks when it is not ``rules``': 3.7.x and 3.8.x run
    # the 3.9 rules everywhere else but keep 3.3's processRegistrationFeature (changed in 3.9.0).
    registration: str | None = None
    # The release line whose wording BootstrapMetadata's refusal has, when it is not ``rules``': "metadata versions"
    # up to 3.7.x, "metadata.version" from 3.8.0.
    wording: str | None = None

    @property
    def activation(self) -> bool:
        """ActivationRecordsGenerator exists (new in 3.6.0)."""
        return tuple(int(x) for x in self.name.split(".")[:2]) >= (3, 6)

    @property
    def line(self) -> str:
        return ".".join(self.name.split(".")[:2])


_CI = ("ci", "nightly")
RELEASES: tuple[_Release, ...] = (
    _Release("3.3.1", "kraft-3.3", "3.3", 1, 7, snapshot=True),
    _Release("3.3.2", "kraft-3.3", "3.3", 1, 7, snapshot=True),
    _Release("3.4.1", "kraft-3.3", "3.3", 1, 8),
    _Release("3.5.2", "kraft-3.3", "3.3", 1, 11),
    _Release("3.6.2", "kraft-3.3", "3.3", 1, 14, _CI),
    _Release("3.7.2", "kraft-3.7", "3.9", 1, 19, registration="3.3", wording="3.3"),
    _Release("3.8.1", "kraft-3.7", "3.9", 1, 20, registration="3.3"),
    _Release("3.9.2", "kraft-3.7", "3.9", 1, 21, _CI),
    _Release("4.0.2", "kraft-4.0", "4.0", 7, 25, _CI),
    _Release("4.1.2", "kraft-4.1", "4.1", 7, 27),
    _Release("4.2.2", "kraft-4.1", "4.2", 7, 29),
    _Release("4.3.2", "kraft-4.1", "4.3", 7, 30),
    _Release("4.4.0", "kraft-4.1", "4.4", 7, 33, _CI),
)
_BY_NAME = {r.name: r for r in RELEASES}


def _kafka_14316(kind: str, request: Mapping[str, Any], expected: Any, answer: Any) -> bool:
    """KAFKA-14316: the snapshot's feature iterator throws NoSuchElementException below 3.3-IV0."""
    return (kind == "featureSnapshot" and isinstance(answer, Mapping)
            and answer.get("exception") == "java.util.NoSuchElementException")
_EXAMPLE_LEVELS = 5  # KIP-778's V1..V5
_SOURCE = "format command"  # the bootstrap's source as kafka-storage format names it


def _ranges(features: Iterable[tuple[str, VersionRange]]) -> dict[str, list[int]]:
    return {name: [rng.min, rng.max] for name, rng in features}


def controller_view(c: QuorumController) -> dict[str, Any]:
    """The part of a request that sets up FeatureControlManager as the controller ``c`` sees the cluster: its
    id, the quorum, its own ranges, each other controller's ranges (3.7+: controller registrations; 3.3-3.6: what
    its ApiVersions advertise; a voter not heard from is absent), every registered broker's (fenced or not: Kafka
    reads every registration) and the finalized levels, replayed first."""
    controllers: dict[str, dict[str, list[int]]] = {}
    for voter, support in c.voters:
        if support is None:
            continue
        features = {name for name, _ in c.local_supported} | {FEATURE_NAME}
        ranges = {f: c.peer_range(voter, support, f) for f in sorted(features)}
        controllers[str(voter)] = {f: [r.min, r.max] for f, r in ranges.items() if r is not None}
    return {"nodeId": c.node_id, "quorum": [v for v, _ in c.voters], "local": _ranges(c.local_supported),
            "controllers": controllers,
            "brokers": {str(b.broker_id): _ranges(b.features) for b in c.brokers},
            "finalized": dict(c.finalized)}


def update_answer(c: QuorumController, result: ControllerResult) -> dict[str, Any]:
    """The reference's answer in the adapter's normal form. Release 3.x: one result per feature; 4.0 on: one error
    for the request, without the sentence QuorumController.updateFeatures puts ahead of it (the adapter asks
    FeatureControlManager, beneath it)."""
    after = c.apply(result)
    out: dict[str, Any] = {"records": [[r.name, r.feature_level] for r in result.records],
                           "finalized": dict(after.finalized)}
    response = result.response
    if rules_of(c.kafka_release) == "4.0":
        message = response.message
        if message is not None and message.startswith(ALL_FAILED_PREFIX):
            message = message[len(ALL_FAILED_PREFIX):]
        out["error"] = {"code": int(response.error), "message": message if response.error else None}
    else:
        out["results"] = {r.feature: {"code": int(r.error), "message": r.message} for r in response.results}
    return out


class MetadataVersionOracle:
    """The binding (see the module docstring)."""

    protocol = "metadata_version"
    adapters_dir = "kafka_oracle/metadata_version"
    adapters = ADAPTERS
    releases = tuple(OracleRelease(r.name, r.line, r.adapter, r.tiers) for r in RELEASES)
    bugs: tuple[KafkaBug, ...] = (
        KafkaBug(
            "KAFKA-14316", "metadata_version",
            "a controller snapshot of a cluster below 3.3-IV0 with no other feature throws NoSuchElementException",
            buggy=("3.3.1",), fixed=("3.3.2",), config="preview", kinds=("featureSnapshot",), profile="kafka",
            signature=_kafka_14316,
            story="A KRaft cluster created before 3.3 stores no metadata.version (it is implied: 3.0-IV1). On 3.3.0 "
                  "and 3.3.1 FeatureControlIterator.hasNext() counts the metadata.version record still to write while "
                  "next() skips it below 3.3-IV0: with no other feature finalized, the controller's first snapshot "
                  "of the upgraded cluster throws NoSuchElementException.",
            source="KAFKA-14316 (apache/kafka #12765, released in 3.3.2)"),
    )

    def config_for(self, config: Any, release: OracleRelease) -> Any:
        r = _BY_NAME[release.name]
        if not isinstance(config, MetadataVersionConfig):
            raise ValueError(f"not a metadata_version config: {type(config).__name__}")
        c = dataclasses.replace(config, profile="kafka", kafka_release=r.rules)
        # The newest level the row reaches: the release's latest production level, or the newest the reference's
        # catalog knows (it ends at 4.1-IV1: a later release is checked on the levels both know).
        newest = min(r.latest_production, KAFKA_CATALOG.latest)
        if config.catalog == "example":
            base = newest - _EXAMPLE_LEVELS  # example level k stands for Kafka level base + k
            if config.initial_level == 0 and r.minimum > 1:
                raise ValueError(f"a preview cluster (no metadata.version stored) cannot start on Kafka {r.name}, "
                                 f"whose first metadata.version is level {r.minimum}")
            if base + 1 < r.minimum:
                raise ValueError(f"Kafka {r.name} has fewer than {_EXAMPLE_LEVELS} metadata.versions")

            def level(k: int) -> int:
                return k if k == 0 else base + k

            # A binary that reads the example's first version reads every version of the release from its first.
            softwares = tuple(Software(s.name, r.minimum if s.min_level == 1 else level(s.min_level),
                                       level(s.max_level)) for s in config.softwares)
            c = dataclasses.replace(
                c, catalog="kafka", softwares=softwares,
                initial_level=None if config.initial_level is None else level(config.initial_level),
                levels=tuple(level(k) for k in (config.levels or range(1, _EXAMPLE_LEVELS + 1))),
                record_levels=tuple(level(k) for k in config.record_levels))
        elif config.catalog != "kafka":
            raise ValueError(f"catalog {config.catalog!r} stands for no Kafka release")
        top = max(s.max_level for s in c.softwares)
        if top > newest:
            raise ValueError(f"software up to metadata.version level {top} is newer than Kafka {r.name}, whose "
                             f"latest production level is {r.latest_production}")
        low = min(s.min_level for s in c.softwares)
        if low < r.minimum:
            raise ValueError(f"software from level {low} is older than Kafka {r.name}'s first level {r.minimum}")
        return c

    def questions(self, system: Any, state: Any, release: OracleRelease) -> Iterable[Question]:
        assert isinstance(system, MetadataVersionSystem)
        r = _BY_NAME[release.name]
        out: list[Question] = []
        if state in initial_states(system):
            out.append(Question("catalog", {"op": "catalog"}, self._catalog_expected(system, r)))
            cat = system.catalog
            if cat.latest_production_for(r.rules) == r.latest_production:
                # QuorumFeatures' default local range (what a controller binary supports unless configured
                # otherwise), at the releases whose catalog the rules are: the rules' release itself (3.3.x, 3.9.x,
                # 4.0.x). Unstable versions off: with them on, Kafka 3.9 ends at its own last member while the
                # reference's 3.9 rules keep the catalog's later levels (catalog.py, KafkaRelease).
                rng = QuorumFeatures.default_feature_map(cat, False, r.rules)
                out.append(Question("quorumFeatures.default", {"op": "defaultFeatures", "enableUnstable": False},
                                    {"features": {name: [v.min, v.max] for name, v in rng}}))
                out.extend(self._parse_questions(r))
            out.extend(self._bootstrap_questions(system, state, r))
        has_quorum = state.leader >= 0 and sum(1 for v in state.voters if v.status.name == "RUNNING") * 2 > len(
            state.voters)
        if has_quorum:
            # What the controller's decisions read of the state (MetadataVersionSystem.controller): states that
            # agree on it share the same Question objects, which the check compares once.
            key = (release.name, state.leader, tuple(v.software for v in state.voters),
                   tuple((b.registration, b.fenced) for b in state.brokers), state.level)
            memo: dict[tuple[Any, ...], tuple[Question, ...]] = system.__dict__.setdefault("_memo_oracle_questions", {})
            asked = memo.get(key)
            if asked is None:
                asked = memo[key] = tuple(self._controller_questions(system, state, r))
            out.extend(asked)
        return out

    @staticmethod
    def _parse_questions(r: _Release) -> Iterable[Question]:
        """MetadataVersion.fromVersionString and fromFeatureLevel at the rules' own release (3.3.x, 3.9.x, 4.0.x,
        and the 4.1 .. 4.4 lines): every member's name and every bare release the release has, texts that probe the
        segment rule and the refusal's words, with unstable versions off and on where the release's parse takes the
        flag (4.2 on); every level around the release's range. 3.9 is asked up to its latest production member:
        the reference's 3.9 rules carry testing levels Kafka 3.9's enum does not have (catalog.LATEST_TESTING_3_9)."""
        bounds = kafka_release(r.rules)
        members = [m for m in versions(r.rules)
                   if m.feature_level <= r.latest_production or rules_of(r.rules) == "4.0"]
        texts = [m.version_string for m in members] + sorted({m.release for m in members})
        texts += ["9.9", "3.10", "4.5", "3.3.1", "0.10.0.1", "3.3-IV9", f"{members[-1].version_string}.1", "3.", "",
                  "3..3"]
        for text in dict.fromkeys(texts):
            for unstable in ((False, True) if bounds.stable_parse else (False,)):
                try:
                    mv = from_version_string(text, r.rules, unstable)
                    expected: dict[str, Any] = {"version": mv.version(), "level": mv.feature_level}
                except ValueError as e:
                    expected = {"error": str(e)}
                yield Question("parseVersion", {"op": "parseVersion", "text": text, "unstable": unstable}, expected)
        top = max(m.feature_level for m in members)
        for level in [*range(-2, top + 3), 999]:
            try:
                mv = from_feature_level(level, r.rules, r.wording)
                expected = {"version": mv.version(), "level": mv.feature_level}
            except ValueError as e:
                expected = {"error": str(e)}
            yield Question("fromFeatureLevel", {"op": "fromFeatureLevel", "level": level}, expected)

    @staticmethod
    def _bootstrap_questions(system: MetadataVersionSystem, state: Any, r: _Release) -> Iterable[Question]:
        """How the cluster's first controller starts: ``BootstrapMetadata.fromVersion`` of every level the release
        has up to the newest the row reaches (the format command's; refused below MINIMUM_BOOTSTRAP_VERSION), and
        from 3.6 ``ActivationRecordsGenerator.generate`` for the config's start: an empty log bootstrapped at its
        level, or a preview cluster's log, which holds records but no FeatureLevelRecord."""
        cat = system.catalog
        for level in range(r.minimum, min(r.latest_production, KAFKA_CATALOG.latest) + 1):
            try:
                record = bootstrap_metadata(level, cat, _SOURCE, r.rules if r.wording is None else r.wording)
                expected: dict[str, Any] = {"metadataVersion": record.feature_level,
                                            "records": [[record.name, record.feature_level]]}
            except ValueError as e:
                expected = {"exception": "java.lang.RuntimeException", "message": str(e)}
            yield Question("bootstrapMetadata", {"op": "bootstrapMetadata", "level": level, "source": _SOURCE},
                           expected)
        if r.activation:
            preview = system.config.initial_level == 0
            meta = MetaProperties("rollcheck", None if preview else state.log[0])
            written = bootstrap_metadata_version(meta, cat, log_is_empty=not preview)
            start = activation_metadata_version(meta, cat, log_is_empty=not preview)
            # A preview cluster's bootstrap is not read (its log is not empty): any level BootstrapMetadata takes.
            extra = {"bootstrapLevel": cat.bootstrap_floor} if preview else {}
            yield Question("activation", {"op": "activation", "empty": not preview, "level": state.log[0],
                                          "source": _SOURCE, **extra},
                           {"records": [] if written is None else [[written.name, written.feature_level]],
                            "metadataVersion": start}, action="the first controller's activation")

    @staticmethod
    def _controller_questions(system: MetadataVersionSystem, state: Any, r: _Release) -> Iterable[Question]:
        c = system.controller(state)
        view = controller_view(c)
        registrar = c if r.registration is None else dataclasses.replace(c, kafka_release=r.registration)
        if r.snapshot:
            records = feature_snapshot_records(c.finalized, c.metadata_version, system.catalog.bootstrap_floor)
            yield Question("featureSnapshot", {"op": "featureSnapshot", **view},
                           {"records": [[x.name, x.feature_level] for x in records]})
        for name in sorted(system.softwares):
            # A broker of this software registering now (the RegisterBroker action's request, one per software:
            # the controller's check reads only the offered range and the finalized levels).
            sw = system.softwares[name]
            offered = ((FEATURE_NAME, VersionRange(sw.min_level, sw.max_level)),)
            reply, _ = registrar.register_broker(BrokerRegistrationRequest(len(state.voters), offered))
            yield Question("registerBroker", {"op": "registerBroker", **view, "brokerId": len(state.voters),
                                              "features": _ranges(offered)},
                           {"error": {"code": int(reply.error), "message": reply.message}},
                           action=f"RegisterBroker(software={name})")
        for level, downgrade, dry, label in system._requests:
            req = request(FEATURE_NAME, level, downgrade, dry_run=dry)
            update = req.feature_updates[0]
            yield Question("updateFeatures", {"op": "updateFeatures", **view, "validateOnly": dry, "updates": [
                {"feature": FEATURE_NAME, "level": level, "upgradeType": int(update.upgrade_type)}]},
                update_answer(c, c.update_features(req)), action=str(label))

    @staticmethod
    def _catalog_expected(system: MetadataVersionSystem, r: _Release) -> dict[str, Any]:
        """The reference's catalog as the release's adapter reports it, production levels only (a level still in
        development changes between branches: 3.7's 3.8-IV0 changed the metadata, 3.9's did not)."""
        cat = system.catalog
        floor = cat.minimum_for(r.rules) if rules_of(r.rules) == "4.0" else cat.bootstrap_floor
        return {"minimum": cat.minimum_for(r.rules), "minimumBootstrap": floor,
                "latestProduction": r.latest_production,
                "versions": [{"level": lvl, "version": cat.label(lvl),
                              "didMetadataChange": cat.did_metadata_change(lvl)}
                             for lvl in cat.levels if cat.minimum_for(r.rules) <= lvl <= r.latest_production]}


    def compare(self, question: Question, answer: Any) -> str | None:
        if question.kind == "activation" and isinstance(answer, Mapping) and "records" in answer:
            # The FeatureLevelRecords only: the transaction markers and ZkMigrationStateRecord are the zk_migration
            # binding's (activationRecords), 4.x's min.insync.replicas ConfigRecord is not modelled.
            answer = {**answer, "records": [x for x in answer["records"] if len(x) == 2]}
        if question.kind == "bootstrapMetadata" and isinstance(answer, Mapping) and "exception" in answer:
            answer = {k: answer.get(k) for k in ("exception", "message")}
        if question.kind == "catalog" and isinstance(answer, Mapping) and "versions" in answer:
            # Production levels only, and those the reference's catalog knows (a newer release's later levels are
            # listed as not modelled in docs/kafka-oracle.md).
            answer = {**{k: answer.get(k) for k in ("minimum", "minimumBootstrap", "latestProduction")},
                      "versions": [{k: v[k] for k in ("level", "version", "didMetadataChange")}
                                   for v in answer["versions"] if v.get("production")
                                   and v.get("level", 0) <= KAFKA_CATALOG.latest]}
        if answer == question.expected:
            return None
        return first_difference(question.expected, answer)




ORACLE = MetadataVersionOracle()
