package dev.aggforge.flink.operator;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Objects;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.annotation.JsonCreator;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.annotation.JsonInclude;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.annotation.JsonProperty;
import org.apache.flink.table.types.logical.RowType;

/**
 * Everything a {@link NativeGroupAggOperator} needs at run time, fixed at planning time and
 * shipped with the job graph (Java serialization) and in compiled plans (Flink's JSON plan, one
 * field per accessor).
 */
public final class NativeOperatorSpec implements Serializable {

    private static final long serialVersionUID = 1L;

    /** How the operator emits: Flink's four group-aggregate operators. */
    public enum Mode {
        /** Single phase, per row (GroupAggFunction). */
        IMMEDIATE,
        /** Single phase, per bundle (MiniBatchGroupAggFunction). */
        MINI_BATCH,
        /** Local phase: per-bundle partials, no state (MiniBatchLocalGroupAggFunction). */
        LOCAL,
        /** Global phase: merges partials per bundle (MiniBatchGlobalGroupAggFunction). */
        GLOBAL,
        /**
         * Window aggregate, single or global phase (WindowAggOperator): folds rows into slices,
         * fires the windows each watermark passes.
         */
        WINDOW,
        /** Window aggregate, local phase (LocalSlicingWindowAggOperator): per-slice partials. */
        LOCAL_WINDOW,
        /**
         * Window aggregate over processing time, single phase (WindowAggOperator): places each row
         * at the processing time it arrives at, fires the windows processing-time timers pass.
         */
        PROCTIME_WINDOW;

        /** Whether rows are collected in bundles that are flushed as a whole. */
        public boolean bundled() {
            return this != IMMEDIATE;
        }

        /** Whether the operator keeps keyed state (every mode but the local phases). */
        public boolean keyed() {
            return this != LOCAL && this != LOCAL_WINDOW;
        }

        /** Whether the operator fires windows by event time (its watermark is state). */
        public boolean firesWindows() {
            return this == WINDOW;
        }

        /** Whether the operator is a window aggregate (any phase, any time). */
        public boolean windowed() {
            return this == WINDOW || this == LOCAL_WINDOW || this == PROCTIME_WINDOW;
        }

        /** Whether the operator is a window aggregate that watermarks move (event time). */
        public boolean followsWatermarks() {
            return this == WINDOW || this == LOCAL_WINDOW;
        }

        /** Whether the operator's windows are in processing time. */
        public boolean processingTime() {
            return this == PROCTIME_WINDOW;
        }
    }

    private final String planJson;
    private final RowType inputType;
    private final RowType outputType;
    private final int[] columns;
    private final boolean withRowKind;
    private final Mode mode;
    private final long bundleSize;
    private final int batchSize;
    private final long maxDelayMs;
    private final String specializations;
    private final RowType keyType;
    private final RowType accType;
    private final RowType viewTypes;

    /**
     * @param planJson the runtime plan; its column indexes refer to the transposed batch
     * @param inputType the operator's input rows
     * @param outputType the operator's output rows
     * @param columns the input fields transposed into each batch, in batch column order
     * @param withRowKind whether batches carry the {@code $row_kind} column
     * @param mode emission mode
     * @param bundleSize elements per bundle (table.exec.mini-batch.size) for bundled modes
     * @param batchSize rows per Arrow batch handed to the runtime
     * @param maxDelayMs immediate mode: longest wait of a row in a partly filled batch (0: no
     *     timer)
     * @param specializations the runtime's admission answer (for EXPLAIN and logs)
     */
    public NativeOperatorSpec(
            String planJson,
            RowType inputType,
            RowType outputType,
            int[] columns,
            boolean withRowKind,
            Mode mode,
            long bundleSize,
            int batchSize,
            long maxDelayMs,
            String specializations) {
        this(
                planJson,
                inputType,
                outputType,
                columns,
                withRowKind,
                mode,
                bundleSize,
                batchSize,
                maxDelayMs,
                specializations,
                null,
                null,
                null);
    }

