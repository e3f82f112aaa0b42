package dev.aggforge.flink.parity;

import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.stream.Stream;

import org.apache.flink.table.types.logical.LogicalType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.aggforge.flink.harness.Changelog;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.parity.NativeParity.Compare;

/**
 * FIRST_VALUE and LAST_VALUE over insert-only input (Flink's FirstValueAggFunction /
 * LastValueAggFunction): the first and the latest non-NULL value per key in arrival order, for
 * every type row, immediate and mini-batch. Flink gives them no merge, so a two-phase
 * configuration still plans one aggregate. Over retracting input (Flink's
 * FirstValueWithRetractAggFunction / LastValueWithRetractAggFunction) the live values in arrival
 * order, a retraction removing the earliest equal one. Parallelism 1: the arrival order per key is
 * the source's. Flink 1.20's own planner has none over DATE, TIME, TIMESTAMP and CHAR and refuses
 * those queries; aggforge on must refuse them the same way (2.x has them all).
 */
class FirstLastParityTest {

    private static final LogicalType[] TYPES = TypeParityTest.TYPES;

    private static final String SQL =
            "SELECT k, FIRST_VALUE(v0), LAST_VALUE(v0), COUNT(*) FROM t GROUP BY k";

    static Stream<Arguments> types() {
        return Stream.of(TYPES).map(t -> Arguments.of(t.asSummaryString()));
    }

    private static InputTable table(String summary) {
        for (LogicalType type : TYPES) {
            if (type.asSummaryString().equals(summary)) {
                return InputTable.generated("t", 2_000, 23, 1.0 / 6, 19, type);
            }
        }
        throw new IllegalArgumentException(summary);
    }

    @ParameterizedTest(name = "FIRST_VALUE/LAST_VALUE({0}) immediate")
    @MethodSource("types")
    void immediate(String type) throws Exception {
        NativeParity.assertParityOrRefusedOnFlink1(RunOptions.defaults(), 1, SQL, table(type));
    }

    @ParameterizedTest(name = "FIRST_VALUE/LAST_VALUE({0}) mini-batch")
    @MethodSource("types")
    void miniBatch(String type) throws Exception {
        NativeParity.assertParityOrRefusedOnFlink1(
                RunOptions.defaults().withMiniBatch(97).withAggPhase("ONE_PHASE"), 1, SQL, table(type));
    }

    @Test
    void twoPhaseConfigurationPlansOneAggregate() throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(64).withAggPhase("TWO_PHASE"),
                Compare.LINES,
                1,
                SQL,
                table("BIGINT"));
    }

    @Test
    void upsertWithoutUpdateBefore() throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withUpdateBefore(false),
                Compare.LINES,
                1,
                "SELECT k, LAST_VALUE(v0), FIRST_VALUE(v0) FROM t GROUP BY k",
                table("STRING"));
    }

    @Test
    void besideOtherFunctionsAndNoGroupBy() throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults(),
                Compare.LINES,
                1,
                "SELECT FIRST_VALUE(v0), MIN(v0), LAST_VALUE(v0), MAX(v0), SUM(v0) FROM t",
                table("DOUBLE"));
    }

    /** A nested GROUP BY: the outer calls fold the inner aggregate's -U/+U changes. */
    private static final String NESTED =
            "SELECT MOD(c, 5), FIRST_VALUE(v), LAST_VALUE(v), COUNT(*) FROM"
                    + " (SELECT k, COUNT(*) AS c, MAX(v0) AS v FROM t GROUP BY k) GROUP BY MOD(c, 5)";

    @ParameterizedTest(name = "over retracting input, FIRST_VALUE/LAST_VALUE({0}) immediate")
    @MethodSource("types")
    void retractingImmediate(String type) throws Exception {
        NativeParity.assertParityOrRefusedOnFlink1(RunOptions.defaults(), 2, NESTED, table(type));
    }

    @ParameterizedTest(name = "over retracting input, FIRST_VALUE/LAST_VALUE({0}) mini-batch")
    @MethodSource("types")
    void retractingMiniBatch(String type) throws Exception {
        NativeParity.assertParityOrRefusedOnFlink1(
                RunOptions.defaults().withMiniBatch(97).withAggPhase("ONE_PHASE"),
                2,
                NESTED,
                table(type));
    }

    @Test
    void retractingUpsertWithoutUpdateBefore() throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withUpdateBefore(false), Compare.LINES, 2, NESTED, table("DOUBLE"));
    }

    @Test
    void retractingTwoPhaseConfiguration() throws Exception {
        // The inner aggregate splits (local and global); the outer one never does.
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(64).withAggPhase("TWO_PHASE"),
                Compare.LINES,
                3,
                NESTED,
                table("STRING"));
    }

    @Test
    void retractingKeysLeaveAndComeBack() throws Exception {
        // Few outer keys, many changes each: values leave the middle and both ends of the lists.
        String sql =
                "SELECT MOD(s, 3), FIRST_VALUE(k), LAST_VALUE(k), FIRST_VALUE(s), LAST_VALUE(s) FROM"
                        + " (SELECT k, SUM(v0) AS s FROM t GROUP BY k) GROUP BY MOD(s, 3)";
        Changelog expected =
                NativeParity.assertParity(RunOptions.defaults(), Compare.LINES, 2, sql, table("BIGINT"));
        assertFalse(expected.rows().isEmpty());
    }
}
