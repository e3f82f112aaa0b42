package dev.aggforge.flink.arrow;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMilliVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.table.data.ArrayData;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.MapData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.binary.BinaryRawValueData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.binary.BinarySegmentUtils;
import org.apache.flink.table.data.binary.BinaryStringData;
import org.apache.flink.table.runtime.typeutils.RawValueDataSerializer;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.utils.LogicalTypeChecks;

/**
 * Appends Flink {@link RowData} rows, column by column, into reusable Arrow vectors: the input
 * batch of a native group aggregate (key columns, argument columns and, optionally, an Int8
 * {@code $row_kind} column from {@link RowData#getRowKind()}).
 *
 * <p>Usage per batch: {@link #append} each row, {@link #finish} to get the batch, hand it over,
 * then {@link #reset} before the next batch. Vectors and their buffers are reused across batches
 * (they only grow). The hot path allocates no objects per row for fixed-width types, compact
 * DECIMAL (p &lt;= 18), TIMESTAMP, and strings; rows that are {@link BinaryRowData} (what Flink's
 * network and state deliver) are read straight from their memory segments, other RowData
 * implementations through the RowData getters. Non-compact DECIMAL (p &gt; 18) values of
 * non-binary rows go through {@link DecimalData#toUnscaledBytes()}, which allocates.
 *
 * <p>Column layout follows {@link ArrowTypes}. Not thread-safe.
 */
public final class RowDataToArrow implements AutoCloseable {

    private final VectorSchemaRoot root;
    private final ColumnWriter[] writers;
    /** Writes {@code $row_kind}, or null. */
    private final TinyIntWriter rowKindWriter;
    /** Rows the fixed-width vectors hold without growing. */
    private int capacity;
    private int count;

    /**
     * Creates a transposer for {@code columns} of rows of type {@code inputType}.
     *
     * @param allocator allocator for the vectors (closed by the caller after {@link #close()})
     * @param inputType the type of the rows that will be appended
     * @param columns the input field indexes to copy, in batch column order (repeats allowed)
     * @param withRowKind whether to add the {@code $row_kind} column as the last column
     * @param initialCapacity rows to pre-allocate for
     * @throws ArrowTypes.UnsupportedTypeException if a column's type has no Arrow layout
     */
    public RowDataToArrow(
            BufferAllocator allocator,
            RowType inputType,
            int[] columns,
            boolean withRowKind,
            int initialCapacity) {
        Schema schema = schemaFor(inputType, columns, withRowKind);
        this.root = VectorSchemaRoot.create(schema, allocator);
        List<FieldVector> vectors = root.getFieldVectors();
        this.writers = new ColumnWriter[columns.length];
        for (int i = 0; i < columns.length; i++) {
            writers[i] =
                    writerFor(inputType.getTypeAt(columns[i]), columns[i], vectors.get(i));
        }
        this.rowKindWriter =
                withRowKind ? new TinyIntWriter(-1, (TinyIntVector) vectors.get(columns.length)) : null;
        for (FieldVector vector : vectors) {
            vector.setInitialCapacity(Math.max(1, initialCapacity));
            vector.allocateNew();
        }
        grow(1);
    }

    /**
     * The Arrow schema of the batches: one field per entry of {@code columns} named after the
     * input field (suffixed {@code #i} when a name repeats), then {@code $row_kind} if requested.
     */
    public static Schema schemaFor(RowType inputType, int[] columns, boolean withRowKind) {
        List<Field> fields = new ArrayList<>(columns.length + 1);
        Set<String> names = new HashSet<>();
        for (int i = 0; i < columns.length; i++) {
            int column = columns[i];
            if (column < 0 || column >= inputType.getFieldCount()) {
                throw new IllegalArgumentException(
                        "column " + column + " is outside the input row of arity "
                                + inputType.getFieldCount());
            }
            String name = inputType.getFieldNames().get(column);
            if (!names.add(name) || ArrowTypes.ROW_KIND.equals(name)) {
                name = name + "#" + i;
                names.add(name);
            }
            fields.add(ArrowTypes.fieldFor(name, inputType.getTypeAt(column)));
        }
        if (withRowKind) {
            fields.add(ArrowTypes.rowKindField());
        }
        return new Schema(fields);
    }

