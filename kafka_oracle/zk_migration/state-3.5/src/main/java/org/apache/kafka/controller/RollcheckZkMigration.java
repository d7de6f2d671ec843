package org.apache.kafka.controller;

import java.util.Map;

/** Kafka 3.5.x (API epoch state-3.5): MigrationDriverState with SYNC_KRAFT_TO_ZK (KAFKA-15010); the controller
 *  quorum's readiness from ApiVersions (KAFKA-14909; shared-apiversions/); no ActivationRecordsGenerator (3.6.0).
 *  The ops are RollcheckZkMigrationBase's (shared/). */
public final class RollcheckZkMigration extends RollcheckZkMigrationBase {
    @Override
    protected Map<String, Object> readiness(Map<String, Object> request) {
        return RollcheckApiVersionsReadiness.readiness(request);
    }
}
