package kafka.server;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import kafka.zk.FeatureZNode;
import kafka.zk.FeatureZNode$;
import kafka.zk.FeatureZNodeStatus;
import kafka.zk.FeatureZNodeStatus$;
import org.apache.kafka.clients.admin.RollcheckAdmin;
import org.apache.kafka.common.feature.Features;
import org.apache.kafka.common.feature.FinalizedVersionRange;
import org.apache.kafka.common.feature.SupportedVersionRange;
import rollcheck.oracle.Handler;
import rollcheck.oracle.Json;
import rollcheck.oracle.Main;
import scala.Option;

/** Kafka 2.8.x and 3.2.x in ZooKeeper mode (API epoch zk-2.8): the feature node's codec, a broker's finalized
 *  feature cache, BrokerFeatures' compatibility check, the version ranges, and the Admin client's updateFeatures
 *  before it sends (core/src/main/scala/kafka/zk/ZkData.scala FeatureZNode, kafka/server/FinalizedFeatureCache.scala,
 *  kafka/server/BrokerFeatures.scala, clients/.../common/feature/*.java, clients/.../admin/KafkaAdminClient.java at
 *  2.8.0..3.2.3: the signatures are the same at every tag). Scala objects are called through MODULE$.
 *  Ranges travel as [min, max]; features as {name: [min, max]}; bytes as hex. */
public final class RollcheckFeatures implements Handler {
    private RollcheckAdmin admin;

