package org.apache.kafka.controller;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.metadata.ControllerRegistration;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.MetadataVersion;

/** Kafka 3.7.x - 3.9.x (API epoch state-3.7): QuorumFeatures.reasonAllControllersZkMigrationNotReady(metadata.version,
 *  controller registrations) (metadata/.../controller/QuorumFeatures.java at 3.7.0); ActivationRecordsGenerator (the
 *  ops RollcheckZkMigrationActivation adds, shared-activation/). */
public final class RollcheckZkMigration extends RollcheckZkMigrationActivation {
    /** The request: "nodeId", "quorum", "level" (the image's metadata.version), "controllers" (each registered
     *  controller's ZkMigrationReady, by id). */
    @Override
    @SuppressWarnings("unchecked")
    protected Map<String, Object> readiness(Map<String, Object> request) {
        Map<String, VersionRange> local = new HashMap<>();
        local.put(MetadataVersion.FEATURE_NAME, VersionRange.of(MetadataVersion.MINIMUM_KRAFT_VERSION.featureLevel(),
            MetadataVersion.latestProduction().featureLevel()));
        Map<Integer, ControllerRegistration> controllers = new HashMap<>();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) request.get("controllers")).entrySet()) {
            int id = Integer.parseInt(e.getKey());
            controllers.put(id, new ControllerRegistration.Builder().setId(id)
                .setIncarnationId(new Uuid(0L, id + 1L)).setZkMigrationReady(Boolean.TRUE.equals(e.getValue()))
                .setListeners(new HashMap<>()).setSupportedFeatures(local).build());
        }
        QuorumFeatures qf = new QuorumFeatures(((Long) request.get("nodeId")).intValue(), local, quorum(request));
        MetadataVersion mv = MetadataVersion.fromFeatureLevel(((Long) request.get("level")).shortValue());
        return readinessAnswer(qf.reasonAllControllersZkMigrationNotReady(mv, controllers));
    }
}
