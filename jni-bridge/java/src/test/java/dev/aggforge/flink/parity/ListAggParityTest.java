package dev.aggforge.flink.parity;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.types.logical.CharType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.aggforge.flink.harness.Changelog;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.parity.NativeParity.Compare;

/**
 * LISTAGG with and without a separator. Over insert-only input Flink's declarative ListAggFunction
 * (a concatenation and the latest separator per key, merged in the global phase); over retracting
 * input ListAggWithRetractAggFunction / ListAggWsWithRetractAggFunction (the live values in
 * arrival order, a retraction removing the first equal one). Parallelism 1 where element order
 * depends on arrival order across subtasks (stock Flink's own output varies there).
 */
class ListAggParityTest {

    private static final String SQL =
            "SELECT k, LISTAGG(v0), LISTAGG(v0, ' | '), COUNT(*) FROM t GROUP BY k";

    private static InputTable table(LogicalType type) {
        return InputTable.generated("t", 2_000, 23, 1.0 / 6, 31, type);
    }

    private static InputTable strings() {
        return table(new VarCharType(VarCharType.MAX_LENGTH));
    }

    @ParameterizedTest(name = "LISTAGG over CHAR(5) or STRING, mini-batch {0}")
    @ValueSource(booleans = {false, true})
    void charAndString(boolean miniBatch) throws Exception {
        RunOptions options = RunOptions.defaults();
        if (miniBatch) {
            options = options.withMiniBatch(97).withAggPhase("ONE_PHASE");
        }
        NativeParity.assertParity(options, Compare.LINES, 1, SQL, table(new CharType(5)));
        NativeParity.assertParity(options, Compare.LINES, 1, SQL, strings());
    }

