package dev.aggforge.flink.demo;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.operator.NativeGroupAggOperator;
import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.AggforgeOptions;

/**
 * The main demo ({@code scripts/demo.sh}): one Flink SQL job over generated data on an embedded
 * MiniCluster, stock and native (aggforge), printing the SQL, EXPLAIN's native operator lines,
 * the final result table, whether the complete changelogs are identical, and alternating timings
 * (warm-up plus measured runs, medians, stock/native ratio). Fails if a changelog differs.
 *
 * <p>Run: {@code mvn -f jni-bridge/java/pom.xml -Pdemo test}. System properties: {@code
 * demo.rows} (2000000), {@code demo.keys} (64), {@code demo.warmups} (1), {@code demo.runs} (3),
 * {@code demo.twoPhase} (true: also a two-phase mini-batch run).
 */
@Tag("demo")
class DemoJobTest {

    private static final String SQL =
            "SELECT k, MIN(d), MAX(d), COUNT(*), SUM(x), AVG(x) FROM t GROUP BY k";
    private static final Pattern NATIVE_NODE =
            Pattern.compile("\\bAggforge(Local|Global|Incremental)?GroupAggregate\\(");
    private static final int SHOWN_KEYS = 8;

    @Test
    void demo() throws Exception {
        long rows = Long.getLong("demo.rows", 2_000_000L);
        int keys = Integer.getInteger("demo.keys", 64);
        double nulls = 0.125;
        int warmups = Integer.getInteger("demo.warmups", 1);
        int runs = Integer.getInteger("demo.runs", 3);
        boolean twoPhase = Boolean.parseBoolean(System.getProperty("demo.twoPhase", "true"));

        InputTable src =
                InputTable.generated("src", rows, keys, nulls, 42, new DateType(), new IntType());
        String view = "SELECT k, v0 AS d, v1 AS x FROM src";

        System.out.println();
        System.out.println("=== aggforge demo: Flink " + flinkVersion() + ", embedded MiniCluster ===");
        System.out.printf(
                Locale.ROOT,
                "input t(k INT NOT NULL, d DATE, x INT): %,d generated rows, %d keys, %.3f of d and x NULL%n",
                rows, keys, nulls);
        System.out.println("SQL: " + SQL);

        boolean allIdentical = true;
        RunOptions single = RunOptions.defaults().withParallelism(1).withAggPhase("ONE_PHASE");
        allIdentical &= scenario("single phase, immediate, parallelism 1", single, src, view, warmups, runs, true);
        if (twoPhase) {
            RunOptions mini =
                    RunOptions.defaults()
                            .withParallelism(1)
                            .withAggPhase("TWO_PHASE")
                            .withMiniBatch(1000);
            allIdentical &= scenario(
                    "two phase, mini-batch size 1000, parallelism 1", mini, src, view, warmups, runs, false);
        }
        System.out.println();
        System.out.println(
                allIdentical
                        ? "RESULT: native changelogs identical to stock Flink"
                        : "RESULT: CHANGELOGS DIFFER");
        System.out.println();
        assertTrue(allIdentical, "a native changelog differs from stock Flink's");
    }

    /** One configuration: plan, parity of the complete changelog, timings. Returns parity. */
    private static boolean scenario(
            String title,
            RunOptions stock,
            InputTable src,
            String view,
            int warmups,
            int runs,
            boolean showTable)
            throws Exception {
        RunOptions nat = withAggforge(stock);
        System.out.println();
        System.out.println("--- " + title + " ---");

        StreamTableEnvironment explainEnv = env(nat, src, view);
        String plan = explainEnv.explainSql(SQL);
        List<String> nativeLines = nativePhysicalLines(plan);
        if (nativeLines.isEmpty()) {
            System.out.println("EXPLAIN: no native operator in the plan (runs on stock Flink):");
            System.out.println(plan);
        } else {
            System.out.println("EXPLAIN (native):");
            nativeLines.forEach(l -> System.out.println("  " + l));
        }

        // Complete changelogs: stock kept as printed lines, native compared row by row.
        List<String> expected = new ArrayList<>();
        Map<Integer, String> finalTable = new TreeMap<>();
        try (CloseableIterator<Row> it = collect(stock, src, view)) {
            while (it.hasNext()) {
                Row row = it.next();
                expected.add(row.toString());
                applyToTable(finalTable, row);
            }
        }
        long nativeRowsBefore = NativeGroupAggOperator.ROWS.get();
        long actualCount = 0;
        String firstDifference = null;
        Iterator<String> want = expected.iterator();
        try (CloseableIterator<Row> it = collect(nat, src, view)) {
            while (it.hasNext()) {
                String got = it.next().toString();
                String w = want.hasNext() ? want.next() : "<end of stock changelog>";
                if (firstDifference == null && !w.equals(got)) {
                    firstDifference = "row " + actualCount + ": stock " + w + ", native " + got;
                }
                actualCount++;
            }
        }
        if (firstDifference == null && want.hasNext()) {
            firstDifference = "row " + actualCount + ": stock " + want.next() + ", native <end>";
        }
        long nativeRows = NativeGroupAggOperator.ROWS.get() - nativeRowsBefore;
        boolean identical = firstDifference == null && !nativeLines.isEmpty();

        if (showTable) {
            System.out.printf(
                    Locale.ROOT, "final result (first %d of %d keys):%n", SHOWN_KEYS, finalTable.size());
            System.out.println("  k | MIN(d) | MAX(d) | COUNT(*) | SUM(x) | AVG(x)");
            finalTable.values().stream().limit(SHOWN_KEYS).forEach(r -> System.out.println("  " + r));
        }
        System.out.printf(
                Locale.ROOT,
                "changelog: stock %,d rows (+I %d, -U %d, +U %d), native %,d rows; rows into native operators (all of them): %,d%n",
                expected.size(),
                count(expected, "+I"),
                count(expected, "-U"),
                count(expected, "+U"),
                actualCount,
                nativeRows);
        System.out.println(
                "complete changelogs identical: "
                        + (firstDifference == null ? "yes" : "NO (first difference " + firstDifference + ")")
                        + (nativeLines.isEmpty() ? " (but the native operator was not planned)" : ""));
        expected.clear();

        // Timings: alternating stock/native into a blackhole sink, net job runtime.
        long[] stockTimes = new long[runs];
        long[] nativeTimes = new long[runs];
        for (int round = 0; round < warmups + runs; round++) {
            long s = blackhole(stock, src, view);
            long n = blackhole(nat, src, view);
            boolean measured = round >= warmups;
            System.out.printf(
                    Locale.ROOT,
                    "  %s %d: stock %,d ms, native %,d ms%n",
                    measured ? "run   " : "warmup",
                    measured ? round - warmups + 1 : round + 1,
                    s,
                    n);
            if (measured) {
                stockTimes[round - warmups] = s;
                nativeTimes[round - warmups] = n;
            }
        }
        long stockMedian = median(stockTimes);
        long nativeMedian = median(nativeTimes);
        System.out.printf(
                Locale.ROOT,
                "median of %d runs: stock %,d ms, native %,d ms, stock/native = %.2fx%n",
                runs,
                stockMedian,
                nativeMedian,
                (double) stockMedian / Math.max(1, nativeMedian));
        return identical;
    }

