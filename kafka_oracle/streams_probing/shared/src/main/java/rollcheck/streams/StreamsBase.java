package rollcheck.streams;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.StreamsConfig;

import rollcheck.oracle.Handler;
import rollcheck.oracle.Json;

/** The request dispatch and the JSON forms shared by every streams_probing adapter (kafka_oracle/streams_probing/
 *  shared, added to each epoch's pom by build-helper's add-source; rollcheck/oracle/build.py hashes and, for a
 *  `--jars` build, compiles it with the adapter's own sources). An epoch's handler builds and reads Kafka's SubscriptionInfo / AssignmentInfo
 *  with the constructors and accessors its release has (kafka_oracle/streams_probing/README.md).
 *
 *  JSON forms: a task is [topicGroupId, partition]; a partition [topic, partition]; a host [host, port]; a
 *  partition map [[key, [partition...]]...]. Decoded sets and maps are sorted (they are sets); the active task
 *  list keeps Kafka's order. Bytes are lower-case hex. */
public abstract class StreamsBase implements Handler {

    /** Thrown when the release has no API to build what was asked (e.g. no SubscriptionInfo(int version, ...)). */
    public static final class NoSuchApi extends RuntimeException {
        public NoSuchApi(String message) {
            super(message);
        }
    }

    @Override
    public String kafkaVersion() {
        // AppInfoParser moved to common.utils.internals in 4.x
        for (String name : new String[] {"org.apache.kafka.common.utils.AppInfoParser",
                "org.apache.kafka.common.utils.internals.AppInfoParser"}) {
            try {
                return (String) Class.forName(name).getMethod("getVersion").invoke(null);
            } catch (ReflectiveOperationException e) {
                continue;
            }
        }
        return "unknown";
    }

