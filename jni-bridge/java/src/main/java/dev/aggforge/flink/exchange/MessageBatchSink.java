package dev.aggforge.flink.exchange;

import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import dev.aggforge.flink.nativelib.ArrowAggregate;
import dev.aggforge.flink.nativelib.ArrowExchange;
import dev.aggforge.flink.operator.BatchSink;
import dev.aggforge.flink.operator.MaxDelayTimer;
import dev.aggforge.flink.operator.NativeAggregateOperator;
import dev.aggforge.flink.operator.NativeOperatorSpec;

/**
 * The output of a native local phase that feeds a columnar exchange: a flushed bundle's partials
 * go from the native aggregate straight to the native router ({@link ArrowAggregate#flushInto}),
 * which holds them and routes them to the subtasks of the global aggregate that owns their keys
 * as exchange messages; no partial crosses to Java as a batch or a row. The
 * chain ends in {@link MessageForwarder}, whose network output gives the channels and key groups.
 *
 * <p>As the sender does with rows, the sink sends what it holds when it holds {@code
 * table.exec.aggforge.batch-size} rows, at every watermark, before a checkpoint barrier, at end
 * of input ({@link #flush}), and {@code table.exec.aggforge.max-delay} after it started holding:
 * a local bundle's partials alone (one per key) would make many small messages.
 *
 * <p>The local's batch is the global's input batch as is: planning admits this path only when the
 * global reads every column of the local's output in order, without row kinds ({@link
 * #routable}); the native side leaves out the local's {@code $row_kind} column (every partial is
 * +I).
 */
public final class MessageBatchSink implements BatchSink<byte[]> {

    private final NativeAggregateOperator<?, byte[]> operator;
    private final NativeOperatorSpec receiver;
    private final NetworkOutput network;
    /** The native router (see {@link #router()}). */
    private ArrowExchange router;

    private final Output<StreamRecord<byte[]>> output;
    private final StreamRecord<byte[]> outRecord = new StreamRecord<>(null);
    /** Flink's numRecordsOut of the local operator, which counted a record per message. */
    private final Counter recordsOut;
    /** Starts when the sink starts holding rows; sends them when the max delay has passed. */
    private final MaxDelayTimer delay;
    /** Rows held by the router. */
    private int heldRows;

    private MessageBatchSink(
            NativeAggregateOperator<?, byte[]> operator,
            NativeOperatorSpec receiver,
            Output<StreamRecord<byte[]>> output) {
        this.operator = operator;
        this.receiver = receiver;
        this.network = NetworkOutput.of(operator);
        this.output = output;
        this.recordsOut = operator.getMetricGroup().getIOMetricGroup().getNumRecordsOutCounter();
        this.delay = new MaxDelayTimer(operator.processingTime(), receiver.maxDelayMs(), this::flush);
    }

    /**
     * Whether a local phase running {@code local} can route its output to the aggregate running
     * {@code receiver}: that aggregate reads every column of the local's output rows, in order,
     * and no row kinds.
     */
    public static boolean routable(NativeOperatorSpec local, NativeOperatorSpec receiver) {
        if (local.mode() != NativeOperatorSpec.Mode.LOCAL
                || receiver.withRowKind()
                || !local.outputType().equals(receiver.inputType())) {
            return false;
        }
        int[] columns = receiver.columns();
        if (columns.length != receiver.inputType().getFieldCount()) {
            return false;
        }
        for (int i = 0; i < columns.length; i++) {
            if (columns[i] != i) {
                return false;
            }
        }
        return true;
    }

    /** Makes the sink of a local phase feeding the aggregate that runs {@code receiver}. */
    public static Factory<byte[]> to(NativeOperatorSpec receiver) {
        return (operator, output) -> new MessageBatchSink(operator, receiver, output);
    }

    /**
     * A local phase emits only when its bundle is flushed ({@link #emitFlush}); its operator
     * never returns rows from {@code process}.
     */
    @Override
    public int emit(VectorSchemaRoot batch) {
        throw new IllegalStateException(
                "a local phase routing its partials emits them only when its bundle is flushed");
    }

    /** The bundle's partials go from the aggregate to the router without crossing to Java. */
    @Override
    public int emitFlush(ArrowAggregate aggregate) {
        ArrowExchange router = router();
        int rows = aggregate.flushInto(router);
        if (rows > 0) {
            held(heldRows + rows);
        }
        return rows;
    }

    /** The router, made at the first batch (the operator's allocator exists by then). */
    private ArrowExchange router() {
        if (router == null) {
            router =
                    new ArrowExchange(
                            receiver.planJson(network.keyGroups()),
                            network.channels(),
                            network.keyGroups(),
                            operator.allocator());
        }
        return router;
    }

    /** The router now holds {@code rows} rows: sends them when enough, else starts the clock. */
    private void held(int rows) {
        boolean started = heldRows == 0;
        heldRows = rows;
        if (heldRows >= receiver.batchSize()) {
            flush();
        } else if (started) {
            // The held rows count as one batch whose first row just came.
            delay.rowAdded(1);
        }
    }

    @Override
    public void flush() {
        if (heldRows == 0 || router == null) {
            return;
        }
        byte[][] messages = router.routeHeld();
        int rows = heldRows;
        heldRows = 0;
        for (byte[] message : messages) {
            output.collect(outRecord.replace(message));
        }
        recordsOut.inc(rows - messages.length);
    }

    @Override
    public void close() {
        if (router != null) {
            router.close();
            router = null;
        }
    }
}
