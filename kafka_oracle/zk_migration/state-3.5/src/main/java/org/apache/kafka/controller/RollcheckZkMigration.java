package org.apache.kafka.controller;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import rollcheck.oracle.Handler;

/** Kafka 3.5.x (API epoch state-3.5): MigrationDriverState with SYNC_KRAFT_TO_ZK (KAFKA-15010); the controller
 *  quorum's readiness from ApiVersions (KAFKA-14909); no ActivationRecordsGenerator (3.6.0). */
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
                return readiness(request);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    /** QuorumFeatures.reasonAllControllersZkMigrationNotReady() (3.5.0 - 3.6.x, KAFKA-14909): the other voters are
     *  read from ApiVersions, the local node skipped. The request: "nodeId", "quorum", "controllers" (each voter
     *  heard from: its ZkMigrationReady, sent in ApiVersionsResponse). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> readiness(Map<String, Object> request) {
        org.apache.kafka.clients.ApiVersions apiVersions = new org.apache.kafka.clients.ApiVersions();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) request.get("controllers")).entrySet()) {
            apiVersions.update(e.getKey(), new org.apache.kafka.clients.NodeApiVersions(
                java.util.Collections.emptyList(), java.util.Collections.emptyList(), Boolean.TRUE.equals(e.getValue())));
        }
        List<Integer> quorum = new ArrayList<>();
        for (Object o : (List<Object>) request.get("quorum")) {
            quorum.add(((Long) o).intValue());
        }
        QuorumFeatures qf = new QuorumFeatures(((Long) request.get("nodeId")).intValue(), apiVersions,
            QuorumFeatures.defaultFeatureMap(), quorum);
        Optional<String> reason = qf.reasonAllControllersZkMigrationNotReady();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("ready", !reason.isPresent());
        out.put("reason", reason.orElse(null));
        return out;
    }
}

