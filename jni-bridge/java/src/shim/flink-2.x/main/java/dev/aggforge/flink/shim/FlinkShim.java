package dev.aggforge.flink.shim;

import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.config.ExecutionConfigOptions;

/**
 * The few Flink calls that differ between the Flink versions aggforge supports. This copy is
 * compiled for Flink 2.x (2.2, 2.3); src/shim/flink-1.20 holds the 1.20 one. The pom picks the
 * directory from {@code flink.version} (build-helper regex-property + add-source).
 */
public final class FlinkShim {
    /** The Flink minor line this shim was compiled for. */
    public static final String FLINK_LINE = "2.x";

    /**
     * Flink 1.20 returns SINGLE_VALUE over CHAR(n) as CHAR(n), padded or cut; 2.x returns the
     * value as it came, as aggforge does.
     */
    public static final boolean SINGLE_VALUE_PADS_CHAR = false;

    private FlinkShim() {}

    /** {@code table.exec.async-state.enabled} (added in Flink 2.0). */
    public static boolean asyncStateEnabled(ReadableConfig config) {
        return config.get(ExecutionConfigOptions.TABLE_EXEC_ASYNC_STATE_ENABLED);
    }
}
