package org.apache.kafka.metadata.migration;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.NodeApiVersions;
import org.apache.kafka.common.Node;
import org.apache.kafka.controller.QuorumFeatures;
import org.apache.kafka.image.MetadataDelta;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The trace replay ({@link RollcheckReplayBase}, shared-driver) at the 3.5 epoch, its driver built as Kafka's
 * KRaftMigrationDriverTest builds it (3.5.2, metadata/src/test/java/org/apache/kafka/metadata/migration/
 * KRaftMigrationDriverTest.java): the driver's constructor (no builder, no metrics), no delegation-token client, a
 * void beginMigration; QuorumFeatures reads the other controllers' ApiVersions, as in 3.6.
 */
public class RollcheckReplayHandler extends RollcheckReplayBase {
    @Override
    Ctx newCtx(Replay r, int voter) {
        return new Voter(r, voter);
    }

    static final class Voter extends Ctx {
        // Kafka 3.5 / 3.6: the quorum's readiness is the other controllers' ApiVersions (zkMigrationEnabled), which
        // this controller's network client holds for the controllers it is connected to (the running ones).
        final ApiVersions apiVersions = new ApiVersions();

        Voter(Replay r, int voter) {
            super(r, voter);
            List<Node> ids = new ArrayList<>();
            for (int id : voterIds()) {
                ids.add(new Node(id, "localhost", 9093 + id - NODE_BASE));
            }
            QuorumFeatures features = QuorumFeatures.create(NODE_BASE + voter, apiVersions,
                QuorumFeatures.defaultFeatureMap(), ids);
            driver = new KRaftMigrationDriver(NODE_BASE + voter, new Consumer0(), new Client(), new Propagator(),
                publisher -> { }, faults, features, time);
        }

        // 3.5's driver polls every second (10 ms with the test's clock) and is woken by nothing else: a barrier
        // waits for two of its polls (each reads the clock once) on top of the quiet round trips.
        @Override
        int settleClockReads() {
            return 2;
        }

        @Override
        void publishControllers(MetadataDelta delta, Map<String, Object> had, Map<String, Object> want) {
            controllers(want, (v, ready, running) -> {
                String id = Integer.toString(NODE_BASE + v);
                if (running) {
                    apiVersions.update(id, new NodeApiVersions(Collections.emptyList(), Collections.emptyList(), ready));
                } else {
                    apiVersions.remove(id);
                }
            });
        }

        final class Client extends ClientBase {
        }

        final class Consumer0 extends ConsumerBase {
            @Override
            public void beginMigration() {
                begin();
            }
        }
    }
}
