package dev.aggforge.flink.operator;

import java.util.List;

import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelWriter;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalGlobalGroupAggregate;

import scala.Option;

/** The global phase of a two-phase group aggregate, run on the aggforge runtime. */
public final class StreamPhysicalAggforgeGlobalGroupAggregate
        extends StreamPhysicalGlobalGroupAggregate {

    private final NativeOperatorSpec spec;
    private final Option<Object> indexOfCountStar;

    /** Replaces {@code original} (with {@code input} and {@code traits}). */
    @SuppressWarnings("unchecked")
    public StreamPhysicalAggforgeGlobalGroupAggregate(
            StreamPhysicalGlobalGroupAggregate original,
            RelTraitSet traits,
            RelNode input,
            NativeOperatorSpec spec) {
        this(
                original,
                traits,
                input,
                spec,
                (Option<Object>) NativeRewrite.privateField(original, "indexOfCountStar", Option.class));
    }

    private StreamPhysicalAggforgeGlobalGroupAggregate(
            StreamPhysicalGlobalGroupAggregate original,
            RelTraitSet traits,
            RelNode input,
            NativeOperatorSpec spec,
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
        this.spec = spec;
        this.indexOfCountStar = indexOfCountStar;
    }

    /** What the native operator runs. */
    public NativeOperatorSpec spec() {
        return spec;
    }

    @Override
    public RelNode copy(RelTraitSet traitSet, List<RelNode> inputs) {
        return new StreamPhysicalAggforgeGlobalGroupAggregate(
                this, traitSet, inputs.get(0), spec, indexOfCountStar);
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
