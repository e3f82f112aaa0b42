package dev.aggforge.flink.harness;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

/**
 * How one SQL run is configured. Immutable; each {@code with*} method returns a changed copy.
 *
 * <ul>
 *   <li>{@code parallelism}: of the job (the source always runs at parallelism 1, so each key's
 *       input order is the same at any parallelism)
 *   <li>{@code miniBatchSize}: 0 = mini-batch off; &gt; 0 turns it on with that bundle size and an
 *       allow-latency of one hour, so bundles flush only on size and at end of input
 *       (deterministic)
 *   <li>{@code aggPhase}: {@code table.optimizer.agg-phase-strategy} (AUTO, ONE_PHASE, TWO_PHASE)
 *   <li>{@code stateTtl}: {@code table.exec.state.ttl}; zero = never expire
 *   <li>{@code updateBefore}: true collects with {@code ChangelogMode.all()}, so the planner
 *       makes aggregates emit -U before +U; false collects with {@code ChangelogMode.upsert()},
 *       so they emit +U only (generateUpdateBefore = false)
 *   <li>{@code extraConfig}: any other table options
 *   <li>{@code setup}: runs on the table environment before the query (e.g. installing a hook)
 * </ul>
 */
public final class RunOptions {
    private final int parallelism;
    private final int miniBatchSize;
    private final String aggPhase;
    private final Duration stateTtl;
    private final boolean updateBefore;
    private final Map<String, String> extraConfig;
    private final Consumer<StreamTableEnvironment> setup;

    private RunOptions(
            int parallelism,
            int miniBatchSize,
            String aggPhase,
            Duration stateTtl,
            boolean updateBefore,
            Map<String, String> extraConfig,
            Consumer<StreamTableEnvironment> setup) {
        this.parallelism = parallelism;
        this.miniBatchSize = miniBatchSize;
        this.aggPhase = aggPhase;
        this.stateTtl = stateTtl;
        this.updateBefore = updateBefore;
        this.extraConfig = Map.copyOf(extraConfig);
        this.setup = setup;
    }

    /** Parallelism 1, mini-batch off, AUTO phases, no TTL, -U/+U on, no extra config. */
    public static RunOptions defaults() {
        return new RunOptions(1, 0, "AUTO", Duration.ZERO, true, Map.of(), env -> {});
    }

    /** A copy with another parallelism. */
    public RunOptions withParallelism(int value) {
        return new RunOptions(value, miniBatchSize, aggPhase, stateTtl, updateBefore, extraConfig, setup);
    }

    /** A copy with mini-batch on (size &gt; 0) or off (0). */
    public RunOptions withMiniBatch(int size) {
        return new RunOptions(parallelism, size, aggPhase, stateTtl, updateBefore, extraConfig, setup);
    }

    /** A copy with another {@code table.optimizer.agg-phase-strategy}. */
    public RunOptions withAggPhase(String value) {
        return new RunOptions(parallelism, miniBatchSize, value, stateTtl, updateBefore, extraConfig, setup);
    }

    /** A copy with another {@code table.exec.state.ttl}. */
    public RunOptions withStateTtl(Duration value) {
        return new RunOptions(parallelism, miniBatchSize, aggPhase, value, updateBefore, extraConfig, setup);
    }

    /** A copy that collects with (true) or without (false) UPDATE_BEFORE rows. */
    public RunOptions withUpdateBefore(boolean value) {
        return new RunOptions(parallelism, miniBatchSize, aggPhase, stateTtl, value, extraConfig, setup);
    }

    /** A copy with one more table option. */
    public RunOptions withConfig(String key, String value) {
        Map<String, String> config = new LinkedHashMap<>(extraConfig);
        config.put(key, value);
        return new RunOptions(parallelism, miniBatchSize, aggPhase, stateTtl, updateBefore, config, setup);
    }

    /** A copy with a setup step (runs after the options are applied, before the query). */
    public RunOptions withSetup(Consumer<StreamTableEnvironment> value) {
        return new RunOptions(parallelism, miniBatchSize, aggPhase, stateTtl, updateBefore, extraConfig, value);
    }

    public int parallelism() {
        return parallelism;
    }

    public int miniBatchSize() {
        return miniBatchSize;
    }

    public String aggPhase() {
        return aggPhase;
    }

    public Duration stateTtl() {
        return stateTtl;
    }

    public boolean updateBefore() {
        return updateBefore;
    }

    public Map<String, String> extraConfig() {
        return extraConfig;
    }

    public Consumer<StreamTableEnvironment> setup() {
        return setup;
    }

    /** All table options this run sets, as key/value pairs. */
    public Map<String, String> tableConfig() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("table.optimizer.agg-phase-strategy", aggPhase);
        config.put("table.exec.state.ttl", stateTtl.toMillis() + " ms");
        if (miniBatchSize > 0) {
            config.put("table.exec.mini-batch.enabled", "true");
            config.put("table.exec.mini-batch.allow-latency", "1 h");
            config.put("table.exec.mini-batch.size", Integer.toString(miniBatchSize));
        } else {
            config.put("table.exec.mini-batch.enabled", "false");
        }
        config.putAll(extraConfig);
        return config;
    }

    @Override
    public String toString() {
        return "p=" + parallelism + " " + tableConfig() + " updateBefore=" + updateBefore;
    }
}
