package dev.aggforge.flink.exchange;

import java.util.List;
import java.util.Map;

import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.streaming.api.graph.NonChainedOutput;
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.api.graph.StreamEdge;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;

/**
 * The shape of the network output a columnar exchange writes to: the receiving subtasks
 * (channels) and key groups of the record writer Flink set up for it, which are what Flink's own
 * partitioner would route by.
 *
 * @param channels the receiving aggregate's parallelism
 * @param keyGroups its number of key groups (max parallelism)
 */
public record NetworkOutput(int channels, int keyGroups) {

    /**
     * The network output at the end of {@code operator}'s chain: its own single network output,
     * or that of the one operator its output is chained into (and so on) when it has no network
     * output of its own. Following a chain reads the task's chain configuration, which Flink
     * drops once the task is set up: call it from {@code setup} then.
     *
     * @throws IllegalStateException when the chain forks or ends in another number of outputs
     */
    public static NetworkOutput of(AbstractStreamOperator<?> operator) {
        ClassLoader classLoader = operator.getUserCodeClassloader();
        StreamConfig task = operator.getContainingTask().getConfiguration();
        Map<Integer, StreamConfig> chain = null;
        StreamConfig config = operator.getOperatorConfig();
        for (int hops = 0; chain == null || hops <= chain.size(); hops++) {
            List<NonChainedOutput> network = config.getOperatorNonChainedOutputs(classLoader);
            List<StreamEdge> chained = config.getChainedOutputs(classLoader);
            if (network.size() == 1 && chained.isEmpty()) {
                ResultPartitionWriter writer = writer(operator, task, network.get(0), classLoader);
                return new NetworkOutput(
                        writer.getNumberOfSubpartitions(), writer.getNumTargetKeyGroups());
            }
            if (!network.isEmpty() || chained.size() != 1) {
                throw new IllegalStateException(
                        "a columnar exchange needs one network output at the end of its chain, but "
                                + config.getOperatorName()
                                + " has "
                                + network.size()
                                + " network and "
                                + chained.size()
                                + " chained outputs");
            }
            if (chain == null) {
                chain = task.getTransitiveChainedTaskConfigsWithSelf(classLoader);
            }
            config = chain.get(chained.get(0).getTargetId());
            if (config == null) {
                throw new IllegalStateException(
                        "a columnar exchange's chain names an operator its task does not hold");
            }
        }
        throw new IllegalStateException("a columnar exchange's chain loops");
    }

    private static ResultPartitionWriter writer(
            AbstractStreamOperator<?> operator,
            StreamConfig task,
            NonChainedOutput output,
            ClassLoader classLoader) {
        List<NonChainedOutput> all = task.getVertexNonChainedOutputs(classLoader);
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i).getDataSetId().equals(output.getDataSetId())) {
                return operator.getContainingTask().getEnvironment().getWriter(i);
            }
        }
        throw new IllegalStateException("a columnar exchange's network output has no writer");
    }
}
