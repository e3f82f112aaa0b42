package dev.aggforge.flink.planner.describe;

import java.util.ArrayList;
import java.util.List;

import org.apache.calcite.rel.core.AggregateCall;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.config.ExecutionConfigOptions;
import org.apache.flink.table.planner.calcite.FlinkTypeFactory;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeConfig;
import org.apache.flink.table.planner.plan.nodes.exec.StateMetadata;
import org.apache.flink.table.planner.plan.utils.AggregateInfo;
import org.apache.flink.table.planner.plan.utils.AggregateInfoList;
import org.apache.flink.table.planner.plan.utils.DistinctInfo;
import org.apache.flink.table.planner.plan.utils.AggregateUtil;
import org.apache.flink.table.planner.utils.JavaScalaConversionUtil;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

import dev.aggforge.flink.arrow.ArrowTypes;
import dev.aggforge.flink.plan.AggregateDescriptor;
import dev.aggforge.flink.shim.FlinkShim;

import scala.Option;

/**
 * Extracts an {@link AggregateDescriptor} from one of Flink's group-aggregate exec nodes (its
 * fields as {@link StockAggregate}): the optimizer hook's physical nodes, translated to their
 * stock exec nodes after Flink's changelog-mode inference, and the exec nodes of a plan compiled
 * on stock Flink. The input mode, generateUpdateBefore, retractions and state TTL are what the
 * node's own translation would use; so is the configuration, mini-batch included.
 */
public final class AggregateDescriber {

    private AggregateDescriber() {}

    /**
     * The descriptor of {@code agg}.
     *
     * @param input the node's input row
     * @param config the node's configuration (its persisted options over the session's)
     * @param typeFactory the planner's type factory (the partial layouts are derived with it)
     */
    public static AggregateDescriptor describe(
            StockAggregate agg, RowType input, ExecNodeConfig config, FlinkTypeFactory typeFactory) {
        switch (agg.phase()) {
            case LOCAL:
                return local(agg, input, config, typeFactory);
            case GLOBAL:
                return global(agg, input, config, typeFactory);
            case INCREMENTAL:
                return incremental(agg, input, config, typeFactory);
            default:
                return single(agg, input, config);
        }
    }

    private static AggregateDescriptor single(
            StockAggregate agg, RowType input, ExecNodeConfig config) {
        boolean miniBatch = config.get(ExecutionConfigOptions.TABLE_EXEC_MINIBATCH_ENABLED);
        return build(
                agg,
                input,
                miniBatch,
                agg.generateUpdateBefore(),
                stateTtl(agg, config),
                inputCalls(input, agg),
                -1,
                List.of(),
                List.of(),
                config,
                new ArrayList<>());
    }

    private static AggregateDescriptor local(
            StockAggregate agg, RowType input, ExecNodeConfig config, FlinkTypeFactory typeFactory) {
        // The same AggregateInfoList the node derives its output type from: over retractions
        // Flink inserts (or reuses) a COUNT(*) whose partial counts records for the global phase.
        AggregateInfoList infos =
                AggregateUtil.transformToStreamAggregateInfoList(
                        typeFactory,
                        input,
                        JavaScalaConversionUtil.toScala(agg.calls()),
                        agg.retractions(),
                        agg.needRetraction(),
                        false,
                        true);
        return fromLocalInfos(agg, infos, input, config);
    }

    /** A local phase's descriptor given its AggregateInfoList (group or window aggregate). */
    private static AggregateDescriptor fromLocalInfos(
            StockAggregate agg, AggregateInfoList infos, RowType input, ExecNodeConfig config) {
        List<String> reasons = new ArrayList<>();
        checkPartials(agg.outputType(), agg.grouping().length, reasons);
        return build(
                agg,
                input,
                true,
                false,
                0,
                inputCalls(input, agg),
                countStarPartial(infos, agg.grouping().length),
                views(infos, -1, reasons),
                List.of(),
                config,
                reasons);
    }

    private static AggregateDescriptor global(
            StockAggregate agg, RowType input, ExecNodeConfig config, FlinkTypeFactory typeFactory) {
        List<AggregateCall> calls = agg.calls();
        boolean[] retractions = agg.retractions();
        RowType originalInput = agg.localAggInputRowType();
        AggregateInfoList infos =
                AggregateUtil.transformToStreamAggregateInfoList(
                        typeFactory,
                        originalInput,
                        JavaScalaConversionUtil.toScala(calls),
                        retractions,
                        agg.needRetraction(),
                        Option.apply((Object) agg.indexOfCountStar()),
                        false,
                        true);
        return fromGlobalInfos(agg, infos, input, config, stateTtl(agg, config));
    }

