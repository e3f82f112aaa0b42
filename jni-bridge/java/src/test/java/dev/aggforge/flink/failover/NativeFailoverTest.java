package dev.aggforge.flink.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.runtime.checkpoint.RestoredCheckpointStats;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.aggforge.flink.failover.CheckpointedJob.Probe;
import dev.aggforge.flink.failover.CheckpointedJob.Running;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.operator.NativeGroupAggOperator;
import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.AggforgeOptions;

/**
 * End-to-end checkpoint tests of the native group aggregates on a real MiniCluster: a job that
 * fails once mid-stream restores the native state from its last checkpoint and finishes with the
 * table an unfailed run (stock Flink and aggforge) leaves; a job stopped with a savepoint
 * mid-stream resumes at another parallelism (native state redistributed by key group) with the
 * same final table.
 *
 * <p>Modes: single phase immediate, single phase mini-batch, and two-phase mini-batch (local and
 * global native operators); mini-batches flush on size (200), on the 100 ms allow-latency
 * watermarks, before every checkpoint barrier and at end of input. Values: VARCHAR, BIGINT and
 * DECIMAL(20, 3) with 1/8 NULLs over 300 keys, under MIN, MAX, SUM and COUNT.
 *
 * <p>Sinks see replayed rows after a restore, so runs are compared by the table their changelog
 * leaves (upserts on the GROUP BY key), not by the raw changelog. Every test also checks that what
 * it means to test really happened: the native operators are in the plan, the failure was thrown,
 * the job restarted exactly once from a checkpoint (or savepoint) that covered some but not all
 * rows, and the source resumed from that checkpoint rather than from the start, so the native
 * state must have been restored for the result to match.
 */
class NativeFailoverTest {

    private static final long ROWS = 20_000;

    /** Source rate: the job streams for a few seconds, so checkpoints fall mid-stream. */
    private static final double RATE = 8_000;

    /**
     * Source rate of the job that is stopped with a savepoint: slower, so the savepoint (asked for
     * after 20% of the rows) has about three seconds to land before the end of input.
     */
    private static final double SAVEPOINT_RATE = 5_000;

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

    static final String SQL =
            "SELECT k, MIN(v0), MAX(v0), COUNT(v0), SUM(v1), MIN(v1), MAX(v1), SUM(v2), MAX(v2),"
                    + " COUNT(*) FROM t GROUP BY k";

    /**
     * An inner GROUP BY feeding an outer one: the outer aggregates get -U/+U rows, so their
     * restored state includes the record counter, SUM's count and MIN/MAX's counted multisets.
     */
    private static final String NESTED_SQL =
            "SELECT MOD(k, 7), COUNT(*), SUM(s), AVG(s), MIN(m), MAX(m), SUM(d) FROM"
                    + " (SELECT k, SUM(v1) AS s, MAX(v0) AS m, SUM(v2) AS d FROM t GROUP BY k)"
                    + " GROUP BY MOD(k, 7)";

    /** DISTINCT views and FILTER columns in the restored state. */
    static final String DISTINCT_SQL =
            "SELECT k, COUNT(DISTINCT MOD(v1, 50)), SUM(DISTINCT MOD(v1, 50)),"
                    + " COUNT(DISTINCT SUBSTRING(v0, 1, 2)), MAX(DISTINCT v2),"
                    + " COUNT(*) FILTER (WHERE v1 > 0) FROM t GROUP BY k";

    /** LISTAGG's concatenations and DISTINCT view in the restored state (keys keep their order). */
    private static final String LISTAGG_SQL =
            "SELECT k, LISTAGG(v0, '|'), LISTAGG(DISTINCT SUBSTRING(v0, 1, 1)), COUNT(*)"
                    + " FROM t GROUP BY k";

    /**
     * Over retracting input, grouped by the inner key (one live row per key): SINGLE_VALUE's
     * count and LISTAGG's list of live values in the restored state.
     */
    static final String RETRACTING_LISTAGG_SQL =
            "SELECT k, SINGLE_VALUE(m), LISTAGG(m), COUNT(*) FROM"
                    + " (SELECT k, MAX(v0) AS m FROM t GROUP BY k) GROUP BY k";

