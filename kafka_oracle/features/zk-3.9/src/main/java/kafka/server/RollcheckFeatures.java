package kafka.server;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import kafka.server.metadata.FeatureCacheUpdateException;
import kafka.server.metadata.ZkMetadataCache;
import kafka.zk.FeatureZNode;
import kafka.zk.FeatureZNode$;
import kafka.zk.FeatureZNodeStatus;
import kafka.zk.FeatureZNodeStatus$;
import org.apache.kafka.clients.admin.RollcheckAdmin;
import org.apache.kafka.common.feature.Features;
import org.apache.kafka.common.feature.SupportedVersionRange;
import org.apache.kafka.server.common.FinalizedFeatures;
import org.apache.kafka.server.common.MetadataVersion;
import rollcheck.oracle.Handler;
import rollcheck.oracle.Json;
import rollcheck.oracle.Main;
import scala.Option;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/** Kafka 3.3 and later in ZooKeeper mode (API epoch zk-3.9; core/src/main/scala/kafka/zk/ZkData.scala FeatureZNode,
 *  kafka/server/metadata/ZkMetadataCache.scala updateFeaturesOrThrow, kafka/server/BrokerFeatures.scala,
 *  server-common/.../FinalizedFeatures.java, clients/.../common/feature at 3.9.0-rc3): a finalized feature is one
 *  level (FinalizedVersionRange is gone), the node has versions 1 and 2 (FeatureZNode.apply picks 2 from IBP
 *  3.3-IV0), the cache is the broker's ZkMetadataCache. Finalized features travel as {name: level}; supported ranges
 *  as {name: [min, max]}; "ibp" is an inter.broker.protocol.version ("3.9-IV0"). */
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
    static scala.collection.immutable.Map<String, Object> levels(Object raw) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) raw).entrySet()) {
            out.put(e.getKey(), ((Long) e.getValue()).shortValue());
        }
        return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(out));
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

    static Map<String, Object> answer(scala.collection.Map<String, Object> features) {
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<String, Object> e : CollectionConverters.asJava(features).entrySet()) {
            out.put(e.getKey(), (long) (Short) e.getValue());
        }
        return out;
    }

    static Map<String, Object> answer(Map<String, Short> features) {
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<String, Short> e : features.entrySet()) {
            out.put(e.getKey(), (long) e.getValue());
        }
        return out;
    }

    /** FeatureZNode.decode of the node's bytes: {"status": id, "version": the node's, "features": {name: level}}. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> decode(byte[] data) {
        FeatureZNode node = FeatureZNode$.MODULE$.decode(data);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("status", (long) node.status().id());
        out.put("version", (long) node.version());
        out.put("features", answer((scala.collection.Map<String, Object>) (Object) node.features()));
        return out;
    }

    static FeatureZNodeStatus status(long id) {
        Option<FeatureZNodeStatus> s = FeatureZNodeStatus$.MODULE$.withNameOpt((int) id);
        if (s.isEmpty()) {
            throw new IllegalArgumentException("no FeatureZNodeStatus " + id);
        }
        return s.get();
    }

    /** FeatureZNode.encode of FeatureZNode.apply(MetadataVersion "ibp", status, features): {"data": hex}, the node
     *  version apply chose. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> encode(Map<String, Object> request) {
        MetadataVersion ibp = MetadataVersion.fromVersionString((String) request.get("ibp"));
        scala.collection.immutable.Map<String, Object> features = levels(request.get("features"));
        FeatureZNode node = FeatureZNode$.MODULE$.apply(ibp, status((Long) request.get("status")),
            (scala.collection.immutable.Map<String, Object>) (Object) features);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("data", Json.hex(FeatureZNode$.MODULE$.encode(node)));
        return out;
    }

    static Object cacheContents(ZkMetadataCache cache) {
        Option<FinalizedFeatures> got = cache.getFeatureOption();
        if (got.isEmpty()) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("features", answer(got.get().finalizedFeatures()));
        out.put("epoch", got.get().finalizedFeaturesEpoch());
        return out;
    }

    static BrokerFeatures brokerFeatures(Object supported) {
        BrokerFeatures features = BrokerFeatures$.MODULE$.createEmpty();
        features.setSupportedFeatures(supported(supported));
        return features;
    }

    /** A broker's ZkMetadataCache (IBP "ibp"; its BrokerFeatures supporting "supported"), holding "existing"
     *  ({features, epoch} or null), reads the node ("data", null: absent, at ZooKeeper version "version") as
     *  FinalizedFeatureChangeListener's updateLatestOrThrow does once it has read it: absent or Disabled:
     *  clearFeatures(); else updateFeaturesOrThrow(features, version). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> cache(Map<String, Object> request) {
        MetadataVersion ibp = MetadataVersion.fromVersionString((String) request.get("ibp"));
        ZkMetadataCache cache = new ZkMetadataCache(0, ibp, brokerFeatures(request.get("supported")), false);
        Map<String, Object> existing = (Map<String, Object>) request.get("existing");
        if (existing != null) {
            cache.updateFeaturesOrThrow(levels(existing.get("features")), (Long) existing.get("epoch"));
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
            cache.clearFeatures();
            out.put("accepted", true);
        } else {
            try {
                cache.updateFeaturesOrThrow(scala.collection.immutable.Map$.MODULE$.from(node.features()), (Long) request.get("version"));
                out.put("accepted", true);
            } catch (FeatureCacheUpdateException e) {
                out.put("accepted", false);
                out.put("message", e.getMessage());
            }
        }
        out.put("cache", cacheContents(cache));
        return out;
    }

    /** BrokerFeatures.incompatibleFeatures of "finalized" ({name: level}) and the companion's
     *  hasIncompatibleFeatures. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static Map<String, Object> incompatible(Map<String, Object> request) {
        BrokerFeatures features = brokerFeatures(request.get("supported"));
        scala.collection.immutable.Map<String, Object> fin = levels(request.get("finalized"));
        Map<String, Object> out = new LinkedHashMap<>();
        Object bad = features.incompatibleFeatures((scala.collection.immutable.Map) fin);
        out.put("incompatible", answer((scala.collection.Map<String, Object>) bad));
        out.put("has", BrokerFeatures$.MODULE$.hasIncompatibleFeatures(supported(request.get("supported")),
            (scala.collection.immutable.Map) fin));
        return out;
    }

    /** new SupportedVersionRange(min, max) ("kind" must be "supported": there is no FinalizedVersionRange): its
     *  toString and toMap, or the constructor's exception. */
    static Map<String, Object> versionRange(Map<String, Object> request) {
        if (!"supported".equals(request.get("kind"))) {
            throw new IllegalArgumentException("no FinalizedVersionRange in this release");
        }
        SupportedVersionRange r = new SupportedVersionRange(((Long) request.get("min")).shortValue(),
            ((Long) request.get("max")).shortValue());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("string", r.toString());
        Map<String, Object> map = new TreeMap<>();
        for (Map.Entry<String, Short> e : r.toMap().entrySet()) {
            map.put(e.getKey(), (long) e.getValue());
        }
        out.put("map", map);
        return out;
    }
}
