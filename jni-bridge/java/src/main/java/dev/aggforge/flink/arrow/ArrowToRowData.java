package dev.aggforge.flink.arrow;

import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeStampMilliVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.binary.BinaryArrayData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.binary.BinaryStringData;
import org.apache.flink.table.data.writer.BinaryArrayWriter;
import org.apache.flink.table.data.writer.BinaryRowWriter;
import org.apache.flink.table.data.writer.BinaryWriter;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.table.runtime.typeutils.ArrayDataSerializer;
import org.apache.flink.table.runtime.typeutils.InternalSerializers;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.utils.LogicalTypeChecks;
import org.apache.flink.types.RowKind;

/**
 * Reads an output batch of a native group aggregate (the output row's columns, key columns then
 * result columns, followed by an Int8 {@code $row_kind} column) back into Flink rows.
 *
 * <p>{@link #read(int)} fills and returns one reused {@link BinaryRowData} (the same object on
 * every call), with its {@link RowKind} set. That is the contract Flink's own aggregate
 * operators follow for their output rows: a consumer that keeps a row copies it (Flink's chaining
 * copies rows unless object reuse is on, and its operators copy what they store). Fixed-width
 * fields, compact DECIMAL and TIMESTAMP(p &lt;= 3) are written without per-row allocation; strings
 * allocate a small wrapper, non-compact DECIMAL and TIMESTAMP(p &gt; 3) a value object (as
 * Flink's getters do).
 *
 * <p>Not thread-safe.
 */
public final class ArrowToRowData {

    private final RowType outputType;
    private final Field[] expected;
    private final ColumnReader[] readers;
    private final BinaryRowData row;
    private final BinaryRowWriter writer;
    private TinyIntVector rowKind;
    private int rowCount;

    /** Creates a reader for batches whose value columns are the fields of {@code outputType}. */
    public ArrowToRowData(RowType outputType) {
        this.outputType = outputType;
        int arity = outputType.getFieldCount();
        this.expected = new Field[arity];
        this.readers = new ColumnReader[arity];
        for (int i = 0; i < arity; i++) {
            expected[i] =
                    ArrowTypes.fieldFor(outputType.getFieldNames().get(i), outputType.getTypeAt(i));
            readers[i] = readerFor(outputType.getTypeAt(i), i);
        }
        this.row = new BinaryRowData(arity);
        this.writer = new BinaryRowWriter(row);
    }

    /**
     * Binds a batch. Its first columns must be the output row's fields in order, with the Arrow
     * types of {@link ArrowTypes}; the {@code $row_kind} column must be present.
     *
     * @throws IllegalArgumentException if the batch does not have that layout
     */
    public void bind(VectorSchemaRoot batch) {
        List<FieldVector> vectors = batch.getFieldVectors();
        if (vectors.size() != readers.length + 1) {
            throw new IllegalArgumentException(
                    "output batch has "
                            + vectors.size()
                            + " columns, expected "
                            + readers.length
                            + " value columns and "
                            + ArrowTypes.ROW_KIND
                            + " for "
                            + outputType);
        }
        for (int i = 0; i < readers.length; i++) {
            FieldVector vector = vectors.get(i);
            if (!sameLayout(expected[i], vector.getField())) {
                throw new IllegalArgumentException(
                        "output column "
                                + i
                                + " is "
                                + vector.getField()
                                + " but "
                                + outputType.getTypeAt(i)
                                + " needs "
                                + expected[i]);
            }
            readers[i].bind(vector);
        }
        FieldVector kinds = vectors.get(readers.length);
        if (!(kinds instanceof TinyIntVector) || !ArrowTypes.ROW_KIND.equals(kinds.getName())) {
            throw new IllegalArgumentException(
                    "the last output column must be Int8 "
                            + ArrowTypes.ROW_KIND
                            + ", found "
                            + kinds.getField());
        }
        this.rowKind = (TinyIntVector) kinds;
        this.rowCount = batch.getRowCount();
    }

    /** Rows in the bound batch. */
    public int rowCount() {
        return rowCount;
    }

