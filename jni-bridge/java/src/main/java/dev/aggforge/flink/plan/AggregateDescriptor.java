package dev.aggforge.flink.plan;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

import dev.aggforge.flink.AggforgeOptions;

/**
 * Everything the native runtime needs to know about one Flink group-aggregate operator, extracted
 * from Flink's exec node (of an optimized plan, or of a compiled one) by the planner's
 * {@code AggregateDescriber}.
 *
 * <p>Column indexes refer to the operator's input row. For the global phase a call's {@code args}
 * are its partial (accumulator) columns in the input, while {@code argTypes} stay the types of the
 * original arguments. Types are Flink's serializable spelling without nullability ({@code INT},
 * {@code DECIMAL(38, 2)}, {@code VARCHAR(2147483647)}, {@code TIMESTAMP(3)}).
 *
 * <h2>Text form ({@link #toText()}, {@link #parseText(String)})</h2>
 *
 * One {@code key=value} per line, in this order; lists are separated by {@code ;} (types contain
 * commas), an empty list is an empty value, an absent index is {@code -1}:
 *
 * <pre>
 * node=GroupAggregate(groupBy=[k], select=[k, MIN(v) AS EXPR$1])
 * phase=single                  single | local | global | incremental
 * input=insert_only             insert_only | retracting (the original input, also for global)
 * emission=immediate            immediate | mini_batch
 * mini_batch_size=0             table.exec.mini-batch.size when mini-batch is on, else 0
 * generate_update_before=true   emit -U before +U (always false for local)
 * state_ttl_ms=0                STATE_TTL hint, else table.exec.state.ttl; 0 = never expire
 * key_columns=0
 * key_types=INT
 * input_types=INT;DOUBLE
 * output_types=INT;DOUBLE
 * count_star_column=-1          the partial column of the COUNT(*) that counts records over a
 *                               retracting input: local = in its output, global = in its input
 * calls=1
 * call.0.function=MIN           MIN MAX COUNT COUNT_STAR SUM SUM0 AVG, or Flink's name otherwise
 * call.0.args=1
 * call.0.arg_types=DOUBLE
 * call.0.distinct=false
 * call.0.filter=-1              input column of the BOOLEAN FILTER argument
 * call.0.result_type=DOUBLE
 * call.0.retraction=false       the call must support retract (Flink's aggCallNeedRetractions)
 * views=0,2:5;1:6               two-phase DISTINCT views (Flink's DistinctInfos): the calls sharing
 *                               each, then its input column (global) or -1 (local)
 * final_key=0                   incremental: the positions, among the keys, of the final level's
 *                               keys (the output's keys); empty otherwise
 * unsupported=                  empty when the Java side can hand the operator over, else why not
 * </pre>
 *
 * <p>{@link #toPlanJson(long, int)} writes the native runtime's plan wire format (version 1,
 * runtime/src/plan.rs), which carries a subset of these fields.
 *
 * @param node Flink's description of the physical node (as EXPLAIN prints it)
 * @param phase single, local, global or incremental
 * @param input whether the aggregated input holds retractions
 * @param emission per row or per bundle
 * @param miniBatchSize bundle size (rows) with mini-batch on, else 0
 * @param generateUpdateBefore emit -U before +U
 * @param stateTtlMs idle state retention in ms; 0 never expires
 * @param keyColumns input columns of the grouping keys
 * @param keyTypes SQL types of the grouping keys
 * @param inputTypes SQL types of every input column
 * @param outputTypes SQL types of every output column
 * @param countStarColumn local phase: output column, global phase: input column, of the
 *     record-counting COUNT(*) partial; else -1
 * @param calls the aggregate calls in output order
 * @param views two-phase plans: the DISTINCT views, each shared by the DISTINCT calls over one
 *     argument (Flink's DistinctInfo); empty otherwise
 * @param finalKey incremental phase: the positions among {@code keyColumns} of the final level's
 *     keys; empty otherwise
 * @param unsupported empty, or why the Java side cannot hand this operator to the runtime
 */
