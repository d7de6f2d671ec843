package org.apache.kafka.clients.admin;

import java.util.Map;

import org.apache.kafka.clients.admin.internals.AdminMetadataManager;
import org.apache.kafka.common.message.UpdateFeaturesRequestData;
import org.apache.kafka.common.utils.LogContext;

/** Kafka 2.8.x and 3.2.x (API epoch zk-2.8; clients/.../admin/KafkaAdminClient.java updateFeatures at
 *  2.8.0..3.2.3): the Admin client's updateFeatures before it sends, on RollcheckAdminBase's proxy network
 *  (kafka_oracle/features/shared). AdminMetadataManager(logContext, refreshBackoffMs, metadataExpireMs); the
 *  request's key carries allowDowngrade; there is no validateOnly. */
public final class RollcheckAdmin extends RollcheckAdminBase {
    @Override
    protected AdminMetadataManager metadataManager() {
        return new AdminMetadataManager(new LogContext(), 100L, Long.MAX_VALUE / 4);
    }

    @Override
    protected void upgrade(UpdateFeaturesRequestData.FeatureUpdateKey k, Map<String, Object> key) {
        key.put("allowDowngrade", k.allowDowngrade());
    }

    /** "updates": [{"feature", "level", "allowDowngrade"}], in order: Admin.updateFeatures of that map. The answer:
     *  {"featureUpdates": [{"feature", "maxVersionLevel", "allowDowngrade"}]} as the request data holds them, or
     *  the exception thrown before anything was sent. */
    public Map<String, Object> updateFeatures(Map<String, Object> request) throws Exception {
        return answer(send(updates(request), new UpdateFeaturesOptions().timeoutMs(10000)));
    }
}
