package org.apache.kafka.controller;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import rollcheck.oracle.Handler;

/** What every zk_migration epoch's handler (org.apache.kafka.controller.RollcheckZkMigration) shares: the ops all
 *  epochs answer, the three RollcheckZkState asks the same way and the controller quorum's readiness, which each
 *  epoch asks of its own release ({@link #readiness}: KRaftMigrationDriver's 3.4 stub, QuorumFeatures over
 *  ApiVersions in 3.5 / 3.6, over controller registrations from 3.7). An epoch with more ops adds them in
 *  {@link #other} (shared-activation's RollcheckZkMigrationActivation for 3.6+). */
public abstract class RollcheckZkMigrationBase implements Handler {
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
                return readiness(request);
            default:
                return other(op, request);
        }
    }

    /** The release's answer to "is the controller quorum ready for the migration": {"ready", "reason"}. */
    protected abstract Map<String, Object> readiness(Map<String, Object> request) throws Exception;

    /** An op only this epoch answers; the base knows none. */
    protected Object other(String op, Map<String, Object> request) throws Exception {
        throw new IllegalArgumentException("unknown op " + op);
    }

    /** The request's "quorum": the voters' ids. */
    @SuppressWarnings("unchecked")
    static List<Integer> quorum(Map<String, Object> request) {
        List<Integer> quorum = new ArrayList<>();
        for (Object o : (List<Object>) request.get("quorum")) {
            quorum.add(((Long) o).intValue());
        }
        return quorum;
    }

    /** QuorumFeatures.reasonAllControllersZkMigrationNotReady's Optional reason as {"ready", "reason"}. */
    static Map<String, Object> readinessAnswer(Optional<String> reason) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("ready", !reason.isPresent());
        out.put("reason", reason.orElse(null));
        return out;
    }
}
