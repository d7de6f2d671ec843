package kafka.server;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import kafka.zk.FeatureZNode;
import kafka.zk.FeatureZNode$;
import org.apache.kafka.common.feature.Features;
import org.apache.kafka.common.feature.FinalizedVersionRange;
import org.apache.kafka.common.feature.SupportedVersionRange;
import rollcheck.oracle.Json;
import scala.Option;

/** Kafka 2.8.x and 3.2.x in ZooKeeper mode (API epoch zk-2.8): the feature node's codec, a broker's finalized
 *  feature cache, BrokerFeatures' compatibility check, the version ranges, and the Admin client's updateFeatures
 *  before it sends (core/src/main/scala/kafka/zk/ZkData.scala FeatureZNode, kafka/server/FinalizedFeatureCache.scala,
 *  kafka/server/BrokerFeatures.scala, clients/.../common/feature/*.java, clients/.../admin/KafkaAdminClient.java at
 *  2.8.0..3.2.3: the signatures are the same at every tag). Scala objects are called through MODULE$.
 *  Ranges travel as [min, max]; features as {name: [min, max]}; bytes as hex. The dispatch and what 3.3 left
 *  unchanged are RollcheckFeaturesBase's (kafka_oracle/features/shared); here FinalizedVersionRange,
 *  FinalizedFeatureCache(BrokerFeatures) and the ops only this epoch answers. */
public final class RollcheckFeatures extends RollcheckFeaturesBase {
    @Override
    protected Object other(String op, Map<String, Object> request) throws Exception {
        switch (op) {
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
            default:
                return super.other(op, request);
        }
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

    static Map<String, Object> ranges(Features<FinalizedVersionRange> features) {
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<String, FinalizedVersionRange> e : features.features().entrySet()) {
            out.put(e.getKey(), pair(e.getValue().min(), e.getValue().max()));
        }
        return out;
    }

    /** FeatureZNode.decode of the node's bytes: {"status": id, "features": {...}}. */
    @Override
    protected Map<String, Object> decode(byte[] data) {
        FeatureZNode node = FeatureZNode$.MODULE$.decode(data);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("status", (long) node.status().id());
        out.put("features", ranges(node.features()));
        return out;
    }

    /** FeatureZNode.encode of new FeatureZNode(status, features): {"data": hex}. */
    @Override
    protected Map<String, Object> encode(Map<String, Object> request) {
        FeatureZNode node = new FeatureZNode(status((Long) request.get("status")), finalized(request.get("features")));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("data", Json.hex(FeatureZNode$.MODULE$.encode(node)));
        return out;
    }

    static Object cacheContents(FinalizedFeatureCache cache) {
        Option<FinalizedFeaturesAndEpoch> got = cache.get();
        return got.isEmpty() ? null : contents(ranges(got.get().features()), got.get().epoch());
    }

    static FinalizedFeatureCache newCache(Object supported) {
        return new FinalizedFeatureCache(supporting(BrokerFeatures$.MODULE$.createDefault(), supported));
    }

    /** A broker's FinalizedFeatureCache (its BrokerFeatures supporting "supported"), holding "existing" ({features,
     *  epoch} or null), reads the node as RollcheckFeaturesBase.readNode says: the bytes "data" (null: absent) at
     *  ZooKeeper version "version" (absent or Disabled: clear(); else updateOrThrow(features, version)). */
    @Override
    @SuppressWarnings("unchecked")
    protected Map<String, Object> cache(Map<String, Object> request) {
        FinalizedFeatureCache cache = newCache(request.get("supported"));
        Map<String, Object> existing = (Map<String, Object>) request.get("existing");
        if (existing != null) {
            cache.updateOrThrow(finalized(existing.get("features")), (Long) existing.get("epoch"));
        }
        return readNode(request, cache::clear, (node, epoch) -> cache.updateOrThrow(node.features(), epoch),
            FeatureCacheUpdateException.class, () -> cacheContents(cache));
    }

    /** BrokerFeatures.incompatibleFeatures of "finalized" for a broker supporting "supported", and the companion's
     *  hasIncompatibleFeatures. */
    @Override
    protected Map<String, Object> incompatible(Map<String, Object> request) {
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
    @Override
    protected Map<String, Object> versionRange(Map<String, Object> request) {
        short min = ((Long) request.get("min")).shortValue();
        short max = ((Long) request.get("max")).shortValue();
        if ("supported".equals(request.get("kind"))) {
            SupportedVersionRange r = new SupportedVersionRange(min, max);
            return describeRange(r, r.toMap());
        }
        FinalizedVersionRange r = new FinalizedVersionRange(min, max);
        return describeRange(r, r.toMap());
    }

    /** FinalizedFeatureCache of a broker supporting "supported" through "steps": {"update": features, "epoch"} or
     *  {"clear": true}; after each, "accepted" (false: FeatureCacheUpdateException), its "message" and the "cache".
     *  The cache starts empty ("empty": isEmpty, get). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> script(Map<String, Object> request) {
        FinalizedFeatureCache cache = newCache(request.get("supported"));
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
            map.put(e.getKey(), longs(e.getValue()));
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
