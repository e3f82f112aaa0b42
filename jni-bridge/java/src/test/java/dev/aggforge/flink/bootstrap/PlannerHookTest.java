package dev.aggforge.flink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DateType;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.harness.Changelog;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.plan.AggregateDescriptor;
import dev.aggforge.flink.plan.AggregateDescriptor.Call;
import dev.aggforge.flink.plan.AggregateDescriptor.Emission;
import dev.aggforge.flink.plan.AggregateDescriptor.InputMode;
import dev.aggforge.flink.plan.AggregateDescriptor.Phase;

/**
 * The planner hook on real Flink plans, installed the drop-in way (the test class path has
 * flink-table-planner-loader, as a distribution's lib/ does): descriptors extracted, results
 * unchanged, reasons shown in EXPLAIN.
 */
class PlannerHookTest {

    private static final InputTable T =
            InputTable.generated("t", 3_000, 16, 1.0 / 8, 7, new DateType(), new BigIntType());

    private static final String SQL =
            "SELECT k, MIN(v0), MAX(v0), COUNT(*), SUM(v1), AVG(v1) FROM t GROUP BY k";

    /** Options with aggforge on, capturing the hook every environment has. */
    private static RunOptions hooked(RunOptions base, AtomicReference<PlannerHook> hook) {
        return base.withConfig(AggforgeOptions.ENABLED.key(), "true")
                .withSetup(tEnv -> hook.set(Aggforge.hook(tEnv).orElseThrow()));
    }

    /** The descriptors of the last optimization (the plan that ran). */
    private static List<AggregateDescriptor> last(PlannerHook hook, int count) {
        List<AggregateDescriptor> all = hook.descriptors();
        assertTrue(all.size() >= count, all.size() + " descriptors");
        return all.subList(all.size() - count, all.size());
    }

    private static final List<Call> INPUT_CALLS =
            List.of(
                    new Call("MIN", List.of(1), List.of("DATE"), false, -1, "DATE", false),
                    new Call("MAX", List.of(1), List.of("DATE"), false, -1, "DATE", false),
                    new Call("COUNT_STAR", List.of(), List.of(), false, -1, "BIGINT", false),
                    new Call("SUM", List.of(2), List.of("BIGINT"), false, -1, "BIGINT", false),
                    new Call("AVG", List.of(2), List.of("BIGINT"), false, -1, "BIGINT", false));

    @Test
    void singlePhaseImmediateIsDescribedAndResultsAreUnchanged() throws Exception {
        AtomicReference<PlannerHook> hook = new AtomicReference<>();
        RunOptions stock = RunOptions.defaults();
        Changelog expected = SqlHarness.run(stock, SQL, T);
        Changelog hooked = SqlHarness.run(hooked(stock, hook), SQL, T);
        assertEquals(expected.lines(), hooked.lines());

        AggregateDescriptor d = last(hook.get(), 1).get(0);
        assertEquals(Phase.SINGLE, d.phase());
        assertEquals(InputMode.INSERT_ONLY, d.input());
        assertEquals(Emission.IMMEDIATE, d.emission());
        assertEquals(0, d.miniBatchSize());
        assertTrue(d.generateUpdateBefore());
        assertEquals(0, d.stateTtlMs());
        assertEquals(List.of(0), d.keyColumns());
        assertEquals(List.of("INT"), d.keyTypes());
        assertEquals(List.of("INT", "DATE", "BIGINT"), d.inputTypes());
        assertEquals(List.of("INT", "DATE", "DATE", "BIGINT", "BIGINT", "BIGINT"), d.outputTypes());
        assertEquals(INPUT_CALLS, d.calls());
        assertEquals(-1, d.countStarColumn());
        assertEquals("", d.unsupported());
        assertTrue(d.node().startsWith("GroupAggregate("), d.node());
    }

    @Test
    void upsertSinkAndStateTtlReachTheDescriptor() throws Exception {
        AtomicReference<PlannerHook> hook = new AtomicReference<>();
        RunOptions options =
                RunOptions.defaults().withUpdateBefore(false).withStateTtl(Duration.ofMinutes(5));
        SqlHarness.run(hooked(options, hook), SQL, T);
        AggregateDescriptor d = last(hook.get(), 1).get(0);
        assertFalse(d.generateUpdateBefore());
        assertEquals(300_000, d.stateTtlMs());
    }

    @Test
    void singlePhaseMiniBatchIsDescribed() throws Exception {
        AtomicReference<PlannerHook> hook = new AtomicReference<>();
        RunOptions options = RunOptions.defaults().withMiniBatch(256).withAggPhase("ONE_PHASE");
        Changelog expected = SqlHarness.run(options, SQL, T);
        assertEquals(expected.lines(), SqlHarness.run(hooked(options, hook), SQL, T).lines());
        AggregateDescriptor d = last(hook.get(), 1).get(0);
        assertEquals(Phase.SINGLE, d.phase());
        assertEquals(Emission.MINI_BATCH, d.emission());
        assertEquals(256, d.miniBatchSize());
        assertEquals(INPUT_CALLS, d.calls());
    }