    /**
     * A global phase's descriptor given its AggregateInfoList (group or window aggregate): its
     * input is the keys, then each AggregateInfo's accumulator fields, then the DISTINCT views.
     */
    private static AggregateDescriptor fromGlobalInfos(
            StockAggregate agg,
            AggregateInfoList infos,
            RowType input,
            ExecNodeConfig config,
            long stateTtlMs) {
        List<String> reasons = new ArrayList<>();
        checkPartials(input, agg.grouping().length, reasons);
        Partials partials = partials(agg, infos);
        return build(
                agg,
                input,
                true,
                agg.generateUpdateBefore(),
                stateTtlMs,
                partials.calls(),
                partials.countStarColumn(),
                views(infos, partials.end(), reasons),
                List.of(),
                config,
                reasons);
    }

    /**
     * The descriptor of a window aggregate's {@code agg} (its windows aside): {@code infos} is
     * Flink's window AggregateInfoList for the phase (for HOP it holds the COUNT(*) Flink
     * inserts). Single and local phase read the node's input; the global phase its partials.
     */
    public static AggregateDescriptor describeWindow(
            StockAggregate agg, AggregateInfoList infos, RowType input, ExecNodeConfig config) {
        switch (agg.phase()) {
            case LOCAL:
                return fromLocalInfos(agg, infos, input, config);
            case GLOBAL:
                // Windows keep no TTL'd state: their state leaves when they fire.
                return fromGlobalInfos(agg, infos, input, config, 0);
            default:
                return build(
                        agg,
                        input,
                        true,
                        false,
                        0,
                        inputCalls(input, agg),
                        -1,
                        List.of(),
                        List.of(),
                        config,
                        new ArrayList<>());
        }
    }

    /**
     * Flink's IncrementalGroupAggregate: its input is the partial level's local partials (Flink's
     * partialLocalAggInfoList, views on the heap), its output the same accumulators without the
     * views, keyed by the final level's keys.
     */
    private static AggregateDescriptor incremental(
            StockAggregate agg, RowType input, ExecNodeConfig config, FlinkTypeFactory typeFactory) {
        AggregateInfoList infos =
                AggregateUtil.transformToStreamAggregateInfoList(
                        typeFactory,
                        agg.localAggInputRowType(),
                        JavaScalaConversionUtil.toScala(agg.calls()),
                        agg.retractions(),
                        agg.needRetraction(),
                        false,
                        true);
        List<String> reasons = new ArrayList<>();
        checkPartials(input, agg.grouping().length, reasons);
        Partials partials = partials(agg, infos);
        List<Integer> finalKey = new ArrayList<>();
        for (int position : agg.finalGrouping()) {
            finalKey.add(position);
        }
        return build(
                agg,
                input,
                true,
                false,
                stateTtl(agg, config),
                partials.calls(),
                partials.countStarColumn(),
                views(infos, partials.end(), reasons),
                finalKey,
                config,
                reasons);
    }

    /**
     * A partial-merging phase's calls over its input: the keys first, then each AggregateInfo's
     * accumulator fields in order (an inserted record-counting COUNT(*) is no call, its column is
     * {@code countStarColumn}); {@code end} is the column after them (the first view's).
     */
    private record Partials(List<AggregateDescriptor.Call> calls, int countStarColumn, int end) {}

    private static Partials partials(StockAggregate agg, AggregateInfoList infos) {
        List<AggregateCall> calls = agg.calls();
        AggregateInfo[] aggInfos = infos.aggInfos();
        int countStarIndex =
                infos.indexOfCountStar().isDefined() ? (Integer) infos.indexOfCountStar().get() : -1;
        List<AggregateDescriptor.Call> described = new ArrayList<>();
        int offset = agg.grouping().length;
        int countStarColumn = -1;
        int callIndex = 0;
        for (int i = 0; i < aggInfos.length; i++) {
            int width = aggInfos[i].externalAccTypes().length;
            List<Integer> columns = new ArrayList<>(width);
            for (int j = 0; j < width; j++) {
                columns.add(offset + j);
            }
            if (i == countStarIndex) {
                countStarColumn = offset;
            }
            if (!(infos.countStarInserted() && i == countStarIndex)) {
                AggregateCall call = calls.get(callIndex);
                described.add(
                        new AggregateDescriptor.Call(
                                functionName(call),
                                columns,
                                argTypes(agg.localAggInputRowType(), call),
                                call.isDistinct(),
                                -1,
                                typeText(FlinkTypeFactory.toLogicalType(call.getType())),
                                agg.retractions()[callIndex]));
                callIndex++;
            }
            offset += width;
        }
        return new Partials(described, countStarColumn, offset);
    }

