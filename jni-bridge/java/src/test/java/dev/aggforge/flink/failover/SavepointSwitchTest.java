package dev.aggforge.flink.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.Row;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.aggforge.flink.failover.CheckpointedJob.Running;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.operator.NativeAggregateOperator;

/**
 * Switching aggforge on and off is a savepoint and a restart: the native group aggregates keep
 * their state in stock Flink's layout under stock Flink's operator ids, so a savepoint of the
 * stock job restores into the aggforge job and the other way round, and the job continues with
 * stock Flink's changelog.
 *
 * <p>Each case runs the first job (stock or aggforge) for about a fifth of the input, stops it
 * with a savepoint, and resumes the same SQL from it twice, on stock Flink and with aggforge (at
 * the same or another parallelism, on the heap or RocksDB backend): the resumed aggforge job must
 * run natively, load its groups from the savepoint (or, resumed on stock Flink, find them there)
 * and give the resumed stock job's changelog (row for row at parallelism 1 and immediate
 * emission; otherwise the same table), and both runs end with the table of an uninterrupted
 * stock run.
 *
 * <p>Where a call keeps its state in aggforge's own format (the data views of MIN/MAX, LISTAGG and
 * FIRST/LAST_VALUE over retracting input, for now), the switch
 * fails instead of starting the aggregate empty: into aggforge with a sentence that says what to
 * do, into stock Flink in Flink's restore of the operator's timers.
 */
class SavepointSwitchTest {

    private static final long ROWS = 20_000;

    /** The first job's rate: the savepoint, asked for after a fifth of the rows, lands mid-stream. */
    private static final double RATE = 5_000;

    private static final InputTable T =
            InputTable.generated(
                    "t",
                    ROWS,
                    300,
                    1.0 / 8,
                    71,
                    new VarCharType(VarCharType.MAX_LENGTH),
                    new BigIntType(),
                    new DecimalType(20, 3));

    /** Insert-only MIN/MAX/SUM/COUNT/AVG over strings, integers and decimals. */
    private static final String SQL =
            "SELECT k, MIN(v0), MAX(v0), COUNT(v0), SUM(v1), MIN(v1), MAX(v1), AVG(v1), SUM(v2),"
                    + " MAX(v2), COUNT(*) FROM t GROUP BY k";

    /** Over retracting input: the outer aggregates keep the record counter and SUM's and AVG's counts. */
    private static final String RETRACTING_SQL =
            "SELECT MOD(k, 7), COUNT(*), SUM(s), AVG(s), COUNT(m) FROM"
                    + " (SELECT k, SUM(v1) AS s, MAX(v0) AS m FROM t GROUP BY k) GROUP BY MOD(k, 7)";

    /**
     * FIRST_VALUE and LAST_VALUE: Flink's accumulator is a nested ROW(value, order) per call (the
     * runtime keeps the value). Single phase: Flink never splits them.
     */
    private static final String FIRST_LAST_SQL =
            "SELECT k, FIRST_VALUE(v0), LAST_VALUE(v1), FIRST_VALUE(v2), COUNT(*) FROM t GROUP BY k";

    /**
     * MIN/MAX over retracting input: Flink's accumulator is a structured MinWithRetractAccumulator
     * per call, its map of values to counts a map state {@code agg<i>$map} (values leave it as
     * the inner sums change).
     */
    private static final String RETRACTING_EXTREMES_SQL =
            "SELECT MOD(k, 7), MIN(s), MAX(s), MAX(m), COUNT(*) FROM"
                    + " (SELECT k, SUM(v1) AS s, MAX(v0) AS m FROM t GROUP BY k) GROUP BY MOD(k, 7)";

    /**
     * LISTAGG over retracting input: Flink's accumulator is a structured
     * ListAgg(Ws)WithRetractAccumulator per call, its lists list states {@code agg<i>$list} and
     * {@code agg<i>$retractList} (order matters: single phase, parallelism 1).
     */
    private static final String RETRACTING_LISTAGG_SQL =
            "SELECT MOD(k, 7), LISTAGG(CAST(s AS STRING)), LISTAGG(CAST(MOD(s, 100) AS STRING), '|'),"
                    + " COUNT(*) FROM (SELECT k, SUM(v1) AS s FROM t GROUP BY k) GROUP BY MOD(k, 7)";

