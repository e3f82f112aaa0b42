package dev.aggforge.flink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.flink.api.dag.Transformation;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.table.api.CompiledPlan;
import org.apache.flink.table.api.PlanReference;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.api.internal.TableEnvironmentImpl;
import org.apache.flink.table.delegation.Planner;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.harness.CollectingSinkFactory;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.operator.NativeAggregateOperator;
import dev.aggforge.flink.operator.NativeGroupAggOperator;

/**
 * COMPILE PLAN / EXECUTE PLAN with native aggregates: the native exec node's JSON round trip, and
 * plans compiled on stock Flink running natively (same changelog, other uid) with aggforge on.
 */
class CompiledPlanTest {

    private static final String SOURCE =
            "CREATE TEMPORARY TABLE src (id BIGINT, k AS id % 16, v AS CAST(id * 7 % 1000 AS INT))"
                    + " WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',"
                    + " 'fields.id.start' = '1', 'fields.id.end' = '5000')";

    private static final String BLACKHOLE =
            "CREATE TEMPORARY TABLE snk (k BIGINT, lo INT, hi INT, n BIGINT)"
                    + " WITH ('connector' = 'blackhole')";

    private static final String INSERT =
            "INSERT INTO snk SELECT k, MIN(v), MAX(v), COUNT(*) FROM src GROUP BY k";

    /** Nested GROUP BY: the outer aggregate's input retracts; two-phase with mini-batch. */
    private static final String NESTED =
            "INSERT INTO snk SELECT n, COUNT(*), SUM(k) FROM"
                    + " (SELECT k, COUNT(*) AS n FROM src GROUP BY k) GROUP BY n";

    private static final RunOptions TWO_PHASE =
            RunOptions.defaults().withMiniBatch(700).withAggPhase("TWO_PHASE");

    private static StreamTableEnvironment environment(RunOptions options, boolean aggforge, String sink) {
        StreamTableEnvironment tEnv =
                SqlHarness.environment(
                        options.withConfig(AggforgeOptions.ENABLED.key(), String.valueOf(aggforge)));
        tEnv.executeSql(SOURCE);
        tEnv.executeSql(sink);
        return tEnv;
    }

    private static StreamTableEnvironment environment(boolean aggforge) {
        return environment(RunOptions.defaults(), aggforge, BLACKHOLE);
    }

    /** A sink recording its changelog under {@code id}, with {@code columns}. */
    private static String collecting(String id, String columns) {
        return "CREATE TEMPORARY TABLE snk ("
                + columns
                + ") WITH ('connector' = '"
                + CollectingSinkFactory.IDENTIFIER
                + "', 'id' = '"
                + id
                + "')";
    }

    @Test
    void aNativePlanCompilesAndExecutesNatively() throws Exception {
        CompiledPlan plan = environment(true).compilePlanSql(INSERT);
        String json = plan.asJsonString();
        assertTrue(json.contains("\"type\" : \"stream-exec-aggforge-group-aggregate_1\""), json);
        assertTrue(json.contains("\"specializations\" : \"MIN<INT>/insert_only"), json);
        assertFalse(json.contains("stream-exec-group-aggregate_"), json);

        StreamTableEnvironment executor = environment(true);
        CompiledPlan loaded = executor.loadPlan(PlanReference.fromJsonString(json));
        assertEquals(json, loaded.asJsonString(), "the JSON round trip keeps the node");
        long rowsBefore = NativeGroupAggOperator.ROWS.get();
        loaded.execute().await();
        assertEquals(5000, NativeGroupAggOperator.ROWS.get() - rowsBefore);
    }

    /**
     * MIN/MAX over retracting input keep Flink's layout: the node's JSON carries Flink's
     * structured accumulator type and its map states' types, and the round trip keeps them.
     */
    @Test
    void aNativePlanWithDataViewStateSurvivesTheJsonRoundTrip() throws Exception {
        String insert =
                "INSERT INTO snk SELECT n, MIN(k), MAX(k), COUNT(*) FROM"
                        + " (SELECT k, COUNT(*) AS n FROM src GROUP BY k) GROUP BY n";
        StreamTableEnvironment planner =
                environment(RunOptions.defaults(), true, "CREATE TEMPORARY TABLE snk (n BIGINT, lo BIGINT,"
                        + " hi BIGINT, c BIGINT) WITH ('connector' = 'blackhole')");
        String json = planner.compilePlanSql(insert).asJsonString();
        assertTrue(json.contains("\"viewTypes\""), json);
        assertTrue(json.contains("MinWithRetractAccumulator"), json);
        StreamTableEnvironment executor =
                environment(RunOptions.defaults(), true, "CREATE TEMPORARY TABLE snk (n BIGINT, lo BIGINT,"
                        + " hi BIGINT, c BIGINT) WITH ('connector' = 'blackhole')");
        CompiledPlan loaded = executor.loadPlan(PlanReference.fromJsonString(json));
        assertEquals(json, loaded.asJsonString(), "the JSON round trip keeps the node");
        long layout = dev.aggforge.flink.operator.NativeAggregateOperator.FLINK_LAYOUT.get();
        loaded.execute().await();
        assertEquals(
                2,
                dev.aggforge.flink.operator.NativeAggregateOperator.FLINK_LAYOUT.get() - layout,
                "aggregates in Flink's layout (inner and outer)");
    }

