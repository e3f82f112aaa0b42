package dev.aggforge.flink.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.operator.NativeAggregateOperator;

/**
 * Which native group aggregates keep their state in stock Flink's layout (so their savepoints
 * move between stock Flink and aggforge) and which keep aggforge's snapshot format: the table
 * docs/flink-integration.md ("State: Flink's layout") gives, asserted per call, so that a change
 * in either direction shows here. Each query runs natively with stock Flink's result.
 */
class StateLayoutTest {

    private static final InputTable T =
            InputTable.generated(
                    "t",
                    500,
                    20,
                    1.0 / 6,
                    77,
                    new VarCharType(VarCharType.MAX_LENGTH),
                    new BigIntType(),
                    new DoubleType(),
                    new DecimalType(20, 3));

    private static final RunOptions SINGLE = RunOptions.defaults();

    private static final RunOptions TWO_PHASE =
            RunOptions.defaults()
                    .withParallelism(2)
                    .withMiniBatch(100)
                    .withConfig("table.exec.mini-batch.allow-latency", "100 ms")
                    .withAggPhase("TWO_PHASE");

    /** Outer aggregates over retracting input; the inner aggregate keeps Flink's layout. */
    private static final String RETRACTING =
            "SELECT MOD(k, 3), %s FROM (SELECT k, SUM(v1) AS s, MAX(v0) AS c, SUM(v3) AS d"
                    + " FROM t GROUP BY k) GROUP BY MOD(k, 3)";

    /** A GROUP BY without calls (SELECT DISTINCT): Flink keeps an empty accumulator row. */
    @org.junit.jupiter.api.Test
    void aGroupByWithoutCallsKeepsFlinksEmptyRow() throws Exception {
        long layout = NativeAggregateOperator.FLINK_LAYOUT.get();
        NativeParity.assertParity(SINGLE, NativeParity.Compare.LINES, 1, "SELECT k FROM t GROUP BY k", T);
        assertEquals(1, NativeAggregateOperator.FLINK_LAYOUT.get() - layout, "in Flink's layout");
    }

    /**
     * @param input insert-only (a GROUP BY over the table) or retracting (over an inner one)
     * @param calls the calls
     * @param flinkLayout whether the aggregate with these calls keeps Flink's layout
     * @param twoPhaseNatives native operators of the two-phase plan (FIRST_VALUE and LAST_VALUE
     *     have no two-phase plan: their aggregate stays single phase)
     */
    @ParameterizedTest(name = "{0} {1}: Flink's layout {2}")
    @CsvSource(
            delimiter = ';',
            value = {
                // A DOUBLE sum of whole numbers: exact in any order (two phases fold the two local
                // subtasks' partials in arrival order).
                "insert-only ; MIN(v0), MAX(v1), SUM(v1), SUM(CAST(MOD(v1, 1000) AS DOUBLE)), SUM(v3), AVG(v1), AVG(v3) ; true ; 2",
                "insert-only ; COUNT(v0), COUNT(*), LISTAGG(v0), LISTAGG(v0, '|') ; true ; 2",
                "insert-only ; MAX(DISTINCT v1), MIN(v2), MAX(v3) ; true ; 2",
                "insert-only ; COUNT(*) FILTER (WHERE v1 > 0), SUM(v1) FILTER (WHERE v1 > 0) ; true ; 2",
                "insert-only ; FIRST_VALUE(v0), COUNT(*) ; true ; 1",
                "insert-only ; LAST_VALUE(v1), LAST_VALUE(v3), FIRST_VALUE(v2) ; true ; 1",
                "insert-only ; COUNT(DISTINCT v1), SUM(DISTINCT v1) FILTER (WHERE v1 > 0), COUNT(DISTINCT v0) ; true ; 2",
                "retracting ; SUM(s), AVG(s), COUNT(s), COUNT(*), SUM(d), AVG(d) ; true ; 4",
                "retracting ; SUM(s) FILTER (WHERE s > 0) ; true ; 4",
                "retracting ; COUNT(DISTINCT s), SUM(DISTINCT s) FILTER (WHERE s > 0) ; true ; 4",
                "retracting ; MIN(s) ; true ; 4",
                "retracting ; MAX(c), MIN(d), COUNT(*), MAX(s) FILTER (WHERE s > 0) ; true ; 4",
            })
    void flinksLayoutWhereTheAccumulatorsAreFlinks(String input, String calls, boolean flinkLayout, int twoPhaseNatives)
            throws Exception {
        boolean retracting = input.equals("retracting");
        String sql =
                retracting
                        ? String.format(RETRACTING, calls)
                        : "SELECT k, " + calls + " FROM t GROUP BY k";
        // The inner aggregate of the retracting queries keeps Flink's layout.
        int expected = (retracting ? 1 : 0) + (flinkLayout ? 1 : 0);
        int singleNatives = retracting ? 2 : 1;
        for (RunOptions options : new RunOptions[] {SINGLE, TWO_PHASE}) {
            boolean twoPhase = options == TWO_PHASE;
            long layout = NativeAggregateOperator.FLINK_LAYOUT.get();
            NativeParity.assertParity(
                    options, NativeParity.Compare.FINAL_TABLE, twoPhase ? twoPhaseNatives : singleNatives, sql, T);
            // One per subtask of each single-phase or global aggregate.
            assertEquals(
                    expected * options.parallelism(),
                    NativeAggregateOperator.FLINK_LAYOUT.get() - layout,
                    "aggregates in Flink's layout, " + (twoPhase ? "two-phase" : "single phase"));
        }
    }
}
