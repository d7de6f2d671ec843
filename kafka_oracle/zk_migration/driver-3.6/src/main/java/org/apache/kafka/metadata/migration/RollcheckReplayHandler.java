package org.apache.kafka.metadata.migration;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.NodeApiVersions;
import org.apache.kafka.common.Node;
import org.apache.kafka.controller.QuorumFeatures;
import org.apache.kafka.controller.metrics.QuorumControllerMetrics;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.metadata.KafkaConfigSchema;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The trace replay ({@link RollcheckReplayBase}, shared-driver) at the 3.6 epoch, its driver built as Kafka's
 * KRaftMigrationDriverTest builds it (3.6.1, metadata/src/test/java/org/apache/kafka/metadata/migration/
 * KRaftMigrationDriverTest.java): the driver's builder with metrics and a config schema, a delegation-token client,
 * a {@code CompletableFuture} from beginMigration; QuorumFeatures reads the other controllers' ApiVersions, not
 * controller registrations.
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
            driver = KRaftMigrationDriver.newBuilder()
                .setNodeId(NODE_BASE + voter)
                .setZkRecordConsumer(new Consumer0())
                .setZkMigrationClient(new Client())
                .setPropagator(new Propagator())
                .setInitialZkLoadHandler(publisher -> { })
                .setFaultHandler(faults)
                .setQuorumFeatures(features)
                .setConfigSchema(KafkaConfigSchema.EMPTY)
                .setControllerMetrics(new QuorumControllerMetrics(Optional.empty(), time, true))
                .setTime(time)
                .build();
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
            @Override
            public DelegationTokenMigrationClient delegationTokenClient() {
                return base.delegationTokenClient();
            }
        }

        final class Consumer0 extends ConsumerBase {
            @Override
            public CompletableFuture<?> beginMigration() {
                begin();
                return CompletableFuture.completedFuture(null);
            }
        }
    }
}
