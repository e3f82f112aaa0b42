package dev.aggforge.flink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.NexmarkQueries;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.operator.NativeGroupAggOperator;
import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.AggforgeOptions;

/**
 * Complete-job benchmark matrix ({@code scripts/bench-jobs.sh}): for each workload the same Flink
 * SQL job (deterministic in-process row source {@link InputTable#generated}, GROUP BY, blackhole
 * sink) runs under A (stock Flink) and B (aggforge hook installed and enabled), alternating A B A
 * B in one JVM at parallelism 1: {@code bench.warmups} warm-up rounds, then {@code bench.runs}
 * measured rounds. Each round also runs the scan-only job (same source and sink, no aggregate) as
 * context. Times are the jobs' net runtimes (JobExecutionResult). Prints each run, per-workload
 * medians and ranges, the stock/native ratio (stock median / native median: above 1 means native
 * is faster) and at the end a markdown table, also written to {@code bench.out}.
 *
 * <p>Before anything is timed, every selected workload's native plan must contain the Aggforge
 * operators (and no stock group aggregate), and every native run must feed rows to a native
 * operator, so a silent fallback to stock Flink cannot be measured as "native".
 *
 * <p>Workloads (names for {@code bench.only}, a comma-separated subset; default all but the
 * keys10m ones):
 *
 * <ul>
 *   <li>{@code minmax-{date,time,boolean,bigint}-{single,two}}: {@code MIN(v0), MAX(v0)}
 *   <li>{@code firstlast-{time,boolean,bigint}-{single,minibatch}}: {@code FIRST_VALUE(v0),
 *       LAST_VALUE(v0)}, immediate and mini-batch (never split: one aggregate)
 *   <li>{@code countsumavg-{bigint,decimal}-{single,two}}: {@code COUNT(v0), SUM(v0), AVG(v0)}
 *       over BIGINT or DECIMAL(20,3)
 *   <li>{@code keys1m-bigint-{single,two}}: {@code MIN, MAX, COUNT, SUM} over BIGINT, {@code
 *       bench.bigRows} rows (1,000,000), keys drawn from the whole INT range, so almost every key
 *       has exactly one row (about 1,000,000 keys)
 *   <li>{@code keys10m-{uniform,zipf}-{single,minibatch}}: the keys1m query over {@code
 *       bench.hugeRows} rows (20,000,000) with {@code bench.hugeKeys} keys (10,000,000), uniform or
 *       Zipf-skewed (s = 1); immediate and single-phase mini-batch. Meant for RocksDB with a cache
 *       a tenth of the state ({@code -Dbench.stateBackend=rocksdb -Dbench.memoryBudget=80mb})
 *   <li>{@code singlevalue-keys1m-{single,minibatch,two}}: {@code SINGLE_VALUE(v0)} over BIGINT,
 *       {@code bench.bigRows} rows with a distinct key each; immediate, single-phase mini-batch and
 *       two-phase
 *   <li>{@code listagg-string-{single,two}}: {@code LISTAGG(v0), LISTAGG(v0, '|')} over STRING,
 *       {@code bench.rows} rows, 65,536 keys (about 30 values per key)
 *   <li>{@code nested-minmax-{single,two}}: a SUM per key (65,536 keys) feeding {@code MIN, MAX,
 *       COUNT(*)} per {@code MOD(k, 64)}: the outer MIN/MAX over retracting input (counted
 *       multisets; two-phase: Flink's MapView accumulator partials)
 *   <li>{@code nested-listagg-{single,two}}: the same inner SUM feeding {@code
 *       LISTAGG(CAST(s AS STRING)), COUNT(*)} per {@code MOD(k, 4096)}: the outer LISTAGG over
 *       retracting input (two-phase: Flink's ListView accumulator partials)
 * </ul>
 *
 * <p>{@code bench.nativeOnly=true} runs only the native jobs of the selected workloads ({@code
 * bench.warmups + bench.runs} of each, no table): for profiling them alone.
 *
 * <p>The 64-key workloads read {@code bench.rows} (2,000,000) rows, {@code bench.keys} (64) keys,
 * {@code bench.nulls} (0.125) of the values NULL. "single" is single phase, immediate ({@code
 * ONE_PHASE}, mini-batch off); "two" is {@code TWO_PHASE} with mini-batch on (size {@code
 * bench.miniBatch}, 1024; allow-latency 1 s).
 */
