package org.apache.kafka.controller;

import java.lang.reflect.Method;

import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.metadata.FinalizedControllerFeatures;

/** ClusterControlManager.registerBroker, whose signature changed across the KRaft releases, found by name: what both
 *  KRaft families ask (metadata_version's registerBroker, zk_migration's registration of a ZooKeeper broker), one
 *  source added to their epochs' poms. Declared in Kafka's controller package, as its callers are. */
final class RollcheckRegisterBroker {
    private RollcheckRegisterBroker() {
    }

    /** registerBroker(request, brokerEpoch 1, finalized[, the request's version: the newest the release reads |
     *  a cleanShutdownDetectionEnabled true]); Kafka's refusal is the InvocationTargetException's cause. */
    static void invoke(ClusterControlManager ccm, BrokerRegistrationRequestData data,
                       FinalizedControllerFeatures finalized) throws Exception {
        for (Method m : ClusterControlManager.class.getMethods()) {
            if (!m.getName().equals("registerBroker")) {
                continue;
            }
            Class<?>[] p = m.getParameterTypes();
            if (p.length == 3) {
                m.invoke(ccm, data, 1L, finalized);
                return;
            }
            if (p.length == 4 && p[3] == short.class) {
                m.invoke(ccm, data, 1L, finalized, BrokerRegistrationRequestData.HIGHEST_SUPPORTED_VERSION);
                return;
            }
            if (p.length == 4 && p[3] == boolean.class) {
                m.invoke(ccm, data, 1L, finalized, true);
                return;
            }
        }
        throw new IllegalStateException("no known ClusterControlManager.registerBroker signature");
    }
}
