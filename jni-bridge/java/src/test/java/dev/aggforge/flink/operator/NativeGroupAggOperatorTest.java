package dev.aggforge.flink.operator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.keyselector.RowDataKeySelector;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.nativelib.AggforgeNativeException;
import dev.aggforge.flink.nativelib.ArrowAggregate;
import dev.aggforge.flink.nativelib.NativeAggregate;

/**
 * {@link NativeGroupAggOperator} in Flink's operator test harness: when rows leave the operator
 * (batch full, watermark, checkpoint barrier, end of input), bundles, and checkpoint/restore
 * through raw keyed state.
 */
class NativeGroupAggOperatorTest {

    private static final int MAX_PARALLELISM = 128;

    /** k INT NOT NULL, v BIGINT, pad INT (not read by the plan). */
    private static final RowType INPUT =
            RowType.of(
                    new LogicalType[] {new IntType(false), new BigIntType(), new IntType()},
                    new String[] {"k", "v", "pad"});

    /** k, SUM(v), COUNT(*). */
    private static final RowType OUTPUT =
            RowType.of(
                    new LogicalType[] {new IntType(false), new BigIntType(), new BigIntType(false)},
                    new String[] {"k", "s", "c"});

    private static String plan(String emission) {
        // Over the transposed columns [k, v].
        return "{\"version\":1,\"key_columns\":[0],\"key_types\":[\"INT\"],\"calls\":["
                + "{\"function\":\"SUM\",\"args\":[1],\"arg_types\":[\"BIGINT\"],\"distinct\":false,\"filter\":null},"
                + "{\"function\":\"COUNT_STAR\",\"args\":[],\"arg_types\":[],\"distinct\":false,\"filter\":null}],"
                + "\"phase\":\"single\",\"input\":\"insert_only\",\"emission\":\""
                + emission
                + "\",\"generate_update_before\":true,\"state_ttl_ms\":0,"
                + "\"memory_budget_bytes\":16777216,\"max_parallelism\":1}";
    }

    private static NativeOperatorSpec spec(NativeOperatorSpec.Mode mode, long bundleSize, int batchSize) {
        String json = plan(mode == NativeOperatorSpec.Mode.IMMEDIATE ? "immediate" : "mini_batch");
        String admission = ArrowAggregate.admit(json);
        assertTrue(ArrowAggregate.isAdmitted(admission), admission);
        return new NativeOperatorSpec(
                json, INPUT, OUTPUT, new int[] {0, 1}, false, mode, bundleSize, batchSize, 50, admission);
    }

