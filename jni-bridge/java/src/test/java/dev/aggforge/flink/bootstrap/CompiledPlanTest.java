package dev.aggforge.flink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.table.api.CompiledPlan;
import org.apache.flink.table.api.PlanReference;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.junit.jupiter.api.Test;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SqlHarness;
import dev.aggforge.flink.operator.NativeGroupAggOperator;

/** COMPILE PLAN / EXECUTE PLAN with native aggregates: the exec node's JSON round trip. */
class CompiledPlanTest {

    private static final String TABLES =
            "CREATE TEMPORARY TABLE src (id BIGINT, k AS id % 16, v AS CAST(id * 7 % 1000 AS INT))"
                    + " WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',"
                    + " 'fields.id.start' = '1', 'fields.id.end' = '5000');"
                    + "CREATE TEMPORARY TABLE snk (k BIGINT, lo INT, hi INT, n BIGINT)"
                    + " WITH ('connector' = 'blackhole')";

    private static final String INSERT =
            "INSERT INTO snk SELECT k, MIN(v), MAX(v), COUNT(*) FROM src GROUP BY k";

    private static StreamTableEnvironment environment(boolean aggforge) {
        StreamTableEnvironment tEnv =
                SqlHarness.environment(
                        RunOptions.defaults()
                                .withConfig(AggforgeOptions.ENABLED.key(), String.valueOf(aggforge)));
        for (String ddl : TABLES.split(";")) {
            tEnv.executeSql(ddl);
        }
        return tEnv;
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
}
