package dev.aggforge.flink.failover;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.ToLongFunction;

import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsStatus;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.failover.CheckpointedJob.Running;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.operator.NativeAggregateOperator;

/**
 * Incremental checkpoints of a large, slowly changing state ({@code
 * scripts/bench-checkpoints.sh}, not CI): {@code bench.keys} groups (default 1,000,000) are
 * loaded as fast as the job takes them, then each checkpoint interval ({@code
 * bench.checkpointMs}, default 10 s) changes about 1 % of them, on RocksDB with incremental
 * checkpoints. Stock Flink, then aggforge, each for {@code bench.checkpoints} checkpoints (default
 * 10) after the one that holds the load; per checkpoint Flink's own statistics: the bytes it
 * uploaded (checkpointed size), the full state size and the end-to-end duration. Prints medians,
 * ranges and totals and writes a markdown table to {@code bench.out} (beside it:
 * bench-checkpoints.md). Optional: {@code bench.memoryBudget} for aggforge's cache, {@code
 * bench.sql} for another query over {@code src(k, v)}.
 */
@Tag("checkpointbench")
class CheckpointSizeBenchmarkTest {

    /** The query over {@code src(k INT, v BIGINT)} ({@code bench.sql}; v is unique per row). */
    private static final String SQL =
            System.getProperty("bench.sql", "SELECT k, MIN(v), MAX(v), COUNT(*) FROM src GROUP BY k");

    private static final long KEYS = Long.getLong("bench.keys", 1_000_000);
    private static final long INTERVAL_MS = Long.getLong("bench.checkpointMs", 10_000);
    private static final int CHECKPOINTS = Integer.getInteger("bench.checkpoints", 10);
    private static final int CHANGES_PER_INTERVAL = (int) Math.max(1, KEYS / 100);

    @Test
    void incrementalCheckpointsOfStockAndAggforge() throws Exception {
        assertTrue(
                SavepointSwitchTest.rocksDbOnClasspath(),
                "the RocksDB state backend is not on the classpath (run on Flink 2.x)");
        RunOptions stock = RunOptions.defaults().withParallelism(1);
        RunOptions aggforge = NativeFailoverTest.withAggforge(stock);
        String budget = System.getProperty("bench.memoryBudget", "");
        if (!budget.isEmpty()) {
            aggforge = aggforge.withConfig(AggforgeOptions.MEMORY_BUDGET.key(), budget);
        }
        List<Row> rows = new ArrayList<>();
        rows.add(run("stock", stock));
        long nativeRows = NativeAggregateOperator.ROWS.get();
        long evictions = NativeAggregateOperator.EVICTIONS.get();
        rows.add(run("aggforge" + (budget.isEmpty() ? "" : " (budget " + budget + ")"), aggforge));
        assertTrue(NativeAggregateOperator.ROWS.get() - nativeRows >= KEYS, "the native operator ran");
        long evicted = NativeAggregateOperator.EVICTIONS.get() - evictions;

        StringBuilder table = new StringBuilder();
        table.append(
                String.format(
                        Locale.ROOT,
                        "%s: %d keys, ~%d changed per %d ms interval, RocksDB incremental, p=1; %d"
                                + " checkpoints after the load (aggforge: %d evictions)%n%n",
                        SQL, KEYS, CHANGES_PER_INTERVAL, INTERVAL_MS, CHECKPOINTS, evicted));
        table.append(
                "| engine | uploaded per checkpoint MB, median [range] | total uploaded MB |"
                        + " full state MB (last) | end-to-end ms, median [range] |\n");
        table.append("|---|---|---|---|---|\n");
        for (Row row : rows) {
            table.append(row.markdown()).append('\n');
        }
        System.out.println(table);
        String out = System.getProperty("bench.out");
        if (out != null) {
            Path path = Path.of(out).resolveSibling("bench-checkpoints.md");
            Files.writeString(path, table, StandardCharsets.UTF_8);
        }
    }

