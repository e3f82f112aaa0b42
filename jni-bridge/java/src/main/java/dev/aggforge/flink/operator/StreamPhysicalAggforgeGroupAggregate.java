package dev.aggforge.flink.operator;

import java.util.List;

import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelWriter;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalGroupAggregate;

/**
 * A single-phase group aggregate (immediate or mini-batch) that runs on the aggforge runtime.
 * Same traits, row type and input as the Flink node it replaces; EXPLAIN shows it as {@code
 * AggforgeGroupAggregate(..., aggforge=[specializations])}.
 */
public final class StreamPhysicalAggforgeGroupAggregate extends StreamPhysicalGroupAggregate {

    private final NativeOperatorSpec spec;

    /** Replaces {@code original} (with {@code input} and {@code traits}). */
    public StreamPhysicalAggforgeGroupAggregate(
            StreamPhysicalGroupAggregate original,
            RelTraitSet traits,
            RelNode input,
            NativeOperatorSpec spec) {
        super(
                original.getCluster(),
                traits,
                input,
                original.getRowType(),
                original.grouping(),
                original.aggCalls(),
                original.partialFinalType(),
                original.hints());
        this.spec = spec;
    }

    /** What the native operator runs. */
    public NativeOperatorSpec spec() {
        return spec;
    }

    @Override
    public RelNode copy(RelTraitSet traitSet, List<RelNode> inputs) {
        return new StreamPhysicalAggforgeGroupAggregate(this, traitSet, inputs.get(0), spec);
    }

    @Override
    public RelWriter explainTerms(RelWriter pw) {
        return super.explainTerms(pw).item("aggforge", spec.specializations());
    }

    @Override
    public ExecNode<?> translateToExecNode() {
        return NativeRewrite.execNode(super.translateToExecNode(), spec, grouping());
    }
}