    private static KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData> harness(
            NativeOperatorSpec spec, int parallelism, int subtask) throws Exception {
        RowDataKeySelector selector =
                new FirstIntKeySelector();
        KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData> harness =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        NativeGroupAggOperator.rows(spec),
                        selector,
                        selector.getProducedType(),
                        MAX_PARALLELISM,
                        parallelism,
                        subtask);
        harness.setup(new RowDataSerializer(OUTPUT));
        return harness;
    }

    private static StreamRecord<RowData> row(int k, Long v) {
        return new StreamRecord<>(GenericRowData.of(k, v, 0));
    }

    /** The output so far as text (rows and watermarks), then cleared. */
    private static List<String> drain(AbstractStreamOperatorTestHarness<RowData> harness) {
        List<String> out = new ArrayList<>();
        for (Object element : harness.getOutput()) {
            if (element instanceof Watermark) {
                out.add("W" + ((Watermark) element).getTimestamp());
            } else {
                @SuppressWarnings("unchecked")
                RowData row = ((StreamRecord<RowData>) element).getValue();
                out.add(text(row));
            }
        }
        harness.getOutput().clear();
        return out;
    }

    private static String text(RowData row) {
        return row.getRowKind().shortString()
                + "["
                + row.getInt(0)
                + ", "
                + (row.isNullAt(1) ? "null" : row.getLong(1))
                + ", "
                + row.getLong(2)
                + "]";
    }

    /** Over the budget the job fails with the operator's name and the option to raise. */
    @Test
    void overBudgetNamesTheOperatorAndTheOption() throws Exception {
        String json = plan("immediate").replace("16777216", "2048");
        String admission = ArrowAggregate.admit(json);
        assertTrue(ArrowAggregate.isAdmitted(admission), admission);
        NativeOperatorSpec spec =
                new NativeOperatorSpec(
                        json, INPUT, OUTPUT, new int[] {0, 1}, false, NativeOperatorSpec.Mode.IMMEDIATE,
                        0, 4096, 50, admission);
        var h = harness(spec, 1, 0);
        try {
            h.open();
            AggforgeNativeException e =
                    assertThrows(
                            AggforgeNativeException.class,
                            () -> {
                                for (int k = 0; k < 3000; k++) {
                                    h.processElement(row(k, (long) k));
                                }
                                h.processWatermark(new Watermark(1));
                            });
            assertTrue(e.getMessage().contains("memory budget exceeded"), e.getMessage());
            assertTrue(e.getMessage().contains("table.exec.aggforge.memory-budget"), e.getMessage());
            // The harness names no operator; a job's name is its EXPLAIN name.
            String name = h.getOperator().getOperatorConfig().getOperatorName();
            assertTrue(e.getMessage().startsWith(name + ": memory budget"), e.getMessage());
        } finally {
            // The failed rows are still pending: closing flushes them and fails again, as a
            // failed task would not (Flink disposes it).
            assertThrows(AggforgeNativeException.class, h::close);
        }
    }

    @Test
    void immediateRowsLeaveWhenTheBatchFillsOnWatermarksAndAtEnd() throws Exception {
        try (var h = harness(spec(NativeOperatorSpec.Mode.IMMEDIATE, 0, 3), 1, 0)) {
            h.open();
            h.processElement(row(1, 10L));
            h.processElement(row(2, 5L));
            assertEquals(List.of(), drain(h), "the batch is not full");
            h.processElement(row(1, 7L));
            assertEquals(
                    List.of("+I[1, 10, 1]", "+I[2, 5, 1]", "-U[1, 10, 1]", "+U[1, 17, 2]"), drain(h));
            h.processElement(row(2, null));
            h.processWatermark(new Watermark(100));
            assertEquals(List.of("-U[2, 5, 1]", "+U[2, 5, 2]", "W100"), drain(h), "watermark after rows");
            h.processElement(row(3, 1L));
            h.prepareSnapshotPreBarrier(1);
            assertEquals(List.of("+I[3, 1, 1]"), drain(h), "before the barrier");
            h.processElement(row(3, 2L));
            h.endInput();
            assertEquals(List.of("-U[3, 1, 1]", "+U[3, 3, 2]"), drain(h));
        }
    }

    @Test
    void immediateRowsLeaveAfterTheMaxDelay() throws Exception {
        // Batches of 100 rows, max delay 50 ms (processing time).
        try (var h = harness(spec(NativeOperatorSpec.Mode.IMMEDIATE, 0, 100), 1, 0)) {
            h.open();
            h.setProcessingTime(1_000);
            h.processElement(row(1, 10L));
            h.processElement(row(1, 5L));
            h.setProcessingTime(1_049);
            assertEquals(List.of(), drain(h), "49 ms: still waiting");
            h.setProcessingTime(1_050);
            assertEquals(List.of("+I[1, 10, 1]", "-U[1, 10, 1]", "+U[1, 15, 2]"), drain(h));
            h.setProcessingTime(1_070);
            h.processElement(row(2, 1L));
            h.setProcessingTime(1_119);
            assertEquals(List.of(), drain(h), "the clock starts at the first pending row");
            h.setProcessingTime(1_120);
            assertEquals(List.of("+I[2, 1, 1]"), drain(h));
        }
    }

    @Test
    void expiredStateReadsAsAbsent() throws Exception {
        // State TTL 1 s (processing time); batches of one row.
        String json = plan("immediate").replace("\"state_ttl_ms\":0", "\"state_ttl_ms\":1000");
        String admission = ArrowAggregate.admit(json);
        assertTrue(ArrowAggregate.isAdmitted(admission), admission);
        NativeOperatorSpec spec =
                new NativeOperatorSpec(
                        json, INPUT, OUTPUT, new int[] {0, 1}, false,
                        NativeOperatorSpec.Mode.IMMEDIATE, 0, 1, 0, admission);
        try (var h = harness(spec, 1, 0)) {
            h.open();
            h.setProcessingTime(10_000);
            h.processElement(row(1, 5L));
            assertEquals(List.of("+I[1, 5, 1]"), drain(h));
            h.setProcessingTime(10_999);
            h.processElement(row(1, 1L));
            assertEquals(List.of("-U[1, 5, 1]", "+U[1, 6, 2]"), drain(h));
            // Written at 10,999: expired from 11,999 on.
            h.setProcessingTime(12_000);
            h.processElement(row(1, 2L));
            assertEquals(List.of("+I[1, 2, 1]"), drain(h), "expired state reads as absent");
        }
    }

    @Test
    void miniBatchFlushesBundlesBySizeWatermarkAndEnd() throws Exception {
        try (var h = harness(spec(NativeOperatorSpec.Mode.MINI_BATCH, 3, 2), 1, 0)) {
            h.open();
            h.processElement(row(1, 1L));
            h.processElement(row(1, 2L));
            assertEquals(List.of(), drain(h), "a bundle is open");
            h.processElement(row(1, 3L));
            assertEquals(List.of("+I[1, 6, 3]"), drain(h), "one row per key per bundle");
            h.processElement(row(1, 4L));
            h.processWatermark(new Watermark(7));
            assertEquals(List.of("-U[1, 6, 3]", "+U[1, 10, 4]", "W7"), drain(h));
            h.processElement(row(2, 4L));
            h.endInput();
            assertEquals(List.of("+I[2, 4, 1]"), drain(h));
        }
    }

    private static List<StreamRecord<RowData>> rows(int from, int to) {
        List<StreamRecord<RowData>> rows = new ArrayList<>();
        for (int i = from; i < to; i++) {
            rows.add(row(i % 13, i % 5 == 0 ? null : (long) i * 31 % 101));
        }
        return rows;
    }

    /** Output of one uninterrupted operator over rows [0, 300). */
    private static List<String> uninterrupted(NativeOperatorSpec spec) throws Exception {
        try (var h = harness(spec, 1, 0)) {
            h.open();
            h.processElements(rows(0, 150));
            h.prepareSnapshotPreBarrier(1);
            drain(h);
            h.processElements(rows(150, 300));
            h.endInput();
            return drain(h);
        }
    }

    @Test
    void restoreContinuesWhereTheCheckpointWas() throws Exception {
        for (NativeOperatorSpec.Mode mode :
                List.of(NativeOperatorSpec.Mode.IMMEDIATE, NativeOperatorSpec.Mode.MINI_BATCH)) {
            NativeOperatorSpec spec = spec(mode, 40, 16);
            OperatorSubtaskState state;
            try (var h = harness(spec, 1, 0)) {
                h.open();
                h.processElements(rows(0, 150));
                h.prepareSnapshotPreBarrier(1);
                state = h.snapshot(1, 1);
            }
            try (var h = harness(spec, 1, 0)) {
                h.initializeState(state);
                h.open();
                h.processElements(rows(150, 300));
                h.endInput();
                assertEquals(uninterrupted(spec), drain(h), mode.toString());
            }
        }
    }

    /** Whether the runtime's snapshot key groups are Flink's (KeyGroupRangeAssignment). */
    private static boolean runtimeKeyGroupsAreFlinks() throws Exception {
        NativeOperatorSpec spec = spec(NativeOperatorSpec.Mode.IMMEDIATE, 0, 1);
        RowDataKeySelector selector =
                new FirstIntKeySelector();
        try (var allocator = new org.apache.arrow.memory.RootAllocator();
                var transposer =
                        new dev.aggforge.flink.arrow.RowDataToArrow(
                                allocator, INPUT, spec.columns(), false, 4);
                var agg = new ArrowAggregate(spec.planJson(MAX_PARALLELISM), allocator)) {
            GenericRowData probe = GenericRowData.of(1, 1L, 0);
            transposer.append(probe);
            var out = agg.process(transposer.finish());
            if (out != null) {
                out.close();
            }
            int native_ = NativeAggregate.keyGroupOf(agg.snapshot()[0]);
            int flink = KeyGroupRangeAssignment.assignToKeyGroup(selector.getKey(probe), MAX_PARALLELISM);
            return native_ == flink;
        }
    }

    @Test
    void rescalingSplitsStateByKeyGroup() throws Exception {
        assertTrue(
                runtimeKeyGroupsAreFlinks(), "the runtime's snapshot key groups are not Flink's");
        NativeOperatorSpec spec = spec(NativeOperatorSpec.Mode.IMMEDIATE, 0, 16);
        OperatorSubtaskState state;
        try (var h = harness(spec, 1, 0)) {
            h.open();
            h.processElements(rows(0, 150));
            h.prepareSnapshotPreBarrier(1);
            state = h.snapshot(1, 1);
        }
        RowDataKeySelector selector =
                new FirstIntKeySelector();
        Map<Integer, List<StreamRecord<RowData>>> bySubtask = new HashMap<>();
        for (StreamRecord<RowData> r : rows(150, 300)) {
            int subtask =
                    KeyGroupRangeAssignment.assignKeyToParallelOperator(
                            selector.getKey(r.getValue()), MAX_PARALLELISM, 2);
            bySubtask.computeIfAbsent(subtask, s -> new ArrayList<>()).add(r);
        }
        Map<Integer, List<String>> actual = new HashMap<>();
        for (int subtask = 0; subtask < 2; subtask++) {
            OperatorSubtaskState part =
                    AbstractStreamOperatorTestHarness.repartitionOperatorState(
                            state, MAX_PARALLELISM, 1, 2, subtask);
            try (var h = harness(spec, 2, subtask)) {
                h.initializeState(part);
                h.open();
                h.processElements(bySubtask.getOrDefault(subtask, List.of()));
                h.endInput();
                for (String line : drain(h)) {
                    actual.computeIfAbsent(key(line), k -> new ArrayList<>()).add(line);
                }
            }
        }
        Map<Integer, List<String>> expected = new HashMap<>();
        for (String line : uninterrupted(spec)) {
            expected.computeIfAbsent(key(line), k -> new ArrayList<>()).add(line);
        }
        assertEquals(expected, actual);
    }

    private static int key(String line) {
        return Integer.parseInt(line.substring(3, line.indexOf(',')));
    }
}
