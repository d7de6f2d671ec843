package org.apache.kafka.metadata.migration;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.metadata.ZkMigrationStateRecord;
import org.apache.kafka.common.utils.MockTime;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.raft.LeaderAndEpoch;
import org.apache.kafka.raft.OffsetAndEpoch;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.fault.MockFaultHandler;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import rollcheck.oracle.Handler;

/**
 * Replays a reference trace on Kafka's own {@link KRaftMigrationDriver}, one driver per KRaft voter, each over
 * Kafka's test fakes (a {@link CapturingMigrationClient} and {@link CapturingTopicMigrationClient} subclass that
 * share one in-memory ZooKeeper, {@link MockFaultHandler}, {@link MockTime}), as Kafka's KRaftMigrationDriverTest
 * builds them (metadata/src/test/java/org/apache/kafka/metadata/migration/KRaftMigrationDriverTest.java; the
 * release each epoch follows is cited in its {@code RollcheckReplayHandler}).
 *
 * <p>What every API epoch does the same way; each epoch's {@code RollcheckReplayHandler} (driver-3.5, driver-3.6,
 * driver-3.7) extends it with what differs there: how the driver is built and which {@link Ctx} subclass builds it,
 * the quorum's readiness (the voters' ApiVersions or their controller registrations), the {@link ZkRecordConsumer}'s
 * {@code beginMigration} and the {@link MigrationClient}'s delegation-token client.
 *
 * <p>The driver runs on its own event thread and moves on by itself as far as its inputs let it. The replay holds
 * it at each of the reference's driver steps with gates in the fakes: a ZooKeeper call, the metadata layer's
 * migration calls and the propagator's full RPCs block until the trace's step releases them (and, for ZooKeeper,
 * until ZooKeeper is available). After each step every driver is waited on (a barrier, bounded by the request's
 * {@code timeout_ms}): it is settled when it blocks at a gate, or when its state stays the same while it polls
 * (consecutive round trips of its accessor through the event queue answer the same state). The state is the field the package-private
 * {@code migrationState()} accessor returns (read directly: the accessor answers through the event queue, which a
 * held gate blocks).
 *
 * <p>Request: {"op": "replay", "voters": n, "quorum_level": L, "zk": {...}, "timeout_ms": T, "steps": [...]}; each
 * step a list of actions (start/stop/leader/publish/release/zk/brokers). Answer: {"steps": [{"states", "blocked",
 * "writes", "records", "faults"}...], "timed_out": step index or null}.
 */
public abstract class RollcheckReplayBase implements Handler {
    static final int NODE_BASE = 3000;
    static final int SETTLE_ROUNDS = 3;
    // KRaftMigrationDriverTest's clock: the driver's polls come 990 ms early (its event queue compares their
    // deadlines with the system clock).
    static final long CLOCK_OFFSET_NS = 990_000_000L;

    /** This epoch's voter {@code voter}: a {@link Ctx} whose constructor builds its driver. */
    abstract Ctx newCtx(Replay r, int voter);

    @Override
    public Object handle(Map<String, Object> request) throws Exception {
        String op = (String) request.get("op");
        if ("ping".equals(op)) {
            return "pong";
        }
        if (!"replay".equals(op)) {
            throw new IllegalArgumentException("unknown op " + op);
        }
        Replay replay = new Replay(this, request);
        try {
            return replay.run();
        } finally {
            replay.closeAll();
        }
    }

    static int intOf(Object o) {
        return ((Number) o).intValue();
    }

    static Uuid topicId(int record) {
        return new Uuid(0x5EED, record + 1);
    }

    static final class Zk {
        boolean available = true;
        int controller = -1;
        int kraftEpoch = -1;
        int controllerEpoch;
        int epochVersion;
        int migrationVersion = -1;
        long kraftOffset = -1;
        int kraftOffsetEpoch = -1;
        final List<Integer> data = new ArrayList<>();
        final Set<Integer> brokers = new HashSet<>();
    }

