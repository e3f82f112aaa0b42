package dev.aggforge.flink.exchange;

import org.apache.flink.runtime.io.network.api.writer.SubtaskStateMapper;
import org.apache.flink.runtime.plugable.SerializationDelegate;
import org.apache.flink.streaming.runtime.partitioner.StreamPartitioner;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import dev.aggforge.flink.nativelib.ExchangeMessage;

/**
 * The partitioner of the columnar exchange: each record is a message the sending task already
 * routed ({@link ColumnarExchangeSender}: every row of it belongs to the key groups of one
 * subtask, computed as Flink's {@code KeyGroupStreamPartitioner} computes them), so it goes to
 * the channel its header names.
 *
 * <p>Barriers on this edge are aligned even when the job checkpoints unaligned (Flink's own
 * switch, {@link #disableUnalignedCheckpoints}): a message holds rows of several key groups, and
 * Flink's recovery of in-flight records after a rescale filters whole records by one channel,
 * which would split none of them. Barriers still pass between messages, never inside one.
 */
public final class ColumnarExchangePartitioner extends StreamPartitioner<byte[]> {

    private static final long serialVersionUID = 1L;

    /** A partitioner; unaligned checkpoints are off for its edge. */
    public ColumnarExchangePartitioner() {
        disableUnalignedCheckpoints();
    }

    @Override
    public int selectChannel(SerializationDelegate<StreamRecord<byte[]>> record) {
        int channel = ExchangeMessage.channel(record.getInstance().getValue());
        if (channel < 0 || channel >= numberOfChannels) {
            throw new IllegalStateException(
                    "a columnar exchange message is routed to channel "
                            + channel
                            + " but the exchange has "
                            + numberOfChannels
                            + " channels");
        }
        return channel;
    }

    @Override
    public StreamPartitioner<byte[]> copy() {
        return this;
    }

    @Override
    public SubtaskStateMapper getDownstreamSubtaskStateMapper() {
        return SubtaskStateMapper.RANGE;
    }

    @Override
    public boolean isPointwise() {
        return false;
    }

    @Override
    public String toString() {
        return "COLUMNAR-HASH";
    }
}