    @Override
    public Object handle(Map<String, Object> request) throws Exception {
        String op = (String) request.get("op");
        switch (op) {
            case "featureZNode.decode":
                return decode(Json.unhex((String) request.get("data")));
            case "featureZNode.encode":
                return encode(request);
            case "finalizedFeatureCache":
                return cache(request);
            case "incompatibleFeatures":
                return incompatible(request);
            case "versionRange":
                return versionRange(request);
            case "finalizedFeatureCache.script":
                return script(request);
            case "features":
                return features(request);
            case "features.fromMap":
                return featuresFromMap(request);
            case "versionRange.fromMap":
                return rangeFromMap(request);
            case "versionRange.isIncompatibleWith":
                return isIncompatibleWith(request);
            case "brokerFeatures.default":
                return brokerDefault(request);
            case "admin.updateFeatures":
                if (admin == null) {
                    admin = new RollcheckAdmin();
                }
                return admin.updateFeatures(request);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    static List<Object> pair(long min, long max) {
        List<Object> out = new ArrayList<>();
        out.add(min);
        out.add(max);
        return out;
    }

    @SuppressWarnings("unchecked")
    static Features<FinalizedVersionRange> finalized(Object raw) {
        Map<String, FinalizedVersionRange> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) raw).entrySet()) {
            List<Object> r = (List<Object>) e.getValue();
            out.put(e.getKey(), new FinalizedVersionRange(((Long) r.get(0)).shortValue(), ((Long) r.get(1)).shortValue()));
        }
        return Features.finalizedFeatures(out);
    }

    @SuppressWarnings("unchecked")
    static Features<SupportedVersionRange> supported(Object raw) {
        Map<String, SupportedVersionRange> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) raw).entrySet()) {
            List<Object> r = (List<Object>) e.getValue();
            out.put(e.getKey(), new SupportedVersionRange(((Long) r.get(0)).shortValue(), ((Long) r.get(1)).shortValue()));
        }
        return Features.supportedFeatures(out);
    }

    static Map<String, Object> ranges(Features<FinalizedVersionRange> features) {
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<String, FinalizedVersionRange> e : features.features().entrySet()) {
            out.put(e.getKey(), pair(e.getValue().min(), e.getValue().max()));
        }
        return out;
    }

    /** FeatureZNode.decode of the node's bytes: {"status": id, "features": {...}}. */
    static Map<String, Object> decode(byte[] data) {
        FeatureZNode node = FeatureZNode$.MODULE$.decode(data);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("status", (long) node.status().id());
        out.put("features", ranges(node.features()));
        return out;
    }

    static FeatureZNodeStatus status(long id) {
        Option<FeatureZNodeStatus> s = FeatureZNodeStatus$.MODULE$.withNameOpt((int) id);
        if (s.isEmpty()) {
            throw new IllegalArgumentException("no FeatureZNodeStatus " + id);
        }
        return s.get();
    }

    /** FeatureZNode.encode of new FeatureZNode(status, features): {"data": hex}. */
    static Map<String, Object> encode(Map<String, Object> request) {
        FeatureZNode node = new FeatureZNode(status((Long) request.get("status")), finalized(request.get("features")));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("data", Json.hex(FeatureZNode$.MODULE$.encode(node)));
        return out;
    }

    static Object cacheContents(FinalizedFeatureCache cache) {
        Option<FinalizedFeaturesAndEpoch> got = cache.get();
        if (got.isEmpty()) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("features", ranges(got.get().features()));
        out.put("epoch", got.get().epoch());
        return out;
    }

    /** A broker's FinalizedFeatureCache (its BrokerFeatures supporting "supported"), holding "existing" ({features,
     *  epoch} or null), reads the node: the bytes "data" (null: absent) at ZooKeeper version "version", as
     *  FinalizedFeatureChangeListener's FeatureCacheUpdater.updateLatestOrThrow does once it has read them (absent or
     *  Disabled: clear(); else updateOrThrow(features, version)). The answer: "accepted", the refusal's "message"
     *  (FeatureCacheUpdateException), and the "cache" after. A decoding failure is {"decodeError": exception}. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> cache(Map<String, Object> request) {
        BrokerFeatures features = BrokerFeatures$.MODULE$.createDefault();
        features.setSupportedFeatures(supported(request.get("supported")));
        FinalizedFeatureCache cache = new FinalizedFeatureCache(features);
        Map<String, Object> existing = (Map<String, Object>) request.get("existing");
        if (existing != null) {
            cache.updateOrThrow(finalized(existing.get("features")), (Long) existing.get("epoch"));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        String hex = (String) request.get("data");
        FeatureZNode node = null;
        if (hex != null) {
            try {
                node = FeatureZNode$.MODULE$.decode(Json.unhex(hex));
            } catch (Exception e) {
                out.put("decodeError", Main.exception(e));
                out.put("cache", cacheContents(cache));
                return out;
            }
        }
        if (node == null || node.status() == status(0)) {
            cache.clear();
            out.put("accepted", true);
        } else {
            try {
                cache.updateOrThrow(node.features(), (Long) request.get("version"));
                out.put("accepted", true);
            } catch (FeatureCacheUpdateException e) {
                out.put("accepted", false);
                out.put("message", e.getMessage());
            }
        }
        out.put("cache", cacheContents(cache));
        return out;
    }

    /** BrokerFeatures.incompatibleFeatures of "finalized" for a broker supporting "supported", and the companion's
     *  hasIncompatibleFeatures. */
    static Map<String, Object> incompatible(Map<String, Object> request) {
        Features<SupportedVersionRange> sup = supported(request.get("supported"));
        Features<FinalizedVersionRange> fin = finalized(request.get("finalized"));
        BrokerFeatures features = BrokerFeatures$.MODULE$.createDefault();
        features.setSupportedFeatures(sup);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("incompatible", ranges(features.incompatibleFeatures(fin)));
        out.put("has", BrokerFeatures$.MODULE$.hasIncompatibleFeatures(sup, fin));
        return out;
    }

    /** new SupportedVersionRange / FinalizedVersionRange(min, max) ("kind": "supported" | "finalized"): its
     *  toString and toMap, or the constructor's exception. */
    static Map<String, Object> versionRange(Map<String, Object> request) {
        short min = ((Long) request.get("min")).shortValue();
        short max = ((Long) request.get("max")).shortValue();
        Object r = "supported".equals(request.get("kind")) ? new SupportedVersionRange(min, max)
            : new FinalizedVersionRange(min, max);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("string", r.toString());
        Map<String, Object> map = new TreeMap<>();
        Map<String, Short> m = r instanceof SupportedVersionRange ? ((SupportedVersionRange) r).toMap()
            : ((FinalizedVersionRange) r).toMap();
        for (Map.Entry<String, Short> e : m.entrySet()) {
            map.put(e.getKey(), (long) e.getValue());
        }
        out.put("map", map);
        return out;
    }

    /** FinalizedFeatureCache of a broker supporting "supported" through "steps": {"update": features, "epoch"} or
     *  {"clear": true}; after each, "accepted" (false: FeatureCacheUpdateException), its "message" and the "cache".
     *  The cache starts empty ("empty": isEmpty, get). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> script(Map<String, Object> request) {
        BrokerFeatures features = BrokerFeatures$.MODULE$.createDefault();
        features.setSupportedFeatures(supported(request.get("supported")));
        FinalizedFeatureCache cache = new FinalizedFeatureCache(features);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("empty", cache.isEmpty() && cache.get().isEmpty());
        List<Object> after = new ArrayList<>();
        for (Object o : (List<Object>) request.get("steps")) {
            Map<String, Object> step = (Map<String, Object>) o;
            Map<String, Object> a = new LinkedHashMap<>();
            if (step.containsKey("clear")) {
                cache.clear();
                a.put("accepted", true);
            } else {
                try {
                    cache.updateOrThrow(finalized(step.get("update")), (Long) step.get("epoch"));
                    a.put("accepted", true);
                } catch (FeatureCacheUpdateException e) {
                    a.put("accepted", false);
                    a.put("message", e.getMessage());
                }
            }
            a.put("cache", cacheContents(cache));
            after.add(a);
        }
        out.put("steps", after);
        return out;
    }

    /** Features.supportedFeatures / finalizedFeatures of {name: [min, max]} ("kind"): toString and toMap. */
    static Map<String, Object> features(Map<String, Object> request) {
        Features<?> f = "supported".equals(request.get("kind")) ? supported(request.get("features"))
            : finalized(request.get("features"));
        return describe(f);
    }

    static Map<String, Object> describe(Features<?> f) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("string", f.toString());
        Map<String, Object> map = new TreeMap<>();
        for (Map.Entry<String, Map<String, Short>> e : f.toMap().entrySet()) {
            Map<String, Object> inner = new TreeMap<>();
            for (Map.Entry<String, Short> i : e.getValue().entrySet()) {
                inner.put(i.getKey(), (long) i.getValue());
            }
            map.put(e.getKey(), inner);
        }
        out.put("map", map);
        return out;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Map<String, Short>> shortMaps(Object raw) {
        Map<String, Map<String, Short>> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) raw).entrySet()) {
            out.put(e.getKey(), shortMap(e.getValue()));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Short> shortMap(Object raw) {
        Map<String, Short> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) raw).entrySet()) {
            out.put(e.getKey(), ((Long) e.getValue()).shortValue());
        }
        return out;
    }

    /** Features.fromSupportedFeaturesMap / fromFinalizedFeaturesMap ("kind") of "map": described, or the exception. */
    static Map<String, Object> featuresFromMap(Map<String, Object> request) {
        Map<String, Map<String, Short>> m = shortMaps(request.get("map"));
        return describe("supported".equals(request.get("kind")) ? Features.fromSupportedFeaturesMap(m)
            : Features.fromFinalizedFeaturesMap(m));
    }

    /** SupportedVersionRange.fromMap / FinalizedVersionRange.fromMap ("kind") of "map": its toString, or the
     *  exception. */
    static Map<String, Object> rangeFromMap(Map<String, Object> request) {
        Map<String, Short> m = shortMap(request.get("map"));
        Object r = "supported".equals(request.get("kind")) ? SupportedVersionRange.fromMap(m)
            : FinalizedVersionRange.fromMap(m);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("string", r.toString());
        return out;
    }

    /** new FinalizedVersionRange("finalized").isIncompatibleWith(new SupportedVersionRange("supported")). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> isIncompatibleWith(Map<String, Object> request) {
        List<Object> f = (List<Object>) request.get("finalized");
        List<Object> s = (List<Object>) request.get("supported");
        FinalizedVersionRange fin = new FinalizedVersionRange(((Long) f.get(0)).shortValue(), ((Long) f.get(1)).shortValue());
        SupportedVersionRange sup = new SupportedVersionRange(((Long) s.get(0)).shortValue(), ((Long) s.get(1)).shortValue());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("incompatible", fin.isIncompatibleWith(sup));
        return out;
    }

    /** BrokerFeatures.createDefault(): its "supported" features; with "supported" set (setSupportedFeatures), its
     *  defaultFinalizedFeatures. */
    static Map<String, Object> brokerDefault(Map<String, Object> request) {
        BrokerFeatures features = BrokerFeatures$.MODULE$.createDefault();
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> def = new TreeMap<>();
        for (Map.Entry<String, SupportedVersionRange> e : features.supportedFeatures().features().entrySet()) {
            def.put(e.getKey(), pair(e.getValue().min(), e.getValue().max()));
        }
        out.put("createDefault", def);
        if (request.get("supported") != null) {
            features.setSupportedFeatures(supported(request.get("supported")));
            out.put("defaultFinalized", ranges(features.defaultFinalizedFeatures()));
        }
        return out;
    }
}
