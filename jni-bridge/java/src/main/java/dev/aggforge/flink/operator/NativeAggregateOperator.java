package dev.aggforge.flink.operator;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.core.memory.DataOutputViewStreamWrapper;
import org.apache.flink.runtime.state.KeyGroupStatePartitionStreamProvider;
import org.apache.flink.runtime.state.KeyGroupsList;
import org.apache.flink.runtime.state.KeyedStateCheckpointOutputStream;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;
import org.apache.flink.streaming.runtime.tasks.StreamTask;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.nativelib.AggforgeNativeException;
import dev.aggforge.flink.nativelib.ArrowAggregate;
import dev.aggforge.flink.nativelib.NativeAggregate;

/**
 * A Flink group-aggregate operator that runs on the aggforge runtime. It stands in for Flink's
 * GroupAggFunction (immediate), MiniBatchGroupAggFunction, MiniBatchLocalGroupAggFunction and
 * MiniBatchGlobalGroupAggFunction operators, with the same changelog. Its input is rows ({@link
 * NativeGroupAggOperator}, which transposes them into Arrow batches) or batches that a columnar
 * exchange already transposed ({@link ColumnarGroupAggOperator}).
 *
 * <p>Batches are handed to the runtime over the C Data Interface; output batches leave through
 * the operator's {@link BatchSink}: read back row by row ({@link RowBatchSink}), or, for a local
 * phase feeding a columnar exchange, routed as exchange messages. The runtime emits per row, so
 * batching never changes the changelog, only when it leaves the operator.
 *
 * <p>Bundled modes follow Flink's {@code AbstractMapBundleOperator}: the bundle is finished after
 * {@code table.exec.mini-batch.size} rows, on every watermark, before a checkpoint barrier and at
 * end of input.
 *
 * <p>State (not for the local phase, which has none): a GROUP BY aggregate whose accumulators
 * are Flink's keeps it in the keyed state backend in Flink's own layout ({@link FlinkGroupState}),
 * so savepoints move between stock Flink and aggforge; the others write raw keyed state, one
 * payload per key group, so Flink redistributes it by key group when rescaling. Raw payloads
 * written by earlier versions still restore (and are written back in Flink's layout where it
 * applies).
 *
 * <p>The operator runs after the hash exchange on the group keys (or, for the local phase,
 * before it) and needs no key context per record: the runtime hashes keys itself.
 *
 * <p>Metrics ({@link NativeOperatorMetrics}, subgroup {@code aggforge}): the counters are updated
 * on every batch; the native sizes (bytes, groups, budget) come from a {@code stats} call this
 * operator's thread makes at most once per {@link #STATS_INTERVAL_NANOS} after a native call,
 * and always after open/restore, before a checkpoint barrier and at end of input.
 *
 * @param <IN> the input records: rows or exchange messages
 * @param <OUT> the output records: rows or exchange messages
 */
