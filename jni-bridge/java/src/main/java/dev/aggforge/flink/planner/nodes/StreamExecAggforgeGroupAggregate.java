package dev.aggforge.flink.planner.nodes;

import java.util.List;
import java.util.Optional;

import org.apache.flink.FlinkVersion;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.annotation.JsonCreator;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.annotation.JsonIgnore;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.annotation.JsonProperty;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.planner.delegation.PlannerBase;
import org.apache.flink.table.planner.plan.nodes.exec.ExecEdge;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeBase;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeConfig;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeContext;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeMetadata;
import org.apache.flink.table.planner.plan.nodes.exec.InputProperty;
import org.apache.flink.table.planner.plan.nodes.exec.SingleTransformationTranslator;
import org.apache.flink.table.planner.plan.nodes.exec.stream.StreamExecNode;
import org.apache.flink.table.planner.plan.nodes.exec.utils.ExecNodeUtil;
import org.apache.flink.table.planner.plan.nodes.exec.utils.TransformationMetadata;
import org.apache.flink.table.planner.plan.utils.ExecNodeMetadataUtil;
import org.apache.flink.table.planner.plan.utils.KeySelectorUtil;
import org.apache.flink.table.runtime.keyselector.RowDataKeySelector;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.exchange.MessageBatchSink;
import dev.aggforge.flink.exchange.MessageKeySelector;
import dev.aggforge.flink.nativelib.ArrowAggregate;
import dev.aggforge.flink.operator.ColumnarGroupAggOperator;
import dev.aggforge.flink.operator.NativeGroupAggOperator;
import dev.aggforge.flink.operator.NativeOperatorSpec;
import dev.aggforge.flink.plan.Preflight;

/**
 * The exec node of a native group aggregate (any phase): one transformation running {@link
 * NativeGroupAggOperator}, keyed by the same {@code BinaryRowData} key selector Flink's own
 * aggregate uses (except the local phase, which is not keyed).
 *
 * <p>Compiled plans ({@code COMPILE PLAN} / {@code EXECUTE PLAN}): the node serializes as {@value
 * #NAME} version 1, carrying its operator spec under {@value #FIELD_NAME_SPEC}; {@link
 * #register()} makes Flink's plan reader know it. Executing such a plan with aggforge off fails
 * with a sentence naming the option (the plan's state is aggforge's).
 */
@ExecNodeMetadata(
        name = StreamExecAggforgeGroupAggregate.NAME,
        version = 1,
        producedTransformations = StreamExecAggforgeGroupAggregate.TRANSFORMATION,
        minPlanVersion = FlinkVersion.v1_15,
        minStateVersion = FlinkVersion.v1_15)
