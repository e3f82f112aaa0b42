package dev.aggforge.flink.operator;

import java.util.concurrent.atomic.AtomicLong;

import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;

import dev.aggforge.flink.nativelib.AggforgeNativeException;
import dev.aggforge.flink.nativelib.ExchangeMessage;

/**
 * The native group aggregate behind a columnar exchange: each record is a message of rows that
 * the columnar exchange's sender ({@code dev.aggforge.flink.exchange}) transposed and routed to this subtask, handed to the runtime as
 * it arrives, with no row deserialized or transposed here. In bundled modes a message is split
 * where Flink's bundle would end ({@code table.exec.mini-batch.size} rows), so bundles hold the
 * rows they hold behind Flink's row exchange. Flink's {@code numRecordsIn} counts rows, as behind
 * the row exchange.
 */
public final class ColumnarGroupAggOperator extends NativeAggregateOperator<byte[], RowData> {

    private static final long serialVersionUID = 1L;

    /** Exchange messages received by columnar aggregates in this JVM (tests check the path ran). */
    public static final AtomicLong MESSAGES = new AtomicLong();

    /** In-band watermarks applied by columnar aggregates in this JVM (tests check the path ran). */
    public static final AtomicLong IN_BAND_WATERMARKS = new AtomicLong();

    /** Flink's numRecordsIn of this operator (the task's, as it heads the chain). */
    private transient Counter recordsIn;

    /** An operator for {@code spec}. */
    public ColumnarGroupAggOperator(NativeOperatorSpec spec) {
        super(spec, RowBatchSink.FACTORY);
    }

    @Override
    protected void openInput() {
        recordsIn = getMetricGroup().getIOMetricGroup().getNumRecordsInCounter();
    }

    @Override
    public void processElement(StreamRecord<byte[]> element) throws Exception {
        byte[] message = element.getValue();
        int rows = ExchangeMessage.rows(message);
        MESSAGES.incrementAndGet();
        // Flink counted the message as one record in; the web UI shows rows, as for stock.
        recordsIn.inc(rows - 1);
        // In-band watermarks (ColumnarExchangeSender): each is applied between the rows it came
        // between, as if Flink had delivered it there.
        long[] marks = ExchangeMessage.marks(message);
        int from = 0;
        for (int m = 0; m < marks.length; m += 2) {
            int at = (int) marks[m];
            processRows(message, from, at);
            from = at;
            processWatermark(new Watermark(marks[m + 1]));
            IN_BAND_WATERMARKS.incrementAndGet();
        }
        processRows(message, from, rows);
    }

    /** Rows {@code from..rows} of {@code message}, split where Flink's bundle would end. */
    private void processRows(byte[] message, int from, int rows) {
        while (from < rows) {
            int to = rows;
            if (spec.mode().bundled()) {
                // At least one row per step, whatever the bundle size says.
                long room = Math.max(1, spec.bundleSize() - bundleCount);
                to = (int) Math.min(rows, from + Math.min(room, rows));
            }
            process(message, from, to);
            if (spec.mode().bundled()) {
                bundleCount += to - from;
                if (bundleCount >= spec.bundleSize()) {
                    finishBundle();
                }
            }
            from = to;
        }
    }

    private void process(byte[] message, int from, int to) {
        tick();
        VectorSchemaRoot out;
        try {
            out = processMessageRows(message, from, to);
        } catch (AggforgeNativeException e) {
            throw named(e);
        }
        afterBatch(out, to - from);
    }

    @Override
    protected void handOver() {
        // Every message is handed over as it arrives.
    }

    @Override
    protected void closeInput() {
        // Nothing held.
    }
}
