package dev.aggforge.flink.shim;

import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobSubmissionResult;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.dag.Pipeline;
import org.apache.flink.client.deployment.executors.PipelineExecutorUtils;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.graph.StreamGraph;

/** Test-side calls that differ by Flink version; this copy: Flink 2.x (2.2, 2.3). */
public final class FlinkTestShim {
    private FlinkTestShim() {}

    /**
     * Flink 2.x: the MiniCluster takes the StreamGraph itself (an ExecutionPlan). A graph from
     * {@code env.getStreamGraph()} has no job id; Flink 2.3's MiniCluster wraps the plan in a
     * SingleJobApplication, whose StreamGraph.getJobID() then fails (NPE; 2.2 accepted it), so
     * give it one as PipelineExecutorUtils.getStreamGraph does.
     */
    public static CompletableFuture<JobSubmissionResult> submit(MiniCluster cluster, StreamGraph graph)
            throws Exception {
        graph.setJobId(new JobID());
        return submitPlan(cluster, graph);
    }

    private static CompletableFuture<JobSubmissionResult> submitPlan(MiniCluster cluster, StreamGraph graph)
            throws Exception {
        graph.serializeUserDefinedInstances();
        return cluster.submitJob(graph);
    }

    /** What a PipelineExecutor does with a pipeline: Flink 2.x turns it into a StreamGraph. */
    public static CompletableFuture<JobSubmissionResult> submit(
            MiniCluster cluster, Pipeline pipeline, Configuration jobConfig, ClassLoader userClassLoader)
            throws Exception {
        return submitPlan(cluster, PipelineExecutorUtils.getStreamGraph(pipeline, jobConfig));
    }

    /** A sink whose writer needs no context (Flink 2.x: createWriter(WriterInitContext) only). */
    public abstract static class ContextFreeSink<T> implements Sink<T> {
        private static final long serialVersionUID = 1L;

        protected abstract SinkWriter<T> openWriter();

        @Override
        public SinkWriter<T> createWriter(WriterInitContext context) {
            return openWriter();
        }
    }
}
