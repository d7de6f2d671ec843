package rollcheck.selftest;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.Utils;

import rollcheck.oracle.Handler;

/** The engine's own test adapter (tests/test_oracle_engine.py): it exercises the request loop, not a protocol.
 *  Each op stands for one way an answer can come back: a value, a value computed by Kafka's classes, a thrown
 *  exception, a hang, a dying JVM. */
public final class SelfTest implements Handler {
    @Override
    public Object handle(Map<String, Object> request) throws Exception {
        String op = String.valueOf(request.get("op"));
        switch (op) {
            case "echo":
                return request;
            case "murmur2":
                // Utils.murmur2 is the hash the default partitioner uses (clients/src/main/java/org/apache/kafka/
                // common/utils/Utils.java at every 3.x tag): a value only Kafka's jar computes.
                return (long) Utils.murmur2(((String) request.get("value")).getBytes(StandardCharsets.UTF_8));
            case "throw":
                throw new IllegalStateException(String.valueOf(request.get("message")));
            case "sleep":
                Thread.sleep((Long) request.get("ms"));
                return "slept";
            case "exit":
                System.err.println("selftest: exiting on request: " + request.get("message"));
                System.err.flush();
                System.exit(3);
                return null;
            case "version":
                return AppInfoParser.getVersion();
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    @Override
    public String kafkaVersion() {
        return AppInfoParser.getVersion();
    }
}
