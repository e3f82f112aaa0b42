package dev.aggforge.flink.exchange;

import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import dev.aggforge.flink.nativelib.ExchangeMessage;

/**
 * Ends the sending chain of a columnar exchange whose messages a native local phase routed itself
 * ({@link MessageBatchSink}): it passes them on unchanged and counts them ({@link
 * ExchangeMetrics}). It stands where {@link ColumnarExchangeSender} stands otherwise, so the job's
 * operators (and the ids Flink derives from their positions) are the same either way.
 */
public final class MessageForwarder extends AbstractStreamOperator<byte[]>
        implements OneInputStreamOperator<byte[], byte[]> {

    private static final long serialVersionUID = 1L;

    /** Messages forwarded in this JVM (tests check that a local phase routed its output). */
    public static final AtomicLong FORWARDED = new AtomicLong();

    private transient ExchangeMetrics metrics;

    @Override
    public void open() throws Exception {
        super.open();
        metrics = new ExchangeMetrics(this);
    }

    @Override
    public void processElement(StreamRecord<byte[]> element) {
        output.collect(element);
        FORWARDED.incrementAndGet();
        metrics.sent(1, ExchangeMessage.rows(element.getValue()));
    }
}
