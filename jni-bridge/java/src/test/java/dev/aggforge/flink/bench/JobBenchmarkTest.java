package dev.aggforge.flink.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.flink.table.types.logical.DateType;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.planner.AggforgeOptions;
import dev.aggforge.flink.planner.AggforgePlanner;

/**
 * Complete-job benchmark: the same Flink SQL job (deterministic in-process row source, GROUP BY,
 * blackhole sink) under configuration A (stock Flink) and B, alternating A B A B in one JVM:
 * {@code bench.warmups} warm-up rounds, then {@code bench.runs} measured rounds; prints each run,
 * then medians and ranges of the job's net runtime (JobExecutionResult), and the B/A ratio. A
 * scan-only job (same source and sink, no aggregate) is measured in each round too.
 *
 * <p>Run: {@code mvn -f jni-bridge/java/pom.xml -Pbench test}. System properties: {@code
 * bench.rows} (2000000), {@code bench.keys} (64), {@code bench.nulls} (0.125), {@code
 * bench.parallelism} (1), {@code bench.warmups} (2), {@code bench.runs} (5), {@code bench.b}
 * ({@code stock} or {@code aggforge}: the hook installed and enabled).
 */
@Tag("bench")
class JobBenchmarkTest {

    @Test
    void minMaxOverDate() throws Exception {
        long rows = Long.getLong("bench.rows", 2_000_000L);
        int keys = Integer.getInteger("bench.keys", 64);
        double nulls = Double.parseDouble(System.getProperty("bench.nulls", "0.125"));
        int parallelism = Integer.getInteger("bench.parallelism", 1);
        int warmups = Integer.getInteger("bench.warmups", 2);
        int runs = Integer.getInteger("bench.runs", 5);
        String b = System.getProperty("bench.b", "stock");

        InputTable t = InputTable.generated("t", rows, keys, nulls, 42, new DateType());
        String sql = "SELECT k, MIN(v0), MAX(v0) FROM t GROUP BY k";
        String scan = "SELECT k, v0 FROM t";
        RunOptions stock =
                RunOptions.defaults().withParallelism(parallelism).withAggPhase("ONE_PHASE");
        RunOptions other =
                b.equals("aggforge")
                        ? stock.withConfig(AggforgeOptions.ENABLED.key(), "true")
                                .withSetup(AggforgePlanner::install)
                        : stock;

        Map<String, List<Long>> times = new LinkedHashMap<>();
        times.put("A stock", new ArrayList<>());
        times.put("B " + b, new ArrayList<>());
        times.put("scan only", new ArrayList<>());
        System.out.printf(
                Locale.ROOT,
                "job: %s | rows=%d keys=%d nulls=%.3f p=%d single phase, immediate%n",
                sql, rows, keys, nulls, parallelism);
        for (int round = 0; round < warmups + runs; round++) {
            boolean measured = round >= warmups;
            long a = SqlHarness.runToBlackhole(stock, sql, t);
            long bTime = SqlHarness.runToBlackhole(other, sql, t);
            long s = SqlHarness.runToBlackhole(stock, scan, t);
            System.out.printf(
                    Locale.ROOT,
                    "%s %d: A %d ms, B %d ms, scan %d ms%n",
                    measured ? "run" : "warmup",
                    measured ? round - warmups + 1 : round + 1,
                    a, bTime, s);
            if (measured) {
                times.get("A stock").add(a);
                times.get("B " + b).add(bTime);
                times.get("scan only").add(s);
            }
        }
        for (Map.Entry<String, List<Long>> entry : times.entrySet()) {
            long[] sorted = entry.getValue().stream().mapToLong(Long::longValue).sorted().toArray();
            System.out.printf(
                    Locale.ROOT,
                    "%-10s median %d ms, range %d..%d ms, runs %s%n",
                    entry.getKey(),
                    median(sorted),
                    sorted[0],
                    sorted[sorted.length - 1],
                    entry.getValue());
        }
        System.out.printf(
                Locale.ROOT,
                "B/A median ratio: %.3f%n",
                (double) median(sorted(times.get("B " + b))) / median(sorted(times.get("A stock"))));
    }

    private static long[] sorted(List<Long> values) {
        long[] array = values.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(array);
        return array;
    }

    private static long median(long[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
