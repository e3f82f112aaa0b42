package dev.aggforge.flink.planner.nodes;

import java.util.List;

import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelWriter;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalLocalGroupAggregate;

import dev.aggforge.flink.planner.describe.StockAggregate;

/**
 * The local phase of a two-phase group aggregate aggforge has decided on: native, or Flink's own
 * with the reason in EXPLAIN (see {@link StreamPhysicalAggforgeGroupAggregate}).
 */
public final class StreamPhysicalAggforgeLocalGroupAggregate extends StreamPhysicalLocalGroupAggregate {

    private final AggforgeDecision decision;
    private final boolean[] aggCallNeedRetractions;
    private final boolean needRetraction;

    /** Replaces {@code original} (with {@code input} and {@code traits}) as {@code decision} says. */
    public StreamPhysicalAggforgeLocalGroupAggregate(
            StreamPhysicalLocalGroupAggregate original,
            RelTraitSet traits,
            RelNode input,
            AggforgeDecision decision) {
        this(
                original,
                traits,
                input,
                decision,
                StockAggregate.field(original, "aggCallNeedRetractions", boolean[].class),
                StockAggregate.field(original, "needRetraction", Boolean.class));
    }

    private StreamPhysicalAggforgeLocalGroupAggregate(
            StreamPhysicalLocalGroupAggregate original,
            RelTraitSet traits,
            RelNode input,
            AggforgeDecision decision,
            boolean[] aggCallNeedRetractions,
            boolean needRetraction) {
        super(
                original.getCluster(),
                traits,
                input,
                original.grouping(),
                original.aggCalls(),
                aggCallNeedRetractions,
                needRetraction,
                original.partialFinalType());
        this.decision = decision;
        this.aggCallNeedRetractions = aggCallNeedRetractions;
        this.needRetraction = needRetraction;
    }

    /** What aggforge decided for this aggregate. */
    public AggforgeDecision decision() {
        return decision;
    }

    @Override
    public String getRelTypeName() {
        return decision.relTypeName("StreamPhysicalLocalGroupAggregate");
    }

    @Override
    public RelNode copy(RelTraitSet traitSet, List<RelNode> inputs) {
        return new StreamPhysicalAggforgeLocalGroupAggregate(
                this, traitSet, inputs.get(0), decision, aggCallNeedRetractions, needRetraction);
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
