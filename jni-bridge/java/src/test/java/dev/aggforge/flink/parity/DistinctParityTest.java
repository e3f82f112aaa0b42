package dev.aggforge.flink.parity;

import static org.apache.flink.table.api.DataTypes.DECIMAL;
import static org.apache.flink.table.api.DataTypes.DOUBLE;
import static org.apache.flink.table.api.DataTypes.FIELD;
import static org.apache.flink.table.api.DataTypes.INT;
import static org.apache.flink.table.api.DataTypes.STRING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.harness.Changelog;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.parity.NativeParity.Compare;

/**
 * AGG(DISTINCT x) in single-phase plans (immediate and one-phase mini-batch), over insert-only and
 * retracting input: the native operator runs every call under the DISTINCT view, and the complete
 * changelog must equal stock Flink's.
 */
class DistinctParityTest {

    private static final RunOptions ONE = RunOptions.defaults();

    private static final RunOptions MINI_BATCH_ONE_PHASE =
            ONE.withMiniBatch(64).withAggPhase("ONE_PHASE");

    /** Values folded to few per key (MOD), so a group sees each value many times. */
    static final InputTable T =
            InputTable.generated(
                    "t",
                    4_000,
                    37,
                    1.0 / 6,
                    91,
                    new BigIntType(),
                    new DoubleType(),
                    new DecimalType(20, 3),
                    new VarCharType(VarCharType.MAX_LENGTH));

    /** Every function DISTINCT over BIGINT, DECIMAL, DOUBLE and STRING, next to plain calls. */
    private static final String EVERY_FUNCTION =
            "SELECT k, COUNT(DISTINCT MOD(v0, 9)), SUM(DISTINCT MOD(v0, 9)), AVG(DISTINCT MOD(v0, 9)),"
                    + " MIN(DISTINCT MOD(v0, 9)), MAX(DISTINCT MOD(v0, 9)), COUNT(*), SUM(v0),"
                    + " COUNT(DISTINCT CAST(MOD(v0, 5) AS DECIMAL(10, 2))),"
                    + " SUM(DISTINCT CAST(MOD(v0, 5) AS DECIMAL(10, 2))),"
                    + " COUNT(DISTINCT FLOOR(v1 * 3)), SUM(DISTINCT FLOOR(v1 * 3)),"
                    + " AVG(DISTINCT FLOOR(v1 * 3)), COUNT(DISTINCT SUBSTRING(v3, 1, 1))"
                    + " FROM t GROUP BY k";

    /**
     * The outer aggregate receives -U/+U/-D rows: values leave a group's set on their last
     * retraction and re-enter it.
     */
    private static final String NESTED =
            "SELECT MOD(k, 5) AS g, COUNT(DISTINCT s), SUM(DISTINCT s), AVG(DISTINCT s),"
                    + " MIN(DISTINCT s), MAX(DISTINCT s), COUNT(*), COUNT(DISTINCT c)"
                    + " FROM (SELECT k, MOD(SUM(v0), 13) AS s, COUNT(*) AS c FROM t GROUP BY k)"
                    + " GROUP BY MOD(k, 5)";

    @Test
    void everyFunctionImmediate() throws Exception {
        NativeParity.assertParity(ONE, Compare.LINES, 1, EVERY_FUNCTION, T);
    }

    @Test
    void everyFunctionMiniBatchOnePhase() throws Exception {
        NativeParity.assertParity(MINI_BATCH_ONE_PHASE, Compare.LINES, 1, EVERY_FUNCTION, T);
    }

    @Test
    void everyFunctionWithoutUpdateBefore() throws Exception {
        NativeParity.assertParity(ONE.withUpdateBefore(false), Compare.LINES, 1, EVERY_FUNCTION, T);
    }

    @Test
    void everyFunctionWithStateTtl() throws Exception {
        NativeParity.assertParity(
                ONE.withStateTtl(Duration.ofHours(1)), Compare.LINES, 1, EVERY_FUNCTION, T);
    }

    @Test
    void retractingInputImmediate() throws Exception {
        Changelog log = NativeParity.assertParity(ONE, Compare.LINES, 2, NESTED, T);
        assertTrue(log.lines().stream().anyMatch(l -> l.startsWith("-U")), "no update");
    }

