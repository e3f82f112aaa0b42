package dev.aggforge.flink.harness;

import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.conversion.RowRowConverter;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.types.Row;

/**
 * A deterministic, insert-only input table for SQL runs: either generated from a seed (a key
 * column {@code k} INT plus value columns, each value a pure function of seed, row index and
 * column, so every run and every parallelism sees the same rows), Nexmark's bids (likewise a
 * pure function of the row index), or a given list of rows.
 *
 * <p>Rows are produced as {@link RowData} by a {@link GeneratorFunction} in a bounded
 * DataGeneratorSource, so the job finishes and mini-batches flush at end of input.
 */
public final class InputTable implements Serializable {
    private static final long serialVersionUID = 1L;

    private final String name;
    private final RowType rowType;
    private final long rowCount;
    private final GeneratorFunction<Long, RowData> generator;
    /** The rowtime column, or null for a table without event time. */
    private final String rowtime;
    /** How far the watermark trails the largest rowtime seen, in whole seconds. */
    private final long watermarkDelaySeconds;
    /** Whether the rows' kinds make a changelog (else every row is an insert). */
    private final boolean changelog;
    /** Flink's auto-watermark interval (ms) for this table's watermark; 0 emits every advance. */
    private final long watermarkIntervalMs;

    private InputTable(
            String name, RowType rowType, long rowCount, GeneratorFunction<Long, RowData> generator) {
        this(name, rowType, rowCount, generator, null, 0, false, 0);
    }

    private InputTable(
            String name,
            RowType rowType,
            long rowCount,
            GeneratorFunction<Long, RowData> generator,
            String rowtime,
            long watermarkDelaySeconds,
            boolean changelog,
            long watermarkIntervalMs) {
        this.name = name;
        this.rowType = rowType;
        this.rowCount = rowCount;
        this.generator = generator;
        this.rowtime = rowtime;
        this.watermarkDelaySeconds = watermarkDelaySeconds;
        this.changelog = changelog;
        this.watermarkIntervalMs = watermarkIntervalMs;
    }

    /**
     * This table as a changelog: each given row's {@link org.apache.flink.types.RowKind} (+I, -U,
     * +U, -D) is kept, and the table is registered with {@code fromChangelogStream}.
     */
    public InputTable asChangelog() {
        return new InputTable(
                name,
                rowType,
                rowCount,
                generator,
                rowtime,
                watermarkDelaySeconds,
                true,
                watermarkIntervalMs);
    }

    /** Whether the table is a changelog. */
    public boolean changelog() {
        return changelog;
    }

    /**
     * This table with {@code column} (a TIMESTAMP(3)) as its rowtime attribute and the watermark
     * {@code column - INTERVAL 'delaySeconds' SECOND}. The harness emits a watermark whenever it
     * advances (auto-watermark interval 0), so late rows are the same in every run.
     */
    public InputTable withWatermark(String column, long delaySeconds) {
        return new InputTable(
                name, rowType, rowCount, generator, column, delaySeconds, changelog, 0);
    }

    /**
     * This table with Flink's periodic watermarks: the assigner emits one when it advanced by more
     * than {@code intervalMs} or every {@code intervalMs} of processing time (Flink's default is
     * 200), as a production job does. Late rows then depend on timing.
     */
    public InputTable withWatermarkInterval(long intervalMs) {
        return new InputTable(
                name,
                rowType,
                rowCount,
                generator,
                rowtime,
                watermarkDelaySeconds,
                changelog,
                intervalMs);
    }

    /** Flink's auto-watermark interval for this table (0: every advance). */
    public long watermarkIntervalMs() {
        return watermarkIntervalMs;
    }

    /** The rowtime column, or null. */
    public String rowtime() {
        return rowtime;
    }

    /** The watermark's delay behind the rowtime, in seconds. */
    public long watermarkDelaySeconds() {
        return watermarkDelaySeconds;
    }

    /** The watermark expression of the rowtime column: {@code `ts` - INTERVAL '1' SECOND}. */
    public String watermarkExpression() {
        long seconds = watermarkDelaySeconds;
        // Each field of an SQL interval literal holds at most two digits.
        String interval =
                seconds % 3600 == 0
                        ? "INTERVAL '" + seconds / 3600 + "' HOUR"
                        : seconds % 60 == 0
                                ? "INTERVAL '" + seconds / 60 + "' MINUTE"
                                : "INTERVAL '" + seconds + "' SECOND";
        return "`" + rowtime + "` - " + interval;
    }

    /** {@code keys} for {@link #generated}: every row its own key (up to 2^32 rows). */
    public static final int DISTINCT_KEYS = 0;

