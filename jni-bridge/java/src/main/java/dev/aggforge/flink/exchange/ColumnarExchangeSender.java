package dev.aggforge.flink.exchange;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.streaming.api.graph.NonChainedOutput;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
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
 * <p>Flink's {@code numRecordsOut} counts rows, as behind the row exchange.
 */
public final class ColumnarExchangeSender extends AbstractStreamOperator<byte[]>
        implements OneInputStreamOperator<RowData, byte[]>, BoundedOneInput {

    private static final long serialVersionUID = 1L;

    /** Messages sent by columnar exchange senders in this JVM (tests check the path ran). */
    public static final AtomicLong MESSAGES = new AtomicLong();

    /** The receiving aggregate's spec: its plan's keys route, its columns are transposed. */
    private final NativeOperatorSpec spec;

    private transient BufferAllocator allocator;
    private transient RowDataToArrow transposer;
    private transient ArrowExchange router;
    private transient StreamRecord<byte[]> outRecord;
    private transient MaxDelayTimer delay;
    private transient Counter rowsOut;
    private transient Counter messagesOut;
    /** Flink's numRecordsOut of this operator (the task's, as it ends the chain). */
    private transient Counter recordsOut;

    /** Channels and key groups given up front (tests), or null: the task's record writer's. */
    private final int[] shape;

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
            ResultPartitionWriter writer = networkOutput();
            channels = writer.getNumberOfSubpartitions();
            maxParallelism = writer.getNumTargetKeyGroups();
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
        rowsOut = getMetricGroup().addGroup("aggforge").counter("exchangeRowsOut");
        messagesOut = getMetricGroup().addGroup("aggforge").counter("exchangeMessagesOut");
        recordsOut = getMetricGroup().getIOMetricGroup().getNumRecordsOutCounter();
    }

    /**
     * The network output this operator writes to: Flink's record writer for its one non-chained
     * output, whose subpartitions (the receiving subtasks) and key groups are what Flink's own
     * partitioner is set up with.
     */
    private ResultPartitionWriter networkOutput() {
        ClassLoader classLoader = getUserCodeClassloader();
        List<NonChainedOutput> own = getOperatorConfig().getOperatorNonChainedOutputs(classLoader);
        if (own.size() != 1) {
            throw new IllegalStateException(
                    "the columnar exchange sender must end its task with one network output, not "
                            + own.size());
        }
        List<NonChainedOutput> all =
                getContainingTask().getConfiguration().getVertexNonChainedOutputs(classLoader);
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i).getDataSetId().equals(own.get(0).getDataSetId())) {
                return getContainingTask().getEnvironment().getWriter(i);
            }
        }
        throw new IllegalStateException("the columnar exchange sender's output has no writer");
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

    /** Routes the pending rows and sends one message per receiving subtask. */
    private void send() {
        int rows = transposer.rowCount();
        if (rows == 0) {
            return;
        }
        byte[][] messages = router.route(transposer.finish());
        // The native side is done with the batch once route returns.
        transposer.reset();
        for (byte[] message : messages) {
            output.collect(outRecord.replace(message));
        }
        MESSAGES.addAndGet(messages.length);
        messagesOut.inc(messages.length);
        rowsOut.inc(rows);
        // Flink counted each message as one record out; the web UI shows rows, as for stock.
        recordsOut.inc(rows - messages.length);
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        send();
        super.processWatermark(mark);
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
