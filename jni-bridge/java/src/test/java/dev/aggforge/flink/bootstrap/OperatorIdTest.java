package dev.aggforge.flink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamGraphHasherV2;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.table.api.bridge.java.StreamStatementSet;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.api.internal.TableEnvironmentImpl;
import org.apache.flink.util.StringUtils;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.aggforge.flink.AggforgeOptions;

/**
 * Switching aggforge on keeps every operator id stock Flink gives the job, so savepoints move
 * both ways: the job is built with aggforge off and on (same JVM-wide exec node counter start, as
 * in a fresh SQL client), and the operator ids Flink generates (the ids a savepoint's state is
 * stored under) and the job vertex ids are compared. The aggforge job may only add the stateless
 * exchange operators ({@code AggforgeExchange}) and must run the aggregate natively where the
 * case says so.
 */
class OperatorIdTest {

    private static final String SOURCE =
            "CREATE TABLE src (k INT, v BIGINT, s STRING) WITH ('connector' = 'datagen',"
                    + " 'number-of-rows' = '1000', 'fields.k.min' = '0', 'fields.k.max' = '9')";

    private static final String SINK =
            "CREATE TABLE snk (k INT, a BIGINT, b STRING) WITH ('connector' = 'blackhole')";

    private static final String GROUP_BY =
            "INSERT INTO snk SELECT k, SUM(v), CAST(COUNT(*) AS STRING) FROM src"
                    + " WHERE v > 0 GROUP BY k";

    private static final String NOT_ACCELERATED =
            "INSERT INTO snk SELECT k, SUM(v), JSON_ARRAYAGG(s) FROM src GROUP BY k";

    /**
     * @param query GROUP_BY or NOT_ACCELERATED
     * @param twoPhase mini-batch with the two-phase strategy
     * @param columnar {@code table.exec.aggforge.columnar-exchange}
     * @param uids {@code table.exec.uid.generation}
     * @param nativeAggregates how many aggregate operators the aggforge job runs natively
     */
    @ParameterizedTest(name = "{0} twoPhase={1} columnar={2} uids={3}")
    @CsvSource({
        "NOT_ACCELERATED, false, true, PLAN_ONLY, 0",
        "NOT_ACCELERATED, false, true, ALWAYS, 0",
        "NOT_ACCELERATED, true, true, ALWAYS, 0",
        "GROUP_BY, false, true, PLAN_ONLY, 1",
        "GROUP_BY, false, false, PLAN_ONLY, 1",
        "GROUP_BY, false, true, ALWAYS, 1",
        "GROUP_BY, false, false, ALWAYS, 1",
        "GROUP_BY, true, true, PLAN_ONLY, 2",
        "GROUP_BY, true, false, PLAN_ONLY, 2",
        "GROUP_BY, true, true, ALWAYS, 2",
        "GROUP_BY, true, false, ALWAYS, 2",
    })
    void operatorIdsAreStockIds(
            String query, boolean twoPhase, boolean columnar, String uids, int nativeAggregates) {
        String insert = query.equals("GROUP_BY") ? GROUP_BY : NOT_ACCELERATED;
        Ids stock = build(insert, false, twoPhase, columnar, uids);
        Ids aggforge = build(insert, true, twoPhase, columnar, uids);

        long natives =
                aggforge.byName.keySet().stream()
                        .filter(name -> name.matches("Aggforge(Local|Global)?GroupAggregate\\[.*"))
                        .count();
        assertEquals(nativeAggregates, natives, "native aggregates in " + aggforge.byName);
        // The columnar exchange runs where operators carry uids; without, Flink's exchange.
        long exchanges =
                aggforge.byName.keySet().stream().filter(n -> n.startsWith("AggforgeExchange")).count();
        assertEquals(
                columnar && uids.equals("ALWAYS") && nativeAggregates > 0 ? 1 : 0,
                exchanges,
                "exchange operators in " + aggforge.byName);

        // Every stock operator is in the aggforge job under the same name (the native aggregate
        // under Aggforge...) and with the same id; the only additions are exchange operators.
        Map<String, String> stockByName = stock.byName;
        Map<String, String> aggforgeStockNamed = new TreeMap<>();
        aggforge.byName.forEach(
                (name, id) -> {
                    if (!name.startsWith("AggforgeExchange")) {
                        aggforgeStockNamed.put(name.replaceFirst("^Aggforge", ""), id);
                    }
                });
        assertEquals(stockByName, aggforgeStockNamed);
        assertTrue(stock.operators.size() >= 3, "source, aggregate, sink: " + stockByName);
        // The job graph's operator ids (what a savepoint maps) and vertex ids.
        Set<OperatorID> added = new HashSet<>(aggforge.operators);
        added.removeAll(stock.operators);
        assertTrue(aggforge.operators.containsAll(stock.operators), "stock operator ids kept");
        assertEquals(exchanges, added.size(), "only exchange operators added");
        assertEquals(stock.vertices, aggforge.vertices, "job vertex ids");
    }

