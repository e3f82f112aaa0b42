package dev.aggforge.flink.parity;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.stream.Stream;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.aggforge.flink.harness.Changelog;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.parity.NativeParity.Compare;

/**
 * Retracting input: an inner GROUP BY feeds an outer one, so the outer aggregate receives -U/+U
 * (and -D) rows. Both run natively (COUNT, COUNT(*), SUM, AVG over retracting input) and the
 * complete changelogs must equal stock Flink's: record counting, -D when a group empties, and the
 * suppression rules.
 */
class RetractParityTest {

    private static final RunOptions ONE = RunOptions.defaults();

    /** Few keys, many rows: outer groups are updated, emptied and refilled often. */
    private static final InputTable T =
            InputTable.generated(
                    "t",
                    4_000,
                    97,
                    1.0 / 6,
                    77,
                    new IntType(),
                    new BigIntType(),
                    new DoubleType(),
                    new DecimalType(20, 3));

    /** Inner per-key aggregates, outer aggregates of them per key bucket. */
    private static final String NESTED =
            "SELECT MOD(k, 7) AS g, COUNT(*), SUM(s), AVG(s), COUNT(n), SUM(a), AVG(d), SUM(d)"
                    + " FROM (SELECT k, SUM(v1) AS s, COUNT(v0) AS n, AVG(v2) AS a, SUM(v3) AS d"
                    + " FROM t GROUP BY k) GROUP BY MOD(k, 7)";

    /**
     * {@link #NESTED} without DOUBLE sums: at parallelism 2 the outer aggregate receives the two
     * inner subtasks' rows in an order that varies from run to run (stock against stock too), so
     * only the final table is comparable, and a DOUBLE sum's last digits depend on the order.
     */
    private static final String NESTED_EXACT =
            "SELECT MOD(k, 7) AS g, COUNT(*), SUM(s), AVG(s), COUNT(n), AVG(d), SUM(d)"
                    + " FROM (SELECT k, SUM(v1) AS s, COUNT(v0) AS n, SUM(v3) AS d"
                    + " FROM t GROUP BY k) GROUP BY MOD(k, 7)";

    /** The outer key is an inner result: groups empty (-D) and refill as counts move. */
    private static final String COUNT_OF_COUNTS =
            "SELECT c, COUNT(*), SUM(c), AVG(c) FROM (SELECT k, COUNT(*) AS c FROM t GROUP BY k)"
                    + " GROUP BY c";

    @Test
    void countOfCountsImmediate() throws Exception {
        Changelog log = NativeParity.assertParity(ONE, Compare.LINES, 2, COUNT_OF_COUNTS, T);
        assertTrue(log.lines().stream().anyMatch(l -> l.startsWith("-D")), "no group emptied");
    }

    @Test
    void countOfCountsWithoutUpdateBefore() throws Exception {
        NativeParity.assertParity(
                ONE.withUpdateBefore(false), Compare.LINES, 2, COUNT_OF_COUNTS, T);
    }

    @Test
    void countOfCountsMiniBatch() throws Exception {
        NativeParity.assertParity(
                ONE.withMiniBatch(64).withAggPhase("ONE_PHASE"), Compare.LINES, 2, COUNT_OF_COUNTS, T);
    }

    @Test
    void nestedSumsAndAveragesImmediate() throws Exception {
        NativeParity.assertParity(ONE, Compare.LINES, 2, NESTED, T);
    }

    @Test
    void nestedWithStateTtlReEmitsUnchangedResults() throws Exception {
        NativeParity.assertParity(ONE.withStateTtl(Duration.ofHours(1)), Compare.LINES, 2, NESTED, T);
    }

    @Test
    void nestedMiniBatch() throws Exception {
        NativeParity.assertParity(
                ONE.withMiniBatch(100).withAggPhase("ONE_PHASE"), Compare.LINES, 2, NESTED, T);
    }

    @Test
    void nestedAtParallelismTwoFinalTable() throws Exception {
        NativeParity.assertParity(ONE.withParallelism(2), Compare.FINAL_TABLE, 2, NESTED_EXACT, T);
    }

    @Test
    void nestedTwoPhaseAtParallelismTwoFinalTable() throws Exception {
        // Inner local + global, outer local + global (the outer local counts records with the
        // COUNT(*) it already has).
        NativeParity.assertParity(
                ONE.withParallelism(2).withMiniBatch(50).withAggPhase("TWO_PHASE"),
                Compare.FINAL_TABLE,
                4,
                NESTED_EXACT,
                T);
    }

    @Test
    void nestedTwoPhaseAtParallelismOneLines() throws Exception {
        NativeParity.assertParity(
                ONE.withMiniBatch(50).withAggPhase("TWO_PHASE"), Compare.LINES, 4, NESTED, T);
    }

    @Test
    void countOfCountsTwoPhaseInsertsTheRecordCounter() throws Exception {
        // The outer query has no COUNT(*): Flink's planner inserts one into the two-phase
        // accumulator layout, and the native local/global pair must produce and read it.
        NativeParity.assertParity(
                ONE.withMiniBatch(40).withAggPhase("TWO_PHASE"),
                Compare.LINES,
                4,
                "SELECT c, SUM(c), COUNT(k) FROM (SELECT k, COUNT(*) AS c FROM t GROUP BY k)"
                        + " GROUP BY c",
                T);
    }

