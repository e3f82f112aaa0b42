package dev.aggforge.flink.harness;

import static org.apache.flink.table.api.DataTypes.DECIMAL;
import static org.apache.flink.table.api.DataTypes.DOUBLE;
import static org.apache.flink.table.api.DataTypes.FIELD;
import static org.apache.flink.table.api.DataTypes.INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

/**
 * The parity harness on stock Flink 2.2: queries whose complete changelog is known from
 * docs/flink-semantics.md.
 */
class StockSemanticsTest {

    private static final RunOptions ONE = RunOptions.defaults();

    private static InputTable ints(String name, int[][] rows) {
        List<Row> list = new ArrayList<>();
        for (int[] row : rows) {
            list.add(Row.of(row[0], row[1]));
        }
        return InputTable.of(
                name,
                org.apache.flink.table.api.DataTypes.ROW(FIELD("k", INT()), FIELD("v", INT())),
                list);
    }

    @Test
    void nanMinAndMaxStayAndAreReEmittedOnEveryRow() throws Exception {
        InputTable t =
                InputTable.of(
                        "t",
                        List.of(FIELD("k", INT()), FIELD("v", DOUBLE())),
                        Row.of(1, Double.NaN),
                        Row.of(1, 1.0),
                        Row.of(1, -1.0));
        Changelog log = SqlHarness.run(ONE, "SELECT k, MIN(v), MAX(v) FROM t GROUP BY k", t);
        assertEquals(
                List.of(
                        "+I[1, NaN, NaN]",
                        "-U[1, NaN, NaN]",
                        "+U[1, NaN, NaN]",
                        "-U[1, NaN, NaN]",
                        "+U[1, NaN, NaN]"),
                log.lines());
    }

    @Test
    void decimalSumOverflowsToNullThenRestarts() throws Exception {
        BigDecimal max = new BigDecimal("99999999999999999999999999999999999999");
        InputTable t =
                InputTable.of(
                        "t",
                        List.of(FIELD("k", INT()), FIELD("v", DECIMAL(38, 0))),
                        Row.of(1, max),
                        Row.of(1, BigDecimal.ONE),
                        Row.of(1, new BigDecimal(5)));
        Changelog log = SqlHarness.run(ONE, "SELECT k, SUM(v) FROM t GROUP BY k", t);
        assertEquals(
                List.of(
                        "+I[1, " + max + "]",
                        "-U[1, " + max + "]",
                        "+U[1, null]",
                        "-U[1, null]",
                        "+U[1, 5]"),
                log.lines());
    }

    @Test
    void updateBeforeFollowsWhatTheSinkNeeds() throws Exception {
        InputTable t = ints("t", new int[][] {{1, 1}, {1, 2}, {2, 5}, {1, 3}});
        String sql = "SELECT k, SUM(v) FROM t GROUP BY k";
        assertEquals(
                List.of("+I[1, 1]", "-U[1, 1]", "+U[1, 3]", "+I[2, 5]", "-U[1, 3]", "+U[1, 6]"),
                SqlHarness.run(ONE, sql, t).lines());
        assertEquals(
                List.of("+I[1, 1]", "+U[1, 3]", "+I[2, 5]", "+U[1, 6]"),
                SqlHarness.run(ONE.withUpdateBefore(false), sql, t).lines());
    }

    @Test
    void unchangedResultsAreSuppressedUnlessStateTtlIsSet() throws Exception {
        InputTable t = ints("t", new int[][] {{1, 5}, {1, 3}, {1, 5}});
        String sql = "SELECT k, MAX(v) FROM t GROUP BY k";
        assertEquals(List.of("+I[1, 5]"), SqlHarness.run(ONE, sql, t).lines());
        assertEquals(
                List.of("+I[1, 5]", "-U[1, 5]", "+U[1, 5]", "-U[1, 5]", "+U[1, 5]"),
                SqlHarness.run(ONE.withStateTtl(Duration.ofHours(1)), sql, t).lines());
    }

