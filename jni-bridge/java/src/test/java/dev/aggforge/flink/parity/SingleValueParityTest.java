package dev.aggforge.flink.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.aggforge.flink.harness.CollectingSinkFactory;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.operator.NativeGroupAggOperator;
import dev.aggforge.flink.parity.NativeParity.Compare;

/**
 * SINGLE_VALUE (Flink's SingleValueAggFunction, the aggregate of scalar subqueries): one value per
 * key, NULL counting as a value, for every type row over insert-only and retracting input; a
 * second value fails the query with Flink's error, after exactly the changes stock Flink emitted
 * before failing (immediate mode: the rows before the failing one; mini-batch: the keys before the
 * failing one in the bundle's order).
 */
class SingleValueParityTest {

    private static final LogicalType[] TYPES = TypeParityTest.TYPES;

    static Stream<Arguments> types() {
        return Stream.of(TYPES).map(t -> Arguments.of(t.asSummaryString()));
    }

    private static LogicalType type(String summary) {
        for (LogicalType type : TYPES) {
            if (type.asSummaryString().equals(summary)) {
                return type;
            }
        }
        throw new IllegalArgumentException(summary);
    }

    private static InputTable distinctKeys(LogicalType type) {
        return InputTable.generated("t", 2_000, InputTable.DISTINCT_KEYS, 1.0 / 6, 41, type);
    }

    @ParameterizedTest(name = "SINGLE_VALUE({0}), one row per key")
    @MethodSource("types")
    void oneRowPerKey(String summary) throws Exception {
        parityOrCharFallback(
                RunOptions.defaults(),
                1,
                "SELECT k, SINGLE_VALUE(v0) FROM t GROUP BY k",
                distinctKeys(type(summary)),
                summary);
    }

    @ParameterizedTest(name = "SINGLE_VALUE({0}) over retracting input, one live row per key")
    @MethodSource("types")
    void retractingOneLiveRowPerKey(String summary) throws Exception {
        // The inner aggregate's -U/+U pairs keep one live row per key.
        parityOrCharFallback(
                RunOptions.defaults().withMiniBatch(97).withAggPhase("ONE_PHASE"),
                2,
                "SELECT k, SINGLE_VALUE(m), COUNT(*) FROM"
                        + " (SELECT k, MAX(v0) AS m FROM t GROUP BY k) GROUP BY k",
                InputTable.generated("t", 2_000, 40, 1.0 / 6, 43, type(summary)),
                summary);
    }

    @ParameterizedTest(name = "two-phase SINGLE_VALUE({0}), one row per key")
    @MethodSource("types")
    void twoPhaseOneRowPerKey(String summary) throws Exception {
        parityOrCharFallback(
                RunOptions.defaults().withMiniBatch(97).withAggPhase("TWO_PHASE"),
                2,
                "SELECT k, SINGLE_VALUE(v0) FROM t GROUP BY k",
                distinctKeys(type(summary)),
                summary);
    }

    @ParameterizedTest(name = "two-phase SINGLE_VALUE({0}) over retracting input")
    @MethodSource("types")
    void twoPhaseRetractingOneLiveRowPerKey(String summary) throws Exception {
        // Local bundles retract and re-accumulate a key's value: partials of count 0 and -1.
        parityOrCharFallback(
                RunOptions.defaults().withMiniBatch(37).withAggPhase("TWO_PHASE"),
                4,
                "SELECT k, SINGLE_VALUE(m), COUNT(*) FROM"
                        + " (SELECT k, MAX(v0) AS m FROM t GROUP BY k) GROUP BY k",
                InputTable.generated("t", 2_000, 40, 1.0 / 6, 43, type(summary)),
                summary);
    }

