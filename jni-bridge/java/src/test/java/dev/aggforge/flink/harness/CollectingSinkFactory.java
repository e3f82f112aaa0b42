package dev.aggforge.flink.harness;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.RuntimeConverter;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.SinkV2Provider;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.types.DataType;
import org.apache.flink.types.Row;

import dev.aggforge.flink.shim.FlinkTestShim;

/**
 * A table sink for tests whose plans must be SQL end to end (compiled plans cannot hold
 * DataStream views): {@code 'connector' = 'aggforge-collect', 'id' = '...'} records the complete
 * changelog (as {@link Row#toString()}: {@code +I[1, 2]}) in this JVM under the id; {@link
 * #take(String)} returns and forgets it. Parallelism 1 keeps the order.
 */
public final class CollectingSinkFactory implements DynamicTableSinkFactory {

    /** The connector name. */
    public static final String IDENTIFIER = "aggforge-collect";

    private static final ConfigOption<String> ID =
            ConfigOptions.key("id").stringType().noDefaultValue();

    private static final Map<String, List<String>> RECORDED = new ConcurrentHashMap<>();

    /** The rows recorded under {@code id} so far, removed. */
    public static List<String> take(String id) {
        List<String> rows = RECORDED.remove(id);
        return rows == null ? List.of() : rows;
    }

    @Override
    public String factoryIdentifier() {
        return IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of(ID);
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of();
    }

    @Override
    public DynamicTableSink createDynamicTableSink(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        helper.validate();
        return new CollectingTableSink(
                helper.getOptions().get(ID),
                context.getCatalogTable().getResolvedSchema().toPhysicalRowDataType());
    }

    private record CollectingTableSink(String id, DataType rowType) implements DynamicTableSink {

        @Override
        public ChangelogMode getChangelogMode(ChangelogMode requestedMode) {
            return ChangelogMode.all();
        }

        @Override
        public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
            return SinkV2Provider.of(
                    new CollectingSink(id, context.createDataStructureConverter(rowType)));
        }

        @Override
        public DynamicTableSink copy() {
            return this;
        }

        @Override
        public String asSummaryString() {
            return IDENTIFIER;
        }
    }

    private static final class CollectingSink extends FlinkTestShim.ContextFreeSink<RowData> {
        private static final long serialVersionUID = 1L;

        private final String id;
        private final DynamicTableSink.DataStructureConverter converter;

        CollectingSink(String id, DynamicTableSink.DataStructureConverter converter) {
            this.id = id;
            this.converter = converter;
        }

        @Override
        protected SinkWriter<RowData> openWriter() {
            converter.open(
                    RuntimeConverter.Context.create(CollectingSinkFactory.class.getClassLoader()));
            List<String> rows =
                    RECORDED.computeIfAbsent(id, k -> Collections.synchronizedList(new ArrayList<>()));
            return new SinkWriter<>() {
                @Override
                public void write(RowData element, Context context) {
                    rows.add(converter.toExternal(element).toString());
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