    /**
     * FIRST_VALUE over retracting input: Flink keeps map views of values and arrival orders,
     * which aggforge keeps in its own snapshot format for now.
     */
    private static final String RETRACTING_FIRST_SQL =
            "SELECT MOD(k, 7), FIRST_VALUE(s) FROM (SELECT k, SUM(v1) AS s FROM t GROUP BY k)"
                    + " GROUP BY MOD(k, 7)";

    /**
     * DISTINCT over retracting input: the views hold counts, and values leave them (entries
     * removed from Flink's map state).
     */
    private static final String RETRACTING_DISTINCT_SQL =
            "SELECT MOD(k, 7), COUNT(DISTINCT MOD(s, 50)), SUM(DISTINCT MOD(s, 50)) FILTER (WHERE s > 0),"
                    + " COUNT(*) FROM (SELECT k, SUM(v1) AS s FROM t GROUP BY k) GROUP BY MOD(k, 7)";

    /** A GROUP BY without calls: Flink's state is an empty row per key seen. */
    private static final String DISTINCT_KEYS_SQL = "SELECT k FROM t GROUP BY k";

    private static final RunOptions IMMEDIATE = RunOptions.defaults().withParallelism(1);

    private static final RunOptions MINI_BATCH =
            RunOptions.defaults()
                    .withParallelism(2)
                    .withMiniBatch(200)
                    .withConfig("table.exec.mini-batch.allow-latency", "100 ms")
                    .withAggPhase("ONE_PHASE");

    private static final RunOptions TWO_PHASE = MINI_BATCH.withAggPhase("TWO_PHASE");