    /**
     * Returns row {@code index} of the bound batch, in the reused row object.
     *
     * @throws IllegalArgumentException if the row-kind byte is not a Flink RowKind
     */
    public RowData read(int index) {
        writer.reset();
        for (ColumnReader reader : readers) {
            reader.read(index, writer);
        }
        writer.complete();
        row.setRowKind(RowKind.fromByteValue(rowKind.get(index)));
        return row;
    }

    private static boolean sameLayout(Field want, Field have) {
        if (!want.getType().equals(have.getType())) {
            return false;
        }
        List<Field> wantChildren = want.getChildren();
        List<Field> haveChildren = have.getChildren();
        if (wantChildren.size() != haveChildren.size()) {
            return false;
        }
        // A list's item is named as each Arrow library names it ("item", Java's "$data$").
        boolean list = want.getType() instanceof ArrowType.List;
        for (int i = 0; i < wantChildren.size(); i++) {
            if ((!list && !wantChildren.get(i).getName().equals(haveChildren.get(i).getName()))
                    || !sameLayout(wantChildren.get(i), haveChildren.get(i))) {
                return false;
            }
        }
        return true;
    }

    // ------------------------------------------------------------------------------------------

    private static ColumnReader readerFor(LogicalType type, int pos) {
        Optional<DistinctViewType> view = DistinctViewType.of(type);
        if (view.isPresent()) {
            return new ViewReader(pos, view.get());
        }
        Optional<AccumulatorStructType> struct = AccumulatorStructType.of(type);
        if (struct.isPresent()) {
            return new AccumulatorReader(pos, struct.get());
        }
        Optional<ListViewType> list = ListViewType.of(type);
        if (list.isPresent()) {
            return new ListViewReader(pos, list.get());
        }
        switch (ArrowTypes.requireLayout(type)) {
            case INT8:
                return new ColumnReader(pos) {
                    @Override
                    void value(int index, BinaryRowWriter out) {
                        out.writeByte(pos, ((TinyIntVector) vector).get(index));
                    }
                };
            case INT16:
                return new ColumnReader(pos) {
                    @Override
                    void value(int index, BinaryRowWriter out) {
                        out.writeShort(pos, ((SmallIntVector) vector).get(index));
                    }
                };
            case INT32:
                return new ColumnReader(pos) {
                    @Override
                    void value(int index, BinaryRowWriter out) {
                        out.writeInt(pos, ((IntVector) vector).get(index));
                    }
                };
            case DATE32:
                return new ColumnReader(pos) {
                    @Override
                    void value(int index, BinaryRowWriter out) {
                        out.writeInt(pos, ((DateDayVector) vector).get(index));
                    }
                };
            case TIME32_MILLISECOND:
                return new ColumnReader(pos) {
                    @Override
                    void value(int index, BinaryRowWriter out) {
                        out.writeInt(pos, ((TimeMilliVector) vector).get(index));
                    }
                };
            case INT64:
                return new ColumnReader(pos) {
                    @Override
                    void value(int index, BinaryRowWriter out) {
                        out.writeLong(pos, ((BigIntVector) vector).get(index));
                    }
                };
            case FLOAT32:
                return new ColumnReader(pos) {
                    @Override
                    void value(int index, BinaryRowWriter out) {
                        out.writeFloat(pos, ((Float4Vector) vector).get(index));
                    }
                };
            case FLOAT64:
                return new ColumnReader(pos) {
                    @Override
                    void value(int index, BinaryRowWriter out) {
                        out.writeDouble(pos, ((Float8Vector) vector).get(index));
                    }
                };
            case BOOLEAN:
                return new ColumnReader(pos) {
                    @Override
                    void value(int index, BinaryRowWriter out) {
                        out.writeBoolean(pos, ((BitVector) vector).get(index) != 0);
                    }
                };
            case DECIMAL128:
                return new DecimalReader(
                        pos, ArrowTypes.precision(type), LogicalTypeChecks.getScale(type));
            case TIMESTAMP_MILLISECOND:
                // Compact timestamps (precision <= 3, the only ones this layout holds) are the
                // epoch millis in the slot, as written by BinaryRowWriter.writeTimestamp.
                return new ColumnReader(pos) {
                    @Override
                    void value(int index, BinaryRowWriter out) {
                        out.writeLong(pos, ((TimeStampMilliVector) vector).get(index));
                    }
                };
            case STRUCT_TIMESTAMP:
                return new TimestampStructReader(pos, ArrowTypes.precision(type));
            case UTF8:
                return new StringReader(pos);
            case LIST:
                return new ArrayReader(pos, ArrowTypes.elementType(type));
            default:
                throw new ArrowTypes.UnsupportedTypeException(type);
        }
    }

