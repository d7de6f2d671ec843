package rollcheck.cluster.streams;

import java.io.FileInputStream;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.internals.DefaultKafkaClientSupplier;

/** A Kafka Streams instance of the project's own: a stateless topology (the input topic's records copied to the
 *  output topic, one task per input partition), Kafka's client supplier with the main consumer's assignor
 *  observed ({@link RollcheckAssignor}), one stream thread. The argument is a properties file: Kafka Streams'
 *  own settings (application.id, bootstrap.servers, client.id, state.dir, upgrade.from...) plus
 *  rollcheck.input and rollcheck.output, the topics. The state changes, the stream thread's death and the end are
 *  events; a thread that dies ends the process with code 3 (the instance failed), SIGTERM closes it (it leaves
 *  the group), and the process ends with code 0. */
public final class StreamsInstance {
    private StreamsInstance() {
    }

    /** Kafka's supplier, the main consumer's assignment strategy replaced by the observing assignor. */
    static final class Supplier extends DefaultKafkaClientSupplier {
        @Override
        public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
            Map<String, Object> observed = new HashMap<>(config);
            observed.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, RollcheckAssignor.class.getName());
            return super.getConsumer(observed);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: StreamsInstance PROPERTIES");
            System.exit(2);
        }
        Properties props = new Properties();
        try (InputStream in = new FileInputStream(args[0])) {
            props.load(in);
        }
        String input = (String) props.remove("rollcheck.input");
        String output = (String) props.remove("rollcheck.output");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArray().getClass().getName());
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArray().getClass().getName());
        StreamsBuilder builder = new StreamsBuilder();
        builder.<byte[], byte[]>stream(input).to(output);
        KafkaStreams streams = new KafkaStreams(builder.build(), new StreamsConfig(props), new Supplier());
        streams.setStateListener((to, from) -> {
            Map<String, Object> e = Events.event("state");
            e.put("from", from.name());
            e.put("to", to.name());
            Events.emit(e);
        });
        streams.setUncaughtExceptionHandler((thread, error) -> {
            Map<String, Object> e = Events.event("failed");
            e.put("thread", thread.getName());
            e.put("exception", Events.describe(error));
            Throwable cause = error.getCause();
            if (cause != null) {
                e.put("cause", Events.describe(cause));
            }
            Events.emit(e);
            // The instance's only thread is dead: the process ends at once (no close: it would wait on the dead
            // thread's consumer), and the coordinator drops the member when its session expires.
            Runtime.getRuntime().halt(3);
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close();
            Events.emit(Events.event("closed"));
        }, "rollcheck-close"));
        Map<String, Object> e = Events.event("starting");
        e.put("upgradeFrom", props.getProperty(StreamsConfig.UPGRADE_FROM_CONFIG));
        Events.emit(e);
        streams.start();
        Thread.currentThread().join();
    }
}
