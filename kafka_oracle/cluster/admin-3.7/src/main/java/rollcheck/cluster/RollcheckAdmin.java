package rollcheck.cluster;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.SupportedVersionRange;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import rollcheck.oracle.Handler;

/** What a local KRaft cluster shows, read through Kafka's own Admin client (kafka-clients 3.7+: bootstrap.controllers,
 *  KIP-919), and the operator's feature commands sent through it: one long-lived JVM for a cluster run in place of a
 *  tool JVM per look (rollcheck/cluster/runbook.py). Requests name the cluster by "controllers" (host:port,...); one
 *  Admin per bootstrap string is kept open. */
public final class RollcheckAdmin implements Handler {
    private final Map<String, Admin> admins = new HashMap<>();

    @Override
    public Object handle(Map<String, Object> request) throws Exception {
        String op = (String) request.get("op");
        switch (op) {
            case "describe":
                return describe(request);
            case "updateFeatures":
                return updateFeatures(request);
            case "describeCluster":
                return describeCluster(request);
            case "close":
                for (Admin a : admins.values()) {
                    a.close();
                }
                admins.clear();
                return Boolean.TRUE;
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private Admin admin(Map<String, Object> request) {
        // "servers" (brokers' listeners) where the request names them, else "controllers".
        String servers = (String) request.get("servers");
        String key = servers != null ? "servers " + servers : (String) request.get("controllers");
        return admins.computeIfAbsent(key, c -> {
            Properties p = new Properties();
            if (servers != null) {
                p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
            } else {
                p.put("bootstrap.controllers", c);
            }
            p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
            p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "5000");
            p.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "100");
            return Admin.create(p);
        });
    }

    private static long timeout(Map<String, Object> request) {
        Object t = request.get("timeoutMs");
        return t == null ? 5000L : (Long) t;
    }

    private static Map<String, Object> failure(Throwable t) {
        Throwable cause = t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("exception", cause.getClass().getName());
        e.put("message", cause.getMessage());
        return e;
    }

    /** The quorum (leader, each voter's and observer's log end offset) and the finalized and supported features,
     *  each part an {"exception": ...} of its own when the cluster does not answer it. */
    private Map<String, Object> describe(Map<String, Object> request) {
        Admin admin = admin(request);
        long ms = timeout(request);
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            QuorumInfo q = admin.describeMetadataQuorum().quorumInfo().get(ms, TimeUnit.MILLISECONDS);
            Map<String, Object> quorum = new LinkedHashMap<>();
            quorum.put("leaderId", (long) q.leaderId());
            quorum.put("leaderEpoch", q.leaderEpoch());
            quorum.put("highWatermark", q.highWatermark());
            quorum.put("voters", replicas(q.voters()));
            quorum.put("observers", replicas(q.observers()));
            out.put("quorum", quorum);
        } catch (Exception e) {
            out.put("quorum", failure(e));
        }
        try {
            FeatureMetadata f = admin.describeFeatures().featureMetadata().get(ms, TimeUnit.MILLISECONDS);
            Map<String, Object> features = new LinkedHashMap<>();
            Map<String, Object> finalized = new LinkedHashMap<>();
            for (Map.Entry<String, FinalizedVersionRange> e : f.finalizedFeatures().entrySet()) {
                finalized.put(e.getKey(), (long) e.getValue().maxVersionLevel());
            }
            Map<String, Object> supported = new LinkedHashMap<>();
            for (Map.Entry<String, SupportedVersionRange> e : f.supportedFeatures().entrySet()) {
                supported.put(e.getKey(), List.of((long) e.getValue().minVersion(), (long) e.getValue().maxVersion()));
            }
            features.put("finalized", finalized);
            features.put("supported", supported);
            features.put("epoch", f.finalizedFeaturesEpoch().orElse(-1L));
            out.put("featureMetadata", features);
        } catch (Exception e) {
            out.put("featureMetadata", failure(e));
        }
        return out;
    }

    private static List<Object> replicas(List<QuorumInfo.ReplicaState> states) {
        List<Object> out = new ArrayList<>();
        for (QuorumInfo.ReplicaState r : states) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", (long) r.replicaId());
            m.put("logEndOffset", r.logEndOffset());
            out.add(m);
        }
        return out;
    }

    /** Admin.describeCluster through the brokers ("servers"): the ids of the brokers it lists, which in KRaft are
     *  the registered brokers the controller has unfenced (the answering broker's metadata image), or
     *  {"exception": ...}. */
    private Map<String, Object> describeCluster(Map<String, Object> request) {
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            List<Object> ids = new ArrayList<>();
            for (org.apache.kafka.common.Node n : admin(request).describeCluster().nodes()
                    .get(timeout(request), TimeUnit.MILLISECONDS)) {
                ids.add((long) n.id());
            }
            ids.sort(null);
            out.put("brokers", ids);
        } catch (Exception e) {
            out.putAll(failure(e));
        }
        return out;
    }

    /** Admin.updateFeatures of one feature: {"feature", "level", "upgradeType" (UPGRADE, SAFE_DOWNGRADE or
     *  UNSAFE_DOWNGRADE), "validateOnly"}; the answer {"error": null} or {"error": {"exception", "message"}}. */
    private Map<String, Object> updateFeatures(Map<String, Object> request) {
        Admin admin = admin(request);
        String feature = (String) request.get("feature");
        short level = ((Long) request.get("level")).shortValue();
        FeatureUpdate.UpgradeType type = FeatureUpdate.UpgradeType.valueOf((String) request.get("upgradeType"));
        UpdateFeaturesOptions options = new UpdateFeaturesOptions()
            .validateOnly(Boolean.TRUE.equals(request.get("validateOnly")));
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            admin.updateFeatures(Map.of(feature, new FeatureUpdate(level, type)), options)
                .all().get(timeout(request), TimeUnit.MILLISECONDS);
            out.put("error", null);
        } catch (Exception e) {
            out.put("error", failure(e));
        }
        return out;
    }
}