    /**
     * Parity; on Flink 1.20, whose SINGLE_VALUE pads or cuts a CHAR(n) value to n characters (2.x
     * returns it as it came), a SINGLE_VALUE over CHAR stays on Flink with that reason and the
     * results are Flink's.
     */
    private static void parityOrCharFallback(
            RunOptions options, int nativeOperators, String sql, InputTable table, String summary)
            throws Exception {
        boolean flink1 = EnvironmentInformation.getVersion().startsWith("1.");
        if (!(flink1 && summary.startsWith("CHAR("))) {
            NativeParity.assertParity(options, Compare.LINES, nativeOperators, sql, table);
            return;
        }
        String plan = SqlHarness.explain(NativeParity.withAggforge(options), sql, table);
        assertTrue(plan.contains("SINGLE_VALUE over CHAR: Flink 1.20 pads or cuts"), plan);
        assertEquals(
                SqlHarness.run(options, sql, table).lines(),
                SqlHarness.run(NativeParity.withAggforge(options), sql, table).lines());
    }

    @Test
    void scalarSubquery() throws Exception {
        // Calcite plans SINGLE_VALUE for a subquery it cannot prove returns one row.
        InputTable t =
                InputTable.of(
                        "t",
                        List.of(
                                DataTypes.FIELD("k", DataTypes.INT()),
                                DataTypes.FIELD("v", DataTypes.BIGINT())),
                        Row.of(1, 10L),
                        Row.of(2, 20L),
                        Row.of(3, 15L),
                        Row.of(4, 30L),
                        Row.of(5, null));
        NativeParity.assertParity(
                RunOptions.defaults(),
                Compare.FINAL_TABLE,
                1,
                "SELECT k, v FROM t WHERE v > (SELECT v FROM t WHERE k = 3)",
                t);
    }

    private static InputTable pairs(Row... rows) {
        return InputTable.of(
                "t",
                List.of(
                        DataTypes.FIELD("k", DataTypes.INT()),
                        DataTypes.FIELD("v", DataTypes.STRING())),
                rows);
    }

    /** Keys 1..4 once each, then key 2 again: the fifth row fails. */
    private static final Row[] SECOND_VALUE = {
        Row.of(1, "a"), Row.of(2, "b"), Row.of(3, null), Row.of(4, "d"), Row.of(2, "x"), Row.of(5, "e")
    };

    @ParameterizedTest(name = "a second value fails the query, mini-batch {0}")
    @ValueSource(booleans = {false, true})
    void secondValueFails(boolean miniBatch) throws Exception {
        RunOptions options = RunOptions.defaults();
        if (miniBatch) {
            options = options.withMiniBatch(3).withAggPhase("ONE_PHASE");
        }
        assertFailureParity(
                options,
                "SELECT k, SINGLE_VALUE(v) FROM t GROUP BY k",
                "k INT, v STRING",
                pairs(SECOND_VALUE));
    }

    @Test
    void twoPhaseGlobalMergeFails() throws Exception {
        // Bundles of 3: key 2's second partial fails the global merge into state, after the
        // changes of the keys before it in the global bundle's HashMap order.
        assertFailureParity(
                RunOptions.defaults().withMiniBatch(3).withAggPhase("TWO_PHASE"),
                "SELECT k, SINGLE_VALUE(v) FROM t GROUP BY k",
                "k INT, v STRING",
                pairs(SECOND_VALUE));
    }

    @Test
    void twoPhaseLocalBundleFails() throws Exception {
        // Key 5's two rows in the first local bundle fail its flush; the global phase, which
        // flushes at 3 partials, has emitted nothing (a later local failure would race with the
        // global flush, on stock Flink too). runtime/tests/single_value.rs checks which partials
        // the local flush sends before failing.
        assertFailureParity(
                false,
                RunOptions.defaults().withMiniBatch(3).withAggPhase("TWO_PHASE"),
                "SELECT k, SINGLE_VALUE(v) FROM t GROUP BY k",
                "k INT, v STRING",
                pairs(Row.of(1, "a"), Row.of(5, "e"), Row.of(5, "f"), Row.of(2, "b")));
    }