public abstract class NativeAggregateOperator<IN, OUT> extends AbstractStreamOperator<OUT>
        implements OneInputStreamOperator<IN, OUT>, BoundedOneInput {

    private static final long serialVersionUID = 1L;

    /** Native operators opened in this JVM (tests check that the native path really ran). */
    public static final AtomicLong OPENED = new AtomicLong();

    /** Native operators initialized in this JVM that keep their state in Flink's layout. */
    public static final AtomicLong FLINK_LAYOUT = new AtomicLong();

    /** Groups native operators in this JVM read from state in Flink's layout. */
    public static final AtomicLong FLINK_LAYOUT_LOADED = new AtomicLong();

    /** Times native operators in this JVM emptied their cache into the state backend. */
    public static final AtomicLong EVICTIONS = new AtomicLong();

    /**
     * Fault injection for tests: when set to n > 0, the n-th checkpoint write-back (of two or more
     * groups) of state in Flink's layout from now on fails after writing half of its groups. Off
     * (-1) again once it failed.
     */
    public static final AtomicLong FAIL_WRITE_BACK = new AtomicLong(-1);

    /**
     * Native operators opened in this JVM whose calls fold in a JIT-compiled loop (tests check
     * that {@code table.exec.aggforge.jit} took effect).
     */
    public static final AtomicLong FUSED = new AtomicLong();

    /** Input rows handed to native operators in this JVM. */
    public static final AtomicLong ROWS = new AtomicLong();

    /**
     * Least time between two native {@code stats} calls on the batch path: the bytes are measured,
     * which walks the groups for string or retracting MIN/MAX state.
     */
    static final long STATS_INTERVAL_NANOS = 1_000_000_000L;

    /** What the operator runs. */
    protected final NativeOperatorSpec spec;

    /** Makes where the output batches go. */
    private final BatchSink.Factory<OUT> sinkFactory;

    /** Allocates the input batches and the native plumbing. */
    protected transient BufferAllocator allocator;
    private transient BatchSink<OUT> sink;
    /** The native operator. */
    protected transient ArrowAggregate aggregate;
    /** Rows in the open bundle (bundled modes). */
    protected transient long bundleCount;
    /** The operator's metrics. */
    protected transient NativeOperatorMetrics metrics;
    /** Reused {@code stats} array (operator thread only). */
    private transient long[] stats;
    /** {@link System#nanoTime} of the last {@code stats} call. */
    private transient long statsPublishedAt;
    /** Window aggregates: the event-time progress (the last advancing watermark). */
    private transient long windowWatermark = Long.MIN_VALUE;
    /** Window aggregates: each subtask's progress, restored as the minimum (as Flink's). */
    private transient ListState<Long> windowWatermarks;
    /** Processing-time windows: the earliest timer set ({@code Long.MAX_VALUE}: none). */
    private transient long windowTimerAt = Long.MAX_VALUE;
    /** GROUP BY state in Flink's layout in the keyed state backend, or null (snapshot format). */
    private transient FlinkGroupState flinkState;

    /** An operator for {@code spec} whose output batches go to the sink {@code sinkFactory} makes. */
    protected NativeAggregateOperator(NativeOperatorSpec spec, BatchSink.Factory<OUT> sinkFactory) {
        this.spec = spec;
        this.sinkFactory = sinkFactory;
    }

    /** Allocates the operator's Arrow buffers (null before it is initialized). */
    public BufferAllocator allocator() {
        return allocator;
    }

    /** What the operator runs. */
    public NativeOperatorSpec spec() {
        return spec;
    }

    /** The operator's metrics (null before it is initialized). */
    public NativeOperatorMetrics metrics() {
        return metrics;
    }

    /** Makes the sink too: a sink may read the task's chain, which Flink drops after setup. */
    @Override
    public void setup(
            StreamTask<?, ?> containingTask,
            StreamConfig config,
            Output<StreamRecord<OUT>> output) {
        super.setup(containingTask, config, output);
        sink = sinkFactory.open(this, this.output);
    }

    /**
     * The native state is written to the raw keyed state streams, so Flink must not read them
     * for (legacy) timer snapshots; the operator registers no timers.
     */
    @Override
    protected boolean isUsingCustomRawKeyedState() {
        return true;
    }

    /** The runtime keys rows itself, so Flink need not set a key context per record. */
    @Override
    public boolean hasKeyContext1() {
        return false;
    }

    /** Sets up what reads the input (after the native operator exists). */
    protected abstract void openInput();

    /** Hands rows the input side still holds to the runtime (and emits what it returns). */
    protected abstract void handOver();

    /** Frees what reads the input. */
    protected abstract void closeInput();

    private void ensureNative() {
        if (aggregate != null) {
            return;
        }
        int maxParallelism = getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks();
        allocator = new RootAllocator();
        aggregate = new ArrowAggregate(spec.planJson(maxParallelism), allocator);
        String jit = aggregate.jitStatus();
        LOG.info("{}: JIT {}", getOperatorConfig().getOperatorName(), jit);
        if (jit.startsWith("fused")) {
            FUSED.incrementAndGet();
        }
        openInput();
        stats = new long[NativeAggregate.STATS_LENGTH];
        metrics = NativeOperatorMetrics.register(getMetricGroup());
        OPENED.incrementAndGet();
    }

    /**
     * Copies native values into the metrics, on the operator thread (readers never call native
     * code): the native time always, the sizes when {@code force} or after {@link
     * #STATS_INTERVAL_NANOS}.
     */
    private void publishMetrics(boolean force) {
        if (aggregate == null) {
            return;
        }
        long now = System.nanoTime();
        if (force || now - statsPublishedAt >= STATS_INTERVAL_NANOS) {
            aggregate.stats(stats);
            metrics.publishStats(stats);
            statsPublishedAt = now;
        }
        metrics.publishNativeNanos(aggregate.nativeNanos());
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        ensureNative();
        windowWatermark = Long.MIN_VALUE;
        windowTimerAt = Long.MAX_VALUE;
        if (spec.mode().firesWindows()) {
            windowWatermarks =
                    context.getOperatorStateStore()
                            .getUnionListState(
                                    new ListStateDescriptor<>("aggforge-window-watermark", Long.class));
            if (context.isRestored()) {
                windowWatermark = restoredWatermark(windowWatermarks.get());
                aggregate.advance(windowWatermark);
            }
        }
        if (!spec.mode().keyed()) {
            return;
        }
        String[] refusal = {"window state is not kept in Flink's layout yet"};
        String name = getOperatorConfig().getOperatorName();
        flinkState =
                spec.mode().windowed()
                        ? null
                        : FlinkGroupState.bind(
                                spec,
                                aggregate,
                                context.getKeyedStateStore(),
                                getKeyedStateBackend(),
                                this::setCurrentKey,
                                allocator,
                                reason -> refusal[0] = reason);
        LOG.info(
                "{}: state {}",
                name,
                flinkState != null
                        ? "in Flink's layout (" + FlinkGroupState.ACC_STATE + ")"
                        : "in aggforge's snapshot format: " + refusal[0]);
        if (flinkState == null) {
            if (context.isRestored()) {
                StockStateGuard.refuseStockState(getKeyedStateBackend(), spec.mode(), name, refusal[0]);
            }
        } else {
            FLINK_LAYOUT.incrementAndGet();
        }
        if (!context.isRestored()) {
            return;
        }
        if (flinkState != null) {
            // Groups are read as batches need them; they count as written when read (state TTL).
            flinkState.restored(aggregate);
        }
        Map<Integer, byte[]> payloads = new HashMap<>();
        for (KeyGroupStatePartitionStreamProvider provider : context.getRawKeyedStateInputs()) {
            byte[] payload = readPayload(provider.getStream());
            if (payload != null) {
                payloads.put(provider.getKeyGroupId(), payload);
            }
        }
        if (!payloads.isEmpty()) {
            // Restored state counts as written now (state TTL).
            aggregate.setTime(getProcessingTimeService().getCurrentProcessingTime());
            aggregate.restore(payloads.values().toArray(new byte[0][]));
        }
        publishMetrics(true);
        // Restored windows fire by the processing-time timers set for them again.
        scheduleWindowTimer();
    }

    /**
     * The watermark a restored window aggregate starts from: the least over every old subtask's,
     * as Flink's WindowAggOperator restores it ({@code Long.MAX_VALUE} entries aside).
     */
    static long restoredWatermark(Iterable<Long> watermarks) {
        long least = Long.MAX_VALUE;
        boolean any = false;
        for (Long watermark : watermarks) {
            if (watermark != null && watermark != Long.MAX_VALUE) {
                least = Math.min(least, watermark);
                any = true;
            }
        }
        return any ? least : Long.MIN_VALUE;
    }

    /** A key group's payload: an int length then the bytes; length 0 (or nothing) is none. */
    private static byte[] readPayload(InputStream stream) throws IOException {
        DataInputStream in = new DataInputStream(stream);
        int length;
        try {
            length = in.readInt();
        } catch (EOFException e) {
            return null;
        }
        if (length == 0) {
            return null;
        }
        byte[] payload = new byte[length];
        in.readFully(payload);
        return payload;
    }

    @Override
    public void open() throws Exception {
        super.open();
        ensureNative();
        bundleCount = 0;
        publishMetrics(true);
    }

    /**
     * Emits the runtime's answer to an input batch of {@code rows} rows and counts them; fails
     * as Flink would when a function failed the query.
     */
    protected final void afterBatch(VectorSchemaRoot out, int rows) {
        ROWS.addAndGet(rows);
        metrics.batchIn(rows);
        emit(out);
        aggregate.throwIfFailed();
        evictIfNeeded();
        publishMetrics(false);
        scheduleWindowTimer();
    }

    /**
     * Folds an input batch (the caller still owns it): through the cache over the state backend
     * when the state is in Flink's layout.
     */
    protected final VectorSchemaRoot processBatch(VectorSchemaRoot batch) {
        return flinkState != null ? flinkState.process(aggregate, batch) : aggregate.process(batch);
    }

    /** {@link #processBatch} for rows {@code from..to} of a columnar-exchange message. */
    protected final VectorSchemaRoot processMessageRows(byte[] message, int from, int to) {
        return flinkState != null
                ? flinkState.processMessage(aggregate, message, from, to)
                : aggregate.processMessage(message, from, to);
    }

    /** Empties the native cache into the state backend when its budget is nearly used. */
    private void evictIfNeeded() {
        if (flinkState == null) {
            return;
        }
        flinkState.evictIfNeeded(aggregate, spec.batchSize());
    }

    /**
     * Processing-time windows: sets a timer for the earliest pending window unless one is set
     * no later (Flink sets one per window; timers left over from windows that fired find
     * nothing due).
     */
    private void scheduleWindowTimer() {
        if (!spec.mode().processingTime() || aggregate == null) {
            return;
        }
        long next = aggregate.nextFireTime();
        if (next == Long.MAX_VALUE || next >= windowTimerAt) {
            return;
        }
        windowTimerAt = next;
        getProcessingTimeService().registerTimer(next, this::onWindowTimer);
    }

    /**
     * A processing-time timer: the rows that arrived before it are placed, then every window
     * due at {@code time} fires (Flink's {@code onProcessingTime}, which advances the progress to
     * the timer's time).
     */
    private void onWindowTimer(long time) {
        if (aggregate == null) {
            return;
        }
        if (time >= windowTimerAt) {
            windowTimerAt = Long.MAX_VALUE;
        }
        handOver();
        if (aggregate.advance(time)) {
            finishBundleAndSink();
        }
        scheduleWindowTimer();
    }

    /** Sets the runtime's clock to the processing time (state TTL). */
    protected final void tick() {
        aggregate.setTime(getProcessingTimeService().getCurrentProcessingTime());
    }

    /**
     * A native failure with the operator's name in front, and for the memory budget the option
     * that sets it.
     */
    protected final AggforgeNativeException named(AggforgeNativeException e) {
        String message = String.valueOf(e.getMessage());
        String hint =
                message.startsWith("memory budget exceeded")
                        ? " (raise " + AggforgeOptions.MEMORY_BUDGET.key() + ")"
                        : "";
        AggforgeNativeException named =
                new AggforgeNativeException(
                        getOperatorConfig().getOperatorName() + ": " + message + hint);
        named.initCause(e);
        return named;
    }

    /** Flink's finishBundle (bundled modes), or just the pending rows (immediate). */
    protected final void finishBundle() {
        if (aggregate == null) {
            return;
        }
        handOver();
        if (spec.mode().bundled()) {
            aggregate.setTime(getProcessingTimeService().getCurrentProcessingTime());
            int flushed;
            try {
                flushed = sink.emitFlush(aggregate);
            } catch (AggforgeNativeException e) {
                throw named(e);
            }
            if (flushed > 0) {
                // An empty flush emits no batch.
                metrics.batchOut(flushed);
            }
            aggregate.throwIfFailed();
            bundleCount = 0;
            evictIfNeeded();
            publishMetrics(false);
        }
    }

    /** At a boundary (watermark, barrier, end of input): the bundle, then what the sink holds. */
    private void finishBundleAndSink() {
        finishBundle();
        if (sink != null) {
            sink.flush();
        }
    }

    /** The processing-time service of the operator (its sink's max-delay clock). */
    public ProcessingTimeService processingTime() {
        return getProcessingTimeService();
    }

    private void emit(VectorSchemaRoot out) {
        if (out == null) {
            return;
        }
        try (out) {
            metrics.batchOut(sink.emit(out));
        }
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        if (spec.mode().followsWatermarks() && aggregate != null) {
            if (spec.mode() == NativeOperatorSpec.Mode.LOCAL_WINDOW
                    && mark.getTimestamp() > windowWatermark
                    && aggregate.advanceIfGateShut(mark.getTimestamp())) {
                // A local phase judges no row late, and its flush gate stays shut at this
                // watermark: the pending rows stay in their batch, which needs no hand-over per
                // watermark (Flink's assigner can emit one every few hundred rows).
                windowWatermark = mark.getTimestamp();
                super.processWatermark(mark);
                return;
            }
            // The rows before the watermark are judged late against the previous one; then the
            // flush fires the windows this one passed (a local phase: emits its partials once a
            // slice they hold could fire downstream), before the watermark is forwarded.
            handOver();
            boolean due = false;
            if (mark.getTimestamp() > windowWatermark) {
                windowWatermark = mark.getTimestamp();
                due = aggregate.advance(windowWatermark);
            }
            if (!due) {
                super.processWatermark(mark);
                return;
            }
        }
        finishBundleAndSink();
        super.processWatermark(mark);
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        super.prepareSnapshotPreBarrier(checkpointId);
        finishBundleAndSink();
        publishMetrics(true);
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        if (windowWatermarks != null) {
            windowWatermarks.update(java.util.List.of(windowWatermark));
        }
        if (!spec.mode().keyed()) {
            return;
        }
        if (flinkState != null) {
            flinkState.writeBack(aggregate);
            publishMetrics(false);
            return;
        }
        byte[][] payloads = aggregate.snapshot();
        Map<Integer, byte[]> byGroup = new HashMap<>();
        for (byte[] payload : payloads) {
            byGroup.put(aggregate.keyGroupOf(payload), payload);
        }
        publishMetrics(false);
        KeyedStateCheckpointOutputStream out = context.getRawKeyedOperatorStateOutput();
        KeyGroupsList range = out.getKeyGroupList();
        for (int keyGroup : byGroup.keySet()) {
            if (!range.contains(keyGroup)) {
                throw new IllegalStateException(
                        "native state holds key group "
                                + keyGroup
                                + ", outside this subtask's key groups "
                                + range);
            }
        }
        DataOutputViewStreamWrapper view = new DataOutputViewStreamWrapper(out);
        for (int keyGroup : range) {
            out.startNewKeyGroup(keyGroup);
            byte[] payload = byGroup.get(keyGroup);
            if (payload == null) {
                view.writeInt(0);
            } else {
                view.writeInt(payload.length);
                view.write(payload);
            }
        }
    }

    @Override
    public void endInput() throws Exception {
        finishBundleAndSink();
        publishMetrics(true);
    }

    @Override
    public void finish() throws Exception {
        finishBundleAndSink();
        publishMetrics(true);
        super.finish();
    }

    @Override
    public void close() throws Exception {
        try {
            if (aggregate != null) {
                aggregate.close();
                // The sizes keep their last values; the time includes the close.
                metrics.publishNativeNanos(aggregate.nativeNanos());
            }
            closeInput();
            if (sink != null) {
                sink.close();
            }
            if (allocator != null) {
                allocator.close();
            }
        } finally {
            aggregate = null;
            flinkState = null;
            sink = null;
            allocator = null;
            super.close();
        }
    }
}
