package dev.aggforge.flink.operator;

import java.io.IOException;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.api.common.state.KeyedStateStore;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.ttl.TtlValue;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RawValueData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.utils.JoinedRowData;
import org.apache.flink.table.data.utils.ProjectedRowData;
import org.apache.flink.table.runtime.dataview.MapViewSpec;
import org.apache.flink.table.runtime.dataview.StateMapView;
import org.apache.flink.table.runtime.typeutils.ExternalSerializer;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.runtime.util.StateConfigUtil;
import org.apache.flink.table.types.logical.BigIntType;
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

    /** The runtime's marker of a DISTINCT view among the accumulator types it binds. */
    private static final String DISTINCT_VIEW = "DISTINCT_VIEW";

    /** The runtime's marker of a structured accumulator with data views kept in state. */
    private static final String STATE_VIEWS = "STATE_VIEWS";

    /** Flink's name of a group aggregate's accumulator state. */
    static final String ACC_STATE = "accState";

    /** Flink's decorator of TTL state, whose {@code original} holds the {@code TtlValue}s. */
    private static final String TTL_DECORATOR = "org.apache.flink.runtime.state.ttl.AbstractTtlDecorator";

    private static final Pattern STATE_TTL = Pattern.compile("\"state_ttl_ms\":(\\d+)");

    private final ValueState<RowData> accState;
    private final KeyedStateBackend<?> backend;
    private final Consumer<Object> setCurrentKey;
    private final RowType stateRow;
    private final RowDataSerializer keySerializer;
    private final RowDataSerializer accSerializer;
    private final ProjectedRowData keyView;
    private final ProjectedRowData accView;
    /** Flink's accumulator fields against the runtime's columns. */
    private final AccumulatorFields accFields;
    /** The DISTINCT views' map states ({@code distinctAcc_<i>}), as {@link AccumulatorFields#views}. */
    private final List<StateMapView<VoidNamespace, Object, Object>> viewStates;
    /** The structured accumulators' data views ({@code agg<i>$<attribute>}). */
    private final StructViewStates structViewStates;
    private final ArrowToRowData changes;
    private final ArrowToRowData keyReader;
    private final BufferAllocator allocator;
    /** The state TTL in ms, 0: none. */
    private final long ttlMs;
    /**
     * With a state TTL, the values under Flink's TTL wrapper, each with its write time (Flink's
     * {@code TtlValue}): read and written so that write times travel with the state as in Flink.
     */
    private final ValueState<TtlValue<RowData>> timedState;
    /** With a state TTL, the change batch's write-time field. */
    private final int writtenField;

    private FlinkGroupState(
            NativeOperatorSpec spec,
            KeyedStateStore store,
            KeyedStateBackend<?> backend,
            Consumer<Object> setCurrentKey,
            BufferAllocator allocator) {
        RowType keyType = spec.keyType();
        this.accFields = AccumulatorFields.of(spec.accType(), spec.viewTypes());
        RowType accType = accFields.stateType();
        ValueStateDescriptor<RowData> descriptor =
                new ValueStateDescriptor<>(
                        ACC_STATE, InternalTypeInfo.ofFields(accType.getChildren().toArray(new LogicalType[0])));
        this.ttlMs = stateTtlMs(spec.planJson());
        StateTtlConfig ttlConfig = StateConfigUtil.createTtlConfig(ttlMs);
        if (ttlConfig.isEnabled()) {
            descriptor.enableTimeToLive(ttlConfig);
        }
        this.accState = store.getState(descriptor);
        this.viewStates = viewStates(accFields, store, ttlConfig);
        this.structViewStates = new StructViewStates(accFields, store, ttlConfig);
        this.timedState = ttlConfig.isEnabled() ? timedValues(accState) : null;
        this.backend = backend;
        this.setCurrentKey = setCurrentKey;
        List<LogicalType> fields = new ArrayList<>(keyType.getChildren());
        fields.addAll(accFields.nativeType().getChildren());
        List<String> names = new ArrayList<>(keyType.getFieldNames());
        names.addAll(accFields.nativeType().getFieldNames());
        int keys = keyType.getFieldCount();
        this.keyView = ProjectedRowData.from(range(0, keys));
        this.accView = ProjectedRowData.from(range(keys, fields.size()));
        this.writtenField = fields.size();
        if (timedState != null) {
            // The runtime's WRITTEN_COLUMN.
            fields.add(new BigIntType(false));
            names.add("$written");
        }
        this.stateRow = RowType.of(fields.toArray(new LogicalType[0]), names.toArray(new String[0]));
        this.keySerializer = new RowDataSerializer(keyType);
        this.accSerializer = new RowDataSerializer(accType);
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
        AccumulatorFields fields = AccumulatorFields.of(spec.accType(), spec.viewTypes());
        if (fields.unsupported() != null) {
            refused.accept(fields.unsupported());
            return null;
        }
        for (int i = 0; i < fields.nativeType().getFieldCount(); i++) {
            LogicalType type = fields.nativeType().getTypeAt(i);
            if (fields.isView(i) || fields.isStruct(i)) {
                json.append(json.length() > 1 ? "," : "")
                        .append(quote(fields.isView(i) ? DISTINCT_VIEW : STATE_VIEWS));
                continue;
            }
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

    /**
     * The map state of each of {@code fields}' DISTINCT views, with the descriptors Flink's
     * operator opens it with (its generated code asks PerKeyStateDataViewStore, which needs the
     * runtime context's keyed store, not set yet while state is initialized).
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static List<StateMapView<VoidNamespace, Object, Object>> viewStates(
            AccumulatorFields fields, KeyedStateStore store, StateTtlConfig ttlConfig) {
        List<StateMapView<VoidNamespace, Object, Object>> states = new ArrayList<>();
        for (AccumulatorFields.View view : fields.views()) {
            // DataViewUtils.DistinctViewSpec's map spec (a class of the planner on Flink 1.20).
            MapViewSpec spec = new MapViewSpec(view.stateId(), -1, view.dataType().getChildren().get(0), true);
            TypeSerializer keys = spec.getKeySerializer().orElseGet(() -> ExternalSerializer.of(spec.getKeyDataType()));
            TypeSerializer values =
                    spec.getValueSerializer().orElseGet(() -> ExternalSerializer.of(spec.getValueDataType()));
            MapStateDescriptor<Object, Object> map = new MapStateDescriptor<>(spec.getStateId(), keys, values);
            // PerKeyStateDataViewStore's name of the NULL key's state (DistinctViewSpec handles NULL keys).
            ValueStateDescriptor<Object> nullKey =
                    new ValueStateDescriptor<>(spec.getStateId() + "_null_state", values);
            if (ttlConfig.isEnabled()) {
                map.enableTimeToLive(ttlConfig);
                nullKey.enableTimeToLive(ttlConfig);
            }
            states.add(
                    new StateMapView.KeyedStateMapViewWithKeysNullable<>(
                            store.getMapState(map), store.getState(nullKey)));
        }
        return states;
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
            written = write(root, true);
        }
        aggregate.stateChangesWritten();
        return written;
    }

    /**
     * Writes a change batch's rows (updates, and clears for -D rows) into the backend; {@code
     * checkpoint}: a checkpoint's write-back (where tests inject failures).
     */
    private long write(VectorSchemaRoot root, boolean checkpoint) throws Exception {
        changes.bind(root);
        int failAt = checkpoint && changes.rowCount() >= 2 && injectFailure() ? changes.rowCount() / 2 : -1;
        for (int i = 0; i < changes.rowCount(); i++) {
            if (i == failAt) {
                throw new IOException("injected write-back failure after " + i + " groups");
            }
            RowData row = changes.read(i);
            setCurrentKey.accept(keySerializer.toBinaryRow(keyView.replaceRow(row)).copy());
            if (row.getRowKind() == RowKind.DELETE) {
                accState.clear();
                for (StateMapView<VoidNamespace, Object, Object> view : viewStates) {
                    view.clear();
                }
                structViewStates.clear();
            } else {
                writeViews(row);
                structViewStates.write(row, keyView.getArity());
                RowData acc = accSerializer.toBinaryRow(accFields.toFlink(accView.replaceRow(row))).copy();
                if (timedState != null) {
                    timedState.update(new TtlValue<>(acc, row.getLong(writtenField)));
                } else {
                    accState.update(acc);
                }
            }
        }
        return changes.rowCount();
    }

    /**
     * Writes the DISTINCT views of change row {@code row} into their map states. A change row's
     * view holds the entries that changed since the last write-back (the runtime logs them), an
     * entry whose value is all 0 one that left the view: each is put or removed, so a write-back
     * costs what changed and incremental checkpoints upload it. Flink's entry for a NULL value,
     * which the runtime does not hold, is left as it is.
     */
    private void writeViews(RowData row) throws Exception {
        int keys = keyView.getArity();
        for (int v = 0; v < viewStates.size(); v++) {
            AccumulatorFields.View view = accFields.views().get(v);
            RawValueData<MapView<Object, Object>> raw = row.getRawValue(keys + view.field());
            if (raw == null) {
                continue;
            }
            StateMapView<VoidNamespace, Object, Object> state = viewStates.get(v);
            for (Map.Entry<Object, Object> entry : raw.toObject(view.heapSerializer()).getMap().entrySet()) {
                if (isZero(entry.getValue())) {
                    state.remove(entry.getKey());
                } else {
                    state.put(entry.getKey(), entry.getValue());
                }
            }
        }
    }

    /** Whether a view entry's value (a Long, or a long[] of words) is all 0: no call holds it. */
    private static boolean isZero(Object value) {
        if (value instanceof Long word) {
            return word == 0;
        }
        for (long word : (long[]) value) {
            if (word != 0) {
                return false;
            }
        }
        return true;
    }

    /** The runtime's accumulator row of Flink's {@code acc} for the current key, views read. */
    private RowData toNative(RowData acc) throws Exception {
        RowData out = accFields.toNative(acc);
        if (viewStates.isEmpty() && structViewStates.isEmpty()) {
            return out;
        }
        GenericRowData row = (GenericRowData) out;
        structViewStates.read(row);
        for (int v = 0; v < viewStates.size(); v++) {
            MapView<Object, Object> map = new MapView<>();
            for (Map.Entry<Object, Object> entry : viewStates.get(v).entries()) {
                // The runtime's views hold no NULL value (Flink's NULL entry changes no result).
                if (entry.getKey() != null) {
                    map.put(entry.getKey(), entry.getValue());
                }
            }
            row.setField(accFields.views().get(v).field(), RawValueData.fromObject(map));
        }
        return row;
    }

    /**
     * Whether the backend may hold groups the native cache does not (after a restore or an
     * eviction): then every batch first asks the runtime which of its groups to read (those it
     * cannot have written are not asked for unless groups were restored).
     */
    private boolean backendHoldsMore;

    /**
     * After a restore: the backend holds this subtask's groups (Flink restored them, rescaled or
     * not), which batches read as they need them.
     */
    void restored(ArrowAggregate aggregate) {
        try (Stream<?> keys = backend.getKeys(ACC_STATE, VoidNamespace.INSTANCE)) {
            if (keys.findAny().isPresent()) {
                backendHoldsMore = true;
                aggregate.backendRestored();
            }
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
                write(root, false);
            }
        } catch (Exception e) {
            throw new IllegalStateException("aggforge: writing evicted groups to the state backend", e);
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
            long now = System.currentTimeMillis();
            for (int i = 0; i < keyReader.rowCount(); i++) {
                BinaryRowData key = keySerializer.toBinaryRow(keyReader.read(i)).copy();
                setCurrentKey.accept(key);
                RowData acc = timedState != null ? unexpired(timedState.value(), now) : accState.value();
                if (acc != null) {
                    rows.append(joined.replace(key, timedState != null ? acc : toNative(acc)));
                }
            }
            if (rows.rowCount() > 0) {
                aggregate.loadState(rows.finish());
                NativeAggregateOperator.FLINK_LAYOUT_LOADED.addAndGet(rows.rowCount());
            }
        } catch (Exception e) {
            throw new IllegalStateException("aggforge: reading groups from the state backend", e);
        }
    }

    /**
     * A TTL value's state with its write time appended (the change batch's {@code $written}), or
     * null when absent or expired at {@code now} (Flink's NeverReturnExpired, by the same
     * processing-time clock Flink's TTL reads).
     */
    private RowData unexpired(TtlValue<RowData> value, long now) {
        if (value == null || value.getUserValue() == null) {
            return null;
        }
        long written = value.getLastAccessTimestamp();
        long expiresAt = written > Long.MAX_VALUE - ttlMs ? Long.MAX_VALUE : written + ttlMs;
        if (expiresAt <= now) {
            return null;
        }
        return new JoinedRowData(accFields.toNative(value.getUserValue()), GenericRowData.of(written));
    }

    /**
     * The state under Flink's TTL decorator of {@code state} (past any metrics-tracking wrapper):
     * Flink offers no API to read or write a TTL value's time, which Flink's layout holds.
     */
    @SuppressWarnings("unchecked")
    private static ValueState<TtlValue<RowData>> timedValues(ValueState<RowData> state) {
        Object current = state;
        for (int depth = 0; depth < 8 && current != null; depth++) {
            Field original = originalField(current.getClass());
            if (original == null) {
                break;
            }
            try {
                original.setAccessible(true);
                Object inner = original.get(current);
                // By name: the class is package-private on Flink 1.20.
                if (original.getDeclaringClass().getName().equals(TTL_DECORATOR)) {
                    return (ValueState<TtlValue<RowData>>) inner;
                }
                current = inner;
            } catch (ReflectiveOperationException | RuntimeException e) {
                throw new IllegalStateException(
                        "aggforge: cannot reach the values under Flink's TTL state " + state.getClass(), e);
            }
        }
        throw new IllegalStateException(
                "aggforge: Flink's TTL state " + state.getClass() + " has no TTL decorator to read");
    }

    private static Field originalField(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            try {
                return c.getDeclaredField("original");
            } catch (NoSuchFieldException e) {
                // Look further up.
            }
        }
        return null;
    }

    /** Whether this write-back is the one {@link NativeAggregateOperator#FAIL_WRITE_BACK} names. */
    private static boolean injectFailure() {
        return NativeAggregateOperator.FAIL_WRITE_BACK.get() > 0
                && NativeAggregateOperator.FAIL_WRITE_BACK.decrementAndGet() == 0
                && NativeAggregateOperator.FAIL_WRITE_BACK.compareAndSet(0, -1);
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
