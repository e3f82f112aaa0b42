package dev.aggforge.flink.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.operator.NativeAggregateOperator;
import dev.aggforge.flink.parity.NativeParity.Compare;

/**
 * {@code table.exec.aggforge.jit}: with the JIT on, a plan's fixed-width calls fold in one
 * compiled loop (the local phase and the mini-batch single phase, over insert-only and over
 * retracting input) and the changelog is still stock Flink's; off, and {@code auto} with one fusable call, nothing is
 * fused. The whole parity suite also runs with the JIT forced on in CI ({@code
 * -Daggforge.test.jit=on}).
 */
class JitParityTest {

    private static final InputTable T =
            InputTable.generated(
                    "t",
                    5_000,
                    41,
                    1.0 / 7,
                    91,
                    new BigIntType(),
                    new DoubleType(),
                    new IntType(),
                    new VarCharType(VarCharType.MAX_LENGTH));

    /** Fixed-width calls (NULLs, FILTERs, NaN-free doubles) beside a string call that stays static. */
    private static final String CALLS =
            "SELECT k, COUNT(*), COUNT(*) FILTER (WHERE v0 > 0), MIN(v0), MAX(v0), SUM(v0), AVG(v0),"
                    + " MIN(v1), MAX(v1) FILTER (WHERE v2 < 0), SUM(v1), COUNT(v2), SUM(v2),"
                    + " MAX(v3) FROM t GROUP BY k";

    private static final String ONE_CALL = "SELECT k, MIN(v0) FROM t GROUP BY k";

    /**
     * An aggregate over a changelog: the inner MAX over VARCHAR has no fixed-width lowering (its
     * operator never fuses), so only the outer operator, which reads -U/+U rows, can count as
     * fused. Its COUNTs, SUMs and AVG fuse with their retractions; MAX with retraction keeps its
     * static multiset.
     */
    private static final String RETRACTING =
            "SELECT CHAR_LENGTH(m), COUNT(*), COUNT(*) FILTER (WHERE k > 10), COUNT(m), SUM(k),"
                    + " AVG(k), SUM(CAST(k AS DOUBLE) / 4), MAX(k)"
                    + " FROM (SELECT k, MAX(v3) AS m FROM t GROUP BY k) GROUP BY CHAR_LENGTH(m)";

    private static RunOptions jit(String mode, String phase) {
        return RunOptions.defaults()
                .withMiniBatch(64)
                .withAggPhase(phase)
                .withConfig(AggforgeOptions.JIT.key(), mode);
    }

    /** Runs the parity check; returns how many native operators fused their calls. */
    private static long fusedOperators(RunOptions options, int operators, String sql)
            throws Exception {
        long before = NativeAggregateOperator.FUSED.get();
        NativeParity.assertParity(options, Compare.LINES, operators, sql, T);
        return NativeAggregateOperator.FUSED.get() - before;
    }

    @Test
    void onFusesTheMiniBatchSinglePhase() throws Exception {
        assertTrue(fusedOperators(jit("on", "ONE_PHASE"), 1, CALLS) >= 1);
    }

    @Test
    void onFusesTheLocalPhaseOfATwoPhasePlan() throws Exception {
        // The global phase merges partials: only the local phase fuses.
        assertTrue(fusedOperators(jit("on", "TWO_PHASE"), 2, CALLS) >= 1);
    }

    @Test
    void offFusesNothing() throws Exception {
        assertEquals(0, fusedOperators(jit("off", "TWO_PHASE"), 2, CALLS));
    }

    @Test
    void autoLeavesASingleCallOnItsKernelAndOnFusesIt() throws Exception {
        assertEquals(0, fusedOperators(jit("auto", "ONE_PHASE"), 1, ONE_CALL));
        assertTrue(fusedOperators(jit("on", "ONE_PHASE"), 1, ONE_CALL) >= 1);
    }

    @Test
    void onFusesRetractingInput() throws Exception {
        assertTrue(fusedOperators(jit("on", "ONE_PHASE"), 2, RETRACTING) >= 1);
        assertTrue(fusedOperators(jit("on", "TWO_PHASE"), 4, RETRACTING) >= 1);
        assertEquals(0, fusedOperators(jit("off", "ONE_PHASE"), 2, RETRACTING));
    }

    @Test
    void autoFusesAListOfCalls() throws Exception {
        assertTrue(fusedOperators(jit("auto", "ONE_PHASE"), 1, CALLS) >= 1);
    }
}
