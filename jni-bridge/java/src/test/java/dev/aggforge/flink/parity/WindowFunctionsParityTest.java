package dev.aggforge.flink.parity;

import static dev.aggforge.flink.parity.WindowParityTest.assertWindowParity;
import static dev.aggforge.flink.parity.WindowParityTest.options;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import org.apache.flink.table.api.DataTypes;
import org.apache.flink.types.Row;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.SqlHarness;

/**
 * The registry's functions and types in window aggregates, as in GROUP BY: FILTER clauses,
 * STRING, DOUBLE (with NaN and -0.0), DECIMAL, BOOLEAN, TIME and TIMESTAMP extrema, DISTINCT with
 * FILTER, and the order-sensitive LISTAGG, over TUMBLE, HOP and CUMULATE, one phase and two;
 * stock and native emit the same windows. (FIRST_VALUE and LAST_VALUE: {@code
 * WindowFirstLastValueParityTest}, Flink 2.x only.)
 */
class WindowFunctionsParityTest {

    /** (k INT, v BIGINT, s STRING, x DOUBLE, m DECIMAL(12, 2), b BOOLEAN, t TIME, tm TIMESTAMP(3), ts). */
    static final InputTable TYPED = typed("typed", 3_000, 97).withWatermark("ts", 1);

    static InputTable typed(String name, int rows, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long time = LocalDateTime.of(2024, 3, 1, 12, 0).toInstant(ZoneOffset.UTC).toEpochMilli();
        List<Row> out = new ArrayList<>(rows);
        for (int i = 0; i < rows; i++) {
            time += random.nextInt(500);
            long ts = random.nextInt(12) == 0 ? time - random.nextInt(6_000) : time;
            Integer k = random.nextInt(25) == 0 ? null : random.nextInt(6);
            boolean nulls = k != null && k == 5;
            int pick = random.nextInt(40);
            Double x =
                    nulls || random.nextInt(9) == 0
                            ? null
                            : pick == 0 ? Double.NaN : pick == 1 ? -0.0 : pick == 2 ? 0.0 : random.nextDouble(-100, 100);
            out.add(
                    Row.of(
                            k,
                            nulls || random.nextInt(9) == 0 ? null : random.nextLong(-50, 50),
                            nulls || random.nextInt(9) == 0 ? null : "s" + random.nextInt(30),
                            x,
                            nulls || random.nextInt(9) == 0
                                    ? null
                                    : BigDecimal.valueOf(random.nextLong(-100_000, 100_000), 2),
                            nulls || random.nextInt(9) == 0 ? null : random.nextBoolean(),
                            nulls || random.nextInt(9) == 0
                                    ? null
                                    : LocalTime.ofSecondOfDay(random.nextInt(86_400)),
                            nulls || random.nextInt(9) == 0
                                    ? null
                                    : LocalDateTime.ofEpochSecond(
                                            random.nextLong(0, 2_000_000_000L), 0, ZoneOffset.UTC),
                            WindowParityTest.timestamp(ts)));
        }
        return InputTable.of(
                name,
                DataTypes.ROW(
                        DataTypes.FIELD("k", DataTypes.INT()),
                        DataTypes.FIELD("v", DataTypes.BIGINT()),
                        DataTypes.FIELD("s", DataTypes.STRING()),
                        DataTypes.FIELD("x", DataTypes.DOUBLE()),
                        DataTypes.FIELD("m", DataTypes.DECIMAL(12, 2)),
                        DataTypes.FIELD("b", DataTypes.BOOLEAN()),
                        DataTypes.FIELD("t", DataTypes.TIME(0)),
                        DataTypes.FIELD("tm", DataTypes.TIMESTAMP(3)),
                        DataTypes.FIELD("ts", DataTypes.TIMESTAMP(3))),
                out);
    }

    private static final String[] WINDOWS = {
        "TUMBLE(TABLE typed, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
        "HOP(TABLE typed, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)",
        "CUMULATE(TABLE typed, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)",
    };

    static Stream<Arguments> cases() {
        return WindowParityTest.crossed(WINDOWS);
    }

    /** Order-free calls over every type, with FILTER (DISTINCT too, HOP aside: see below). */
    @ParameterizedTest(name = "{0} {1} p={2}")
    @MethodSource("cases")
    void typedCallsWithFilters(String window, String phase, int parallelism) throws Exception {
        String distinct =
                window.startsWith("HOP")
                        // Flink's HOP retracts distinct views, which only its COUNT can take.
                        ? "COUNT(DISTINCT s) FILTER (WHERE v > 0) AS cds"
                        : "COUNT(DISTINCT s) FILTER (WHERE v > 0) AS cds, SUM(DISTINCT m) AS sdm";
        String sql =
                "SELECT k, window_start, window_end, COUNT(*) AS c,"
                        + " COUNT(v) FILTER (WHERE b) AS cvb, SUM(v) FILTER (WHERE x > 0) AS svx,"
                        + " MIN(s) AS mns, MAX(s) AS mxs, MIN(x) AS mnx, MAX(x) AS mxx, SUM(x) AS sx,"
                        + " AVG(x) AS ax, SUM(m) AS sm, AVG(m) AS am, MIN(m) AS mnm, MAX(m) AS mxm,"
                        + " MIN(b) AS mnb, MAX(b) FILTER (WHERE v < 0) AS mxb, MIN(t) AS mnt,"
                        + " MAX(t) AS mxt, MIN(tm) AS mntm, MAX(tm) AS mxtm, "
                        + distinct
                        + " FROM TABLE("
                        + window
                        + ") GROUP BY k, window_start, window_end";
        assertWindowParity(options(phase, parallelism), phase, sql, TYPED);
    }

    static Stream<Arguments> orderCases() {
        // Parallelism 1: with two local subtasks the global phase's partial order is a race in
        // Flink too, which order-sensitive results would show.
        return cases().filter(c -> (int) c.get()[2] == 1);
    }

    /**
     * LISTAGG: rows fold, and slices merge, in Flink's order. Two-phase CUMULATE stays on Flink
     * (its global buffer merges late partials into the period's first slice in hash-map order).
     */
    @ParameterizedTest(name = "{0} {1} p={2}")
    @MethodSource("orderCases")
    void listAgg(String window, String phase, int parallelism) throws Exception {
        String sql =
                "SELECT k, window_start, window_end, LISTAGG(s) AS ls, LISTAGG(s, '|') FILTER"
                        + " (WHERE b) AS lsb, COUNT(*) AS c FROM TABLE("
                        + window
                        + ") GROUP BY k, window_start, window_end";
        if (window.startsWith("CUMULATE") && phase.equals("TWO_PHASE")) {
            String plan =
                    SqlHarness.explain(
                            NativeParity.withAggforge(options(phase, parallelism)), sql, TYPED);
            assertTrue(plan.contains("LocalWindowAggregate("), plan);
            assertFalse(plan.contains("AggforgeLocalWindowAggregate("), plan);
            assertTrue(plan.contains("merges late partials in Flink's hash-map order"), plan);
            return;
        }
        assertWindowParity(options(phase, parallelism), phase, sql, TYPED);
    }
}