    /** Copies one column of the bound batch into the row writer. */
    private abstract static class ColumnReader {
        final int pos;
        FieldVector vector;

        ColumnReader(int pos) {
            this.pos = pos;
        }

        void bind(FieldVector vector) {
            this.vector = vector;
        }

        final void read(int index, BinaryRowWriter out) {
            if (vector.isNull(index)) {
                writeNull(out);
            } else {
                value(index, out);
            }
        }

        void writeNull(BinaryRowWriter out) {
            out.setNullAt(pos);
        }

        abstract void value(int index, BinaryRowWriter out);
    }

    private static final class DecimalReader extends ColumnReader {
        private final int precision;
        private final int scale;
        private final boolean compact;

        DecimalReader(int pos, int precision, int scale) {
            super(pos);
            this.precision = precision;
            this.scale = scale;
            this.compact = DecimalData.isCompact(precision);
        }

        @Override
        void writeNull(BinaryRowWriter out) {
            if (compact) {
                out.setNullAt(pos);
            } else {
                out.writeDecimal(pos, null, precision); // reserves the var-part slot
            }
        }

        @Override
        void value(int index, BinaryRowWriter out) {
            DecimalVector decimals = (DecimalVector) vector;
            ArrowBuf data = decimals.getDataBuffer();
            long offset = (long) index * DecimalVector.TYPE_WIDTH;
            long low = data.getLong(offset);
            long high = data.getLong(offset + 8);
            boolean fitsLong = high == (low >> 63);
            if (compact) {
                if (!fitsLong) {
                    throw new IllegalArgumentException(
                            "DECIMAL(" + precision + ", " + scale + ") value at row " + index
                                    + " does not fit its precision");
                }
                out.writeLong(pos, low);
            } else {
                // An unscaled value that fits a long becomes a long-backed BigDecimal, whose
                // precision is cheap to check; only wider ones go through BigInteger.
                BigDecimal exact =
                        fitsLong
                                ? BigDecimal.valueOf(low, decimals.getScale())
                                : decimals.getObjectNotNull(index);
                DecimalData value = DecimalData.fromBigDecimal(exact, precision, scale);
                if (value == null) {
                    throw new IllegalArgumentException(
                            "DECIMAL(" + precision + ", " + scale + ") value at row " + index
                                    + " does not fit its precision");
                }
                out.writeDecimal(pos, value, precision);
            }
        }
    }

    private static final class TimestampStructReader extends ColumnReader {
        private final int precision;
        private BigIntVector millis;
        private IntVector nanos;

        TimestampStructReader(int pos, int precision) {
            super(pos);
            this.precision = precision;
        }

        @Override
        void bind(FieldVector vector) {
            super.bind(vector);
            StructVector struct = (StructVector) vector;
            this.millis = (BigIntVector) struct.getChild(ArrowTypes.TS_MILLIS);
            this.nanos = (IntVector) struct.getChild(ArrowTypes.TS_NANOS);
        }

        @Override
        void writeNull(BinaryRowWriter out) {
            out.writeTimestamp(pos, null, precision); // reserves the var-part slot
        }

        @Override
        void value(int index, BinaryRowWriter out) {
            out.writeTimestamp(
                    pos,
                    TimestampData.fromEpochMillis(millis.get(index), nanos.get(index)),
                    precision);
        }
    }

    private static final class StringReader extends ColumnReader {
        private byte[] scratch = new byte[64];
        private MemorySegment[] segments = {MemorySegmentFactory.wrap(scratch)};