    /** Appends one row (its row kind too, if the batch has a {@code $row_kind} column). */
    public void append(RowData row) {
        int index = count;
        if (index >= capacity) {
            grow(index + 1);
        }
        for (ColumnWriter writer : writers) {
            writer.write(row, index);
        }
        if (rowKindWriter != null) {
            rowKindWriter.put(index, row.getRowKind().toByteValue());
        }
        count = index + 1;
    }

    /**
     * Grows every fixed-width vector to hold at least {@code rows} values; their writers write
     * straight to memory below that capacity without Arrow's per-value bounds checks.
     */
    private void grow(int rows) {
        int least = Integer.MAX_VALUE;
        for (ColumnWriter writer : writers) {
            if (writer instanceof FixedWidthWriter fixed) {
                least = Math.min(least, fixed.ensure(rows));
            }
        }
        if (rowKindWriter != null) {
            least = Math.min(least, rowKindWriter.ensure(rows));
        }
        capacity = least == Integer.MAX_VALUE ? Integer.MAX_VALUE : least;
    }

    /** Rows appended since the last {@link #reset()}. */
    public int rowCount() {
        return count;
    }

    /**
     * Seals the current batch (value counts and row count) and returns it. The root stays owned
     * by this object and is valid until {@link #reset()} or {@link #close()}.
     */
    public VectorSchemaRoot finish() {
        for (FieldVector vector : root.getFieldVectors()) {
            vector.setValueCount(count);
        }
        root.setRowCount(count);
        return root;
    }

    /** Clears the batch for reuse, keeping the allocated buffers. */
    public void reset() {
        for (FieldVector vector : root.getFieldVectors()) {
            vector.reset();
        }
        root.setRowCount(0);
        count = 0;
    }

    /** The reusable batch root (its contents are only meaningful after {@link #finish()}). */
    public VectorSchemaRoot root() {
        return root;
    }

    /** Releases the vectors' buffers. */
    @Override
    public void close() {
        root.close();
    }

    // ------------------------------------------------------------------------------------------

    private static ColumnWriter writerFor(LogicalType type, int pos, FieldVector vector) {
        Optional<DistinctViewType> view = DistinctViewType.of(type);
        if (view.isPresent()) {
            return new ViewWriter(pos, view.get(), (ListVector) vector);
        }
        Optional<AccumulatorStructType> struct = AccumulatorStructType.of(type);
        if (struct.isPresent()) {
            return new AccumulatorWriter(pos, struct.get(), (StructVector) vector);
        }
        Optional<ListViewType> list = ListViewType.of(type);
        if (list.isPresent()) {
            return new ListViewWriter(pos, list.get(), (ListVector) vector);
        }
        switch (ArrowTypes.requireLayout(type)) {
            case INT8:
                return new TinyIntWriter(pos, (TinyIntVector) vector);
            case INT16:
                return new SmallIntWriter(pos, (SmallIntVector) vector);
            case INT32:
            case DATE32:
            case TIME32_MILLISECOND:
                return new Int32Writer(pos, (BaseFixedWidthVector) vector);
            case INT64:
                return new BigIntWriter(pos, (BigIntVector) vector);
            case FLOAT32:
                return new FloatWriter(pos, (Float4Vector) vector);
            case FLOAT64:
                return new DoubleWriter(pos, (Float8Vector) vector);
            case BOOLEAN:
                return new BooleanWriter(pos, (BitVector) vector);
            case DECIMAL128:
                return new DecimalWriter(
                        pos,
                        ArrowTypes.precision(type),
                        LogicalTypeChecks.getScale(type),
                        (DecimalVector) vector);
            case TIMESTAMP_MILLISECOND:
                return new TimestampMilliWriter(
                        pos, ArrowTypes.precision(type), (TimeStampMilliVector) vector);
            case STRUCT_TIMESTAMP:
                return new TimestampStructWriter(
                        pos, ArrowTypes.precision(type), (StructVector) vector);
            case UTF8:
                return new StringWriter(pos, (VarCharVector) vector);
            case LIST:
                return new ArrayWriter(pos, ArrowTypes.elementType(type), (ListVector) vector);
            default:
                throw new ArrowTypes.UnsupportedTypeException(type);
        }
    }

