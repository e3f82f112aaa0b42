package dev.aggforge.flink.operator;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

import dev.aggforge.flink.nativelib.NativeAggregate;

/**
 * The Flink metrics of one {@link NativeGroupAggOperator}, in the subgroup {@value #GROUP} of the
 * operator's metric group (REST: {@code <subtask>.<operator>.aggforge.<name>}).
 *
 * <p>Threads: the operator thread is the only writer; Flink's metric reporters and the REST
 * metric fetcher read from their own threads. Every value is a {@code volatile long}, so a reader
 * sees a whole value the writer published (never a torn or cached one), and with one writer a
 * plain read-add-write on it loses nothing. No read calls native code: the native values (bytes,
 * groups, budget) are copied here by the operator thread after its own native calls, so a reader
 * never touches the native operator, which is not thread-safe and may be closed.
 */
public final class NativeOperatorMetrics {

    /** The metric subgroup's name. */
    public static final String GROUP = "aggforge";

    /** Gauge: bytes of native state and bundle (measured by the runtime). */
    public static final String NATIVE_BYTES = "nativeBytes";

    /** Gauge: the native memory budget in bytes ({@code table.exec.aggforge.memory-budget}). */
    public static final String MEMORY_BUDGET_BYTES = "memoryBudgetBytes";

    /** Gauge: groups with native state (local phase: groups in the open bundle). */
    public static final String GROUPS = "groups";

    /** Counter: input rows handed to the runtime. */
    public static final String ROWS_IN = "rowsIn";

    /** Counter: changelog (or partial) rows the operator emitted. */
    public static final String ROWS_OUT = "rowsOut";

    /** Counter: input batches handed to the runtime. */
    public static final String BATCHES_IN = "batchesIn";

    /** Counter: output batches the runtime returned. */
    public static final String BATCHES_OUT = "batchesOut";

    /** Counter: nanoseconds spent inside the operator's native calls. */
    public static final String NATIVE_TIME_NANOS = "nativeTimeNanos";

    /**
     * Counter in the operator's own group, as Flink's window operator names it: rows a window
     * aggregate dropped as late.
     */
    public static final String LATE_RECORDS_DROPPED = "numLateRecordsDropped";

    private final OneWriterCounter rowsIn = new OneWriterCounter();
    private final OneWriterCounter rowsOut = new OneWriterCounter();
    private final OneWriterCounter batchesIn = new OneWriterCounter();
    private final OneWriterCounter batchesOut = new OneWriterCounter();
    private final OneWriterCounter nativeTimeNanos = new OneWriterCounter();
    private final OneWriterCounter lateDropped = new OneWriterCounter();
    private volatile long nativeBytes;
    private volatile long memoryBudgetBytes;
    private volatile long groups;

    private NativeOperatorMetrics() {}

    /** Creates the metrics and registers them in the {@value #GROUP} subgroup of {@code operator}. */
    public static NativeOperatorMetrics register(MetricGroup operator) {
        NativeOperatorMetrics metrics = new NativeOperatorMetrics();
        MetricGroup group = operator.addGroup(GROUP);
        group.gauge(NATIVE_BYTES, (Gauge<Long>) () -> metrics.nativeBytes);
        group.gauge(MEMORY_BUDGET_BYTES, (Gauge<Long>) () -> metrics.memoryBudgetBytes);
        group.gauge(GROUPS, (Gauge<Long>) () -> metrics.groups);
        group.counter(ROWS_IN, metrics.rowsIn);
        group.counter(ROWS_OUT, metrics.rowsOut);
        group.counter(BATCHES_IN, metrics.batchesIn);
        group.counter(BATCHES_OUT, metrics.batchesOut);
        group.counter(NATIVE_TIME_NANOS, metrics.nativeTimeNanos);
        operator.counter(LATE_RECORDS_DROPPED, metrics.lateDropped);
        return metrics;
    }

    /** Operator thread: one input batch of {@code rows} rows went to the runtime. */
    void batchIn(int rows) {
        batchesIn.inc();
        rowsIn.inc(rows);
    }

    /** Operator thread: one output batch of {@code rows} rows came back and was emitted. */
    void batchOut(int rows) {
        batchesOut.inc();
        rowsOut.inc(rows);
    }

    /** Operator thread: publishes a {@link NativeAggregate#stats} array. */
    void publishStats(long[] stats) {
        nativeBytes = stats[NativeAggregate.STATS_MEMORY_USED];
        memoryBudgetBytes = stats[NativeAggregate.STATS_MEMORY_BUDGET];
        groups = stats[NativeAggregate.STATS_GROUPS];
        long late = stats[NativeAggregate.STATS_LATE_DROPPED] - lateDropped.getCount();
        if (late > 0) {
            lateDropped.inc(late);
        }
    }

    /** Rows dropped as late so far (window aggregates), as last published. */
    public long lateRecordsDropped() {
        return lateDropped.getCount();
    }

    /** Operator thread: publishes the cumulative native time (never decreases). */
    void publishNativeNanos(long total) {
        long added = total - nativeTimeNanos.getCount();
        if (added > 0) {
            nativeTimeNanos.inc(added);
        }
    }

    /** The last published bytes held. */
    public long nativeBytes() {
        return nativeBytes;
    }

    /** The last published budget. */
    public long memoryBudgetBytes() {
        return memoryBudgetBytes;
    }

    /** The last published group count. */
    public long groups() {
        return groups;
    }

    /** Input rows so far. */
    public long rowsIn() {
        return rowsIn.getCount();
    }

    /** Output rows so far. */
    public long rowsOut() {
        return rowsOut.getCount();
    }

    /** Input batches so far. */
    public long batchesIn() {
        return batchesIn.getCount();
    }

    /** Output batches so far. */
    public long batchesOut() {
        return batchesOut.getCount();
    }

    /** Nanoseconds in native calls so far (as last published). */
    public long nativeTimeNanos() {
        return nativeTimeNanos.getCount();
    }

    /**
     * A counter with one writing thread and any number of reading threads: the count is a {@code
     * volatile long}, and the single writer's read-add-write cannot race another write.
     */
    private static final class OneWriterCounter implements Counter {
        private volatile long count;

        @Override
        public void inc() {
            count = count + 1;
        }

        @Override
        public void inc(long n) {
            count = count + n;
        }

        @Override
        public void dec() {
            count = count - 1;
        }

        @Override
        public void dec(long n) {
            count = count - n;
        }

        @Override
        public long getCount() {
            return count;
        }
    }
}
