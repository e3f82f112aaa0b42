package dev.aggforge.flink.planner.nodes;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import org.apache.calcite.rel.RelNode;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.planner.calcite.FlinkTypeFactory;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeBase;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeConfig;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalGlobalGroupAggregate;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalGroupAggregate;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalGroupAggregateBase;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalIncrementalGroupAggregate;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalLocalGroupAggregate;
import org.apache.flink.table.types.logical.RowType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.arrow.ArrowTypes;
import dev.aggforge.flink.arrow.RowDataToArrow;
import dev.aggforge.flink.nativelib.ArrowAggregate;
import dev.aggforge.flink.operator.NativeOperatorSpec;
import dev.aggforge.flink.plan.AggregateDescriptor;
import dev.aggforge.flink.plan.AggregateDescriptor.Call;
import dev.aggforge.flink.plan.AggregateDescriptor.InputMode;
import dev.aggforge.flink.plan.AggregateDescriptor.Phase;
import dev.aggforge.flink.plan.Preflight;
import dev.aggforge.flink.planner.describe.AggregateDescriber;
import dev.aggforge.flink.planner.describe.FlinkAccumulators;
import dev.aggforge.flink.planner.describe.StockAggregate;

/**
 * Decides what runs a Flink group-aggregate node ({@link #decide}: the operator spec, that is the
 * plan JSON over the transposed columns, modes and row types, and the runtime's admission) and
 * builds the node that takes its place ({@link #replace}), whose exec node is {@link
 * StreamExecAggforgeGroupAggregate} when native.
 */
public final class NativeRewrite {

    /** Max parallelism written into planned plans; the operator sets the job's real value. */
    static final int PLANNED_MAX_PARALLELISM = 128;

    private static final Logger LOG = LoggerFactory.getLogger(NativeRewrite.class);

    private NativeRewrite() {}

    /** Whether {@code node} is one of the group-aggregate nodes {@link #replace} handles. */
    public static boolean replaceable(RelNode node) {
        return node instanceof StreamPhysicalGroupAggregate
                || node instanceof StreamPhysicalLocalGroupAggregate
                || node instanceof StreamPhysicalGlobalGroupAggregate
                || node instanceof StreamPhysicalIncrementalGroupAggregate;
    }

    /**
     * The node that takes {@code node}'s place: the same aggregate with aggforge's decision
     * attached (native, or Flink's operator with the reason shown in EXPLAIN).
     */
    public static RelNode replace(StreamPhysicalGroupAggregateBase node, AggforgeDecision decision) {
        RelNode input = node.getInput();
        if (node instanceof StreamPhysicalGroupAggregate single) {
            return new StreamPhysicalAggforgeGroupAggregate(single, node.getTraitSet(), input, decision);
        }
        if (node instanceof StreamPhysicalLocalGroupAggregate local) {
            return new StreamPhysicalAggforgeLocalGroupAggregate(
                    local, node.getTraitSet(), input, decision);
        }
        if (node instanceof StreamPhysicalGlobalGroupAggregate global) {
            return new StreamPhysicalAggforgeGlobalGroupAggregate(
                    global, node.getTraitSet(), input, decision);
        }
        if (node instanceof StreamPhysicalIncrementalGroupAggregate incremental) {
            return new StreamPhysicalAggforgeIncrementalGroupAggregate(
                    incremental, node.getTraitSet(), input, decision);
        }
        throw new IllegalArgumentException("unknown aggregate node " + node.getClass().getName());
    }

    /** A described aggregate and what aggforge decided for it. */
    public record Outcome(AggregateDescriptor descriptor, AggforgeDecision decision) {}

    /**
     * Describes the group aggregate of Flink's exec node {@code stock}, decides whether it runs
     * natively and logs the decision with the descriptor.
     *
     * @param input the node's input row
     * @param config the node's configuration (its persisted options over the session's)
     * @param typeFactory the planner's type factory
     */
    public static Outcome decide(
            StockAggregate stock, RowType input, ExecNodeConfig config, FlinkTypeFactory typeFactory) {
        AggregateDescriptor descriptor =
                AggregateDescriber.describe(stock, input, config, typeFactory);
        AggforgeDecision planned = decide(descriptor, input, stock.outputType(), config);
        // The operator keeps its state in Flink's accState layout where it can.
        AggforgeDecision decision =
                planned.isNative()
                        ? FlinkAccumulators.of(stock, input, typeFactory)
                                .map(layout -> AggforgeDecision.nativeOperator(
                                        planned.spec()
                                                .withState(
                                                        FlinkAccumulators.keyRow(
                                                                stock, input),
                                                        layout.accType(),
                                                        layout.viewTypes())))
                                .orElse(planned)
                        : planned;
        if (decision.isNative()) {
            LOG.info(
                    "aggforge: group aggregate runs natively ({}):\n{}",
                    decision.explain(),
                    descriptor.toText());
        } else {
            LOG.info(
                    "aggforge: group aggregate stays on Flink ({}):\n{}",
                    decision.reason(),
                    descriptor.toText());
        }
        return new Outcome(descriptor, decision);
    }

