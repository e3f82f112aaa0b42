package dev.aggforge.flink.operator;

import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;

import dev.aggforge.flink.arrow.ArrowToRowData;

/** Emits an output batch as rows, read back one by one ({@link ArrowToRowData}). */
public final class RowBatchSink implements BatchSink<RowData> {

    /** Makes the row sink of an operator whose output is its spec's output rows. */
    public static final Factory<RowData> FACTORY =
            (operator, output) -> new RowBatchSink(operator.spec(), output);

    private final ArrowToRowData reader;
    private final Output<StreamRecord<RowData>> output;
    private final StreamRecord<RowData> outRecord = new StreamRecord<>(null);

    private RowBatchSink(NativeOperatorSpec spec, Output<StreamRecord<RowData>> output) {
        this.reader = new ArrowToRowData(spec.outputType());
        this.output = output;
    }

    @Override
    public int emit(VectorSchemaRoot batch) {
        reader.bind(batch);
        int rows = reader.rowCount();
        for (int i = 0; i < rows; i++) {
            output.collect(outRecord.replace(reader.read(i)));
        }
        return rows;
    }

    @Override
    public void close() {
        // The reader holds no buffers of its own.
    }
}
