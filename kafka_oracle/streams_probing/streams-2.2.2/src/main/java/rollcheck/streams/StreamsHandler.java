package rollcheck.streams;

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

/** Epoch 2.2.2 (2.2.2, 2.3.1, 2.4.x): AssignmentInfo(int version, int commonlySupportedVersion, List, Map, Map,
 *  int errCode), the KAFKA-8649 back-port (PR #7423, #7545): the leader's commonly supported version reaches the
 *  wire (AssignmentInfo.java at 2.3.1; 2.3.0 has it package-private only). */
public final class StreamsHandler extends StreamsBase {

    @Override
    protected ByteBuffer encodeSubscription(int version, int latestSupported, UUID processId, List<int[]> prevTasks,
            List<int[]> standbyTasks, String userEndPoint) {
        return new SubscriptionInfo(version, processId, tasks(prevTasks), tasks(standbyTasks), userEndPoint).encode();
    }

    @Override
    protected Map<String, Object> decodeSubscription(ByteBuffer data) {
        SubscriptionInfo s = SubscriptionInfo.decode(data);
        return subscriptionFields(s.version(), s.latestSupportedVersion(), s.processId(), render(s.prevTasks()),
                render(s.standbyTasks()), s.userEndPoint());
    }

    @Override
    protected ByteBuffer encodeAssignment(int version, int latestSupported, List<int[]> activeTasks,
            List<Entry> standbyTasks, List<Entry> partitionsByHost, int error) {
        return new AssignmentInfo(version, latestSupported, taskList(activeTasks), taskMap(standbyTasks), hostMap(partitionsByHost), error)
                .encode();
    }

    @Override
    protected Map<String, Object> decodeAssignment(ByteBuffer data) {
        AssignmentInfo a = AssignmentInfo.decode(data);
        return assignmentFields(a.version(), a.commonlySupportedVersion(), render(a.activeTasks()),
                renderMap(a.standbyTasks()), renderHosts(a.partitionsByHost()), a.errCode());
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