    /**
     * Points {@code into} at the one-field row a RAW data view field holds: its ExternalSerializer
     * writes the view's structured row (a MapView's MAP, a ListView's ARRAY) behind
     * BinaryRowDataSerializer's 4-byte length.
     */
    private static BinaryRowData viewRow(
            RowData row, int pos, RawValueDataSerializer<?> serializer, BinaryRowData into) {
        BinaryRawValueData<?> raw = (BinaryRawValueData<?>) row.getRawValue(pos);
        @SuppressWarnings({"unchecked", "rawtypes"})
        TypeSerializer<Object> inner = (TypeSerializer) serializer.getInnerSerializer();
        ((BinaryRawValueData<Object>) raw).ensureMaterialized(inner);
        into.pointTo(raw.getSegments(), raw.getOffset() + 4, raw.getSizeInBytes() - 4);
        return into;
    }

    /** Writes one input field into one vector. */
    private abstract static class ColumnWriter {
        final int pos;

        ColumnWriter(int pos) {
            this.pos = pos;
        }

        abstract void write(RowData row, int index);
    }

    /**
     * A fixed-width vector written straight to memory: the transposer grows it ({@link
     * #ensure}) before any index reaches its capacity, so writes skip Arrow's bounds checks.
     * Buffers start zeroed (allocation, {@code reset()} and growth zero them), so a NULL only
     * leaves its validity bit clear.
     */
    private abstract static class FixedWidthWriter extends ColumnWriter {
        final BaseFixedWidthVector vector;
        /** Address of the data buffer. */
        long data;
        /** Address of the validity buffer. */
        long validity;

        FixedWidthWriter(int pos, BaseFixedWidthVector vector) {
            super(pos);
            this.vector = vector;
        }

        /** Grows the vector to hold {@code rows} values; returns its capacity. */
        final int ensure(int rows) {
            while (vector.getValueCapacity() < rows) {
                vector.reAlloc();
            }
            data = vector.getDataBufferAddress();
            validity = vector.getValidityBufferAddress();
            return vector.getValueCapacity();
        }

        /** Marks {@code index} valid. */
        final void setValid(int index) {
            setBit(validity, index);
        }

        static void setBit(long address, int index) {
            long at = address + (index >>> 3);
            MemoryUtil.putByte(at, (byte) (MemoryUtil.getByte(at) | (1 << (index & 7))));
        }
    }

    private static final class TinyIntWriter extends FixedWidthWriter {
        TinyIntWriter(int pos, TinyIntVector vector) {
            super(pos, vector);
        }

        /** Writes a non-NULL byte at {@code index}. */
        void put(int index, byte value) {
            MemoryUtil.putByte(data + index, value);
            setValid(index);
        }

        @Override
        void write(RowData row, int index) {
            if (!row.isNullAt(pos)) {
                put(index, row.getByte(pos));
            }
        }
    }

    private static final class SmallIntWriter extends FixedWidthWriter {
        SmallIntWriter(int pos, SmallIntVector vector) {
            super(pos, vector);
        }

        @Override
        void write(RowData row, int index) {
            if (!row.isNullAt(pos)) {
                MemoryUtil.putShort(data + 2L * index, row.getShort(pos));
                setValid(index);
            }
        }
    }

    /** INT, DATE (epoch days) and TIME (millis of day): Flink's int slot as a 32-bit value. */
    private static final class Int32Writer extends FixedWidthWriter {
        Int32Writer(int pos, BaseFixedWidthVector vector) {
            super(pos, vector);
        }

        @Override
        void write(RowData row, int index) {
            if (!row.isNullAt(pos)) {
                MemoryUtil.putInt(data + 4L * index, row.getInt(pos));
                setValid(index);
            }
        }
    }

    private static final class BigIntWriter extends FixedWidthWriter {
        BigIntWriter(int pos, BigIntVector vector) {
            super(pos, vector);
        }

        @Override
        void write(RowData row, int index) {
            if (!row.isNullAt(pos)) {
                MemoryUtil.putLong(data + 8L * index, row.getLong(pos));
                setValid(index);
            }
        }
    }

    private static final class FloatWriter extends FixedWidthWriter {
        FloatWriter(int pos, Float4Vector vector) {
            super(pos, vector);
        }

        @Override
        void write(RowData row, int index) {
            if (!row.isNullAt(pos)) {
                MemoryUtil.putInt(data + 4L * index, Float.floatToRawIntBits(row.getFloat(pos)));
                setValid(index);
            }
        }
    }

