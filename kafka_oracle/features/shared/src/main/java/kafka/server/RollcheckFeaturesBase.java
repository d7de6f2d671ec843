package kafka.server;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import kafka.zk.FeatureZNode;
import kafka.zk.FeatureZNode$;
import kafka.zk.FeatureZNodeStatus;
import kafka.zk.FeatureZNodeStatus$;
import org.apache.kafka.clients.admin.RollcheckAdmin;
import org.apache.kafka.common.feature.Features;
import org.apache.kafka.common.feature.SupportedVersionRange;
import rollcheck.oracle.Handler;
import rollcheck.oracle.Json;
import rollcheck.oracle.Main;
import scala.Option;

/** What every API epoch's RollcheckFeatures shares (kafka_oracle/features/shared): the ops both epochs answer, the
 *  classes whose signatures did not change at 3.3 (core/src/main/scala/kafka/zk/ZkData.scala FeatureZNode.decode
 *  and FeatureZNodeStatus, clients/.../common/feature/SupportedVersionRange.java and Features.supportedFeatures),
 *  and FinalizedFeatureChangeListener's way of reading the node into a cache. An epoch answers the ops through its
 *  own classes (FinalizedVersionRange and FinalizedFeatureCache at zk-2.8; levels, FeatureZNode v2 and
 *  ZkMetadataCache at zk-3.9) and may add ops of its own ({@link #other}). Supported ranges travel as
 *  {name: [min, max]}; bytes as hex. */
public abstract class RollcheckFeaturesBase implements Handler {
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
                return other(op, request);
        }
    }

    /** An op only this epoch answers; the base knows none. */
    protected Object other(String op, Map<String, Object> request) throws Exception {
        throw new IllegalArgumentException("unknown op " + op);
    }

    /** FeatureZNode.decode of the node's bytes. */
    protected abstract Map<String, Object> decode(byte[] data);

    /** FeatureZNode.encode of a node built from the request: {"data": hex}. */
    protected abstract Map<String, Object> encode(Map<String, Object> request);

    /** A broker's feature cache reads the node (see {@link #readNode}). */
    protected abstract Map<String, Object> cache(Map<String, Object> request);

    /** BrokerFeatures.incompatibleFeatures and the companion's hasIncompatibleFeatures. */
    protected abstract Map<String, Object> incompatible(Map<String, Object> request);

    /** A version range's constructor: its toString and toMap (see {@link #describeRange}). */
    protected abstract Map<String, Object> versionRange(Map<String, Object> request);

    static List<Object> pair(long min, long max) {
        List<Object> out = new ArrayList<>();
        out.add(min);
        out.add(max);
        return out;
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

    /** A Map<String, Short> (a range's toMap, a level per feature) as {name: long}, sorted by name. */
    static Map<String, Object> longs(Map<String, Short> m) {
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<String, Short> e : m.entrySet()) {
            out.put(e.getKey(), (long) e.getValue());
        }
        return out;
    }

    /** A version range's answer: {"string": toString, "map": toMap}. */
    static Map<String, Object> describeRange(Object range, Map<String, Short> toMap) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("string", range.toString());
        out.put("map", longs(toMap));
        return out;
    }

    static FeatureZNodeStatus status(long id) {
        Option<FeatureZNodeStatus> s = FeatureZNodeStatus$.MODULE$.withNameOpt((int) id);
        if (s.isEmpty()) {
            throw new IllegalArgumentException("no FeatureZNodeStatus " + id);
        }
        return s.get();
    }

    /** features.setSupportedFeatures of "supported" ({name: [min, max]}): features. */
    static BrokerFeatures supporting(BrokerFeatures features, Object supported) {
        features.setSupportedFeatures(supported(supported));
        return features;
    }

    /** A cache's contents: {"features", "epoch"}. */
    static Map<String, Object> contents(Object features, long epoch) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("features", features);
        out.put("epoch", epoch);
        return out;
    }

    /** The cache reads the node: the bytes "data" (null: absent) at ZooKeeper version "version", as
     *  FinalizedFeatureChangeListener's FeatureCacheUpdater.updateLatestOrThrow does once it has read them (absent or
     *  Disabled: clear; else update(features, version)). The answer: "accepted", the refusal's "message"
     *  (FeatureCacheUpdateException), and the "cache" after. A decoding failure is {"decodeError": exception}. The
     *  epoch's cache is given as its clear, its updateOrThrow of a node's features at an epoch, the class of its
     *  refusal (the epoch's FeatureCacheUpdateException) and its contents (null: empty). */
    static Map<String, Object> readNode(Map<String, Object> request, Runnable clear,
            BiConsumer<FeatureZNode, Long> update, Class<? extends RuntimeException> refusal, Supplier<Object> contents) {
        Map<String, Object> out = new LinkedHashMap<>();
        String hex = (String) request.get("data");
        FeatureZNode node = null;
        if (hex != null) {
            try {
                node = FeatureZNode$.MODULE$.decode(Json.unhex(hex));
            } catch (Exception e) {
                out.put("decodeError", Main.exception(e));
                out.put("cache", contents.get());
                return out;
            }
        }
        if (node == null || node.status() == status(0)) {
            clear.run();
            out.put("accepted", true);
        } else {
            try {
                update.accept(node, (Long) request.get("version"));
                out.put("accepted", true);
            } catch (RuntimeException e) {
                if (!refusal.isInstance(e)) {
                    throw e;
                }
                out.put("accepted", false);
                out.put("message", e.getMessage());
            }
        }
        out.put("cache", contents.get());
        return out;
    }
}
