package dev.aggforge.flink.operator;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.api.common.state.KeyedStateStore;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.utils.JoinedRowData;
import org.apache.flink.table.data.utils.ProjectedRowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.runtime.util.StateConfigUtil;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

import dev.aggforge.flink.arrow.ArrowToRowData;
import dev.aggforge.flink.arrow.ArrowTypes;
import dev.aggforge.flink.arrow.RowDataToArrow;
import dev.aggforge.flink.nativelib.ArrowAggregate;

/**
 * A native GROUP BY aggregate's state in the job's keyed state backend, in exactly the layout of
 * the Flink operator it stands for: the {@value #ACC_STATE} {@code ValueState<RowData>} of Flink's
 * accumulator row ({@code InternalTypeInfo.ofFields(accTypes)}), keyed by the group key's {@code
 * BinaryRowData}, with Flink's state TTL. So a savepoint moves between stock Flink and aggforge
 * both ways, and Flink's restore, rescale and incremental checkpoints apply unchanged.
 *
 * <p>The native groups are a write-back copy: {@link #writeBack} writes the groups that changed
 * since the last checkpoint (the runtime marks them) before the backend snapshots, and {@link
 * #loadAll} reads this subtask's groups from the backend at a restore, in batches of one crossing
 * each.
 */
final class FlinkGroupState {

    /** Flink's name of a group aggregate's accumulator state. */
    static final String ACC_STATE = "accState";

    private static final Pattern STATE_TTL = Pattern.compile("\"state_ttl_ms\":(\\d+)");

    private final ValueState<RowData> accState;
    private final KeyedStateBackend<?> backend;
    private final Consumer<Object> setCurrentKey;
    private final RowType stateRow;
    private final RowDataSerializer keySerializer;
    private final RowDataSerializer accSerializer;
    private final ProjectedRowData keyView;
    private final ProjectedRowData accView;
    private final ArrowToRowData changes;

    private FlinkGroupState(
            NativeOperatorSpec spec,
            KeyedStateStore store,
            KeyedStateBackend<?> backend,
            Consumer<Object> setCurrentKey) {
        RowType keyType = spec.keyType();
        RowType accType = spec.accType();
        ValueStateDescriptor<RowData> descriptor =
                new ValueStateDescriptor<>(
                        ACC_STATE, InternalTypeInfo.ofFields(accType.getChildren().toArray(new LogicalType[0])));
        long ttl = stateTtlMs(spec.planJson());
        StateTtlConfig ttlConfig = StateConfigUtil.createTtlConfig(ttl);
        if (ttlConfig.isEnabled()) {
            descriptor.enableTimeToLive(ttlConfig);
        }
        this.accState = store.getState(descriptor);
        this.backend = backend;
        this.setCurrentKey = setCurrentKey;
        List<LogicalType> fields = new ArrayList<>(keyType.getChildren());
        fields.addAll(accType.getChildren());
        List<String> names = new ArrayList<>(keyType.getFieldNames());
        names.addAll(accType.getFieldNames());
        this.stateRow = RowType.of(fields.toArray(new LogicalType[0]), names.toArray(new String[0]));
        this.keySerializer = new RowDataSerializer(keyType);
        this.accSerializer = new RowDataSerializer(accType);
        int keys = keyType.getFieldCount();
        this.keyView = ProjectedRowData.from(range(0, keys));
        this.accView = ProjectedRowData.from(range(keys, fields.size()));
        this.changes = new ArrowToRowData(stateRow);
    }

    /**
     * Binds {@code aggregate}'s state to Flink's layout and registers the state, when the spec
     * names Flink's accumulator row and the runtime's accumulators hold exactly its fields; else
     * null, with {@code refused} told why the state stays in aggforge's snapshot format.
     */
    static FlinkGroupState bind(
            NativeOperatorSpec spec,
            ArrowAggregate aggregate,
            KeyedStateStore store,
            KeyedStateBackend<?> backend,
            Consumer<Object> setCurrentKey,
            Consumer<String> refused) {
        if (spec.accType() == null || !spec.mode().keyed() || spec.mode().windowed()) {
            refused.accept("the plan names no Flink accumulator row");
            return null;
        }
        StringBuilder json = new StringBuilder("[");
        for (LogicalType type : spec.accType().getChildren()) {
            if (ArrowTypes.layoutOf(type).isEmpty()) {
                refused.accept("Flink's accumulator field " + type.asSummaryString() + " has no Arrow layout");
                return null;
            }
            json.append(json.length() > 1 ? "," : "").append(quote(ArrowTypes.sqlText(type)));
        }
        String reason = aggregate.bindFlinkState(json.append(']').toString());
        if (reason != null) {
            refused.accept(reason);
            return null;
        }
        return new FlinkGroupState(spec, store, backend, setCurrentKey);
    }

    /** The state TTL in the plan ({@code state_ttl_ms}; 0: none). */
    static long stateTtlMs(String planJson) {
        Matcher matcher = STATE_TTL.matcher(planJson);
        return matcher.find() ? Long.parseLong(matcher.group(1)) : 0;
    }

    /**
     * Writes every group whose state changed since the last write-back into the backend (an
     * update, or a clear where the group's state is gone); returns the groups written.
     */
    long writeBack(ArrowAggregate aggregate) throws Exception {
        long written = 0;
        try (VectorSchemaRoot root = aggregate.stateChanges()) {
            if (root == null) {
                return 0;
            }
            changes.bind(root);
            for (int i = 0; i < changes.rowCount(); i++) {
                RowData row = changes.read(i);
                setCurrentKey.accept(keySerializer.toBinaryRow(keyView.replaceRow(row)).copy());
                if (row.getRowKind() == RowKind.DELETE) {
                    accState.clear();
                } else {
                    accState.update(accSerializer.toBinaryRow(accView.replaceRow(row)).copy());
                }
                written++;
            }
        }
        aggregate.stateChangesWritten();
        return written;
    }

    /**
     * Loads every group the backend holds for this subtask's key groups into {@code aggregate},
     * {@code batchRows} groups per crossing; returns the groups loaded. Expired state (TTL) reads
     * as absent and is skipped.
     */
    long loadAll(ArrowAggregate aggregate, BufferAllocator allocator, int batchRows)
            throws Exception {
        List<RowData> keys = new ArrayList<>();
        try (Stream<?> stream = backend.getKeys(ACC_STATE, VoidNamespace.INSTANCE)) {
            stream.forEach(key -> keys.add(keySerializer.copy((RowData) key)));
        }
        if (keys.isEmpty()) {
            return 0;
        }
        int[] all = range(0, stateRow.getFieldCount());
        long loaded = 0;
        JoinedRowData joined = new JoinedRowData();
        try (RowDataToArrow rows = new RowDataToArrow(allocator, stateRow, all, false, batchRows)) {
            for (RowData key : keys) {
                setCurrentKey.accept(key);
                RowData acc = accState.value();
                if (acc == null) {
                    continue;
                }
                rows.append(joined.replace(key, acc));
                loaded++;
                if (rows.rowCount() >= batchRows) {
                    aggregate.loadState(rows.finish());
                    rows.reset();
                }
            }
            if (rows.rowCount() > 0) {
                aggregate.loadState(rows.finish());
            }
        }
        return loaded;
    }

    private static int[] range(int from, int to) {
        int[] out = new int[to - from];
        for (int i = 0; i < out.length; i++) {
            out[i] = from + i;
        }
        return out;
    }

    private static String quote(String text) {
        return '"' + text.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }
}