    /** One engine's run: the load, then {@link #CHECKPOINTS} checkpoints of churn. */
    private static Row run(String engine, RunOptions options) throws Exception {
        Path dir = Files.createTempDirectory("aggforge-checkpoints");
        RowType type =
                RowType.of(
                        new LogicalType[] {
                            new IntType(false), new BigIntType(false)
                        },
                        new String[] {"k", "v"});
        // Room for the load and every interval after it; the job is cancelled once measured.
        long total = KEYS + (long) CHANGES_PER_INTERVAL * (CHECKPOINTS + 20);
        InputTable input = InputTable.of("src", type, total, new LoadThenChurn(KEYS));
        Running job =
                CheckpointedJob.of(options, SQL, input)
                        .rateLimit(new LoadThenPerCheckpoint(KEYS, CHANGES_PER_INTERVAL))
                        .checkpointEvery(Duration.ofMillis(INTERVAL_MS))
                        .stateBackend("rocksdb")
                        .config(CheckpointingOptions.INCREMENTAL_CHECKPOINTS.key(), "true")
                        .config(CheckpointingOptions.CHECKPOINTS_DIRECTORY.key(), dir.toUri().toString())
                        .discardOutput()
                        .start();
        try {
            job.awaitRows(KEYS, Duration.ofMinutes(10));
            // The first checkpoint triggered after the load holds what the load left unwritten
            // (the native cache writes it all then); measure those after it.
            long loadEnd = System.currentTimeMillis();
            long deadline = System.nanoTime() + Duration.ofMillis(INTERVAL_MS * (3L * CHECKPOINTS + 10)).toNanos();
            // Flink's history keeps the last few checkpoints only: collect them as they come.
            TreeMap<Long, AbstractCheckpointStats> seen = new TreeMap<>();
            while (seen.size() <= CHECKPOINTS) {
                for (AbstractCheckpointStats c : completed(job)) {
                    if (c.getTriggerTimestamp() > loadEnd) {
                        seen.putIfAbsent(c.getCheckpointId(), c);
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(
                            engine + ": only " + seen.size() + " checkpoints completed after the load");
                }
                Thread.sleep(200);
            }
            List<AbstractCheckpointStats> measured = new ArrayList<>(seen.values()).subList(1, CHECKPOINTS + 1);
            job.cancel();
            for (AbstractCheckpointStats c : measured) {
                System.out.printf(
                        Locale.ROOT,
                        "%s checkpoint %d (triggered %+d ms after the load): uploaded %.2f MB, full %.2f MB,"
                                + " end-to-end %d ms%n",
                        engine,
                        c.getCheckpointId(),
                        c.getTriggerTimestamp() - loadEnd,
                        mb(c.getCheckpointedSize()),
                        mb(c.getStateSize()),
                        c.getEndToEndDuration());
            }
            return new Row(engine, measured);
        } finally {
            job.release();
            deleteRecursively(dir);
        }
    }

    /** Completed checkpoints so far, oldest first. */
    private static List<AbstractCheckpointStats> completed(Running job) throws Exception {
        List<AbstractCheckpointStats> all = new ArrayList<>(
                job.graph().getCheckpointStatsSnapshot().getHistory().getCheckpoints());
        all.removeIf(c -> c.getStatus() != CheckpointStatsStatus.COMPLETED);
        all.sort((a, b) -> Long.compare(a.getCheckpointId(), b.getCheckpointId()));
        return all;
    }

    private static double mb(long bytes) {
        return bytes / 1e6;
    }

    /** One engine's line of the table. */
    private record Row(String engine, List<AbstractCheckpointStats> checkpoints) {
        String markdown() {
            long uploaded = checkpoints.stream().mapToLong(AbstractCheckpointStats::getCheckpointedSize).sum();
            return String.format(
                    Locale.ROOT,
                    "| %s | %s | %.1f | %.1f | %s |",
                    engine,
                    summary(AbstractCheckpointStats::getCheckpointedSize, 1e6, "%.2f"),
                    mb(uploaded),
                    mb(checkpoints.get(checkpoints.size() - 1).getStateSize()),
                    summary(AbstractCheckpointStats::getEndToEndDuration, 1, "%.0f"));
        }

        private String summary(ToLongFunction<AbstractCheckpointStats> value, double unit, String format) {
            long[] sorted = checkpoints.stream().mapToLong(value).sorted().toArray();
            double median = sorted.length % 2 == 1
                    ? sorted[sorted.length / 2]
                    : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2.0;
            return String.format(Locale.ROOT, format + " [" + format + "-" + format + "]",
                    median / unit, sorted[0] / unit, sorted[sorted.length - 1] / unit);
        }
    }

    /**
     * Row {@code i}: key {@code i} for the first {@code keys} rows (each key once), then a
     * pseudo-random one of them; {@code v} is {@code i}. Keys are scrambled over the INT range.
     */
    static final class LoadThenChurn implements GeneratorFunction<Long, RowData> {
        private static final long serialVersionUID = 1L;
        private final long keys;

        LoadThenChurn(long keys) {
            this.keys = keys;
        }

        @Override
        public RowData map(Long index) {
            long slot = index < keys ? index : Math.floorMod(mix(index), keys);
            return GenericRowData.of((int) (slot * 0x9E3779B1L), index);
        }

        private static long mix(long x) {
            long z = x * 0x9E3779B97F4A7C15L;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            return z ^ (z >>> 31);
        }
    }

    /**
     * The first {@code free} records unpaced, then {@code perCheckpoint} records per completed
     * checkpoint (Flink's perCheckpoint gate after a load). Raw types: the interface is generic on
     * Flink 2.x and not on 1.20.
     */
    @SuppressWarnings("rawtypes")
    static final class LoadThenPerCheckpoint implements RateLimiterStrategy {
        private static final long serialVersionUID = 1L;
        private final long free;
        private final int perCheckpoint;

        LoadThenPerCheckpoint(long free, int perCheckpoint) {
            this.free = free;
            this.perCheckpoint = perCheckpoint;
        }

        @Override
        public RateLimiter createRateLimiter(int parallelism) {
            return new Gate(free / parallelism, Math.max(1, perCheckpoint / parallelism));
        }
    }

    @SuppressWarnings("rawtypes")
    private static final class Gate implements RateLimiter {
        private long free;
        private final int perCheckpoint;
        private int left;
        private CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);

        Gate(long free, int perCheckpoint) {
            this.free = free;
            this.perCheckpoint = perCheckpoint;
        }

        // Flink 1.20's only method; Flink 2.x's default calls acquire(1).
        public CompletionStage<Void> acquire() {
            return acquire(1);
        }

        // Flink 2.x's method (no @Override: absent on 1.20).
        public CompletionStage<Void> acquire(int events) {
            if (free > 0) {
                free -= events;
                return CompletableFuture.completedFuture(null);
            }
            if (left <= 0 && gate.isDone()) {
                gate = new CompletableFuture<>();
            }
            return gate.thenRun(() -> left -= events);
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            left = perCheckpoint;
            gate.complete(null);
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
