package dev.aggforge.flink.failover;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.RestoredCheckpointStats;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

import dev.aggforge.flink.harness.Changelog;
import dev.aggforge.flink.harness.InputTable;
import dev.aggforge.flink.harness.RunOptions;
import dev.aggforge.flink.harness.SharedMiniCluster;
import dev.aggforge.flink.shim.FlinkTestShim;

/**
 * One Flink SQL job submitted straight to the {@link SharedMiniCluster}, for checkpoint, failover
 * and savepoint tests: checkpointing and a restart strategy in the job configuration, a
 * rate-limited (so checkpoints fall mid-stream) replayable DataGeneratorSource, an optional
 * restore path, and a pass-through probe right after the source that counts rows, records how
 * many rows each checkpoint covers and can throw once to fail the job.
 *
 * <p>The result goes, as a full changelog ({@code toChangelogStream}), to a sink that appends
 * every row it receives to an in-JVM list, replays after a restore included; {@link
 * #materialize} turns such a log into the final table.
 */
final class CheckpointedJob {

    /** Rows received by each run's sink, by run id. */
    private static final Map<String, List<Row>> OUTPUT = new ConcurrentHashMap<>();

    /** Each run's probe, by run id. */
    private static final Map<String, Probe> PROBES = new ConcurrentHashMap<>();

    private RunOptions options = RunOptions.defaults();
    private String sql;
    private InputTable input;
    private int sourceParallelism = 1;
    private double rowsPerSecond;
    private Duration checkpointInterval = Duration.ZERO;
    private int restartAttempts;
    private long failAfterRows = -1;
    private String restorePath;
    private String stateBackend;
    private RateLimiterStrategy rateLimiter;
    private boolean discardOutput;
    private final Map<String, String> jobConfig = new TreeMap<>();

    private CheckpointedJob() {}

    /** A job running {@code sql} over {@code input} (registered under its name). */
    static CheckpointedJob of(RunOptions options, String sql, InputTable input) {
        CheckpointedJob job = new CheckpointedJob();
        job.options = options;
        job.sql = sql;
        job.input = input;
        return job;
    }

    /** Parallelism of the source and the probe (the job's own is in the run options). */
    CheckpointedJob sourceParallelism(int value) {
        sourceParallelism = value;
        return this;
    }

    /** Caps the source's total rate (0: no cap). */
    CheckpointedJob rowsPerSecond(double value) {
        rowsPerSecond = value;
        return this;
    }

    /** Turns periodic checkpoints on (zero: off). */
    CheckpointedJob checkpointEvery(Duration value) {
        checkpointInterval = value;
        return this;
    }

    /** Fixed-delay restarts, {@code attempts} of them (0: no restart strategy). */
    CheckpointedJob restarts(int attempts) {
        restartAttempts = attempts;
        return this;
    }

    /**
     * Makes the probe throw once, at its first row after it has passed on {@code rows} rows and
     * a checkpoint covering at least one row has completed.
     */
    CheckpointedJob failOnceAfter(long rows) {
        failAfterRows = rows;
        return this;
    }

    /** The job's state backend ({@code state.backend.type}: hashmap, the default, or rocksdb). */
    CheckpointedJob stateBackend(String type) {
        stateBackend = type;
        return this;
    }

    /** Paces the source with {@code strategy} (in place of {@link #rowsPerSecond}). */
    CheckpointedJob rateLimit(RateLimiterStrategy strategy) {
        rateLimiter = strategy;
        return this;
    }

    /** The sink drops what it receives ({@link Running#changelog} stays empty). */
    CheckpointedJob discardOutput() {
        discardOutput = true;
        return this;
    }

    /** Sets a job configuration option (checkpoint storage, incremental checkpoints, ...). */
    CheckpointedJob config(String key, String value) {
        jobConfig.put(key, value);
        return this;
    }

    /** Restores the job from this savepoint or retained checkpoint. */
    CheckpointedJob restoreFrom(String path) {
        restorePath = path;
        return this;
    }

