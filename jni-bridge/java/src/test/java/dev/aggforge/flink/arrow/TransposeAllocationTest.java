package dev.aggforge.flink.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

/** RowDataToArrow's hot path allocates no Java objects per row once its vectors have grown. */
class TransposeAllocationTest {

    private static final RowType TYPE =
            RowType.of(
                    new IntType(),
                    new BigIntType(),
                    new DoubleType(),
                    new DecimalType(10, 2),
                    new DecimalType(38, 10),
                    new DateType(),
                    new TimestampType(3),
                    new TimestampType(9),
                    VarCharType.STRING_TYPE);

    @Test
    void appendingBinaryRowsDoesNotAllocate() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assertTrue(threads.isThreadAllocatedMemorySupported());
        int batch = 4096;
        List<RowData> rows = binaryRows(batch);
        int[] columns = new int[TYPE.getFieldCount()];
        for (int i = 0; i < columns.length; i++) {
            columns[i] = i;
        }
        try (BufferAllocator allocator = new RootAllocator();
                RowDataToArrow writer = new RowDataToArrow(allocator, TYPE, columns, true, batch)) {
            for (int warm = 0; warm < 30; warm++) { // grow the vectors, let the JIT compile
                fill(writer, rows);
            }
            long thread = Thread.currentThread().getId();
            int batches = 20;
            long before = threads.getThreadAllocatedBytes(thread);
            for (int i = 0; i < batches; i++) {
                fill(writer, rows);
            }
            long allocated = threads.getThreadAllocatedBytes(thread) - before;
            assertEquals(batch, writer.rowCount());
            double perRow = (double) allocated / (batches * (long) batch);
            // Per-batch bookkeeping (field-vector lists) is allowed; per-row objects are not.
            assertTrue(perRow < 1.0, allocated + " bytes for " + batches * batch + " rows");
        }
    }

    private static void fill(RowDataToArrow writer, List<RowData> rows) {
        writer.reset();
        for (RowData row : rows) {
            writer.append(row);
        }
        writer.finish();
    }

    private static List<RowData> binaryRows(int count) {
        RowDataSerializer serializer = new RowDataSerializer(TYPE);
        List<RowData> rows = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            GenericRowData row =
                    GenericRowData.ofKind(
                            RowKind.values()[i % 4],
                            i,
                            (long) i * 31,
                            i * 0.5,
                            DecimalData.fromBigDecimal(BigDecimal.valueOf(i, 2), 10, 2),
                            DecimalData.fromBigDecimal(
                                    new BigDecimal("-12345678901234567890.0123456789").add(BigDecimal.valueOf(i)),
                                    38,
                                    10),
                            i - 5000,
                            TimestampData.fromEpochMillis(i * 1000L),
                            TimestampData.fromEpochMillis(-i * 1000L, i % 1_000_000),
                            StringData.fromString(i % 3 == 0 ? "short" : "a longer string " + i));
            if (i % 8 == 0) {
                row.setField(i % TYPE.getFieldCount(), null);
            }
            rows.add(serializer.toBinaryRow(row).copy());
        }
        return rows;
    }
}