@Tag("bench")
class JobBenchmarkTest {

    private static final Pattern NATIVE_NODE =
            Pattern.compile("\\bAggforge(Local|Global|Incremental)?(Group|Window)Aggregate\\(");
    /** A stock aggregate node (the Aggforge names have no word boundary before these). */
    private static final Pattern STOCK_NODE =
            Pattern.compile("\\b(Local|Global|Incremental)?(Group|Window)Aggregate\\(");

    /** One benchmark case: a query over one generated table under one plan shape. */
    private static final class Workload {
        final String name;
        final String title;
        final InputTable table;
        final String sql;
        final RunOptions stock;
        final int nativeOperators;

        Workload(String name, String title, InputTable table, String sql, RunOptions stock, int nativeOperators) {
            this.name = name;
            this.title = title;
            this.table = table;
            this.sql = sql;
            this.stock = stock;
            this.nativeOperators = nativeOperators;
        }
    }

    /** The measured times of one workload. */
    private static final class Result {
        final Workload workload;
        final long[] stock;
        final long[] aggforge;
        final long[] scan;

        Result(Workload workload, long[] stock, long[] aggforge, long[] scan) {
            this.workload = workload;
            this.stock = stock;
            this.aggforge = aggforge;
            this.scan = scan;
        }

        double ratio() {
            return (double) median(stock) / Math.max(1, median(aggforge));
        }
    }

