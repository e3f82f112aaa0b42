package dev.aggforge.flink.operator;

import java.util.List;

import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelWriter;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalLocalGroupAggregate;

/** The local phase of a two-phase group aggregate, run on the aggforge runtime. */
public final class StreamPhysicalAggforgeLocalGroupAggregate extends StreamPhysicalLocalGroupAggregate {

    private final NativeOperatorSpec spec;
    private final boolean[] aggCallNeedRetractions;
    private final boolean needRetraction;

    /** Replaces {@code original} (with {@code input} and {@code traits}). */
    public StreamPhysicalAggforgeLocalGroupAggregate(
            StreamPhysicalLocalGroupAggregate original,
            RelTraitSet traits,
            RelNode input,
            NativeOperatorSpec spec) {
        this(
                original,
                traits,
                input,
                spec,
                NativeRewrite.privateField(original, "aggCallNeedRetractions", boolean[].class),
                NativeRewrite.privateField(original, "needRetraction", Boolean.class));
    }

    private StreamPhysicalAggforgeLocalGroupAggregate(
            StreamPhysicalLocalGroupAggregate original,
            RelTraitSet traits,
            RelNode input,
            NativeOperatorSpec spec,
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
        this.spec = spec;
        this.aggCallNeedRetractions = aggCallNeedRetractions;
        this.needRetraction = needRetraction;
    }

    /** What the native operator runs. */
    public NativeOperatorSpec spec() {
        return spec;
    }

    @Override
    public RelNode copy(RelTraitSet traitSet, List<RelNode> inputs) {
        return new StreamPhysicalAggforgeLocalGroupAggregate(
                this, traitSet, inputs.get(0), spec, aggCallNeedRetractions, needRetraction);
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
