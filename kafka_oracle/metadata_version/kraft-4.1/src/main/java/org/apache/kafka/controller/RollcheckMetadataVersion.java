package org.apache.kafka.controller;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;
import rollcheck.oracle.Handler;

import static org.apache.kafka.controller.RollcheckRequests.error;
import static org.apache.kafka.controller.RollcheckRequests.replayed;

/** Kafka 4.1+ (API epoch kraft-4.1): as kraft-4.0, but updateFeatures takes the controller's claimed epoch (for
 *  kraft.version upgrades through a KRaftVersionAccessor) and FeatureControlManager holds no metadata.version until
 *  a FeatureLevelRecord is replayed (metadata/.../controller/FeatureControlManager.java at 4.1.0). No LogContext is
 *  named here: 4.4 moved it to org.apache.kafka.common.utils.internals, and the Builder's default serves. Declared in Kafka's
 *  package to reach the package-private FeatureControlManager.Builder and updateFeatures, as Kafka's tests do. */
public final class RollcheckMetadataVersion implements Handler {
    @Override
    public Object handle(Map<String, Object> request) throws Exception {
        String op = (String) request.get("op");
        switch (op) {
            case "parseVersion":
                return RollcheckParse.parseVersion(request);
            case "fromFeatureLevel":
                return RollcheckParse.fromFeatureLevel(request);
            case "catalog":
                return catalog();
            case "updateFeatures":
                return updateFeatures(request);
            case "defaultFeatures":
                return RollcheckDefaults.defaultFeatures(request);
            case "registerBroker":
                return RollcheckRegistration.registerBroker(RollcheckManagers.manager(request), request);
            case "bootstrapMetadata":
                return RollcheckBootstrap.bootstrapMetadata(request);
            case "activation":
                return RollcheckBootstrap.activation(request);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    /** Every MetadataVersion of the release with a KRaft feature level. */
    static Map<String, Object> catalog() {
        List<Object> versions = new ArrayList<>();
        for (MetadataVersion mv : MetadataVersion.VERSIONS) {
            if (mv.featureLevel() < 1) {
                continue;
            }
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("level", (long) mv.featureLevel());
            v.put("version", mv.version());
            v.put("didMetadataChange", mv.didMetadataChange());
            v.put("production", mv.isProduction());
            versions.add(v);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("versions", versions);
        out.put("minimum", (long) MetadataVersion.MINIMUM_VERSION.featureLevel());
        out.put("minimumBootstrap", (long) MetadataVersion.MINIMUM_VERSION.featureLevel());
        out.put("latestProduction", (long) MetadataVersion.latestProduction().featureLevel());
        out.put("latestTesting", (long) MetadataVersion.latestTesting().featureLevel());
        return out;
    }

    /** The request: "nodeId", "quorum" (voter ids), "local" (this controller's ranges), "controllers" (registered
     *  controllers' ranges by id), "brokers" (registered brokers' ranges by id, fenced or not: Kafka reads every
     *  registration), "finalized" (levels replayed first), "updates" [{feature, level, upgradeType}],
     *  "validateOnly". The answer: per-feature results, the records written and the finalized levels after
     *  replaying them. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> updateFeatures(Map<String, Object> request) {
        FeatureControlManager fcm = RollcheckManagers.manager(request);
        Map<String, Short> updates = new LinkedHashMap<>();
        Map<String, FeatureUpdate.UpgradeType> types = new LinkedHashMap<>();
        for (Object o : (List<Object>) request.get("updates")) {
            Map<String, Object> u = (Map<String, Object>) o;
            String name = (String) u.get("feature");
            updates.put(name, ((Long) u.get("level")).shortValue());
            types.put(name, FeatureUpdate.UpgradeType.fromCode(((Long) u.get("upgradeType")).intValue()));
        }
        ControllerResult<ApiError> result =
            fcm.updateFeatures(updates, types, Boolean.TRUE.equals(request.get("validateOnly")), 1);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("error", error(result.response()));
        out.putAll(replayed(fcm, result.records()));
        return out;
    }
}
