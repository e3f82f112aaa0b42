package dev.aggforge.flink.planner.nodes;

import java.util.List;

import org.apache.flink.api.dag.Transformation;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.planner.delegation.PlannerBase;
import org.apache.flink.table.planner.plan.nodes.exec.ExecEdge;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeBase;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeConfig;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeContext;
import org.apache.flink.table.planner.plan.nodes.exec.InputProperty;
import org.apache.flink.table.planner.plan.nodes.exec.SingleTransformationTranslator;
import org.apache.flink.table.planner.plan.nodes.exec.stream.StreamExecNode;
import org.apache.flink.table.planner.plan.nodes.exec.utils.ExecNodeUtil;
import org.apache.flink.table.planner.plan.utils.KeySelectorUtil;
import org.apache.flink.table.runtime.keyselector.RowDataKeySelector;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;

import dev.aggforge.flink.operator.NativeGroupAggOperator;
import dev.aggforge.flink.operator.NativeOperatorSpec;

/**
 * The exec node of a native group aggregate (any phase): one transformation running {@link
 * NativeGroupAggOperator}, keyed by the same {@code BinaryRowData} key selector Flink's own
 * aggregate uses (except the local phase, which is not keyed).
 *
 * <p>Not registered for compiled (JSON) plans: a plan with it cannot be compiled.
 */
public final class StreamExecAggforgeGroupAggregate extends ExecNodeBase<RowData>
        implements StreamExecNode<RowData>, SingleTransformationTranslator<RowData> {

    /** Type name of the node ({@code name_version}). */
    public static final String TYPE = "stream-exec-aggforge-group-aggregate_1";

    /** Transformation name (the uid suffix). */
    public static final String TRANSFORMATION = "aggforge-group-aggregate";

    private final NativeOperatorSpec spec;
    private final int[] grouping;

    /**
     * @param persistedConfig the replaced stock node's persisted configuration
     * @param spec what the operator runs
     * @param grouping input fields of the group keys
     * @param inputProperties the replaced node's input properties
     * @param outputType the output row type
     * @param description the physical node's description
     */
    public StreamExecAggforgeGroupAggregate(
            ReadableConfig persistedConfig,
            NativeOperatorSpec spec,
            int[] grouping,
            List<InputProperty> inputProperties,
            RowType outputType,
            String description) {
        super(
                ExecNodeContext.newNodeId(),
                new ExecNodeContext(TYPE),
                persistedConfig,
                inputProperties,
                outputType,
                description);
        this.spec = spec;
        this.grouping = grouping.clone();
    }

    /** What the operator runs. */
    public NativeOperatorSpec spec() {
        return spec;
    }

    @Override
    @SuppressWarnings("unchecked")
    protected Transformation<RowData> translateToPlanInternal(
            PlannerBase planner, ExecNodeConfig config) {
        ExecEdge inputEdge = getInputEdges().get(0);
        Transformation<RowData> input = (Transformation<RowData>) inputEdge.translateToPlan(planner);
        RowType inputRowType = (RowType) inputEdge.getOutputType();
        SimpleOperatorFactory<RowData> factory =
                SimpleOperatorFactory.of(new NativeGroupAggOperator(spec));
        factory.setChainingStrategy(ChainingStrategy.ALWAYS);
        OneInputTransformation<RowData, RowData> transform =
                ExecNodeUtil.createOneInputTransformation(
                        input,
                        createTransformationMeta(TRANSFORMATION, config),
                        factory,
                        InternalTypeInfo.of((RowType) getOutputType()),
                        input.getParallelism(),
                        false);
        if (spec.mode().keyed()) {
            RowDataKeySelector selector =
                    KeySelectorUtil.getRowDataSelector(
                            planner.getFlinkContext().getClassLoader(),
                            grouping,
                            InternalTypeInfo.of(inputRowType));
            transform.setStateKeySelector(selector);
            transform.setStateKeyType(selector.getProducedType());
        }
        return transform;
    }
}