    @Test
    void matrix() throws Exception {
        long rows = Long.getLong("bench.rows", 2_000_000L);
        int keys = Integer.getInteger("bench.keys", 64);
        long bigRows = Long.getLong("bench.bigRows", 1_000_000L);
        double nulls = Double.parseDouble(System.getProperty("bench.nulls", "0.125"));
        int parallelism = Integer.getInteger("bench.parallelism", 1);
        int miniBatch = Integer.getInteger("bench.miniBatch", 1024);
        int warmups = Integer.getInteger("bench.warmups", 2);
        int runs = Integer.getInteger("bench.runs", 5);
        String only = System.getProperty("bench.only", "").trim();
        String out = System.getProperty("bench.out", "");
        boolean nativeOnly = Boolean.getBoolean("bench.nativeOnly");
        assertTrue(runs > 0, "bench.runs must be positive");

        // Flink's default is pipeline.object-reuse=false; bench.objectReuse=true measures both
        // engines without the per-record copies between chained operators.
        RunOptions base =
                RunOptions.defaults()
                        .withParallelism(parallelism)
                        .withConfig(
                                "pipeline.object-reuse",
                                Boolean.toString(Boolean.getBoolean("bench.objectReuse")));
        // Both engines: the state backend (bench.stateBackend: hashmap, the default, or rocksdb),
        // checkpoints (bench.checkpointMs), and operator uids (bench.uids=true:
        // table.exec.uid.generation=ALWAYS, which the columnar exchange needs).
        String backend = System.getProperty("bench.stateBackend");
        if (backend != null) {
            base = base.withConfig("state.backend.type", backend);
        }
        String checkpointMs = System.getProperty("bench.checkpointMs");
        if (checkpointMs != null) {
            base = base.withConfig("execution.checkpointing.interval", checkpointMs + " ms");
        }
        if (Boolean.getBoolean("bench.uids")) {
            base = base.withConfig("table.exec.uid.generation", "ALWAYS");
        }
        RunOptions single = base.withAggPhase("ONE_PHASE");
        RunOptions two =
                base
                        .withAggPhase("TWO_PHASE")
                        .withMiniBatch(miniBatch)
                        .withConfig("table.exec.mini-batch.allow-latency", "1 s");

        List<Workload> all = new ArrayList<>();
        Object[][] minMaxTypes = {
            {"date", new DateType()},
            {"time", new TimeType()},
            {"boolean", new BooleanType()},
            {"bigint", new BigIntType()},
        };
        for (Object[] type : minMaxTypes) {
            InputTable t = InputTable.generated("t", rows, keys, nulls, 42, (LogicalType) type[1]);
            String sql = "SELECT k, MIN(v0), MAX(v0) FROM t GROUP BY k";
            addBothPhases(all, "minmax-" + type[0], sql, t, single, two, rows, keys, nulls);
        }
        // FIRST_VALUE/LAST_VALUE: Flink never splits them (no merge), so the two-phase options
        // plan one mini-batch aggregate.
        Object[][] firstLastTypes = {
            {"time", new TimeType()},
            {"boolean", new BooleanType()},
            {"bigint", new BigIntType()},
        };
        for (Object[] type : firstLastTypes) {
            InputTable t = InputTable.generated("t", rows, keys, nulls, 42, (LogicalType) type[1]);
            String sql = "SELECT k, FIRST_VALUE(v0), LAST_VALUE(v0) FROM t GROUP BY k";
            String data = String.format(Locale.ROOT, "%,d rows, %d keys, %.3f NULL", rows, keys, nulls);
            String name = "firstlast-" + type[0];
            all.add(new Workload(name + "-single", sql + " | " + data + " | single phase, immediate", t, sql, single, 1));
            all.add(new Workload(name + "-minibatch", sql + " | " + data + " | mini-batch (two-phase options)", t, sql, two, 1));
        }
        Object[][] sumTypes = {
            {"bigint", new BigIntType()},
            {"decimal", new DecimalType(20, 3)},
        };
        for (Object[] type : sumTypes) {
            InputTable t = InputTable.generated("t", rows, keys, nulls, 42, (LogicalType) type[1]);
            String sql = "SELECT k, COUNT(v0), SUM(v0), AVG(v0) FROM t GROUP BY k";
            addBothPhases(all, "countsumavg-" + type[0], sql, t, single, two, rows, keys, nulls);
        }
        // DISTINCT, 4096 values per key: single phase; COUNT DISTINCT also two-phase (the local
        // views cross the exchange as Flink's MapView partials).
        InputTable bigints = InputTable.generated("t", rows, keys, nulls, 42, new BigIntType());
        InputTable strings =
                InputTable.generated(
                        "t", rows, keys, nulls, 42, new VarCharType(VarCharType.MAX_LENGTH));
        String[][] distinct = {
            {"countdistinct-bigint", "SELECT k, COUNT(DISTINCT MOD(v0, 4096)) FROM t GROUP BY k"},
            {"avgdistinct-bigint", "SELECT k, AVG(DISTINCT MOD(v0, 4096)) FROM t GROUP BY k"},
            {"countdistinct-string", "SELECT k, COUNT(DISTINCT SUBSTRING(v0, 1, 3)) FROM t GROUP BY k"},
        };
        for (String[] d : distinct) {
            InputTable t = d[0].endsWith("string") ? strings : bigints;
            String data = String.format(Locale.ROOT, "%,d rows, %d keys, %.3f NULL", rows, keys, nulls);
            all.add(new Workload(d[0] + "-single", d[1] + " | " + data + " | single phase, immediate", t, d[1], single, 1));
        }
        String countDistinctData = String.format(Locale.ROOT, "%,d rows, %d keys, %.3f NULL", rows, keys, nulls);
        all.add(new Workload("countdistinct-bigint-two", distinct[0][1] + " | " + countDistinctData + " | two phase, mini-batch", bigints, distinct[0][1], two, 2));
        // A DOUBLE DISTINCT sum: in two phases the global folds in Java HashMap order.
        String doubleSum = "SELECT k, SUM(DISTINCT CAST(MOD(v0, 4096) AS DOUBLE) / 8) FROM t GROUP BY k";
        addBothPhases(all, "sumdistinct-double", doubleSum, bigints, single, two, rows, keys, nulls);
        // Nexmark q15-q17 over the Nexmark bid generator: single phase and two-phase.
        InputTable bids = InputTable.nexmarkBids("bid", rows);
        String[][] nexmark = {
            {"nexmark-q15", NexmarkQueries.Q15},
            {"nexmark-q16", NexmarkQueries.Q16},
            {"nexmark-q17", NexmarkQueries.Q17},
        };
        String bidData = String.format(Locale.ROOT, "%,d Nexmark bids", rows);
        for (String[] q : nexmark) {
            all.add(new Workload(q[0] + "-single", q[0] + " | " + bidData + " | single phase, immediate", bids, q[1], single, 1));
        }
        for (String[] q : nexmark) {
            all.add(new Workload(q[0] + "-two", q[0] + " | " + bidData + " | two phase, mini-batch", bids, q[1], two, 2));
        }
        // Nexmark's own configuration: split-distinct on, so q15 and q16 plan the partial local,
        // incremental and final global aggregates (q17 has no DISTINCT: local and global).
        // The native state budget is the default (1 GiB), as for every other workload: q16's
        // incremental state (a view per channel, day and hash bucket) fits since the calls of a
        // view share it.
        RunOptions split = two.withConfig("table.optimizer.distinct-agg.split.enabled", "true");
        for (String[] q : nexmark) {
            int aggregates = q[0].equals("nexmark-q17") ? 2 : 3;
            all.add(new Workload(q[0] + "-split", q[0] + " | " + bidData + " | two phase, mini-batch, split-distinct", bids, q[1], split, aggregates));
        }
        // Keys drawn from the whole INT range: ~1M distinct keys for 1M rows, nearly all one row.
        InputTable wide =
                InputTable.generated("t", bigRows, Integer.MAX_VALUE, nulls, 42, new BigIntType());
        addBothPhases(
                all,
                "keys1m-bigint",
                "SELECT k, MIN(v0), MAX(v0), COUNT(v0), SUM(v0) FROM t GROUP BY k",
                wide,
                single,
                two,
                bigRows,
                -1,
                nulls);

        // State many times the cache (run on RocksDB with a budget a tenth of the state, e.g.
        // -Dbench.stateBackend=rocksdb -Dbench.memoryBudget=80mb): bench.hugeKeys keys (10M),
        // bench.hugeRows rows (20M), uniform or Zipf-skewed (s = 1); immediate and mini-batch.
        int hugeKeys = Integer.getInteger("bench.hugeKeys", 10_000_000);
        long hugeRows = Long.getLong("bench.hugeRows", 20_000_000L);
        String hugeSql = "SELECT k, MIN(v0), MAX(v0), COUNT(v0), SUM(v0) FROM t GROUP BY k";
        RunOptions hugeMiniBatch =
                single.withMiniBatch(miniBatch).withConfig("table.exec.mini-batch.allow-latency", "1 s");
        InputTable[] huge = {
            InputTable.generated("t", hugeRows, hugeKeys, nulls, 42, new BigIntType()),
            InputTable.zipf("t", hugeRows, hugeKeys, nulls, 42, new BigIntType()),
        };
        for (int i = 0; i < huge.length; i++) {
            String skew = i == 0 ? "uniform" : "zipf";
            String data = String.format(Locale.ROOT, "%,d rows, %,d keys (%s)", hugeRows, hugeKeys, skew);
            String name = "keys10m-" + skew;
            all.add(new Workload(name + "-single", hugeSql + " | " + data + " | single phase, immediate", huge[i], hugeSql, single, 1));
            all.add(new Workload(name + "-minibatch", hugeSql + " | " + data + " | single phase, mini-batch", huge[i], hugeSql, hugeMiniBatch, 1));
        }
        // SINGLE_VALUE, one row per key (a second one would fail the job).
        InputTable distinctKeys =
                InputTable.generated("t", bigRows, InputTable.DISTINCT_KEYS, nulls, 42, new BigIntType());
        String singleValue = "SELECT k, SINGLE_VALUE(v0) FROM t GROUP BY k";
        String distinctData = String.format(Locale.ROOT, "%,d rows, a key each, %.3f NULL", bigRows, nulls);
        all.add(new Workload("singlevalue-keys1m-single", singleValue + " | " + distinctData + " | single phase, immediate", distinctKeys, singleValue, single, 1));
        all.add(new Workload("singlevalue-keys1m-minibatch", singleValue + " | " + distinctData + " | single phase, mini-batch", distinctKeys, singleValue, single.withMiniBatch(miniBatch).withConfig("table.exec.mini-batch.allow-latency", "1 s"), 1));
        all.add(new Workload("singlevalue-keys1m-two", singleValue + " | " + distinctData + " | two phase, mini-batch", distinctKeys, singleValue, two, 2));
        // LISTAGG over strings, ~30 values per key.
        InputTable manyKeyStrings =
                InputTable.generated("t", rows, 65_536, nulls, 42, new VarCharType(VarCharType.MAX_LENGTH));
        addBothPhases(
                all,
                "listagg-string",
                "SELECT k, LISTAGG(v0), LISTAGG(v0, '|') FROM t GROUP BY k",
                manyKeyStrings,
                single,
                two,
                rows,
                65_536,
                nulls);

        // Nested GROUP BY: a SUM per key (65,536 keys) feeds MIN/MAX/COUNT per coarser key, so
        // the outer aggregate folds the inner one's -U/+U pairs into counted multisets.
        InputTable nestedKeys =
                InputTable.generated("t", rows, 65_536, nulls, 42, new BigIntType());
        String nested =
                "SELECT MOD(k, 64), MIN(s), MAX(s), COUNT(*) FROM"
                        + " (SELECT k, SUM(v0) AS s FROM t GROUP BY k) GROUP BY MOD(k, 64)";
        String nestedData =
                String.format(Locale.ROOT, "%,d rows, 65,536 inner keys, 64 outer, %.3f NULL", rows, nulls);
        all.add(new Workload("nested-minmax-single", nested + " | " + nestedData + " | single phase, immediate", nestedKeys, nested, single, 2));
        all.add(new Workload("nested-minmax-two", nested + " | " + nestedData + " | two phase, mini-batch", nestedKeys, nested, two, 4));
        // The same inner SUM feeding LISTAGG per MOD(k, 4096): ~16 live values per outer key,
        // each inner change retracting one of them (two-phase: ListView accumulator partials).
        String nestedListAgg =
                "SELECT MOD(k, 4096), LISTAGG(CAST(s AS STRING)), COUNT(*) FROM"
                        + " (SELECT k, SUM(v0) AS s FROM t GROUP BY k) GROUP BY MOD(k, 4096)";
        String nestedListAggData =
                String.format(Locale.ROOT, "%,d rows, 65,536 inner keys, 4,096 outer, %.3f NULL", rows, nulls);
        all.add(new Workload("nested-listagg-single", nestedListAgg + " | " + nestedListAggData + " | single phase, immediate", nestedKeys, nestedListAgg, single, 2));
        all.add(new Workload("nested-listagg-two", nestedListAgg + " | " + nestedListAggData + " | two phase, mini-batch", nestedKeys, nestedListAgg, two, 4));

        addWindows(all, rows, keys, nulls, base);

        List<Workload> selected = select(all, only);
        System.out.printf(
                Locale.ROOT,
                "%n=== complete-job matrix: Flink %s, p=%d, %d warmups + %d runs, A=stock B=aggforge,"
                        + " max heap %d MiB, %d workloads ===%n",
                flinkVersion(),
                parallelism,
                warmups,
                runs,
                Runtime.getRuntime().maxMemory() >> 20,
                selected.size());

        // Plan check first, for all of them: no time is spent on a matrix that would fall back.
        for (Workload w : selected) {
            checkPlans(w);
        }

        if (nativeOnly) {
            // Profiling mode: only the native jobs run (one recording holds nothing else).
            for (Workload w : selected) {
                profileNative(w, warmups + runs);
            }
            return;
        }
        List<Result> results = new ArrayList<>();
        for (Workload w : selected) {
            results.add(measure(w, warmups, runs));
        }

        String table = markdown(results, runs);
        System.out.println();
        System.out.println(table);
        if (!out.isEmpty()) {
            Path path = Path.of(out);
            if (path.getParent() != null) {
                Files.createDirectories(path.getParent());
            }
            write(path, table);
        }
    }

