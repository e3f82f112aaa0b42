package dev.aggforge.flink.exchange;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.nativelib.ArrowAggregate;
import dev.aggforge.flink.nativelib.ExchangeMessage;
import dev.aggforge.flink.operator.NativeOperatorSpec;

/**
 * {@link ColumnarExchangeSender} in Flink's operator test harness: every row goes to the subtask
 * Flink's own {@code KeyGroupStreamPartitioner} would send it to (the key's BinaryRowData and
 * {@code KeyGroupRangeAssignment} over the same rows, composite STRING + INT keys with NULLs), rows keep
 * their order per subtask, and batches leave when full, at the max delay, before a watermark
 * and at end of input.
 */
class ColumnarExchangeSenderTest {

    private static final int CHANNELS = 3;
    private static final int MAX_PARALLELISM = 128;

    /** k VARCHAR, n INT, v BIGINT (the row's number), pad INT (not read). */
    private static final RowType INPUT =
            RowType.of(
                    new LogicalType[] {
                        new VarCharType(VarCharType.MAX_LENGTH), new IntType(), new BigIntType(), new IntType()
                    },
                    new String[] {"k", "n", "v", "pad"});

    private static final RowType OUTPUT =
            RowType.of(
                    new LogicalType[] {new VarCharType(VarCharType.MAX_LENGTH), new IntType(), new BigIntType()},
                    new String[] {"k", "n", "s"});

    private static NativeOperatorSpec spec() {
        return spec(NativeOperatorSpec.Mode.IMMEDIATE);
    }

    private static NativeOperatorSpec spec(NativeOperatorSpec.Mode mode) {
        String json =
                "{\"version\":1,\"key_columns\":[0,1],\"key_types\":[\"VARCHAR(2147483647)\",\"INT\"],"
                        + "\"calls\":[{\"function\":\"SUM\",\"args\":[2],\"arg_types\":[\"BIGINT\"],"
                        + "\"distinct\":false,\"filter\":null}],\"phase\":\"single\",\"input\":\"insert_only\","
                        + "\"emission\":\"immediate\",\"generate_update_before\":true,\"state_ttl_ms\":0,"
                        + "\"memory_budget_bytes\":16777216,\"max_parallelism\":128}";
        String admission = ArrowAggregate.admit(json);
        assertTrue(ArrowAggregate.isAdmitted(admission), admission);
        return new NativeOperatorSpec(
                json, INPUT, OUTPUT, new int[] {0, 1, 2}, false, mode,
                mode.bundled() ? Long.MAX_VALUE : 0, 100, 50, admission);
    }

    private final List<RowData> sent = new ArrayList<>();

    private StreamRecord<RowData> row(Random random) {
        StringData k = random.nextInt(10) == 0 ? null : StringData.fromString("key-" + random.nextInt(40));
        Integer n = random.nextInt(10) == 0 ? null : random.nextInt(5);
        RowData row = GenericRowData.of(k, n, (long) sent.size(), 7);
        sent.add(row);
        return new StreamRecord<>(row);
    }

    private static RowData key(RowData row) {
        return GenericRowData.of(row.isNullAt(0) ? null : row.getString(0), row.isNullAt(1) ? null : row.getInt(1));
    }

    /** Each message's channel and the row numbers (column v) it carries, in order. */
    private static List<long[]> messages(List<Object> output, List<String> order) throws Exception {
        List<long[]> out = new ArrayList<>();
        try (RootAllocator allocator = new RootAllocator()) {
            for (Object element : output) {
                if (element instanceof Watermark) {
                    order.add("W");
                    continue;
                }
                @SuppressWarnings("unchecked")
                byte[] message = ((StreamRecord<byte[]>) element).getValue();
                order.add("M");
                int rows = ExchangeMessage.rows(message);
                long[] channelAndRows = new long[rows + 1];
                channelAndRows[0] = ExchangeMessage.channel(message);
                ByteArrayInputStream in =
                        new ByteArrayInputStream(
                                message,
                                ExchangeMessage.payloadOffset(message),
                                message.length - ExchangeMessage.payloadOffset(message));
                try (ArrowStreamReader reader = new ArrowStreamReader(in, allocator)) {
                    assertTrue(reader.loadNextBatch());
                    VectorSchemaRoot root = reader.getVectorSchemaRoot();
                    assertEquals(rows, root.getRowCount());
                    BigIntVector v = (BigIntVector) root.getVector(2);
                    for (int i = 0; i < rows; i++) {
                        channelAndRows[i + 1] = v.get(i);
                    }
                }
                out.add(channelAndRows);
            }
        }
        output.clear();
        return out;
    }