    @Test
    void nullCountsAsAValue() throws Exception {
        assertFailureParity(
                RunOptions.defaults(),
                "SELECT k, SINGLE_VALUE(v) FROM t GROUP BY k",
                "k INT, v STRING",
                pairs(Row.of(1, "a"), Row.of(7, null), Row.of(1, "b")));
        assertFailureParity(
                RunOptions.defaults(),
                "SELECT k, SINGLE_VALUE(v) FROM t GROUP BY k",
                "k INT, v STRING",
                pairs(Row.of(7, null), Row.of(8, "z"), Row.of(7, null)));
    }

    @ParameterizedTest(name = "over retracting input, mini-batch {0}")
    @ValueSource(booleans = {false, true})
    void retractingFailsWhereFlinkFails(boolean miniBatch) throws Exception {
        // Keys by their row count: keys 1 and 2 both reach count 2.
        RunOptions options = RunOptions.defaults();
        if (miniBatch) {
            options = options.withMiniBatch(4).withAggPhase("ONE_PHASE");
        }
        assertFailureParity(
                options,
                "SELECT c, SINGLE_VALUE(k), COUNT(*) FROM"
                        + " (SELECT k, COUNT(*) AS c FROM t GROUP BY k) GROUP BY c",
                "c BIGINT, k INT, n BIGINT",
                pairs(
                        Row.of(1, "a"),
                        Row.of(1, "b"),
                        Row.of(2, "c"),
                        Row.of(3, "d"),
                        Row.of(2, "e"),
                        Row.of(4, "f")));
    }

    /**
     * Runs {@code select} into a sink of {@code columns} on stock Flink and with aggforge;
     * both must fail with the same root cause after writing the same rows, and the native run must
     * have run a native operator.
     */
    private static void assertFailureParity(
            RunOptions options, String select, String columns, InputTable... inputs) throws Exception {
        assertFailureParity(true, options, select, columns, inputs);
    }

    /** {@link #assertFailureParity}, where stock Flink may also write no row ({@code !rows}). */
    private static void assertFailureParity(
            boolean rows, RunOptions options, String select, String columns, InputTable... inputs)
            throws Exception {
        String insert = "INSERT INTO snk " + select;
        Outcome stock = runToFailure(options, insert, columns, inputs);
        String plan = SqlHarness.explain(NativeParity.withAggforge(options), select, inputs);
        assertTrue(plan.contains("SINGLE_VALUE<"), plan);
        long rowsBefore = NativeGroupAggOperator.ROWS.get();
        Outcome ours = runToFailure(NativeParity.withAggforge(options), insert, columns, inputs);
        assertTrue(NativeGroupAggOperator.ROWS.get() > rowsBefore, "no row reached a native operator");
        assertEquals(stock.rootCause, ours.rootCause);
        assertTrue(!rows || !stock.rows.isEmpty(), "stock Flink emitted nothing before failing");
        assertTrue(stock.rootCause.contains("SingleValueAggFunction received more than one element."), stock.rootCause);
        assertEquals(stock.rows, ours.rows, insert);
    }

    private record Outcome(List<String> rows, String rootCause) {}

    private static Outcome runToFailure(
            RunOptions options, String insert, String columns, InputTable... inputs) {
        String id = "single-value-" + System.nanoTime();
        StreamTableEnvironment env = SqlHarness.environment(options, inputs);
        env.executeSql(
                "CREATE TEMPORARY TABLE snk ("
                        + columns
                        + ") WITH ('connector' = '"
                        + CollectingSinkFactory.IDENTIFIER
                        + "', 'id' = '"
                        + id
                        + "')");
        Exception failure =
                assertThrows(
                        Exception.class,
                        () -> {
                            TableResult result = env.executeSql(insert);
                            result.await();
                        });
        Throwable root = failure;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        List<String> rows = new ArrayList<>(CollectingSinkFactory.take(id));
        assertFalse(root.getMessage() == null);
        return new Outcome(rows, root.getClass().getName() + ": " + root.getMessage());
    }
}
