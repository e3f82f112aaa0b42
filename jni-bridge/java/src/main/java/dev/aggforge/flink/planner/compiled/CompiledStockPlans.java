package dev.aggforge.flink.planner.compiled;

import java.util.Map;
import java.util.function.Function;

import org.apache.flink.api.dag.Transformation;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.planner.delegation.PlannerBase;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeBase;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeConfig;
import org.apache.flink.table.planner.plan.nodes.exec.stream.StreamExecGlobalGroupAggregate;
import org.apache.flink.table.planner.plan.nodes.exec.stream.StreamExecGroupAggregate;
import org.apache.flink.table.planner.plan.nodes.exec.stream.StreamExecLocalGroupAggregate;
import org.apache.flink.table.planner.plan.nodes.exec.utils.TransformationMetadata;
import org.apache.flink.table.planner.plan.utils.ExecNodeMetadataUtil;
import org.apache.flink.table.types.logical.RowType;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.operator.NativeOperatorSpec;
import dev.aggforge.flink.plan.Preflight;
import dev.aggforge.flink.planner.describe.StockAggregate;
import dev.aggforge.flink.planner.nodes.AggforgeDecision;
import dev.aggforge.flink.planner.nodes.NativeRewrite;
import dev.aggforge.flink.planner.nodes.StreamExecAggforgeGroupAggregate;

/**
 * Plans compiled on stock Flink ({@code COMPILE PLAN} with aggforge off) run their group
 * aggregates natively when aggforge is on. Flink's plan reader finds an exec node's class by the
 * name and version in the JSON ({@code stream-exec-group-aggregate_1} ...), in {@link
 * ExecNodeMetadataUtil}'s map; {@link #register()} points the three group-aggregate entries at
 * subclasses of Flink's nodes ({@link CompiledGroupAggregate}, {@link
 * CompiledLocalGroupAggregate}, {@link CompiledGlobalGroupAggregate}), which read the same JSON and
 * decide at translation, as the optimizer hook does for SQL, whether the aggregate runs natively.
 * If not (aggforge off, or not admitted), Flink's own translation runs unchanged.
 *
 * <p>Ids: the native operator gets the uid Flink's operator gets ({@code <id>_group-aggregate},
 * ...; {@link StreamExecAggforgeGroupAggregate#stockTransformation}), so the plan's operators keep
 * their ids when aggforge is switched on or off.
 */
public final class CompiledStockPlans {

    private CompiledStockPlans() {}

    /** Points Flink's plan reader at the aggforge-aware subclasses (idempotent). */
    public static synchronized void register() {
        Map<?, Class<? extends ExecNode<?>>> lookup = ExecNodeMetadataUtil.getVersionedExecNodes();
        replace(lookup, StreamExecGroupAggregate.class, CompiledGroupAggregate.class);
        replace(lookup, StreamExecLocalGroupAggregate.class, CompiledLocalGroupAggregate.class);
        replace(lookup, StreamExecGlobalGroupAggregate.class, CompiledGlobalGroupAggregate.class);
    }

    private static void replace(
            Map<?, Class<? extends ExecNode<?>>> lookup,
            Class<? extends ExecNode<?>> stock,
            Class<? extends ExecNode<?>> aware) {
        ExecNodeMetadataUtil.execNodes().add(aware);
        for (Map.Entry<?, Class<? extends ExecNode<?>>> entry : lookup.entrySet()) {
            if (entry.getValue() == stock) {
                entry.setValue(aware);
            }
        }
    }

    /**
     * The native transformation in {@code node}'s place if aggforge is on and runs its aggregate,
     * else null (the caller then runs Flink's own translation).
     *
     * @param meta the node's transformation metadata for a transformation name
     * @param receiver the aggregate a local phase's output is routed to, or null ({@link
     *     dev.aggforge.flink.planner.nodes.RoutableLocal})
     */
    static Transformation<RowData> translate(
            ExecNodeBase<RowData> node,
            PlannerBase planner,
            ExecNodeConfig config,
            Function<String, TransformationMetadata> meta,
            NativeOperatorSpec receiver) {
        if (!Preflight.enabled(config)) {
            return null;
        }
        Preflight.check(config);
        StockAggregate stock =
                StockAggregate.of(node)
                        .orElseThrow(() -> new IllegalStateException("not a group aggregate: " + node));
        RowType input = (RowType) node.getInputEdges().get(0).getOutputType();
        AggforgeDecision decision =
                NativeRewrite.decide(stock, input, config, planner.getTypeFactory()).decision();
        if (!decision.isNative()) {
            return null;
        }
        return StreamExecAggforgeGroupAggregate.translateNative(
                node,
                planner,
                meta.apply(StreamExecAggforgeGroupAggregate.stockTransformation(node)),
                decision.spec(),
                stock.grouping(),
                config.get(AggforgeOptions.COLUMNAR_EXCHANGE),
                receiver);
    }
}
