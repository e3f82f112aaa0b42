package dev.aggforge.flink.operator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.harness.InputTable;

/**
 * The {@code aggforge} metrics of native operators in real jobs, read through an in-memory metric
 * reporter of the job's MiniCluster (what Flink's reporters and REST API see), and checked
 * against Flink's own operator I/O counters and the input's distinct keys.
 *
 * <p>Each job runs on its own MiniCluster, since reporters are cluster configuration; the jobs
 * write to a blackhole sink (no result collection, so no race with the cluster's shutdown).
 */
class NativeOperatorMetricsTest {

    private static final int ROWS = 20_000;
    private static final int BATCH_SIZE = 64;
    private static final long BUDGET = 32L << 20;
    private static final InputTable INPUT =
            InputTable.generated("t", ROWS, 500, 0.1, 7, new BigIntType());
    private static final String INSERT =
            "INSERT INTO sink SELECT k, COUNT(*), SUM(v0) FROM t GROUP BY k";
    /**
     * (k INT, v BIGINT, ts TIMESTAMP(3)), 1 ms apart in order except one row in 10, which is 5 s
     * behind; the watermark trails by 1 s, so those rows are late.
     */
    private static final InputTable LATE_INPUT = lateInput();

    private static InputTable lateInput() {
        List<Row> rows = new ArrayList<>();
        long base = 1_700_000_000_000L;
        for (int i = 0; i < 20_000; i++) {
            long ts = base + i + (i % 10 == 9 ? -5_000 : 0);
            rows.add(Row.of(i % 7, (long) i, LocalDateTime.ofInstant(Instant.ofEpochMilli(ts), ZoneOffset.UTC)));
        }
        return InputTable.of(
                        "t",
                        List.of(
                                DataTypes.FIELD("k", DataTypes.INT()),
                                DataTypes.FIELD("v", DataTypes.BIGINT()),
                                DataTypes.FIELD("ts", DataTypes.TIMESTAMP(3))),
                        rows.toArray(new Row[0]))
                .withWatermark("ts", 1);
    }

    private static final List<String> NAMES =
            List.of(
                    NativeOperatorMetrics.NATIVE_BYTES,
                    NativeOperatorMetrics.MEMORY_BUDGET_BYTES,
                    NativeOperatorMetrics.GROUPS,
                    NativeOperatorMetrics.ROWS_IN,
                    NativeOperatorMetrics.ROWS_OUT,
                    NativeOperatorMetrics.BATCHES_IN,
                    NativeOperatorMetrics.BATCHES_OUT,
                    NativeOperatorMetrics.NATIVE_TIME_NANOS);

    /** One native operator subtask's metrics, by name, plus Flink's I/O counters. */
    private record Subtask(String scope, Map<String, Long> values, long recordsIn, long recordsOut) {
        long get(String name) {
            return values.get(name);
        }
    }

    @Test
    void immediateOperatorsReportWhatTheyHold() throws Exception {
        List<Subtask> subtasks = run(Map.of("table.exec.mini-batch.enabled", "false"));
        assertEquals(2, subtasks.size(), "one native operator at parallelism 2: " + subtasks);
        long rowsIn = 0;
        long groups = 0;
        for (Subtask s : subtasks) {
            assertSizes(s);
            assertEquals(s.recordsIn(), s.get(NativeOperatorMetrics.ROWS_IN), s.scope());
            assertEquals(s.recordsOut(), s.get(NativeOperatorMetrics.ROWS_OUT), s.scope());
            // COUNT(*) changes with every row, and the blackhole sink takes no -U: one row out
            // per row in.
            assertEquals(s.get(NativeOperatorMetrics.ROWS_IN), s.get(NativeOperatorMetrics.ROWS_OUT));
            assertTrue(
                    s.get(NativeOperatorMetrics.BATCHES_IN) * BATCH_SIZE >= s.get(NativeOperatorMetrics.ROWS_IN),
                    "at most " + BATCH_SIZE + " rows a batch: " + s);
            assertEquals(
                    s.get(NativeOperatorMetrics.BATCHES_IN),
                    s.get(NativeOperatorMetrics.BATCHES_OUT),
                    "immediate mode: every batch emits");
            rowsIn += s.get(NativeOperatorMetrics.ROWS_IN);
            groups += s.get(NativeOperatorMetrics.GROUPS);
        }
        assertEquals(ROWS, rowsIn);
        assertEquals(distinctKeys(), groups, "groups over both subtasks");
    }

