package dev.aggforge.flink.operator;

import java.io.Serializable;

import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import dev.aggforge.flink.nativelib.ArrowAggregate;

/**
 * Where a native operator's output batches go: rows downstream ({@link RowBatchSink}), or
 * exchange messages routed to the subtasks of the aggregate the output feeds ({@code
 * dev.aggforge.flink.exchange.MessageBatchSink}).
 *
 * @param <OUT> the operator's output records
 */
public interface BatchSink<OUT> {

    /** Emits {@code batch}'s rows (the caller closes it); returns how many rows it held. */
    int emit(VectorSchemaRoot batch);

    /**
     * Flushes {@code aggregate}'s open bundle into the sink; returns the rows flushed. By default
     * the batch {@link ArrowAggregate#flush} returns is emitted.
     */
    default int emitFlush(ArrowAggregate aggregate) {
        VectorSchemaRoot flushed = aggregate.flush();
        if (flushed == null) {
            return 0;
        }
        try (flushed) {
            return emit(flushed);
        }
    }

    /**
     * Sends what the sink still holds: called at every watermark, before a checkpoint barrier
     * and at end of input, after the operator's bundle was flushed.
     */
    default void flush() {}

    /** Frees what the sink holds. */
    void close();

    /**
     * Makes an operator's sink when the operator opens (the factory is part of the serialized
     * operator; the sink is not).
     *
     * @param <OUT> the operator's output records
     */
    interface Factory<OUT> extends Serializable {

        /** The sink of {@code operator}, emitting to {@code output}. */
        BatchSink<OUT> open(NativeAggregateOperator<?, OUT> operator, Output<StreamRecord<OUT>> output);
    }
}
