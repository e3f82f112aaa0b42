package dev.aggforge.flink.operator;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

/**
 * Flink's accumulator row of a group aggregate ({@code accState}'s value) against the runtime's
 * accumulator columns: the same fields, but where Flink keeps FIRST_VALUE's and LAST_VALUE's
 * accumulator as a nested {@code ROW(value, order)} (FirstValueAggFunction,
 * LastValueAggFunction), of which the runtime keeps the value.
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
        LAST
    }

    private final RowType nativeType;
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
        boolean any = false;
        for (int i = 0; i < n; i++) {
            LogicalType type = flinkType.getTypeAt(i);
            kinds[i] = kindOf(type);
            LogicalType runtimeType = kinds[i] == Kind.PLAIN ? type : ((RowType) type).getTypeAt(0);
            any |= kinds[i] != Kind.PLAIN;
            fields.add(new RowType.RowField(flinkType.getFieldNames().get(i), runtimeType));
            nativeGetters[i] = RowData.createFieldGetter(runtimeType, i);
            valueGetters[i] = RowData.createFieldGetter(runtimeType, 0);
        }
        this.nativeType = new RowType(flinkType.isNullable(), fields);
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
                    });
        }
        return out;
    }

    /** The runtime's accumulator row of Flink's {@code acc}. */
    RowData toNative(RowData acc) {
        if (!adapted) {
            return acc;
        }
        GenericRowData out = new GenericRowData(kinds.length);
        for (int i = 0; i < kinds.length; i++) {
            if (kinds[i] == Kind.PLAIN) {
                out.setField(i, nativeGetters[i].getFieldOrNull(acc));
            } else if (!acc.isNullAt(i)) {
                out.setField(i, valueGetters[i].getFieldOrNull(acc.getRow(i, 2)));
            }
        }
        return out;
    }

    /** FIRST or LAST for Flink's FIRST_VALUE or LAST_VALUE accumulator type, else PLAIN. */
    private static Kind kindOf(LogicalType type) {
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