    @Test
    void twoPhase() throws Exception {
        // Local and global: the partial (accDelimiter, concatAcc) crosses the exchange.
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(64).withAggPhase("TWO_PHASE"),
                Compare.LINES,
                2,
                SQL,
                strings());
    }

    @Test
    void twoPhaseParallelFinalTable() throws Exception {
        // Two subtasks: the order in which partials reach the global phase varies from run to
        // run (stock Flink's too), so only order-free facts of the concatenation are compared.
        String sql =
                "SELECT k, COUNT(*), CHAR_LENGTH(LISTAGG(v0, '')), LISTAGG(v0) IS NULL FROM t GROUP BY k";
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(64).withAggPhase("TWO_PHASE").withParallelism(2),
                Compare.FINAL_TABLE,
                2,
                sql,
                strings());
    }

    @Test
    void upsertWithoutUpdateBeforeAndFilter() throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withUpdateBefore(false),
                Compare.LINES,
                1,
                "SELECT k, LISTAGG(v0, ';') FILTER (WHERE CHAR_LENGTH(v0) > 3), LISTAGG(v0)"
                        + " FROM t GROUP BY k",
                strings());
    }

    @Test
    void noGroupByBesideOtherFunctions() throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults(),
                Compare.LINES,
                1,
                "SELECT LISTAGG(v0, '-'), MIN(v0), COUNT(v0), FIRST_VALUE(v0) FROM t",
                strings());
    }

    @Test
    void nullOnlyAndEmptyStringGroups() throws Exception {
        InputTable rows =
                InputTable.of(
                        "t",
                        List.of(
                                DataTypes.FIELD("k", DataTypes.INT()),
                                DataTypes.FIELD("v0", DataTypes.STRING())),
                        Row.of(1, null),
                        Row.of(2, ""),
                        Row.of(1, null),
                        Row.of(2, ""),
                        Row.of(2, "x"),
                        Row.of(3, "a"),
                        Row.of(1, "b"));
        NativeParity.assertParity(
                RunOptions.defaults(), Compare.LINES, 1, "SELECT k, LISTAGG(v0), LISTAGG(v0, '') FROM t GROUP BY k", rows);
    }

    @ParameterizedTest(name = "LISTAGG(DISTINCT), mini-batch {0}")
    @ValueSource(booleans = {false, true})
    void distinct(boolean miniBatch) throws Exception {
        // Each value joins when it first enters the key's set, under the view COUNT(DISTINCT)
        // shares.
        RunOptions options = RunOptions.defaults();
        if (miniBatch) {
            options = options.withMiniBatch(97).withAggPhase("ONE_PHASE");
        }
        NativeParity.assertParity(
                options,
                Compare.LINES,
                1,
                "SELECT k, LISTAGG(DISTINCT v0), COUNT(DISTINCT v0), LISTAGG(v0) FROM t GROUP BY k",
                table(new CharType(5)));
    }

    @Test
    void distinctTwoPhase() throws Exception {
        // The global phase concatenates values as they enter its view, in the iteration order
        // of Java HashMaps of BinaryStringData (the local bundle's, then the union's): the
        // view's values are ordered by their string hash codes.
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(64).withAggPhase("TWO_PHASE"),
                Compare.LINES,
                2,
                "SELECT k, LISTAGG(DISTINCT v0), COUNT(DISTINCT v0), LISTAGG(v0), COUNT(*)"
                        + " FROM t GROUP BY k",
                strings());
    }

    @Test
    void distinctTwoPhaseWithFilterFewKeys() throws Exception {
        // Few keys and small bundles: many values per key and view, several partials per key
        // and bundle, a FILTER splitting one view between two calls.
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(11).withAggPhase("TWO_PHASE"),
                Compare.LINES,
                2,
                "SELECT MOD(k, 3), LISTAGG(DISTINCT v0),"
                        + " LISTAGG(DISTINCT v0) FILTER (WHERE CHAR_LENGTH(v0) > 3)"
                        + " FROM t GROUP BY MOD(k, 3)",
                strings());
    }

    @Test
    void distinctOverRetractingInput() throws Exception {
        String sql =
                "SELECT MOD(c, 4), LISTAGG(DISTINCT v), COUNT(*) FROM"
                        + " (SELECT k, COUNT(*) AS c, MIN(v0) AS v FROM t GROUP BY k) GROUP BY MOD(c, 4)";
        NativeParity.assertParity(RunOptions.defaults(), Compare.LINES, 2, sql, strings());
    }

    /** A nested GROUP BY: the outer LISTAGG folds the inner aggregate's -U/+U changes. */
    private static final String NESTED =
            "SELECT MOD(c, 5), LISTAGG(v), LISTAGG(v, '/'), COUNT(*) FROM"
                    + " (SELECT k, COUNT(*) AS c, MAX(v0) AS v FROM t GROUP BY k) GROUP BY MOD(c, 5)";

    @ParameterizedTest(name = "over retracting input, mini-batch {0}")
    @ValueSource(booleans = {false, true})
    void retracting(boolean miniBatch) throws Exception {
        RunOptions options = RunOptions.defaults();
        if (miniBatch) {
            options = options.withMiniBatch(97).withAggPhase("ONE_PHASE");
        }
        Changelog expected = NativeParity.assertParity(options, Compare.LINES, 2, NESTED, strings());
        assertTrue(expected.rows().stream().anyMatch(r -> r.getKind() == RowKind.UPDATE_BEFORE));
    }

    @Test
    void retractingUpsertWithoutUpdateBefore() throws Exception {
        NativeParity.assertParity(
                RunOptions.defaults().withUpdateBefore(false), Compare.LINES, 2, NESTED, strings());
    }

    @Test
    void retractingMiddleElements() throws Exception {
        // Few outer keys, many changes each: values leave the middle and both ends of the lists.
        String sql =
                "SELECT MOD(s, 3), LISTAGG(CAST(k AS STRING)), LISTAGG(CAST(s AS STRING), '') FROM"
                        + " (SELECT k, SUM(CHAR_LENGTH(v0)) AS s FROM t GROUP BY k) GROUP BY MOD(s, 3)";
        Changelog expected =
                NativeParity.assertParity(RunOptions.defaults(), Compare.LINES, 2, sql, strings());
        assertFalse(expected.rows().isEmpty());
    }

    @Test
    void retractingTwoPhase() throws Exception {
        // Both levels split into local and global: the outer LISTAGG's partial is Flink's
        // accumulator (list, retractList[, delimiter]), ListViews included.
        RunOptions options = RunOptions.defaults().withMiniBatch(64).withAggPhase("TWO_PHASE");
        NativeParity.assertParity(options, Compare.LINES, 4, NESTED, strings());
    }

    @Test
    void retractingTwoPhaseMiddleElementsAndRetractLists() throws Exception {
        // Few outer keys and small bundles: a local bundle often retracts a value an earlier
        // bundle added, so partials carry retractLists the global merge applies.
        String sql =
                "SELECT MOD(s, 3), LISTAGG(CAST(k AS STRING)), LISTAGG(CAST(s AS STRING), '') FROM"
                        + " (SELECT k, SUM(CHAR_LENGTH(v0)) AS s FROM t GROUP BY k) GROUP BY MOD(s, 3)";
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(7).withAggPhase("TWO_PHASE"),
                Compare.LINES,
                4,
                sql,
                strings());
    }

    @Test
    void retractingTwoPhaseParallelFinalTable() throws Exception {
        // At parallelism 2 the order values reach an outer key from two inner tasks races (on
        // stock Flink too), so each outer key here has one live value at a time: its lists'
        // order is fixed, and the partials still carry retractions across the exchange.
        String sql =
                "SELECT k, LISTAGG(v), LISTAGG(v, '/'), COUNT(*) FROM"
                        + " (SELECT k, MAX(v0) AS v FROM t GROUP BY k) GROUP BY k";
        NativeParity.assertParity(
                RunOptions.defaults().withMiniBatch(64).withAggPhase("TWO_PHASE").withParallelism(2),
                Compare.FINAL_TABLE,
                4,
                sql,
                strings());
    }
}
