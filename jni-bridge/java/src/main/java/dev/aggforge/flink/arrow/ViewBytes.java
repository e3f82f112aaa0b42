package dev.aggforge.flink.arrow;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Consumer;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.data.binary.BinaryArrayData;
import org.apache.flink.table.data.binary.BinaryMapData;
import org.apache.flink.table.data.binary.BinaryRawValueData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.writer.BinaryArrayWriter;
import org.apache.flink.table.data.writer.BinaryRowWriter;
import org.apache.flink.table.data.writer.BinaryWriter;
import org.apache.flink.table.runtime.typeutils.BinaryRowDataSerializer;
import org.apache.flink.table.runtime.typeutils.InternalSerializers;
import org.apache.flink.table.runtime.typeutils.MapDataSerializer;
import org.apache.flink.table.types.logical.LogicalType;

/**
 * A DISTINCT view's entries written straight into the bytes Flink's {@code RAW(MapView)} field
 * holds: what the field's ExternalSerializer writes for a MapView whose map iterates the entries in
 * the order given. That is a {@link BinaryRowData} of one field, the map as a {@link BinaryMapData}
 * of a key and a value {@link BinaryArrayData}, built with Flink's own writers as
 * MapDataSerializer.toBinaryMap and RowDataSerializer.toBinaryRow build them, behind
 * BinaryRowDataSerializer's length. No Java map or MapView is built.
 */
final class ViewBytes {

    private final LogicalType keyType;
    private final LogicalType valueType;
    private final TypeSerializer<?> keySerializer;
    private final TypeSerializer<?> valueSerializer;
    private final MapDataSerializer mapSerializer;
    private final BinaryArrayData keys = new BinaryArrayData();
    private final BinaryArrayData values = new BinaryArrayData();
    private BinaryArrayWriter keyWriter;
    private BinaryArrayWriter valueWriter;
    private final RawRowBytes bytes = new RawRowBytes();

    ViewBytes(LogicalType keyType, LogicalType valueType) {
        this.keyType = keyType;
        this.valueType = valueType;
        this.keySerializer = InternalSerializers.create(keyType);
        this.valueSerializer = InternalSerializers.create(valueType);
        this.mapSerializer = new MapDataSerializer(keyType, valueType);
    }

    /** Starts a view of {@code entries} entries. */
    void start(int entries) {
        if (keyWriter == null || keyWriter.getNumElements() != entries) {
            keyWriter =
                    new BinaryArrayWriter(
                            keys, entries, BinaryArrayData.calculateFixLengthPartSize(keyType));
            valueWriter =
                    new BinaryArrayWriter(
                            values, entries, BinaryArrayData.calculateFixLengthPartSize(valueType));
        } else {
            keyWriter.reset();
            valueWriter.reset();
        }
    }

    /** Entry {@code i}: its key (Flink's internal value, or null) and value (Long or ArrayData). */
    void entry(int i, Object key, Object value) {
        if (key == null) {
            keyWriter.setNullAt(i, keyType);
        } else {
            BinaryWriter.write(keyWriter, i, key, keyType, keySerializer);
        }
        BinaryWriter.write(valueWriter, i, value, valueType, valueSerializer);
    }

    /** The field's value for the entries written since {@link #start}. */
    BinaryRawValueData finish() {
        keyWriter.complete();
        valueWriter.complete();
        BinaryMapData map = BinaryMapData.valueOf(keys, values);
        return bytes.of(row -> row.writeMap(0, map, mapSerializer), "a DISTINCT view partial");
    }

    /**
     * The bytes of a RAW data view field: the view's structured row of one field (a MapView's
     * MAP, a ListView's ARRAY) behind BinaryRowDataSerializer's length, as the field's
     * ExternalSerializer writes them. One instance reuses its row and buffer.
     */
    static final class RawRowBytes {
        private final BinaryRowData row = new BinaryRowData(1);
        private final BinaryRowWriter rowWriter = new BinaryRowWriter(row);
        private final BinaryRowDataSerializer rowSerializer = new BinaryRowDataSerializer(1);
        private final DataOutputSerializer out = new DataOutputSerializer(256);

        /** The field's value for the row {@code field} writes field 0 of. */
        BinaryRawValueData<?> of(Consumer<BinaryRowWriter> field, String what) {
            rowWriter.reset();
            field.accept(rowWriter);
            rowWriter.complete();
            out.clear();
            try {
                rowSerializer.serialize(row, out);
            } catch (IOException e) {
                throw new UncheckedIOException("writing " + what, e);
            }
            return BinaryRawValueData.fromBytes(out.getCopyOfBuffer());
        }
    }
}
