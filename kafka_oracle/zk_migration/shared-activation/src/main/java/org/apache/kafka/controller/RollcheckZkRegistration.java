package org.apache.kafka.controller;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.metadata.FinalizedControllerFeatures;
import org.apache.kafka.server.common.MetadataVersion;

/** ClusterControlManager.registerBroker with a ZooKeeper broker in migration mode (IsMigratingZkBroker, its IBP as
 *  the metadata.version range, the PLAINTEXT listener), for the state-3.6 and state-3.7 epochs
 *  (metadata/.../controller/ClusterControlManager.java at 3.6.0 - 3.9.x). registerBroker's signature changed
 *  (request, epoch, features) in 3.6 and 3.9, (..., short requestVersion) in 3.7 - 3.8, and 3.9's Builder wants a
 *  BrokerUncleanShutdownHandler: both are reached by name (a no-op handler), so that one source serves both epochs.
 *  The controller's FeatureControlManager holds the quorum's metadata.version; the Builder's zkMigrationEnabled is
 *  the controller's migration config. A new broker (no earlier incarnation). */
final class RollcheckZkRegistration {
    private RollcheckZkRegistration() {
    }

    /** The request: "brokerId", "ibp", "level" (the finalized metadata.version), "zkMigrationEnabled". The answer:
     *  {"accepted": true} or {"accepted": false, "error": the exception's simple class name, "message"}. */
    static Map<String, Object> registerBroker(Map<String, Object> request) throws Exception {
        MetadataVersion mv = MetadataVersion.fromFeatureLevel(((Long) request.get("level")).shortValue());
        FeatureControlManager fcm = new FeatureControlManager.Builder().setMetadataVersion(mv).build();
        fcm.replay(new FeatureLevelRecord().setName(MetadataVersion.FEATURE_NAME).setFeatureLevel(mv.featureLevel()));
        Object builder = new ClusterControlManager.Builder()
            .setClusterId("rollcheck")
            .setFeatureControlManager(fcm)
            .setZkMigrationEnabled(Boolean.TRUE.equals(request.get("zkMigrationEnabled")));
        for (Method m : builder.getClass().getDeclaredMethods()) {
            if (m.getName().matches("setBroker(Unclean)?ShutdownHandler") && m.getParameterCount() == 1
                    && m.getParameterTypes()[0].isInterface()) {
                Class<?> handler = m.getParameterTypes()[0];
                m.setAccessible(true);
                m.invoke(builder, Proxy.newProxyInstance(handler.getClassLoader(), new Class<?>[] {handler},
                    (proxy, method, args) -> method.getName().equals("toString") ? "no-op" : null));
            }
        }
        Method build = builder.getClass().getDeclaredMethod("build");
        build.setAccessible(true);
        ClusterControlManager ccm = (ClusterControlManager) build.invoke(builder);
        ccm.activate();
        short ibp = ((Long) request.get("ibp")).shortValue();
        BrokerRegistrationRequestData data = new BrokerRegistrationRequestData()
            .setClusterId("rollcheck")
            .setBrokerId(((Long) request.get("brokerId")).intValue())
            .setIncarnationId(Uuid.randomUuid())
            .setIsMigratingZkBroker(true);
        data.listeners().add(new BrokerRegistrationRequestData.Listener().setName("PLAINTEXT").setHost("localhost")
            .setPort(9092).setSecurityProtocol((short) 0));
        data.features().add(new BrokerRegistrationRequestData.Feature().setName(MetadataVersion.FEATURE_NAME)
            .setMinSupportedVersion(ibp).setMaxSupportedVersion(ibp));
        for (Method m : BrokerRegistrationRequestData.class.getMethods()) {
            if (m.getName().equals("setLogDirs")) {  // 3.7+: directory assignment
                m.invoke(data, List.of(Uuid.randomUuid()));
            }
        }
        FinalizedControllerFeatures finalized = fcm.finalizedFeatures(Long.MAX_VALUE);
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            RollcheckRegisterBroker.invoke(ccm, data, finalized);
            out.put("accepted", true);
        } catch (InvocationTargetException e) {
            out.put("accepted", false);
            out.put("error", e.getCause().getClass().getSimpleName());
            out.put("message", e.getCause().getMessage());
        }
        return out;
    }
}
