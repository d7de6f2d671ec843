package org.apache.kafka.clients.admin;

import java.util.Map;

import org.apache.kafka.clients.admin.internals.AdminMetadataManager;
import org.apache.kafka.common.message.UpdateFeaturesRequestData;
import org.apache.kafka.common.utils.LogContext;

/** Kafka 3.3+ (API epoch zk-3.9; clients/.../admin/KafkaAdminClient.java updateFeatures at 3.9.0-rc3): the Admin
 *  client's updateFeatures before it sends, on RollcheckAdminBase's proxy network (kafka_oracle/features/shared).
 *  AdminMetadataManager takes usingBootstrapControllers; the request carries UpgradeType and ValidateOnly. */
public final class RollcheckAdmin extends RollcheckAdminBase {
    @Override
    protected AdminMetadataManager metadataManager() {
        return new AdminMetadataManager(new LogContext(), 100L, Long.MAX_VALUE / 4, false);
    }

    @Override
    protected void upgrade(UpdateFeaturesRequestData.FeatureUpdateKey k, Map<String, Object> key) {
        key.put("upgradeType", (long) k.upgradeType());
    }

    /** "updates": [{"feature", "level", "allowDowngrade"}], in order, and "validateOnly": Admin.updateFeatures of that
     *  map (each FeatureUpdate built by the (short, boolean) constructor the 2.8 client had, which maps the flag to
     *  SAFE_DOWNGRADE or UPGRADE) with UpdateFeaturesOptions.validateOnly. The answer: {"featureUpdates": [{"feature",
     *  "maxVersionLevel", "upgradeType"}], "validateOnly"} as the request data holds them, or the exception thrown
     *  before anything was sent. */
    public Map<String, Object> updateFeatures(Map<String, Object> request) throws Exception {
        UpdateFeaturesRequestData data = send(updates(request), new UpdateFeaturesOptions().timeoutMs(10000)
            .validateOnly(Boolean.TRUE.equals(request.get("validateOnly"))));
        Map<String, Object> out = answer(data);
        out.put("validateOnly", data.validateOnly());
        return out;
    }
}