    /**
     * @param mode IMMEDIATE, MINI_BATCH or TWO_PHASE
     * @param query SQL, RETRACTING_SQL, FIRST_LAST_SQL, DISTINCT_SQL, RETRACTING_DISTINCT_SQL (DISTINCT
     *     views: Flink's map states), RETRACTING_EXTREMES_SQL (MIN/MAX's map states),
     *     RETRACTING_LISTAGG_SQL (LISTAGG's list states) or DISTINCT_KEYS_SQL
     * @param backend hashmap or rocksdb
     * @param nativeFirst whether the first job (the savepoint's) runs with aggforge
     * @param resumedParallelism the resumed jobs' parallelism
     */
    @ParameterizedTest(name = "{0} {1} {2} aggforge first={3} resumed at p={4}")
    @CsvSource({
        "IMMEDIATE, SQL, hashmap, false, 1",
        "IMMEDIATE, SQL, hashmap, true, 1",
        "IMMEDIATE, RETRACTING_SQL, rocksdb, false, 1",
        "MINI_BATCH, SQL, rocksdb, false, 2",
        "MINI_BATCH, SQL, rocksdb, true, 1",
        "TWO_PHASE, SQL, hashmap, false, 1",
        "TWO_PHASE, RETRACTING_SQL, hashmap, true, 2",
        "IMMEDIATE, DISTINCT_KEYS_SQL, hashmap, true, 1",
        "IMMEDIATE, FIRST_LAST_SQL, hashmap, false, 1",
        "IMMEDIATE, FIRST_LAST_SQL, rocksdb, true, 1",
        "IMMEDIATE, DISTINCT_SQL, hashmap, false, 1",
        "IMMEDIATE, DISTINCT_SQL, rocksdb, true, 1",
        "MINI_BATCH, DISTINCT_SQL, rocksdb, false, 2",
        "TWO_PHASE, DISTINCT_SQL, hashmap, true, 1",
        "IMMEDIATE, RETRACTING_DISTINCT_SQL, rocksdb, false, 1",
        "MINI_BATCH, RETRACTING_DISTINCT_SQL, hashmap, true, 2",
        "IMMEDIATE, RETRACTING_EXTREMES_SQL, rocksdb, false, 1",
        "IMMEDIATE, RETRACTING_EXTREMES_SQL, hashmap, true, 1",
        "MINI_BATCH, RETRACTING_EXTREMES_SQL, rocksdb, true, 2",
        "TWO_PHASE, RETRACTING_EXTREMES_SQL, hashmap, false, 1",
        "IMMEDIATE, RETRACTING_LISTAGG_SQL, rocksdb, false, 1",
        "IMMEDIATE, RETRACTING_LISTAGG_SQL, hashmap, true, 1",
    })
    void savepointMovesBetweenStockFlinkAndAggforge(
            String mode,
            String query,
            String backend,
            boolean nativeFirst,
            int resumedParallelism,
            @TempDir Path savepoints)
            throws Exception {
        // Maven Central serves no flink-statebackend-rocksdb 1.20.3 (the pom adds it on 2.x).
        assumeTrue(
                !backend.equals("rocksdb") || rocksDbOnClasspath(),
                "the RocksDB state backend is not on the classpath (Flink 1.20: not on Maven Central)");
        RunOptions options =
                mode.equals("IMMEDIATE") ? IMMEDIATE : mode.equals("MINI_BATCH") ? MINI_BATCH : TWO_PHASE;
        String sql =
                switch (query) {
                    case "SQL" -> SQL;
                    case "RETRACTING_SQL" -> RETRACTING_SQL;
                    case "FIRST_LAST_SQL" -> FIRST_LAST_SQL;
                    case "DISTINCT_SQL" -> NativeFailoverTest.DISTINCT_SQL;
                    case "RETRACTING_DISTINCT_SQL" -> RETRACTING_DISTINCT_SQL;
                    case "RETRACTING_EXTREMES_SQL" -> RETRACTING_EXTREMES_SQL;
                    case "RETRACTING_LISTAGG_SQL" -> RETRACTING_LISTAGG_SQL;
                    default -> DISTINCT_KEYS_SQL;
                };
        RunOptions aggforge = NativeFailoverTest.withAggforge(options);
        List<String> expected = SqlHarness.run(options, sql, T).finalTable(0);

        Running first =
                CheckpointedJob.of(nativeFirst ? aggforge : options, sql, T)
                        .rowsPerSecond(RATE)
                        .checkpointEvery(Duration.ofMillis(200))
                        .stateBackend(backend)
                        .start();
        try {
            first.awaitRows(ROWS / 5, Duration.ofSeconds(30));
            String savepoint = first.stopWithSavepoint(savepoints.toUri().toString());
            List<Row> before = first.changelog();
            assertTrue(before.size() > 0, "the first job emitted nothing");

            List<Row> onStock = resume(options, sql, backend, resumedParallelism, savepoint, false);
            long loaded = NativeAggregateOperator.FLINK_LAYOUT_LOADED.get();
            List<Row> onAggforge =
                    resume(aggforge, sql, backend, resumedParallelism, savepoint, true);
            assertTrue(
                    NativeAggregateOperator.FLINK_LAYOUT_LOADED.get() > loaded,
                    "the resumed native aggregates loaded no group from the savepoint");

            if (mode.equals("IMMEDIATE") && resumedParallelism == 1) {
                assertEquals(lines(onStock), lines(onAggforge), "changelog after the restore");
            } else {
                assertEquals(
                        CheckpointedJob.materialize(onStock),
                        CheckpointedJob.materialize(onAggforge),
                        "table the resumed changelogs leave");
            }
            for (List<Row> resumed : List.of(onStock, onAggforge)) {
                List<Row> log = new ArrayList<>(before);
                log.addAll(resumed);
                NativeFailoverTest.assertSameTable(
                        expected, CheckpointedJob.materialize(log), "final table after the switch");
            }
        } finally {
            first.release();
        }
    }

