package dev.aggforge.flink.parity;

import static org.apache.flink.table.api.DataTypes.DECIMAL;
import static org.apache.flink.table.api.DataTypes.DOUBLE;
import static org.apache.flink.table.api.DataTypes.FIELD;
import static org.apache.flink.table.api.DataTypes.INT;
import static org.apache.flink.table.api.DataTypes.STRING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.harness.Changelog;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.parity.NativeParity.Compare;

/** Stock Flink against aggforge on the semantic traps of docs/flink-semantics.md and plan shapes. */
class EdgeParityTest {

    private static final RunOptions ONE = RunOptions.defaults();

    private static final InputTable MIXED =
            InputTable.generated(
                    "t",
                    3_000,
                    41,
                    1.0 / 5,
                    23,
                    new VarCharType(VarCharType.MAX_LENGTH),
                    new BigIntType(),
                    new DoubleType(),
                    new DecimalType(20, 3));

    private static final String MIXED_SQL =
            "SELECT k, MIN(v0), MAX(v0), COUNT(v0), SUM(v1), AVG(v1), MIN(v2), MAX(v2), SUM(v3),"
                    + " AVG(v3), COUNT(*) FROM t GROUP BY k";

    @Test
    void nanFirstStaysAndIsReEmitted() throws Exception {
        InputTable t =
                InputTable.of(
                        "t",
                        List.of(FIELD("k", INT()), FIELD("v", DOUBLE())),
                        Row.of(1, Double.NaN),
                        Row.of(1, 1.0),
                        Row.of(2, 1.0),
                        Row.of(2, Double.NaN),
                        Row.of(1, -1.0),
                        Row.of(2, -0.0),
                        Row.of(2, 0.0));
        Changelog log =
                NativeParity.assertParity(
                        ONE, Compare.LINES, 1, "SELECT k, MIN(v), MAX(v), SUM(v) FROM t GROUP BY k", t);
        assertEquals("+I[1, NaN, NaN, NaN]", log.lines().get(0));
    }

    @Test
    void decimalSumOverflowIsNullThenRestarts() throws Exception {
        BigDecimal max = new BigDecimal("99999999999999999999999999999999999999");
        InputTable t =
                InputTable.of(
                        "t",
                        List.of(FIELD("k", INT()), FIELD("v", DECIMAL(38, 0))),
                        Row.of(1, max),
                        Row.of(1, BigDecimal.ONE),
                        Row.of(1, new BigDecimal(5)),
                        Row.of(2, new BigDecimal(-7)));
        NativeParity.assertParity(
                ONE, Compare.LINES, 1, "SELECT k, SUM(v), AVG(v), MIN(v) FROM t GROUP BY k", t);
    }

    @Test
    void mixedTypesImmediate() throws Exception {
        NativeParity.assertParity(ONE, Compare.LINES, 1, MIXED_SQL, MIXED);
    }

    @Test
    void mixedTypesWithStateTtlReEmitUnchangedResults() throws Exception {
        NativeParity.assertParity(
                ONE.withStateTtl(Duration.ofHours(1)), Compare.LINES, 1, MIXED_SQL, MIXED);
    }

    @Test
    void mixedTypesAtParallelismTwoPerKey() throws Exception {
        NativeParity.assertParity(ONE.withParallelism(2), Compare.PER_KEY, 1, MIXED_SQL, MIXED);
    }

    @Test
    void mixedTypesTwoPhaseAtParallelismTwoPerKey() throws Exception {
        NativeParity.assertParity(
                ONE.withParallelism(2).withMiniBatch(50).withAggPhase("TWO_PHASE"),
                Compare.PER_KEY,
                2,
                MIXED_SQL,
                MIXED);
    }

    @Test
    void compositeStringAndIntKeys() throws Exception {
        InputTable t =
                InputTable.generated(
                        "t", 2_000, 17, 1.0 / 7, 5, new VarCharType(VarCharType.MAX_LENGTH), new IntType());
        NativeParity.assertParity(
                ONE.withMiniBatch(33).withAggPhase("ONE_PHASE"),
                Compare.LINES,
                1,
                "SELECT SUBSTRING(v0, 1, 1) AS p, k, COUNT(*), SUM(v1), MAX(v0) FROM t"
                        + " GROUP BY SUBSTRING(v0, 1, 1), k",
                t);
    }

    @Test
    void noGroupingKeys() throws Exception {
        NativeParity.assertParity(
                ONE, Compare.LINES, 1, "SELECT COUNT(*), SUM(v1), MIN(v0) FROM t", MIXED);
    }

    @Test
    void retractingOuterAggregateRunsNativelyToo() throws Exception {
        NativeParity.assertParity(
                ONE,
                Compare.LINES,
                2,
                "SELECT c, COUNT(*) FROM (SELECT k, COUNT(*) AS c FROM t GROUP BY k) GROUP BY c",
                MIXED);
    }

    @Test
    void filteredAndDistinctAggregatesStayOnFlink() throws Exception {
        String sql = "SELECT k, COUNT(DISTINCT v1), SUM(v1) FILTER (WHERE v1 > 0) FROM t GROUP BY k";
        String plan = SqlHarness.explain(NativeParity.withAggforge(ONE), sql, MIXED);
        assertFalse(plan.contains("Aggforge"), plan);
        assertTrue(plan.contains("GroupAggregate("), plan);
        assertEquals(
                SqlHarness.run(ONE, sql, MIXED).lines(),
                SqlHarness.run(NativeParity.withAggforge(ONE), sql, MIXED).lines());
    }

    @Test
    void stringKeysWithMultiByteCharacters() throws Exception {
        InputTable t =
                InputTable.of(
                        "t",
                        List.of(FIELD("s", STRING()), FIELD("v", STRING())),
                        Row.of("é", "z"),
                        Row.of("a", "é"),
                        Row.of("é", "ß"),
                        Row.of("longer key than seven bytes", "Z"),
                        Row.of("a", null),
                        Row.of("longer key than seven bytes", "zz"));
        NativeParity.assertParity(
                ONE, Compare.LINES, 1, "SELECT s, MIN(v), MAX(v), COUNT(v) FROM t GROUP BY s", t);
    }
}
