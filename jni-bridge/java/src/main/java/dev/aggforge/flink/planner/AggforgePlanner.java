package dev.aggforge.flink.planner;

import java.util.Optional;

import org.apache.flink.table.api.PlannerConfig;
import org.apache.flink.table.api.TableConfig;
import org.apache.flink.table.planner.calcite.CalciteConfig;
import org.apache.flink.table.planner.calcite.CalciteConfig$;
import org.apache.flink.table.planner.plan.optimize.program.FlinkChainedProgram;
import org.apache.flink.table.planner.plan.optimize.program.FlinkOptimizeProgram;
import org.apache.flink.table.planner.plan.optimize.program.StreamOptimizeContext;

import dev.aggforge.flink.bootstrap.PlannerBootstrap;
import dev.aggforge.flink.bootstrap.PlannerHook;
import dev.aggforge.flink.planner.compiled.CompiledStockPlans;
import dev.aggforge.flink.planner.nodes.StreamExecAggforgeGroupAggregate;

/**
 * Installs aggforge's step into Flink's stream optimizer.
 *
 * <p>Flink 2.2 has no optimizer plug-in point that a jar can register by itself: the planner is
 * discovered as the single {@code PlannerFactory} with identifier {@code "default"} (a second one
 * makes discovery fail as ambiguous), and its stream program is hard-wired, except that the
 * TableConfig's {@link PlannerConfig} may carry a {@link CalciteConfig} whose stream program
 * replaces the stock one. The hook uses exactly that: it sets a program that runs Flink's own
 * optimization ({@link StockStreamProgram}) and then {@link AggforgeRewriteProgram}.
 *
 * <p>Runs on the planner side (see {@code PlannerExtensionLoader}): {@link PlannerBootstrap}
 * calls {@link #install(TableConfig)} for every planner Flink creates.
 * {@code table.exec.aggforge.enabled} switches the rewrite per statement.
 */
public final class AggforgePlanner {

    /** Name of the hook's step in the chained stream program. */
    public static final String REWRITE_PROGRAM = "aggforge_group_aggregate";

    /** Name of the step that runs Flink's own stream optimization. */
    public static final String STOCK_PROGRAM = "aggforge_flink_stream_program";

    private AggforgePlanner() {}

    /** Installs the hook on {@code config} (idempotent) and returns its rewrite step. */
    public static synchronized AggforgeRewriteProgram install(TableConfig config) {
        Optional<AggforgeRewriteProgram> existing = installed(config);
        if (existing.isPresent()) {
            return existing.get();
        }
        StreamExecAggforgeGroupAggregate.register();
        CompiledStockPlans.register();
        CalciteConfig calcite = calciteConfig(config);
        FlinkChainedProgram<StreamOptimizeContext> previous =
                calcite.getStreamProgram().isDefined() ? calcite.getStreamProgram().get() : null;
        FlinkChainedProgram<StreamOptimizeContext> program = new FlinkChainedProgram<>();
        program.addLast(STOCK_PROGRAM, new StockStreamProgram(previous));
        AggforgeRewriteProgram rewrite = new AggforgeRewriteProgram();
        program.addLast(REWRITE_PROGRAM, rewrite);
        config.setPlannerConfig(
                CalciteConfig$.MODULE$.createBuilder(calcite).replaceStreamProgram(program).build());
        return rewrite;
    }

    /** The rewrite step installed on {@code config}, or null (for {@link PlannerBootstrap}). */
    public static PlannerHook installedHook(TableConfig config) {
        return installed(config).orElse(null);
    }

    /** The rewrite step installed on {@code config}, if any. */
    public static Optional<AggforgeRewriteProgram> installed(TableConfig config) {
        CalciteConfig calcite = calciteConfig(config);
        if (calcite.getStreamProgram().isEmpty()) {
            return Optional.empty();
        }
        scala.Option<FlinkOptimizeProgram<StreamOptimizeContext>> step =
                calcite.getStreamProgram().get().get(REWRITE_PROGRAM);
        if (step.isDefined() && step.get() instanceof AggforgeRewriteProgram) {
            return Optional.of((AggforgeRewriteProgram) step.get());
        }
        return Optional.empty();
    }

    private static CalciteConfig calciteConfig(TableConfig config) {
        PlannerConfig planner = config.getPlannerConfig();
        return planner.unwrap(CalciteConfig.class).orElse(CalciteConfig$.MODULE$.DEFAULT());
    }
}