    @Override
    public Object handle(Map<String, Object> request) throws Exception {
        String op = (String) request.get("op");
        switch (op) {
            case "subscription.encode":
                return bytes(encodeSubscription(integer(request, "version"), integer(request, "latestSupported"),
                        UUID.fromString((String) request.get("processId")), pairs(request.get("prevTasks")),
                        pairs(request.get("standbyTasks")), (String) request.get("userEndPoint")));
            case "subscription.decode":
                return decodeSubscription(ByteBuffer.wrap(Json.unhex((String) request.get("bytes"))));
            case "assignment.encode":
                return bytes(encodeAssignment(integer(request, "version"), integer(request, "latestSupported"),
                        pairs(request.get("activeTasks")), partitionMap(request.get("standbyTasks")),
                        partitionMap(request.get("partitionsByHost")), integer(request, "error")));
            case "assignment.decode":
                return decodeAssignment(ByteBuffer.wrap(Json.unhex((String) request.get("bytes"))));
            case "config.upgradeFrom":
                return upgradeFrom((String) request.get("value"));
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    // ---- what each epoch implements with its release's classes
    protected abstract ByteBuffer encodeSubscription(int version, int latestSupported, UUID processId,
            List<int[]> prevTasks, List<int[]> standbyTasks, String userEndPoint) throws Exception;

    protected abstract Map<String, Object> decodeSubscription(ByteBuffer data) throws Exception;

    protected abstract ByteBuffer encodeAssignment(int version, int latestSupported, List<int[]> activeTasks,
            List<Entry> standbyTasks, List<Entry> partitionsByHost, int error) throws Exception;

    protected abstract Map<String, Object> decodeAssignment(ByteBuffer data) throws Exception;

    /** A map entry as sent: key ([g, p] or [host, port]) and its partitions ([topic, partition] each). */
    public static final class Entry {
        public final List<Object> key;
        public final List<List<Object>> partitions;

        Entry(List<Object> key, List<List<Object>> partitions) {
            this.key = key;
            this.partitions = partitions;
        }

        public int keyInt(int i) {
            return ((Long) key.get(i)).intValue();
        }
    }

    // ---- upgrade.from: is the config defined, and does StreamsConfig accept the value?
    private Map<String, Object> upgradeFrom(String value) {
        boolean defined;
        try {
            defined = StreamsConfig.class.getField("UPGRADE_FROM_CONFIG") != null;
        } catch (NoSuchFieldException e) {
            defined = false;
        }
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "rollcheck");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        if (value != null) {
            props.put("upgrade.from", value);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("defined", defined);
        try {
            new StreamsConfig(props);
            out.put("accepted", Boolean.TRUE);
        } catch (ConfigException e) {
            out.put("accepted", Boolean.FALSE);
        }
        return out;
    }

    // ---- JSON helpers
    protected static int integer(Map<String, Object> request, String key) {
        Object v = request.get(key);
        return v == null ? 0 : ((Long) v).intValue();
    }

    protected static List<int[]> pairs(Object value) {
        List<int[]> out = new ArrayList<>();
        if (value != null) {
            for (Object o : (List<?>) value) {
                List<?> p = (List<?>) o;
                out.add(new int[] {((Long) p.get(0)).intValue(), ((Long) p.get(1)).intValue()});
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    protected static List<Entry> partitionMap(Object value) {
        List<Entry> out = new ArrayList<>();
        if (value != null) {
            for (Object o : (List<?>) value) {
                List<?> kv = (List<?>) o;
                out.add(new Entry((List<Object>) kv.get(0), (List<List<Object>>) kv.get(1)));
            }
        }
        return out;
    }

    protected static int partitionOf(List<Object> tp) {
        return ((Long) tp.get(1)).intValue();
    }

    protected static String topicOf(List<Object> tp) {
        return (String) tp.get(0);
    }

    /** The bytes of an encoded buffer: from 0 to its limit when it was handed back read to the end. */
    protected static String bytes(ByteBuffer buffer) {
        ByteBuffer b = buffer.duplicate();
        if (b.remaining() == 0) {
            b.rewind();
        }
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return Json.hex(out);
    }

    protected static List<Object> pair(Object a, Object b) {
        List<Object> l = new ArrayList<>(2);
        l.add(a);
        l.add(b);
        return l;
    }

    private static final Comparator<Object> ORDER = StreamsBase::compare;

    /** Sets and maps as sorted lists (Kafka's are hash-ordered sets: only their content is compared). */
    protected static List<Object> sorted(List<Object> items) {
        List<Object> out = new ArrayList<>(items);
        out.sort(ORDER);
        return out;
    }

    private static int compare(Object a, Object b) {
        if (a instanceof List && b instanceof List) {
            List<?> x = (List<?>) a;
            List<?> y = (List<?>) b;
            for (int i = 0; i < Math.min(x.size(), y.size()); i++) {
                int c = compare(x.get(i), y.get(i));
                if (c != 0) {
                    return c;
                }
            }
            return Integer.compare(x.size(), y.size());
        }
        if (a instanceof Number && b instanceof Number) {
            return Long.compare(((Number) a).longValue(), ((Number) b).longValue());
        }
        return String.valueOf(a).compareTo(String.valueOf(b));
    }

    protected static Map<String, Object> subscriptionFields(int version, int latestSupported, UUID processId,
            List<Object> prevTasks, List<Object> standbyTasks, String userEndPoint) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", (long) version);
        m.put("latestSupported", (long) latestSupported);
        m.put("processId", processId == null ? null : processId.toString());
        m.put("prevTasks", prevTasks == null ? null : sorted(prevTasks));
        m.put("standbyTasks", standbyTasks == null ? null : sorted(standbyTasks));
        m.put("userEndPoint", userEndPoint);
        return m;
    }

    protected static Map<String, Object> assignmentFields(int version, int latestSupported, List<Object> activeTasks,
            List<Object> standbyTasks, List<Object> partitionsByHost, int error) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", (long) version);
        m.put("latestSupported", (long) latestSupported);
        m.put("activeTasks", activeTasks);
        m.put("standbyTasks", standbyTasks == null ? null : sorted(standbyTasks));
        m.put("partitionsByHost", partitionsByHost == null ? null : sorted(partitionsByHost));
        m.put("error", (long) error);
        return m;
    }
}
