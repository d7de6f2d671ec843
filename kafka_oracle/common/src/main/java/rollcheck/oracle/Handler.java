package rollcheck.oracle;

import java.util.Map;

/** One adapter's answers: a request is a JSON object with at least "op"; the answer is any JSON value
 *  (Map, List, String, Long/Integer, Boolean, null). An exception thrown by Kafka's classes is an answer too:
 *  the loop turns it into {"exception": class name, "message": message}. */
public interface Handler {
    Object handle(Map<String, Object> request) throws Exception;

    /** The release the classes on the class path come from, for the ready line: Kafka's AppInfoParser (moved to
     *  org.apache.kafka.common.utils.internals in 4.4), found by name so that the loop compiles against any release. */
    default String kafkaVersion() {
        for (String name : new String[] {"org.apache.kafka.common.utils.AppInfoParser",
            "org.apache.kafka.common.utils.internals.AppInfoParser"}) {
            try {
                return (String) Class.forName(name).getMethod("getVersion").invoke(null);
            } catch (ReflectiveOperationException e) {
                // try the next one
            }
        }
        return "unknown";
    }
}
