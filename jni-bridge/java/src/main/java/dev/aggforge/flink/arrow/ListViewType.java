package dev.aggforge.flink.arrow;

import java.util.List;
import java.util.Optional;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.table.api.dataview.ListView;
import org.apache.flink.table.runtime.typeutils.ExternalSerializer;
import org.apache.flink.table.runtime.typeutils.RawValueDataSerializer;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RawType;

/**
 * A {@code RAW(ListView<T>)} field of a two-phase accumulator partial, such as the {@code list}
 * and {@code retractList} of ListAggWithRetractAccumulator (DataViewUtils.adjustDataViews wraps
 * each view in a RAW type with an {@link ExternalSerializer} in the local and global phases). Its
 * Arrow layout is that of an {@code ARRAY<T>} ({@link ArrowTypes.Layout#LIST}): the list's values
 * in order. The bytes are ListView's structured row, one {@code ARRAY<T>} field, behind
 * BinaryRowDataSerializer's length ({@link ViewBytes.RawRowBytes}).
 */
public final class ListViewType {

    private final LogicalType elementType;
    private final RawValueDataSerializer<ListView<Object>> serializer;

    private ListViewType(
            LogicalType elementType, RawValueDataSerializer<ListView<Object>> serializer) {
        this.elementType = elementType;
        this.serializer = serializer;
    }

    /** The view of a {@code RAW(ListView)} type, or empty for any other type. */
    @SuppressWarnings("unchecked")
    public static Optional<ListViewType> of(LogicalType type) {
        if (!type.is(LogicalTypeRoot.RAW)) {
            return Optional.empty();
        }
        RawType<?> raw = (RawType<?>) type;
        if (!ListView.class.isAssignableFrom(raw.getOriginatingClass())
                || !(raw.getTypeSerializer() instanceof ExternalSerializer)) {
            return Optional.empty();
        }
        DataType view = DistinctViewType.dataTypeOf((ExternalSerializer<?, ?>) raw.getTypeSerializer());
        // ListView's structured type has one field, the ARRAY<T>.
        List<DataType> fields = view.getChildren();
        if (fields.size() != 1 || fields.get(0).getChildren().size() != 1) {
            return Optional.empty();
        }
        return Optional.of(
                new ListViewType(
                        fields.get(0).getChildren().get(0).getLogicalType(),
                        new RawValueDataSerializer<>(
                                (TypeSerializer<ListView<Object>>) raw.getTypeSerializer())));
    }

    /** The values' type. */
    public LogicalType elementType() {
        return elementType;
    }

    /** The list as an ARRAY type: what the Arrow layout and the bytes' one field hold. */
    public ArrayType arrayType() {
        return new ArrayType(elementType);
    }

    /** The RAW field's serializer (Flink's, for reading and writing the ListView). */
    public RawValueDataSerializer<ListView<Object>> serializer() {
        return serializer;
    }
}
