package org.apache.kafka.streams.processor.internals;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.AssignorConfiguration;
import org.apache.kafka.streams.processor.internals.assignment.ReferenceContainer;
import org.apache.kafka.streams.processor.internals.assignment.StreamsAssignmentProtocolVersions;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;
import org.apache.kafka.streams.state.HostInfo;

/** Kafka Streams' own StreamsPartitionAssignor (3.8.x ... 4.4.x), configured as Kafka's StreamsPartitionAssignorTest
 *  configures it (streams/src/test/.../StreamsPartitionAssignorTest.java at 3.9.0-rc3: configProps, the
 *  ReferenceContainer with a TaskManager, main consumer, admin client and StreamsMetadataState; Kafka's test mocks
 *  them with Mockito, which a Kafka build's libs/ does not hold: here a TaskManager that ignores the assignment it is
 *  handed, a real StreamsMetadataState, and proxies for the consumer and the admin client that answer an empty offsets
 *  question with nothing and refuse every other call), over a stateless
 *  topology of one source topic ("rollcheck-source", one partition a task): no internal topics, no changelogs, so the
 *  admin client and the internal topic manager are never called. Declared in Kafka's package to set the protected
 *  usedSubscriptionMetadataVersion, as Kafka's upgrade tests do.
 *
 *  <p>"assignor.assign": {"members": [{"id", "version", "latestSupported", "processId"}], "tasks": n}: the members'
 *  subscriptions (each member its own client, no previous tasks, no endpoint, no owned partitions) assigned by one
 *  leader; the answer per member (by id): "version", "supported" (commonlySupportedVersion), "error" and "tasks" (how
 *  many active tasks), and "stable" (what the assignor told its AssignmentListener: false when it asks for a
 *  follow-up rebalance), or the exception. "assignor.onAssignment": {"used", "version", "supported", "error"}: a
 *  member that sent a version "used" subscription receives that assignment (no tasks); the answer: "used" after,
 *  "rebalance" (an immediate follow-up rebalance is scheduled: nextScheduledRebalanceMs 0), "error" (the
 *  assignment error code it stored), or the exception. */
public final class RollcheckAssignor {
    static final String TOPIC = "rollcheck-source";

    private RollcheckAssignor() {
    }

    public static Object handle(Map<String, Object> request) throws Exception {
        String op = (String) request.get("op");
        switch (op) {
            case "assignor.assign":
                return assign(request);
            case "assignor.onAssignment":
                return onAssignment(request);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static final class Configured {
        final StreamsPartitionAssignor assignor = new StreamsPartitionAssignor();
        final ReferenceContainer references = new ReferenceContainer();
        final AtomicBoolean stable = new AtomicBoolean(true);
    }

    private static Configured configured(UUID processId) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "rollcheck");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        StreamsConfig config = new StreamsConfig(props);
        Topology topology = new Topology();
        topology.addSource("source", TOPIC);
        // Topology's builder is protected; TopologyWrapper (Kafka's test jar) reaches it the same way, by subclassing
        Field f = Topology.class.getDeclaredField("internalTopologyBuilder");
        f.setAccessible(true);
        InternalTopologyBuilder builder = (InternalTopologyBuilder) f.get(topology);
        builder.setApplicationId("rollcheck");
        TopologyMetadata topologyMetadata = new TopologyMetadata(builder, config);
        topologyMetadata.buildAndRewriteTopology();
        Admin admin = refusing(Admin.class);
        TaskManager taskManager = new TaskManager(Time.SYSTEM, null, new ProcessId(processId), "rollcheck ", null, null,
                null, topologyMetadata, admin, null, null, null) {
            @Override
            public void handleAssignment(final Map<TaskId, Set<TopicPartition>> activeTasks,
                                         final Map<TaskId, Set<TopicPartition>> standbyTasks) {
            }
        };
        Configured c = new Configured();
        c.references.mainConsumer = refusing(Consumer.class);
        c.references.adminClient = admin;
        c.references.taskManager = taskManager;
        c.references.streamsMetadataState = metadataState(topologyMetadata);
        c.references.time = Time.SYSTEM;
        c.references.clientTags = Collections.emptyMap();
        props.put(StreamsConfig.InternalConfig.REFERENCE_CONTAINER_PARTITION_ASSIGNOR, c.references);
        props.put(StreamsConfig.InternalConfig.ASSIGNMENT_LISTENER,
            (AssignorConfiguration.AssignmentListener) c.stable::set);
        c.assignor.configure(props);
        return c;
    }

