package dev.aggforge.flink.arrow;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.utils.LogicalTypeChecks;

import dev.aggforge.flink.nativelib.NativeAggregate;

/**
 * The Arrow layout of each Flink SQL type, as {@code specs/types.toml} gives it: the runtime
 * answers which type row (hence which {@link Layout}) covers a type ({@link
 * NativeAggregate#arrowLayout}), so a type row added to the specs on an existing layout needs
 * no Java change. Each {@link Layout} is one Arrow field shape here and one reader and writer in
 * {@link RowDataToArrow} and {@link ArrowToRowData}, reading Flink's internal value class the
 * layout carries (types.toml's {@code internal}):
 *
 * <ul>
 *   <li>Int8, Int16, Int32, Int64: byte, short, int, long (Int32 also DATE's and TIME's int)
 *   <li>Float32, Float64; Decimal128(p, s); Date32 (days); Time32 milliseconds
 *   <li>Timestamp(ms, no zone): a TimestampData's epoch millis (precision &lt;= 3)
 *   <li>Struct {millisecond Int64, nano_of_millisecond Int32}, both children non-nullable: a
 *       TimestampData split (no overflow at nanos)
 *   <li>Bool; Utf8 (CHAR, VARCHAR)
 *   <li>List of the element's layout, items nullable: an ARRAY whose element type has a row
 * </ul>
 *
 * <p>Two-phase partials also take a DISTINCT view's MapView ({@link DistinctViewType}) and a
 * structured accumulator ({@link AccumulatorStructType}), whose attributes may be ListViews
 * ({@link ListViewType}).
 *
 * <p>A type no row covers is not supported and {@link #fieldFor} throws {@link
 * UnsupportedTypeException}.
 */
public final class ArrowTypes {

    /** Name of the Int8 row-kind column (0 +I, 1 -U, 2 +U, 3 -D, Flink's RowKind byte values). */
    public static final String ROW_KIND = "$row_kind";

    /** Name of the epoch-milliseconds child of a Struct(Timestamp) column. */
    public static final String TS_MILLIS = "millisecond";

    /** Name of the nanosecond-of-millisecond child of a Struct(Timestamp) column. */
    public static final String TS_NANOS = "nano_of_millisecond";

    /** Name of a List column's item field as written here (Java's Arrow reads it as $data$). */
    public static final String LIST_ITEM = "item";

    private ArrowTypes() {}

    /** The element type of an ARRAY type. */
    public static LogicalType elementType(LogicalType array) {
        return ((ArrayType) array).getElementType();
    }

    /** The Arrow layouts of {@code specs/types.toml}'s {@code arrow} field. */
    public enum Layout {
        INT8("Int8"),
        INT16("Int16"),
        INT32("Int32"),
        INT64("Int64"),
        FLOAT32("Float32"),
        FLOAT64("Float64"),
        DECIMAL128("Decimal128"),
        DATE32("Date32"),
        TIME32_MILLISECOND("Time32(Millisecond)"),
        TIMESTAMP_MILLISECOND("Timestamp(Millisecond)"),
        STRUCT_TIMESTAMP("Struct(Timestamp)"),
        BOOLEAN("Boolean"),
        UTF8("Utf8"),
        /** An ARRAY: a list of its element type's layout (items nullable). */
        LIST("List");

        private final String spelling;

        Layout(String spelling) {
            this.spelling = spelling;
        }

        /** The types.toml spelling, e.g. {@code Time32(Millisecond)}. */
        public String spelling() {
            return spelling;
        }

        static Layout ofSpelling(String spelling) {
            for (Layout layout : values()) {
                if (layout.spelling.equals(spelling)) {
                    return layout;
                }
            }
            throw new IllegalStateException(
                    "the native runtime names Arrow layout "
                            + spelling
                            + ", which this jar's Java side does not know; the jar and its native"
                            + " library come from different builds");
        }
    }

    /** Layouts by SQL type text, as the runtime answered (absent: no type row covers it). */
    private static final Map<String, Optional<Layout>> LAYOUTS = new ConcurrentHashMap<>();

    /**
     * Flink's serializable spelling of {@code type} without nullability, e.g. {@code
     * DECIMAL(38, 2)} or {@code TIMESTAMP(3) WITH LOCAL TIME ZONE}; for types that are or hold RAW
     * or STRUCTURED types (accumulators with data views) the summary string, as their
     * serializable form embeds a serialized snapshot.
     */
    public static String sqlText(LogicalType type) {
        LogicalType nullable = type.copy(true);
        if (LogicalTypeChecks.hasNested(nullable, ArrowTypes::isOpaque) || isOpaque(nullable)) {
            return nullable.asSummaryString();
        }
        try {
            return nullable.asSerializableString();
        } catch (RuntimeException e) {
            return nullable.asSummaryString();
        }
    }

    private static boolean isOpaque(LogicalType type) {
        return type.is(LogicalTypeRoot.RAW) || type.is(LogicalTypeRoot.STRUCTURED_TYPE);
    }

