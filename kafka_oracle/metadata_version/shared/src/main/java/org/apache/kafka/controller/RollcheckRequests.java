package org.apache.kafka.controller;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.ApiMessageAndVersion;

/** What every metadata_version adapter (kraft-3.3 .. kraft-4.1) reads from a request and writes into an answer, in
 *  calls whose signatures have not changed since 3.3: VersionRange.of, ApiError, FeatureControlManager.replay and
 *  finalizedFeatures. Declared in Kafka's controller package, as the adapters are (replay is package-private). */
final class RollcheckRequests {
    private RollcheckRequests() {
    }

    @SuppressWarnings("unchecked")
    static Map<String, VersionRange> ranges(Object json) {
        Map<String, VersionRange> out = new TreeMap<>();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) json).entrySet()) {
            List<Object> r = (List<Object>) e.getValue();
            out.put(e.getKey(), VersionRange.of(((Long) r.get(0)).intValue(), ((Long) r.get(1)).intValue()));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static Map<Integer, Map<String, VersionRange>> byId(Object json) {
        Map<Integer, Map<String, VersionRange>> out = new TreeMap<>();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) json).entrySet()) {
            out.put(Integer.valueOf(e.getKey()), ranges(e.getValue()));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static List<Integer> ids(Object json) {
        List<Integer> out = new ArrayList<>();
        for (Object o : (List<Object>) json) {
            out.add(((Long) o).intValue());
        }
        return out;
    }

    static Map<String, Object> error(ApiError e) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("code", (long) e.error().code());
        out.put("message", e.message());
        return out;
    }

    /** A record other than FeatureLevelRecord (4.1+: a NoOpRecord for kraft.version) is listed by its type. */
    static Map<String, Object> replayed(FeatureControlManager fcm, List<ApiMessageAndVersion> records) {
        List<Object> written = new ArrayList<>();
        for (ApiMessageAndVersion r : records) {
            if (!(r.message() instanceof FeatureLevelRecord)) {
                written.add(List.of(r.message().getClass().getSimpleName()));
                continue;
            }
            FeatureLevelRecord f = (FeatureLevelRecord) r.message();
            written.add(List.of(f.name(), (long) f.featureLevel()));
            fcm.replay(f);
        }
        Map<String, Object> finalized = new TreeMap<>();
        org.apache.kafka.metadata.FinalizedControllerFeatures features = fcm.finalizedFeatures(Long.MAX_VALUE);
        for (String name : features.featureNames()) {
            finalized.put(name, (long) features.get(name).get());
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("records", written);
        out.put("finalized", finalized);
        return out;
    }
}
