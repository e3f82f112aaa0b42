package dev.aggforge.flink.shim;

import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.common.JobSubmissionResult;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.dag.Pipeline;
import org.apache.flink.client.deployment.executors.PipelineExecutorUtils;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.graph.StreamGraph;

/** Test-side calls that differ by Flink version; this copy: Flink 1.20. */
public final class FlinkTestShim {
    private FlinkTestShim() {}

    /** Flink 1.20: MiniCluster.submitJob takes a JobGraph (2.x: an ExecutionPlan, e.g. the StreamGraph). */
    public static CompletableFuture<JobSubmissionResult> submit(MiniCluster cluster, StreamGraph graph) {
        return cluster.submitJob(graph.getJobGraph());
    }

    /** What a PipelineExecutor does with a pipeline: Flink 1.20 compiles it to a JobGraph. */
    public static CompletableFuture<JobSubmissionResult> submit(
            MiniCluster cluster, Pipeline pipeline, Configuration jobConfig, ClassLoader userClassLoader)
            throws Exception {
        return cluster.submitJob(PipelineExecutorUtils.getJobGraph(pipeline, jobConfig, userClassLoader));
    }

    /**
     * A sink whose writer needs no context. Flink 1.20's Sink still has the abstract
     * createWriter(Sink.InitContext) (removed in 2.0) beside the default
     * createWriter(WriterInitContext).
     */
    public abstract static class ContextFreeSink<T> implements Sink<T> {
        private static final long serialVersionUID = 1L;

        protected abstract SinkWriter<T> openWriter();

        @Override
        @SuppressWarnings("deprecation")
        public SinkWriter<T> createWriter(Sink.InitContext context) {
            return openWriter();
        }

        @Override
        public SinkWriter<T> createWriter(WriterInitContext context) {
            return openWriter();
        }
    }
}