    /**
     * Decides whether the aggregate described by {@code descriptor} runs natively: the Java
     * side's checks, the Arrow layouts, then the runtime's admission.
     */
    static AggforgeDecision decide(
            AggregateDescriptor descriptor, RowType inputType, RowType outputType, ReadableConfig config) {
        if (!descriptor.supportedByJavaSide()) {
            return AggforgeDecision.stock(descriptor.unsupported());
        }
        if (mode(descriptor).bundled() && !config.get(AggforgeOptions.BUNDLED_ENABLED)) {
            return AggforgeDecision.stock(
                    "mini-batch and two-phase aggregates are off ("
                            + AggforgeOptions.BUNDLED_ENABLED.key()
                            + "=false)");
        }
        int[] columns = usedColumns(descriptor);
        boolean withRowKind =
                descriptor.input() == InputMode.RETRACTING && !descriptor.phase().mergesPartials();
        try {
            RowDataToArrow.schemaFor(inputType, columns, withRowKind);
            for (int i = 0; i < outputType.getFieldCount(); i++) {
                ArrowTypes.fieldFor(outputType.getFieldNames().get(i), outputType.getTypeAt(i));
            }
        } catch (IllegalArgumentException e) {
            return AggforgeDecision.stock("no Arrow layout: " + e.getMessage());
        }
        AggregateDescriptor remapped = remap(descriptor, columns);
        String planJson =
                remapped.toPlanJson(
                        config.get(AggforgeOptions.MEMORY_BUDGET).getBytes(),
                        PLANNED_MAX_PARALLELISM,
                        config.get(AggforgeOptions.JIT));
        String admission = ArrowAggregate.admit(planJson);
        if (!ArrowAggregate.isAdmitted(admission)) {
            return AggforgeDecision.stock("not admitted by the runtime: " + admission);
        }
        int batchSize = config.get(AggforgeOptions.BATCH_SIZE);
        Preflight.checkBudget(planJson, batchSize, config);
        return AggforgeDecision.nativeOperator(
                new NativeOperatorSpec(
                        planJson,
                        inputType,
                        outputType,
                        columns,
                        withRowKind,
                        mode(descriptor),
                        descriptor.miniBatchSize(),
                        batchSize,
                        config.get(AggforgeOptions.MAX_DELAY).toMillis(),
                        admission.substring("admitted: ".length())));
    }

    static NativeOperatorSpec.Mode mode(AggregateDescriptor descriptor) {
        switch (descriptor.phase()) {
            case LOCAL:
                return NativeOperatorSpec.Mode.LOCAL;
            case GLOBAL:
            case INCREMENTAL:
                return NativeOperatorSpec.Mode.GLOBAL;
            default:
                return descriptor.emission() == AggregateDescriptor.Emission.MINI_BATCH
                        ? NativeOperatorSpec.Mode.MINI_BATCH
                        : NativeOperatorSpec.Mode.IMMEDIATE;
        }
    }

    /** Input columns the runtime reads (keys, arguments, filters), ascending. */
    static int[] usedColumns(AggregateDescriptor descriptor) {
        TreeSet<Integer> used = new TreeSet<>(descriptor.keyColumns());
        for (Call call : descriptor.calls()) {
            used.addAll(call.args());
            if (call.filter() >= 0) {
                used.add(call.filter());
            }
        }
        if (descriptor.phase().mergesPartials() && descriptor.countStarColumn() >= 0) {
            used.add(descriptor.countStarColumn());
        }
        if (descriptor.phase().mergesPartials()) {
            for (AggregateDescriptor.View view : descriptor.views()) {
                used.add(view.column());
            }
        }
        return used.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The descriptor with input column indexes renumbered to positions in {@code columns}. */
    static AggregateDescriptor remap(AggregateDescriptor d, int[] columns) {
        List<Call> calls = new ArrayList<>(d.calls().size());
        for (Call call : d.calls()) {
            calls.add(
                    new Call(
                            call.function(),
                            remap(call.args(), columns),
                            call.argTypes(),
                            call.distinct(),
                            call.filter() < 0 ? -1 : position(columns, call.filter()),
                            call.resultType(),
                            call.retraction()));
        }
        List<AggregateDescriptor.View> views = new ArrayList<>(d.views().size());
        for (AggregateDescriptor.View view : d.views()) {
            views.add(
                    new AggregateDescriptor.View(
                            view.calls(),
                            d.phase().mergesPartials() ? position(columns, view.column()) : -1));
        }
        int countStar =
                d.phase().mergesPartials() && d.countStarColumn() >= 0
                        ? position(columns, d.countStarColumn())
                        : d.countStarColumn();
        return new AggregateDescriptor(
                d.node(),
                d.phase(),
                d.input(),
                d.emission(),
                d.miniBatchSize(),
                d.generateUpdateBefore(),
                d.stateTtlMs(),
                remap(d.keyColumns(), columns),
                d.keyTypes(),
                d.inputTypes(),
                d.outputTypes(),
                countStar,
                calls,
                views,
                d.finalKey(),
                d.unsupported());
    }

    private static List<Integer> remap(List<Integer> indexes, int[] columns) {
        List<Integer> out = new ArrayList<>(indexes.size());
        for (int index : indexes) {
            out.add(position(columns, index));
        }
        return out;
    }

    static int position(int[] columns, int column) {
        for (int i = 0; i < columns.length; i++) {
            if (columns[i] == column) {
                return i;
            }
        }
        throw new IllegalArgumentException("column " + column + " is not transposed");
    }

    /**
     * The exec node of a native physical node, built from the stock one it replaces (whose exec
     * node id and transformation name it keeps).
     */
    static ExecNode<?> execNode(ExecNode<?> stock, NativeOperatorSpec spec, int[] grouping) {
        return new StreamExecAggforgeGroupAggregate((ExecNodeBase<?>) stock, spec, grouping);
    }
}