    /**
     * A generated table: column {@code k} INT NOT NULL cycles through {@code keys} values in a
     * seeded pseudo-random order ({@link #DISTINCT_KEYS}: a distinct key per row, in a scrambled
     * order), then one column per entry of {@code valueTypes} named {@code v0, v1, ...}, NULL with
     * probability {@code nullFraction}.
     */
    public static InputTable generated(
            String name,
            long rows,
            int keys,
            double nullFraction,
            long seed,
            LogicalType... valueTypes) {
        List<RowType.RowField> fields = new ArrayList<>();
        fields.add(new RowType.RowField("k", new IntType(false)));
        for (int i = 0; i < valueTypes.length; i++) {
            fields.add(new RowType.RowField("v" + i, valueTypes[i].copy(true)));
        }
        RowType type = new RowType(false, fields);
        return new InputTable(
                name, type, rows, new SeededRows(type, keys, false, nullFraction, seed));
    }

    /**
     * As {@link #generated}, but the key is Zipf-distributed (s = 1) over {@code keys} ranks: rank
     * {@code r} (from 0) is drawn with probability about {@code ln((r+2)/(r+1)) / ln(keys+1)} (the
     * continuous inverse of Zipf's CDF), and ranks are scrambled over the INT range, so the hot
     * keys are not neighbours.
     */
    public static InputTable zipf(
            String name,
            long rows,
            int keys,
            double nullFraction,
            long seed,
            LogicalType... valueTypes) {
        RowType type = generated(name, 0, keys, nullFraction, seed, valueTypes).rowType();
        return new InputTable(name, type, rows, new SeededRows(type, keys, true, nullFraction, seed));
    }

    /**
     * The first {@code rows} bids of the Nexmark generator under its default configuration, with
     * the columns of Nexmark's {@code bid} view (see {@link NexmarkBids}), on a timeline starting
     * at {@link NexmarkBids#DEFAULT_BASE_TIME}.
     */
    public static InputTable nexmarkBids(String name, long rows) {
        return nexmarkBids(name, rows, NexmarkBids.DEFAULT_BASE_TIME);
    }

    /** As {@link #nexmarkBids(String, long)}, the first event at {@code baseTime} (ms since epoch). */
    public static InputTable nexmarkBids(String name, long rows, long baseTime) {
        return new InputTable(name, NexmarkBids.ROW_TYPE, rows, new NexmarkBids(baseTime));
    }

    /** A table of {@code rows} rows of {@code rowType}, row {@code i} made by {@code generator}. */
    public static InputTable of(
            String name, RowType rowType, long rows, GeneratorFunction<Long, RowData> generator) {
        return new InputTable(name, rowType, rows, generator);
    }

    /** A table holding exactly {@code rows} (external types: Integer, Double, BigDecimal, ...). */
    public static InputTable of(String name, DataType rowDataType, List<Row> rows) {
        RowType type = (RowType) rowDataType.getLogicalType();
        return new InputTable(name, type, rows.size(), new GivenRows(rowDataType, rows));
    }

    /** Shorthand for {@link #of(String, DataType, List)} with a row of named fields. */
    public static InputTable of(String name, List<DataTypes.Field> fields, Row... rows) {
        return of(name, DataTypes.ROW(fields.toArray(new DataTypes.Field[0])), Arrays.asList(rows));
    }

    /** The table name the SQL refers to. */
    public String name() {
        return name;
    }

    /** The row type (field names and types). */
    public RowType rowType() {
        return rowType;
    }

    /** The number of rows. */
    public long rowCount() {
        return rowCount;
    }

    /** Maps a row index to its row. */
    public GeneratorFunction<Long, RowData> generator() {
        return generator;
    }

    /**
     * {@link #generated} with a last column {@code ts} TIMESTAMP(3) NOT NULL: row {@code i} at
     * {@code baseMs + i * msPerRow} (in order), and a watermark 1 s behind it.
     */
    public static InputTable events(
            String name,
            long rows,
            int keys,
            double nullFraction,
            long seed,
            long baseMs,
            long msPerRow,
            LogicalType... valueTypes) {
        InputTable values = generated(name, rows, keys, nullFraction, seed, valueTypes);
        List<RowType.RowField> fields = new ArrayList<>(values.rowType.getFields());
        fields.add(new RowType.RowField("ts", new TimestampType(false, 3)));
        RowType type = new RowType(false, fields);
        return new InputTable(
                        name,
                        type,
                        rows,
                        new TimedRows((SeededRows) values.generator, baseMs, msPerRow))
                .withWatermark("ts", 1);
    }

    /** Seeded rows with an ordered TIMESTAMP(3) appended. */
    static final class TimedRows implements GeneratorFunction<Long, RowData> {
        private static final long serialVersionUID = 1L;
        private final SeededRows values;
        private final long baseMs;
        private final long msPerRow;

        TimedRows(SeededRows values, long baseMs, long msPerRow) {
            this.values = values;
            this.baseMs = baseMs;
            this.msPerRow = msPerRow;
        }

        @Override
        public RowData map(Long index) {
            GenericRowData row = (GenericRowData) values.map(index);
            GenericRowData out = new GenericRowData(row.getArity() + 1);
            for (int i = 0; i < row.getArity(); i++) {
                out.setField(i, row.getField(i));
            }
            out.setField(row.getArity(), TimestampData.fromEpochMillis(baseMs + index * msPerRow));
            return out;
        }
    }