    @Test
    void retractingInputMiniBatchOnePhase() throws Exception {
        NativeParity.assertParity(MINI_BATCH_ONE_PHASE, Compare.LINES, 2, NESTED, T);
    }

    @Test
    void parallelismTwo() throws Exception {
        NativeParity.assertParity(ONE.withParallelism(2), Compare.PER_KEY, 1, EVERY_FUNCTION, T);
    }

    /** Java's boxed equality: NaNs are one value, 0.0 and -0.0 two; NULLs are not values. */
    @Test
    void doublesAsFlinkDistinguishesThem() throws Exception {
        InputTable t =
                InputTable.of(
                        "t",
                        List.of(FIELD("k", INT()), FIELD("v", DOUBLE()), FIELD("s", STRING())),
                        Row.of(1, Double.NaN, "a"),
                        Row.of(1, 0.0, "a"),
                        Row.of(1, -0.0, null),
                        Row.of(1, Double.NaN, "b"),
                        Row.of(1, 0.0 / 0.0, "a"),
                        Row.of(2, null, null),
                        Row.of(2, -0.0, "é"),
                        Row.of(2, 1.5, "é"),
                        Row.of(2, -0.0, "e"),
                        Row.of(1, 2.5, "b"));
        NativeParity.assertParity(
                ONE,
                Compare.LINES,
                1,
                "SELECT k, COUNT(DISTINCT v), SUM(DISTINCT v), MIN(DISTINCT v), MAX(DISTINCT v),"
                        + " AVG(DISTINCT v), COUNT(DISTINCT s), MAX(DISTINCT s) FROM t GROUP BY k",
                t);
    }

    /**
     * Split-distinct aggregation (Nexmark's setting): Flink rewrites the call into a partial
     * aggregate grouped by the key and a hash bucket of the value, DISTINCT, and a final one that
     * sums the partial results over its retracting input. Both levels run natively.
     */
    @Test
    void splitDistinctImmediate() throws Exception {
        RunOptions split = ONE.withConfig("table.optimizer.distinct-agg.split.enabled", "true");
        NativeParity.assertParity(
                split,
                Compare.LINES,
                2,
                "SELECT k, COUNT(DISTINCT MOD(v0, 9)), COUNT(*) FROM t GROUP BY k",
                T);
    }

    private static final RunOptions TWO_PHASE = ONE.withMiniBatch(64).withAggPhase("TWO_PHASE");

    /**
     * Two-phase DISTINCT: the local view is Flink's MapView partial (one per argument, shared by
     * the calls over it, FILTERed ones included), merged natively in the global phase.
     */
    private static final String TWO_PHASE_CALLS =
            "SELECT k, COUNT(DISTINCT MOD(v0, 9)), SUM(DISTINCT MOD(v0, 9)), AVG(DISTINCT MOD(v0, 9)),"
                    + " MIN(DISTINCT MOD(v0, 9)), MAX(DISTINCT MOD(v0, 9)),"
                    + " COUNT(DISTINCT MOD(v0, 9)) FILTER (WHERE v1 > 0.5), COUNT(*), SUM(v0),"
                    + " SUM(DISTINCT CAST(MOD(v0, 5) AS DECIMAL(10, 2))),"
                    + " COUNT(DISTINCT FLOOR(v1 * 3)), COUNT(DISTINCT SUBSTRING(v3, 1, 1)),"
                    + " MAX(DISTINCT SUBSTRING(v3, 1, 2))"
                    + " FROM t GROUP BY k";

    /**
     * Seventy FILTERed COUNT(DISTINCT x) over one argument: one Flink DistinctInfo with more
     * filter arguments than a Long holds bits for (Flink's view value becomes a Long[]); natively
     * one shared view whose cells take two words.
     */
    private static final String SEVENTY_FILTERED = filteredCalls(70);

    private static String filteredCalls(int calls) {
        StringBuilder sql = new StringBuilder("SELECT k");
        for (int i = 0; i < calls; i++) {
            sql.append(", COUNT(DISTINCT MOD(v0, 9)) FILTER (WHERE MOD(v0, 97) > ")
                    .append(i)
                    .append(")");
        }
        return sql.append(", COUNT(*) FROM t GROUP BY k").toString();
    }

