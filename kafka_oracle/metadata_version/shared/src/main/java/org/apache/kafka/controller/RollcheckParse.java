package org.apache.kafka.controller;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.kafka.server.common.MetadataVersion;

/** MetadataVersion's look-ups for every metadata_version adapter, reached by name: fromVersionString(String) up to
 *  4.1, fromVersionString(String, boolean unstableFeatureVersionsEnabled) from 4.2, and fromFeatureLevel(short)
 *  (server-common/.../MetadataVersion.java). A refusal is answered as what Kafka threw: {"error": message}. */
final class RollcheckParse {
    private RollcheckParse() {
    }

    /** The request: "text", "unstable" (ignored where the method takes no flag); the answer: the member's
     *  {"version", "level"}, or {"error": message}. */
    static Map<String, Object> parseVersion(Map<String, Object> request) throws Exception {
        String text = (String) request.get("text");
        boolean unstable = Boolean.TRUE.equals(request.get("unstable"));
        try {
            Method flagged = MetadataVersion.class.getMethod("fromVersionString", String.class, boolean.class);
            return call(flagged, text, unstable);
        } catch (NoSuchMethodException e) {
            return call(MetadataVersion.class.getMethod("fromVersionString", String.class), text);
        }
    }

    /** The request: "level"; the answer as parseVersion's. */
    static Map<String, Object> fromFeatureLevel(Map<String, Object> request) throws Exception {
        short level = ((Long) request.get("level")).shortValue();
        return call(MetadataVersion.class.getMethod("fromFeatureLevel", short.class), level);
    }

    private static Map<String, Object> call(Method m, Object... args) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            MetadataVersion mv = (MetadataVersion) m.invoke(null, args);
            out.put("version", mv.version());
            out.put("level", (long) mv.featureLevel());
        } catch (InvocationTargetException e) {
            if (!(e.getCause() instanceof IllegalArgumentException)) {
                throw e;
            }
            out.put("error", e.getCause().getMessage());
        }
        return out;
    }
}