    /** Seeded rows: key and values derived from (seed, index) by SplittableRandom. */
    static final class SeededRows implements GeneratorFunction<Long, RowData> {
        private static final long serialVersionUID = 1L;
        private final RowType type;
        private final int keys;
        /** Zipf-distributed keys (s = 1) instead of uniform ones. */
        private final boolean zipf;
        private final double nullFraction;
        private final long seed;

        SeededRows(RowType type, int keys, boolean zipf, double nullFraction, long seed) {
            this.type = type;
            this.keys = keys;
            this.zipf = zipf;
            this.nullFraction = nullFraction;
            this.seed = seed;
        }

        @Override
        public RowData map(Long index) {
            SplittableRandom random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + index);
            GenericRowData row = new GenericRowData(type.getFieldCount());
            // Multiplying by an odd constant permutes the 32-bit ints: distinct keys per row.
            row.setField(
                    0,
                    keys == DISTINCT_KEYS
                            ? (int) (index * 0x9E3779B1L)
                            : zipf ? (int) (zipfRank(random) * 0x9E3779B1L) : random.nextInt(keys));
            for (int f = 1; f < type.getFieldCount(); f++) {
                boolean isNull = random.nextDouble() < nullFraction;
                Object value = value(type.getTypeAt(f), random);
                row.setField(f, isNull ? null : value);
            }
            return row;
        }

        /** A rank in {@code [0, keys)}: the continuous inverse of Zipf's CDF for s = 1. */
        private long zipfRank(SplittableRandom random) {
            double rank = Math.exp(random.nextDouble() * Math.log(keys + 1.0)) - 1;
            return Math.min(keys - 1, (long) rank);
        }

        private static Object value(LogicalType type, SplittableRandom random) {
            switch (type.getTypeRoot()) {
                case TINYINT:
                    return (byte) random.nextInt();
                case SMALLINT:
                    return (short) random.nextInt();
                case INTEGER:
                    return random.nextInt(-1_000_000, 1_000_000);
                case BIGINT:
                    return random.nextLong();
                case FLOAT:
                    return (float) (random.nextDouble() * 2000 - 1000);
                case DOUBLE:
                    return random.nextDouble() * 2e6 - 1e6;
                case BOOLEAN:
                    return random.nextBoolean();
                case DATE:
                    return random.nextInt(-25_000, 25_000); // days around 1970
                case TIME_WITHOUT_TIME_ZONE:
                    return random.nextInt(86_400_000);
                case TIMESTAMP_WITHOUT_TIME_ZONE:
                case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                    return TimestampData.fromEpochMillis(
                            random.nextLong(-2_000_000_000_000L, 4_000_000_000_000L),
                            random.nextInt(1_000_000));
                case DECIMAL:
                    DecimalType decimal = (DecimalType) type;
                    BigInteger unscaled =
                            BigInteger.valueOf(random.nextLong())
                                    .mod(BigInteger.TEN.pow(Math.min(decimal.getPrecision(), 18)));
                    if (random.nextBoolean()) {
                        unscaled = unscaled.negate();
                    }
                    return DecimalData.fromBigDecimal(
                            new BigDecimal(unscaled, decimal.getScale()),
                            decimal.getPrecision(),
                            decimal.getScale());
                case ARRAY:
                    return array(((ArrayType) type).getElementType(), random);
                case CHAR:
                case VARCHAR:
                    int length = random.nextInt(12);
                    StringBuilder text = new StringBuilder(length);
                    for (int i = 0; i < length; i++) {
                        text.append(random.nextInt(8) == 0 ? 'é' : (char) ('a' + random.nextInt(26)));
                    }
                    return StringData.fromString(text.toString());
                default:
                    throw new IllegalArgumentException("no generator for " + type);
            }
        }
    }

    /**
     * An array of 0 to 2 elements, each NULL (1 in 5) or one of 4 values of its type (the same 4
     * for every row), so a table holds 31 distinct arrays of a type: keys that repeat.
     */
    private static Object array(LogicalType element, SplittableRandom random) {
        Object[] elements = new Object[random.nextInt(3)];
        for (int i = 0; i < elements.length; i++) {
            int choice = random.nextInt(5);
            elements[i] = choice == 4 ? null : SeededRows.value(element, new SplittableRandom(choice));
        }
        return new GenericArrayData(elements);
    }

    /** Given rows converted to internal RowData in open(). */
    static final class GivenRows implements GeneratorFunction<Long, RowData> {
        private static final long serialVersionUID = 1L;
        private final DataType dataType;
        private final ArrayList<Row> rows;
        private transient RowRowConverter converter;

        GivenRows(DataType dataType, List<Row> rows) {
            this.dataType = dataType;
            this.rows = new ArrayList<>(rows);
        }

        @Override
        public void open(org.apache.flink.api.connector.source.SourceReaderContext context) {
            converter = RowRowConverter.create(dataType);
            converter.open(Thread.currentThread().getContextClassLoader());
        }

        @Override
        public RowData map(Long index) {
            return converter.toInternal(rows.get(Math.toIntExact(index)));
        }
    }
}