    @Test
    void twoPhaseOperatorsReportPartialsAndState() throws Exception {
        List<Subtask> subtasks =
                run(
                        Map.of(
                                "table.exec.mini-batch.enabled", "true",
                                "table.exec.mini-batch.allow-latency", "1 h",
                                "table.exec.mini-batch.size", "1000",
                                "table.optimizer.agg-phase-strategy", "TWO_PHASE"));
        // The local phase runs beside the source (parallelism 1), the global one after the
        // exchange (parallelism 2). The local phase holds no state once its bundles flushed.
        List<Subtask> local = new ArrayList<>();
        List<Subtask> global = new ArrayList<>();
        for (Subtask s : subtasks) {
            assertSizes(s);
            assertEquals(s.recordsIn(), s.get(NativeOperatorMetrics.ROWS_IN), s.scope());
            assertEquals(s.recordsOut(), s.get(NativeOperatorMetrics.ROWS_OUT), s.scope());
            (s.recordsIn() == ROWS ? local : global).add(s);
        }
        assertEquals(1, local.size(), subtasks.toString());
        assertEquals(2, global.size(), subtasks.toString());
        Subtask l = local.get(0);
        assertEquals(0, l.get(NativeOperatorMetrics.GROUPS), "the local phase keeps no state");
        // 20 bundles of 1000 rows: one partial batch each, with a row per key of the bundle.
        assertEquals(ROWS / 1000, l.get(NativeOperatorMetrics.BATCHES_OUT));
        assertTrue(l.get(NativeOperatorMetrics.ROWS_OUT) >= distinctKeys(), l.toString());
        long partials = 0;
        long groups = 0;
        for (Subtask g : global) {
            partials += g.get(NativeOperatorMetrics.ROWS_IN);
            groups += g.get(NativeOperatorMetrics.GROUPS);
        }
        assertEquals(l.get(NativeOperatorMetrics.ROWS_OUT), partials, "partials in = partials out");
        assertEquals(distinctKeys(), groups);
    }

    /**
     * Late rows: the native window aggregate counts the rows it drops in Flink's own operator
     * metric, {@code numLateRecordsDropped}, as many as stock Flink's window aggregate drops.
     */
    @Test
    void windowOperatorsCountLateRowsAsFlinkDoes() throws Exception {
        String insert =
                "INSERT INTO sink SELECT k, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE t,"
                        + " DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY window_start, window_end, k";
        Map<String, String> options = Map.of("table.optimizer.agg-phase-strategy", "ONE_PHASE");
        long stock = lateRecordsDropped(options, false, insert);
        long aggforge = lateRecordsDropped(options, true, insert);
        assertTrue(stock > 50, "stock Flink dropped " + stock + " late rows");
        assertEquals(stock, aggforge, "late rows dropped: stock Flink, then aggforge");
    }

