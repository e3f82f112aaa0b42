package dev.aggforge.flink.bootstrap;

import java.util.Set;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.table.api.TableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.factories.ModuleFactory;
import org.apache.flink.table.module.Module;

/**
 * {@code LOAD MODULE aggforge}: installs the hook from SQL where the jar is not in {@code lib/}
 * with the planner loader (e.g. {@code ADD JAR} on a class path with {@code
 * flink-table-planner_2.12}). With the jar in {@code lib/} the hook is already there and this is
 * a no-op. The module provides no functions; {@code table.exec.aggforge.enabled} still decides.
 */
public final class AggforgeModuleFactory implements ModuleFactory {

    static {
        // Flink instantiates every factory when it discovers one: the earliest point at which
        // aggforge can tell that its planner factory lost to Flink's on the class path.
        PlannerBootstrap.checkSeam();
    }

    /** The module name used in {@code LOAD MODULE}. */
    public static final String IDENTIFIER = "aggforge";

    @Override
    public String factoryIdentifier() {
        return IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of();
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of();
    }

    @Override
    public Module createModule(Context context) {
        if (!(context.getConfiguration() instanceof TableConfig)) {
            throw new ValidationException(
                    "LOAD MODULE aggforge must run in a TableEnvironment (it installs a planner"
                            + " step on the environment's TableConfig)");
        }
        Aggforge.install((TableConfig) context.getConfiguration());
        return new AggforgeModule();
    }

    /** An empty module: loading it is what installs the hook. */
    static final class AggforgeModule implements Module {}
}
