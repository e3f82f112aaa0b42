package dev.aggforge.flink.arrow;

import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.TimestampType;

/**
 * The Arrow layout aggforge uses for each Flink SQL type (the same mapping as the Rust runtime's
 * {@code plan::arrow_type}).
 *
 * <ul>
 *   <li>TINYINT, SMALLINT, INT, BIGINT: Int8, Int16, Int32, Int64
 *   <li>FLOAT, DOUBLE: Float32, Float64
 *   <li>DECIMAL(p, s): Decimal128(p, s)
 *   <li>DATE: Date32 (days); TIME(p): Time32 milliseconds
 *   <li>TIMESTAMP(p &lt;= 3) and TIMESTAMP_LTZ(p &lt;= 3): Timestamp(ms, no zone)
 *   <li>TIMESTAMP(4..9) and TIMESTAMP_LTZ(4..9): Struct {millisecond Int64, nano_of_millisecond
 *       Int32}, both children non-nullable (Flink's TimestampData split, no overflow at nanos)
 *   <li>BOOLEAN: Bool; CHAR(n), VARCHAR(n): Utf8
 * </ul>
 *
 * <p>Every other type is not supported and {@link #fieldFor} throws {@link
 * UnsupportedTypeException}.
 */
public final class ArrowTypes {

    /** Name of the Int8 row-kind column (0 +I, 1 -U, 2 +U, 3 -D, Flink's RowKind byte values). */
    public static final String ROW_KIND = "$row_kind";

    /** Name of the epoch-milliseconds child of a TIMESTAMP(4..9) struct. */
    public static final String TS_MILLIS = "millisecond";

    /** Name of the nanosecond-of-millisecond child of a TIMESTAMP(4..9) struct. */
    public static final String TS_NANOS = "nano_of_millisecond";

    private ArrowTypes() {}

    /** Thrown for a Flink type that has no aggforge Arrow layout. */
    public static final class UnsupportedTypeException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        /** Creates the exception naming the type. */
        public UnsupportedTypeException(LogicalType type) {
            super("aggforge has no Arrow layout for Flink type " + type.asSummaryString());
        }
    }

    /** Whether {@code type} has an aggforge Arrow layout. */
    public static boolean isSupported(LogicalType type) {
        switch (type.getTypeRoot()) {
            case TINYINT:
            case SMALLINT:
            case INTEGER:
            case BIGINT:
            case FLOAT:
            case DOUBLE:
            case DECIMAL:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
            case BOOLEAN:
            case CHAR:
            case VARCHAR:
                return true;
            default:
                return false;
        }
    }

    /** The fractional-second precision of a TIMESTAMP or TIMESTAMP_LTZ type. */
    public static int timestampPrecision(LogicalType type) {
        if (type instanceof TimestampType) {
            return ((TimestampType) type).getPrecision();
        }
        if (type instanceof LocalZonedTimestampType) {
            return ((LocalZonedTimestampType) type).getPrecision();
        }
        throw new IllegalArgumentException("not a timestamp type: " + type);
    }

    /** The Arrow field (nullable, as Flink's RowData can hold NULL anywhere) for {@code type}. */
    public static Field fieldFor(String name, LogicalType type) {
        switch (type.getTypeRoot()) {
            case TINYINT:
                return leaf(name, new ArrowType.Int(8, true));
            case SMALLINT:
                return leaf(name, new ArrowType.Int(16, true));
            case INTEGER:
                return leaf(name, new ArrowType.Int(32, true));
            case BIGINT:
                return leaf(name, new ArrowType.Int(64, true));
            case FLOAT:
                return leaf(name, new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE));
            case DOUBLE:
                return leaf(name, new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE));
            case DECIMAL:
                DecimalType decimal = (DecimalType) type;
                return leaf(
                        name, new ArrowType.Decimal(decimal.getPrecision(), decimal.getScale(), 128));
            case DATE:
                return leaf(name, new ArrowType.Date(DateUnit.DAY));
            case TIME_WITHOUT_TIME_ZONE:
                return leaf(name, new ArrowType.Time(TimeUnit.MILLISECOND, 32));
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                if (timestampPrecision(type) <= 3) {
                    return leaf(name, new ArrowType.Timestamp(TimeUnit.MILLISECOND, null));
                }
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
            case CHAR:
            case VARCHAR:
                return leaf(name, ArrowType.Utf8.INSTANCE);
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
