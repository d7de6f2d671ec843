"""/features travels between the controller and the brokers as the bytes ZooKeeper holds (issue #22, item 3).

The controller writes ``FeatureZNode.encode`` of the node it decided; every reader decodes the bytes with
``FeatureZNode.decode``. A codec bug planted here (the survivors of the mutation campaign among them) must
now break a property of the ``small`` config: FEAT-13, which reads the bytes with ``json.loads``, or a
behavioural one, since a node a reader cannot decode changes what the cluster does (Kafka 2.8's listener
clears the broker's cache or exits it; the controller's election fails).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from properties.features import node_json
from reference_impl.features.api import FeatureZNode, FeatureZNodeStatus, JsonMappingException, features_to_map
from reference_impl.features.protocol import PROTOCOL
from reference_impl.features.system import FeaturesSystem, Unreadable, ZNode
from rollcheck.explore.explorer import ExplorationResult, ExploreOptions, explore

SMALL = PROTOCOL.configs["small"]
# small never has a disabled node (a new cluster, no IBP roll): the same story from an old IBP, rolled once.
SMALL_IBP_ROLL = replace(SMALL, initial_ibp=(False,), max_ibp_changes=1)

_DECODE = FeatureZNode.decode


def _explore(config: Any, profile: str) -> ExplorationResult:
    return explore(PROTOCOL.build(replace(config, profile=profile)),
                   ExploreOptions(config_name="small", stop_at_first=False))


def _json(version: object, status: object, features: object) -> bytes:
    return json.dumps({"version": version, "status": status, "features": features}, separators=(",", ":")).encode()


# ---------------------------------------------------------------- the reference

@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_the_reference_writes_kafkas_json_and_reads_it_back(profile: str) -> None:
    r = _explore(SMALL, profile)
    assert r.ok, (sorted(r.violated_ids), r.vacuous)
    assert {p.id: p.status for p in r.properties}["FEAT-13"] == "holds"
    ts = FeaturesSystem(replace(SMALL, profile=profile))
    s = next(iter(ts.initial_states()))
    (t,) = [t for a, t in ts.successors(s) if a.name == "ElectController" and a["broker"] == 0]
    features = {"group_coordinator": {"min_version_level": 1, "max_version_level": 1}}
    # Kafka's own bytes (FeatureZNode.encode at 2.8.2, checked by tests/test_features_oracle.py): Jackson writes a
    # scala mutable.HashMap's order, "features" first; the kip profile writes the KIP's order.
    written = (b'{"features":' + json.dumps(features, separators=(",", ":")).encode() + b',"version":1,"status":1}'
               if profile == "kafka" else _json(0, 1, features))
    assert t.znode == ZNode(written, 0)
    node = ts.read(t.znode)
    assert isinstance(node, FeatureZNode) and node.status is FeatureZNodeStatus.ENABLED and node.epoch == 0
    assert ts.view(t)["node"] == {"status": "ENABLED", "epoch": 0, "features": {"group_coordinator": (1, 1)}}


def test_readers_classify_what_the_decoder_refuses() -> None:
    """Kafka 2.8's FinalizedFeatureChangeListener: an IllegalArgumentException clears the cache, anything else
    (Jackson's JsonMappingException) exits the broker."""
    ts = FeaturesSystem(replace(SMALL, profile="kafka"))
    below = ts.read(ZNode(_json(0, 1, {}), 3))  # "Unsupported version: 0": IllegalArgumentException
    assert isinstance(below, Unreadable) and not below.fatal and "Unsupported version" in below.message
    missing = ts.read(ZNode(b'{"status":1,"features":{}}', 3))  # JsonObject.apply: JsonMappingException
    assert isinstance(missing, Unreadable) and missing.fatal
    assert ts.read(None) is None


def test_node_json_reads_the_shape_kafka_writes() -> None:
    ok = node_json(_json(1, 1, {"f": {"min_version_level": 1, "max_version_level": 2}}))
    assert ok.problem is None and ok.enabled and ok.features == {"f": (1, 2)}
    for bad in (_json(1, 2, {}), _json(1, True, {}), _json("1", 1, {}),
                _json(1, 0, {"f": {"min_version_level": 1, "max_version_level": 1}}),
                _json(1, 1, {"f": {"min_version_level": 0, "max_version_level": 1}}),
                _json(1, 1, {"f": {"min_version_level": 2, "max_version_level": 1}}),
                _json(1, 1, {"f": {"min_version_level": 1, "max_version_level": 1, "epoch": 0}}),
                b'{"version":1,"status":1,"features":{},"epoch":0}', b"not json", b"\xff"):
        assert node_json(bad).problem is not None, bad


# ---------------------------------------------------------------- planted codec bugs

@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_schema_version_swapped_between_profiles_breaks_feat13(profile: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The campaign's survivor at api.py schema_version (``profile != "kafka"``): each profile writes (and
    accepts) the other's schema version, encoder and decoder agreeing, so only the bytes show it."""
    monkeypatch.setattr(FeatureZNode, "schema_version", staticmethod(
        lambda profile="kafka": FeatureZNode.CURRENT_VERSION if profile != "kafka" else FeatureZNode.KIP_VERSION))
    r = _explore(SMALL, profile)
    assert r.violated_ids == {"FEAT-13"} and r.distinct_states == 25073


def test_current_version_two_breaks_feat13(monkeypatch: pytest.MonkeyPatch) -> None:
    """The campaign's survivor ``CURRENT_VERSION = 2`` (kafka profile; kip writes the KIP's 0)."""
    monkeypatch.setattr(FeatureZNode, "CURRENT_VERSION", 2)
    r = _explore(SMALL, "kafka")
    assert r.violated_ids == {"FEAT-13"}


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_status_codes_swapped_in_encode_breaks_properties(profile: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENABLED written as 0: every reader sees a disabled node, no upgrade is ever finalized."""

    def encode(self: FeatureZNode, profile: str = "kafka") -> bytes:
        return _json(FeatureZNode.schema_version(profile), 1 - self.status.value, features_to_map(self.features))

    monkeypatch.setattr(FeatureZNode, "encode", encode)
    r = _explore(SMALL, profile)
    assert r.violated_ids == {"FEAT-09", "FEAT-13"}
    assert {"FEAT-W1", "FEAT-W5"} <= set(r.vacuous)  # behaviour changed: the upgrade story never happens


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_decode_ignoring_the_status_breaks_feat13(profile: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A decoder that reads every node as ENABLED: after the IBP roll the new controller sees nothing to enable
    and leaves the disabled node it should switch (KIP "Feature ZK node status"). small has no disabled node,
    so the config is small started below the IBP and rolled once; on small itself the bug is equivalent."""

    def decode(data: bytes | str, epoch: int = 0, profile: str = "kafka") -> FeatureZNode:
        return replace(_DECODE(data, epoch, profile), status=FeatureZNodeStatus.ENABLED)

    monkeypatch.setattr(FeatureZNode, "decode", staticmethod(decode))
    r = _explore(SMALL_IBP_ROLL, profile)
    assert r.violated_ids == {"FEAT-13"}
    assert _explore(SMALL, profile).ok


def test_encoder_writing_the_kips_version_under_kafka_changes_behaviour(monkeypatch: pytest.MonkeyPatch) -> None:
    """Version 0 written under kafka, which Kafka's decoder refuses ("Unsupported version": an
    IllegalArgumentException): brokers run on with a cleared cache and without validation (FEAT-08), the
    controller's elections fail on reading back its own write."""

    def encode(self: FeatureZNode, profile: str = "kafka") -> bytes:
        return _json(0, self.status.value, features_to_map(self.features))

    monkeypatch.setattr(FeatureZNode, "encode", encode)
    r = _explore(SMALL, "kafka")
    assert r.violated_ids == {"FEAT-08", "FEAT-13"}
    assert _explore(SMALL, "kip").ok  # the KIP's own schema version


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_decoder_that_always_misses_version_leaves_the_stories_untold(profile: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The campaign's ``if "version" not in info`` forced true: every read is a JsonMappingException, fatal to
    the broker that reads and to the controller's election. Every broker ends up exited, no client learns
    anything: the witnesses FEAT-W2 and FEAT-W5 are vacuous, the run fails."""

    def decode(data: bytes | str, epoch: int = 0, profile: str = "kafka") -> FeatureZNode:
        raise JsonMappingException("No such field exists: `version`")

    monkeypatch.setattr(FeatureZNode, "decode", staticmethod(decode))
    r = _explore(SMALL, profile)
    assert not r.ok and {"FEAT-W2", "FEAT-W5"} <= set(r.vacuous)


def test_a_system_subclass_with_its_own_codec_is_read_through_it() -> None:
    """The system's only ways to the codec are ``store`` (the controller's write) and ``read``: a subclass
    writing the status swapped is caught as the monkeypatched encoder is."""

    class Swapped(FeaturesSystem):
        def store(self, node: FeatureZNode) -> ZNode:
            doc = json.loads(node.encode(self.config.profile))
            return ZNode(_json(doc["version"], 1 - doc["status"], doc["features"]), node.epoch)

    r = explore(Swapped(SMALL), ExploreOptions(config_name="small", stop_at_first=True))
    assert r.violated_ids & {"FEAT-09", "FEAT-13"}
