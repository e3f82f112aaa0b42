package dev.aggforge.flink.arrow;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.table.data.ArrayData;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.ExternalSerializer;
import org.apache.flink.table.types.DataType;
import org.apache.flink.util.InstantiationUtil;
import org.junit.jupiter.api.Test;

/**
 * {@link ViewBytes} writes the bytes Flink's own serializer writes for the same MapView: for key
 * types with fixed-width, compact and variable-length binary forms, NULL keys, and both value
 * forms (a BIGINT of bits or counts, an ARRAY of BIGINT).
 */
class ViewBytesTest {

    @Test
    void everyKeyFormWritesFlinksBytes() throws Exception {
        List<Object> longs = new ArrayList<>();
        for (long v = -40; v < 40; v++) {
            longs.add(v * 1_000_003L);
        }
        longs.add(null);
        assertSameBytes(DataTypes.BIGINT().bridgedTo(Long.class), longs);
        assertSameBytes(
                DataTypes.DOUBLE().bridgedTo(Double.class),
                List.of(1.5, -0.0, 0.0, Double.NaN, 1e300, -7.25));
        assertSameBytes(DataTypes.INT().bridgedTo(Integer.class), List.of(1, -2, 3));
        assertSameBytes(DataTypes.BOOLEAN().bridgedTo(Boolean.class), List.of(true, false));
        assertSameBytes(
                DataTypes.STRING().bridgedTo(StringData.class),
                List.of(
                        StringData.fromString("a"),
                        StringData.fromString("seven77"),
                        StringData.fromString("eight888"),
                        StringData.fromString("a rather longer string, é and ü")));
        assertSameBytes(
                DataTypes.DECIMAL(10, 2).bridgedTo(DecimalData.class),
                List.of(decimal("1.50", 10, 2), decimal("-99999999.99", 10, 2)));
        assertSameBytes(
                DataTypes.DECIMAL(38, 0).bridgedTo(DecimalData.class),
                List.of(
                        decimal("60000000000000000000000000000000000007", 38, 0),
                        decimal("-3", 38, 0)));
        assertSameBytes(
                DataTypes.TIMESTAMP(3).bridgedTo(TimestampData.class),
                List.of(TimestampData.fromEpochMillis(1_700_000_000_123L)));
        assertSameBytes(
                DataTypes.TIMESTAMP(9).bridgedTo(TimestampData.class),
                List.of(TimestampData.fromEpochMillis(-5, 999_999), TimestampData.fromEpochMillis(7)));
    }

    private static DecimalData decimal(String value, int precision, int scale) {
        return DecimalData.fromBigDecimal(new BigDecimal(value), precision, scale);
    }

    /** Both value forms over {@code keys}, in a HashMap's order. */
    private static void assertSameBytes(DataType keyType, List<Object> keys) throws Exception {
        Map<Object, Object> bits = new HashMap<>();
        Map<Object, Object> words = new HashMap<>();
        long n = 0;
        for (Object key : keys) {
            bits.put(key, ++n);
            words.put(key, new GenericArrayData(new long[] {n, -n, 0}));
        }
        assertSameBytes(keyType, DataTypes.BIGINT().bridgedTo(Long.class), bits);
        assertSameBytes(
                keyType,
                DataTypes.ARRAY(DataTypes.BIGINT().notNull()).bridgedTo(ArrayData.class),
                words);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void assertSameBytes(DataType keyType, DataType valueType, Map<Object, Object> map)
            throws Exception {
        TypeSerializer<MapView<Object, Object>> flink =
                (TypeSerializer) ExternalSerializer.of(MapView.newMapViewDataType(keyType, valueType));
        MapView<Object, Object> view = new MapView<>();
        view.setMap(map);
        byte[] expected = InstantiationUtil.serializeToByteArray(flink, view);

        ViewBytes bytes = new ViewBytes(keyType.getLogicalType(), valueType.getLogicalType());
        for (int round = 0; round < 2; round++) {
            bytes.start(map.size());
            int i = 0;
            for (Map.Entry<Object, Object> e : map.entrySet()) {
                bytes.entry(i++, e.getKey(), e.getValue());
            }
            byte[] actual = bytes.finish().toBytes(null);
            assertArrayEquals(expected, actual, keyType + " -> " + valueType + ", round " + round);
        }
        MapView<Object, Object> back =
                InstantiationUtil.deserializeFromByteArray(flink, expected);
        assertEquals(map.size(), back.getMap().size());
    }
}