    @Test
    void stateAggforgeCannotKeepInFlinksLayoutIsNeverDropped(@TempDir Path savepoints)
            throws Exception {
        RunOptions aggforge = NativeFailoverTest.withAggforge(IMMEDIATE);
        String sql = RETRACTING_FIRST_SQL;
        for (boolean nativeFirst : new boolean[] {false, true}) {
            Running first =
                    CheckpointedJob.of(nativeFirst ? aggforge : IMMEDIATE, sql, T)
                            .rowsPerSecond(RATE)
                            .start();
            try {
                first.awaitRows(ROWS / 5, Duration.ofSeconds(30));
                String savepoint =
                        first.stopWithSavepoint(savepoints.resolve("first-" + nativeFirst).toUri().toString());
                AssertionError failed =
                        assertThrows(
                                AssertionError.class,
                                () -> resume(nativeFirst ? IMMEDIATE : aggforge, sql, "hashmap", 1, savepoint, !nativeFirst));
                String message = ExceptionUtils.stringifyException(failed);
                if (nativeFirst) {
                    // Stock Flink reads the operator's raw keyed state (aggforge's payloads) as
                    // its timers and fails while restoring, before it runs a row.
                    assertTrue(
                            message.contains("Exception while creating StreamOperatorStateContext"),
                            message);
                } else {
                    assertTrue(
                            message.contains("the savepoint holds stock Flink's 'accState' state")
                                    && message.contains("table.exec.aggforge.enabled: false"),
                            message);
                }
            } finally {
                first.release();
            }
        }
    }

    /**
     * State TTL across the switch: groups are restored with their write times, so those idle for
     * longer than the TTL when the job resumes have expired on aggforge as on stock Flink (and
     * are not even read), and the resumed changelogs are equal.
     */
    @Test
    void stateTtlKeepsEachGroupsWriteTimeAcrossTheSwitch(@TempDir Path savepoints) throws Exception {
        RunOptions ttl = IMMEDIATE.withConfig("table.exec.state.ttl", "1 s");
        Running first = CheckpointedJob.of(ttl, SQL, T).rowsPerSecond(RATE).start();
        try {
            first.awaitRows(ROWS / 5, Duration.ofSeconds(30));
            String savepoint = first.stopWithSavepoint(savepoints.toUri().toString());
            Thread.sleep(2_000);
            List<Row> onStock = resume(ttl, SQL, "hashmap", 1, savepoint, false);
            long loaded = NativeAggregateOperator.FLINK_LAYOUT_LOADED.get();
            List<Row> onAggforge =
                    resume(NativeFailoverTest.withAggforge(ttl), SQL, "hashmap", 1, savepoint, true);
            assertEquals(
                    loaded,
                    NativeAggregateOperator.FLINK_LAYOUT_LOADED.get(),
                    "groups read back although their state expired");
            assertEquals(lines(onStock), lines(onAggforge), "changelog after the restore");
        } finally {
            first.release();
        }
    }

    /** Resumes {@code sql} from {@code savepoint} and runs it to the end; returns its changelog. */
    private static List<Row> resume(
            RunOptions options,
            String sql,
            String backend,
            int parallelism,
            String savepoint,
            boolean nativeExpected)
            throws Exception {
        long opened = NativeAggregateOperator.OPENED.get();
        Running job =
                CheckpointedJob.of(options.withParallelism(parallelism), sql, T)
                        .sourceParallelism(parallelism)
                        .stateBackend(backend)
                        .restoreFrom(savepoint)
                        .start();
        try {
            job.await(Duration.ofSeconds(60));
            assertNotNull(job.restored(), "the job did not restore the savepoint");
            assertEquals(
                    nativeExpected,
                    NativeAggregateOperator.OPENED.get() > opened,
                    "native operators ran in the resumed job");
            return job.changelog();
        } finally {
            job.release();
        }
    }

    static boolean rocksDbOnClasspath() {
        try {
            Class.forName("org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend");
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private static List<String> lines(List<Row> log) {
        List<String> out = new ArrayList<>();
        for (Row row : log) {
            out.add(row.toString());
        }
        return out;
    }
}
