package dev.aggforge.flink.operator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.conversion.DataStructureConverter;
import org.apache.flink.table.data.conversion.DataStructureConverters;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.utils.TypeConversions;
import org.apache.flink.util.InstantiationUtil;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.aggforge.flink.AggforgeOptions;

/**
 * Processing-time windows: the operator stock Flink plans for a query and the one aggforge plans
 * for it run side by side in Flink's operator test harness under the same manual processing-time
 * clock, with the same rows arriving at the same times, a checkpoint and restore half way, and
 * the clock finally moved past every window; both must emit the same windows. (A job on a real
 * clock cannot be compared row for row: which window a row falls into depends on when it
 * arrives.) Arrival times are multiples of 10 ms, so no row arrives in the very millisecond a
 * window fires, where the order of a timer and a row is a race in Flink too.
 *
 * <p>Outputs are read as nullable rows: Flink 1.20 types a processing-time {@code window_time}
 * NOT NULL although its operator leaves it NULL (a projection materializes it downstream), and
 * a NOT NULL field getter would read the native row's NULL slot as epoch 0.
 */
class ProcessingTimeWindowParityTest {

    private static final int MAX_PARALLELISM = 128;

    @ParameterizedTest(name = "{0} in {1}")
    @CsvSource(
            delimiter = ';',
            value = {
                "TUMBLE(TABLE events, DESCRIPTOR(pt), INTERVAL '10' SECOND); UTC; 1500",
                "HOP(TABLE events, DESCRIPTOR(pt), INTERVAL '5' SECOND, INTERVAL '15' SECOND); UTC; 1500",
                "CUMULATE(TABLE events, DESCRIPTOR(pt), INTERVAL '5' SECOND, INTERVAL '20' SECOND); UTC; 1500",
                "SESSION(TABLE events PARTITION BY k, DESCRIPTOR(pt), INTERVAL '4' SECOND); UTC; 3000",
                "TUMBLE(TABLE events, DESCRIPTOR(pt), INTERVAL '1' HOUR); America/Los_Angeles; 10000",
                "HOP(TABLE events, DESCRIPTOR(pt), INTERVAL '30' MINUTE, INTERVAL '1' HOUR); Asia/Kolkata; 10000",
            })
    void nativeEmitsStockWindows(String window, String zone, int maxStepMs) throws Exception {
        String sql =
                "SELECT k, window_start, window_end, window_time, COUNT(*), SUM(v), MAX(v) FROM TABLE("
                        + window
                        + ") GROUP BY k, window_start, window_end, window_time";
        OneInputTransformation<RowData, RowData> stock = windowOperator(false, sql, zone);
        OneInputTransformation<RowData, RowData> aggforge = windowOperator(true, sql, zone);
        assertTrue(
                aggforge.getName().startsWith("Aggforge"),
                "aggforge did not plan the window aggregate: " + aggforge.getName());
        // Across Los Angeles' spring-forward gap (2024-03-10 10:00 UTC) for the zoned cases.
        long start = Instant.parse("2024-03-10T08:59:00Z").toEpochMilli();
        List<String> want = run(stock, start, maxStepMs);
        List<String> got = run(aggforge, start, maxStepMs);
        assertTrue(want.size() > 20, "stock emitted " + want);
        assertEquals(want, got, sql);
    }

