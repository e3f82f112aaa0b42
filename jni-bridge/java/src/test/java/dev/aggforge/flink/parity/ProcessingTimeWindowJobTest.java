package dev.aggforge.flink.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.harness.SharedMiniCluster;
import dev.aggforge.flink.operator.NativeAggregateOperator;

/**
 * Processing-time windows in a real job on the real clock, at parallelism 2 over the exchange the
 * parity suite uses: which window a row falls into depends on when it arrives, so the job checks
 * what does not: every row is counted in exactly one TUMBLE window (the sums over all windows are
 * the input's), and the native operator ran. The source paces its rows over about 1.5 s and then
 * waits 1.5 s (in a task of its own) before it ends, so every window fires before end of input
 * (Flink drops the ones still pending then). {@code ProcessingTimeWindowParityTest} compares the windows themselves.
 */
class ProcessingTimeWindowJobTest {

    private static final int ROWS = 3_000;

    /**
     * @param aggforge whether aggforge is on
     * @param uids whether operators get uids (table.exec.uid.generation=ALWAYS): then the rows
     *     cross the columnar exchange, else Flink's row exchange
     */
    @ParameterizedTest(name = "aggforge={0} uids={1}")
    @CsvSource({"false, false", "true, true", "true, false"})
    void everyRowLandsInExactlyOneWindow(boolean aggforge, boolean uids) throws Exception {
        StreamExecutionEnvironment env = SharedMiniCluster.environment(new Configuration());
        env.setParallelism(2);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        tEnv.getConfig().set(AggforgeOptions.ENABLED, aggforge);
        tEnv.getConfig()
                .set(AggforgeOptions.COLUMNAR_EXCHANGE, NativeParity.COLUMNAR_EXCHANGE);
        if (uids) {
            tEnv.getConfig().getConfiguration().setString(NativeParity.UID_GENERATION, "ALWAYS");
        }
        // Row ROWS is a marker: the source waits before it, and it is dropped.
        DataGeneratorSource<Row> source =
                new DataGeneratorSource<>(
                        i -> Row.of((int) (i % 7), i),
                        ROWS + 1,
                        RateLimiterStrategy.perSecond(2_000),
                        Types.ROW_NAMED(new String[] {"k", "v"}, Types.INT, Types.LONG));
        DataStream<Row> rows =
                env.fromSource(source, WatermarkStrategy.noWatermarks(), "paced")
                        .setParallelism(1)
                        .map(ProcessingTimeWindowJobTest::waitBeforeTheMarker)
                        .returns(source.getProducedType())
                        .setParallelism(1)
                        .filter(row -> (Long) row.getField(1) < ROWS)
                        .setParallelism(1)
                        // The wait blocks its task only: the exchange after the filter (a
                        // columnar one sends partly filled batches on a timer of its task) is
                        // not held up by it.
                        .startNewChain();
        tEnv.createTemporaryView(
                "events",
                tEnv.fromDataStream(
                        rows,
                        Schema.newBuilder()
                                .column("k", "INT")
                                .column("v", "BIGINT")
                                .columnByExpression("pt", "PROCTIME()")
                                .build()));
        String sql =
                "SELECT k, window_start, window_end, COUNT(*) AS c, SUM(v) AS s FROM TABLE("
                        + "TUMBLE(TABLE events, DESCRIPTOR(pt), INTERVAL '0.2' SECOND))"
                        + " GROUP BY k, window_start, window_end";
        String plan = tEnv.explainSql(sql);
        assertEquals(aggforge, plan.contains("AggforgeWindowAggregate("), plan);
        long rowsBefore = NativeAggregateOperator.ROWS.get();
        long count = 0;
        long sum = 0;
        List<Long> windowEnds = new ArrayList<>();
        TableResult result = tEnv.executeSql(sql);
        try (CloseableIterator<Row> it = result.collect()) {
            while (it.hasNext()) {
                Row row = it.next();
                count += (Long) row.getField("c");
                sum += (Long) row.getField("s");
                windowEnds.add(((java.time.LocalDateTime) row.getField("window_end"))
                        .toInstant(java.time.ZoneOffset.UTC)
                        .toEpochMilli());
            }
        }
        assertEquals(ROWS, count, "rows counted over all windows");
        assertEquals((long) ROWS * (ROWS - 1) / 2, sum, "values summed over all windows");
        assertTrue(
                windowEnds.stream().distinct().count() > 3,
                "the rows should spread over several windows: " + windowEnds);
        if (aggforge) {
            assertTrue(
                    NativeAggregateOperator.ROWS.get() - rowsBefore >= ROWS,
                    "the native window operator did not take the rows");
        }
    }

    private static Row waitBeforeTheMarker(Row row) throws InterruptedException {
        if ((Long) row.getField(1) == ROWS) {
            Thread.sleep(1_500);
        }
        return row;
    }
}