    /** Builds the job, records its EXPLAIN text and submits it. */
    Running start() throws Exception {
        String runId = UUID.randomUUID().toString();
        Probe probe = new Probe();
        PROBES.put(runId, probe);
        OUTPUT.put(runId, Collections.synchronizedList(new ArrayList<>()));

        Configuration config = new Configuration();
        config.set(PipelineOptions.MAX_PARALLELISM, 128);
        if (stateBackend != null) {
            config.setString("state.backend.type", stateBackend);
        }
        if (!checkpointInterval.isZero()) {
            config.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, checkpointInterval);
        }
        if (restartAttempts > 0) {
            config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
            config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, restartAttempts);
            config.set(
                    RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        } else {
            config.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        }
        jobConfig.forEach(config::setString);
        StreamExecutionEnvironment env = SharedMiniCluster.environment(config);
        env.setParallelism(options.parallelism());
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        for (Map.Entry<String, String> option : options.tableConfig().entrySet()) {
            tEnv.getConfig().getConfiguration().setString(option.getKey(), option.getValue());
        }
        options.setup().accept(tEnv);

        InternalTypeInfo<RowData> rowType = InternalTypeInfo.of(input.rowType());
        DataGeneratorSource<RowData> source =
                new DataGeneratorSource<>(
                        input.generator(),
                        input.rowCount(),
                        rateLimiter != null
                                ? rateLimiter
                                : rowsPerSecond > 0
                                        ? RateLimiterStrategy.perSecond(rowsPerSecond)
                                        : RateLimiterStrategy.noOp(),
                        rowType);
        DataStream<RowData> rows =
                env.fromSource(source, WatermarkStrategy.noWatermarks(), input.name())
                        .setParallelism(sourceParallelism)
                        .map(new ProbeMap(runId, failAfterRows))
                        .returns(rowType)
                        .setParallelism(sourceParallelism)
                        .name("probe");
        if (input.rowtime() == null) {
            tEnv.createTemporaryView(input.name(), tEnv.fromDataStream(rows));
        } else {
            env.getConfig().setAutoWatermarkInterval(input.watermarkIntervalMs());
            Schema schema =
                    Schema.newBuilder()
                            .watermark(input.rowtime(), input.watermarkExpression())
                            .build();
            tEnv.createTemporaryView(input.name(), tEnv.fromDataStream(rows, schema));
        }
        String plan = tEnv.explainSql(sql);
        Table table = tEnv.sqlQuery(sql);
        tEnv.toChangelogStream(table).sinkTo(new RecordingSink(runId, discardOutput)).name("recording-sink");

