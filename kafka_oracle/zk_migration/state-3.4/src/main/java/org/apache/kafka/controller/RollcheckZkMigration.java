package org.apache.kafka.controller;

import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.Map;

/** Kafka 3.4.x (API epoch state-3.4): the driver's enum is MigrationState, no SYNC_KRAFT_TO_ZK; the controller
 *  quorum's readiness is KRaftMigrationDriver.isControllerQuorumReadyForMigration, a stub that returns true
 *  ("TODO implement this", metadata/.../migration/KRaftMigrationDriver.java at 3.4.0: KAFKA-14909); no
 *  ActivationRecordsGenerator (3.6.0). The ops are RollcheckZkMigrationBase's (shared/). */
public final class RollcheckZkMigration extends RollcheckZkMigrationBase {
    /** The 3.4 driver's check, which reads nothing: {"ready": its answer, "reason": null}. */
    @Override
    protected Map<String, Object> readiness(Map<String, Object> request) throws ReflectiveOperationException {
        Object driver = RollcheckZkState.bareDriver();
        Method m = driver.getClass().getDeclaredMethod("isControllerQuorumReadyForMigration");
        m.setAccessible(true);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("ready", m.invoke(driver));
        out.put("reason", null);
        return out;
    }
}