    private static void addBothPhases(
            List<Workload> all,
            String prefix,
            String sql,
            InputTable t,
            RunOptions single,
            RunOptions two,
            long rows,
            int keys,
            double nulls) {
        String data =
                String.format(
                        Locale.ROOT,
                        "%,d rows, %s, %.3f NULL",
                        rows,
                        keys < 0 ? "keys from the INT range (~1 row per key)" : keys + " keys",
                        nulls);
        all.add(new Workload(prefix + "-single", sql + " | " + data + " | single phase, immediate", t, sql, single, 1));
        all.add(new Workload(prefix + "-two", sql + " | " + data + " | two phase, mini-batch", t, sql, two, 2));
    }

    private static List<Workload> select(List<Workload> all, String only) {
        if (only.isEmpty()) {
            // The 10M-key workloads run only when named: minutes per run each.
            return all.stream().filter(w -> !w.name.startsWith("keys10m-")).collect(Collectors.toList());
        }
        Set<String> names = new LinkedHashSet<>(Arrays.asList(only.split("\\s*,\\s*")));
        Set<String> known = all.stream().map(w -> w.name).collect(Collectors.toSet());
        for (String name : names) {
            assertTrue(
                    known.contains(name),
                    "unknown workload in bench.only: " + name + "; known: " + known);
        }
        return all.stream().filter(w -> names.contains(w.name)).collect(Collectors.toList());
    }

