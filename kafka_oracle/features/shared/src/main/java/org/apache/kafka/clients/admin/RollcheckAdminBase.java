package org.apache.kafka.clients.admin;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.KafkaClient;
import org.apache.kafka.clients.admin.internals.AdminMetadataManager;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.message.UpdateFeaturesRequestData;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.UpdateFeaturesRequest;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;

/** What every API epoch's RollcheckAdmin shares (kafka_oracle/features/shared): a real KafkaAdminClient (the
 *  package-private createInternal with its own KafkaClient, as Kafka's tests do) whose network is a
 *  java.lang.reflect.Proxy: a one-node cluster whose node is the controller and always ready, and whose send() keeps
 *  the request the Admin client built and never answers it (the call then times out). Nothing leaves the JVM.
 *  updateFeatures answers what Admin.updateFeatures does before a byte is sent: FeatureUpdate's constructor check,
 *  KafkaAdminClient.updateFeatures' own checks, then the UpdateFeaturesRequestData it builds (the feature updates;
 *  timeoutMs is the call's remaining time, which depends on the clock). An epoch supplies the AdminMetadataManager
 *  (its constructor changed at 3.3), a feature update key's upgrade field, and the UpdateFeaturesOptions. */
public abstract class RollcheckAdminBase {
    private final AdminClientConfig config = new AdminClientConfig(props());

    private static Properties props() {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9");
        return props;
    }

    private final LinkedBlockingQueue<AbstractRequest.Builder<?>> sent = new LinkedBlockingQueue<>();

    /** The epoch's AdminMetadataManager(logContext, refreshBackoffMs 100, metadataExpireMs Long.MAX_VALUE / 4[, ...]). */
    protected abstract AdminMetadataManager metadataManager();

    /** Puts the epoch's upgrade field of the request's key k ("allowDowngrade" or "upgradeType") into key. */
    protected abstract void upgrade(UpdateFeaturesRequestData.FeatureUpdateKey k, Map<String, Object> key);

    /** A new Admin client for each request: a request the network never answers stays in flight on its node (3.x
     *  waits for the disconnection's response before it sends the next call there), so no client is reused. */
    private KafkaAdminClient newClient() {
        Node node = new Node(0, "127.0.0.1", 9);
        AdminMetadataManager metadata = metadataManager();
        metadata.update(new Cluster("rollcheck", Collections.singletonList(node), Collections.emptyList(),
            Collections.emptySet(), Collections.emptySet(), node), System.currentTimeMillis());
        InvocationHandler network = this::network;
        KafkaClient kc = (KafkaClient) Proxy.newProxyInstance(KafkaClient.class.getClassLoader(),
            new Class<?>[] {KafkaClient.class}, network);
        return KafkaAdminClient.createInternal(config, metadata, kc, Time.SYSTEM);
    }

    private Object network(Object proxy, Method m, Object[] args) throws Exception {
        switch (m.getName()) {
            case "newClientRequest":
                // (nodeId, builder, createdTimeMs, expectResponse[, requestTimeoutMs, callback])
                return new ClientRequest((String) args[0], (AbstractRequest.Builder<?>) args[1], 1, "rollcheck",
                    (Long) args[2], (Boolean) args[3], args.length > 4 ? (Integer) args[4] : 30000, null);
            case "send":
                sent.add(((ClientRequest) args[0]).requestBuilder());
                return null;
            case "poll":
                Thread.sleep(Math.min(5L, Math.max(1L, (Long) args[0])));
                return new ArrayList<>();
            case "ready":
            case "isReady":
            case "active":
                return true;
            case "leastLoadedNode":
                return new Node(0, "127.0.0.1", 9);
            case "toString":
                return "RollcheckNetwork";
            case "hashCode":
                return 0;
            case "equals":
                return proxy == args[0];
            default:
                Class<?> t = m.getReturnType();
                if (t == boolean.class) {
                    return false;
                } else if (t == int.class) {
                    return 0;
                } else if (t == long.class) {
                    return 0L;
                }
                return null;
        }
    }

    /** "updates": [{"feature", "level", "allowDowngrade"}], in order, each a FeatureUpdate built by the
     *  (short, boolean) constructor the 2.8 client had (3.3+ keeps it, deprecated, and maps the flag to
     *  SAFE_DOWNGRADE or UPGRADE). */
    @SuppressWarnings({"unchecked", "deprecation"})
    protected static Map<String, FeatureUpdate> updates(Map<String, Object> request) {
        Map<String, FeatureUpdate> updates = new LinkedHashMap<>();
        for (Object o : (List<Object>) request.get("updates")) {
            Map<String, Object> u = (Map<String, Object>) o;
            updates.put((String) u.get("feature"),
                new FeatureUpdate(((Long) u.get("level")).shortValue(), (Boolean) u.get("allowDowngrade")));
        }
        return updates;
    }

    /** Admin.updateFeatures(updates, options) on a new client: the request data it sent, or what it threw before. */
    protected UpdateFeaturesRequestData send(Map<String, FeatureUpdate> updates, UpdateFeaturesOptions options)
            throws Exception {
        sent.clear();
        KafkaAdminClient client = newClient();
        AbstractRequest.Builder<?> builder;
        try {
            client.updateFeatures(updates, options);
            builder = sent.poll(10, TimeUnit.SECONDS);
        } finally {
            client.close(Duration.ZERO);
        }
        if (builder == null) {
            throw new IllegalStateException("the Admin client sent no request within 10 s");
        }
        return ((UpdateFeaturesRequest.Builder) builder).build(builder.latestAllowedVersion()).data();
    }

    /** {"featureUpdates": [{"feature", "maxVersionLevel", the epoch's upgrade field}]} as data holds them. */
    protected Map<String, Object> answer(UpdateFeaturesRequestData data) {
        List<Object> keys = new ArrayList<>();
        for (UpdateFeaturesRequestData.FeatureUpdateKey k : data.featureUpdates()) {
            Map<String, Object> key = new LinkedHashMap<>();
            key.put("feature", k.feature());
            key.put("maxVersionLevel", (long) k.maxVersionLevel());
            upgrade(k, key);
            keys.add(key);
        }
        Map<String, Object> out = new HashMap<>();
        out.put("featureUpdates", keys);
        return out;
    }
}
