package rollcheck.streams;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;
import org.apache.kafka.streams.state.HostInfo;

/** Epoch 0.10.1 (0.10.1.x ... 1.1.x): SubscriptionInfo(UUID, Set, Set, String) and AssignmentInfo(List, Map, Map)
 *  speak CURRENT_VERSION 2 with public final fields. The KAFKA-6054 back-port (0.10.2.2, 0.11.0.3, 1.0.2, 1.1.1,
 *  ...) added SubscriptionInfo(int version, ...) and AssignmentInfo(int version, ...), so that upgrade.from="0.10.0"
 *  can send version 1: they are looked up by reflection, and a release without them cannot build another version
 *  than 2 (answered as NoSuchApi). */
public final class StreamsHandler extends StreamsBase {

    private static final int CURRENT = 2;

    @Override
    protected ByteBuffer encodeSubscription(int version, int latestSupported, UUID processId, List<int[]> prevTasks,
            List<int[]> standbyTasks, String userEndPoint) throws Exception {
        Constructor<SubscriptionInfo> versioned = constructor(SubscriptionInfo.class, int.class, UUID.class,
                Set.class, Set.class, String.class);
        if (versioned != null) {
            return create(versioned, version, processId, tasks(prevTasks), tasks(standbyTasks), userEndPoint).encode();
        }
        if (version != CURRENT) {
            throw new NoSuchApi("this release has no SubscriptionInfo(int version, ...): it encodes version "
                    + CURRENT + " only");
        }
        return new SubscriptionInfo(processId, tasks(prevTasks), tasks(standbyTasks), userEndPoint).encode();
    }

    @Override
    protected Map<String, Object> decodeSubscription(ByteBuffer data) {
        SubscriptionInfo s = SubscriptionInfo.decode(data);
        return subscriptionFields(s.version, -1, s.processId, render(s.prevTasks), render(s.standbyTasks),
                s.userEndPoint);
    }

    @Override
    protected ByteBuffer encodeAssignment(int version, int latestSupported, List<int[]> activeTasks,
            List<Entry> standbyTasks, List<Entry> partitionsByHost, int error) throws Exception {
        Constructor<AssignmentInfo> versioned = constructor(AssignmentInfo.class, int.class, List.class, Map.class,
                Map.class);
        if (versioned != null) {
            return create(versioned, version, taskList(activeTasks), taskMap(standbyTasks),
                    hostMap(partitionsByHost)).encode();
        }
        if (version != CURRENT) {
            throw new NoSuchApi("this release has no AssignmentInfo(int version, ...): it encodes version "
                    + CURRENT + " only");
        }
        return new AssignmentInfo(taskList(activeTasks), taskMap(standbyTasks), hostMap(partitionsByHost)).encode();
    }

    @Override
    protected Map<String, Object> decodeAssignment(ByteBuffer data) {
        AssignmentInfo a = AssignmentInfo.decode(data);
        return assignmentFields(a.version, -1, render(a.activeTasks), renderMap(a.standbyTasks),
                renderHosts(hosts(a)), 0);
    }

    /** 0.10.1 ... 0.11.0 name the field partitionsByHostState, 1.0+ partitionsByHost. */
    @SuppressWarnings("unchecked")
    private static Map<HostInfo, Set<TopicPartition>> hosts(AssignmentInfo a) {
        for (String name : new String[] {"partitionsByHost", "partitionsByHostState"}) {
            try {
                return (Map<HostInfo, Set<TopicPartition>>) AssignmentInfo.class.getField(name).get(a);
            } catch (NoSuchFieldException | IllegalAccessException e) {
                continue;
            }
        }
        throw new NoSuchApi("AssignmentInfo has no partitionsByHost field");
    }

    /** The back-port's constructor, public or protected (1.0.2's AssignmentInfo(int, ...) is protected: the
     *  assignor, in the same package, uses it). */
    private static <T> Constructor<T> constructor(Class<T> type, Class<?>... parameters) {
        try {
            // public only: 0.10.1.x and 0.10.2.0/.1 have a private / protected versioned constructor (their decode's),
            // which no upgrade path of theirs reaches; KAFKA-6054's back-port made it public
            return type.getConstructor(parameters);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** Kafka's own exception, not the reflection wrapper. */
    private static <T> T create(Constructor<T> c, Object... args) throws Exception {
        try {
            return c.newInstance(args);
        } catch (InvocationTargetException e) {
            Throwable t = e.getCause();
            if (t instanceof Exception) {
                throw (Exception) t;
            }
            throw (Error) t;
        }
    }

    // ---- building Kafka's collections the usual way (new HashSet / HashMap filled in the order given) and
    // reading them back; TaskId's accessors are this epoch's
    private static TaskId taskId(int[] p) {
        return new TaskId(p[0], p[1]);
    }

    private static Set<TaskId> tasks(List<int[]> ps) {
        Set<TaskId> out = new HashSet<>();
        for (int[] p : ps) {
            out.add(taskId(p));
        }
        return out;
    }

    private static List<TaskId> taskList(List<int[]> ps) {
        List<TaskId> out = new ArrayList<>();
        for (int[] p : ps) {
            out.add(taskId(p));
        }
        return out;
    }

    private static Set<TopicPartition> partitions(List<List<Object>> ps) {
        Set<TopicPartition> out = new HashSet<>();
        for (List<Object> p : ps) {
            out.add(new TopicPartition(topicOf(p), partitionOf(p)));
        }
        return out;
    }

    private static Map<TaskId, Set<TopicPartition>> taskMap(List<Entry> entries) {
        Map<TaskId, Set<TopicPartition>> out = new HashMap<>();
        for (Entry e : entries) {
            out.put(new TaskId(e.keyInt(0), e.keyInt(1)), partitions(e.partitions));
        }
        return out;
    }

    private static List<Object> render(Iterable<TaskId> ts) {
        if (ts == null) {
            return null;
        }
        List<Object> out = new ArrayList<>();
        for (TaskId t : ts) {
            out.add(pair((long) t.topicGroupId, (long) t.partition));
        }
        return out;
    }

    private static List<Object> renderPartitions(Set<TopicPartition> ps) {
        List<Object> out = new ArrayList<>();
        for (TopicPartition p : ps) {
            out.add(pair(p.topic(), (long) p.partition()));
        }
        return sorted(out);
    }

    private static List<Object> renderMap(Map<TaskId, Set<TopicPartition>> m) {
        if (m == null) {
            return null;
        }
        List<Object> out = new ArrayList<>();
        for (Map.Entry<TaskId, Set<TopicPartition>> e : m.entrySet()) {
            out.add(pair(pair((long) e.getKey().topicGroupId, (long) e.getKey().partition), renderPartitions(e.getValue())));
        }
        return out;
    }

    private static Map<HostInfo, Set<TopicPartition>> hostMap(List<Entry> entries) {
        Map<HostInfo, Set<TopicPartition>> out = new HashMap<>();
        for (Entry e : entries) {
            out.put(new HostInfo((String) e.key.get(0), e.keyInt(1)), partitions(e.partitions));
        }
        return out;
    }

    private static List<Object> renderHosts(Map<HostInfo, Set<TopicPartition>> m) {
        if (m == null) {
            return null;
        }
        List<Object> out = new ArrayList<>();
        for (Map.Entry<HostInfo, Set<TopicPartition>> e : m.entrySet()) {
            out.add(pair(pair(e.getKey().host(), (long) e.getKey().port()), renderPartitions(e.getValue())));
        }
        return out;
    }
}
