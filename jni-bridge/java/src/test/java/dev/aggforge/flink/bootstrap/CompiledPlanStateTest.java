package dev.aggforge.flink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.table.api.PlanReference;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.api.internal.TableEnvironmentImpl;
import org.apache.flink.table.delegation.Planner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.harness.SharedMiniCluster;
import dev.aggforge.flink.operator.NativeAggregateOperator;
import dev.aggforge.flink.shim.FlinkTestShim;

/**
 * A compiled plan keeps its operator uids when aggforge is switched on, and the native group
 * aggregate keeps its state in stock Flink's layout: a savepoint of the plan running on stock
 * Flink restores into the native operator (which loads the stock groups), and the native job's
 * savepoint restores into stock Flink again.
 */
class CompiledPlanStateTest {

    private static final String[] TABLES = {
        "CREATE TEMPORARY TABLE src (id BIGINT, k AS id % 16, v AS CAST(id * 7 % 1000 AS INT))"
                + " WITH ('connector' = 'datagen', 'rows-per-second' = '2000',"
                + " 'fields.id.min' = '1', 'fields.id.max' = '1000000')",
        "CREATE TEMPORARY TABLE snk (k BIGINT, lo INT, hi INT, n BIGINT)"
                + " WITH ('connector' = 'blackhole')"
    };

    private static final String INSERT =
            "INSERT INTO snk SELECT k, MIN(v), MAX(v), COUNT(*) FROM src GROUP BY k";

    @Test
    void savepointsMoveBetweenStockFlinkAndTheNativeOperator(@TempDir Path savepoints)
            throws Exception {
        String json = environment(false).tEnv.compilePlanSql(INSERT).asJsonString();
        MiniCluster cluster = SharedMiniCluster.cluster();

        JobID stock = environment(false).submit(json, null);
        awaitRunning(cluster, stock);
        Thread.sleep(500);
        String stockSavepoint =
                stopWithSavepoint(cluster, stock, savepoints.resolve("stock").toString());
        assertTrue(Files.exists(Path.of(stockSavepoint.replace("file:", ""))), stockSavepoint);

        long opened = NativeAggregateOperator.OPENED.get();
        long loaded = NativeAggregateOperator.FLINK_LAYOUT_LOADED.get();
        JobID nativeJob = environment(true).submit(json, stockSavepoint);
        awaitRunning(cluster, nativeJob);
        Thread.sleep(500);
        String nativeSavepoint =
                stopWithSavepoint(cluster, nativeJob, savepoints.resolve("native").toString());
        assertTrue(NativeAggregateOperator.OPENED.get() > opened, "the native operator ran");
        // 16 keys, all seen in the stock job's first half second.
        assertEquals(16, NativeAggregateOperator.FLINK_LAYOUT_LOADED.get() - loaded, "groups loaded");

        JobID restoredStock = environment(false).submit(json, nativeSavepoint);
        awaitRunning(cluster, restoredStock);
        Thread.sleep(500);
        assertEquals(JobStatus.RUNNING, cluster.getJobStatus(restoredStock).get());
        cluster.cancelJob(restoredStock).get(30, TimeUnit.SECONDS);
    }

    /** A table environment on the shared cluster with the tables, aggforge on or off. */
    private static Job environment(boolean aggforge) {
        StreamExecutionEnvironment env = SharedMiniCluster.environment(new Configuration());
        env.setParallelism(1);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        tEnv.getConfig().set(AggforgeOptions.ENABLED, aggforge);
        for (String ddl : TABLES) {
            tEnv.executeSql(ddl);
        }
        return new Job(env, tEnv);
    }

    private record Job(StreamExecutionEnvironment env, StreamTableEnvironment tEnv) {

        /** Translates {@code json} here and submits it, restoring from {@code savepoint} if set. */
        JobID submit(String json, String savepoint) throws Exception {
            Planner planner = ((TableEnvironmentImpl) tEnv).getPlanner();
            for (Transformation<?> sink :
                    planner.translatePlan(planner.loadPlan(PlanReference.fromJsonString(json)))) {
                env.addOperator(sink);
            }
            StreamGraph graph = env.getStreamGraph();
            if (savepoint != null) {
                graph.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(savepoint, false));
            }
            return FlinkTestShim.submit(SharedMiniCluster.cluster(), graph)
                    .get(30, TimeUnit.SECONDS)
                    .getJobID();
        }
    }

    private static void awaitRunning(MiniCluster cluster, JobID job) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (cluster.getJobStatus(job).get() != JobStatus.RUNNING) {
            assertTrue(System.nanoTime() < deadline, "job " + job + " did not start");
            Thread.sleep(50);
        }
    }

    /** Stop-with-savepoint, retried while the tasks are still starting. */
    private static String stopWithSavepoint(MiniCluster cluster, JobID job, String directory)
            throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try {
                String path =
                        cluster.stopWithSavepoint(job, directory, false, SavepointFormatType.CANONICAL)
                                .get(60, TimeUnit.SECONDS);
                assertTrue(
                        cluster.requestJobResult(job).get(60, TimeUnit.SECONDS).isSuccess(),
                        "the stopped job did not finish");
                return path;
            } catch (ExecutionException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(200);
            }
        }
    }
}
