package org.apache.kafka.controller;

import java.util.Collections;
import java.util.Map;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.NodeApiVersions;

/** The controller quorum's readiness as the 3.5 and 3.6 epochs ask it (their poms only):
 *  QuorumFeatures.reasonAllControllersZkMigrationNotReady() (3.5.0 - 3.6.x, KAFKA-14909; metadata/.../controller/
 *  QuorumFeatures.java at 3.5.0 and 3.6.0): the other voters are read from ApiVersions, the local node skipped. */
final class RollcheckApiVersionsReadiness {
    private RollcheckApiVersionsReadiness() {
    }

    /** The request: "nodeId", "quorum", "controllers" (each voter heard from: its ZkMigrationReady, sent in
     *  ApiVersionsResponse). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> readiness(Map<String, Object> request) {
        ApiVersions apiVersions = new ApiVersions();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) request.get("controllers")).entrySet()) {
            apiVersions.update(e.getKey(), new NodeApiVersions(
                Collections.emptyList(), Collections.emptyList(), Boolean.TRUE.equals(e.getValue())));
        }
        QuorumFeatures qf = new QuorumFeatures(((Long) request.get("nodeId")).intValue(), apiVersions,
            QuorumFeatures.defaultFeatureMap(), RollcheckZkMigrationBase.quorum(request));
        return RollcheckZkMigrationBase.readinessAnswer(qf.reasonAllControllersZkMigrationNotReady());
    }
}
