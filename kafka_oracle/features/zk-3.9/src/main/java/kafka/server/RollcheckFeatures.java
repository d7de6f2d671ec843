package kafka.server;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

import kafka.server.metadata.FeatureCacheUpdateException;
import kafka.server.metadata.ZkMetadataCache;
import kafka.zk.FeatureZNode;
import kafka.zk.FeatureZNode$;
import org.apache.kafka.common.feature.SupportedVersionRange;
import org.apache.kafka.server.common.FinalizedFeatures;
import org.apache.kafka.server.common.MetadataVersion;
import rollcheck.oracle.Json;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/** Kafka 3.3 and later in ZooKeeper mode (API epoch zk-3.9; core/src/main/scala/kafka/zk/ZkData.scala FeatureZNode,
 *  kafka/server/metadata/ZkMetadataCache.scala updateFeaturesOrThrow, kafka/server/BrokerFeatures.scala,
 *  server-common/.../FinalizedFeatures.java, clients/.../common/feature at 3.9.0-rc3): a finalized feature is one
 *  level (FinalizedVersionRange is gone), the node has versions 1 and 2 (FeatureZNode.apply picks 2 from IBP
 *  3.3-IV0), the cache is the broker's ZkMetadataCache. Finalized features travel as {name: level}; supported ranges
 *  as {name: [min, max]}; "ibp" is an inter.broker.protocol.version ("3.9-IV0"). The dispatch and what 3.3 left
 *  unchanged are RollcheckFeaturesBase's (kafka_oracle/features/shared). */
public final class RollcheckFeatures extends RollcheckFeaturesBase {
    @SuppressWarnings("unchecked")
    static scala.collection.immutable.Map<String, Object> levels(Object raw) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) raw).entrySet()) {
            out.put(e.getKey(), ((Long) e.getValue()).shortValue());
        }
        return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(out));
    }

    static Map<String, Object> answer(scala.collection.Map<String, Object> features) {
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<String, Object> e : CollectionConverters.asJava(features).entrySet()) {
            out.put(e.getKey(), (long) (Short) e.getValue());
        }
        return out;
    }

    /** FeatureZNode.decode of the node's bytes: {"status": id, "version": the node's, "features": {name: level}}. */
    @Override
    @SuppressWarnings("unchecked")
    protected Map<String, Object> decode(byte[] data) {
        FeatureZNode node = FeatureZNode$.MODULE$.decode(data);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("status", (long) node.status().id());
        out.put("version", (long) node.version());
        out.put("features", answer((scala.collection.Map<String, Object>) (Object) node.features()));
        return out;
    }

    /** FeatureZNode.encode of FeatureZNode.apply(MetadataVersion "ibp", status, features): {"data": hex}, the node
     *  version apply chose. */
    @Override
    @SuppressWarnings("unchecked")
    protected Map<String, Object> encode(Map<String, Object> request) {
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
        return got.isEmpty() ? null
            : contents(longs(got.get().finalizedFeatures()), got.get().finalizedFeaturesEpoch());
    }

    static BrokerFeatures brokerFeatures(Object supported) {
        return supporting(BrokerFeatures$.MODULE$.createEmpty(), supported);
    }

    /** A broker's ZkMetadataCache (IBP "ibp"; its BrokerFeatures supporting "supported"), holding "existing"
     *  ({features, epoch} or null), reads the node ("data", null: absent, at ZooKeeper version "version") as
     *  RollcheckFeaturesBase.readNode says: absent or Disabled: clearFeatures(); else
     *  updateFeaturesOrThrow(features, version). */
    @Override
    @SuppressWarnings("unchecked")
    protected Map<String, Object> cache(Map<String, Object> request) {
        MetadataVersion ibp = MetadataVersion.fromVersionString((String) request.get("ibp"));
        ZkMetadataCache cache = new ZkMetadataCache(0, ibp, brokerFeatures(request.get("supported")), false);
        Map<String, Object> existing = (Map<String, Object>) request.get("existing");
        if (existing != null) {
            cache.updateFeaturesOrThrow(levels(existing.get("features")), (Long) existing.get("epoch"));
        }
        return readNode(request, cache::clearFeatures,
            (node, epoch) -> cache.updateFeaturesOrThrow(scala.collection.immutable.Map$.MODULE$.from(node.features()), epoch),
            FeatureCacheUpdateException.class, () -> cacheContents(cache));
    }

    /** BrokerFeatures.incompatibleFeatures of "finalized" ({name: level}) and the companion's
     *  hasIncompatibleFeatures. */
    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    protected Map<String, Object> incompatible(Map<String, Object> request) {
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
    @Override
    protected Map<String, Object> versionRange(Map<String, Object> request) {
        if (!"supported".equals(request.get("kind"))) {
            throw new IllegalArgumentException("no FinalizedVersionRange in this release");
        }
        SupportedVersionRange r = new SupportedVersionRange(((Long) request.get("min")).shortValue(),
            ((Long) request.get("max")).shortValue());
        return describeRange(r, r.toMap());
    }
}
