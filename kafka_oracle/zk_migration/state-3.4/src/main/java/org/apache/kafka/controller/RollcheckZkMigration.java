package org.apache.kafka.controller;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import rollcheck.oracle.Handler;

/** Kafka 3.4.x (API epoch state-3.4): the driver's enum is MigrationState, no SYNC_KRAFT_TO_ZK; the controller
 *  quorum's readiness is KRaftMigrationDriver.isControllerQuorumReadyForMigration, a stub that returns true
 *  ("TODO implement this", metadata/.../migration/KRaftMigrationDriver.java at 3.4.0: KAFKA-14909); no
 *  ActivationRecordsGenerator (3.6.0). */
public final class RollcheckZkMigration implements Handler {
    @Override
    public Object handle(Map<String, Object> request) throws Exception {
        String op = (String) request.get("op");
        switch (op) {
            case "zkMigrationState":
                return RollcheckZkState.zkMigrationState(request);
            case "driverStates":
                return RollcheckZkState.driverStates();
            case "driverStateChange":
                return RollcheckZkState.driverStateChange(request);
            case "controllerReadiness":
                return readiness();
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    /** The 3.4 driver's check, which reads nothing: {"ready": its answer, "reason": null}. */
    static Map<String, Object> readiness() throws ReflectiveOperationException {
        Object driver = RollcheckZkState.bareDriver();
        Method m = driver.getClass().getDeclaredMethod("isControllerQuorumReadyForMigration");
        m.setAccessible(true);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("ready", m.invoke(driver));
        out.put("reason", null);
        return out;
    }
}