    /** Outer MIN/MAX over inner results of several types: counted multisets per group. */
    private static final String NESTED_EXTREMES =
            "SELECT MOD(k, 5), MIN(s), MAX(s), MIN(a), MAX(a), MIN(d), MAX(d), COUNT(*)"
                    + " FROM (SELECT k, SUM(v1) AS s, MAX(v2) AS a, MIN(v3) AS d FROM t GROUP BY k)"
                    + " GROUP BY MOD(k, 5)";

    @Test
    void outerMinMaxOverRetractionsImmediate() throws Exception {
        NativeParity.assertParity(ONE, Compare.LINES, 2, NESTED_EXTREMES, T);
    }

    @Test
    void outerMinMaxOverRetractionsMiniBatch() throws Exception {
        NativeParity.assertParity(
                ONE.withMiniBatch(64).withAggPhase("ONE_PHASE"), Compare.LINES, 2, NESTED_EXTREMES, T);
    }

    @Test
    void outerMinMaxTwoPhase() throws Exception {
        // Both pairs split natively: the outer local phase sends Flink's
        // Min/MaxWithRetractAccumulator (extreme, mapSize, MapView of counts) per key and bundle,
        // the global phase merges it as Flink's merge does.
        String plan =
                SqlHarness.explain(
                        NativeParity.withAggforge(ONE.withMiniBatch(50).withAggPhase("TWO_PHASE")),
                        NESTED_EXTREMES,
                        T);
        assertTrue(plan.contains("MIN<BIGINT>/retracting"), plan);
        NativeParity.assertParity(
                ONE.withMiniBatch(50).withAggPhase("TWO_PHASE"), Compare.LINES, 4, NESTED_EXTREMES, T);
    }

    @Test
    void outerMinMaxTwoPhaseAtParallelismTwoFinalTable() throws Exception {
        NativeParity.assertParity(
                ONE.withParallelism(2).withMiniBatch(50).withAggPhase("TWO_PHASE"),
                Compare.FINAL_TABLE,
                4,
                NESTED_EXTREMES,
                T);
    }

    @Test
    void outerMinMaxTwoPhaseWithoutUpdateBefore() throws Exception {
        NativeParity.assertParity(
                ONE.withMiniBatch(50).withAggPhase("TWO_PHASE").withUpdateBefore(false),
                Compare.LINES,
                4,
                NESTED_EXTREMES,
                T);
    }

    /** The outer MIN/MAX over every type row, from an inner MAX that moves per key. */
    private static final String NESTED_EXTREMES_OF_TYPE =
            "SELECT MOD(c, 5), MIN(v), MAX(v), COUNT(*) FROM"
                    + " (SELECT k, COUNT(*) AS c, MAX(v0) AS v FROM t GROUP BY k) GROUP BY MOD(c, 5)";

    static Stream<Arguments> types() {
        return Stream.of(TypeParityTest.TYPES).map(t -> Arguments.of(t.asSummaryString()));
    }

    @ParameterizedTest(name = "two-phase MIN/MAX({0}) over retracting input")
    @MethodSource("types")
    void outerMinMaxTwoPhaseOverEveryType(String summary) throws Exception {
        LogicalType type =
                Stream.of(TypeParityTest.TYPES)
                        .filter(t -> t.asSummaryString().equals(summary))
                        .findFirst()
                        .orElseThrow();
        NativeParity.assertParity(
                ONE.withMiniBatch(37).withAggPhase("TWO_PHASE"),
                Compare.LINES,
                4,
                NESTED_EXTREMES_OF_TYPE,
                InputTable.generated("t", 2_000, 23, 1.0 / 6, 19, type));
    }

    /**
     * The inner COUNT(*) only grows per key, so Flink plans the outer MAX(c) (grouped by the same
     * key) without retraction (its insert-only function, which ignores -U/-D) next to the
     * retracting SUM, MIN and COUNT.
     */
    private static final String MONOTONIC =
            "SELECT k, MAX(c), SUM(c), MIN(c), COUNT(*) FROM"
                    + " (SELECT k, COUNT(*) AS c FROM t GROUP BY k) GROUP BY k";

    @Test
    void callsPlannedWithoutRetractionRunNatively() throws Exception {
        String plan = SqlHarness.explain(NativeParity.withAggforge(ONE), MONOTONIC, T);
        assertTrue(plan.contains("MAX<BIGINT>/insert_only"), plan);
        assertTrue(plan.contains("SUM<BIGINT>/retracting"), plan);
        NativeParity.assertParity(ONE, Compare.LINES, 2, MONOTONIC, T);
        NativeParity.assertParity(
                ONE.withMiniBatch(64).withAggPhase("ONE_PHASE"), Compare.LINES, 2, MONOTONIC, T);
        NativeParity.assertParity(ONE.withUpdateBefore(false), Compare.LINES, 2, MONOTONIC, T);
    }

    @Test
    void callsPlannedWithoutRetractionInTwoPhases() throws Exception {
        // The outer MAX partial is the insert-only layout (one value) beside the retracting
        // SUM's: the outer pair splits natively.
        String sql =
                "SELECT k, MAX(c), SUM(c), COUNT(*) FROM"
                        + " (SELECT k, COUNT(*) AS c FROM t GROUP BY k) GROUP BY k";
        NativeParity.assertParity(
                ONE.withMiniBatch(50).withAggPhase("TWO_PHASE"), Compare.LINES, 4, sql, T);
    }
}