    /** The layout of {@code type}'s type row, if {@code specs/types.toml} has one covering it. */
    public static Optional<Layout> layoutOf(LogicalType type) {
        return LAYOUTS.computeIfAbsent(
                sqlText(type),
                text -> Optional.ofNullable(NativeAggregate.arrowLayout(text)).map(Layout::ofSpelling));
    }

    /**
     * The layout of {@code type}.
     *
     * @throws UnsupportedTypeException if no type row covers it
     */
    public static Layout requireLayout(LogicalType type) {
        return layoutOf(type).orElseThrow(() -> new UnsupportedTypeException(type));
    }

    /** Thrown for a Flink type that has no aggforge Arrow layout. */
    public static final class UnsupportedTypeException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        /** Creates the exception naming the type. */
        public UnsupportedTypeException(LogicalType type) {
            super("aggforge has no Arrow layout for Flink type " + type.asSummaryString());
        }
    }

    /**
     * Whether {@code type} has an aggforge Arrow layout: a type row covers it, or it is a
     * two-phase DISTINCT partial ({@link DistinctViewType}) or an accumulator's ListView ({@link
     * ListViewType}) over such a type.
     */
    public static boolean isSupported(LogicalType type) {
        Optional<DistinctViewType> view = DistinctViewType.of(type);
        if (view.isPresent()) {
            return layoutOf(view.get().keyType()).isPresent();
        }
        Optional<ListViewType> list = ListViewType.of(type);
        if (list.isPresent()) {
            return layoutOf(list.get().arrayType()).isPresent();
        }
        return layoutOf(type).isPresent();
    }

    /**
     * Whether a two-phase partial column of {@code type} has an aggforge Arrow layout: {@link
     * #isSupported}, or a structured accumulator ({@link AccumulatorStructType}) whose attributes
     * all have one.
     */
    public static boolean isSupportedPartial(LogicalType type) {
        Optional<AccumulatorStructType> struct = AccumulatorStructType.of(type);
        if (struct.isPresent()) {
            return struct.get().supported();
        }
        return isSupported(type);
    }

    /** The precision of a type with one (DECIMAL, TIME, TIMESTAMP, TIMESTAMP_LTZ, ...). */
    public static int precision(LogicalType type) {
        return LogicalTypeChecks.getPrecision(type);
    }

    /** The Arrow field (nullable, as Flink's RowData can hold NULL anywhere) for {@code type}. */
    public static Field fieldFor(String name, LogicalType type) {
        Optional<DistinctViewType> view = DistinctViewType.of(type);
        if (view.isPresent()) {
            return view.get().arrowField(name);
        }
        Optional<AccumulatorStructType> struct = AccumulatorStructType.of(type);
        if (struct.isPresent()) {
            return struct.get().arrowField(name);
        }
        Optional<ListViewType> list = ListViewType.of(type);
        if (list.isPresent()) {
            return fieldFor(name, list.get().arrayType());
        }
        switch (requireLayout(type)) {
            case INT8:
                return leaf(name, new ArrowType.Int(8, true));
            case INT16:
                return leaf(name, new ArrowType.Int(16, true));
            case INT32:
                return leaf(name, new ArrowType.Int(32, true));
            case INT64:
                return leaf(name, new ArrowType.Int(64, true));
            case FLOAT32:
                return leaf(name, new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE));
            case FLOAT64:
                return leaf(name, new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE));
            case DECIMAL128:
                return leaf(
                        name,
                        new ArrowType.Decimal(
                                precision(type), LogicalTypeChecks.getScale(type), 128));
            case DATE32:
                return leaf(name, new ArrowType.Date(DateUnit.DAY));
            case TIME32_MILLISECOND:
                return leaf(name, new ArrowType.Time(TimeUnit.MILLISECOND, 32));
            case TIMESTAMP_MILLISECOND:
                return leaf(name, new ArrowType.Timestamp(TimeUnit.MILLISECOND, null));
            case STRUCT_TIMESTAMP:
                List<Field> children = new ArrayList<>(2);
                children.add(
                        new Field(
                                TS_MILLIS,
                                FieldType.notNullable(new ArrowType.Int(64, true)),
                                null));
                children.add(
                        new Field(
                                TS_NANOS, FieldType.notNullable(new ArrowType.Int(32, true)), null));
                return new Field(name, FieldType.nullable(ArrowType.Struct.INSTANCE), children);
            case BOOLEAN:
                return leaf(name, ArrowType.Bool.INSTANCE);
            case UTF8:
                return leaf(name, ArrowType.Utf8.INSTANCE);
            case LIST:
                return new Field(
                        name,
                        FieldType.nullable(ArrowType.List.INSTANCE),
                        List.of(fieldFor(LIST_ITEM, elementType(type))));
            default:
                throw new UnsupportedTypeException(type);
        }
    }

    /** The non-nullable Int8 row-kind field. */
    public static Field rowKindField() {
        return new Field(ROW_KIND, FieldType.notNullable(new ArrowType.Int(8, true)), null);
    }

    private static Field leaf(String name, ArrowType type) {
        return new Field(name, FieldType.nullable(type), null);
    }
}
