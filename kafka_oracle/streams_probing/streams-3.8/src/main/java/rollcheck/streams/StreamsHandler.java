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
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;
import org.apache.kafka.streams.state.HostInfo;

/** Epoch 3.8 (3.8.x ... 4.4.x): SubscriptionInfo(int version, int latestSupported, ProcessId, String userEndPoint,
 *  Map taskOffsetSums, byte uniqueField, int errorCode, Map clientTags), the generated SubscriptionInfoData
 *  underneath; previous active tasks are the tasks whose offset sum is Task.LATEST_OFFSET (-2), standby tasks the
 *  others (SubscriptionInfo.java at 3.9.1: versions below 7 encode prevTasks / standbyTasks from the offset sums).
 *  AssignmentInfo(int version, int commonlySupportedVersion, List, Map, Map, Map standbyPartitionsByHost, int). */
public final class StreamsHandler extends StreamsBase {

    @Override
    public Object handle(Map<String, Object> request) throws Exception {
        String op = (String) request.get("op");
        if (op != null && op.startsWith("assignor.")) {
            return org.apache.kafka.streams.processor.internals.RollcheckAssignor.handle(request);  // StreamsPartitionAssignor
        }
        return super.handle(request);
    }

    private static final long LATEST_OFFSET = -2L;  // Task.LATEST_OFFSET
    private static final long STANDBY_OFFSET_SUM = 0L;

    @Override
    protected ByteBuffer encodeSubscription(int version, int latestSupported, UUID processId, List<int[]> prevTasks,
            List<int[]> standbyTasks, String userEndPoint) {
        Map<TaskId, Long> sums = new HashMap<>();
        for (int[] p : prevTasks) {
            sums.put(taskId(p), LATEST_OFFSET);
        }
        for (int[] p : standbyTasks) {
            sums.putIfAbsent(taskId(p), STANDBY_OFFSET_SUM);
        }
        return new SubscriptionInfo(version, latestSupported, new ProcessId(processId), userEndPoint, sums, (byte) 0,
                0, new HashMap<>()).encode();
    }

    @Override
    protected Map<String, Object> decodeSubscription(ByteBuffer data) {
        SubscriptionInfo s = SubscriptionInfo.decode(data);
        ProcessId pid = s.processId();
        // a newer version than this release reads: version and supported version only (versions 1 and 2 carry no
        // supported version: latestSupportedVersion() is -1 there, which is no future)
        boolean future = pid == null || (s.version() >= 3 && s.version() > s.latestSupportedVersion());
        return subscriptionFields(s.version(), s.latestSupportedVersion(), pid == null ? null : pid.id(),
                future ? null : render(s.prevTasks()), future ? null : render(s.standbyTasks()),
                future ? null : s.userEndPoint());
    }

    @Override
    protected ByteBuffer encodeAssignment(int version, int latestSupported, List<int[]> activeTasks,
            List<Entry> standbyTasks, List<Entry> partitionsByHost, int error) {
        return new AssignmentInfo(version, latestSupported, taskList(activeTasks), taskMap(standbyTasks),
                hostMap(partitionsByHost), new HashMap<>(), error).encode();
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
            out.add(pair((long) t.subtopology(), (long) t.partition()));
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
            out.add(pair(pair((long) e.getKey().subtopology(), (long) e.getKey().partition()), renderPartitions(e.getValue())));
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
