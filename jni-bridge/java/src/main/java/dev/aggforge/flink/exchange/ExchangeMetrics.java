package dev.aggforge.flink.exchange;

import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;

/**
 * The metrics of the operator that ends a columnar exchange's sending chain ({@link
 * ColumnarExchangeSender} or {@link MessageForwarder}): {@code aggforge.exchangeRowsOut} and
 * {@code aggforge.exchangeMessagesOut}, and Flink's {@code numRecordsOut} counting rows, as
 * behind the row exchange, where Flink counted each message as one record.
 */
public final class ExchangeMetrics {

    /** Messages sent into columnar exchanges in this JVM (tests check the path ran). */
    private static final AtomicLong SENT = new AtomicLong();

    private final Counter rowsOut;
    private final Counter messagesOut;
    private final Counter recordsOut;

    /** The metrics of {@code operator}, which Flink counts a record out per message. */
    ExchangeMetrics(AbstractStreamOperator<?> operator) {
        rowsOut = operator.getMetricGroup().addGroup("aggforge").counter("exchangeRowsOut");
        messagesOut = operator.getMetricGroup().addGroup("aggforge").counter("exchangeMessagesOut");
        recordsOut = operator.getMetricGroup().getIOMetricGroup().getNumRecordsOutCounter();
    }

    /** Counts {@code messages} messages holding {@code rows} rows, sent. */
    void sent(int messages, long rows) {
        SENT.addAndGet(messages);
        messagesOut.inc(messages);
        rowsOut.inc(rows);
        recordsOut.inc(rows - messages);
    }

    /** Messages sent into columnar exchanges in this JVM so far. */
    public static long sentSoFar() {
        return SENT.get();
    }
}
