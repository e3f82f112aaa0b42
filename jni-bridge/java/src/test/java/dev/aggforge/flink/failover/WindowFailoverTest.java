package dev.aggforge.flink.failover;

import static dev.aggforge.flink.failover.NativeFailoverTest.assertSameTable;
import static dev.aggforge.flink.failover.NativeFailoverTest.withAggforge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.runtime.checkpoint.RestoredCheckpointStats;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.aggforge.flink.failover.CheckpointedJob.Probe;
import dev.aggforge.flink.failover.CheckpointedJob.Running;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.operator.NativeAggregateOperator;

/**
 * Checkpoints of the native window aggregates on a real MiniCluster: a job that fails once while
 * windows hold all their rows but have not fired restores their slices, pending timers and
 * watermark and finishes with the windows an unfailed run emits; a job stopped with a savepoint
 * resumes at another parallelism (slices and timers redistributed by key group) with the same
 * windows.
 *
 * <p>The input is ordered in event time, 1 ms per row, with the watermark 2 s behind the largest
 * rowtime: at every moment of the run some window (TUMBLE 2 s, a HOP/CUMULATE window ending in
 * the last 2 s, sessions with a 0.3 s gap) has had its last row and waits for the watermark, so
 * every failure and every snapshot falls between a window's last row and its firing. No row is ever late (each watermark
 * trails the rows of its own channel), so the emitted windows do not depend on timing.
 *
 * <p>Sinks see replayed windows after a restore (insert-only output, replays unchanged), so runs
 * are compared by the set of rows they emitted: a window emitted twice with different values
 * shows as two rows and fails the comparison.
 */
class WindowFailoverTest {

    private static final long ROWS = 20_000;

    /** 1 ms of event time per row: 20 s of event time in all. */
    private static final InputTable T =
            InputTable.events(
                            "t",
                            ROWS,
                            300,
                            1.0 / 8,
                            73,
                            1_700_000_000_000L,
                            1,
                            new BigIntType(),
                            new DecimalType(20, 3))
                    .withWatermark("ts", 2);

    private static final String AGGREGATES =
            " k, COUNT(*), COUNT(v0), MIN(v0), MAX(v0), SUM(v0), AVG(v0), SUM(v1), MAX(v1)";

    static final String TUMBLE_SQL =
            "SELECT window_start, window_end," + AGGREGATES
                    + " FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '2' SECOND))"
                    + " GROUP BY window_start, window_end, k";

    static final String HOP_SQL =
            "SELECT window_start, window_end, window_time," + AGGREGATES
                    + " FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND,"
                    + " INTERVAL '3' SECOND)) GROUP BY window_start, window_end, window_time, k";

    static final String CUMULATE_SQL =
            "SELECT window_start, window_end," + AGGREGATES
                    + " FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND,"
                    + " INTERVAL '4' SECOND)) GROUP BY window_start, window_end, k";

    /** Sessions of about three rows (a key's rows are 300 ms apart on average). */
    static final String SESSION_SQL =
            "SELECT window_start, window_end," + AGGREGATES
                    + " FROM TABLE(SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts),"
                    + " INTERVAL '0.3' SECOND)) GROUP BY window_start, window_end, k";

    private static final RunOptions ONE_PHASE =
            RunOptions.defaults().withParallelism(2).withAggPhase("ONE_PHASE");

    static final RunOptions TWO_PHASE =
            RunOptions.defaults().withParallelism(2).withAggPhase("TWO_PHASE");

    private static final Map<String, List<String>> STOCK = new HashMap<>();

    @Test
    void tumbleFailoverRestoresPendingWindows() throws Exception {
        failover(ONE_PHASE, TUMBLE_SQL, 1);
    }

    @Test
    void twoPhaseHopFailoverRestoresPendingWindows() throws Exception {
        failover(TWO_PHASE, HOP_SQL, 2);
    }

    @Test
    void twoPhaseCumulateFailoverRestoresPendingWindows() throws Exception {
        // On RocksDB too: RocksDbFailoverTest (Flink 2.x).
        failover(TWO_PHASE, CUMULATE_SQL, 2);
    }

    @Test
    void sessionFailoverRestoresPendingSessions() throws Exception {
        failover(ONE_PHASE, SESSION_SQL, 1);
    }

    @Test
    void sessionSavepointRescalesTwoToOne(@TempDir Path savepoints) throws Exception {
        rescale(ONE_PHASE, SESSION_SQL, 1, 2, 1, savepoints);
    }

    @Test
    void hopSavepointRescalesOneToTwo(@TempDir Path savepoints) throws Exception {
        rescale(ONE_PHASE, HOP_SQL, 1, 1, 2, savepoints);
    }

    @Test
    void twoPhaseTumbleSavepointRescalesTwoToOne(@TempDir Path savepoints) throws Exception {
        rescale(TWO_PHASE, TUMBLE_SQL, 2, 2, 1, savepoints);
    }

    @Test
    void twoPhaseCumulateSavepointRescalesOneToTwo(@TempDir Path savepoints) throws Exception {
        rescale(TWO_PHASE, CUMULATE_SQL, 2, 1, 2, savepoints);
    }

    private static void failover(RunOptions options, String sql, int nativeOperators)
            throws Exception {
        failover(options, sql, nativeOperators, "hashmap");
    }

