package dev.aggforge.flink.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.flink.table.data.ArrayData;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryArrayData;
import org.apache.flink.table.runtime.typeutils.ArrayDataSerializer;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * ARRAY columns (group keys) through both transposes: every element type of the type rows, NULL
 * elements, NULL and empty arrays, from generic and binary rows. What comes back must be the
 * BinaryArrayData Flink's own serializer makes of the input array, byte for byte.
 */
class ArrayTransposeTest {

    private static final RowType ARRAYS;

    static {
        RowType all = TransposeRoundTripTest.ALL;
        LogicalType[] types = new LogicalType[all.getFieldCount()];
        String[] names = new String[types.length];
        for (int i = 0; i < types.length; i++) {
            types[i] = new ArrayType(all.getTypeAt(i));
            names[i] = "a_" + all.getFieldNames().get(i);
        }
        ARRAYS = RowType.of(types, names);
    }

    private BufferAllocator allocator;

    @BeforeEach
    void open() {
        allocator = new RootAllocator(Long.MAX_VALUE);
    }

    @AfterEach
    void close() {
        assertEquals(0, allocator.getAllocatedMemory(), "leaked Arrow memory");
        allocator.close();
    }

    @Test
    void arraysOfEveryElementTypeRoundTripAsFlinksBinaryArrays() {
        List<RowData> rows = arrayRows(120, 5);
        RowDataSerializer serializer = new RowDataSerializer(ARRAYS);
        List<RowData> binary = new ArrayList<>();
        for (RowData row : rows) {
            binary.add(serializer.toBinaryRow(row).copy());
        }
        roundTrip(rows, rows);
        roundTrip(binary, rows);
    }

    @Test
    void listFieldsNameTheirItemAndHoldTheElementLayout() {
        Field field = ArrowTypes.fieldFor("k", ARRAYS.getTypeAt(2));
        assertTrue(field.getType() instanceof ArrowType.List);
        assertEquals(1, field.getChildren().size());
        assertEquals(new ArrowType.Int(32, true), field.getChildren().get(0).getType());
        assertTrue(field.getChildren().get(0).isNullable());
        assertFalse(
                ArrowTypes.isSupported(new ArrayType(new ArrayType(new IntType()))),
                "nested arrays have no layout");
    }

    private void roundTrip(List<RowData> input, List<RowData> expected) {
        int[] all = new int[ARRAYS.getFieldCount()];
        for (int i = 0; i < all.length; i++) {
            all[i] = i;
        }
        ArrowToRowData reader = new ArrowToRowData(ARRAYS);
        try (RowDataToArrow writer = new RowDataToArrow(allocator, ARRAYS, all, true, 4)) {
            for (RowData row : input) {
                writer.append(row);
            }
            VectorSchemaRoot batch = writer.finish();
            assertTrue(batch.getVector(0) instanceof ListVector);
            reader.bind(batch);
            for (int r = 0; r < input.size(); r++) {
                RowData back = reader.read(r);
                assertEquals(expected.get(r).getRowKind(), back.getRowKind());
                for (int c = 0; c < all.length; c++) {
                    LogicalType element = ((ArrayType) ARRAYS.getTypeAt(c)).getElementType();
                    RowData want = expected.get(r);
                    assertEquals(want.isNullAt(c), back.isNullAt(c), "row " + r + " column " + c);
                    if (want.isNullAt(c)) {
                        continue;
                    }
                    BinaryArrayData flink =
                            new ArrayDataSerializer(element).toBinaryArray(want.getArray(c));
                    ArrayData ours = back.getArray(c);
                    assertEquals(flink, ours, "row " + r + " " + ARRAYS.getFieldNames().get(c));
                }
            }
        }
    }

    /**
     * Rows of arrays: each array takes the field of its element type from 0..5 rows of the
     * transpose test's seeded rows (NULL fields become NULL elements); every seventh array is NULL.
     */
    private static List<RowData> arrayRows(int count, long seed) {
        RowType all = TransposeRoundTripTest.ALL;
        List<RowData> sources = TransposeRoundTripTest.rows(400, seed);
        Random random = new Random(seed);
        List<RowData> rows = new ArrayList<>();
        RowKind[] kinds = RowKind.values();
        for (int r = 0; r < count; r++) {
            GenericRowData row = new GenericRowData(kinds[r % kinds.length], all.getFieldCount());
            for (int c = 0; c < all.getFieldCount(); c++) {
                if ((r + c) % 7 == 3) {
                    continue;
                }
                RowData.FieldGetter getter = RowData.createFieldGetter(all.getTypeAt(c), c);
                Object[] elements = new Object[random.nextInt(6)];
                for (int e = 0; e < elements.length; e++) {
                    elements[e] = getter.getFieldOrNull(sources.get(random.nextInt(sources.size())));
                }
                row.setField(c, new GenericArrayData(elements));
            }
            rows.add(row);
        }
        return rows;
    }
}