    /**
     * {@code options} with the aggforge planner hook installed and enabled (bundled modes on);
     * the native state budget is the default unless {@code bench.memoryBudget} is set, the
     * columnar exchange is on unless {@code bench.columnarExchange=false}, and the JIT mode is
     * {@code auto} unless {@code bench.jit} (auto, on, off) is set.
     */
    private static RunOptions withAggforge(RunOptions options) {
        RunOptions hooked =
                options.withConfig(AggforgeOptions.ENABLED.key(), "true")
                        .withConfig(AggforgeOptions.BUNDLED_ENABLED.key(), "true")
                        .withConfig(
                                AggforgeOptions.COLUMNAR_EXCHANGE.key(),
                                System.getProperty("bench.columnarExchange", "true"));
        String budget = System.getProperty("bench.memoryBudget");
        if (budget != null) {
            hooked = hooked.withConfig(AggforgeOptions.MEMORY_BUDGET.key(), budget);
        }
        String jit = System.getProperty("bench.jit");
        return jit == null ? hooked : hooked.withConfig(AggforgeOptions.JIT.key(), jit);
    }

    /**
     * Window aggregates over an event-time column: {@code bench.rows} rows 1 ms apart (about 33
     * minutes of event time), a watermark 1 s behind with Flink's default periodic emission (200
     * ms; {@code bench.watermarkIntervalMs}), {@code bench.keys} keys; a 10 s TUMBLE, a 2 s / 10 s HOP and a 10 s / 1 min CUMULATE,
     * each with {@code MIN, MAX} over DATE, TIME, BOOLEAN and BIGINT and {@code COUNT, SUM, AVG}
     * over BIGINT and DECIMAL(20,3), one phase and two (no mini-batch: window aggregates use none).
     */
    private static void addWindows(
            List<Workload> all, long rows, int keys, double nulls, RunOptions base) {
        String[][] windows = {
            {"tumble", "TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND)"},
            {"hop", "HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)"},
            {"cumulate", "CUMULATE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '1' MINUTE)"},
            {"session", "SESSION(TABLE e PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)"},
        };
        Object[][] calls = {
            {"minmax-date", new DateType(), "MIN(v0), MAX(v0)"},
            {"minmax-time", new TimeType(), "MIN(v0), MAX(v0)"},
            {"minmax-boolean", new BooleanType(), "MIN(v0), MAX(v0)"},
            {"minmax-bigint", new BigIntType(), "MIN(v0), MAX(v0)"},
            {"countsumavg-bigint", new BigIntType(), "COUNT(v0), SUM(v0), AVG(v0)"},
            {"countsumavg-decimal", new DecimalType(20, 3), "COUNT(v0), SUM(v0), AVG(v0)"},
        };
        long start = 1_700_000_000_000L;
        long watermarkIntervalMs = Long.getLong("bench.watermarkIntervalMs", 200L);
        for (Object[] call : calls) {
            InputTable t =
                    InputTable.events("e", rows, keys, nulls, 42, start, 1, (LogicalType) call[1])
                            .withWatermarkInterval(watermarkIntervalMs);
            String data =
                    String.format(
                            Locale.ROOT,
                            "%,d rows 1 ms apart, %d keys, %.3f NULL, watermark 1 s behind every %d ms",
                            rows,
                            keys,
                            nulls,
                            watermarkIntervalMs);
            for (String[] window : windows) {
                String sql =
                        "SELECT k, window_start, window_end, "
                                + call[2]
                                + " FROM TABLE("
                                + window[1]
                                + ") GROUP BY k, window_start, window_end";
                String name = "window-" + window[0] + "-" + call[0];
                all.add(new Workload(name + "-single", sql + " | " + data + " | one phase", t, sql, base.withAggPhase("ONE_PHASE"), 1));
                if (window[0].equals("session")) {
                    continue; // Flink plans SESSION windows in one phase only.
                }
                all.add(new Workload(name + "-two", sql + " | " + data + " | two phase", t, sql, base.withAggPhase("TWO_PHASE"), 2));
            }
        }
    }

