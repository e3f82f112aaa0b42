package dev.aggforge.flink.planner.nodes;

import java.util.List;

import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelWriter;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalWindowAggregate;

/**
 * A single-phase window aggregate aggforge has decided on: native, or Flink's own with the reason in EXPLAIN (see {@link
 * StreamPhysicalAggforgeGroupAggregate}). Native, EXPLAIN names it {@code AggforgeWindowAggregate}.
 */
public final class StreamPhysicalAggforgeWindowAggregate extends StreamPhysicalWindowAggregate {

    private final AggforgeDecision decision;

    /** Replaces {@code original} (with {@code input} and {@code traits}) as {@code decision} says. */
    public StreamPhysicalAggforgeWindowAggregate(
            StreamPhysicalWindowAggregate original,
            RelTraitSet traits,
            RelNode input,
            AggforgeDecision decision) {
        super(
                original.getCluster(),
                traits,
                input,
                original.grouping(),
                original.aggCalls(),
                original.windowing(),
                original.namedWindowProperties());
        this.decision = decision;
    }

    /** What aggforge decided for this aggregate. */
    public AggforgeDecision decision() {
        return decision;
    }

    @Override
    public String getRelTypeName() {
        return decision.relTypeName("StreamPhysicalWindowAggregate");
    }

    @Override
    public RelNode copy(RelTraitSet traitSet, List<RelNode> inputs) {
        return new StreamPhysicalAggforgeWindowAggregate(this, traitSet, inputs.get(0), decision);
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