        StringReader(int pos) {
            super(pos);
        }

        @Override
        void value(int index, BinaryRowWriter out) {
            VarCharVector strings = (VarCharVector) vector;
            ArrowBuf offsets = strings.getOffsetBuffer();
            int start = offsets.getInt((long) index * VarCharVector.OFFSET_WIDTH);
            int end = offsets.getInt((long) (index + 1) * VarCharVector.OFFSET_WIDTH);
            int length = end - start;
            if (scratch.length < length) {
                scratch = new byte[Math.max(length, scratch.length * 2)];
                segments = new MemorySegment[] {MemorySegmentFactory.wrap(scratch)};
            }
            strings.getDataBuffer().getBytes(start, scratch, 0, length);
            out.writeString(pos, BinaryStringData.fromAddress(segments, 0, length));
        }
    }

    /**
     * An ARRAY column: each element read by the element type's own reader (through a one-field
     * row) and written into a {@link BinaryArrayData} as ArrayDataSerializer.toBinaryArray writes
     * it, so the output row holds the bytes Flink's own operator would emit.
     */
    private static final class ArrayReader extends ColumnReader {
        private final LogicalType elementType;
        private final int elementSize;
        private final ColumnReader elementReader;
        private final RowData.FieldGetter elementGetter;
        private final TypeSerializer<?> elementSerializer;
        private final ArrayDataSerializer serializer;
        private final BinaryRowData holder = new BinaryRowData(1);
        private final BinaryRowWriter holderWriter = new BinaryRowWriter(holder);

        ArrayReader(int pos, LogicalType elementType) {
            super(pos);
            this.elementType = elementType;
            this.elementSize = BinaryArrayData.calculateFixLengthPartSize(elementType);
            this.elementReader = readerFor(elementType, 0);
            this.elementGetter = RowData.createFieldGetter(elementType, 0);
            this.elementSerializer = InternalSerializers.create(elementType);
            this.serializer = new ArrayDataSerializer(elementType);
        }

        @Override
        void bind(FieldVector vector) {
            super.bind(vector);
            elementReader.bind(((ListVector) vector).getDataVector());
        }

        @Override
        void value(int index, BinaryRowWriter out) {
            out.writeArray(pos, array(index), serializer);
        }

        /** List {@code index} of the bound column as Flink's BinaryArrayData. */
        BinaryArrayData array(int index) {
            ListVector list = (ListVector) vector;
            int start = list.getElementStartIndex(index);
            int end = list.getElementEndIndex(index);
            BinaryArrayData array = new BinaryArrayData();
            BinaryArrayWriter writer = new BinaryArrayWriter(array, end - start, elementSize);
            for (int e = start; e < end; e++) {
                holderWriter.reset();
                elementReader.read(e, holderWriter);
                holderWriter.complete();
                Object element = elementGetter.getFieldOrNull(holder);
                if (element == null) {
                    writer.setNullAt(e - start, elementType);
                } else {
                    BinaryWriter.write(writer, e - start, element, elementType, elementSerializer);
                }
            }
            writer.complete();
            return array;
        }
    }

    /**
     * A {@code RAW(ListView)} attribute of an accumulator partial (local output): the list's
     * values written as the bytes the field's ExternalSerializer writes for a ListView holding
     * them (ListView's row of one ARRAY field behind BinaryRowDataSerializer's length), so Flink's
     * exchange and global phase read it as Flink's local phase wrote it.
     */
    private static final class ListViewReader extends ColumnReader {
        private final ListViewType view;
        private final ArrayReader values;
        private final ArrayDataSerializer arraySerializer;
        private final ViewBytes.RawRowBytes bytes = new ViewBytes.RawRowBytes();

        ListViewReader(int pos, ListViewType view) {
            super(pos);
            this.view = view;
            this.values = new ArrayReader(0, view.elementType());
            this.arraySerializer = new ArrayDataSerializer(view.elementType());
        }

        @Override
        void bind(FieldVector vector) {
            super.bind(vector);
            values.bind(vector);
        }