    /** The native plan holds the Aggforge operators and no stock aggregate; stock's holds none. */
    private static void checkPlans(Workload w) {
        String nativePlan = SqlHarness.explain(withAggforge(w.stock), w.sql, w.table);
        // EXPLAIN prints the physical plan and the execution plan: each node twice.
        assertEquals(
                2 * w.nativeOperators,
                count(NATIVE_NODE, nativePlan),
                w.name + ": native operators in the plan\n" + nativePlan);
        assertEquals(0, count(STOCK_NODE, nativePlan), w.name + ": stock aggregate left\n" + nativePlan);
        String stockPlan = SqlHarness.explain(w.stock, w.sql, w.table);
        assertEquals(0, count(NATIVE_NODE, stockPlan), w.name + ": stock plan\n" + stockPlan);
        assertTrue(count(STOCK_NODE, stockPlan) > 0, w.name + ": stock plan\n" + stockPlan);
        System.out.printf(
                Locale.ROOT,
                "plan ok: %-24s native: %s%n",
                w.name,
                nativeNodes(nativePlan));
    }

    private static Result measure(Workload w, int warmups, int runs) throws Exception {
        RunOptions aggforge = withAggforge(w.stock);
        String scan = "SELECT * FROM " + w.table.name();
        long[] a = new long[runs];
        long[] b = new long[runs];
        long[] s = new long[runs];
        System.out.println();
        System.out.println("--- " + w.name + ": " + w.title + " ---");
        for (int round = 0; round < warmups + runs; round++) {
            boolean measured = round >= warmups;
            long stockTime = SqlHarness.runToBlackhole(w.stock, w.sql, w.table);
            long rowsBefore = NativeGroupAggOperator.ROWS.get();
            long nativeTime = SqlHarness.runToBlackhole(aggforge, w.sql, w.table);
            long nativeRows = NativeGroupAggOperator.ROWS.get() - rowsBefore;
            assertTrue(
                    nativeRows >= w.table.rowCount(),
                    w.name + ": only " + nativeRows + " rows reached native operators");
            long scanTime = SqlHarness.runToBlackhole(w.stock, scan, w.table);
            System.out.printf(
                    Locale.ROOT,
                    "  %s %d: A stock %,d ms, B aggforge %,d ms, scan %,d ms%n",
                    measured ? "run   " : "warmup",
                    measured ? round - warmups + 1 : round + 1,
                    stockTime,
                    nativeTime,
                    scanTime);
            if (measured) {
                a[round - warmups] = stockTime;
                b[round - warmups] = nativeTime;
                s[round - warmups] = scanTime;
            }
        }
        Result r = new Result(w, a, b, s);
        System.out.printf(
                Locale.ROOT,
                "  median: stock %s, aggforge %s, scan %s; stock/native %.2fx%n",
                summary(a),
                summary(b),
                summary(s),
                r.ratio());
        return r;
    }

