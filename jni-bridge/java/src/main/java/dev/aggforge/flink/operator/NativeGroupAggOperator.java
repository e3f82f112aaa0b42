package dev.aggforge.flink.operator;

import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;

import dev.aggforge.flink.arrow.RowDataToArrow;
import dev.aggforge.flink.nativelib.AggforgeNativeException;

/**
 * The native group aggregate over rows: they are transposed into Arrow batches ({@link
 * RowDataToArrow}), and a batch is handed to the runtime when it fills, on every watermark,
 * before a checkpoint barrier, at end of input, and in immediate mode when {@code
 * table.exec.aggforge.max-delay} has passed since its first row. Its output is rows ({@link
 * #rows}) or, for a local phase feeding a columnar exchange, exchange messages.
 *
 * @param <OUT> the output records
 */
public final class NativeGroupAggOperator<OUT> extends NativeAggregateOperator<RowData, OUT> {

    private static final long serialVersionUID = 1L;

    private transient RowDataToArrow transposer;
    private transient MaxDelayTimer delay;
    /** Processing-time windows: the processing time (ms) the pending rows arrived at. */
    private transient long arrivedAt;

    /** An operator for {@code spec} whose output goes to the sink {@code sinkFactory} makes. */
    public NativeGroupAggOperator(NativeOperatorSpec spec, BatchSink.Factory<OUT> sinkFactory) {
        super(spec, sinkFactory);
    }

    /** An operator for {@code spec} emitting rows. */
    public static NativeGroupAggOperator<RowData> rows(NativeOperatorSpec spec) {
        return new NativeGroupAggOperator<>(spec, RowBatchSink.FACTORY);
    }

    @Override
    protected void openInput() {
        int capacity = (int) Math.min(spec.batchSize(), 1 << 16);
        transposer =
                new RowDataToArrow(
                        allocator, spec.inputType(), spec.columns(), spec.withRowKind(), capacity);
        delay =
                new MaxDelayTimer(
                        getProcessingTimeService(),
                        spec.maxDelayMs(),
                        () -> {
                            if (aggregate != null) {
                                handOver();
                            }
                        });
    }

    @Override
    public void processElement(StreamRecord<RowData> element) throws Exception {
        if (spec.mode().processingTime()) {
            // A batch holds the rows of one millisecond: the runtime places them all at it.
            long now = getProcessingTimeService().getCurrentProcessingTime();
            if (now != arrivedAt && transposer.rowCount() > 0) {
                handOver();
            }
            arrivedAt = now;
        }
        transposer.append(element.getValue());
        if (spec.mode().bundled()) {
            bundleCount++;
            if (bundleCount >= spec.bundleSize()) {
                finishBundle();
                return;
            }
        }
        if (transposer.rowCount() >= spec.batchSize()) {
            handOver();
        } else if (!spec.mode().bundled() || spec.mode().processingTime()) {
            // Immediate mode, and processing-time windows, whose rows must reach the runtime
            // before their window's timer (no watermark hands them over); the other bundled
            // modes follow the mini-batch latency through watermarks.
            delay.rowAdded(transposer.rowCount());
        }
    }

    /** Hands the pending rows to the runtime and emits what it returns. */
    @Override
    protected void handOver() {
        int rows = transposer.rowCount();
        if (rows == 0) {
            return;
        }
        if (spec.mode().processingTime()) {
            aggregate.setTime(arrivedAt);
        } else {
            tick();
        }
        VectorSchemaRoot out;
        try {
            out = processBatch(transposer.finish());
        } catch (AggforgeNativeException e) {
            throw named(e);
        }
        // The native side is done with the batch once process returns.
        transposer.reset();
        afterBatch(out, rows);
    }

    @Override
    protected void closeInput() {
        if (transposer != null) {
            transposer.close();
            transposer = null;
        }
    }
}
