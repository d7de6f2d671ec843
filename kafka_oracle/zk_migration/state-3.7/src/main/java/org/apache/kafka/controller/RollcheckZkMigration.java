package org.apache.kafka.controller;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import rollcheck.oracle.Handler;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.metadata.ControllerRegistration;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.MetadataVersion;

/** Kafka 3.7.x - 3.9.x (API epoch state-3.7): QuorumFeatures.reasonAllControllersZkMigrationNotReady(metadata.version,
 *  controller registrations) (metadata/.../controller/QuorumFeatures.java at 3.7.0); ActivationRecordsGenerator. */
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
            case "activationRecords":
                return RollcheckActivation.activationRecords(request);
            case "registerBroker":
                return RollcheckZkRegistration.registerBroker(request);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    /** The request: "nodeId", "quorum", "level" (the image's metadata.version), "controllers" (each registered
     *  controller's ZkMigrationReady, by id). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> readiness(Map<String, Object> request) {
        Map<String, VersionRange> local = new HashMap<>();
        local.put(MetadataVersion.FEATURE_NAME, VersionRange.of(MetadataVersion.MINIMUM_KRAFT_VERSION.featureLevel(),
            MetadataVersion.latestProduction().featureLevel()));
        List<Integer> quorum = new ArrayList<>();
        for (Object o : (List<Object>) request.get("quorum")) {
            quorum.add(((Long) o).intValue());
        }
        Map<Integer, ControllerRegistration> controllers = new HashMap<>();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) request.get("controllers")).entrySet()) {
            int id = Integer.parseInt(e.getKey());
            controllers.put(id, new ControllerRegistration.Builder().setId(id)
                .setIncarnationId(new Uuid(0L, id + 1L)).setZkMigrationReady(Boolean.TRUE.equals(e.getValue()))
                .setListeners(new HashMap<>()).setSupportedFeatures(local).build());
        }
        QuorumFeatures qf = new QuorumFeatures(((Long) request.get("nodeId")).intValue(), local, quorum);
        MetadataVersion mv = MetadataVersion.fromFeatureLevel(((Long) request.get("level")).shortValue());
        Optional<String> reason = qf.reasonAllControllersZkMigrationNotReady(mv, controllers);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("ready", !reason.isPresent());
        out.put("reason", reason.orElse(null));
        return out;
    }
}