    private static AggregateDescriptor build(
            StockAggregate agg,
            RowType input,
            boolean miniBatch,
            boolean generateUpdateBefore,
            long stateTtlMs,
            List<AggregateDescriptor.Call> calls,
            int countStarColumn,
            List<AggregateDescriptor.View> views,
            List<Integer> finalKey,
            ReadableConfig config,
            List<String> reasons) {
        AggregateDescriptor.Phase phase = agg.phase();
        boolean insertOnly = !agg.needRetraction();
        List<Integer> keyColumns = new ArrayList<>();
        List<String> keyTypes = new ArrayList<>();
        for (int key : agg.grouping()) {
            keyColumns.add(key);
            LogicalType type = input.getTypeAt(key);
            keyTypes.add(typeText(type));
            if (!ArrowTypes.isSupported(type)) {
                reasons.add("key column " + key + " has type " + type.asSummaryString());
            }
        }
        if (!phase.mergesPartials()) {
            for (AggregateDescriptor.Call call : calls) {
                for (int arg : call.args()) {
                    LogicalType type = input.getTypeAt(arg);
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
        for (AggregateDescriptor.Call call : calls) {
            if (FlinkShim.SINGLE_VALUE_PADS_CHAR
                    && call.function().equals("SINGLE_VALUE")
                    && call.argTypes().stream().anyMatch(t -> t.startsWith("CHAR("))) {
                reasons.add(
                        "SINGLE_VALUE over CHAR: Flink "
                                + FlinkShim.FLINK_LINE
                                + " pads or cuts its value to CHAR(n), which is not modelled");
            }
        }
        if (FlinkShim.asyncStateEnabled(config) && phase != AggregateDescriptor.Phase.LOCAL) {
            reasons.add("table.exec.async-state.enabled is set");
        }
        long miniBatchSize =
                miniBatch
                        ? Math.max(0L, config.get(ExecutionConfigOptions.TABLE_EXEC_MINIBATCH_SIZE))
                        : 0L;
        return new AggregateDescriptor(
                agg.description(),
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
                typeTexts(agg.outputType()),
                countStarColumn,
                calls,
                views,
                finalKey,
                String.join("; ", reasons));
    }

    /**
     * The two-phase DISTINCT views, Flink's DistinctInfos in order: the calls sharing each (the
     * AggregateInfo index of a plan's call is the call's index; an inserted COUNT(*) comes after
     * them) and, when {@code firstColumn >= 0} (global phase), the input column of each, from
     * {@code firstColumn} on.
     */
    private static List<AggregateDescriptor.View> views(
            AggregateInfoList infos, int firstColumn, List<String> reasons) {
        List<AggregateDescriptor.View> views = new ArrayList<>();
        DistinctInfo[] distinct = infos.distinctInfos();
        for (int i = 0; i < distinct.length; i++) {
            DistinctInfo info = distinct[i];
            if (info.excludeAcc()) {
                reasons.add("DISTINCT view without an accumulator (excludeAcc)");
            }
            if (info.argIndexes().length != 1) {
                reasons.add(
                        "DISTINCT over " + info.argIndexes().length + " columns (one is supported)");
            }
            List<Integer> calls = new ArrayList<>();
            for (Object index : JavaScalaConversionUtil.toJava(info.aggIndexes())) {
                calls.add((Integer) index);
            }
            views.add(new AggregateDescriptor.View(calls, firstColumn < 0 ? -1 : firstColumn + i));
        }
        return views;
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
    private static List<AggregateDescriptor.Call> inputCalls(RowType input, StockAggregate agg) {
        List<AggregateCall> calls = agg.calls();
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
                            agg.retractions()[i]));
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

    private static List<String> argTypes(RowType input, AggregateCall call) {
        List<String> types = new ArrayList<>();
        for (int arg : call.getArgList()) {
            types.add(typeText(input.getTypeAt(arg)));
        }
        return types;
    }

    private static List<String> typeTexts(RowType row) {
        List<String> types = new ArrayList<>();
        for (LogicalType field : row.getChildren()) {
            types.add(typeText(field));
        }
        return types;
    }

    /** The SQL type text the runtime parses: {@link ArrowTypes#sqlText}. */
    static String typeText(LogicalType type) {
        return ArrowTypes.sqlText(type);
    }

    /** Adds a reason for each partial column (after the keys) that has no Arrow layout. */
    private static void checkPartials(RowType partials, int keyCount, List<String> reasons) {
        for (int i = keyCount; i < partials.getFieldCount(); i++) {
            LogicalType type = partials.getTypeAt(i);
            if (!ArrowTypes.isSupportedPartial(type)) {
                reasons.add("partial column " + i + " has type " + typeText(type));
            }
        }
    }

    /** The node's state TTL in ms as its own translation reads it (STATE_TTL hint, else config). */
    private static long stateTtl(StockAggregate agg, ExecNodeConfig config) {
        return StateMetadata.getStateTtlForOneInputOperator(config, agg.stateMetadata());
    }
}
