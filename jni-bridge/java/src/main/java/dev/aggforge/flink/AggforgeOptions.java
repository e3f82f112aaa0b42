package dev.aggforge.flink;

import java.time.Duration;
import java.util.List;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;

/**
 * Every {@code table.exec.aggforge.*} option, read by the planner hook and the native operators.
 * Set them in the cluster's config.yaml, per session with {@code SET}, or on a TableConfig.
 */
public final class AggforgeOptions {

    private AggforgeOptions() {}

    /**
     * Whether supported group aggregates run natively. Off by default, so that the jar is inert in
     * {@code lib/} until a deployment turns it on; read at every optimization, so it can be
     * switched per statement ({@code SET 'table.exec.aggforge.enabled' = 'false'}).
     */
    public static final ConfigOption<Boolean> ENABLED =
            ConfigOptions.key("table.exec.aggforge.enabled")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Run supported GROUP BY aggregates with aggforge's native operators.");

    /** Bytes of state and bundle one native aggregate operator (subtask) may hold. */
    public static final ConfigOption<MemorySize> MEMORY_BUDGET =
            ConfigOptions.key("table.exec.aggforge.memory-budget")
                    .memoryType()
                    .defaultValue(MemorySize.ofMebiBytes(1024))
                    .withDescription("State memory budget of one native aggregate operator.");

    /**
     * Rows per Arrow batch handed to the runtime. Batching does not change the changelog (the
     * runtime emits per row); it only delays when rows leave the operator, up to the next full
     * batch, watermark, checkpoint or end of input.
     */
    public static final ConfigOption<Integer> BATCH_SIZE =
            ConfigOptions.key("table.exec.aggforge.batch-size")
                    .intType()
                    .defaultValue(1024)
                    .withDescription(
                            "Rows per Arrow batch a native aggregate operator hands to the runtime.");

    /**
     * How long a row may wait in a partly filled batch of an immediate-mode operator, or of the
     * columnar exchange feeding a processing-time window aggregate, before a processing-time
     * timer hands the batch over (bundled modes follow the mini-batch latency instead). Zero turns the timer off: then rows leave on a full batch, a watermark, a
     * checkpoint or end of input only.
     */
    public static final ConfigOption<Duration> MAX_DELAY =
            ConfigOptions.key("table.exec.aggforge.max-delay")
                    .durationType()
                    .defaultValue(Duration.ofMillis(100))
                    .withDescription(
                            "Longest time a row waits in a partly filled batch of an"
                                    + " immediate-mode native aggregate, or of the columnar"
                                    + " exchange feeding a window aggregate (0 = no timer; an"
                                    + " exchange feeding an event-time window then sends its"
                                    + " batch at every watermark instead of carrying the"
                                    + " watermark in the batch).");

    /**
     * Whether mini-batch (single phase) and two-phase aggregates run natively (on by default; a
     * switch to keep Flink's bundled operators while immediate mode runs natively).
     */
    public static final ConfigOption<Boolean> BUNDLED_ENABLED =
            ConfigOptions.key("table.exec.aggforge.bundled.enabled")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Also run mini-batch and two-phase group aggregates natively.");

    /**
     * Whether a native group aggregate fed by a hash exchange on its keys receives Arrow batches
     * instead of rows: the sending task transposes its rows once and routes them by key group
     * natively (see {@code docs/flink-integration.md}).
     */
    public static final ConfigOption<Boolean> COLUMNAR_EXCHANGE =
            ConfigOptions.key("table.exec.aggforge.columnar-exchange")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Ship Arrow batches, routed by key group in the sending task, into"
                                    + " native group aggregates instead of Flink's row exchange.");

    /** Values of {@link #JIT}. */
    public enum Jit {
        /** The fused loop where it is measured to win (plans with two or more fusable calls). */
        AUTO,
        /** The fused loop wherever a plan has a call it can fuse. */
        ON,
        /** The static per-call kernels only. */
        OFF;

        /** The plan wire value: {@code auto}, {@code on} or {@code off}. */
        public String wire() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * Whether a native aggregate's fixed-width calls (MIN/MAX/SUM/SUM0/AVG over integers and
     * floats, COUNT) fold in one loop compiled at run time (Cranelift) instead of one kernel per
     * call. Applies to the local phase and the mini-batch single phase over insert-only input; any
     * failure to compile falls back to the per-call kernels, logged.
     */
    public static final ConfigOption<Jit> JIT =
            ConfigOptions.key("table.exec.aggforge.jit")
                    .enumType(Jit.class)
                    .defaultValue(Jit.AUTO)
                    .withDescription(
                            "Fold a native aggregate's fixed-width calls in one JIT-compiled"
                                    + " loop: auto (where it wins), on, off.");

    /** All options, for validation and documentation. */
    public static List<ConfigOption<?>> all() {
        return List.of(
                ENABLED,
                MEMORY_BUDGET,
                BATCH_SIZE,
                MAX_DELAY,
                BUNDLED_ENABLED,
                COLUMNAR_EXCHANGE,
                JIT);
    }
}
