package dev.aggforge.flink.operator;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RawValueData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.dataview.NullSerializer;
import org.apache.flink.table.runtime.typeutils.ExternalSerializer;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RawType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.utils.DataTypeUtils;


/**
 * Flink's accumulator row of a group aggregate ({@code accState}'s value) against the runtime's
 * accumulator columns: the same fields, but where Flink keeps FIRST_VALUE's and LAST_VALUE's
 * accumulator as a nested {@code ROW(value, order)} (FirstValueAggFunction,
 * LastValueAggFunction), of which the runtime keeps the value, and where Flink keeps a DISTINCT
 * view (a DistinctInfo's MapView, given by the planner side as a {@code MAP} field named by its
 * state, see FlinkAccumulators): in Flink's row a placeholder ({@code RAW} of a NullSerializer,
 * the map itself in a map state of that name), in the runtime's columns the whole map (the
 * heap {@code RAW(MapView)} of two-phase partials, an Arrow list of entries).
 *
 * <p>The order only says whether a value is held: FIRST_VALUE's is {@code Long.MAX_VALUE} until
 * its first value, then that value's arrival time (written here as the write-back's time);
 * LAST_VALUE's stays {@code Long.MIN_VALUE} (its one-argument accumulate never sets it). A value
 * is held exactly when it is not NULL, which is how the runtime reads it back.
 */
final class AccumulatorFields {

    /** What a field of Flink's accumulator row is to the runtime. */
    private enum Kind {
        /** The same value. */
        PLAIN,
        /** FIRST_VALUE's {@code ROW(firstValue, firstOrder)}: the runtime keeps the value. */
        FIRST,
        /** LAST_VALUE's {@code ROW(lastValue, lastOrder)}: the runtime keeps the value. */
        LAST,
        /** A DISTINCT view: a placeholder in Flink's row, the map in the runtime's. */
        VIEW
    }

    /**
     * A DISTINCT view: field {@code field} of the rows, Flink's map state {@code stateId} with
     * the MapView type {@code dataType} (DataViewUtils.createDistinctViewDataType's), and the
     * serializer of the runtime's heap MapView.
     */
    record View(int field, String stateId, DataType dataType, TypeSerializer<MapView<Object, Object>> heapSerializer) {}

    /** Flink's placeholder value of a state-backed view (its NullSerializer writes no bytes). */
    private static final RawValueData<Object> PLACEHOLDER = RawValueData.fromBytes(new byte[0]);

    /** The prefix of Flink's DISTINCT view states' names (DataViewUtils.createDistinctViewSpec). */
    static final String DISTINCT_STATE = "distinctAcc_";

    private final RowType nativeType;
    private final RowType stateType;
    private final List<View> views = new ArrayList<>();
    private final Kind[] kinds;
    private final RowData.FieldGetter[] nativeGetters;
    private final RowData.FieldGetter[] valueGetters;
    private final boolean adapted;

    private AccumulatorFields(RowType flinkType) {
        int n = flinkType.getFieldCount();
        this.kinds = new Kind[n];
        this.nativeGetters = new RowData.FieldGetter[n];
        this.valueGetters = new RowData.FieldGetter[n];
        List<RowType.RowField> fields = new ArrayList<>(n);
        List<RowType.RowField> stateFields = new ArrayList<>(n);
        boolean any = false;
        for (int i = 0; i < n; i++) {
            LogicalType type = flinkType.getTypeAt(i);
            String name = flinkType.getFieldNames().get(i);
            kinds[i] = kindOf(type, name);
            LogicalType runtimeType = type;
            LogicalType stateFieldType = type;
            if (kinds[i] == Kind.FIRST || kinds[i] == Kind.LAST) {
                runtimeType = ((RowType) type).getTypeAt(0);
            } else if (kinds[i] == Kind.VIEW) {
                DataType view = viewDataType((MapType) type);
                runtimeType = rawView(view, ExternalSerializer.of(view));
                stateFieldType = rawView(view, NullSerializer.INSTANCE);
                views.add(new View(i, name, view, heapSerializer(runtimeType)));
            }
            any |= kinds[i] != Kind.PLAIN;
            fields.add(new RowType.RowField(name, runtimeType));
            stateFields.add(new RowType.RowField(name, stateFieldType));
            nativeGetters[i] = RowData.createFieldGetter(runtimeType, i);
            valueGetters[i] = RowData.createFieldGetter(runtimeType, 0);
        }
        this.nativeType = new RowType(flinkType.isNullable(), fields);
        this.stateType = new RowType(flinkType.isNullable(), stateFields);
        this.adapted = any;
    }

