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
import org.apache.flink.table.planner.plan.nodes.exec.stream.StreamExecLocalGroupAggregate;
import org.apache.flink.table.types.logical.RowType;

import dev.aggforge.flink.plan.AggregateDescriptor.Phase;

/**
 * What one of Flink's own group-aggregate exec nodes ({@link StreamExecGroupAggregate}, {@link
 * StreamExecLocalGroupAggregate}, {@link StreamExecGlobalGroupAggregate}) holds: the fields its
 * own translation reads. Both ways a plan reaches aggforge go through it: the optimizer hook
 * translates a physical node to its stock exec node first, and a plan compiled on stock Flink
 * holds the exec nodes themselves. The nodes keep these fields private (the same names in Flink
 * 1.20, 2.2 and 2.3), so they are read reflectively.
 *
 * @param phase single, local or global
 * @param description the node's description (as EXPLAIN prints it)
 * @param grouping input fields of the group keys
 * @param calls the aggregate calls in output order
 * @param retractions per call: whether it must retract (Flink's aggCallNeedRetractions)
 * @param needRetraction whether the (original) input holds retractions
 * @param generateUpdateBefore whether -U rows are emitted (false for local)
 * @param localAggInputRowType global phase: the local phase's input row, else null
 * @param indexOfCountStar global phase: the record-counting COUNT(*) among the partials, or null
 * @param stateMetadata the node's state metadata (TTL), or null
 * @param outputType the node's output row
 */
public record StockAggregate(
        Phase phase,
        String description,
        int[] grouping,
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
                        Arrays.asList(field(node, "aggCalls", AggregateCall[].class)),
                        field(node, "aggCallNeedRetractions", boolean[].class),
                        field(node, "needRetraction", Boolean.class),
                        !local && field(node, "generateUpdateBefore", Boolean.class),
                        global ? field(node, "localAggInputRowType", RowType.class) : null,
                        global ? field(node, "indexOfCountStar", Integer.class) : null,
                        state,
                        (RowType) node.getOutputType()));
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
