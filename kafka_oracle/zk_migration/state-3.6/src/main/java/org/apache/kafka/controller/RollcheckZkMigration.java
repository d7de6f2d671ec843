package org.apache.kafka.controller;

import java.util.Map;

/** Kafka 3.6.x (API epoch state-3.6): as state-3.5 (the readiness from ApiVersions, shared-apiversions/), and
 *  ActivationRecordsGenerator (new in 3.6.0; the ops RollcheckZkMigrationActivation adds, shared-activation/). */
public final class RollcheckZkMigration extends RollcheckZkMigrationActivation {
    @Override
    protected Map<String, Object> readiness(Map<String, Object> request) {
        return RollcheckApiVersionsReadiness.readiness(request);
    }
}
