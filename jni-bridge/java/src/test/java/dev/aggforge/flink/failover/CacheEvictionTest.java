package dev.aggforge.flink.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.Row;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.failover.CheckpointedJob.Running;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.operator.NativeAggregateOperator;

/**
 * State many times the memory budget: a native group aggregate that keeps Flink's layout uses
 * native memory as a cache over the job's state backend, emptying it into the backend when the
 * budget is nearly used and reading back the groups later batches need, so the job runs (the
 * budget is a hard limit in the runtime: a job that passed it would fail) and gives stock
 * Flink's result, with checkpoints every 200 ms on the way.
 */
class CacheEvictionTest {

    /** Up to 40,000 keys: about ten times what a 1 MiB budget holds of this query's groups. */
    private static final InputTable T =
            InputTable.generated(
                    "t",
                    120_000,
                    40_000,
                    1.0 / 8,
                    93,
                    new VarCharType(VarCharType.MAX_LENGTH),
                    new BigIntType());

    private static final String SQL =
            "SELECT k, COUNT(*), SUM(v1), MAX(v1), MIN(v0), AVG(v1) FROM t GROUP BY k";

    /**
     * @param mode IMMEDIATE, MINI_BATCH or TWO_PHASE
     * @param backend hashmap or rocksdb
     */
    @ParameterizedTest(name = "{0} on {1}")
    @CsvSource({"IMMEDIATE, rocksdb", "MINI_BATCH, hashmap", "TWO_PHASE, rocksdb"})
    void stateManyTimesTheBudgetGivesStocksResult(String mode, String backend) throws Exception {
        // Maven Central serves no flink-statebackend-rocksdb 1.20.3 (the pom adds it on 2.x).
        assumeTrue(
                !backend.equals("rocksdb") || SavepointSwitchTest.rocksDbOnClasspath(),
                "the RocksDB state backend is not on the classpath (Flink 1.20: not on Maven Central)");
        RunOptions options =
                switch (mode) {
                    case "IMMEDIATE" -> RunOptions.defaults().withParallelism(1);
                    case "MINI_BATCH" -> RunOptions.defaults()
                            .withParallelism(2)
                            .withMiniBatch(500)
                            .withConfig("table.exec.mini-batch.allow-latency", "100 ms")
                            .withAggPhase("ONE_PHASE");
                    default -> RunOptions.defaults()
                            .withParallelism(2)
                            .withMiniBatch(500)
                            .withConfig("table.exec.mini-batch.allow-latency", "100 ms")
                            .withAggPhase("TWO_PHASE");
                };
        List<Row> stock = run(options, backend);
        long evictions = NativeAggregateOperator.EVICTIONS.get();
        long loaded = NativeAggregateOperator.FLINK_LAYOUT_LOADED.get();
        List<Row> aggforge =
                run(
                        NativeFailoverTest.withAggforge(options)
                                .withConfig(AggforgeOptions.MEMORY_BUDGET.key(), "1mb"),
                        backend);
        long evicted = NativeAggregateOperator.EVICTIONS.get() - evictions;
        long read = NativeAggregateOperator.FLINK_LAYOUT_LOADED.get() - loaded;
        System.out.printf(
                "cache %s on %s: %d evictions, %d groups read back from the backend%n",
                mode, backend, evicted, read);
        assertTrue(evicted >= 5, evicted + " evictions");
        assertTrue(read > 0, "no group was read back from the backend");
        if (mode.equals("IMMEDIATE")) {
            assertEquals(lines(stock), lines(aggforge), "changelog");
        } else {
            NativeFailoverTest.assertSameTable(
                    CheckpointedJob.materialize(stock), CheckpointedJob.materialize(aggforge), "final table");
        }
        // The generator draws keys from 40,000: about 38,000 of them occur.
        assertTrue(CheckpointedJob.materialize(stock).size() > 35_000, "one row per key");
    }

    /**
     * A checkpoint whose write-back fails half-way (injected, the third one) fails the job;
     * it restarts from the previous checkpoint, whose state the partial write did not touch, and
     * ends with stock Flink's table, evicting into the backend all along.
     */
    @org.junit.jupiter.api.Test
    void aWriteBackThatFailsLeavesThePreviousCheckpointIntact() throws Exception {
        String backend = SavepointSwitchTest.rocksDbOnClasspath() ? "rocksdb" : "hashmap";
        RunOptions options = RunOptions.defaults().withParallelism(1);
        List<String> expected = CheckpointedJob.materialize(run(options, backend));
        long evictions = NativeAggregateOperator.EVICTIONS.get();
        NativeAggregateOperator.FAIL_WRITE_BACK.set(3);
        Running job =
                CheckpointedJob.of(
                                NativeFailoverTest.withAggforge(options)
                                        .withConfig(AggforgeOptions.MEMORY_BUDGET.key(), "2mb"),
                                SQL,
                                T)
                        .rowsPerSecond(60_000)
                        .checkpointEvery(Duration.ofMillis(300))
                        .restarts(3)
                        .stateBackend(backend)
                        .start();
        try {
            job.await(Duration.ofSeconds(120));
            assertEquals(-1, NativeAggregateOperator.FAIL_WRITE_BACK.get(), "no write-back failed");
            assertEquals(1, job.maxAttempt(), "the job restarted once");
            assertTrue(job.restored() != null, "the job restored no checkpoint");
            assertTrue(NativeAggregateOperator.EVICTIONS.get() > evictions, "no eviction");
            NativeFailoverTest.assertSameTable(
                    expected, CheckpointedJob.materialize(job.changelog()), "final table");
        } finally {
            NativeAggregateOperator.FAIL_WRITE_BACK.set(-1);
            job.release();
        }
    }

    private static List<Row> run(RunOptions options, String backend) throws Exception {
        Running job =
                CheckpointedJob.of(options, SQL, T)
                        .sourceParallelism(options.parallelism())
                        .checkpointEvery(Duration.ofMillis(200))
                        .stateBackend(backend)
                        .start();
        try {
            job.await(Duration.ofSeconds(120));
            return job.changelog();
        } finally {
            job.release();
        }
    }

    private static List<String> lines(List<Row> log) {
        return log.stream().map(Row::toString).toList();
    }
}
