package org.apache.kafka.controller;

import java.util.Map;

/** The ops the 3.6 and 3.7 epochs add to RollcheckZkMigrationBase's (shared/): activationRecords
 *  (ActivationRecordsGenerator, new in 3.6.0: RollcheckActivation) and registerBroker (RollcheckZkRegistration). */
public abstract class RollcheckZkMigrationActivation extends RollcheckZkMigrationBase {
    @Override
    protected Object other(String op, Map<String, Object> request) throws Exception {
        switch (op) {
            case "activationRecords":
                return RollcheckActivation.activationRecords(request);
            case "registerBroker":
                return RollcheckZkRegistration.registerBroker(request);
            default:
                return super.other(op, request);
        }
    }
}
