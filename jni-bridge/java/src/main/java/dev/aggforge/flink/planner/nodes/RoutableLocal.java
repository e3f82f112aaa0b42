package dev.aggforge.flink.planner.nodes;

import dev.aggforge.flink.operator.NativeOperatorSpec;

/**
 * An exec node that may run a native local phase: the columnar exchange above it asks, before
 * translating it, that its output be routed to the global aggregate running {@code receiver}
 * as exchange messages instead of emitted as rows ({@link ColumnarExchange}). A node that does
 * not run natively, or whose output that aggregate cannot read as is, keeps emitting rows.
 */
public interface RoutableLocal {

    /** Routes this node's output to the aggregate running {@code receiver} where it can. */
    void routeTo(NativeOperatorSpec receiver);
}
