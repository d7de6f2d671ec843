package org.apache.kafka.controller;

import java.util.ArrayList;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.NodeApiVersions;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;
import rollcheck.oracle.Handler;

import static org.apache.kafka.controller.RollcheckRequests.byId;
import static org.apache.kafka.controller.RollcheckRequests.error;
import static org.apache.kafka.controller.RollcheckRequests.ids;
import static org.apache.kafka.controller.RollcheckRequests.ranges;
import static org.apache.kafka.controller.RollcheckRequests.replayed;

/** Kafka 3.3-3.6 (API epoch kraft-3.3): updateFeatures takes the brokers' ranges as an argument and QuorumFeatures
 *  reads the other controllers' ranges from ApiVersions (the package-private QuorumFeatures(int, ApiVersions, Map,
 *  List); metadata/.../controller/{FeatureControlManager,QuorumFeatures}.java at 3.3.0..3.6.2); updateFeatures
 *  answers one ApiError per feature. MetadataVersion has no production flag before 3.7: every level is production. Declared in Kafka's
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
                return RollcheckRegistration.registerBroker(manager(request), request);
            case "featureSnapshot":
                return featureSnapshot(request);
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
            v.put("production", Boolean.TRUE);
            versions.add(v);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("versions", versions);
        out.put("minimum", (long) MetadataVersion.MINIMUM_KRAFT_VERSION.featureLevel());
        out.put("minimumBootstrap", (long) MetadataVersion.MINIMUM_BOOTSTRAP_VERSION.featureLevel());
        out.put("latestProduction", (long) MetadataVersion.latest().featureLevel());
        out.put("latestTesting", (long) MetadataVersion.latest().featureLevel());
        return out;
    }

    /** The request: "nodeId", "quorum" (voter ids), "local" (this controller's ranges), "controllers" (the other
     *  controllers' ranges by id, as their ApiVersions advertise them), "brokers" (registered brokers' ranges by id, fenced or not: Kafka reads every
     *  registration), "finalized" (levels replayed first), "updates" [{feature, level, upgradeType}],
     *  "validateOnly". The answer: per-feature results, the records written and the finalized levels after
     *  replaying them. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> updateFeatures(Map<String, Object> request) {
        Map<Integer, Map<String, VersionRange>> brokers = byId(request.get("brokers"));
        FeatureControlManager fcm = manager(request);
        Map<String, Short> updates = new LinkedHashMap<>();
        Map<String, FeatureUpdate.UpgradeType> types = new LinkedHashMap<>();
        for (Object o : (List<Object>) request.get("updates")) {
            Map<String, Object> u = (Map<String, Object>) o;
            String name = (String) u.get("feature");
            updates.put(name, ((Long) u.get("level")).shortValue());
            types.put(name, FeatureUpdate.UpgradeType.fromCode(((Long) u.get("upgradeType")).intValue()));
        }
        ControllerResult<Map<String, ApiError>> result =
            fcm.updateFeatures(updates, types, brokers, Boolean.TRUE.equals(request.get("validateOnly")));
        Map<String, Object> results = new LinkedHashMap<>();
        for (Map.Entry<String, ApiError> e : result.response().entrySet()) {
            results.put(e.getKey(), error(e.getValue()));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("results", results);
        out.putAll(replayed(fcm, result.records()));
        return out;
    }

    /** A FeatureControlManager whose QuorumFeatures sees each other controller of "controllers" through ApiVersions
     *  (as NodeApiVersions with those supported features), at the "finalized" levels (replayed). */
    @SuppressWarnings("unchecked")
    static FeatureControlManager manager(Map<String, Object> request) {
        ApiVersions apiVersions = new ApiVersions();
        for (Map.Entry<Integer, Map<String, VersionRange>> e : byId(request.get("controllers")).entrySet()) {
            List<ApiVersionsResponseData.SupportedFeatureKey> keys = new ArrayList<>();
            for (Map.Entry<String, VersionRange> f : e.getValue().entrySet()) {
                keys.add(new ApiVersionsResponseData.SupportedFeatureKey().setName(f.getKey())
                    .setMinVersion(f.getValue().min()).setMaxVersion(f.getValue().max()));
            }
            apiVersions.update(String.valueOf(e.getKey()), nodeApiVersions(keys));
        }
        int nodeId = ((Long) request.get("nodeId")).intValue();
        QuorumFeatures qf = new QuorumFeatures(nodeId, apiVersions, ranges(request.get("local")), ids(request.get("quorum")));
        FeatureControlManager fcm = new FeatureControlManager.Builder().setQuorumFeatures(qf).build();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) request.get("finalized")).entrySet()) {
            fcm.replay(new FeatureLevelRecord().setName(e.getKey()).setFeatureLevel(((Long) e.getValue()).shortValue()));
        }
        return fcm;
    }

    /** NodeApiVersions(apis, features) in 3.3-3.4, (apis, features, zkMigrationEnabled) in 3.5-3.6. */
    static NodeApiVersions nodeApiVersions(List<ApiVersionsResponseData.SupportedFeatureKey> keys) {
        try {
            for (Constructor<?> c : NodeApiVersions.class.getConstructors()) {
                Class<?>[] p = c.getParameterTypes();
                if (p.length == 2 && p[1] == java.util.Collection.class) {
                    return (NodeApiVersions) c.newInstance(Collections.emptyList(), keys);
                }
                if (p.length == 3 && p[2] == boolean.class) {
                    return (NodeApiVersions) c.newInstance(Collections.emptyList(), keys, false);
                }
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        throw new IllegalStateException("no known NodeApiVersions constructor");
    }

    /** The feature records a snapshot at this state holds: FeatureControlManager.iterator(epoch), which only 3.3.x
     *  has (3.4 writes snapshots from the MetadataImage). Where it throws (KAFKA-14316, 3.3.0-3.3.1) the loop
     *  answers the exception. */
    @SuppressWarnings("unchecked")
    static Object featureSnapshot(Map<String, Object> request) throws Exception {
        FeatureControlManager fcm = manager(request);
        Method m = FeatureControlManager.class.getDeclaredMethod("iterator", long.class);
        m.setAccessible(true);
        Iterator<List<ApiMessageAndVersion>> it = (Iterator<List<ApiMessageAndVersion>>) m.invoke(fcm, Long.MAX_VALUE);
        List<Object> records = new ArrayList<>();
        while (it.hasNext()) {
            for (ApiMessageAndVersion r : it.next()) {
                FeatureLevelRecord f = (FeatureLevelRecord) r.message();
                records.add(List.of(f.name(), (long) f.featureLevel()));
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("records", records);
        return out;
    }
}
