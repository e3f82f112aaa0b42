package dev.aggforge.flink.operator;

import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.writer.BinaryRowWriter;
import org.apache.flink.table.runtime.keyselector.RowDataKeySelector;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

/**
 * The key selector Flink's planner generates for a group key of one {@code INT NOT NULL} column
 * 0: a one-field {@link BinaryRowData}, byte for byte what the generated projection writes, so
 * keys hash to the same key groups. Written by hand because the tests run without the planner
 * on their class path (as a distribution with the planner loader does).
 */
final class FirstIntKeySelector implements RowDataKeySelector {

    private static final long serialVersionUID = 1L;

    private static final RowType KEY =
            RowType.of(new LogicalType[] {new IntType(false)}, new String[] {"k"});

    @Override
    public RowData getKey(RowData row) {
        BinaryRowData key = new BinaryRowData(1);
        BinaryRowWriter writer = new BinaryRowWriter(key);
        writer.writeInt(0, row.getInt(0));
        writer.complete();
        return key;
    }

    @Override
    public InternalTypeInfo<RowData> getProducedType() {
        return InternalTypeInfo.of(KEY);
    }

    /** A fresh selector (Flink 2.x's RowDataKeySelector#copy; 1.20 has no such method). */
    public RowDataKeySelector copy() {
        return new FirstIntKeySelector();
    }
}