    /**
     * ARRAY group keys (NULL arrays and NULL elements included): restoring and rescaling put each
     * key back in the key group Flink's hash of its BinaryArrayData bytes picks.
     */
    static final String ARRAY_KEY_SQL =
            "SELECT a, COUNT(*), SUM(v1), MAX(v2) FROM (SELECT CASE WHEN MOD(k, 11) = 0 THEN"
                    + " CAST(NULL AS ARRAY<STRING>) ELSE ARRAY[SUBSTRING(v0, 1, 1),"
                    + " CAST(MOD(k, 7) AS STRING)] END AS a, v1, v2 FROM t) GROUP BY a";

    /**
     * ARRAY arguments over retracting input, grouped by the inner key (one live row per key, so
     * the arrival order does not depend on how the inner subtasks interleave): FIRST_VALUE and
     * LAST_VALUE keep their live ARRAY values in the restored state (List snapshot columns).
     * Flink 1.20's planner has no FIRST_VALUE/LAST_VALUE over ARRAY, so there the query counts
     * them only.
     */
    static final String ARRAY_ARGUMENT_SQL =
            "SELECT k, COUNT(a)"
                    + (EnvironmentInformation.getVersion().startsWith("1.")
                            ? ""
                            : ", FIRST_VALUE(a), LAST_VALUE(a)")
                    + ", COUNT(*) FROM (SELECT k, CASE WHEN MOD(k, 11) = 0 THEN CAST(NULL AS"
                    + " ARRAY<STRING>) ELSE ARRAY[MAX(v0), CAST(COUNT(*) AS STRING)] END AS a"
                    + " FROM t GROUP BY k) GROUP BY k";

    static final RunOptions IMMEDIATE = RunOptions.defaults().withParallelism(2);

    private static final RunOptions MINI_BATCH =
            RunOptions.defaults()
                    .withParallelism(2)
                    .withMiniBatch(200)
                    .withConfig("table.exec.mini-batch.allow-latency", "100 ms")
                    .withAggPhase("ONE_PHASE");

    static final RunOptions TWO_PHASE =
            RunOptions.defaults()
                    .withParallelism(2)
                    .withMiniBatch(200)
                    .withConfig("table.exec.mini-batch.allow-latency", "100 ms")
                    .withAggPhase("TWO_PHASE");

    /**
     * Nexmark's configuration: split-distinct in two-phase mini-batch plans, whose incremental
     * aggregate keeps the DISTINCT views in state by partial key (keys and hash buckets).
     */
    private static final RunOptions SPLIT_DISTINCT =
            TWO_PHASE.withConfig("table.optimizer.distinct-agg.split.enabled", "true");

    private static final Map<String, List<String>> STOCK_TABLES = new HashMap<>();

    @Test
    void immediateFailoverRestoresNativeState() throws Exception {
        failover(IMMEDIATE, SQL, 1);
    }

    @Test
    void miniBatchFailoverRestoresNativeState() throws Exception {
        failover(MINI_BATCH, SQL, 1);
    }

    @Test
    void twoPhaseMiniBatchFailoverRestoresNativeState() throws Exception {
        failover(TWO_PHASE, SQL, 2);
    }

    @Test
    void retractingNestedFailoverRestoresNativeState() throws Exception {
        failover(IMMEDIATE, NESTED_SQL, 2);
    }

    @Test
    void twoPhaseRetractingMinMaxFailoverRestoresNativeState() throws Exception {
        // Inner and outer local/global pairs: the outer global phase restores MIN/MAX's counted
        // multisets merged from the local phase's MapView partials.
        failover(TWO_PHASE, NESTED_SQL, 4);
    }

    @Test
    void twoPhaseRetractingMinMaxSavepointRescalesOneToTwo(@TempDir Path savepoints)
            throws Exception {
        rescale(TWO_PHASE, NESTED_SQL, 4, 1, 2, savepoints);
    }

    @Test
    void listAggFailoverRestoresNativeState() throws Exception {
        failover(IMMEDIATE, LISTAGG_SQL, 1);
    }

    @Test
    void retractingListAggAndSingleValueFailoverRestoresNativeState() throws Exception {
        failover(MINI_BATCH, RETRACTING_LISTAGG_SQL, 2);
    }

