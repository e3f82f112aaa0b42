package dev.aggforge.flink.planner;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.calcite.rel.RelNode;
import org.apache.flink.table.api.TableConfig;
import org.apache.flink.table.planner.calcite.FlinkTypeFactory;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeConfig;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeContext;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalGroupAggregateBase;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalWindowAggregateBase;
import org.apache.flink.table.planner.plan.optimize.program.FlinkOptimizeProgram;
import org.apache.flink.table.planner.plan.optimize.program.StreamOptimizeContext;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.bootstrap.PlannerHook;
import dev.aggforge.flink.plan.AggregateDescriptor;
import dev.aggforge.flink.plan.Preflight;
import dev.aggforge.flink.planner.nodes.AggforgeDecision;
import dev.aggforge.flink.planner.nodes.ColumnarExchange;
import dev.aggforge.flink.planner.describe.StockAggregate;
import dev.aggforge.flink.planner.nodes.NativeRewrite;
import dev.aggforge.flink.planner.nodes.WindowRewrite;

/**
 * The aggforge step of the stream optimizer, run after all of Flink's own programs on the
 * optimized physical plan. With {@link AggforgeOptions#ENABLED} on, it checks the configuration
 * ({@link Preflight}), then visits every group aggregate (single, local and global phase),
 * extracts its {@link AggregateDescriptor}, records and logs it, decides whether it runs natively
 * and puts the node carrying that decision in its place (EXPLAIN shows the specializations, or
 * why the aggregate stays on Flink).
 *
 * <p>One instance is installed per TableConfig by {@link AggforgePlanner}; it is shared by every
 * optimization of that environment (EXPLAIN, executeSql, toChangelogStream, ...), each of which
 * records its descriptors again.
 */
public final class AggforgeRewriteProgram
        implements FlinkOptimizeProgram<StreamOptimizeContext>, PlannerHook {

    private final List<AggregateDescriptor> recorded = new CopyOnWriteArrayList<>();

    @Override
    public RelNode optimize(RelNode root, StreamOptimizeContext context) {
        TableConfig config = context.getTableConfig();
        if (!Preflight.enabled(config)) {
            return root;
        }
        Preflight.check(config);
        return rewrite(root, config);
    }

    @Override
    public List<AggregateDescriptor> descriptors() {
        return new ArrayList<>(recorded);
    }

    @Override
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
        if (WindowRewrite.replaceable(current)) {
            StreamPhysicalWindowAggregateBase window = (StreamPhysicalWindowAggregateBase) current;
            NativeRewrite.Outcome outcome =
                    WindowRewrite.decide(window, ExecNodeConfig.ofTableConfig(config, false));
            recorded.add(outcome.descriptor());
            return WindowRewrite.replace(window, outcome.decision());
        }
        if (!NativeRewrite.replaceable(current)) {
            return current;
        }
        StreamPhysicalGroupAggregateBase aggregate = (StreamPhysicalGroupAggregateBase) current;
        Optional<StockAggregate> stock = StockAggregate.of(stockExecNode(aggregate));
        if (stock.isEmpty()) {
            return current;
        }
        NativeRewrite.Outcome outcome =
                NativeRewrite.decide(
                        stock.get(),
                        FlinkTypeFactory.toLogicalRowType(aggregate.getInput().getRowType()),
                        ExecNodeConfig.ofTableConfig(config, false),
                        (FlinkTypeFactory) aggregate.getCluster().getTypeFactory());
        recorded.add(outcome.descriptor());
        AggforgeDecision decision =
                outcome.decision()
                        .withExchange(
                                ColumnarExchange.explain(
                                        aggregate.getInput(),
                                        stock.get().grouping(),
                                        config.get(AggforgeOptions.COLUMNAR_EXCHANGE),
                                        ExecNodeConfig.ofTableConfig(config, false).shouldSetUid()));
        return NativeRewrite.replace(aggregate, decision);
    }

    /**
     * Flink's exec node of {@code aggregate}, to describe it, without using up an exec node id.
     * Flink numbers exec nodes from one JVM-wide counter ({@code ExecNodeContext.newNodeId()}) as
     * it translates the optimized plan; an id drawn here, during optimization, would shift the id
     * of every node translated later, and with it the uids Flink derives from ids (compiled plans,
     * {@code table.exec.uid.generation=ALWAYS}), so the plan's operators would no longer have the
     * ids stock Flink gives them. Flink has no call to translate without an id nor to give one
     * back, so the counter is set back reflectively (if no other thread drew an id meanwhile).
     */
    private static ExecNode<?> stockExecNode(StreamPhysicalGroupAggregateBase aggregate) {
        AtomicInteger counter = nodeIdCounter();
        int before = counter.get();
        ExecNode<?> node = aggregate.translateToExecNode();
        counter.compareAndSet(node.getId(), before);
        return node;
    }

    private static AtomicInteger nodeIdCounter() {
        try {
            Field field = ExecNodeContext.class.getDeclaredField("idCounter");
            field.setAccessible(true);
            return (AtomicInteger) field.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("aggforge: Flink's exec node id counter is not readable", e);
        }
    }
}
