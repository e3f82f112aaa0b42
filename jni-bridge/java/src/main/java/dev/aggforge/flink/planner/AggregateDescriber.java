package dev.aggforge.flink.planner;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeField;
import org.apache.flink.configuration.ReadableConfig;
import dev.aggforge.flink.shim.FlinkShim;
import org.apache.flink.table.api.config.ExecutionConfigOptions;
import org.apache.flink.table.planner.calcite.FlinkTypeFactory;
import org.apache.flink.table.planner.hint.StateTtlHint;
import org.apache.flink.table.planner.plan.PartialFinalType;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalGlobalGroupAggregate;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalGroupAggregate;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalGroupAggregateBase;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalLocalGroupAggregate;
import org.apache.flink.table.planner.plan.utils.AggregateInfo;
import org.apache.flink.table.planner.plan.utils.AggregateInfoList;
import org.apache.flink.table.planner.plan.utils.AggregateUtil;
import org.apache.flink.table.planner.plan.utils.ChangelogPlanUtils;
import org.apache.flink.table.planner.utils.JavaScalaConversionUtil;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.utils.LogicalTypeChecks;

import dev.aggforge.flink.arrow.ArrowTypes;
import dev.aggforge.flink.plan.AggregateDescriptor;

/**
 * Extracts an {@link AggregateDescriptor} from Flink's optimized stream physical group-aggregate
 * nodes ({@link StreamPhysicalGroupAggregate}, {@link StreamPhysicalLocalGroupAggregate}, {@link
 * StreamPhysicalGlobalGroupAggregate}). Must run after Flink's changelog-mode inference (the
 * hook runs after the whole stock program), because the input mode and generateUpdateBefore are
 * read from the nodes' changelog traits, exactly as the nodes' own translateToExecNode reads them.
 */
public final class AggregateDescriber {

    private AggregateDescriber() {}

    /** The descriptor of {@code node}, or empty if it is not a group aggregate this hook knows. */
    public static Optional<AggregateDescriptor> describe(RelNode node, ReadableConfig config) {
        if (node instanceof StreamPhysicalGroupAggregate) {
            return Optional.of(single((StreamPhysicalGroupAggregate) node, config));
        }
        if (node instanceof StreamPhysicalLocalGroupAggregate) {
            return Optional.of(local((StreamPhysicalLocalGroupAggregate) node, config));
        }
        if (node instanceof StreamPhysicalGlobalGroupAggregate) {
            return Optional.of(global((StreamPhysicalGlobalGroupAggregate) node, config));
        }
        return Optional.empty();
    }

    private static AggregateDescriptor single(StreamPhysicalGroupAggregate agg, ReadableConfig config) {
        List<AggregateCall> calls = JavaScalaConversionUtil.toJava(agg.aggCalls());
        boolean[] retractions =
                AggregateUtil.deriveAggCallNeedRetractions(agg, agg.grouping().length, agg.aggCalls());
        boolean miniBatch = config.get(ExecutionConfigOptions.TABLE_EXEC_MINIBATCH_ENABLED);
        List<String> reasons = new ArrayList<>();
        if (agg.partialFinalType() != PartialFinalType.NONE) {
            reasons.add("split distinct aggregation (" + agg.partialFinalType() + ")");
        }
        return build(
                agg,
                AggregateDescriptor.Phase.SINGLE,
                ChangelogPlanUtils.inputInsertOnly(agg),
                miniBatch,
                ChangelogPlanUtils.generateUpdateBefore(agg),
                stateTtl(agg, config),
                inputCalls(agg.getInput().getRowType(), calls, retractions),
                -1,
                config,
                reasons);
    }

    private static AggregateDescriptor local(
            StreamPhysicalLocalGroupAggregate agg, ReadableConfig config) {
        List<AggregateCall> calls = JavaScalaConversionUtil.toJava(agg.aggCalls());
        boolean[] retractions = localRetractions(agg);
        List<String> reasons = new ArrayList<>();
        if (agg.partialFinalType() != PartialFinalType.NONE) {
            reasons.add("split distinct aggregation (" + agg.partialFinalType() + ")");
        }
        checkPartials(agg.getRowType(), agg.grouping().length, reasons);
        boolean insertOnly = ChangelogPlanUtils.inputInsertOnly(agg);
        // The same AggregateInfoList the node derives its output type from: over retractions
        // Flink inserts (or reuses) a COUNT(*) whose partial counts records for the global phase.
        AggregateInfoList infos =
                AggregateUtil.transformToStreamAggregateInfoList(
                        (FlinkTypeFactory) agg.getCluster().getTypeFactory(),
                        FlinkTypeFactory.toLogicalRowType(agg.getInput().getRowType()),
                        agg.aggCalls(),
                        retractions,
                        !insertOnly,
                        false,
                        true);
        return build(
                agg,
                AggregateDescriptor.Phase.LOCAL,
                insertOnly,
                true,
                false,
                0,
                inputCalls(agg.getInput().getRowType(), calls, retractions),
                countStarPartial(infos, agg.grouping().length),
                config,
                reasons);
    }

