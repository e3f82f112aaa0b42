package dev.aggforge.flink.planner.nodes;

import java.util.List;

import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelWriter;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalGroupAggregate;

/**
 * A single-phase group aggregate (immediate or mini-batch) aggforge has decided on. Same traits,
 * row type and input as the Flink node it replaces. Native: EXPLAIN shows {@code
 * AggforgeGroupAggregate(..., aggforge=[specializations])} and the exec node runs the native
 * operator. Kept on Flink: EXPLAIN shows {@code GroupAggregate(..., aggforge=[stays on Flink:
 * reason])} and the exec node is Flink's own, unchanged.
 */
public final class StreamPhysicalAggforgeGroupAggregate extends StreamPhysicalGroupAggregate {

    private final AggforgeDecision decision;

    /** Replaces {@code original} (with {@code input} and {@code traits}) as {@code decision} says. */
    public StreamPhysicalAggforgeGroupAggregate(
            StreamPhysicalGroupAggregate original,
            RelTraitSet traits,
            RelNode input,
            AggforgeDecision decision) {
        super(
                original.getCluster(),
                traits,
                input,
                original.getRowType(),
                original.grouping(),
                original.aggCalls(),
                original.partialFinalType(),
                original.hints());
        this.decision = decision;
    }

    /** What aggforge decided for this aggregate. */
    public AggforgeDecision decision() {
        return decision;
    }

    @Override
    public String getRelTypeName() {
        return decision.relTypeName("StreamPhysicalGroupAggregate");
    }

    @Override
    public RelNode copy(RelTraitSet traitSet, List<RelNode> inputs) {
        return new StreamPhysicalAggforgeGroupAggregate(this, traitSet, inputs.get(0), decision);
    }

    @Override
    public RelWriter explainTerms(RelWriter pw) {
        return decision.explainTerms(super.explainTerms(pw));
    }

    @Override
    public ExecNode<?> translateToExecNode() {
        return decision.execNode(super.translateToExecNode(), grouping());
    }
}