    private static final class DoubleWriter extends FixedWidthWriter {
        DoubleWriter(int pos, Float8Vector vector) {
            super(pos, vector);
        }

        @Override
        void write(RowData row, int index) {
            if (!row.isNullAt(pos)) {
                MemoryUtil.putLong(data + 8L * index, Double.doubleToRawLongBits(row.getDouble(pos)));
                setValid(index);
            }
        }
    }

    private static final class BooleanWriter extends FixedWidthWriter {
        BooleanWriter(int pos, BitVector vector) {
            super(pos, vector);
        }

        @Override
        void write(RowData row, int index) {
            if (!row.isNullAt(pos)) {
                if (row.getBoolean(pos)) {
                    setBit(data, index);
                }
                setValid(index);
            }
        }
    }

    private static final class DecimalWriter extends FixedWidthWriter {
        private final int precision;
        private final int scale;
        private final boolean compact;
        private final byte[] scratch = new byte[16];

        DecimalWriter(int pos, int precision, int scale, DecimalVector vector) {
            super(pos, vector);
            this.precision = precision;
            this.scale = scale;
            this.compact = DecimalData.isCompact(precision);
        }

        /** Writes an unscaled long as a little-endian Decimal128 (sign-extended). */
        private void putLong(int index, long unscaled) {
            long at = data + 16L * index;
            MemoryUtil.putLong(at, unscaled);
            MemoryUtil.putLong(at + 8, unscaled >> 63);
            setValid(index);
        }

        @Override
        void write(RowData row, int index) {
            if (row.isNullAt(pos)) {
                return;
            } else if (row instanceof BinaryRowData) {
                // Compact: the slot holds the unscaled long. Otherwise the slot holds
                // (offset << 32 | length) of BigInteger.toByteArray() bytes in the var part.
                long slot = row.getLong(pos);
                if (compact) {
                    putLong(index, slot);
                } else {
                    BinaryRowData binary = (BinaryRowData) row;
                    int length = (int) slot;
                    BinarySegmentUtils.copyToBytes(
                            binary.getSegments(),
                            binary.getOffset() + (int) (slot >>> 32),
                            scratch,
                            0,
                            length);
                    putBigEndian(index, scratch, length);
                }
            } else {
                DecimalData value = row.getDecimal(pos, precision, scale);
                if (compact) {
                    putLong(index, value.toUnscaledLong());
                } else {
                    byte[] bytes = value.toUnscaledBytes();
                    putBigEndian(index, bytes, bytes.length);
                }
            }
        }

        /** Writes a big-endian two's complement integer of 1..16 bytes as a Decimal128. */
        private void putBigEndian(int index, byte[] bytes, int length) {
            long high = bytes[0] < 0 ? -1L : 0L;
            long low = high;
            for (int i = 0; i < length; i++) {
                high = (high << 8) | (low >>> 56);
                low = (low << 8) | (bytes[i] & 0xFFL);
            }
            long at = data + 16L * index;
            MemoryUtil.putLong(at, low);
            MemoryUtil.putLong(at + 8, high);
            setValid(index);
        }
    }

    private static final class TimestampMilliWriter extends FixedWidthWriter {
        private final int precision;

        TimestampMilliWriter(int pos, int precision, TimeStampMilliVector vector) {
            super(pos, vector);
            this.precision = precision;
        }

        @Override
        void write(RowData row, int index) {
            if (row.isNullAt(pos)) {
                return;
            }
            long millis =
                    row instanceof BinaryRowData
                            ? row.getLong(pos) // compact: the slot holds epoch millis
                            : row.getTimestamp(pos, precision).getMillisecond();
            MemoryUtil.putLong(data + 8L * index, millis);
            setValid(index);
        }
    }

    private static final class TimestampStructWriter extends ColumnWriter {
        private final int precision;
        private final StructVector vector;
        private final BigIntVector millis;
        private final IntVector nanos;

        TimestampStructWriter(int pos, int precision, StructVector vector) {
            super(pos);
            this.precision = precision;
            this.vector = vector;
            this.millis = (BigIntVector) vector.getChild(ArrowTypes.TS_MILLIS);
            this.nanos = (IntVector) vector.getChild(ArrowTypes.TS_NANOS);
        }