    @Test
    void retractingInputFromAnInnerGroupBy() throws Exception {
        InputTable t = ints("t", new int[][] {{1, 0}, {1, 0}, {2, 0}});
        String sql =
                "SELECT cnt, COUNT(*) AS n FROM (SELECT k, COUNT(*) AS cnt FROM t GROUP BY k)"
                        + " GROUP BY cnt";
        assertEquals(
                List.of("+I[1, 1]", "-D[1, 1]", "+I[2, 1]", "+I[1, 1]"),
                SqlHarness.run(ONE, sql, t).lines());
    }

    @Test
    void miniBatchEmitsOncePerKeyInHashMapOrder() throws Exception {
        int[] keys = {1, 2, 3, 17, 100, 1, 42, 5, 6, 7};
        int[][] rows = new int[keys.length][];
        for (int i = 0; i < keys.length; i++) {
            rows[i] = new int[] {keys[i], i};
        }
        InputTable t = ints("t", rows);
        String sql = "SELECT k, MAX(v) FROM t GROUP BY k";
        List<String> expected =
                List.of(
                        "+I[3, 2]", "+I[100, 4]", "+I[7, 9]", "+I[2, 1]", "+I[17, 3]", "+I[5, 7]",
                        "+I[1, 5]", "+I[42, 6]", "+I[6, 8]");
        RunOptions miniBatch = ONE.withMiniBatch(1000);
        assertEquals(expected, SqlHarness.run(miniBatch.withAggPhase("ONE_PHASE"), sql, t).lines());
        assertEquals(expected, SqlHarness.run(miniBatch.withAggPhase("TWO_PHASE"), sql, t).lines());
        // Immediate mode: one emission per input row that changes the result, in input order.
        Changelog immediate = SqlHarness.run(ONE, sql, t);
        assertEquals(11, immediate.rows().size());
        assertEquals("+I[1, 0]", immediate.lines().get(0));
        assertEquals(immediate.finalTable(0), SqlHarness.run(miniBatch, sql, t).finalTable(0));
    }

    @Test
    void generatedInputAgreesAcrossParallelismPhasesAndMiniBatch() throws Exception {
        InputTable t =
                InputTable.generated("t", 20_000, 50, 1.0 / 8, 42, new DateType(), new BigIntType());
        String sql =
                "SELECT k, MIN(v0), MAX(v0), COUNT(v0), COUNT(*), SUM(v1) FROM t GROUP BY k";
        Changelog base = SqlHarness.run(ONE, sql, t);
        assertEquals(50, base.count(RowKind.INSERT));
        assertEquals(base.count(RowKind.UPDATE_BEFORE), base.count(RowKind.UPDATE_AFTER));
        assertTrue(base.count(RowKind.UPDATE_AFTER) > 1000, base.count(RowKind.UPDATE_AFTER) + " updates");
        List<String> table = base.finalTable(0);
        assertEquals(50, table.size());

        Changelog parallel = SqlHarness.run(ONE.withParallelism(2), sql, t);
        assertEquals(base.perKey(0), parallel.perKey(0));

        RunOptions twoPhase = ONE.withMiniBatch(500).withAggPhase("TWO_PHASE");
        assertTrue(SqlHarness.explain(twoPhase, sql, t).contains("LocalGroupAggregate"));
        Changelog bundled = SqlHarness.run(twoPhase.withParallelism(2), sql, t);
        assertEquals(table, bundled.finalTable(0));
        assertTrue(bundled.rows().size() < base.rows().size() / 4, bundled.rows().size() + " rows");

        Changelog upsert = SqlHarness.run(ONE.withUpdateBefore(false), sql, t);
        assertEquals(0, upsert.count(RowKind.UPDATE_BEFORE));
        assertEquals(table, upsert.finalTable(0));
        assertFalse(upsert.rows().isEmpty());
    }
}
