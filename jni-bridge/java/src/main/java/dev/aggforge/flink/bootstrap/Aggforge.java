package dev.aggforge.flink.bootstrap;

import java.util.Optional;

import org.apache.flink.table.api.TableConfig;
import org.apache.flink.table.api.TableEnvironment;

/**
 * aggforge from code. With the jar in Flink's {@code lib/} (or on a class path with {@code
 * flink-table-planner-loader}) nothing needs calling: every TableEnvironment gets the hook, and
 * {@code table.exec.aggforge.enabled} turns it on. {@link #install} is for class paths that
 * carry {@code flink-table-planner_2.12} instead of the loader.
 */
public final class Aggforge {

    private Aggforge() {}

    /** Installs the hook on {@code tableEnv} (idempotent). */
    public static PlannerHook install(TableEnvironment tableEnv) {
        return install(tableEnv.getConfig());
    }

    /** Installs the hook on {@code config} (idempotent). */
    public static PlannerHook install(TableConfig config) {
        return PlannerBootstrap.install(config, plannerLoader());
    }

    /** The hook of {@code tableEnv}, if installed. */
    public static Optional<PlannerHook> hook(TableEnvironment tableEnv) {
        return PlannerBootstrap.installed(tableEnv.getConfig(), plannerLoader());
    }

    /** The loader that holds Flink's planner in this JVM. */
    static ClassLoader plannerLoader() {
        ClassLoader own = Aggforge.class.getClassLoader();
        if (PlannerBootstrap.plannerSeenBy(own)) {
            return own;
        }
        return PlannerBootstrap.plannerComponentLoader();
    }
}