    private static AggregateDescriptor global(
            StreamPhysicalGlobalGroupAggregate agg, ReadableConfig config) {
        List<AggregateCall> calls = JavaScalaConversionUtil.toJava(agg.aggCalls());
        boolean[] retractions = agg.aggCallNeedRetractions();
        RelDataType originalInput = agg.localAggInputRowType();
        AggregateInfoList infos = agg.localAggInfoList();
        AggregateInfo[] aggInfos = infos.aggInfos();
        int countStarIndex =
                infos.indexOfCountStar().isDefined() ? (Integer) infos.indexOfCountStar().get() : -1;
        List<String> reasons = new ArrayList<>();
        if (agg.partialFinalType() != PartialFinalType.NONE) {
            reasons.add("split distinct aggregation (" + agg.partialFinalType() + ")");
        }
        checkPartials(agg.getInput().getRowType(), agg.grouping().length, reasons);
        if (infos.distinctInfos().length > 0) {
            reasons.add("DISTINCT in a two-phase plan (distinct-view partials are not described)");
        }
        // Partial columns: the keys first, then each AggregateInfo's accumulator fields in order.
        List<AggregateDescriptor.Call> described = new ArrayList<>();
        int offset = agg.grouping().length;
        int countStarColumn = -1;
        int callIndex = 0;
        for (int i = 0; i < aggInfos.length; i++) {
            int width = aggInfos[i].externalAccTypes().length;
            List<Integer> partials = new ArrayList<>(width);
            for (int j = 0; j < width; j++) {
                partials.add(offset + j);
            }
            if (i == countStarIndex) {
                countStarColumn = offset;
            }
            if (!(infos.countStarInserted() && i == countStarIndex)) {
                AggregateCall call = calls.get(callIndex);
                described.add(
                        new AggregateDescriptor.Call(
                                functionName(call),
                                partials,
                                argTypes(originalInput, call),
                                call.isDistinct(),
                                -1,
                                typeText(FlinkTypeFactory.toLogicalType(call.getType())),
                                retractions[callIndex]));
                callIndex++;
            }
            offset += width;
        }
        return build(
                agg,
                AggregateDescriptor.Phase.GLOBAL,
                !agg.needRetraction(),
                true,
                ChangelogPlanUtils.generateUpdateBefore(agg),
                stateTtl(agg, config),
                described,
                countStarColumn,
                config,
                reasons);
    }

    private static AggregateDescriptor build(
            StreamPhysicalGroupAggregateBase agg,
            AggregateDescriptor.Phase phase,
            boolean insertOnly,
            boolean miniBatch,
            boolean generateUpdateBefore,
            long stateTtlMs,
            List<AggregateDescriptor.Call> calls,
            int countStarColumn,
            ReadableConfig config,
            List<String> reasons) {
        RelDataType input = agg.getInput().getRowType();
        List<Integer> keyColumns = new ArrayList<>();
        List<String> keyTypes = new ArrayList<>();
        for (int key : agg.grouping()) {
            keyColumns.add(key);
            LogicalType type = fieldType(input, key);
            keyTypes.add(typeText(type));
            if (!ArrowTypes.isSupported(type)) {
                reasons.add("key column " + key + " has type " + type.asSummaryString());
            }
        }
        if (phase != AggregateDescriptor.Phase.GLOBAL) {
            for (AggregateDescriptor.Call call : calls) {
                for (int arg : call.args()) {
                    LogicalType type = fieldType(input, arg);
                    if (!ArrowTypes.isSupported(type)) {
                        reasons.add(
                                call.function()
                                        + " argument column "
                                        + arg
                                        + " has type "
                                        + type.asSummaryString());
                    }
                }
            }
        }
        if (!insertOnly) {
            for (AggregateDescriptor.Call call : calls) {
                if (!call.retraction()) {
                    // Flink then keeps the call's insert-only function (for SUM another
                    // accumulator layout) next to retracting ones; not described yet.
                    reasons.add(call.function() + " does not retract over a retracting input");
                }
            }
        }
        if (FlinkShim.asyncStateEnabled(config)
                && phase != AggregateDescriptor.Phase.LOCAL) {
            reasons.add("table.exec.async-state.enabled is set");
        }
        long miniBatchSize =
                miniBatch ? Math.max(0L, config.get(ExecutionConfigOptions.TABLE_EXEC_MINIBATCH_SIZE)) : 0L;
        return new AggregateDescriptor(
                agg.getRelDetailedDescription(),
                phase,
                insertOnly
                        ? AggregateDescriptor.InputMode.INSERT_ONLY
                        : AggregateDescriptor.InputMode.RETRACTING,
                miniBatch
                        ? AggregateDescriptor.Emission.MINI_BATCH
                        : AggregateDescriptor.Emission.IMMEDIATE,
                miniBatchSize,
                generateUpdateBefore,
                stateTtlMs,
                keyColumns,
                keyTypes,
                typeTexts(input),
                typeTexts(agg.getRowType()),
                countStarColumn,
                calls,
                String.join("; ", reasons));
    }