        @Override
        void value(int index, BinaryRowWriter out) {
            BinaryArrayData array = values.array(index);
            out.writeRawValue(
                    pos,
                    bytes.of(row -> row.writeArray(0, array, arraySerializer), "a ListView partial"),
                    view.serializer());
        }
    }

    /**
     * A two-phase DISTINCT partial (local output): the list's entries, in list order, written as
     * the bytes of Flink's RAW(MapView) field ({@link ViewBytes}), so Flink's exchange and global
     * phase read it as Flink's local phase wrote it: the runtime lists a view's entries in the
     * order its Java map would iterate them where that order matters. Keys are read by the key
     * type's own column reader (through a one-field row).
     */
    private static final class ViewReader extends ColumnReader {
        private final DistinctViewType view;
        private final ColumnReader keyReader;
        private final RowData.FieldGetter keyGetter;
        private final BinaryRowData holder = new BinaryRowData(1);
        private final BinaryRowWriter holderWriter = new BinaryRowWriter(holder);
        private final ViewBytes bytes;
        private FieldVector value;

        ViewReader(int pos, DistinctViewType view) {
            super(pos);
            this.view = view;
            this.keyReader = readerFor(view.keyType(), 0);
            this.keyGetter = RowData.createFieldGetter(view.keyType(), 0);
            this.bytes = new ViewBytes(view.keyType(), view.valueType());
        }

        @Override
        void bind(FieldVector vector) {
            super.bind(vector);
            StructVector entry = (StructVector) ((ListVector) vector).getDataVector();
            keyReader.bind(entry.getChildrenFromFields().get(0));
            value = entry.getChildrenFromFields().get(1);
        }

        @Override
        void value(int index, BinaryRowWriter out) {
            ListVector list = (ListVector) vector;
            int start = list.getElementStartIndex(index);
            int end = list.getElementEndIndex(index);
            bytes.start(end - start);
            for (int e = start; e < end; e++) {
                holderWriter.reset();
                keyReader.read(e, holderWriter);
                holderWriter.complete();
                bytes.entry(e - start, keyGetter.getFieldOrNull(holder), valueAt(e));
            }
            out.writeRawValue(pos, bytes.finish(), view.serializer());
        }

        private Object valueAt(int e) {
            if (view.packed()) {
                return ((BigIntVector) value).get(e);
            }
            ListVector lists = (ListVector) value;
            BigIntVector items = (BigIntVector) lists.getDataVector();
            int start = lists.getElementStartIndex(e);
            long[] words = new long[lists.getElementEndIndex(e) - start];
            for (int i = 0; i < words.length; i++) {
                words[i] = items.get(start + i);
            }
            return new GenericArrayData(words);
        }
    }

    /**
     * A structured accumulator partial (local output): the Struct column's children read by their
     * own types' readers into a nested {@link BinaryRowData}, Flink's internal form of the
     * accumulator, written as the row's field.
     */
    private static final class AccumulatorReader extends ColumnReader {
        private final ColumnReader[] children;
        private final BinaryRowData nested;
        private final BinaryRowWriter nestedWriter;
        private final RowDataSerializer serializer;

        AccumulatorReader(int pos, AccumulatorStructType struct) {
            super(pos);
            this.children = new ColumnReader[struct.arity()];
            for (int i = 0; i < children.length; i++) {
                children[i] = readerFor(struct.fieldType(i), i);
            }
            this.nested = new BinaryRowData(children.length);
            this.nestedWriter = new BinaryRowWriter(nested);
            this.serializer = new RowDataSerializer(struct.fieldTypes());
        }

        @Override
        void bind(FieldVector vector) {
            super.bind(vector);
            List<FieldVector> vectors = ((StructVector) vector).getChildrenFromFields();
            for (int i = 0; i < children.length; i++) {
                children[i].bind(vectors.get(i));
            }
        }

        @Override
        void value(int index, BinaryRowWriter out) {
            nestedWriter.reset();
            for (ColumnReader child : children) {
                child.read(index, nestedWriter);
            }
            nestedWriter.complete();
            out.writeRow(pos, nested, serializer);
        }
    }
}
