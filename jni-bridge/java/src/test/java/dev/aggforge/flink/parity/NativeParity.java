package dev.aggforge.flink.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.table.api.TableException;

import dev.aggforge.flink.harness.Changelog;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.operator.ColumnarGroupAggOperator;
import dev.aggforge.flink.operator.NativeGroupAggOperator;
import dev.aggforge.flink.AggforgeOptions;

/** Runs a query on stock Flink and with aggforge installed, and compares. */
final class NativeParity {

    private NativeParity() {}

    /**
     * Whether the parity runs use the columnar exchange (on unless {@code
     * -Daggforge.test.columnarExchange=false}: CI runs the suite once each way).
     */
    static final boolean COLUMNAR_EXCHANGE =
            Boolean.parseBoolean(System.getProperty("aggforge.test.columnarExchange", "true"));

    /**
     * The {@code table.exec.aggforge.jit} mode of the parity runs ({@code auto} unless {@code
     * -Daggforge.test.jit=on|off}: CI runs the suite once more with the JIT forced on). A test
     * that sets the option itself keeps its own value.
     */
    static final String JIT = System.getProperty("aggforge.test.jit", "auto");

    /** Flink's option that gives every operator a uid (the columnar exchange needs them). */
    static final String UID_GENERATION = "table.exec.uid.generation";

    /**
     * {@code options} with the aggforge hook installed (bundled modes on); with the columnar
     * exchange, operators get uids ({@code table.exec.uid.generation=ALWAYS}), without which the
     * exchange stays Flink's so that operator ids stay stock Flink's.
     */
    static RunOptions withAggforge(RunOptions options) {
        RunOptions uids =
                COLUMNAR_EXCHANGE && !options.extraConfig().containsKey(UID_GENERATION)
                        ? options.withConfig(UID_GENERATION, "ALWAYS")
                        : options;
        RunOptions hooked =
                uids.withConfig(AggforgeOptions.ENABLED.key(), "true")
                        .withConfig(AggforgeOptions.BUNDLED_ENABLED.key(), "true")
                        .withConfig(
                                AggforgeOptions.COLUMNAR_EXCHANGE.key(),
                                String.valueOf(COLUMNAR_EXCHANGE));
        return hooked.extraConfig().containsKey(AggforgeOptions.JIT.key())
                ? hooked
                : hooked.withConfig(AggforgeOptions.JIT.key(), JIT);
    }

    /** How the two changelogs must agree. */
    enum Compare {
        /** The complete changelog, every row in order. */
        LINES,
        /** Each key's own sequence of rows (the order across keys may differ). */
        PER_KEY,
        /** The table the changelog leaves. */
        FINAL_TABLE
    }

    /**
     * Runs {@code sql} both ways; asserts the changelogs agree and that the native operator ran
     * (EXPLAIN names it and native operators consumed rows). Returns the stock changelog.
     *
     * @param nativeOperators how many aggregates the plan must run natively
     */
    static Changelog assertParity(
            RunOptions options, Compare compare, int nativeOperators, String sql, InputTable... inputs)
            throws Exception {
        Changelog expected = SqlHarness.run(options, sql, inputs);
        RunOptions hooked = withAggforge(options);
        String plan = SqlHarness.explain(hooked, sql, inputs);
        int replaced = plan.split("\\bAggforge(Local|Global|Incremental)?GroupAggregate\\(", -1).length - 1;
        // EXPLAIN prints the physical plan and the execution plan: each node twice.
        assertEquals(2 * nativeOperators, replaced, plan);
        boolean columnar = plan.contains("exchange=[columnar]");
        assertEquals(COLUMNAR_EXCHANGE, columnar || !plan.contains("exchange=["), plan);
        long rowsBefore = NativeGroupAggOperator.ROWS.get();
        long messagesBefore = ColumnarGroupAggOperator.MESSAGES.get();
        Changelog actual = SqlHarness.run(hooked, sql, inputs);
        assertTrue(NativeGroupAggOperator.ROWS.get() > rowsBefore, "no row reached a native operator");
        assertEquals(
                columnar,
                ColumnarGroupAggOperator.MESSAGES.get() > messagesBefore,
                "columnar exchange messages received");
        assertTrue(expected.rows().size() > 0, "the query emitted nothing");
        switch (compare) {
            case LINES:
                assertEquals(expected.lines(), actual.lines(), sql);
                break;
            case PER_KEY:
                assertEquals(expected.perKey(0), actual.perKey(0), sql);
                assertEquals(expected.rows().size(), actual.rows().size(), sql);
                break;
            default:
                assertEquals(expected.finalTable(0), actual.finalTable(0), sql);
        }
        return expected;
    }

    /**
     * {@link #assertParity} (complete changelogs), or, where stock Flink's planner itself refuses
     * the query, the same refusal (first line of the message) with aggforge on.
     *
     * @return whether both refused
     */
    static boolean assertParityOrBothRefuse(
            RunOptions options, int nativeOperators, String sql, InputTable... inputs)
            throws Exception {
        TableException stock = null;
        try {
            SqlHarness.explain(options, sql, inputs);
        } catch (TableException e) {
            stock = e;
        }
        if (stock == null) {
            assertParity(options, Compare.LINES, nativeOperators, sql, inputs);
            return false;
        }
        TableException ours =
                assertThrows(
                        TableException.class,
                        () -> SqlHarness.explain(withAggforge(options), sql, inputs));
        assertEquals(firstLine(stock.getMessage()), firstLine(ours.getMessage()));
        return true;
    }

    /**
     * {@link #assertParityOrBothRefuse}, where only Flink 1.x may refuse (its planner lacks
     * functions over some types that 2.x has); a refusal on Flink 2.x fails the test.
     */
    static void assertParityOrRefusedOnFlink1(
            RunOptions options, int nativeOperators, String sql, InputTable... inputs)
            throws Exception {
        boolean refused = assertParityOrBothRefuse(options, nativeOperators, sql, inputs);
        String version = EnvironmentInformation.getVersion();
        assertFalse(refused && !version.startsWith("1."), "stock Flink " + version + " refused");
    }

    private static String firstLine(String message) {
        String trimmed = message.strip();
        int end = trimmed.indexOf('\n');
        return end < 0 ? trimmed : trimmed.substring(0, end);
    }
}
