package dev.aggforge.flink.planner;

import java.util.Set;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.table.api.TableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.factories.ModuleFactory;
import org.apache.flink.table.module.Module;

/**
 * {@code LOAD MODULE aggforge}: the SQL way to install the hook (SQL client, SQL gateway, or
 * {@code executeSql}), for users who cannot call {@link AggforgePlanner#install}. Flink hands the
 * environment's {@link TableConfig} to module factories as their configuration; this factory
 * installs the hook on it. The module itself provides no functions. Unloading the module does not
 * uninstall the hook; set {@code table.exec.aggforge.enabled} to false instead.
 */
public final class AggforgeModuleFactory implements ModuleFactory {

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
        AggforgePlanner.install((TableConfig) context.getConfiguration());
        return new AggforgeModule();
    }

    /** An empty module: loading it is what installs the hook. */
    static final class AggforgeModule implements Module {}
}
