package rollcheck.cluster.streams;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.internals.PartitionAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.TopicPartition;

/** Kafka Streams' own assignor, observed: every call goes to the release's StreamsPartitionAssignor (2.0 and
 *  later; StreamPartitionAssignor before), and what it was given and answered is written as an event. It decides
 *  nothing: the subscription the member sends, the assignment the leader computes and what the member does with
 *  it are Kafka's. The versions are the first ints of the rebalance metadata (SubscriptionInfo / AssignmentInfo:
 *  version, then from version 3 the latest supported version); the error code is AssignmentInfo.errCode() where
 *  the release has it (2.1 and later); the used version after an assignment is the assignor's own field
 *  (usedSubscriptionMetadataVersion from 2.0, userMetadataVersion before), read by reflection. */
public final class RollcheckAssignor implements PartitionAssignor, Configurable {
    private static final String[] KAFKA_ASSIGNORS = {
        "org.apache.kafka.streams.processor.internals.StreamsPartitionAssignor",
        "org.apache.kafka.streams.processor.internals.StreamPartitionAssignor",
    };
    private static final String[] USED_FIELDS = {"usedSubscriptionMetadataVersion", "userMetadataVersion"};
    private static final String ASSIGNMENT_INFO = "org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo";

    private final PartitionAssignor kafka;

    public RollcheckAssignor() {
        PartitionAssignor found = null;
        for (String name : KAFKA_ASSIGNORS) {
            try {
                found = (PartitionAssignor) Class.forName(name).getDeclaredConstructor().newInstance();
                break;
            } catch (ClassNotFoundException e) {
                // the other name
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot create " + name + ": " + e, e);
            }
        }
        if (found == null) {
            throw new IllegalStateException("no Kafka Streams partition assignor on the class path");
        }
        kafka = found;
    }

    @Override
    public void configure(Map<String, ?> configs) {
        ((Configurable) kafka).configure(configs);
        Map<String, Object> e = Events.event("configured");
        e.put("assignor", kafka.getClass().getName());
        e.put("used", used());
        Events.emit(e);
    }

    @Override
    public String name() {
        return kafka.name();
    }

    @Override
    public Subscription subscription(Set<String> topics) {
        Map<String, Object> e = Events.event("subscription");
        Subscription s;
        try {
            s = kafka.subscription(topics);
        } catch (RuntimeException | Error x) {
            // The member cannot build its subscription (KAFKA-8649: a 2.0 member asked to encode version 4).
            e.put("used", used());
            e.put("exception", Events.describe(x));
            Events.emit(e);
            throw x;
        }
        putVersions(e, s.userData());
        Events.emit(e);
        return s;
    }

    @Override
    public Map<String, Assignment> assign(Cluster metadata, Map<String, Subscription> subscriptions) {
        Map<String, Object> e = Events.event("assign");
        Map<String, Object> members = new TreeMap<>();
        for (Map.Entry<String, Subscription> m : subscriptions.entrySet()) {
            Map<String, Object> v = new TreeMap<>();
            putVersions(v, m.getValue().userData());
            members.put(m.getKey(), v);
        }
        e.put("members", members);
        Map<String, Assignment> out;
        try {
            out = kafka.assign(metadata, subscriptions);
        } catch (RuntimeException | Error x) {
            e.put("exception", Events.describe(x));
            Events.emit(e);
            throw x;
        }
        Map<String, Object> answers = new TreeMap<>();
        for (Map.Entry<String, Assignment> a : out.entrySet()) {
            Map<String, Object> v = new TreeMap<>();
            putVersions(v, a.getValue().userData());
            v.put("partitions", partitions(a.getValue().partitions()));
            answers.put(a.getKey(), v);
        }
        e.put("assignments", answers);
        Events.emit(e);
        return out;
    }

    @Override
    public void onAssignment(Assignment assignment) {
        Map<String, Object> e = Events.event("assignment");
        putVersions(e, assignment.userData());
        e.put("error", errorCode(assignment.userData()));
        e.put("partitions", partitions(assignment.partitions()));
        try {
            kafka.onAssignment(assignment);
        } catch (RuntimeException | Error x) {
            e.put("exception", Events.describe(x));
            Events.emit(e);
            throw x;
        }
        e.put("used", used());
        Events.emit(e);
    }

    private static List<Object> partitions(List<TopicPartition> partitions) {
        List<Object> out = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            out.add(tp.topic() + "-" + tp.partition());
        }
        out.sort(null);
        return out;
    }

    private static void putVersions(Map<String, Object> e, ByteBuffer data) {
        if (data == null) {
            return;
        }
        ByteBuffer b = data.duplicate();
        if (b.remaining() >= 4) {
            int version = b.getInt();
            e.put("version", version);
            if (version >= 3 && b.remaining() >= 4) {
                e.put("supported", b.getInt());
            }
        }
    }

    /** AssignmentInfo.decode(userData).errCode(), 0 where the release has no error code (before 2.1) or the
     *  bytes do not decode here (a version this release cannot read: onAssignment then fails itself). */
    private static Object errorCode(ByteBuffer data) {
        try {
            Class<?> info = Class.forName(ASSIGNMENT_INFO);
            Method decode = info.getMethod("decode", ByteBuffer.class);
            Object decoded = decode.invoke(null, data.duplicate());
            try {
                return info.getMethod("errCode").invoke(decoded);
            } catch (NoSuchMethodException e) {
                return 0;
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private Object used() {
        for (Class<?> c = kafka.getClass(); c != null; c = c.getSuperclass()) {
            for (String name : USED_FIELDS) {
                try {
                    Field f = c.getDeclaredField(name);
                    f.setAccessible(true);
                    return f.get(kafka);
                } catch (NoSuchFieldException e) {
                    // the other name
                } catch (ReflectiveOperationException | RuntimeException e) {
                    return null;
                }
            }
        }
        return null;
    }
}
