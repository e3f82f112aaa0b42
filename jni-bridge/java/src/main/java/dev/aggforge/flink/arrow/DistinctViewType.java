package dev.aggforge.flink.arrow;

import java.lang.reflect.Field;
import java.util.List;
import java.util.Optional;

import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.table.runtime.typeutils.ExternalSerializer;
import org.apache.flink.table.runtime.typeutils.RawValueDataSerializer;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RawType;

/**
 * A two-phase DISTINCT partial: the {@code RAW(MapView)} field Flink's planner gives each
 * DistinctInfo in the local output (DataViewUtils.createDistinctViewDataType, a MapView of the
 * distinct values to a BIGINT, or to a BIGINT array beyond 64 filtered calls or several calls over
 * a retracting input). Its Arrow layout ({@link #arrowField}) is the runtime's view column
 * (runtime/src/operator/views.rs): {@code List<Struct<key, value: Int64 | List<Int64>>>}, one
 * entry per map entry.
 *
 * <p>The key and value types are those of the MapView's data type, read from the RAW type's
 * {@link ExternalSerializer} (which keeps it in a private field, the one place here that reads
 * Flink's internals by reflection).
 */
public final class DistinctViewType {

    private final LogicalType keyType;
    private final LogicalType valueType;
    private final boolean packed;
    private final RawValueDataSerializer<MapView<Object, Object>> serializer;

    private DistinctViewType(
            LogicalType keyType,
            LogicalType valueType,
            boolean packed,
            RawValueDataSerializer<MapView<Object, Object>> serializer) {
        this.keyType = keyType;
        this.valueType = valueType;
        this.packed = packed;
        this.serializer = serializer;
    }

    /** The view of a {@code RAW(MapView)} type, or empty for any other type. */
    @SuppressWarnings("unchecked")
    public static Optional<DistinctViewType> of(LogicalType type) {
        if (!type.is(LogicalTypeRoot.RAW)) {
            return Optional.empty();
        }
        RawType<?> raw = (RawType<?>) type;
        if (!MapView.class.isAssignableFrom(raw.getOriginatingClass())
                || !(raw.getTypeSerializer() instanceof ExternalSerializer)) {
            return Optional.empty();
        }
        DataType view = dataTypeOf((ExternalSerializer<?, ?>) raw.getTypeSerializer());
        // MapView's structured type has one field, the MAP<key, value>.
        List<DataType> fields = view.getChildren();
        if (fields.size() != 1 || fields.get(0).getChildren().size() != 2) {
            return Optional.empty();
        }
        DataType key = fields.get(0).getChildren().get(0);
        LogicalType value = fields.get(0).getChildren().get(1).getLogicalType();
        boolean packed = value.is(LogicalTypeRoot.BIGINT);
        if (!packed && !value.is(LogicalTypeRoot.ARRAY)) {
            return Optional.empty();
        }
        return Optional.of(
                new DistinctViewType(
                        key.getLogicalType(),
                        value,
                        packed,
                        new RawValueDataSerializer<>(
                                (TypeSerializer<MapView<Object, Object>>) raw.getTypeSerializer())));
    }

    static DataType dataTypeOf(ExternalSerializer<?, ?> serializer) {
        try {
            Field field = ExternalSerializer.class.getDeclaredField("dataType");
            field.setAccessible(true);
            return (DataType) field.get(serializer);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException(
                    "cannot read the MapView type of a DISTINCT partial from Flink's"
                            + " ExternalSerializer (this Flink version keeps it elsewhere)",
                    e);
        }
    }

    /** The distinct values' type (the calls' argument). */
    public LogicalType keyType() {
        return keyType;
    }

    /** The map's value type: BIGINT, or an ARRAY of BIGINT. */
    public LogicalType valueType() {
        return valueType;
    }

    /** One BIGINT per entry (else a BIGINT array). */
    public boolean packed() {
        return packed;
    }

    /** The RAW field's serializer (Flink's, for reading and writing the MapView). */
    public RawValueDataSerializer<MapView<Object, Object>> serializer() {
        return serializer;
    }

    /** The Arrow field of the view column. */
    public org.apache.arrow.vector.types.pojo.Field arrowField(String name) {
        org.apache.arrow.vector.types.pojo.Field key = ArrowTypes.fieldFor("key", keyType);
        org.apache.arrow.vector.types.pojo.Field value =
                packed
                        ? new org.apache.arrow.vector.types.pojo.Field(
                                "value", FieldType.notNullable(new ArrowType.Int(64, true)), null)
                        : new org.apache.arrow.vector.types.pojo.Field(
                                "value",
                                FieldType.notNullable(ArrowType.List.INSTANCE),
                                List.of(
                                        new org.apache.arrow.vector.types.pojo.Field(
                                                "item",
                                                FieldType.notNullable(new ArrowType.Int(64, true)),
                                                null)));
        org.apache.arrow.vector.types.pojo.Field entry =
                new org.apache.arrow.vector.types.pojo.Field(
                        "item", FieldType.notNullable(ArrowType.Struct.INSTANCE), List.of(key, value));
        return new org.apache.arrow.vector.types.pojo.Field(
                name, FieldType.nullable(ArrowType.List.INSTANCE), List.of(entry));
    }
}
