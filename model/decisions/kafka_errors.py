"""Kafka's error codes (clients/src/main/java/org/apache/kafka/common/protocol/Errors.java), shared by the
UpdateFeatures (features) and metadata.version decision rules: the rules' own copy, so a reference whose code
table drifts from Kafka's disagrees (``code_table_case`` compares the reference's enum with it)."""

from __future__ import annotations

KAFKA_ERRORS = {"NONE": 0, "CLUSTER_AUTHORIZATION_FAILED": 31, "UNSUPPORTED_VERSION": 35, "NOT_CONTROLLER": 41,
                "INVALID_REQUEST": 42, "INVALID_UPDATE_VERSION": 95, "FEATURE_UPDATE_FAILED": 96}
INVALID_REQUEST, FEATURE_UPDATE_FAILED = KAFKA_ERRORS["INVALID_REQUEST"], KAFKA_ERRORS["FEATURE_UPDATE_FAILED"]
CLUSTER_AUTHORIZATION_FAILED = KAFKA_ERRORS["CLUSTER_AUTHORIZATION_FAILED"]
NOT_CONTROLLER = KAFKA_ERRORS["NOT_CONTROLLER"]