    @Test
    void twoPhaseRetractingListAggFailoverRestoresNativeState() throws Exception {
        // The global LISTAGG state holds each key's live values and retractList.
        failover(TWO_PHASE, RETRACTING_LISTAGG_SQL, 4);
    }

    @Test
    void twoPhaseRetractingListAggSavepointRescalesOneToTwo(@TempDir Path savepoints)
            throws Exception {
        rescale(TWO_PHASE, RETRACTING_LISTAGG_SQL, 4, 1, 2, savepoints);
    }

    @Test
    void arrayKeyFailoverRestoresNativeState() throws Exception {
        failover(MINI_BATCH, ARRAY_KEY_SQL, 1);
    }

    @Test
    void arrayKeySavepointRescalesOneToTwo(@TempDir Path savepoints) throws Exception {
        rescale(TWO_PHASE, ARRAY_KEY_SQL, 2, 1, 2, savepoints);
    }

    @Test
    void arrayArgumentFailoverRestoresNativeState() throws Exception {
        failover(IMMEDIATE, ARRAY_ARGUMENT_SQL, 2);
    }

    @Test
    void arrayArgumentSavepointRescalesOneToTwo(@TempDir Path savepoints) throws Exception {
        rescale(MINI_BATCH, ARRAY_ARGUMENT_SQL, 2, 1, 2, savepoints);
    }

    @Test
    void distinctFailoverRestoresNativeState() throws Exception {
        failover(IMMEDIATE, DISTINCT_SQL, 1);
    }

    @Test
    void splitDistinctFailoverRestoresNativeState() throws Exception {
        failover(SPLIT_DISTINCT, DISTINCT_SQL, 3);
    }

    @Test
    void splitDistinctSavepointRescalesTwoToOne(@TempDir Path savepoints) throws Exception {
        rescale(SPLIT_DISTINCT, DISTINCT_SQL, 3, 2, 1, savepoints);
    }

    @Test
    void immediateSavepointRescalesTwoToOne(@TempDir Path savepoints) throws Exception {
        rescale(IMMEDIATE, SQL, 1, 2, 1, savepoints);
    }

    @Test
    void twoPhaseMiniBatchSavepointRescalesOneToTwo(@TempDir Path savepoints) throws Exception {
        rescale(TWO_PHASE, SQL, 2, 1, 2, savepoints);
    }

    @Test
    void savepointRestoresWithTheColumnarExchangeSwitchedOff(@TempDir Path savepoints)
            throws Exception {
        RunOptions off = IMMEDIATE.withConfig(AggforgeOptions.COLUMNAR_EXCHANGE.key(), "false");
        rescale(IMMEDIATE, off, SQL, 1, 1, 2, savepoints);
    }

    @Test
    void savepointRestoresWithTheColumnarExchangeSwitchedOn(@TempDir Path savepoints)
            throws Exception {
        RunOptions off = TWO_PHASE.withConfig(AggforgeOptions.COLUMNAR_EXCHANGE.key(), "false");
        rescale(off, TWO_PHASE, SQL, 2, 2, 1, savepoints);
    }

    @Test
    void distinctSavepointRescalesOneToTwo(@TempDir Path savepoints) throws Exception {
        rescale(MINI_BATCH, DISTINCT_SQL, 1, 1, 2, savepoints);
    }

    /**
     * Runs the native job with checkpoints every 100 ms and fixed-delay restarts, fails it once
     * after 40% of the rows (and after a checkpoint with rows completed), and compares its final
     * table with unfailed runs.
     */
    private static void failover(RunOptions options, String sql, int nativeOperators)
            throws Exception {
        failover(options, sql, nativeOperators, "hashmap");
    }

