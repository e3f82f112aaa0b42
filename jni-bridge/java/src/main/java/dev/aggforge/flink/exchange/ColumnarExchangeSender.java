package dev.aggforge.flink.exchange;

import java.util.Arrays;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;

import dev.aggforge.flink.arrow.RowDataToArrow;
import dev.aggforge.flink.nativelib.ArrowExchange;
import dev.aggforge.flink.operator.MaxDelayTimer;
import dev.aggforge.flink.operator.NativeOperatorSpec;

/**
 * The sending half of the columnar exchange, chained to the end of the task in front of a native
 * group aggregate: it transposes rows into an Arrow batch once ({@link RowDataToArrow}, the
 * columns the aggregate reads), and hands each batch to the native router, which computes every
 * row's Flink key group and owning subtask as Flink's {@code KeyGroupStreamPartitioner} does and
 * returns one message per subtask with rows; each message is one record on the network edge
 * ({@link ColumnarExchangePartitioner}).
 *
 * <p>A batch is sent when it holds {@code table.exec.aggforge.batch-size} rows, before every
 * watermark (so mini-batch boundaries and event time stay where they were), before a checkpoint
 * barrier (barriers never overtake rows), at end of input, and {@code
 * table.exec.aggforge.max-delay} after its first row. Rows keep their order per subtask.
 *
 * <p>In-band watermarks: a sender feeding an event-time window aggregate from a single subtask
 * (so each receiver has this one input channel, and this sender's watermarks are its input's)
 * does not send a partly filled batch at a watermark. It notes the watermark's position among the
 * batch's rows, and every message carries the watermarks at its own rows' positions, which the
 * receiver applies between the same rows ({@code ColumnarGroupAggOperator}); the latest
 * watermark is forwarded through Flink right after the batch, and a batch with a watermark in it
 * leaves at the latest after the max delay. Flink's watermark assigner emits one whenever event
 * time has moved on by the watermark interval, which can be every few hundred rows; each would
 * otherwise cost a batch, a message and a native call on the sending task, the one that also
 * reads the source.
 *
 * <p>Flink's {@code numRecordsOut} counts rows, as behind the row exchange.
 */
public final class ColumnarExchangeSender extends AbstractStreamOperator<byte[]>
        implements OneInputStreamOperator<RowData, byte[]>, BoundedOneInput {

    private static final long serialVersionUID = 1L;

    /** The receiving aggregate's spec: its plan's keys route, its columns are transposed. */
    private final NativeOperatorSpec spec;

    private transient BufferAllocator allocator;
    private transient RowDataToArrow transposer;
    private transient ArrowExchange router;
    private transient StreamRecord<byte[]> outRecord;
    private transient MaxDelayTimer delay;
    private transient ExchangeMetrics metrics;

    /** Channels and key groups given up front (tests), or null: the task's record writer's. */
    private final int[] shape;

    /** Whether watermarks travel inside the messages (see the class comment). */
    private transient boolean inBand;

    /** In-band watermarks of the pending batch: {@code [position, watermark, ...]}. */
    private transient long[] marks;

    private transient int markCount;

    /** The latest watermark noted in the pending batch, forwarded once it is sent; or null. */
    private transient Watermark held;

    /** A sender feeding the aggregate that runs {@code spec}. */
    public ColumnarExchangeSender(NativeOperatorSpec spec) {
        this(spec, null);
    }

    /** A sender over {@code shape} = {channels, key groups} instead of its task's output. */
    ColumnarExchangeSender(NativeOperatorSpec spec, int[] shape) {
        this.spec = spec;
        this.shape = shape == null ? null : shape.clone();
    }

    @Override
    public void open() throws Exception {
        super.open();
        int channels;
        int maxParallelism;
        if (shape != null) {
            channels = shape[0];
            maxParallelism = shape[1];
        } else {
            NetworkOutput network = NetworkOutput.of(this);
            channels = network.channels();
            maxParallelism = network.keyGroups();
        }
        allocator = new RootAllocator();
        router = new ArrowExchange(spec.planJson(maxParallelism), channels, maxParallelism, allocator);
        int capacity = (int) Math.min(spec.batchSize(), 1 << 16);
        transposer =
                new RowDataToArrow(
                        allocator, spec.inputType(), spec.columns(), spec.withRowKind(), capacity);
        outRecord = new StreamRecord<>(null);
        delay =
                new MaxDelayTimer(
                        getProcessingTimeService(),
                        spec.maxDelayMs(),
                        () -> {
                            if (router != null) {
                                send();
                            }
                        });
        metrics = new ExchangeMetrics(this);
        inBand =
                spec.mode().firesWindows()
                        && spec.maxDelayMs() > 0
                        && getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks() == 1;
        marks = new long[16];
        markCount = 0;
        held = null;
    }

    @Override
    public void processElement(StreamRecord<RowData> element) {
        transposer.append(element.getValue());
        if (transposer.rowCount() >= spec.batchSize()) {
            send();
        } else {
            delay.rowAdded(transposer.rowCount());
        }
    }

    /**
     * Routes the pending rows and sends one message per receiving subtask, then forwards the
     * watermark held in the batch, if any.
     */
    private void send() {
        int rows = transposer.rowCount();
        if (rows > 0) {
            long[] inBandMarks = markCount == 0 ? null : Arrays.copyOf(marks, markCount);
            byte[][] messages = router.route(transposer.finish(), inBandMarks);
            // The native side is done with the batch once route returns.
            transposer.reset();
            markCount = 0;
            for (byte[] message : messages) {
                output.collect(outRecord.replace(message));
            }
            metrics.sent(messages.length, rows);
        }
        if (held != null) {
            Watermark mark = held;
            held = null;
            forward(mark);
        }
    }

    private void forward(Watermark mark) {
        try {
            super.processWatermark(mark);
        } catch (Exception e) {
            throw new IllegalStateException("aggforge: forwarding a watermark failed", e);
        }
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        int rows = transposer.rowCount();
        if (inBand && rows > 0) {
            if (markCount == marks.length) {
                marks = Arrays.copyOf(marks, 2 * marks.length);
            }
            marks[markCount++] = rows;
            marks[markCount++] = mark.getTimestamp();
            held = mark;
            return;
        }
        send();
        super.processWatermark(mark);
    }

    @Override
    public void processWatermarkStatus(WatermarkStatus status) throws Exception {
        // An idle or active status must not overtake the watermark held in the batch.
        send();
        super.processWatermarkStatus(status);
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        super.prepareSnapshotPreBarrier(checkpointId);
        send();
    }

    @Override
    public void endInput() {
        send();
    }

    @Override
    public void finish() throws Exception {
        send();
        super.finish();
    }

    @Override
    public void close() throws Exception {
        try {
            if (router != null) {
                router.close();
            }
            if (transposer != null) {
                transposer.close();
            }
            if (allocator != null) {
                allocator.close();
            }
        } finally {
            router = null;
            transposer = null;
            allocator = null;
            super.close();
        }
    }
}
