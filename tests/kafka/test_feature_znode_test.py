"""Kafka's ``FeatureZNodeTest``, transcribed as facts against ``reference_impl/features/api.py``.

Read first-hand: ``core/src/test/scala/kafka/zk/FeatureZNodeTest.scala`` at Apache Kafka tag ``2.8.2``
(commit 3146c6ff4a24cc24d6039037e99edc8930d1958a); the file is the same blob
(9344724ff158cebde1280c810baeb8fddd45a4d2) at tag ``2.8.0`` (commit ebb1d6e21cc9213071ee1c6a15ec3411fc215b81).
Each case id is the Kafka test method's name; a method's several inputs are its sub-cases, and the JSON
inputs are Kafka's templates filled as the test fills them.

These are Kafka's encode/decode, so they run under the ``kafka`` profile (schema version 1, the default of
``FeatureZNode.encode`` / ``decode``). Kafka asserts ``IllegalArgumentException``; ours is ``ValueError`` and
must not be the ``JsonMappingException`` subclass (Jackson's exception is not an ``IllegalArgumentException``
in Kafka). The message prefixes checked on top are ``FeatureZNode.decode``'s
(``core/src/main/scala/kafka/zk/ZkData.scala``, same tag), which Kafka's test does not check.

Not expressible yet: none.
"""

from __future__ import annotations

import re

import pytest

from reference_impl.features.api import (
    FeatureZNode,
    FeatureZNodeStatus,
    JsonMappingException,
    finalized_features,
)

_TWO = {"feature1": (1, 2), "feature2": (2, 4)}
_TWO_JSON = ('{"feature1": {"min_version_level": 1, "max_version_level": 2}, '
             '"feature2": {"min_version_level": 2, "max_version_level": 4}}')
# testDecodeSuccess's and testDecodeFailOnInvalidVersionAndStatus' templates, with their line breaks.
_SUCCESS_TEMPLATE = '{{\n      "version":1,\n      "status":1,\n      "features":{}\n    }}'
_VERSION_STATUS_TEMPLATE = '{{\n      "version":{},\n      "status":{},\n      "features":' + _TWO_JSON.replace(
    "{", "{{").replace("}", "}}") + "\n    }}"
_FEATURES_TEMPLATE = '{{\n      "version":1,\n      "status":1{}\n    }}'


@pytest.mark.parametrize(("status", "features"), [
    pytest.param(FeatureZNodeStatus.ENABLED, _TWO, id="testEncodeDecode"),
])
def test_encode_decode(status: FeatureZNodeStatus, features: dict[str, tuple[int, int]]) -> None:
    node = FeatureZNode(status, finalized_features(features))
    assert FeatureZNode.decode(node.encode()) == node


# (the "features" value, expected status, expected finalized features); module constants, so that
# test_feature_znode_test_on_the_jars.py puts the same cases to Kafka's FeatureZNode.
DECODE_SUCCESS = {"testDecodeSuccess": ((_TWO_JSON, FeatureZNodeStatus.ENABLED, _TWO),
                                        ("{}", FeatureZNodeStatus.ENABLED, {}))}


@pytest.mark.parametrize("cases", [pytest.param(c, id=k) for k, c in DECODE_SUCCESS.items()])
def test_decode_success(cases: tuple[tuple[str, FeatureZNodeStatus, dict[str, tuple[int, int]]], ...]) -> None:
    for features_json, status, features in cases:
        node = FeatureZNode.decode(_SUCCESS_TEMPLATE.format(features_json).encode("utf-8"))
        assert node.status is status
        assert node.features == finalized_features(features)


# (JSON text, ZkData's IllegalArgumentException message; %s stands for the JSON text) per Kafka test method.
DECODE_FAILS = {
    "testDecodeFailOnInvalidVersionAndStatus": (
        (_VERSION_STATUS_TEMPLATE.format(FeatureZNode.V1 - 1, 1), "Unsupported version: 0 of feature information: %s"),
        (_VERSION_STATUS_TEMPLATE.format(FeatureZNode.CURRENT_VERSION, FeatureZNodeStatus.ENABLED.value + 1),
         "Malformed status: Some(2) found in feature information: %s"),
    ),
    "testDecodeFailOnInvalidFeatures": (
        # missingFeatures
        (_FEATURES_TEMPLATE.format(""), "Features map can not be absent in: %s"),
        # malformedFeatures (not JSON)
        (_FEATURES_TEMPLATE.format(',"features":{"feature1": {"min_version_level": 1, "max_version_level": 2}, '
                                   '"partial"}'), "Failed to parse feature information: %s"),
        # invalidFeaturesMinVersionLevel
        (_FEATURES_TEMPLATE.format(',"features":{"feature1": {"min_version_level": 0, "max_version_level": 2}}'),
         "Unable to convert to finalized features from map: {feature1={min_version_level=0, max_version_level=2}}"),
        # invalidFeaturesMaxVersionLevel
        (_FEATURES_TEMPLATE.format(',"features":{"feature1": {"min_version_level": 2, "max_version_level": 1}}'),
         "Unable to convert to finalized features from map: {feature1={min_version_level=2, max_version_level=1}}"),
        # invalidFeaturesMissingMinVersionLevel
        (_FEATURES_TEMPLATE.format(',"features":{"feature1": {"max_version_level": 1}}'),
         "Unable to convert to finalized features from map: {feature1={max_version_level=1}}"),
    ),
}


@pytest.mark.parametrize("cases", [pytest.param(c, id=k) for k, c in DECODE_FAILS.items()])
def test_decode_fails(cases: tuple[tuple[str, str], ...]) -> None:
    for text, message in cases:
        expected = message % text if "%s" in message else message
        with pytest.raises(ValueError, match=f"^{re.escape(expected)}$") as caught:
            FeatureZNode.decode(text.encode("utf-8"))
        assert not isinstance(caught.value, JsonMappingException), text
