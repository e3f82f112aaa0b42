package dev.aggforge.flink.exchange;

import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;

/**
 * Passes rows on unchanged: it stands where {@link ColumnarExchangeSender} stands when the
 * columnar exchange is switched off, so the job's operators (and the ids Flink derives from
 * their positions) are the same either way and a savepoint restores across the switch.
 */
public final class ExchangeFeedOperator extends AbstractStreamOperator<RowData>
        implements OneInputStreamOperator<RowData, RowData> {

    private static final long serialVersionUID = 1L;

    @Override
    public void processElement(StreamRecord<RowData> element) {
        output.collect(element);
    }
}
