package rollcheck.cluster.streams;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;

import rollcheck.oracle.Json;

/** One line per event on stdout (the instance's log), "ROLLCHECK-EVENT {json}", each with the wall-clock time in
 *  milliseconds: the instances of a run share the machine's clock, so the binding orders their events across
 *  logs. */
final class Events {
    static final String PREFIX = "ROLLCHECK-EVENT ";
    private static final PrintStream OUT = System.out;

    private Events() {
    }

    static Map<String, Object> event(String kind) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("event", kind);
        e.put("ms", System.currentTimeMillis());
        return e;
    }

    static void emit(Map<String, Object> e) {
        synchronized (OUT) {
            OUT.println(PREFIX + Json.write(e));
            OUT.flush();
        }
    }

    static String describe(Throwable t) {
        return t.getClass().getName() + ": " + t.getMessage();
    }
}
