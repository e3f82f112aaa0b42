package dev.aggforge.flink.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.table.data.conversion.RowRowConverter;
import org.apache.flink.table.runtime.typeutils.ExternalTypeInfo;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.utils.TypeConversions;
import org.apache.flink.table.api.ExplainDetail;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * Runs Flink SQL in-process (on the {@link SharedMiniCluster}) over {@link InputTable}s and returns
 * the complete changelog. Meant for parity tests: run the same query under stock Flink and under
 * aggforge (a {@link RunOptions#setup()} that installs the hook) and compare.
 *
 * <p>Inputs are registered as views from a bounded DataGeneratorSource of RowData at parallelism
 * 1. The query result is collected through {@code toChangelogStream} and {@code
 * executeAndCollect}, with {@code ChangelogMode.all()} (aggregates emit -U/+U) or {@code
 * ChangelogMode.upsert()} (aggregates emit +U only), per {@link RunOptions#updateBefore()}.
 */
public final class SqlHarness {

    private SqlHarness() {}

    /** Runs {@code sql} and returns its complete changelog. */
    public static Changelog run(RunOptions options, String sql, InputTable... inputs) throws Exception {
        StreamTableEnvironment tEnv = environment(options, inputs);
        Table table = tEnv.sqlQuery(sql);
        DataStream<Row> changes =
                options.updateBefore()
                        ? tEnv.toChangelogStream(table)
                        : tEnv.toChangelogStream(table, Schema.derived(), ChangelogMode.upsert());
        List<Row> rows = new ArrayList<>();
        try (CloseableIterator<Row> it = changes.executeAndCollect("aggforge-harness")) {
            it.forEachRemaining(rows::add);
        }
        Changelog log = new Changelog(rows);
        dump(options, sql, log);
        return log;
    }

    /**
     * -Daggforge.changelog.dump=FILE appends every run's changelog to FILE (the SQL, the options,
     * then the rows: in order at parallelism 1, sorted above), so stock results can be diffed
     * across Flink versions. Off by default.
     */
    private static synchronized void dump(RunOptions options, String sql, Changelog log) throws IOException {
        String file = System.getProperty("aggforge.changelog.dump");
        if (file == null || file.isEmpty()) {
            return;
        }
        List<String> lines = new ArrayList<>(log.lines());
        if (options.parallelism() > 1) {
            Collections.sort(lines);
        }
        StringBuilder text = new StringBuilder("### ").append(sql.replace('\n', ' ')).append('\n');
        text.append("### ").append(new TreeMap<>(options.tableConfig())).append(" p=")
                .append(options.parallelism()).append(" updateBefore=").append(options.updateBefore()).append('\n');
        lines.forEach(line -> text.append(line).append('\n'));
        Files.writeString(
                Path.of(file), text, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /** The EXPLAIN text of {@code sql} under {@code options}. */
    public static String explain(RunOptions options, String sql, InputTable... inputs) {
        return environment(options, inputs).explainSql(sql);
    }

    /** The JSON execution plan (the stream graph, with operator names) of {@code sql}. */
    public static String executionPlan(RunOptions options, String sql, InputTable... inputs) {
        return environment(options, inputs).explainSql(sql, ExplainDetail.JSON_EXECUTION_PLAN);
    }

    /**
     * Runs {@code INSERT INTO} a blackhole sink with the columns of {@code sql}'s result and
     * returns the job's net runtime in milliseconds (scheduling and execution, not MiniCluster
     * start-up).
     */
    public static long runToBlackhole(RunOptions options, String sql, InputTable... inputs)
            throws Exception {
        StreamTableEnvironment tEnv = environment(options, inputs);
        Table table = tEnv.sqlQuery(sql);
        tEnv.createTemporaryView("aggforge_bench_result", table);
        StringBuilder columns = new StringBuilder();
        table.getResolvedSchema()
                .getColumns()
                .forEach(
                        c ->
                                columns.append(columns.length() == 0 ? "" : ", ")
                                        .append('`')
                                        .append(c.getName())
                                        .append("` ")
                                        .append(c.getDataType().getLogicalType().asSerializableString()));
        tEnv.executeSql(
                "CREATE TEMPORARY TABLE aggforge_blackhole ("
                        + columns
                        + ") WITH ('connector' = 'blackhole')");
        TableResult result =
                tEnv.executeSql("INSERT INTO aggforge_blackhole SELECT * FROM aggforge_bench_result");
        JobExecutionResult job =
                result.getJobClient()
                        .orElseThrow(() -> new IllegalStateException("no job was submitted"))
                        .getJobExecutionResult()
                        .get();
        return job.getNetRuntime();
    }

    /** Internal rows to external ones, row kinds kept (for {@code fromChangelogStream}). */
    private static final class ToExternal extends RichMapFunction<RowData, Row> {
        private static final long serialVersionUID = 1L;
        private final DataType dataType;
        private transient RowRowConverter converter;

        ToExternal(DataType dataType) {
            this.dataType = dataType;
        }

        @Override
        public Row map(RowData row) {
            if (converter == null) {
                converter = RowRowConverter.create(dataType);
                converter.open(ToExternal.class.getClassLoader());
            }
            return converter.toExternal(row);
        }
    }

    /** A fresh environment with the options applied and the inputs registered as views. */
    public static StreamTableEnvironment environment(RunOptions options, InputTable... inputs) {
        StreamExecutionEnvironment env = SharedMiniCluster.environment(new Configuration());
        env.setParallelism(options.parallelism());
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        for (Map.Entry<String, String> option : options.tableConfig().entrySet()) {
            tEnv.getConfig().getConfiguration().setString(option.getKey(), option.getValue());
        }
        options.setup().accept(tEnv);
        for (InputTable input : inputs) {
            DataGeneratorSource<RowData> source =
                    new DataGeneratorSource<>(
                            input.generator(),
                            input.rowCount(),
                            InternalTypeInfo.of(input.rowType()));
            DataStream<RowData> stream =
                    env.fromSource(source, WatermarkStrategy.noWatermarks(), input.name())
                            .setParallelism(1);
            if (input.rowtime() == null && !input.changelog()) {
                tEnv.createTemporaryView(input.name(), tEnv.fromDataStream(stream));
                continue;
            }
            Schema.Builder schema = Schema.newBuilder();
            if (input.rowtime() != null) {
                // Interval 0: a watermark whenever it advances, so late rows do not depend
                // on timing (unless the table asks for Flink's periodic watermarks).
                env.getConfig().setAutoWatermarkInterval(input.watermarkIntervalMs());
                schema.watermark(input.rowtime(), input.watermarkExpression());
            }
            if (!input.changelog()) {
                tEnv.createTemporaryView(input.name(), tEnv.fromDataStream(stream, schema.build()));
                continue;
            }
            DataType dataType = TypeConversions.fromLogicalToDataType(input.rowType());
            DataStream<Row> changes =
                    stream.map(new ToExternal(dataType))
                            .returns(ExternalTypeInfo.of(dataType))
                            .setParallelism(1);
            tEnv.createTemporaryView(
                    input.name(),
                    tEnv.fromChangelogStream(changes, schema.build(), ChangelogMode.all()));
        }
        return tEnv;
    }
}
