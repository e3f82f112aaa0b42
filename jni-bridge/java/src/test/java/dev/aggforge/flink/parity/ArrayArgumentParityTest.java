package dev.aggforge.flink.parity;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;

import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.parity.NativeParity.Compare;

/**
 * Stock Flink against aggforge with ARRAY aggregate arguments: COUNT, FIRST_VALUE and LAST_VALUE
 * over an ARRAY of every type row's type (arrays of 0 to 2 elements, NULL elements, NULL arrays 1
 * in 6), over insert-only and retracting input, immediate, mini-batch and two-phase. Where stock
 * Flink's planner has no such function for ARRAY (SINGLE_VALUE; FIRST_VALUE/LAST_VALUE on 1.20),
 * aggforge on must refuse the query the same way ({@link NativeParity#assertParityOrBothRefuse}).
 */
class ArrayArgumentParityTest {

    private static InputTable table(LogicalType element) {
        return InputTable.generated("t", 1_500, 40, 1.0 / 6, 31, new ArrayType(element), new BigIntType());
    }

    static Stream<Arguments> elementTypes() {
        return ArrayKeyParityTest.elementTypes();
    }

    private static LogicalType element(String summary) {
        return ArrayKeyParityTest.element(summary);
    }

    private static final String VALUES =
            "SELECT k, COUNT(v0), FIRST_VALUE(v0), LAST_VALUE(v0), COUNT(*) FROM t GROUP BY k";

    /** The outer calls fold the inner aggregate's -U/+U changes of ARRAY values. */
    private static final String NESTED =
            "SELECT MOD(c, 4), COUNT(a), FIRST_VALUE(a), LAST_VALUE(a) FROM"
                    + " (SELECT k, COUNT(*) AS c, LAST_VALUE(v0) AS a FROM t GROUP BY k)"
                    + " GROUP BY MOD(c, 4)";

    @ParameterizedTest(name = "COUNT/FIRST_VALUE/LAST_VALUE(ARRAY<{0}>) mini-batch")
    @MethodSource("elementTypes")
    void miniBatch(String element) throws Exception {
        NativeParity.assertParityOrRefusedOnFlink1(
                RunOptions.defaults().withMiniBatch(97).withAggPhase("ONE_PHASE"),
                1,
                VALUES,
                table(element(element)));
    }

    @ParameterizedTest(name = "over retracting input, COUNT/FIRST_VALUE/LAST_VALUE(ARRAY<{0}>)")
    @MethodSource("elementTypes")
    void retracting(String element) throws Exception {
        NativeParity.assertParityOrRefusedOnFlink1(RunOptions.defaults(), 2, NESTED, table(element(element)));
    }

    @Test
    void immediate() throws Exception {
        NativeParity.assertParityOrRefusedOnFlink1(
                RunOptions.defaults(), 1, VALUES, table(new VarCharType(VarCharType.MAX_LENGTH)));
    }

    @Test
    void retractingMiniBatchWithoutUpdateBefore() throws Exception {
        NativeParity.assertParityOrRefusedOnFlink1(
                RunOptions.defaults().withMiniBatch(64).withAggPhase("ONE_PHASE").withUpdateBefore(false),
                2,
                NESTED,
                table(new DoubleType()));
    }

    @Test
    void twoPhaseCount() throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(64).withAggPhase("TWO_PHASE"),
                Compare.LINES,
                2,
                "SELECT k, COUNT(v0), COUNT(*) FROM t GROUP BY k",
                table(new IntType()));
    }

    @Test
    void twoPhaseCountOverRetractingInput() throws Exception {
        // The inner aggregate groups by the ARRAY; the outer one counts its -U/+U changes.
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(64).withAggPhase("TWO_PHASE"),
                Compare.LINES,
                4,
                "SELECT MOD(c, 4), COUNT(a), COUNT(*) FROM (SELECT k, v0 AS a, COUNT(*) AS c"
                        + " FROM t GROUP BY k, v0) GROUP BY MOD(c, 4)",
                table(new BigIntType()));
    }

    @Test
    void singleValueStaysRefusedAsOnStockFlink() throws Exception {
        // Flink's planner has no SINGLE_VALUE over ARRAY; aggforge must not make one up.
        assertTrue(
                NativeParity.assertParityOrBothRefuse(
                        RunOptions.defaults(),
                        1,
                        "SELECT k, SINGLE_VALUE(v0) FROM t GROUP BY k",
                        InputTable.generated(
                                "t", 100, InputTable.DISTINCT_KEYS, 1.0 / 6, 41, new ArrayType(new IntType()))));
    }
}
