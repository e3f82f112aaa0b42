package dev.aggforge.flink.planner;

import org.apache.calcite.rel.RelNode;
import org.apache.flink.table.planner.plan.optimize.program.FlinkChainedProgram;
import org.apache.flink.table.planner.plan.optimize.program.FlinkOptimizeProgram;
import org.apache.flink.table.planner.plan.optimize.program.FlinkStreamProgram;
import org.apache.flink.table.planner.plan.optimize.program.StreamOptimizeContext;

/**
 * Flink's own stream optimization, run as one step: the program that was configured before the
 * hook was installed, or else the stock {@link FlinkStreamProgram}, built from the table
 * configuration at every optimization exactly as Flink's optimizer builds it when no custom
 * program is set (so options such as join reordering keep working when set after install).
 */
final class StockStreamProgram implements FlinkOptimizeProgram<StreamOptimizeContext> {

    private final FlinkChainedProgram<StreamOptimizeContext> configured;

    /** @param configured the previously configured program, or null for the stock one */
    StockStreamProgram(FlinkChainedProgram<StreamOptimizeContext> configured) {
        this.configured = configured;
    }

    @Override
    public RelNode optimize(RelNode root, StreamOptimizeContext context) {
        FlinkChainedProgram<StreamOptimizeContext> program =
                configured != null
                        ? configured
                        : FlinkStreamProgram.buildProgram(context.getTableConfig());
        return program.optimize(root, context);
    }
}