public final class StreamExecAggforgeGroupAggregate extends ExecNodeBase<RowData>
        implements StreamExecNode<RowData>, SingleTransformationTranslator<RowData>, RoutableLocal {

    /** The node's name in compiled plans. */
    public static final String NAME = "stream-exec-aggforge-group-aggregate";

    /** The JSON field holding the operator spec. */
    public static final String FIELD_NAME_SPEC = "aggforge";

    /** The JSON field holding the group key fields. */
    public static final String FIELD_NAME_GROUPING = "grouping";

    /** The JSON field holding the replaced stock node's transformation name (the uid suffix). */
    public static final String FIELD_NAME_TRANSFORMATION = "transformation";

    /**
     * Transformation name (the uid suffix) of plans compiled by aggforge builds that did not record
     * the stock node's; new nodes use the stock node's name.
     */
    public static final String TRANSFORMATION = "aggforge-group-aggregate";

    /** Transformation name of a window aggregate, any phase, of such plans. */
    public static final String WINDOW_TRANSFORMATION = "aggforge-window-aggregate";

    @JsonProperty(FIELD_NAME_SPEC)
    private final NativeOperatorSpec spec;

    @JsonProperty(FIELD_NAME_GROUPING)
    private final int[] grouping;

    @JsonProperty(FIELD_NAME_TRANSFORMATION)
    private final String transformation;

    /** The aggregate a local phase's output is routed to, if a columnar exchange asked. */
    @JsonIgnore private transient NativeOperatorSpec receiver;

    /**
     * The node taking the place of Flink's exec node {@code stock}: the same exec node id (so no
     * id is drawn from Flink's counter and every node keeps the id, and with uids the uid, stock
     * Flink gives it), configuration, inputs, output and description, and the stock node's
     * transformation name as uid suffix (so the native operator gets the stock operator's uid).
     *
     * @param stock the replaced stock exec node
     * @param spec what the operator runs
     * @param grouping input fields of the group keys
     */
    public StreamExecAggforgeGroupAggregate(
            ExecNodeBase<?> stock, NativeOperatorSpec spec, int[] grouping) {
        this(
                stock.getId(),
                ExecNodeContext.newContext(StreamExecAggforgeGroupAggregate.class),
                stock.getPersistedConfig(),
                spec,
                grouping,
                stockTransformation(stock),
                stock.getInputProperties(),
                (RowType) stock.getOutputType(),
                stock.getDescription());
    }

    /** Restores the node from a compiled plan. */
    @JsonCreator
    public StreamExecAggforgeGroupAggregate(
            @JsonProperty(FIELD_NAME_ID) int id,
            @JsonProperty(FIELD_NAME_TYPE) ExecNodeContext context,
            @JsonProperty(FIELD_NAME_CONFIGURATION) ReadableConfig persistedConfig,
            @JsonProperty(FIELD_NAME_SPEC) NativeOperatorSpec spec,
            @JsonProperty(FIELD_NAME_GROUPING) int[] grouping,
            @JsonProperty(FIELD_NAME_TRANSFORMATION) String transformation,
            @JsonProperty(FIELD_NAME_INPUT_PROPERTIES) List<InputProperty> inputProperties,
            @JsonProperty(FIELD_NAME_OUTPUT_TYPE) RowType outputType,
            @JsonProperty(FIELD_NAME_DESCRIPTION) String description) {
        super(id, context, persistedConfig, inputProperties, outputType, description);
        this.spec = spec;
        this.grouping = grouping.clone();
        this.transformation = transformation;
    }

    /**
     * The name of the one transformation Flink's exec node {@code stock} produces (such as {@code
     * group-aggregate} or {@code local-window-aggregate}), from its {@link ExecNodeMetadata}.
     */
    public static String stockTransformation(ExecNode<?> stock) {
        // Compiled-plan nodes subclass Flink's (CompiledGroupAggregate, which also names the
        // transformation of earlier aggforge builds): Flink's own annotation names the stock one.
        for (Class<?> type = stock.getClass(); ExecNode.class.isAssignableFrom(type); type = type.getSuperclass()) {
            @SuppressWarnings("unchecked")
            ExecNodeMetadata metadata =
                    ExecNodeMetadataUtil.latestAnnotation((Class<ExecNode<?>>) type);
            if (metadata != null && metadata.producedTransformations().length == 1) {
                return metadata.producedTransformations()[0];
            }
        }
        throw new IllegalArgumentException(
                "not a single-transformation exec node: " + stock.getClass().getName());
    }

    /**
     * The uid suffix of the native transformation: the replaced stock node's transformation name,
     * or for plans compiled by aggforge builds that did not record it, the name those builds used.
     */
    private String transformationName() {
        if (transformation != null) {
            return transformation;
        }
        return spec.mode().windowed() ? WINDOW_TRANSFORMATION : TRANSFORMATION;
    }

    /**
     * Makes Flink's compiled-plan writer and reader know this node (idempotent): Flink keeps the
     * exec node classes in {@link ExecNodeMetadataUtil}'s set and name/version map, which its
     * public {@code execNodes()} and {@code addTestNode} extend.
     */
    public static synchronized void register() {
        ExecNodeMetadataUtil.execNodes().add(StreamExecAggforgeGroupAggregate.class);
        if (ExecNodeMetadataUtil.retrieveExecNode(NAME, 1) == null) {
            ExecNodeMetadataUtil.addTestNode(StreamExecAggforgeGroupAggregate.class);
        }
    }

    /** What the operator runs. */
    public NativeOperatorSpec spec() {
        return spec;
    }

    @Override
    public void routeTo(NativeOperatorSpec receiver) {
        this.receiver = receiver;
    }

    @Override
    protected Transformation<RowData> translateToPlanInternal(
            PlannerBase planner, ExecNodeConfig config) {
        checkExecutable(config);
        return translateNative(
                this,
                planner,
                createTransformationMeta(transformationName(), config),
                spec,
                grouping,
                config.get(AggforgeOptions.COLUMNAR_EXCHANGE),
                receiver);
    }

    /**
     * The transformation running {@code spec} natively in {@code node}'s place: the input edge's
     * transformation, then {@link NativeGroupAggOperator} keyed by {@code grouping} (the local
     * phase is not keyed). A keyed aggregate fed by Flink's exchange on its keys gets the
     * columnar exchange instead where {@link ColumnarExchange#applies} (the option {@code
     * columnarExchange} is on and {@code meta} carries a uid), else reads Flink's exchange. A local
     * phase whose output the aggregate running {@code receiver} reads as is (non-null when a
     * columnar exchange asked, {@link RoutableLocal}) emits exchange messages for it instead of
     * rows: the transformation's records are then {@code byte[]}, whatever its type says.
     */
    @SuppressWarnings("unchecked")
    public static Transformation<RowData> translateNative(
            ExecNodeBase<RowData> node,
            PlannerBase planner,
            TransformationMetadata meta,
            NativeOperatorSpec spec,
            int[] grouping,
            boolean columnarExchange,
            NativeOperatorSpec receiver) {
        ExecEdge inputEdge = node.getInputEdges().get(0);
        RowType inputRowType = (RowType) inputEdge.getOutputType();
        RowDataKeySelector selector =
                KeySelectorUtil.getRowDataSelector(
                        planner.getFlinkContext().getClassLoader(),
                        grouping,
                        InternalTypeInfo.of(inputRowType));
        InternalTypeInfo<RowData> outputType = InternalTypeInfo.of((RowType) node.getOutputType());
        Optional<ColumnarExchange.Feed> feed =
                spec.mode().keyed() && ColumnarExchange.applies(columnarExchange, meta.getUid() != null)
                        ? ColumnarExchange.feed(inputEdge, grouping)
                        : Optional.empty();
        if (feed.isPresent()) {
            Transformation<byte[]> messages = feed.get().columnar(planner, meta, spec);
            SimpleOperatorFactory<RowData> factory =
                    SimpleOperatorFactory.of(new ColumnarGroupAggOperator(spec));
            OneInputTransformation<byte[], RowData> transform =
                    ExecNodeUtil.createOneInputTransformation(
                            messages, meta, factory, outputType, messages.getParallelism(), false);
            MessageKeySelector keys = new MessageKeySelector(selector.getProducedType());
            transform.setStateKeySelector(keys);
            transform.setStateKeyType(keys.getProducedType());
            return transform;
        }
        Transformation<RowData> input = (Transformation<RowData>) inputEdge.translateToPlan(planner);
        if (receiver != null && MessageBatchSink.routable(spec, receiver)) {
            SimpleOperatorFactory<byte[]> factory =
                    SimpleOperatorFactory.of(
                            new NativeGroupAggOperator<>(spec, MessageBatchSink.to(receiver)));
            factory.setChainingStrategy(ChainingStrategy.ALWAYS);
            Transformation<?> messages =
                    ExecNodeUtil.createOneInputTransformation(
                            input,
                            meta,
                            factory,
                            PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO,
                            input.getParallelism(),
                            false);
            return (Transformation<RowData>) messages;
        }
        SimpleOperatorFactory<RowData> factory =
                SimpleOperatorFactory.of(NativeGroupAggOperator.rows(spec));
        factory.setChainingStrategy(ChainingStrategy.ALWAYS);
        OneInputTransformation<RowData, RowData> transform =
                ExecNodeUtil.createOneInputTransformation(
                        input, meta, factory, outputType, input.getParallelism(), false);
        if (spec.mode().keyed()) {
            transform.setStateKeySelector(selector);
            transform.setStateKeyType(selector.getProducedType());
        }
        return transform;
    }

    /**
     * The operator's name in the job graph (with {@code table.exec.simplify-operator-name-enabled},
     * Flink's default): EXPLAIN's name of the node, such as {@code AggforgeLocalWindowAggregate},
     * as Flink names its own operators after their nodes.
     */
    @Override
    protected String getSimplifiedName() {
        String description = getDescription();
        int open = description.indexOf('(');
        String name = open < 0 ? description : description.substring(0, open);
        return name.startsWith("Aggforge") ? name : super.getSimplifiedName();
    }

    /**
     * A compiled plan with this node runs only with aggforge on, and only if this jar's runtime
     * still admits the plan; else a sentence says what to do.
     */
    private void checkExecutable(ExecNodeConfig config) {
        if (!Preflight.enabled(config)) {
            throw new ValidationException(
                    "aggforge: this plan runs a group aggregate on aggforge ("
                            + getDescription()
                            + "); set "
                            + AggforgeOptions.ENABLED.key()
                            + ": true to execute it, or compile the plan again with aggforge off.");
        }
        Preflight.check(config);
        String admission = ArrowAggregate.admit(spec.planJson());
        if (!ArrowAggregate.isAdmitted(admission)) {
            throw new ValidationException(
                    "aggforge: this aggforge jar does not run the plan's aggregate any more ("
                            + admission
                            + "); compile the plan again, or set "
                            + AggforgeOptions.ENABLED.key()
                            + ": false and compile it on stock Flink.");
        }
    }
}
