package org.apache.kafka.metadata.migration;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.RegisterControllerRecord;
import org.apache.kafka.controller.QuorumFeatures;
import org.apache.kafka.controller.metrics.QuorumControllerMetrics;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.server.common.MetadataVersion;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The trace replay ({@link RollcheckReplayBase}, shared-driver) at the 3.7 epoch (3.7.x - 3.9.x), its driver built
 * as Kafka's KRaftMigrationDriverTest builds it (3.9.0-rc3, metadata/src/test/java/org/apache/kafka/metadata/
 * migration/KRaftMigrationDriverTest.java): the driver's builder, as in 3.6; QuorumFeatures reads the controller
 * registrations in the image (RegisterControllerRecord, from 3.7-IV0), not ApiVersions.
 */
public class RollcheckReplayHandler extends RollcheckReplayBase {
    @Override
    Ctx newCtx(Replay r, int voter) {
        return new Voter(r, voter);
    }

    static final class Voter extends Ctx {
        Voter(Replay r, int voter) {
            super(r, voter);
            QuorumFeatures features = new QuorumFeatures(NODE_BASE + voter, QuorumFeatures.defaultFeatureMap(true),
                voterIds());
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
            Map<Integer, Boolean> hadControllers = new HashMap<>();
            controllers(had, (v, ready, running) -> hadControllers.put(v, ready));
            if (r.quorumLevel >= MetadataVersion.IBP_3_7_IV0.featureLevel()) {
                controllers(want, (id, ready, running) -> {
                    if (!Boolean.valueOf(ready).equals(hadControllers.get(id))) {
                        delta.replay(new RegisterControllerRecord().setControllerId(NODE_BASE + id)
                            .setIncarnationId(new Uuid(0xC0, id + 1)).setZkMigrationReady(ready)
                            .setEndPoints(new RegisterControllerRecord.ControllerEndpointCollection())
                            .setFeatures(new RegisterControllerRecord.ControllerFeatureCollection()));
                    }
                });
            }
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
