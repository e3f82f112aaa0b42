package dev.aggforge.flink.operator;

import java.util.stream.Stream;

import org.apache.flink.runtime.state.KeyedStateBackend;

import dev.aggforge.flink.AggforgeOptions;

/**
 * Keeps a switch from stock Flink to aggforge from ever starting an aggregate with empty state,
 * for a native aggregate that keeps its own state in aggforge's snapshot format (raw keyed state,
 * not stock Flink's layout, {@link FlinkGroupState}). Both jobs give the aggregate the same
 * operator id, so Flink hands the native operator the stock operator's state: it fails with a
 * sentence that says what to do ({@link #refuseStockState}).
 *
 * <p>The other way round needs no guard here: stock Flink's operator reads an operator's raw
 * keyed state as its timers, which aggforge's payloads are not, so its restore fails.
 */
final class StockStateGuard {

    /** Stock Flink's keyed state of a window aggregate (window processors' accumulators). */
    static final String WINDOW_STATE = "window-aggs";

    private StockStateGuard() {}

    /** The keyed state stock Flink's operator for {@code mode} keeps its accumulators in. */
    static String stockStateName(NativeOperatorSpec.Mode mode) {
        return mode.windowed() ? WINDOW_STATE : FlinkGroupState.ACC_STATE;
    }

    /**
     * Fails when the restored keyed state holds values of stock Flink's state for this operator
     * (or of an aggforge one that kept Flink's layout), which this operator cannot read.
     *
     * @param why why the state is not kept in Flink's layout
     */
    static void refuseStockState(
            KeyedStateBackend<?> backend, NativeOperatorSpec.Mode mode, String operator, String why) {
        String state = stockStateName(mode);
        boolean holds;
        try (Stream<?> keys = backend.getKeysAndNamespaces(state)) {
            holds = keys.findAny().isPresent();
        }
        if (holds) {
            throw refusal(operator, state, why);
        }
    }

    private static IllegalStateException refusal(
            String operator, String state, String why) {
        return new IllegalStateException(
                operator
                        + ": the savepoint holds stock Flink's '"
                        + state
                        + "' state for this aggregate, which aggforge cannot keep in Flink's"
                        + " layout yet ("
                        + why
                        + "); restore it with "
                        + AggforgeOptions.ENABLED.key()
                        + ": false");
    }
}