        @Override
        void write(RowData row, int index) {
            if (row.isNullAt(pos)) {
                vector.setNull(index);
                millis.setSafe(index, 0L);
                nanos.setSafe(index, 0);
                return;
            }
            vector.setIndexDefined(index);
            if (row instanceof BinaryRowData) {
                // The slot holds (offset << 32 | nanoOfMillisecond); the millis sit at offset.
                BinaryRowData binary = (BinaryRowData) row;
                long slot = row.getLong(pos);
                millis.setSafe(
                        index,
                        BinarySegmentUtils.getLong(
                                binary.getSegments(), binary.getOffset() + (int) (slot >>> 32)));
                nanos.setSafe(index, (int) slot);
            } else {
                TimestampData value = row.getTimestamp(pos, precision);
                millis.setSafe(index, value.getMillisecond());
                nanos.setSafe(index, value.getNanoOfMillisecond());
            }
        }
    }

    private static final class StringWriter extends ColumnWriter {
        private final VarCharVector vector;
        private byte[] scratch = new byte[64];

        StringWriter(int pos, VarCharVector vector) {
            super(pos);
            this.vector = vector;
        }

        @Override
        void write(RowData row, int index) {
            if (row.isNullAt(pos)) {
                vector.setNull(index);
            } else if (row instanceof BinaryRowData && BinarySegmentUtils.LITTLE_ENDIAN) {
                writeBinarySlot((BinaryRowData) row, index);
            } else {
                writeStringData(row.getString(pos), index);
            }
        }

        /**
         * Strings of at most 7 UTF-8 bytes sit in the slot itself (mark bit 63, length in bits
         * 56..58, bytes in slot order); longer ones are (offset << 32 | length) into the row.
         */
        private void writeBinarySlot(BinaryRowData row, int index) {
            long slot = row.getLong(pos);
            if (slot < 0) {
                int length = (int) ((slot >>> 56) & 0x7F);
                for (int i = 0; i < length; i++) {
                    scratch[i] = (byte) (slot >>> (i << 3));
                }
                vector.setSafe(index, scratch, 0, length);
            } else {
                int length = (int) slot;
                copyAndSet(row.getSegments(), row.getOffset() + (int) (slot >>> 32), length, index);
            }
        }

        private void writeStringData(StringData value, int index) {
            BinaryStringData string = (BinaryStringData) value;
            // getSegments() materializes a string that only had its Java form.
            MemorySegment[] segments = string.getSegments();
            copyAndSet(segments, string.getOffset(), string.getSizeInBytes(), index);
        }

        private void copyAndSet(MemorySegment[] segments, int offset, int length, int index) {
            if (scratch.length < length) {
                scratch = new byte[Math.max(length, scratch.length * 2)];
            }
            BinarySegmentUtils.copyToBytes(segments, offset, scratch, 0, length);
            vector.setSafe(index, scratch, 0, length);
        }
    }

    /**
     * A two-phase DISTINCT partial (global input): Flink's {@code RAW(MapView)} field read in
     * place, its bytes (what the field's ExternalSerializer wrote: a one-field BinaryRowData
     * holding a BinaryMapData) pointed at, without deserializing a Java map; one list entry per map
     * entry in the serialized order (the sending map's iteration order). Keys are written by the
     * key type's own column writer (through a one-field row), values as the map holds them.
     */
    private static final class ViewWriter extends ColumnWriter {
        private final DistinctViewType view;
        private final ListVector entries;
        private final StructVector entry;
        private final ElementWriter keys;
        private final FieldVector value;
        private final BinaryRowData serialized = new BinaryRowData(1);

        ViewWriter(int pos, DistinctViewType view, ListVector entries) {
            super(pos);
            this.view = view;
            this.entries = entries;
            this.entry = (StructVector) entries.getDataVector();
            this.keys = new ElementWriter(view.keyType(), entry.getChildrenFromFields().get(0));
            this.value = entry.getChildrenFromFields().get(1);
        }

        @Override
        void write(RowData row, int index) {
            if (row.isNullAt(pos)) {
                entries.setNull(index);
                return;
            }
            MapData map = viewRow(row, pos, view.serializer(), serialized).getMap(0);
            ArrayData values = map.valueArray();
            int size = map.size();
            int at = entries.startNewValue(index);
            for (int i = 0; i < size; i++) {
                int slot = at + i;
                keys.write(map.keyArray(), i, slot);
                writeValue(slot, values, i);
                entry.setIndexDefined(slot);
            }
            entries.endValue(index, size);
        }