    /** Plans {@code sql} over a processing-time table and returns its keyed window operator. */
    @SuppressWarnings("unchecked")
    private static OneInputTransformation<RowData, RowData> windowOperator(
            boolean aggforge, String sql, String zone) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        tEnv.getConfig().set(AggforgeOptions.ENABLED, aggforge);
        tEnv.getConfig().set("table.local-time-zone", zone);
        // The row path: the harness feeds rows (a columnar exchange would feed batches).
        tEnv.getConfig().set("table.exec.aggforge.columnar-exchange", "false");
        tEnv.executeSql(
                "CREATE TABLE events (k INT, v BIGINT, pt AS PROCTIME())"
                        + " WITH ('connector' = 'datagen')");
        Transformation<?> sink = tEnv.toChangelogStream(tEnv.sqlQuery(sql)).getTransformation();
        OneInputTransformation<RowData, RowData> found = findKeyed(sink);
        assertNotNull(found, "no keyed operator in the plan of " + sql);
        return found;
    }

    @SuppressWarnings("unchecked")
    private static OneInputTransformation<RowData, RowData> findKeyed(Transformation<?> node) {
        if (node instanceof OneInputTransformation<?, ?> one && one.getStateKeySelector() != null) {
            return (OneInputTransformation<RowData, RowData>) one;
        }
        for (Transformation<?> input : node.getInputs()) {
            OneInputTransformation<RowData, RowData> found = findKeyed(input);
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    /**
     * Feeds 2,000 rows (6 keys, some NULL values) to {@code operator}, each at a processing time
     * up to {@code maxStepMs} after the one before, checkpoints and restores after the 1,000th,
     * then moves the clock a day on; returns everything emitted, as text, sorted.
     */
    private static List<String> run(
            OneInputTransformation<RowData, RowData> operator, long start, int maxStepMs)
            throws Exception {
        RowType input = ((InternalTypeInfo<RowData>) operator.getInputType()).toRowType();
        RowType output = ((InternalTypeInfo<RowData>) operator.getOutputType()).toRowType();
        DataStructureConverter<Object, Object> converter =
                DataStructureConverters.getConverter(
                        TypeConversions.fromLogicalToDataType(allNullable(output)));
        converter.open(ProcessingTimeWindowParityTest.class.getClassLoader());
        List<String> out = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(29);
        long time = start;
        KeyedOneInputStreamOperatorTestHarness<Object, RowData, RowData> harness =
                open(operator, output, null, time);
        for (int i = 0; i < 2_000; i++) {
            time += 10L * random.nextInt(maxStepMs / 10 + 1);
            harness.setProcessingTime(time);
            harness.processElement(new StreamRecord<>(row(input, random)));
            drain(harness, converter, out);
            if (i == 1_000) {
                // As a task does: the operator flushes what it buffers before the barrier.
                harness.prepareSnapshotPreBarrier(1);
                drain(harness, converter, out);
                OperatorSubtaskState state = harness.snapshot(1, time);
                harness.close();
                harness = open(operator, output, state, time);
            }
        }
        harness.setProcessingTime(time + 86_400_000L);
        drain(harness, converter, out);
        harness.close();
        Collections.sort(out);
        return out;
    }

    /** {@code type} with every field nullable, so a NULL is read as NULL whatever the type says. */
    private static RowType allNullable(RowType type) {
        List<RowType.RowField> fields = new ArrayList<>();
        for (RowType.RowField f : type.getFields()) {
            fields.add(new RowType.RowField(f.getName(), f.getType().copy(true)));
        }
        return new RowType(true, fields);
    }

    private static KeyedOneInputStreamOperatorTestHarness<Object, RowData, RowData> open(
            OneInputTransformation<RowData, RowData> operator,
            RowType output,
            OperatorSubtaskState state,
            long time)
            throws Exception {
        // A copy per harness: an operator instance runs once.
        StreamOperatorFactory<RowData> factory =
                InstantiationUtil.clone(
                        operator.getOperatorFactory(),
                        ProcessingTimeWindowParityTest.class.getClassLoader());
        @SuppressWarnings("unchecked")
        KeySelector<RowData, Object> keys = (KeySelector<RowData, Object>) operator.getStateKeySelector();
        @SuppressWarnings("unchecked")
        TypeInformation<Object> keyType = (TypeInformation<Object>) operator.getStateKeyType();
        @SuppressWarnings("unchecked")
        KeyedOneInputStreamOperatorTestHarness<Object, RowData, RowData> harness =
                factory instanceof SimpleOperatorFactory<RowData> simple
                        ? new KeyedOneInputStreamOperatorTestHarness<>(
                                (OneInputStreamOperator<RowData, RowData>) simple.getOperator(),
                                keys,
                                keyType,
                                MAX_PARALLELISM,
                                1,
                                0)
                        : new KeyedOneInputStreamOperatorTestHarness<>(
                                (OneInputStreamOperatorFactory<RowData, RowData>) factory,
                                keys,
                                keyType,
                                MAX_PARALLELISM,
                                1,
                                0);
        harness.setup(new RowDataSerializer(output));
        harness.setProcessingTime(time);
        if (state != null) {
            harness.initializeState(state);
        }
        harness.open();
        return harness;
    }

    /** An input row: k INT (0-5), v BIGINT (one in 8 NULL), any time field a placeholder. */
    private static RowData row(RowType input, SplittableRandom random) {
        GenericRowData row = new GenericRowData(input.getFieldCount());
        for (int f = 0; f < input.getFieldCount(); f++) {
            String name = input.getFieldNames().get(f);
            LogicalTypeRoot root = input.getTypeAt(f).getTypeRoot();
            if (name.equals("k")) {
                row.setField(f, random.nextInt(6));
            } else if (name.equals("v")) {
                row.setField(f, random.nextInt(8) == 0 ? null : random.nextLong(-1_000, 1_000));
            } else if (root == LogicalTypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE
                    || root == LogicalTypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE) {
                row.setField(f, TimestampData.fromEpochMillis(0));
            } else {
                throw new IllegalStateException("unexpected input field " + name + " " + root);
            }
        }
        return row;
    }

    private static void drain(
            KeyedOneInputStreamOperatorTestHarness<Object, RowData, RowData> harness,
            DataStructureConverter<Object, Object> converter,
            List<String> out) {
        for (Object element : harness.getOutput()) {
            if (element instanceof StreamRecord<?> record) {
                out.add(String.valueOf(converter.toExternalOrNull(record.getValue())));
            }
        }
        harness.getOutput().clear();
    }
}
