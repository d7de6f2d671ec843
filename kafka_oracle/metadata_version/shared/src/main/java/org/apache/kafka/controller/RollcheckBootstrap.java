package org.apache.kafka.controller;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;

/** How a new controller starts its metadata.version, for every metadata_version epoch: the records
 *  {@code BootstrapMetadata.fromVersion} bootstraps an empty log with (public and unchanged since 3.3, its
 *  constructor refusing a level below MINIMUM_BOOTSTRAP_VERSION), and the records an activating controller writes
 *  ({@code ActivationRecordsGenerator.generate}, package-private, new in 3.6.0; reached by name because its
 *  signature changed at 4.0 and 4.1, and absent before 3.6). Only the metadata.version records are read: the rest
 *  (transaction markers, ZkMigrationStateRecord, 4.x's min.insync.replicas config) is listed by its type. */
final class RollcheckBootstrap {
    private RollcheckBootstrap() {
    }

    /** Request {"level", "source"}: {"metadataVersion": level, "records": [...]}, or what the constructor threw. */
    static Map<String, Object> bootstrapMetadata(Map<String, Object> request) {
        MetadataVersion mv = MetadataVersion.fromFeatureLevel(((Long) request.get("level")).shortValue());
        BootstrapMetadata b = BootstrapMetadata.fromVersion(mv, (String) request.get("source"));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("metadataVersion", (long) b.metadataVersion().featureLevel());
        out.put("records", records(b.records()));
        return out;
    }

    /** Request {"empty", "level": the bootstrap's level, "source", and "bootstrapLevel" for a non-empty log}; a non-empty log is one without a
     *  FeatureLevelRecord (a cluster created before KIP-778): its controller runs at MINIMUM_KRAFT_VERSION, as
     *  QuorumController's FeatureControlManager starts there (3.6 - 3.9). The answer: {"records": [...],
     *  "metadataVersion": the level the records leave (the starting one when they write none)}; {"missing":
     *  "ActivationRecordsGenerator"} before 3.6. */
    static Map<String, Object> activation(Map<String, Object> request) throws Exception {
        boolean empty = Boolean.TRUE.equals(request.get("empty"));
        MetadataVersion mv = MetadataVersion.fromFeatureLevel(((Long) request.get("level")).shortValue());
        // A non-empty log does not read its bootstrap (BootstrapDirectory.read's, from the IBP when there is no
        // bootstrap.checkpoint): the request names a level it can be built at ("bootstrapLevel").
        Object b = request.getOrDefault("bootstrapLevel", request.get("level"));
        BootstrapMetadata bootstrap = BootstrapMetadata.fromVersion(
            MetadataVersion.fromFeatureLevel(((Long) b).shortValue()), (String) request.get("source"));
        Class<?> gen;
        try {
            gen = Class.forName("org.apache.kafka.controller.ActivationRecordsGenerator");
        } catch (ClassNotFoundException e) {
            return Map.of("missing", "ActivationRecordsGenerator");
        }
        Consumer<String> log = message -> { };
        // MINIMUM_KRAFT_VERSION (3.0-IV1), the controller's starting level before a FeatureLevelRecord (3.x only:
        // 4.0's catalog starts at 3.3-IV3, and no 4.x log lacks the record).
        MetadataVersion start = empty ? mv : MetadataVersion.fromFeatureLevel((short) 1);
        ControllerResult<?> result = null;
        for (Method m : gen.getDeclaredMethods()) {
            if (!m.getName().equals("generate")) {
                continue;
            }
            Class<?>[] p = m.getParameterTypes();
            try {
                if (p.length == 6 && p[5] == FeatureControlManager.class) {
                    // 3.6 - 3.9: (consumer, isEmpty, transactionStartOffset, zkMigrationEnabled, bootstrap, featureControl)
                    // Builder.setMetadataVersion is gone from 4.1: named, so that this source compiles at every epoch.
                    FeatureControlManager.Builder builder = new FeatureControlManager.Builder();
                    FeatureControlManager.Builder.class.getDeclaredMethod("setMetadataVersion", MetadataVersion.class)
                        .invoke(builder, MetadataVersion.fromFeatureLevel((short) 1));
                    FeatureControlManager fcm = builder.build();
                    result = (ControllerResult<?>) m.invoke(null, log, empty, -1L, false, bootstrap, fcm);
                } else if (p.length == 6) {
                    // 4.0: (consumer, isEmpty, transactionStartOffset, bootstrap, curMetadataVersion, minInSyncReplicas)
                    result = (ControllerResult<?>) m.invoke(null, log, empty, -1L, bootstrap, start, 1);
                } else if (p.length == 5) {
                    // 4.1+: (consumer, transactionStartOffset, bootstrap, Optional<curMetadataVersion>, minInSyncReplicas)
                    result = (ControllerResult<?>) m.invoke(null, log, -1L, bootstrap,
                        empty ? Optional.empty() : Optional.of(start), 1);
                }
            } catch (InvocationTargetException e) {
                throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
            }
        }
        if (result == null) {
            return Map.of("missing", "ActivationRecordsGenerator.generate");
        }
        @SuppressWarnings("unchecked")
        List<ApiMessageAndVersion> written = (List<ApiMessageAndVersion>) result.records();
        long level = empty ? -1 : start.featureLevel();  // an empty log left without one: -1
        for (ApiMessageAndVersion r : written) {
            if (r.message() instanceof FeatureLevelRecord
                && ((FeatureLevelRecord) r.message()).name().equals(MetadataVersion.FEATURE_NAME)) {
                level = ((FeatureLevelRecord) r.message()).featureLevel();
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("records", records(written));
        out.put("metadataVersion", level);
        return out;
    }

    /** [name, level] for a FeatureLevelRecord, [type] for any other record. */
    static List<Object> records(List<ApiMessageAndVersion> records) {
        List<Object> out = new ArrayList<>();
        for (ApiMessageAndVersion r : records) {
            if (r.message() instanceof FeatureLevelRecord) {
                FeatureLevelRecord f = (FeatureLevelRecord) r.message();
                out.add(List.of(f.name(), (long) f.featureLevel()));
            } else {
                out.add(List.of(r.message().getClass().getSimpleName()));
            }
        }
        return out;
    }
}
