package dev.aggforge.flink.planner.nodes;

import java.util.Objects;

import org.apache.calcite.rel.RelWriter;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNode;

import dev.aggforge.flink.operator.NativeOperatorSpec;

/**
 * What aggforge decided for one group aggregate: run it natively with {@code spec}, or keep
 * Flink's operator for {@code reason}. Either way EXPLAIN shows it in an {@code aggforge=[...]}
 * item, so a user sees what runs natively and what to change for the rest.
 *
 * @param spec what the native operator runs, or null when Flink keeps its operator
 * @param reason why Flink keeps its operator (empty when native)
 * @param exchange what feeds the native operator ({@link ColumnarExchange#explain}; empty when
 *     not an exchange on its keys)
 */
public record AggforgeDecision(NativeOperatorSpec spec, String reason, String exchange) {

    /** Validates the pair. */
    public AggforgeDecision {
        Objects.requireNonNull(reason);
        Objects.requireNonNull(exchange);
        if ((spec == null) == reason.isEmpty()) {
            throw new IllegalArgumentException("a decision is native or has a reason, not both");
        }
    }

    /** Runs natively with {@code spec}. */
    public static AggforgeDecision nativeOperator(NativeOperatorSpec spec) {
        return new AggforgeDecision(Objects.requireNonNull(spec), "", "");
    }

    /** Stays on Flink for {@code reason}. */
    public static AggforgeDecision stock(String reason) {
        return new AggforgeDecision(null, reason.isEmpty() ? "unknown reason" : reason, "");
    }

    /** This decision with EXPLAIN's {@code exchange} item (native decisions only). */
    public AggforgeDecision withExchange(String exchange) {
        return isNative() ? new AggforgeDecision(spec, reason, exchange) : this;
    }

    /** Whether the aggregate runs natively. */
    public boolean isNative() {
        return spec != null;
    }

    /** The value of EXPLAIN's {@code aggforge} item. */
    public String explain() {
        return isNative() ? spec.specializations() : "stays on Flink: " + reason;
    }

    /**
     * The node's name in EXPLAIN: {@code Aggforge<stock name>} when native, else the stock name
     * itself (Flink strips the {@code StreamPhysical} prefix).
     */
    public String relTypeName(String stockName) {
        return isNative() ? stockName.replace("StreamPhysical", "StreamPhysicalAggforge") : stockName;
    }

    /** EXPLAIN's terms of the stock node, with the {@code aggforge} item added. */
    public RelWriter explainTerms(RelWriter stockTerms) {
        return stockTerms
                .item("aggforge", explain())
                .itemIf("exchange", exchange, !exchange.isEmpty());
    }

    /** The exec node: the native one built from {@code stock}'s, or {@code stock} itself. */
    public ExecNode<?> execNode(ExecNode<?> stock, int[] grouping) {
        return isNative() ? NativeRewrite.execNode(stock, spec, grouping) : stock;
    }
}