    /** {@link #failover(RunOptions, String, int)} with the failing job on {@code stateBackend}. */
    static void failover(RunOptions options, String sql, int nativeOperators, String stateBackend)
            throws Exception {
        RunOptions hooked = withAggforge(options);
        List<String> expected = stockTable(sql);
        long openedBefore = NativeGroupAggOperator.OPENED.get();
        assertSameTable(
                expected,
                SqlHarness.run(hooked, sql, T).finalTable(0),
                "unfailed native run against stock Flink");
        // Native operator instances (all phases and subtasks) one attempt of the job opens.
        long openedPerAttempt = NativeGroupAggOperator.OPENED.get() - openedBefore;
        assertTrue(openedPerAttempt >= nativeOperators, "the unfailed run opened no native operator");

        openedBefore = NativeGroupAggOperator.OPENED.get();
        Running job =
                CheckpointedJob.of(hooked, sql, T)
                        .rowsPerSecond(RATE)
                        .checkpointEvery(Duration.ofMillis(100))
                        .restarts(3)
                        .failOnceAfter(ROWS * 2 / 5)
                        .stateBackend(stateBackend)
                        .start();
        try {
            assertNativePlan(job.plan(), nativeOperators);
            job.await(Duration.ofSeconds(90));
            Probe probe = job.probe();

            assertTrue(probe.failed(), "the injected failure was never thrown");
            assertEquals(1, job.minAttempt(), "every task restarts once");
            assertEquals(1, job.maxAttempt(), "no task restarts more than once");
            assertTrue(
                    NativeGroupAggOperator.OPENED.get() - openedBefore >= 2 * openedPerAttempt,
                    "native operators were not opened again after the restart");

            RestoredCheckpointStats restored = job.restored();
            assertNotNull(restored, "the job did not restore a checkpoint");
            long id = restored.getCheckpointId();
            assertTrue(
                    id >= probe.checkpointBeforeFailure(),
                    "restored checkpoint " + id + " is older than the one completed before the failure, "
                            + probe.checkpointBeforeFailure());
            long covered = probe.rowsAt(id);
            assertTrue(
                    covered > 0 && covered < ROWS,
                    "restored checkpoint " + id + " covers " + covered + " rows of " + ROWS
                            + " (snapshots " + probe.snapshots() + ")");
            // The source resumed at the checkpoint, not at the start: the rows before it reach
            // the aggregate only through its restored native state.
            assertEquals(
                    probe.rowsBeforeFailure() + (ROWS - covered),
                    probe.rows(),
                    "rows through the probe: before the failure, then from the checkpoint on");

            List<Row> log = job.changelog();
            assertTrue(log.size() > 0, "the sink received nothing");
            System.out.printf(
                    "failover %s on %s: failed after %d rows, restored checkpoint %d covering %d rows,"
                            + " %d rows through the probe, %d changelog rows at the sink%n",
                    options.tableConfig().get("table.optimizer.agg-phase-strategy")
                            + (options.miniBatchSize() > 0 ? " mini-batch" : " immediate"),
                    stateBackend,
                    probe.rowsBeforeFailure(), id, covered, probe.rows(), log.size());
            assertSameTable(expected, CheckpointedJob.materialize(log), "final table after failover");
        } finally {
            job.release();
        }
    }

    /**
     * Runs the native job at {@code from} parallelism, stops it with a savepoint after about 20%
     * of the rows, resumes the same SQL from the savepoint at {@code to} parallelism (same max
     * parallelism, 128) and compares the final table with unfailed runs.
     */
    private static void rescale(
            RunOptions options, String sql, int nativeOperators, int from, int to, Path savepoints)
            throws Exception {
        rescale(options, options, sql, nativeOperators, from, to, savepoints);
    }

