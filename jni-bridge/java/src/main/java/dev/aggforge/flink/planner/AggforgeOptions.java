package dev.aggforge.flink.planner;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;

/** Table options read by the aggforge planner hook. */
public final class AggforgeOptions {

    private AggforgeOptions() {}

    /**
     * Whether the installed hook rewrites group aggregates. Read at every optimization, so it can
     * be switched per statement. Installing the hook is the opt-in, hence the default {@code
     * true}; set it to {@code false} to plan with stock Flink only.
     */
    public static final ConfigOption<Boolean> ENABLED =
            ConfigOptions.key("table.exec.aggforge.enabled")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Run supported GROUP BY aggregates with aggforge's native operators"
                                    + " (needs the aggforge hook installed: AggforgePlanner.install"
                                    + " or LOAD MODULE aggforge).");

    /** Bytes of state one native aggregate operator may hold (sent to the runtime in the plan). */
    public static final ConfigOption<MemorySize> MEMORY_BUDGET =
            ConfigOptions.key("table.exec.aggforge.memory-budget")
                    .memoryType()
                    .defaultValue(MemorySize.ofMebiBytes(1024))
                    .withDescription("State memory budget of one native aggregate operator.");
}