    /** The fields of Flink's accumulator row {@code flinkType}. */
    static AccumulatorFields of(RowType flinkType) {
        return new AccumulatorFields(flinkType);
    }

    /** The runtime's accumulator columns, as a row type. */
    RowType nativeType() {
        return nativeType;
    }

    /** Flink's {@code accState} row type (DISTINCT views as Flink's placeholders). */
    RowType stateType() {
        return stateType;
    }

    /** The DISTINCT views, in field order (Flink's {@code distinctAcc_<i>} order). */
    List<View> views() {
        return views;
    }

    /** Whether field {@code field} is a DISTINCT view. */
    boolean isView(int field) {
        return kinds[field] == Kind.VIEW;
    }

    /** Flink's accumulator row of the runtime's {@code acc} (read before {@code acc} changes). */
    RowData toFlink(RowData acc) {
        if (!adapted) {
            return acc;
        }
        GenericRowData out = new GenericRowData(kinds.length);
        long now = System.currentTimeMillis();
        for (int i = 0; i < kinds.length; i++) {
            Object value = nativeGetters[i].getFieldOrNull(acc);
            out.setField(
                    i,
                    switch (kinds[i]) {
                        case PLAIN -> value;
                        case FIRST -> GenericRowData.of(value, value == null ? Long.MAX_VALUE : now);
                        case LAST -> GenericRowData.of(value, Long.MIN_VALUE);
                        case VIEW -> PLACEHOLDER;
                    });
        }
        return out;
    }

    /** The runtime's accumulator row of Flink's {@code acc}, the views' fields left NULL. */
    RowData toNative(RowData acc) {
        if (!adapted) {
            return acc;
        }
        GenericRowData out = new GenericRowData(kinds.length);
        for (int i = 0; i < kinds.length; i++) {
            if (kinds[i] == Kind.PLAIN) {
                out.setField(i, nativeGetters[i].getFieldOrNull(acc));
            } else if (kinds[i] != Kind.VIEW && !acc.isNullAt(i)) {
                out.setField(i, valueGetters[i].getFieldOrNull(acc.getRow(i, 2)));
            }
        }
        return out;
    }

    /**
     * Flink's MapView type of a DISTINCT view (DataViewUtils.createDistinctViewDataType): the
     * values' internal type to a BIGINT (bits, or a count) or a BIGINT array.
     */
    private static DataType viewDataType(MapType map) {
        DataType key = DataTypeUtils.toInternalDataType(map.getKeyType());
        DataType value =
                map.getValueType() instanceof BigIntType
                        ? DataTypes.BIGINT().notNull()
                        : DataTypes.ARRAY(DataTypes.BIGINT().notNull()).bridgedTo(long[].class);
        return MapView.newMapViewDataType(key, value);
    }

    /**
     * A data view's accumulator field type as Flink's DataViewUtils.adjustDataViews makes it: a
     * {@code RAW} of the view class with {@code serializer} (the view's {@link
     * ExternalSerializer}, or the NullSerializer of a view kept in state). Written out: the
     * planner's copy of DataViewUtils on Flink 1.20 is not on a TaskManager's class path.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static LogicalType rawView(DataType view, TypeSerializer<?> serializer) {
        return DataTypes.RAW((Class) view.getConversionClass(), (TypeSerializer) serializer).getLogicalType();
    }

    @SuppressWarnings("unchecked")
    private static TypeSerializer<MapView<Object, Object>> heapSerializer(LogicalType raw) {
        return (TypeSerializer<MapView<Object, Object>>) ((RawType<?>) raw).getTypeSerializer();
    }

    /**
     * FIRST or LAST for Flink's FIRST_VALUE or LAST_VALUE accumulator type, VIEW for a DISTINCT
     * view's MAP field, else PLAIN.
     */
    private static Kind kindOf(LogicalType type, String name) {
        if (type instanceof MapType && name.startsWith(DISTINCT_STATE)) {
            return Kind.VIEW;
        }
        if (!(type instanceof RowType row)
                || row.getFieldCount() != 2
                || !(row.getTypeAt(1) instanceof BigIntType)) {
            return Kind.PLAIN;
        }
        List<String> names = row.getFieldNames();
        if (names.equals(List.of("firstValue", "firstOrder"))) {
            return Kind.FIRST;
        }
        if (names.equals(List.of("lastValue", "lastOrder"))) {
            return Kind.LAST;
        }
        return Kind.PLAIN;
    }
}
