package org.apache.kafka.controller;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.metadata.AbortTransactionRecord;
import org.apache.kafka.common.metadata.BeginTransactionRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.ZkMigrationStateRecord;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.metadata.migration.ZkMigrationState;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;

/** ActivationRecordsGenerator.generate (metadata/.../controller/ActivationRecordsGenerator.java, 3.6.0 - 3.9.x: the
 *  same package-private signature at every tag), for the state-3.6 and state-3.7 epochs: the bootstrap is
 *  BootstrapMetadata.fromVersion(level, source); a non-empty log's FeatureControlManager has the level and the
 *  ZkMigrationState replayed. */
final class RollcheckActivation {
    private RollcheckActivation() {
    }

    /** The request: "empty", "transactionStartOffset", "zkMigrationEnabled", "level" (null: none in the log), "state" (the replayed
     *  ZkMigrationState's name, non-empty log only), "source". The answer: "records", "atomic", "message". */
    static Map<String, Object> activationRecords(Map<String, Object> request) {
        boolean empty = Boolean.TRUE.equals(request.get("empty"));
        long offset = (Long) request.get("transactionStartOffset");
        boolean enabled = Boolean.TRUE.equals(request.get("zkMigrationEnabled"));
        // "level" null: a non-empty log without a FeatureLevelRecord, whose FeatureControlManager stays at
        // MINIMUM_KRAFT_VERSION, where QuorumController starts it (its bootstrap, unread, is built at the floor).
        Object level = request.get("level");
        MetadataVersion mv = level == null ? MetadataVersion.MINIMUM_KRAFT_VERSION
            : MetadataVersion.fromFeatureLevel(((Long) level).shortValue());
        String source = (String) request.get("source");
        BootstrapMetadata bootstrap = BootstrapMetadata.fromVersion(
            level == null ? MetadataVersion.MINIMUM_BOOTSTRAP_VERSION : mv, source);
        FeatureControlManager fcm = new FeatureControlManager.Builder().setMetadataVersion(mv).build();
        if (!empty) {
            if (level != null) {
                fcm.replay(new FeatureLevelRecord().setName(MetadataVersion.FEATURE_NAME)
                    .setFeatureLevel(mv.featureLevel()));
            }
            Object state = request.get("state");
            if (state != null) {
                fcm.replay(new ZkMigrationStateRecord().setZkMigrationState(
                    ZkMigrationState.valueOf((String) state).value()));
            }
        }
        StringBuilder message = new StringBuilder();
        ControllerResult<Void> result = ActivationRecordsGenerator.generate(
            message::append, empty, offset, enabled, bootstrap, fcm);
        List<Object> records = new ArrayList<>();
        for (ApiMessageAndVersion r : result.records()) {
            records.add(record(r.message()));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("records", records);
        out.put("atomic", result.isAtomic());
        out.put("message", message.toString());
        return out;
    }

    /** One record in the normal form: [class, the field that matters] (the transaction's name or abort reason,
     *  the metadata.version level, the ZkMigrationState's name). */
    static List<Object> record(ApiMessage m) {
        List<Object> r = new ArrayList<>();
        r.add(m.getClass().getSimpleName());
        if (m instanceof BeginTransactionRecord) {
            r.add(((BeginTransactionRecord) m).name());
        } else if (m instanceof AbortTransactionRecord) {
            r.add(((AbortTransactionRecord) m).reason());
        } else if (m instanceof FeatureLevelRecord) {
            r.add((long) ((FeatureLevelRecord) m).featureLevel());
        } else if (m instanceof ZkMigrationStateRecord) {
            r.add(ZkMigrationState.of(((ZkMigrationStateRecord) m).zkMigrationState()).name());
        } else {
            r.add(null);
        }
        return r;
    }
}