    /**
     * {@link #rescale(RunOptions, String, int, int, int, Path)} with the resumed job planned with
     * {@code resumed}'s options (e.g. the columnar exchange switched).
     */
    private static void rescale(
            RunOptions options,
            RunOptions resumed,
            String sql,
            int nativeOperators,
            int from,
            int to,
            Path savepoints)
            throws Exception {
        RunOptions hooked = withAggforge(options);
        RunOptions hookedResumed = withAggforge(resumed);
        List<String> expected = stockTable(sql);
        assertSameTable(
                expected,
                SqlHarness.run(hooked.withParallelism(to), sql, T).finalTable(0),
                "unfailed native run against stock Flink");

        Running first =
                CheckpointedJob.of(hooked.withParallelism(from), sql, T)
                        .sourceParallelism(from)
                        .rowsPerSecond(SAVEPOINT_RATE)
                        .checkpointEvery(Duration.ofMillis(200))
                        .start();
        Running second = null;
        try {
            assertNativePlan(first.plan(), nativeOperators);
            first.awaitRows(ROWS / 5, Duration.ofSeconds(30));
            String savepoint = first.stopWithSavepoint(savepoints.toUri().toString());

            second =
                    CheckpointedJob.of(hookedResumed.withParallelism(to), sql, T)
                            .sourceParallelism(to)
                            .checkpointEvery(Duration.ofMillis(200))
                            .restoreFrom(savepoint)
                            .start();
            assertNativePlan(second.plan(), nativeOperators);
            second.await(Duration.ofSeconds(60));

            RestoredCheckpointStats restored = second.restored();
            assertNotNull(restored, "the resumed job did not restore the savepoint");
            assertTrue(restored.getProperties().isSavepoint(), "restored " + restored);
            long covered = first.probe().rowsAt(restored.getCheckpointId());
            assertTrue(
                    covered > 0 && covered < ROWS,
                    "savepoint " + restored.getCheckpointId() + " covers " + covered + " rows of "
                            + ROWS + " (snapshots " + first.probe().snapshots() + ")");
            assertTrue(first.probe().rows() >= covered, "the first job passed on fewer rows");
            assertEquals(
                    ROWS - covered,
                    second.probe().rows(),
                    "the resumed job reads exactly the rows after the savepoint");
            assertEquals(0, second.maxAttempt(), "the resumed job restarted");

            List<Row> log = new ArrayList<>(first.changelog());
            log.addAll(second.changelog());
            System.out.printf(
                    "rescale %d -> %d: savepoint %d covering %d rows, %d rows resumed,"
                            + " %d + %d changelog rows at the sinks%n",
                    from, to, restored.getCheckpointId(), covered, second.probe().rows(),
                    first.changelog().size(), second.changelog().size());
            assertSameTable(
                    expected,
                    CheckpointedJob.materialize(log),
                    "final table after rescaling " + from + " -> " + to);
        } finally {
            first.release();
            if (second != null) {
                second.release();
            }
        }
    }

    /** The final table of an unfailed stock Flink run of {@code sql} (any mode, parallelism). */
    private static synchronized List<String> stockTable(String sql) throws Exception {
        List<String> table = STOCK_TABLES.get(sql);
        if (table == null) {
            table = SqlHarness.run(IMMEDIATE, sql, T).finalTable(0);
            assertEquals(
                    sql.equals(NESTED_SQL) ? 7 : sql.equals(ARRAY_KEY_SQL) ? 204 : 300,
                    table.size(),
                    "one row per key");
            STOCK_TABLES.put(sql, table);
        }
        return table;
    }

    /** Fails with the rows each table lacks (a few of them) when the tables differ. */
    static void assertSameTable(List<String> expected, List<String> actual, String what) {
        if (expected.equals(actual)) {
            return;
        }
        List<String> missing = new ArrayList<>(expected);
        missing.removeAll(actual);
        List<String> unexpected = new ArrayList<>(actual);
        unexpected.removeAll(expected);
        fail(
                what + ": " + expected.size() + " rows expected, " + actual.size() + " found; "
                        + missing.size() + " expected rows missing, first "
                        + missing.subList(0, Math.min(3, missing.size())) + "; "
                        + unexpected.size() + " unexpected rows, first "
                        + unexpected.subList(0, Math.min(3, unexpected.size())));
    }

    static RunOptions withAggforge(RunOptions options) {
        return options.withConfig(AggforgeOptions.ENABLED.key(), "true")
                .withConfig(AggforgeOptions.BUNDLED_ENABLED.key(), "true");
    }

    /** EXPLAIN names {@code operators} native aggregates and no stock one. */
    private static void assertNativePlan(String plan, int operators) {
        int nativeNodes = plan.split("\\bAggforge(Local|Global|Incremental)?GroupAggregate\\(", -1).length - 1;
        // EXPLAIN prints the physical plan and the execution plan: each node twice.
        assertEquals(2 * operators, nativeNodes, plan);
        int stockNodes = plan.split("\\b(Local|Global|Incremental)?GroupAggregate\\(", -1).length - 1;
        assertEquals(0, stockNodes, plan);
    }
}