    /** Operator ids of one build. */
    private record Ids(Map<String, String> byName, Set<OperatorID> operators, Set<String> vertices) {}

    private static Ids build(
            String insert, boolean aggforge, boolean twoPhase, boolean columnar, String uids) {
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(new Configuration());
        env.setParallelism(2);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        Configuration config = tEnv.getConfig().getConfiguration();
        config.setString(AggforgeOptions.ENABLED.key(), String.valueOf(aggforge));
        config.setString(AggforgeOptions.BUNDLED_ENABLED.key(), "true");
        config.setString(AggforgeOptions.COLUMNAR_EXCHANGE.key(), String.valueOf(columnar));
        config.setString("table.exec.uid.generation", uids);
        if (twoPhase) {
            config.setString("table.exec.mini-batch.enabled", "true");
            config.setString("table.exec.mini-batch.allow-latency", "1 s");
            config.setString("table.exec.mini-batch.size", "100");
            config.setString("table.optimizer.agg-phase-strategy", "TWO_PHASE");
        }
        resetExecNodeIds(tEnv);
        tEnv.executeSql(SOURCE);
        tEnv.executeSql(SINK);
        StreamStatementSet statements = tEnv.createStatementSet();
        statements.addInsertSql(insert);
        statements.attachAsDataStream();
        StreamGraph graph = env.getStreamGraph();
        Map<Integer, byte[]> hashes = new StreamGraphHasherV2().traverseStreamGraphAndGenerateHashes(graph);
        Map<String, String> byName = new TreeMap<>();
        for (StreamNode node : graph.getStreamNodes()) {
            String name = node.getOperatorName();
            String previous = byName.put(name, StringUtils.byteToHexString(hashes.get(node.getId())));
            assertEquals(null, previous, "operator names are unique: " + name);
        }
        JobGraph job = graph.getJobGraph();
        Set<OperatorID> operators = new HashSet<>();
        Set<String> vertices = new HashSet<>();
        for (JobVertex vertex : job.getVertices()) {
            vertices.add(vertex.getID().toString());
            for (OperatorIDPair pair : vertex.getOperatorIDs()) {
                operators.add(pair.getGeneratedOperatorID());
            }
        }
        return new Ids(byName, operators, vertices);
    }

    /**
     * Sets Flink's JVM-wide exec node counter back to zero, as in a fresh SQL client. The planner
     * lives in the planner loader's class loader, so its class is reached through the planner.
     */
    private static void resetExecNodeIds(StreamTableEnvironment tEnv) {
        try {
            ClassLoader planner = ((TableEnvironmentImpl) tEnv).getPlanner().getClass().getClassLoader();
            planner.loadClass("org.apache.flink.table.planner.plan.nodes.exec.ExecNodeContext")
                    .getMethod("resetIdCounter")
                    .invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
