package dev.aggforge.flink.parity;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.parity.NativeParity.Compare;

/**
 * AGG(...) FILTER (WHERE ...): the condition reaches the native operator as a BOOLEAN input
 * column; a row folds into a call only where it is true. Every plan shape, plain and DISTINCT
 * calls, against stock Flink's complete changelog.
 */
class FilterParityTest {

    private static final RunOptions ONE = RunOptions.defaults();

    private static final InputTable T =
            InputTable.generated(
                    "t",
                    4_000,
                    37,
                    1.0 / 6,
                    57,
                    new BigIntType(),
                    new DoubleType(),
                    new DecimalType(20, 3),
                    new VarCharType(VarCharType.MAX_LENGTH));

    /** Plain calls only: these run in two-phase plans too. */
    private static final String PLAIN =
            "SELECT k, COUNT(*) FILTER (WHERE v0 > 0), SUM(v0) FILTER (WHERE v1 < 0.5),"
                    + " MIN(v0) FILTER (WHERE v3 LIKE 'a%'), MAX(v2) FILTER (WHERE v0 < 0),"
                    + " AVG(v2) FILTER (WHERE v0 > 0), COUNT(v3) FILTER (WHERE v1 IS NULL),"
                    + " COUNT(*), SUM(v0) FROM t GROUP BY k";

    /** DISTINCT calls with and without a FILTER over the same argument. */
    private static final String WITH_DISTINCT =
            "SELECT k, COUNT(DISTINCT MOD(v0, 9)) FILTER (WHERE v1 > 0.25),"
                    + " COUNT(DISTINCT MOD(v0, 9)), SUM(DISTINCT MOD(v0, 9)) FILTER (WHERE v0 > 0),"
                    + " MAX(v0) FILTER (WHERE v1 > 0.25) FROM t GROUP BY k";

    private static final String NESTED =
            "SELECT MOD(k, 5), COUNT(*) FILTER (WHERE s > 0), SUM(s) FILTER (WHERE c > 100),"
                    + " MIN(s) FILTER (WHERE s < 1000), COUNT(DISTINCT c) FILTER (WHERE s > 0)"
                    + " FROM (SELECT k, SUM(v0) AS s, COUNT(*) AS c FROM t GROUP BY k)"
                    + " GROUP BY MOD(k, 5)";

    @Test
    void plainImmediate() throws Exception {
        NativeParity.assertParity(ONE, Compare.LINES, 1, PLAIN, T);
    }

    @Test
    void plainMiniBatchOnePhase() throws Exception {
        NativeParity.assertParity(
                ONE.withMiniBatch(64).withAggPhase("ONE_PHASE"), Compare.LINES, 1, PLAIN, T);
    }

    @Test
    void plainTwoPhase() throws Exception {
        NativeParity.assertParity(
                ONE.withMiniBatch(64).withAggPhase("TWO_PHASE"), Compare.LINES, 2, PLAIN, T);
    }

    @Test
    void withDistinctImmediate() throws Exception {
        NativeParity.assertParity(ONE, Compare.LINES, 1, WITH_DISTINCT, T);
    }

    @Test
    void withDistinctMiniBatchOnePhase() throws Exception {
        NativeParity.assertParity(
                ONE.withMiniBatch(64).withAggPhase("ONE_PHASE"), Compare.LINES, 1, WITH_DISTINCT, T);
    }

    @Test
    void retractingInput() throws Exception {
        NativeParity.assertParity(ONE, Compare.LINES, 2, NESTED, T);
    }

    @Test
    void retractingInputMiniBatchOnePhase() throws Exception {
        NativeParity.assertParity(
                ONE.withMiniBatch(64).withAggPhase("ONE_PHASE"), Compare.LINES, 2, NESTED, T);
    }
}