    @Test
    void aNativePlanWithAggforgeOffFailsWithTheOptionNamed() {
        String json = environment(true).compilePlanSql(INSERT).asJsonString();
        StreamTableEnvironment off = environment(false);
        CompiledPlan loaded = off.loadPlan(PlanReference.fromJsonString(json));
        String message = assertThrows(ValidationException.class, loaded::execute).getMessage();
        assertTrue(message.contains("this plan runs a group aggregate on aggforge"), message);
        assertTrue(message.contains("set table.exec.aggforge.enabled: true"), message);
    }

    @Test
    void aStockPlanStaysStockWithAggforgeOff() {
        String json = environment(false).compilePlanSql(INSERT).asJsonString();
        assertTrue(json.contains("stream-exec-group-aggregate_1"), json);
        assertFalse(json.contains("aggforge"), json);
    }

    @Test
    void aStockSinglePhasePlanRunsNativelyWithTheStockChangelog() throws Exception {
        assertStockPlanParity(
                RunOptions.defaults(), INSERT, "k BIGINT, lo INT, hi INT, n BIGINT", 5000, 1);
    }

    @Test
    void aStockTwoPhasePlanOverRetractionsRunsNativelyWithTheStockChangelog() throws Exception {
        // Inner local + global over 5000 rows, outer local + global over the inner's changelog.
        assertStockPlanParity(TWO_PHASE, NESTED, "n BIGINT, c BIGINT, s BIGINT", -1, 4);
    }

    @Test
    void aStockSinglePhaseDistinctPlanRunsNatively() throws Exception {
        assertStockPlanParity(
                RunOptions.defaults(),
                "INSERT INTO snk SELECT k, COUNT(DISTINCT v) FROM src GROUP BY k",
                "k BIGINT, n BIGINT",
                5000,
                1);
    }

    @Test
    void aStockPlanAggforgeDoesNotRunStaysOnFlink() throws Exception {
        assertStockPlanParity(
                RunOptions.defaults(),
                "INSERT INTO snk SELECT k, JSON_ARRAYAGG(v) FROM src GROUP BY k",
                "k BIGINT, n STRING",
                0,
                0);
    }

    /**
     * Compiles {@code insert} on stock Flink, executes the plan with aggforge off and on, and
     * asserts the same changelog, {@code nativeRows} rows into native operators (-1: some), and
     * {@code nativeOperators} native transformations, whose uids differ from the stock ones.
     */
    private static void assertStockPlanParity(
            RunOptions options, String insert, String columns, long nativeRows, int nativeOperators)
            throws Exception {
        String id = "compiled-" + System.nanoTime();
        String json =
                environment(options, false, collecting(id, columns)).compilePlanSql(insert).asJsonString();
        assertFalse(json.contains("aggforge-group-aggregate"), json);

        environment(options, false, collecting(id, columns))
                .loadPlan(PlanReference.fromJsonString(json))
                .execute()
                .await();
        List<String> expected = CollectingSinkFactory.take(id);
        assertFalse(expected.isEmpty(), "the stock run emitted nothing");

        StreamTableEnvironment on = environment(options, true, collecting(id, columns));
        assertEquals(nativeOperators, nativeUids(on, json).size(), json);
        for (String uid : nativeUids(on, json)) {
            // The stock operator's uid (<id>_group-aggregate, _local-..., _global-...).
            assertTrue(uid.endsWith("group-aggregate") && !uid.contains("aggforge"), uid);
        }
        long rowsBefore = NativeGroupAggOperator.ROWS.get();
        on.loadPlan(PlanReference.fromJsonString(json)).execute().await();
        long rows = NativeGroupAggOperator.ROWS.get() - rowsBefore;
        if (nativeRows >= 0) {
            assertEquals(nativeRows, rows);
        } else {
            assertTrue(rows > 0, "no row reached a native operator");
        }
        assertEquals(expected, CollectingSinkFactory.take(id), insert);
    }

    /** The uids of the native operators {@code json} translates to in {@code tEnv}. */
    private static List<String> nativeUids(StreamTableEnvironment tEnv, String json)
            throws Exception {
        Planner planner = ((TableEnvironmentImpl) tEnv).getPlanner();
        List<String> uids = new ArrayList<>();
        Deque<Transformation<?>> pending =
                new ArrayDeque<>(planner.translatePlan(planner.loadPlan(PlanReference.fromJsonString(json))));
        Set<Transformation<?>> seen = new HashSet<>();
        while (!pending.isEmpty()) {
            Transformation<?> t = pending.pop();
            if (!seen.add(t)) {
                continue;
            }
            if (t instanceof OneInputTransformation<?, ?> one
                    && one.getOperatorFactory() instanceof SimpleOperatorFactory<?> factory
                    && factory.getOperator() instanceof NativeAggregateOperator<?, ?>) {
                uids.add(t.getUid());
            }
            pending.addAll(t.getInputs());
        }
        return uids;
    }
}
