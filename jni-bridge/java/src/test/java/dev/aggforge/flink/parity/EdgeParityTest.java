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
import dev.aggforge.flink.operator.NativeGroupAggOperator;
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
    void nullOnlyGroups() throws Exception {
        // Key 1 sees only NULL values, key 2 NULLs around values, key 3 one NULL.
        InputTable t =
                InputTable.of(
                        "t",
                        List.of(FIELD("k", INT()), FIELD("v", DECIMAL(20, 3)), FIELD("s", STRING())),
                        Row.of(1, null, null),
                        Row.of(2, null, "b"),
                        Row.of(1, null, null),
                        Row.of(2, new BigDecimal("1.500"), null),
                        Row.of(3, null, null),
                        Row.of(2, null, "a"),
                        Row.of(1, null, null));
        Changelog log =
                NativeParity.assertParity(
                        ONE,
                        Compare.LINES,
                        1,
                        "SELECT k, MIN(v), MAX(s), COUNT(v), SUM(v), AVG(v), COUNT(*) FROM t GROUP BY k",
                        t);
        assertEquals("+I[1, null, null, 0, null, null, 1]", log.lines().get(0));
    }

    @Test
    void oneKeyManyRows() throws Exception {
        InputTable t = InputTable.generated("t", 5_000, 1, 1.0 / 9, 3, new BigIntType(), new DoubleType());
        NativeParity.assertParity(
                ONE.withMiniBatch(128).withAggPhase("ONE_PHASE"),
                Compare.LINES,
                1,
                "SELECT k, MIN(v0), MAX(v1), SUM(v0), AVG(v1), COUNT(*) FROM t GROUP BY k",
                t);
    }

    @Test
    void manyKeysFewRowsEach() throws Exception {
        InputTable t = InputTable.generated("t", 6_000, 4_000, 1.0 / 9, 4, new BigIntType(), new DoubleType());
        NativeParity.assertParity(
                ONE,
                Compare.LINES,
                1,
                "SELECT k, MIN(v0), MAX(v1), SUM(v0), AVG(v1), COUNT(*) FROM t GROUP BY k",
                t);
    }

    @Test
    void emptyInputEmitsNothingOnBothEngines() throws Exception {
        // Keys are 0..9: the filter passes no row, which the planner cannot know.
        InputTable t = InputTable.generated("t", 1_000, 10, 0.1, 8, new DoubleType());
        String sql = "SELECT k, MIN(v0), SUM(v0), COUNT(*) FROM t WHERE k < 0 GROUP BY k";
        RunOptions hooked = NativeParity.withAggforge(ONE);
        String plan = SqlHarness.explain(hooked, sql, t);
        assertTrue(plan.contains("AggforgeGroupAggregate("), plan);
        long opened = NativeGroupAggOperator.OPENED.get();
        assertEquals(List.of(), SqlHarness.run(ONE, sql, t).lines());
        assertEquals(List.of(), SqlHarness.run(hooked, sql, t).lines());
        assertTrue(NativeGroupAggOperator.OPENED.get() > opened, "no native operator was opened");
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
    void filteredAndDistinctAggregatesRunNatively() throws Exception {
        NativeParity.assertParity(
                ONE,
                Compare.LINES,
                1,
                "SELECT k, COUNT(DISTINCT v1), SUM(v1) FILTER (WHERE v1 > 0) FROM t GROUP BY k",
                MIXED);
    }

    @Test
    void otherFunctionsStayOnFlink() throws Exception {
        String sql = "SELECT k, JSON_ARRAYAGG(v0), COUNT(*) FROM t GROUP BY k";
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