    @Test
    void routesAsFlinksKeyGroupPartitionerAndFlushesOnTime() throws Exception {
        Random random = new Random(11);
        ColumnarExchangeSender sender =
                new ColumnarExchangeSender(spec(), new int[] {CHANNELS, MAX_PARALLELISM});
        List<long[]> all = new ArrayList<>();
        List<String> order = new ArrayList<>();
        try (var h = new OneInputStreamOperatorTestHarness<RowData, byte[]>(sender)) {
            h.open();
            h.setProcessingTime(1_000);
            for (int i = 0; i < 250; i++) {
                h.processElement(row(random));
            }
            // Two full batches of 100 rows are routed; 50 rows wait.
            List<long[]> full = messages(new ArrayList<>(h.getOutput()), order);
            h.getOutput().clear();
            assertEquals(200, full.stream().mapToInt(m -> m.length - 1).sum());
            all.addAll(full);

            h.setProcessingTime(1_049);
            assertEquals(0, h.getOutput().size(), "49 ms after the first pending row");
            h.setProcessingTime(1_050);
            List<long[]> delayed = messages(new ArrayList<>(h.getOutput()), order);
            h.getOutput().clear();
            assertEquals(50, delayed.stream().mapToInt(m -> m.length - 1).sum(), "max delay");
            all.addAll(delayed);

            order.clear();
            for (int i = 0; i < 30; i++) {
                h.processElement(row(random));
            }
            h.processWatermark(new Watermark(5));
            List<long[]> beforeWatermark = messages(new ArrayList<>(h.getOutput()), order);
            h.getOutput().clear();
            assertEquals("W", order.get(order.size() - 1), "the watermark follows the rows: " + order);
            assertEquals(30, beforeWatermark.stream().mapToInt(m -> m.length - 1).sum());
            all.addAll(beforeWatermark);

            for (int i = 0; i < 7; i++) {
                h.processElement(row(random));
            }
            h.endInput();
            all.addAll(messages(new ArrayList<>(h.getOutput()), order));
        }

        // The key Flink's exchange hashes: the BinaryRowData of the key fields.
        RowDataSerializer keys =
                new RowDataSerializer(
                        RowType.of(new VarCharType(VarCharType.MAX_LENGTH), new IntType()));
        boolean[] seen = new boolean[sent.size()];
        assertEquals(
                CHANNELS,
                all.stream().mapToLong(m -> m[0]).distinct().count(),
                "every subtask received rows");
        for (long[] message : all) {
            long previous = -1;
            for (int i = 1; i < message.length; i++) {
                int number = (int) message[i];
                assertTrue(number > previous, "rows keep their order within a message");
                previous = number;
                int expected =
                        KeyGroupRangeAssignment.assignKeyToParallelOperator(
                                keys.toBinaryRow(key(sent.get(number))), MAX_PARALLELISM, CHANNELS);
                assertEquals(expected, message[0], "row " + number + " " + sent.get(number));
                assertTrue(!seen[number], "row " + number + " sent twice");
                seen[number] = true;
            }
        }
        for (int i = 0; i < seen.length; i++) {
            assertTrue(seen[i], "row " + i + " never sent");
        }
    }

    /**
     * Feeding an event-time window from one subtask, watermarks travel inside the batch: a
     * watermark between rows sends nothing; each message carries it at the position among its own
     * rows where it came, and the latest is forwarded right after the messages (when the batch is
     * full, or at the max delay); a watermark with no rows pending is forwarded at once.
     */
    @Test
    void watermarksTravelInsideTheBatchToAWindow() throws Exception {
        Random random = new Random(5);
        ColumnarExchangeSender sender =
                new ColumnarExchangeSender(
                        spec(NativeOperatorSpec.Mode.WINDOW), new int[] {CHANNELS, MAX_PARALLELISM});
        try (var h = new OneInputStreamOperatorTestHarness<RowData, byte[]>(sender)) {
            h.open();
            h.setProcessingTime(1_000);
            h.processWatermark(new Watermark(1));
            assertEquals(List.of(new Watermark(1)), new ArrayList<>(h.getOutput()), "nothing pending");
            h.getOutput().clear();
            int[] at = {30, 30, 50, 99};
            long[] watermarks = {5, 6, 9, 11};
            int next = 0;
            for (int i = 0; i < 100; i++) {
                while (next < at.length && at[next] == i) {
                    h.processWatermark(new Watermark(watermarks[next++]));
                }
                h.processElement(row(random));
                if (i < 99) {
                    assertEquals(0, h.getOutput().size(), "row " + i + ": the batch waits");
                }
            }
            // The batch is full: its messages, then the latest watermark.
            List<Object> out = new ArrayList<>(h.getOutput());
            h.getOutput().clear();
            assertEquals(new Watermark(11), out.get(out.size() - 1));
            int rows = 0;
            for (Object element : out.subList(0, out.size() - 1)) {
                @SuppressWarnings("unchecked")
                byte[] message = ((StreamRecord<byte[]>) element).getValue();
                long[] marks = ExchangeMessage.marks(message);
                long[] numbers = messages(new ArrayList<>(List.of(element)), new ArrayList<>()).get(0);
                rows += numbers.length - 1;
                assertEquals(2 * at.length, marks.length);
                for (int m = 0; m < at.length; m++) {
                    int before = 0;
                    for (int i = 1; i < numbers.length; i++) {
                        before += numbers[i] < at[m] ? 1 : 0;
                    }
                    assertEquals(before, marks[2 * m], "watermark " + m + "'s position");
                    assertEquals(watermarks[m], marks[2 * m + 1]);
                }
            }
            assertEquals(100, rows);

            // A watermark waits at most the max delay after the batch's first row.
            h.setProcessingTime(2_000);
            for (int i = 0; i < 3; i++) {
                h.processElement(row(random));
            }
            h.processWatermark(new Watermark(20));
            assertEquals(0, h.getOutput().size());
            h.setProcessingTime(2_050);
            out = new ArrayList<>(h.getOutput());
            assertEquals(new Watermark(20), out.get(out.size() - 1), "max delay: " + out);
            for (Object element : out.subList(0, out.size() - 1)) {
                @SuppressWarnings("unchecked")
                byte[] message = ((StreamRecord<byte[]>) element).getValue();
                long[] marks = ExchangeMessage.marks(message);
                assertEquals(2, marks.length);
                assertEquals(ExchangeMessage.rows(message), marks[0], "after all its rows");
                assertEquals(20, marks[1]);
            }
        }
    }
}
