package dev.aggforge.flink.shim;

import org.apache.flink.configuration.ReadableConfig;

/**
 * The few Flink calls that differ between the Flink versions aggforge supports. This copy is
 * compiled for Flink 1.20; src/shim/flink-2.x holds the 2.x one. The pom picks the directory
 * from {@code flink.version} (build-helper regex-property + add-source).
 */
public final class FlinkShim {
    /** The Flink minor line this shim was compiled for. */
    public static final String FLINK_LINE = "1.20";

    /**
     * Flink 1.20 returns SINGLE_VALUE over CHAR(n) as CHAR(n), its value padded or cut to n
     * characters; 2.x returns the value as it came (SingleValueParityTest shows both).
     */
    public static final boolean SINGLE_VALUE_PADS_CHAR = true;

    private FlinkShim() {}

    /** Flink 1.20 has no {@code table.exec.async-state.enabled} (added in 2.0): never async. */
    public static boolean asyncStateEnabled(ReadableConfig config) {
        return false;
    }
}
