package dev.aggforge.flink.planner.describe;

import java.lang.reflect.Field;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import org.apache.calcite.rel.core.AggregateCall;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;
import org.apache.flink.table.planner.plan.nodes.exec.StateMetadata;
import org.apache.flink.table.planner.plan.nodes.exec.stream.StreamExecGlobalGroupAggregate;
import org.apache.flink.table.planner.plan.nodes.exec.stream.StreamExecGroupAggregate;
import org.apache.flink.table.planner.plan.nodes.exec.stream.StreamExecIncrementalGroupAggregate;
import org.apache.flink.table.planner.plan.nodes.exec.stream.StreamExecLocalGroupAggregate;
import org.apache.flink.table.types.logical.RowType;

import dev.aggforge.flink.plan.AggregateDescriptor.Phase;

/**
 * What one of Flink's own group-aggregate exec nodes ({@link StreamExecGroupAggregate}, {@link
 * StreamExecLocalGroupAggregate}, {@link StreamExecGlobalGroupAggregate}, {@link
 * StreamExecIncrementalGroupAggregate}) holds: the fields its
 * own translation reads. Both ways a plan reaches aggforge go through it: the optimizer hook
 * translates a physical node to its stock exec node first, and a plan compiled on stock Flink
 * holds the exec nodes themselves. The nodes keep these fields private (the same names in Flink
 * 1.20, 2.2 and 2.3), so they are read reflectively.
 *
 * @param phase single, local, global or incremental
 * @param description the node's description (as EXPLAIN prints it)
 * @param grouping input fields of the group keys (incremental: the partial level's)
 * @param finalGrouping incremental: the positions among the group keys of the final level's keys,
 *     else null
 * @param calls the aggregate calls in output order
 * @param retractions per call: whether it must retract (Flink's aggCallNeedRetractions)
 * @param needRetraction whether the (original) input holds retractions
 * @param generateUpdateBefore whether -U rows are emitted (false for local)
 * @param localAggInputRowType global and incremental phases: the local phase's input row, else
 *     null
 * @param indexOfCountStar global phase: the record-counting COUNT(*) among the partials, or null
 * @param stateMetadata the node's state metadata (TTL), or null
 * @param outputType the node's output row
 */
public record StockAggregate(
        Phase phase,
        String description,
        int[] grouping,
        int[] finalGrouping,
        List<AggregateCall> calls,
        boolean[] retractions,
        boolean needRetraction,
        boolean generateUpdateBefore,
        RowType localAggInputRowType,
        Integer indexOfCountStar,
        List<StateMetadata> stateMetadata,
        RowType outputType) {

    /** The fields of {@code node}, or empty if it is not one of Flink's group-aggregate nodes. */
    public static Optional<StockAggregate> of(ExecNode<?> node) {
        Phase phase;
        if (node instanceof StreamExecGroupAggregate) {
            phase = Phase.SINGLE;
        } else if (node instanceof StreamExecLocalGroupAggregate) {
            phase = Phase.LOCAL;
        } else if (node instanceof StreamExecGlobalGroupAggregate) {
            phase = Phase.GLOBAL;
        } else if (node instanceof StreamExecIncrementalGroupAggregate) {
            return Optional.of(incremental(node));
        } else {
            return Optional.empty();
        }
        boolean local = phase == Phase.LOCAL;
        boolean global = phase == Phase.GLOBAL;
        @SuppressWarnings("unchecked")
        List<StateMetadata> state = local ? null : field(node, "stateMetadataList", List.class);
        return Optional.of(
                new StockAggregate(
                        phase,
                        node.getDescription(),
                        field(node, "grouping", int[].class),
                        null,
                        Arrays.asList(field(node, "aggCalls", AggregateCall[].class)),
                        field(node, "aggCallNeedRetractions", boolean[].class),
                        field(node, "needRetraction", Boolean.class),
                        !local && field(node, "generateUpdateBefore", Boolean.class),
                        global ? field(node, "localAggInputRowType", RowType.class) : null,
                        global ? field(node, "indexOfCountStar", Integer.class) : null,
                        state,
                        (RowType) node.getOutputType()));
    }

    /** The fields of an incremental aggregate's exec node. */
    private static StockAggregate incremental(ExecNode<?> node) {
        @SuppressWarnings("unchecked")
        List<StateMetadata> state = field(node, "stateMetadataList", List.class);
        return new StockAggregate(
                Phase.INCREMENTAL,
                node.getDescription(),
                field(node, "partialAggGrouping", int[].class),
                field(node, "finalAggGrouping", int[].class),
                Arrays.asList(field(node, "partialOriginalAggCalls", AggregateCall[].class)),
                field(node, "partialAggCallNeedRetractions", boolean[].class),
                field(node, "partialAggNeedRetraction", Boolean.class),
                false,
                field(node, "partialLocalAggInputType", RowType.class),
                null,
                state,
                (RowType) node.getOutputType());
    }

    /** Reads a field a Flink node declares (or inherits) without an accessor. */
    public static <T> T field(Object owner, String name, Class<T> type) {
        for (Class<?> c = owner.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field field = c.getDeclaredField(name);
                field.setAccessible(true);
                return type.cast(field.get(owner));
            } catch (NoSuchFieldException e) {
                // Declared further up.
            } catch (IllegalAccessException e) {
                throw new IllegalStateException("cannot read " + name + " of " + owner.getClass(), e);
            }
        }
        throw new IllegalStateException(owner.getClass() + " has no field " + name);
    }
}
