package dev.aggforge.flink.harness;

import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import dev.aggforge.flink.shim.FlinkTestShim;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.PipelineExecutor;
import org.apache.flink.core.execution.PipelineExecutorFactory;
import org.apache.flink.core.execution.PipelineExecutorServiceLoader;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.minicluster.MiniClusterJobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * One in-process MiniCluster for the whole test JVM, started on first use and stopped at JVM
 * exit. Jobs go to it through a {@link PipelineExecutorServiceLoader}, so {@code execute()} and
 * {@code executeAndCollect()} work as usual, without per-job cluster start-up and without the
 * per-job cluster's race (it can shut down before the collect sink's last results are fetched).
 */
public final class SharedMiniCluster {

    /** Slots available to jobs: enough for parallelism 4 with slot sharing. */
    public static final int SLOTS = 4;

    private static final String EXECUTOR_NAME = "aggforge-shared-minicluster";

    private static MiniCluster cluster;

    private SharedMiniCluster() {}

    /** A stream environment whose jobs run on the shared cluster. */
    public static synchronized StreamExecutionEnvironment environment(Configuration config) {
        MiniCluster running = start();
        ClassLoader classLoader = Thread.currentThread().getContextClassLoader();
        Configuration withTarget = new Configuration(config);
        withTarget.set(DeploymentOptions.TARGET, EXECUTOR_NAME);
        withTarget.set(DeploymentOptions.ATTACHED, true);
        return new StreamExecutionEnvironment(new Loader(running), withTarget, classLoader);
    }

    /**
     * The shared cluster itself (started if need be), for tests that drive jobs directly: submit
     * a stream graph with restore settings, take savepoints, read execution graphs.
     */
    public static synchronized MiniCluster cluster() {
        return start();
    }

    private static MiniCluster start() {
        if (cluster == null) {
            Configuration config = new Configuration();
            config.set(RestOptions.BIND_PORT, "0");
            config.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.ofMebiBytes(128));
            config.set(TaskManagerOptions.NETWORK_MEMORY_MIN, MemorySize.ofMebiBytes(64));
            config.set(TaskManagerOptions.NETWORK_MEMORY_MAX, MemorySize.ofMebiBytes(64));
            MiniCluster started =
                    new MiniCluster(
                            new MiniClusterConfiguration.Builder()
                                    .setConfiguration(config)
                                    .setNumTaskManagers(1)
                                    .setNumSlotsPerTaskManager(SLOTS)
                                    .build());
            try {
                started.start();
            } catch (Exception e) {
                throw new IllegalStateException("cannot start the MiniCluster", e);
            }
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(() -> started.closeAsync().join(), "minicluster-stop"));
            cluster = started;
        }
        return cluster;
    }

    private static final class Loader implements PipelineExecutorServiceLoader {
        private final MiniCluster cluster;

        Loader(MiniCluster cluster) {
            this.cluster = cluster;
        }

        @Override
        public PipelineExecutorFactory getExecutorFactory(Configuration configuration) {
            return new PipelineExecutorFactory() {
                @Override
                public String getName() {
                    return EXECUTOR_NAME;
                }

                @Override
                public boolean isCompatibleWith(Configuration configuration) {
                    return true;
                }

                @Override
                public PipelineExecutor getExecutor(Configuration configuration) {
                    return (pipeline, jobConfig, userClassLoader) -> submit(pipeline, jobConfig, userClassLoader);
                }
            };
        }

        private CompletableFuture<JobClient> submit(
                org.apache.flink.api.dag.Pipeline pipeline,
                Configuration jobConfig,
                ClassLoader userClassLoader)
                throws Exception {
            return FlinkTestShim.submit(cluster, pipeline, jobConfig, userClassLoader)
                    .thenApply(
                            submitted ->
                                    new MiniClusterJobClient(
                                            submitted.getJobID(),
                                            cluster,
                                            userClassLoader,
                                            MiniClusterJobClient.JobFinalizationBehavior.NOTHING));
        }

        @Override
        public Stream<String> getExecutorNames() {
            return Stream.of(EXECUTOR_NAME);
        }
    }
}