        private void writeValue(int slot, ArrayData values, int i) {
            if (view.packed()) {
                ((BigIntVector) value).setSafe(slot, values.getLong(i));
                return;
            }
            long[] words = values.getArray(i).toLongArray();
            ListVector lists = (ListVector) value;
            BigIntVector items = (BigIntVector) lists.getDataVector();
            int start = lists.startNewValue(slot);
            for (int w = 0; w < words.length; w++) {
                items.setSafe(start + w, words[w]);
            }
            lists.endValue(slot, words.length);
        }
    }

    /**
     * Writes elements of an {@link ArrayData} into a child vector with the element type's own
     * column writer (through a one-field row).
     */
    private static final class ElementWriter {
        private final ColumnWriter writer;
        private final ArrayData.ElementGetter getter;
        private final GenericRowData holder = new GenericRowData(1);

        ElementWriter(LogicalType type, FieldVector child) {
            this.writer = writerFor(type, 0, child);
            this.getter = ArrayData.createElementGetter(type);
        }

        /** Writes element {@code i} of {@code array} (or its NULL) at {@code slot}. */
        void write(ArrayData array, int i, int slot) {
            if (writer instanceof FixedWidthWriter fixed) {
                fixed.ensure(slot + 1);
            }
            holder.setField(0, getter.getElementOrNull(array, i));
            writer.write(holder, slot);
        }
    }

    /** An ARRAY column: a list of its elements, NULL elements included. */
    private static final class ArrayWriter extends ColumnWriter {
        private final ListVector lists;
        private final ElementWriter elements;

        ArrayWriter(int pos, LogicalType elementType, ListVector lists) {
            super(pos);
            this.lists = lists;
            this.elements = new ElementWriter(elementType, lists.getDataVector());
        }

        @Override
        void write(RowData row, int index) {
            if (row.isNullAt(pos)) {
                lists.setNull(index);
                return;
            }
            writeArray(row.getArray(pos), index);
        }

        /** Writes {@code array}'s elements as list {@code index}. */
        void writeArray(ArrayData array, int index) {
            int size = array.size();
            int at = lists.startNewValue(index);
            for (int i = 0; i < size; i++) {
                elements.write(array, i, at + i);
            }
            lists.endValue(index, size);
        }
    }

    /**
     * A {@code RAW(ListView)} attribute of an accumulator partial (global input): the view's
     * values, read from the bytes its ExternalSerializer wrote (ListView's row of one ARRAY
     * field), as a list.
     */
    private static final class ListViewWriter extends ColumnWriter {
        private final ListViewType view;
        private final ArrayWriter lists;
        private final BinaryRowData serialized = new BinaryRowData(1);

        ListViewWriter(int pos, ListViewType view, ListVector lists) {
            super(pos);
            this.view = view;
            this.lists = new ArrayWriter(pos, view.elementType(), lists);
        }

        @Override
        void write(RowData row, int index) {
            if (row.isNullAt(pos)) {
                lists.write(row, index);
                return;
            }
            lists.writeArray(viewRow(row, pos, view.serializer(), serialized).getArray(0), index);
        }
    }

    /**
     * A structured accumulator partial (global input): Flink's nested row, each attribute written
     * by its own type's writer into the Struct column's child.
     */
    private static final class AccumulatorWriter extends ColumnWriter {
        private final int arity;
        private final StructVector vector;
        private final ColumnWriter[] children;

        AccumulatorWriter(int pos, AccumulatorStructType struct, StructVector vector) {
            super(pos);
            this.arity = struct.arity();
            this.vector = vector;
            this.children = new ColumnWriter[arity];
            List<FieldVector> vectors = vector.getChildrenFromFields();
            for (int i = 0; i < arity; i++) {
                children[i] = writerFor(struct.fieldType(i), i, vectors.get(i));
            }
        }

        @Override
        void write(RowData row, int index) {
            for (ColumnWriter child : children) {
                if (child instanceof FixedWidthWriter fixed) {
                    fixed.ensure(index + 1);
                }
            }
            if (row.isNullAt(pos)) {
                vector.setNull(index);
                return;
            }
            RowData nested = row.getRow(pos, arity);
            for (ColumnWriter child : children) {
                child.write(nested, index);
            }
            vector.setIndexDefined(index);
        }
    }
}