public record AggregateDescriptor(
        String node,
        Phase phase,
        InputMode input,
        Emission emission,
        long miniBatchSize,
        boolean generateUpdateBefore,
        long stateTtlMs,
        List<Integer> keyColumns,
        List<String> keyTypes,
        List<String> inputTypes,
        List<String> outputTypes,
        int countStarColumn,
        List<Call> calls,
        List<View> views,
        List<Integer> finalKey,
        String unsupported) {

    /** Wire format version of {@link #toPlanJson(long, int)}. */
    public static final int PLAN_FORMAT_VERSION = 1;

    /** Canonical constructor: copies the lists. */
    public AggregateDescriptor {
        Objects.requireNonNull(node);
        Objects.requireNonNull(phase);
        Objects.requireNonNull(input);
        Objects.requireNonNull(emission);
        keyColumns = List.copyOf(keyColumns);
        keyTypes = List.copyOf(keyTypes);
        inputTypes = List.copyOf(inputTypes);
        outputTypes = List.copyOf(outputTypes);
        calls = List.copyOf(calls);
        views = List.copyOf(views);
        finalKey = List.copyOf(finalKey);
        Objects.requireNonNull(unsupported);
        if (keyColumns.size() != keyTypes.size()) {
            throw new IllegalArgumentException(
                    keyColumns.size() + " key columns but " + keyTypes.size() + " key types");
        }
    }

    /** Which half of an aggregation an operator is. */
    public enum Phase {
        /** One operator, keyed, stateful, emits the changelog. */
        SINGLE,
        /** Pre-aggregates each bundle before the shuffle; stateless, emits partials. */
        LOCAL,
        /** Merges partials after the shuffle; stateful, emits the changelog. */
        GLOBAL,
        /**
         * Split-distinct in mini-batch mode (Flink's IncrementalGroupAggregate): the partial
         * level's global phase fused with the final level's local phase; merges partials, keeps
         * the DISTINCT views in state, emits the final level's partials.
         */
        INCREMENTAL;

        /** The wire spelling. */
        public String wire() {
            return name().toLowerCase();
        }

        /** Whether the operator's input is partials (global and incremental phases). */
        public boolean mergesPartials() {
            return this == GLOBAL || this == INCREMENTAL;
        }
    }

    /** Whether an operator's (original) input holds retractions. */
    public enum InputMode {
        /** +I rows only. */
        INSERT_ONLY,
        /** Also -U, +U and -D rows. */
        RETRACTING;

        /** The wire spelling. */
        public String wire() {
            return name().toLowerCase();
        }
    }

    /** When the operator emits. */
    public enum Emission {
        /** Per input row. */
        IMMEDIATE,
        /** Once per touched key per bundle. */
        MINI_BATCH;

        /** The wire spelling. */
        public String wire() {
            return name().toLowerCase();
        }
    }

    /**
     * One aggregate call.
     *
     * @param function MIN, MAX, COUNT, COUNT_STAR, SUM, SUM0, AVG, or Flink's name of another
     *     function
     * @param args input columns (global phase: partial columns)
     * @param argTypes SQL types of the original arguments
     * @param distinct {@code AGG(DISTINCT ...)}
     * @param filter input column of the FILTER argument, or -1
     * @param resultType SQL type of the call's result
     * @param retraction whether Flink asked this call to support retraction
     */
    public record Call(
            String function,
            List<Integer> args,
            List<String> argTypes,
            boolean distinct,
            int filter,
            String resultType,
            boolean retraction) {

        /** Canonical constructor: copies the lists. */
        public Call {
            Objects.requireNonNull(function);
            args = List.copyOf(args);
            argTypes = List.copyOf(argTypes);
            Objects.requireNonNull(resultType);
        }
    }

    /**
     * DISTINCT calls sharing one distinct MapView partial (Flink's DistinctInfo).
     *
     * @param calls the calls, in Flink's order within the view (call {@code calls[i]} owns bit or
     *     count {@code i} of each entry)
     * @param column global phase: the input column holding the view; local phase: -1 (the views
     *     follow every call's partials in the output)
     */
    public record View(List<Integer> calls, int column) {

        /** Canonical constructor: copies the list. */
        public View {
            calls = List.copyOf(calls);
        }
    }

    /** Whether the Java side found nothing that stops handing this operator to the runtime. */
    public boolean supportedByJavaSide() {
        return unsupported.isEmpty();
    }

    // ---------------------------------------------------------------------------------- text

    /** The text form (see the class comment). */
    public String toText() {
        StringBuilder text = new StringBuilder();
        line(text, "node", node.replace('\n', ' '));
        line(text, "phase", phase.wire());
        line(text, "input", input.wire());
        line(text, "emission", emission.wire());
        line(text, "mini_batch_size", Long.toString(miniBatchSize));
        line(text, "generate_update_before", Boolean.toString(generateUpdateBefore));
        line(text, "state_ttl_ms", Long.toString(stateTtlMs));
        line(text, "key_columns", joinInts(keyColumns));
        line(text, "key_types", String.join(";", keyTypes));
        line(text, "input_types", String.join(";", inputTypes));
        line(text, "output_types", String.join(";", outputTypes));
        line(text, "count_star_column", Integer.toString(countStarColumn));
        line(text, "calls", Integer.toString(calls.size()));
        for (int i = 0; i < calls.size(); i++) {
            Call call = calls.get(i);
            String prefix = "call." + i + ".";
            line(text, prefix + "function", call.function());
            line(text, prefix + "args", joinInts(call.args()));
            line(text, prefix + "arg_types", String.join(";", call.argTypes()));
            line(text, prefix + "distinct", Boolean.toString(call.distinct()));
            line(text, prefix + "filter", Integer.toString(call.filter()));
            line(text, prefix + "result_type", call.resultType());
            line(text, prefix + "retraction", Boolean.toString(call.retraction()));
        }
        line(
                text,
                "views",
                views.stream()
                        .map(v -> joinInts(v.calls()).replace(';', ',') + ":" + v.column())
                        .collect(Collectors.joining(";")));
        line(text, "final_key", joinInts(finalKey));
        line(text, "unsupported", unsupported.replace('\n', ' '));
        return text.toString();
    }

    /**
     * Parses {@link #toText()} output.
     *
     * @throws IllegalArgumentException on a missing key, a bad number or an unknown spelling
     */
    public static AggregateDescriptor parseText(String text) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            int eq = line.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("not a key=value line: " + line);
            }
            values.put(line.substring(0, eq), line.substring(eq + 1));
        }
        int callCount = parseInt(values, "calls");
        List<Call> calls = new ArrayList<>(callCount);
        for (int i = 0; i < callCount; i++) {
            String prefix = "call." + i + ".";
            calls.add(
                    new Call(
                            get(values, prefix + "function"),
                            splitInts(get(values, prefix + "args")),
                            splitTypes(get(values, prefix + "arg_types")),
                            parseBoolean(values, prefix + "distinct"),
                            parseInt(values, prefix + "filter"),
                            get(values, prefix + "result_type"),
                            parseBoolean(values, prefix + "retraction")));
        }
        return new AggregateDescriptor(
                get(values, "node"),
                Phase.valueOf(get(values, "phase").toUpperCase()),
                InputMode.valueOf(get(values, "input").toUpperCase()),
                Emission.valueOf(get(values, "emission").toUpperCase()),
                parseLong(values, "mini_batch_size"),
                parseBoolean(values, "generate_update_before"),
                parseLong(values, "state_ttl_ms"),
                splitInts(get(values, "key_columns")),
                splitTypes(get(values, "key_types")),
                splitTypes(get(values, "input_types")),
                splitTypes(get(values, "output_types")),
                parseInt(values, "count_star_column"),
                calls,
                parseViews(get(values, "views")),
                splitInts(values.getOrDefault("final_key", "")),
                get(values, "unsupported"));
    }

    // ---------------------------------------------------------------------------------- JSON

    /**
     * The native runtime's plan (wire format version 1: {@code version, key_columns, key_types,
     * calls[function, args, arg_types, distinct, filter, result_type], phase, input, emission,
     * generate_update_before, state_ttl_ms, memory_budget_bytes, max_parallelism}). The global
     * phase sends no FILTER (the local phase applied it); the incremental phase is a global phase
     * with {@code final_key}. The runtime refuses a call whose
     * specialization's result has another Arrow type than {@code result_type}.
     */
    public String toPlanJson(long memoryBudgetBytes, int maxParallelism) {
        return toPlanJson(memoryBudgetBytes, maxParallelism, AggforgeOptions.Jit.AUTO);
    }

    /** {@link #toPlanJson(long, int)} with the JIT mode ({@code jit}, left out for auto). */
    public String toPlanJson(long memoryBudgetBytes, int maxParallelism, AggforgeOptions.Jit jit) {
        String json = planJson(memoryBudgetBytes, maxParallelism);
        if (jit == AggforgeOptions.Jit.AUTO) {
            return json;
        }
        return json.substring(0, json.length() - 1) + ",\"jit\":" + quote(jit.wire()) + "}";
    }

    private String planJson(long memoryBudgetBytes, int maxParallelism) {
        StringBuilder json = new StringBuilder("{\"version\":").append(PLAN_FORMAT_VERSION);
        json.append(",\"key_columns\":[").append(joinInts(keyColumns).replace(';', ',')).append(']');
        json.append(",\"key_types\":").append(stringArray(keyTypes));
        json.append(",\"calls\":[");
        for (int i = 0; i < calls.size(); i++) {
            Call call = calls.get(i);
            json.append(i == 0 ? "" : ",")
                    .append("{\"function\":")
                    .append(quote(call.function()))
                    .append(",\"args\":[")
                    .append(joinInts(call.args()).replace(';', ','))
                    .append("],\"arg_types\":")
                    .append(stringArray(call.argTypes()))
                    .append(",\"distinct\":")
                    .append(call.distinct())
                    .append(",\"filter\":")
                    .append(call.filter() < 0 || phase.mergesPartials() ? "null" : call.filter())
                    .append(",\"result_type\":")
                    .append(quote(call.resultType()));
            // Over retracting input a call Flink planned without retraction runs its
            // insert-only function (the runtime skips its -U/-D rows).
            if (input == InputMode.RETRACTING && !call.retraction()) {
                json.append(",\"retracts\":false");
            }
            json.append('}');
        }
        json.append("],\"phase\":")
                .append(quote(phase == Phase.INCREMENTAL ? Phase.GLOBAL.wire() : phase.wire()));
        json.append(",\"input\":").append(quote(input.wire()));
        json.append(",\"emission\":").append(quote(emission.wire()));
        json.append(",\"generate_update_before\":").append(generateUpdateBefore);
        json.append(",\"state_ttl_ms\":").append(stateTtlMs);
        json.append(",\"memory_budget_bytes\":").append(memoryBudgetBytes);
        json.append(",\"max_parallelism\":").append(maxParallelism);
        if (phase.mergesPartials() && input == InputMode.RETRACTING && countStarColumn >= 0) {
            json.append(",\"count_star_column\":").append(countStarColumn);
        }
        if (phase != Phase.SINGLE && !views.isEmpty()) {
            json.append(",\"views\":[");
            for (int i = 0; i < views.size(); i++) {
                View view = views.get(i);
                json.append(i == 0 ? "" : ",")
                        .append("{\"calls\":[")
                        .append(joinInts(view.calls()).replace(';', ','))
                        .append(']');
                if (phase.mergesPartials()) {
                    json.append(",\"column\":").append(view.column());
                }
                json.append('}');
            }
            json.append(']');
        }
        if (phase == Phase.INCREMENTAL) {
            json.append(",\"final_key\":[")
                    .append(joinInts(finalKey).replace(';', ','))
                    .append(']');
        }
        return json.append('}').toString();
    }

    private static String stringArray(List<String> values) {
        return values.stream()
                .map(AggregateDescriptor::quote)
                .collect(Collectors.joining(",", "[", "]"));
    }

    private static String quote(String value) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : value.toCharArray()) {
            switch (c) {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        return out.append('"').toString();
    }

    // ------------------------------------------------------------------------------- helpers

    private static void line(StringBuilder text, String key, String value) {
        text.append(key).append('=').append(value).append('\n');
    }

    private static String joinInts(List<Integer> values) {
        return values.stream().map(String::valueOf).collect(Collectors.joining(";"));
    }

    private static List<Integer> splitInts(String value) {
        List<Integer> ints = new ArrayList<>();
        for (String part : splitTypes(value)) {
            try {
                ints.add(Integer.parseInt(part.trim()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a column index: " + part, e);
            }
        }
        return ints;
    }

    private static List<View> parseViews(String value) {
        List<View> views = new ArrayList<>();
        for (String part : splitTypes(value)) {
            int colon = part.lastIndexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("not a view (calls:column): " + part);
            }
            List<Integer> calls = new ArrayList<>();
            for (String call : part.substring(0, colon).split(",")) {
                calls.addAll(splitInts(call));
            }
            try {
                views.add(new View(calls, Integer.parseInt(part.substring(colon + 1))));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a view column: " + part, e);
            }
        }
        return views;
    }

    private static List<String> splitTypes(String value) {
        return value.isEmpty() ? List.of() : List.of(value.split(";", -1));
    }

    private static String get(Map<String, String> values, String key) {
        String value = values.get(key);
        if (value == null) {
            throw new IllegalArgumentException("descriptor text has no " + key);
        }
        return value;
    }

    private static int parseInt(Map<String, String> values, String key) {
        try {
            return Integer.parseInt(get(values, key));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " is not a number", e);
        }
    }

    private static long parseLong(Map<String, String> values, String key) {
        try {
            return Long.parseLong(get(values, key));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " is not a number", e);
        }
    }

    private static boolean parseBoolean(Map<String, String> values, String key) {
        String value = get(values, key);
        if (!value.equals("true") && !value.equals("false")) {
            throw new IllegalArgumentException(key + " is not true or false: " + value);
        }
        return Boolean.parseBoolean(value);
    }
}