    static final class Replay {
        final RollcheckReplayBase handler;
        final Object lock = new Object();
        final Zk zk = new Zk();
        final Map<Integer, Ctx> drivers = new TreeMap<>();
        final int quorumLevel;
        final long timeoutMs;
        final List<Object> steps;
        List<Map<String, Object>> writes = new ArrayList<>();
        List<Map<String, Object>> records = new ArrayList<>();
        long offset = 0;
        int epoch = 1;
        final int voters;

        @SuppressWarnings("unchecked")
        Replay(RollcheckReplayBase handler, Map<String, Object> request) {
            this.handler = handler;
            voters = intOf(request.get("voters"));
            quorumLevel = intOf(request.get("quorum_level"));
            timeoutMs = ((Number) request.getOrDefault("timeout_ms", 10_000)).longValue();
            steps = (List<Object>) request.get("steps");
            Map<String, Object> z = (Map<String, Object>) request.get("zk");
            zk.controller = intOf(z.get("controller"));
            zk.controllerEpoch = intOf(z.get("controller_epoch"));
            zk.epochVersion = intOf(z.get("epoch_version"));
            for (Object d : (List<Object>) z.get("data")) {
                zk.data.add(intOf(d));
            }
            for (Object b : (List<Object>) z.get("brokers")) {
                zk.brokers.add(intOf(b));
            }
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> run() throws Exception {
            List<Object> out = new ArrayList<>();
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("steps", out);
            answer.put("timed_out", null);
            for (int i = 0; i < steps.size(); i++) {
                offset = 10L * (i + 1);
                for (Object a : (List<Object>) steps.get(i)) {
                    act((Map<String, Object>) a);
                }
                for (Ctx c : drivers.values()) {
                    c.kick();
                }
                boolean settled = barrier();
                Map<String, Object> row = new LinkedHashMap<>();
                Map<String, Object> states = new TreeMap<>();
                Map<String, Object> blocked = new TreeMap<>();
                List<Object> faults = new ArrayList<>();
                synchronized (lock) {
                    for (Ctx c : drivers.values()) {
                        states.put(Integer.toString(c.voter), c.state().name());
                        if (c.blockedAt != null) {
                            blocked.put(Integer.toString(c.voter), c.blockedAt);
                        }
                        if (c.faults.firstException() != null) {
                            faults.add(c.voter + ": " + c.faults.firstException().getMessage());
                        }
                    }
                    row.put("writes", writes);
                    row.put("records", records);
                    writes = new ArrayList<>();
                    records = new ArrayList<>();
                }
                row.put("states", states);
                row.put("blocked", blocked);
                row.put("faults", faults);
                out.add(row);
                if (!settled) {
                    answer.put("timed_out", i);
                    break;
                }
            }
            return answer;
        }

        @SuppressWarnings("unchecked")
        void act(Map<String, Object> a) throws Exception {
            String what = (String) a.get("do");
            switch (what) {
                case "start": {
                    int v = intOf(a.get("voter"));
                    stop(v);
                    Ctx c = handler.newCtx(this, v);
                    drivers.put(v, c);
                    c.driver.start();
                    break;
                }
                case "stop":
                    stop(intOf(a.get("voter")));
                    break;
                case "leader": {
                    Ctx c = drivers.get(intOf(a.get("voter")));
                    int leader = intOf(a.get("leader"));
                    epoch = intOf(a.get("epoch"));
                    synchronized (lock) {
                        c.sticky.clear();
                        c.abortGates();
                    }
                    c.driver.onControllerChange(new LeaderAndEpoch(
                        leader < 0 ? OptionalInt.empty() : OptionalInt.of(NODE_BASE + leader), epoch));
                    break;
                }
                case "publish":
                    drivers.get(intOf(a.get("voter"))).publish((Map<String, Object>) a.get("image"));
                    break;
                case "release": {
                    Ctx c = drivers.get(intOf(a.get("voter")));
                    String gate = (String) a.get("gate");
                    synchronized (lock) {
                        c.permits.merge(gate, 1, Integer::sum);
                        if (Boolean.TRUE.equals(a.get("sticky"))) {
                            c.sticky.add(gate);
                        }
                        if (gate.equals(c.blockedAt)) {
                            c.blockedAt = null;
                        }
                        lock.notifyAll();
                    }
                    break;
                }
                case "zk":
                    synchronized (lock) {
                        zk.available = Boolean.TRUE.equals(a.get("available"));
                        lock.notifyAll();
                    }
                    break;
                case "zkset":
                    // A ZooKeeper-mode controller's election or metadata change, made on the fake ZooKeeper.
                    synchronized (lock) {
                        zk.controller = intOf(a.get("controller"));
                        zk.controllerEpoch = intOf(a.get("controller_epoch"));
                        zk.epochVersion = intOf(a.get("epoch_version"));
                        if (zk.controller < NODE_BASE) {
                            zk.kraftEpoch = -1;
                        }
                        zk.data.clear();
                        for (Object d : (List<Object>) a.get("data")) {
                            zk.data.add(intOf(d));
                        }
                        lock.notifyAll();
                    }
                    break;
                case "brokers":
                    synchronized (lock) {
                        zk.brokers.clear();
                        for (Object b : (List<Object>) a.get("ids")) {
                            zk.brokers.add(intOf(b));
                        }
                    }
                    break;
                default:
                    throw new IllegalArgumentException("unknown action " + what);
            }
        }

        void stop(int v) throws Exception {
            Ctx c = drivers.remove(v);
            if (c != null) {
                synchronized (lock) {
                    c.stopped = true;
                    lock.notifyAll();
                }
                c.driver.close();
            }
        }

        void closeAll() throws Exception {
            for (Integer v : new ArrayList<>(drivers.keySet())) {
                stop(v);
            }
        }

        /** Every driver settled (true), or the bounded wait passed (false). */
        boolean barrier() throws Exception {
            long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
            for (Ctx c : drivers.values()) {
                if (!c.settle(deadline)) {
                    return false;
                }
            }
            return true;
        }

        void write(Ctx c, String op, Map<String, Object> extra) {
            writes.add(entry(c, op, extra));
        }

        void record(Ctx c, String op, Map<String, Object> extra) {
            records.add(entry(c, op, extra));
        }

        static Map<String, Object> entry(Ctx c, String op, Map<String, Object> extra) {
            Map<String, Object> w = new LinkedHashMap<>();
            w.put("op", op);
            w.put("voter", c.voter);
            w.putAll(extra);
            return w;
        }
    }