    @SuppressWarnings("unchecked")
    private static <T> T refusing(Class<T> type) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            if (method.getName().equals("toString")) {
                return "refusing " + type.getSimpleName();
            }
            // The assignor asks the changelogs' end offsets and committed offsets even when there are none: an empty
            // question gets an empty answer (Admin.listOffsets, Consumer.committed).
            Object first = args == null || args.length == 0 ? null : args[0];
            if (method.getName().equals("listOffsets") && first instanceof Map && ((Map<?, ?>) first).isEmpty()) {
                return new ListOffsetsResult(Collections.emptyMap());
            }
            if (method.getName().equals("committed") && first instanceof Set && ((Set<?>) first).isEmpty()) {
                return Collections.emptyMap();
            }
            throw new UnsupportedOperationException("rollcheck: the assignor called " + type.getSimpleName() + "."
                + method.getName());
        });
    }

    /** StreamsMetadataState(TopologyMetadata, HostInfo, LogContext): LogContext moved to common.utils.internals in
     *  4.x, so the constructor is found by its arity. */
    private static StreamsMetadataState metadataState(TopologyMetadata topologyMetadata) throws Exception {
        for (Constructor<?> k : StreamsMetadataState.class.getConstructors()) {
            Class<?>[] p = k.getParameterTypes();
            if (p.length == 3 && p[0] == TopologyMetadata.class) {
                return (StreamsMetadataState) k.newInstance(topologyMetadata, new HostInfo("localhost", 8080),
                    p[2].getConstructor().newInstance());
            }
        }
        throw new IllegalStateException("no StreamsMetadataState(TopologyMetadata, HostInfo, LogContext)");
    }

    private static int integer(Map<String, Object> m, String key) {
        return ((Number) m.get(key)).intValue();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> assign(Map<String, Object> request) throws Exception {
        List<Map<String, Object>> members = (List<Map<String, Object>>) request.get("members");
        int tasks = integer(request, "tasks");
        Configured leader = configured(new UUID(0, 0));
        Map<String, Subscription> subscriptions = new LinkedHashMap<>();
        for (Map<String, Object> m : members) {
            int version = integer(m, "version");
            int supported = integer(m, "latestSupported");
            ByteBuffer data;
            if (version > StreamsAssignmentProtocolVersions.LATEST_SUPPORTED_VERSION) {
                // a newer member's bytes as far as this release reads them: version and supported version
                data = ByteBuffer.allocate(8).putInt(version).putInt(supported);
                data.rewind();
            } else {
                data = new SubscriptionInfo(version, supported, new ProcessId(UUID.fromString((String) m.get("processId"))),
                    null, Collections.emptyMap(), (byte) 0, 0, Collections.emptyMap()).encode();
            }
            subscriptions.put((String) m.get("id"), new Subscription(List.of(TOPIC), data, List.of()));
        }
        Node node = new Node(0, "localhost", 9092);
        List<PartitionInfo> partitions = new ArrayList<>();
        for (int p = 0; p < tasks; p++) {
            partitions.add(new PartitionInfo(TOPIC, p, node, new Node[] {node}, new Node[] {node}));
        }
        Cluster cluster = new Cluster("rollcheck", List.of(node), partitions, Collections.emptySet(),
            Collections.emptySet());
        GroupAssignment result = leader.assignor.assign(cluster, new GroupSubscription(subscriptions));
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> byMember = new LinkedHashMap<>();
        for (Map.Entry<String, Assignment> e : result.groupAssignment().entrySet()) {
            AssignmentInfo info = AssignmentInfo.decode(e.getValue().userData());
            Map<String, Object> a = new LinkedHashMap<>();
            a.put("version", (long) info.version());
            a.put("supported", (long) info.commonlySupportedVersion());
            a.put("error", (long) info.errCode());
            a.put("tasks", (long) info.activeTasks().size());
            byMember.put(e.getKey(), a);
        }
        out.put("assignments", byMember);
        out.put("stable", leader.stable.get());
        return out;
    }

    static Map<String, Object> onAssignment(Map<String, Object> request) throws Exception {
        Configured member = configured(new UUID(0, 1));
        member.assignor.usedSubscriptionMetadataVersion = integer(request, "used");
        ByteBuffer data = new AssignmentInfo(integer(request, "version"), integer(request, "supported"),
            Collections.emptyList(), Collections.emptyMap(), Collections.emptyMap(), Collections.emptyMap(),
            integer(request, "error")).encode();
        member.assignor.onAssignment(new Assignment(List.of(), data), new ConsumerGroupMetadata("rollcheck"));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("used", (long) member.assignor.usedSubscriptionMetadataVersion);
        out.put("rebalance", member.references.nextScheduledRebalanceMs.get() == 0L);
        out.put("error", (long) member.references.assignmentErrorCode.get());
        return out;
    }
}