    @Test
    void twoPhaseMiniBatchIsDescribedWithPartialColumns() throws Exception {
        AtomicReference<PlannerHook> hook = new AtomicReference<>();
        RunOptions options = RunOptions.defaults().withMiniBatch(100).withAggPhase("TWO_PHASE");
        Changelog expected = SqlHarness.run(options, SQL, T);
        assertEquals(expected.lines(), SqlHarness.run(hooked(options, hook), SQL, T).lines());

        List<AggregateDescriptor> plan = last(hook.get(), 2);
        AggregateDescriptor local = plan.get(0);
        AggregateDescriptor global = plan.get(1);
        assertEquals(Phase.LOCAL, local.phase());
        assertEquals(Emission.MINI_BATCH, local.emission());
        assertEquals(100, local.miniBatchSize());
        assertFalse(local.generateUpdateBefore());
        assertEquals(INPUT_CALLS, local.calls());
        assertTrue(local.node().startsWith("LocalGroupAggregate("), local.node());
        // Local output: k, min, max, count1, sum, (avg sum, avg count).
        assertEquals(List.of("INT", "DATE", "DATE", "BIGINT", "BIGINT", "BIGINT", "BIGINT"), local.outputTypes());

        assertEquals(Phase.GLOBAL, global.phase());
        assertEquals(InputMode.INSERT_ONLY, global.input());
        assertEquals(Emission.MINI_BATCH, global.emission());
        assertTrue(global.generateUpdateBefore());
        assertEquals(List.of(0), global.keyColumns());
        assertEquals(local.outputTypes(), global.inputTypes());
        assertEquals(
                List.of(
                        new Call("MIN", List.of(1), List.of("DATE"), false, -1, "DATE", false),
                        new Call("MAX", List.of(2), List.of("DATE"), false, -1, "DATE", false),
                        new Call("COUNT_STAR", List.of(3), List.of(), false, -1, "BIGINT", false),
                        new Call("SUM", List.of(4), List.of("BIGINT"), false, -1, "BIGINT", false),
                        new Call("AVG", List.of(5, 6), List.of("BIGINT"), false, -1, "BIGINT", false)),
                global.calls());
        assertEquals(-1, global.countStarColumn());
        assertTrue(global.node().startsWith("GlobalGroupAggregate("), global.node());
    }

    @Test
    void retractingInputIsDescribed() throws Exception {
        String nested =
                "SELECT c, COUNT(*), MAX(s) FROM (SELECT k, COUNT(*) AS c, SUM(v1) AS s FROM t"
                        + " GROUP BY k) GROUP BY c";
        AtomicReference<PlannerHook> hook = new AtomicReference<>();
        Changelog expected = SqlHarness.run(RunOptions.defaults(), nested, T);
        assertEquals(
                expected.lines(),
                SqlHarness.run(hooked(RunOptions.defaults(), hook), nested, T).lines());
        List<AggregateDescriptor> plan = last(hook.get(), 2);
        assertEquals(InputMode.INSERT_ONLY, plan.get(0).input());
        AggregateDescriptor outer = plan.get(1);
        assertEquals(InputMode.RETRACTING, outer.input());
        assertEquals(List.of("BIGINT"), outer.keyTypes());
        assertEquals("COUNT_STAR", outer.calls().get(0).function());
        assertTrue(outer.calls().get(1).retraction(), "MAX over a retracting input must retract");

        // Two-phase over retractions: the global phase counts records in an inserted COUNT(*).
        hook.set(null);
        RunOptions twoPhase = RunOptions.defaults().withMiniBatch(50).withAggPhase("TWO_PHASE");
        String retractNoCount =
                "SELECT c, MAX(s) FROM (SELECT k, COUNT(*) AS c, SUM(v1) AS s FROM t GROUP BY k)"
                        + " GROUP BY c";
        assertEquals(
                SqlHarness.run(twoPhase, retractNoCount, T).finalTable(0),
                SqlHarness.run(hooked(twoPhase, hook), retractNoCount, T).finalTable(0));
        List<AggregateDescriptor> phases = last(hook.get(), 2);
        AggregateDescriptor local = phases.get(0);
        AggregateDescriptor global = phases.get(1);
        assertEquals(Phase.LOCAL, local.phase());
        assertEquals(InputMode.RETRACTING, local.input());
        assertEquals(Phase.GLOBAL, global.phase());
        assertEquals(InputMode.RETRACTING, global.input());
        assertEquals(1, global.calls().size());
        // Local output = global input: c, MAX partial, then the inserted COUNT(*) partial.
        assertEquals(2, local.countStarColumn(), local.toText());
        assertEquals(2, global.countStarColumn(), global.toText());
        // MAX over retractions keeps a multiset (a MapView) in its partial: Flink's structured
        // accumulator, one Arrow struct column. Flink 2.x prints a structured type as
        // STRUCTURED<'class', ...>, 1.20 as *class<...>*.
        String partial = local.outputTypes().get(1);
        assertTrue(
                partial.contains("MaxWithRetractAccumulator")
                        && (partial.startsWith("STRUCTURED<") || partial.startsWith("*")),
                partial);
        assertEquals("", local.unsupported());
        assertEquals("", global.unsupported());
        assertEquals("", twoPhaseInsertOnly().unsupported());
    }