    /** One voter's driver, its fakes and its gates; the epoch's subclass builds the driver in its constructor. */
    abstract static class Ctx {
        final Replay r;
        final int voter;
        KRaftMigrationDriver driver;
        final MockFaultHandler faults;
        final MockTime time;
        // The clock's reads (each of the driver's polls reads it once); a barrier may wait for some, see
        // settleClockReads.
        final AtomicLong clockReads = new AtomicLong();
        final Map<String, Integer> permits = new HashMap<>();
        final Set<String> sticky = new HashSet<>();
        volatile String blockedAt;
        volatile boolean stopped;
        int abortEpoch = 0;
        MetadataImage image = MetadataImage.EMPTY;
        Map<String, Object> published = null;
        static final Field STATE;

        static {
            try {
                STATE = KRaftMigrationDriver.class.getDeclaredField("migrationState");
                STATE.setAccessible(true);
            } catch (NoSuchFieldException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        Ctx(Replay r, int voter) {
            this.r = r;
            this.voter = voter;
            this.faults = new MockFaultHandler("replay-" + voter);
            this.time = new MockTime(0) {
                @Override
                public long nanoseconds() {
                    clockReads.incrementAndGet();
                    return System.nanoTime() - CLOCK_OFFSET_NS;
                }
            };
        }

        /** The quorum's controllers as {@code publish} finds them in the image it is asked for ({@code want}; the
         *  last one published, {@code had}): each [voter, zkMigrationReady, running]. */
        abstract void publishControllers(MetadataDelta delta, Map<String, Object> had, Map<String, Object> want);

        /** One controller of a published image. */
        interface ControllerVisitor {
            void visit(int voter, boolean zkMigrationReady, boolean running);
        }

        /** The controllers of a published image, {@code [voter, zkMigrationReady, running]} each (running absent:
         *  true). */
        @SuppressWarnings("unchecked")
        static void controllers(Map<String, Object> image, ControllerVisitor visitor) {
            for (Object o : (List<Object>) image.getOrDefault("controllers", Collections.emptyList())) {
                List<Object> c = (List<Object>) o;
                visitor.visit(intOf(c.get(0)), (Boolean) c.get(1), c.size() < 3 || Boolean.TRUE.equals(c.get(2)));
            }
        }

        /** The quorum's node ids. */
        List<Integer> voterIds() {
            List<Integer> ids = new ArrayList<>();
            for (int v = 0; v < r.voters; v++) {
                ids.add(NODE_BASE + v);
            }
            return ids;
        }

        /** How many clock reads a barrier waits for before its round trips (none unless the epoch's driver is
         *  woken only by its polls). */
        int settleClockReads() {
            return 0;
        }

        MigrationDriverState state() {
            try {
                return (MigrationDriverState) STATE.get(driver);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }

        void abortGates() {
            abortEpoch++;
            permits.clear();
            blockedAt = null;
            r.lock.notifyAll();
        }

        /** Block at gate {@code name} until a step releases it (and ZooKeeper is up, when {@code zkCall}). */
        void gate(String name, boolean zkCall) {
            synchronized (r.lock) {
                int epoch = abortEpoch;
                while (true) {
                    if (stopped || abortEpoch != epoch) {
                        blockedAt = null;
                        throw new MigrationClientException("replay: the driver's call " + name + " was abandoned");
                    }
                    boolean open = name == null || sticky.contains(name) || permits.getOrDefault(name, 0) > 0;
                    if (open && (!zkCall || r.zk.available)) {
                        if (name != null && !sticky.contains(name)) {
                            permits.merge(name, -1, Integer::sum);
                        }
                        blockedAt = null;
                        return;
                    }
                    String at = name != null && !open ? name : "zookeeper";
                    // Notify only when this driver first blocks here: two drivers held at gates that woke each other
                    // on every wait would keep the monitor busy and starve the barrier that waits for it.
                    if (!at.equals(blockedAt)) {
                        blockedAt = at;
                        r.lock.notifyAll();
                    }
                    try {
                        r.lock.wait(50);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new MigrationClientException("replay: interrupted at " + name);
                    }
                }
            }
        }

        /** Settled: blocked at a gate, or {@link #SETTLE_ROUNDS} consecutive round trips of the driver's
         *  {@code migrationState()} accessor through its event queue answer the same state (the poll a transition
         *  queues, and the state's event that poll queues, have run without moving it). */
        boolean settle(long deadline) throws Exception {
            MigrationDriverState last = null;
            int same = 0;
            long start = clockReads.get();
            // A poll of its own, not the replay's lock: the drivers' threads take that lock at every gate.
            while (clockReads.get() < start + settleClockReads() && blockedAt == null
                && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            while (System.nanoTime() < deadline) {
                if (blockedAt != null) {
                    return true;
                }
                CompletableFuture<MigrationDriverState> f = driver.migrationState();
                MigrationDriverState s = null;
                while (s == null && System.nanoTime() < deadline) {
                    try {
                        s = f.get(5, TimeUnit.MILLISECONDS);
                    } catch (TimeoutException e) {
                        if (blockedAt != null) {
                            return true;
                        }
                    }
                }
                if (s == null) {
                    break;
                }
                same = s == last ? same + 1 : 1;
                last = s;
                if (same >= SETTLE_ROUNDS) {
                    return true;
                }
            }
            return blockedAt != null;
        }

        /** Wake a driver that waits for its next poll (the backoff grows to a minute): the same image again, with
         *  its registrations replayed unchanged, so that the delta has a cluster part, on which a driver not yet
         *  dual-writing polls at once (MetadataChangeEvent's wakeup). Not for a driver without an image (its first
         *  image is the DriverWaitForQuorum gate) or one that dual-writes (the delta would be written). */
        void kick() {
            MigrationDriverState s = state();
            if (published == null || s.allowDualWrite() || s == MigrationDriverState.INACTIVE
                || s == MigrationDriverState.UNINITIALIZED) {
                return;
            }
            MetadataDelta delta = new MetadataDelta(image);
            boolean any = false;
            for (org.apache.kafka.metadata.BrokerRegistration b : image.cluster().brokers().values()) {
                delta.replay(new RegisterBrokerRecord().setBrokerId(b.id()).setIsMigratingZkBroker(true)
                    .setFenced(false).setBrokerEpoch(b.epoch()).setIncarnationId(b.incarnationId()));
                any = true;
                break;
            }
            if (!any) {
                return;
            }
            MetadataImage again = delta.apply(image.provenance());
            image = again;
            driver.enqueueMetadataChangeEvent(delta, again, again.provenance(), false, ex -> { });
        }

        @SuppressWarnings("unchecked")
        void publish(Map<String, Object> want) {
            MetadataDelta delta = new MetadataDelta(image);
            Map<String, Object> had = published == null ? new HashMap<>() : published;
            if (published == null) {
                delta.replay(new FeatureLevelRecord().setName(MetadataVersion.FEATURE_NAME)
                    .setFeatureLevel((short) r.quorumLevel));
            }
            String migration = (String) want.get("migration");
            if (!migration.equals(had.get("migration"))) {
                delta.replay(ZkMigrationState.valueOf(migration).toRecord().message());
            }
            Set<Integer> hadBrokers = new HashSet<>();
            for (Object b : (List<Object>) had.getOrDefault("brokers", Collections.emptyList())) {
                hadBrokers.add(intOf(b));
            }
            for (Object b : (List<Object>) want.get("brokers")) {
                if (!hadBrokers.contains(intOf(b))) {
                    delta.replay(new RegisterBrokerRecord().setBrokerId(intOf(b)).setIsMigratingZkBroker(true)
                        .setFenced(false).setBrokerEpoch(intOf(b) + 1).setIncarnationId(new Uuid(0xB0, intOf(b) + 1)));
                }
            }
            Set<Integer> hadTopics = new HashSet<>();
            for (Object t : (List<Object>) had.getOrDefault("topics", Collections.emptyList())) {
                hadTopics.add(intOf(t));
            }
            for (Object t : (List<Object>) want.get("topics")) {
                if (!hadTopics.contains(intOf(t))) {
                    delta.replay(new TopicRecord().setName("r" + intOf(t)).setTopicId(topicId(intOf(t))));
                }
            }
            publishControllers(delta, had, want);
            int epoch = intOf(want.get("epoch"));
            MetadataProvenance provenance = new MetadataProvenance(r.offset, epoch, r.offset);
            image = delta.apply(provenance);
            published = want;
            driver.enqueueMetadataChangeEvent(delta, image, provenance, false, ex -> { });
        }

        /** Kafka's {@link CapturingMigrationClient} (built as its tests build it, with this replay's topic client),
         *  its ZooKeeper calls answered by the replay's shared ZooKeeper and held at the gates; the epoch's subclass
         *  adds the clients the interface has there. */
        abstract class ClientBase implements MigrationClient {
            final CapturingMigrationClient base = CapturingMigrationClient.newBuilder()
                .setTopicMigrationClient(new Topics()).build();

            @Override
            public ZkMigrationLeadershipState releaseControllerLeadership(ZkMigrationLeadershipState state) {
                return base.releaseControllerLeadership(state);
            }

            @Override
            public TopicMigrationClient topicClient() {
                return base.topicClient();
            }

            @Override
            public ConfigMigrationClient configClient() {
                return base.configClient();
            }

            @Override
            public AclMigrationClient aclClient() {
                return base.aclClient();
            }

            @Override
            public java.util.Optional<org.apache.kafka.server.common.ProducerIdsBlock> readProducerId() {
                return base.readProducerId();
            }

            @Override
            public ZkMigrationLeadershipState writeProducerId(long nextProducerId, ZkMigrationLeadershipState state) {
                return base.writeProducerId(nextProducerId, state);
            }

            ZkMigrationLeadershipState zkState(ZkMigrationLeadershipState state) {
                return state.withMigrationZkVersion(r.zk.migrationVersion)
                    .withKRaftMetadataOffsetAndEpoch(r.zk.kraftOffset, r.zk.kraftOffsetEpoch);
            }

            @Override
            public ZkMigrationLeadershipState getOrCreateMigrationRecoveryState(ZkMigrationLeadershipState initial) {
                gate(null, true);
                synchronized (r.lock) {
                    if (r.zk.migrationVersion < 0) {
                        r.zk.migrationVersion = 0;
                        r.write(Ctx.this, "createMigrationZNode", Collections.emptyMap());
                    }
                    return zkState(initial);
                }
            }

            @Override
            public ZkMigrationLeadershipState setMigrationRecoveryState(ZkMigrationLeadershipState state) {
                gate(null, true);
                synchronized (r.lock) {
                    if (state.migrationZkVersion() != -1 && state.migrationZkVersion() != r.zk.migrationVersion) {
                        throw new MigrationClientException("replay: BADVERSION on /migration (held "
                            + state.migrationZkVersion() + ", znode " + r.zk.migrationVersion + ")");
                    }
                    r.zk.migrationVersion++;
                    r.zk.kraftOffset = state.kraftMetadataOffset();
                    r.zk.kraftOffsetEpoch = (int) state.kraftMetadataEpoch();
                    Map<String, Object> w = new LinkedHashMap<>();
                    w.put("migrated", state.initialZkMigrationComplete());
                    r.write(Ctx.this, "setMigration", w);
                    return state.withMigrationZkVersion(r.zk.migrationVersion);
                }
            }

            @Override
            public ZkMigrationLeadershipState claimControllerLeadership(ZkMigrationLeadershipState state) {
                gate("claim", true);
                synchronized (r.lock) {
                    if (r.zk.kraftEpoch > state.kraftControllerEpoch()) {
                        return state.withUnknownZkController();
                    }
                    r.zk.controller = NODE_BASE + voter;
                    r.zk.kraftEpoch = state.kraftControllerEpoch();
                    r.zk.controllerEpoch = r.zk.controllerEpoch + 1;
                    r.zk.epochVersion = r.zk.epochVersion + 1;
                    r.write(Ctx.this, "claim", Collections.emptyMap());
                    return state.withZkController(r.zk.controllerEpoch, r.zk.epochVersion);
                }
            }

            @Override
            public void readAllMetadata(Consumer<List<ApiMessageAndVersion>> batchConsumer,
                                        Consumer<Integer> brokerIdConsumer) {
                gate("copy", true);
                List<ApiMessageAndVersion> batch = new ArrayList<>();
                Set<Integer> brokers;
                synchronized (r.lock) {
                    for (int d : r.zk.data) {
                        batch.add(new ApiMessageAndVersion(new TopicRecord().setName("r" + d)
                            .setTopicId(topicId(d)), (short) 0));
                    }
                    brokers = new HashSet<>(r.zk.brokers);
                }
                if (!batch.isEmpty()) {
                    batchConsumer.accept(batch);
                }
                brokers.forEach(brokerIdConsumer);
            }

            @Override
            public Set<Integer> readBrokerIds() {
                gate("brokers", true);
                synchronized (r.lock) {
                    return new HashSet<>(r.zk.brokers);
                }
            }
        }

        final class Topics extends CapturingTopicMigrationClient {
            @Override
            public void iterateTopics(EnumSet<TopicVisitorInterest> interests, TopicVisitor visitor) {
                gate(state() == MigrationDriverState.SYNC_KRAFT_TO_ZK ? "sync" : null, true);
                List<Integer> data;
                synchronized (r.lock) {
                    data = new ArrayList<>(r.zk.data);
                }
                for (int d : data) {
                    visitor.visitTopic("r" + d, topicId(d), Collections.emptyMap());
                }
            }

            ZkMigrationLeadershipState zkWrite(ZkMigrationLeadershipState state, String op, Map<String, Object> w,
                                               Runnable change) {
                synchronized (r.lock) {
                    if (state.zkControllerEpochZkVersion() != r.zk.epochVersion
                        || state.migrationZkVersion() != r.zk.migrationVersion) {
                        throw new MigrationClientException("replay: BADVERSION (held /controller_epoch "
                            + state.zkControllerEpochZkVersion() + " /migration " + state.migrationZkVersion()
                            + ", znodes " + r.zk.epochVersion + " " + r.zk.migrationVersion + ")");
                    }
                    change.run();
                    r.zk.migrationVersion++;
                    r.write(Ctx.this, op, w);
                    return state.withMigrationZkVersion(r.zk.migrationVersion);
                }
            }

            @Override
            public ZkMigrationLeadershipState createTopic(String topicName, Uuid topicId,
                                                          Map<Integer, PartitionRegistration> partitions,
                                                          ZkMigrationLeadershipState state) {
                boolean sync = state() == MigrationDriverState.SYNC_KRAFT_TO_ZK;
                gate(sync ? null : "dual", true);
                int record = Integer.parseInt(topicName.substring(1));
                Map<String, Object> w = new LinkedHashMap<>();
                w.put("record", record);
                w.put("sync", sync);
                return zkWrite(state, "createTopic", w, () -> r.zk.data.add(record));
            }

            @Override
            public ZkMigrationLeadershipState deleteTopic(String topicName, ZkMigrationLeadershipState state) {
                gate(null, true);
                int record = Integer.parseInt(topicName.substring(1));
                Map<String, Object> w = new LinkedHashMap<>();
                w.put("record", record);
                return zkWrite(state, "deleteTopic", w, () -> r.zk.data.remove(Integer.valueOf(record)));
            }
        }

        /** The metadata layer's migration calls, recorded; the epoch's subclass declares {@code beginMigration}
         *  (its return type changed) and calls {@link #begin}. */
        abstract class ConsumerBase implements ZkRecordConsumer {
            void begin() {
                gate("begin", false);
                synchronized (r.lock) {
                    r.record(Ctx.this, "beginMigration", Collections.emptyMap());
                }
            }

            @Override
            public CompletableFuture<?> acceptBatch(List<ApiMessageAndVersion> batch) {
                List<Object> ids = new ArrayList<>();
                for (ApiMessageAndVersion m : batch) {
                    if (m.message() instanceof TopicRecord) {
                        ids.add(Integer.parseInt(((TopicRecord) m.message()).name().substring(1)));
                    } else {
                        ids.add(m.message().getClass().getSimpleName());
                    }
                }
                Map<String, Object> w = new LinkedHashMap<>();
                w.put("records", ids);
                synchronized (r.lock) {
                    r.record(Ctx.this, "acceptBatch", w);
                }
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<OffsetAndEpoch> completeMigration() {
                synchronized (r.lock) {
                    r.record(Ctx.this, "completeMigration", Collections.emptyMap());
                    return CompletableFuture.completedFuture(new OffsetAndEpoch(r.offset, r.epoch));
                }
            }

            @Override
            public void abortMigration() {
                synchronized (r.lock) {
                    r.record(Ctx.this, "abortMigration", Collections.emptyMap());
                }
            }
        }

        final class Propagator implements LegacyPropagator {
            @Override
            public void startup() {
            }

            @Override
            public void shutdown() {
            }

            @Override
            public void publishMetadata(MetadataImage image) {
            }

            @Override
            public void sendRPCsToBrokersFromMetadataDelta(org.apache.kafka.image.MetadataDelta delta,
                                                           MetadataImage image, int zkControllerEpoch) {
            }

            @Override
            public void sendRPCsToBrokersFromMetadataImage(MetadataImage image, int zkControllerEpoch) {
                gate("rpcs", false);
            }

            @Override
            public void clear() {
            }
        }
    }
}
