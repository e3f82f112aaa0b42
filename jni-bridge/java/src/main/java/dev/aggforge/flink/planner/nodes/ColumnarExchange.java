package dev.aggforge.flink.planner.nodes;

import java.util.Arrays;
import java.util.Optional;

import org.apache.calcite.rel.RelDistribution;
import org.apache.calcite.rel.RelNode;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperator;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.api.transformations.PartitionTransformation;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.planner.delegation.PlannerBase;
import org.apache.flink.table.planner.plan.nodes.exec.ExecEdge;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.exec.InputProperty;
import org.apache.flink.table.planner.plan.nodes.exec.stream.StreamExecExchange;
import org.apache.flink.table.planner.plan.nodes.exec.utils.ExecNodeUtil;
import org.apache.flink.table.planner.plan.nodes.exec.utils.TransformationMetadata;
import org.apache.flink.table.planner.plan.nodes.physical.stream.StreamPhysicalExchange;

import dev.aggforge.flink.AggforgeOptions;
import dev.aggforge.flink.exchange.ColumnarExchangePartitioner;
import dev.aggforge.flink.exchange.ColumnarExchangeSender;
import dev.aggforge.flink.exchange.MessageForwarder;
import dev.aggforge.flink.operator.NativeOperatorSpec;

/**
 * Where a keyed native aggregate is fed by Flink's exchange on exactly its group keys (or, with
 * no keys, by the singleton exchange), that exchange is translated here instead of by Flink, as
 * the columnar exchange: {@link ColumnarExchangeSender} chained to the sending task, or {@link
 * MessageForwarder} behind a native local phase that routes its own output, and {@link
 * ColumnarExchangePartitioner} on the edge.
 *
 * <p>Operator ids: only where the plan's operators carry uids (compiled plans, {@code
 * table.exec.uid.generation=ALWAYS}; {@link #applies}). Without uids Flink derives each
 * operator's id from the topology (StreamGraphHasherV2: the node's position in a breadth-first
 * walk from the sources, its chainable outputs and its inputs' ids), so the chained sender, an
 * extra node with an extra chained output, would give the sending operator, the aggregate and
 * every operator after them ids stock Flink does not give them, and savepoints would no longer
 * move between aggforge and stock Flink. Setting the stock ids as uid hashes
 * ({@code Transformation#setUidHash}) would only map a stock savepoint onto the aggforge job:
 * Flink stores an operator's state under its generated id, which the stock job cannot map back.
 * Without uids the aggregate therefore reads Flink's own exchange, unchanged. With uids every
 * operator's id is its uid's hash, which the extra (stateless) operators do not change.
 */
public final class ColumnarExchange {

    /** The type of exchange messages. */
    private static final PrimitiveArrayTypeInfo<byte[]> BYTES =
            PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO;

    private ColumnarExchange() {}

    /** Flink's exchange in front of an aggregate, and the upstream edge it partitions. */
    record Feed(StreamExecExchange exchange, int[] keys) {

        private ExecEdge upstreamEdge() {
            return exchange.getInputEdges().get(0);
        }

        /** Parallelism of the receiving side, as Flink's exchange sets it. */
        private int parallelism() {
            return keys.length == 0 ? 1 : ExecutionConfig.PARALLELISM_DEFAULT;
        }

        @SuppressWarnings("unchecked")
        private Transformation<RowData> upstream(PlannerBase planner) {
            return (Transformation<RowData>) upstreamEdge().translateToPlan(planner);
        }

        /**
         * The columnar exchange: messages routed to the aggregate's subtasks, by a native local
         * phase upstream that routes its own output ({@link RoutableLocal}) or else by {@link
         * ColumnarExchangeSender} from the upstream's rows.
         */
        Transformation<byte[]> columnar(
                PlannerBase planner, TransformationMetadata meta, NativeOperatorSpec spec) {
            Optional<Transformation<byte[]>> routed = routedLocal(planner, spec);
            OneInputTransformation<?, byte[]> sender =
                    routed.isPresent()
                            ? chained(routed.get(), senderMeta(meta), new MessageForwarder(), BYTES)
                            : chained(
                                    upstream(planner),
                                    senderMeta(meta),
                                    new ColumnarExchangeSender(spec),
                                    BYTES);
            PartitionTransformation<byte[]> edge =
                    new PartitionTransformation<>(sender, new ColumnarExchangePartitioner());
            edge.setParallelism(parallelism());
            return edge;
        }

