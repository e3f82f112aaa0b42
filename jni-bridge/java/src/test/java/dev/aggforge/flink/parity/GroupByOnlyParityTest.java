package dev.aggforge.flink.parity;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.parity.NativeParity.Compare;

/**
 * A GROUP BY without aggregate calls (SELECT DISTINCT, GROUP BY used to deduplicate): each key
 * emits +I once over insert-only input, and -D when its record count reaches zero over retracting
 * input. Single phase (the two-phase plans stay on Flink with their reason).
 */
class GroupByOnlyParityTest {

    private static final InputTable T =
            InputTable.generated(
                    "t", 3_000, 50, 1.0 / 6, 61, new BigIntType(), new VarCharType(VarCharType.MAX_LENGTH));

    private static RunOptions options(boolean miniBatch) {
        return miniBatch
                ? RunOptions.defaults().withMiniBatch(97).withAggPhase("ONE_PHASE")
                : RunOptions.defaults();
    }

    @ParameterizedTest(name = "SELECT DISTINCT, mini-batch {0}")
    @ValueSource(booleans = {false, true})
    void selectDistinct(boolean miniBatch) throws Exception {
        NativeParity.assertParity(
                options(miniBatch),
                Compare.LINES,
                1,
                "SELECT DISTINCT k, MOD(v0, 3), SUBSTRING(v1, 1, 1) FROM t",
                T);
        NativeParity.assertParity(options(miniBatch), Compare.LINES, 1, "SELECT k FROM t GROUP BY k", T);
    }

    @ParameterizedTest(name = "over retracting input, mini-batch {0}")
    @ValueSource(booleans = {false, true})
    void overRetractingInput(boolean miniBatch) throws Exception {
        // Keys by their row count: a count leaves its group (-D) as keys move on.
        NativeParity.assertParity(
                options(miniBatch),
                Compare.LINES,
                2,
                "SELECT c FROM (SELECT k, COUNT(*) AS c FROM t GROUP BY k) GROUP BY c",
                T);
    }
}