    /** Runs only the native job {@code rounds} times (for a profiler); prints each time. */
    private static void profileNative(Workload w, int rounds) throws Exception {
        RunOptions aggforge = withAggforge(w.stock);
        System.out.println("--- " + w.name + " (native only): " + w.title + " ---");
        for (int round = 1; round <= rounds; round++) {
            long rowsBefore = NativeGroupAggOperator.ROWS.get();
            long start = System.currentTimeMillis();
            long nativeTime = SqlHarness.runToBlackhole(aggforge, w.sql, w.table);
            long nativeRows = NativeGroupAggOperator.ROWS.get() - rowsBefore;
            assertTrue(
                    nativeRows >= w.table.rowCount(),
                    w.name + ": only " + nativeRows + " rows reached native operators");
            System.out.printf(
                    Locale.ROOT,
                    "  native %d: %,d ms (wall clock from %d to %d)%n",
                    round,
                    nativeTime,
                    start,
                    System.currentTimeMillis());
        }
    }

    private static String markdown(List<Result> results, int runs) {
        StringBuilder sb = new StringBuilder();
        sb.append(
                String.format(
                        Locale.ROOT,
                        "| workload | stock median ms [range] | native median ms [range] | scan ms |"
                                + " ratio stock/native |%n"));
        sb.append(String.format(Locale.ROOT, "|---|---|---|---|---|%n"));
        for (Result r : results) {
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %s | %s | %,d | %.2fx%s |%n",
                            r.workload.name,
                            summary(r.stock),
                            summary(r.aggforge),
                            median(r.scan),
                            r.ratio(),
                            r.ratio() >= 2.0 ? "" : " (< 2x)"));
        }
        sb.append(
                String.format(
                        Locale.ROOT,
                        "%nMedians of %d measured runs each; ranges are min..max; ratio = stock median /"
                                + " native median (> 1: native faster).%n",
                        runs));
        return sb.toString();
    }

    private static String summary(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return String.format(
                Locale.ROOT, "%,d [%,d..%,d]", median(sorted), sorted[0], sorted[sorted.length - 1]);
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static int count(Pattern pattern, String text) {
        Matcher m = pattern.matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    private static String nativeNodes(String plan) {
        int physical = plan.indexOf("== Optimized Physical Plan ==");
        int exec = plan.indexOf("== Optimized Execution Plan ==");
        String section = physical >= 0 && exec > physical ? plan.substring(physical, exec) : plan;
        List<String> names = new ArrayList<>();
        Matcher m = NATIVE_NODE.matcher(section);
        while (m.find()) {
            names.add(m.group().substring(0, m.group().length() - 1));
        }
        assertFalse(names.isEmpty(), "no native node in the physical plan");
        return String.join(" <- ", names);
    }

    private static void write(Path path, String text) throws IOException {
        Files.writeString(path, text, StandardCharsets.UTF_8);
    }

    private static String flinkVersion() {
        String version = org.apache.flink.runtime.util.EnvironmentInformation.getVersion();
        return version == null ? "?" : version;
    }
}