    /**
     * Runs the native job with checkpoints every 100 ms, fails it once after 40% of the rows (and
     * after a checkpoint with rows completed) and compares its windows with unfailed runs.
     */
    static void failover(RunOptions options, String sql, int nativeOperators, String stateBackend)
            throws Exception {
        RunOptions hooked = withAggforge(options);
        List<String> expected = stockWindows(sql);
        assertSameTable(
                expected,
                CheckpointedJob.distinctInserts(SqlHarness.run(hooked, sql, T).rows()),
                "unfailed native run against stock Flink");

        long openedBefore = NativeAggregateOperator.OPENED.get();
        Running job =
                CheckpointedJob.of(hooked, sql, T)
                        .rowsPerSecond(8_000)
                        .checkpointEvery(Duration.ofMillis(100))
                        .restarts(3)
                        .failOnceAfter(ROWS * 2 / 5)
                        .stateBackend(stateBackend)
                        .start();
        try {
            assertNativeWindowPlan(job.plan(), nativeOperators);
            job.await(Duration.ofSeconds(90));
            Probe probe = job.probe();
            assertTrue(probe.failed(), "the injected failure was never thrown");
            assertEquals(1, job.minAttempt(), "every task restarts once");
            assertEquals(1, job.maxAttempt(), "no task restarts more than once");
            assertTrue(
                    NativeAggregateOperator.OPENED.get() - openedBefore >= 2L * nativeOperators,
                    "native operators were not opened again after the restart");

            RestoredCheckpointStats restored = job.restored();
            assertNotNull(restored, "the job did not restore a checkpoint");
            long covered = probe.rowsAt(restored.getCheckpointId());
            // More than 2 s of event time: the checkpoint holds fired windows and pending ones.
            assertTrue(
                    covered > 2_000 && covered < ROWS,
                    "restored checkpoint covers " + covered + " rows (snapshots "
                            + probe.snapshots() + ")");
            assertEquals(
                    probe.rowsBeforeFailure() + (ROWS - covered),
                    probe.rows(),
                    "rows through the probe: before the failure, then from the checkpoint on");
            System.out.printf(
                    "window failover on %s: failed at event time +%d ms (rows to +%d ms in windows"
                            + " not fired), restored checkpoint %d at +%d ms%n",
                    stateBackend,
                    probe.rowsBeforeFailure(),
                    probe.rowsBeforeFailure() - 2_000,
                    restored.getCheckpointId(),
                    covered);
            assertSameTable(
                    expected,
                    CheckpointedJob.distinctInserts(job.changelog()),
                    "windows after failover");
        } finally {
            job.release();
        }
    }

    /**
     * Runs the native job at {@code from} parallelism, stops it with a savepoint after about 20%
     * of the rows, resumes it from the savepoint at {@code to} parallelism and compares the
     * windows both runs emitted with an unfailed run. The source stays at parallelism 1, so every
     * channel's rows are in event-time order and none is late.
     */
    private static void rescale(
            RunOptions options, String sql, int nativeOperators, int from, int to, Path savepoints)
            throws Exception {
        RunOptions hooked = withAggforge(options);
        List<String> expected = stockWindows(sql);
        Running first =
                CheckpointedJob.of(hooked.withParallelism(from), sql, T)
                        .rowsPerSecond(5_000)
                        .checkpointEvery(Duration.ofMillis(200))
                        .start();
        Running second = null;
        try {
            assertNativeWindowPlan(first.plan(), nativeOperators);
            first.awaitRows(ROWS / 5, Duration.ofSeconds(30));
            String savepoint = first.stopWithSavepoint(savepoints.toUri().toString());
            second =
                    CheckpointedJob.of(hooked.withParallelism(to), sql, T)
                            .checkpointEvery(Duration.ofMillis(200))
                            .restoreFrom(savepoint)
                            .start();
            assertNativeWindowPlan(second.plan(), nativeOperators);
            second.await(Duration.ofSeconds(60));

            RestoredCheckpointStats restored = second.restored();
            assertNotNull(restored, "the resumed job did not restore the savepoint");
            assertTrue(restored.getProperties().isSavepoint(), "restored " + restored);
            long covered = first.probe().rowsAt(restored.getCheckpointId());
            assertTrue(
                    covered > 2_000 && covered < ROWS,
                    "savepoint covers " + covered + " rows of " + ROWS);
            assertEquals(
                    ROWS - covered,
                    second.probe().rows(),
                    "the resumed job reads exactly the rows after the savepoint");
            List<Row> log = new ArrayList<>(first.changelog());
            log.addAll(second.changelog());
            System.out.printf(
                    "window rescale %d -> %d: savepoint at +%d ms, %d + %d windows emitted%n",
                    from, to, covered, first.changelog().size(), second.changelog().size());
            assertSameTable(
                    expected,
                    CheckpointedJob.distinctInserts(log),
                    "windows after rescaling " + from + " -> " + to);
        } finally {
            first.release();
            if (second != null) {
                second.release();
            }
        }
    }

    /** The windows an unfailed stock Flink run of {@code sql} emits, sorted. */
    private static synchronized List<String> stockWindows(String sql) throws Exception {
        List<String> windows = STOCK.get(sql);
        if (windows == null) {
            windows = CheckpointedJob.distinctInserts(SqlHarness.run(ONE_PHASE, sql, T).rows());
            // 300 keys in each of at least 10 windows (a key may miss a 2 s window).
            assertTrue(windows.size() >= 2_900, "stock emitted " + windows.size() + " windows");
            STOCK.put(sql, windows);
        }
        return windows;
    }

    /** EXPLAIN names {@code operators} native window aggregates and no stock one. */
    private static void assertNativeWindowPlan(String plan, int operators) {
        int nativeNodes =
                plan.split("\\bAggforge(Local|Global)?WindowAggregate\\(", -1).length - 1;
        // EXPLAIN prints the physical plan and the execution plan: each node twice.
        assertEquals(2 * operators, nativeNodes, plan);
        int stockNodes = plan.split("\\b(Local|Global)?WindowAggregate\\(", -1).length - 1;
        assertEquals(0, stockNodes, plan);
    }
}
