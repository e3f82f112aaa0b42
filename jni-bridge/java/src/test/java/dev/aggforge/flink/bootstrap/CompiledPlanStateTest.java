package dev.aggforge.flink.bootstrap;

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
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.table.api.PlanReference;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.api.internal.TableEnvironmentImpl;
import org.apache.flink.table.delegation.Planner;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.harness.SharedMiniCluster;
import dev.aggforge.flink.shim.FlinkTestShim;

/**
 * A savepoint of a job running a plan compiled on stock Flink never feeds aggforge's operator
 * silently: executing the same plan natively from it fails in Flink's state assignment (the
 * native operator has another uid), while the stock execution restores from it.
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
    void aStockSavepointDoesNotRestoreIntoTheNativeOperator(@TempDir Path savepoints)
            throws Exception {
        String json = environment(false).tEnv.compilePlanSql(INSERT).asJsonString();
        MiniCluster cluster = SharedMiniCluster.cluster();

        JobID stock = environment(false).submit(json, null);
        awaitRunning(cluster, stock);
        String savepoint =
                stopWithSavepoint(cluster, stock, savepoints.resolve("stock").toString());
        assertTrue(Files.exists(Path.of(savepoint.replace("file:", ""))), savepoint);

        JobID restoredStock = environment(false).submit(json, savepoint);
        awaitRunning(cluster, restoredStock);
        cluster.cancelJob(restoredStock).get(30, TimeUnit.SECONDS);

        JobID nativeJob = environment(true).submit(json, savepoint);
        JobResult result = cluster.requestJobResult(nativeJob).get(60, TimeUnit.SECONDS);
        assertTrue(!result.isSuccess(), "the native job restored a stock savepoint");
        Throwable failure =
                result.getSerializedThrowable()
                        .get()
                        .deserializeError(Thread.currentThread().getContextClassLoader());
        String message = ExceptionUtils.stringifyException(failure);
        assertTrue(message.contains("Cannot map checkpoint/savepoint state for operator"), message);
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