        /**
         * The upstream's messages for the aggregate running {@code receiver} if the upstream is a
         * native local phase that can route its output to it.
         */
        @SuppressWarnings("unchecked")
        private Optional<Transformation<byte[]>> routedLocal(
                PlannerBase planner, NativeOperatorSpec receiver) {
            if (!(upstreamEdge().getSource() instanceof RoutableLocal local)) {
                return Optional.empty();
            }
            local.routeTo(receiver);
            Transformation<?> translated = upstreamEdge().translateToPlan(planner);
            return BYTES.equals(translated.getOutputType())
                    ? Optional.of((Transformation<byte[]>) translated)
                    : Optional.empty();
        }
    }

    /**
     * Whether the columnar exchange takes the place of Flink's exchange in front of a native
     * aggregate: the option is on and the plan's operators carry uids (see the class comment).
     *
     * @param option {@link AggforgeOptions#COLUMNAR_EXCHANGE}
     * @param uids whether the plan's transformations get uids ({@code ExecNodeConfig#shouldSetUid})
     */
    public static boolean applies(boolean option, boolean uids) {
        return option && uids;
    }

    /**
     * The exchange feeding an aggregate over {@code inputEdge} if it is Flink's exchange on
     * exactly {@code grouping} (the singleton one for no keys).
     */
    static Optional<Feed> feed(ExecEdge inputEdge, int[] grouping) {
        ExecNode<?> source = inputEdge.getSource();
        if (!(source instanceof StreamExecExchange exchange)) {
            return Optional.empty();
        }
        InputProperty.RequiredDistribution distribution =
                exchange.getInputProperties().get(0).getRequiredDistribution();
        switch (distribution.getType()) {
            case HASH:
                int[] keys = ((InputProperty.HashDistribution) distribution).getKeys();
                return Arrays.equals(keys, grouping) && grouping.length > 0
                        ? Optional.of(new Feed(exchange, keys))
                        : Optional.empty();
            case SINGLETON:
                return grouping.length == 0
                        ? Optional.of(new Feed(exchange, grouping))
                        : Optional.empty();
            default:
                return Optional.empty();
        }
    }

    /**
     * EXPLAIN's {@code exchange} item of a native keyed aggregate over {@code input}: {@code
     * columnar}, {@code rows} with the option that keeps the columnar exchange off, or empty
     * when no exchange on exactly its keys feeds it.
     *
     * @param option {@link AggforgeOptions#COLUMNAR_EXCHANGE}
     * @param uids whether the plan's transformations get uids
     */
    public static String explain(RelNode input, int[] grouping, boolean option, boolean uids) {
        if (!(input instanceof StreamPhysicalExchange exchange)) {
            return "";
        }
        RelDistribution distribution = exchange.getDistribution();
        boolean matches =
                switch (distribution.getType()) {
                    case HASH_DISTRIBUTED -> grouping.length > 0
                            && Arrays.equals(
                                    distribution.getKeys().stream().mapToInt(Integer::intValue).toArray(),
                                    grouping);
                    case SINGLETON -> grouping.length == 0;
                    default -> false;
                };
        if (!matches) {
            return "";
        }
        if (applies(option, uids)) {
            return "columnar";
        }
        return option
                ? "rows (the columnar exchange needs operator uids: table.exec.uid.generation=ALWAYS)"
                : "rows (" + AggforgeOptions.COLUMNAR_EXCHANGE.key() + "=false)";
    }

    /**
     * The sender's (or forwarder's) metadata: {@code AggforgeExchange} with the aggregate's
     * node id (the web UI shows it at the end of the sending task's chain), its uid suffixed.
     */
    private static TransformationMetadata senderMeta(TransformationMetadata meta) {
        String aggregate = meta.getName();
        int id = aggregate.indexOf('[');
        String name = "AggforgeExchange" + (id < 0 ? "" : aggregate.substring(id));
        String description = "aggforge exchange into " + meta.getDescription();
        return meta.getUid() == null
                ? new TransformationMetadata(name, description)
                : new TransformationMetadata(meta.getUid() + "-exchange", name, description);
    }

    /** A transformation of {@code operator} chained to {@code input}'s task. */
    private static <I, O> OneInputTransformation<I, O> chained(
            Transformation<I> input,
            TransformationMetadata meta,
            StreamOperator<O> operator,
            org.apache.flink.api.common.typeinfo.TypeInformation<O> outputType) {
        SimpleOperatorFactory<O> factory = SimpleOperatorFactory.of(operator);
        factory.setChainingStrategy(ChainingStrategy.ALWAYS);
        return ExecNodeUtil.createOneInputTransformation(
                input, meta, factory, outputType, input.getParallelism(), false);
    }
}
