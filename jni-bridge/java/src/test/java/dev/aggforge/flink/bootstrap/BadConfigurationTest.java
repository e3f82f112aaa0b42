package dev.aggforge.flink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.types.logical.BigIntType;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;

/**
 * Bad configuration stops a statement at planning (job submission) with a sentence that names
 * what to change. The wrong-Flink-version and missing-native-library cases need a distribution
 * (scripts/cluster-test.sh runs them); their sentences are checked here too.
 */
class BadConfigurationTest {

    private static final InputTable T =
            InputTable.generated("t", 100, 4, 0.0, 3, new BigIntType());

    private static final String SQL = "SELECT k, MIN(v0), COUNT(*) FROM t GROUP BY k";

    private static ValidationException planningFails(String key, String value) {
        RunOptions options =
                RunOptions.defaults()
                        .withConfig(AggforgeOptions.ENABLED.key(), "true")
                        .withConfig(key, value);
        return assertThrows(ValidationException.class, () -> SqlHarness.explain(options, SQL, T));
    }

    @Test
    void anUnparseableMemoryBudgetNamesTheOptionAndTheFormat() {
        String message = planningFails(AggforgeOptions.MEMORY_BUDGET.key(), "lots").getMessage();
        assertTrue(message.contains("cannot read option 'table.exec.aggforge.memory-budget'"), message);
        assertTrue(message.contains("a memory size such as 512mb"), message);
        assertTrue(message.contains("table.exec.aggforge.enabled: false"), message);
    }

    @Test
    void anEnabledValueThatIsNotABooleanSaysSo() {
        RunOptions options = RunOptions.defaults().withConfig(AggforgeOptions.ENABLED.key(), "yes please");
        String message =
                assertThrows(ValidationException.class, () -> SqlHarness.explain(options, SQL, T))
                        .getMessage();
        assertTrue(message.contains("cannot read option 'table.exec.aggforge.enabled'"), message);
        assertTrue(message.contains("true or false"), message);
    }

    @Test
    void aJitModeThatIsNotAutoOnOrOffIsRefused() {
        String message = planningFails(AggforgeOptions.JIT.key(), "fast").getMessage();
        assertTrue(message.contains("cannot read option 'table.exec.aggforge.jit'"), message);
        assertTrue(message.contains("auto, on or off"), message);
    }

    @Test
    void anOutOfRangeBatchSizeIsRefused() {
        String message = planningFails(AggforgeOptions.BATCH_SIZE.key(), "0").getMessage();
        assertEquals("aggforge: option 'table.exec.aggforge.batch-size' = 0 must be at least 1.", message);
    }

    @Test
    void aBudgetSmallerThanOneBatchNamesBothOptions() {
        String message = planningFails(AggforgeOptions.MEMORY_BUDGET.key(), "1kb").getMessage();
        assertTrue(
                message.startsWith(
                        "aggforge: table.exec.aggforge.memory-budget = 1.0 KiB is smaller than one batch"
                                + " of 1024 rows needs for this aggregate (30.0 KiB)"),
                message);
        assertTrue(message.contains("Raise table.exec.aggforge.memory-budget or lower"
                + " table.exec.aggforge.batch-size."), message);
        // A budget that fits one batch plans natively.
        RunOptions fits =
                RunOptions.defaults()
                        .withConfig(AggforgeOptions.ENABLED.key(), "true")
                        .withConfig(AggforgeOptions.MEMORY_BUDGET.key(), "1mb");
        assertTrue(SqlHarness.explain(fits, SQL, T).contains("AggforgeGroupAggregate("));
    }

    @Test
    void badOptionsAreIgnoredWhileAggforgeIsOff() {
        RunOptions off = RunOptions.defaults().withConfig(AggforgeOptions.MEMORY_BUDGET.key(), "lots");
        assertTrue(SqlHarness.explain(off, SQL, T).contains("\nGroupAggregate("));
    }

    @Test
    void aJarForAnotherFlinkVersionSaysWhichJarToUse() {
        String message =
                assertThrows(
                                ValidationException.class,
                                () -> PlannerBootstrap.checkFlinkVersion("2.3.0", "2.2"))
                        .getMessage();
        assertEquals(
                "aggforge: this aggforge jar is built for Flink 2.2 but this is Flink 2.3.0. Put the"
                        + " aggforge-flink-2.3 jar in lib/ instead, or set"
                        + " table.exec.aggforge.enabled: false.",
                message);
        PlannerBootstrap.checkFlinkVersion("2.2.1", "2.2"); // same minor: fine
        PlannerBootstrap.checkFlinkVersion("<unknown>", "2.2"); // no packaged Flink: not checked
    }
}