    /** The partial column of the record-counting COUNT(*) (keys come first), or -1. */
    private static int countStarPartial(AggregateInfoList infos, int keyCount) {
        if (infos.indexOfCountStar().isEmpty()) {
            return -1;
        }
        int index = (Integer) infos.indexOfCountStar().get();
        int offset = keyCount;
        AggregateInfo[] aggInfos = infos.aggInfos();
        for (int i = 0; i < index; i++) {
            offset += aggInfos[i].externalAccTypes().length;
        }
        return offset;
    }

    /** Calls whose arguments and filter are columns of the operator's own input. */
    private static List<AggregateDescriptor.Call> inputCalls(
            RelDataType input, List<AggregateCall> calls, boolean[] retractions) {
        List<AggregateDescriptor.Call> described = new ArrayList<>(calls.size());
        for (int i = 0; i < calls.size(); i++) {
            AggregateCall call = calls.get(i);
            described.add(
                    new AggregateDescriptor.Call(
                            functionName(call),
                            call.getArgList(),
                            argTypes(input, call),
                            call.isDistinct(),
                            call.filterArg,
                            typeText(FlinkTypeFactory.toLogicalType(call.getType())),
                            retractions[i]));
        }
        return described;
    }

    /** Calcite/Flink names mapped to the runtime's: COUNT() is COUNT_STAR, $SUM0 is SUM0. */
    static String functionName(AggregateCall call) {
        String name = call.getAggregation().getName().toUpperCase();
        if (name.equals("COUNT") && call.getArgList().isEmpty()) {
            return "COUNT_STAR";
        }
        if (name.equals("$SUM0")) {
            return "SUM0";
        }
        return name;
    }

    private static List<String> argTypes(RelDataType input, AggregateCall call) {
        List<String> types = new ArrayList<>();
        for (int arg : call.getArgList()) {
            types.add(typeText(fieldType(input, arg)));
        }
        return types;
    }

    private static LogicalType fieldType(RelDataType row, int index) {
        return FlinkTypeFactory.toLogicalType(row.getFieldList().get(index).getType());
    }

    private static List<String> typeTexts(RelDataType row) {
        List<String> types = new ArrayList<>();
        for (RelDataTypeField field : row.getFieldList()) {
            types.add(typeText(FlinkTypeFactory.toLogicalType(field.getType())));
        }
        return types;
    }

    /**
     * Flink's serializable type string without nullability, e.g. {@code DECIMAL(38, 2)}; for
     * types that are or hold RAW or STRUCTURED types (accumulators with data views) the summary
     * string, as their serializable form embeds a serialized snapshot.
     */
    static String typeText(LogicalType type) {
        LogicalType nullable = type.copy(true);
        if (LogicalTypeChecks.hasNested(nullable, AggregateDescriber::isOpaque) || isOpaque(nullable)) {
            return nullable.asSummaryString();
        }
        try {
            return nullable.asSerializableString();
        } catch (RuntimeException e) {
            return nullable.asSummaryString();
        }
    }

    private static boolean isOpaque(LogicalType type) {
        return type.is(LogicalTypeRoot.RAW) || type.is(LogicalTypeRoot.STRUCTURED_TYPE);
    }

    /** Adds a reason for each partial column (after the keys) that has no Arrow layout. */
    private static void checkPartials(RelDataType partials, int keyCount, List<String> reasons) {
        List<RelDataTypeField> fields = partials.getFieldList();
        for (int i = keyCount; i < fields.size(); i++) {
            LogicalType type = FlinkTypeFactory.toLogicalType(fields.get(i).getType());
            if (!ArrowTypes.isSupported(type)) {
                reasons.add("partial column " + i + " has type " + typeText(type));
            }
        }
    }

    /** The STATE_TTL hint on the node if any, else table.exec.state.ttl, in ms. */
    private static long stateTtl(StreamPhysicalGroupAggregateBase agg, ReadableConfig config) {
        Long hint = StateTtlHint.getStateTtlFromHintOnSingleRel(agg.hints());
        if (hint != null) {
            return hint;
        }
        return config.get(ExecutionConfigOptions.IDLE_STATE_RETENTION).toMillis();
    }

    /** The local node keeps aggCallNeedRetractions in a private field; derive it if unreadable. */
    private static boolean[] localRetractions(StreamPhysicalLocalGroupAggregate agg) {
        try {
            Field field = StreamPhysicalLocalGroupAggregate.class.getDeclaredField("aggCallNeedRetractions");
            field.setAccessible(true);
            return (boolean[]) field.get(agg);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return AggregateUtil.deriveAggCallNeedRetractions(
                    agg, agg.grouping().length, agg.aggCalls());
        }
    }
}
