package dev.aggforge.flink.nativelib;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.aggforge.flink.arrow.ArrowToRowData;
import dev.aggforge.flink.arrow.RowDataToArrow;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The native methods end to end: plan, batches over the C Data Interface, state, errors. */
class NativeAggregateTest {

    private static final RowType INPUT =
            RowType.of(
                    new org.apache.flink.table.types.logical.LogicalType[] {
                        new IntType(false), new BigIntType(), new VarCharType(VarCharType.MAX_LENGTH)
                    },
                    new String[] {"k", "v", "s"});

    /** k, SUM(v), MAX(s). */
    private static final RowType OUTPUT =
            RowType.of(
                    new org.apache.flink.table.types.logical.LogicalType[] {
                        new IntType(false), new BigIntType(), new VarCharType(VarCharType.MAX_LENGTH)
                    },
                    new String[] {"k", "sum_v", "max_s"});

    private BufferAllocator allocator;
    private RowDataToArrow transposer;

    static String plan(String emission) {
        return "{\"version\":1,\"key_columns\":[0],\"key_types\":[\"INT\"],\"calls\":["
                + "{\"function\":\"SUM\",\"args\":[1],\"arg_types\":[\"BIGINT\"],\"distinct\":false,\"filter\":null},"
                + "{\"function\":\"MAX\",\"args\":[2],\"arg_types\":[\"VARCHAR(2147483647)\"],\"distinct\":false,\"filter\":null}],"
                + "\"phase\":\"single\",\"input\":\"insert_only\",\"emission\":\""
                + emission
                + "\",\"generate_update_before\":true,\"state_ttl_ms\":0,"
                + "\"memory_budget_bytes\":16777216,\"max_parallelism\":128}";
    }

    @BeforeEach
    void setUp() {
        allocator = new RootAllocator();
        transposer = new RowDataToArrow(allocator, INPUT, new int[] {0, 1, 2}, false, 16);
    }

    @AfterEach
    void tearDown() {
        transposer.close();
        allocator.close();
    }

    private VectorSchemaRoot batch(Object[]... rows) {
        transposer.reset();
        for (Object[] row : rows) {
            transposer.append(
                    GenericRowData.of(
                            row[0], row[1], row[2] == null ? null : StringData.fromString((String) row[2])));
        }
        return transposer.finish();
    }

    private static List<String> lines(VectorSchemaRoot out) {
        List<String> lines = new ArrayList<>();
        if (out == null) {
            return lines;
        }
        try (out) {
            ArrowToRowData reader = new ArrowToRowData(OUTPUT);
            reader.bind(out);
            for (int i = 0; i < reader.rowCount(); i++) {
                RowData row = reader.read(i);
                lines.add(
                        row.getRowKind().shortString()
                                + "["
                                + row.getInt(0)
                                + ", "
                                + (row.isNullAt(1) ? "null" : row.getLong(1))
                                + ", "
                                + (row.isNullAt(2) ? "null" : row.getString(2))
                                + "]");
            }
        }
        return lines;
    }

    @Test
    void admitSaysWhichSpecializationsOrWhyNot() {
        String admitted = ArrowAggregate.admit(plan("immediate"));
        assertTrue(ArrowAggregate.isAdmitted(admitted), admitted);
        assertTrue(admitted.contains("SUM") && admitted.contains("MAX"), admitted);
        String refused = ArrowAggregate.admit(plan("immediate").replace("\"SUM\"", "\"COLLECT\""));
        assertFalse(ArrowAggregate.isAdmitted(refused), refused);
        assertTrue(refused.contains("COLLECT"), refused);
        assertTrue(ArrowAggregate.admit("{").contains("not valid JSON"));
    }

    @Test
    void immediateRoundTripSnapshotRestore() {
        int open = NativeAggregate.openCount();
        byte[][] snapshot;
        try (ArrowAggregate agg = new ArrowAggregate(plan("immediate"), allocator)) {
            assertEquals(open + 1, NativeAggregate.openCount());
            List<String> out =
                    lines(agg.process(batch(new Object[] {1, 10L, "b"}, new Object[] {2, 5L, null}, new Object[] {1, 7L, "a"})));
            assertEquals(List.of("+I[1, 10, b]", "+I[2, 5, null]", "-U[1, 10, b]", "+U[1, 17, b]"), out);
            // An unchanged result is suppressed (Flink's equaliser).
            assertEquals(List.of(), lines(agg.process(batch(new Object[] {2, null, null}))));
            assertNull(agg.flush(), "immediate mode has no bundle");
            assertTrue(agg.memoryUsed() > 0);
            snapshot = agg.snapshot();
        }
        assertEquals(open, NativeAggregate.openCount());
        assertEquals(2, snapshot.length, "keys 1 and 2 are in different key groups at 128");
        int first = NativeAggregate.keyGroupOf(snapshot[0]);
        int second = NativeAggregate.keyGroupOf(snapshot[1]);
        assertTrue(0 <= first && first < second && second < 128, first + ", " + second);
        // Flink's key group of INT key 1 at max parallelism 128 (docs/flink-semantics.md).
        assertTrue(first == 94 || second == 94, first + ", " + second);
        try (ArrowAggregate restored = new ArrowAggregate(plan("immediate"), allocator)) {
            restored.restore(snapshot);
            List<String> out = lines(restored.process(batch(new Object[] {1, 1L, "c"})));
            assertEquals(List.of("-U[1, 17, b]", "+U[1, 18, c]"), out);
            assertArrayEquals(new int[] {2}, new int[] {restored.snapshot().length});
        }
    }

