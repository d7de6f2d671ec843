package org.apache.kafka.controller;

import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.MetadataVersion;

/** QuorumFeatures' default local feature ranges for every metadata_version adapter, reached by name:
 *  defaultFeatureMap() in 3.3-3.6, defaultFeatureMap(boolean enableUnstable) in 3.7-3.9,
 *  defaultSupportedFeatureMap(boolean) from 4.0 (metadata/.../controller/QuorumFeatures.java). Only metadata.version
 *  is answered: the reference models no other feature (kraft.version, group.version, transaction.version, ...). */
final class RollcheckDefaults {
    private RollcheckDefaults() {
    }

    /** The request: "enableUnstable" (ignored where the method takes none); the answer: {"features": {name: [min,
     *  max]}}. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> defaultFeatures(Map<String, Object> request) throws Exception {
        boolean unstable = Boolean.TRUE.equals(request.get("enableUnstable"));
        Map<String, VersionRange> map = null;
        for (Method m : QuorumFeatures.class.getMethods()) {
            if (!m.getName().equals("defaultFeatureMap") && !m.getName().equals("defaultSupportedFeatureMap")) {
                continue;
            }
            map = (Map<String, VersionRange>) (m.getParameterCount() == 0 ? m.invoke(null) : m.invoke(null, unstable));
            break;
        }
        if (map == null) {
            throw new IllegalStateException("no known QuorumFeatures default feature map");
        }
        Map<String, Object> features = new TreeMap<>();
        VersionRange mv = map.get(MetadataVersion.FEATURE_NAME);
        if (mv != null) {
            features.put(MetadataVersion.FEATURE_NAME, List.of((long) mv.min(), (long) mv.max()));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("features", features);
        return out;
    }
}
