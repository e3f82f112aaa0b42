package dev.aggforge.flink.planner.nodes;

import java.util.List;

import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelWriter;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalIncrementalGroupAggregate;

import dev.aggforge.flink.planner.describe.StockAggregate;

/**
 * The incremental aggregate of a split-distinct plan in mini-batch mode (the partial level's
 * global phase fused with the final level's local phase) aggforge has decided on: native, or
 * Flink's own with the reason in EXPLAIN (see {@link StreamPhysicalAggforgeGroupAggregate}). Its
 * state is keyed by the partial level's keys.
 */
public final class StreamPhysicalAggforgeIncrementalGroupAggregate
        extends StreamPhysicalIncrementalGroupAggregate {

    private final AggforgeDecision decision;

    /** Replaces {@code original} (with {@code input} and {@code traits}) as {@code decision} says. */
    public StreamPhysicalAggforgeIncrementalGroupAggregate(
            StreamPhysicalIncrementalGroupAggregate original,
            RelTraitSet traits,
            RelNode input,
            AggforgeDecision decision) {
        // The node keeps its calls and row types private; the same names in Flink 1.20, 2.2, 2.3.
        super(
                original.getCluster(),
                traits,
                input,
                original.partialAggGrouping(),
                original.partialAggCalls(),
                original.grouping(),
                StockAggregate.field(original, "finalAggCalls", AggregateCall[].class),
                StockAggregate.field(original, "partialOriginalAggCalls", AggregateCall[].class),
                StockAggregate.field(original, "partialAggCallNeedRetractions", boolean[].class),
                StockAggregate.field(original, "partialAggNeedRetraction", Boolean.class),
                StockAggregate.field(original, "partialLocalAggInputRowType", RelDataType.class),
                StockAggregate.field(original, "partialGlobalAggRowType", RelDataType.class),
                original.hints());
        this.decision = decision;
    }

    /** What aggforge decided for this aggregate. */
    public AggforgeDecision decision() {
        return decision;
    }

    @Override
    public String getRelTypeName() {
        return decision.relTypeName("StreamPhysicalIncrementalGroupAggregate");
    }

    @Override
    public RelNode copy(RelTraitSet traitSet, List<RelNode> inputs) {
        return new StreamPhysicalAggforgeIncrementalGroupAggregate(
                this, traitSet, inputs.get(0), decision);
    }

    @Override
    public RelWriter explainTerms(RelWriter pw) {
        return decision.explainTerms(super.explainTerms(pw));
    }

    @Override
    public ExecNode<?> translateToExecNode() {
        // The state is keyed by the partial level's keys.
        return decision.execNode(super.translateToExecNode(), partialAggGrouping());
    }
}
