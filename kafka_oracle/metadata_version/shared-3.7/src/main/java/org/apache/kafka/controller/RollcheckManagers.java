package org.apache.kafka.controller;

import java.util.Iterator;
import java.util.Map;

import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.metadata.VersionRange;

import static org.apache.kafka.controller.RollcheckRequests.byId;
import static org.apache.kafka.controller.RollcheckRequests.ids;
import static org.apache.kafka.controller.RollcheckRequests.ranges;

/** The FeatureControlManager a request describes, for the adapters from 3.7 on (kraft-3.7, kraft-4.0, kraft-4.1),
 *  whose construction has not changed since 3.7: the public QuorumFeatures(int, Map, List) and a
 *  ClusterFeatureSupportDescriber giving the brokers' and the registered controllers' ranges
 *  (metadata/.../controller/FeatureControlManager.java at 3.7.0). */
final class RollcheckManagers {
    private RollcheckManagers() {
    }

    /** "nodeId", "quorum" (voter ids), "local" (this controller's ranges), "controllers" (registered controllers'
     *  ranges by id), "brokers" (registered brokers' ranges by id, fenced or not: Kafka reads every registration),
     *  "finalized" (levels, replayed). */
    @SuppressWarnings("unchecked")
    static FeatureControlManager manager(Map<String, Object> request) {
        Map<Integer, Map<String, VersionRange>> brokers = byId(request.get("brokers"));
        Map<Integer, Map<String, VersionRange>> controllers = byId(request.get("controllers"));
        ClusterFeatureSupportDescriber describer = new ClusterFeatureSupportDescriber() {
            @Override
            public Iterator<Map.Entry<Integer, Map<String, VersionRange>>> brokerSupported() {
                return brokers.entrySet().iterator();
            }

            @Override
            public Iterator<Map.Entry<Integer, Map<String, VersionRange>>> controllerSupported() {
                return controllers.entrySet().iterator();
            }
        };
        int nodeId = ((Long) request.get("nodeId")).intValue();
        QuorumFeatures qf = new QuorumFeatures(nodeId, ranges(request.get("local")), ids(request.get("quorum")));
        FeatureControlManager fcm = new FeatureControlManager.Builder()
            .setQuorumFeatures(qf)
            .setClusterFeatureSupportDescriber(describer)
            .build();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) request.get("finalized")).entrySet()) {
            fcm.replay(new FeatureLevelRecord().setName(e.getKey()).setFeatureLevel(((Long) e.getValue()).shortValue()));
        }
        return fcm;
    }
}
