package dev.aggforge.flink.harness;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * A complete changelog as a job emitted it: every row with its kind, in arrival order at the
 * collecting sink. Rows print as Flink prints them: {@code +I[1, 2.5]}.
 *
 * <p>At parallelism 1 the order is fully deterministic. At higher parallelism the interleaving of
 * different keys is not, but each key's own sequence is: compare {@link #perKey(int...)}.
 */
public final class Changelog {
    private final List<Row> rows;

    /** Wraps collected rows (kept as given). */
    public Changelog(List<Row> rows) {
        this.rows = List.copyOf(rows);
    }

    /** The rows, in order. */
    public List<Row> rows() {
        return rows;
    }

    /** The rows as Flink prints them, in order. */
    public List<String> lines() {
        List<String> lines = new ArrayList<>(rows.size());
        for (Row row : rows) {
            lines.add(row.toString());
        }
        return lines;
    }

    /** Number of rows of kind {@code kind}. */
    public long count(RowKind kind) {
        return rows.stream().filter(r -> r.getKind() == kind).count();
    }

    /**
     * Each key's own sequence of printed rows, keys (the given field positions, printed) sorted
     * by their text.
     */
    public Map<String, List<String>> perKey(int... keyFields) {
        Map<String, List<String>> sequences = new TreeMap<>();
        for (Row row : rows) {
            sequences.computeIfAbsent(key(row, keyFields), k -> new ArrayList<>()).add(row.toString());
        }
        return sequences;
    }

    /**
     * The table the changelog describes after applying every row in order: +I/+U add (upsert on
     * the key fields when the log has no -U rows), -U/-D remove. Rows print without their kind;
     * the result is sorted.
     *
     * @throws IllegalStateException if a retraction removes a row that is not there
     */
    public List<String> finalTable(int... keyFields) {
        boolean upsert = count(RowKind.UPDATE_BEFORE) == 0;
        Map<String, Integer> multiset = new HashMap<>();
        Map<String, String> byKey = new LinkedHashMap<>();
        for (Row row : rows) {
            Row insert = Row.copy(row);
            insert.setKind(RowKind.INSERT);
            String text = insert.toString();
            switch (row.getKind()) {
                case INSERT:
                case UPDATE_AFTER:
                    if (upsert) {
                        byKey.put(key(row, keyFields), text);
                    } else {
                        multiset.merge(text, 1, Integer::sum);
                    }
                    break;
                case UPDATE_BEFORE:
                case DELETE:
                    if (upsert) {
                        if (byKey.remove(key(row, keyFields)) == null) {
                            throw new IllegalStateException("delete of absent key: " + row);
                        }
                    } else {
                        Integer left = multiset.merge(text, -1, Integer::sum);
                        if (left < 0) {
                            throw new IllegalStateException("retraction of absent row: " + row);
                        }
                        if (left == 0) {
                            multiset.remove(text);
                        }
                    }
                    break;
                default:
                    throw new IllegalStateException("unknown kind " + row.getKind());
            }
        }
        List<String> table = new ArrayList<>();
        if (upsert) {
            table.addAll(byKey.values());
        } else {
            multiset.forEach((text, n) -> table.addAll(Collections.nCopies(n, text)));
        }
        Collections.sort(table);
        return table;
    }

    /** A key field's text: arrays (ARRAY keys) by their elements, not their identity. */
    public static String keyText(Object field) {
        return Arrays.deepToString(new Object[] {field});
    }

    private static String key(Row row, int[] keyFields) {
        StringBuilder key = new StringBuilder();
        for (int field : keyFields) {
            key.append(keyText(row.getField(field))).append('|');
        }
        return key.toString();
    }

    @Override
    public String toString() {
        return String.join("\n", lines());
    }
}