        StreamGraph graph = env.getStreamGraph();
        if (restorePath != null) {
            graph.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(restorePath, false));
        }
        MiniCluster cluster = SharedMiniCluster.cluster();
        JobID jobId = FlinkTestShim.submit(cluster, graph).get(30, TimeUnit.SECONDS).getJobID();
        return new Running(cluster, jobId, runId, plan, probe, input.rowCount());
    }

    /**
     * The final table a changelog leaves, read as upserts on field 0 (the GROUP BY key): +I and
     * +U set the key's row, -D removes it, -U is ignored. Replayed rows after a restore are
     * harmless: the last row of each key wins. Rows print as {@code +I[...]}, sorted.
     */
    static List<String> materialize(List<Row> log) {
        Map<String, String> byKey = new TreeMap<>();
        for (Row row : log) {
            String key = Changelog.keyText(row.getField(0));
            switch (row.getKind()) {
                case INSERT:
                case UPDATE_AFTER:
                    Row insert = Row.copy(row);
                    insert.setKind(RowKind.INSERT);
                    byKey.put(key, insert.toString());
                    break;
                case DELETE:
                    byKey.remove(key);
                    break;
                default:
                    break;
            }
        }
        List<String> table = new ArrayList<>(byKey.values());
        Collections.sort(table);
        return table;
    }

    /**
     * The rows an insert-only changelog holds, each once, sorted ({@code +I[...]}): replays after
     * a restore repeat rows unchanged, while a row emitted twice with different values shows as
     * two rows. Fails on any row that is not an insert.
     */
    static List<String> distinctInserts(List<Row> log) {
        TreeSet<String> rows = new TreeSet<>();
        for (Row row : log) {
            if (row.getKind() != RowKind.INSERT) {
                throw new AssertionError("not an insert-only changelog: " + row);
            }
            rows.add(row.toString());
        }
        return new ArrayList<>(rows);
    }

    /** A submitted job. */
    static final class Running {
        private final MiniCluster cluster;
        private final JobID jobId;
        private final String runId;
        private final String plan;
        private final Probe probe;
        private final long totalRows;

        Running(MiniCluster cluster, JobID jobId, String runId, String plan, Probe probe, long totalRows) {
            this.cluster = cluster;
            this.jobId = jobId;
            this.runId = runId;
            this.plan = plan;
            this.probe = probe;
            this.totalRows = totalRows;
        }

        /** EXPLAIN of the job's SQL in the job's table environment. */
        String plan() {
            return plan;
        }

        /** What the probe saw. */
        Probe probe() {
            return probe;
        }

        /** Rows the source produces in total (one pass, no replay). */
        long totalRows() {
            return totalRows;
        }

        /** Waits until the probe has passed on at least {@code rows} rows (all attempts). */
        void awaitRows(long rows, Duration timeout) throws Exception {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (probe.rows() < rows) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(
                            "after " + timeout + " the probe saw " + probe.rows() + " < " + rows + " rows");
                }
                if (cluster.getJobStatus(jobId).get().isGloballyTerminalState()) {
                    throw new AssertionError("job ended after " + probe.rows() + " < " + rows + " rows");
                }
                Thread.sleep(10);
            }
        }

        /** Stops the job with a canonical savepoint under {@code directory}; returns its path. */
        String stopWithSavepoint(String directory) throws Exception {
            String path =
                    cluster.stopWithSavepoint(jobId, directory, false, SavepointFormatType.CANONICAL)
                            .get(60, TimeUnit.SECONDS);
            await(Duration.ofSeconds(60));
            return path;
        }

        /** Waits for the job to end; throws its failure if it failed. */
        void await(Duration timeout) throws Exception {
            JobResult result =
                    cluster.requestJobResult(jobId).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!result.isSuccess()) {
                throw new AssertionError(
                        "job failed",
                        result.getSerializedThrowable()
                                .get()
                                .deserializeError(Thread.currentThread().getContextClassLoader()));
            }
        }

        /** The (archived, once ended) execution graph. */
        AccessExecutionGraph graph() throws Exception {
            return cluster.getArchivedExecutionGraph(jobId).get(30, TimeUnit.SECONDS);
        }

        /** The highest attempt number of any task: the number of restarts of a full restart. */
        int maxAttempt() throws Exception {
            int max = 0;
            for (AccessExecutionVertex vertex : graph().getAllExecutionVertices()) {
                max = Math.max(max, vertex.getCurrentExecutionAttempt().getAttemptNumber());
            }
            return max;
        }

        /** The lowest attempt number of any task. */
        int minAttempt() throws Exception {
            int min = Integer.MAX_VALUE;
            for (AccessExecutionVertex vertex : graph().getAllExecutionVertices()) {
                min = Math.min(min, vertex.getCurrentExecutionAttempt().getAttemptNumber());
            }
            return min;
        }

        /** The checkpoint or savepoint the job last restored, or null. */
        RestoredCheckpointStats restored() throws Exception {
            return graph().getCheckpointStatsSnapshot().getLatestRestoredCheckpoint();
        }

        /** Completed checkpoints and savepoints of the job. */
        long completedCheckpoints() throws Exception {
            return graph().getCheckpointStatsSnapshot().getCounts().getNumberOfCompletedCheckpoints();
        }

        /** Every row the sink received, in arrival order. */
        List<Row> changelog() {
            synchronized (OUTPUT.get(runId)) {
                return List.copyOf(OUTPUT.get(runId));
            }
        }

        /** Cancels the job and waits until it has ended. */
        void cancel() throws Exception {
            cluster.cancelJob(jobId).get(60, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!cluster.getJobStatus(jobId).get().isGloballyTerminalState()) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the job did not end within 60 s of its cancellation");
                }
                Thread.sleep(20);
            }
        }

        /** Drops the run's recorded rows and probe. */
        void release() {
            OUTPUT.remove(runId);
            PROBES.remove(runId);
        }
    }

    /** What a run's probe saw, shared by its subtasks and attempts (one JVM). */
    static final class Probe {
        private final AtomicLong rows = new AtomicLong();
        private final Map<Long, AtomicLong> rowsAtSnapshot = new ConcurrentHashMap<>();
        private final AtomicLong lastCompletedWithRows = new AtomicLong(-1);
        private final AtomicBoolean failed = new AtomicBoolean();
        private volatile long rowsBeforeFailure = -1;
        private volatile long checkpointBeforeFailure = -1;

        /** Rows passed on by all probe subtasks, over all attempts. */
        long rows() {
            return rows.get();
        }

        /**
         * Rows the probe subtasks had passed on when they snapshot checkpoint or savepoint {@code
         * id} (summed over subtasks); -1 if no snapshot {@code id} was taken before a failure.
         */
        long rowsAt(long id) {
            AtomicLong value = rowsAtSnapshot.get(id);
            return value == null ? -1 : value.get();
        }

        /** Ids of the snapshots taken before the injected failure (or all, without one). */
        List<Long> snapshots() {
            List<Long> ids = new ArrayList<>(rowsAtSnapshot.keySet());
            Collections.sort(ids);
            return ids;
        }

        /** Whether the injected failure was thrown. */
        boolean failed() {
            return failed.get();
        }

        /** Rows the failing subtask had passed on before it threw. */
        long rowsBeforeFailure() {
            return rowsBeforeFailure;
        }

        /** The last checkpoint covering rows that the probe knew complete when it threw. */
        long checkpointBeforeFailure() {
            return checkpointBeforeFailure;
        }
    }

    /** Passes rows through; counts them, records snapshots and may throw once. */
    static final class ProbeMap
            implements MapFunction<RowData, RowData>, CheckpointedFunction, CheckpointListener {
        private static final long serialVersionUID = 1L;
        private final String runId;
        private final long failAfterRows;
        private transient Probe probe;
        private transient long count;

        ProbeMap(String runId, long failAfterRows) {
            this.runId = runId;
            this.failAfterRows = failAfterRows;
        }

        @Override
        public void initializeState(FunctionInitializationContext context) {
            probe = PROBES.get(runId);
            count = 0;
        }

        @Override
        public RowData map(RowData row) {
            if (failAfterRows >= 0
                    && count >= failAfterRows
                    && probe.lastCompletedWithRows.get() >= 0
                    && probe.failed.compareAndSet(false, true)) {
                probe.rowsBeforeFailure = count;
                probe.checkpointBeforeFailure = probe.lastCompletedWithRows.get();
                throw new IllegalStateException("injected failure after " + count + " rows");
            }
            count++;
            probe.rows.incrementAndGet();
            return row;
        }

        @Override
        public void snapshotState(FunctionSnapshotContext context) {
            if (!probe.failed.get()) {
                probe.rowsAtSnapshot
                        .computeIfAbsent(context.getCheckpointId(), id -> new AtomicLong())
                        .addAndGet(count);
            }
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            if (!probe.failed.get() && probe.rowsAt(checkpointId) > 0) {
                probe.lastCompletedWithRows.accumulateAndGet(checkpointId, Math::max);
            }
        }
    }

    /** Appends every row to the run's list. */
    static final class RecordingSink extends FlinkTestShim.ContextFreeSink<Row> {
        private static final long serialVersionUID = 1L;
        private final String runId;
        private final boolean discard;

        RecordingSink(String runId, boolean discard) {
            this.runId = runId;
            this.discard = discard;
        }

        @Override
        protected SinkWriter<Row> openWriter() {
            List<Row> target = OUTPUT.get(runId);
            return new SinkWriter<>() {
                @Override
                public void write(Row row, Context context) {
                    if (!discard) {
                        target.add(Row.copy(row));
                    }
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
