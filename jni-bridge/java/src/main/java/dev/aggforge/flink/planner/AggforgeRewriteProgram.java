package dev.aggforge.flink.planner;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.calcite.rel.RelNode;
import org.apache.flink.table.api.TableConfig;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalGroupAggregateBase;
import org.apache.flink.table.planner.plan.optimize.program.FlinkOptimizeProgram;
import org.apache.flink.table.planner.plan.optimize.program.StreamOptimizeContext;
import org.apache.flink.table.planner.utils.ShortcutUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.aggforge.flink.operator.NativeRewrite;

/**
 * The aggforge step of the stream optimizer, run after all of Flink's own programs on the
 * optimized physical plan. With {@link AggforgeOptions#ENABLED} on, it visits every group
 * aggregate (single, local and global phase), extracts its {@link AggregateDescriptor}, records
 * and logs it, and asks {@link #replaceWithNativeOperator} for the node to put in its place.
 *
 * <p>One instance is installed per TableConfig by {@link AggforgePlanner}; it is shared by every
 * optimization of that environment (EXPLAIN, executeSql, toChangelogStream, ...), each of which
 * records its descriptors again.
 */
public final class AggforgeRewriteProgram implements FlinkOptimizeProgram<StreamOptimizeContext> {

    private static final Logger LOG = LoggerFactory.getLogger(AggforgeRewriteProgram.class);

    private final List<AggregateDescriptor> recorded = new CopyOnWriteArrayList<>();

    @Override
    public RelNode optimize(RelNode root, StreamOptimizeContext context) {
        TableConfig config = context.getTableConfig();
        if (!config.get(AggforgeOptions.ENABLED)) {
            return root;
        }
        return rewrite(root, config);
    }

    /** Descriptors recorded so far, in plan order (inputs before consumers). */
    public List<AggregateDescriptor> descriptors() {
        return new ArrayList<>(recorded);
    }

    /** Forgets the recorded descriptors. */
    public void clearDescriptors() {
        recorded.clear();
    }

    private RelNode rewrite(RelNode node, TableConfig config) {
        List<RelNode> inputs = new ArrayList<>(node.getInputs().size());
        boolean changed = false;
        for (RelNode input : node.getInputs()) {
            RelNode rewritten = rewrite(input, config);
            inputs.add(rewritten);
            changed |= rewritten != input;
        }
        RelNode current = changed ? node.copy(node.getTraitSet(), inputs) : node;
        Optional<AggregateDescriptor> descriptor = AggregateDescriber.describe(current, config);
        if (descriptor.isEmpty()) {
            return current;
        }
        AggregateDescriptor described = descriptor.get();
        recorded.add(described);
        if (described.supportedByJavaSide()) {
            LOG.info("aggforge: group aggregate described:\n{}", described.toText());
        } else {
            LOG.info(
                    "aggforge: group aggregate stays on Flink ({}):\n{}",
                    described.unsupported(),
                    described.toText());
            return current;
        }
        return replaceWithNativeOperator((StreamPhysicalGroupAggregateBase) current, described);
    }

    /**
     * <b>The replacement point.</b> Returns the physical node that runs {@code node}'s aggregate:
     * when the native runtime admits the descriptor's plan, a subclass of the node's class (same
     * traits, row type and input, so the rest of the plan stays valid) that EXPLAIN shows as
     * {@code Aggforge...GroupAggregate(..., aggforge=[specializations])} and whose exec node runs
     * {@link dev.aggforge.flink.operator.NativeGroupAggOperator}; otherwise {@code node} itself,
     * with the reason logged.
     */
    RelNode replaceWithNativeOperator(StreamPhysicalGroupAggregateBase node, AggregateDescriptor descriptor) {
        NativeRewrite.Outcome outcome =
                NativeRewrite.replace(node, descriptor, ShortcutUtils.unwrapTableConfig(node));
        if (outcome.replaced()) {
            LOG.info("aggforge: group aggregate runs natively ({})", outcome.admission());
            return outcome.replacement();
        }
        LOG.info("aggforge: group aggregate stays on Flink ({})", outcome.reason());
        return node;
    }
}