    @Test
    void miniBatchEmitsOnFlush() {
        try (ArrowAggregate agg = new ArrowAggregate(plan("mini_batch"), allocator)) {
            assertNull(agg.process(batch(new Object[] {1, 1L, "x"}, new Object[] {1, 2L, "y"})));
            assertEquals(List.of("+I[1, 3, y]"), lines(agg.flush()));
            assertNull(agg.flush());
            assertNull(agg.process(batch(new Object[] {1, 4L, "a"})));
            assertEquals(List.of("-U[1, 3, y]", "+U[1, 7, y]"), lines(agg.flush()));
        }
    }

    @Test
    void statsReportBytesBudgetAndGroupsAndTimeAddsUp() {
        long[] stats = new long[NativeAggregate.STATS_LENGTH];
        try (ArrowAggregate agg = new ArrowAggregate(plan("immediate"), allocator)) {
            agg.stats(stats);
            assertEquals(0, stats[NativeAggregate.STATS_GROUPS]);
            assertEquals(16_777_216, stats[NativeAggregate.STATS_MEMORY_BUDGET]);
            long before = agg.nativeNanos();
            lines(agg.process(batch(new Object[] {1, 1L, "a"}, new Object[] {2, 2L, "b"}, new Object[] {1, 3L, "c"})));
            assertTrue(agg.nativeNanos() > before, "process time is counted");
            agg.stats(stats);
            assertEquals(2, stats[NativeAggregate.STATS_GROUPS], "keys 1 and 2");
            assertEquals(0, stats[NativeAggregate.STATS_LATE_DROPPED], "a GROUP BY drops nothing");
            assertEquals(agg.memoryUsed(), stats[NativeAggregate.STATS_MEMORY_USED]);
            assertTrue(stats[NativeAggregate.STATS_MEMORY_USED] > 0);
            AggforgeNativeException shortArray =
                    assertThrows(AggforgeNativeException.class, () -> agg.stats(new long[2]));
            assertTrue(shortArray.getMessage().contains(NativeAggregate.STATS_LENGTH + " needed"), shortArray.getMessage());
            assertThrows(AggforgeNativeException.class, () -> agg.stats(null));
            assertThrows(AggforgeNativeException.class, () -> NativeAggregate.stats(0, stats));
        }
    }

    @Test
    void errorsBecomeExceptionsWithTheNativeMessage() {
        AggforgeNativeException badPlan =
                assertThrows(
                        AggforgeNativeException.class,
                        () -> new ArrowAggregate(plan("immediate").replace("\"SUM\"", "\"COLLECT\""), allocator));
        assertTrue(badPlan.getMessage().contains("COLLECT"), badPlan.getMessage());
        assertThrows(AggforgeNativeException.class, () -> NativeAggregate.create("not json"));
        assertThrows(AggforgeNativeException.class, () -> NativeAggregate.create(null));

        long handle;
        try (ArrowAggregate agg = new ArrowAggregate(plan("immediate"), allocator)) {
            handle = agg.handle();
            // A batch whose value column has the wrong type.
            try (VectorSchemaRoot wrong = VectorSchemaRoot.create(
                    new org.apache.arrow.vector.types.pojo.Schema(List.of(
                            org.apache.arrow.vector.types.pojo.Field.nullable("k", new org.apache.arrow.vector.types.pojo.ArrowType.Int(32, true)),
                            org.apache.arrow.vector.types.pojo.Field.nullable("v", new org.apache.arrow.vector.types.pojo.ArrowType.Int(32, true)),
                            org.apache.arrow.vector.types.pojo.Field.nullable("s", new org.apache.arrow.vector.types.pojo.ArrowType.Int(32, true)))),
                    allocator)) {
                for (int c = 0; c < 3; c++) {
                    ((IntVector) wrong.getVector(c)).setSafe(0, 1);
                }
                wrong.setRowCount(1);
                AggforgeNativeException badBatch =
                        assertThrows(AggforgeNativeException.class, () -> agg.process(wrong));
                assertTrue(badBatch.getMessage().startsWith("bad input:"), badBatch.getMessage());
            }
            // The operator still works after the refused batch.
            assertEquals(List.of("+I[3, 1, z]"), lines(agg.process(batch(new Object[] {3, 1L, "z"}))));
            AggforgeNativeException badSnapshot =
                    assertThrows(AggforgeNativeException.class, () -> agg.restore(new byte[][] {{1}}));
            assertTrue(badSnapshot.getMessage().contains("key group"), badSnapshot.getMessage());
            assertThrows(AggforgeNativeException.class, () -> agg.restore(new byte[][] {null}));
            assertThrows(AggforgeNativeException.class, () -> NativeAggregate.keyGroupOf(new byte[3]));
        }
        AggforgeNativeException closed =
                assertThrows(AggforgeNativeException.class, () -> NativeAggregate.memoryUsed(handle));
        assertTrue(closed.getMessage().contains("invalid handle"), closed.getMessage());
        assertThrows(AggforgeNativeException.class, () -> NativeAggregate.close(handle));
        assertThrows(AggforgeNativeException.class, () -> NativeAggregate.snapshot(0));
        assertThrows(AggforgeNativeException.class, () -> NativeAggregate.process(0, 0, 0, 0, 0));
        AggforgeNativeException nullStructs =
                assertThrows(AggforgeNativeException.class, () -> {
                    long h = NativeAggregate.create(plan("immediate"));
                    try {
                        NativeAggregate.process(h, 0, 0, 0, 0);
                    } finally {
                        NativeAggregate.close(h);
                    }
                });
        assertTrue(nullStructs.getMessage().contains("address is 0"), nullStructs.getMessage());
    }
}