    @Test
    void seventyFilteredDistinctCallsOnOneView() throws Exception {
        NativeParity.assertParity(ONE, Compare.LINES, 1, SEVENTY_FILTERED, T);
    }

    @Test
    void seventyFilteredDistinctCallsTwoPhase() throws Exception {
        NativeParity.assertParity(TWO_PHASE, Compare.LINES, 2, SEVENTY_FILTERED, T);
    }

    /** Exactly 64 filtered calls: Flink's view value is still one Long (a bit per call). */
    @Test
    void sixtyFourFilteredDistinctCallsTwoPhase() throws Exception {
        NativeParity.assertParity(TWO_PHASE, Compare.LINES, 2, filteredCalls(64), T);
    }

    @Test
    void twoPhase() throws Exception {
        NativeParity.assertParity(TWO_PHASE, Compare.LINES, 2, TWO_PHASE_CALLS, T);
    }

    @Test
    void twoPhaseParallelismTwo() throws Exception {
        NativeParity.assertParity(
                TWO_PHASE.withParallelism(2), Compare.PER_KEY, 2, TWO_PHASE_CALLS, T);
    }

    /**
     * Over retracting input the views carry signed counts (one, or one per call sharing it);
     * MIN/MAX(DISTINCT) fold into counted multisets, whose extreme does not depend on the order.
     */
    @Test
    void twoPhaseRetractingInput() throws Exception {
        NativeParity.assertParity(TWO_PHASE, Compare.LINES, 4, NESTED, T);
    }

    /** Signed zeros and NaN in MIN/MAX(DISTINCT) over retracting input, two-phase. */
    @Test
    void twoPhaseRetractingDoubleExtremes() throws Exception {
        NativeParity.assertParity(
                TWO_PHASE,
                Compare.LINES,
                4,
                "SELECT MOD(k, 5), MIN(DISTINCT z), MAX(DISTINCT z), MIN(DISTINCT a),"
                        + " MAX(DISTINCT a), COUNT(*) FROM (SELECT k, MAX(v1) * 0.0 AS z,"
                        + " FLOOR(MAX(v1)) AS a FROM t GROUP BY k) GROUP BY MOD(k, 5)",
                T);
    }

    /**
     * UNION ALL input: both branches reach one aggregate, values shared across them. The two
     * branches interleave in arrival order, which differs from run to run, so the runs are
     * compared by the table they leave.
     */
    private static final String UNION_ALL =
            "SELECT k, COUNT(DISTINCT v), SUM(DISTINCT v), MAX(DISTINCT v), COUNT(*)"
                    + " FROM (SELECT k, MOD(v0, 7) AS v FROM t"
                    + " UNION ALL SELECT k, MOD(v0, 11) AS v FROM t)"
                    + " GROUP BY k";

    @Test
    void unionAllInputImmediate() throws Exception {
        NativeParity.assertParity(ONE, Compare.FINAL_TABLE, 1, UNION_ALL, T);
    }

    @Test
    void unionAllInputTwoPhase() throws Exception {
        NativeParity.assertParity(TWO_PHASE, Compare.FINAL_TABLE, 2, UNION_ALL, T);
    }

    /**
     * Per key, DOUBLEs of many magnitudes (with NaN, 0.0 and -0.0) and DECIMAL(38)s near the
     * limit: a DISTINCT sum rounds, and a DECIMAL(38) sum overflows to NULL, differently in
     * another order, and MIN/MAX keep the first of NaN and a number.
     */
    private static InputTable orderSensitive() {
        java.util.List<Row> rows = new java.util.ArrayList<>();
        for (int i = 0; i < 1_200; i++) {
            int k = i % 6;
            int j = i / 6;
            double v = ((j * 7919) % 1000) * Math.pow(10, (j % 17) - 8) * (j % 3 == 0 ? -1 : 1);
            // NaN only for key 0, so the other keys' sums stay finite.
            Double value =
                    j % 41 == 7
                            ? null
                            : k == 0 && j % 53 == 5 ? Double.NaN : j % 59 == 3 ? -0.0 : v;
            java.math.BigDecimal d =
                    java.math.BigDecimal.valueOf((j % 5) - 2)
                            .multiply(new java.math.BigDecimal("3E37"))
                            .add(java.math.BigDecimal.valueOf(j % 23));
            rows.add(Row.of(k, value, j % 37 == 1 ? null : d));
        }
        return InputTable.of(
                "o",
                List.of(FIELD("k", INT()), FIELD("v", DOUBLE()), FIELD("d", DECIMAL(38, 0))),
                rows.toArray(new Row[0]));
    }