    /**
     * A spec whose operator keeps its state in Flink's layout when {@code keyType} and {@code
     * accType} are set (see {@link #accType}); the other parameters as above.
     */
    @JsonCreator
    public NativeOperatorSpec(
            @JsonProperty("planJson") String planJson,
            @JsonProperty("inputType") RowType inputType,
            @JsonProperty("outputType") RowType outputType,
            @JsonProperty("columns") int[] columns,
            @JsonProperty("withRowKind") boolean withRowKind,
            @JsonProperty("mode") Mode mode,
            @JsonProperty("bundleSize") long bundleSize,
            @JsonProperty("batchSize") int batchSize,
            @JsonProperty("maxDelayMs") long maxDelayMs,
            @JsonProperty("specializations") String specializations,
            @JsonProperty("keyType") RowType keyType,
            @JsonProperty("accType") RowType accType,
            @JsonProperty("viewTypes") RowType viewTypes) {
        this.planJson = Objects.requireNonNull(planJson);
        this.inputType = Objects.requireNonNull(inputType);
        this.outputType = Objects.requireNonNull(outputType);
        this.columns = columns.clone();
        this.withRowKind = withRowKind;
        this.mode = Objects.requireNonNull(mode);
        if (mode.bundled() && bundleSize <= 0) {
            throw new IllegalArgumentException(mode + " needs a bundle size > 0, got " + bundleSize);
        }
        if (batchSize <= 0) {
            throw new IllegalArgumentException("batch size must be > 0, got " + batchSize);
        }
        this.bundleSize = bundleSize;
        this.batchSize = batchSize;
        if (maxDelayMs < 0) {
            throw new IllegalArgumentException("max delay must be >= 0, got " + maxDelayMs);
        }
        this.maxDelayMs = maxDelayMs;
        this.specializations = Objects.requireNonNull(specializations);
        if ((keyType == null) != (accType == null)) {
            throw new IllegalArgumentException("key and accumulator rows come together");
        }
        this.keyType = keyType;
        this.accType = accType;
        this.viewTypes = viewTypes;
    }

    /**
     * This spec with Flink's state layout: the key row {@code keyType} (the group keys), the
     * accumulator row {@code accType} (see {@link #accType}) and the data views of its structured
     * accumulators {@code viewTypes} (see {@link #viewTypes}).
     */
    public NativeOperatorSpec withState(RowType keyType, RowType accType, RowType viewTypes) {
        return new NativeOperatorSpec(
                planJson,
                inputType,
                outputType,
                columns,
                withRowKind,
                mode,
                bundleSize,
                batchSize,
                maxDelayMs,
                specializations,
                keyType,
                accType,
                viewTypes);
    }

    /** The plan with {@code max_parallelism} set to the job's real value. */
    public String planJson(int maxParallelism) {
        return planJson.replaceFirst(
                "\"max_parallelism\":\\d+", "\"max_parallelism\":" + maxParallelism);
    }

    /** The plan as planned. */
    @JsonProperty("planJson")
    public String planJson() {
        return planJson;
    }

    /** The operator's input row type. */
    @JsonProperty("inputType")
    public RowType inputType() {
        return inputType;
    }

    /** The operator's output row type. */
    @JsonProperty("outputType")
    public RowType outputType() {
        return outputType;
    }

    /** Input fields transposed into each batch. */
    @JsonProperty("columns")
    public int[] columns() {
        return columns.clone();
    }

    /** Whether batches carry {@code $row_kind}. */
    @JsonProperty("withRowKind")
    public boolean withRowKind() {
        return withRowKind;
    }

    /** Emission mode. */
    @JsonProperty("mode")
    public Mode mode() {
        return mode;
    }

    /** Elements per bundle (bundled modes). */
    @JsonProperty("bundleSize")
    public long bundleSize() {
        return bundleSize;
    }

    /** Rows per Arrow batch. */
    @JsonProperty("batchSize")
    public int batchSize() {
        return batchSize;
    }

    /** Immediate mode: longest wait of a row in a partly filled batch, in ms (0: no timer). */
    @JsonProperty("maxDelayMs")
    public long maxDelayMs() {
        return maxDelayMs;
    }

    /**
     * Flink's accumulator row of the operator this one stands for (its {@code accState} value
     * type), or null: the state then stays in aggforge's snapshot format (compiled plans written
     * before this field existed, and the local and window phases).
     */
    @JsonProperty("accType")
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public RowType accType() {
        return accType;
    }

    /**
     * The data views Flink keeps in state for the structured accumulators of {@link #accType}
     * (MinWithRetractAccumulator's {@code map}), in field and attribute order: each a field named
     * by its state ({@code agg<i>$<attribute>}) of type {@code MAP<key, value>} (a MapView) or
     * {@code ARRAY<element>} (a ListView); null when there are none.
     */
    @JsonProperty("viewTypes")
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public RowType viewTypes() {
        return viewTypes;
    }

    /** The group keys' row (the keyed state's key), set with {@link #accType}, else null. */
    @JsonProperty("keyType")
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public RowType keyType() {
        return keyType;
    }

    /** The runtime's admission answer. */
    @JsonProperty("specializations")
    public String specializations() {
        return specializations;
    }

    @Override
    public String toString() {
        return "NativeOperatorSpec{mode="
                + mode
                + ", columns="
                + Arrays.toString(columns)
                + ", bundleSize="
                + bundleSize
                + ", batchSize="
                + batchSize
                + ", maxDelayMs="
                + maxDelayMs
                + ", "
                + specializations
                + "}";
    }
}
