package dev.aggforge.flink.arrow;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.StructuredType;

/**
 * A two-phase partial that is an imperative aggregate function's structured accumulator: Flink's
 * {@code STRUCTURED} type, internally a nested {@link org.apache.flink.table.data.RowData}, such
 * as MinWithRetractAccumulator {@code (min, mapSize BIGINT, map RAW(MapView<T, BIGINT>))}. Its
 * Arrow layout ({@link #arrowField}) is one Struct column with a child per attribute, in Flink's
 * order and with Flink's names; a child is a type with a layout of its own or a MapView of
 * counts ({@link DistinctViewType}, the runtime's {@code {key, value}} list).
 */
public final class AccumulatorStructType {

    private final List<String> names;
    private final List<LogicalType> fields;

    private AccumulatorStructType(List<String> names, List<LogicalType> fields) {
        this.names = names;
        this.fields = fields;
    }

    /** The accumulator of a {@code STRUCTURED} type of flat attributes, or empty. */
    public static Optional<AccumulatorStructType> of(LogicalType type) {
        if (!type.is(LogicalTypeRoot.STRUCTURED_TYPE)) {
            return Optional.empty();
        }
        List<String> names = new ArrayList<>();
        List<LogicalType> fields = new ArrayList<>();
        for (StructuredType.StructuredAttribute attribute :
                ((StructuredType) type).getAttributes()) {
            if (attribute.getType().is(LogicalTypeRoot.STRUCTURED_TYPE)) {
                return Optional.empty();
            }
            names.add(attribute.getName());
            fields.add(attribute.getType());
        }
        return Optional.of(new AccumulatorStructType(names, fields));
    }

    /** Whether every attribute has an Arrow layout. */
    public boolean supported() {
        return fields.stream().allMatch(ArrowTypes::isSupported);
    }

    /** The number of attributes. */
    public int arity() {
        return fields.size();
    }

    /** The type of attribute {@code i}. */
    public LogicalType fieldType(int i) {
        return fields.get(i);
    }

    /** The attribute types, in order. */
    public LogicalType[] fieldTypes() {
        return fields.toArray(new LogicalType[0]);
    }

    /** The Arrow field of the accumulator column. */
    public Field arrowField(String name) {
        List<Field> children = new ArrayList<>(fields.size());
        for (int i = 0; i < fields.size(); i++) {
            children.add(ArrowTypes.fieldFor(names.get(i), fields.get(i)));
        }
        return new Field(name, FieldType.nullable(ArrowType.Struct.INSTANCE), children);
    }
}
