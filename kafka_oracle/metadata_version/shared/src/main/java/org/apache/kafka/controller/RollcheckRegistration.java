package org.apache.kafka.controller;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.metadata.FinalizedControllerFeatures;
import org.apache.kafka.metadata.VersionRange;

import static org.apache.kafka.controller.RollcheckRequests.error;
import static org.apache.kafka.controller.RollcheckRequests.ranges;

/** ClusterControlManager.registerBroker's feature checks (processRegistrationFeature) for every metadata_version
 *  adapter, kraft-3.3 .. kraft-4.1. The signatures that changed are reached by name, so that one source serves every
 *  epoch (metadata/.../controller/ClusterControlManager.java): registerBroker(request, epoch, features) in 3.3-3.6
 *  and 3.9, (..., short requestVersion) in 3.7-3.8, (..., boolean) in 4.x; the Builder's shutdown handler is required
 *  from 3.9 (BrokerUncleanShutdownHandler; 4.x: BrokerShutdownHandler) and is given a no-op, as is the
 *  ControllerMetrics interface 3.3.0-3.3.1 require (setControllerMetrics); directory assignment
 *  (MetadataVersion 3.7-IV2 on) wants one log directory. The registration is the model's: a new broker (no earlier
 *  incarnation), not a ZooKeeper broker, no listeners. */
final class RollcheckRegistration {
    private RollcheckRegistration() {
    }

    /** The request: "brokerId", "features" ({name: [min, max]}; absent: a broker that sends no range); the answer:
     *  the error (code, message) registerBroker's exception maps to (ApiError.fromThrowable), NONE when accepted. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> registerBroker(FeatureControlManager fcm, Map<String, Object> request) throws Exception {
        Object builder = new ClusterControlManager.Builder()
            .setClusterId("rollcheck")
            .setFeatureControlManager(fcm);
        for (Method m : builder.getClass().getDeclaredMethods()) {
            if (m.getName().matches("setBroker(Unclean)?ShutdownHandler|setControllerMetrics")
                    && m.getParameterCount() == 1 && m.getParameterTypes()[0].isInterface()) {
                Class<?> handler = m.getParameterTypes()[0];
                m.setAccessible(true);
                m.invoke(builder, Proxy.newProxyInstance(handler.getClassLoader(), new Class<?>[] {handler},
                    (proxy, method, args) -> noOp(method)));
            }
        }
        Method build = builder.getClass().getDeclaredMethod("build");
        build.setAccessible(true);
        ClusterControlManager ccm = (ClusterControlManager) build.invoke(builder);
        ccm.activate();
        BrokerRegistrationRequestData data = new BrokerRegistrationRequestData()
            .setClusterId("rollcheck")
            .setBrokerId(((Long) request.get("brokerId")).intValue())
            .setIncarnationId(Uuid.randomUuid());
        setLogDirs(data);
        Object features = request.get("features");
        if (features != null) {
            for (Map.Entry<String, VersionRange> e : ranges(features).entrySet()) {
                data.features().add(new BrokerRegistrationRequestData.Feature().setName(e.getKey())
                    .setMinSupportedVersion(e.getValue().min()).setMaxSupportedVersion(e.getValue().max()));
            }
        }
        FinalizedControllerFeatures finalized = fcm.finalizedFeatures(Long.MAX_VALUE);
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            RollcheckRegisterBroker.invoke(ccm, data, finalized);
            out.put("error", error(ApiError.NONE));
        } catch (InvocationTargetException e) {
            out.put("error", error(ApiError.fromThrowable(e.getCause())));
        }
        return out;
    }

    /** What a no-op implementation of an interface method returns: nothing, zero or false. */
    private static Object noOp(Method method) {
        Class<?> type = method.getReturnType();
        if (method.getName().equals("toString")) {
            return "no-op";
        }
        if (type == boolean.class) {
            return false;
        }
        if (type == int.class || type == short.class || type == byte.class) {
            return 0;
        }
        if (type == long.class) {
            return 0L;
        }
        if (type == double.class) {
            return 0.0;
        }
        if (type == float.class) {
            return 0.0f;
        }
        return null;
    }

    /** BrokerRegistrationRequestData.setLogDirs exists from 3.7 (directory assignment); one random directory. */
    private static void setLogDirs(BrokerRegistrationRequestData data) throws Exception {
        for (Method m : BrokerRegistrationRequestData.class.getMethods()) {
            if (m.getName().equals("setLogDirs")) {
                m.invoke(data, List.of(Uuid.randomUuid()));
                return;
            }
        }
    }
}
