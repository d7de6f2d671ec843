package rollcheck.oracle;

import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The one request loop of every adapter: one JSON array of requests a line on stdin, one JSON array of answers
 *  a line on stdout, in the same order. The first line written is {"ready": true, ...}. Everything else the JVM
 *  prints (Kafka's logging included) goes to stderr, so stdout carries the protocol only. */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        System.setOut(System.err);
        String name = args.length > 0 ? args[0] : System.getProperty("rollcheck.handler");
        if (name == null) {
            System.err.println("rollcheck oracle: no handler class (argument or -Drollcheck.handler)");
            System.exit(2);
        }
        Handler handler = (Handler) Class.forName(name).getDeclaredConstructor().newInstance();
        Map<String, Object> ready = new LinkedHashMap<>();
        ready.put("ready", Boolean.TRUE);
        ready.put("handler", name);
        ready.put("kafka", handler.kafkaVersion());
        ready.put("java", System.getProperty("java.version"));
        out.println(Json.write(ready));
        out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            Object batch = Json.parse(line);
            if (!(batch instanceof List)) {
                throw new IllegalArgumentException("a batch is a JSON array of requests");
            }
            List<Object> answers = new ArrayList<>();
            for (Object request : (List<?>) batch) {
                answers.add(answer(handler, request));
            }
            out.println(Json.write(answers));
            out.flush();
        }
    }

    @SuppressWarnings("unchecked")
    private static Object answer(Handler handler, Object request) {
        try {
            if (!(request instanceof Map)) {
                throw new IllegalArgumentException("a request is a JSON object");
            }
            return handler.handle((Map<String, Object>) request);
        } catch (Throwable t) {
            return exception(t);
        }
    }

    /** {"exception": class, "message": message, "cause": {...}}: what Kafka threw, as an answer. */
    public static Map<String, Object> exception(Throwable t) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("exception", t.getClass().getName());
        e.put("message", t.getMessage());
        if (t.getCause() != null && t.getCause() != t) {
            e.put("cause", exception(t.getCause()));
        }
        return e;
    }
}