    /**
     * {@code numLateRecordsDropped} summed over the window aggregate's subtasks of {@code insert}
     * over {@link #LATE_INPUT}, with aggforge on or off.
     */
    private static long lateRecordsDropped(
            Map<String, String> tableOptions, boolean aggforge, String insert) throws Exception {
        InMemoryReporter reporter = InMemoryReporter.createWithRetainedMetrics();
        Configuration config = new Configuration();
        reporter.addToConfiguration(config);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, config);
        // A watermark at every advance: which rows are late does not depend on timing.
        env.getConfig().setAutoWatermarkInterval(0);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        var tableConfig = tEnv.getConfig().getConfiguration();
        tableOptions.forEach(tableConfig::setString);
        tableConfig.setString("table.exec.aggforge.enabled", Boolean.toString(aggforge));
        DataStream<RowData> stream =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        LATE_INPUT.generator(),
                                        LATE_INPUT.rowCount(),
                                        InternalTypeInfo.of(LATE_INPUT.rowType())),
                                WatermarkStrategy.noWatermarks(),
                                "t")
                        .setParallelism(1);
        tEnv.createTemporaryView(
                "t",
                tEnv.fromDataStream(
                        stream,
                        Schema.newBuilder()
                                .watermark(LATE_INPUT.rowtime(), LATE_INPUT.watermarkExpression())
                                .build()));
        tEnv.executeSql(
                "CREATE TEMPORARY TABLE sink (k INT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole')");
        long opened = NativeAggregateOperator.OPENED.get();
        TableResult result = tEnv.executeSql(insert);
        JobID job = result.getJobClient().orElseThrow().getJobID();
        result.await();
        assertEquals(aggforge, NativeAggregateOperator.OPENED.get() > opened, "native operators ran");
        long dropped = 0;
        int counters = 0;
        for (Map.Entry<String, Metric> metric : reporter.getMetricsByIdentifiers(job).entrySet()) {
            if (metric.getKey().endsWith("." + NativeOperatorMetrics.LATE_RECORDS_DROPPED)) {
                dropped += value(metric.getValue());
                counters++;
            }
        }
        assertEquals(2, counters, "one counter per window aggregate subtask");
        return dropped;
    }

    /** Budget as configured, bytes within it, time spent. */
    private static void assertSizes(Subtask s) {
        assertEquals(BUDGET, s.get(NativeOperatorMetrics.MEMORY_BUDGET_BYTES), s.scope());
        long bytes = s.get(NativeOperatorMetrics.NATIVE_BYTES);
        assertTrue(bytes > 0 && bytes <= BUDGET, bytes + " bytes: " + s);
        assertTrue(s.get(NativeOperatorMetrics.NATIVE_TIME_NANOS) > 0, s.toString());
        assertTrue(s.get(NativeOperatorMetrics.ROWS_IN) > 0, s.toString());
    }

    private static long distinctKeys() throws Exception {
        Set<Integer> keys = new HashSet<>();
        var generator = INPUT.generator();
        for (long i = 0; i < ROWS; i++) {
            keys.add(generator.map(i).getInt(0));
        }
        return keys.size();
    }

    /** Runs the query with aggforge on a fresh MiniCluster; returns every native subtask's metrics. */
    private static List<Subtask> run(Map<String, String> tableOptions) throws Exception {
        InMemoryReporter reporter = InMemoryReporter.createWithRetainedMetrics();
        Configuration config = new Configuration();
        config.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.ofMebiBytes(64));
        config.set(TaskManagerOptions.NETWORK_MEMORY_MIN, MemorySize.ofMebiBytes(32));
        config.set(TaskManagerOptions.NETWORK_MEMORY_MAX, MemorySize.ofMebiBytes(32));
        reporter.addToConfiguration(config);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, config);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        var tableConfig = tEnv.getConfig().getConfiguration();
        tableConfig.setString("table.exec.aggforge.memory-budget", BUDGET + " b");
        tableConfig.setString("table.exec.aggforge.batch-size", Integer.toString(BATCH_SIZE));
        tableOptions.forEach(tableConfig::setString);
        tableConfig.setString("table.exec.aggforge.enabled", "true");
        DataStream<RowData> stream =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        INPUT.generator(), ROWS, InternalTypeInfo.of(INPUT.rowType())),
                                WatermarkStrategy.noWatermarks(),
                                "t")
                        .setParallelism(1);
        tEnv.createTemporaryView("t", tEnv.fromDataStream(stream));
        tEnv.executeSql(
                "CREATE TEMPORARY TABLE sink (k INT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole')");
        long opened = NativeGroupAggOperator.OPENED.get();
        TableResult result = tEnv.executeSql(INSERT);
        JobID job = result.getJobClient().orElseThrow().getJobID();
        result.await();
        assertTrue(NativeGroupAggOperator.OPENED.get() > opened, "no native operator ran");
        return subtasks(reporter, job);
    }

    /** The native operators' subtasks: operator groups holding an {@code aggforge} subgroup. */
    private static List<Subtask> subtasks(InMemoryReporter reporter, JobID job) {
        Map<String, Metric> byIdentifier = reporter.getMetricsByIdentifiers(job);
        Map<String, Map<String, Long>> byScope = new TreeMap<>();
        for (Map.Entry<MetricGroup, Map<String, Metric>> entry : reporter.getMetricsByGroup().entrySet()) {
            MetricGroup group = entry.getKey();
            String[] scope = group.getScopeComponents();
            if (!NativeOperatorMetrics.GROUP.equals(scope[scope.length - 1])
                    || !byIdentifier.containsKey(group.getMetricIdentifier(NativeOperatorMetrics.ROWS_IN))) {
                continue;
            }
            // REST name: <subtask>.<operator>.aggforge.<metric>.
            String operator = group.getMetricIdentifier("").replaceAll("\\.aggforge\\.$", "");
            Map<String, Long> values = new TreeMap<>();
            for (Map.Entry<String, Metric> metric : entry.getValue().entrySet()) {
                values.put(metric.getKey(), value(metric.getValue()));
            }
            byScope.put(operator, values);
        }
        List<Subtask> out = new ArrayList<>();
        for (Map.Entry<String, Map<String, Long>> e : byScope.entrySet()) {
            assertEquals(new TreeSet<>(NAMES), e.getValue().keySet(), e.getKey());
            long recordsIn = value(byIdentifier.get(e.getKey() + ".numRecordsIn"));
            long recordsOut = value(byIdentifier.get(e.getKey() + ".numRecordsOut"));
            out.add(new Subtask(e.getKey(), e.getValue(), recordsIn, recordsOut));
        }
        return out;
    }

    private static long value(Metric metric) {
        if (metric instanceof Counter) {
            return ((Counter) metric).getCount();
        }
        if (metric instanceof Gauge) {
            return ((Number) ((Gauge<?>) metric).getValue()).longValue();
        }
        throw new AssertionError("not a counter or gauge: " + metric);
    }
}
