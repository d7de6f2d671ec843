package org.apache.kafka.controller;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.metadata.migration.ZkMigrationState;

/** What every zk_migration epoch asks the same way (the folder's README): the persisted ZkMigrationState's codes
 *  (metadata/.../migration/ZkMigrationState.java, every release from 3.4.0), the migration driver's state-change
 *  table (KRaftMigrationDriver.isValidStateChange, a private instance method reading the driver's migrationState
 *  field at every release 3.4.0 - 3.9.x; the enum is MigrationState in 3.4, MigrationDriverState from 3.5) and the
 *  records an activation writes, in the binding's normal form. */
public final class RollcheckZkState {
    private RollcheckZkState() {
    }

    private static final String MIGRATION = "org.apache.kafka.metadata.migration.";

    /** The code of the state named "name" (ZkMigrationState.value()) and the state that code decodes to
     *  (ZkMigrationState.of); {"missing": name} when the release's enum has no such state. */
    static Map<String, Object> zkMigrationState(Map<String, Object> request) {
        String name = (String) request.get("name");
        Map<String, Object> out = new LinkedHashMap<>();
        ZkMigrationState state;
        try {
            state = ZkMigrationState.valueOf(name);
        } catch (IllegalArgumentException e) {
            out.put("missing", name);
            return out;
        }
        out.put("code", (long) state.value());
        out.put("of", ZkMigrationState.of(state.value()).name());
        return out;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static Class<? extends Enum> driverStateClass() throws ClassNotFoundException {
        try {
            return (Class<? extends Enum>) Class.forName(MIGRATION + "MigrationDriverState");
        } catch (ClassNotFoundException e) {
            return (Class<? extends Enum>) Class.forName(MIGRATION + "MigrationState");  // 3.4.x
        }
    }

    /** The release's driver states, in declaration order. */
    static Map<String, Object> driverStates() throws ClassNotFoundException {
        List<Object> names = new ArrayList<>();
        for (Object c : driverStateClass().getEnumConstants()) {
            names.add(((Enum<?>) c).name());
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("class", driverStateClass().getSimpleName());
        out.put("states", names);
        return out;
    }

    /** A KRaftMigrationDriver without running its constructor (which starts an event queue thread and needs a
     *  ZooKeeper client): the state-change table and the 3.4 readiness stub read no other field. */
    static Object bareDriver() throws ReflectiveOperationException {
        Field f = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
        f.setAccessible(true);
        Object unsafe = f.get(null);
        Method allocate = unsafe.getClass().getMethod("allocateInstance", Class.class);
        return allocate.invoke(unsafe, Class.forName(MIGRATION + "KRaftMigrationDriver"));
    }

    /** KRaftMigrationDriver.isValidStateChange(new) with the driver in "from": {"valid": bool}, or
     *  {"missing": [names]} when the release's enum lacks a state. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static Map<String, Object> driverStateChange(Map<String, Object> request) throws ReflectiveOperationException {
        Class<? extends Enum> cls = driverStateClass();
        String from = (String) request.get("from");
        String to = (String) request.get("to");
        Map<String, Object> out = new LinkedHashMap<>();
        List<Object> missing = new ArrayList<>();
        Enum current = null;
        Enum next = null;
        try {
            current = Enum.valueOf(cls, from);
        } catch (IllegalArgumentException e) {
            missing.add(from);
        }
        try {
            next = Enum.valueOf(cls, to);
        } catch (IllegalArgumentException e) {
            missing.add(to);
        }
        if (!missing.isEmpty()) {
            out.put("missing", missing);
            return out;
        }
        Object driver = bareDriver();
        Class<?> driverClass = driver.getClass();
        Field state = driverClass.getDeclaredField("migrationState");
        state.setAccessible(true);
        state.set(driver, current);
        Method valid = driverClass.getDeclaredMethod("isValidStateChange", cls);
        valid.setAccessible(true);
        out.put("valid", valid.invoke(driver, next));
        return out;
    }
}
