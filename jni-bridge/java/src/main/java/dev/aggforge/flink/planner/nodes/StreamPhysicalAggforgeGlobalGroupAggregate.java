package dev.aggforge.flink.planner.nodes;

import java.util.List;

import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelWriter;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalGlobalGroupAggregate;

import dev.aggforge.flink.planner.describe.StockAggregate;

import scala.Option;

/**
 * The global phase of a two-phase group aggregate aggforge has decided on: native, or Flink's own
 * with the reason in EXPLAIN (see {@link StreamPhysicalAggforgeGroupAggregate}).
 */
public final class StreamPhysicalAggforgeGlobalGroupAggregate
        extends StreamPhysicalGlobalGroupAggregate {

    private final AggforgeDecision decision;
    private final Option<Object> indexOfCountStar;

    /** Replaces {@code original} (with {@code input} and {@code traits}) as {@code decision} says. */
    @SuppressWarnings("unchecked")
    public StreamPhysicalAggforgeGlobalGroupAggregate(
            StreamPhysicalGlobalGroupAggregate original,
            RelTraitSet traits,
            RelNode input,
            AggforgeDecision decision) {
        this(
                original,
                traits,
                input,
                decision,
                (Option<Object>) StockAggregate.field(original, "indexOfCountStar", Option.class));
    }

    private StreamPhysicalAggforgeGlobalGroupAggregate(
            StreamPhysicalGlobalGroupAggregate original,
            RelTraitSet traits,
            RelNode input,
            AggforgeDecision decision,
            Option<Object> indexOfCountStar) {
        super(
                original.getCluster(),
                traits,
                input,
                original.getRowType(),
                original.grouping(),
                original.aggCalls(),
                original.aggCallNeedRetractions(),
                original.localAggInputRowType(),
                original.needRetraction(),
                original.partialFinalType(),
                indexOfCountStar,
                original.hints());
        this.decision = decision;
        this.indexOfCountStar = indexOfCountStar;
    }

    /** What aggforge decided for this aggregate. */
    public AggforgeDecision decision() {
        return decision;
    }

    @Override
    public String getRelTypeName() {
        return decision.relTypeName("StreamPhysicalGlobalGroupAggregate");
    }

    @Override
    public RelNode copy(RelTraitSet traitSet, List<RelNode> inputs) {
        return new StreamPhysicalAggforgeGlobalGroupAggregate(
                this, traitSet, inputs.get(0), decision, indexOfCountStar);
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