    private static final String ORDER_SENSITIVE =
            "SELECT k, SUM(DISTINCT v), AVG(DISTINCT v), MIN(DISTINCT v), MAX(DISTINCT v),"
                    + " COUNT(DISTINCT v), SUM(DISTINCT v) FILTER (WHERE d > 0),"
                    + " SUM(DISTINCT d), AVG(DISTINCT d), SUM(DISTINCT CAST(v AS FLOAT))"
                    + " FROM o GROUP BY k";

    /**
     * Flink's global phase folds FLOAT/DOUBLE and DECIMAL(38) DISTINCT values in the iteration
     * order of Java HashMaps (the deserialized local view, the bundle's union); the native global
     * reproduces it. The stock runs show the data is order-sensitive: the single-phase results
     * (entry order) differ from the two-phase ones.
     */
    @Test
    void twoPhaseOrderSensitiveCallsFoldInJavaHashMapOrder() throws Exception {
        InputTable o = orderSensitive();
        NativeParity.assertParity(TWO_PHASE, Compare.LINES, 2, ORDER_SENSITIVE, o);
        assertNotEquals(
                SqlHarness.run(MINI_BATCH_ONE_PHASE, ORDER_SENSITIVE, o).finalTable(0),
                SqlHarness.run(TWO_PHASE, ORDER_SENSITIVE, o).finalTable(0));
    }

    @Test
    void twoPhaseOrderSensitiveCallsParallelismTwo() throws Exception {
        NativeParity.assertParity(
                TWO_PHASE.withParallelism(2), Compare.PER_KEY, 2, ORDER_SENSITIVE, orderSensitive());
    }

    /**
     * Over retracting input Flink's local view also removes values, which is not modelled: a
     * two-phase DOUBLE DISTINCT sum there stays on Flink.
     */
    @Test
    void twoPhaseRetractingDoubleSumStaysOnFlink() throws Exception {
        String sql =
                "SELECT MOD(k, 5), SUM(DISTINCT s) FROM"
                        + " (SELECT k, CAST(MOD(SUM(v0), 13) AS DOUBLE) AS s FROM t GROUP BY k)"
                        + " GROUP BY MOD(k, 5)";
        String plan = SqlHarness.explain(NativeParity.withAggforge(TWO_PHASE), sql, T);
        // The inner aggregate runs natively, the outer local and global stay on Flink.
        assertTrue(
                plan.contains("phase local not listed for SUM DISTINCT<DOUBLE>/retracting"), plan);
        assertTrue(
                plan.contains("phase global not listed for SUM DISTINCT<DOUBLE>/retracting"), plan);
        assertEquals(
                SqlHarness.run(TWO_PHASE, sql, T).finalTable(0),
                SqlHarness.run(NativeParity.withAggforge(TWO_PHASE), sql, T).finalTable(0));
    }

    /**
     * DISTINCT over several columns: Flink's planner refuses {@code COUNT(DISTINCT a, b)} in
     * every version ("We now only support the count of one field", AggFunctionFactory), before any
     * aggregate exists; with aggforge on the user gets the same error.
     */
    @Test
    void countDistinctOverTwoColumnsIsRefusedByFlinkItself() {
        String sql = "SELECT k, COUNT(DISTINCT v0, v3) FROM t GROUP BY k";
        for (RunOptions options : List.of(ONE, NativeParity.withAggforge(ONE))) {
            Exception refused = assertThrows(Exception.class, () -> SqlHarness.run(options, sql, T));
            String messages = "";
            for (Throwable e = refused; e != null; e = e.getCause()) {
                messages += e.getMessage() + "\n";
            }
            assertTrue(messages.contains("We now only support the count of one field"), messages);
        }
    }
}