    /** {@code options} with the aggforge planner hook installed and enabled. */
    private static RunOptions withAggforge(RunOptions options) {
        return options.withConfig(AggforgeOptions.ENABLED.key(), "true")
                .withConfig(AggforgeOptions.BUNDLED_ENABLED.key(), "true");
    }

    /** An environment with {@code src} registered and {@code t} defined over it. */
    private static StreamTableEnvironment env(RunOptions options, InputTable src, String view) {
        StreamTableEnvironment tEnv = SqlHarness.environment(options, src);
        tEnv.createTemporaryView("t", tEnv.sqlQuery(view));
        return tEnv;
    }

    private static CloseableIterator<Row> collect(RunOptions options, InputTable src, String view)
            throws Exception {
        StreamTableEnvironment tEnv = env(options, src, view);
        return tEnv.toChangelogStream(tEnv.sqlQuery(SQL)).executeAndCollect("aggforge-demo");
    }

    private static long blackhole(RunOptions options, InputTable src, String view) throws Exception {
        StreamTableEnvironment tEnv = env(options, src, view);
        Table table = tEnv.sqlQuery(SQL);
        tEnv.createTemporaryView("demo_result", table);
        String columns =
                table.getResolvedSchema().getColumns().stream()
                        .map(c -> "`" + c.getName() + "` "
                                + c.getDataType().getLogicalType().asSerializableString())
                        .collect(Collectors.joining(", "));
        tEnv.executeSql(
                "CREATE TEMPORARY TABLE demo_sink (" + columns + ") WITH ('connector' = 'blackhole')");
        TableResult result = tEnv.executeSql("INSERT INTO demo_sink SELECT * FROM demo_result");
        JobExecutionResult job =
                result.getJobClient()
                        .orElseThrow(() -> new IllegalStateException("no job was submitted"))
                        .getJobExecutionResult()
                        .get();
        return job.getNetRuntime();
    }

    /** The native operator lines of EXPLAIN's physical plan (each node once). */
    private static List<String> nativePhysicalLines(String plan) {
        int physical = plan.indexOf("== Optimized Physical Plan ==");
        int exec = plan.indexOf("== Optimized Execution Plan ==");
        String section =
                physical >= 0 ? plan.substring(physical, exec > physical ? exec : plan.length()) : plan;
        return Arrays.stream(section.split("\n"))
                .filter(l -> NATIVE_NODE.matcher(l).find())
                .map(String::strip)
                .collect(Collectors.toList());
    }

    /** Applies one changelog row to the key -> current row table. */
    private static void applyToTable(Map<Integer, String> table, Row row) {
        Integer key = (Integer) row.getField(0);
        if (row.getKind() == RowKind.INSERT || row.getKind() == RowKind.UPDATE_AFTER) {
            Row plain = Row.copy(row);
            plain.setKind(RowKind.INSERT);
            String text = plain.toString();
            table.put(key, text.substring(3, text.length() - 1).replace(", ", " | "));
        } else if (row.getKind() == RowKind.DELETE) {
            table.remove(key);
        }
    }

    private static long count(List<String> lines, String kind) {
        return lines.stream().filter(l -> l.startsWith(kind)).count();
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static String flinkVersion() {
        String version = org.apache.flink.runtime.util.EnvironmentInformation.getVersion();
        return version == null ? "?" : version;
    }
}