    /** The global descriptor of a two-phase query over insert-only input. */
    private static AggregateDescriptor twoPhaseInsertOnly() {
        StreamTableEnvironment tEnv =
                SqlHarness.environment(
                        RunOptions.defaults()
                                .withMiniBatch(10)
                                .withAggPhase("TWO_PHASE")
                                .withConfig(AggforgeOptions.ENABLED.key(), "true"),
                        T);
        PlannerHook program = Aggforge.hook(tEnv).orElseThrow();
        tEnv.explainSql(SQL);
        return last(program, 1).get(0);
    }

    @Test
    void optionOffRecordsNothingAndExplainStillWorks() throws Exception {
        AtomicReference<PlannerHook> hook = new AtomicReference<>();
        RunOptions off =
                hooked(RunOptions.defaults(), hook).withConfig(AggforgeOptions.ENABLED.key(), "false");
        String plan = SqlHarness.explain(off, SQL, T);
        assertTrue(plan.contains("GroupAggregate(groupBy=[k]"), plan);
        assertTrue(hook.get().descriptors().isEmpty());

        AtomicReference<PlannerHook> on = new AtomicReference<>();
        String explained = SqlHarness.explain(hooked(RunOptions.defaults(), on), SQL, T);
        // Hooked: the same plan with the aggregate replaced by the native one (and the runtime's
        // specializations and its exchange shown), apart from the generated source names.
        String anonymous = "anonymous_datastream_source\\$\\d+";
        String specializations =
                ", aggforge=[MIN<DATE>/insert_only, MAX<DATE>/insert_only, COUNT_STAR<*>/insert_only,"
                        + " SUM<BIGINT>/insert_only, AVG<BIGINT>/insert_only],"
                        + " exchange=[rows (the columnar exchange needs operator uids:"
                        + " table.exec.uid.generation=ALWAYS)])";
        assertEquals(
                plan.replaceAll(anonymous, "src")
                        .replace("\nGroupAggregate(", "\nAggforgeGroupAggregate(")
                        .replace("AVG(v1) AS EXPR$5])", "AVG(v1) AS EXPR$5]" + specializations),
                explained.replaceAll(anonymous, "src"));
        assertEquals(1, on.get().descriptors().size());
    }

    @Test
    void unsupportedKeyTypeIsDescribedWithTheReason() throws Exception {
        AtomicReference<PlannerHook> hook = new AtomicReference<>();
        String sql =
                "SELECT b, COUNT(*) FROM (SELECT CAST(CAST(k AS STRING) AS BYTES) AS b FROM t)"
                        + " GROUP BY b";
        String plan = SqlHarness.explain(hooked(RunOptions.defaults(), hook), sql, T);
        AggregateDescriptor d = last(hook.get(), 1).get(0);
        assertFalse(d.supportedByJavaSide());
        assertTrue(d.unsupported().contains("key column 0 has type BYTES"), d.unsupported());
        // EXPLAIN shows the stock operator with the reason beside it.
        assertTrue(
                plan.contains("\nGroupAggregate(groupBy=[b], select=[b, COUNT(*) AS EXPR$1],"
                        + " aggforge=[stays on Flink: key column 0 has type BYTES"),
                plan);
        assertFalse(plan.contains("AggforgeGroupAggregate"), plan);
    }

    @Test
    void everyEnvironmentHasTheHookAndLoadModuleKeepsIt() {
        StreamTableEnvironment tEnv = SqlHarness.environment(RunOptions.defaults(), T);
        PlannerHook installed = Aggforge.hook(tEnv).orElseThrow();
        tEnv.explainSql(SQL);
        assertTrue(installed.descriptors().isEmpty(), "aggforge is off by default");
        tEnv.executeSql("LOAD MODULE aggforge");
        assertSame(installed, Aggforge.hook(tEnv).orElseThrow());
        tEnv.getConfig().set(AggforgeOptions.ENABLED, true);
        tEnv.explainSql(SQL);
        assertEquals(1, installed.descriptors().size());
        assertEquals(Phase.SINGLE, installed.descriptors().get(0).phase());
    }
}
