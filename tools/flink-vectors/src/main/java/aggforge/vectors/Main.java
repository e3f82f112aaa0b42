package aggforge.vectors;

import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.binary.BinaryStringData;
import org.apache.flink.table.data.writer.BinaryRowWriter;
import org.apache.flink.table.runtime.typeutils.ArrayDataSerializer;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.utils.LogicalTypeParser;

import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Writes test vectors for aggforge's Flink key hashing from real Flink classes: for each key tuple
 * the BinaryRowData bytes that BinaryRowWriter writes (as the planner's generated key projection
 * calls it), BinaryRowData.hashCode(), the key groups for max parallelism 128 and 4096, and the
 * iteration order of a java.util.HashMap filled with the keys in order. Also writes HashMap
 * iteration orders for keys with chosen hash codes (collisions, tree bins, a map reused across
 * bundles after clear()).
 *
 * <p>Usage: {@code java -cp ... aggforge.vectors.Main OUTPUT_FILE}. The value encoding is described
 * in the file's header.
 */
public final class Main {

    private final PrintStream out;

    private Main(PrintStream out) {
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: Main OUTPUT_FILE");
            System.exit(2);
        }
        try (PrintStream ps = new PrintStream(args[0], StandardCharsets.UTF_8)) {
            Main m = new Main(ps);
            m.header();
            m.keySets();
            m.hashOnlyMaps();
        }
    }

    private void header() {
        out.println("# Flink key vectors, produced by tools/flink-vectors (Flink "
                + org.apache.flink.runtime.util.EnvironmentInformation.getVersion() + ", "
                + System.getProperty("java.version") + "). Do not edit.");
        out.println("# set<TAB>name<TAB>type;type;...   key column SQL types");
        out.println("# key<TAB>set<TAB>index<TAB>v;v;...<TAB>row bytes hex<TAB>hashCode<TAB>key group @128<TAB>key group @4096");
        out.println("# order<TAB>set<TAB>i,j,...        HashMap<BinaryRowData> iteration order of the set's keys");
        out.println("# hashmap<TAB>scenario<TAB>bundle<TAB>hashCodes<TAB>iteration order   one map reused, clear() between bundles");
        out.println("# values: N null; integers, DATE days, TIME millis, TIMESTAMP(p<=3) millis as decimal;");
        out.println("#   f:/d: raw IEEE bits hex; DECIMAL unscaled decimal; TIMESTAMP(p>3) millis:nanos;");
        out.println("#   true/false; strings s:UTF-8 hex; ARRAY [v|v|...] in its element's encoding");
    }

    // ---------------------------------------------------------------- key rows

    private static final String N = null;

    private void keySets() {
        single("tinyint", "TINYINT", "-128", "-1", "0", "1", "127", N);
        single("smallint", "SMALLINT", "-32768", "-1", "0", "1", "300", "32767", N);
        single("int", "INT", "-2147483648", "-1", "0", "1", "42", "65536", "2147483647", N);
        single("bigint", "BIGINT", "-9223372036854775808", "-1", "0", "1", "4294967296",
                "9223372036854775807", N);
        single("float", "FLOAT", fbits(0.0f), fbits(-0.0f), fbits(1.5f), fbits(-2.25f),
                fbits(Float.NaN), fbits(Float.POSITIVE_INFINITY), fbits(Float.NEGATIVE_INFINITY),
                fbits(Float.MIN_VALUE), N);
        single("double", "DOUBLE", dbits(0.0), dbits(-0.0), dbits(1.5), dbits(-1e300),
                dbits(Double.NaN), dbits(Double.POSITIVE_INFINITY), dbits(Double.MIN_VALUE), N);
        single("decimal_10_2", "DECIMAL(10, 2)", "0", "1", "-1", "12345", "-12345",
                "9999999999", "-9999999999", N);
        single("decimal_18_0", "DECIMAL(18, 0)", "999999999999999999", "-999999999999999999",
                "7", N);
        single("decimal_20_3", "DECIMAL(20, 3)", "0", "1", "-1", "127", "128", "-128", "-129",
                "255", "256", "-12345678901234567", "99999999999999999999",
                "-99999999999999999999", N);
        single("decimal_38_10", "DECIMAL(38, 10)", "0", "-5",
                "99999999999999999999999999999999999999",
                "-99999999999999999999999999999999999999",
                "170141183460469231731687303715884105", N);
        single("date", "DATE", "0", "-1", "19000", "-719162", "2932896", N);
        single("time0", "TIME(0)", "0", "1000", "86399000", N);
        single("time3", "TIME(3)", "0", "1", "43200123", "86399999", N);
        single("timestamp0", "TIMESTAMP(0)", "0", "-1000", "1700000000000", N);
        single("timestamp3", "TIMESTAMP(3)", "0", "-1", "1700000000123", "-62135596800000",
                "253402300799999", N);
        single("timestamp6", "TIMESTAMP(6)", "0:0", "0:999000", "-1:1000", "1700000000123:456000",
                "-62135596800000:0", "253402300799999:999000", N);
        single("timestamp9", "TIMESTAMP(9)", "0:1", "1700000000123:456789",
                "-1700000000123:999999", N);
        single("boolean", "BOOLEAN", "true", "false", N);
        single("varchar", "VARCHAR(200)", str(""), str("a"), str("abcdefg"), str("abcdefgh"),
                str("x".repeat(100)), str("hello world, this is 33 bytes!!!!"), str("é"),
                str("日本語テキスト"), str("\uD83D\uDE00 smile"), str("1234567"), N);
        single("char", "CHAR(5)", str("ab   "), str("abcde"), str("     "), N);
        single("string", "STRING", str(""), str("k".repeat(8)), str("k".repeat(7)),
                str("k".repeat(16)), str("k".repeat(17)), N);

        multi("int_varchar", new String[] {"INT", "VARCHAR(50)"},
                new String[][] {
                    {"1", str("a")}, {"1", str("b")}, {"2", str("a")}, {"1", str("abcdefghij")},
                    {N, str("a")}, {"1", N}, {N, N}, {"-7", str("")},
                });
        multi("mixed", new String[] {"VARCHAR(100)", "BIGINT", "DECIMAL(20, 2)", "TIMESTAMP(6)",
                "BOOLEAN", "DATE"},
                new String[][] {
                    {str("first key long string"), "1", "12345", "1700000000000:1000", "true", "19000"},
                    {str("short"), "-1", "-1", "0:0", "false", "0"},
                    {N, N, N, N, N, N},
                    {str("x"), "5", N, "5:5", N, "1"},
                    {N, "5", "-99999999999999999999", N, "true", N},
                    {str("eight888"), "0", "0", "-1:999999", "false", "-1"},
                });
        multi("decimals_timestamps", new String[] {"DECIMAL(19, 0)", "TIMESTAMP(3)",
                "DECIMAL(5, 2)", "TIMESTAMP(9)", "TIME(3)", "SMALLINT", "TINYINT", "FLOAT",
                "DOUBLE"},
                new String[][] {
                    {"1", "1", "1", "1:1", "1", "1", "1", fbits(1f), dbits(1d)},
                    {N, "1", N, N, N, "1", N, fbits(-0.0f), N},
                    {"-1000000000000000000", N, "-99999", "0:0", "0", N, "-1", N, dbits(-0.0)},
                });
        // Arity 60: the null bit set spans two words.
        String[] wideTypes = new String[60];
        Arrays.fill(wideTypes, "INT");
        String[][] wideRows = new String[4][60];
        for (int r = 0; r < wideRows.length; r++) {
            for (int c = 0; c < 60; c++) {
                wideRows[r][c] = ((c * 7 + r) % 11 == 0) ? N : Integer.toString(c * 1000 + r);
            }
        }
        multi("wide60", wideTypes, wideRows);

        // Many keys: exercises resizes of the HashMap with real BinaryRowData keys.
        Random rnd = new Random(20240607L);
        Set<String> seen = new HashSet<>();
        List<String[]> rows = new ArrayList<>();
        while (rows.size() < 3000) {
            String a = rnd.nextInt(10) == 0 ? N : Long.toString(rnd.nextLong() % 100000L);
            int len = rnd.nextInt(20);
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < len; i++) {
                sb.append((char) ('a' + rnd.nextInt(26)));
            }
            String b = rnd.nextInt(10) == 0 ? N : str(sb.toString());
            if (seen.add(a + "|" + b)) {
                rows.add(new String[] {a, b});
            }
        }
        multi("random_bigint_varchar", new String[] {"BIGINT", "STRING"},
                rows.toArray(new String[0][]));
        Set<String> ints = new LinkedHashSet<>();
        while (ints.size() < 2000) {
            ints.add(Integer.toString(rnd.nextInt(1_000_000) - 500_000));
        }
        single("random_int", "INT", ints.toArray(new String[0]));
        arraySets(rnd);
    }

    /** ARRAY keys: every element type, NULL elements and arrays, empty arrays, long arrays. */
    private void arraySets(Random rnd) {
        StringBuilder longInts = new StringBuilder("[");
        for (int i = 0; i < 40; i++) {
            longInts.append(i == 0 ? "" : "|").append(i % 9 == 4 ? "N" : Integer.toString(i * 3));
        }
        longInts.append(']');
        single("array_int", "ARRAY<INT>", "[]", "[0]", "[1]", "[1|2|3]", "[N]", "[1|N|3]",
                "[N|N]", longInts.toString(), N);
        single("array_tinyint", "ARRAY<TINYINT>", "[]", "[-128|127]", "[1|N|1|N|1|N|1|N|1]", N);
        single("array_smallint", "ARRAY<SMALLINT>", "[-32768|0|32767]", "[N|5]", "[7]");
        single("array_bigint", "ARRAY<BIGINT>", "[]", "[-9223372036854775808|9223372036854775807]",
                "[N]", "[1|2|3|4|5]", N);
        single("array_float", "ARRAY<FLOAT>",
                "[" + fbits(0.0f) + "|" + fbits(-0.0f) + "]",
                "[" + fbits(Float.NaN) + "]",
                "[" + fbits(Float.intBitsToFloat(0xffc00000)) + "|N]",
                "[" + fbits(1.5f) + "|" + fbits(Float.NEGATIVE_INFINITY) + "|" + fbits(2f) + "]");
        // BinaryArrayWriter writes any NaN as Float.NaN / Double.NaN (a row field keeps its bits).
        single("array_float_nan_payload", "ARRAY<FLOAT>",
                "[" + fbits(Float.intBitsToFloat(0x7fc00001)) + "]");
        single("array_double", "ARRAY<DOUBLE>",
                "[" + dbits(0.0) + "|" + dbits(-0.0) + "]",
                "[" + dbits(Double.NaN) + "|N]",
                "[" + dbits(1e300) + "]");
        single("array_double_nan_payload", "ARRAY<DOUBLE>",
                "[" + dbits(Double.longBitsToDouble(0x7ff8000000000001L)) + "]");
        single("array_boolean", "ARRAY<BOOLEAN>", "[true]", "[false]", "[true|N|false]", "[]", N);
        single("array_decimal_10_2", "ARRAY<DECIMAL(10, 2)>", "[12345|-1|N]", "[0]", "[N]");
        single("array_decimal_20_3", "ARRAY<DECIMAL(20, 3)>",
                "[99999999999999999999|-128|N|0]", "[N]", "[1]", "[]", N);
        single("array_date", "ARRAY<DATE>", "[0|-1|19000]", "[N|2932896]");
        single("array_time", "ARRAY<TIME(3)>", "[0|86399999]", "[N]");
        single("array_timestamp3", "ARRAY<TIMESTAMP(3)>", "[0|1700000000123]", "[N|-1]");
        single("array_timestamp6", "ARRAY<TIMESTAMP(6)>",
                "[0:0|1700000000123:456000]", "[N|-1:1000|N]", "[]");
        single("array_timestamp9", "ARRAY<TIMESTAMP(9)>", "[0:1]", "[N]");
        single("array_string", "ARRAY<STRING>", "[]", "[" + str("") + "]",
                "[" + str("abcdefg") + "|" + str("abcdefgh") + "]",
                "[" + str("x".repeat(100)) + "|N|" + str("é") + "]",
                "[N]", "[" + str("k".repeat(17)) + "|" + str("k".repeat(7)) + "]", N);
        single("array_char", "ARRAY<CHAR(3)>", "[" + str("ab ") + "|" + str("abc") + "]");
        multi("int_array_string", new String[] {"INT", "ARRAY<STRING>", "ARRAY<BIGINT>"},
                new String[][] {
                    {"1", "[" + str("a") + "]", "[1]"},
                    {"1", "[" + str("abcdefghijk") + "|N]", "[]"},
                    {N, N, N},
                    {"2", "[]", "[N|2]"},
                    {"3", N, "[3|4]"},
                });
        Set<String> arrays = new LinkedHashSet<>();
        while (arrays.size() < 500) {
            int len = rnd.nextInt(6);
            StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < len; i++) {
                sb.append(i == 0 ? "" : "|")
                        .append(rnd.nextInt(8) == 0 ? "N" : Integer.toString(rnd.nextInt(50)));
            }
            arrays.add(sb.append(']').toString());
        }
        single("random_array_int", "ARRAY<INT>", arrays.toArray(new String[0]));
    }

    /**
     * An ARRAY field: Flink's internal elements (each read back from a one-field row written by
     * {@link #write}) in a GenericArrayData, written as the key projection writes arrays
     * (BinaryWriter.writeArray with an ArrayDataSerializer, which builds the BinaryArrayData).
     */
    private static void writeArray(BinaryRowWriter w, int pos, ArrayType type, String v) {
        if (v == null) {
            w.setNullAt(pos);
            return;
        }
        String inner = v.substring(1, v.length() - 1);
        String[] items = inner.isEmpty() ? new String[0] : inner.split("\\|", -1);
        LogicalType element = type.getElementType();
        RowData.FieldGetter getter = RowData.createFieldGetter(element, 0);
        Object[] values = new Object[items.length];
        for (int i = 0; i < items.length; i++) {
            BinaryRowData one = new BinaryRowData(1);
            BinaryRowWriter oneWriter = new BinaryRowWriter(one);
            write(oneWriter, 0, element, "N".equals(items[i]) ? null : items[i]);
            oneWriter.complete();
            values[i] = getter.getFieldOrNull(one);
        }
        w.writeArray(pos, new GenericArrayData(values), new ArrayDataSerializer(element));
    }

    private void single(String name, String type, String... values) {
        String[][] rows = new String[values.length][];
        for (int i = 0; i < values.length; i++) {
            rows[i] = new String[] {values[i]};
        }
        multi(name, new String[] {type}, rows);
    }

    private void multi(String name, String[] typeNames, String[][] rows) {
        LogicalType[] types = new LogicalType[typeNames.length];
        StringBuilder header = new StringBuilder();
        for (int i = 0; i < types.length; i++) {
            types[i] = LogicalTypeParser.parse(typeNames[i], Main.class.getClassLoader());
            if (i > 0) {
                header.append(';');
            }
            header.append(typeNames[i].replace(" ", ""));
        }
        out.println("set\t" + name + "\t" + header);

        BinaryRowData reused = new BinaryRowData(types.length);
        BinaryRowWriter writer = new BinaryRowWriter(reused);
        Map<RowData, Integer> map = new HashMap<>();
        for (int r = 0; r < rows.length; r++) {
            writer.reset();
            for (int c = 0; c < types.length; c++) {
                write(writer, c, types[c], rows[r][c]);
            }
            writer.complete();
            BinaryRowData key = reused.copy();
            int hash = key.hashCode();
            int kg128 = KeyGroupRangeAssignment.assignToKeyGroup(key, 128);
            int kg4096 = KeyGroupRangeAssignment.assignToKeyGroup(key, 4096);
            byte[] bytes = new byte[key.getSizeInBytes()];
            key.getSegments()[0].get(key.getOffset(), bytes, 0, bytes.length);
            StringBuilder vals = new StringBuilder();
            for (int c = 0; c < types.length; c++) {
                if (c > 0) {
                    vals.append(';');
                }
                vals.append(rows[r][c] == null ? "N" : rows[r][c]);
            }
            out.println("key\t" + name + "\t" + r + "\t" + vals + "\t" + hex(bytes) + "\t" + hash
                    + "\t" + kg128 + "\t" + kg4096);
            if (map.put(key, r) != null) {
                throw new IllegalStateException("duplicate key in set " + name + " row " + r);
            }
        }
        out.println("order\t" + name + "\t" + join(map.values()));
    }

    /** Writes one field the way CodeGenUtils.rowSetField / binaryWriterWriteNull do. */
    private static void write(BinaryRowWriter w, int pos, LogicalType type, String v) {
        switch (type.getTypeRoot()) {
            case ARRAY:
                writeArray(w, pos, (ArrayType) type, v);
                return;
            case DECIMAL: {
                DecimalType dt = (DecimalType) type;
                int p = dt.getPrecision();
                if (v == null) {
                    if (DecimalData.isCompact(p)) {
                        w.setNullAt(pos);
                    } else {
                        w.writeDecimal(pos, null, p);
                    }
                } else {
                    BigDecimal bd = new BigDecimal(new BigInteger(v), dt.getScale());
                    DecimalData d = DecimalData.fromBigDecimal(bd, p, dt.getScale());
                    if (d == null) {
                        throw new IllegalArgumentException(v + " overflows " + type);
                    }
                    w.writeDecimal(pos, d, p);
                }
                return;
            }
            case TIMESTAMP_WITHOUT_TIME_ZONE: {
                int p = ((TimestampType) type).getPrecision();
                if (v == null) {
                    if (TimestampData.isCompact(p)) {
                        w.setNullAt(pos);
                    } else {
                        w.writeTimestamp(pos, null, p);
                    }
                } else if (TimestampData.isCompact(p)) {
                    w.writeTimestamp(pos, TimestampData.fromEpochMillis(Long.parseLong(v)), p);
                } else {
                    String[] parts = v.split(":");
                    w.writeTimestamp(pos, TimestampData.fromEpochMillis(
                            Long.parseLong(parts[0]), Integer.parseInt(parts[1])), p);
                }
                return;
            }
            default:
                break;
        }
        if (v == null) {
            w.setNullAt(pos);
            return;
        }
        switch (type.getTypeRoot()) {
            case TINYINT:
                w.writeByte(pos, Byte.parseByte(v));
                break;
            case SMALLINT:
                w.writeShort(pos, Short.parseShort(v));
                break;
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
                w.writeInt(pos, Integer.parseInt(v));
                break;
            case BIGINT:
                w.writeLong(pos, Long.parseLong(v));
                break;
            case FLOAT:
                w.writeFloat(pos, Float.intBitsToFloat(Integer.parseUnsignedInt(v.substring(2), 16)));
                break;
            case DOUBLE:
                w.writeDouble(pos, Double.longBitsToDouble(Long.parseUnsignedLong(v.substring(2), 16)));
                break;
            case BOOLEAN:
                w.writeBoolean(pos, Boolean.parseBoolean(v));
                break;
            case CHAR:
            case VARCHAR:
                w.writeString(pos, BinaryStringData.fromBytes(unhex(v.substring(2))));
                break;
            default:
                throw new IllegalArgumentException("unsupported key type " + type);
        }
    }

    // ------------------------------------------------------- hash-only maps

    /** A key with a chosen hashCode, equal only to itself and not Comparable, like BinaryRowData. */
    private static final class FixedHashKey {
        final int hash;

        FixedHashKey(int hash) {
            this.hash = hash;
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            return this == o;
        }
    }

    private void hashOnlyMaps() {
        Random rnd = new Random(99L);
        List<int[]> bundles = new ArrayList<>();

        bundles.add(range(0, 100));
        scenario("sequential", bundles);

        bundles.add(distinctRandom(rnd, 1000));
        scenario("random1000", bundles);

        // Nine or more in one bucket of a table under 64: resize instead of treeify.
        int[] small = new int[12];
        for (int i = 0; i < small.length; i++) {
            small[i] = (i << 4) | 3;
        }
        bundles.add(small);
        scenario("collide_small_table", bundles);

        // 40 keys in one bucket of a 64-bucket table: a tree bin grown by putTreeVal.
        int[] tree = new int[40];
        for (int i = 0; i < tree.length; i++) {
            tree[i] = ((tree.length - i) << 8) | 0x2a;
        }
        bundles.add(tree);
        scenario("tree_bin", bundles);

        // Shuffled tree keys, so the red-black tree rotates in every direction.
        int[] shuffled = new int[40];
        List<Integer> order = new ArrayList<>();
        for (int i = 1; i <= 40; i++) {
            order.add(i);
        }
        java.util.Collections.shuffle(order, rnd);
        for (int i = 0; i < shuffled.length; i++) {
            shuffled[i] = (order.get(i) << 8) | 0x15;
        }
        bundles.add(shuffled);
        scenario("tree_bin_shuffled", bundles);

        // Tree bins split on resize into trees and lists, mixed with other keys.
        int[] split = new int[260];
        Set<Integer> used = new HashSet<>();
        for (int i = 0; i < 60; i++) {
            split[i * 2] = ((i + 1) << 6) | 0x2a;
            used.add(split[i * 2]);
        }
        for (int i = 0; i < split.length; i++) {
            if (i < 120 && i % 2 == 0) {
                continue;
            }
            int h;
            do {
                h = rnd.nextInt();
            } while (!used.add(h));
            split[i] = h;
        }
        bundles.add(split);
        scenario("tree_split", bundles);

        // One map reused across bundles: clear() keeps the grown table.
        bundles.add(distinctRandom(rnd, 300));
        bundles.add(distinctRandom(rnd, 20));
        bundles.add(range(0, 40));
        bundles.add(distinctRandom(rnd, 700));
        bundles.add(distinctRandom(rnd, 5));
        scenario("reused_map", bundles);

        // Negative and extreme hashes.
        bundles.add(new int[] {Integer.MIN_VALUE, Integer.MAX_VALUE, -1, 0, 1, -65536, 65535,
                0x10000, -0x10000 + 3});
        scenario("extremes", bundles);
    }

    private void scenario(String name, List<int[]> bundles) {
        HashMap<FixedHashKey, Integer> map = new HashMap<>();
        for (int b = 0; b < bundles.size(); b++) {
            int[] hashes = bundles.get(b);
            for (int i = 0; i < hashes.length; i++) {
                map.put(new FixedHashKey(hashes[i]), i);
            }
            StringBuilder hs = new StringBuilder();
            for (int i = 0; i < hashes.length; i++) {
                if (i > 0) {
                    hs.append(',');
                }
                hs.append(hashes[i]);
            }
            out.println("hashmap\t" + name + "\t" + b + "\t" + hs + "\t" + join(map.values()));
            map.clear();
        }
        bundles.clear();
    }

    private static int[] range(int from, int to) {
        int[] r = new int[to - from];
        for (int i = 0; i < r.length; i++) {
            r[i] = from + i;
        }
        return r;
    }

    private static int[] distinctRandom(Random rnd, int n) {
        Set<Integer> s = new LinkedHashSet<>();
        while (s.size() < n) {
            s.add(rnd.nextInt());
        }
        return s.stream().mapToInt(Integer::intValue).toArray();
    }

    // ------------------------------------------------------------- encoding

    private static String fbits(float f) {
        return "f:" + Integer.toHexString(Float.floatToRawIntBits(f));
    }

    private static String dbits(double d) {
        return "d:" + Long.toHexString(Double.doubleToRawLongBits(d));
    }

    private static String str(String s) {
        return "s:" + hex(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String hex(byte[] bytes) {
        StringBuilder sb = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            sb.append(Character.forDigit((b >> 4) & 0xf, 16));
            sb.append(Character.forDigit(b & 0xf, 16));
        }
        return sb.toString();
    }

    private static byte[] unhex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    private static String join(Iterable<Integer> values) {
        StringBuilder sb = new StringBuilder();
        for (Integer v : values) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(v);
        }
        return sb.toString();
    }
}
