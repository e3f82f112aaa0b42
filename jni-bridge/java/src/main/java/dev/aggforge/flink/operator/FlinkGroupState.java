package dev.aggforge.flink.operator;

import java.io.IOException;
import java.io.UncheckedIOException;
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
import org.apache.flink.table.data.binary.BinaryRowData;
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
 * <p>Native memory is a write-back cache over it: {@link #writeBack} writes the groups that
 * changed since the last checkpoint (the runtime marks them) before the backend snapshots; once
 * the backend may hold groups the cache does not (after a restore or an eviction), {@link
 * #process} first asks the runtime which groups a batch needs and reads them from the backend
 * (one crossing each way per batch); {@link #evictIfNeeded} empties the cache into the backend
 * when the memory budget is nearly used.
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
    private final ArrowToRowData keyReader;
    private final BufferAllocator allocator;

    private FlinkGroupState(
            NativeOperatorSpec spec,
            KeyedStateStore store,
            KeyedStateBackend<?> backend,
            Consumer<Object> setCurrentKey,
            BufferAllocator allocator) {
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
        this.keyReader = new ArrowToRowData(keyType);
        this.allocator = allocator;
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
            BufferAllocator allocator,
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
        return new FlinkGroupState(spec, store, backend, setCurrentKey, allocator);
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
        long written;
        try (VectorSchemaRoot root = aggregate.stateChanges()) {
            if (root == null) {
                return 0;
            }
            written = write(root);
        }
        aggregate.stateChangesWritten();
        return written;
    }

    /** Writes a change batch's rows (updates, and clears for -D rows) into the backend. */
    private long write(VectorSchemaRoot root) throws IOException {
        changes.bind(root);
        for (int i = 0; i < changes.rowCount(); i++) {
            RowData row = changes.read(i);
            setCurrentKey.accept(keySerializer.toBinaryRow(keyView.replaceRow(row)).copy());
            if (row.getRowKind() == RowKind.DELETE) {
                accState.clear();
            } else {
                accState.update(accSerializer.toBinaryRow(accView.replaceRow(row)).copy());
            }
        }
        return changes.rowCount();
    }

    /**
     * Whether the backend may hold groups the native cache does not (after a restore or an
     * eviction): then every batch first asks the runtime which of its groups to read.
     */
    private boolean backendHoldsMore;

    /**
     * After a restore: the backend holds this subtask's groups (Flink restored them, rescaled or
     * not), which batches read as they need them.
     */
    void restored() {
        try (Stream<?> keys = backend.getKeys(ACC_STATE, VoidNamespace.INSTANCE)) {
            backendHoldsMore |= keys.findAny().isPresent();
        }
    }

    /** Folds {@code batch}, first reading the groups it needs from the backend if need be. */
    VectorSchemaRoot process(ArrowAggregate aggregate, VectorSchemaRoot batch) {
        if (!backendHoldsMore) {
            return aggregate.process(batch);
        }
        load(aggregate, aggregate.probe(batch));
        return aggregate.processPending();
    }

    /** {@link #process} for rows {@code from..to} of a columnar-exchange message. */
    VectorSchemaRoot processMessage(ArrowAggregate aggregate, byte[] message, int from, int to) {
        if (!backendHoldsMore) {
            return aggregate.processMessage(message, from, to);
        }
        load(aggregate, aggregate.probeMessage(message, from, to));
        return aggregate.processPending();
    }

    /**
     * Empties the native cache into the backend when the budget is nearly used (no bundle
     * open), so that the budget bounds the cache, not the state.
     */
    void evictIfNeeded(ArrowAggregate aggregate, int batchRows) {
        if (!aggregate.shouldEvict(batchRows)) {
            return;
        }
        try (VectorSchemaRoot root = aggregate.evictAll()) {
            if (root != null) {
                write(root);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("aggforge: writing evicted groups to the state backend", e);
        }
        backendHoldsMore = true;
        NativeAggregateOperator.EVICTIONS.incrementAndGet();
    }

    /**
     * Reads the groups of {@code keys} (closed here; null: none) from the backend and hands those
     * it holds to the runtime, in one crossing.
     */
    private void load(ArrowAggregate aggregate, VectorSchemaRoot keys) {
        if (keys == null) {
            return;
        }
        try (keys;
                RowDataToArrow rows =
                        new RowDataToArrow(
                                allocator, stateRow, range(0, stateRow.getFieldCount()), false, keys.getRowCount())) {
            keyReader.bind(keys);
            JoinedRowData joined = new JoinedRowData();
            for (int i = 0; i < keyReader.rowCount(); i++) {
                BinaryRowData key = keySerializer.toBinaryRow(keyReader.read(i)).copy();
                setCurrentKey.accept(key);
                RowData acc = accState.value();
                if (acc != null) {
                    rows.append(joined.replace(key, acc));
                }
            }
            if (rows.rowCount() > 0) {
                aggregate.loadState(rows.finish());
                NativeAggregateOperator.FLINK_LAYOUT_LOADED.addAndGet(rows.rowCount());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("aggforge: reading groups from the state backend", e);
        }
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
