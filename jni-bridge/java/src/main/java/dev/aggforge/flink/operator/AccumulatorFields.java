package dev.aggforge.flink.operator;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.dataview.DataView;
import org.apache.flink.table.api.dataview.ListView;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RawValueData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.dataview.NullSerializer;
import org.apache.flink.table.runtime.typeutils.ExternalSerializer;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RawType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.StructuredType;
import org.apache.flink.table.types.utils.DataTypeUtils;


/**
 * Flink's accumulator row of a group aggregate ({@code accState}'s value) against the runtime's
 * accumulator columns: the same fields, but where Flink keeps FIRST_VALUE's and LAST_VALUE's
 * accumulator as a nested {@code ROW(value, order)} (FirstValueAggFunction,
 * LastValueAggFunction), of which the runtime keeps the value, and where Flink keeps a DISTINCT
 * view (a DistinctInfo's MapView, given by the planner side as a {@code MAP} field named by its
 * state, see FlinkAccumulators): in Flink's row a placeholder ({@code RAW} of a NullSerializer,
 * the map itself in a map state of that name), in the runtime's columns the whole map (the
 * heap {@code RAW(MapView)} of two-phase partials, an Arrow list of entries). A structured
 * accumulator with data views (MinWithRetractAccumulator's {@code map}) is Flink's {@code
 * STRUCTURED} type as it is in Flink's row, each view a placeholder there and its entries in a map
 * state {@code agg<i>$<attribute>} ({@link StructView}); in the runtime's columns the same
 * structure with each view as the heap {@code RAW(MapView)} of two-phase partials.
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
        VIEW,
        /** A structured accumulator with data views: placeholders in Flink's row. */
        STRUCT
    }

    /**
     * A data view of a structured accumulator: attribute {@code attribute} of field {@code field},
     * Flink's map or list state {@code stateId} (DataViewUtils' {@code agg<i>$<attribute>}) with
     * the MapView or ListView type {@code dataType}, and the serializer of the runtime's heap
     * view (a {@code MapView} or, when {@code list}, a {@code ListView}).
     */
    record StructView(
            int field,
            int attribute,
            String stateId,
            DataType dataType,
            boolean list,
            TypeSerializer<?> heapSerializer) {}

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
    private final List<StructView> structViews = new ArrayList<>();
    /** Why Flink's row cannot be kept (a data view not written yet), or null. */
    private String unsupported;
    private final Kind[] kinds;
    private final RowData.FieldGetter[] nativeGetters;
    private final RowData.FieldGetter[] valueGetters;
    /** By field: a structured accumulator's attribute getters (else null). */
    private final RowData.FieldGetter[][] attributeGetters;
    private final boolean adapted;

    private AccumulatorFields(RowType flinkType, RowType viewTypes) {
        int n = flinkType.getFieldCount();
        int nextView = 0;
        this.kinds = new Kind[n];
        this.nativeGetters = new RowData.FieldGetter[n];
        this.valueGetters = new RowData.FieldGetter[n];
        this.attributeGetters = new RowData.FieldGetter[n][];
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
            } else if (kinds[i] == Kind.STRUCT) {
                StructuredType struct = (StructuredType) type;
                List<StructuredType.StructuredAttribute> attributes = new ArrayList<>();
                for (int a = 0; a < struct.getAttributes().size(); a++) {
                    StructuredType.StructuredAttribute attribute = struct.getAttributes().get(a);
                    if (!isStateView(attribute.getType())) {
                        attributes.add(attribute);
                        continue;
                    }
                    if (viewTypes == null || nextView >= viewTypes.getFieldCount()) {
                        unsupported = "the plan names no data view for " + struct.asSummaryString();
                        attributes.add(attribute);
                        continue;
                    }
                    String stateId = viewTypes.getFieldNames().get(nextView);
                    LogicalType viewType = viewTypes.getTypeAt(nextView++);
                    boolean list = viewType instanceof ArrayType;
                    DataType view =
                            list
                                    ? ListView.newListViewDataType(DataTypeUtils.toInternalDataType(
                                            ((ArrayType) viewType).getElementType()))
                                    : MapView.newMapViewDataType(
                                            DataTypeUtils.toInternalDataType(((MapType) viewType).getKeyType()),
                                            DataTypeUtils.toInternalDataType(((MapType) viewType).getValueType()));
                    LogicalType heap = rawView(view, ExternalSerializer.of(view));
                    structViews.add(
                            new StructView(i, a, stateId, view, list, ((RawType<?>) heap).getTypeSerializer()));
                    attributes.add(new StructuredType.StructuredAttribute(attribute.getName(), heap));
                }
                runtimeType =
                        StructuredType.newBuilder(struct.getImplementationClass().orElseThrow())
                                .attributes(attributes)
                                .setNullable(struct.isNullable())
                                .setFinal(struct.isFinal())
                                .setInstantiable(struct.isInstantiable())
                                .build();
                attributeGetters[i] = getters(struct);
            }
            any |= kinds[i] != Kind.PLAIN;
            fields.add(new RowType.RowField(name, runtimeType));
            stateFields.add(new RowType.RowField(name, stateFieldType));
            nativeGetters[i] = RowData.createFieldGetter(runtimeType, i);
            valueGetters[i] = RowData.createFieldGetter(runtimeType, 0);
        }
        if (viewTypes != null && nextView != viewTypes.getFieldCount() && unsupported == null) {
            unsupported = "the plan names " + viewTypes.getFieldCount() + " data views, the accumulators hold " + nextView;
        }
        this.nativeType = new RowType(flinkType.isNullable(), fields);
        this.stateType = new RowType(flinkType.isNullable(), stateFields);
        this.adapted = any;
    }

    /**
     * The fields of Flink's accumulator row {@code flinkType}, whose structured accumulators' data
     * views are those of {@code viewTypes} (null: none), in order (see FlinkAccumulators).
     */
    static AccumulatorFields of(RowType flinkType, RowType viewTypes) {
        return new AccumulatorFields(flinkType, viewTypes);
    }

    /** Why Flink's row cannot be kept in its layout yet, or null. */
    String unsupported() {
        return unsupported;
    }

    /** The data views of the structured accumulators, in field and attribute order. */
    List<StructView> structViews() {
        return structViews;
    }

    /** Whether field {@code field} is a structured accumulator with data views. */
    boolean isStruct(int field) {
        return kinds[field] == Kind.STRUCT;
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
                        case STRUCT -> value == null ? null : struct(i, (RowData) value, true);
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
            } else if (kinds[i] == Kind.STRUCT) {
                out.setField(i, acc.isNullAt(i) ? null : struct(i, acc.getRow(i, attributeGetters[i].length), false));
            } else if (kinds[i] != Kind.VIEW && !acc.isNullAt(i)) {
                out.setField(i, valueGetters[i].getFieldOrNull(acc.getRow(i, 2)));
            }
        }
        return out;
    }

    /**
     * Structured accumulator {@code field} of {@code row} as a generic row, its data views as
     * Flink's placeholders ({@code toFlink}) or left NULL for the caller to fill.
     */
    private GenericRowData struct(int field, RowData row, boolean toFlink) {
        RowData.FieldGetter[] getters = attributeGetters[field];
        GenericRowData out = new GenericRowData(getters.length);
        for (int a = 0; a < getters.length; a++) {
            out.setField(a, getters[a].getFieldOrNull(row));
        }
        for (StructView view : structViews) {
            if (view.field() == field) {
                out.setField(view.attribute(), toFlink ? PLACEHOLDER : null);
            }
        }
        return out;
    }

    private static RowData.FieldGetter[] getters(StructuredType struct) {
        List<StructuredType.StructuredAttribute> attributes = struct.getAttributes();
        RowData.FieldGetter[] getters = new RowData.FieldGetter[attributes.size()];
        for (int a = 0; a < getters.length; a++) {
            getters[a] = RowData.createFieldGetter(attributes.get(a).getType(), a);
        }
        return getters;
    }

    /** Whether {@code type} is a data view kept in state (a RAW view with Flink's NullSerializer). */
    private static boolean isStateView(LogicalType type) {
        if (!(type instanceof RawType<?> raw) || !(raw.getTypeSerializer() instanceof NullSerializer)) {
            return false;
        }
        return DataView.class.isAssignableFrom(raw.getOriginatingClass());
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
     * view's MAP field, STRUCT for a structured accumulator with data views kept in state, else
     * PLAIN.
     */
    private static Kind kindOf(LogicalType type, String name) {
        if (type instanceof MapType && name.startsWith(DISTINCT_STATE)) {
            return Kind.VIEW;
        }
        if (type instanceof StructuredType struct
                && struct.getImplementationClass().isPresent()
                && struct.getAttributes().stream().anyMatch(a -> isStateView(a.getType()))) {
            return Kind.STRUCT;
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
